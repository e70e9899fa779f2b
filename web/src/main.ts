// The page: fills the form from the catalogue, shows the default example, and recomputes (debounced)
// whenever an input changes. Prediction is a fast roofline evaluation, so it runs on the main thread.

import { debounce } from './dom';
import { createEngine, PrenetError } from './engine.js';
import { filterHardware, findInputs, populate, readForm, showPresetDefaults, type Inputs } from './form';
import { clearErrors, markStale, renderResults, renderSummary, setStatus, showError } from './render';
import type { Catalog } from './types';

// The wasm chunk is loaded lazily so the page's own markup paints first.
const engine = createEngine(async () => {
  const { default: createPrenetCore } = await import('@wasm/prenet_core.mjs');
  return createPrenetCore();
});

/** Incremented per computation; an answer that arrives after a newer request is dropped. */
let generation = 0;

async function recompute(inputs: Inputs): Promise<void> {
  const mine = ++generation;
  const reading = readForm(inputs);
  if (!reading.ok) {
    clearErrors();
    showError(reading.field, reading.message);
    markStale(true);
    return;
  }
  try {
    const response = await engine.predict(reading.request);
    if (mine !== generation) return;
    clearErrors();
    renderSummary(response);
    renderResults(response);
    markStale(false);
  } catch (error) {
    if (mine !== generation) return;
    if (!(error instanceof PrenetError)) throw error;
    clearErrors();
    showError(error.field, error.message);
    markStale(true);
  }
}

function wire(inputs: Inputs, catalog: Catalog): void {
  const update = (): void => {
    recompute(inputs).catch(reportFailure);
  };
  const later = debounce(update, 250);
  inputs.hardwareSearch.addEventListener('input', () => filterHardware(inputs));
  inputs.form.addEventListener('input', (event) => {
    if (event.target === inputs.hardwareSearch) return; // filtering changes no input
    if (event.target === inputs.config || event.target === inputs.preset) showPresetDefaults(inputs, catalog);
    filterHardware(inputs); // keeps the "n selected" count current
    later();
  });
  inputs.form.addEventListener('change', later); // selects and checkboxes in older browsers
  inputs.form.addEventListener('submit', (event) => {
    event.preventDefault(); // Enter in a field recomputes now instead of navigating
    update();
  });
}

function reportFailure(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  setStatus(`Something went wrong inside the calculator: ${message}`);
  console.error(error);
}

async function start(): Promise<void> {
  setStatus('Loading the calculator…');
  const inputs = findInputs();
  const catalog = await engine.catalog();
  populate(inputs, catalog);
  wire(inputs, catalog);
  setStatus('');
  await recompute(inputs);
}

start().catch(reportFailure);
