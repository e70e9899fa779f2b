#!/usr/bin/env node
// The per-call timing floor of the harness behind the memory-bound classes' training rows (NeuSight's PyTorch
// per-op sweep: one op per pair of CUDA events, so a small op's time is the host's dispatch interval, not the
// GPU's work). Prints, per class and GPU, the 5th percentile of the measured times (the sweep's smallest kernels
// sit on that floor) and the median over the GPUs: the values of kHarnessFloorMs in core/src/timing/learned.cpp.
// Then, from the project's own profiled training steps (models/measured/<gpu>/kernels.csv beside e2e.csv), the
// step's time between its kernels per kernel call, (step − the kernels' device time) / calls: kStepLaunchGapMs.
//
//   node models/data-tools/harness-floor.mjs
//
// Validation GPUs (models/measured/validation.json) are left out of the floors, as from every fit; the H200's own
// harness floor (the same percentile of its elementwise rows, on a newer host) is printed last: the host's time to
// issue one kernel of an eager step (docs/PREDICTION.md §6, "Not modelled").

import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { parseCsvObjects, readCsvObjects } from './csv.mjs';
import { measuredFolders } from './measured.mjs';

const DATA = fileURLToPath(new URL('../data/', import.meta.url));
const VALIDATION = fileURLToPath(new URL('../measured/validation.json', import.meta.url));

/** The class, its rows' file and the ops of that file it trains on (null: all). */
const CLASSES = [
  { dataset: 'elementwise', file: 'elementwise.csv.gz', op: null },
  { dataset: 'normalization', file: 'normalization.csv.gz', op: 'layernorm' },
  { dataset: 'softmax', file: 'normalization.csv.gz', op: 'softmax' },
];

/** @param {number[]} sorted @param {number} q */
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

const heldOut = new Set(JSON.parse(readFileSync(VALIDATION, 'utf8')).gpus);
for (const { dataset, file, op } of CLASSES) {
  const path = `${DATA}${file}`;
  const { records } = parseCsvObjects(gunzipSync(readFileSync(path)).toString('utf8'), path);
  /** @type {Map<string, number[]>} */
  const byGpu = new Map();
  for (const r of records) {
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
  if (!existsSync(`${folder.dir}/kernels.csv`) || !existsSync(`${folder.dir}/e2e.csv`)) continue;
  const kernels = readCsvObjects(`${folder.dir}/kernels.csv`).records;
  const steps = readCsvObjects(`${folder.dir}/e2e.csv`).records;
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

{
  const path = `${DATA}elementwise.csv.gz`;
  const { records } = parseCsvObjects(gunzipSync(readFileSync(path)).toString('utf8'), path);
  for (const gpu of heldOut) {
    const times = records.filter((r) => r.gpu === gpu).map((r) => Number(r.time_ms)).sort((a, b) => a - b);
    if (times.length) console.log(`${gpu} (validation GPU): elementwise 5th percentile ${quantile(times, 0.05).toFixed(4)} ms of ${times.length} rows: the host's time to issue one op`);
  }
}
