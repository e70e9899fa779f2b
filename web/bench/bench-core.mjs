#!/usr/bin/env node
// `npm run bench`: the core's speed, native against wasm, the end-to-end learned prediction in Node,
// bundle sizes and the Node process's memory, in one run. With --write it puts the numbers into
// docs/PERFORMANCE.md, section "Core" (replacing that section only); without it, it only prints them.
//
//   core, native vs wasm   the roofline `predict` (parse, features, assembly) of BERT-large and
//                          Llama-2-70B on every catalogue accelerator. Wasm: the module loaded once,
//                          N calls timed in this process. Native: build/native/core/prenet_native
//                          run once per request (the driver has no repeat option), so each timing
//                          includes process start; the start is estimated by a trivial request
//                          timed interleaved with the real ones and subtracted.
//   end to end             engine.predict through web/cli/node-engine.mjs: wasm core + ONNX Runtime
//                          (the learned path), first call and median of N after warm-up.
//   sizes                  gzip -9 of the wasm core, dist/, the models and ORT's wasm.
//   memory                 this Node process after the runs.
//
// Needs: npm run build:wasm (and npm run build:web for dist/ sizes); builds the native driver with
// scripts/build-native.sh.

import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEngine } from '../src/engine.js';
import { loadNodeCore, loadNodeModels } from '../cli/node-engine.mjs';
import { gzipBytes, median, ms, percentile, size, timeMs, timeMsAsync, verdict } from './core/stats.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NATIVE = join(ROOT, 'build/native/core/prenet_native');
const MODELS = ['bert-large', 'llama-2-70b'];
const WASM_RUNS = 30;
const NATIVE_RUNS = 25;
const E2E_RUNS = 20;
const WARMUP = 3;
const TARGETS = { wasmOverNative: 2, llamaCatalogueMs: 20, firstVisitGzipMiB: 4.5, planMs: 1000 };
const PLAN_RUNS = 5;
/** Plan mode (issue 7): Llama-2-70B on 1..1024 GPUs, global batch 1024 x 4096 tokens, 2T tokens. */
const PLAN_HARDWARE = [['h100-sxm'], ['h100-sxm', 'a100-sxm4-80gb', 'mi300x', 'h200']];
const write = process.argv.includes('--write');

/** @param {string} message */
const log = (message) => process.stderr.write(`${message}\n`);

/** @param {string} text JSON from the core */
function assertNoError(text) {
  if (text.startsWith('{"error"')) throw new Error(`core rejected the request: ${text.slice(0, 300)}`);
  return text;
}

