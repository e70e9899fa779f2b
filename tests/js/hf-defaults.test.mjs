// A Hugging Face config's own settings as defaults, through the real wasm engine and the CLI: its dtype sets
// the training precision unless the request does, its positions the sequence length, and the response says
// where each came from; a model_type the table lacks is read generically only with a caution (model.reading,
// the CLI's stderr line, the page's and the element's words for it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { readingLine } from '../../web/cli/prenet.mjs';
import { PrenetError } from '../../web/src/engine.js';
import { defaultScenario, paramsToScenario, scenarioChoice, scenarioToParams } from '../../web/src/scenario.js';
import { CLI, REPO_ROOT, engine, requireBuiltCore } from './helpers.mjs';

before(requireBuiltCore);

/** meta-llama/Llama-3.1-8B's config.json as published (tests/fixtures/hf): torch_dtype bfloat16, 131072 positions. */
const LLAMA_31 = JSON.parse(readFileSync(join(REPO_ROOT, 'tests', 'fixtures', 'hf', 'meta-llama--Llama-3.1-8B.json'), 'utf8'));

/** A Llama-style config under a made-up model_type. */
const ZEBRA = {
  model_type: 'zebra_lm', hidden_size: 256, num_hidden_layers: 2, num_attention_heads: 8, num_key_value_heads: 2,
  intermediate_size: 512, vocab_size: 1000, max_position_embeddings: 128, hidden_act: 'silu', rms_norm_eps: 1e-6,
  rope_theta: 10000, tie_word_embeddings: false, torch_dtype: 'float16',
};

/** @param {import('../../web/src/types').JsonObject} config @param {import('../../web/src/types').TrainingSpec} [training] */
const predict = (config, training = {}) =>
  engine.predict({ model: { hf_config: config }, training, hardware: ['h100-sxm'], options: { per_layer: false } });

describe('the config sets the defaults the request leaves out', () => {
  test('torch_dtype bfloat16 trains in bf16, and the echo says so', async () => {
    assert.equal(LLAMA_31.torch_dtype, 'bfloat16');
    const response = await predict(LLAMA_31, { batch_size: 1 });
    assert.equal(response.training.precision, 'bf16');
    assert.equal(response.training.precision_from, 'model.hf_config.torch_dtype');
    // The same model at the request's fp32 costs more per step on an H100 (its bf16 peak is higher).
    const fp32 = await predict(LLAMA_31, { batch_size: 1, precision: 'fp32' });
    assert.equal(fp32.training.precision, 'fp32');
    assert.equal(fp32.training.precision_from, undefined);
    assert.ok((fp32.results[0]?.step_ms ?? 0) > (response.results[0]?.step_ms ?? 0));
    // Mixed precision keeps FP32 master weights beside 16-bit ones: more weight memory than fp32 alone.
    assert.ok((response.results[0]?.memory.weights_gb ?? 0) > (fp32.results[0]?.memory.weights_gb ?? 0));
  });

  test("transformers 5's dtype is read too, before a leftover torch_dtype", async () => {
    const response = await predict({ ...LLAMA_31, dtype: 'float16' }, { batch_size: 1, seq_len: 128 });
    assert.equal(response.training.precision, 'fp16');
    assert.equal(response.training.precision_from, 'model.hf_config.dtype');
  });

  test('the default length is the positions capped at 4096 for a rotary decoder, said in the echo', async () => {
    const response = await predict(LLAMA_31, { batch_size: 1 });
    assert.equal(response.training.seq_len, 4096);
    assert.match(response.training.seq_len_from ?? '', /^model\.hf_config\.max_position_embeddings \(131072\), capped at 4096/);
    const given = await predict(LLAMA_31, { batch_size: 1, seq_len: 2048 });
    assert.equal(given.training.seq_len, 2048);
    assert.equal(given.training.seq_len_from, undefined);
  });

  test('presets keep their own length, with no reading; their source config\'s dtype is the precision', async () => {
    const response = await engine.predict({ model: { preset: 'llama-2-7b' }, hardware: ['h100-sxm'], options: { per_layer: false } });
    assert.equal(response.training.precision, 'fp16'); // meta-llama/Llama-2-7b-hf's torch_dtype
    assert.equal(response.training.precision_from, 'presets.llama-2-7b.hf_config.torch_dtype');
    assert.equal(response.model.reading, undefined);
    assert.equal(response.training.seq_len_from, undefined);
    const plain = await engine.predict({ model: { preset: 'gpt2' }, hardware: ['h100-sxm'], options: { per_layer: false } });
    assert.equal(plain.training.precision, 'fp32'); // its config names no dtype
    assert.equal(plain.training.precision_from, undefined);
  });
});

