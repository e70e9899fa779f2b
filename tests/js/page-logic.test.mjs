// The page's pure logic, in Node: scenarios and links (scenario.js), engine jobs (jobs.js, over
// the real wasm core), row sorting (sort.js), the per-layer top-N (layers.js) and exports (export.js).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { exportFileName, exportJson, resultsCsv } from '../../web/src/export.js';
import { runJob, runPlan } from '../../web/src/jobs.js';
import { layerTimings, topLayers } from '../../web/src/layers.js';
import {
  MAX_LINK_CONFIG_CHARS,
  MAX_LINK_SOURCE_CHARS,
  decodeConfig,
  defaultScenario,
  encodeConfig,
  hasScenario,
  paramsFromLocation,
  parallelInUse,
  parallelRequest,
  paramsToScenario,
  scenarioToJob,
  scenarioToParams,
  scenarioToPlanJob,
} from '../../web/src/scenario.js';
import { rankLayouts, sortResults } from '../../web/src/sort.js';
import { HARDWARE, engine, requireBuiltCore } from './helpers.mjs';

/** @type {import('../../web/src/scenario.js').Known} */
const KNOWN = {
  presets: ['bert-base', 'gpt2', 'resnet50'],
  hardware: ['a100-sxm4-80gb', 'h100-sxm', 'v100-sxm2-32gb', 'mi300x'],
  // The core's tables of training options and parallel fields: links read and write what they name.
  options: (await engine.catalog()).options,
  parallel_options: (await engine.catalog()).parallel_options,
};

/**
 * A minimal result row for sorting and export tests.
 * @param {Partial<import('../../web/src/types').HardwareResult>} fields
 * @returns {import('../../web/src/types').HardwareResult}
 */
function result(fields) {
  return {
    hardware: 'x',
    name: 'X',
    custom: false,
    predictor: 'learned',
    step_ms: 1,
    forward_ms: 0.3,
    backward_ms: 0.6,
    optimizer_ms: 0.1,
    epoch_s: 1,
    total_s: 1,
    memory_gb: 1,
    memory: { weights_gb: 0.25, gradients_gb: 0.25, optimizer_gb: 0.25, activations_gb: 0.25 },
    fits: true,
    price_per_hour_usd: 1,
    cost_usd: 1,
    mfu: 0.5,
    bottleneck: 'compute',
    ...fields,
  };
}

