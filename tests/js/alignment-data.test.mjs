// The misaligned tensor-core GEMM slowdowns the core applies (core/include/prenet/roofline.hpp, written to
// the manifest's roofline block by the trainer) are the medians of the measured pairs in
// models/measured/h200/alignment.csv (models/measure/alignment.py): recomputed here, so either side
// changing alone fails.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseCsvObjects } from '../../models/data-tools/csv.mjs';
import { median } from '../../web/bench/accuracy/metrics.mjs';

const ROOT = new URL('../../', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('models/artifacts/manifest.json', ROOT), 'utf8'));
const alignmentCsv = fileURLToPath(new URL('models/measured/h200/alignment.csv', ROOT));
const { records: rows } = parseCsvObjects(readFileSync(alignmentCsv, 'utf8'), alignmentCsv);

/** @param {number} v */
const aligned = (v) => v % 8 === 0;

/**
 * Misaligned / aligned time of each misaligned row and the aligned width alignment.py times right after it
 * (its WIDTHS list pairs them), within one precision, token count and pass.
 * @param {string} precision
 * @returns {number[]}
 */
function ratios(precision) {
  /** @type {Map<string, Record<string, string>[]>} */
  const groups = new Map();
  for (const r of rows) {
    if (r.precision !== precision) continue;
    const key = `${r.tokens}|${r.pass}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const out = [];
  for (const group of groups.values()) {
    for (let i = 0; i < group.length; ++i) {
      const r = /** @type {Record<string, string>} */ (group[i]);
      if (aligned(Number(r.d_in)) && aligned(Number(r.d_out))) continue;
      const partner = /** @type {Record<string, string>} */ (group[i + 1]);
      assert.ok(partner && aligned(Number(partner.d_in)) && aligned(Number(partner.d_out)), 'each misaligned width is followed by its aligned neighbour');
      out.push(Number(r.time_ms) / Number(partner.time_ms));
    }
  }
  return out;
}

test('the core applies the measured median slowdown of misaligned TF32 and 16-bit GEMMs, and none in FP32', () => {
  const tf32 = ratios('tf32');
  const bf16 = ratios('bf16');
  const fp32 = ratios('fp32');
  assert.equal(tf32.length, 54);
  assert.equal(bf16.length, 54);
  assert.ok(Math.abs(median(fp32) - 1) < 0.01, `FP32 is not slowed: ${median(fp32)}`);
  assert.ok(Math.abs(manifest.roofline.misaligned_tf32_slowdown - median(tf32)) < 0.001, `tf32 ${median(tf32)}`);
  assert.ok(Math.abs(manifest.roofline.misaligned_16bit_slowdown - median(bf16)) < 0.001, `bf16 ${median(bf16)}`);
});
