#!/usr/bin/env node
// `npm run bench:measured`: the training steps the project timed itself (models/measured/<gpu>/e2e.csv,
// written by models/measure/measure_gpu.py from the runs in models/measure/e2e.json) beside the core's
// prediction of the same request: step, forward, backward and optimizer times and peak memory. With
// --write the table replaces docs/MEASURED.md. Without measurements it predicts every run on the H200
// (so a broken run in e2e.json shows before a GPU is lent) and says that nothing was measured.
//
//   node web/bench/measured.mjs [--write] [--measured DIR]
//
// DIR holds one folder per GPU (default models/measured).
//
// Nothing here is fitted: the requests restate e2e.json, and the errors are what they are.

import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measuredFolders, readMeasuredCsv } from '../../models/data-tools/measured.mjs';
import { signedError, summarize } from './accuracy/metrics.mjs';
import { RULE_OF_THUMB_MFU, leaveOneOutMfu, measuredMfu, stepAtMfu } from './accuracy/mfu-baseline.mjs';
import { engine } from '../cli/node-engine.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RUNS = `${ROOT}models/measure/e2e.json`;
const MEASURED = `${ROOT}models/measured`;
const DOC = `${ROOT}docs/MEASURED.md`;
const MANIFEST = `${ROOT}models/artifacts/manifest.json`;

/**
 * @typedef {{name: string, preset?: string, hf_config?: Record<string, unknown>, task?: string, torchvision?: string,
 *   batch: number, seq_len?: number, image_size?: number, precision: string, optimizer: string, attention?: string}} E2eRun
 */

/** @returns {E2eRun[]} the runs of models/measure/e2e.json */
export function e2eRuns() {
  return JSON.parse(readFileSync(RUNS, 'utf8')).runs;
}

/**
 * The request that describes one e2e.json run on `gpu`: the same model, batch, sequence, precision,
 * optimizer and attention as measure_gpu.py trains.
 * @param {E2eRun} run
 * @param {string} gpu catalogue id
 */
export function e2eRequest(run, gpu) {
  if (!run.preset && !run.hf_config) throw new Error(`e2e run ${run.name}: needs a preset or an hf_config`);
  /** @type {Record<string, unknown>} */
  // torch.optim's default on a GPU: the multi-tensor "foreach" update (measure_gpu.py passes no flag).
  const training = { batch_size: run.batch, precision: run.precision, optimizer: run.optimizer, optimizer_impl: 'foreach' };
  if (run.seq_len) training.seq_len = run.seq_len;
  if (run.attention) training.attention = run.attention;
  return {
    model: run.preset ? { preset: run.preset } : { hf_config: run.hf_config, name: run.name },
    training,
    hardware: [gpu],
    options: { per_layer: false },
  };
}

/**
 * @param {string} root folder with one folder per measured GPU
 * @returns {import('../../models/data-tools/csv.mjs').CsvRecord[]} every measured e2e row, from every GPU folder
 */
function measuredRows(root) {
  const rows = [];
  for (const { dir } of measuredFolders(root)) {
    const file = readMeasuredCsv(dir, 'e2e');
    if (file) rows.push(...file.records);
  }
  return rows;
}

/** @param {number} v */
const f1 = (v) => v.toFixed(1);
/** @param {number} v a percentage @returns {string} it with its sign */
const signedPct = (v) => `${v >= 0 ? '+' : ''}${f1(v)}%`;

