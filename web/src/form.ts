// The model and training parts of the form: filled from the catalogue, read into a scenario and
// set from one (a shared link). Accelerators live in hardware-picker.ts.

import { byId, element } from './dom';
import { EXAMPLES, exampleParams } from './examples.js';
import { formatSI } from './format.js';
import {
  defaultScenario,
  MODEL_DEFAULT_CHOICES,
  PARALLEL_NUMBERS,
  parallelPath,
  scenarioChoice,
  type Calibration,
  type Parallel,
  type Recompute,
  type Scenario,
  type Training,
} from './scenario.js';
import { namesText, optionApplies, optionSection, parseNames, SECTION_LEGENDS } from './training-fields.js';
import type { Catalog, CatalogOption, ModelInput, PredictResponse, PresetEntry } from './types';

export type ParallelNumber = (typeof PARALLEL_NUMBERS)[number];

/** The box of each parallel number: `parallel-<field>`, the link ones named by the core's path. */
export function parallelControlId(field: ParallelNumber): string {
  return `parallel-${parallelPath(field).replace('.', '-')}`;
}

/** Training fields typed as numbers; each has an <input id=field> and a <p id=field-error> in index.html. */
export const NUMBER_FIELDS = ['batch_size', 'seq_len', 'image_size', 'dataset_size', 'epochs'] as const;
export type NumberField = (typeof NUMBER_FIELDS)[number];

/**
 * The id of the control populateForm builds for a training option: its key with dots and underscores as
 * dashes (`optimizer-impl`, `finetune-rank`); its error box is `<id>-error`, its section's fieldset `#<section>`.
 */
export function optionControlId(option: Pick<CatalogOption, 'key'>): string {
  return option.key.replace(/[._]/g, '-');
}

export interface FormParts {
  form: HTMLFormElement;
  presetSearch: HTMLInputElement;
  presetList: HTMLElement;
  presetNote: HTMLElement;
  /** The example scenarios' links (examples.js). */
  examples: HTMLElement;
  config: HTMLTextAreaElement;
  /** Shown instead of the textarea while a large config is held (setConfig). */
  configHeld: HTMLElement;
  /** A config too large for the textarea, kept here instead; null while the textarea holds the config. */
  held: { text: string; name: string } | null;
  configKind: HTMLElement;
  configClear: HTMLButtonElement;
  numbers: Record<NumberField, HTMLInputElement>;
  /** The training choices' selects (precision, optimizer, attention, ...), built from the catalogue's options. */
  choices: Map<CatalogOption, HTMLSelectElement>;
  /**
   * The other training options the page has no box for in index.html, built from the catalogue: a number box
   * (integer, number), a text box of comma-separated names (names), a checkbox (boolean).
   */
  inputs: Map<CatalogOption, HTMLInputElement>;
  /** The catalogue's table of training options (populateForm), for which fields apply (optionApplies). */
  options: readonly CatalogOption[];
  /** A fieldset per section of the table ("finetune": "Fine-tuning"), after the Training fieldset. */
  sections: Map<string, HTMLFieldSetElement>;
  /** The field the choices are placed before. */
  choicesBefore: HTMLElement;
  measuredStep: HTMLInputElement;
  measuredOn: HTMLSelectElement;
  parallel: Record<ParallelNumber, HTMLInputElement>;
  zeroStage: HTMLSelectElement;
  recompute: HTMLSelectElement;
  sequenceParallel: HTMLSelectElement;
  parallelLinks: HTMLDetailsElement;
}

