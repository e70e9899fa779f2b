// `node web/cli/prenet.mjs` as a user runs it: output, exit status, one-line errors, and the same
// numbers as the engine.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { CLI, HARDWARE, REPO_ROOT, engine, exampleRequest, requireBuiltCore } from './helpers.mjs';

before(requireBuiltCore);

/**
 * Runs the CLI from a temporary directory (it must find the wasm relative to itself, not the cwd).
 * @param {string[]} args
 * @param {string} [stdin]
 */
function prenet(args, stdin) {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: tmpdir(),
    input: stdin,
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(result.error, undefined, `could not run the CLI: ${result.error}`);
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** @param {object | string} request */
function requestFile(request) {
  const path = join(mkdtempSync(join(tmpdir(), 'prenet-cli-')), 'request.json');
  writeFileSync(path, typeof request === 'string' ? request : JSON.stringify(request));
  return path;
}

/**
 * A failure: exit status 1, nothing on stdout, exactly one line on stderr matching `expected`.
 * @param {ReturnType<typeof prenet>} run
 * @param {RegExp} expected
 */
function assertOneLineError(run, expected) {
  assert.equal(run.status, 1, `exit status (stderr: ${run.stderr})`);
  assert.equal(run.stdout, '');
  const lines = run.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, `expected one line on stderr, got: ${JSON.stringify(run.stderr)}`);
  assert.match(lines[0] ?? '', expected);
}

describe('prenet predict', () => {
  test('flags give the same response as the engine, number for number', async () => {
    const run = prenet(['predict', '--preset', 'bert-base', '--hardware', HARDWARE.join(','), '--batch', '32', '--precision', 'fp32', '--optimizer', 'adam', '--json']);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim().split('\n').length, 1, '--json prints one line');
    assert.deepEqual(JSON.parse(run.stdout), await engine.predict(exampleRequest()));
  });

  test('--request FILE prints pretty JSON by default', async () => {
    const request = exampleRequest({ batch_size: 16, dataset_size: 1000, epochs: 3 });
    const run = prenet(['predict', '--request', requestFile(request)]);
    assert.equal(run.status, 0, run.stderr);
    assert.ok(run.stdout.split('\n').length > 10, 'pretty-printed over many lines');
    assert.deepEqual(JSON.parse(run.stdout), await engine.predict(request));
  });

  test('flags override the fields of --request; other fields are kept', async () => {
    const base = exampleRequest({ batch_size: 8, dataset_size: 4096 });
    const run = prenet(['predict', '--request', requestFile(base), '--batch', '64', '--hardware', 'h100-sxm', '--json']);
    assert.equal(run.status, 0, run.stderr);
    const response = JSON.parse(run.stdout);
    assert.equal(response.training.batch_size, 64);
    assert.equal(response.training.dataset_size, 4096);
    assert.deepEqual(response.results.map((/** @type {{hardware: string}} */ r) => r.hardware), ['h100-sxm']);
    assert.deepEqual(response, await engine.predict({ ...base, training: { ...base.training, batch_size: 64 }, hardware: ['h100-sxm'] }));
  });

  test('--request - reads standard input', () => {
    const run = prenet(['predict', '--request', '-', '--json'], JSON.stringify({ model: { preset: 'resnet50' }, hardware: ['h100-sxm'] }));
    assert.equal(run.status, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).model.name, 'resnet50');
  });

  test('a core error is one line naming the field, exit status 1', () => {
    assertOneLineError(prenet(['predict', '--preset', 'bert-base', '--batch', '-4']), /^prenet: training\.batch_size: .*-4/);
    assertOneLineError(prenet(['predict', '--preset', 'no-such-model']), /^prenet: model\.preset: .*no-such-model/);
    assertOneLineError(prenet(['predict', '--preset', 'bert-base', '--hardware', 'nope']), /^prenet: hardware\[0\]: /);
  });

  test('--memory-format sets training.memory_format, a flag the catalogue\'s table of options gives', async () => {
    const args = ['predict', '--preset', 'resnet50', '--hardware', 'a100-sxm4-80gb', '--precision', 'bf16', '--json'];
    const nchw = prenet([...args, '--memory-format', 'nchw']);
    assert.equal(nchw.status, 0, nchw.stderr);
    /** @type {import('../../web/src/types').PredictRequest} */
    const request = { model: { preset: 'resnet50' }, training: { precision: 'bf16', memory_format: 'nchw' }, hardware: ['a100-sxm4-80gb'] };
    assert.deepEqual(JSON.parse(nchw.stdout), await engine.predict(request));
    const plain = prenet(args);
    assert.ok(JSON.parse(nchw.stdout).results[0].step_ms > JSON.parse(plain.stdout).results[0].step_ms, 'NCHW adds layout transposes');
    assertOneLineError(prenet(['predict', '--preset', 'resnet50', '--memory-format', 'nhwc']), /^prenet: training\.memory_format: .*"nhwc"/);
  });

  test('a malformed request file is reported by the core as "request"', () => {
    assertOneLineError(prenet(['predict', '--request', requestFile('{"model": ')]), /^prenet: request: /);
    // …also when flags would have modified it.
    assertOneLineError(prenet(['predict', '--request', requestFile('{"model": '), '--batch', '8']), /^prenet: request: /);
  });

  test('bad flags and arguments are one-line errors', () => {
    assertOneLineError(prenet(['predict', '--bogus']), /^prenet: --bogus: unknown flag/);
    assertOneLineError(prenet(['predict', '--batch', 'many']), /^prenet: --batch: expected a number, got "many"/);
    assertOneLineError(prenet(['predict', '--preset']), /^prenet: --preset: missing value/);
    assertOneLineError(prenet(['predict', '--request', '/no/such/file.json']), /^prenet: --request: cannot read \/no\/such\/file\.json/);
    assertOneLineError(prenet(['frobnicate']), /^prenet: command: unknown command "frobnicate"/);
    assertOneLineError(prenet([]), /^prenet: command: missing/);
    assertOneLineError(prenet(['hardware', '--batch', '3']), /^prenet: --batch: only predict takes this flag/);
  });
});

