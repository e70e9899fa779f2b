// The facts shown for each accelerator, built once and written by both the comparison table
// (results-table.ts) and the phone cards (result-cards.ts), so the two cannot disagree: the decisive
// ones (one table column each) and the details on demand. Text only (textContent), never HTML.

import { element } from './dom';
import { formatCost, formatDuration, formatGB, formatGBOf, formatMs, formatPercent, formatRange, sig3 } from './format.js';
import type { HardwareResult, TimeSplit } from './types';

/**
 * One number or word shown for an accelerator: its column (`data-col`, the same in the table, its
 * detail row and the cards), the text, and the raw value kept in data-value for tests and tooltips.
 */
export interface Fact {
  col: string;
  text: string;
  value?: number | boolean | null;
  className?: string;
  title?: string;
  /** The learned predictor's 80% interval, shown after the text in its own span. */
  interval?: { range: [number, number]; format: (value: number) => string };
  /** A leading icon (✓ / ✗), hidden from screen readers, which read the text. */
  icon?: string;
}

/** What a row's facts are judged against: the best total and cost among the ones that fit. */
export interface Context {
  bestTotal: number | null;
  bestCost: number | null;
  /** The accelerator the user's measured step was taken on, if any. */
  calibratedOn: string | undefined;
  /** True when the response came from the learned predictor (so a roofline row is worth a badge). */
  learnedResponse: boolean;
}

/** Writes a fact into `node` (a td, dd…): text, data-col, data-value, class, title, interval. */
export function fillFact<T extends HTMLElement>(node: T, fact: Fact): T {
  node.dataset.col = fact.col;
  if (fact.value !== undefined && fact.value !== null) node.dataset.value = String(fact.value);
  if (fact.className !== undefined) node.className = fact.className;
  if (fact.title !== undefined && fact.title !== '') node.title = fact.title;
  if (fact.icon !== undefined) {
    const icon = element('span', fact.icon, 'icon');
    icon.setAttribute('aria-hidden', 'true');
    node.append(icon);
  }
  node.append(fact.text);
  if (fact.interval !== undefined) {
    const [low, high] = fact.interval.range;
    node.dataset.low = String(low);
    node.dataset.high = String(high);
    const span = element('span', ` (${formatRange(low, high, fact.interval.format)})`, 'interval');
    span.title = '80% interval of the learned predictor';
    node.append(span);
  }
  return node;
}

function memoryTitle(result: HardwareResult): string {
  const m = result.memory;
  const overhead = m.overhead_gb !== undefined ? `, runtime ${formatGB(m.overhead_gb)}` : '';
  return `weights ${formatGB(m.weights_gb)}, gradients ${formatGB(m.gradients_gb)}, optimizer state ${formatGB(m.optimizer_gb)}, activations ${formatGB(m.activations_gb)}${overhead}`;
}

function kernelSplit(split: TimeSplit): string {
  return `limited by compute ${formatMs(split.compute)}, by memory bandwidth ${formatMs(split.memory)}, by launch overhead ${formatMs(split.overhead)}`;
}

function bottleneckTitle(result: HardwareResult): string {
  if (result.bottleneck === 'input' && result.input_ms !== undefined) return `the step waits ${formatMs(result.input_ms)} for the input pipeline (training.input_rate)`;
  const host = result.host_issue_ms;
  if (result.bottleneck === 'overhead' && host !== undefined && host.forward + host.backward > 0) {
    return `launch-bound: the host takes ${formatMs(host.forward)} to issue the forward kernels and ${formatMs(host.backward)} the backward ones, longer than the GPU runs them (CUDA graphs remove this: training.cuda_graphs)`;
  }
  return result.time_split_ms === undefined ? '' : `kernel time ${kernelSplit(result.time_split_ms)}`;
}