export async function main() {
  const argv = process.argv.slice(2);
  const write = argv.includes('--write');
  const at = argv.indexOf('--measured');
  const root = at >= 0 && argv[at + 1] ? resolve(/** @type {string} */ (argv[at + 1])) : MEASURED;
  const runs = new Map(e2eRuns().map((r) => [r.name, r]));
  const measured = measuredRows(root);
  if (measured.length === 0) {
    for (const run of runs.values()) {
      const r = /** @type {any} */ ((await engine.predict(/** @type {any} */ (e2eRequest(run, 'h200')))).results[0]);
      console.log(`${run.name.padEnd(34)} h200 predicted step ${f1(r.step_ms)} ms, ${f1(r.memory_gb)} GB`);
    }
    console.log('\nno measured runs in models/measured: run models/measure/measure_gpu.py where a GPU is lent (models/measure/README.md)');
    if (write) console.log('nothing written');
    return;
  }
  /** @type {string[]} */
  const lines = [];
  /** @type {{predicted: number, measured: number}[]} */
  const steps = [];
  /** @type {{predicted: number, measured: number}[]} */
  const rooflineSteps = [];
  /** @type {{predicted: number, measured: number}[]} predicted memory without the runtime allowance, PyTorch's peak */
  const memory = [];
  /** @type {{ mfu: number, accelerator: string, precision: string, responseMfu: number }[]} measured and predicted MFU per row */
  const mfus = [];
  /** @type {((baseline: string) => string)[]} each row's table line, given its constant-MFU cell */
  const rowLines = [];
  let predictor = '';
  for (const m of measured) {
    const run = runs.get(m.name ?? '');
    if (!run) throw new Error(`${root}/${m.gpu}/e2e.csv: run "${m.name}" is not in models/measure/e2e.json`);
    const response = /** @type {any} */ (await engine.predict(/** @type {any} */ (e2eRequest(run, m.gpu ?? ''))));
    predictor = response.predictor;
    const r = response.results[0];
    const analytic = /** @type {any} */ (await engine.predictRoofline(/** @type {any} */ (e2eRequest(run, m.gpu ?? '')))).results[0];
    const step = Number(m.step_ms);
    steps.push({ predicted: r.step_ms, measured: step });
    rooflineSteps.push({ predicted: analytic.step_ms, measured: step });
    memory.push({ predicted: r.memory_gb - r.memory.overhead_gb, measured: Number(m.peak_memory_gb) });
    mfus.push({ mfu: measuredMfu(r.mfu, r.step_ms, step), accelerator: m.gpu ?? '', precision: run.precision, responseMfu: r.mfu });
    const band = r.step_ms_interval ? ` [${f1(r.step_ms_interval[0])}, ${f1(r.step_ms_interval[1])}]` : '';
    rowLines.push((baseline) =>
      `| ${m.name} | \`${m.gpu}\` | ${f1(step)} | ${f1(r.step_ms)}${band} | ${signedPct(signedError(r.step_ms, step))} | ` +
        `${f1(analytic.step_ms)} (${signedPct(signedError(analytic.step_ms, step))}) | ${baseline} | ` +
        `${f1(Number(m.forward_ms))} / ${f1(r.forward_ms)} | ${f1(Number(m.backward_ms))} / ${f1(r.backward_ms)} | ` +
        `${f1(Number(m.optimizer_ms))} / ${f1(r.optimizer_ms)} | ${f1(Number(m.peak_memory_gb))} / ${f1(r.memory_gb - r.memory.overhead_gb)} |`,
    );
    process.stderr.write(`${m.name} on ${m.gpu}: ${f1(r.step_ms)} ms predicted, ${f1(step)} ms measured\n`);
  }
  // Constant-MFU baselines: the rule of thumb, and each row at the other rows' median MFU (leave-one-out).
  const loo = leaveOneOutMfu(mfus);
  /** @type {{predicted: number, measured: number}[]} */
  const looSteps = [];
  /** @type {{predicted: number, measured: number}[]} */
  const ruleSteps = [];
  steps.forEach((pair, i) => {
    const { responseMfu } = /** @type {{ responseMfu: number }} */ (mfus[i]);
    const at = /** @type {{ mfu: number }} */ (loo[i]).mfu;
    ruleSteps.push({ predicted: stepAtMfu(responseMfu, pair.predicted, RULE_OF_THUMB_MFU), measured: pair.measured });
    const line = /** @type {(baseline: string) => string} */ (rowLines[i]);
    if (!Number.isFinite(at)) {
      lines.push(line('n/a (no other run)'));
      return;
    }
    const b = stepAtMfu(responseMfu, pair.predicted, at);
    looSteps.push({ predicted: b, measured: pair.measured });
    lines.push(line(`${f1(b)} (${signedPct(signedError(b, pair.measured))}) at ${f1(at * 100)}%`));
  });
  const constantMfu = looSteps.length > 0 ? summarize(looSteps) : null;
  const ruleOfThumb = summarize(ruleSteps);
  const learned = summarize(steps);
  const roofline = summarize(rooflineSteps);
  const peaks = summarize(memory);
  const gpus = [...new Set(measured.map((m) => m.gpu ?? ''))].sort();
  const trainedOn = new Set(
    /** @type {{gpus: string[]}[]} */ (JSON.parse(readFileSync(MANIFEST, 'utf8')).classes).flatMap((c) => c.gpus),
  );
  const seen = gpus.map((g) =>
    trainedOn.has(g)
      ? `\`${g}\`: its kernel measurements are in the models' training data.`
      : `\`${g}\`: in no model's training data (\`models/measured/validation.json\` keeps a measured GPU out until its rows improve the benchmarks), so these are predictions for a GPU the models never saw (TF32 GEMMs on a GH100 or GB100 chip take the TF32 level XLA's sweep measured on the H100 or B200, a calibration no model is fitted on: models/README.md).`,
  );
  const doc = [
    '# Training steps measured by the project',
    '',
    `Generated by \`npm run bench:measured\` (\`node web/bench/measured.mjs --write\`); predictor \`${predictor}\`.`,
    'Measured: `models/measured/<gpu>/e2e.csv` (models/measure/measure_gpu.py, runs in models/measure/e2e.json;',
    'PyTorch eager mode, CUDA events around each phase, median of the timed steps; software in each folder\'s',
    'meta.json). Predicted: the same request through the wasm engine. Times in ms; "measured / predicted" pairs.',
    'Memory: PyTorch\'s peak allocated bytes beside the predicted total without the fixed runtime allowance',
    '(`memory.overhead_gb`), since the allocator does not count the CUDA context.',
    '',
    ...seen,
    '',
    'Baselines: the roofline alone (the core\'s analytic predictor) and a constant MFU (the model\'s matrix FLOPs at',
    'a fixed share of the dense peak at the training precision): per row, the median MFU the *other* runs on the same',
    'GPU at the same precision measured (leave-one-out: the constant never saw its own row; web/bench/accuracy/',
    `mfu-baseline.mjs), and the ${RULE_OF_THUMB_MFU * 100}% rule of thumb in the summary.`,
    '',
    '| run | GPU | measured step | predicted step [interval] | error | roofline step (error) | constant-MFU step (error) at MFU | forward | backward | optimizer | peak memory GB |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...lines,
    '',
    `Over ${learned.n} runs: mean absolute error ${f1(learned.mape)}%, median ${f1(learned.medape)}%; ` +
      `the roofline alone ${f1(roofline.mape)}%, median ${f1(roofline.medape)}%; ` +
      (constantMfu
        ? `a constant MFU per GPU and precision (leave-one-out) ${f1(constantMfu.mape)}%, median ${f1(constantMfu.medape)}%; `
        : 'no constant-MFU baseline (it needs a second run); ') +
      `the ${RULE_OF_THUMB_MFU * 100}% rule of thumb ${f1(ruleOfThumb.mape)}%, median ${f1(ruleOfThumb.medape)}%.`,
    `Peak memory: mean absolute error ${f1(peaks.mape)}%, mean signed ${signedPct(peaks.bias)} ` +
      `(under-predicted on ${memory.filter((p) => p.predicted < p.measured).length} of ${memory.length} runs).`,
    '',
  ].join('\n');
  console.log(doc);
  if (write) {
    writeFileSync(DOC, doc);
    console.log('wrote docs/MEASURED.md');
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error) => {
    console.error(`bench:measured: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
