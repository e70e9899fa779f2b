// Reads ../shared/data/validation into benchmark cases (rows.mjs does the mapping).

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTrimmedCsvObjects } from '../../../models/data-tools/csv.mjs';
import { classifyE2eRow, dleRowToCase, justusRowToCase, neusightRowToCase, parseJustusFileName } from './rows.mjs';

/**
 * @typedef {import('./rows.mjs').Case} Case
 * @typedef {import('../../src/types').JsonObject} JsonObject
 */

/**
 * @typedef {object} Loaded
 * @property {Case[]} cases in file order: NeuSight labels, DeepLearningExamples, Justus (FW, sgd, adam)
 * @property {string[]} checks one line per e2e-dev.csv row that repeats a row of another file
 * @property {string[]} problems repeated rows whose values disagree
 * @property {string[]} files the files read, relative to the validation folder
 */

/**
 * `--shared DIR` may name the data root (holding validation/) or the validation folder itself.
 * @param {string} dir
 * @returns {string} the validation folder
 */
export function validationDir(dir) {
  if (existsSync(join(dir, 'validation', 'neusight-labels-dev.csv'))) return join(dir, 'validation');
  if (existsSync(join(dir, 'neusight-labels-dev.csv'))) return dir;
  throw new Error(`${dir}: neither it nor ${join(dir, 'validation')} holds neusight-labels-dev.csv (pass --shared DIR)`);
}

/** @param {string} path */
function readText(path) {
  return readFileSync(path, 'utf8');
}

/** Same value up to the rounding of the shorter copy (e2e-dev.csv keeps 3 decimals). */
const SAME_VALUE_ABS = 0.0015;

/**
 * @param {string} dir the validation folder
 * @returns {Loaded}
 */
export function loadCases(dir) {
  /** @type {string[]} */
  const files = [];
  /** @type {Map<string, JsonObject | undefined>} */
  const configs = new Map();
  /** @param {string} model */
  const modelConfig = (model) => {
    if (!configs.has(model)) {
      const path = join(dir, 'models', `${model}.json`);
      if (existsSync(path)) {
        configs.set(model, /** @type {JsonObject} */ (JSON.parse(readText(path))));
        files.push(`models/${model}.json`);
      } else configs.set(model, undefined);
    }
    return configs.get(model);
  };

  const neusightFile = 'neusight-labels-dev.csv';
  files.push(neusightFile);
  const neusightRecords = parseTrimmedCsvObjects(readText(join(dir, neusightFile)), neusightFile);
  const neusight = neusightRecords.map((record, index) => neusightRowToCase(record, modelConfig, `${neusightFile}:${index + 2}`));

  const e2eFile = 'e2e-dev.csv';
  files.push(e2eFile);
  /** @type {Case[]} */
  const dle = [];
  /** @type {string[]} */
  const checks = [];
  /** @type {string[]} */
  const problems = [];
  /** @type {{file: string, records: Record<string, string>[]}[]} */
  const justusFiles = readdirSync(dir)
    .filter((name) => parseJustusFileName(name) !== null)
    .sort((a, b) => justusOrder(a) - justusOrder(b) || a.localeCompare(b))
    .map((file) => {
      files.push(file);
      return { file, records: parseTrimmedCsvObjects(readText(join(dir, file)), file) };
    });

  parseTrimmedCsvObjects(readText(join(dir, e2eFile)), e2eFile).forEach((record, index) => {
    const origin = `${e2eFile}:${index + 2}`;
    const kind = classifyE2eRow(record);
    const value = Number(record.value);
    if (kind.kind === 'dle') {
      dle.push(dleRowToCase(record, origin, presetHfConfig));
    } else if (kind.kind === 'neusight') {
      const twin = neusightRecords.find((other) => other.gpu === kind.gpu && other.config === kind.config);
      const twinValue = Number(twin?.e2e_latency_ms);
      const line = `${origin} (NeuSight ${kind.gpu} ${kind.config}, ${value} ms)`;
      if (!twin) problems.push(`${line}: not in ${neusightFile}`);
      else if (Math.abs(twinValue - value) > SAME_VALUE_ABS) problems.push(`${line}: ${neusightFile} says ${twinValue} ms`);
      else checks.push(`${line} = ${neusightFile} e2e_latency_ms ${twinValue.toFixed(3)}`);
    } else if (kind.kind === 'justus') {
      const twin = justusFiles.find((f) => f.file === kind.file)?.records.find((r) => Number(r.batchsize) === kind.batch);
      const twinValue = Number(twin?.['time per batch (ms)']);
      const line = `${origin} (Justus ${kind.file} batch ${kind.batch}, ${value} ms)`;
      if (!twin) problems.push(`${line}: no such row in the benchmark file`);
      else if (Math.abs(twinValue - value) > SAME_VALUE_ABS) problems.push(`${line}: the file says ${twinValue} ms`);
      else checks.push(`${line} = ${kind.file} time per batch ${twinValue.toFixed(3)}`);
    } else {
      throw new Error(`${origin}: unknown source "${record.source}"`);
    }
  });

  const justus = justusFiles.flatMap(({ file, records }) =>
    records.map((record, index) => justusRowToCase(record, file, `${file}:${index + 2}`)),
  );
  return { cases: [...neusight, ...dle, ...justus], checks, problems, files };
}

/** @param {string} file */
function justusOrder(file) {
  const kind = parseJustusFileName(file)?.kind;
  return kind === 'fw' ? 0 : kind === 'sgd' ? 1 : 2;
}

/**
 * The Hugging Face config a catalogue preset is written as (core/data/presets/<id>.json).
 * @param {string} id
 * @returns {JsonObject}
 */
export function presetHfConfig(id) {
  const preset = JSON.parse(readText(fileURLToPath(new URL(`../../../core/data/presets/${id}.json`, import.meta.url))));
  const config = preset?.model?.hf_config;
  if (!config || typeof config !== 'object') throw new Error(`preset ${id} is not written as a Hugging Face config`);
  return /** @type {JsonObject} */ (config);
}
