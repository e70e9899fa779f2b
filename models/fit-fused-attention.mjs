#!/usr/bin/env node
// `node models/fit-fused-attention.mjs [--json]`: the fused-attention efficiencies of the hardware catalogue
// (core/data/hardware.json, `fused_attention`), measured from NVIDIA's cuDNN frontend SDPA training
// benchmarks (their timings as the table models/data/found/cudnn-sdpa.csv.gz, made by
// models/data-tools/cudnn-sdpa.mjs; MIT; provenance in models/data/SOURCES.md).
//
// The model the core applies (docs/PREDICTION.md, "Fused attention"): a fused attention pass takes
//   time = work(G) / (efficiency[library][direction] x 16-bit dense peak) + overhead[library][direction]
// where work(G) is the pass's FLOPs over the score blocks a mask leaves visible, counted in blocks of G
// query and key positions (a causal pass of n = ceil(s / G) blocks does n (n + 1) / 2 of the n² blocks, a
// sliding window of w about ceil(w / G) + 1 per row of blocks), plus a fixed overhead per pass. One G is
// shared by every GPU (the value on the grid below that fits all timings best); a GPU's, library's and
// direction's efficiency and overhead are a least-squares fit to its timings' relative error. Library `cudnn` is cuDNN's fused attention (called directly,
// or through PyTorch's SDPA cuDNN backend: TransformerEngine's kernel), `flash` the flash_attn package
// (FlashAttention-2) or PyTorch SDPA's flash backend. BF16 timings only; deterministic backward passes are
// left out. Prints each group's efficiency with its mean absolute error over its own timings.
//
// Nothing here is fitted to end-to-end runs: only kernel timings enter.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { parseCsvObjects } from './data-tools/csv.mjs';
import { FOUND_TABLE } from './data-tools/cudnn-sdpa.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** The mask block sizes tried; the one with the lowest mean error over all timings is kept. */
const BLOCK_GRID = [128, 256, 384, 512, 640, 768, 1024];
/** Benchmark backends -> the library the core names. */
const LIBRARY = /** @type {Readonly<Record<string, string>>} */ ({ cudnn: 'cudnn', 'pyt-cudnn': 'cudnn', fa2: 'flash', 'pyt-flash': 'flash' });

/**
 * @typedef {{gpu: string, library: string, direction: string, batch: number, seq_q: number, seq_kv: number,
 *   heads_q: number, head_dim_qk: number, head_dim_v: number, causal: number, window: number, time_ms: number}} Timing
 */

/** Share of the score matrix's blocks of `g` positions a pass computes. */
export function visibleBlocks(/** @type {number} */ s, /** @type {number} */ t, /** @type {boolean} */ causal, /** @type {number} */ window, /** @type {number} */ g) {
  const n = Math.ceil(s / g);
  if (window > 0) return Math.min(n, Math.ceil(window / g) + 1) / n;
  if (causal && s === t) return (n + 1) / (2 * n);
  return 1;
}

/** FLOPs of a pass over its visible blocks (forward QK^T and PV; backward the recomputed scores, dV, dP, dQ, dK). */
export function blockWork(/** @type {Timing} */ r, /** @type {number} */ g) {
  const per = r.direction === 'fwd' ? r.head_dim_qk + r.head_dim_v : 3 * r.head_dim_qk + 2 * r.head_dim_v;
  return 2 * r.batch * r.heads_q * r.seq_q * r.seq_kv * per * visibleBlocks(r.seq_q, r.seq_kv, r.causal === 1, r.window, g);
}

const TEXT_COLUMNS = new Set(['source', 'gpu', 'precision', 'direction']);

/** @returns {Timing[]} the BF16, non-deterministic timings of the attention table at `path`. */
export function readTimings(path = FOUND_TABLE) {
  const { records } = parseCsvObjects(gunzipSync(readFileSync(path)).toString('utf8'), path);
  return records
    .map((rec) => /** @type {Record<string, any>} */ (Object.fromEntries(Object.entries(rec).map(([k, v]) => [k, TEXT_COLUMNS.has(k) ? v : Number(v)]))))
    .filter((r) => r.precision === 'bf16' && r.deterministic === 0 && Object.hasOwn(LIBRARY, r.source))
    .map((r) => /** @type {Timing} */ ({ ...r, library: LIBRARY[r.source] }));
}

