// Strong scaling from plan mode: after a plan, the best layout at each power-of-two GPU count from
// the plan's minimum to its maximum, per ticked accelerator: the time to train the budget (fastest
// layout) and its cost (cheapest layout), as two log-x line charts and a table for screen readers.
//
// Plan mode's own response lists only the top layouts overall (nearly always at the largest count),
// so each count is one more plan request with min_gpus = max_gpus = that count. They reuse the
// plan's per-accelerator time_scale, so the engine skips its learned calibration pass and the
// numbers agree with the Plan table's; they run one after another through the same engine client
// (the worker), so the page's own recomputes interleave with them and the UI never blocks.

import { drawLineChart, type LineSeries } from './charts';
import { byId, element } from './dom';
import type { EngineClient } from './engine-client';
import { formatCost, formatDuration, formatMs } from './format.js';
import type { PlanJob } from './jobs.js';
import { layoutText } from './plan-view';
import { scenarioToPlanJob, type Scenario } from './scenario.js';
import type { PlanLayout, PlanResponse } from './types';

/** The best layouts of one accelerator at one GPU count; null where none fits (or the core refused). */
interface ScalingPoint {
  gpus: number;
  fastest: PlanLayout | null;
  cheapest: PlanLayout | null;
  /** The core's message when it refused this count's request. */
  refused?: string;
}

interface ScalingLine {
  hardware: string;
  name: string;
  points: ScalingPoint[];
}

/** Round durations in seconds (1 s … 1,000 days), the time chart's candidate ticks. */
const ROUND_SECONDS = [1, 2, 5, 10, 20, 30].flatMap((s) => [s, s * 60]).concat([1, 2, 5, 10].map((h) => h * 3600), [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000].map((d) => d * 86_400)).sort((a, b) => a - b);

/** The round durations within [low, high], thinned to at most five so the labels stay apart. */
export function durationTicks(low: number, high: number): number[] {
  const inside = ROUND_SECONDS.filter((t) => t >= low && t <= high);
  const step = Math.ceil(inside.length / 5);
  return inside.filter((_, i) => i % step === 0);
}

/** The powers of two from `min` to `max` (plan mode's GPU counts are powers of two). */
export function gpuCounts(min: number, max: number): number[] {
  const counts: number[] = [];
  for (let n = 1; n <= max; n *= 2) if (n >= min) counts.push(n);
  return counts;
}

/** The request for one GPU count: the plan's own, pinned to that count, one layout per ranking. */
function countJob(base: PlanJob, gpus: number, timeScale: Record<string, number>): PlanJob {
  const plan = { ...base.request.plan, min_gpus: gpus, max_gpus: gpus, top: 1, time_scale: timeScale };
  return { ...base, request: { ...base.request, plan } };
}

function seriesOf(lines: readonly ScalingLine[], value: (p: ScalingPoint) => number | null, text: (v: number) => string): LineSeries[] {
  return lines.map((line) => ({
    key: line.hardware,
    label: line.name,
    points: line.points.map((p) => {
      const v = value(p);
      return { x: p.gpus, y: v, text: v === null ? (p.refused === undefined ? 'does not fit' : 'refused') : text(v) };
    }),
  }));
}

function cell(column: string, text: string, value?: number | string | null): HTMLTableCellElement {
  const td = element('td', text, typeof value === 'number' ? 'num' : undefined);
  td.dataset.col = column;
  if (value !== undefined && value !== null) td.dataset.value = String(value);
  return td;
}

/** One row per accelerator and GPU count, the charts' numbers in words. */
function renderTable(table: HTMLTableElement, lines: readonly ScalingLine[]): void {
  const body = table.tBodies[0] ?? table.createTBody();
  body.replaceChildren(
    ...lines.flatMap((line) =>
      line.points.map((p) => {
        const row = element('tr');
        row.dataset.hardware = line.hardware;
        row.dataset.gpus = String(p.gpus);
        const name = element('th', line.name);
        name.scope = 'row';
        const none = p.refused === undefined ? 'no layout fits' : `refused: ${p.refused}`;
        row.append(
          name,
          cell('gpus', p.gpus.toLocaleString('en-US'), p.gpus),
          cell('total_s', p.fastest === null ? none : formatDuration(p.fastest.total_s), p.fastest?.total_s),
          cell('step_ms', p.fastest === null ? '' : formatMs(p.fastest.step_ms), p.fastest?.step_ms),
          cell('layout', p.fastest === null ? '' : layoutText(p.fastest)),
          cell('cost_usd', p.cheapest === null ? (p.fastest === null ? '' : 'no price') : formatCost(p.cheapest.cost_usd ?? 0), p.cheapest?.cost_usd),
          cell('cheapest_layout', p.cheapest === null ? '' : layoutText(p.cheapest)),
        );
        return row;
      }),
    ),
  );
}

