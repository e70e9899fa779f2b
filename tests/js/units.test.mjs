// Pure parts of the shared JS, without the wasm: the engine's error handling and load caching (with
// a stand-in module), number formatting, and reading a pasted model config.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PrenetError, createEngine, unwrap } from '../../web/src/engine.js';
import { formatCost, formatDuration, formatGBOf, formatMs, formatPercent, formatSI } from '../../web/src/format.js';
import { readModelConfig } from '../../web/src/model-config.js';

describe('engine', () => {
  test('an error body becomes a PrenetError with field and message', () => {
    const body = '{"error":{"field":"training.batch_size","message":"training.batch_size: expected a positive integer, got -4"}}';
    assert.throws(() => unwrap(body), (error) => {
      assert.ok(error instanceof PrenetError);
      assert.equal(error.name, 'PrenetError');
      assert.equal(error.field, 'training.batch_size');
      assert.equal(error.message, 'training.batch_size: expected a positive integer, got -4');
      return true;
    });
  });

  test('a response with an "error" key of another shape is not mistaken for an error', () => {
    assert.deepEqual(unwrap('{"error": "text", "x": 1}'), { error: 'text', x: 1 });
  });

  test('text that is not JSON is a plain Error naming the core, not a PrenetError', () => {
    assert.throws(() => unwrap('garbage'), (error) => {
      assert.ok(error instanceof Error && !(error instanceof PrenetError));
      assert.match(error.message, /core returned invalid JSON: garbage/);
      return true;
    });
  });

  test('loads the module once, passes request text through, and caches the catalogue', async () => {
    let loads = 0;
    /** @type {string[]} */
    const seen = [];
    const engine = createEngine(async () => {
      loads += 1;
      return {
        predict: (/** @type {string} */ text) => {
          seen.push(text);
          return '{"results": []}';
        },
        catalog: () => '{"version": "test"}',
      };
    });
    await engine.predict({ model: { preset: 'x' } });
    await engine.predict('{"raw": true}');
    assert.equal((await engine.catalog()).version, 'test');
    await engine.catalog();
    assert.equal(loads, 1);
    assert.deepEqual(seen, ['{"model":{"preset":"x"}}', '{"raw": true}']);
  });

  test('a failed load is retried on the next call instead of being cached', async () => {
    let attempts = 0;
    const engine = createEngine(async () => {
      attempts += 1;
      if (attempts === 1) throw new Error('network hiccup');
      return { predict: () => '{}', catalog: () => '{"version": "ok"}' };
    });
    await assert.rejects(engine.catalog(), /network hiccup/);
    assert.equal((await engine.catalog()).version, 'ok');
    assert.equal(attempts, 2);
  });
});

describe('format', () => {
  test('durations pick the largest unit that keeps the number at least 1', () => {
    assert.equal(formatMs(0.5123), '0.512 ms');
    assert.equal(formatMs(12.34), '12.3 ms');
    assert.equal(formatMs(999), '999 ms');
    assert.equal(formatDuration(1), '1 s');
    assert.equal(formatDuration(42.17), '42.2 s');
    assert.equal(formatDuration(90), '1.5 min');
    assert.equal(formatDuration(2 * 3600), '2 h');
    assert.equal(formatDuration(3 * 86400), '3 days');
    assert.equal(formatDuration(123456 * 86400), '123,000 days');
    assert.equal(formatDuration(Number.NaN), '—');
  });

  test('SI prefixes, cost and percentages', () => {
    assert.equal(formatSI(109514298), '110 M');
    assert.equal(formatSI(3.0e12, 'FLOP'), '3 TFLOP');
    assert.equal(formatSI(512, 'FLOP'), '512 FLOP');
    assert.equal(formatSI(0), '0');
    assert.equal(formatCost(null), '—');
    assert.equal(formatCost(0.001234), '$0.00123');
    assert.equal(formatCost(1234.5), '$1,234.50');
    assert.equal(formatPercent(0.4123), '41.2 %');
  });

  test('memory against the device, in one unit (the results table)', () => {
    assert.equal(formatGBOf(7.2345, 80), '7.23 / 80 GB');
    assert.equal(formatGBOf(15123, 192), '15,100 / 192 GB');
    assert.equal(formatGBOf(7.2, undefined), '7.2 GB', 'no device size: the amount alone');
    assert.equal(formatGBOf(Number.NaN, 80), '—');
  });
});

/** The model forms as the core's catalogue lists them (its model_forms), without loading the wasm. */
const MODEL_FORMS = ['preset', 'hf_config', 'architecture', 'keras', 'onnx_base64', 'layers'].map((key) => ({ key }));

