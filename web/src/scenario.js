// A scenario is everything the user chose: model, accelerators, training settings, and how the
// results are sorted. It is the one shape that the form, the shared link (URL parameters), the
// iframe mode, the <prenet-calculator> element's attributes and the engine job all convert to and
// from, so a link restores exactly what the form showed.
//
// Link format (docs/EMBED.md lists it for users): URL parameters, read from the query and then the
// hash (the hash wins). The page writes the hash only: a hash never reaches a server, so a pasted
// config stays on the user's machine even when the link is opened from a web host.
//
// Plain JS with JSDoc types (see engine.js) so the Node tests cover it.

import { namesText, nestTraining, parseNames } from './training-fields.js';

/**
 * @typedef {import('./types').Precision} Precision
 * @typedef {import('./types').Optimizer} Optimizer
 * @typedef {import('./types').CustomAccelerator} CustomAccelerator
 * @typedef {import('./types').HardwareRef} HardwareRef
 * @typedef {import('./types').CatalogOption} CatalogOption
 * @typedef {import('./types').CatalogParallelOption} CatalogParallelOption
 * @typedef {CustomAccelerator & { id: string }} CustomEntry a custom accelerator with the id the
 *   page gave it ("custom-1"); the id is how `hardware` selects it and how its result row is named
 * @typedef {{ batch_size?: number, seq_len?: number, image_size?: number, dataset_size?: number,
 *   epochs?: number, precision?: Precision, optimizer: Optimizer, attention?: 'flash' | 'flash2',
 *   optimizer_impl?: 'foreach', kernels?: 'megatron', memory_format?: import('./types').MemoryFormat }}
 *   Training
 *   Any other row of the core's training table is held under its key too, a section's member flat
 *   ("finetune.rank": 8, "finetune.targets": ["q_proj", "v_proj"]; scenarioToJob nests them), when set.
 *   numbers are present only when the user set them; absent ones take the core's defaults; the other
 *   choices only when they differ from the core's default (scenarioChoice); precision only when chosen
 *   (absent: the model's own, a Hugging Face config's dtype, else the core's fp32)
 * @typedef {{ hardware: string, step_ms: number }} Calibration a step time the user measured on
 *   one accelerator (its id, which should be one of `hardware`); sent to the core as `calibration`
 * @typedef {{ column: SortColumn, descending: boolean }} Sort
 * @typedef {'name' | 'step_ms' | 'epoch_s' | 'total_s' | 'memory_gb' | 'fits' | 'cost_usd' | 'mfu'
 *   | 'bottleneck'} SortColumn
 * @typedef {object} Scenario
 * @property {string} preset catalogue preset id; used when `config` is blank
 * @property {string} config pasted or uploaded config text; blank means "use the preset"
 * @property {string[]} hardware selected accelerators, in the order chosen: catalogue ids and
 *   the ids of entries in `custom`
 * @property {CustomEntry[]} custom custom accelerators the user defined (selected or not)
 * @property {Training} training
 * @property {Calibration | null} calibration a measured step, or null (no calibration)
 * @property {Sort} sort
 * @property {string} layersFor accelerator whose per-layer breakdown is shown ('' = the first result)
 * @property {Parallel} parallel training on several GPUs; sent to the core only when in use
 * @property {PlanSettings} plan the Plan panel's inputs
 * @typedef {'none' | 'selective' | 'full' | 'ops'} Recompute
 * @typedef {object} Parallel the request's `parallel` section as the form holds it (docs/API.md):
 *   numbers are present only when the user set them (absent ones the core derives or defaults)
 * @property {number} [gpus]
 * @property {number} [data]
 * @property {number} [tensor]
 * @property {number} [pipeline]
 * @property {number} [micro_batch_size]
 * @property {number} [micro_batches]
 * @property {number} [gpus_per_node]
 * @property {number} [intra_node_gbs] intra-node link bandwidth override (GB/s per GPU)
 * @property {number} [intra_node_us] intra-node link latency override (µs)
 * @property {number} [inter_node_gbs]
 * @property {number} [inter_node_us]
 * @property {number} zero_stage 0 (none) to 3 (FSDP)
 * @property {Recompute} recompute
 * @property {boolean} [sequence_parallel] Megatron sequence parallelism over the tensor group; present
 *   (true) only when chosen
 * @typedef {'tokens' | 'samples'} BudgetUnit
 * @typedef {'time' | 'cost'} PlanRank
 * @typedef {{ budget?: number, unit: BudgetUnit, max_gpus?: number, rank: PlanRank }} PlanSettings
 *   the Plan panel: train on `budget` tokens or samples with at most `max_gpus` GPUs, ranked by `rank`
 * @typedef {{ presets: string[], hardware: string[], options: CatalogOption[],
 *   parallel_options: CatalogParallelOption[] }} Known
 *   what the catalogue offers, to check a link against; `options` and `parallel_options` are the core's
 *   tables of training options and parallel fields (docs/API.md "Options"), which give each its link
 *   parameters, values and default
 */

