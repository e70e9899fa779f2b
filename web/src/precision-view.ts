// Time and memory by precision: for one of the ticked accelerators, the scenario predicted once per
// precision the catalogue's `training.precision` option offers, as two bar charts and a table. A
// precision the accelerator lacks is shown as refused with the core's own reason, never dropped.
//
// Only on demand: nothing is computed until the <details> is opened, so the page's main recompute
// stays one request. While it is open, a changed scenario is computed again after a short pause.

import { drawBarChart, drawStackedChart, type Bar, type StackedRow } from './charts';
import { byId, element } from './dom';
import type { EngineClient } from './engine-client';
import { formatGB, formatMs } from './format.js';
import { scenarioToJob, type Scenario } from './scenario.js';
import type { Catalog, HardwareResult, PredictResponse } from './types';

/** One precision's outcome on the chosen accelerator. */
interface PrecisionOutcome {
  value: string;
  label: string;
  current: boolean;
  result: HardwareResult | null;
  /** The core's message when it refused this precision (or the request). */
  refused: string | null;
}

export interface PrecisionView {
  /** The page shows a new scenario: recomputed (after a pause) only while the section is open. */
  shown(scenario: Scenario, response: PredictResponse, nameOf: (id: string) => string): void;
}

/** The precisions the core accepts, with their labels, from the catalogue's options table. */
function precisionChoices(catalog: Catalog): { value: string; label: string }[] {
  const option = catalog.options.find((o) => o.key === 'precision');
  const values = option?.values ?? catalog.precisions;
  return values.map((value, i) => ({ value, label: option?.labels?.[i] ?? value }));
}

/** Predicts `scenario` on `hardware` at each precision, one request each (a refusal is per precision). */
async function computeAll(
  client: Pick<EngineClient, 'compute'>,
  scenario: Scenario,
  hardware: string,
  choices: readonly { value: string; label: string }[],
  currentPrecision: string,
): Promise<PrecisionOutcome[]> {
  const outcomes: PrecisionOutcome[] = [];
  for (const { value, label } of choices) {
    // The measured step belongs to the user's own precision, so it is not applied to the others.
    const variant: Scenario = { ...scenario, hardware: [hardware], calibration: null, training: { ...scenario.training, precision: value as Scenario['training']['precision'] } };
    const result = await client.compute(scenarioToJob(variant, { perLayer: 'none' }));
    const current = value === currentPrecision;
    outcomes.push(
      result.ok
        ? { value, label, current, result: result.response.results[0] ?? null, refused: null }
        : { value, label, current, result: null, refused: result.message },
    );
  }
  return outcomes;
}

function cell(column: string, text: string, value?: number | null): HTMLTableCellElement {
  const td = element('td', text, value === undefined ? undefined : 'num');
  td.dataset.col = column;
  if (value !== undefined && value !== null) td.dataset.value = String(value);
  return td;
}

