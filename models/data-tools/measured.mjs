// The project's own measurements: models/measured/<gpu-id>/ as models/measure/measure_gpu.py writes
// them (meta.json plus gemm, conv, stream and layers CSVs, each optionally gzipped). Rows join the public
// tables under sources named prenet-*; attention, e2e and kernels CSVs are validation data, read by
// web/bench/measured.mjs, not training rows.

import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parseCsvObjects } from './csv.mjs';
import { parseDim, parseTime } from './table.mjs';

/** @typedef {import('./csv.mjs').CsvRecord} CsvRecord */
/** @typedef {{path: string, header: string[], records: CsvRecord[]}} MeasuredFile */
/** @typedef {import('./table.mjs').Table} Table */
/** @typedef {{gemm: Table, conv: Table, elementwise: Table, normalization: Table, layers_dense: Table, layers_conv: Table}} Tables */

/**
 * The cell of `column` (the readers check the header first, so a missing one reads as empty).
 * @param {CsvRecord} rec
 * @param {string} column
 */
const get = (rec, column) => rec[column] ?? '';

/** Precisions measure_gpu.py writes; each is a catalogue precision key. */
const PRECISIONS = new Set(['fp32', 'tf32', 'bf16', 'fp16']);
const GEMM_SOURCES = new Set(['prenet-linear', 'prenet-bmm', 'prenet-gemm']);
/** @type {Record<string, number>} Tensors read by each elementwise op (as the NeuSight table counts them). */
const ELEMENTWISE_INPUTS = { add: 2, mul: 2, div: 2, pow: 2, relu: 1, gelu: 1, tanh: 1 };
const NORMALIZATION_OPS = new Set(['layernorm', 'softmax']);
const ACTIVATIONS = new Set(['none', 'relu', 'tanh', 'sigmoid']);
const LAYER_OPTIMIZERS = new Set(['none', 'sgd', 'adam']);

/**
 * Records of <dir>/<stem>.csv or <stem>.csv.gz, or null when neither exists.
 * @param {string} dir
 * @param {string} stem
 * @returns {MeasuredFile | null}
 */
export function readMeasuredCsv(dir, stem) {
  const plain = join(dir, `${stem}.csv`);
  const packed = `${plain}.gz`;
  const path = existsSync(plain) ? plain : existsSync(packed) ? packed : null;
  if (!path) return null;
  const text = path.endsWith('.gz') ? gunzipSync(readFileSync(path)).toString('utf8') : readFileSync(path, 'utf8');
  return { path, ...parseCsvObjects(text, path) };
}

/**
 * The measured GPU folders under `root` (each named by its catalogue id), sorted; none when root is absent.
 * @param {string} root
 */
export function measuredFolders(root) {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((name) => statSync(join(root, name)).isDirectory())
    .sort()
    .map((name) => ({ gpu: name, dir: join(root, name) }));
}

/**
 * @param {MeasuredFile} file
 * @param {string[]} columns
 */
function requireColumns(file, columns) {
  for (const c of columns) {
    if (!file.header.includes(c)) throw new Error(`${file.path}: column ${c} missing`);
  }
}

/**
 * Integer cells of `rec` named in `columns`, or the name of the first that is not a positive integer.
 * @param {CsvRecord} rec
 * @param {string[]} columns
 * @param {string[]} [zeroAllowed] columns that may be 0
 * @returns {{bad: string, value?: undefined} | {value: Record<string, number>, bad?: undefined}}
 */
function dims(rec, columns, zeroAllowed = []) {
  /** @type {Record<string, number>} */
  const out = {};
  for (const c of columns) {
    const v = parseDim(get(rec, c));
    if (v === null || (v === 0 && !zeroAllowed.includes(c))) return { bad: `missing, zero or non-integer ${c}` };
    out[c] = v;
  }
  return { value: out };
}

/**
 * Checks the row's gpu and precision and parses `timeColumn`; returns the time or null after counting a skip.
 * Throws when the row names another GPU than its folder (a mix-up, not a bad measurement).
 * @param {Table} table
 * @param {string} source
 * @param {string} gpu
 * @param {CsvRecord} rec
 * @param {MeasuredFile} file
 * @param {string} timeColumn
 * @returns {number | null}
 */