describe('a model_type outside the table', () => {
  test('is read generically, with the relied-on fields as data and as a warning', async () => {
    const response = await predict(ZEBRA, { seq_len: 64 });
    assert.deepEqual(response.model.reading, {
      kind: 'generic', model_type: 'zebra_lm', style: 'llama',
      relied_on: ['hidden_act', 'intermediate_size', 'rms_norm_eps', 'rope_theta', 'num_key_value_heads', 'tie_word_embeddings'],
    });
    assert.equal(response.training.precision, 'fp16');
    assert.match(response.warnings[0] ?? '', /^model_type "zebra_lm" is not in the table; read generically from hidden_act=silu/);
    assert.deepEqual((await predict(LLAMA_31, { batch_size: 1, seq_len: 64 })).model.reading, { kind: 'table', model_type: 'llama' });
  });

  test('with experts it is an error naming the model_type, the field and the supported types', async () => {
    await assert.rejects(predict({ ...ZEBRA, num_local_experts: 8 }), (error) => {
      assert.ok(error instanceof PrenetError);
      assert.equal(error.field, 'model.hf_config.num_local_experts');
      assert.match(error.message, /model_type "zebra_lm" is not in the table.*num_local_experts.*supported model_types: .*llama/);
      return true;
    });
  });
});

describe('the surfaces say a generic reading as a caution', () => {
  /** @param {string[]} args */
  const prenet = (args) => spawnSync(process.execPath, [CLI, ...args], { cwd: tmpdir(), encoding: 'utf8', timeout: 30_000 });
  /** @param {object} config */
  const configFile = (config) => {
    const path = join(mkdtempSync(join(tmpdir(), 'prenet-hf-')), 'config.json');
    writeFileSync(path, JSON.stringify(config));
    return path;
  };

  test('prenet predict --hf prints the reading on stderr; stdout stays the response', () => {
    const generic = prenet(['predict', '--hf', configFile(ZEBRA), '--seq-len', '64', '--hardware', 'h100-sxm', '--json']);
    assert.equal(generic.status, 0, generic.stderr);
    assert.equal(JSON.parse(generic.stdout).model.reading.kind, 'generic');
    assert.match(generic.stderr, /^prenet: caution: model_type "zebra_lm" is not in the table; read generically as a llama-style decoder from hidden_act, intermediate_size/);
    const table = prenet(['predict', '--hf', configFile(LLAMA_31), '--seq-len', '64', '--batch', '1', '--hardware', 'h100-sxm', '--json']);
    assert.equal(table.status, 0, table.stderr);
    assert.equal(table.stderr, 'prenet: read as model_type "llama" (from the table of model types)\n');
    // --precision overrides the config's dtype.
    const forced = prenet(['predict', '--hf', configFile(LLAMA_31), '--seq-len', '64', '--batch', '1', '--precision', 'fp32', '--hardware', 'h100-sxm', '--json']);
    assert.equal(JSON.parse(forced.stdout).training.precision, 'fp32');
  });

  test('readingLine is null without a reading', () => {
    assert.equal(readingLine({ model: { name: 'x' } }), null);
    assert.equal(readingLine(null), null);
  });

  test("the page's scenario sends no precision unless one is chosen, so the config's dtype applies", async () => {
    const scenario = defaultScenario();
    assert.equal(scenario.training.precision, undefined);
    const catalog = await engine.catalog();
    const option = catalog.options.find((o) => o.key === 'precision');
    assert.ok(option);
    assert.equal(scenarioChoice(option, ''), undefined);
    assert.equal(scenarioChoice(option, 'fp32'), 'fp32', 'an explicit FP32 stays explicit');
    const known = { presets: catalog.presets.map((p) => p.id), hardware: catalog.hardware.map((h) => h.id), options: catalog.options, parallel_options: catalog.parallel_options };
    assert.equal((await scenarioToParams(scenario, known)).params.has('precision'), false);
    const { scenario: linked } = await paramsToScenario(new URLSearchParams('precision=fp32'), known);
    assert.equal(linked.training.precision, 'fp32');
  });
});

