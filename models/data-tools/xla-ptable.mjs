// XLA's default matmul performance table (openxla/xla `xla/service/gpu/model/matmul_interpolator_data.h`,
// the `kDefaultMatmulPTable` text proto; raw copy and provenance in models/data/SOURCES.md, "XLA matmul
// performance table"). Written by XLA's `xla/tools/matmul_perf_table_gen.cc`: for every b, m, n, k in
// {1,2,4} x {256..4096}^3 and every dtype triple it compiles the HLO
//     lhs = T[b,m,k], rhs = T[b,k,n], ROOT dot(lhs, rhs) contracting {2} x {1}, batch {0} x {0}
// runs it once to warm up, then 5 times under XLA's kernel tracer, and stores
//     flops = 2*b*m*n*k / (median kernel time)      [FLOP/s]
// The median kernel time is an integer number of nanoseconds, so time = 2*b*m*n*k / flops recovers it
// exactly (to within rounding of the stored integer). Caveat: the tracer returns the median over *all*
// kernel events of the 5 runs (not the sum per run), so a dot that lowers to several kernels (a layout
// transpose before a Hopper FP8 GEMM, a split-K reduction) reads low; see SOURCES.md.
//
// Mapping to gemm.csv.gz: batch = b, m, n, k as named, trans_a = trans_b = 0 (row-major [b,m,k] x [b,k,n],
// the same convention as NeuSight's bmm rows), time_ms = 2*b*m*n*k / flops * 1e3.
//
// Opt-in only: models/build-data.mjs reads this source when it is given `--xla-ptable FILE`, and then
// refuses to write into models/data (pass --out DIR), so the committed tables never change by accident.
// `node models/data-tools/xla-ptable.mjs FILE [--csv]` prints the per-device summary (or the rows).

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parseCsvObjects } from './csv.mjs';

/** XLA device key -> catalogue id (devices left out are in XLA_EXCLUDED). @type {Readonly<Record<string, string>>} */
export const XLA_DEVICES = {
  sm_90: 'h100-sxm', // assumption: the commit says "GEMMs on H100"; XLA's op-profile table names sm_90 "NVIDIA H100 80GB HBM3" (SXM5)
  sm_100_B200: 'b200', // the key names the B200 (GB200/GB300 got no matmul table)
  gfx942: 'mi300x', // assumption: gfx942 is also the MI325X and MI300A; the AMD commit does not name the board
};

/** @type {Readonly<Record<string, string>>} */
export const XLA_EXCLUDED = {
  gfx950: 'excluded: gfx950 (MI350X / MI355X) has no catalogue entry',
};

/**
 * The TF32 rows' source name. These rows are the one part of the table the product uses: the trainer
 * computes H100's and B200's TF32 levels from them (calibration only, never fitted on; trainer/datasets.cpp),
 * because no other row times a TF32 kernel. models/build-data.mjs reads them from XLA_TF32_FOUND.
 */
export const XLA_TF32_SOURCE = 'xla-ptable-tf32';

/** The committed table of the sweep's TF32 timings (facts: shapes and times), written by `--found`. */
export const XLA_TF32_FOUND = fileURLToPath(new URL('../data/found/xla-tf32-gemm.csv.gz', import.meta.url));

/**
 * The committed table of the sweep's B200 BF16 and FP8 (E4M3 x E4M3) timings of the same shapes, written by `--found`:
 * no model is fitted or levelled on them; a test of the trainer's suite (tests/models/test_low_precision.cpp) checks
 * the product's FP8-over-16-bit GEMM ratio (low_precision_scale, docs/PREDICTION.md §6) against their measured one.
 */
export const XLA_B200_PAIRS_FOUND = fileURLToPath(new URL('../data/found/xla-b200-bf16-fp8-gemm.csv.gz', import.meta.url));

/**
 * dtype key -> {precision, source} for the rows kept; anything else is skipped with a reason.
 * `f32xf32->f32` on NVIDIA runs on TF32 tensor cores (XLA's DEFAULT precision; the table's f32 rates,
 * up to 403 TFLOP/s on sm_90 and 870 on sm_100, are far above the strict-FP32 peaks of 67 and 75).
 */