function render(outcomes: readonly PrecisionOutcome[], name: string): void {
  const label = (o: PrecisionOutcome): string => (o.current ? `${o.label} (current)` : o.label);
  const timeBars: Bar[] = outcomes.map((o) => ({
    label: label(o),
    value: o.result?.step_ms ?? null,
    text: o.result === null ? 'refused' : formatMs(o.result.step_ms),
    noFit: o.result !== null && !o.result.fits,
  }));
  drawBarChart(byId('precision-time-chart', HTMLElement), timeBars, `Step time by precision on ${name}`);
  const memoryRows: StackedRow[] = outcomes.map((o) => ({
    label: label(o),
    parts: o.result === null ? ({} as Record<string, number>) : { memory: o.result.memory_gb },
    text: o.result === null ? 'refused' : formatGB(o.result.memory_gb),
    ...(o.result?.device_memory_gb === undefined ? {} : { limit: { value: o.result.device_memory_gb, text: formatGB(o.result.device_memory_gb) } }),
    noFit: o.result !== null && !o.result.fits,
  }));
  drawStackedChart(
    byId('precision-memory-chart', HTMLElement),
    memoryRows,
    [{ key: 'memory', label: 'memory per GPU', className: 'seg-precision-memory' }],
    `Memory by precision on ${name}`,
    (row) => (row.text === 'refused' ? 'refused' : row.limit === undefined ? 'per GPU' : `of ${row.limit.text}`),
    'device memory',
  );
  const table = byId('precision-table', HTMLTableElement);
  (table.tBodies[0] ?? table.createTBody()).replaceChildren(
    ...outcomes.map((o) => {
      const row = element('tr');
      row.dataset.precision = o.value;
      row.dataset.refused = o.refused === null ? '0' : '1';
      const head = element('th', label(o));
      head.scope = 'row';
      if (o.result === null) {
        // The reason is a sentence: one cell across the numbers' columns, wrapped.
        const reason = cell('step_ms', `refused: ${o.refused ?? ''}`);
        reason.colSpan = 3;
        reason.className = 'refused';
        row.append(head, reason);
        return row;
      }
      const device = o.result.device_memory_gb === undefined ? '' : ` of ${formatGB(o.result.device_memory_gb)}`;
      row.append(
        head,
        cell('step_ms', formatMs(o.result.step_ms), o.result.step_ms),
        cell('memory_gb', `${formatGB(o.result.memory_gb)}${device}`, o.result.memory_gb),
        cell('fits', o.result.fits ? 'yes' : 'no'),
      );
      return row;
    }),
  );
}

/** Fills the accelerator choice with the scenario's accelerators, keeping the chosen one when still ticked. */
function fillChoice(select: HTMLSelectElement, hardware: readonly string[], nameOf: (id: string) => string): void {
  const keep = select.value;
  select.replaceChildren(
    ...hardware.map((id) => {
      const option = element('option', nameOf(id));
      option.value = id;
      return option;
    }),
  );
  if (hardware.includes(keep)) select.value = keep;
}

/** Wires the precision section; `data-precision-busy` on <html> is "1" while it computes. */
export function createPrecisionView(client: Pick<EngineClient, 'compute'>, catalog: Catalog): PrecisionView {
  const details = byId('precision-section', HTMLDetailsElement);
  const select = byId('precision-hardware', HTMLSelectElement);
  const note = byId('precision-note', HTMLElement);
  const choices = precisionChoices(catalog);
  let latest: { scenario: Scenario; precision: string; nameOf: (id: string) => string } | null = null;
  let generation = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const run = async (): Promise<void> => {
    if (latest === null || !details.open || select.value === '') return;
    generation += 1;
    const mine = generation;
    const { scenario, precision, nameOf } = latest;
    const hardware = select.value;
    document.documentElement.dataset.precisionBusy = '1';
    note.textContent = `Computing ${choices.length} precisions on ${nameOf(hardware)}…`;
    try {
      const outcomes = await computeAll(client, scenario, hardware, choices, precision);
      if (mine !== generation) return;
      render(outcomes, nameOf(hardware));
      const refused = outcomes.filter((o) => o.refused !== null).length;
      note.textContent =
        `The scenario on one ${nameOf(hardware)} at each precision the calculator knows` +
        (refused > 0 ? `; ${refused} refused, with the core's reason in the table.` : '.') +
        (scenario.calibration !== null ? ' The measured step is not applied here (it was measured at one precision).' : '');
    } catch (error) {
      if (mine === generation) note.textContent = `Could not compute the precisions: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      if (mine === generation) document.documentElement.dataset.precisionBusy = '0';
    }
  };

  details.addEventListener('toggle', () => {
    if (details.open) void run();
  });
  select.addEventListener('change', () => void run());
  return {
    shown(scenario, response, nameOf) {
      latest = { scenario, precision: response.training.precision, nameOf };
      fillChoice(select, scenario.hardware, nameOf);
      if (!details.open) return;
      clearTimeout(timer);
      timer = setTimeout(() => void run(), 400);
    },
  };
}
