// Errors beside their inputs, the status line, and the "what was understood" summary.
// Text only (textContent), never HTML.

import { finetuneSetting, trainingSettings } from './describe';
import { byId, element } from './dom';
import { formatSI } from './format.js';
import type { ModelInput, PredictResponse } from './types';

// ------------------------------------------------------------------ errors

/** `parallel.<key>` fields with their own box (`#parallel-<key>` and `#parallel-<key>-error`). */
const PARALLEL_FIELDS = new Set(['gpus', 'data', 'tensor', 'pipeline', 'micro_batch_size', 'micro_batches', 'zero_stage', 'recompute', 'sequence_parallel', 'gpus_per_node']);

/** `parallel.tensor` → the tensor box; `parallel.intra_node.latency_us` → that link's latency box. */
function parallelTargets(field: string): { box: HTMLElement; control: HTMLElement | null } | null {
  const match = /^parallel(?:\.([a-z_]+)(?:\.([a-z_]+))?)?(?![\w[])/.exec(field);
  if (match === null) return null;
  const key = match[1] === 'fsdp' ? 'zero_stage' : match[1];
  if (key === 'intra_node' || key === 'inter_node') {
    const control = `parallel-${key}-${match[2] === 'latency_us' ? 'latency_us' : 'bandwidth_gbs'}`;
    return { box: byId(`parallel-${key}-error`, HTMLElement), control: document.getElementById(control) };
  }
  if (key !== undefined && PARALLEL_FIELDS.has(key)) {
    return { box: byId(`parallel-${key}-error`, HTMLElement), control: document.getElementById(`parallel-${key}`) };
  }
  return { box: byId('parallel-error', HTMLElement), control: null };
}

/**
 * The box and control of a training option: each option of the catalogue has a field in the form
 * (form.ts), the number inputs of index.html named by the key (`batch_size`), the ones form.ts builds by
 * the key with dots and underscores as dashes (`optimizer-impl`, `finetune-rank`), each with its error box
 * `<id>-error`. A section's member (`finetune.rank`) whose field is missing or hidden falls back to the
 * section's fieldset (`#finetune`, `#finetune-error`); null for a training field with neither.
 */
function trainingTargets(key: string): { box: HTMLElement; control: HTMLElement | null } | null {
  for (let path = key; path !== ''; path = path.slice(0, Math.max(0, path.lastIndexOf('.')))) {
    for (const id of [path, path.replace(/[._]/g, '-')]) {
      const box = document.getElementById(`${id}-error`);
      const control = document.getElementById(id);
      if (box !== null && control !== null && control.closest('[hidden]') === null) return { box, control };
    }
  }
  return null;
}

function usingConfig(): boolean {
  const config = document.getElementById('config');
  if (document.getElementById('config-held')?.hidden === false) return true; // a large config, held by form.ts
  return config instanceof HTMLTextAreaElement && config.value.trim() !== '';
}

/**
 * The error box and the control for a field path: `training.batch_size` → #batch_size-error and
 * #batch_size; `calibration.*` → beside the measured step; `parallel.*` → beside its box; `hardware[2]…` → the accelerator list; anything about the model (or the pasted
 * config, or the whole request) → beside the config box or the presets. Unknown fields go to the
 * status line.
 */
function targetsFor(field: string): { box: HTMLElement; control: HTMLElement | null } {
  const training = /^training\.([a-z_]+(?:\.[a-z_]+)*)/.exec(field)?.[1];
  if (training !== undefined) {
    const targets = trainingTargets(training);
    if (targets !== null) return targets;
  }
  if (field.startsWith('calibration')) {
    const control = field === 'calibration.hardware' ? 'measured_on' : 'measured_step';
    return { box: byId('measured_step-error', HTMLElement), control: document.getElementById(control) };
  }
  const parallel = parallelTargets(field);
  if (parallel !== null) return parallel;
  if (field.startsWith('hardware')) return { box: byId('hardware-error', HTMLElement), control: document.getElementById('hardware-list') };
  if (/^(model|config|request)\b/.test(field)) {
    const held = document.getElementById('config-held')?.hidden === false;
    const control = field === 'model.preset' || !usingConfig() ? 'preset-list' : held ? 'config-held' : 'config';
    return { box: byId('model-error', HTMLElement), control: document.getElementById(control) };
  }
  return { box: byId('status', HTMLElement), control: null };
}

export function showError(field: string, message: string): void {
  const { box, control } = targetsFor(field);
  box.textContent = message;
  box.hidden = false;
  box.classList.add('error'); // the status line only wears it while it shows an error
  box.dataset.field = field;
  control?.setAttribute('aria-invalid', 'true');
  // A link override's error must not hide in the collapsed "advanced" box.
  const details = control?.closest('details');
  if (details instanceof HTMLDetailsElement && details.id === 'parallel-links') details.open = true;
}

export function clearErrors(): void {
  for (const box of document.querySelectorAll<HTMLElement>('#inputs p.error')) {
    if (box.id.startsWith('custom-')) continue; // the custom form validates on its own
    box.textContent = '';
    box.hidden = true;
    delete box.dataset.field;
  }
  for (const control of document.querySelectorAll('#inputs [aria-invalid]')) {
    if (!control.id.startsWith('custom-')) control.removeAttribute('aria-invalid');
  }
  const status = byId('status', HTMLElement);
  if (status.dataset.field !== undefined) {
    status.textContent = '';
    status.classList.remove('error');
    delete status.dataset.field;
  }
}

/** @param kind a 'note' (what a link got wrong) stays until the user changes an input */
export function setStatus(text: string, kind: 'info' | 'note' = 'info'): void {
  const status = byId('status', HTMLElement);
  status.textContent = text;
  status.classList.toggle('note', kind === 'note' && text !== '');
}

/** Called on the user's first change after a link was restored. */
export function clearNote(): void {
  const status = byId('status', HTMLElement);
  if (status.classList.contains('note')) setStatus('');
}

/** Keeps the last good results on screen, visibly marked as not matching the inputs. */
export function markStale(stale: boolean): void {
  byId('output', HTMLElement).classList.toggle('stale', stale);
  const status = byId('status', HTMLElement);
  if (status.dataset.field !== undefined) return; // the status line is showing the error itself
  if (stale) setStatus('The results below are for the previous inputs: fix the problem shown beside the inputs.');
  else if (!status.classList.contains('note')) setStatus('');
}

// ------------------------------------------------------------------ summary

function describeInput(input: ModelInput): string {
  if (input.seq_len !== undefined) return `${input.kind}, sequence length ${input.seq_len}`;
  if (input.image_size !== undefined) {
    const channels = input.channels !== undefined ? `, ${input.channels} channels` : '';
    return `${input.kind}, ${input.image_size} × ${input.image_size} px${channels}`;
  }
  return input.kind;
}

/** How each `model.source` reads in the summary; an unknown source is shown as it is. */
const SOURCE_LABELS: Record<string, string> = {
  preset: 'preset',
  hf_config: 'Hugging Face config',
  layers: 'layer list',
};

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;
}

