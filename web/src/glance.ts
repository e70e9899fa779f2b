// The one-glance answer above the Results table (issue 21): the fastest and the cheapest accelerator the
// model fits on, where it fits, and for each accelerator it does not fit on one next step with a button
// that applies it: the core's memory advice (a layout: recomputation, ZeRO, micro-batches, tensor or
// pipeline degree, more GPUs) and a lighter fine-tuning method that the engine has checked fits; where
// neither does, plan mode's fastest layout for the same number of samples (the Plan panel's search). Every
// name and number comes from the response (names from the catalogue through it); text only, no HTML.

import { byId, element } from './dom';
import { formatCost, formatDuration, formatGB, formatMs } from './format.js';
import type { JobResult, PlanResult } from './jobs.js';
import { adviceText } from './parallel-view';
import { layoutExtras } from './plan-view';
import type { Scenario } from './scenario.js';
import { finetuneSetting } from './training-fields.js';
import type { Catalog, HardwareResult, MemoryAdvice, PlanRow, PredictResponse } from './types';

/** What the glance needs from the page: the catalogue, a way to compute a candidate, and ways to apply one. */
export interface GlanceActions {
  catalog: Catalog;
  /** Computes a scenario in the engine without drawing it (to check that a fix fits). */
  compute: (scenario: Scenario) => Promise<JobResult>;
  /** Puts a scenario in the form and recomputes. */
  apply: (scenario: Scenario) => void;
  /** Applies one of the core's memory advice to the form (main.ts applyAdvice) and recomputes. */
  applyAdvice: (change: MemoryAdvice['change']) => void;
  /** Runs plan mode in the engine for a scenario (its `plan` settings give the budget). */
  plan: (scenario: Scenario) => Promise<PlanResult>;
  /** Copies a planned layout into the form, like the Plan panel's "Use" (main.ts useLayout). */
  useLayout: (layout: PlanRow) => void;
}

/** The training option whose values are the fine-tuning methods, lightest last (the core's table order). */
const METHOD_KEY = 'finetune.method';

/** Fix searches start after this pause, so typing is not slowed by the extra predictions. */
const SEARCH_DELAY_MS = 300;

let generation = 0;
let searchTimer: ReturnType<typeof setTimeout> | undefined;

/** The lowest of `pick` among the results the model fits on (a card that cannot hold it is no answer). */
function lowest(results: readonly HardwareResult[], pick: (r: HardwareResult) => number | null): HardwareResult | null {
  let best: HardwareResult | null = null;
  for (const r of results) {
    const value = pick(r);
    if (!r.fits || value === null || !Number.isFinite(value)) continue;
    const bestValue = best === null ? null : pick(best);
    if (bestValue === null || value < bestValue) best = r;
  }
  return best;
}

/** "on 8 GPUs" for a job of several, else nothing: the table's numbers are for the whole job. */
function jobSize(result: HardwareResult): string {
  const gpus = result.parallel?.gpus ?? 1;
  return gpus > 1 ? ` × ${gpus}` : '';
}

/** One line of the glance: a label, then the text; `hardware` marks which accelerator it names. */
function line(id: string, label: string, text: string, hardware?: string): HTMLParagraphElement {
  const p = element('p', undefined, 'glance-line');
  p.id = id;
  if (hardware !== undefined) p.dataset.hardware = hardware;
  p.append(element('strong', `${label} `), text);
  return p;
}

/** The fastest, the cheapest and where it fits, from the response alone. */
function answerLines(response: PredictResponse): HTMLParagraphElement[] {
  const results = response.results;
  const fitting = results.filter((r) => r.fits);
  const lines: HTMLParagraphElement[] = [];
  const fastest = lowest(results, (r) => r.total_s);
  if (fastest !== null) {
    lines.push(
      line(
        'glance-fastest',
        fitting.length > 1 ? 'Fastest:' : 'Time:',
        `${fastest.name}${jobSize(fastest)}, ${formatMs(fastest.step_ms)} per step, ${formatDuration(fastest.total_s)} in total.`,
        fastest.hardware,
      ),
    );
  }
  const cheapest = lowest(results, (r) => r.cost_usd);
  if (cheapest !== null && cheapest.cost_usd !== null) {
    lines.push(line('glance-cheapest', fitting.length > 1 ? 'Cheapest:' : 'Cost:', `${cheapest.name}${jobSize(cheapest)}, ${formatCost(cheapest.cost_usd)} in total.`, cheapest.hardware));
  } else if (fitting.length > 0) {
    lines.push(line('glance-cheapest', 'Cost:', 'no hourly price is listed for the accelerators it fits on.'));
  }
  const fitsText =
    fitting.length === 0
      ? `on none of the ${results.length} accelerator${results.length === 1 ? '' : 's'} at these settings.`
      : fitting.length === results.length
        ? `on ${results.length === 1 ? '' : results.length === 2 ? 'both: ' : `all ${results.length}: `}${fitting.map((r) => r.name).join(', ')}.`
        : `on ${fitting.length} of ${results.length}: ${fitting.map((r) => r.name).join(', ')}.`;
  const fits = line('glance-fits', 'Fits in memory', fitsText);
  fits.dataset.fits = fitting.map((r) => r.hardware).join(',');
  lines.push(fits);
  return lines;
}

