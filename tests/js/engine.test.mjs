// The engine over the real wasm build: the catalogue, the identities docs/API.md promises for every
// preset, monotonicity in batch size, and the errors a user will read.

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { PrenetError } from '../../web/src/engine.js';
import {
  EXPECTED_PRESETS,
  HARDWARE,
  IDENTITY_TOLERANCE,
  assertClose,
  engine,
  exampleRequest,
  requireBuiltCore,
} from './helpers.mjs';

before(requireBuiltCore);

describe('catalogue', () => {
  test('lists the documented presets, hardware, precisions and optimizers', async () => {
    const catalog = await engine.catalog();
    assert.equal(typeof catalog.version, 'string');
    const presetIds = catalog.presets.map((preset) => preset.id);
    for (const id of EXPECTED_PRESETS) assert.ok(presetIds.includes(id), `preset ${id} missing from ${presetIds}`);
    const hardwareIds = catalog.hardware.map((entry) => entry.id);
    for (const id of HARDWARE) assert.ok(hardwareIds.includes(id), `hardware ${id} missing from ${hardwareIds}`);
    assert.deepEqual([...catalog.precisions].sort(), ['bf16', 'fp16', 'fp32', 'fp8', 'tf32']);
    assert.deepEqual(
      [...catalog.optimizers].sort(),
      ['adadelta', 'adafactor', 'adagrad', 'adam', 'adamw', 'adamw_8bit', 'lion', 'momentum', 'muon', 'none', 'paged_adamw',
        'paged_adamw_8bit', 'rmsprop', 'sgd'],
    );
    for (const preset of catalog.presets) {
      assert.ok(preset.parameters > 0, `preset ${preset.id}: parameters ${preset.parameters}`);
      assert.equal(typeof preset.input.kind, 'string', `preset ${preset.id}: input.kind`);
    }
  });

  test('is parsed once and the same object is returned', async () => {
    assert.equal(await engine.catalog(), await engine.catalog());
  });

  test("publishes the plan.time_scale range plan mode accepts (engine.js clamps learned ratios to it)", async () => {
    const { min, max } = (await engine.catalog()).plan_limits.time_scale;
    assert.ok(min > 0 && min < 1 && max > 1, `range [${min}, ${max}]`);
    /** @param {number} scale */
    const plan = (scale) => engine.plan({ model: { preset: 'bert-base' }, hardware: ['h100-sxm'], plan: { max_gpus: 2, time_scale: { 'h100-sxm': scale } } });
    for (const scale of [min, max]) assert.equal((await plan(scale)).results.length, 1, `time_scale ${scale} is accepted`);
    for (const scale of [min / 2, max * 2]) {
      await assert.rejects(plan(scale), (error) => error instanceof PrenetError && error.field.startsWith('plan.time_scale'), `time_scale ${scale} is refused`);
    }
  });
});

/**
 * Checks the response identities of docs/API.md for one result.
 * @param {import('../../web/src/types').PredictResponse} response
 * @param {string} label
 */