/** @type {Readonly<Record<string, {precision: string, source: string}>>} */
const NVIDIA_DTYPES = {
  'bf16xbf16->bf16': { precision: 'bf16', source: 'xla-ptable' },
  'f32xf32->f32': { precision: 'tf32', source: XLA_TF32_SOURCE },
  'f8e4m3fnxf8e4m3fn->bf16': { precision: 'fp8', source: 'xla-ptable' },
  'f8e4m3fnxf8e5m2->bf16': { precision: 'fp8', source: 'xla-ptable-e4m3xe5m2' },
  'f8e5m2xf8e4m3fn->bf16': { precision: 'fp8', source: 'xla-ptable-e5m2xe4m3' },
};
/** @type {Readonly<Record<string, {precision: string, source: string}>>} */
const AMD_DTYPES = {
  'bf16xbf16->bf16': { precision: 'bf16', source: 'xla-ptable' },
  'bf16xbf16->f32': { precision: 'bf16', source: 'xla-ptable-f32out' },
  'f8e4m3fnuzxf8e4m3fnuz->bf16': { precision: 'fp8', source: 'xla-ptable' },
};

/** Whole columns rejected after inspection (reason counted per row). @type {Readonly<Record<string, string>>} */
const REJECTED_COLUMNS = {
  'sm_90 f8e4m3fnxf8e4m3fn->bf16': 'H100 FP8 column not physical: up to 2620 TFLOP/s vs the 1979 dense peak, FP8/BF16 ratio 2.7 on large shapes (at most 2)',
  'sm_90 f8e4m3fnxf8e5m2->bf16': 'H100 FP8 column not physical: up to 2620 TFLOP/s vs the 1979 dense peak, FP8/BF16 ratio 2.7 on large shapes (at most 2)',
  'sm_90 f8e5m2xf8e4m3fn->bf16': 'H100 FP8 column not physical: up to 2620 TFLOP/s vs the 1979 dense peak, FP8/BF16 ratio 2.7 on large shapes (at most 2)',
  'gfx942 f32xf32->f32': 'ROCm f32 dot precision unknown: runs above the strict-FP32 matrix peak (up to 251 vs 163 TFLOP/s), no catalogue key',
};

/** @typedef {Map<string, Array<string | number | Msg>>} Msg a text-proto message: field -> values */

/**
 * Parses the text proto inside `kDefaultMatmulPTable[] = R"pb( ... )pb"`.
 * @param {string} text the header file
 * @returns {{device: string, b: number, m: number, n: number, k: number, dtype: string, flops: number}[]}
 */