export function findForm(): FormParts {
  const numbers = Object.fromEntries(NUMBER_FIELDS.map((field) => [field, byId(field, HTMLInputElement)])) as Record<
    NumberField,
    HTMLInputElement
  >;
  return {
    form: byId('inputs', HTMLFormElement),
    presetSearch: byId('preset-search', HTMLInputElement),
    presetList: byId('preset-list', HTMLElement),
    presetNote: byId('preset-note', HTMLElement),
    examples: byId('example-list', HTMLElement),
    config: byId('config', HTMLTextAreaElement),
    configHeld: byId('config-held', HTMLElement),
    held: null,
    configKind: byId('config-kind', HTMLElement),
    configClear: byId('config-clear', HTMLButtonElement),
    numbers,
    choices: new Map(),
    inputs: new Map(),
    options: [],
    sections: new Map(),
    choicesBefore: byId('training-choices-end', HTMLElement),
    measuredStep: byId('measured_step', HTMLInputElement),
    measuredOn: byId('measured_on', HTMLSelectElement),
    parallel: Object.fromEntries(PARALLEL_NUMBERS.map((field) => [field, byId(parallelControlId(field), HTMLInputElement)])) as Record<
      ParallelNumber,
      HTMLInputElement
    >,
    zeroStage: byId('parallel-zero_stage', HTMLSelectElement),
    recompute: byId('parallel-recompute', HTMLSelectElement),
    sequenceParallel: byId('parallel-sequence_parallel', HTMLSelectElement),
    parallelLinks: byId('parallel-links', HTMLDetailsElement),
  };
}

function describeInput(input: ModelInput): string {
  if (input.seq_len !== undefined) return `${input.seq_len} tokens`;
  if (input.image_size !== undefined) return `${input.image_size} px images`;
  return input.kind;
}

function presetRow(preset: PresetEntry): HTMLLabelElement {
  const label = element('label', undefined, 'pick');
  const radio = element('input');
  radio.type = 'radio';
  radio.name = 'preset';
  radio.value = preset.id;
  label.dataset.search = `${preset.name} ${preset.id} ${preset.family}`.toLowerCase();
  label.append(
    radio,
    element('span', preset.name, 'pick-name'),
    element('span', `${preset.family} · ${formatSI(preset.parameters)} params · ${describeInput(preset.input)}`, 'pick-meta'),
  );
  return label;
}

/**
 * The form field of one training choice: a label (the option's doc as its title), a select of the
 * table's values, blank first where the core has no default, and the box for the core's error. The id
 * is the key with dashes (`optimizer-impl`); its error box `<id>-error`.
 */
function choiceField(option: CatalogOption): { field: HTMLDivElement; select: HTMLSelectElement } {
  const id = optionControlId(option);
  const label = element('label', option.label);
  label.htmlFor = id;
  label.title = option.doc;
  const select = element('select');
  select.id = id;
  select.setAttribute('aria-describedby', `${id}-error`);
  const values = option.values ?? [];
  const entries = values.map((value, i) => [value, option.labels?.[i] ?? value] as const);
  const blank = MODEL_DEFAULT_CHOICES.has(option.key) ? modelDefaultText(option, null) : option.default === null ? 'not set' : null;
  select.replaceChildren(
    ...(blank === null ? entries : [['', blank] as const, ...entries]).map(([value, text]) => {
      const entry = element('option', text);
      entry.value = value;
      return entry;
    }),
  );
  const error = element('p', undefined, 'error');
  error.id = `${id}-error`;
  error.hidden = true;
  const field = element('div', undefined, 'field');
  field.append(label, select, error);
  return { field, select };
}

/** What an option's box shows while blank: the core's default, or that none is set. */
function defaultPlaceholder(option: CatalogOption): string {
  if (option.default === null) return 'not set';
  return `${option.kind === 'names' ? namesText(option.default, ', ') : String(option.default)} (default)`;
}

/**
 * The form field of any other training option (inputField's kinds): a labelled number box with the table's
 * range, a text box of comma-separated names, or a checkbox; each with the box for the core's error.
 */
function inputField(option: CatalogOption): { field: HTMLDivElement; input: HTMLInputElement } {
  const id = optionControlId(option);
  const input = element('input');
  input.id = id;
  input.setAttribute('aria-describedby', `${id}-error`);
  const label = element('label', option.kind === 'boolean' ? undefined : option.label);
  label.htmlFor = id;
  label.title = option.doc;
  const field = element('div', undefined, option.kind === 'boolean' ? 'field check' : 'field');
  if (option.kind === 'boolean') {
    input.type = 'checkbox';
    label.append(input, ` ${option.label}`);
    field.append(label);
  } else {
    if (option.kind === 'names') {
      input.type = 'text';
      input.autocomplete = 'off';
      input.spellcheck = false;
    } else {
      input.type = 'number';
      input.inputMode = option.kind === 'integer' ? 'numeric' : 'decimal';
      input.step = option.kind === 'integer' ? '1' : 'any';
      if (option.min !== undefined) input.min = String(option.min);
      if (option.max !== undefined) input.max = String(option.max);
    }
    input.placeholder = defaultPlaceholder(option);
    field.append(label, input);
  }
  const error = element('p', undefined, 'error');
  error.id = `${id}-error`;
  error.hidden = true;
  field.append(error);
  return { field, input };
}