function assertIdentities(response, label) {
  const { training } = response;
  assert.equal(
    training.steps_per_epoch,
    Math.ceil(training.dataset_size / training.batch_size),
    `${label}: steps_per_epoch = ceil(dataset_size / batch_size)`,
  );
  assert.ok(response.model.flops_per_step.total > 0, `${label}: flops_per_step.total`);
  for (const result of response.results) {
    const where = `${label} on ${result.hardware}`;
    for (const key of /** @type {const} */ (['step_ms', 'forward_ms', 'backward_ms', 'epoch_s', 'total_s', 'memory_gb'])) {
      assert.ok(Number.isFinite(result[key]) && result[key] > 0, `${where}: ${key} = ${result[key]}, expected finite > 0`);
    }
    assert.ok(result.optimizer_ms >= 0, `${where}: optimizer_ms = ${result.optimizer_ms}`);
    assertClose(result.step_ms, result.forward_ms + result.backward_ms + result.optimizer_ms, IDENTITY_TOLERANCE, `${where}: step_ms = forward + backward + optimizer`);
    assertClose(result.epoch_s, (training.steps_per_epoch * result.step_ms) / 1000, IDENTITY_TOLERANCE, `${where}: epoch_s = steps_per_epoch × step_ms / 1000`);
    assertClose(result.total_s, result.epoch_s * training.epochs, IDENTITY_TOLERANCE, `${where}: total_s = epoch_s × epochs`);
    if (result.price_per_hour_usd === null) {
      assert.equal(result.cost_usd, null, `${where}: cost_usd without a price`);
    } else {
      assertClose(/** @type {number} */ (result.cost_usd), (result.total_s / 3600) * result.price_per_hour_usd, IDENTITY_TOLERANCE, `${where}: cost_usd = total_s / 3600 × price`);
    }
    assert.ok(result.mfu > 0 && result.mfu <= 1, `${where}: mfu = ${result.mfu}, expected in (0, 1]`);
    assert.ok(['compute', 'memory', 'overhead'].includes(result.bottleneck), `${where}: bottleneck = ${result.bottleneck}`);
    assert.equal(typeof result.fits, 'boolean', `${where}: fits`);
  }
}

describe('predict, every preset', async () => {
  // Listed at load time so each preset is its own test; the catalogue needs the built core.
  const presets = await engine.catalog().then(
    (catalog) => catalog.presets.map((preset) => preset.id),
    () => EXPECTED_PRESETS, // not built: the tests below fail with requireBuiltCore's message
  );
  for (const preset of presets) {
    test(`${preset}: finite positive times and the documented identities`, async () => {
      const response = await engine.predict({
        model: { preset },
        training: { batch_size: 8, precision: 'fp32', optimizer: 'adam', dataset_size: 1000, epochs: 2.5 },
        hardware: HARDWARE,
      });
      assert.equal(response.model.source, 'preset');
      assert.equal(response.results.length, HARDWARE.length);
      assert.deepEqual(response.results.map((r) => r.hardware), HARDWARE);
      assert.equal(response.training.steps_per_epoch, 125);
      assertIdentities(response, preset);
    });
  }
});