describe('pasted model config', () => {
  test('an object with "layers" is a layer list, passed through unchanged', () => {
    const config = { layers: [{ type: 'dense', units: 10 }], input: { kind: 'vector', size: 4 } };
    const reading = readModelConfig(JSON.stringify(config), MODEL_FORMS);
    assert.ok(reading.ok);
    assert.deepEqual(reading.model, config);
    assert.match(reading.description, /layer list, 1 entry/);
  });

  test('a Hugging Face config.json becomes hf_config', () => {
    for (const config of [{ model_type: 'bert', hidden_size: 768 }, { n_embd: 768 }, { hidden_size: 1024 }]) {
      const reading = readModelConfig(JSON.stringify(config), MODEL_FORMS);
      assert.ok(reading.ok, JSON.stringify(config));
      assert.deepEqual(reading.model, { hf_config: config });
    }
  });

  test('an architecture (a response\'s model.architecture: a family, no model_type) becomes architecture', () => {
    // Its per-layer plan is under "layers", which must not make it a layer list.
    const architecture = { family: 'decoder', hidden_size: 256, num_hidden_layers: 4, num_attention_heads: 4, vocab_size: 1000, layers: [{ attention: 'sliding', window: 64 }, {}, {}, {}] };
    const reading = readModelConfig(JSON.stringify(architecture), MODEL_FORMS);
    assert.ok(reading.ok);
    assert.deepEqual(reading.model, { architecture });
    assert.match(reading.description, /architecture \(family "decoder", 4 layers\)/);
    // A config.json that happens to carry a "family" field is still a config.json.
    const config = { model_type: 'llama', family: 'x', hidden_size: 8 };
    assert.deepEqual(/** @type {{ model: unknown }} */ (readModelConfig(JSON.stringify(config), MODEL_FORMS)).model, { hf_config: config });
  });

  test('Keras model.to_json() becomes keras; a skimmed ONNX file (from a dropped .onnx) passes through', () => {
    const keras = { class_name: 'Sequential', config: { layers: [] } };
    const reading = readModelConfig(JSON.stringify(keras), MODEL_FORMS);
    assert.ok(reading.ok);
    assert.deepEqual(reading.model, { keras });
    assert.match(reading.description, /Keras model \(Sequential\)/);
    const onnx = { onnx_base64: 'CAgSBHRlc3Q=', name: 'tiny' };
    const read = readModelConfig(JSON.stringify(onnx), MODEL_FORMS);
    assert.ok(read.ok);
    assert.deepEqual(read.model, onnx);
    assert.match(read.description, /ONNX graph without weights \(1 KiB\)/);
  });

  test('only the forms the catalogue lists are read', () => {
    const keras = JSON.stringify({ class_name: 'Sequential', config: { layers: [] } });
    const reading = readModelConfig(keras, MODEL_FORMS.filter((form) => form.key !== 'keras'));
    assert.ok(!reading.ok);
    assert.match(reading.message, /^config: not recognised/);
  });

  test("Python's bare Infinity/NaN (json.dumps, e.g. Mamba-2's time_step_limit) are read as text and their places named", () => {
    // As transformers < 5 writes a Mamba2Config: `time_step_limit: (0.0, float("inf"))` through json.dumps.
    const text = '{"model_type": "mamba2", "hidden_size": 256, "time_step_limit": [0.0, Infinity],\n "x": {"y": -Infinity, "z": NaN},\n "note": "Infinity NaN in a string stay", "InfinityKey": 1}';
    const reading = readModelConfig(text, MODEL_FORMS);
    assert.ok(reading.ok, reading.ok ? '' : reading.message);
    const config = /** @type {Record<string, unknown>} */ (/** @type {{ hf_config: unknown }} */ (reading.model).hf_config);
    assert.deepEqual(config.time_step_limit, [0, 'Infinity']);
    assert.deepEqual(config.x, { y: '-Infinity', z: 'NaN' });
    assert.equal(config.note, 'Infinity NaN in a string stay');
    assert.equal(config.InfinityKey, 1);
    assert.match(reading.description, /Python's Infinity\/NaN \(not JSON\) at time_step_limit\[1\], x\.y, x\.z, passed on as text/);
    // Plain JSON carries no note; a word that is not a whole token is still an error.
    assert.doesNotMatch(/** @type {{ description: string }} */ (readModelConfig('{"hidden_size": 8}', MODEL_FORMS)).description, /Python/);
    for (const bad of ['{"hidden_size": Infinityx}', '{"hidden_size": 1, Infinity}', '{"hidden_size": Inf}']) {
      const refused = readModelConfig(bad, MODEL_FORMS);
      assert.ok(!refused.ok, bad);
      assert.match(refused.message, /^config: not valid JSON/);
    }
  });

  test('problems are named, starting with "config:"', () => {
    /** @type {Array<[string, RegExp]>} */
    const cases = [
      ['{"layers": [', /^config: not valid JSON/],
      ['[1, 2]', /^config: expected a JSON object, not an array/],
      ['42', /^config: expected a JSON object, not a number/],
      ['{"foo": 1}', /^config: not recognised: expected a layer list/],
    ];
    for (const [text, expected] of cases) {
      const reading = readModelConfig(text, MODEL_FORMS);
      assert.ok(!reading.ok, text);
      assert.match(reading.message, expected);
    }
  });
});
