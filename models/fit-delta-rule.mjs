#!/usr/bin/env node
// `node models/fit-delta-rule.mjs [--json]`: the catalogue's `delta_rule` timings (core/data/hardware.json), fitted
// to flash-linear-attention's chunk_gated_delta_rule measured by QwenLM/FlashQLA's benchmark (the table
// models/data/found/fla-gated-delta-rule.csv; MIT; provenance in models/data/SOURCES.md).
//
// The model the core applies (docs/MODEL_FORMAT.md, "Gated DeltaNet"): each of the delta rule's chunk kernels takes
//   time = flops / (rate x heads / (heads + half_heads))
// per direction, where flops are the kernel's own count (layers/gated_deltanet.cpp: per token and value head
// 6·C·dk + 4·C·dv + 6·dk·dv + 2·C²/3 forward, 14·C·dk + 10·C·dv + 16·dk·dv + 4·C²/3 backward, C = 64) and heads are the
// value heads of a sample: the kernels run the heads' recurrences side by side, so few heads leave the part idle
// (half_heads is where they reach half the rate). One rate and one half_heads per GPU and direction, a least-squares
// fit to the relative error of all its rows (one or several packed sequences). Prints each fit with its error over
// its own rows, and each GPU's single-sequence and packed rows apart. With --json, prints the catalogue's `delta_rule`
// entries: the measured GPUs' and those of the parts that take their fits (models/data-tools/part-kin.mjs: the same die,
// or the same SM architecture unmeasured — the H200's and GB200's forward fits, a generation apart, carry to each
// other's rows within 7%), each saying so in `source`.
//
// Nothing here is fitted to end-to-end runs: only kernel timings enter.

import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseCsvObjects } from './data-tools/csv.mjs';
import { partsTakingFit } from './data-tools/part-kin.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const TABLE = `${ROOT}models/data/found/fla-gated-delta-rule.csv`;
const CHUNK = 64;
const SOURCE =
  'fitted by models/fit-delta-rule.mjs to flash-linear-attention 0.5.1 chunk_gated_delta_rule timings from ' +
  'QwenLM/FlashQLA benchmark/benchmark_results_{H200,GB200}.txt (MIT)';

/** FLOPs per token and value head of the delta rule in `direction` (the core's counts). */
export function flopsPerTokenHead(/** @type {string} */ direction, /** @type {number} */ dk, /** @type {number} */ dv) {
  const C = CHUNK;
  return direction === 'fwd'
    ? 6 * C * dk + 4 * C * dv + 6 * dk * dv + (2 * C * C) / 3
    : 14 * C * dk + 10 * C * dv + 16 * dk * dv + (4 * C * C) / 3;
}

/** @typedef {{gpu: string, direction: string, tokens: number, sequences: number, heads_v: number, head_dim_k: number, head_dim_v: number, time_ms: number}} Row */

/** @returns {Row[]} the table's rows */
export function readRows() {
  const { records } = parseCsvObjects(readFileSync(TABLE, 'utf8'), TABLE);
  return records.map((r) => /** @type {Row} */ ({
    gpu: r.gpu, direction: r.direction, tokens: Number(r.tokens), sequences: Number(r.sequences),
    heads_v: Number(r.heads_v), head_dim_k: Number(r.head_dim_k), head_dim_v: Number(r.head_dim_v), time_ms: Number(r.time_ms),
  }));
}

/** The rows' FLOPs. */
const flopsOf = (/** @type {Row} */ r) => r.tokens * r.heads_v * flopsPerTokenHead(r.direction, r.head_dim_k, r.head_dim_v);

/** The model's time (ms) of row `r` at `rate` TFLOP/s and `half` heads. */
export function modelMs(/** @type {Row} */ r, /** @type {number} */ rate, /** @type {number} */ half) {
  return flopsOf(r) / (rate * 1e12 * (r.heads_v / (r.heads_v + half))) * 1e3;
}