/** "NVIDIA H100 SXM5 80GB needs 137 GB of its 80 GB." */
function needText(result: HardwareResult): string {
  const perGpu = (result.parallel?.gpus ?? 1) > 1 ? ' per GPU' : '';
  const device = result.device_memory_gb === undefined ? '' : ` of its ${formatGB(result.device_memory_gb)}`;
  return `${result.name} needs ${formatGB(result.memory_gb)}${perGpu}${device}.`;
}

function fixButton(text: string, title: string, kind: string, onClick: () => void): HTMLButtonElement {
  const button = element('button', text, 'button small');
  button.type = 'button';
  button.title = title;
  button.dataset.fix = kind;
  button.addEventListener('click', onClick);
  return button;
}

/** One item per accelerator the model does not fit on; its fixes are filled in by the search. */
function missItem(result: HardwareResult): HTMLLIElement {
  const item = element('li');
  item.dataset.hardware = result.hardware;
  item.append(element('span', needText(result), 'glance-need'));
  const fixes = element('span', ' Looking for a change that fits…', 'glance-fixes');
  item.append(fixes);
  return item;
}

/** The core's first advice for `result` (its list is cheapest change first), from the response or a probe. */
function layoutFix(result: HardwareResult | undefined): MemoryAdvice | null {
  return result?.memory_advice?.[0] ?? null;
}

/** The scenario with `method` as its fine-tuning method. */
function withMethod(scenario: Scenario, method: string): Scenario {
  const training: Record<string, unknown> = { ...scenario.training, [METHOD_KEY]: method };
  return { ...scenario, training: training as Scenario['training'] };
}

/**
 * The fine-tuning methods after the scenario's in the core's table (lighter ones: the table lists full,
 * then the adapters, then freezing), each predicted; per accelerator the first that fits, with its response.
 */
async function lighterMethods(
  actions: GlanceActions,
  scenario: Scenario,
  current: () => boolean,
): Promise<Map<string, { method: string; result: HardwareResult; response: PredictResponse }>> {
  const found = new Map<string, { method: string; result: HardwareResult; response: PredictResponse }>();
  const option = actions.catalog.options.find((o) => o.key === METHOD_KEY);
  const values = option?.values ?? [];
  const training = scenario.training as Record<string, unknown>;
  const chosen = typeof training[METHOD_KEY] === 'string' ? (training[METHOD_KEY] as string) : String(option?.default ?? '');
  for (const method of values.slice(values.indexOf(chosen) + 1)) {
    if (!current()) break; // newer results are on screen: their own search follows
    const outcome = await actions.compute(withMethod(scenario, method));
    if (!outcome.ok) continue; // a method this model cannot take (no such modules, a field it needs)
    for (const r of outcome.response.results) {
      if (r.fits && !found.has(r.hardware)) found.set(r.hardware, { method, result: r, response: outcome.response });
    }
  }
  return found;
}

/**
 * The core's memory advice per accelerator: from the response when it carries it (a parallel request), else
 * from the same scenario sent as a one-GPU parallel job, which makes the core give it.
 */
async function layoutAdvice(actions: GlanceActions, scenario: Scenario, response: PredictResponse): Promise<Map<string, HardwareResult>> {
  const misses = response.results.filter((r) => !r.fits);
  if (misses.every((r) => r.memory_advice !== undefined)) return new Map(misses.map((r) => [r.hardware, r]));
  const probe: Scenario = { ...scenario, parallel: { ...scenario.parallel, gpus: scenario.parallel.gpus ?? 1 } };
  const outcome = await actions.compute(probe);
  return outcome.ok ? new Map(outcome.response.results.map((r) => [r.hardware, r])) : new Map();
}

/** GPUs the glance's own plan search may use when the Plan panel sets no limit: eight 8-GPU nodes. */
const GLANCE_PLAN_GPUS = 64;

/**
 * Plan mode's fastest layout per accelerator in `hardware`, for the samples the scenario trains on (samples
 * per epoch x epochs, as the response says) and the Plan panel's GPU limit (GLANCE_PLAN_GPUS when unset).
 */