function common(table, source, gpu, rec, file, timeColumn) {
  if (get(rec, 'gpu') !== gpu) throw new Error(`${file.path}:${rec.__line}: gpu "${get(rec, 'gpu')}" in the folder of ${gpu}`);
  table.countRaw(source, gpu);
  if (!PRECISIONS.has(get(rec, 'precision'))) {
    table.skip(source, gpu, `precision ${get(rec, 'precision')} is not a catalogue key`);
    return null;
  }
  const t = parseTime(get(rec, timeColumn));
  if (t.reason !== undefined) {
    table.skip(source, gpu, t.reason);
    return null;
  }
  return t.value ?? null;
}

/** @typedef {(file: MeasuredFile, gpu: string, tables: Tables) => void} AddRows */

/** @type {AddRows} */
function addGemm(file, gpu, tables) {
  requireColumns(file, ['source', 'gpu', 'precision', 'batch', 'm', 'n', 'k', 'trans_a', 'trans_b', 'time_ms']);
  for (const rec of file.records) {
    if (!GEMM_SOURCES.has(get(rec, 'source'))) throw new Error(`${file.path}:${rec.__line}: unknown source "${get(rec, 'source')}"`);
    const ms = common(tables.gemm, get(rec, 'source'), gpu, rec, file, 'time_ms');
    if (ms === null) continue;
    const d = dims(rec, ['batch', 'm', 'n', 'k', 'trans_a', 'trans_b'], ['trans_a', 'trans_b']);
    if (d.bad) {
      tables.gemm.skip(get(rec, 'source'), gpu, d.bad);
      continue;
    }
    tables.gemm.add({ source: get(rec, 'source'), gpu, precision: get(rec, 'precision'), ...d.value, time_ms: ms });
  }
}

/** @type {AddRows} */
function addConv(file, gpu, tables) {
  const cols = ['batch', 'c_in', 'c_out', 'kernel_h', 'kernel_w', 'in_h', 'in_w', 'stride_h', 'stride_w', 'pad_h', 'pad_w'];
  requireColumns(file, ['source', 'gpu', 'precision', 'direction', ...cols, 'time_ms']);
  for (const rec of file.records) {
    const source = 'prenet-conv';
    const ms = common(tables.conv, source, gpu, rec, file, 'time_ms');
    if (ms === null) continue;
    if (!['fwd', 'bwd_data', 'bwd_filter'].includes(get(rec, 'direction'))) throw new Error(`${file.path}:${rec.__line}: unknown direction "${get(rec, 'direction')}"`);
    const d = dims(rec, cols, ['pad_h', 'pad_w']);
    if (d.bad) {
      tables.conv.skip(source, gpu, d.bad);
      continue;
    }
    tables.conv.add({ source, gpu, precision: get(rec, 'precision'), direction: get(rec, 'direction'), ...d.value, time_ms: ms });
  }
}

/** @type {AddRows} */
function addStream(file, gpu, tables) {
  requireColumns(file, ['gpu', 'precision', 'table', 'op', 'elements', 'rows', 'cols', 'time_ms']);
  const source = 'prenet';
  for (const rec of file.records) {
    if (get(rec, 'table') === 'elementwise') {
      const inputs = ELEMENTWISE_INPUTS[get(rec, 'op')];
      if (!inputs) throw new Error(`${file.path}:${rec.__line}: unknown elementwise op "${get(rec, 'op')}"`);
      const ms = common(tables.elementwise, source, gpu, rec, file, 'time_ms');
      if (ms === null) continue;
      const d = dims(rec, ['elements']);
      if (d.bad) tables.elementwise.skip(source, gpu, d.bad);
      else tables.elementwise.add({ source, gpu, precision: get(rec, 'precision'), op: get(rec, 'op'), ...d.value, inputs, time_ms: ms });
    } else if (get(rec, 'table') === 'normalization') {
      if (!NORMALIZATION_OPS.has(get(rec, 'op'))) throw new Error(`${file.path}:${rec.__line}: unknown normalization op "${get(rec, 'op')}"`);
      const ms = common(tables.normalization, source, gpu, rec, file, 'time_ms');
      if (ms === null) continue;
      const d = dims(rec, ['rows', 'cols']);
      if (d.bad) tables.normalization.skip(source, gpu, d.bad);
      else tables.normalization.add({ source, gpu, precision: get(rec, 'precision'), op: get(rec, 'op'), ...d.value, time_ms: ms });
    } else {
      throw new Error(`${file.path}:${rec.__line}: unknown table "${get(rec, 'table')}"`);
    }
  }
}