/**
 * The fieldset of a section of the table (`#finetune`, legend "Fine-tuning"), made once, after the Training
 * fieldset; its own error box (`#finetune-error`) takes the core's errors about the section as a whole.
 */
function sectionFieldset(parts: FormParts, section: string): HTMLElement {
  let fieldset = parts.sections.get(section);
  if (fieldset === undefined) {
    fieldset = element('fieldset', undefined, 'section-fields');
    fieldset.id = section;
    fieldset.append(element('legend', SECTION_LEGENDS[section] ?? section), element('div', undefined, 'fields'));
    const error = element('p', undefined, 'error');
    error.id = `${section}-error`;
    error.hidden = true;
    fieldset.append(error);
    const training = parts.choicesBefore.closest('fieldset');
    (training ?? parts.choicesBefore).after(fieldset);
    parts.sections.set(section, fieldset);
  }
  return fieldset.querySelector<HTMLElement>('.fields') ?? fieldset;
}

/**
 * The blank entry of a choice whose default is the model's own: before a response, what it means; after
 * one, what the core used and where from (`training.precision_from`).
 */
function modelDefaultText(option: CatalogOption, response: PredictResponse | null): string {
  const label = (value: unknown): string => option.labels?.[(option.values ?? []).indexOf(String(value))] ?? String(value);
  if (response === null) return `model's own (config dtype, else ${label(option.default)})`;
  const training = response.training as unknown as Record<string, unknown>;
  const used = label(training[option.key]);
  return training[`${option.key}_from`] === undefined ? `default (${used})` : `from the config (${used})`;
}

/**
 * The example scenarios as links to this page (a hash: opening one restores it like a shared link); those
 * naming a preset this catalogue lacks are left out.
 */
function exampleLinks(parts: FormParts, catalog: Catalog): void {
  const presets = new Set(catalog.presets.map((preset) => preset.id));
  parts.examples.replaceChildren(
    ...EXAMPLES.filter((example) => presets.has(example.params.preset ?? '')).map((example) => {
      const link = element('a', example.title);
      link.href = `#${exampleParams(example).toString().replace(/%2C/gi, ',')}`;
      const item = element('li');
      item.append(link);
      return item;
    }),
  );
  parts.examples.closest<HTMLElement>('.examples')?.toggleAttribute('hidden', parts.examples.childElementCount === 0);
}

export function populateForm(parts: FormParts, catalog: Catalog): void {
  parts.presetList.replaceChildren(...catalog.presets.map(presetRow));
  exampleLinks(parts, catalog);
  for (const control of [...parts.choices.values(), ...parts.inputs.values()]) control.closest('.field')?.remove();
  for (const fieldset of parts.sections.values()) fieldset.remove();
  parts.choices.clear();
  parts.inputs.clear();
  parts.sections.clear();
  parts.options = catalog.options;
  for (const option of catalog.options) {
    if ((NUMBER_FIELDS as readonly string[]).includes(option.key)) continue; // index.html has their boxes
    const section = optionSection(option);
    const place = (field: HTMLElement): void => {
      if (section === null) parts.choicesBefore.before(field);
      else sectionFieldset(parts, section).append(field);
    };
    if (option.kind === 'choice') {
      const { field, select } = choiceField(option);
      place(field);
      parts.choices.set(option, select);
    } else {
      const { field, input } = inputField(option);
      place(field);
      parts.inputs.set(option, input);
    }
  }
  showApplicableFields(parts);
  const recompute = catalog.parallel_options.find((option) => option.key === 'recompute');
  if (recompute !== undefined) fillSelect(parts.recompute, recompute.values ?? [], recompute.labels ?? []);
}

