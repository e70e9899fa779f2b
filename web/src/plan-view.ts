// The Plan panel: a training budget (tokens or samples) and a GPU limit in, the core's ranked
// layouts for the ticked accelerators out, by time or by cost; "Use" copies a layout into the form.
// Text only (textContent), never HTML.

import { byId, element } from './dom';
import { formatCost, formatDuration, formatGB, formatSI } from './format.js';
import type { BudgetUnit, PlanRank, PlanSettings } from './scenario.js';
import { rankLayouts } from './sort.js';
import type { PlanLayout, PlanResponse, PlanRow } from './types';

export interface PlanParts {
  form: HTMLFormElement;
  budget: HTMLInputElement;
  unit: HTMLSelectElement;
  maxGpus: HTMLInputElement;
  rank: HTMLSelectElement;
  run: HTMLButtonElement;
  note: HTMLElement;
  table: HTMLTableElement;
}

export function findPlan(): PlanParts {
  return {
    form: byId('plan-form', HTMLFormElement),
    budget: byId('plan-budget', HTMLInputElement),
    unit: byId('plan-unit', HTMLSelectElement),
    maxGpus: byId('plan-max_gpus', HTMLInputElement),
    rank: byId('plan-rank', HTMLSelectElement),
    run: byId('plan-run', HTMLButtonElement),
    note: byId('plan-note', HTMLElement),
    table: byId('plan-results', HTMLTableElement),
  };
}

export function readPlan(parts: PlanParts): PlanSettings {
  const settings: PlanSettings = {
    unit: parts.unit.value === 'samples' ? 'samples' : 'tokens',
    rank: parts.rank.value === 'cost' ? 'cost' : 'time',
  };
  const budget = parts.budget.valueAsNumber;
  if (!Number.isNaN(budget)) settings.budget = budget;
  const maxGpus = parts.maxGpus.valueAsNumber;
  if (!Number.isNaN(maxGpus)) settings.max_gpus = maxGpus;
  return settings;
}

export function applyPlan(parts: PlanParts, settings: PlanSettings): void {
  parts.budget.value = settings.budget === undefined ? '' : String(settings.budget);
  parts.unit.value = settings.unit satisfies BudgetUnit;
  parts.maxGpus.value = settings.max_gpus === undefined ? '' : String(settings.max_gpus);
  parts.rank.value = settings.rank satisfies PlanRank;
}

/** The Plan panel's own errors: `plan.tokens` → beside the budget, `plan.max_gpus` → beside the limit, others below. */
export function showPlanError(field: string | null, message = ''): void {
  for (const id of ['plan-budget', 'plan-max_gpus', 'plan']) {
    const box = byId(`${id}-error`, HTMLElement);
    box.hidden = true;
    box.textContent = '';
    delete box.dataset.field;
    document.getElementById(id)?.removeAttribute('aria-invalid');
  }
  if (field === null) return;
  const target = /^plan\.(tokens|samples)\b/.test(field) ? 'plan-budget' : /^plan\.max_gpus\b/.test(field) ? 'plan-max_gpus' : null;
  const box = byId(target === null ? 'plan-error' : `${target}-error`, HTMLElement);
  box.textContent = message;
  box.hidden = false;
  box.dataset.field = field;
  if (target !== null) document.getElementById(target)?.setAttribute('aria-invalid', 'true');
}

function cell(column: string, text: string, value?: number | string | null, className?: string): HTMLTableCellElement {
  const td = element('td', text, className);
  td.dataset.col = column;
  if (value !== undefined && value !== null) td.dataset.value = String(value);
  return td;
}

/** What a layout adds to data × tensor × pipeline: "+ SP + CP 2 + EP 8 + 2 chunks", joined by `join`. */
export function layoutExtras(layout: PlanLayout, join: string): string {
  const extras = [
    layout.sequence_parallel ? 'SP' : '',
    layout.context !== undefined && layout.context > 1 ? `CP ${layout.context}` : '',
    layout.expert !== undefined && layout.expert > 1 ? `EP ${layout.expert}` : '',
    layout.virtual_stages !== undefined && layout.virtual_stages > 1 ? `${layout.virtual_stages} chunks` : '',
  ].filter(Boolean);
  return extras.map((e) => `${join}${e}`).join('');
}

