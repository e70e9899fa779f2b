// The ONNX skimmer (web/src/onnx-skim.js) on a model with 43 MB of weights: it reads a few KiB of the file, in
// reads of at most 64 KiB, sends less than 1 MB, and the core gives the same layers and parameters as for the
// same graph written with dims only. Also its errors, and the CLI's --onnx on that file.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { OnnxSkimError, blobReader, skimOnnx, toBase64 } from '../../web/src/onnx-skim.js';
import { CLI, engine, requireBuiltCore } from './helpers.mjs';

before(requireBuiltCore);

// ---- a minimal protobuf writer (ONNX field numbers as in onnx/onnx.proto)

/** @param {number} v */
function varint(v) {
  const out = [];
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return Buffer.from(out);
}
/** @param {number} n @param {number} v */
const int = (n, v) => Buffer.concat([varint(n * 8), varint(v)]);
/** @param {number} n @param {Buffer | string} v */
const bytes = (n, v) => {
  const b = typeof v === 'string' ? Buffer.from(v) : v;
  return Buffer.concat([varint(n * 8 + 2), varint(b.length), b]);
};
/** @param {number} n @param {number[]} values */
const packed = (n, values) => bytes(n, Buffer.concat(values.map(varint)));

/** A TensorProto header: dims, data_type, name (its raw_data is written separately). */
/** @param {string} name @param {number[]} dims @param {number} [type] */
const tensorHead = (name, dims, type = 1) => Buffer.concat([packed(1, dims), int(2, type), bytes(8, name)]);
/** @param {string} name @param {number[]} values */
const int64Tensor = (name, values) => {
  const raw = Buffer.alloc(values.length * 8);
  values.forEach((v, i) => raw.writeBigInt64LE(BigInt(v), i * 8));
  return Buffer.concat([tensorHead(name, [values.length], 7), bytes(9, raw)]);
};
/** @param {string} name @param {number[]} dims @param {number} [elem] */
const valueInfo = (name, dims, elem = 1) => {
  const shape = Buffer.concat(dims.map((d) => bytes(1, d < 0 ? bytes(2, 'N') : int(1, d))));
  return Buffer.concat([bytes(1, name), bytes(2, bytes(1, Buffer.concat([int(1, elem), bytes(2, shape)])))]);
};
/** @param {string} op @param {string[]} ins @param {string[]} outs @param {string} name @param {Buffer[]} [attrs] */
const node = (op, ins, outs, name, attrs = []) =>
  Buffer.concat([...ins.map((i) => bytes(1, i)), ...outs.map((o) => bytes(2, o)), bytes(3, name), bytes(4, op), ...attrs.map((a) => bytes(5, a))]);

const IN = 1024;
const HIDDEN = 10240;
const OUT = 10;
/** The big weight: 1024 x 10240 floats, 41.9 MB. */
const BIG = IN * HIDDEN * 4;
const PARAMETERS = IN * HIDDEN + HIDDEN + HIDDEN * OUT;

/**
 * The graph around the weights. `withWeights`: raw_data for every float initializer (zeros), and a Constant
 * node holding a 1 MiB tensor; otherwise dims only.
 * @param {boolean} withWeights
 * @returns {Array<Buffer | number>} pieces; a number stands for that many zero bytes (written without holding them)
 */
function model(withWeights) {
  /**
   * @param {string} name
   * @param {number[]} dims
   * @returns {Array<Buffer | number>}
   */
  const weight = (name, dims) => {
    const head = tensorHead(name, dims);
    if (!withWeights) return [bytes(5, head)];
    const size = dims.reduce((a, b) => a * b, 1) * 4;
    // initializer field 5 = { head, raw_data field 9 = zeros }
    const rawHead = Buffer.concat([varint(9 * 8 + 2), varint(size)]);
    return [Buffer.concat([varint(5 * 8 + 2), varint(head.length + rawHead.length + size), head, rawHead]), size];
  };
  const constant = withWeights
    ? [bytes(1, node('Constant', [], ['unused'], 'big_constant', [Buffer.concat([bytes(1, 'value'), bytes(5, Buffer.concat([tensorHead('c', [262144]), bytes(9, Buffer.alloc(1 << 20))])), int(20, 4)])]))]
    : [];
  /** @type {Array<Buffer | number>} */
  const graphPieces = [
    bytes(1, node('MatMul', ['x', 'w1'], ['h'], 'fc1')),
    bytes(1, node('Add', ['h', 'b1'], ['hb'], 'fc1_bias')),
    bytes(1, node('Relu', ['hb'], ['hr'], 'relu')),
    bytes(1, node('Reshape', ['hr', 'shape'], ['flat'], 'flatten')),
    bytes(1, node('MatMul', ['flat', 'w2'], ['y'], 'fc2')),
    ...constant,
    bytes(2, 'skim-test'),
    ...weight('w1', [IN, HIDDEN]),
    ...weight('b1', [HIDDEN]),
    ...weight('w2', [HIDDEN, OUT]),
    bytes(5, int64Tensor('shape', [0, HIDDEN])),
    bytes(11, valueInfo('x', [-1, IN])),
    bytes(12, valueInfo('y', [-1, OUT])),
  ];
  let graphLength = 0;
  for (const piece of graphPieces) graphLength += typeof piece === 'number' ? piece : piece.length;
  return [int(1, 8), bytes(2, 'prenet-tests'), Buffer.concat([varint(7 * 8 + 2), varint(graphLength)]), ...graphPieces, bytes(8, Buffer.concat([bytes(1, ''), int(2, 17)]))];
}