describe('prenet predict --onnx / --keras / --hf', () => {
  const FIXTURES = join(REPO_ROOT, 'tests', 'fixtures');
  /** @param {string[]} args */
  const json = (args) => {
    const run = prenet([...args, '--hardware', 'h100-sxm', '--json']);
    assert.equal(run.status, 0, run.stderr);
    return JSON.parse(run.stdout);
  };

  test('--onnx, --keras and --preset give the same LeNet-5 (the core reads the same network)', async () => {
    const byOnnx = json(['predict', '--onnx', join(FIXTURES, 'onnx', 'lenet5-no-weights.onnx'), '--batch', '64']);
    const byKeras = json(['predict', '--keras', join(FIXTURES, 'keras', 'lenet5_sequential.json'), '--batch', '64']);
    assert.equal(byOnnx.model.parameters, 61706);
    assert.equal(byKeras.model.parameters, 61706);
    assert.equal(byOnnx.model.name, 'lenet5-no-weights');
    const keras = JSON.parse(readFileSync(join(FIXTURES, 'keras', 'lenet5_sequential.json'), 'utf8'));
    assert.deepEqual(byKeras, await engine.predict({ model: { keras }, training: { batch_size: 64 }, hardware: ['h100-sxm'] }));
  });

  test('--hf reads a config.json; flags still override the training fields', async () => {
    const config = { model_type: 'gpt2', n_embd: 64, n_layer: 2, n_head: 4, vocab_size: 100, n_positions: 128 };
    const path = requestFile(config);
    const response = json(['predict', '--hf', path, '--seq-len', '32', '--batch', '4']);
    assert.equal(response.training.seq_len, 32);
    assert.deepEqual(response, await engine.predict({ model: { hf_config: config }, training: { batch_size: 4, seq_len: 32 }, hardware: ['h100-sxm'] }));
    // The model flag replaces the model of --request, keeping its other fields.
    const merged = json(['predict', '--request', requestFile({ model: { preset: 'resnet50' }, training: { batch_size: 4, seq_len: 32 } }), '--hf', path]);
    assert.deepEqual(merged.model, response.model);
  });

  test("--hf reads a config with Python's bare Infinity (Mamba-2's time_step_limit), says so, and refuses it where a number is read", async () => {
    const config = { model_type: 'mamba2', hidden_size: 256, num_hidden_layers: 2, vocab_size: 1000, state_size: 16, num_heads: 8, head_dim: 64, expand: 2, n_groups: 1 };
    const text = JSON.stringify({ ...config, time_step_limit: [0, 'INF'] }).replace('"INF"', 'Infinity');
    const run = prenet(['predict', '--hf', requestFile(text), '--hardware', 'h100-sxm']);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /Python's Infinity\/NaN \(not JSON\) at time_step_limit\[1\], passed on as text/);
    const expected = await engine.predict({ model: { hf_config: { ...config, time_step_limit: [0, 'Infinity'] } }, hardware: ['h100-sxm'] });
    assert.equal(JSON.parse(run.stdout).model.parameters, expected.model.parameters);
    const bad = JSON.stringify({ ...config, hidden_size: 'INF' }).replace('"INF"', 'Infinity');
    const refused = prenet(['predict', '--hf', requestFile(bad)]);
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr, /\nprenet: model\.hf_config\.hidden_size: expected an integer .*, got a string\n$/);
  });

  test('model file problems are one-line errors naming the flag or the core field', () => {
    assertOneLineError(prenet(['predict', '--hf', '/no/such/config.json']), /^prenet: --hf: cannot read \/no\/such\/config\.json/);
    assertOneLineError(prenet(['predict', '--onnx', '/no/such/model.onnx']), /^prenet: --onnx: cannot read \/no\/such\/model\.onnx/);
    assertOneLineError(prenet(['predict', '--hf', requestFile('{"n_embd": ')]), /^prenet: --hf: .* is not valid JSON/);
    assertOneLineError(prenet(['predict', '--hf', requestFile('[1, 2]')]), /^prenet: --hf: .* must hold a JSON object/);
    assertOneLineError(prenet(['predict', '--keras', requestFile('{"class_name": ')]), /^prenet: model\.keras: /);
    assertOneLineError(prenet(['predict', '--hf', requestFile({ model_type: 'gpt2', n_layer: 2 })]), /^prenet: model\.hf_config\.hidden_size: required field is missing/);
    assertOneLineError(prenet(['predict', '--preset', 'gpt2', '--onnx', 'x.onnx']), /^prenet: --onnx: give one model \(--preset, --onnx, --keras or --hf\)/);
    assertOneLineError(prenet(['predict', '--onnx']), /^prenet: --onnx: missing value/);
  });
});