/** @type {readonly SortColumn[]} */
export const SORT_COLUMNS = ['name', 'step_ms', 'epoch_s', 'total_s', 'memory_gb', 'fits', 'cost_usd', 'mfu', 'bottleneck'];

/**
 * The base a link's parameters (and the <prenet-calculator> element's attributes) are applied to. It sets
 * nothing a link writes only when set (precision, sequence length, attention, the parallel fields, ...),
 * and its preset, accelerators, batch and optimizer are the defaults docs/EMBED.md lists for a link or an
 * element that leaves them out: unchanged, so an old link or embed means what it meant whatever the first
 * screen shows (startScenario).
 */
export function defaultScenario() {
  /** @type {Scenario} */
  const scenario = {
    preset: 'bert-base',
    config: '',
    hardware: ['a100-sxm4-80gb', 'h100-sxm', 'v100-sxm2-32gb'],
    custom: [],
    training: { batch_size: 32, optimizer: 'adam' },
    calibration: null,
    sort: { column: 'total_s', descending: false },
    layersFor: '',
    parallel: { zero_stage: 0, recompute: 'none' },
    plan: { unit: 'tokens', rank: 'time' },
  };
  return scenario;
}

/**
 * The scenario shown on load without a link (issue 21): a full fine-tune of an 8B model in BF16 on the GPUs
 * people rent (catalogue ids), as one GPU runs it (FlashAttention, gradient checkpointing, the global batch
 * of 8 x 4096 tokens as 8 micro-batches of 1).
 * It fits on the 141-192 GB cards and not on the 80, 48 and 24 GB ones, where the one-glance answer
 * offers the next step; setting a micro-batch also makes the core send its memory advice.
 * @returns {Scenario}
 */
export function startScenario() {
  const scenario = defaultScenario();
  scenario.preset = 'llama-3.1-8b';
  scenario.hardware = ['h100-sxm', 'h200', 'b200', 'mi300x', 'l40s', 'rtx-4090'];
  scenario.training = { batch_size: 8, seq_len: 4096, precision: 'bf16', optimizer: 'adamw', attention: 'flash' };
  scenario.parallel = { ...scenario.parallel, micro_batch_size: 1, recompute: 'full' };
  return scenario;
}

/**
 * The parallel numbers the form has a box for: the scenario's fields (the link overrides' flattened,
 * `intra_node_gbs` for the request's intra_node.bandwidth_gbs; parallelField).
 * @type {readonly ParallelNumber[]}
 */
export const PARALLEL_NUMBERS = [
  'gpus',
  'data',
  'tensor',
  'pipeline',
  'micro_batch_size',
  'micro_batches',
  'gpus_per_node',
  'intra_node_gbs',
  'intra_node_us',
  'inter_node_gbs',
  'inter_node_us',
];

/**
 * @typedef {Exclude<keyof Parallel, 'zero_stage' | 'recompute' | 'sequence_parallel'>} ParallelNumber
 */

/**
 * Where a scenario's parallel field goes in the request's `parallel` section, the key of its row in the
 * core's table: its name, a link override's nested ("intra_node_gbs" -> "intra_node.bandwidth_gbs").
 * @param {keyof Parallel} field
 */