/**
 * Writes `pieces` to a new file, zeros in 1 MiB blocks.
 * @param {Array<Buffer | number>} pieces
 */
function writeModel(pieces) {
  const path = join(mkdtempSync(join(tmpdir(), 'prenet-skim-')), 'model.onnx');
  const fd = openSync(path, 'w');
  const zeros = Buffer.alloc(1 << 20);
  for (const piece of pieces) {
    if (typeof piece !== 'number') {
      writeSync(fd, piece);
      continue;
    }
    for (let left = piece; left > 0; left -= zeros.length) writeSync(fd, zeros, 0, Math.min(left, zeros.length));
  }
  closeSync(fd);
  return path;
}

/**
 * Skims the file at `path` through a file handle, counting the bytes read.
 * @param {string} path
 */
async function skimFile(path) {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    let reads = 0;
    let largestRead = 0;
    const result = await skimOnnx(async (offset, length) => {
      reads += 1;
      largestRead = Math.max(largestRead, length);
      const buffer = new Uint8Array(length);
      const { bytesRead } = await handle.read(buffer, 0, length, offset);
      return buffer.subarray(0, bytesRead);
    }, size);
    return { ...result, size, reads, largestRead };
  } finally {
    await handle.close();
  }
}

/** @param {Uint8Array} onnx */
function predictOnnx(onnx) {
  return engine.predict({ model: { onnx_base64: toBase64(onnx) }, training: { batch_size: 8 }, hardware: ['h100-sxm'] });
}

describe('ONNX skimmer', () => {
  const bigPath = writeModel(model(true));
  const small = Buffer.concat(/** @type {Buffer[]} */ (model(false)));

  test('a 43 MB model: a few KiB read, under 1 MB sent, weights never loaded', async () => {
    const skim = await skimFile(bigPath);
    assert.ok(skim.size > BIG, `file is ${skim.size} bytes`);
    assert.ok(skim.bytesRead < 1024 * 1024, `read ${skim.bytesRead} of ${skim.size} bytes`);
    assert.ok(skim.bytesRead < skim.size / 100);
    assert.ok(skim.bytes.length < 1024 * 1024, `skimmed to ${skim.bytes.length} bytes`);
    assert.ok(skim.droppedBytes >= BIG + (1 << 20), 'the weights and the Constant payload are dropped');
    assert.equal(skim.initializers, 4);
    assert.ok(skim.largestRead <= 64 * 1024, `largest single read ${skim.largestRead} bytes`);
    console.log(`skim: ${skim.size} bytes file, ${skim.bytesRead} read in ${skim.reads} reads, ${skim.bytes.length} sent`);
  });

  test('the core reads the skimmed graph as the same graph written without weights', async () => {
    const skim = await skimFile(bigPath);
    const fromSkim = await predictOnnx(skim.bytes);
    const fromDims = await predictOnnx(small);
    assert.equal(fromSkim.model.parameters, PARAMETERS, 'parameters come from the initializer dims');
    assert.deepEqual(fromSkim.layers, fromDims.layers);
    assert.deepEqual(fromSkim.model, fromDims.model);
    // (The Reshape's INT64 shape constant is a small payload the skim keeps; without it the core would refuse
    // the Reshape: "the target shape must be a constant known before run time".)
    assert.equal(fromSkim.warnings.length, 0);
  });

  test('a Blob reader (the page) gives the same bytes as the file reader (the CLI)', async () => {
    const blob = new Blob([small]);
    const viaBlob = await skimOnnx(blobReader(blob), blob.size);
    const path = writeModel([small]);
    const viaFile = await skimFile(path);
    assert.deepEqual(viaBlob.bytes, viaFile.bytes);
    assert.ok(viaBlob.bytes.length <= small.length);
  });

  test('bad files are clear errors', async () => {
    /** @param {Uint8Array} data */
    const skim = (data) => skimOnnx(blobReader(new Blob([/** @type {BlobPart} */ (data)])), data.length);
    await assert.rejects(skim(Buffer.from('{"model_type": "gpt2"}')), (error) => error instanceof OnnxSkimError && /malformed protobuf at byte \d+/.test(error.message));
    await assert.rejects(skim(small.subarray(0, small.length - 30)), /ONNX file: malformed protobuf at byte \d+ \(a length of \d+ runs past the end/);
    await assert.rejects(skim(int(1, 8)), /no graph found/);
    await assert.rejects(skimOnnx(blobReader(new Blob([])), 0), /the file is empty/);
  });

  test('prenet predict --onnx skims the file; --help documents it', () => {
    const run = spawnSync(process.execPath, [CLI, 'predict', '--onnx', bigPath, '--hardware', 'h100-sxm', '--json'], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(run.status, 0, run.stderr);
    const response = JSON.parse(run.stdout);
    assert.equal(response.model.parameters, PARAMETERS);
    assert.equal(response.model.name, 'model');
    const notOnnx = join(mkdtempSync(join(tmpdir(), 'prenet-skim-')), 'config.onnx');
    writeFileSync(notOnnx, '{"hidden_size": 4}');
    const bad = spawnSync(process.execPath, [CLI, 'predict', '--onnx', notOnnx], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /^prenet: --onnx: .*config\.onnx: ONNX file: malformed protobuf/);
  });
});