/**
 * time = work / (efficiency x peak) + overhead, least squares on the relative error (every timing weighs the
 * same whatever its length); overhead >= 0 (a harness that times with CUDA events around each call adds one).
 * @param {Timing[]} rows
 * @param {number} g mask block
 * @param {number} peak FLOP/s
 */
function fitGroup(rows, g, peak) {
  // Minimise sum((a w + c) / t - 1)^2 over a (ms per FLOP) and c (ms): the 2x2 normal equations.
  let xx = 0, xy = 0, yy = 0, x1 = 0, y1 = 0;
  for (const r of rows) {
    const x = blockWork(r, g) / r.time_ms, y = 1 / r.time_ms;
    xx += x * x, xy += x * y, yy += y * y, x1 += x, y1 += y;
  }
  const det = xx * yy - xy * xy;
  let a = (x1 * yy - y1 * xy) / det, c = (y1 * xx - x1 * xy) / det;
  if (!(c >= 0) || !Number.isFinite(a)) (c = 0), (a = x1 / xx);
  return { efficiency: 1e3 / (a * peak), overhead: c };
}

/**
 * @param {Timing[]} timings
 * @param {Record<string, number>} peaks 16-bit dense peak TFLOP/s by catalogue id
 */
export function fit(timings, peaks) {
  const groupsAt = (/** @type {number} */ g) => {
    /** @type {Map<string, Timing[]>} */
    const groups = new Map();
    for (const r of timings) {
      const key = `${r.gpu}\t${r.library}\t${r.direction}`;
      groups.set(key, [...(groups.get(key) ?? []), r]);
    }
    const out = [];
    for (const [key, rows] of groups) {
      const [gpu = '', library = '', direction = ''] = key.split('\t');
      const peak = peaks[gpu];
      if (!peak) throw new Error(`${gpu}: no 16-bit peak in the catalogue`);
      const { efficiency, overhead } = fitGroup(rows, g, peak * 1e12);
      const errors = rows.map((r) => Math.abs((blockWork(r, g) / (efficiency * peak * 1e12) * 1e3 + overhead) / r.time_ms - 1));
      out.push({ gpu, library, direction, efficiency, overhead_ms: overhead, rows: rows.length, mape: errors.reduce((a, b) => a + b, 0) / rows.length });
    }
    return out.sort((a, b) => (a.gpu + a.library + a.direction).localeCompare(b.gpu + b.library + b.direction));
  };
  const scored = BLOCK_GRID.map((g) => {
    const groups = groupsAt(g);
    const n = groups.reduce((a, x) => a + x.rows, 0);
    return { block: g, groups, mape: groups.reduce((a, x) => a + x.mape * x.rows, 0) / n, timings: n };
  });
  const best = scored.reduce((a, b) => (b.mape < a.mape ? b : a));
  return { ...best, grid: scored.map(({ block, mape }) => ({ block, mape })) };
}

/** @returns {Record<string, number>} */
export function cataloguePeaks() {
  const doc = JSON.parse(readFileSync(`${ROOT}core/data/hardware.json`, 'utf8'));
  return Object.fromEntries(doc.hardware.map((/** @type {any} */ h) => [h.id, h.peak_tflops.bf16 ?? h.peak_tflops.fp16 ?? 0]));
}

export function main() {
  const result = fit(readTimings(), cataloguePeaks());
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  const pct = (/** @type {number} */ v) => `${(v * 100).toFixed(1)}%`;
  const lines = [
    `mask block: ${result.block} positions (mean error by block: ${result.grid.map((x) => `${x.block} ${pct(x.mape)}`).join(', ')})`,
    `${result.timings} timings, mean absolute error ${pct(result.mape)}`,
    '',
    '| GPU | library | pass | efficiency (of the 16-bit peak) | overhead (ms) | timings | mean abs. error |',
    '|---|---|---|---:|---:|---:|---:|',
    ...result.groups.map((x) => `| ${x.gpu} | ${x.library} | ${x.direction} | ${x.efficiency.toFixed(3)} | ${x.overhead_ms.toFixed(3)} | ${x.rows} | ${pct(x.mape)} |`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