/** Least squares on relative error: half_heads on a grid, the rate in closed form. */
function fit(/** @type {Row[]} */ rows) {
  let best = { rate: 0, half: 0, error: Infinity };
  for (let half = 0; half <= 64; half += 0.05) {
    // time = x / rate with x = flops (heads + half) / heads; the best 1 / rate is sum(x/t) / sum((x/t)^2).
    const ratios = rows.map((r) => (flopsOf(r) * (r.heads_v + half)) / r.heads_v / 1e9 / r.time_ms);
    const inverse = ratios.reduce((a, q) => a + q, 0) / ratios.reduce((a, q) => a + q * q, 0);
    const rate = 1 / inverse;
    const error = rows.reduce((a, r) => a + (modelMs(r, rate, half) / r.time_ms - 1) ** 2, 0);
    if (error < best.error) best = { rate, half, error };
  }
  return best;
}

const meanAbs = (/** @type {Row[]} */ rows, /** @type {number} */ rate, /** @type {number} */ half) =>
  rows.length ? rows.reduce((a, r) => a + Math.abs(modelMs(r, rate, half) / r.time_ms - 1), 0) / rows.length : NaN;

/** Each GPU's and direction's fit: {gpu: {fwd: {rate, half}, bwd: {rate, half}}}. */
export function fitGpus(/** @type {Row[]} */ rows) {
  /** @type {Record<string, Record<string, {rate: number, half: number}>>} */
  const fits = {};
  for (const gpu of [...new Set(rows.map((r) => r.gpu))]) {
    for (const direction of ['fwd', 'bwd']) {
      const own = rows.filter((r) => r.gpu === gpu && r.direction === direction);
      if (own.length > 0) (fits[gpu] ??= {})[direction] = fit(own);
    }
  }
  return fits;
}

/** The catalogue's `delta_rule` entries of `fits`: the measured GPUs', their twins' and their siblings'. */
export function catalogueEntries(/** @type {ReturnType<typeof fitGpus>} */ fits) {
  /** @type {Record<string, {forward: {tflops: number, half_heads: number}, backward: {tflops: number, half_heads: number}, source: string}>} */
  const entries = {};
  for (const [gpu, f] of Object.entries(fits)) {
    if (!f.fwd || !f.bwd) continue;
    const entry = {
      forward: { tflops: Number(f.fwd.rate.toFixed(1)), half_heads: Number(f.fwd.half.toFixed(2)) },
      backward: { tflops: Number(f.bwd.rate.toFixed(1)), half_heads: Number(f.bwd.half.toFixed(2)) },
    };
    for (const { id, note } of partsTakingFit(gpu)) entries[id] = { ...entry, source: `${SOURCE}${note}` };
  }
  return entries;
}

/** The mean |relative error| of the fit over `rows`. */
export { meanAbs };

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rows = readRows();
  const fits = fitGpus(rows);
  const pct = (/** @type {number} */ x) => (Number.isNaN(x) ? '-' : `${(100 * x).toFixed(1)}%`);
  for (const [gpu, f] of Object.entries(fits)) {
    for (const [direction, { rate, half }] of Object.entries(f)) {
      const own = rows.filter((r) => r.gpu === gpu && r.direction === direction);
      const single = own.filter((r) => r.sequences === 1), packed = own.filter((r) => r.sequences > 1);
      console.log(`${gpu} ${direction}: rate ${rate.toFixed(1)} TFLOP/s, half_heads ${half.toFixed(2)}; ` +
        `mean |error| ${pct(meanAbs(own, rate, half))} over ${own.length} rows ` +
        `(one sequence ${pct(meanAbs(single, rate, half))} of ${single.length}, packed ${pct(meanAbs(packed, rate, half))} of ${packed.length})`);
    }
  }
  // The other GPU's fit on each GPU's rows: how far one part's timings carry to the other.
  for (const gpu of Object.keys(fits)) {
    for (const [other, theirs] of Object.entries(fits)) {
      if (other === gpu) continue;
      for (const [direction, f] of Object.entries(theirs)) {
        const mine = rows.filter((r) => r.gpu === gpu && r.direction === direction);
        console.log(`${other}'s ${direction} fit on ${gpu}'s rows: mean |error| ${pct(meanAbs(mine, f.rate, f.half))}`);
      }
    }
  }
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(catalogueEntries(fits), null, 2)}\n`);
}
