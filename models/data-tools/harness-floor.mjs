#!/usr/bin/env node
// The per-call timing floor of the harness behind the memory-bound classes' training rows (NeuSight's PyTorch
// per-op sweep: one op per pair of CUDA events, so a small op's time is the host's dispatch interval, not the
// GPU's work). Prints, per class and GPU, the 5th percentile of the measured times (the sweep's smallest kernels
// sit on that floor) and the median over the GPUs: the values of harness_floor_ms in core/src/timing/learned.cpp.
// Then, from the project's own profiled training steps (models/measured/<gpu>/kernels.csv beside e2e.csv), the
// step's time between its kernels per kernel call, (step − the kernels' device time) / calls: kStepLaunchGapMs.
//
//   node models/data-tools/harness-floor.mjs
//
// Validation GPUs (models/measured/validation.json) are left out of the floors, as from every fit; the H200's own
// harness floor (the same percentile of its elementwise rows, on a newer host) is printed last: the host's time to
// issue one kernel of an eager step, kHostIssueMsPerLaunch in core/include/prenet/host_issue.hpp (docs/PREDICTION.md
// §4, "Launch-bound steps").

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { measuredFolders, readMeasuredCsv } from './measured.mjs';

const DATA = fileURLToPath(new URL('../data/', import.meta.url));
const VALIDATION = fileURLToPath(new URL('../measured/validation.json', import.meta.url));

/** The class, its rows' table in models/data and the ops of that table it trains on (null: all). */
const CLASSES = [
  { dataset: 'elementwise', stem: 'elementwise', op: null },
  { dataset: 'normalization', stem: 'normalization', op: 'layernorm' },
  { dataset: 'softmax', stem: 'normalization', op: 'softmax' },
];

/** @type {Map<string, Record<string, string>[]>} each table read once */
const tables = new Map();
/** @param {string} dir @param {string} stem @returns {Record<string, string>[]} the table's rows, none if absent */
function rows(dir, stem) {
  const key = `${dir}/${stem}`;
  if (!tables.has(key)) tables.set(key, readMeasuredCsv(dir, stem)?.records ?? []);
  return /** @type {Record<string, string>[]} */ (tables.get(key));
}

/** @param {number[]} sorted @param {number} q */
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

const heldOut = new Set(JSON.parse(readFileSync(VALIDATION, 'utf8')).gpus);
for (const { dataset, stem, op } of CLASSES) {
  /** @type {Map<string, number[]>} */
  const byGpu = new Map();
  for (const r of rows(DATA, stem)) {
    if (heldOut.has(r.gpu) || (op !== null && r.op !== op)) continue;
    const list = byGpu.get(r.gpu) ?? [];
    list.push(Number(r.time_ms));
    byGpu.set(r.gpu, list);
  }
  const floors = [...byGpu].map(([gpu, times]) => {
    times.sort((a, b) => a - b);
    return { gpu, rows: times.length, p5_ms: quantile(times, 0.05) };
  });
  const median = quantile(floors.map((f) => f.p5_ms).sort((a, b) => a - b), 0.5);
  console.log(`${dataset}: median over ${floors.length} GPUs ${median.toFixed(4)} ms`);
  for (const f of floors) console.log(`  ${f.gpu}: 5th percentile ${f.p5_ms.toFixed(4)} ms of ${f.rows} rows`);
}

for (const folder of measuredFolders(fileURLToPath(new URL('../measured/', import.meta.url)))) {
  const kernels = rows(folder.dir, 'kernels');
  const steps = rows(folder.dir, 'e2e');
  /** @type {Map<string, {device_ms: number, calls: number}>} */
  const byRun = new Map();
  for (const k of kernels) {
    const run = byRun.get(k.name) ?? { device_ms: 0, calls: 0 };
    run.device_ms += Number(k.device_us_per_step) / 1000;
    run.calls += Number(k.calls);
    byRun.set(k.name, run);
  }
  /** @type {number[]} */
  const gaps = [];
  for (const [name, run] of byRun) {
    const step = steps.find((s) => s.name === name);
    if (!step) continue;
    const gap_us = ((Number(step.step_ms) - run.device_ms) / run.calls) * 1000;
    gaps.push(gap_us);
    console.log(`${folder.gpu} ${name}: step ${Number(step.step_ms).toFixed(1)} ms, kernels ${run.device_ms.toFixed(1)} ms over ${run.calls} calls: ${gap_us.toFixed(2)} µs between kernels per call`);
  }
  if (gaps.length) console.log(`${folder.gpu}: median ${quantile(gaps.sort((a, b) => a - b), 0.5).toFixed(2)} µs per call`);
}

for (const gpu of heldOut) {
  const times = rows(DATA, 'elementwise')
    .filter((r) => r.gpu === gpu)
    .map((r) => Number(r.time_ms))
    .sort((a, b) => a - b);
  if (times.length) console.log(`${gpu} (validation GPU): elementwise 5th percentile ${quantile(times, 0.05).toFixed(4)} ms of ${times.length} rows: the host's time to issue one op`);
}
