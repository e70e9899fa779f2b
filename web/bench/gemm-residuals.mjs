#!/usr/bin/env node
// The product's GEMM times against a measured GPU's own GEMM sweep, by kernel time: for each aligned row of
// models/measured/<gpu>/gemm.csv.gz (m, n, k multiples of 8, one product, A not transposed), the same product as a
// one-layer request (a bias-free dense layer of n units over k features, batch m) through the wasm engine and the
// shipped models, its forward time beside the measured one. Prints the median measured / predicted per precision
// and time bucket: where the GEMM model's size curve is off on that GPU (models/README.md, "The H200").
//
//   node web/bench/gemm-residuals.mjs [GPU]        (default h200)
//
// A diagnostic, not a benchmark: the sweep's rows time one call between two CUDA events (PyTorch's dispatch
// inside, so rows under ~50 us read the host), and a validation GPU's rows are in no fit.

import { fileURLToPath } from 'node:url';
import { readMeasuredCsv } from '../../models/data-tools/measured.mjs';
import { median } from './accuracy/metrics.mjs';
import { engine } from '../cli/node-engine.mjs';

const MEASURED = fileURLToPath(new URL('../../models/measured/', import.meta.url));

/** Upper edges (ms) of the time buckets and their labels. */
const BUCKETS = /** @type {const} */ ([
  [0.02, 'under 20 us'],
  [0.05, '20-50 us'],
  [0.1, '50-100 us'],
  [0.25, '0.1-0.25 ms'],
  [1, '0.25-1 ms'],
  [Infinity, 'over 1 ms'],
]);

/** @param {number} ms @returns {string} the bucket's label */
function bucketOf(ms) {
  const bucket = BUCKETS.find(([edge]) => ms < edge); // the last edge is Infinity
  return bucket ? bucket[1] : 'over 1 ms';
}

/**
 * The product's forward time of one m x k by k x n product in `precision` on `gpu` (ms).
 * @param {string} gpu @param {string} precision @param {number} m @param {number} n @param {number} k
 */
async function predictedGemmMs(gpu, precision, m, n, k) {
  const response = /** @type {any} */ (await engine.predict(/** @type {any} */ ({
    model: { input: { kind: 'vector', features: k }, layers: [{ type: 'dense', units: n, bias: false }] },
    training: { batch_size: m, precision, optimizer: 'sgd' },
    hardware: [gpu],
    options: { per_layer: true },
  })));
  return response.results[0].layers.forward_ms[response.layers[0].timing];
}

export async function main() {
  const gpu = process.argv[2] ?? 'h200';
  const table = readMeasuredCsv(`${MEASURED}${gpu}`, 'gemm');
  if (!table) throw new Error(`no models/measured/${gpu}/gemm.csv(.gz)`);
  const aligned = table.records.filter(
    (r) => r.batch === '1' && r.trans_a === '0' && [r.m, r.n, r.k].every((v) => Number(v) % 8 === 0),
  );
  /** @type {Map<string, number[]>} "precision / bucket" -> measured / predicted */
  const ratios = new Map();
  for (const r of aligned) {
    const measured = Number(r.time_ms);
    const predicted = await predictedGemmMs(gpu, r.precision ?? '', Number(r.m), Number(r.n), Number(r.k));
    const key = `${r.precision} / ${bucketOf(measured)}`;
    ratios.set(key, [...(ratios.get(key) ?? []), measured / predicted]);
  }
  console.log(`${gpu}: ${aligned.length} aligned rows of ${table.records.length}; median measured / predicted by kernel time`);
  for (const precision of [...new Set(aligned.map((r) => r.precision))].sort()) {
    const cells = BUCKETS.map(([, label]) => {
      const v = ratios.get(`${precision} / ${label}`) ?? [];
      return v.length ? `${label} ${median(v).toFixed(2)} (${v.length})` : '';
    }).filter(Boolean);
    console.log(`  ${precision}: ${cells.join(', ')}`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error) => {
    console.error(`gemm-residuals: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