describe('predict', () => {
  test('the example request matches the contract shape', async () => {
    const response = await engine.predict(exampleRequest());
    assert.equal(response.model.name, 'bert-base');
    assert.equal(response.training.batch_size, 32);
    assert.equal(response.training.dataset_size, 3200, 'dataset_size defaults to batch_size × 100');
    assert.equal(response.training.epochs, 1);
    assert.ok(Array.isArray(response.warnings));
    assertIdentities(response, 'example');
  });

  test('a bigger batch takes longer per step on every accelerator', async () => {
    const small = await engine.predict(exampleRequest({ batch_size: 8 }));
    const large = await engine.predict(exampleRequest({ batch_size: 256 }));
    for (const [i, result] of small.results.entries()) {
      const bigger = large.results[i];
      assert.ok(bigger !== undefined && bigger.step_ms > result.step_ms, `${result.hardware}: step_ms at batch 256 (${bigger?.step_ms}) should exceed batch 8 (${result.step_ms})`);
    }
  });

  test('a custom accelerator without a price is computed, with cost null', async () => {
    const custom = { name: 'My accelerator', peak_tflops: { fp32: 50 }, memory_bandwidth_gbs: 2000, memory_gb: 48 };
    const response = await engine.predict({ ...exampleRequest(), hardware: ['h100-sxm', custom] });
    const result = response.results[1];
    assert.ok(result, 'a result for the custom accelerator');
    assert.equal(result.custom, true);
    assert.equal(result.name, 'My accelerator');
    assert.equal(result.cost_usd, null);
    assertIdentities(response, 'custom accelerator');
  });

  test('a JSON string and the equivalent object give the same response', async () => {
    const request = exampleRequest();
    assert.deepEqual(await engine.predict(JSON.stringify(request)), await engine.predict(request));
  });

  test('is deterministic', async () => {
    assert.deepEqual(await engine.predict(exampleRequest()), await engine.predict(exampleRequest()));
  });

  test('TPUs and Gaudi parts are timed by the roofline beside learned GPUs, each result saying which', async () => {
    const request = { model: { preset: 'gpt2' }, training: { batch_size: 8, precision: /** @type {const} */ ('bf16') }, hardware: ['tpu-v5p', 'gaudi2', 'h100-sxm'] };
    const response = await engine.predict(request);
    assert.equal(response.predictor, 'learned', 'this test needs the learned models (models/artifacts)');
    const [tpu, gaudi, gpu] = response.results;
    for (const r of [tpu, gaudi]) {
      assert.equal(r?.predictor, 'roofline', r?.hardware);
      assert.equal(r?.step_ms_interval, undefined, `${r?.hardware} has no learned band`);
      const roofline = r?.baselines?.['roofline']?.step_ms ?? NaN;
      assert.ok(Math.abs((r?.step_ms ?? 0) / roofline - 1) < 1e-5, `${r?.hardware}: the roofline's own step (${r?.step_ms} vs ${roofline})`);
    }
    assert.equal(gpu?.predictor, 'learned');
    assert.ok(gpu?.step_ms_interval);
    const tpuOnly = await engine.predict({ ...request, hardware: ['tpu-v5p'] });
    assert.equal(tpuOnly.predictor, 'roofline', 'no result was learned');
    assert.equal(tpuOnly.results[0]?.step_ms, tpu?.step_ms);
  });

  test('concurrent learned predictions (several embedded elements) each get their own answer', async () => {
    // Each learned prediction has its own core session between prepare and finish, and the models run in between.
    const first = exampleRequest({ batch_size: 8 });
    const requests = [first, { model: { preset: 'gpt2' }, hardware: ['h100-sxm'] }, exampleRequest({ batch_size: 64 })];
    const one = [];
    for (const request of requests) one.push(await engine.predict(request));
    assert.equal(one[0]?.predictor, 'learned', 'this test needs the learned models (models/artifacts)');
    const together = await Promise.all([...requests, exampleRequest({ batch_size: -4 })].map((request) => engine.predict(request).catch((error) => error)));
    assert.deepEqual(together.slice(0, 3), one);
    assert.ok(together[3] instanceof PrenetError && together[3].field === 'training.batch_size', 'a bad request among them is refused alone');
    assert.deepEqual(await engine.predict(first), one[0], 'and the engine still answers afterwards');
  });
});

/**
 * The cases a user can get wrong, and the field each error must name. A string request goes to the
 * core unchanged; an object is serialised first (many of these are deliberately not a valid
 * PredictRequest, so they cross as JSON text rather than as a mistyped object).
 * @type {Array<{ name: string, request: string | object, field: string, mentions?: RegExp }>}
 */