export interface ScalingView {
  /** Starts the per-count searches for a plan just shown; a newer call abandons an older one. */
  update(scenario: Scenario, response: PlanResponse): Promise<void>;
  /** Hides the section (the plan was refused or cleared). */
  clear(): void;
}

/** Wires the Scaling section (#scaling-section) to the engine; `data-scaling-busy` on <html> while it searches. */
export function createScalingView(client: Pick<EngineClient, 'plan'>): ScalingView {
  const section = byId('scaling-section', HTMLElement);
  const note = byId('scaling-note', HTMLElement);
  const timeChart = byId('scaling-time-chart', HTMLElement);
  const costChart = byId('scaling-cost-chart', HTMLElement);
  const table = byId('scaling-table', HTMLTableElement);
  let generation = 0;
  let lines: ScalingLine[] = [];

  const draw = (): void => {
    if (section.hidden) return;
    drawLineChart(timeChart, seriesOf(lines, (p) => p.fastest?.total_s ?? null, formatDuration), {
      title: 'Time to train the budget, fastest layout',
      xLabel: 'GPUs',
      logY: true,
      formatY: formatDuration,
      yTicks: durationTicks,
    });
    drawLineChart(costChart, seriesOf(lines, (p) => p.cheapest?.cost_usd ?? null, formatCost), {
      title: 'Cost of the budget, cheapest layout',
      xLabel: 'GPUs',
      logY: false,
      formatY: formatCost,
    });
    renderTable(table, lines);
  };
  // Charts are drawn at their pixel width: redraw when it changes.
  let width = 0;
  new ResizeObserver(() => {
    const now = Math.round(timeChart.clientWidth);
    if (now !== width && lines.length > 0) requestAnimationFrame(draw);
    width = now;
  }).observe(timeChart);

  const update = async (scenario: Scenario, response: PlanResponse): Promise<void> => {
    generation += 1;
    const mine = generation;
    const counts = gpuCounts(Math.max(1, response.plan.min_gpus), response.plan.max_gpus);
    const timeScale = Object.fromEntries(response.results.map((r) => [r.hardware, r.time_scale]));
    const base = scenarioToPlanJob(scenario);
    lines = response.results.map((r) => ({ hardware: r.hardware, name: r.name, points: [] }));
    section.hidden = false;
    document.documentElement.dataset.scalingBusy = '1';
    try {
      for (const [index, gpus] of counts.entries()) {
        note.textContent = `Searching the best layout at ${gpus.toLocaleString('en-US')} GPUs (${index + 1} of ${counts.length})…`;
        const result = await client.plan(countJob(base, gpus, timeScale));
        if (mine !== generation) return;
        for (const line of lines) {
          const found = result.ok ? result.response.results.find((r) => r.hardware === line.hardware) : undefined;
          line.points.push({
            gpus,
            fastest: found?.by_time[0] ?? null,
            cheapest: found?.by_cost[0] ?? null,
            ...(result.ok ? {} : { refused: result.message }),
          });
        }
        draw();
      }
      note.textContent =
        `The best layout at each GPU count from ${counts[0]?.toLocaleString('en-US')} to ${counts[counts.length - 1]?.toLocaleString('en-US')}, ` +
        `for the same budget (${response.plan.steps.toLocaleString('en-US')} steps at global batch ${response.training.batch_size}): ` +
        `time from the fastest layout, cost from the cheapest; a gap means no layout fits at that count.`;
    } finally {
      if (mine === generation) document.documentElement.dataset.scalingBusy = '0';
    }
  };

  return {
    update,
    clear: () => {
      generation += 1;
      lines = [];
      section.hidden = true;
      document.documentElement.dataset.scalingBusy = '0';
    },
  };
}
