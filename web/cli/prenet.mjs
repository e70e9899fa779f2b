#!/usr/bin/env node
// `prenet`: the training-time predictor from the command line. It runs the same engine and wasm
// core as the page (node-engine.mjs), so the numbers are the page's numbers.
//
// Contract: results go to stdout; any failure is one line `prenet: <field>: <message>` on stderr
// and exit status 1.

import { realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { PrenetError } from '../src/engine.js';
import { EXAMPLES, GALLERY, exampleCommand } from '../src/examples.js';
import { formatSI, sig3 } from '../src/format.js';
import { namesText, nestTraining, parseNames } from '../src/training-fields.js';
import { MODEL_FILE_FLAGS, modelFromFlags } from './model-files.mjs';
import { engine } from './node-engine.mjs';

/**
 * @typedef {import('../src/types').CatalogOption} CatalogOption
 * @typedef {import('../src/types').CatalogParallelOption} CatalogParallelOption
 * @typedef {{ options: readonly CatalogOption[], parallel_options: readonly CatalogParallelOption[] }} Tables
 *   the catalogue's tables of training options and parallel fields, whose flags the CLI takes
 */

const USAGE_HEAD = `Usage:
  prenet predict [--request FILE|-] [flags]   predict training time; prints the response JSON
  prenet plan [--request FILE|-] [flags]      search parallel layouts that fit; ranked by time and cost
  prenet hardware [--json]                    list the accelerator catalogue
  prenet presets [--json]                     list the model presets
  prenet --help

Flags for predict (each overrides the same field of --request):
  --request FILE     request JSON (docs/API.md); "-" reads standard input
  --preset ID        model preset, e.g. bert-base (replaces the request's model)
  --onnx FILE        an .onnx model; read in slices and sent without its weights (only the graph
                     structure and tensor shapes), so files of any size work (docs/MODEL_FORMAT.md)
  --keras FILE       a Keras model.to_json() file
  --hf FILE          a Hugging Face config.json
  --hardware A,B     accelerator ids, comma-separated, e.g. a100-sxm4-80gb,h100-sxm
`;

const USAGE_MIDDLE = `  --json             compact one-line JSON (predict) or JSON instead of a table (hardware, presets)

Parallel training (predict; each sets the same field of the request's "parallel"):
`;

const USAGE_TAIL = `
Plan (plan; sets the request's "plan"):
  --max-gpus N       largest job to consider (default 1024)
  --tokens N         training tokens (or --samples N); sets the number of steps
  --samples N
  --top N            layouts listed per ranking (default 10)
  Layouts with tensor > 1 use sequence parallelism wherever the tensor degree divides the sequence.

Examples:
  prenet predict --preset bert-base --hardware a100-sxm4-80gb,h100-sxm --batch 32
  echo '{"model":{"preset":"resnet50"}}' | prenet predict --request - --precision bf16
  prenet predict --onnx model.onnx --seq-len 128 --hardware h100-sxm
  prenet predict --hf config.json --batch 8 --precision bf16
  prenet predict --preset llama-2-7b --hardware h100-sxm --batch 256 --seq-len 4096 --precision bf16 \
    --gpus 64 --tensor 8 --micro-batch-size 1 --zero-stage 1 --recompute selective --sequence-parallel
  prenet plan --preset llama-2-70b --hardware h100-sxm,a100-sxm4-80gb --batch 1024 --seq-len 4096 \
    --precision bf16 --optimizer adamw --tokens 2e12 --max-gpus 1024
`;

/**
 * The page's starting scenarios and examples (web/src/examples.js) as commands, each under a comment with its title.
 * @param {Tables} tables
 */
function exampleUsage(tables) {
  const rows = [...tables.options, ...tables.parallel_options];
  return [...GALLERY, ...EXAMPLES].map((example) => `  # ${example.title}\n  ${exampleCommand(example, rows)}\n`).join('');
}

/** @param {readonly string[]} values "a or b", "a, b or c" */
function orList(values) {
  return values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`;
}

/**
 * The --help lines of one option or parallel field, from the core's table: the flag, the field with its
 * values or range and default, then its doc. A switch (no placeholder) is on when given.
 * @param {CatalogOption | CatalogParallelOption} option one with a flag
 */
function optionUsage(option) {
  const accepted =
    option.kind === 'choice'
      ? orList(option.values ?? [])
      : option.kind === 'boolean'
        ? 'true when given'
        : option.kind === 'names'
          ? 'names, comma-separated'
          : option.kind === 'text'
            ? 'text, as written'
            : `${option.min} to ${option.max}`;
  const fallback = option.default === null ? '' : ` (default ${option.kind === 'names' ? namesText(option.default) : option.default})`;
  const flag = (option.flag_value === null ? `${option.flag}` : `${option.flag} ${option.flag_value}`).padEnd(18);
  return `  ${flag} ${option.field}: ${accepted}${fallback}\n${' '.repeat(21)}${option.doc}\n`;
}

/**
 * The usage text; the training and parallel flags come from the catalogue's tables.
 * @param {Tables} tables
 */
export function usage(tables) {
  const parallel = [...parallelFlags(tables).values()].map(optionUsage).join('');
  return `${USAGE_HEAD}${tables.options.map(optionUsage).join('')}${USAGE_MIDDLE}${parallel}${USAGE_TAIL}${exampleUsage(tables)}`;
}

/**
 * The flag (without dashes) of each training option that has one, and the option; a boolean's is a switch.
 * @param {readonly CatalogOption[]} options
 * @returns {Map<string, CatalogOption>}
 */
function trainingFlags(options) {
  /** @type {Map<string, CatalogOption>} */
  const flags = new Map();
  for (const option of options) if (option.flag !== null) flags.set(option.flag.replace(/^--/, ''), option);
  return flags;
}

/**
 * The flag (without dashes) of each parallel field that has one, and its row; a boolean's is a switch.
 * @param {Tables} tables
 * @returns {Map<string, CatalogParallelOption>}
 */
function parallelFlags(tables) {
  /** @type {Map<string, CatalogParallelOption>} */
  const flags = new Map();
  for (const option of tables.parallel_options) if (option.flag !== null) flags.set(option.flag.replace(/^--/, ''), option);
  return flags;
}
/** Numeric flags and the `plan` field each sets. */
const PLAN_FLAGS = /** @type {const} */ ({ 'max-gpus': 'max_gpus', tokens: 'tokens', samples: 'samples', top: 'top' });
/** Flags that take a value, besides the training options' (trainingFlags). */
const VALUE_FLAGS = new Set([
  'request',
  'preset',
  ...MODEL_FILE_FLAGS,
  'hardware',
  ...Object.keys(PLAN_FLAGS),
]);
const BOOLEAN_FLAGS = new Set(['json', 'help']);

/**
 * @typedef {object} CommandLine
 * @property {string | undefined} command
 * @property {Map<string, string>} values value flags, by name without dashes
 * @property {boolean} json
 * @property {boolean} help
 */

/**
 * A small parser rather than util.parseArgs, because parseArgs refuses `--batch -4` as ambiguous,
 * and a negative number should reach the core, which names the field in its error.
 * The switches (the boolean training options and parallel fields) set a request field: bare means true;
 * `--flag=true|false` is also accepted.
 * @param {string[]} argv
 * @param {Tables} tables the catalogue's tables, whose flags are accepted too
 * @returns {CommandLine}
 */
export function parseCommandLine(argv, tables) {
  const training = trainingFlags(tables.options);
  const parallel = parallelFlags(tables);
  /** @type {CommandLine} */
  const parsed = { command: undefined, values: new Map(), json: false, help: false };
  const args = argv[Symbol.iterator]();
  for (const arg of args) {
    if (!arg.startsWith('--')) {
      if (parsed.command !== undefined) {
        throw new PrenetError('command', `command: unexpected argument "${arg}"`);
      }
      parsed.command = arg;
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (BOOLEAN_FLAGS.has(name) && eq === -1) {
      parsed[/** @type {'json' | 'help'} */ (name)] = true;
    } else if (parallel.get(name)?.kind === 'boolean' || training.get(name)?.kind === 'boolean') {
      const value = eq === -1 ? 'true' : arg.slice(eq + 1);
      if (value !== 'true' && value !== 'false') throw new PrenetError(`--${name}`, `--${name}: expected true or false, got "${value}"`);
      parsed.values.set(name, value);
    } else if (VALUE_FLAGS.has(name) || training.has(name) || parallel.has(name)) {
      // The next argument is the value even if it starts with "-" (see above).
      const value = eq === -1 ? args.next().value : arg.slice(eq + 1);
      if (value === undefined) throw new PrenetError(`--${name}`, `--${name}: missing value`);
      parsed.values.set(name, value);
    } else {
      throw new PrenetError(arg, `${arg}: unknown flag (see prenet --help)`);
    }
  }
  return parsed;
}

/**
 * @param {string} flag
 * @param {string} text
 */
function parseNumber(flag, text) {
  const value = text.trim() === '' ? NaN : Number(text);
  if (Number.isNaN(value)) {
    throw new PrenetError(`--${flag}`, `--${flag}: expected a number, got "${text}"`);
  }
  return value;
}

/** @param {string} source a path, or "-" for standard input */
async function readRequestText(source) {
  try {
    if (source !== '-') return await readFile(source, 'utf8');
    const chunks = [];
    for await (const chunk of process.stdin) chunks.push(chunk);
    return Buffer.concat(chunks).toString('utf8');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new PrenetError('--request', `--request: cannot read ${source}: ${reason}`);
  }
}

/** @param {unknown} value */
function isPlainObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The training fields set by flags: numbers parsed, names split at commas, a switch true or false, choices
 * as given (the core validates them).
 * @param {Map<string, string>} values
 * @param {readonly CatalogOption[]} options
 * @returns {Record<string, unknown>}
 */
function trainingOverrides(values, options) {
  /** @type {Record<string, unknown>} */
  const training = {};
  for (const [flag, option] of trainingFlags(options)) {
    const text = values.get(flag);
    if (text === undefined) continue;
    if (option.kind === 'names') training[option.key] = parseNames(text) ?? text;
    else if (option.kind === 'boolean') training[option.key] = text === 'true';
    else training[option.key] = option.kind === 'choice' ? text : parseNumber(flag, text);
  }
  return training;
}

/**
 * The parallel fields set by flags: numbers parsed, a switch true or false, a list of names split at commas,
 * choices and text as given (the core validates them).
 * @param {Map<string, string>} values
 * @param {Tables} tables
 * @returns {Record<string, unknown>}
 */
function parallelOverrides(values, tables) {
  /** @type {Record<string, unknown>} */
  const parallel = {};
  for (const [flag, option] of parallelFlags(tables)) {
    const text = values.get(flag);
    if (text === undefined) continue;
    if (option.kind === 'boolean') parallel[option.key] = text === 'true';
    else if (option.kind === 'names') parallel[option.key] = parseNames(text) ?? text;
    else parallel[option.key] = option.kind === 'choice' || option.kind === 'text' ? text : parseNumber(flag, text);
  }
  return parallel;
}

/**
 * The fields of one request section set by numeric flags.
 * @param {Map<string, string>} values
 * @param {Readonly<Record<string, string>>} flags flag -> field
 * @returns {Record<string, unknown>}
 */
function sectionOverrides(values, flags) {
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const [flag, field] of Object.entries(flags)) {
    const text = values.get(flag);
    if (text !== undefined) out[field] = parseNumber(flag, text);
  }
  return out;
}

/**
 * The request text for the core. Without override flags the file's text goes through unchanged;
 * text that is not a JSON object also goes through unchanged, so the core reports it (one
 * validator, one set of messages).
 * @param {Map<string, string>} values
 * @param {Tables} tables the catalogue's tables of training options and parallel fields
 * @returns {Promise<string>}
 */
export async function buildRequestText(values, tables) {
  const source = values.get('request');
  const text = source === undefined ? '{}' : await readRequestText(source);
  const training = trainingOverrides(values, tables.options);
  const parallel = parallelOverrides(values, tables);
  const plan = sectionOverrides(values, PLAN_FLAGS);
  const preset = values.get('preset');
  const model = await modelFromFlags(values);
  const hardware = values.get('hardware');
  const sections = /** @type {[string, Record<string, unknown>][]} */ ([
    ['training', training],
    ['parallel', parallel],
    ['plan', plan],
  ]);
  if (
    preset === undefined &&
    model === undefined &&
    hardware === undefined &&
    sections.every(([, v]) => Object.keys(v).length === 0)
  ) {
    return text;
  }
  /** @type {unknown} */
  let request;
  try {
    request = JSON.parse(text);
  } catch {
    return text;
  }
  if (!isPlainObject(request)) return text;
  const object = /** @type {Record<string, unknown>} */ (request);
  if (preset !== undefined) object.model = { preset };
  if (model !== undefined) object.model = model;
  if (hardware !== undefined) object.hardware = hardware.split(',').map((id) => id.trim());
  for (const [name, fields] of sections) {
    if (Object.keys(fields).length === 0) continue;
    if (object[name] !== undefined && !isPlainObject(object[name])) return text;
    const held = /** @type {Record<string, unknown> | undefined} */ (object[name]);
    object[name] = name === 'training' ? nestTraining(fields, held) : { ...held, ...fields };
  }
  return JSON.stringify(object);
}

/**
 * Left-aligned text columns, two spaces apart.
 * @param {string[]} header
 * @param {string[][]} rows
 */
export function textTable(header, rows) {
  const widths = header.map((title, col) =>
    Math.max(title.length, ...rows.map((row) => (row[col] ?? '').length)),
  );
  const line = (/** @type {string[]} */ cells) =>
    cells
      .map((cell, col) => cell.padEnd(widths[col] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** @param {unknown} value */
function optionalNumber(value) {
  return typeof value === 'number' && Number.isFinite(value) ? sig3(value) : '';
}

/** @param {import('../src/types').HardwareEntry} entry */
function hardwareRow(entry) {
  const peak = isPlainObject(entry.peak_tflops)
    ? /** @type {Record<string, unknown>} */ (entry.peak_tflops)
    : {};
  return [
    entry.id,
    entry.name,
    optionalNumber(entry.memory_gb),
    optionalNumber(entry.memory_bandwidth_gbs),
    optionalNumber(peak.fp32),
    optionalNumber(peak.bf16 ?? peak.fp16),
    optionalNumber(entry.price_per_hour_usd),
  ];
}

/** @param {import('../src/types').ModelInput} input */
function describeInput(input) {
  if (input.seq_len !== undefined) return `${input.kind}, seq ${input.seq_len}`;
  if (input.image_size !== undefined) return `${input.kind}, ${input.image_size}px`;
  return input.kind;
}

/** @param {import('../src/types').PresetEntry} preset */
function presetRow(preset) {
  return [preset.id, preset.name, preset.family, describeInput(preset.input), formatSI(preset.parameters)];
}

/**
 * How a Hugging Face config was read (the response's model.reading, docs/API.md), as one line: a table
 * reading plainly, a generic one as a caution with the fields it relied on. Null without a reading.
 * @param {unknown} response
 * @returns {string | null}
 */
export function readingLine(response) {
  const model = isPlainObject(response) ? /** @type {Record<string, unknown>} */ (response).model : undefined;
  const reading = isPlainObject(model) ? /** @type {Record<string, unknown>} */ (model).reading : undefined;
  if (!isPlainObject(reading)) return null;
  const { kind, model_type: type, style, relied_on: fields } = /** @type {Record<string, unknown>} */ (reading);
  const name = typeof type === 'string' && type !== '' ? `model_type "${type}"` : 'a config without model_type';
  if (kind === 'table') return `prenet: read as ${name} (from the table of model types)`;
  const list = Array.isArray(fields) ? fields.join(', ') : '';
  return `prenet: caution: ${name} is not in the table; read generically as a ${String(style)}-style decoder from ${list}: check the parameter count`;
}

/** Prints the reading of a Hugging Face config on stderr (stdout stays the response alone). */
function noteReading(/** @type {unknown} */ response) {
  const line = readingLine(response);
  if (line !== null) process.stderr.write(`${line}\n`);
}

/**
 * @param {CommandLine} cli
 * @param {import('../src/types').Catalog} catalog
 * @returns {Promise<string>} what to print on stdout
 */
async function run(cli, catalog) {
  if (cli.help) return usage(catalog);
  switch (cli.command) {
    case 'predict': {
      for (const flag of Object.keys(PLAN_FLAGS)) {
        if (cli.values.has(flag)) throw new PrenetError(`--${flag}`, `--${flag}: only plan takes this flag`);
      }
      const response = await engine.predict(await buildRequestText(cli.values, catalog));
      noteReading(response);
      return cli.json ? JSON.stringify(response) : JSON.stringify(response, null, 2);
    }
    case 'plan': {
      for (const flag of parallelFlags(catalog).keys()) {
        if (cli.values.has(flag) && flag !== 'gpus-per-node') {
          throw new PrenetError(`--${flag}`, `--${flag}: plan searches the layout; only --gpus-per-node sets the fabric`);
        }
      }
      const response = await engine.plan(await buildRequestText(cli.values, catalog));
      noteReading(response);
      return cli.json ? JSON.stringify(response) : JSON.stringify(response, null, 2);
    }
    case 'hardware':
    case 'presets': {
      if (cli.values.size > 0) {
        const [flag] = cli.values.keys();
        throw new PrenetError(`--${flag}`, `--${flag}: only predict takes this flag`);
      }
      if (cli.command === 'hardware') {
        if (cli.json) return JSON.stringify(catalog.hardware, null, 2);
        const header = ['id', 'name', 'memory GB', 'GB/s', 'fp32 TFLOPS', 'bf16/fp16 TFLOPS', '$/h'];
        return textTable(header, catalog.hardware.map(hardwareRow));
      }
      if (cli.json) return JSON.stringify(catalog.presets, null, 2);
      return textTable(['id', 'name', 'family', 'input', 'parameters'], catalog.presets.map(presetRow));
    }
    case undefined:
      throw new PrenetError('command', 'command: missing (predict, plan, hardware or presets; see prenet --help)');
    default:
      throw new PrenetError('command', `command: unknown command "${cli.command}" (see prenet --help)`);
  }
}

/**
 * One line for stderr. Core messages already start with their field (docs/API.md), so the field
 * is only added when it is not there.
 * @param {unknown} error
 */
export function errorLine(error) {
  if (error instanceof PrenetError) {
    const message = error.message.startsWith(`${error.field}:`)
      ? error.message
      : `${error.field}: ${error.message}`;
    return `prenet: ${message.replace(/\s*\n\s*/g, ' ')}`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return `prenet: ${message.replace(/\s*\n\s*/g, ' ')}`;
}

async function main() {
  // `prenet hardware | head` closes the pipe early; that is not an error worth a stack trace.
  process.stdout.on('error', (error) => {
    if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EPIPE') throw error;
    process.exit(0);
  });
  try {
    const catalog = await engine.catalog();
    const output = await run(parseCommandLine(process.argv.slice(2), catalog), catalog);
    process.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
  } catch (error) {
    process.stderr.write(`${errorLine(error)}\n`);
    process.exitCode = 1;
  }
}

// Run only as a program, so tests can import the helpers above without side effects.
// (realpath: npm's bin shim is a symlink, so argv[1] may not be this file's own path.)
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