describe('prenet hardware / presets / --help', () => {
  test('hardware prints a table with every catalogue id', async () => {
    const run = prenet(['hardware']);
    assert.equal(run.status, 0, run.stderr);
    const catalog = await engine.catalog();
    for (const entry of catalog.hardware) assert.match(run.stdout, new RegExp(`^${entry.id} `, 'm'));
    assert.match(run.stdout.split('\n')[0] ?? '', /^id\s+name/);
  });

  test('presets --json is the catalogue presets', async () => {
    const run = prenet(['presets', '--json']);
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), (await engine.catalog()).presets);
  });

  test('hardware --json is the catalogue hardware', async () => {
    const run = prenet(['hardware', '--json']);
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), (await engine.catalog()).hardware);
  });

  test('--help prints usage and exits 0', async () => {
    const run = prenet(['--help']);
    assert.equal(run.status, 0);
    assert.match(run.stdout, /^Usage:/);
    assert.match(run.stdout, /--dataset-size/);
    for (const option of (await engine.catalog()).options) {
      const usage = option.flag_value === null ? option.flag : `${option.flag} ${option.flag_value}`;
      assert.ok(run.stdout.includes(usage), option.flag);
    }
    // Short flags are padded to the description column.
    const escape = (/** @type {string} */ s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    for (const option of (await engine.catalog()).parallel_options) {
      if (option.flag === null) continue;
      const usage = new RegExp(`${escape(option.flag)}\\s+${escape(option.flag_value ?? option.field)}`);
      assert.match(run.stdout, usage, option.flag);
    }
    for (const flag of ['--onnx FILE', '--keras FILE', '--hf FILE']) assert.ok(run.stdout.includes(flag), flag);
  });
});