describe('links', () => {
  test('a scenario survives the round trip through link parameters', async () => {
    const scenario = defaultScenario();
    scenario.preset = 'gpt2';
    scenario.config = '{"model_type": "gpt2", "n_embd": 768, "note": "naïve ✓"}';
    scenario.custom = [{ id: 'custom-1', name: 'Lab card', peak_tflops: { fp32: 60, bf16: 300 }, memory_bandwidth_gbs: 2000, memory_gb: 48 }];
    scenario.hardware = ['h100-sxm', 'mi300x', 'custom-1'];
    scenario.training = { batch_size: 64, seq_len: 512, epochs: 2.5, precision: 'bf16', optimizer: 'adamw', optimizer_impl: 'foreach' };
    scenario.sort = { column: 'cost_usd', descending: true };
    scenario.layersFor = 'mi300x';
    scenario.calibration = { hardware: 'mi300x', step_ms: 123.4 };
    const { params, configLeftOut } = await scenarioToParams(scenario, KNOWN);
    assert.equal(params.get('measured'), '123.4');
    assert.equal(params.get('measured_on'), 'mi300x');
    assert.equal(configLeftOut, false);
    const link = new URL(`https://example.test/calc/#${params}`);
    const restored = await paramsToScenario(paramsFromLocation(link), KNOWN);
    assert.deepEqual(restored.problems, []);
    assert.deepEqual(restored.scenario, scenario);
  });

  test('training choices: each other value in the link, the default left out, anything else a named problem', async () => {
    /** @type {Array<[string, string, string[], string, string]>} name, default, the other values, a wrong value, the values as the problem lists them */
    const choices = [
      ['attention', 'eager', ['flash', 'flash2'], 'sdpa', 'eager, flash or flash2'],
      ['optimizer_impl', 'fused', ['foreach'], 'apex', 'fused or foreach'],
      ['kernels', 'pytorch', ['megatron'], 'deepspeed', 'pytorch or megatron'],
    ];
    for (const [name, fallback, others, bad, listed] of choices) {
      for (const other of others) {
        const linked = await paramsToScenario(new URLSearchParams(`${name}=${other}`), KNOWN);
        assert.deepEqual(linked.problems, []);
        const training = /** @type {Record<string, unknown>} */ (linked.scenario.training);
        assert.equal(training[name], other);
        assert.equal((await scenarioToParams(linked.scenario, KNOWN)).params.get(name), other);
        const reset = await paramsToScenario(new URLSearchParams(`${name}=${fallback}`), KNOWN, linked.scenario);
        assert.equal(/** @type {Record<string, unknown>} */ (reset.scenario.training)[name], undefined);
      }
      assert.equal((await scenarioToParams(defaultScenario(), KNOWN)).params.has(name), false);
      const wrong = await paramsToScenario(new URLSearchParams(`${name}=${bad}`), KNOWN);
      assert.deepEqual(wrong.problems, [`${name}: expected ${listed}, got "${bad}"`]);
    }
  });

  test('training.memory_format: either value in the link and back, absent left out, anything else a named problem', async () => {
    for (const value of ['nchw', 'channels_last']) {
      const linked = await paramsToScenario(new URLSearchParams(`preset=resnet50&memory_format=${value}`), KNOWN);
      assert.deepEqual(linked.problems, []);
      assert.equal(linked.scenario.training.memory_format, value);
      const { params } = await scenarioToParams(linked.scenario, KNOWN);
      assert.equal(params.get('memory_format'), value);
      assert.deepEqual((await paramsToScenario(params, KNOWN)).scenario, linked.scenario);
      assert.equal(scenarioToJob(linked.scenario, { perLayer: 'none' }).request.training?.memory_format, value);
    }
    assert.equal((await scenarioToParams(defaultScenario(), KNOWN)).params.has('memory_format'), false);
    assert.equal(defaultScenario().training.memory_format, undefined);
    const wrong = await paramsToScenario(new URLSearchParams('memory_format=nhwc'), KNOWN);
    assert.deepEqual(wrong.problems, ['memory_format: expected channels_last or nchw, got "nhwc"']);
    assert.equal(hasScenario(new URLSearchParams('memory_format=nchw'), KNOWN), true);
  });

  test('a measured step round-trips, defaults to the first accelerator, and is dropped by a blank', async () => {
    const { params } = await scenarioToParams(defaultScenario(), KNOWN);
    assert.equal(params.has('measured'), false, 'no calibration, no parameter');
    const link = new URLSearchParams('hardware=h100-sxm,v100-sxm2-32gb&measured=80.5&measured_on=v100-sxm2-32gb');
    assert.equal(hasScenario(new URLSearchParams('measured=80.5'), KNOWN), true);
    const restored = await paramsToScenario(link, KNOWN);
    assert.deepEqual(restored.problems, []);
    assert.deepEqual(restored.scenario.calibration, { hardware: 'v100-sxm2-32gb', step_ms: 80.5 });
    const again = await paramsToScenario((await scenarioToParams(restored.scenario, KNOWN)).params, KNOWN);
    assert.deepEqual(again.scenario, restored.scenario);
    const noOn = await paramsToScenario(new URLSearchParams('hardware=mi300x,h100-sxm&measured=12'), KNOWN);
    assert.deepEqual(noOn.scenario.calibration, { hardware: 'mi300x', step_ms: 12 });
    const blank = await paramsToScenario(new URLSearchParams('measured='), KNOWN, restored.scenario);
    assert.equal(blank.scenario.calibration, null);
    const bad = await paramsToScenario(new URLSearchParams('measured=fast'), KNOWN);
    assert.deepEqual(bad.problems.map((line) => line.split(':')[0]), ['measured']);
    assert.equal(bad.scenario.calibration, null);
  });

  test('the query sets a scenario and the hash overrides it (the iframe mode\'s URL)', async () => {
    const params = paramsFromLocation({ search: '?embed=1&preset=gpt2&batch=8&hardware=h100-sxm', hash: '#batch=16' });
    assert.equal(hasScenario(params, KNOWN), true);
    const { scenario } = await paramsToScenario(params, KNOWN);
    assert.equal(scenario.preset, 'gpt2');
    assert.equal(scenario.training.batch_size, 16);
    assert.deepEqual(scenario.hardware, ['h100-sxm']);
    assert.equal(hasScenario(new URLSearchParams('embed=1&theme=dark'), KNOWN), false);
  });

  test('what a link gets wrong is reported per parameter and left at the default', async () => {
    const params = new URLSearchParams('preset=nope&hardware=h100-sxm,warp-drive&batch=lots&precision=fp4&sort=colour&config=zNOT-DEFLATE');
    const { scenario, problems } = await paramsToScenario(params, KNOWN);
    assert.equal(scenario.preset, 'bert-base');
    assert.deepEqual(scenario.hardware, ['h100-sxm']);
    assert.equal(scenario.training.batch_size, 32);
    assert.equal(scenario.training.precision, undefined, 'left out: the model\'s own (a config\'s dtype, else fp32)');
    assert.equal(scenario.config, '');
    assert.deepEqual(
      problems.map((line) => line.split(':')[0]),
      ['preset', 'config', 'hardware', 'batch', 'precision', 'sort'],
    );
  });

  test('parallel settings and the Plan panel survive a link; bad ones are named and left out', async () => {
    const scenario = defaultScenario();
    scenario.parallel = {
      gpus: 16,
      tensor: 2,
      pipeline: 2,
      micro_batch_size: 2,
      zero_stage: 1,
      recompute: 'selective',
      sequence_parallel: true,
      gpus_per_node: 4,
      inter_node_gbs: 12.5,
      intra_node_us: 2,
    };
    scenario.plan = { budget: 2e9, unit: 'tokens', max_gpus: 64, rank: 'cost' };
    const { params } = await scenarioToParams(scenario, KNOWN);
    assert.equal(params.get('gpus'), '16');
    assert.equal(params.get('zero'), '1');
    assert.equal(params.get('sp'), '1');
    assert.equal(params.has('data'), false, 'unset numbers stay out of the link');
    const link = new URL(`https://example.test/#${params}`);
    const restored = await paramsToScenario(paramsFromLocation(link), KNOWN);
    assert.deepEqual(restored.problems, []);
    assert.deepEqual(restored.scenario, scenario);
    // The default scenario writes none of them: old links keep their meaning, new ones stay short.
    const plain = (await scenarioToParams(defaultScenario(), KNOWN)).params;
    for (const name of ['gpus', 'zero', 'recompute', 'sp', 'budget', 'max_gpus', 'plan_by']) assert.equal(plain.has(name), false, name);
    assert.equal(hasScenario(new URLSearchParams('tp=2'), KNOWN), true, 'short aliases are read too');
    // Every link name of the core's parallel table is read (the first is written).
    for (const option of KNOWN.parallel_options) {
      for (const name of option.link) assert.equal(hasScenario(new URLSearchParams(`${name}=1`), KNOWN), true, name);
    }
    const bad = await paramsToScenario(new URLSearchParams('gpus=many&zero=4&recompute=some&sp=yes&budget_unit=days&plan_by=mood&tp=2&gpus=8'), KNOWN);
    assert.deepEqual(bad.problems.map((line) => line.split(':')[0]), ['gpus', 'zero', 'recompute', 'sp', 'budget_unit', 'plan_by']);
    assert.deepEqual(bad.scenario.parallel, { tensor: 2, zero_stage: 0, recompute: 'none' });
    // Out-of-range degrees are kept for the core to name (parallel.tensor) beside the box.
    const odd = await paramsToScenario(new URLSearchParams('tensor=0'), KNOWN);
    assert.equal(odd.scenario.parallel.tensor, 0);
  });

  test('out-of-range numbers are kept, for the core to name beside the input', async () => {
    const { scenario, problems } = await paramsToScenario(new URLSearchParams('batch=-4'), KNOWN);
    assert.equal(scenario.training.batch_size, -4);
    assert.deepEqual(problems, []);
  });

  test('configs are compressed in links; one too large is left out and said so', async () => {
    const text = JSON.stringify({ model_type: 'gpt2', layers: Array.from({ length: 200 }, (_, i) => ({ name: `layer.${i}`, units: 768 })) });
    const encoded = await encodeConfig(text);
    assert.ok(encoded.startsWith('z') && encoded.length < text.length / 3, `compressed to ${encoded.length} of ${text.length}`);
    assert.equal(await decodeConfig(encoded), text);
    // Random text hardly compresses: beyond the link budget it is left out.
    const noise = randomBytes(MAX_LINK_CONFIG_CHARS).toString('base64');
    const scenario = { ...defaultScenario(), config: noise };
    const { params, configLeftOut } = await scenarioToParams(scenario, KNOWN);
    assert.equal(configLeftOut, true);
    assert.equal(params.has('config'), false);
  });

  test('a config over the held-config size is left out of links without being compressed', async () => {
    // Highly compressible, so only the size rule (not the compressed budget) can leave it out.
    const scenario = { ...defaultScenario(), config: 'a'.repeat(MAX_LINK_SOURCE_CHARS + 1) };
    const { params, configLeftOut } = await scenarioToParams(scenario, KNOWN);
    assert.equal(configLeftOut, true);
    assert.equal(params.has('config'), false);
    const small = await scenarioToParams({ ...defaultScenario(), config: 'a'.repeat(MAX_LINK_SOURCE_CHARS) }, KNOWN);
    assert.equal(small.configLeftOut, false);
  });
});

