// Property tests over random valid requests through the Node engine (web/cli/node-engine.mjs `engine`):
// the learned path when models/artifacts load, else the roofline. A smaller set than the core's
// tests/core/test_properties.cpp, for what the learned path adds: every number finite, step / epoch /
// total identities (docs/API.md), and step time not decreasing as the batch grows.
//
// Monotonicity: the step time must never decrease as the batch (every request), the sequence length or
// the image size (random layer stacks of that input kind) doubles, for the analytic roofline (the
// response's `baselines.roofline.step_ms`) and for the learned step. The learned per-kernel models
// guarantee it by construction when each is a monotone MLP (models/README.md): log(time) non-decreasing
// in every feature that grows with a kernel, those features audited in core/src/timing/kernel_features.cpp and
// checked in tests/core/test_kernel_features.cpp; a kernel is charged the larger of that and its physical
// floor, and a batched GEMM never less than one of its products; a measured GPU's level per class (the model's
// median miss on that GPU's training rows) is one factor whatever the size, and a custom accelerator
// has none. Asserted strictly, with no tolerance; each decrease is printed as a diagnostic with the request
// to replay. The shipped models are monotone MLPs; a manifest of unconstrained models
// (`npm run train -- --unconstrained`: tree ensembles and ratio MLPs, which promise nothing; with seed
// 20261129 they made the learned step fall on 82 of 306 batch, 29 of 99 sequence-length and 7 of 70
// image-size doublings, and rise on 20 and 30 of 56 peak / bandwidth steps) turns the strict learned
// tests into todo (a known failure, reported on every run). Depth (repeat count) holds for any models.
// The generator is seeded (PRENET_PROPERTY_SEED overrides); a failure prints the request to replay.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, describe, test } from 'node:test';
import { randomModel, randomRequest, rng } from './generators.mjs';
import { IDENTITY_TOLERANCE, assertClose, engine, requireBuiltCore } from './helpers.mjs';

before(requireBuiltCore);

/**
 * True when every kernel-class model in models/artifacts promises monotonicity in size (the monotone
 * MLPs `npm run train` ships); the strict learned-step tests are known failures otherwise.
 */
const MONOTONE_MODELS = (() => {
  /** @type {{classes: {serves: string[], monotone_in_size?: boolean}[]}} */
  const manifest = JSON.parse(readFileSync(new URL('../../models/artifacts/manifest.json', import.meta.url), 'utf8'));
  return manifest.classes.filter((c) => c.serves.length > 0).every((c) => c.monotone_in_size === true);
})();
const NOT_MONOTONE = MONOTONE_MODELS
  ? undefined
  : 'the per-kernel models in models/artifacts are not monotone in size (npm run train -- --unconstrained); npm run train ships monotone MLPs';

const SEED = Number(process.env.PRENET_PROPERTY_SEED ?? 20261129);
const REQUESTS = 24;
const BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
/** Falls of the learned step between consecutive batch sizes found by the batch test (for the todo test). */
/** @type {string[]} */
let learnedDecreases = [];
/** Requests whose learned step is lower at the largest batch than at batch 1. @type {string[]} */
let learnedEndToEnd = [];
let predictorSeen = '';

/** Every number anywhere in `value` is finite. @param {unknown} value @param {string} path */
function assertAllFinite(value, path) {
  if (typeof value === 'number') assert.ok(Number.isFinite(value), `${path} is ${value}`);
  else if (Array.isArray(value)) value.forEach((v, i) => assertAllFinite(v, `${path}[${i}]`));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) assertAllFinite(v, `${path}.${k}`);
}

/** @param {any} response @param {string} what */
function checkResponse(response, what) {
  assertAllFinite(response, `${what}: response`);
  const { steps_per_epoch: steps, epochs } = response.training;
  assert.ok(steps >= 1 && epochs > 0, `${what}: steps ${steps}, epochs ${epochs}`);
  for (const r of response.results) {
    for (const key of ['step_ms', 'forward_ms', 'backward_ms', 'epoch_s', 'total_s', 'memory_gb']) {
      assert.ok(typeof r[key] === 'number' && r[key] > 0, `${what}: ${r.hardware} ${key} = ${r[key]}`);
    }
    assert.ok(r.optimizer_ms >= 0, `${what}: ${r.hardware} optimizer_ms = ${r.optimizer_ms}`);
    assertClose(r.step_ms, r.forward_ms + r.backward_ms + r.optimizer_ms, IDENTITY_TOLERANCE, `${what}: ${r.hardware} step_ms`);
    assertClose(r.epoch_s, (steps * r.step_ms) / 1000, IDENTITY_TOLERANCE, `${what}: ${r.hardware} epoch_s`);
    assertClose(r.total_s, r.epoch_s * epochs, IDENTITY_TOLERANCE, `${what}: ${r.hardware} total_s`);
  }
}

