#!/usr/bin/env node
// The product's GEMM times against measured GEMMs, by kernel time: the same product as a one-layer request (a
// bias-free dense layer of n units over k features, batch m) through the wasm engine and the shipped models, its
// forward time beside the measured one. Prints the median measured / predicted per precision and time bucket:
// where the GEMM model's size curve is off on that GPU (models/README.md, "The H200", "A size curve for the A100").
//
//   node web/bench/gemm-residuals.mjs [GPU]                 a measured GPU's own sweep (default h200): the aligned
//                                                           rows of models/measured/<gpu>/gemm.csv.gz (m, n, k
//                                                           multiples of 8, one product, A not transposed)
//   node web/bench/gemm-residuals.mjs GPU --vidur           Vidur's profiled decoder GEMMs of an A100 SXM4 80GB or
//                                                           an A40 (models/data/llm_ops.csv.gz: QKV, output, up,
//                                                           down projections, forward, FP16; calibration rows of
//                                                           the GEMM level, so this shows the level's fit by size);
//                                                           every k-th row of at least 50 us, about 700 in all
//
// A diagnostic, not a benchmark: a sweep row times one call between two CUDA events (PyTorch's dispatch
// inside, so rows under ~50 us read the host), and a validation GPU's rows are in no fit.

import { fileURLToPath } from 'node:url';
import { readMeasuredCsv } from '../../models/data-tools/measured.mjs';
import { median } from './accuracy/metrics.mjs';
import { engine } from '../cli/node-engine.mjs';

const MEASURED = fileURLToPath(new URL('../../models/measured/', import.meta.url));
const LLM_OPS = fileURLToPath(new URL('../../models/data/', import.meta.url));
/** Vidur's GEMM operators (models/trainer/datasets.cpp, llm_op_rows, reads the same four). */
const VIDUR_GEMMS = new Set(['attn_pre_proj', 'attn_post_proj', 'mlp_up_proj', 'mlp_down_proj']);
/** About this many Vidur rows are sampled (every k-th, in file order). */
const VIDUR_SAMPLE = 700;

/** Upper edges (ms) of the time buckets and their labels. */
const BUCKETS = /** @type {const} */ ([
  [0.02, 'under 20 us'],
  [0.05, '20-50 us'],
  [0.1, '50-100 us'],
  [0.25, '0.1-0.25 ms'],
  [1, '0.25-1 ms'],
  [3, '1-3 ms'],
  [Infinity, 'over 3 ms'],
]);

/** @param {number} ms @returns {string} the bucket's label */
function bucketOf(ms) {
  const bucket = BUCKETS.find(([edge]) => ms < edge); // the last edge is Infinity
  return bucket ? bucket[1] : 'over 3 ms';
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

/**
 * The rows to compare, as gemm.csv's columns: the GPU's own aligned sweep rows, or a sample of Vidur's GEMMs.
 * @param {string} gpu @param {boolean} vidur
 * @returns {{rows: Record<string, string>[], of: number, what: string}}
 */
function comparedRows(gpu, vidur) {
  if (!vidur) {
    const table = readMeasuredCsv(`${MEASURED}${gpu}`, 'gemm');
    if (!table) throw new Error(`no models/measured/${gpu}/gemm.csv(.gz)`);
    const rows = table.records.filter((r) => r.batch === '1' && r.trans_a === '0' && [r.m, r.n, r.k].every((v) => Number(v) % 8 === 0));
    return { rows, of: table.records.length, what: 'aligned rows' };
  }
  const table = readMeasuredCsv(LLM_OPS, 'llm_ops');
  if (!table) throw new Error('no models/data/llm_ops.csv.gz');
  const gemms = table.records.filter((r) => r.gpu === gpu && VIDUR_GEMMS.has(r.op ?? '') && Number(r.time_ms) >= 0.05);
  if (gemms.length === 0) throw new Error(`no Vidur GEMM rows of ${gpu} (a100-sxm4-80gb or a40)`);
  const step = Math.max(1, Math.floor(gemms.length / VIDUR_SAMPLE));
  const rows = gemms
    .filter((_, i) => i % step === 0)
    .map((r) => ({ precision: r.precision ?? '', m: r.rows ?? '', n: r.cols ?? '', k: r.inner ?? '', time_ms: r.time_ms ?? '' }));
  return { rows, of: gemms.length, what: "Vidur's GEMM rows of at least 50 us, every " + step + 'th' };
}

export async function main() {
  const gpu = process.argv[2] ?? 'h200';
  const { rows: aligned, of, what } = comparedRows(gpu, process.argv.includes('--vidur'));
  /** @type {Map<string, number[]>} "precision / bucket" -> measured / predicted */
  const ratios = new Map();
  for (const r of aligned) {
    const measured = Number(r.time_ms);
    const predicted = await predictedGemmMs(gpu, r.precision ?? '', Number(r.m), Number(r.n), Number(r.k));
    const key = `${r.precision} / ${bucketOf(measured)}`;
    ratios.set(key, [...(ratios.get(key) ?? []), measured / predicted]);
  }
  console.log(`${gpu}: ${aligned.length} ${what} of ${of}; median measured / predicted by kernel time`);
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