describe('engine jobs', () => {
  test('pasted config text replaces the preset and is described', async () => {
    requireBuiltCore();
    const scenario = { ...defaultScenario(), config: '{"model_type": "gpt2", "n_embd": 768, "n_layer": 2, "n_head": 12, "vocab_size": 1000}' };
    const outcome = await runJob(engine, scenarioToJob(scenario, { perLayer: 'none' }));
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.equal(outcome.understood, 'Hugging Face config (model_type "gpt2")');
    assert.equal(outcome.response.model.source, 'hf_config');
  });

  test('text that is not JSON is a "config" error, not a crash', async () => {
    const outcome = await runJob(engine, { request: { model: { preset: 'bert-base' } }, configText: '{"model_type": ' });
    assert.equal(outcome.ok, false);
    assert.ok(!outcome.ok && outcome.field === 'config' && /^config: not valid JSON/.test(outcome.message));
  });

  test('a core error keeps its field', async () => {
    const scenario = defaultScenario();
    scenario.training.batch_size = -4;
    const outcome = await runJob(engine, scenarioToJob(scenario, { perLayer: 'none' }));
    assert.ok(!outcome.ok && outcome.field === 'training.batch_size');
  });

  test('a measured step is sent as calibration; the chart\'s per-layer request keeps it valid', async () => {
    requireBuiltCore();
    const scenario = { ...defaultScenario(), calibration: { hardware: 'v100-sxm2-32gb', step_ms: 500 } };
    const job = scenarioToJob(scenario, { perLayer: 'none' });
    assert.deepEqual(job.request.calibration, { hardware: 'v100-sxm2-32gb', step_ms: 500 });
    const plain = await runJob(engine, scenarioToJob(defaultScenario(), { perLayer: 'none' }));
    const outcome = await runJob(engine, job);
    assert.ok(plain.ok && outcome.ok, JSON.stringify(outcome));
    const v100 = outcome.response.results.find((r) => r.hardware === 'v100-sxm2-32gb');
    assert.ok(Math.abs((v100?.step_ms ?? 0) - 500) < 1e-3, `calibrated step ${v100?.step_ms}`);
    const f = v100?.calibration_factor ?? NaN;
    assert.equal(v100?.calibration_share, 1);
    for (const row of outcome.response.results) {
      if (row.hardware === 'v100-sxm2-32gb') continue;
      // Each other accelerator takes the share of the correction its kernels' errors have in common.
      const share = row.calibration_share ?? NaN;
      assert.ok(share >= 0 && share <= 1, `${row.hardware}: share ${share}`);
      assert.ok(Math.abs((row.calibration_factor ?? NaN) - f ** share) < 1e-4, `${row.hardware}: factor ${row.calibration_factor} is ${f}^${share}`);
    }
    assert.equal(plain.response.results[0]?.calibration_factor, undefined);
    // The chart asks again for one accelerator with per-layer timings: the same calibrated numbers.
    const chart = await runJob(engine, scenarioToJob({ ...scenario, layersFor: 'h100-sxm' }, { perLayer: 'chart' }));
    assert.ok(chart.ok, JSON.stringify(chart));
    for (const [index, row] of chart.response.results.entries()) {
      assert.equal(row.step_ms, outcome.response.results[index]?.step_ms, `${row.hardware}: same calibrated step`);
    }
    assert.ok(chart.response.results.find((r) => r.hardware === 'h100-sxm')?.layers !== undefined);
    // An accelerator not in the request is the core's error on calibration.hardware.
    const stale = await runJob(engine, scenarioToJob({ ...scenario, hardware: ['h100-sxm'] }, { perLayer: 'none' }));
    assert.ok(!stale.ok && stale.field === 'calibration.hardware', JSON.stringify(stale));
    const negative = await runJob(engine, scenarioToJob({ ...scenario, calibration: { hardware: 'h100-sxm', step_ms: -1 } }, { perLayer: 'none' }));
    assert.ok(!negative.ok && negative.field === 'calibration.step_ms', JSON.stringify(negative));
  });

  test('`parallel` is sent only when in use, with unset numbers left for the core to derive', async () => {
    const scenario = defaultScenario();
    assert.equal(parallelInUse(scenario.parallel), false);
    assert.equal(scenarioToJob(scenario, { perLayer: 'none' }).request.parallel, undefined);
    assert.equal(parallelInUse({ zero_stage: 0, recompute: 'full' }), true);
    assert.equal(parallelInUse({ zero_stage: 0, recompute: 'none', sequence_parallel: true }), true);
    assert.deepEqual(parallelRequest({ tensor: 4, zero_stage: 0, recompute: 'none', sequence_parallel: true }), { tensor: 4, sequence_parallel: true });
    assert.deepEqual(parallelRequest({ gpus: 8, tensor: 2, zero_stage: 0, recompute: 'none', inter_node_gbs: 25 }), {
      gpus: 8,
      tensor: 2,
      inter_node: { bandwidth_gbs: 25 },
    });
    assert.deepEqual(parallelRequest({ zero_stage: 3, recompute: 'selective', intra_node_gbs: 100, intra_node_us: 1 }), {
      zero_stage: 3,
      recompute: 'selective',
      intra_node: { bandwidth_gbs: 100, latency_us: 1 },
    });
    // The table's other numbers (context, expert, ...: boxes the page builds from the catalogue) go under their key.
    const other = /** @type {import('../../web/src/scenario.js').Parallel} */ (/** @type {unknown} */ ({ zero_stage: 0, recompute: 'none', context: 2 }));
    assert.equal(parallelInUse(other), true);
    assert.deepEqual(parallelRequest(other), { context: 2 });
  });

  test('8 GPUs: every result splits its step into compute, communication and bubble; bad layouts name their field', async () => {
    requireBuiltCore();
    const scenario = { ...defaultScenario(), preset: 'gpt2', parallel: { gpus: 8, tensor: 2, zero_stage: 0, recompute: /** @type {const} */ ('none') } };
    const outcome = await runJob(engine, scenarioToJob(scenario, { perLayer: 'chart' }));
    assert.ok(outcome.ok, JSON.stringify(outcome));
    for (const r of outcome.response.results) {
      const p = r.parallel;
      assert.ok(p !== undefined, `${r.hardware} has a parallel block`);
      assert.deepEqual([p.gpus, p.data, p.tensor, p.pipeline], [8, 4, 2, 1]);
      const c = p.communication_ms;
      const sum = p.compute_ms + c.data + c.tensor + c.pipeline + c.zero + p.bubble_ms;
      assert.ok(Math.abs(sum - r.step_ms) <= 1e-9 * r.step_ms, `${r.hardware}: parts ${sum} add up to the step ${r.step_ms}`);
      assert.ok(c.tensor > 0 && c.data > 0, `${r.hardware}: tensor and data groups communicate`);
      assert.ok(typeof r.memory.temporary_gb === 'number');
    }
    const mismatch = await runJob(engine, scenarioToJob({ ...scenario, parallel: { ...scenario.parallel, data: 2 } }, { perLayer: 'none' }));
    assert.ok(!mismatch.ok && mismatch.field === 'parallel.gpus', JSON.stringify(mismatch));
    // GPT-2 Medium has 16 heads: 3 cannot split them.
    const heads = await runJob(engine, scenarioToJob({ ...scenario, preset: 'gpt2-medium', parallel: { tensor: 3, zero_stage: 0, recompute: 'none' } }, { perLayer: 'none' }));
    assert.ok(!heads.ok && heads.field === 'parallel.tensor', JSON.stringify(heads));
  });

  test('per-layer timings for the chart come for one accelerator, with the same totals', async () => {
    const scenario = defaultScenario();
    const all = await runJob(engine, scenarioToJob(scenario, { perLayer: 'all' }));
    const chart = await runJob(engine, scenarioToJob({ ...scenario, layersFor: 'h100-sxm' }, { perLayer: 'chart' }));
    assert.ok(all.ok && chart.ok);
    assert.deepEqual(chart.response.results.map((r) => r.hardware), HARDWARE);
    assert.deepEqual(chart.response.results.filter((r) => r.layers !== undefined).map((r) => r.hardware), ['h100-sxm']);
    for (const [index, row] of chart.response.results.entries()) {
      assert.equal(row.step_ms, all.response.results[index]?.step_ms, `${row.hardware}: same step time`);
    }
    assert.equal(chart.response.layers?.length, all.response.layers?.length);
    // Read out of its columns, the charted accelerator's per-layer timings are those of the full response.
    const rowsOf = (/** @type {import('../../web/src/types').PredictResponse} */ response) => {
      const result = response.results.find((r) => r.hardware === 'h100-sxm');
      assert.ok(result?.layers !== undefined && response.layers !== undefined);
      return layerTimings(response.layers, result.layers);
    };
    const rows = rowsOf(chart.response);
    assert.equal(rows.length, chart.response.model.layer_count);
    assert.deepEqual(rows, rowsOf(all.response));
    const sum = rows.reduce((s, r) => s + r.forward_ms, 0);
    const h100 = chart.response.results.find((r) => r.hardware === 'h100-sxm');
    assert.ok(Math.abs(sum - (h100?.forward_ms ?? NaN)) <= 1e-4 * sum, `per-layer forward ${sum} adds up to ${h100?.forward_ms}`);
    // Without a choice, the first row in the table's order (total time, ascending): the fastest.
    const fastest = await runJob(engine, scenarioToJob(scenario, { perLayer: 'chart' }));
    assert.ok(fastest.ok);
    const withLayers = fastest.response.results.find((r) => r.layers !== undefined);
    assert.equal(withLayers?.total_s, Math.min(...fastest.response.results.map((r) => r.total_s)));
  });
});