/** Replaces a select's entries by `values`, each shown as its label; keeps the selection where it can. */
function fillSelect(select: HTMLSelectElement, values: readonly string[], labels: readonly string[]): void {
  const selected = select.value;
  select.replaceChildren(
    ...values.map((value, i) => {
      const entry = element('option', labels[i] ?? value);
      entry.value = value;
      return entry;
    }),
  );
  if (values.includes(selected)) select.value = selected;
}

/** Shows the presets matching every word of the search box. */
export function filterPresets(parts: FormParts): void {
  const words = parts.presetSearch.value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  for (const label of parts.presetList.querySelectorAll<HTMLLabelElement>('label.pick')) {
    label.hidden = !words.every((word) => (label.dataset.search ?? '').includes(word));
    if (!label.hidden) shown += 1;
  }
  if (shown === 0) parts.presetNote.textContent = `No preset matches "${parts.presetSearch.value}".`;
  else updatePresetNote(parts);
}

function presetRadios(parts: FormParts): HTMLInputElement[] {
  return [...parts.presetList.querySelectorAll<HTMLInputElement>('input[type=radio]')];
}

/**
 * Configs longer than this (UTF-16 units) are held in memory and never put in the textarea: Chromium lays
 * a textarea's text out on the page's thread, about 1.8 ms per KiB of pretty-printed JSON (docs/UI.md), so
 * 64 KiB costs ~120 ms, under the 200 ms a task may take, and 15 MiB several seconds.
 */
export const LARGE_CONFIG_CHARS = 64 * 1024;

function sizeText(chars: number): string {
  return chars >= 1024 * 1024 ? `${(chars / 1024 / 1024).toFixed(1)} MiB` : `${Math.ceil(chars / 1024)} KiB`;
}

/** The config the page uses: the held one, else the textarea's text. */
export function configText(parts: FormParts): string {
  return parts.held?.text ?? parts.config.value;
}

/**
 * Puts a config in the Model box: a small one into the textarea, as typed; a large one into memory, with a
 * one-line summary shown where the textarea was. `name` says where it came from ("config.json", "pasted text").
 */
export function setConfig(parts: FormParts, text: string, name: string): void {
  if (text.length > LARGE_CONFIG_CHARS) {
    const keepName = parts.held?.text === text ? parts.held.name : name; // re-applying the same scenario
    parts.held = { text, name: keepName };
    parts.config.value = '';
    parts.configHeld.textContent = `${keepName} — ${sizeText(text.length)}, too large to show here; it is used as it is. Clear to remove it.`;
  } else {
    parts.held = null;
    parts.config.value = text;
    parts.configHeld.textContent = '';
  }
  parts.config.hidden = parts.held !== null;
  parts.configHeld.hidden = parts.held === null;
  updatePresetNote(parts);
}

function usingConfig(parts: FormParts): boolean {
  return parts.held !== null || parts.config.value.trim() !== '';
}

/** While a config is in the box the presets are disabled, and the note says why. */
export function updatePresetNote(parts: FormParts): void {
  const config = usingConfig(parts);
  for (const radio of presetRadios(parts)) radio.disabled = config;
  parts.presetList.classList.toggle('disabled', config);
  parts.configClear.hidden = !config;
  parts.presetNote.textContent = config ? 'Your config below is used instead of a preset; clear it to use a preset.' : '';
  if (!config) parts.configKind.textContent = '';
}

/** The value a generated box holds for the scenario: undefined when blank (or a switch at the core's default). */
function inputValue(option: CatalogOption, input: HTMLInputElement): unknown {
  if (option.kind === 'boolean') return input.checked === (option.default === true) ? undefined : input.checked;
  if (option.kind === 'names') return parseNames(input.value);
  return Number.isNaN(input.valueAsNumber) ? undefined : input.valueAsNumber;
}

/**
 * Shows the fields that apply to the section's choice (optionApplies: LoRA's only for lora and qlora, the
 * trained blocks only for freeze) and hides the rest; returns the training values read, without the hidden.
 */
export function showApplicableFields(parts: FormParts): Record<string, unknown> {
  const read: Record<string, unknown> = {};
  for (const [option, select] of parts.choices) {
    const value = scenarioChoice(option, select.value);
    if (value !== undefined) read[option.key] = value;
  }
  for (const [option, input] of parts.inputs) {
    const value = inputValue(option, input);
    if (value !== undefined) read[option.key] = value;
  }
  for (const [option, control] of [...parts.choices, ...parts.inputs]) {
    const applies = optionApplies(option, read, parts.options);
    const field = control.closest<HTMLElement>('.field');
    if (field !== null) field.hidden = !applies;
    if (!applies) delete read[option.key];
  }
  return read;
}

