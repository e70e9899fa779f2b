// Property tests over random valid requests through the Node engine (web/cli/node-engine.mjs `engine`):
// the learned path when models/artifacts load, else the roofline. A smaller set than the core's
// tests/core/test_properties.cpp, for what the learned path adds: every number finite, step / epoch /
// total identities (docs/API.md), and step time not decreasing as the batch grows.
//
// Monotonicity in batch: the analytic roofline (the response's `baselines.roofline.step_ms`, and `step_ms`
// itself when the roofline is the predictor) must never decrease. The learned per-kernel models do not
// guarantee it: their predictions are piecewise in some features, and with seed 20261129 the learned
// step_ms falls on 79 of 306 (request, accelerator, batch doubling), by up to 8.37% (request #16, an LSTM stack on a custom
// accelerator, batch 128 -> 256). Each such decrease is printed as a test diagnostic with its request.
// Even end to end it fails: request #11 (a 2-layer SiLU MLP, tf32, on its custom accelerator) is 14.5% faster
// at batch 512 than at batch 1. The strict property for the learned step is a separate test marked todo
// (a known failure, reported on every run) rather than a tolerance tuned until it passes.
// The generator is seeded (PRENET_PROPERTY_SEED overrides); a failure prints the request to replay.

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { IDENTITY_TOLERANCE, assertClose, engine, requireBuiltCore } from './helpers.mjs';

before(requireBuiltCore);

const SEED = Number(process.env.PRENET_PROPERTY_SEED ?? 20261129);
const REQUESTS = 24;
const BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
/** Falls of the learned step between consecutive batch sizes found by the batch test (for the todo test). */
/** @type {string[]} */
let learnedDecreases = [];

/** xorshift32: small, deterministic. @param {number} seed */
function rng(seed) {
  let x = seed >>> 0 || 1;
  const next = () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x / 2 ** 32;
  };
  return {
    /** @param {number} lo @param {number} hi */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    /** @param {number} lo @param {number} hi */
    real: (lo, hi) => lo + next() * (hi - lo),
    /** @template T @param {T[]} a @returns {T} */
    pick: (a) => /** @type {any} */ (a[Math.floor(next() * a.length)]),
  };
}

/** A random small layer list: a dense, attention, LSTM or conv stack. @param {ReturnType<typeof rng>} r */
function randomModel(r) {
  const kind = r.pick(['vector', 'sequence', 'tokens', 'image']);
  const heads = r.int(1, 8);
  const width = heads * r.int(1, 32);
  const activation = r.pick(['relu', 'gelu', 'tanh', 'silu']);
  /** @type {any[]} */ const layers = [];
  /** @type {any[]} */ let body;
  /** @type {any} */ let input;
  if (kind === 'vector') {
    input = { kind, features: r.int(1, 256) };
    body = [{ type: 'dense', units: width, activation }];
  } else if (kind === 'image') {
    input = { kind, channels: r.int(1, 4), image_size: r.int(4, 64) };
    body = [{ type: 'conv2d', filters: r.int(1, 64), kernel_size: r.pick([1, 3, 5]), padding: 'same', activation }, { type: 'batchnorm' }];
  } else {
    const seq_len = r.int(1, 256);
    if (kind === 'tokens') {
      input = { kind, seq_len };
      layers.push({ type: 'embedding', vocab_size: r.int(2, 5000), dim: width });
    } else {
      input = { kind, seq_len, features: r.int(1, 256) };
      layers.push({ type: 'dense', units: width });
    }
    const block = r.pick(['dense', 'attention', 'lstm']);
    if (block === 'attention') {
      body = [{ type: 'layernorm' }, { type: 'attention', num_heads: heads }, { type: 'dense', units: width, activation }];
    } else if (block === 'lstm') {
      body = [{ type: 'lstm', hidden_size: r.int(1, 128) }, { type: 'dense', units: width }];
    } else {
      body = [{ type: 'dense', units: width, activation }];
    }
  }
  layers.push({ type: 'repeat', count: r.int(1, 6), name: 'block', layers: body });
  if (kind === 'image') layers.push({ type: 'global_avg_pool' });
  layers.push({ type: 'dense', units: r.int(2, 100) }, { type: 'cross_entropy' });
  return { name: `random-${kind}`, input, layers };
}

/** @param {ReturnType<typeof rng>} r @param {string[]} presets @param {any[]} hardware */
function randomRequest(r, presets, hardware) {
  const precision = r.pick(['fp32', 'fp32', 'tf32', 'fp16', 'bf16']);
  const ids = hardware.filter((h) => h.peak_tflops && precision in h.peak_tflops).map((h) => h.id);
  /** @type {any[]} */ const hw = [r.pick(ids)];
  if (r.int(0, 1)) {
    /** @type {Record<string, number>} */ const peaks = { fp32: r.real(1, 100) };
    for (const p of ['tf32', 'fp16', 'bf16']) if (p === precision || r.int(0, 1)) peaks[p] = r.real(5, 2000);
    hw.push({ name: 'custom', peak_tflops: peaks, memory_bandwidth_gbs: r.real(100, 8000), memory_gb: r.real(8, 192) });
  }
  const model = r.int(0, 2) === 0 ? { preset: r.pick(presets) } : randomModel(r);
  return {
    model,
    training: {
      batch_size: 1,
      precision,
      optimizer: r.pick(['none', 'sgd', 'momentum', 'adam', 'adamw', 'adagrad', 'adadelta', 'rmsprop']),
      dataset_size: r.int(1, 1000000),
      epochs: r.int(0, 1) ? r.int(1, 10) : Number(r.real(0.01, 5).toFixed(3)),
    },
    hardware: hw,
    options: { per_layer: false },
  };
}

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
  });

  // The property issue 8 asks for, asserted strictly for the learned step. It does not hold yet (the
  // per-kernel models are not monotone in size), so it is reported as a known failure rather than
  // loosened to a tolerance; it turns into a pass once the models are constrained.
  test('learned step time never decreases as the batch grows', { todo: 'learned models are not monotone in batch yet (issue 8)' }, () => {
    assert.deepEqual(learnedDecreases, []);
  });
});