describe('the Plan panel', () => {
  test('its request carries the budget, the GPU limit, the link overrides and the learned scale', () => {
    const scenario = defaultScenario();
    scenario.preset = 'llama-2-7b';
    scenario.training = { ...scenario.training, dataset_size: 1000, epochs: 3 };
    scenario.parallel = { gpus: 8, tensor: 2, zero_stage: 1, recompute: 'none', inter_node_gbs: 25 };
    scenario.plan = { budget: 1e9, unit: 'tokens', max_gpus: 64, rank: 'cost' };
    const { request } = scenarioToPlanJob(scenario, { 'h100-sxm': 0.8 });
    assert.deepEqual(request.plan, { tokens: 1e9, max_gpus: 64, time_scale: { 'h100-sxm': 0.8 } });
    assert.deepEqual(request.parallel, { inter_node: { bandwidth_gbs: 25 } }, 'only the fabric: the layouts are searched');
    assert.equal(request.training?.dataset_size, undefined, 'the budget replaces samples and epochs');
    assert.equal(request.training?.batch_size, 32);
    const samples = scenarioToPlanJob({ ...scenario, plan: { budget: 5000, unit: 'samples', rank: 'time' } });
    assert.deepEqual(samples.request.plan, { samples: 5000 });
  });

  test('layouts of every accelerator merge into one ranking, by time or by cost', () => {
    /** @param {number} total_s @param {number | null} cost_usd @param {number} gpus */
    const layout = (total_s, cost_usd, gpus) => ({ gpus, data: gpus, tensor: 1, pipeline: 1, micro_batch_size: 1, micro_batches: 1, zero_stage: 0, recompute: 'none', step_ms: 1, total_s, cost_usd, memory_gb: 10, mfu: 0.4 });
    /** @param {string} hardware @param {ReturnType<typeof layout>[]} byTime @param {ReturnType<typeof layout>[]} byCost */
    const acc = (hardware, byTime, byCost) => ({
      hardware, name: hardware.toUpperCase(), device_memory_gb: 80, price_per_hour_usd: byCost.length > 0 ? 1 : null, time_scale: 1,
      links: { gpus_per_node: 8, intra_node: { kind: 'x', bandwidth_gbs: 1 }, inter_node: { kind: 'y', bandwidth_gbs: 1 } },
      layouts_considered: 10, layouts_fitting: 2, by_time: byTime, by_cost: byCost,
    });
    const response = /** @type {import('../../web/src/types').PlanResponse} */ ({
      version: 't', predictor: 'roofline', model: { name: 'm', parameters: 1, layer_count: 1 },
      training: { batch_size: 8, precision: 'bf16', optimizer: 'adam' }, plan: { samples: 1, steps: 1, max_gpus: 8, min_gpus: 1 },
      results: [
        acc('a', [layout(10, 50, 8), layout(20, 30, 4)], [layout(20, 30, 4), layout(10, 50, 8)]),
        acc('b', [layout(5, null, 16)], []),
        acc('c', [layout(15, 20, 2)], [layout(15, 20, 2)]),
      ],
    });
    assert.deepEqual(rankLayouts(response, 'time').map((r) => `${r.hardware}${r.gpus}`), ['b16', 'a8', 'c2', 'a4']);
    assert.deepEqual(rankLayouts(response, 'cost').map((r) => `${r.hardware}${r.gpus}`), ['c2', 'a4', 'a8', 'b16'], 'no price: last');
  });

  test('the real planner ranks fitting layouts for llama-2-7b; its errors keep their field', async () => {
    requireBuiltCore();
    const planner = engine; // as engine-worker.ts passes it
    const scenario = { ...defaultScenario(), preset: 'llama-2-7b', hardware: ['h100-sxm', 'a100-sxm4-80gb'], training: { batch_size: 64, precision: /** @type {const} */ ('bf16'), optimizer: /** @type {const} */ ('adamw') } };
    scenario.plan = { budget: 2e9, unit: 'tokens', max_gpus: 64, rank: 'time' };
    const started = performance.now();
    const outcome = await runPlan(planner, scenarioToPlanJob(scenario));
    const elapsed = performance.now() - started;
    assert.ok(outcome.ok, JSON.stringify(outcome));
    const rows = rankLayouts(outcome.response, 'time');
    assert.ok(rows.length > 0);
    assert.ok(rows.every((r) => r.memory_gb <= r.device_memory_gb && r.gpus <= 64));
    assert.ok(elapsed < 5000, `planned in ${Math.round(elapsed)} ms`);
    const bad = await runPlan(planner, scenarioToPlanJob({ ...scenario, plan: { ...scenario.plan, max_gpus: 0 } }));
    assert.ok(!bad.ok && bad.field === 'plan.max_gpus', JSON.stringify(bad));
  });
});

