// Writes responses and errors into the page. Text only (textContent), never HTML.

import { byId, element } from './dom';
import { formatCost, formatDuration, formatGB, formatMs, formatPercent, formatSI } from './format.js';
import type { HardwareResult, ModelInput, PredictResponse } from './types';

// ------------------------------------------------------------------ errors

/**
 * The error box beside the input a field path points at: `training.batch_size` → #batch_size-error,
 * `hardware[2]` → #hardware-error, anything under `model` (or the pasted config, or the whole
 * request) → #model-error. Unknown fields go to the status line.
 */
function errorBoxFor(field: string): HTMLElement {
  const training = /^training\.([a-z_]+)/.exec(field);
  const id = training
    ? `${training[1]}-error`
    : field.startsWith('hardware')
      ? 'hardware-error'
      : /^(model|config|request)\b/.test(field)
        ? 'model-error'
        : 'status';
  return document.getElementById(id) ?? byId('status', HTMLElement);
}

/** The control a field path points at, marked aria-invalid while its error shows. */
function controlFor(field: string): HTMLElement | null {
  const training = /^training\.([a-z_]+)/.exec(field);
  if (training) return document.getElementById(training[1] ?? '');
  if (field.startsWith('hardware')) return document.getElementById('hardware-list');
  if (field === 'model.preset') return document.getElementById('preset');
  // Any other model problem is in the pasted config when there is one.
  const config = document.getElementById('config');
  if (config instanceof HTMLTextAreaElement && config.value.trim() !== '') return config;
  return document.getElementById('preset');
}

export function showError(field: string, message: string): void {
  const box = errorBoxFor(field);
  box.textContent = message;
  box.hidden = false;
  box.classList.add('error'); // the status line only wears it while it shows an error
  box.dataset.field = field;
  if (box.id !== 'status') controlFor(field)?.setAttribute('aria-invalid', 'true');
}

export function clearErrors(): void {
  for (const box of document.querySelectorAll<HTMLElement>('p.error:not(#status)')) {
    box.textContent = '';
    box.hidden = true;
    delete box.dataset.field;
  }
  for (const control of document.querySelectorAll('[aria-invalid]')) control.removeAttribute('aria-invalid');
  // The status line is never hidden; it is cleared only if it was showing an error.
  const status = byId('status', HTMLElement);
  if (status.dataset.field !== undefined) {
    status.textContent = '';
    status.classList.remove('error');
    delete status.dataset.field;
  }
}

export function setStatus(text: string): void {
  byId('status', HTMLElement).textContent = text;
}

/** Keeps the last good results on screen, visibly marked as not matching the inputs. */
export function markStale(stale: boolean): void {
  byId('output', HTMLElement).classList.toggle('stale', stale);
  const status = byId('status', HTMLElement);
  if (status.dataset.field !== undefined) return; // the status line is showing the error itself
  status.textContent = stale
    ? 'The results below are for the previous inputs; fix the problem shown beside the inputs.'
    : '';
}

// ------------------------------------------------------------------ summary

function describeInput(input: ModelInput): string {
  if (input.seq_len !== undefined) return `${input.kind}, sequence length ${input.seq_len}`;
  if (input.image_size !== undefined) return `${input.kind}, ${input.image_size} × ${input.image_size} px`;
  return input.kind;
}

/** How each `model.source` reads in the summary; an unknown source is shown as it is. */
const SOURCE_LABELS: Record<string, string> = {
  preset: 'preset',
  hf_config: 'Hugging Face config',
  layers: 'layer list',
};

function summaryRows(response: PredictResponse): Array<[string, string]> {
  const { model, training } = response;
  const flops = model.flops_per_step;
  const epochs = `${training.epochs} epoch${training.epochs === 1 ? '' : 's'}`;
  return [
    ['Model', `${model.name} (from ${SOURCE_LABELS[model.source] ?? model.source})`],
    ['Parameters', `${formatSI(model.parameters)} (${model.parameters.toLocaleString('en-US')})`],
    ['Layers', model.layer_count.toLocaleString('en-US')],
    ['Input', describeInput(model.input)],
    [
      'FLOPs per step',
      `${formatSI(flops.total, 'FLOP')}: forward ${formatSI(flops.forward, 'FLOP')}, ` +
        `backward ${formatSI(flops.backward, 'FLOP')}, optimizer ${formatSI(flops.optimizer, 'FLOP')}`,
    ],
    [
      'Schedule',
      `${training.steps_per_epoch.toLocaleString('en-US')} steps per epoch × ${epochs} ` +
        `(${training.dataset_size.toLocaleString('en-US')} samples, batch ${training.batch_size})`,
    ],
    ['Precision, optimizer', `${training.precision}, ${training.optimizer}`],
  ];
}

export function renderSummary(response: PredictResponse): void {
  byId('summary', HTMLElement).replaceChildren(
    ...summaryRows(response).flatMap(([term, value]) => [element('dt', term), element('dd', value)]),
  );
  byId('warnings', HTMLElement).replaceChildren(
    ...response.warnings.map((warning) => element('li', warning)),
  );
}

// ------------------------------------------------------------------ results table

/** One cell: display text, with the raw number kept in data-value for tests and tooltips. */
function cell(column: string, text: string, value?: number | boolean | null, className?: string): HTMLTableCellElement {
  const td = element('td', text, className);
  td.dataset.col = column;
  if (value !== undefined && value !== null) td.dataset.value = String(value);
  return td;
}

function resultRow(result: HardwareResult): HTMLTableRowElement {
  const row = element('tr');
  row.dataset.hardware = result.hardware;
  const name = element('th', result.name);
  name.scope = 'row';
  name.title = result.custom ? 'custom accelerator' : result.hardware;
  const memory = result.memory;
  const memoryCell = cell('memory_gb', formatGB(result.memory_gb), result.memory_gb, 'num');
  memoryCell.title =
    `weights ${formatGB(memory.weights_gb)}, gradients ${formatGB(memory.gradients_gb)}, ` +
    `optimizer ${formatGB(memory.optimizer_gb)}, activations ${formatGB(memory.activations_gb)}`;
  row.append(
    name,
    cell('step_ms', formatMs(result.step_ms), result.step_ms, 'num'),
    cell('forward_ms', formatMs(result.forward_ms), result.forward_ms, 'num'),
    cell('backward_ms', formatMs(result.backward_ms), result.backward_ms, 'num'),
    cell('optimizer_ms', formatMs(result.optimizer_ms), result.optimizer_ms, 'num'),
    cell('epoch_s', formatDuration(result.epoch_s), result.epoch_s, 'num'),
    cell('total_s', formatDuration(result.total_s), result.total_s, 'num'),
    memoryCell,
    cell('fits', result.fits ? 'yes' : 'no', result.fits, result.fits ? 'fits' : 'fits no'),
    cell('cost_usd', formatCost(result.cost_usd), result.cost_usd, 'num'),
    cell('mfu', formatPercent(result.mfu), result.mfu, 'num'),
    cell('bottleneck', result.bottleneck, undefined, `bound-${result.bottleneck}`),
  );
  return row;
}

export function renderResults(response: PredictResponse): void {
  const body = byId('results', HTMLTableElement).tBodies[0];
  if (body === undefined) throw new Error('page is missing the results <tbody>');
  body.replaceChildren(...response.results.map(resultRow));
  byId('version', HTMLElement).textContent =
    `core ${response.version} · predictor ${response.predictor}`;
}
