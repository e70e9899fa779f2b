#!/usr/bin/env node
// `node models/fit-ssd.mjs [--json]`: the catalogue's `ssd` timings (core/data/hardware.json), fitted to public
// timings of Mamba-2's chunked scan forward (the table models/data/found/mamba2-ssd.csv: mamba_ssm's
// mamba_chunk_scan_combined on an H200 from TileOPs' benchmark, its Triton reference port on a B200 from
// FlashInfer's; provenance in models/data/SOURCES.md).
//
// The model the core applies (docs/MODEL_FORMAT.md, "Mamba mixers"): the chunk scan takes
//   time = overhead + flops / rate
// where flops are the core's count (layers/mamba.cpp: per token 2·(G·Q·N + H·(Q·P + 2·N·P)), chunks of Q positions,
// G groups, H heads of width P, state N) and overhead is the fixed cost of its five launches, which dominates
// below a few thousand tokens. One rate and one overhead per GPU, a least-squares fit to the relative error of
// all its rows. Only the forward was measured at a stated shape; the core applies the forward's rate to the
// backward's FLOPs and says so. With --json, prints the catalogue's `ssd` entries: the measured GPUs' and those of
// the parts that take their fits (models/data-tools/part-kin.mjs: the same die, or the same SM architecture
// unmeasured — the B200 runs the scan no faster than the H200 with 2.3 times its tensor peak and 1.7 times its
// memory bandwidth), each saying so in `source`.
//
// Nothing here is fitted to end-to-end runs: only kernel timings enter.

import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseCsvObjects } from './data-tools/csv.mjs';
import { partsTakingFit } from './data-tools/part-kin.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const TABLE = `${ROOT}models/data/found/mamba2-ssd.csv`;
const SOURCE =
  "fitted by models/fit-ssd.mjs to Mamba-2 chunk-scan forward timings: mamba_ssm's mamba_chunk_scan_combined on " +
  "an H200 (tile-ai/TileOPs PRs 1557 and 1675, MIT), its Triton reference port on a B200 (flashinfer-ai/flashinfer " +
  'PR 2709, Apache-2.0)';

/** @typedef {{gpu: string, source: string, batch: number, seqlen: number, heads: number, head_dim: number, d_state: number, groups: number, chunk: number, time_ms: number}} Row */

/** @returns {Row[]} the table's rows */
export function readRows() {
  const { records } = parseCsvObjects(readFileSync(TABLE, 'utf8'), TABLE);
  return records.map((r) => /** @type {Row} */ ({
    gpu: r.gpu, source: r.source, batch: Number(r.batch), seqlen: Number(r.seqlen), heads: Number(r.heads),
    head_dim: Number(r.head_dim), d_state: Number(r.d_state), groups: Number(r.groups), chunk: Number(r.chunk),
    time_ms: Number(r.time_ms),
  }));
}

/** The forward FLOPs of row `r` (the core's count, diagonal blocks counted whole). */
export function flopsOf(/** @type {Row} */ r) {
  const tokens = r.batch * r.seqlen, Q = r.chunk, N = r.d_state, P = r.head_dim;
  return 2 * tokens * (r.groups * Q * N + r.heads * (Q * P + 2 * N * P));
}

/** The model's time (ms) of row `r` at `rate` TFLOP/s after `overhead` ms. */
export function modelMs(/** @type {Row} */ r, /** @type {number} */ rate, /** @type {number} */ overhead) {
  return overhead + (flopsOf(r) / (rate * 1e12)) * 1e3;
}

/** Least squares on relative error: the overhead on a grid (0 to 50 µs), the rate in closed form. */
function fit(/** @type {Row[]} */ rows) {
  let best = { rate: 0, overhead: 0, error: Infinity };
  for (let step = 0; step <= 100; ++step) {
    const overhead = step * 0.0005;
    // (overhead + x / rate) / t - 1 with x = flops in ms at 1 TFLOP/s: the best 1 / rate is
    // sum(a (1 - c)) / sum(a^2) with a = x / t and c = overhead / t.
    let num = 0, den = 0;
    for (const r of rows) {
      const a = flopsOf(r) / 1e9 / r.time_ms, c = overhead / r.time_ms;
      num += a * (1 - c);
      den += a * a;
    }
    if (num <= 0) continue;
    const rate = den / num;
    const error = rows.reduce((s, r) => s + (modelMs(r, rate, overhead) / r.time_ms - 1) ** 2, 0);
    if (error < best.error) best = { rate, overhead, error };
  }
  return best;
}

/** The mean |relative error| of the model at (`rate`, `overhead`) over `rows`. */
export const meanAbs = (/** @type {Row[]} */ rows, /** @type {number} */ rate, /** @type {number} */ overhead) =>
  rows.length ? rows.reduce((a, r) => a + Math.abs(modelMs(r, rate, overhead) / r.time_ms - 1), 0) / rows.length : NaN;

/** Each GPU's forward fit: {gpu: {rate, overhead}}. */
export function fitGpus(/** @type {Row[]} */ rows) {
  /** @type {Record<string, {rate: number, overhead: number}>} */
  const fits = {};
  for (const gpu of [...new Set(rows.map((r) => r.gpu))]) {
    const { rate, overhead } = fit(rows.filter((r) => r.gpu === gpu));
    fits[gpu] = { rate, overhead };
  }
  return fits;
}

/** The catalogue's `ssd` entries of `fits`: the measured GPUs', their twins' and their siblings'. */
export function catalogueEntries(/** @type {ReturnType<typeof fitGpus>} */ fits) {
  /** @type {Record<string, {forward: {tflops: number, overhead_ms: number}, source: string}>} */
  const entries = {};
  for (const [gpu, f] of Object.entries(fits)) {
    const forward = { tflops: Number(f.rate.toFixed(1)), overhead_ms: Number(f.overhead.toFixed(4)) };
    for (const { id, note } of partsTakingFit(gpu)) entries[id] = { forward, source: `${SOURCE}${note}` };
  }
  return entries;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rows = readRows();
  const fits = fitGpus(rows);
  const pct = (/** @type {number} */ x) => (Number.isNaN(x) ? '-' : `${(100 * x).toFixed(1)}%`);
  for (const [gpu, { rate, overhead }] of Object.entries(fits)) {
    const own = rows.filter((r) => r.gpu === gpu);
    console.log(`${gpu} forward: rate ${rate.toFixed(1)} TFLOP/s, overhead ${(overhead * 1e3).toFixed(1)} µs; ` +
      `mean |error| ${pct(meanAbs(own, rate, overhead))} over ${own.length} rows`);
    for (const source of [...new Set(own.map((r) => r.source))]) {
      const mine = own.filter((r) => r.source === source);
      console.log(`  ${source}: mean |error| ${pct(meanAbs(mine, rate, overhead))} over ${mine.length} rows`);
    }
  }
  for (const gpu of Object.keys(fits)) {
    for (const [other, f] of Object.entries(fits)) {
      if (other === gpu) continue;
      const mine = rows.filter((r) => r.gpu === gpu);
      console.log(`${other}'s fit on ${gpu}'s rows: mean |error| ${pct(meanAbs(mine, f.rate, f.overhead))}`);
    }
  }
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(catalogueEntries(fits), null, 2)}\n`);
}