describe('sorting, top layers and exports', () => {
  test('rows sort by a column either way; missing costs always last; ties keep their order', () => {
    const rows = [
      result({ hardware: 'a', total_s: 3, cost_usd: null }),
      result({ hardware: 'b', total_s: 1, cost_usd: 2 }),
      result({ hardware: 'c', total_s: 2, cost_usd: 1 }),
      result({ hardware: 'd', total_s: 2, cost_usd: 5, fits: false }),
    ];
    const ids = (/** @type {typeof rows} */ list) => list.map((r) => r.hardware);
    assert.deepEqual(ids(sortResults(rows, { column: 'total_s', descending: false })), ['b', 'c', 'd', 'a']);
    assert.deepEqual(ids(sortResults(rows, { column: 'total_s', descending: true })), ['a', 'c', 'd', 'b']);
    assert.deepEqual(ids(sortResults(rows, { column: 'cost_usd', descending: false })), ['c', 'b', 'd', 'a']);
    assert.deepEqual(ids(sortResults(rows, { column: 'cost_usd', descending: true })), ['d', 'b', 'c', 'a']);
    assert.deepEqual(ids(sortResults(rows, { column: 'fits', descending: false })), ['a', 'b', 'c', 'd']);
  });

  test('per-layer rows are read out of the columns the layer table points to', () => {
    // Layers 0 and 2 share column 1 (the same timings), as the core writes repeated blocks.
    const table = /** @type {import('../../web/src/types').LayerInfo[]} */ (
      [1, 0, 1].map((timing, i) => ({ name: `l${i}`, type: 'dense', output_shape: [4], parameters: 1, flops: { forward: 0, backward: 0, optimizer: 0 }, bytes: { forward: 0, backward: 0, optimizer: 0 }, features: { co: 0, cm: 0 }, timing }))
    );
    /** @type {import('../../web/src/types').LayerColumns} */
    const columns = { forward_ms: [1, 2], backward_ms: [3, 4], optimizer_ms: [0, 0.5], compute_ms: [5, 6], memory_ms: [7, 8], ct_ms: [0.1, 0.2], bound: ['memory', 'compute'] };
    const rows = layerTimings(table, columns);
    assert.deepEqual(rows.map((r) => [r.name, r.forward_ms, r.backward_ms, r.optimizer_ms, r.compute_ms, r.memory_ms, r.ct_ms, r.bound]), [
      ['l0', 2, 4, 0.5, 6, 8, 0.2, 'compute'],
      ['l1', 1, 3, 0, 5, 7, 0.1, 'memory'],
      ['l2', 2, 4, 0.5, 6, 8, 0.2, 'compute'],
    ]);
    assert.throws(() => layerTimings(table.map((layer) => ({ ...layer, timing: 2 })), columns), /layers\[0\]\.timing: column 2/);
  });

  test('the top layers and the rest add up to the step', () => {
    /** @type {import('../../web/src/types').LayerTiming[]} */
    const layers = Array.from({ length: 10 }, (_, i) => ({ name: `l${i}`, forward_ms: i, backward_ms: 2 * i, optimizer_ms: 0.5, compute_ms: 0, memory_ms: 0, bound: 'compute', ct_ms: 0 }));
    const { bars, rest, total_ms } = topLayers(layers, 3);
    assert.deepEqual(bars.map((bar) => bar.name), ['l9', 'l8', 'l7']);
    assert.equal(rest?.layers, 7);
    assert.equal(rest?.name, '7 other layers');
    const sum = bars.reduce((s, bar) => s + bar.total_ms, 0) + (rest?.total_ms ?? 0);
    assert.ok(Math.abs(sum - total_ms) < 1e-9);
    assert.equal(topLayers(layers, 100).rest, null);
  });

  test('CSV has a header, one row per accelerator, quoting, and no formula injection', async () => {
    const response = /** @type {import('../../web/src/types').PredictResponse} */ ({
      version: 't',
      predictor: 'roofline',
      model: { name: 'm', source: 'preset', parameters: 1, layer_count: 1, input: { kind: 'tokens' }, flops_per_step: { forward: 1, backward: 2, optimizer: 0, total: 3 } },
      training: { batch_size: 8, precision: 'fp32', optimizer: 'adam', optimizer_impl: 'fused', attention: 'eager', kernels: 'pytorch', dataset_size: 800, epochs: 1, steps_per_epoch: 100 },
      warnings: [],
      results: [result({ hardware: 'custom-1', name: '=HYPERLINK("x")', custom: true, price_per_hour_usd: null, cost_usd: null }), result({ name: 'A, "quoted" card' })],
    });
    const lines = resultsCsv(response).split('\r\n');
    assert.match(lines[0] ?? '', /^accelerator,id,custom,step_ms,forward_ms,backward_ms,optimizer_ms,epoch_s,total_s,memory_gb,device_memory_gb,fits,price_per_hour_usd,cost_usd,mfu,bottleneck,model,batch_size/);
    assert.match(lines[1] ?? '', /^"'=HYPERLINK\(""x""\)",custom-1,true,/);
    assert.match(lines[2] ?? '', /^"A, ""quoted"" card",x,false,1,/);
    assert.equal(lines.at(-1), '');
    assert.deepEqual(JSON.parse(exportJson({ model: { preset: 'm' } }, response)).request, { model: { preset: 'm' } });
    const header = (lines[0] ?? '').split(',');
    for (const column of ['gpus', 'tensor', 'compute_ms', 'communication_data_ms', 'bubble_ms', 'weights_gb', 'activations_gb']) {
      assert.ok(header.includes(column), `CSV has ${column}`);
    }
    assert.equal((lines[1] ?? '').split(',').length, header.length, 'every row has every column');
    assert.equal(exportFileName('GPT-2 / large!', 'csv', new Date('2026-01-02T03:04:05Z')), 'prenet-gpt-2-large-2026-01-02.csv');
  });
});

