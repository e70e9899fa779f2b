#!/usr/bin/env node
// Tries bad inputs against the real wasm module (web/cli/node-engine.mjs loadNodeCore, module.predict)
// and, for raw invalid UTF-8 bytes, the native driver build/native/core/prenet_native. Prints a table of
// what each input gets (error field and message, or a response summary) and how long it took; with
// --write it also writes docs/ROBUSTNESS.md.
//
// Checked for every input: the module does not throw or abort, it still answers a good request
// afterwards, the call takes at most a second, and an error's message starts with its field.
// Findings go under "Open problems" in the document; the script exits 1 when there is any, unless --write
// was given (the document is then the report).
//
//   node scripts/bad-inputs.mjs            # print the table
//   node scripts/bad-inputs.mjs --write    # also write docs/ROBUSTNESS.md (npm run bench:robustness)

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { loadNodeCore } from '../web/cli/node-engine.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DOC = join(ROOT, 'docs/ROBUSTNESS.md');
const NATIVE = join(ROOT, 'build/native/core/prenet_native');
const TIME_LIMIT_MS = 1000;

const SMALL_MODEL = {
  input: { kind: 'vector', features: 32 },
  layers: [{ type: 'dense', units: 64, activation: 'relu' }, { type: 'dense', units: 10 }, { type: 'cross_entropy' }],
};
const GOOD = JSON.stringify({ model: { preset: 'gpt2' }, hardware: ['t4'] });

