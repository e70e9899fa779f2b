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

  test('--help prints usage and exits 0', () => {
    const run = prenet(['--help']);
    assert.equal(run.status, 0);
    assert.match(run.stdout, /^Usage:/);
    assert.match(run.stdout, /--dataset-size/);
    for (const flag of ['--onnx FILE', '--keras FILE', '--hf FILE']) assert.ok(run.stdout.includes(flag), flag);
  });
});