test('a link carries the parallel table\'s lists, text and choices (recompute_modules, pipeline_layout, expert_dispatch) as written', async () => {
  const scenario = defaultScenario();
  // Fields the form has no box for ride in `parallel` beside the typed ones, as readParallelOption stores them.
  Object.assign(scenario.parallel, {
    pipeline: 2,
    recompute: 'selective',
    recompute_modules: ['moe_act', 'layernorm'],
    pipeline_layout: 'Et*24|t*24L',
    expert_overlap: true,
    expert_dispatch: 'hierarchical',
  });
  const { params } = await scenarioToParams(scenario, KNOWN);
  assert.equal(params.get('expert_dispatch'), 'hierarchical');
  assert.equal(params.get('recompute_modules'), 'moe_act,layernorm');
  assert.equal(params.get('pipeline_layout'), 'Et*24|t*24L');
  const restored = await paramsToScenario(paramsFromLocation(new URL(`https://example.test/#${params}`)), KNOWN);
  assert.deepEqual(restored.problems, []);
  assert.deepEqual(restored.scenario.parallel, scenario.parallel);
  // One name is a name, not a list of one (the core takes either).
  const one = await paramsToScenario(new URLSearchParams('recompute=selective&recompute_modules=mla_up_proj'), KNOWN);
  assert.equal(/** @type {Record<string, unknown>} */ (one.scenario.parallel).recompute_modules, 'mla_up_proj');
});
