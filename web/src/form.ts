// The input form: filled from the catalogue, read into a request (docs/API.md).

import { byId, element } from './dom';
import { readModelConfig } from './model-config.js';
import type { Catalog, HardwareEntry, ModelSpec, PredictRequest, TrainingSpec } from './types';

/** Training fields typed as numbers; each has an <input id=field> and a <p id=field-error>. */
export const NUMBER_FIELDS = ['batch_size', 'seq_len', 'image_size', 'dataset_size', 'epochs'] as const;
type NumberField = (typeof NUMBER_FIELDS)[number];

/** The example shown on load. Hardware ids missing from the catalogue are skipped. */
export const DEFAULTS = {
  preset: 'bert-base',
  hardware: ['a100-sxm4-80gb', 'h100-sxm', 'v100-sxm2-32gb'],
  precision: 'fp32',
  optimizer: 'adam',
} as const;

export interface Inputs {
  form: HTMLFormElement;
  preset: HTMLSelectElement;
  config: HTMLTextAreaElement;
  configKind: HTMLElement;
  hardwareSearch: HTMLInputElement;
  hardwareList: HTMLElement;
  hardwareCount: HTMLElement;
  numbers: Record<NumberField, HTMLInputElement>;
  precision: HTMLSelectElement;
  optimizer: HTMLSelectElement;
}

export function findInputs(): Inputs {
  const numbers = Object.fromEntries(
    NUMBER_FIELDS.map((field) => [field, byId(field, HTMLInputElement)]),
  ) as Record<NumberField, HTMLInputElement>;
  return {
    form: byId('inputs', HTMLFormElement),
    preset: byId('preset', HTMLSelectElement),
    config: byId('config', HTMLTextAreaElement),
    configKind: byId('config-kind', HTMLElement),
    hardwareSearch: byId('hardware-search', HTMLInputElement),
    hardwareList: byId('hardware-list', HTMLElement),
    hardwareCount: byId('hardware-count', HTMLElement),
    numbers,
    precision: byId('precision', HTMLSelectElement),
    optimizer: byId('optimizer', HTMLSelectElement),
  };
}

function fillSelect(select: HTMLSelectElement, options: ReadonlyArray<[value: string, label: string]>, selected: string): void {
  select.replaceChildren(
    ...options.map(([value, label]) => {
      const option = element('option', label);
      option.value = value;
      option.selected = value === selected;
      return option;
    }),
  );
}

function hardwareCheckbox(entry: HardwareEntry, checked: boolean): HTMLLabelElement {
  const label = element('label', undefined, 'check');
  const box = element('input');
  box.type = 'checkbox';
  box.value = entry.id;
  box.checked = checked;
  // What the search box matches against: the visible name and the id used by the CLI.
  label.dataset.search = `${entry.name} ${entry.id}`.toLowerCase();
  label.append(box, element('span', entry.name), element('span', entry.id, 'hint'));
  return label;
}

export function populate(inputs: Inputs, catalog: Catalog): void {
  fillSelect(
    inputs.preset,
    catalog.presets.map((preset) => [preset.id, preset.name]),
    DEFAULTS.preset,
  );
  fillSelect(inputs.precision, catalog.precisions.map((p) => [p, p]), DEFAULTS.precision);
  fillSelect(inputs.optimizer, catalog.optimizers.map((o) => [o, o]), DEFAULTS.optimizer);
  // The ticked defaults come first so they are in view without scrolling; the rest keep the
  // catalogue's order.
  const selected = new Set<string>(DEFAULTS.hardware);
  const ordered = [
    ...catalog.hardware.filter((entry) => selected.has(entry.id)),
    ...catalog.hardware.filter((entry) => !selected.has(entry.id)),
  ];
  inputs.hardwareList.replaceChildren(
    ...ordered.map((entry) => hardwareCheckbox(entry, selected.has(entry.id))),
  );
  filterHardware(inputs);
  showPresetDefaults(inputs, catalog);
}

function hardwareBoxes(inputs: Inputs): HTMLInputElement[] {
  return [...inputs.hardwareList.querySelectorAll<HTMLInputElement>('input[type=checkbox]')];
}

/** Shows the catalogue entries matching every word of the search box; keeps the count current. */
export function filterHardware(inputs: Inputs): void {
  const words = inputs.hardwareSearch.value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  for (const label of inputs.hardwareList.querySelectorAll<HTMLLabelElement>('label.check')) {
    const haystack = label.dataset.search ?? '';
    label.hidden = !words.every((word) => haystack.includes(word));
    if (!label.hidden) shown += 1;
  }
  const boxes = hardwareBoxes(inputs);
  const checked = boxes.filter((box) => box.checked).length;
  const hiddenChecked = boxes.filter((box) => box.checked && box.closest('label')?.hidden).length;
  const hiddenNote = hiddenChecked > 0 ? ` (${hiddenChecked} hidden by the search)` : '';
  inputs.hardwareCount.textContent = `${checked} selected${hiddenNote} · showing ${shown} of ${boxes.length}`;
}

/** The sequence-length / image-size placeholders tell what the chosen preset uses by default. */
export function showPresetDefaults(inputs: Inputs, catalog: Catalog): void {
  const usingConfig = inputs.config.value.trim() !== '';
  const preset = catalog.presets.find((p) => p.id === inputs.preset.value);
  const input = usingConfig ? undefined : preset?.input;
  inputs.numbers.seq_len.placeholder =
    input === undefined ? 'model default' : input.seq_len !== undefined ? `${input.seq_len} (default)` : 'not used';
  inputs.numbers.image_size.placeholder =
    input === undefined ? 'model default' : input.image_size !== undefined ? `${input.image_size} (default)` : 'not used';
  inputs.preset.disabled = usingConfig;
}

export type FormReading =
  | { ok: true; request: PredictRequest }
  | { ok: false; field: string; message: string };

function readModel(inputs: Inputs): { ok: true; model: ModelSpec } | { ok: false; field: string; message: string } {
  const text = inputs.config.value.trim();
  if (text === '') {
    inputs.configKind.textContent = '';
    return { ok: true, model: { preset: inputs.preset.value } };
  }
  const reading = readModelConfig(text);
  inputs.configKind.textContent = reading.ok
    ? `Read as: ${reading.description}. Clear the box to use the preset.`
    : '';
  return reading.ok ? reading : { ok: false, field: 'config', message: reading.message };
}

/** Empty number boxes are left out, so the core applies the model's or the contract's default. */
function readTraining(inputs: Inputs): TrainingSpec {
  const training: TrainingSpec = {
    precision: inputs.precision.value as TrainingSpec['precision'],
    optimizer: inputs.optimizer.value as TrainingSpec['optimizer'],
  };
  for (const field of NUMBER_FIELDS) {
    const value = inputs.numbers[field].valueAsNumber;
    if (!Number.isNaN(value)) training[field] = value;
  }
  return training;
}

/**
 * The request the form describes, or the one problem the page itself can see (a config that is
 * not JSON, no accelerator ticked). Everything else is left to the core to judge.
 */
export function readForm(inputs: Inputs): FormReading {
  const model = readModel(inputs);
  if (!model.ok) return model;
  const hardware = hardwareBoxes(inputs)
    .filter((box) => box.checked)
    .map((box) => box.value);
  if (hardware.length === 0) {
    return { ok: false, field: 'hardware', message: 'hardware: tick at least one accelerator' };
  }
  return {
    ok: true,
    request: {
      model: model.model,
      training: readTraining(inputs),
      hardware,
      // The page shows no per-layer table yet; skipping it keeps responses small.
      options: { per_layer: false },
    },
  };
}
