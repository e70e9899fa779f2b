// XLA's matmul performance table (models/data-tools/xla-ptable.mjs) becomes gemm rows: FLOP/s back to
// the measured kernel time, dtypes to catalogue precisions, rejected columns and excluded devices
// counted, an unknown device stops the build. The text proto here is written by the test itself in
// the layout of xla/service/gpu/model/matmul_interpolator_data.h.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addXlaTf32Found, buildXlaPtable, parseMatmulPTable, XLA_TF32_FOUND, XLA_TF32_SOURCE } from '../../models/data-tools/xla-ptable.mjs';
import { gzip, makeTables } from '../../models/data-tools/table.mjs';

/**
 * @param {string} key
 * @param {Array<[number, number, number, number, Array<[string, number]>]>} entries
 */
function device(key, entries) {
  const body = entries
    .map(([b, m, n, k, flops]) => `      entries {\n        b: ${b}\n        m: ${m}\n        n: ${n}\n        k: ${k}\n${flops
      .map(([d, v]) => `        flops {\n          key: "${d}"\n          value: ${v}\n        }\n`)
      .join('')}      }\n`)
    .join('');
  return `  entries {\n    key: "${key}"  # comment\n    value {\n${body}    }\n  }\n`;
}

/** @param {string} inner */
const header = (inner) => `// licence\nconstexpr char kDefaultMatmulPTable[] = R"pb(\n${inner})pb";\n`;

// 2*1*256*256*256 = 33554432 FLOP; at 4960 ns -> 6765006451612 FLOP/s (a real B200 entry).
const B200 = device('sm_100_B200', [[1, 256, 256, 256, [['bf16xbf16->bf16', 6765006451612], ['f32xf32->f32', 5065584541062], ['f8e4m3fnxf8e5m2->bf16', 5531558193208], ['s8xs8->s32', 1e12]]]]);
const H100 = device('sm_90', [[2, 512, 256, 4096, [['bf16xbf16->bf16', 170111188846641], ['f8e4m3fnxf8e4m3fn->bf16', 9e14]]]]);
const GFX = device('gfx942', [[1, 4096, 4096, 4096, [['f32xf32->f32', 2e14], ['bf16xbf16->bf16', 2e15]]]]);
const GFX950 = device('gfx950', [[1, 256, 256, 256, [['bf16xbf16->bf16', 7e12]]]]);

const PEAKS = new Map([
  ['b200', { fp32: 75, tf32: 1125, bf16: 2250, fp8: 4500 }],
  ['h100-sxm', { fp32: 67, tf32: 494.7, bf16: 989.4, fp8: 1978.9 }],
  ['mi300x', { fp32: 163.4, tf32: 653.7, bf16: 1307.4, fp8: 2614.9 }],
]);

/** @param {string} text */
function build(text) {
  const dir = mkdtempSync(join(tmpdir(), 'xla-ptable-'));
  try {
    const file = join(dir, 'matmul_interpolator_data.h');
    writeFileSync(file, text);
    const tables = makeTables();
    buildXlaPtable(file, tables, PEAKS);
    return tables.gemm;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('parses devices, shapes and dtypes, ignoring comments', () => {
  const rows = parseMatmulPTable(header(B200 + H100));
  assert.equal(rows.length, 6);
  assert.deepEqual(rows[0], { device: 'sm_100_B200', b: 1, m: 256, n: 256, k: 256, dtype: 'bf16xbf16->bf16', flops: 6765006451612 });
  assert.equal(rows[4]?.device, 'sm_90');
});

test('FLOP/s become the measured time; dtypes map to precisions and sources', () => {
  const gemm = build(header(B200 + H100 + GFX + GFX950));
  const byKey = new Map(gemm.rows.map((r) => [`${r[0]}|${r[1]}|${r[2]}`, r]));
  const bf16 = byKey.get('xla-ptable|b200|bf16');
  assert.deepEqual(bf16, ['xla-ptable', 'b200', 'bf16', 1, 256, 256, 256, 0, 0, 0.00496]);
  // TF32 rows carry their own source: the trainer calibrates levels with them and fits nothing (trainer::calibration_only).
  assert.equal(byKey.get('xla-ptable-tf32|b200|tf32')?.[9], 0.006624);
  assert.ok(byKey.has('xla-ptable-e4m3xe5m2|b200|fp8'));
  // 2*2*512*256*4096 / 170111188846641 s = 12.624 us
  assert.equal(byKey.get('xla-ptable|h100-sxm|bf16')?.[9], 0.012624);
  assert.equal(gemm.rows.length, 4);
  const skipped = (/** @type {string} */ source, /** @type {string} */ gpu) => Object.fromEntries(gemm.entry(source, gpu).skipped);
  assert.match(Object.keys(skipped('xla-ptable', 'h100-sxm'))[0] ?? '', /H100 FP8 column not physical/);
  assert.match(Object.keys(skipped('xla-ptable', 'b200'))[0] ?? '', /no catalogue precision/);
  const amd = skipped('xla-ptable', 'mi300x');
  assert.equal(Object.keys(amd).length, 2, JSON.stringify(amd)); // f32 rejected, bf16 above its 1307 peak
  assert.ok(Object.keys(amd).some((r) => /above the catalogue dense bf16 peak/.test(r)));
  assert.match(Object.keys(skipped('xla-ptable', '(gfx950)'))[0] ?? '', /no catalogue entry/);
});

test('an unknown XLA device stops the build', () => {
  assert.throws(() => build(header(device('sm_120', [[1, 256, 256, 256, [['bf16xbf16->bf16', 1e12]]]]))), /unmapped XLA device "sm_120"/);
});

test('the committed TF32 table is read back into gemm, and refuses rows of any other kind', () => {
  const dir = mkdtempSync(join(tmpdir(), 'xla-found-'));
  try {
    const header = 'source,gpu,precision,batch,m,n,k,trans_a,trans_b,time_ms\n';
    const good = join(dir, 'good.csv.gz');
    writeFileSync(good, gzip(`${header}${XLA_TF32_SOURCE},h100-sxm,tf32,1,4096,4096,4096,0,0,0.34\n`));
    const tables = makeTables();
    addXlaTf32Found(tables, good);
    assert.deepEqual(tables.gemm.rows, [[XLA_TF32_SOURCE, 'h100-sxm', 'tf32', 1, 4096, 4096, 4096, 0, 0, 0.34]]);
    const bad = join(dir, 'bad.csv.gz');
    writeFileSync(bad, gzip(`${header}xla-ptable,h100-sxm,bf16,1,4096,4096,4096,0,0,0.2\n`));
    assert.throws(() => addXlaTf32Found(makeTables(), bad), /only xla-ptable-tf32 tf32 rows belong here/);
    // The committed table holds the sweep's 750 TF32 rows (375 shapes on the H100 and on the B200).
    const committed = makeTables();
    addXlaTf32Found(committed, XLA_TF32_FOUND);
    assert.equal(committed.gemm.rows.length, 750);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