/** Reads the model and training parts of the scenario. Empty number boxes are left out, and fields that do not apply. */
export function readModelAndTraining(parts: FormParts, fallbackPreset: string): Pick<Scenario, 'preset' | 'config' | 'training'> {
  const checked = presetRadios(parts).find((radio) => radio.checked);
  // Every scenario holds the optimizer, and the precision when one is chosen: their selects set them here (scenarioChoice).
  const training = showApplicableFields(parts) as unknown as Training;
  for (const field of NUMBER_FIELDS) {
    const value = parts.numbers[field].valueAsNumber;
    if (!Number.isNaN(value)) training[field] = value;
  }
  return { preset: checked?.value ?? fallbackPreset, config: configText(parts), training };
}

export function applyModelAndTraining(parts: FormParts, scenario: Scenario): void {
  for (const radio of presetRadios(parts)) radio.checked = radio.value === scenario.preset;
  setConfig(parts, scenario.config, 'the config from the link');
  for (const field of NUMBER_FIELDS) {
    const value = scenario.training[field];
    parts.numbers[field].value = value === undefined ? '' : String(value);
  }
  const choices = scenario.training as unknown as Record<string, unknown>;
  for (const [option, select] of parts.choices) {
    const value = choices[option.key];
    const fallback = MODEL_DEFAULT_CHOICES.has(option.key) ? '' : typeof option.default === 'string' ? option.default : '';
    select.value = typeof value === 'string' ? value : fallback;
  }
  for (const [option, input] of parts.inputs) {
    const value = choices[option.key];
    if (option.kind === 'boolean') input.checked = typeof value === 'boolean' ? value : option.default === true;
    else if (option.kind === 'names') input.value = namesText(value, ', ');
    else input.value = value === undefined ? '' : String(value);
  }
  showApplicableFields(parts);
  updatePresetNote(parts);
}

/** A number box the user has not filled shows, as its placeholder, the value the core used. */
export function showDefaults(parts: FormParts, response: PredictResponse): void {
  const { input } = response.model;
  const { training } = response;
  // Short: the boxes are narrow on a phone. The labels' titles carry the longer explanation.
  parts.numbers.seq_len.placeholder = input.seq_len !== undefined ? `${input.seq_len} (default)` : 'not used';
  parts.numbers.image_size.placeholder = input.image_size !== undefined ? `${input.image_size} (default)` : 'not used';
  parts.numbers.dataset_size.placeholder = `${(training.batch_size * 100).toLocaleString('en-US')} (default)`;
  for (const [option, select] of parts.choices) {
    const blank = select.options[0];
    if (MODEL_DEFAULT_CHOICES.has(option.key) && blank?.value === '') blank.text = modelDefaultText(option, response);
  }
}

/**
 * Fills "Measured on" with the selected accelerators, keeping `chosen` selected. While a step is
 * entered, an accelerator that was unticked stays in the list, marked, so the request still names
 * it and the core's error (`calibration.hardware`) appears beside the field; with no step entered
 * it is simply dropped.
 */
export function syncMeasuredOn(parts: FormParts, hardware: readonly string[], nameOf: (id: string) => string, chosen: string): void {
  const ids = [...hardware];
  const stale = chosen !== '' && !ids.includes(chosen) && parts.measuredStep.value.trim() !== '';
  const wanted = [...ids.map((id) => [id, nameOf(id)]), ...(stale ? [[chosen, `${nameOf(chosen)} (not selected)`]] : [])];
  const current = [...parts.measuredOn.options].map((option) => [option.value, option.text]);
  if (JSON.stringify(current) !== JSON.stringify(wanted)) {
    parts.measuredOn.replaceChildren(
      ...wanted.map(([value = '', text = '']) => {
        const option = element('option', text);
        option.value = value;
        return option;
      }),
    );
  }
  parts.measuredOn.value = ids.includes(chosen) || stale ? chosen : (ids[0] ?? '');
  parts.measuredOn.disabled = wanted.length === 0;
}

