// The comparison table: one row per accelerator, sortable by any column (a button in each header,
// aria-sort on the sorted one). Text only (textContent), never HTML.

import { byId, element } from './dom';
import { formatCost, formatDuration, formatGB, formatMs, formatPercent, formatRange, sig3 } from './format.js';
import type { Sort, SortColumn } from './scenario.js';
import { sortResults } from './sort.js';
import type { HardwareResult, PredictResponse } from './types';

/** One cell: display text, with the raw number kept in data-value for tests and tooltips. */
function cell(column: string, text: string, value?: number | boolean | null, className?: string): HTMLTableCellElement {
  const td = element('td', text, className);
  td.dataset.col = column;
  if (value !== undefined && value !== null) td.dataset.value = String(value);
  return td;
}

function memoryTitle(result: HardwareResult): string {
  const m = result.memory;
  const overhead = m.overhead_gb !== undefined ? `, runtime ${formatGB(m.overhead_gb)}` : '';
  return `weights ${formatGB(m.weights_gb)}, gradients ${formatGB(m.gradients_gb)}, optimizer state ${formatGB(m.optimizer_gb)}, activations ${formatGB(m.activations_gb)}${overhead}`;
}

function bottleneckTitle(result: HardwareResult): string {
  const split = result.time_split_ms;
  if (split === undefined) return '';
  return `kernel time limited by compute ${formatMs(split.compute)}, by memory bandwidth ${formatMs(split.memory)}, by launch overhead ${formatMs(split.overhead)}`;
}

/**
 * The best value of a column (the lowest time or cost) among the accelerators the model fits on, to
 * mark it: a cheap card that cannot hold the model is no bargain. Null with fewer than two candidates.
 */
export function best(results: readonly HardwareResult[], pick: (r: HardwareResult) => number | null): number | null {
  const values = results
    .filter((r) => r.fits)
    .map(pick)
    .filter((v): v is number => v !== null && Number.isFinite(v));
  return values.length > 1 || (values.length === 1 && results.length > 1) ? Math.min(...values) : null;
}

/**
 * Appends the learned predictor's 80% interval, "(9.8–15.1 ms)", in its own span (data-low and
 * data-high on the cell), so the cell still starts with the estimate.
 */
function withInterval(td: HTMLTableCellElement, interval: [number, number] | undefined, format: (value: number) => string): HTMLTableCellElement {
  if (interval === undefined) return td;
  td.dataset.low = String(interval[0]);
  td.dataset.high = String(interval[1]);
  const span = element('span', ` (${formatRange(interval[0], interval[1], format)})`, 'interval');
  span.title = '80% interval of the learned predictor';
  td.append(span);
  return td;
}