/**
 * A forward-only row keeps forward_ms (under no_grad, as Justus et al.'s forward); a training row its whole step.
 * @type {AddRows}
 */
function addLayers(file, gpu, tables) {
  requireColumns(file, ['gpu', 'precision', 'layer', 'activation', 'batch', 'optimizer', 'forward_ms', 'step_ms']);
  const source = 'prenet-layer';
  for (const rec of file.records) {
    const table = get(rec, 'layer') === 'dense' ? tables.layers_dense : get(rec, 'layer') === 'conv' ? tables.layers_conv : null;
    if (!table) throw new Error(`${file.path}:${rec.__line}: unknown layer "${get(rec, 'layer')}"`);
    if (!ACTIVATIONS.has(get(rec, 'activation'))) throw new Error(`${file.path}:${rec.__line}: unknown activation "${get(rec, 'activation')}"`);
    if (!LAYER_OPTIMIZERS.has(get(rec, 'optimizer'))) throw new Error(`${file.path}:${rec.__line}: unknown optimizer "${get(rec, 'optimizer')}"`);
    const ms = common(table, source, gpu, rec, file, get(rec, 'optimizer') === 'none' ? 'forward_ms' : 'step_ms');
    if (ms === null) continue;
    const base = { source, gpu, precision: get(rec, 'precision'), activation: get(rec, 'activation'), optimizer: get(rec, 'optimizer'), time_ms: ms };
    if (get(rec, 'layer') === 'dense') {
      const d = dims(rec, ['batch', 'd_in', 'd_out']);
      if (d.bad) table.skip(source, gpu, d.bad);
      else table.add({ ...base, ...d.value });
      continue;
    }
    const d = dims(rec, ['batch', 'c_in', 'c_out', 'kernel', 'image_size', 'stride', 'bias'], ['bias']);
    if (d.bad || !['same', 'valid'].includes(get(rec, 'padding'))) table.skip(source, gpu, d.bad ?? `unknown padding "${get(rec, 'padding')}"`);
    else table.add({ ...base, ...d.value, padding: get(rec, 'padding') });
  }
}

/**
 * Adds every measured folder under `root` to the tables. Each folder is named by a catalogue id (checked
 * against `catalogueIds`) and holds meta.json naming the same GPU.
 * @param {string} root models/measured
 * @param {Tables} tables
 * @param {Set<string>} catalogueIds
 * @returns {string[]} the GPUs added
 */
export function buildMeasured(root, tables, catalogueIds) {
  const gpus = [];
  for (const { gpu, dir } of measuredFolders(root)) {
    if (!catalogueIds.has(gpu)) throw new Error(`${dir}: folder name "${gpu}" is not a catalogue id (core/data/hardware.json)`);
    const metaPath = join(dir, 'meta.json');
    if (!existsSync(metaPath)) throw new Error(`${dir}: meta.json missing (what was measured, with which software)`);
    const meta = JSON.parse(readFileSync(metaPath, 'utf8'));
    if (meta.gpu !== gpu) throw new Error(`${metaPath}: gpu "${meta.gpu}" in the folder of ${gpu}`);
    /** @type {Record<string, AddRows>} */
    const readers = { gemm: addGemm, conv: addConv, stream: addStream, layers: addLayers };
    for (const [stem, add] of Object.entries(readers)) {
      const file = readMeasuredCsv(dir, stem);
      if (file) add(file, gpu, tables);
    }
    gpus.push(gpu);
  }
  return gpus;
}