async function plannedLayouts(
  actions: GlanceActions,
  scenario: Scenario,
  response: PredictResponse,
  hardware: readonly string[],
): Promise<{ rows: Map<string, PlanRow>; searched: string }> {
  const rows = new Map<string, PlanRow>();
  if (hardware.length === 0) return { rows, searched: '' };
  const samples = response.training.dataset_size * response.training.epochs;
  // Unasked, the search stays small (GLANCE_PLAN_GPUS) so that the single engine worker answers the next
  // input soon; a GPU limit the user set in the Plan panel is kept.
  const max_gpus = scenario.plan.max_gpus ?? GLANCE_PLAN_GPUS;
  const plan = { ...scenario.plan, budget: samples, unit: 'samples' as const, max_gpus };
  const outcome = await actions.plan({ ...scenario, hardware: [...hardware], plan });
  if (!outcome.ok) return { rows, searched: ` (plan mode refused: ${outcome.message})` };
  for (const r of outcome.response.results) {
    const best = r.by_time[0];
    if (best !== undefined) rows.set(r.hardware, { ...best, hardware: r.hardware, name: r.name, device_memory_gb: r.device_memory_gb });
  }
  const most = outcome.response.plan.max_gpus;
  return { rows, searched: ` of up to ${most} GPU${most === 1 ? '' : 's'}` };
}

/** "16 GPUs, 2 × 8 × 1 + SP, ZeRO 1, recompute selective: 61.2 GB per GPU, 3.1 days" */
function plannedText(row: PlanRow): string {
  return `${row.gpus} GPUs, ${row.data} × ${row.tensor} × ${row.pipeline}${layoutExtras(row, ' + ')}, ZeRO ${row.zero_stage}, recompute ${row.recompute}: ${formatGB(row.memory_gb)} per GPU, ${formatDuration(row.total_s)}`;
}

/** Fills each accelerator's item with its fixes, or says honestly that no single change was found. */
async function searchFixes(actions: GlanceActions, scenario: Scenario, response: PredictResponse, list: HTMLElement, mine: number): Promise<void> {
  const current = (): boolean => mine === generation;
  const advice = await layoutAdvice(actions, scenario, response);
  const methods = await lighterMethods(actions, scenario, current);
  if (!current()) return;
  const unfixed = response.results.filter((r) => !r.fits && layoutFix(advice.get(r.hardware)) === null && !methods.has(r.hardware)).map((r) => r.hardware);
  const { rows: planned, searched } = await plannedLayouts(actions, scenario, response, unfixed);
  if (!current()) return;
  for (const item of list.querySelectorAll<HTMLLIElement>('li[data-hardware]')) {
    const hardware = item.dataset.hardware ?? '';
    const fixes = item.querySelector<HTMLElement>('.glance-fixes');
    if (fixes === null) continue;
    fixes.replaceChildren();
    const layout = layoutFix(advice.get(hardware));
    const lighter = methods.get(hardware);
    if (layout !== null) {
      const gpus = advice.get(hardware)?.parallel?.gpus ?? 1;
      fixes.append(' ', fixButton(`Fit it: ${adviceText(layout, gpus)}`, "The core's smallest change of layout after which it fits; applies it to the form", 'layout', () => actions.applyAdvice(layout.change)));
    }
    if (lighter !== undefined) {
      const how = finetuneSetting(lighter.response.training) ?? lighter.method;
      fixes.append(' ', fixButton(`${layout === null ? 'Fit it' : 'Or'}: ${how}, ${formatGB(lighter.result.memory_gb)}`, 'A lighter fine-tuning method that fits; applies it to the form', 'method', () => actions.apply(withMethod(scenario, lighter.method))));
    }
    const plan = planned.get(hardware);
    if (layout === null && lighter === undefined && plan !== undefined) {
      fixes.append(' ', fixButton(`Fit it: ${plannedText(plan)}`, "Plan mode's fastest layout that fits for this many samples; copies it into the form (this accelerator alone), like the Plan panel's Use", 'plan', () => actions.useLayout(plan)));
    } else if (layout === null && lighter === undefined) {
      fixes.append(` Nothing found that fits it: no single change of layout, no lighter fine-tuning method, no layout of plan mode${searched}.`);
    }
  }
}

/**
 * Draws the glance for the results on screen and starts the search for fixes (after a pause, and dropped
 * when newer results arrive). `data-busy` on #glance is "1" until the fixes are shown (tests wait on it).
 */
export function renderGlance(actions: GlanceActions, scenario: Scenario, response: PredictResponse): void {
  const box = byId('glance', HTMLElement);
  const answer = byId('glance-answer', HTMLElement);
  const list = byId('glance-misses', HTMLElement);
  generation += 1;
  const mine = generation;
  clearTimeout(searchTimer);
  answer.replaceChildren(...answerLines(response));
  const misses = response.results.filter((r) => !r.fits);
  list.replaceChildren(...misses.map(missItem));
  list.hidden = misses.length === 0;
  box.hidden = false;
  if (misses.length === 0) {
    box.dataset.busy = '0';
    return;
  }
  box.dataset.busy = '1';
  searchTimer = setTimeout(() => {
    void searchFixes(actions, scenario, response, list, mine)
      .catch((error: unknown) => {
        if (mine !== generation) return;
        for (const fixes of list.querySelectorAll('.glance-fixes')) fixes.textContent = ` (could not look for a fix: ${error instanceof Error ? error.message : String(error)})`;
      })
      .finally(() => {
        if (mine === generation) box.dataset.busy = '0';
      });
  }, SEARCH_DELAY_MS);
}