function stepParts(result: HardwareResult): string {
  const input = result.input_ms !== undefined && result.input_ms > 0 ? `, waiting for the input pipeline ${formatMs(result.input_ms)}` : '';
  return `forward ${formatMs(result.forward_ms)}, backward ${formatMs(result.backward_ms)}, optimizer ${formatMs(result.optimizer_ms)}${input}`;
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

function costFact(result: HardwareResult, bestCost: number | null): Fact {
  const perHour = result.price_per_hour_usd === null ? undefined : `at $${result.price_per_hour_usd.toFixed(2)} per hour`;
  if (result.cost_usd === null) return { col: 'cost_usd', text: 'no price', value: null, className: 'num muted' };
  if (result.fits && result.cost_usd === bestCost) {
    return { col: 'cost_usd', text: formatCost(result.cost_usd), value: result.cost_usd, className: 'num best', title: `cheapest of those the model fits on${perHour ? `, ${perHour}` : ''}` };
  }
  return { col: 'cost_usd', text: formatCost(result.cost_usd), value: result.cost_usd, className: 'num', ...(perHour ? { title: perHour } : {}) };
}

/** The decisive facts, in column order: the table's cells after the name, and each card's list. */
export function mainFacts(result: HardwareResult, context: Context): Fact[] {
  const isBestTotal = result.fits && result.total_s === context.bestTotal;
  const interval = (range: [number, number] | undefined, format: (value: number) => string) => (range === undefined ? {} : { interval: { range, format } });
  return [
    { col: 'step_ms', text: formatMs(result.step_ms), value: result.step_ms, className: 'num', title: stepParts(result), ...interval(result.step_ms_interval, formatMs) },
    {
      col: 'total_s',
      text: formatDuration(result.total_s),
      value: result.total_s,
      className: isBestTotal ? 'num best' : 'num',
      ...(isBestTotal ? { title: 'fastest of those the model fits on' } : {}),
      ...interval(result.total_s_interval, formatDuration),
    },
    { col: 'memory_gb', text: formatGBOf(result.memory_gb, result.device_memory_gb), value: result.memory_gb, className: 'num', title: memoryTitle(result) },
    { col: 'fits', text: result.fits ? 'yes' : 'no', value: result.fits, className: result.fits ? 'fits' : 'fits no', icon: result.fits ? '✓ ' : '✗ ' },
    costFact(result, context.bestCost),
    { col: 'mfu', text: formatPercent(result.mfu), value: result.mfu, className: 'num' },
    { col: 'bottleneck', text: result.bottleneck, className: `bound-${result.bottleneck}`, title: bottleneckTitle(result) },
  ];
}

/** The details on demand, each with its label: what the table no longer has a column for. */
export function detailFacts(result: HardwareResult): Array<{ label: string; fact: Fact }> {
  const rooflineMs = result.baselines?.['roofline']?.step_ms;
  const split = result.time_split_ms;
  const rows: Array<{ label: string; fact: Fact }> = [
    {
      label: 'Roofline step',
      fact: {
        col: 'roofline_step_ms',
        text: rooflineMs === undefined ? 'these numbers are the roofline' : formatMs(rooflineMs),
        value: rooflineMs,
        className: 'baseline',
        title: 'the analytic roofline estimate of the step, the named baseline the learned predictor is compared with',
      },
    },
    { label: 'Epoch', fact: { col: 'epoch_s', text: formatDuration(result.epoch_s), value: result.epoch_s } },
    { label: 'Step parts', fact: { col: 'step_parts', text: stepParts(result) } },
    { label: 'Memory parts', fact: { col: 'memory_parts', text: memoryTitle(result) } },
  ];
  if (split !== undefined) rows.push({ label: 'Kernel time', fact: { col: 'time_split', text: kernelSplit(split) } });
  if (result.price_per_hour_usd !== null) rows.push({ label: 'Price', fact: { col: 'price_per_hour_usd', text: `$${result.price_per_hour_usd.toFixed(2)} per hour`, value: result.price_per_hour_usd } });
  rows.push({ label: 'Id', fact: { col: 'hardware', text: result.custom ? `${result.hardware} (custom accelerator)` : result.hardware } });
  return rows;
}

/** The badges after an accelerator's name: custom, analytic (timed by the roofline), calibrated. */
export function nameBadges(result: HardwareResult, context: Context): HTMLElement[] {
  const badges: HTMLElement[] = [];
  if (result.custom) badges.push(element('span', 'custom', 'badge'));
  if (result.predictor === 'roofline' && context.learnedResponse) {
    const badge = element('span', 'analytic', 'badge analytic');
    badge.title = 'timed by the analytic roofline: the learned models were trained on GPUs only, and a TPU or Gaudi part is not one (docs/PREDICTION.md §6); compare it with the roofline step in the details of the GPU rows';
    badges.push(badge);
  }
  if (result.calibration_factor !== undefined) {
    const measured = result.hardware === context.calibratedOn;
    const badge = element('span', `calibrated ×${result.calibration_factor.toFixed(2)}`, 'badge calibrated');
    badge.dataset.factor = String(result.calibration_factor);
    if (result.calibration_share !== undefined) badge.dataset.share = String(result.calibration_share);
    badge.title = measured
      ? `times scaled by ${sig3(result.calibration_factor)} to match the step you measured on this accelerator`
      : `times scaled by ${sig3(result.calibration_factor)}: the share (${sig3(result.calibration_share ?? 0)} in log space) of the correction from the step you measured that this accelerator's errors have in common with it`;
    badges.push(badge);
  }
  return badges;
}

/** A <dl> of the detail facts (the table's detail row and the card's "More"). */
export function detailList(result: HardwareResult): HTMLDListElement {
  const list = element('dl', undefined, 'result-details-list');
  for (const { label, fact } of detailFacts(result)) {
    const item = element('div');
    item.append(element('dt', label), fillFact(element('dd'), fact));
    list.append(item);
  }
  return list;
}