/** A layout in the Plan table's words: "8 × 2 × 1 + SP" (also the scaling table's, scaling-view.ts). */
export function layoutText(layout: PlanLayout): string {
  return `${layout.data} × ${layout.tensor} × ${layout.pipeline}${layoutExtras(layout, ' + ')}`;
}

/**
 * Fills the ranked table (the first `limit` rows) and the note under the form.
 * @param use called with a row when its "Use" button is pressed
 */
export function renderPlan(parts: PlanParts, response: PlanResponse, settings: PlanSettings, use: (row: PlanRow) => void, limit = 20): void {
  const ranked = rankLayouts(response, settings.rank);
  const shown = ranked.slice(0, limit);
  const body = parts.table.tBodies[0] ?? parts.table.createTBody();
  body.replaceChildren(
    ...shown.map((layout, index) => {
      const row = element('tr');
      row.dataset.hardware = layout.hardware;
      const name = element('th', layout.name);
      name.scope = 'row';
      const button = element('button', 'Use', 'button small');
      button.type = 'button';
      button.title = `Copy this layout (${layout.gpus} × ${layout.name}) into the form`;
      // Many rows have a "Use" button: the name says which layout (and starts with the visible word).
      button.setAttribute('aria-label', `Use layout ${index + 1}: ${layout.gpus} × ${layout.name}`);
      button.addEventListener('click', () => use(layout));
      const apply = element('td');
      apply.append(button);
      const memory = cell('memory_gb', `${formatGB(layout.memory_gb)} of ${formatGB(layout.device_memory_gb)}`, layout.memory_gb, 'num');
      memory.dataset.device = String(layout.device_memory_gb);
      row.append(
        cell('rank', String(index + 1), index + 1, 'num'),
        name,
        cell('gpus', layout.gpus.toLocaleString('en-US'), layout.gpus, 'num'),
        cell(
          'layout',
          layoutText(layout),
          `${layout.data}x${layout.tensor}x${layout.pipeline}${layoutExtras(layout, '+').toLowerCase()}`,
          'layout',
        ),
        cell('micro_batch', `${layout.micro_batch_size} × ${layout.micro_batches}`, layout.micro_batch_size, 'num'),
        cell('zero_stage', String(layout.zero_stage), layout.zero_stage, 'num'),
        cell('recompute', layout.recompute, layout.recompute),
        cell('total_s', formatDuration(layout.total_s), layout.total_s, 'num'),
        cell('cost_usd', layout.cost_usd === null ? 'no price' : formatCost(layout.cost_usd), layout.cost_usd, 'num'),
        memory,
        apply,
      );
      return row;
    }),
  );
  parts.table.hidden = shown.length === 0;
  const { plan, training } = response;
  const budget = plan.tokens !== undefined ? `${formatSI(plan.tokens)} tokens (${formatSI(plan.samples)} samples)` : `${formatSI(plan.samples)} samples`;
  const considered = response.results.reduce((sum, r) => sum + r.layouts_considered, 0);
  const fitting = response.results.reduce((sum, r) => sum + r.layouts_fitting, 0);
  const predictor = response.predictor === 'roofline' ? 'roofline times' : 'roofline times scaled to the learned predictor';
  parts.note.textContent =
    shown.length === 0
      ? `No layout of up to ${plan.max_gpus} GPUs fits on the ticked accelerators (${considered.toLocaleString('en-US')} tried).`
      : `${budget} at global batch ${training.batch_size}, ${plan.steps.toLocaleString('en-US')} steps: ${fitting.toLocaleString('en-US')} of ` +
        `${considered.toLocaleString('en-US')} layouts of up to ${plan.max_gpus} GPUs fit; the ${shown.length} best by ${settings.rank} (${predictor}).`;
}