export function parseMatmulPTable(text) {
  const start = text.indexOf('R"pb(');
  const end = text.lastIndexOf(')pb"');
  if (start < 0 || end < start) throw new Error('matmul ptable: no R"pb( ... )pb" block');
  const body = text.slice(start + 5, end).replace(/#[^\n]*/g, '');
  // Tokens: strings, braces, colons, identifiers, numbers.
  const tokens = body.match(/"[^"]*"|[{}:]|[A-Za-z_][A-Za-z0-9_]*|-?\d+(\.\d+)?([eE][-+]?\d+)?/g) ?? [];
  let i = 0;
  /** @returns {Msg} */
  function message() {
    /** @type {Msg} */
    const fields = new Map();
    while (i < tokens.length && tokens[i] !== '}') {
      const name = String(tokens[i++]);
      /** @type {string | number | Msg} */
      let value;
      if (tokens[i] === ':') i++;
      if (tokens[i] === '{') {
        i++;
        value = message();
        if (tokens[i++] !== '}') throw new Error('matmul ptable: unbalanced braces');
      } else {
        const t = tokens[i++];
        if (t === undefined || t === ':' || t === '}') throw new Error(`matmul ptable: no value for ${name}`);
        value = t.startsWith('"') ? t.slice(1, -1) : Number(t);
      }
      const list = fields.get(name);
      if (list) list.push(value);
      else fields.set(name, [value]);
    }
    return fields;
  }
  const root = message();
  if (i !== tokens.length) throw new Error('matmul ptable: trailing tokens');
  /** @param {Msg} m @param {string} f */
  const one = (m, f) => {
    const v = m.get(f);
    if (!v || v.length !== 1 || v[0] === undefined) throw new Error(`matmul ptable: field ${f} must occur once`);
    return v[0];
  };
  /** @param {Msg} m @param {string} f */
  const num = (m, f) => {
    const v = one(m, f);
    if (typeof v !== 'number') throw new Error(`matmul ptable: field ${f} must be a number`);
    return v;
  };
  /** @param {Msg} m @param {string} f */
  const str = (m, f) => {
    const v = one(m, f);
    if (typeof v !== 'string') throw new Error(`matmul ptable: field ${f} must be a string`);
    return v;
  };
  /** @param {Msg} m @param {string} f @returns {Msg[]} */
  const msgs = (m, f) => (m.get(f) ?? []).map((v) => {
    if (!(v instanceof Map)) throw new Error(`matmul ptable: field ${f} must be a message`);
    return v;
  });
  const out = [];
  for (const dev of msgs(root, 'entries')) {
    const device = str(dev, 'key');
    const [value] = msgs(dev, 'value');
    if (!value) throw new Error(`matmul ptable: device ${device} has no value`);
    for (const e of msgs(value, 'entries')) {
      const b = num(e, 'b');
      const m = num(e, 'm');
      const n = num(e, 'n');
      const k = num(e, 'k');
      for (const fl of msgs(e, 'flops')) out.push({ device, b, m, n, k, dtype: str(fl, 'key'), flops: num(fl, 'value') });
    }
  }
  return out;
}

/**
 * Adds the table's rows to `tables.gemm`, with accounting.
 * @param {string} file path of matmul_interpolator_data.h
 * @param {ReturnType<import('./table.mjs').makeTables>} tables
 * @param {Map<string, Record<string, number>>} peaks catalogue id -> peak_tflops (dense)
 */
export function buildXlaPtable(file, tables, peaks) {
  const gemm = tables.gemm;
  const rows = parseMatmulPTable(readFileSync(file, 'utf8'));
  for (const r of rows) {
    const excluded = Object.hasOwn(XLA_EXCLUDED, r.device) ? XLA_EXCLUDED[r.device] : undefined;
    const gpu = Object.hasOwn(XLA_DEVICES, r.device) ? XLA_DEVICES[r.device] : undefined;
    if (!gpu && !excluded) throw new Error(`${file}: unmapped XLA device "${r.device}" (add it to XLA_DEVICES or XLA_EXCLUDED)`);
    const dtypes = r.device.startsWith('gfx') ? AMD_DTYPES : NVIDIA_DTYPES;
    const map = Object.hasOwn(dtypes, r.dtype) ? dtypes[r.dtype] : undefined;
    const source = map?.source ?? 'xla-ptable';
    const tag = gpu ?? `(${r.device})`;
    gemm.countRaw(source, tag);
    if (excluded || !gpu) {
      gemm.skip(source, tag, excluded ?? 'excluded');
      continue;
    }
    const col = `${r.device} ${r.dtype}`;
    const rejected = Object.hasOwn(REJECTED_COLUMNS, col) ? REJECTED_COLUMNS[col] : undefined;
    if (rejected) {
      gemm.skip(source, tag, rejected);
      continue;
    }
    if (!map) {
      gemm.skip(source, tag, `dtype ${r.dtype}: no catalogue precision`);
      continue;
    }
    if (!(r.flops > 0) || ![r.b, r.m, r.n, r.k].every((d) => Number.isSafeInteger(d) && d > 0)) {
      gemm.skip(source, tag, 'missing or zero rate or dimension');
      continue;
    }
    const peak = peaks.get(gpu)?.[map.precision];
    if (peak === undefined || !(peak > 0)) throw new Error(`catalogue ${gpu} has no peak_tflops.${map.precision}`);
    if (r.flops / 1e12 > peak) {
      gemm.skip(source, tag, `above the catalogue dense ${map.precision} peak`);
      continue;
    }
    const flop = 2 * r.b * r.m * r.n * r.k;
    gemm.add({ source, gpu, precision: map.precision, batch: r.b, m: r.m, n: r.n, k: r.k, trans_a: 0, trans_b: 0, time_ms: (flop / r.flops) * 1e3 });
  }
}

/**
 * Adds the committed TF32 rows (XLA_TF32_FOUND, gemm.csv's columns) to `tables.gemm`, counted as read.
 * @param {ReturnType<import('./table.mjs').makeTables>} tables
 * @param {string} [path]
 */
export function addXlaTf32Found(tables, path = XLA_TF32_FOUND) {
  const { records } = parseCsvObjects(gunzipSync(readFileSync(path)).toString('utf8'), path);
  for (const r of records) {
    if (r.source !== XLA_TF32_SOURCE || r.precision !== 'tf32') throw new Error(`${path}: only ${XLA_TF32_SOURCE} tf32 rows belong here, got ${r.source} ${r.precision}`);
    const gpu = r.gpu ?? '';
    tables.gemm.countRaw(r.source, gpu);
    tables.gemm.add({
      source: r.source, gpu, precision: r.precision, batch: Number(r.batch), m: Number(r.m), n: Number(r.n), k: Number(r.k),
      trans_a: Number(r.trans_a), trans_b: Number(r.trans_b), time_ms: Number(r.time_ms),
    });
  }
}

/**
 * catalogue id -> peak_tflops, from core/data/hardware.json.
 * @param {string} path
 * @returns {Map<string, Record<string, number>>}
 */
export function loadPeaks(path) {
  const doc = /** @type {{hardware: {id: string, peak_tflops?: Record<string, number>}[]}} */ (JSON.parse(readFileSync(path, 'utf8')));
  return new Map(doc.hardware.map((h) => [h.id, h.peak_tflops ?? {}]));
}

// Preview: node models/data-tools/xla-ptable.mjs FILE [--csv]
// The committed tables: node models/data-tools/xla-ptable.mjs FILE --found (rewrites XLA_TF32_FOUND and
// XLA_B200_PAIRS_FOUND)
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { makeTables } = await import('./table.mjs');
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node models/data-tools/xla-ptable.mjs PATH/matmul_interpolator_data.h [--csv | --found]');
    process.exit(2);
  }
  const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const tables = makeTables();
  buildXlaPtable(file, tables, loadPeaks(join(repoRoot, 'core', 'data', 'hardware.json')));
  const t = tables.gemm;
  if (process.argv.includes('--found')) {
    const column = (/** @type {string} */ name) => t.columns.findIndex(([c]) => c === name);
    const [si, gi] = [column('source'), column('gpu')];
    const all = t.rows;
    mkdirSync(dirname(XLA_TF32_FOUND), { recursive: true });
    for (const [path, keep, what] of /** @type {const} */ ([
      [XLA_TF32_FOUND, (/** @type {unknown[]} */ row) => row[si] === XLA_TF32_SOURCE, 'TF32'],
      [XLA_B200_PAIRS_FOUND, (/** @type {unknown[]} */ row) => row[si] === 'xla-ptable' && row[gi] === 'b200', 'B200 BF16 and FP8'],
    ])) {
      t.rows = all.filter(keep);
      const gz = t.build();
      writeFileSync(path, gz);
      console.log(`${t.rows.length} ${what} timings -> ${path} (${gz.length} bytes)`);
    }
  } else if (process.argv.includes('--csv')) {
    t.build();
    process.stdout.write(t.csvText(t.rows));
  } else {
    const gz = t.build();
    for (const e of [...t.stats.values()].sort((a, b) => (a.source + a.gpu < b.source + b.gpu ? -1 : 1))) {
      const skipped = [...e.skipped.entries()].map(([r, n]) => `${n} ${r}`).join('; ');
      console.log(`${e.source.padEnd(22)} ${e.gpu.padEnd(10)} raw ${String(e.raw).padStart(4)} kept ${String(e.out).padStart(4)}${skipped ? `  skipped: ${skipped}` : ''}`);
    }
    console.log(`rows ${t.outputRows}, csv ${t.csvBytes} bytes, gzip ${gz.length} bytes`);
  }
}