/** @param {string} folder @returns {string[]} */
function filesUnder(folder) {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

function buildNative() {
  log('building the native driver (scripts/build-native.sh)…');
  const built = spawnSync('bash', [join(ROOT, 'scripts/build-native.sh')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (built.status !== 0 && !existsSync(NATIVE)) throw new Error('native build failed and build/native/core/prenet_native is missing');
  if (built.status !== 0) log('warning: native build failed; timing the existing binary');
}

/**
 * One run of the native driver on a request file; its stdout goes to /dev/null.
 * @param {string} file
 * @param {number} devNull
 */
function nativeRun(file, devNull) {
  return timeMs(() => {
    const run = spawnSync(NATIVE, [file], { stdio: ['ignore', devNull, 'ignore'] });
    if (run.status !== 0) throw new Error(`prenet_native failed on ${file} (status ${run.status})`);
  });
}

async function main() {
  buildNative();
  // The machine is shared: its load, before and after the timed runs, is reported with the numbers.
  const loadBefore = loadavg()[0] ?? NaN;
  const core = await loadNodeCore();
  /** @type {import('../src/types').Catalog} */
  const catalog = JSON.parse(core.catalog());
  const hardware = catalog.hardware.filter((h) => {
    const peak = /** @type {{fp32?: unknown} | undefined} */ (h['peak_tflops']);
    return typeof peak?.fp32 === 'number';
  });
  const skipped = catalog.hardware.length - hardware.length;
  const ids = hardware.map((h) => h.id);
  const smallest = [...catalog.presets].sort((a, b) => a.parameters - b.parameters)[0];
  if (!smallest) throw new Error('the catalogue has no presets');
  const trivial = JSON.stringify({ model: { preset: smallest.id }, hardware: [ids[0]], options: { per_layer: false } });
  const requests = MODELS.map((preset) => ({ preset, text: JSON.stringify({ model: { preset }, hardware: ids }) }));

  // ---- wasm core: module loaded once, N calls in this process
  log('wasm core…');
  const wasm = requests.map(({ preset, text }) => {
    const first = timeMs(() => assertNoError(core.predict(text)));
    for (let i = 0; i < WARMUP; i += 1) core.predict(text);
    const times = Array.from({ length: WASM_RUNS }, () => timeMs(() => core.predict(text)));
    // The learned path's own core work: prepare (features) and finish (assembly) with zero model outputs.
    /** @type {number[]} */
    let learned = [];
    const { learnedPrepare, learnedFeatures, learnedFinish } = core;
    if (learnedPrepare && learnedFeatures && learnedFinish) {
      const once = () => {
        /** @type {{session: number, classes: {rows: number}[]}} */
        const plan = JSON.parse(assertNoError(learnedPrepare(text)));
        const outputs = plan.classes.map((c, i) => {
          new Float32Array(learnedFeatures(plan.session, i));
          return new Float32Array(c.rows);
        });
        assertNoError(learnedFinish(plan.session, outputs));
      };
      for (let i = 0; i < WARMUP; i += 1) once();
      learned = Array.from({ length: WASM_RUNS }, () => timeMs(once));
    }
    return { preset, first, median: median(times), p95: percentile(times, 95), learnedMedian: median(learned), learnedP95: percentile(learned, 95), bytes: core.predict(text).length };
  });

  // ---- plan mode in wasm (the core's search with roofline times; the engine adds one learned call)
  log('plan mode…');
  const planRows = PLAN_HARDWARE.map((hw) => {
    const text = JSON.stringify({
      model: { preset: 'llama-2-70b' },
      training: { batch_size: 1024, seq_len: 4096, precision: 'bf16', optimizer: 'adamw' },
      hardware: hw,
      plan: { max_gpus: 1024, tokens: 2e12, top: 10 },
    });
    if (!core.plan) return { hw, median: NaN, p95: NaN, considered: 0 };
    const plan = core.plan.bind(core);
    /** @type {{results: {layouts_considered: number}[]}} */
    const response = JSON.parse(assertNoError(plan(text)));
    const times = Array.from({ length: PLAN_RUNS }, () => timeMs(() => plan(text)));
    const considered = response.results.reduce((sum, r) => sum + r.layouts_considered, 0);
    return { hw, median: median(times), p95: percentile(times, 95), considered };
  });

  // ---- native driver: one process per request, start-up estimated by a trivial request
  log('native driver…');
  const dir = mkdtempSync(join(tmpdir(), 'prenet-bench-'));
  const devNull = openSync('/dev/null', 'w');
  /** @type {{preset: string, raw: number, rawP95: number, net: number, same: boolean}[]} */
  let native = [];
  let baseline = NaN;
  try {
    const trivialFile = join(dir, 'trivial.json');
    writeFileSync(trivialFile, trivial);
    const files = requests.map(({ preset, text }) => {
      const file = join(dir, `${preset}.json`);
      writeFileSync(file, text);
      return file;
    });
    // Same work: the native response must equal the wasm one, byte for byte.
    const same = requests.map(({ text }, i) => {
      const out = spawnSync(NATIVE, [files[i] ?? ''], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
      return out.stdout.trimEnd() === core.predict(text);
    });
    for (let i = 0; i < WARMUP; i += 1) [trivialFile, ...files].forEach((file) => nativeRun(file, devNull));
    /** @type {number[]} */
    const base = [];
    /** @type {number[][]} */
    const real = files.map(() => []);
    for (let run = 0; run < NATIVE_RUNS; run += 1) {
      base.push(nativeRun(trivialFile, devNull));
      files.forEach((file, i) => real[i]?.push(nativeRun(file, devNull)));
    }
    baseline = median(base);
    native = requests.map(({ preset }, i) => {
      const times = real[i] ?? [];
      return { preset, raw: median(times), rawP95: percentile(times, 95), net: Math.max(0, median(times) - baseline), same: same[i] ?? false };
    });
  } finally {
    closeSync(devNull);
    rmSync(dir, { recursive: true, force: true });
  }

  // ---- end to end: the shared engine with ONNX Runtime, a fresh instance so the first call is cold
  log('end to end (engine with ONNX Runtime)…');
  const engine = createEngine(loadNodeCore, loadNodeModels);
  const loadMs = await timeMsAsync(() => engine.ready());
  const e2e = [];
  // Also without the per-layer table (what a caller that only needs the totals would send).
  const totalsOnly = MODELS.map((preset) => ({ preset: `${preset}, per_layer false`, text: JSON.stringify({ model: { preset }, hardware: ids, options: { per_layer: false } }) }));
  for (const { preset, text } of [...requests, ...totalsOnly]) {
    /** @type {string} */
    let predictor = '';
    /** @type {unknown} */
    let response = null;
    const first = await timeMsAsync(async () => {
      response = await engine.predict(text);
    });
    // The parsed response written back compactly: about the size of the text the core returned.
    const bytes = JSON.stringify(response).length;
    predictor = /** @type {{ predictor: string }} */ (response).predictor;
    for (let i = 0; i < WARMUP; i += 1) await engine.predict(text);
    /** @type {number[]} */
    const times = [];
    for (let i = 0; i < E2E_RUNS; i += 1) times.push(await timeMsAsync(() => engine.predict(text)));
    e2e.push({ preset, predictor, bytes, first, median: median(times), p95: percentile(times, 95) });
  }

  // ---- sizes
  const dist = join(ROOT, 'dist');
  const hasDist = existsSync(join(dist, 'index.html'));
  const siteFiles = hasDist ? filesUnder(dist).filter((file) => !/prenet-calculator\.html$|embed\.js$/.test(file)) : [];
  const siteGzip = siteFiles.reduce((sum, file) => sum + gzipBytes(file), 0);
  const siteRaw = siteFiles.reduce((sum, file) => sum + statSync(file).size, 0);
  /** @type {[string, string][]} label, path */
  const sizeRows = [['build/wasm/prenet_core.mjs (wasm core, wasm inlined)', join(ROOT, 'build/wasm/prenet_core.mjs')]];
  if (existsSync(join(ROOT, 'build/wasm/prenet_core.wasm'))) sizeRows.push(['build/wasm/prenet_core.wasm', join(ROOT, 'build/wasm/prenet_core.wasm')]);
  if (hasDist) {
    for (const file of filesUnder(join(dist, 'assets')).sort()) sizeRows.push([relative(ROOT, file), file]);
    sizeRows.push(['dist/index.html', join(dist, 'index.html')]);
    sizeRows.push(['dist/prenet-calculator.html (single file)', join(dist, 'prenet-calculator.html')]);
  }
  const artifacts = join(ROOT, 'models/artifacts');
  const onnx = existsSync(artifacts) ? readdirSync(artifacts).filter((name) => name.endsWith('.onnx')).sort().map((name) => join(artifacts, name)) : [];
  const ortWasm = join(ROOT, 'node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm');
  if (existsSync(ortWasm)) sizeRows.push(['ONNX Runtime Web wasm (node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm)', ortWasm]);
  const onnxGzip = onnx.reduce((sum, file) => sum + gzipBytes(file), 0);
  const onnxRaw = onnx.reduce((sum, file) => sum + statSync(file).size, 0);

  // The served site's first visit: the Web section's number (a real page load) if present, and dist/ recomputed.
  const perfPath = join(ROOT, 'docs/PERFORMANCE.md');
  const perfText = existsSync(perfPath) ? readFileSync(perfPath, 'utf8') : '';
  const webVisit = /\| first visit to the site[^|]*\| ([\d.]+) MiB \|/.exec(perfText)?.[1];
  // The Web section states the exact bytes in MB; re-deriving them from its rounded MiB could differ in the last digit.
  const webVisitMB = /first visit to the site[^|]*target ≤ 4\.5 MB: ([\d.]+) MB/.exec(perfText)?.[1];

  // ---- memory of this process
  const memory = process.memoryUsage();
  const peakRss = process.resourceUsage().maxRSS * 1024;
  const webMeasuresMemory = /memory/i.test(readFileSync(join(ROOT, 'web/bench/bench-web.mjs'), 'utf8'));

  // ---- report
  const loadAfter = loadavg()[0] ?? NaN;
  const cpu = cpus();
  const date = new Date().toISOString().slice(0, 10);
  const llama = e2e.find((row) => row.preset === 'llama-2-70b');
  const llamaTotals = e2e.find((row) => row.preset === 'llama-2-70b, per_layer false');
  const ratios = wasm.map((w, i) => w.median / (native[i]?.net ?? NaN));
  const firstVisitMiB = webVisit !== undefined ? Number(webVisit) : siteGzip / 1024 / 1024;
  const firstVisitMB =
    webVisit !== undefined && webVisitMB !== undefined ? Number(webVisitMB) : (firstVisitMiB * 1024 * 1024) / 1e6;
  const lines = [
    '## Core',
    '',
    `Measured ${date} with \`npm run bench\` (web/bench/bench-core.mjs): Node ${process.version}, ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'} ` +
      `(shared with other work, so expect noise; 1-minute load average ${loadBefore.toFixed(2)} before the timed runs, ${loadAfter.toFixed(2)} after). ` +
      `Requests: each preset on all ${ids.length} catalogue accelerators` +
      `${skipped ? ` (${skipped} skipped: no fp32 peak)` : ' (none skipped: all have an fp32 peak)'}, default training settings, per-layer table on (the default).`,
    '',
    '### Core work, native vs wasm (roofline `predict`: parse, features, assembly)',
    '',
    `| model | wasm median (p95) of ${WASM_RUNS} | wasm first call | native, start-up subtracted | native raw median (p95) of ${NATIVE_RUNS} | wasm / native | same output | learned path's core work in wasm (prepare + features copy + finish, zero outputs), median (p95) |`,
    '|---|---|---|---|---|---|---|---|',
    ...wasm.map((w, i) => {
      const n = native[i];
      return `| ${w.preset} (${size(w.bytes)} response) | ${ms(w.median)} (${ms(w.p95)}) | ${ms(w.first)} | ${ms(n?.net ?? NaN)} | ${ms(n?.raw ?? NaN)} (${ms(n?.rawP95 ?? NaN)}) | ${(ratios[i] ?? NaN).toFixed(2)}× | ${n?.same ? 'yes' : '**no**'} | ${ms(w.learnedMedian)} (${ms(w.learnedP95)}) |`;
    }),
    '',
    `Method. Wasm: build/wasm/prenet_core.mjs loaded once in Node, then ${WARMUP} warm-up and ${WASM_RUNS} timed calls of \`predict\` ` +
      '(string in, string out, including the copy of the JSON across the wasm boundary). Native: build/native/core/prenet_native ' +
      '(scripts/build-native.sh, Release), one request file in, one response out, one process per timing like one CLI call ' +
      '(its `--repeat N` option is for profiling and not used here), so the native figure redoes per-process work that the warm wasm ' +
      `module keeps (the parsed catalogue, the preset cache), which flatters the wasm/native ratio. Each native timing is a whole process (spawnSync from Node, stdout to /dev/null); ` +
      `the start-up is estimated by a trivial request (${smallest.id} on ${ids[0]}, per_layer false), timed interleaved with the real ones: ` +
      `median ${ms(baseline)}, subtracted from the real medians. Limits: the trivial request still does a little core work and its own ` +
      'static initialisation (embedded catalogue), both subtracted as "start-up"; process start varies by a few tenths of a millisecond run to run, ' +
      'which is the error of the subtracted figure; the native output is written to /dev/null while the wasm one stays in memory. ' +
      '"same output" compares the two responses byte for byte.',
    '',
    '### End to end in Node, learned path (wasm core + ONNX Runtime Web, one thread)',
    '',
    `| model | predictor | response (its JSON.stringify length) | first call (loads ORT and the class models) | median (p95) of ${E2E_RUNS} after ${WARMUP} warm-up |`,
    '|---|---|---|---|---|',
    ...e2e.map((row) => `| ${row.preset} | ${row.predictor} | ${size(row.bytes)} | ${ms(row.first)} | ${ms(row.median)} (${ms(row.p95)}) |`),
    '',
    `A fresh engine from web/src/engine.js with web/cli/node-engine.mjs's loaders; loading the wasm core (\`engine.ready()\`) took ${ms(loadMs)} before the first call. ` +
      'Each call is `engine.predict` on the request text: learnedPrepare, the feature copies, one ONNX batch per layer class, learnedFinish and JSON.parse of the response. ' +
      "Per-layer results are columnar (docs/API.md): each result carries one column per distinct layer timing and the layer table says which column is each layer's, " +
      "so a model's repeated blocks cost one column per accelerator, not one object per layer per accelerator (the object-per-layer form made Llama-2-70B's response 4.11 MiB).",
    '',
    '### Plan mode (wasm core)',
    '',
    `| request | layouts considered | median (p95) of ${PLAN_RUNS} |`,
    '|---|---|---|',
    ...planRows.map((row) => `| llama-2-70b, 1–1024 GPUs, ${row.hw.join(', ')} | ${row.considered} | ${ms(row.median)} (${ms(row.p95)}) |`),
    '',
    "`core.plan` on the request text in the wasm module (batch 1024 × 4096 tokens, bf16, AdamW, 2·10¹² tokens, top 10): the search " +
      "of docs/API.md, Plan, with roofline kernel times. `engine.plan` adds one learned prediction of one sample per accelerator (the " +
      "time_scale), which the end-to-end table above bounds.",
    '',
    '### Sizes (gzip -9)',
    '',
    '| file | gzip | raw |',
    '|---|---|---|',
    ...sizeRows.map(([label, file]) => `| ${label} | ${size(gzipBytes(file))} | ${size(statSync(file).size)} |`),
    `| models/artifacts/*.onnx (${onnx.length} files; the page loads the seven class models) | ${size(onnxGzip)} | ${size(onnxRaw)} |`,
    hasDist
      ? `| served site: dist/ without the single file and embed.js | ${size(siteGzip)} | ${size(siteRaw)} |`
      : '| dist/ | not built: run `npm run build:web` | |',
    '',
    '### Memory',
    '',
    `Node process after all the runs above (wasm core, ONNX Runtime and its sessions, the responses above): peak RSS ${size(peakRss)}, ` +
      `RSS ${size(memory.rss)}, JS heap used ${size(memory.heapUsed)} of ${size(memory.heapTotal)}, external ${size(memory.external)} ` +
      `(array buffers ${size(memory.arrayBuffers)}, which include the two wasm memories). ` +
      (webMeasuresMemory ? "The page's peak memory: see the Web section." : "The page's peak memory is not measured (`npm run bench:web` does not record it)."),
    '',
    '### Targets (issue 8)',
    '',
    '| target | measured | |',
    '|---|---|---|',
    ...wasm.map((w, i) => `| wasm core within ${TARGETS.wasmOverNative}× of native, ${w.preset} | ${(ratios[i] ?? NaN).toFixed(2)}× | ${verdict((ratios[i] ?? Infinity) <= TARGETS.wasmOverNative)} |`),
    `| full-catalogue prediction for Llama-2-70B ≤ ${TARGETS.llamaCatalogueMs} ms after load (learned, end to end, median, per-layer table on) | ${ms(llama?.median ?? NaN)} | ${verdict((llama?.median ?? Infinity) <= TARGETS.llamaCatalogueMs)} |`,
    `| the same, per_layer false | ${ms(llamaTotals?.median ?? NaN)} | ${verdict((llamaTotals?.median ?? Infinity) <= TARGETS.llamaCatalogueMs)} |`,
    ...planRows.map((row) => `| plan mode ≤ 1 s for llama-2-70b over 1–1024 GPUs (wasm, ${row.hw.length} accelerator${row.hw.length > 1 ? 's' : ''}) | ${ms(row.median)} | ${verdict(row.median <= TARGETS.planMs)} |`),
    `| initial transfer of the served site ≤ 4.5 MB gzip including ONNX Runtime | ${firstVisitMiB.toFixed(2)} MiB = ${firstVisitMB.toFixed(2)} MB (${webVisit !== undefined ? "the Web section's first visit" : 'dist/ recomputed'}) | ` +
      `read as 4.5 MiB: ${verdict(firstVisitMiB <= TARGETS.firstVisitGzipMiB)}; read as 4.5 × 10⁶ bytes: ${verdict(firstVisitMB <= 4.5)} |`,
    '',
  ];
  const section = lines.join('\n');
  process.stdout.write(`${section}\n`);
  if (write) {
    let text = perfText || '# Performance\n\nMeasured numbers, each with the command that produced them.\n';
    // Replace the "## Core" section (up to the next "## " heading), or append it.
    const start = text.indexOf('\n## Core\n');
    if (start === -1) text = `${text.trimEnd()}\n\n${section}`;
    else {
      const next = text.indexOf('\n## ', start + 1);
      text = `${text.slice(0, start + 1)}${section}${next === -1 ? '' : `\n${text.slice(next + 1)}`}`;
    }
    writeFileSync(perfPath, `${text.trimEnd()}\n`);
    log(`wrote ${relative(ROOT, perfPath)}`);
  }
}

await main();