describe('random requests through the engine', () => {
  test(`${REQUESTS} requests × ${BATCHES.length} batch sizes: finite, identities, memory and roofline step not decreasing in batch`, async (t) => {
    const catalog = await engine.catalog();
    const presets = catalog.presets.map((p) => p.id).filter((id) => !/70b|13b|mixtral/.test(id));
    const r = rng(SEED);
    /** @type {string[]} */ const decreases = [];
    /** @type {string[]} */ const endToEnd = [];
    let predictor = '';
    let pairs = 0;
    for (let n = 0; n < REQUESTS; n++) {
      const request = randomRequest(r, presets, catalog.hardware);
      /** @type {any[]} */ const steps = [];
      /** @type {any[]} */ const memory = [];
      /** @type {any[]} */ const roofline = [];
      for (const batch_size of BATCHES) {
        const req = { ...request, training: { ...request.training, batch_size } };
        const what = `request #${n} (seed ${SEED}) ${JSON.stringify(req)}`;
        const response = /** @type {any} */ (await engine.predict(/** @type {any} */ (req)));
        predictor ||= response.predictor;
        checkResponse(response, what);
        steps.push(response.results.map((/** @type {any} */ x) => x.step_ms));
        memory.push(response.results.map((/** @type {any} */ x) => x.memory_gb));
        roofline.push(
          response.results.map((/** @type {any} */ x) => (response.predictor === 'roofline' ? x.step_ms : x.baselines.roofline.step_ms)),
        );
      }
      for (let h = 0; h < request.hardware.length; h++) {
        const first = steps[0][h];
        const last = steps[BATCHES.length - 1][h];
        if (last < first) {
          endToEnd.push(
            `request #${n} on ${JSON.stringify(request.hardware[h])}: batch ${BATCHES[0]} → ${BATCHES.at(-1)}: step ${first} → ${last} ms ` +
              `(${(((last - first) / first) * 100).toFixed(2)}%); request ${JSON.stringify(request)}`,
          );
        }
      }
      pairs += request.hardware.length * (BATCHES.length - 1);
      for (let i = 1; i < BATCHES.length; i++) {
        for (let h = 0; h < request.hardware.length; h++) {
          const before = steps[i - 1][h];
          const after = steps[i][h];
          const hw = JSON.stringify(request.hardware[h]);
          assert.ok(memory[i][h] >= memory[i - 1][h], `request #${n}: memory fell from ${memory[i - 1][h]} to ${memory[i][h]} GB at batch ${BATCHES[i]} on ${hw}`);
          assert.ok(
            roofline[i][h] >= roofline[i - 1][h],
            `request #${n}: roofline step fell from ${roofline[i - 1][h]} to ${roofline[i][h]} ms at batch ${BATCHES[i]} on ${hw}; request ${JSON.stringify(request)}`,
          );
          if (after < before) {
            if (predictor === 'roofline') assert.fail(`request #${n}: step fell from ${before} to ${after} ms at batch ${BATCHES[i]} on ${hw}; request ${JSON.stringify(request)}`);
            decreases.push(
              `request #${n} on ${hw}: batch ${BATCHES[i - 1]} → ${BATCHES[i]}: step ${before} → ${after} ms ` +
                `(${(((after - before) / before) * 100).toFixed(2)}%); request ${JSON.stringify(request)}`,
            );
          }
        }
      }
    }
    t.diagnostic(`predictor: ${predictor}; step-time decreases as batch doubles: ${decreases.length} of ${pairs} (request, accelerator, doubling)`);
    for (const d of decreases) t.diagnostic(d);
    t.diagnostic(`learned step lower at batch ${BATCHES.at(-1)} than at batch ${BATCHES[0]}: ${endToEnd.length}`);
    for (const d of endToEnd) t.diagnostic(d);
    if (predictor === 'roofline') assert.deepEqual(endToEnd, []);
    learnedDecreases = decreases;
    learnedEndToEnd = endToEnd;
    predictorSeen = predictor;
  });

  // The property issue 8 asks for, asserted strictly for the learned step: every (request, accelerator,
  // doubling), no tolerance. It holds by construction when every kernel-class model is a monotone MLP
  // (models/README.md); with ratio models it fails, and the test says so.
  test('learned step time never decreases as the batch grows', { todo: NOT_MONOTONE }, () => {
    assert.equal(predictorSeen, 'learned', 'the models in models/artifacts did not load, so nothing was checked');
    assert.deepEqual(learnedDecreases, []);
    assert.deepEqual(learnedEndToEnd, []);
  });

  // The same for sequence length and image size, on random layer stacks of that input kind (presets
  // have fixed positional tables, so they stay out): the roofline strictly, the learned step strictly when
  // the models promise it.
  for (const [dimension, kinds, sizes] of /** @type {const} */ ([
    ['seq_len', ['sequence', 'tokens'], [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]],
    ['image_size', ['image'], [4, 8, 16, 32, 64, 128]],
  ])) {
    /** @type {{learned: string[], roofline: string[], predictor: string}} */
    const found = { learned: [], roofline: [], predictor: '' };
    test(`${dimension}: finite, identities, roofline step not decreasing as it doubles`, async (t) => {
      const catalog = await engine.catalog();
      const r = rng(SEED + (dimension === 'seq_len' ? 1 : 2));
      let requests = 0;
      let pairs = 0;
      for (let n = 0; requests < 8 && n < 400; n++) {
        const request = /** @type {any} */ (randomRequest(r, [], catalog.hardware));
        const model = randomModel(r);
        if (!(/** @type {readonly string[]} */ (kinds)).includes(model.input.kind)) continue;
        request.model = model;
        request.training.batch_size = r.int(1, 16);
        requests += 1;
        /** @type {number[][]} */ const steps = [];
        /** @type {number[][]} */ const roofline = [];
        for (const size of sizes) {
          const req = { ...request, model: { ...model, input: { ...model.input, [dimension]: size } } };
          const response = /** @type {any} */ (await engine.predict(/** @type {any} */ (req)));
          found.predictor ||= response.predictor;
          checkResponse(response, `${dimension} ${size}: ${JSON.stringify(req)}`);
          steps.push(response.results.map((/** @type {any} */ x) => x.step_ms));
          roofline.push(response.results.map((/** @type {any} */ x) => x.baselines?.roofline?.step_ms ?? x.step_ms));
        }
        for (let i = 1; i < sizes.length; i++) {
          for (let h = 0; h < request.hardware.length; h++) {
            pairs += 1;
            for (const [list, series] of /** @type {const} */ ([[found.learned, steps], [found.roofline, roofline]])) {
              const before = /** @type {number} */ (series[i - 1]?.[h]);
              const after = /** @type {number} */ (series[i]?.[h]);
              if (after < before) {
                list.push(
                  `${before} → ${after} ms at ${dimension} ${sizes[i - 1]} → ${sizes[i]} on ` +
                    `${JSON.stringify(request.hardware[h])}; request ${JSON.stringify(request)}`,
                );
              }
            }
          }
        }
      }
      t.diagnostic(`${requests} requests, ${pairs} (request, accelerator, doubling); learned step decreases: ` +
        `${found.learned.length}, roofline: ${found.roofline.length}`);
      for (const d of found.learned) t.diagnostic(`learned step ${d}`);
      assert.ok(requests >= 4, `only ${requests} random requests of this input kind`);
      assert.deepEqual(found.roofline, []);
      if (found.predictor === 'roofline') assert.deepEqual(found.learned, []);
    });
    test(`learned step time never decreases as ${dimension} grows`, { todo: NOT_MONOTONE }, () => {
      assert.equal(found.predictor, 'learned', 'the models in models/artifacts did not load, so nothing was checked');
      assert.deepEqual(found.learned, []);
    });
  }

  // Depth and the accelerator: the step never decreases as a repeated block gets more instances, and
  // never increases as a custom accelerator's peak FLOP/s (every precision together) or its memory
  // bandwidth grow. The roofline strictly; the learned step strictly when the models promise it (the
  // monotone set reads the accelerator only through the roofline times, which fall as peak and bandwidth
  // grow; the ratio models also read TDP per TFLOP/s and their ratio may rise faster than the roofline falls).
  for (const [property, grows] of /** @type {const} */ ([
    ['depth', 'the repeat count'],
    ['peak', "a custom accelerator's peak FLOP/s"],
    ['bandwidth', "a custom accelerator's memory bandwidth"],
  ])) {
    /** @type {{learned: string[], roofline: string[], predictor: string}} */
    const found = { learned: [], roofline: [], predictor: '' };
    const scales = property === 'depth' ? [1, 2, 3, 4, 6, 8] : [0.5, 1, 1.5, 2, 3, 4, 6, 8];
    // Depth: time grows (later >= earlier); the accelerator: time falls (later <= earlier).
    const wrong = (/** @type {number} */ before, /** @type {number} */ after) => (property === 'depth' ? after < before : after > before);
    test(`${property}: roofline step monotone as ${grows} grows`, async (t) => {
      const r = rng(SEED + (property === 'depth' ? 3 : property === 'peak' ? 4 : 5));
      let pairs = 0;
      for (let n = 0; n < 8; n++) {
        const model = randomModel(r);
        const precision = r.pick(['fp32', 'tf32', 'bf16']);
        /** @type {Record<string, number>} */ const peaks = { fp32: r.real(1, 100) };
        for (const p of ['tf32', 'fp16', 'bf16']) peaks[p] = r.real(5, 2000);
        const bandwidth = r.real(100, 8000);
        const batch = r.int(1, 16);
        /** @type {number[]} */ const steps = [];
        /** @type {number[]} */ const roofline = [];
        /** @type {any[]} */ const requests = [];
        for (const k of scales) {
          const layers = model.layers.map((/** @type {any} */ l) => (l.type === 'repeat' && property === 'depth' ? { ...l, count: k } : l));
          const scaled = property === 'peak' ? Object.fromEntries(Object.entries(peaks).map(([p, v]) => [p, v * k])) : peaks;
          const request = {
            model: { ...model, layers },
            training: { batch_size: batch, precision, optimizer: 'adamw' },
            hardware: [{ name: 'custom', peak_tflops: scaled, memory_bandwidth_gbs: property === 'bandwidth' ? bandwidth * k : bandwidth, memory_gb: 80 }],
            options: { per_layer: false },
          };
          const response = /** @type {any} */ (await engine.predict(/** @type {any} */ (request)));
          found.predictor ||= response.predictor;
          checkResponse(response, `${property} ${k}: ${JSON.stringify(request)}`);
          requests.push(request);
          steps.push(response.results[0].step_ms);
          roofline.push(response.results[0].baselines?.roofline?.step_ms ?? response.results[0].step_ms);
        }
        for (let i = 1; i < scales.length; i++) {
          pairs += 1;
          for (const [list, series] of /** @type {const} */ ([[found.learned, steps], [found.roofline, roofline]])) {
            const before = /** @type {number} */ (series[i - 1]);
            const after = /** @type {number} */ (series[i]);
            if (wrong(before, after)) {
              list.push(`${before} → ${after} ms at ${property} ×${scales[i - 1]} → ×${scales[i]}; request ${JSON.stringify(requests[i])}`);
            }
          }
        }
      }
      t.diagnostic(`${pairs} (request, step) pairs; learned step goes the wrong way: ${found.learned.length}, roofline: ${found.roofline.length}`);
      for (const d of found.learned) t.diagnostic(`learned step ${d}`);
      assert.deepEqual(found.roofline, []);
      if (found.predictor === 'roofline') assert.deepEqual(found.learned, []);
    });
    // Depth only adds kernels whose times are positive, so it holds for any models.
    test(`learned step monotone as ${grows} grows`, property === 'depth' ? {} : { todo: NOT_MONOTONE }, () => {
      assert.equal(found.predictor, 'learned', 'the models in models/artifacts did not load, so nothing was checked');
      assert.deepEqual(found.learned, []);
    });
  }
});