describe('prenet parallel and plan', () => {
  test('parallel flags set the request\'s "parallel" and give the engine\'s numbers', async () => {
    const run = prenet(['predict', '--preset', 'gpt2', '--hardware', 'h100-sxm', '--batch', '32', '--precision', 'bf16', '--gpus', '8', '--tensor', '2', '--micro-batch-size', '2', '--zero-stage', '1', '--recompute', 'selective', '--json']);
    assert.equal(run.status, 0, run.stderr);
    const response = JSON.parse(run.stdout);
    const p = response.results[0].parallel;
    assert.deepEqual([p.gpus, p.data, p.tensor, p.micro_batch_size, p.micro_batches, p.zero_stage, p.recompute], [8, 4, 2, 2, 4, 1, 'selective']);
    /** @type {import('../../web/src/types').PredictRequest} */
    const request = {
      model: { preset: 'gpt2' },
      training: { batch_size: 32, precision: 'bf16' },
      hardware: ['h100-sxm'],
      parallel: { gpus: 8, tensor: 2, micro_batch_size: 2, zero_stage: 1, recompute: 'selective' },
    };
    assert.deepEqual(response, await engine.predict(request));
  });

  test('--recompute-modules takes a list and --pipeline-layout a layout string, as the request does', async () => {
    const run = prenet(['predict', '--preset', 'qwen3-30b-a3b', '--hardware', 'h100-sxm', '--batch', '16', '--seq-len', '1024', '--precision', 'bf16', '--gpus', '2', '--pipeline', '2', '--recompute', 'selective', '--recompute-modules', 'moe_act,layernorm', '--pipeline-layout', 'Et*24|t*24L', '--json']);
    assert.equal(run.status, 0, run.stderr);
    const response = JSON.parse(run.stdout);
    /** @type {import('../../web/src/types').PredictRequest} */
    const request = {
      model: { preset: 'qwen3-30b-a3b' },
      training: { batch_size: 16, seq_len: 1024, precision: 'bf16' },
      hardware: ['h100-sxm'],
      parallel: { gpus: 2, pipeline: 2, recompute: 'selective', recompute_modules: ['moe_act', 'layernorm'], pipeline_layout: 'Et*24|t*24L' },
    };
    assert.deepEqual(response, await engine.predict(request));
    assert.deepEqual(response.results[0]?.parallel?.recompute_modules, ['moe_act', 'layernorm']);
    // A bad layout is the core's one-line error naming the field.
    const bad = prenet(['predict', '--preset', 'qwen3-30b-a3b', '--hardware', 'h100-sxm', '--gpus', '2', '--pipeline', '2', '--pipeline-layout', 'Et*24|t*23L']);
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /parallel\.pipeline_layout/);
  });

  test('--sequence-parallel sets parallel.sequence_parallel; at tensor 2 the activations shrink, the tensor traffic stays', async () => {
    const args = ['predict', '--preset', 'gpt2', '--hardware', 'h100-sxm', '--batch', '32', '--precision', 'bf16', '--gpus', '8', '--tensor', '2', '--micro-batch-size', '2', '--json'];
    const off = prenet(args);
    const on = prenet([...args, '--sequence-parallel']);
    assert.equal(on.status, 0, on.stderr);
    const [a, b] = [JSON.parse(off.stdout).results[0], JSON.parse(on.stdout).results[0]];
    assert.equal(a.parallel.sequence_parallel, false);
    assert.equal(b.parallel.sequence_parallel, true);
    assert.ok(b.memory.activations_gb < a.memory.activations_gb, `${b.memory.activations_gb} < ${a.memory.activations_gb}`);
    assert.equal(b.parallel.communication_ms.tensor, a.parallel.communication_ms.tensor);
    /** @type {import('../../web/src/types').PredictRequest} */
    const request = {
      model: { preset: 'gpt2' },
      training: { batch_size: 32, precision: 'bf16' },
      hardware: ['h100-sxm'],
      parallel: { gpus: 8, tensor: 2, micro_batch_size: 2, sequence_parallel: true },
    };
    assert.deepEqual(JSON.parse(on.stdout), await engine.predict(request));
    assert.deepEqual(JSON.parse(prenet([...args, '--sequence-parallel=false']).stdout), JSON.parse(off.stdout));
    assertOneLineError(prenet([...args, '--sequence-parallel=maybe']), /^prenet: --sequence-parallel: expected true or false/);
    // 1022 tokens do not split over 4 GPUs.
    assertOneLineError(prenet(['predict', '--preset', 'gpt2', '--seq-len', '1022', '--tensor', '4', '--sequence-parallel']), /^prenet: parallel\.sequence_parallel: /);
    assertOneLineError(prenet(['plan', '--preset', 'gpt2', '--sequence-parallel']), /^prenet: --sequence-parallel: plan searches the layout/);
  });

  test('--attention flash sets training.attention: no score matrices, fewer activations, a faster step at long sequences', async () => {
    const args = ['predict', '--preset', 'gpt2', '--hardware', 'h100-sxm', '--batch', '8', '--seq-len', '1024', '--precision', 'bf16', '--json'];
    const eager = prenet(args);
    const flash = prenet([...args, '--attention', 'flash']);
    assert.equal(flash.status, 0, flash.stderr);
    const [e, f] = [JSON.parse(eager.stdout), JSON.parse(flash.stdout)];
    assert.equal(e.training.attention, 'eager');
    assert.equal(f.training.attention, 'flash');
    // Causal: the fused kernel skips half the scores, and writes none of them.
    assert.ok(f.model.flops_per_step.forward < e.model.flops_per_step.forward);
    assert.ok(f.results[0].memory.activations_gb < e.results[0].memory.activations_gb);
    assert.ok(f.results[0].step_ms < e.results[0].step_ms, `${f.results[0].step_ms} < ${e.results[0].step_ms}`);
    /** @type {import('../../web/src/types').PredictRequest} */
    const request = {
      model: { preset: 'gpt2' },
      training: { batch_size: 8, seq_len: 1024, precision: 'bf16', attention: 'flash' },
      hardware: ['h100-sxm'],
    };
    assert.deepEqual(f, await engine.predict(request));
    assertOneLineError(prenet([...args, '--attention', 'fused']), /^prenet: training\.attention: /);
  });

  test('--kernels megatron fuses GELU and softmax; --optimizer-impl foreach slows the optimizer step', () => {
    const args = ['predict', '--preset', 'gpt2', '--hardware', 'h100-sxm', '--batch', '8', '--precision', 'bf16', '--json'];
    const [pytorch, megatron, foreach] = [[], ['--kernels', 'megatron'], ['--optimizer-impl', 'foreach']].map((extra) => {
      const run = prenet([...args, ...extra]);
      assert.equal(run.status, 0, run.stderr);
      return JSON.parse(run.stdout);
    });
    assert.equal(pytorch.training.kernels, 'pytorch');
    assert.equal(megatron.training.kernels, 'megatron');
    // PyTorch keeps gelu_new's FP32 intermediates and FP32 probabilities beside their 16-bit copy.
    assert.ok(megatron.results[0].memory.activations_gb < pytorch.results[0].memory.activations_gb);
    assert.ok(megatron.results[0].step_ms < pytorch.results[0].step_ms);
    assert.equal(foreach.training.optimizer_impl, 'foreach');
    assert.ok(foreach.results[0].optimizer_ms > pytorch.results[0].optimizer_ms);
    assertOneLineError(prenet([...args, '--optimizer-impl', 'apex']), /^prenet: training\.optimizer_impl: /);
    assertOneLineError(prenet([...args, '--kernels', 'deepspeed']), /^prenet: training\.kernels: /);
  });

  test('a bad parallel value is the core\'s one-line error naming parallel.<field>', () => {
    assertOneLineError(prenet(['predict', '--preset', 'gpt2', '--gpus', '6', '--tensor', '4']), /^prenet: parallel\.gpus: /);
  });

  test('plan ranks fitting layouts by time and cost; plan flags belong to plan only', () => {
    const run = prenet(['plan', '--preset', 'gpt2', '--hardware', 'h100-sxm,a100-sxm4-80gb', '--batch', '64', '--precision', 'bf16', '--samples', '1e6', '--max-gpus', '16', '--top', '3', '--json']);
    assert.equal(run.status, 0, run.stderr);
    const plan = JSON.parse(run.stdout);
    assert.equal(plan.results.length, 2);
    assert.equal(plan.plan.steps, Math.ceil(1e6 / 64));
    for (const r of plan.results) {
      assert.ok(r.layouts_fitting > 0 && r.layouts_fitting <= r.layouts_considered);
      assert.equal(r.by_time.length, 3);
      const times = r.by_time.map((/** @type {{total_s: number}} */ l) => l.total_s);
      assert.deepEqual(times, [...times].sort((a, b) => a - b));
      const costs = r.by_cost.map((/** @type {{cost_usd: number}} */ l) => l.cost_usd);
      assert.deepEqual(costs, [...costs].sort((a, b) => a - b));
      for (const l of r.by_time) {
        assert.equal(l.gpus, l.data * l.tensor * l.pipeline);
        assert.equal(l.sequence_parallel, l.tensor > 1, 'sequence parallelism with every tensor degree > 1 (gpt2\'s 1024 tokens split)');
        assert.ok(l.gpus <= 16 && l.memory_gb <= r.device_memory_gb);
        assert.equal(l.data * l.micro_batch_size * l.micro_batches, 64);
      }
    }
    assertOneLineError(prenet(['predict', '--preset', 'gpt2', '--max-gpus', '8']), /^prenet: --max-gpus: only plan takes this flag/);
    assertOneLineError(prenet(['plan', '--preset', 'gpt2', '--tensor', '2']), /^prenet: --tensor: plan searches the layout/);
    assertOneLineError(prenet(['plan', '--preset', 'gpt2', '--tokens', '1e9', '--samples', '10']), /^prenet: plan\.samples: /);
  });
});