describe('the architecture a response echoes, pasted back', () => {
  test('Qwen3-8B read from its config, its model.architecture pasted into the page: the same network', async () => {
    const { readModelConfig } = await import('../../web/src/model-config.js');
    const config = JSON.parse(readFileSync(join(REPO_ROOT, 'tests/fixtures/hf/Qwen--Qwen3-8B.json'), 'utf8'));
    const training = { batch_size: 1, seq_len: 2048, precision: 'bf16' };
    const first = await engine.predictRoofline(JSON.stringify({ model: { hf_config: config }, training, hardware: ['h100-sxm'], options: { per_layer: false } }));
    const architecture = first.model.architecture;
    assert.ok(architecture, 'a decoder config is echoed as an architecture');
    const forms = (await engine.catalog()).model_forms;
    const reading = readModelConfig(JSON.stringify(architecture), forms);
    assert.ok(reading.ok, reading.ok ? '' : reading.message);
    assert.deepEqual(Object.keys(reading.model), ['architecture']);
    const again = await engine.predictRoofline(JSON.stringify({ model: reading.model, training, hardware: ['h100-sxm'], options: { per_layer: false } }));
    assert.equal(again.model.parameters, first.model.parameters);
    assert.equal(again.results[0]?.step_ms, first.results[0]?.step_ms);
  });

  // Every family of the form, from a real config: the page reads each pasted architecture as one, by its family.
  /** @type {Array<[string, string]>} */
  const families = [
    ['ai21labs--Jamba-v0.1.json', 'ssm'], ['google-bert--bert-base-uncased.json', 'encoder'],
    ['microsoft--deberta-v3-base.json', 'deberta'], ['google-t5--t5-base.json', 't5'],
    ['steja--whisper-small-telugu.json', 'whisper'], ['google--siglip-so400m-patch14-384.json', 'two_towers'],
    ['mlx-community--gemma-3-4b-it-bf16.json', 'multimodal'],
  ];
  for (const [file, family] of families) {
    test(`${file}: echoed as family "${family}", pasted back: the same network`, async () => {
      const { readModelConfig } = await import('../../web/src/model-config.js');
      const config = JSON.parse(readFileSync(join(REPO_ROOT, 'tests/fixtures/hf', file), 'utf8'));
      const training = { batch_size: 1, precision: 'bf16' };
      const request = (/** @type {Record<string, unknown>} */ model) => JSON.stringify({ model, training, hardware: ['h100-sxm'], options: { per_layer: false } });
      const first = await engine.predictRoofline(request({ hf_config: config }));
      assert.equal(first.model.architecture?.family, family);
      const reading = readModelConfig(JSON.stringify(first.model.architecture), (await engine.catalog()).model_forms);
      assert.ok(reading.ok, reading.ok ? '' : reading.message);
      assert.match(reading.description, new RegExp(`family "${family}"`));
      const again = await engine.predictRoofline(request(reading.model));
      assert.equal(again.model.parameters, first.model.parameters);
      assert.equal(again.results[0]?.step_ms, first.results[0]?.step_ms);
    });
  }
});