/** @param presetName the catalogue's name for a preset ("BERT-Base (uncased), …"), shown with its id */
export function summaryRows(response: PredictResponse, presetName?: string): Array<[string, string]> {
  const { model, training } = response;
  const flops = model.flops_per_step;
  const title = presetName !== undefined && presetName !== model.name ? `${presetName}: ${model.name}` : model.name;
  const tune = finetuneSetting(training);
  return [
    ['Model', `${title} (from ${SOURCE_LABELS[model.source] ?? model.source})`],
    ['Parameters', `${formatSI(model.parameters)} (${model.parameters.toLocaleString('en-US')})`],
    ['Layers', model.layer_count.toLocaleString('en-US')],
    ['Input', describeInput(model.input)],
    [
      'FLOPs per step',
      `${formatSI(flops.total, 'FLOP')}: forward ${formatSI(flops.forward, 'FLOP')}, backward ${formatSI(flops.backward, 'FLOP')}, ` +
        `optimizer ${formatSI(flops.optimizer, 'FLOP')}`,
    ],
    [
      'Schedule',
      `${plural(training.steps_per_epoch, 'step')} per epoch × ${plural(training.epochs, 'epoch')} ` +
        `(${plural(training.dataset_size, 'sample')} per epoch, batch ${training.batch_size})`,
    ],
    ['Precision, optimizer', trainingSettings(training, false).join(', ')],
    ...(tune === null ? [] : [['Fine-tuning', tune] as [string, string]]),
    ...layoutRows(response),
  ];
}

const RECOMPUTE_LABELS: Record<string, string> = { none: 'no recomputation', selective: 'selective recomputation', full: 'full recomputation' };

/** With several GPUs: the layout the core resolved (derived degrees included), the same for every accelerator. */
function layoutRows(response: PredictResponse): Array<[string, string]> {
  const p = response.results[0]?.parallel;
  if (p === undefined) return [];
  return [
    [
      'GPUs',
      `${plural(p.gpus, 'GPU')} = data ${p.data} × tensor ${p.tensor} × pipeline ${p.pipeline}; ` +
        `per replica ${plural(p.micro_batches, 'micro-batch', 'micro-batches')} of ${p.micro_batch_size} ` +
        `(global batch ${response.training.batch_size}); ZeRO stage ${p.zero_stage}, ${RECOMPUTE_LABELS[p.recompute] ?? p.recompute}` +
        (p.sequence_parallel === true && p.tensor > 1 ? ', sequence parallelism' : ''),
    ],
  ];
}

export function renderSummary(response: PredictResponse, presetName?: string): void {
  byId('summary', HTMLElement).replaceChildren(
    ...summaryRows(response, presetName).flatMap(([term, value]) => [element('dt', term), element('dd', value)]),
  );
  byId('warnings', HTMLElement).replaceChildren(...response.warnings.map((warning) => element('li', warning)));
}