/** @param {object} model @param {object} [extra] */
const req = (model, extra = {}) => JSON.stringify({ model, hardware: ['t4'], ...extra });
/** @param {object} training */
const train = (training) => req({ preset: 'gpt2' }, { training });
/** A small layer list with `layers` in place of the default ones. @param {object[]} layers */
const layersModel = (layers, input = SMALL_MODEL.input) => req({ input, layers });
/** @param {number} n */
const nestedArrays = (n) => '['.repeat(n) + ']'.repeat(n);
/** @param {number} n */
const nestedObjects = (n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

const custom = (/** @type {number} */ i) => ({
  name: `custom-${i}`,
  peak_tflops: { fp32: 50 },
  memory_bandwidth_gbs: 2000,
  memory_gb: 48,
});

const HUNDRED_MB = 100 * 1024 * 1024;

// A minimal ONNX (protobuf wire format) writer, enough for small graphs built by hand; mirrors
// tests/core/onnx_writer.hpp. Field numbers are ONNX's (onnx.proto3).
/** @param {number|bigint} v @returns {Buffer} */
function varint(v) {
  let x = BigInt.asUintN(64, BigInt(v));
  const out = [];
  while (x >= 0x80n) {
    out.push(Number((x & 0x7fn) | 0x80n));
    x >>= 7n;
  }
  out.push(Number(x));
  return Buffer.from(out);
}
/** @typedef {Buffer|number[]|string} Bytes */
/** @param {Bytes} v */
const bytesOf = (v) => (Buffer.isBuffer(v) ? v : typeof v === 'string' ? Buffer.from(v, 'latin1') : Buffer.from(v));
/** @param {Bytes[]} parts */
const cat = (...parts) => Buffer.concat(parts.map(bytesOf));
/**
 * A field of a message: a varint for numbers, else length-delimited bytes (strings are written byte per
 * char code, so '\xff' is the raw byte FF).
 * @param {number} field @param {number|bigint|Bytes} value
 */
function pb(field, value) {
  if (typeof value === 'number' || typeof value === 'bigint') return cat(varint(field << 3), varint(value));
  const bytes = bytesOf(value);
  return cat(varint((field << 3) | 2), varint(bytes.length), bytes);
}
/** A float32 field. @param {number} field @param {number} v */
function pbFloat(field, v) {
  const b = Buffer.alloc(4);
  b.writeFloatLE(v);
  return cat(varint((field << 3) | 5), b);
}
/** A tensor's ValueInfoProto; dims < 0 are the symbolic batch. @param {string} name @param {number[]} dims @param {number} [elemType] */
function valueInfo(name, dims, elemType = 1) {
  const shape = cat(...dims.map((d) => pb(1, d < 0 ? pb(2, 'N') : pb(1, d))));
  return cat(pb(1, name), pb(2, pb(1, cat(pb(1, elemType), pb(2, shape)))));
}
/** A float initializer with dims only (no weight bytes). @param {string} name @param {(number|bigint)[]} dims */
const initializer = (name, dims) => cat(pb(1, cat(...dims.map((d) => varint(d)))), pb(2, 1), pb(8, name));
/** @param {string} op @param {string[]} inputs @param {string[]} outputs @param {Buffer[]} [attrs] @param {string} [name] */
const onnxNode = (op, inputs, outputs, attrs = [], name = '') =>
  cat(...inputs.map((i) => pb(1, i)), ...outputs.map((o) => pb(2, o)), name ? pb(3, name) : [], pb(4, op), ...attrs.map((a) => pb(5, a)));
/** @param {string} name @param {number} v */
const attrFloat = (name, v) => cat(pb(1, name), pbFloat(2, v), pb(20, 1));
/** @param {string} name @param {number[]} v */
const attrInts = (name, v) => cat(pb(1, name), pb(8, cat(...v.map((x) => varint(x)))), pb(20, 7));
/** A ModelProto (IR 8, opset 17) around a GraphProto's bytes, base64. @param {Buffer} graph */
const onnxFile = (graph) => cat(pb(1, 8), pb(7, graph), pb(8, cat(pb(1, ''), pb(2, 17)))).toString('base64');
/** @param {{nodes: Buffer[], inits?: Buffer[], inputs: Buffer[], outputs: Buffer[]}} g */
const onnxModel = ({ nodes, inits = [], inputs, outputs }) =>
  onnxFile(cat(...nodes.map((n) => pb(1, n)), pb(2, 'g'), ...inits.map((t) => pb(5, t)), ...inputs.map((v) => pb(11, v)), ...outputs.map((v) => pb(12, v))));
/**
 * A graph whose one node is an If whose then_branch is such a graph, `depth` times. Built from the inside
 * out with only the framing bytes per level, so depth 10,000 costs one final copy.
 * @param {number} depth
 */
function nestedIfGraph(depth) {
  const inner = cat(pb(1, onnxNode('Relu', ['x'], ['y'])), pb(2, 'inner'));
  /** @type {Buffer[]} */ const heads = [];
  /** @type {Buffer[]} */ const tails = [];
  let length = inner.length;
  for (let i = 0; i < depth; i++) {
    // attr = name, g (field 6) = <graph>, type GRAPH (5); node = input, output, op, attribute (field 5) = <attr>;
    // graph = node (field 1) = <node>, name.
    const attrHead = cat(pb(1, 'then_branch'), varint((6 << 3) | 2), varint(length));
    const attrTail = pb(20, 5);
    const attrLength = attrHead.length + length + attrTail.length;
    const nodeHead = cat(pb(1, 'c'), pb(2, 'y'), pb(4, 'If'), varint((5 << 3) | 2), varint(attrLength));
    const nodeLength = nodeHead.length + attrLength;
    const graphHead = cat(varint((1 << 3) | 2), varint(nodeLength));
    const graphTail = pb(2, 'g');
    heads.push(cat(graphHead, nodeHead, attrHead));
    tails.push(cat(attrTail, graphTail));
    length = graphHead.length + nodeLength + graphTail.length;
  }
  return cat(...heads.reverse(), inner, ...tails);
}
/** x [N, 32] → MatMul(w [32, units]) → y, plus `extra` nodes; the base of the ONNX rows. */
const onnxMlp = (units = 10, extra = /** @type {Buffer[]} */ ([]), output = 'y', inputDims = [-1, 32]) =>
  req({
    onnx_base64: onnxModel({
      nodes: [onnxNode('MatMul', ['x', 'w'], ['y'], [], 'fc'), ...extra],
      inits: [initializer('w', [inputDims[inputDims.length - 1] ?? 32, units])],
      inputs: [valueInfo('x', inputDims)],
      outputs: [valueInfo(output, [-1, units])],
    }),
  });

// Keras: a Sequential model of `layers` after an InputLayer [null, 8], and a Keras 2 Functional model.
/** @param {object[]} layers @param {(number|null)[]} [shape] */
const kerasSeq = (layers, shape = [null, 8]) =>
  req({ keras: { class_name: 'Sequential', config: { name: 's', layers: [{ class_name: 'InputLayer', config: { batch_input_shape: shape, name: 'in' } }, ...layers] } } });
/** @param {string} cls @param {object} config */
const kl = (cls, config) => ({ class_name: cls, config: { name: `l_${cls.toLowerCase()}`, ...config } });
/** Functional layers: [name, class, config, inputs]; input "in" is [null, 8]. @param {[string, string, object, string[]][]} layers @param {string} out */
const kerasFn = (layers, out) =>
  req({
    keras: {
      class_name: 'Functional',
      config: {
        name: 'f',
        layers: [
          { class_name: 'InputLayer', name: 'in', config: { batch_input_shape: [null, 8], name: 'in' }, inbound_nodes: [] },
          ...layers.map(([name, cls, config, inputs]) => ({ class_name: cls, name, config: { name, ...config }, inbound_nodes: [inputs.map((i) => [i, 0, 0, {}])] })),
        ],
        input_layers: [['in', 0, 0]],
        output_layers: [[out, 0, 0]],
      },
    },
  });

// Hugging Face: a small GPT-2 config with `changes`.
const HF_GPT2 = { model_type: 'gpt2', n_embd: 64, n_layer: 2, n_head: 4, vocab_size: 1000, n_positions: 128 };
/** @param {object} changes */
/** A small Granite 4.0 hybrid (granitemoehybrid): Mamba-2 and attention layers, routed experts beside a shared MLP. */
const GRANITE_HYBRID = {
  model_type: 'granitemoehybrid',
  hidden_size: 64,
  num_hidden_layers: 4,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  intermediate_size: 32,
  shared_intermediate_size: 64,
  num_local_experts: 4,
  num_experts_per_tok: 2,
  vocab_size: 1000,
  mamba_n_heads: 8,
  mamba_d_state: 16,
  layer_types: ['mamba', 'mamba', 'mamba', 'attention'],
};
/** A small Falcon-H1 (falcon_h1): a Mamba-2 mixer and attention side by side in every layer, then a SwiGLU. */
const FALCON_H1 = {
  model_type: 'falcon_h1',
  hidden_size: 64,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 16,
  intermediate_size: 128,
  vocab_size: 1000,
  mamba_d_ssm: 128,
  mamba_n_heads: 8,
  mamba_d_state: 16,
};
/** A small Qwen3-Next (qwen3_next): three Gated DeltaNet layers, then a gated attention; routed experts. */
const QWEN3_NEXT = {
  model_type: 'qwen3_next',
  hidden_size: 64,
  num_hidden_layers: 4,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 16,
  intermediate_size: 128,
  vocab_size: 1000,
  num_experts: 8,
  num_experts_per_tok: 2,
  moe_intermediate_size: 32,
  shared_expert_intermediate_size: 32,
  linear_num_key_heads: 2,
  linear_num_value_heads: 4,
  linear_key_head_dim: 16,
  linear_value_head_dim: 16,
};
const DELTANET = { type: 'gated_deltanet', key_heads: 2, value_heads: 4, key_head_dim: 8, value_head_dim: 8 };
const SEQ32 = { kind: 'sequence', seq_len: 8, features: 32 };
const hf = (changes) => req({ hf_config: { ...HF_GPT2, ...changes } });
/** @param {number} n depth of text_config nesting */
const hfNested = (n) => {
  /** @type {object} */ let c = { ...HF_GPT2 };
  for (let i = 0; i < n; i++) c = { model_type: 'llava', text_config: c };
  return req({ hf_config: c });
};

/** @type {{group: string, name: string, input: () => string, native?: boolean}[]} */
export const CASES = [
  // Malformed JSON.
  { group: 'malformed JSON', name: 'empty text', input: () => '' },
  { group: 'malformed JSON', name: 'truncated `{"model": `', input: () => '{"model": ' },
  { group: 'malformed JSON', name: 'trailing comma', input: () => '{"model": {"preset": "gpt2"},}' },
  { group: 'malformed JSON', name: 'single quotes', input: () => "{'model': 1}" },
  { group: 'malformed JSON', name: 'comment `/* */`', input: () => '{/* c */ "model": {"preset": "gpt2"}}' },
  { group: 'malformed JSON', name: 'NUL byte inside', input: () => '{"model": {"preset": "gpt2"}}\u0000garbage' },
  { group: 'malformed JSON', name: 'the same garbage after a space', input: () => '{"model": {"preset": "gpt2"}} garbage' },
  { group: 'malformed JSON', name: 'not an object: `[1, 2]`', input: () => '[1, 2]' },
  { group: 'malformed JSON', name: 'duplicate key `model`', input: () => '{"model": {"preset": "gpt2"}, "model": {"preset": "nope"}}' },
  // Deep nesting.
  { group: 'deep nesting', name: '100 nested arrays (whole document)', input: () => nestedArrays(100) },
  { group: 'deep nesting', name: '100 nested objects under `model`', input: () => `{"model": ${nestedObjects(100)}}` },
  { group: 'deep nesting', name: '10,000 nested arrays', input: () => nestedArrays(10000) },
  { group: 'deep nesting', name: '10,000 nested objects under `training`', input: () => `{"model": {"preset": "gpt2"}, "training": ${nestedObjects(10000)}}` },
  { group: 'deep nesting', name: '1,000,000 unclosed `[`', input: () => '['.repeat(1000000) },
  { group: 'deep nesting', name: '9 nested repeats (limit 8)', input: () => {
    /** @type {object} */ let block = { type: 'dense', units: 4 };
    for (let i = 0; i < 9; i++) block = { type: 'repeat', count: 1, layers: [block] };
    return layersModel([block, { type: 'cross_entropy' }]);
  } },
  // Huge numbers.
  { group: 'huge numbers', name: 'batch_size 1e400 (bare token)', input: () => '{"model": {"preset": "gpt2"}, "hardware": ["t4"], "training": {"batch_size": 1e400}}' },
  { group: 'huge numbers', name: 'batch_size 1e308', input: () => train({ batch_size: 1e308 }) },
  { group: 'huge numbers', name: 'batch_size 2^64', input: () => '{"model": {"preset": "gpt2"}, "training": {"batch_size": 18446744073709551616}}' },
  { group: 'huge numbers', name: 'batch_size 1,048,577 (limit + 1)', input: () => train({ batch_size: 1048577 }) },
  { group: 'huge numbers', name: 'batch_size 1,048,576 (the limit)', input: () => train({ batch_size: 1048576 }) },
  { group: 'huge numbers', name: 'dataset_size 1e308', input: () => train({ dataset_size: 1e308 }) },
  { group: 'huge numbers', name: 'epochs 1e308', input: () => train({ epochs: 1e308 }) },
  { group: 'huge numbers', name: 'seq_len 1e9', input: () => train({ seq_len: 1e9 }) },
  { group: 'huge numbers', name: 'dense units 2^31 + 1', input: () => layersModel([{ type: 'dense', units: 2 ** 31 + 1 }]) },
  { group: 'huge numbers', name: 'dense units 2^31 after features 2^31 (2^62 weights)', input: () => layersModel([{ type: 'dense', units: 2 ** 31 }], { kind: 'vector', features: 2 ** 31 }) },
  { group: 'huge numbers', name: 'image 16,384 × 1,000 channels (2^40 element limit)', input: () => layersModel([{ type: 'conv2d', filters: 4096, kernel_size: 3 }, { type: 'global_avg_pool' }], { kind: 'image', channels: 1000, image_size: 16384 }) },
  { group: 'huge numbers', name: 'custom peak_tflops.fp32 1e308', input: () => req({ preset: 'gpt2' }, { hardware: [{ ...custom(0), peak_tflops: { fp32: 1e308 } }] }) },
  { group: 'huge numbers', name: 'custom memory_bandwidth_gbs 1e-300', input: () => req({ preset: 'gpt2' }, { hardware: [{ ...custom(0), memory_bandwidth_gbs: 1e-300 }] }) },
  // Zero, negative, fractional sizes.
  { group: 'zero/negative/fractional', name: 'batch_size 0', input: () => train({ batch_size: 0 }) },
  { group: 'zero/negative/fractional', name: 'batch_size -4', input: () => train({ batch_size: -4 }) },
  { group: 'zero/negative/fractional', name: 'batch_size 2.5', input: () => train({ batch_size: 2.5 }) },
  { group: 'zero/negative/fractional', name: 'batch_size 32.0 (integral double)', input: () => '{"model": {"preset": "gpt2"}, "hardware": ["t4"], "training": {"batch_size": 32.0}}' },
  { group: 'zero/negative/fractional', name: 'seq_len 0', input: () => train({ seq_len: 0 }) },
  { group: 'zero/negative/fractional', name: 'image_size -1 (resnet50)', input: () => req({ preset: 'resnet50' }, { training: { image_size: -1 } }) },
  { group: 'zero/negative/fractional', name: 'dataset_size 0', input: () => train({ dataset_size: 0 }) },
  { group: 'zero/negative/fractional', name: 'epochs 0', input: () => train({ epochs: 0 }) },
  { group: 'zero/negative/fractional', name: 'epochs -1', input: () => train({ epochs: -1 }) },
  { group: 'zero/negative/fractional', name: 'epochs 1e-300', input: () => train({ epochs: 1e-300 }) },
  { group: 'zero/negative/fractional', name: 'dense units 0', input: () => layersModel([{ type: 'dense', units: 0 }]) },
  { group: 'zero/negative/fractional', name: 'attention rotary_dim 7 (odd: RoPE turns pairs)', input: () => layersModel([{ type: 'attention', num_heads: 4, rotary_dim: 7 }], { kind: 'sequence', seq_len: 8, features: 32 }) },
  { group: 'zero/negative/fractional', name: 'attention rotary_dim 16 beyond head_dim 8', input: () => layersModel([{ type: 'attention', num_heads: 4, rotary_dim: 16 }], { kind: 'sequence', seq_len: 8, features: 32 }) },
  { group: 'zero/negative/fractional', name: 'gated_deltanet value_heads 3 not a multiple of key_heads 2', input: () => layersModel([{ ...DELTANET, value_heads: 3 }], SEQ32) },
  { group: 'zero/negative/fractional', name: 'gated_deltanet key_head_dim 0', input: () => layersModel([{ ...DELTANET, key_head_dim: 0 }], SEQ32) },
  { group: 'unknown enums', name: 'gated_deltanet with a mamba attribute (state_size)', input: () => layersModel([{ ...DELTANET, state_size: 16 }], SEQ32) },
  { group: 'zero/negative/fractional', name: 'dense units -3', input: () => layersModel([{ type: 'dense', units: -3 }]) },
  { group: 'zero/negative/fractional', name: 'dense units 1.5', input: () => layersModel([{ type: 'dense', units: 1.5 }]) },
  { group: 'zero/negative/fractional', name: 'conv2d kernel larger than the image', input: () => layersModel([{ type: 'conv2d', filters: 4, kernel_size: 9 }], { kind: 'image', channels: 3, image_size: 4 }) },
  { group: 'zero/negative/fractional', name: 'repeat count 0', input: () => layersModel([{ type: 'repeat', count: 0, layers: [{ type: 'dense', units: 4 }] }, { type: 'dense', units: 2 }]) },
  { group: 'zero/negative/fractional', name: 'custom memory_gb 0', input: () => req({ preset: 'gpt2' }, { hardware: [{ ...custom(0), memory_gb: 0 }] }) },
  { group: 'zero/negative/fractional', name: 'custom peak_tflops.fp32 -50', input: () => req({ preset: 'gpt2' }, { hardware: [{ ...custom(0), peak_tflops: { fp32: -50 } }] }) },
  // NaN and Infinity.
  { group: 'NaN/Infinity', name: 'batch_size "NaN" (text)', input: () => train({ batch_size: 'NaN' }) },
  { group: 'NaN/Infinity', name: 'batch_size "Infinity" (text)', input: () => train({ batch_size: 'Infinity' }) },
  { group: 'NaN/Infinity', name: 'batch_size NaN (bare token)', input: () => '{"model": {"preset": "gpt2"}, "training": {"batch_size": NaN}}' },
  { group: 'NaN/Infinity', name: 'epochs Infinity (bare token)', input: () => '{"model": {"preset": "gpt2"}, "training": {"epochs": Infinity}}' },
  { group: 'NaN/Infinity', name: 'epochs -Infinity (bare token)', input: () => '{"model": {"preset": "gpt2"}, "training": {"epochs": -Infinity}}' },
  { group: 'NaN/Infinity', name: 'custom peak_tflops.fp32 "Infinity" (text)', input: () => req({ preset: 'gpt2' }, { hardware: [{ ...custom(0), peak_tflops: { fp32: 'Infinity' } }] }) },
  { group: 'NaN/Infinity', name: 'calibration step_ms "NaN" (text)', input: () => req({ preset: 'gpt2' }, { calibration: { hardware: 't4', step_ms: 'NaN' } }) },
  // Unknown enums.
  { group: 'unknown enums', name: 'precision "fp4"', input: () => train({ precision: 'fp4' }) },
  { group: 'unknown enums', name: 'precision "FP16" (case)', input: () => train({ precision: 'FP16' }) },
  { group: 'unknown enums', name: 'optimizer "lamb"', input: () => train({ optimizer: 'lamb' }) },
  { group: 'unknown enums', name: 'attention "sdpa"', input: () => train({ attention: 'sdpa' }) },
  { group: 'unknown enums', name: 'attention "flash" on Transformer-XL (relative positions)', input: () => req({ preset: 'transformer-xl-base' }, { training: { attention: 'flash' } }) },
  { group: 'unknown enums', name: 'attention "flash2" on Transformer-XL (relative positions)', input: () => req({ preset: 'transformer-xl-base' }, { training: { attention: 'flash2' } }) },
  { group: 'unknown enums', name: 'preset "gpt-7"', input: () => req({ preset: 'gpt-7' }) },
  { group: 'unknown enums', name: 'hardware "h1000"', input: () => JSON.stringify({ model: { preset: 'gpt2' }, hardware: ['h1000'] }) },
  { group: 'unknown enums', name: 'layer type "transformer"', input: () => layersModel([{ type: 'transformer' }]) },
  { group: 'unknown enums', name: 'activation "swish2"', input: () => layersModel([{ type: 'dense', units: 4, activation: 'swish2' }]) },
  { group: 'unknown enums', name: 'input kind "audio"', input: () => layersModel([{ type: 'dense', units: 4 }], { kind: 'audio', features: 4 }) },
  { group: 'unknown enums', name: 'padding "full"', input: () => layersModel([{ type: 'conv2d', filters: 4, kernel_size: 3, padding: 'full' }], { kind: 'image', channels: 3, image_size: 8 }) },
  // Size.
  { group: '100 MB input', name: '100 MiB string value in an unknown field', input: () => `{"model": {"preset": "gpt2"}, "x": "${'a'.repeat(HUNDRED_MB)}"}` },
  { group: '100 MB input', name: '100 MiB of spaces after a good request', input: () => GOOD + ' '.repeat(HUNDRED_MB) },
  { group: '100 MB input', name: '16 MiB − 1 KiB of whitespace, then a good request (under the limit)', input: () => ' '.repeat(16 * 1024 * 1024 - 1024) + GOOD },
  // Graph shape.
  { group: 'cyclic graph', name: 'a layer naming itself as input', input: () => layersModel([{ type: 'dense', name: 'a', units: 4, inputs: ['a'] }, { type: 'cross_entropy' }]) },
  { group: 'cyclic graph', name: 'a layer naming a later layer', input: () => layersModel([{ type: 'dense', name: 'a', units: 4, inputs: ['b'] }, { type: 'dense', name: 'b', units: 4, inputs: ['a'] }, { type: 'cross_entropy' }]) },
  { group: 'cyclic graph', name: 'add reading itself and the input', input: () => layersModel([{ type: 'dense', name: 'd', units: 32 }, { type: 'add', name: 's', inputs: ['s', 'd'] }]) },
  { group: 'cyclic graph', name: 'inputs naming an unknown layer', input: () => layersModel([{ type: 'dense', units: 4, inputs: ['ghost'] }]) },
  { group: 'disconnected graph', name: 'a named branch nobody reads', input: () => layersModel([{ type: 'dense', name: 'side', units: 4096 }, { type: 'dense', name: 'main', units: 10, inputs: ['input'] }, { type: 'cross_entropy' }]) },
  { group: 'disconnected graph', name: 'the same model without the dead branch (for comparison)', input: () => layersModel([{ type: 'dense', name: 'main', units: 10, inputs: ['input'] }, { type: 'cross_entropy' }]) },
  { group: 'disconnected graph', name: 'a parameter layer nobody reads', input: () => layersModel([{ type: 'parameter', name: 'orphan', shape: [1000, 1000] }, { type: 'dense', units: 10, inputs: ['input'] }]) },
  // Text encoding.
  { group: 'non-UTF-8', name: 'lone high surrogate in a JS string (model name)', input: () => req({ ...SMALL_MODEL, name: 'x\uD800y' }) },
  { group: 'non-UTF-8', name: 'lone low surrogate in a JS string (preset id)', input: () => req({ preset: 'gpt2\uDC00' }) },
  { group: 'non-UTF-8', name: 'escaped lone surrogate `"\\ud800"` in the JSON text (model name)', input: () => req(SMALL_MODEL).replace('{"input"', '{"name": "\\ud800", "input"') },
  { group: 'non-UTF-8', name: 'raw bytes FF FE in a model name (native driver, via a file)', native: true, input: () => req({ ...SMALL_MODEL, name: '@@BAD@@' }) },
  { group: 'non-UTF-8', name: 'raw bytes C0 AF (overlong "/") in a preset id (native driver)', native: true, input: () => req({ preset: 'gpt2@@OVERLONG@@' }) },
  // Counts.
  { group: 'many layers', name: 'repeat 9,998 dense + cross_entropy (10,000 layers)', input: () => layersModel([{ type: 'repeat', count: 9998, layers: [{ type: 'dense', units: 32 }] }, { type: 'dense', units: 10 }, { type: 'cross_entropy' }]) },
  { group: 'many layers', name: 'repeat 10,000 dense + 2 (10,002 layers)', input: () => layersModel([{ type: 'repeat', count: 10000, layers: [{ type: 'dense', units: 32 }] }, { type: 'dense', units: 10 }, { type: 'cross_entropy' }]) },
  { group: 'many layers', name: 'nested repeats 1,000^3 (10^9 layers)', input: () => layersModel([{ type: 'repeat', count: 1000, layers: [{ type: 'repeat', count: 1000, layers: [{ type: 'repeat', count: 1000, layers: [{ type: 'dense', units: 32 }] }] }] }]) },
  { group: 'many layers', name: 'repeat count 2^53', input: () => layersModel([{ type: 'repeat', count: 2 ** 53, layers: [{ type: 'dense', units: 32 }] }]) },
  { group: 'many accelerators', name: '64 accelerators (the limit), mixed catalogue and custom', input: () => JSON.stringify({ model: { preset: 'gpt2' }, hardware: Array.from({ length: 64 }, (_, i) => (i % 2 ? 'h100-sxm' : custom(i))) }) },
  { group: 'many accelerators', name: '65 accelerators', input: () => JSON.stringify({ model: { preset: 'gpt2' }, hardware: Array.from({ length: 65 }, () => 't4') }) },
  { group: 'many accelerators', name: '100,000 accelerators', input: () => JSON.stringify({ model: { preset: 'gpt2' }, hardware: Array.from({ length: 100000 }, () => 't4') }) },
  { group: 'many accelerators', name: '64 × llama-2-70b (largest preset) on all of the catalogue', input: () => JSON.stringify({ model: { preset: 'llama-2-70b' }, training: { precision: 'bf16' }, hardware: Array.from({ length: 64 }, () => 'h100-sxm') }) },
  // Model formats: the same kinds of bad input, in each format's own fields.
  { group: 'ONNX: malformed', name: 'base64 of random garbage (4 KiB)', input: () => req({ onnx_base64: Buffer.from(pseudoRandomBytes(4096)).toString('base64') }) },
  { group: 'ONNX: malformed', name: 'not base64 at all (`!!!`)', input: () => req({ onnx_base64: '!!!not base64!!!' }) },
  { group: 'ONNX: malformed', name: 'empty string', input: () => req({ onnx_base64: '' }) },
  { group: 'ONNX: malformed', name: 'protobuf field with a 2^60 length', input: () => req({ onnx_base64: Buffer.from([0x3a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]).toString('base64') }) },
  { group: 'ONNX: malformed', name: 'a good file cut in half', input: () => { const b64 = JSON.parse(onnxMlp()).model.onnx_base64; return req({ onnx_base64: Buffer.from(b64, 'base64').subarray(0, 40).toString('base64') }); } },
  { group: 'ONNX: malformed', name: 'a varint of 11 bytes (0xFF × 10, 0x01)', input: () => req({ onnx_base64: Buffer.from([0x08, ...Array(10).fill(0xff), 0x01]).toString('base64') }) },
  { group: 'ONNX: deep nesting', name: 'graph attribute nested 10,000 deep (an If in an If ...)', input: () => req({ onnx_base64: onnxFile(cat(nestedIfGraph(10000), pb(11, valueInfo('x', [-1, 8])), pb(12, valueInfo('y', [-1, 8])))) }) },
  { group: 'ONNX: huge numbers', name: 'weight dims [2^62, 10]', input: () => req({ onnx_base64: onnxModel({ nodes: [onnxNode('MatMul', ['x', 'w'], ['y'])], inits: [initializer('w', [2n ** 62n, 10])], inputs: [valueInfo('x', [-1, 32])], outputs: [valueInfo('y', [-1, 10])] }) }) },
  { group: 'ONNX: huge numbers', name: 'input dim 2^40', input: () => onnxMlp(10, [], 'y', [-1, 2 ** 40]) },
  { group: 'ONNX: huge numbers', name: 'MatMul to 2^31 units', input: () => onnxMlp(2 ** 31) },
  { group: 'ONNX: zero/negative', name: 'input dim 0', input: () => onnxMlp(10, [], 'y', [-1, 0]) },
  { group: 'ONNX: zero/negative', name: 'weight dims [32, -5]', input: () => onnxMlp(-5) },
  { group: 'ONNX: zero/negative', name: 'Conv kernel_shape [0, 0], strides [-1, -1]', input: () => req({ onnx_base64: onnxModel({ nodes: [onnxNode('Conv', ['x', 'k'], ['y'], [attrInts('kernel_shape', [0, 0]), attrInts('strides', [-1, -1])])], inits: [initializer('k', [4, 3, 0, 0])], inputs: [valueInfo('x', [-1, 3, 8, 8])], outputs: [valueInfo('y', [-1, 4, 8, 8])] }) }) },
  { group: 'ONNX: NaN/Infinity', name: 'LeakyRelu alpha NaN, then Gemm alpha Infinity', input: () => req({ onnx_base64: onnxModel({ nodes: [onnxNode('MatMul', ['x', 'w'], ['y']), onnxNode('LeakyRelu', ['y'], ['z'], [attrFloat('alpha', NaN)]), onnxNode('Gemm', ['z', 'w2'], ['o'], [attrFloat('alpha', Infinity)])], inits: [initializer('w', [32, 10]), initializer('w2', [10, 4])], inputs: [valueInfo('x', [-1, 32])], outputs: [valueInfo('o', [-1, 4])] }) }) },
  { group: 'ONNX: unknown enums', name: 'operator "FrobnicateV9" (costed as elementwise, with a warning)', input: () => onnxMlp(10, [onnxNode('FrobnicateV9', ['y'], ['z'])], 'z') },
  { group: 'ONNX: unknown enums', name: 'tensor elem_type 999 on the input', input: () => req({ onnx_base64: onnxModel({ nodes: [onnxNode('MatMul', ['x', 'w'], ['y'])], inits: [initializer('w', [32, 10])], inputs: [valueInfo('x', [-1, 32], 999)], outputs: [valueInfo('y', [-1, 10])] }) }) },
  { group: 'ONNX: 100 MB input', name: '100 MiB of base64 (75 MiB decoded)', input: () => req({ onnx_base64: 'A'.repeat(HUNDRED_MB) }) },
  { group: 'ONNX: 100 MB input', name: 'over 12 MiB decoded (13 MiB of zeros)', input: () => req({ onnx_base64: Buffer.alloc(13 * 1024 * 1024).toString('base64') }) },
  { group: 'ONNX: cyclic graph', name: 'a node reading its own output', input: () => onnxMlp(10, [onnxNode('Add', ['y', 'z'], ['z'])], 'z') },
  { group: 'ONNX: cyclic graph', name: 'two nodes reading each other, off the path from the input', input: () => onnxMlp(10, [onnxNode('Relu', ['b'], ['a']), onnxNode('Relu', ['a'], ['b'])], 'b') },
  { group: 'ONNX: cyclic graph', name: 'two nodes reading each other, on the path from the input', input: () => onnxMlp(10, [onnxNode('Add', ['y', 'b'], ['a']), onnxNode('Relu', ['a'], ['b'])], 'b') },
  { group: 'ONNX: cyclic graph', name: 'a node reading a tensor nobody makes', input: () => onnxMlp(10, [onnxNode('Add', ['y', 'ghost'], ['z'])], 'z') },
  { group: 'ONNX: disconnected graph', name: 'a branch nobody reads', input: () => onnxMlp(10, [onnxNode('Relu', ['x'], ['dead'])]) },
  { group: 'ONNX: disconnected graph', name: 'graph output that no node makes', input: () => onnxMlp(10, [], 'nowhere') },
  { group: 'ONNX: disconnected graph', name: 'no nodes at all', input: () => req({ onnx_base64: onnxModel({ nodes: [], inputs: [valueInfo('x', [-1, 32])], outputs: [valueInfo('x', [-1, 32])] }) }) },
  { group: 'ONNX: non-UTF-8', name: 'node name and op_type with raw bytes FF FE C0 AF (binary, so through wasm)', input: () => onnxMlp(10, [onnxNode('F\xff\xfe\xc0\xaf', ['y'], ['z'], [], '\xff\xfe')], 'z') },
  { group: 'ONNX: non-UTF-8', name: 'input tensor name with raw bytes FF FE, read by a Reshape with no shape', input: () => req({ onnx_base64: onnxModel({ nodes: [onnxNode('Reshape', ['x\xff', 's'], ['y'], [], 'r')], inputs: [valueInfo('x\xff', [-1, 32])], outputs: [valueInfo('y', [-1, 32])] }) }) },
  { group: 'Keras: malformed', name: 'Keras JSON as malformed text', input: () => req({ keras: '{"class_name": "Sequential", ' }) },
  { group: 'Keras: malformed', name: 'layers is a number', input: () => req({ keras: { class_name: 'Sequential', config: { layers: 7 } } }) },
  { group: 'Keras: malformed', name: 'unknown model class "Frobnicator"', input: () => req({ keras: { class_name: 'Frobnicator', config: {} } }) },
  { group: 'Keras: deep nesting', name: 'Keras text with 10,000 nested arrays', input: () => req({ keras: `{"class_name": "Sequential", "config": {"layers": ${nestedArrays(10000)}}}` }) },
  { group: 'Keras: deep nesting', name: 'a Sequential inside a Sequential (nested model)', input: () => kerasSeq([{ class_name: 'Sequential', config: { name: 'inner', layers: [kl('Dense', { units: 4 })] } }]) },
  { group: 'Keras: huge numbers', name: 'Dense units 1e12', input: () => kerasSeq([kl('Dense', { units: 1e12 })]) },
  { group: 'Keras: huge numbers', name: 'input shape [null, 2^40]', input: () => kerasSeq([kl('Dense', { units: 4 })], [null, 2 ** 40]) },
  { group: 'Keras: zero/negative', name: 'Dense units 0', input: () => kerasSeq([kl('Dense', { units: 0 })]) },
  { group: 'Keras: zero/negative', name: 'Conv2D kernel_size [-3, -3]', input: () => kerasSeq([kl('Conv2D', { filters: 4, kernel_size: [-3, -3], strides: [1, 1], padding: 'valid' })], [null, 8, 8, 3]) },
  { group: 'Keras: zero/negative', name: 'Dropout rate -0.5, Dense units 2.5', input: () => kerasSeq([kl('Dropout', { rate: -0.5 }), kl('Dense', { units: 2.5 })]) },
  { group: 'Keras: NaN/Infinity', name: 'Dense units "NaN" (text)', input: () => kerasSeq([kl('Dense', { units: 'NaN' })]) },
  { group: 'Keras: NaN/Infinity', name: 'units NaN (bare token in Keras text)', input: () => req({ keras: '{"class_name": "Sequential", "config": {"layers": [{"class_name": "Dense", "config": {"units": NaN}}]}}' }) },
  { group: 'Keras: unknown enums', name: 'unknown class "Lambda"', input: () => kerasSeq([kl('Lambda', { name: 'lambda_1' })]) },
  { group: 'Keras: unknown enums', name: 'activation "swish2"', input: () => kerasSeq([kl('Dense', { units: 4, activation: 'swish2' })]) },
  { group: 'Keras: unknown enums', name: 'padding "full"', input: () => kerasSeq([kl('Conv2D', { filters: 4, kernel_size: [3, 3], padding: 'full' })], [null, 8, 8, 3]) },
  { group: 'Keras: 100 MB input', name: '100 MiB layer name', input: () => kerasSeq([kl('Dense', { units: 4, name: 'n'.repeat(HUNDRED_MB) })]) },
  { group: 'Keras: cyclic graph', name: 'a layer reading itself', input: () => kerasFn([['a', 'Dense', { units: 8 }, ['a']]], 'a') },
  { group: 'Keras: cyclic graph', name: 'two layers reading each other', input: () => kerasFn([['a', 'Dense', { units: 8 }, ['b']], ['b', 'Dense', { units: 8 }, ['a']]], 'b') },
  { group: 'Keras: cyclic graph', name: 'a layer reading an unknown layer', input: () => kerasFn([['a', 'Dense', { units: 8 }, ['ghost']]], 'a') },
  { group: 'Keras: disconnected graph', name: 'a branch nobody reads', input: () => kerasFn([['dead', 'Dense', { units: 4096 }, ['in']], ['a', 'Dense', { units: 8 }, ['in']]], 'a') },
  { group: 'Keras: disconnected graph', name: 'output layer that does not exist', input: () => kerasFn([['a', 'Dense', { units: 8 }, ['in']]], 'nowhere') },
  { group: 'Keras: non-UTF-8', name: 'raw bytes FF FE in a layer name (native driver)', native: true, input: () => kerasSeq([kl('Lambda', { name: 'x@@BAD@@' })]) },
  { group: 'Hugging Face: malformed', name: 'hf_config is a string', input: () => req({ hf_config: '{"model_type": "gpt2"' }) },
  { group: 'Hugging Face: malformed', name: 'hf_config is an empty object', input: () => req({ hf_config: {} }) },
  { group: 'Hugging Face: malformed', name: 'n_embd is an array', input: () => hf({ n_embd: [768] }) },
  { group: 'Hugging Face: deep nesting', name: 'text_config nested 100 deep', input: () => hfNested(100) },
  { group: 'Hugging Face: huge numbers', name: 'num_hidden_layers 10^6', input: () => hf({ n_layer: 1000000 }) },
  { group: 'Hugging Face: huge numbers', name: 'n_embd 2^31, vocab 2^31', input: () => hf({ n_embd: 2 ** 31, n_head: 1, vocab_size: 2 ** 31 }) },
  { group: 'Hugging Face: huge numbers', name: 'n_positions 1e300', input: () => hf({ n_positions: 1e300 }) },
  { group: 'Hugging Face: zero/negative', name: 'n_head 0', input: () => hf({ n_head: 0 }) },
  { group: 'Hugging Face: zero/negative', name: 'n_embd 64 with n_head 5 (not divisible)', input: () => hf({ n_head: 5 }) },
  { group: 'Hugging Face: zero/negative', name: 'llama num_key_value_heads -1', input: () => req({ hf_config: { model_type: 'llama', hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: -1, intermediate_size: 128, vocab_size: 1000 } }) },
  { group: 'Hugging Face: NaN/Infinity', name: 'layer_norm_epsilon "NaN", n_embd "Infinity" (text)', input: () => hf({ layer_norm_epsilon: 'NaN', n_embd: 'Infinity' }) },
  { group: 'Hugging Face: unknown enums', name: 'model_type "frobnicator" with the usual fields (refused: they decide no architecture)', input: () => req({ hf_config: { model_type: 'frobnicator', hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, intermediate_size: 256, vocab_size: 1000 } }) },
  { group: 'Hugging Face: unknown enums', name: 'hidden_act "swish2"', input: () => hf({ activation_function: 'swish2' }) },
  { group: 'Hugging Face: zero/negative', name: 'ernie4_5_moe moe_layer_interval 0', input: () => req({ hf_config: { model_type: 'ernie4_5_moe', hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, intermediate_size: 128, moe_intermediate_size: 32, moe_num_experts: 4, moe_k: 2, vocab_size: 1000, moe_layer_interval: 0 } }) },
  { group: 'Hugging Face: unknown enums', name: 'minimax_m2 attn_type_list with a 0 (lightning attention)', input: () => req({ hf_config: { model_type: 'minimax_m2', hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, intermediate_size: 32, num_local_experts: 4, num_experts_per_tok: 2, vocab_size: 1000, attn_type_list: [1, 0] } }) },
  { group: 'Hugging Face: unknown enums', name: 'deepseek_v32 (DeepSeek Sparse Attention: refused, not read as DeepSeek-V3)', input: () => req({ hf_config: { model_type: 'deepseek_v32', hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, vocab_size: 1000, q_lora_rank: 32, kv_lora_rank: 16, qk_nope_head_dim: 16, qk_rope_head_dim: 8, v_head_dim: 16, index_n_heads: 4, index_head_dim: 16, index_topk: 8 } }) },
  { group: 'Hugging Face: unknown enums', name: 'qwen3_next layer_types entry "sliding_attention"', input: () => req({ hf_config: { ...QWEN3_NEXT, layer_types: ['linear_attention', 'sliding_attention', 'linear_attention', 'full_attention'] } }) },
  { group: 'Hugging Face: zero/negative', name: 'qwen3_next linear_num_value_heads 3 not a multiple of the key heads', input: () => req({ hf_config: { ...QWEN3_NEXT, linear_num_value_heads: 3 } }) },
  { group: 'Hugging Face: zero/negative', name: 'qwen3_5_moe vision out_hidden_size not the text width', input: () => req({ hf_config: { model_type: 'qwen3_5_moe', text_config: { ...QWEN3_NEXT, model_type: 'qwen3_5_moe_text' }, vision_config: { depth: 2, hidden_size: 32, intermediate_size: 64, num_heads: 2, out_hidden_size: 48 } } }) },
  { group: 'Hugging Face: unknown enums', name: 'granitemoehybrid position_embedding_type "alibi"', input: () => req({ hf_config: { ...GRANITE_HYBRID, position_embedding_type: 'alibi' } }) },
  { group: 'Hugging Face: unknown enums', name: 'granitemoehybrid layer_types entry "mlp"', input: () => req({ hf_config: { ...GRANITE_HYBRID, layer_types: ['mamba', 'mlp', 'mamba', 'attention'] } }) },
  { group: 'Hugging Face: zero/negative', name: 'granitemoehybrid layer_types one short of num_hidden_layers', input: () => req({ hf_config: { ...GRANITE_HYBRID, layer_types: ['mamba', 'mamba', 'attention'] } }) },
  { group: 'Hugging Face: zero/negative', name: 'falcon_h1 mamba_n_heads 6 does not divide mamba_d_ssm', input: () => req({ hf_config: { ...FALCON_H1, mamba_n_heads: 6 } }) },
  { group: 'Hugging Face: malformed', name: 'falcon_h1 ssm_multipliers of 2 numbers (5 expected)', input: () => req({ hf_config: { ...FALCON_H1, ssm_multipliers: [1, 1] } }) },
  { group: 'Hugging Face: zero/negative', name: 'falcon_h1 tensor parallel 2 over one Mamba group', input: () => req({ hf_config: FALCON_H1 }, { training: { batch_size: 8, seq_len: 64 }, parallel: { tensor: 2 } }) },
  { group: 'unknown enums', name: 'mamba version 1 with gated_norm (a version 2 attribute)', input: () => layersModel([{ type: 'mamba', name: 'm', version: 1, inner: 64, state_size: 16, dt_rank: 4, gated_norm: false }], SEQ32) },
  { group: 'unknown enums', name: 'mamba version 1 with chunk_size (a version 2 attribute)', input: () => layersModel([{ type: 'mamba', name: 'm', version: 1, inner: 64, state_size: 16, dt_rank: 4, chunk_size: 64 }], SEQ32) },
  { group: 'zero/negative', name: 'mamba version 2 chunk_size 0', input: () => layersModel([{ type: 'mamba', name: 'm', version: 2, inner: 64, state_size: 16, num_heads: 4, chunk_size: 0 }], SEQ32) },
  { group: 'Hugging Face: zero/negative', name: 'falcon_h1 mamba_chunk_size 0', input: () => req({ hf_config: { ...FALCON_H1, mamba_chunk_size: 0 } }) },
  { group: 'Hugging Face: zero/negative', name: 'qwen3_vl without out_hidden_size (3584) under a 64-wide text model', input: () => req({ hf_config: { model_type: 'qwen3_vl', text_config: { model_type: 'qwen3_vl_text', hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, intermediate_size: 128, vocab_size: 1000 }, vision_config: { depth: 2, hidden_size: 32, intermediate_size: 64, num_heads: 2 } } }) },
  { group: 'Hugging Face: unknown enums', name: 't5 feed_forward_proj "gated-frob"', input: () => req({ hf_config: { model_type: 't5', d_model: 64, num_layers: 2, num_heads: 4, d_ff: 128, d_kv: 16, vocab_size: 1000, feed_forward_proj: 'gated-frob' } }) },
  { group: 'Hugging Face: 100 MB input', name: '100 MiB architectures string', input: () => hf({ architectures: ['A'.repeat(HUNDRED_MB)] }) },
  { group: 'Hugging Face: non-UTF-8', name: 'raw bytes FF FE in model_type (native driver)', native: true, input: () => req({ hf_config: { ...HF_GPT2, model_type: 'gpt@@BAD@@' } }) },
  { group: 'Hugging Face: malformed', name: 'architectures is a string, not a list', input: () => hf({ architectures: 'GPT2LMHeadModel' }) },
  { group: 'Hugging Face: unknown enums', name: 'architectures ["GPT2ForFrobnication"] (LM head, warned)', input: () => hf({ architectures: ['GPT2ForFrobnication'] }) },
  { group: 'Hugging Face: zero/negative', name: 'num_labels 0 on GPT2ForSequenceClassification', input: () => hf({ architectures: ['GPT2ForSequenceClassification'], num_labels: 0 }) },
  { group: 'parallel', name: 'parallel is a list', input: () => par([]) },
  { group: 'parallel', name: 'expert 0', input: () => par({ expert: 0 }) },
  { group: 'parallel', name: 'expert 2 on a network without experts', input: () => par({ data: 2, expert: 2 }) },
  { group: 'parallel', name: 'expert 4 does not divide tensor x context x data = 2', input: () => par({ data: 2, expert: 4 }) },
  { group: 'parallel', name: 'MoE: expert 8 does not divide tensor x context x data = 2 x 1 x 2', input: () => moe({ data: 2, tensor: 2, sequence_parallel: true, expert: 8 }) },
  { group: 'parallel', name: 'MoE: expert 2 beside tensor 2 without sequence_parallel', input: () => moe({ data: 2, tensor: 2, expert: 2 }) },
  { group: 'parallel', name: 'overlap_param_gather at zero_stage 0 (nothing gathered)', input: () => par({ data: 2, overlap_param_gather: true }) },
  { group: 'parallel', name: 'tensor_overlap at tensor 2 without sequence_parallel', input: () => par({ tensor: 2, tensor_overlap: true }) },
  { group: 'parallel', name: 'MoE: expert_overlap on pipeline 2 without virtual stages', input: () => moe({ data: 2, pipeline: 2, expert: 2, expert_overlap: true }) },
  { group: 'parallel', name: 'expert_overlap "yes" (not a boolean)', input: () => par({ expert_overlap: 'yes' }) },
  { group: 'parallel', name: 'expert_dispatch hierarchical without expert parallelism', input: () => par({ data: 2, expert_dispatch: 'hierarchical' }) },
  { group: 'parallel', name: 'MoE: expert_dispatch "deepep" (not a dispatch: alltoall or hierarchical)', input: () => moe({ data: 2, expert: 2, expert_dispatch: 'deepep' }) },
  { group: 'parallel', name: 'gpus 6 with tensor 4 (not a multiple)', input: () => par({ gpus: 6, tensor: 4 }) },
  { group: 'parallel', name: 'tensor 0', input: () => par({ tensor: 0 }) },
  { group: 'parallel', name: 'tensor 5 (does not divide 12 heads)', input: () => par({ tensor: 5 }) },
  { group: 'parallel', name: 'pipeline 1000 (more stages than layers)', input: () => par({ pipeline: 1000 }) },
  { group: 'parallel', name: 'gpus 2^40', input: () => par({ gpus: 2 ** 40 }) },
  { group: 'parallel', name: 'data x micro_batch_size x micro_batches contradicts batch_size', input: () => par({ data: 2, micro_batch_size: 3, micro_batches: 3 }) },
  { group: 'parallel', name: 'zero_stage 5', input: () => par({ zero_stage: 5 }) },
  { group: 'parallel', name: 'fsdp true with zero_stage 1', input: () => par({ fsdp: true, zero_stage: 1 }) },
  { group: 'parallel', name: 'recompute "partial"', input: () => par({ recompute: 'partial' }) },
  { group: 'parallel', name: 'sequence_parallel "yes"', input: () => par({ sequence_parallel: 'yes' }) },
  { group: 'parallel', name: 'sequence_parallel with tensor 4 and seq_len 1022 (not divisible)', input: () => par({ tensor: 4, sequence_parallel: true }, 1022) },
  { group: 'parallel', name: 'inter_node bandwidth_gbs -5', input: () => par({ gpus: 8, gpus_per_node: 4, inter_node: { bandwidth_gbs: -5 } }) },
  { group: 'parallel', name: 'intra_node latency_us "NaN" (text)', input: () => par({ gpus: 2, intra_node: { latency_us: 'NaN' } }) },
  { group: 'parallel', name: 'recompute_every 2 with recompute "selective"', input: () => par({ recompute: 'selective', recompute_every: 2 }) },
  { group: 'parallel', name: 'recompute_every 13 with recompute "full" (12 blocks)', input: () => par({ recompute: 'full', recompute_every: 13 }) },
  { group: 'parallel', name: 'recompute_every 0', input: () => par({ recompute: 'full', recompute_every: 0 }) },
  { group: 'parallel', name: 'recompute_modules ["mhc"] (not a module the core has)', input: () => par({ recompute: 'selective', recompute_modules: ['core_attn', 'mhc'] }) },
  { group: 'parallel', name: 'recompute_modules with recompute "full"', input: () => par({ recompute: 'full', recompute_modules: ['mlp'] }) },
  { group: 'parallel', name: 'recompute_modules ["mla_up_proj"] on GPT-2 (no MLA)', input: () => par({ recompute: 'selective', recompute_modules: ['mla_up_proj'] }) },
  { group: 'parallel', name: 'accumulate_unsharded with zero_stage 1', input: () => par({ data: 2, zero_stage: 1, micro_batches: 4, accumulate_unsharded: true }) },
  { group: 'parallel', name: 'accumulate_unsharded with fsdp and micro_batches 1', input: () => par({ data: 8, fsdp: true, micro_batches: 1, accumulate_unsharded: true }) },
  { group: 'parallel', name: 'accumulate_unsharded "yes" (text)', input: () => par({ data: 2, fsdp: true, micro_batches: 4, accumulate_unsharded: 'yes' }) },
  { group: 'parallel', name: 'pipeline_embedding_loss without a pipeline', input: () => par({ data: 2, pipeline_embedding_loss: true }) },
  { group: 'parallel', name: 'pipeline_embedding_loss: 12 blocks + 2 over 4 stages', input: () => par({ pipeline: 4, micro_batches: 4, pipeline_embedding_loss: true }) },
  { group: 'parallel', name: 'pipeline_embedding_loss 1 (number)', input: () => par({ pipeline: 2, pipeline_embedding_loss: 1 }) },
  { group: 'parallel', name: 'finetune.frozen_gradients with method full', input: () => train({ batch_size: 8, precision: 'bf16', finetune: { method: 'full', frozen_gradients: true } }) },
  { group: 'parallel', name: 'finetune.frozen_gradients over a qlora nf4 base', input: () => train({ batch_size: 8, precision: 'bf16', finetune: { method: 'qlora', frozen_gradients: true } }) },
  { group: 'parallel', name: 'state_accounting "autocast" with precision fp32', input: () => req({ preset: 'gpt2' }, { training: { batch_size: 8, precision: 'fp32', state_accounting: 'autocast' } }) },
  { group: 'parallel', name: 'state_accounting "fsdp" on 8 data ranks with zero_stage 1', input: () => req({ preset: 'gpt2' }, { training: { batch_size: 8, precision: 'bf16', state_accounting: 'fsdp' }, parallel: { data: 8, zero_stage: 1 } }) },
  { group: 'parallel', name: 'state_accounting "megatron" with master_weights bf16', input: () => req({ preset: 'gpt2' }, { training: { batch_size: 8, precision: 'bf16', master_weights: 'bf16', state_accounting: 'megatron' } }) },
  { group: 'parallel', name: 'state_accounting "apex"', input: () => req({ preset: 'gpt2' }, { training: { batch_size: 8, state_accounting: 'apex' } }) },
  { group: 'parallel', name: 'virtual_stages 0', input: () => par({ virtual_stages: 0 }) },
  { group: 'parallel', name: 'virtual_stages 2 without a pipeline', input: () => par({ virtual_stages: 2 }) },
  { group: 'parallel', name: 'virtual_stages 2 with micro_batches 2 over pipeline 4 (not a multiple)', input: () => par({ pipeline: 4, virtual_stages: 2, micro_batches: 2 }) },
  { group: 'parallel', name: 'virtual_stages 2 over pipeline 4 (3 blocks per stage)', input: () => par({ pipeline: 4, virtual_stages: 2, micro_batches: 8 }) },
  { group: 'training', name: 'input_rate 0 (samples per second)', input: () => train({ input_rate: 0 }) },
  { group: 'training', name: 'input_rate 1e12 (above 10^9)', input: () => train({ input_rate: 1e12 }) },
  { group: 'training', name: 'input_rate "fast" (text)', input: () => train({ input_rate: 'fast' }) },
  { group: 'training', name: 'cuda_graphs "yes" (text)', input: () => train({ cuda_graphs: 'yes' }) },
  { group: 'training', name: 'cuda_graphs 1 (a number)', input: () => train({ cuda_graphs: 1 }) },
  { group: 'fp8', name: 'fp8_recipe with precision bf16', input: () => train({ precision: 'bf16', fp8_recipe: 'delayed' }) },
  { group: 'fp8', name: 'fp8_recipe "tensorwise"', input: () => train({ precision: 'fp8', fp8_recipe: 'tensorwise' }) },
  { group: 'fp8', name: 'fp8_recipe mxfp8 on an H100', input: () => req({ preset: 'gpt2' }, { hardware: ['h100-sxm'], training: { precision: 'fp8', fp8_recipe: 'mxfp8' } }) },
  { group: 'fp8', name: 'fp8_recipe blockwise on an L40S', input: () => req({ preset: 'gpt2' }, { hardware: ['l40s'], training: { precision: 'fp8', fp8_recipe: 'blockwise' } }) },
  { group: 'fp8', name: 'fp8_recipe nvfp4 on an H100 (no FP4 tensor cores)', input: () => req({ preset: 'gpt2' }, { hardware: ['h100-sxm'], training: { precision: 'fp8', fp8_recipe: 'nvfp4' } }) },
  { group: 'fp8', name: 'fp8_recipe nvfp4 on an RTX 5090 (FP4, but not compute capability 10.x)', input: () => req({ preset: 'gpt2' }, { hardware: ['rtx-5090'], training: { precision: 'fp8', fp8_recipe: 'nvfp4' } }) },
  { group: 'parallel', name: 'mtp_repeated_layer without mtp_layers', input: () => train({ mtp_repeated_layer: true }) },
  { group: 'fp8', name: 'bf16_layers_at_end with precision bf16', input: () => train({ precision: 'bf16', bf16_layers_at_end: 2 }) },
  { group: 'fp8', name: 'bf16_layers_at_start + _at_end past GPT-2\'s 12 blocks', input: () => train({ precision: 'fp8', bf16_layers_at_start: 6, bf16_layers_at_end: 7 }) },
  { group: 'fp8', name: 'bf16_layers_at_end -1', input: () => train({ precision: 'fp8', bf16_layers_at_end: -1 }) },
  { group: 'fp8', name: 'bf16_modules with precision bf16', input: () => train({ precision: 'bf16', bf16_modules: ['*.attn'] }) },
  { group: 'fp8', name: 'bf16_modules naming no layer of GPT-2', input: () => train({ precision: 'fp8', bf16_modules: ['*.attn', 'mtp.*'] }) },
  { group: 'fp8', name: 'bf16_modules as a number', input: () => train({ precision: 'fp8', bf16_modules: 7 }) },
  { group: 'parallel', name: 'context 0', input: () => par({ context: 0 }) },
  { group: 'parallel', name: 'context 3 with seq_len 1024 (does not divide the sequence)', input: () => par({ context: 3 }) },
  { group: 'parallel', name: 'context 4 with seq_len 1020 (2 x context does not divide it)', input: () => par({ context: 4 }, 1020) },
  { group: 'parallel', name: 'context 2 with eager attention (the ring needs a fused kernel)', input: () => par({ context: 2 }) },
  { group: 'parallel', name: 'context 2 with Gated DeltaNet layers (the ring splits attention only)', input: () => req({ hf_config: QWEN3_NEXT }, { training: { batch_size: 8, seq_len: 64, attention: 'flash' }, parallel: { data: 4, context: 2 } }) },
  { group: 'parallel', name: 'tensor 4 over 2 Gated DeltaNet key heads', input: () => req({ hf_config: QWEN3_NEXT }, { training: { batch_size: 8, seq_len: 64 }, parallel: { data: 1, tensor: 4 } }) },
  { group: 'parallel', name: 'context 2 on a network without attention', input: () => req({ preset: 'resnet50' }, { training: { batch_size: 8 }, parallel: { context: 2 } }) },
  { group: 'parallel', name: 'gpus 6 with context 4 (not a multiple of the replica)', input: () => par({ gpus: 6, context: 4 }) },
  { group: 'parallel', name: 'pipeline_layout placing 11 blocks of GPT-2\'s 12', input: () => par({ pipeline: 4, micro_batches: 4, pipeline_layout: 'Et*3|t*3|t*3|t*2L' }) },
  { group: 'parallel', name: 'pipeline_layout with a symbol Megatron does not know ("x")', input: () => par({ pipeline: 2, micro_batches: 2, pipeline_layout: 'Et*6|x*6L' }) },
  { group: 'parallel', name: 'pipeline_layout of 2 chunks over pipeline 4', input: () => par({ pipeline: 4, micro_batches: 4, pipeline_layout: 'Et*6|t*6L' }) },
  { group: 'parallel', name: 'pipeline_layout with the loss first', input: () => par({ pipeline: 2, micro_batches: 2, pipeline_layout: 'Lt*6|t*6E' }) },
  { group: 'parallel', name: 'pipeline_layout with an MTP layer "m" but no training.mtp_layers', input: () => par({ pipeline: 2, micro_batches: 2, pipeline_layout: 'Et*6|t*6mL' }) },
  { group: 'parallel', name: 'pipeline_layout beside pipeline_embedding_loss', input: () => par({ pipeline: 2, micro_batches: 2, pipeline_layout: 'Et*6|t*6L', pipeline_embedding_loss: true }) },
  { group: 'parallel', name: 'pipeline_layout of 16 chunks with virtual_stages 4 over pipeline 2', input: () => par({ pipeline: 2, micro_batches: 2, virtual_stages: 4, pipeline_layout: 'E|(t|)*12L||' }) },
  { group: 'parallel', name: 'pipeline_layout "t*99999999999" (unrolls past any network)', input: () => par({ pipeline: 2, micro_batches: 2, pipeline_layout: 'Et*99999999999|L' }) },
  { group: 'parallel', name: 'pipeline_layout 5000 characters', input: () => par({ pipeline: 2, micro_batches: 2, pipeline_layout: `E${'t'.repeat(4998)}L` }) },
  { group: 'parallel', name: 'pipeline_layout 16 (a number)', input: () => par({ pipeline: 2, micro_batches: 2, pipeline_layout: 16 }) },
  { group: 'parallel', name: 'mtp_layers 1 on ResNet-50 (no tokens)', input: () => req({ preset: 'resnet50' }, { training: { batch_size: 8, mtp_layers: 1 } }) },
  { group: 'parallel', name: 'mtp_layers 65', input: () => train({ batch_size: 8, mtp_layers: 65 }) },
  { group: 'parallel', name: 'mtp_layers "1" (text)', input: () => train({ batch_size: 8, mtp_layers: '1' }) },
  { group: 'parallel', name: 'mtp_layers 1 beside finetune method lora', input: () => train({ batch_size: 8, precision: 'bf16', mtp_layers: 1, finetune: { method: 'lora' } }) },
];

/** GPT-2 (12 heads) on a parallel layout; `seq` sets training.seq_len. @param {unknown} parallel @param {number} [seq] */
function par(parallel, seq = 1024) {
  return req({ preset: 'gpt2' }, { training: { batch_size: 8, seq_len: seq }, parallel });
}

/** Qwen3-30B-A3B (128 experts, 4 KV heads) in BF16 on a parallel layout. @param {unknown} parallel */
function moe(parallel) {
  return req({ preset: 'qwen3-30b-a3b' }, { training: { batch_size: 8, seq_len: 1024, precision: 'bf16' }, parallel });
}

/** Deterministic bytes (so the document does not change between runs). @param {number} n */
function pseudoRandomBytes(n) {
  const out = new Uint8Array(n);
  let x = 0x12345678;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

/** @param {string} s @param {number} n */
const clip = (s, n = 220) => (s.length > n ? `${s.slice(0, n)}…` : s);
/** @param {string} s */
const cell = (s) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ').replace(/[\uD800-\uDFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);

/** Summarises a response text. @param {string} text */
function summarise(text) {
  /** @type {any} */ let r;
  try {
    r = JSON.parse(text);
  } catch {
    return { kind: 'bad', summary: `response is not JSON: ${clip(text, 120)}`, problem: 'response is not JSON' };
  }
  if (r.error) {
    const field = String(r.error.field);
    const message = String(r.error.message);
    const problem = message.startsWith(`${field}: `) ? '' : `message does not start with its field "${field}"`;
    return { kind: 'error', summary: `error \`${field}\`: ${clip(message)}`, problem };
  }
  const res = r.results ?? [];
  const steps = res.map((/** @type {any} */ x) => x.step_ms);
  const finite = steps.every((/** @type {number} */ s) => Number.isFinite(s) && s > 0);
  const first = res[0] ?? {};
  const warnings = (r.warnings ?? []).length ? `; warnings: ${clip(r.warnings.join(' / '), 160)}` : '';
  return {
    kind: 'ok',
    summary: `ok: ${r.model?.layer_count} layers, ${r.model?.parameters} parameters, ${res.length} result(s), first step ${first.step_ms} ms, total ${first.total_s} s, memory ${first.memory_gb} GB${warnings}`,
    problem: finite ? '' : 'a step time is not finite and positive',
  };
}

/** Runs one request text through the native driver, with raw bytes substituted for the markers. @param {string} text */
function runNative(text) {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-bad-'));
  try {
    let bytes = Buffer.from(text, 'utf8');
    /** @param {Buffer} b @param {string} marker @param {number[]} raw */
    const sub = (b, marker, raw) => {
      const i = b.indexOf(marker);
      return i < 0 ? b : Buffer.concat([b.subarray(0, i), Buffer.from(raw), b.subarray(i + marker.length)]);
    };
    bytes = sub(bytes, '@@BAD@@', [0xff, 0xfe]);
    bytes = sub(bytes, '@@OVERLONG@@', [0xc0, 0xaf]);
    const file = join(dir, 'request.json');
    writeFileSync(file, bytes);
    const t0 = performance.now();
    let out;
    try {
      out = execFileSync(NATIVE, [file], { encoding: 'utf8', timeout: 10000 });
    } catch (/** @type {any} */ e) {
      if (e.status === 1 && typeof e.stdout === 'string') out = e.stdout; // an error response exits 1
      else return { ms: performance.now() - t0, crash: `native driver failed: status ${e.status}, signal ${e.signal}` };
    }
    return { ms: performance.now() - t0, text: out.trim() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const write = process.argv.includes('--write');
  let core = await loadNodeCore();
  const goodBefore = core.predict(GOOD);
  if (JSON.parse(goodBefore).error) throw new Error(`the good request fails: ${goodBefore}`);

  /** @type {{group: string, name: string, ms: number, summary: string, problem: string, via: string}[]} */
  const rows = [];
  for (const c of CASES) {
    const text = c.input();
    let ms = 0;
    let summary = '';
    let problem = '';
    if (c.native) {
      if (!existsSync(NATIVE)) {
        rows.push({ group: c.group, name: c.name, ms: 0, summary: 'skipped: native driver not built (npm run build:native)', problem: '', via: 'native' });
        continue;
      }
      const r = runNative(text);
      ms = r.ms; // includes process start-up
      if (r.crash) ({ summary, problem } = { summary: r.crash, problem: r.crash });
      else ({ summary, problem } = summarise(r.text ?? ''));
      rows.push({ group: c.group, name: c.name, ms, summary, problem, via: 'native' });
      continue;
    }
    const t0 = performance.now();
    try {
      const out = core.predict(text);
      ms = performance.now() - t0;
      ({ summary, problem } = summarise(out));
    } catch (/** @type {any} */ e) {
      ms = performance.now() - t0;
      summary = `THREW: ${clip(String(e?.message ?? e), 200)}`;
      problem = 'the wasm module threw (crash)';
    }
    // The module must still answer a good request afterwards (an abort poisons it).
    try {
      const after = JSON.parse(core.predict(GOOD));
      if (after.error || after.results?.[0]?.step_ms !== JSON.parse(goodBefore).results[0].step_ms) {
        problem = [problem, 'a good request afterwards gives a different answer'].filter(Boolean).join('; ');
      }
    } catch (/** @type {any} */ e) {
      problem = [problem, `the module no longer answers: ${clip(String(e?.message ?? e), 120)}`].filter(Boolean).join('; ');
      core = await loadNodeCore();
    }
    if (ms > TIME_LIMIT_MS) problem = [problem, `took ${ms.toFixed(0)} ms (> ${TIME_LIMIT_MS} ms)`].filter(Boolean).join('; ');
    rows.push({ group: c.group, name: c.name, ms, summary, problem, via: 'wasm' });
  }

  const problems = rows.filter((r) => r.problem);
  const table = [
    '| group | input | via | ms | what it gets |',
    '|---|---|---|---:|---|',
    ...rows.map((r) => `| ${cell(r.group)} | ${cell(r.name)} | ${r.via} | ${r.ms.toFixed(1)} | ${cell(r.summary)}${r.problem ? ` **(problem: ${cell(r.problem)})**` : ''} |`),
  ].join('\n');
  console.log(table);
  console.log(`\n${rows.length} inputs, ${problems.length} problem(s); slowest ${Math.max(...rows.map((r) => r.ms)).toFixed(1)} ms`);

  if (write) {
    const date = new Date().toISOString().slice(0, 10);
    const openProblems = problems.length
      ? problems.map((p) => `- **${cell(p.group)} — ${cell(p.name)}** (${p.via}): ${cell(p.problem)}. Gets: ${cell(p.summary)}`).join('\n')
      : 'None found in this run: no input crashed or poisoned the wasm module, none took over a second, and every error message starts with its field.';
    const hundred = rows.filter((r) => /100 MB input/.test(r.group) && /100 MiB/.test(r.name) && r.via === 'wasm').map((r) => r.ms);
    const hundredRange = hundred.length ? `${(Math.min(...hundred) / 1000).toFixed(2)}–${(Math.max(...hundred) / 1000).toFixed(2)} s over ${hundred.length} such inputs` : 'not measured';
    const doc = `# Robustness: bad inputs

Generated by \`npm run bench:robustness\` (\`node scripts/bad-inputs.mjs --write\`) on ${date}, Node ${process.version},
${process.platform}/${process.arch}. Do not edit by hand; change \`scripts/bad-inputs.mjs\` and rerun.

Each input is passed as text to the real wasm module (\`web/cli/node-engine.mjs\` \`loadNodeCore()\`,
\`module.predict(text)\`), except the rows marked \`native\`: raw invalid UTF-8 bytes cannot be put in a
JavaScript string, so those requests are written to a file and given to the native driver
\`build/native/core/prenet_native\` (its time includes starting the process). After every wasm call a good
request (\`gpt2\` on \`t4\`) is run again and must give the same answer, so a call that aborted or corrupted
the module would show. The bar: nothing throws or crashes, nothing takes more than a second
(${TIME_LIMIT_MS} ms), and every error message starts with its field (\`docs/API.md\`).

Every kind of bad input is tried in each model format too (rows "ONNX: …", "Keras: …", "Hugging Face: …"):
malformed, deeply nested, huge, zero or negative, NaN/Infinity, unknown enums, 100 MiB, cyclic or
disconnected graphs, and bytes that are not UTF-8.

The fuzz targets and the property tests (\`tests/core/test_properties.cpp\`, \`tests/js/properties.test.mjs\`)
cover the same ground at random; this table is the readable record. See "Fuzzing and sanitizers" and "The
page" below for the rest of what \`npm test\` checks.

## Documented limits (docs/API.md, docs/MODEL_FORMAT.md)

- request text ≤ 16 MiB; JSON nesting ≤ 64 levels;
- batch size ≤ 1,048,576; sequence length ≤ 1,048,576 (\`docs/MODEL_FORMAT.md\` says 2^20, the same number);
  image size ≤ 16,384;
- at most 10,000 layers after expanding repeats; repeats nest up to 8 deep;
- every tensor dimension ≤ 2^31; at most 2^40 elements per sample in any tensor;
- at most 64 accelerators per request;
- ONNX files at most 12 MiB decoded.

Breaking one is an error naming the field; the rows below show each being enforced.

## Results

${rows.length} inputs, ${problems.length} problem(s); slowest ${Math.max(...rows.map((r) => r.ms)).toFixed(1)} ms.

${table}

## Open problems

Crashes, hangs (over a second), and error messages that do not start with their field:

${openProblems}

## Observations (not failures by the bar above, but worth a decision)

- **Text after a NUL byte is ignored.** \`{"model": {"preset": "gpt2"}}\\u0000garbage\` predicts normally, while
  the same garbage after a space is malformed JSON; the parser stops at the NUL.
- **Duplicate keys: the last one wins** (\`"model"\` given twice uses the second), as in most JSON parsers; no
  warning.
- **Dead branches are costed.** A named layer nobody reads (\`side\`, a 4,096-unit dense layer on the input)
  counts in parameters (135,498 vs 330), step time (0.0755 vs 0.0305 ms on a T4) and memory, with no warning.
  A framework would not run it in the backward pass; a warning naming it would help.
- **Cycles cannot be written**: \`inputs\` may only name *earlier* layers, so a layer naming itself or a later
  layer gets "no earlier layer is named …" (a clear error, but it does not say "cycle").
- **The 12 MiB ONNX limit is shadowed by the 16 MiB request limit**: 12 MiB of base64 is exactly 16 MiB of
  text, so any ONNX file near the limit fails first as \`request: input is … bytes\`.
- **A 100 MiB input is refused by its length, before any copy**: the wasm binding (\`wasm/bindings.cpp\`,
  \`text_call\`) reads the string's UTF-16 length, which never exceeds its UTF-8 size, and answers the core's
  \`oversize_request_json\` without converting the text into wasm memory (embind's copy had taken 1.2–1.8 s
  on this machine): ${hundredRange} in this run. A text under the limit in characters but over it in bytes
  (multi-byte characters) is still copied, and the core counts its bytes.
- **ONNX: nodes off the input's path are not costed, silently.** Two nodes reading each other's output (a
  cycle) but not the input, a branch nobody reads (a \`Relu\` of the input into nothing) and a graph output
  no node makes all give the same answer as the graph without them, with no warning. On the input's path, a
  cycle is an error naming the node ("input … is not produced by any earlier node").
- **ONNX: a dimension of 0 is read as symbolic**: \`[N, 0]\` on the input gets "has a symbolic dimension; give
  training.features" rather than "must be positive".
- **ONNX: element types are not checked** (\`elem_type\` 999 is accepted; only shapes are read).
- **ONNX: names that are not UTF-8** (raw bytes in a node name or operator type) go through the binary file
  to the core unchanged and come back in warnings with U+FFFD in their place: no crash, no invalid JSON.
- **Keras: an output layer that does not exist is ignored** (the network ends at its last layer); a Keras
  branch nobody reads is costed, like the layer list's.
- The learned predictor is not monotone in batch size (see \`tests/js/properties.test.mjs\`): for small
  models its step time can fall by up to ~8% when the batch doubles, and be lower at batch 512 than at 1.

## Fuzzing and sanitizers (\`npm test\`)

- \`npm run test:fuzz\` (\`tests/fuzz/run.sh --smoke\`): libFuzzer (clang 14, \`-fsanitize=fuzzer,address,undefined\`)
  for 30 s per target from a fixed seed, over six targets: \`request\` (the whole roofline path, text in,
  JSON out), \`learned\` (the learned path: \`learned_prepare\`, every feature row finite, \`learned_finish\`),
  and each model parser: \`layer_list\`, \`hf_config\`, \`keras\`, \`onnx\` (raw file bytes). Seeds come from the
  tests' material (\`tests/fuzz/make_seeds.cpp\`); inputs that once failed are replayed first from
  \`tests/fuzz/regressions/<target>/\`. Longer runs on demand: \`npm run fuzz -- 600\` (every target, 10 min
  each) or \`npm run fuzz -- 600 onnx\`.
- \`npm run test:sanitize\` (\`SANITIZE=1 scripts/test-native.sh\`): the core's Catch2 tests built with clang 14's
  AddressSanitizer and UBSan (\`-fsanitize=address,undefined -fno-sanitize-recover=all\`, LeakSanitizer on)
  in \`build/native-asan\`; any report fails the run. The trainer's tests are left out of \`npm test\` for
  time (\`SANITIZE_TRAINER=1\` adds them).

## The page

\`tests/browser/robustness.test.mjs\` pastes pathological configs into the served page (engine in a Web
Worker) and records every main-thread task over 50 ms (Long Tasks API) until the page shows the outcome; the
bar is no task over 200 ms after the paste's own. Its diagnostics print the numbers of each run.

- **A 100 MiB paste is refused at the paste** (\`config: the pasted text is 100.0 MiB or more; …16 MiB\`), before
  it reaches the box: Chromium's \`<textarea>\` itself crashes the tab at about 100 MiB of text (an empty page
  with one textarea does too), so the page must not insert it. Dropped text and files over 16 MiB are
  refused the same way.
- **10,000 layers** (the limit) are computed with the learned predictors in the worker; no main-thread task
  over the bar. JSON nested 100,000 deep and 10^9 layers by nested repeats are refused within tens of ms.
- **A config of several MiB under the limit is held, not shown**: Chromium lays out a textarea's text on the
  page's thread (measured: about 1.8 ms per KiB of pretty-printed JSON, 3–4 s for 15 MiB), so a config over
  64 KiB never enters the box: the page keeps the text, shows its size and kind in the box's place, and
  computes it in the worker (15 MiB paste: no main-thread task over 50 ms until the result; docs/UI.md).
`;
    writeFileSync(DOC, doc);
    console.log(`wrote ${DOC}`);
  } else if (problems.length) {
    process.exitCode = 1;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