export function parallelPath(field) {
  const link = /^(intra_node|inter_node)_(gbs|us)$/.exec(field);
  return link === null ? field : `${link[1]}.${link[2] === 'gbs' ? 'bandwidth_gbs' : 'latency_us'}`;
}

/**
 * The scenario's field for a row of the core's parallel table: parallelPath's inverse.
 * @param {CatalogParallelOption} option
 * @returns {keyof Parallel}
 */
export function parallelField(option) {
  return /** @type {keyof Parallel} */ (option.key.replace('.bandwidth_gbs', '_gbs').replace('.latency_us', '_us'));
}

/**
 * The numbers of `parallel` without a box of their own in the page (PARALLEL_NUMBERS): the core's other
 * integer rows (context, expert, virtual_stages, ...), held under their row's key by the links and the
 * boxes populateForm builds for them.
 * @param {Parallel} parallel
 * @returns {[string, number][]}
 */
export function otherParallelNumbers(parallel) {
  const known = new Set([...PARALLEL_NUMBERS, 'zero_stage']);
  return /** @type {[string, number][]} */ (
    Object.entries(parallel).filter(([key, value]) => typeof value === 'number' && !known.has(key))
  );
}

/**
 * Whether the scenario trains on more than one GPU's worth of settings: any parallel number set, or
 * ZeRO, recomputation or sequence parallelism chosen. Otherwise no `parallel` section is sent and the
 * core predicts one GPU.
 * @param {Parallel} parallel
 */
export function parallelInUse(parallel) {
  return (
    parallel.zero_stage !== 0 ||
    parallel.recompute !== 'none' ||
    parallel.sequence_parallel === true ||
    PARALLEL_NUMBERS.some((field) => parallel[field] !== undefined) ||
    otherParallelNumbers(parallel).length > 0
  );
}

/**
 * The request's `parallel` section (docs/API.md) for the form's settings; unset numbers are left out
 * for the core to derive (data from gpus, micro-batch size from the global batch) or default.
 * @param {Parallel} parallel
 * @returns {import('./types').ParallelSpec}
 */
export function parallelRequest(parallel) {
  /** @type {import('./types').ParallelSpec} */
  const section = {};
  const fields = /** @type {Record<string, unknown>} */ (section);
  for (const field of PARALLEL_NUMBERS) {
    const value = parallel[field];
    if (value === undefined) continue;
    const path = parallelPath(field);
    const dot = path.indexOf('.');
    if (dot === -1) {
      fields[field] = value;
      continue;
    }
    const link = path.slice(0, dot);
    fields[link] = { .../** @type {Record<string, number> | undefined} */ (fields[link]), [path.slice(dot + 1)]: value };
  }
  for (const [key, value] of otherParallelNumbers(parallel)) fields[key] = value;
  // Kept as given (a link may say 7): the core names parallel.zero_stage beside the select.
  if (parallel.zero_stage !== 0) section.zero_stage = /** @type {0 | 1 | 2 | 3} */ (parallel.zero_stage);
  if (parallel.recompute !== 'none') section.recompute = parallel.recompute;
  if (parallel.sequence_parallel === true) section.sequence_parallel = true;
  return section;
}

/**
 * Training choices whose default is the model's own when the model says (a Hugging Face config's dtype sets
 * the precision; docs/API.md): their select offers a blank "the model's own" first, and a value chosen
 * there is kept even when it equals the core's default, so an explicit FP32 stays explicit.
 * @type {ReadonlySet<string>}
 */
export const MODEL_DEFAULT_CHOICES = new Set(['precision']);

/**
 * What a scenario holds for training choice `option` set to `value` (a link's or the form's): the value,
 * or undefined (left out, so the core's default applies) for a blank or the default itself, except for
 * the choices every scenario holds (optimizer, which links always write) and those whose default is the
 * model's own (precision: blank is left out, any value kept).
 * @param {CatalogOption} option
 * @param {string} value one of option.values, or ''
 * @returns {string | undefined}
 */
export function scenarioChoice(option, value) {
  if (MODEL_DEFAULT_CHOICES.has(option.key)) return value === '' ? undefined : value;
  if (option.key in defaultScenario().training) return value;
  return value === '' || value === option.default ? undefined : value;
}