/** The measured step and its accelerator; null when no step is entered. */
export function readCalibration(parts: FormParts): Calibration | null {
  const step = parts.measuredStep.valueAsNumber;
  if (Number.isNaN(step)) return null;
  return { hardware: parts.measuredOn.value, step_ms: step };
}

export function applyCalibration(parts: FormParts, scenario: Scenario, nameOf: (id: string) => string): void {
  parts.measuredStep.value = scenario.calibration === null ? '' : String(scenario.calibration.step_ms);
  syncMeasuredOn(parts, scenario.hardware, nameOf, scenario.calibration?.hardware ?? parts.measuredOn.value);
}

// ------------------------------------------------------------------ GPUs and parallelism

/** The parallel settings; empty boxes are left out (the core derives or defaults them). */
export function readParallel(parts: FormParts): Parallel {
  // The select holds only the core's modes (populateForm); empty before the catalogue has loaded.
  const recompute = (parts.recompute.value || defaultScenario().parallel.recompute) as Recompute;
  const parallel: Parallel = {
    zero_stage: Number(parts.zeroStage.value) || 0,
    recompute,
  };
  if (parts.sequenceParallel.value === 'on') parallel.sequence_parallel = true;
  for (const field of PARALLEL_NUMBERS) {
    const value = parts.parallel[field].valueAsNumber;
    if (!Number.isNaN(value)) parallel[field] = value;
  }
  return parallel;
}

export function applyParallel(parts: FormParts, parallel: Parallel): void {
  for (const field of PARALLEL_NUMBERS) {
    const value = parallel[field];
    parts.parallel[field].value = value === undefined ? '' : String(value);
  }
  // A stage outside 0-3 cannot come from a link (scenario.js refuses it), so the select can show it.
  parts.zeroStage.value = String(parallel.zero_stage);
  parts.recompute.value = parallel.recompute;
  parts.sequenceParallel.value = parallel.sequence_parallel === true ? 'on' : 'off';
  // Overrides from a link must be visible, not hidden in a closed box.
  if (['gpus_per_node', 'intra_node_gbs', 'intra_node_us', 'inter_node_gbs', 'inter_node_us'].some((f) => parallel[f as ParallelNumber] !== undefined)) {
    parts.parallelLinks.open = true;
  }
}

/** The placeholders the boxes have in the page, before any result overwrote them. */
const originalPlaceholders = new Map<HTMLInputElement, string>();

/**
 * With several GPUs, blank boxes show what the core derived ("4 (derived)"); the links show the
 * catalogue's value when every ticked accelerator has the same, else "per accelerator".
 */
export function showParallelDefaults(parts: FormParts, response: PredictResponse): void {
  for (const input of Object.values(parts.parallel)) {
    if (!originalPlaceholders.has(input)) originalPlaceholders.set(input, input.placeholder);
    input.placeholder = originalPlaceholders.get(input) ?? '';
  }
  const layouts = response.results.map((r) => r.parallel).filter((p) => p !== undefined);
  const first = layouts[0];
  if (first === undefined) return;
  for (const field of ['gpus', 'data', 'tensor', 'pipeline', 'micro_batch_size', 'micro_batches'] as const) {
    parts.parallel[field].placeholder = `${first[field]} (derived)`;
  }
  const same = (pick: (p: NonNullable<typeof first>) => number): string => {
    const values = new Set(layouts.map(pick));
    return values.size === 1 ? `${formatLinkNumber(pick(first))} (catalogue)` : 'per accelerator';
  };
  parts.parallel.gpus_per_node.placeholder = same((p) => p.links.gpus_per_node);
  parts.parallel.intra_node_gbs.placeholder = same((p) => p.links.intra_node.bandwidth_gbs);
  parts.parallel.intra_node_us.placeholder = same((p) => p.links.intra_node.latency_us);
  parts.parallel.inter_node_gbs.placeholder = same((p) => p.links.inter_node.bandwidth_gbs);
  parts.parallel.inter_node_us.placeholder = same((p) => p.links.inter_node.latency_us);
}

function formatLinkNumber(value: number): string {
  return Number(value.toPrecision(4)).toString();
}
