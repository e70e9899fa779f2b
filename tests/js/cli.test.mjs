// `node web/cli/prenet.mjs` as a user runs it: output, exit status, one-line errors, and the same
// numbers as the engine.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { CLI, HARDWARE, engine, exampleRequest, requireBuiltCore } from './helpers.mjs';

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

  test('--help prints usage and exits 0', () => {
    const run = prenet(['--help']);
    assert.equal(run.status, 0);
    assert.match(run.stdout, /^Usage:/);
    assert.match(run.stdout, /--dataset-size/);
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
        assert.ok(l.gpus <= 16 && l.memory_gb <= r.device_memory_gb);
        assert.equal(l.data * l.micro_batch_size * l.micro_batches, 64);
      }
    }
    assertOneLineError(prenet(['predict', '--preset', 'gpt2', '--max-gpus', '8']), /^prenet: --max-gpus: only plan takes this flag/);
    assertOneLineError(prenet(['plan', '--preset', 'gpt2', '--tensor', '2']), /^prenet: --tensor: plan searches the layout/);
    assertOneLineError(prenet(['plan', '--preset', 'gpt2', '--tokens', '1e9', '--samples', '10']), /^prenet: plan\.samples: /);
  });
});