function resultRow(
  result: HardwareResult,
  bestTotal: number | null,
  bestCost: number | null,
  calibratedOn: string | undefined,
  learnedResponse: boolean,
): HTMLTableRowElement {
  const row = element('tr');
  row.dataset.hardware = result.hardware;
  const name = element('th');
  name.scope = 'row';
  name.append(element('span', result.name));
  if (result.custom) name.append(element('span', 'custom', 'badge'));
  if (result.predictor === 'roofline' && learnedResponse) {
    const badge = element('span', 'analytic', 'badge analytic');
    badge.title = 'timed by the analytic roofline: the learned models were trained on GPUs only, and a TPU or Gaudi part is not one (docs/PREDICTION.md §6); compare it with the roofline column of the GPU rows';
    name.append(badge);
  }
  if (result.calibration_factor !== undefined) {
    const measured = result.hardware === calibratedOn;
    const badge = element('span', `calibrated ×${result.calibration_factor.toFixed(2)}`, 'badge calibrated');
    badge.dataset.factor = String(result.calibration_factor);
    if (result.calibration_share !== undefined) badge.dataset.share = String(result.calibration_share);
    badge.title = measured
      ? `times scaled by ${sig3(result.calibration_factor)} to match the step you measured on this accelerator`
      : `times scaled by ${sig3(result.calibration_factor)}: the share (${sig3(result.calibration_share ?? 0)} in log space) of the correction from the step you measured that this accelerator's errors have in common with it`;
    name.append(badge);
  }
  name.title = result.custom ? 'custom accelerator' : result.hardware;

  const step = withInterval(cell('step_ms', formatMs(result.step_ms), result.step_ms, 'num'), result.step_ms_interval, formatMs);
  step.title = `forward ${formatMs(result.forward_ms)}, backward ${formatMs(result.backward_ms)}, optimizer ${formatMs(result.optimizer_ms)}`;
  const isBestTotal = result.fits && result.total_s === bestTotal;
  const total = withInterval(cell('total_s', formatDuration(result.total_s), result.total_s, isBestTotal ? 'num best' : 'num'), result.total_s_interval, formatDuration);
  if (isBestTotal) total.title = 'fastest of those the model fits on';
  const rooflineMs = result.baselines?.['roofline']?.step_ms;
  const roofline = cell('roofline_step_ms', rooflineMs === undefined ? '—' : formatMs(rooflineMs), rooflineMs, 'num baseline');
  roofline.title = rooflineMs === undefined ? 'these numbers are the roofline' : 'the analytic roofline estimate of the step, for comparison';

  const device = result.device_memory_gb;
  const memory = cell('memory_gb', device !== undefined ? `${formatGB(result.memory_gb)} of ${sig3(device)}` : formatGB(result.memory_gb), result.memory_gb, 'num');
  memory.title = memoryTitle(result);
  const fits = cell('fits', '', result.fits, result.fits ? 'fits' : 'fits no');
  fits.append(element('span', result.fits ? '✓ ' : '✗ ', 'icon'), result.fits ? 'yes' : 'no');
  fits.firstElementChild?.setAttribute('aria-hidden', 'true');

  const cost = cell('cost_usd', result.cost_usd === null ? 'no price' : formatCost(result.cost_usd), result.cost_usd, 'num');
  if (result.price_per_hour_usd !== null) cost.title = `at $${result.price_per_hour_usd.toFixed(2)} per hour`;
  if (result.cost_usd === null) cost.classList.add('muted');
  else if (result.fits && result.cost_usd === bestCost) {
    cost.classList.add('best');
    cost.title = `cheapest of those the model fits on, ${cost.title}`;
  }

  const bottleneck = cell('bottleneck', result.bottleneck, undefined, `bound-${result.bottleneck}`);
  bottleneck.title = bottleneckTitle(result);

  row.append(
    name,
    step,
    roofline,
    cell('epoch_s', formatDuration(result.epoch_s), result.epoch_s, 'num'),
    total,
    memory,
    fits,
    cost,
    cell('mfu', formatPercent(result.mfu), result.mfu, 'num'),
    bottleneck,
  );
  return row;
}

/** Marks the sorted column (aria-sort drives both screen readers and the arrow drawn by CSS). */
function markSorted(table: HTMLTableElement, sort: Sort): void {
  for (const th of table.tHead?.querySelectorAll<HTMLTableCellElement>('th[data-sort]') ?? []) {
    if (th.dataset.sort === sort.column) th.setAttribute('aria-sort', sort.descending ? 'descending' : 'ascending');
    else th.removeAttribute('aria-sort');
  }
}

/** @param calibratedOn the accelerator the user's measured step was taken on, if any */
export function renderTable(response: PredictResponse, sort: Sort, calibratedOn?: string): void {
  const table = byId('results', HTMLTableElement);
  const body = table.tBodies[0];
  if (body === undefined) throw new Error('page is missing the results <tbody>');
  const bestTotal = best(response.results, (r) => r.total_s);
  const bestCost = best(response.results, (r) => r.cost_usd);
  body.replaceChildren(...sortResults(response.results, sort).map((result) => resultRow(result, bestTotal, bestCost, calibratedOn, response.predictor === 'learned')));
  markSorted(table, sort);
}

/**
 * Header buttons: a click sorts by that column, ascending first; a second click reverses.
 * @param onSort gets the new sort, and re-renders
 */
export function wireSorting(current: () => Sort, onSort: (sort: Sort) => void): void {
  const table = byId('results', HTMLTableElement);
  table.tHead?.addEventListener('click', (event) => {
    const th = (event.target as Element | null)?.closest<HTMLTableCellElement>('th[data-sort]');
    if (!th?.dataset.sort) return;
    const column = th.dataset.sort as SortColumn;
    const sort = current();
    onSort({ column, descending: sort.column === column ? !sort.descending : false });
  });
}