/** @param {readonly string[]} values "a or b", "a, b or c" */
function orList(values) {
  return values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`;
}

/** Longest config text put into a link, after compression. Longer configs are left out with a note. */
export const MAX_LINK_CONFIG_CHARS = 24_000;

/**
 * Longest config text even tried for a link. Encoding and compressing runs on the page's thread and costs
 * ~10 ms per MiB to encode and 10-40 ms per MiB to compress (Chromium, 15 MiB), and JSON over 64 KiB
 * rarely compresses under MAX_LINK_CONFIG_CHARS anyway; the page holds such configs out of its box too.
 */
export const MAX_LINK_SOURCE_CHARS = 64 * 1024;

// ------------------------------------------------------------------ text <-> base64url

/** @param {Uint8Array} bytes */
function toBase64Url(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * @param {string} text
 * @returns {Uint8Array<ArrayBuffer>}
 */
function fromBase64Url(text) {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

/**
 * @param {Uint8Array<ArrayBuffer>} bytes
 * @param {CompressionStream | DecompressionStream} stream
 */
async function pipeThrough(bytes, stream) {
  const piped = new Blob([bytes]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(piped).arrayBuffer());
}

/**
 * Config text for a link: "z" + deflate-raw + base64url (JSON compresses 5-10×), or "t" + plain
 * base64url where CompressionStream is missing.
 * @param {string} text
 */
export async function encodeConfig(text) {
  const bytes = new TextEncoder().encode(text);
  if (typeof CompressionStream === 'undefined') return `t${toBase64Url(bytes)}`;
  return `z${toBase64Url(await pipeThrough(bytes, new CompressionStream('deflate-raw')))}`;
}

/**
 * @param {string} value from encodeConfig
 * @returns {Promise<string>} rejects with a message for a damaged link
 */
export async function decodeConfig(value) {
  const kind = value[0];
  const bytes = fromBase64Url(value.slice(1));
  if (kind === 't') return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  if (kind === 'z') {
    const inflated = await pipeThrough(bytes, new DecompressionStream('deflate-raw'));
    return new TextDecoder('utf-8', { fatal: true }).decode(inflated);
  }
  throw new Error('unknown encoding');
}

// ------------------------------------------------------------------ scenario -> link

/**
 * How a training option's value reads in a link: a list of names comma-separated, a switch 1 or 0
 * (like the parallel ones), anything else as text.
 * @param {CatalogOption} option
 * @param {unknown} value
 */
export function linkValue(option, value) {
  if (option.kind === 'names') return namesText(value);
  if (option.kind === 'boolean') return value === true ? '1' : '0';
  return String(value);
}

/**
 * The link parameters for a scenario. The preset, accelerators, batch and optimizer are always written so
 * a link keeps its meaning if the page's defaults change; the rest (precision too) only when set.
 * Each training option goes under the first of its link names in the catalogue's table.
 * @param {Scenario} scenario
 * @param {Pick<Known, 'options' | 'parallel_options'>} known
 * @returns {Promise<{ params: URLSearchParams, configLeftOut: boolean }>}
 */
export async function scenarioToParams(scenario, known) {
  const params = new URLSearchParams();
  let configLeftOut = false;
  params.set('preset', scenario.preset);
  if (scenario.config.trim() !== '') {
    const encoded = scenario.config.length > MAX_LINK_SOURCE_CHARS ? null : await encodeConfig(scenario.config);
    if (encoded !== null && encoded.length <= MAX_LINK_CONFIG_CHARS) params.set('config', encoded);
    else configLeftOut = true;
  }
  params.set('hardware', scenario.hardware.join(','));
  if (scenario.custom.length > 0) {
    params.set('custom', toBase64Url(new TextEncoder().encode(JSON.stringify(scenario.custom))));
  }
  const training = /** @type {Record<string, unknown>} */ (scenario.training);
  for (const option of known.options) {
    const value = training[option.key];
    const name = option.link[0];
    if (value !== undefined && name !== undefined) params.set(name, linkValue(option, value));
  }
  if (scenario.calibration !== null) {
    params.set('measured', String(scenario.calibration.step_ms));
    params.set('measured_on', scenario.calibration.hardware);
  }
  const sort = defaultScenario().sort;
  if (scenario.sort.column !== sort.column || scenario.sort.descending !== sort.descending) {
    params.set('sort', `${scenario.sort.descending ? '-' : ''}${scenario.sort.column}`);
  }
  if (scenario.layersFor !== '') params.set('layers', scenario.layersFor);
  const { parallel, plan } = scenario;
  // Each parallel field under the first of its link names; the default scenario writes none of them.
  const held = /** @type {Record<string, unknown>} */ (defaultScenario().parallel);
  for (const option of known.parallel_options) {
    const field = parallelField(option);
    const value = parallel[field];
    const name = option.link[0];
    if (name === undefined || value === undefined || value === held[field]) continue;
    if (option.kind === 'names') params.set(name, namesText(value));
    else if (option.kind !== 'boolean') params.set(name, String(value));
    else if (value === true) params.set(name, '1');
  }
  if (plan.budget !== undefined) {
    params.set('budget', String(plan.budget));
    params.set('budget_unit', plan.unit);
  }
  if (plan.max_gpus !== undefined) params.set('max_gpus', String(plan.max_gpus));
  if (plan.rank !== 'time') params.set('plan_by', plan.rank);
  return { params, configLeftOut };
}

// ------------------------------------------------------------------ link -> scenario

/**
 * The parameters of a page URL: the query, then the hash (a hash parameter replaces the same query
 * parameter). Accepts "#preset=x" and "#?preset=x".
 * @param {{ search: string, hash: string }} location
 */
export function paramsFromLocation(location) {
  const merged = new URLSearchParams(location.search);
  const hash = location.hash.replace(/^#\??/, '');
  for (const [key, value] of new URLSearchParams(hash)) merged.set(key, value);
  return merged;
}

/**
 * Parameter names the page reads besides the training options' and parallel fields' (the catalogue's
 * tables); anything else in a link is ignored without complaint.
 */
const SCENARIO_KEYS = new Set([
  'preset',
  'config',
  'hardware',
  'custom',
  'sort',
  'layers',
  'measured',
  'measured_on',
  'budget',
  'budget_unit',
  'max_gpus',
  'plan_by',
]);

/**
 * Whether the link describes a scenario at all.
 * @param {URLSearchParams} params
 * @param {Pick<Known, 'options' | 'parallel_options'>} known
 */
export function hasScenario(params, known) {
  const options = new Set([...known.options, ...known.parallel_options].flatMap((option) => option.link));
  return [...params.keys()].some((key) => SCENARIO_KEYS.has(key) || options.has(key));
}

/**
 * One training option of a link onto `training`: numbers are kept even when out of range (the core
 * names the field), a blank number is unset; a choice must be one of the table's values; names are
 * comma-separated (the core checks them); a switch reads 1 or 0 (true or false) and is held only when
 * it differs from the core's default.
 * @param {URLSearchParams} params
 * @param {CatalogOption} option
 * @param {Training} training
 * @param {string[]} problems
 */
function readTrainingOption(params, option, training, problems) {
  const name = option.link.find((candidate) => params.has(candidate));
  if (name === undefined) return;
  const fields = /** @type {Record<string, unknown>} */ (training);
  const raw = params.get(name)?.trim() ?? '';
  if (option.kind === 'names') {
    const names = parseNames(raw);
    if (names === undefined) delete fields[option.key];
    else fields[option.key] = names;
    return;
  }
  if (option.kind === 'boolean') {
    if (raw === '') return;
    const on = raw === '1' || raw === 'true' ? true : raw === '0' || raw === 'false' ? false : null;
    if (on === null) problems.push(`${name}: expected 1 (${option.label.toLowerCase()}) or 0, got "${raw}"`);
    else if (on === (option.default === true)) delete fields[option.key];
    else fields[option.key] = on;
    return;
  }
  if (option.kind !== 'choice') {
    const value = Number(raw);
    if (raw === '') delete fields[option.key];
    else if (Number.isFinite(value)) fields[option.key] = value;
    else problems.push(`${name}: expected a number, got "${raw}"`);
    return;
  }
  const values = option.values ?? [];
  if (raw === '' && scenarioChoice(option, raw) === undefined) return;
  if (!values.includes(raw)) {
    problems.push(`${name}: expected ${orList(values)}, got "${raw}"`);
    return;
  }
  const value = scenarioChoice(option, raw);
  if (value === undefined) delete fields[option.key];
  else fields[option.key] = value;
}

/**
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Custom accelerators from a link. The numbers are checked by the core when computing (with an
 * error naming the field); here only the shape is checked, and ids are made unique.
 * @param {string} value
 * @returns {CustomEntry[]}
 */
function decodeCustom(value) {
  const parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64Url(value)));
  if (!Array.isArray(parsed)) throw new Error('expected a list');
  /** @type {CustomEntry[]} */
  const entries = [];
  const seen = new Set();
  parsed.forEach((item, index) => {
    if (!isObject(item) || !isObject(item.peak_tflops)) throw new Error(`entry ${index + 1} is not an accelerator`);
    let id = typeof item.id === 'string' && /^custom-[\w-]{1,40}$/.test(item.id) ? item.id : `custom-${index + 1}`;
    while (seen.has(id)) id = `${id}-${index + 1}`;
    seen.add(id);
    entries.push({ .../** @type {CustomAccelerator} */ (/** @type {unknown} */ (item)), id });
  });
  return entries;
}

/**
 * A scenario from link parameters (or the element's attributes), starting from `base`. What cannot
 * be used is left at the base value and described in `problems`, one line each starting with the
 * parameter's name, for the page to show; numbers are kept even when out of range, so the core's
 * own error (naming the field) appears beside the input.
 * @param {URLSearchParams} params
 * @param {Known} known
 * @param {Scenario} [base]
 * @returns {Promise<{ scenario: Scenario, problems: string[] }>}
 */
export async function paramsToScenario(params, known, base = defaultScenario()) {
  /** @type {Scenario} */
  const scenario = structuredClone(base);
  /** @type {string[]} */
  const problems = [];

  const preset = params.get('preset');
  if (preset !== null) {
    if (known.presets.includes(preset)) scenario.preset = preset;
    else problems.push(`preset: unknown preset "${preset}"; showing ${scenario.preset}`);
  }

  const config = params.get('config');
  if (config !== null && config !== '') {
    try {
      scenario.config = await decodeConfig(config);
    } catch {
      problems.push('config: the config in this link is damaged and was left out');
    }
  }

  const custom = params.get('custom');
  if (custom !== null && custom !== '') {
    try {
      scenario.custom = decodeCustom(custom);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      problems.push(`custom: the custom accelerators in this link are damaged (${reason}) and were left out`);
    }
  }

  const hardware = params.get('hardware');
  if (hardware !== null) {
    const customIds = new Set(scenario.custom.map((entry) => entry.id));
    const ids = hardware.split(',').map((id) => id.trim()).filter(Boolean);
    const unknown = ids.filter((id) => !known.hardware.includes(id) && !customIds.has(id));
    if (unknown.length > 0) problems.push(`hardware: unknown accelerator ${unknown.map((id) => `"${id}"`).join(', ')} left out`);
    scenario.hardware = [...new Set(ids.filter((id) => !unknown.includes(id)))];
  }

  for (const option of known.options) readTrainingOption(params, option, scenario.training, problems);

  // The measured step: kept even when out of range (the core names `calibration.step_ms`), and
  // its accelerator even when not among `hardware` (the core names `calibration.hardware`).
  const measured = params.get('measured');
  const measuredOn = params.get('measured_on')?.trim();
  if (measured !== null) {
    const raw = measured.trim();
    const value = Number(raw);
    if (raw === '') scenario.calibration = null;
    else if (Number.isFinite(value)) {
      const hardware = measuredOn || scenario.calibration?.hardware || scenario.hardware[0] || '';
      scenario.calibration = { hardware, step_ms: value };
    } else problems.push(`measured: expected a number, got "${raw}"`);
  } else if (measuredOn && scenario.calibration !== null) {
    scenario.calibration = { ...scenario.calibration, hardware: measuredOn };
  }

  const sort = params.get('sort');
  if (sort !== null) {
    const column = sort.replace(/^-/, '');
    if (SORT_COLUMNS.includes(/** @type {SortColumn} */ (column))) {
      scenario.sort = { column: /** @type {SortColumn} */ (column), descending: sort.startsWith('-') };
    } else {
      problems.push(`sort: unknown column "${column}"`);
    }
  }
  const layers = params.get('layers');
  if (layers !== null) scenario.layersFor = layers;
  for (const option of known.parallel_options) readParallelOption(params, option, scenario.parallel, problems);
  readPlanParams(params, scenario.plan, problems);
  return { scenario, problems };
}

/**
 * A number parameter: undefined when absent, null when blank (unset it), NaN-free, or a problem.
 * Out-of-range values are kept: the core names the field beside its box.
 * @param {URLSearchParams} params
 * @param {readonly string[]} names accepted names, the first found wins
 * @param {string[]} problems
 * @returns {number | null | undefined}
 */
function numberParam(params, names, problems) {
  const name = names.find((candidate) => params.has(candidate));
  if (name === undefined) return undefined;
  const raw = params.get(name)?.trim() ?? '';
  if (raw === '') return null;
  const value = Number(raw);
  if (Number.isFinite(value)) return value;
  problems.push(`${name}: expected a number, got "${raw}"`);
  return undefined;
}

/**
 * One parallel field of a link onto `parallel`. Numbers are kept even when out of range (the core names
 * the field beside its box) and a blank one is unset; the fields every scenario holds (the selects: ZeRO
 * stage, recomputation) must be one of their values; a switch reads 1 or 0 (true or false); a list of names
 * is split at commas and text kept as written.
 * @param {URLSearchParams} params
 * @param {CatalogParallelOption} option
 * @param {Parallel} parallel
 * @param {string[]} problems
 */
function readParallelOption(params, option, parallel, problems) {
  const fields = /** @type {Record<string, unknown>} */ (parallel);
  const field = parallelField(option);
  const held = field in defaultScenario().parallel;
  if ((option.kind === 'integer' || option.kind === 'number') && !held) {
    const value = numberParam(params, option.link, problems);
    if (value === null) delete fields[field];
    else if (value !== undefined) fields[field] = value;
    return;
  }
  const name = option.link.find((candidate) => params.has(candidate));
  const raw = name === undefined ? '' : (params.get(name)?.trim() ?? '');
  if (name === undefined || raw === '') return;
  if (option.kind === 'boolean') {
    if (raw === '1' || raw === 'true') fields[field] = true;
    else if (raw === '0' || raw === 'false') delete fields[field];
    else problems.push(`${name}: expected 1 (${option.label.toLowerCase()}) or 0, got "${raw}"`);
    return;
  }
  if (option.kind === 'choice') {
    const values = option.values ?? [];
    if (values.includes(raw)) fields[field] = raw;
    else problems.push(`${name}: expected one of ${values.join(', ')}, got "${raw}"`);
    return;
  }
  // A list of names (recompute_modules) and free text (pipeline_layout) go to the core as given, which names them.
  if (option.kind === 'names') {
    fields[field] = parseNames(raw);
    return;
  }
  if (option.kind === 'text') {
    fields[field] = raw;
    return;
  }
  const stages = Array.from({ length: (option.max ?? 0) - (option.min ?? 0) + 1 }, (_, i) => String((option.min ?? 0) + i));
  if (stages.includes(raw)) fields[field] = Number(raw);
  else problems.push(`${name}: expected a ${option.label} ${orList(stages)}, got "${raw}"`);
}

/**
 * The Plan panel's inputs of a link, onto `plan`.
 * @param {URLSearchParams} params
 * @param {PlanSettings} plan
 * @param {string[]} problems
 */
function readPlanParams(params, plan, problems) {
  const budget = numberParam(params, ['budget'], problems);
  if (budget === null) delete plan.budget;
  else if (budget !== undefined) plan.budget = budget;
  const unit = params.get('budget_unit')?.trim();
  if (unit !== undefined && unit !== '') {
    if (unit === 'tokens' || unit === 'samples') plan.unit = unit;
    else problems.push(`budget_unit: expected tokens or samples, got "${unit}"`);
  }
  const maxGpus = numberParam(params, ['max_gpus'], problems);
  if (maxGpus === null) delete plan.max_gpus;
  else if (maxGpus !== undefined) plan.max_gpus = maxGpus;
  const rank = params.get('plan_by')?.trim();
  if (rank !== undefined && rank !== '') {
    if (rank === 'time' || rank === 'cost') plan.rank = rank;
    else problems.push(`plan_by: expected time or cost, got "${rank}"`);
  }
}

// ------------------------------------------------------------------ scenario -> engine job

/**
 * The engine job for a scenario (jobs.js). Custom accelerators are sent as objects (docs/API.md);
 * the `id` stays on them so each result row can be matched to its entry. A measured step is sent as
 * `calibration` as it is: one on an accelerator no longer selected gets the core's error
 * (`calibration.hardware`) beside the field rather than being dropped without a word.
 * @param {Scenario} scenario
 * @param {{ perLayer: 'none' | 'chart' | 'all' }} options per-layer timings: none (the compact
 *   embed), for the one accelerator the page's chart shows, or for all (the JSON export)
 * @returns {import('./jobs.js').Job}
 */
export function scenarioToJob(scenario, options) {
  const custom = new Map(scenario.custom.map((entry) => [entry.id, entry]));
  /** @type {HardwareRef[]} */
  const hardware = scenario.hardware.map((id) => custom.get(id) ?? id);
  /** @type {import('./jobs.js').Job} */
  const job = {
    request: {
      model: { preset: scenario.preset },
      training: nestTraining(/** @type {Record<string, unknown>} */ (scenario.training)),
      hardware,
      options: { per_layer: options.perLayer === 'all' },
    },
  };
  if (scenario.calibration !== null) job.request.calibration = { ...scenario.calibration };
  if (parallelInUse(scenario.parallel)) job.request.parallel = parallelRequest(scenario.parallel);
  if (options.perLayer === 'chart') job.layersFor = { id: scenario.layersFor, sort: scenario.sort };
  if (scenario.config.trim() !== '') job.configText = scenario.config;
  return job;
}

/**
 * The Plan panel's search for a scenario (docs/API.md, "Plan"): its model, training settings (the
 * global batch stays; the budget replaces samples per epoch and epochs) and accelerators, the budget
 * in tokens or samples, the GPU limit, and the link overrides (the fabric; the layouts are searched).
 * @param {Scenario} scenario
 * @param {Record<string, number>} [timeScale] per accelerator id, the factor on the roofline's times;
 *   left out, the engine derives it from the learned predictors when they are loaded (engine.js)
 * @returns {import('./jobs.js').PlanJob}
 */
export function scenarioToPlanJob(scenario, timeScale) {
  const custom = new Map(scenario.custom.map((entry) => [entry.id, entry]));
  const { dataset_size: _samples, epochs: _epochs, ...training } = scenario.training;
  /** @type {import('./types').PlanSpec} */
  const plan = {};
  if (scenario.plan.budget !== undefined) plan[scenario.plan.unit] = scenario.plan.budget;
  if (scenario.plan.max_gpus !== undefined) plan.max_gpus = scenario.plan.max_gpus;
  if (timeScale !== undefined && Object.keys(timeScale).length > 0) plan.time_scale = { ...timeScale };
  /** @type {import('./jobs.js').PlanJob} */
  const job = {
    request: {
      model: { preset: scenario.preset },
      training: nestTraining(training),
      hardware: scenario.hardware.map((id) => custom.get(id) ?? id),
      plan,
    },
  };
  const { gpus_per_node, intra_node, inter_node } = parallelRequest(scenario.parallel);
  const fabric = {
    ...(gpus_per_node === undefined ? {} : { gpus_per_node }),
    ...(intra_node === undefined ? {} : { intra_node }),
    ...(inter_node === undefined ? {} : { inter_node }),
  };
  if (Object.keys(fabric).length > 0) job.request.parallel = fabric;
  if (scenario.config.trim() !== '') job.configText = scenario.config;
  return job;
}