const ERROR_CASES = [
  { name: 'malformed JSON', request: '{"model": {"preset": "bert-base"', field: 'request' },
  { name: 'not an object', request: '[1, 2]', field: 'request' },
  { name: 'no model', request: { training: { batch_size: 8 } }, field: 'model' },
  { name: 'unknown preset', request: { model: { preset: 'no-such-model' } }, field: 'model.preset', mentions: /no-such-model/ },
  { name: 'unknown hardware id', request: { model: { preset: 'bert-base' }, hardware: ['no-such-gpu'] }, field: 'hardware[0]', mentions: /no-such-gpu/ },
  { name: 'unknown hardware id, second entry', request: { model: { preset: 'bert-base' }, hardware: ['h100-sxm', 'tpu-v99'] }, field: 'hardware[1]', mentions: /tpu-v99/ },
  { name: 'negative batch', request: { model: { preset: 'bert-base' }, training: { batch_size: -4 } }, field: 'training.batch_size', mentions: /-4/ },
  { name: 'zero batch', request: { model: { preset: 'bert-base' }, training: { batch_size: 0 } }, field: 'training.batch_size' },
  { name: 'fractional batch', request: { model: { preset: 'bert-base' }, training: { batch_size: 2.5 } }, field: 'training.batch_size' },
  { name: 'batch 1e12', request: { model: { preset: 'bert-base' }, training: { batch_size: 1e12 } }, field: 'training.batch_size' },
  { name: 'batch as text', request: { model: { preset: 'bert-base' }, training: { batch_size: '32' } }, field: 'training.batch_size' },
  { name: 'unknown precision', request: { model: { preset: 'bert-base' }, training: { precision: 'fp64' } }, field: 'training.precision', mentions: /fp64/ },
  { name: 'unknown optimizer', request: { model: { preset: 'bert-base' }, training: { optimizer: 'lamb' } }, field: 'training.optimizer', mentions: /lamb/ },
  { name: 'negative epochs', request: { model: { preset: 'bert-base' }, training: { epochs: -1 } }, field: 'training.epochs' },
  { name: 'sequence length over the limit', request: { model: { preset: 'bert-base' }, training: { seq_len: 1048577 } }, field: 'training.seq_len' },
  { name: 'image size over the limit', request: { model: { preset: 'resnet50' }, training: { image_size: 16385 } }, field: 'training.image_size' },
  { name: 'more than 64 accelerators', request: { model: { preset: 'bert-base' }, hardware: Array(65).fill('h100-sxm') }, field: 'hardware' },
  { name: 'request text over 16 MiB (refused before it is copied into wasm)', request: `{"model": {"preset": "gpt2"}, "x": "${'a'.repeat(17 << 20)}"}`, field: 'request', mentions: /limit is 16777216 bytes/ },
  { name: 'fp8 on an accelerator without it', request: { model: { preset: 'bert-base' }, training: { precision: 'fp8' }, hardware: ['v100-sxm2-32gb'] }, field: 'training.precision', mentions: /v100/i },
];

describe('errors name the field', () => {
  for (const { name, request, field, mentions } of ERROR_CASES) {
    test(`${name} → ${field}`, async () => {
      const text = typeof request === 'string' ? request : JSON.stringify(request);
      await assert.rejects(engine.predict(text), (error) => {
        assert.ok(error instanceof PrenetError, `expected a PrenetError, got ${error}`);
        assert.equal(error.field, field, `field for "${name}" (message: ${error.message})`);
        assert.ok(error.message.startsWith(`${field}:`), `message should start with "${field}:": ${error.message}`);
        assert.ok(!error.message.includes('\n'), `message should be one line: ${JSON.stringify(error.message)}`);
        if (mentions) assert.match(error.message, mentions);
        return true;
      });
    });
  }
});

describe('the wasm module itself', () => {
  test('a text whose characters alone pass the 16 MiB limit is refused by its length, for predict, plan and learnedPrepare', async () => {
    const { loadNodeCore } = await import('../../web/cli/node-engine.mjs');
    const core = /** @type {any} */ (await loadNodeCore());
    const limit = 16 * 1024 * 1024;
    const huge = `{"model": {"preset": "gpt2"}, "name": "${'x'.repeat(limit)}"}`;
    for (const call of ['predict', 'plan', 'learnedPrepare']) {
      const { error } = JSON.parse(core[call](huge));
      assert.equal(error.field, 'request', call);
      assert.match(error.message, new RegExp(`input is at least ${huge.length} bytes .*the limit is ${limit} bytes`), call);
    }
    // Under the limit in characters but over it in UTF-8 bytes (3 per "€"): the core counts the bytes itself.
    const euros = `{"model": {"preset": "gpt2"}, "name": "${'€'.repeat(limit / 2)}"}`;
    assert.match(JSON.parse(core.predict(euros)).error.message, /input is \d+ bytes; the limit is 16777216 bytes/);
    // And the module still answers a good request afterwards.
    assert.ok(JSON.parse(core.predict(JSON.stringify({ model: { preset: 'gpt2' }, hardware: ['t4'] }))).results);
  });
});
