#!/usr/bin/env node
// Records the golden corpus: every request the benchmarks, the case manifest, the bad-input table and the
// property generators send to the engine, as text, with the kind of call that answered it. The replay test
// (tests/js/golden.test.mjs) sends each again and compares a hash of the core's raw answer with
// tests/golden/hashes.json, so a change meant to keep behaviour (a restructuring) proves it byte for byte.
//
//   node tests/golden/record.mjs    # rewrites tests/golden/corpus.json.gz (then refresh the hashes:
//                                   # PRENET_GOLDEN_UPDATE=1 node --test tests/js/golden.test.mjs)
//
// Needs the wasm core and ../shared/data (the accuracy rows). Requests are recorded, not regenerated at
// replay, so the benchmarks' own code may change without changing what the corpus asks.

import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { engine } from '../../web/cli/node-engine.mjs';
import { randomParallelRequest, randomPlanRequest, randomRequest, rng } from '../js/generators.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = fileURLToPath(new URL('corpus.json.gz', import.meta.url));
const SEED = 20261201;
/** Texts above this are left out (the bad-input table's 100 MiB inputs test a limit, not a response). */
const MAX_TEXT = 256 * 1024;

/** @type {{source: string, kind: 'predict' | 'roofline' | 'plan', text: string}[]} */
const corpus = [];
const seen = new Set();
let source = '';

/** @param {'predict' | 'roofline' | 'plan'} kind @param {unknown} request */
function keep(kind, request) {
  const text = typeof request === 'string' ? request : JSON.stringify(request);
  if (text.length > MAX_TEXT || seen.has(`${kind} ${text}`)) return;
  seen.add(`${kind} ${text}`);
  corpus.push({ source, kind, text });
}

// The benchmarks call these three; recording wraps them and lets each call through.
const original = { predict: engine.predict, predictRoofline: engine.predictRoofline, plan: engine.plan };
engine.predict = (request) => (keep('predict', request), original.predict(request));
engine.predictRoofline = (request) => (keep('roofline', request), original.predictRoofline(request));
engine.plan = (request) => (keep('plan', request), original.plan(request));

/** Runs a benchmark script as `node SCRIPT` would, without --write, and waits for its main. */
async function runScript(relativePath) {
  source = relativePath;
  const path = `${ROOT}${relativePath}`;
  const argv = process.argv;
  const log = console.log;
  const write = process.stdout.write;
  process.argv = [argv[0] ?? 'node', path];
  console.log = () => {};
  process.stdout.write = () => true;
  try {
    const mod = await import(path);
    await mod.main();
  } finally {
    process.argv = argv;
    console.log = log;
    process.stdout.write = write;
  }
}

async function main() {
  const catalog = await engine.catalog();
  const presets = catalog.presets.map((p) => p.id);
  const small = presets.filter((id) => !/70b|13b|mixtral/.test(id));

  await runScript('web/bench/accuracy.mjs');
  await runScript('web/bench/measured.mjs');
  await runScript('web/bench/scale.mjs');

  source = 'tests/cases/requests.json';
  for (const c of JSON.parse(readFileSync(`${ROOT}tests/cases/requests.json`, 'utf8'))) {
    keep('predict', c.request ?? c.request_text);
    keep('roofline', c.request ?? c.request_text);
  }

  source = 'scripts/bad-inputs.mjs';
  const { CASES } = await import(`${ROOT}scripts/bad-inputs.mjs`);
  for (const c of CASES) if (!c.native) keep('roofline', c.input());

  source = 'tests/js/generators.mjs';
  const r = rng(SEED);
  for (let i = 0; i < 200; i++) {
    const request = /** @type {any} */ (randomRequest(r, small, catalog.hardware));
    if (i % 4 === 0) request.options = { per_layer: true };
    if (i % 5 === 0) request.training.batch_size = r.int(1, 64);
    keep('predict', request);
    if (i % 3 === 0) keep('roofline', request);
  }
  for (let i = 0; i < 200; i++) keep(i % 2 ? 'predict' : 'roofline', randomParallelRequest(r, presets, catalog.hardware));
  for (let i = 0; i < 40; i++) keep('plan', randomPlanRequest(r, small, catalog.hardware));
  for (const preset of presets) {
    keep('predict', { model: { preset }, training: { batch_size: 8, precision: 'bf16' }, hardware: ['h100-sxm', 'a100-sxm4-80gb', 't4'] });
  }
  keep('predict', { model: { preset: 'llama-2-70b' }, training: { batch_size: 1, precision: 'bf16' }, hardware: catalog.hardware.map((h) => h.id) });

  writeFileSync(OUT, gzipSync(JSON.stringify(corpus.map(({ source: s, kind, text }) => ({ source: s, kind, text })))));
  const bySource = new Map();
  for (const c of corpus) bySource.set(c.source, (bySource.get(c.source) ?? 0) + 1);
  console.log(`wrote ${OUT}: ${corpus.length} requests`, Object.fromEntries(bySource));
}

await main();
