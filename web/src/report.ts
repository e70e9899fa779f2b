// The printable report of a scenario, and the wiring of issue 21's pictures (point 6) into the page.
//
// "Print report" writes the scenario's link first (so the printed link is the current one), fills
// the report header (#report-meta, shown only in print: the title, the date, the inputs as the
// link's parameters, the link as text, the core version and predictor) and opens the browser's
// print dialog; the @media print rules in style.css hide the form and every control, so the paper
// shows what was understood, the results, memory and charts. Printing with the browser's own
// command (Ctrl+P) fills the same header from the address bar's link.

import { byId, element } from './dom';
import type { EngineClient } from './engine-client';
import { createPrecisionView } from './precision-view';
import { createScalingView } from './scaling-view';
import type { Scenario } from './scenario.js';
import type { Catalog, PlanResponse, PredictResponse } from './types';

/** Link parameters whose values are encoded data, not words: printed as a note instead. */
const ENCODED = new Set(['config', 'custom']);

/** The scenario's inputs in words: one "name = value" per link parameter (docs/EMBED.md), in link order. */
export function linkInputs(link: string): [string, string][] {
  const hash = new URL(link).hash.replace(/^#/, '');
  return [...new URLSearchParams(hash)].map(([name, value]) => [name, ENCODED.has(name) ? `(${value.length.toLocaleString('en-US')} characters of encoded data, in the link)` : value]);
}

/** Fills the report header from the link and the latest shown response. */
function fillReport(link: string, response: PredictResponse | null): void {
  byId('report-title', HTMLElement).textContent = response === null ? 'Training-time report' : `Training-time report: ${response.model.name}`;
  byId('report-date', HTMLElement).textContent = `Printed ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const inputs = byId('report-inputs', HTMLElement);
  inputs.replaceChildren(
    ...linkInputs(link).flatMap(([name, value]) => [element('dt', name), element('dd', value)]),
  );
  byId('report-link', HTMLElement).textContent = link;
  byId('report-version', HTMLElement).textContent =
    response === null ? 'No results yet.' : `Core ${response.version}; predictor ${response.predictor}.`;
}

export interface Pictures {
  /** The page shows a new result. */
  shown(scenario: Scenario, response: PredictResponse): void;
  /** The Plan panel shows a new plan: the scaling charts follow it. */
  planned(scenario: Scenario, response: PlanResponse): void;
  /** The plan was refused: the scaling charts are hidden. */
  planFailed(): void;
}

export interface PictureDeps {
  client: Pick<EngineClient, 'compute' | 'plan'>;
  catalog: Catalog;
  nameOf: (id: string) => string;
  /** Writes the current scenario's link and resolves with it. */
  link: () => Promise<string>;
}

/** Wires the scaling chart, the precision section and the print button; main.ts reports to the result. */
export function wirePictures(deps: PictureDeps): Pictures {
  const scaling = createScalingView(deps.client);
  const precision = createPrecisionView(deps.client, deps.catalog);
  let latest: PredictResponse | null = null;
  byId('print-report', HTMLButtonElement).addEventListener('click', async () => {
    fillReport(await deps.link(), latest);
    window.print();
  });
  // The browser's own print command: the address bar holds the scenario's link (written as it changes).
  window.addEventListener('beforeprint', () => {
    if (byId('report-link', HTMLElement).textContent !== location.href) fillReport(location.href, latest);
  });
  return {
    shown(scenario, response) {
      latest = response;
      precision.shown(scenario, response, deps.nameOf);
    },
    planned(scenario, response) {
      scaling.update(scenario, response).catch((error: unknown) => console.error(error));
    },
    planFailed: () => scaling.clear(),
  };
}
