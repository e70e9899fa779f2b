// The page: connects the engine (a worker when possible), fills the form from the catalogue,
// restores the scenario from the link, and recomputes whenever an input changes.
//
// Recomputing is "latest wins": a change is sent at once if the engine is idle; changes made while
// it works are folded into one follow-up request, so results keep pace with typing without a
// debounce delay and without a queue of stale requests.

import { drawBarChart, drawLayerChart, drawnAtOtherWidth, onScreen, withChartWidths, type Bar } from './charts';
import { wireConfigInput } from './config-input';
import { byId, download } from './dom';
import { predictorState, readingCaution, type PredictorState } from './describe';
import { engineSource } from './engine-source';
import { connectEngine, type EngineClient } from './engine-client';
import { catalogText } from 'virtual:prenet-catalog';
import { exportFileName, exportJson, resultsCsv } from './export.js';
import { formatCost, formatDuration } from './format.js';
import {
  applyCalibration,
  applyModelAndTraining,
  applyParallel,
  filterPresets,
  findForm,
  populateForm,
  readCalibration,
  readModelAndTraining,
  readParallel,
  setConfig,
  showDefaults,
  showParallelDefaults,
  syncMeasuredOn,
  updatePresetNote,
  type FormParts,
} from './form';
import { createHardwarePicker, type HardwarePicker } from './hardware-picker';
import type { Job, JobResult } from './jobs.js';
import { layerTimings, topLayers } from './layers.js';
import { readModelConfig } from './model-config.js';
import { drawMemoryChart, drawStepChart, renderMemory, renderStepParts } from './parallel-view';
import { applyPlan, findPlan, readPlan, renderPlan, showPlanError, type PlanParts } from './plan-view';
import { clearErrors, clearNote, markStale, renderSummary, setStatus, showError } from './render';
import { best, renderTable, wireSorting } from './results-table';
import {
  hasScenario,
  paramsFromLocation,
  paramsToScenario,
  scenarioToJob,
  scenarioToParams,
  scenarioToPlanJob,
  startScenario,
  PARALLEL_NUMBERS,
  type Parallel,
  type Scenario,
} from './scenario.js';
import { registerOfflineCache } from './offline';
import { initTheme } from './theme';
// Pictures (issue 21, point 6): scaling from plan mode, time and memory by precision, the printed report.
import { wirePictures, type Pictures } from './report';
// Issue 21, the start: the gallery of starting scenarios and the one-glance answer.
import { renderGallery } from './gallery';
import { renderGlance, type GlanceActions } from './glance';
import type { Catalog, MemoryAdvice, PlanResponse, PlanRow, PredictResponse } from './types';

/** The pictures (report.ts), wired in start(); null in the iframe mode, which has none. */
let pictures: Pictures | null = null;

const params = paramsFromLocation(location);
/** The iframe mode (`?embed=1`): compact layout, inputs folded away, no per-layer chart. */
const EMBED = params.get('embed') === '1';

interface Shown {
  scenario: Scenario;
  job: Job;
  response: PredictResponse;
  /** Computed on the roofline while the learned models were loading: to be computed again once they are. */
  learnedPending: boolean;
}

interface App {
  client: EngineClient;
  catalog: Catalog;
  form: FormParts;
  picker: HardwarePicker;
  plan: PlanParts;
  scenario: Scenario;
  shown: Shown | null;
  /** The Plan panel's latest ranked layouts, re-ranked in place when "Rank by" changes. */
  planShown: PlanResponse | null;
}

// ------------------------------------------------------------------ reading the form

function readScenario(app: App): Scenario {
  const { hardware, custom } = app.picker.read();
  syncMeasuredOn(app.form, hardware, (id) => app.picker.nameOf(id), app.form.measuredOn.value);
  return {
    ...readModelAndTraining(app.form, app.scenario.preset),
    hardware,
    custom,
    calibration: readCalibration(app.form),
    sort: app.scenario.sort,
    layersFor: app.scenario.layersFor,
    parallel: readParallel(app.form),
    plan: readPlan(app.plan),
  };
}

function applyScenario(app: App, scenario: Scenario): void {
  app.scenario = scenario;
  applyModelAndTraining(app.form, scenario);
  app.picker.apply(scenario.hardware, scenario.custom);
  applyCalibration(app.form, scenario, (id) => app.picker.nameOf(id));
  applyParallel(app.form, scenario.parallel);
  applyPlan(app.plan, scenario.plan);
}

// ------------------------------------------------------------------ the link

let linkTimer: ReturnType<typeof setTimeout> | undefined;
/** The hash this page last wrote, so its own `hashchange` is not mistaken for a pasted link. */
let writtenHash = '';
/** Counts pasted links: a write of the scenario before one (it awaits compression) must not replace it. */
let pastedLinks = 0;

async function writeLink(app: App, scenario: Scenario): Promise<{ configLeftOut: boolean }> {
  const pastedBefore = pastedLinks;
  const { params: link, configLeftOut } = await scenarioToParams(scenario, app.catalog);
  if (pastedLinks !== pastedBefore) return { configLeftOut };
  if (EMBED) link.set('embed', '1');
  // Commas are fine in a fragment; unescaped they keep `hardware=a,b,c` readable.
  writtenHash = `#${link.toString().replace(/%2C/gi, ',')}`;
  // The query (an iframe's `?embed=1&preset=…`) is dropped: the hash now says everything.
  history.replaceState(null, '', `${location.pathname}${writtenHash}`);
  if (EMBED) {
    link.delete('embed');
    document.getElementById('open-full')?.setAttribute('href', `${location.pathname}#${link.toString().replace(/%2C/gi, ',')}`);
  }
  return { configLeftOut };
}

/** Writing the URL on every keystroke is wasted work (compression, history); a short pause suffices. */
function scheduleLinkWrite(app: App, scenario: Scenario): void {
  clearTimeout(linkTimer);
  // The last written hash no longer describes the page: pasting that link back must restore it.
  writtenHash = '';
  linkTimer = setTimeout(() => void writeLink(app, scenario), 250);
}

function known(catalog: Catalog) {
  return {
    presets: catalog.presets.map((p) => p.id),
    hardware: catalog.hardware.map((h) => h.id),
    options: catalog.options,
    parallel_options: catalog.parallel_options,
  };
}

// ------------------------------------------------------------------ computing

let inFlight = false;
let queued: { scenario: Scenario; since: number } | null = null;
let renders = 0;
/** Whether the engine has said its learned models are loaded (or failed): results computed before are computed again. */
let learnedReady = false;
/** Resolves when the first outcome (results or an error) is on screen. */
let firstShown: () => void = () => undefined;
const shownOnce = new Promise<void>((resolve) => (firstShown = resolve));

/**
 * @param since when the change happened (an event's timeStamp), for the recompute measurement
 */
function request(app: App, scenario: Scenario, since: number): void {
  app.scenario = scenario;
  scheduleLinkWrite(app, scenario);
  if (scenario.hardware.length === 0) {
    queued = null;
    clearErrors();
    showError('hardware', 'hardware: tick at least one accelerator');
    markStale(true);
    return;
  }
  queued = { scenario, since };
  if (!inFlight) void pump(app);
}

/**
 * `data-busy` on <html> is "1" while a computation is pending and "0" once the page shows the
 * latest inputs' outcome: tests and the benchmark wait on it instead of guessing with timeouts.
 */
function setBusy(busy: boolean): void {
  document.documentElement.dataset.busy = busy || chartsWaiting ? '1' : '0';
}

async function pump(app: App): Promise<void> {
  inFlight = true;
  setBusy(true);
  try {
    while (queued !== null) {
      const { scenario, since } = queued;
      queued = null;
      const job = scenarioToJob(scenario, { perLayer: EMBED ? 'none' : 'chart' });
      const result = await app.client.compute(job);
      if (queued !== null) continue; // superseded while computing: skip drawing stale numbers
      show(app, scenario, job, result);
      measure(since);
      firstShown();
      // Asked before the learned models were ready and answered on the roofline after they were.
      if (learnedReady && app.shown?.job === job && app.shown.learnedPending) queued ??= { scenario, since: performance.now() };
    }
  } catch (error) {
    reportFailure(error);
  } finally {
    inFlight = false;
    setBusy(false);
  }
}

/** Performance entries the benchmark (web/bench/bench-web.mjs) reads: time to the frame showing the result. */
function measure(since: number): void {
  renders += 1;
  const count = renders;
  document.documentElement.dataset.renders = String(count);
  requestAnimationFrame(() => {
    const now = performance.now();
    if (count === 1) performance.mark('prenet:first-result', { startTime: now });
    else performance.measure('prenet:recompute', { start: since, end: now });
  });
}

function hardwareName(app: App, job: Job, field: string): string | null {
  const index = /^hardware\[(\d+)\]/.exec(field)?.[1];
  if (index === undefined) return null;
  const ref = job.request.hardware?.[Number(index)];
  if (ref === undefined) return null;
  return typeof ref === 'string' ? app.picker.nameOf(ref) : (ref.name ?? 'custom accelerator');
}

/**
 * A file the config box refused (too large, say, or an ONNX graph it cannot read). The inputs did not change, so the results
 * still match them; the message stays beside the box until the model input changes.
 */
let refusedFile: string | null = null;

/** The containers drawCharts draws into: their boxes are read before show writes anything. */
const CHART_IDS = ['time-chart', 'cost-chart', 'step-chart', 'memory-chart', 'layers-chart'] as const;
type ChartId = (typeof CHART_IDS)[number];

function show(app: App, scenario: Scenario, job: Job, result: JobResult): void {
  withChartWidths(
    CHART_IDS.map((id) => byId(id, HTMLElement)),
    () => showNow(app, scenario, job, result),
  );
}

function showNow(app: App, scenario: Scenario, job: Job, result: JobResult): void {
  clearErrors();
  if (refusedFile !== null) showError('config', refusedFile);
  showUnderstood(app.form.configKind, result);
  if (!result.ok) {
    // Say which accelerator "hardware[1]" is: the user never sees the request's list.
    const name = hardwareName(app, job, result.field);
    const message = name === null ? result.message : result.message.replace(result.field, `${result.field} (${name})`);
    showError(result.field, message);
    markStale(true);
    return;
  }
  const { response } = result;
  app.shown = { scenario, job, response, learnedPending: app.client.learnedPending() };
  const preset = response.model.source === 'preset' ? app.catalog.presets.find((p) => p.id === response.model.name) : undefined;
  renderSummary(response, preset?.name);
  showDefaults(app.form, response);
  showParallelDefaults(app.form, response);
  renderStepParts(response);
  renderMemory(response, (change) => applyAdvice(app, change));
  renderTable(response, scenario.sort, scenario.calibration?.hardware);
  if (!EMBED) renderGlance(glanceActions(app), scenario, response);
  drawChartsOnScreenFirst(app);
  markStale(false);
  byId('export-csv', HTMLButtonElement).disabled = false;
  byId('export-json', HTMLButtonElement).disabled = false;
  showPredictor(response, app.client.learnedProblem(), app.client.learnedPending());
  byId('version', HTMLElement).textContent =
    `core ${response.version} · predictor ${response.predictor} · ${computedWhere(app.client)}`;
  announce(response);
  pictures?.shown(scenario, response);
}

function computedWhere(client: EngineClient): string {
  if (client.latestStored()) return 'kept in this browser by an earlier visit';
  return client.mode() === 'main' ? "computed on the page's thread" : 'computed in a background worker';
}

/**
 * The "Read as" line under the config box: what the text was read as, and for a Hugging Face config read
 * generically (its model_type is not in the table) a caution naming the fields relied on, never as success.
 */
function showUnderstood(line: HTMLElement, result: JobResult): void {
  const caution = result.ok ? readingCaution(result.response) : null;
  line.classList.toggle('caution', caution !== null);
  if (result.understood === null) line.textContent = '';
  else line.textContent = caution === null ? `Read as: ${result.understood}.` : `Read as: ${result.understood}. ${caution}`;
}

/** Says which predictor produced the numbers, and why not the learned one when it is not. */
function showPredictor(response: PredictResponse, problem: string | null, pending: boolean): void {
  const note = byId('predictor', HTMLElement);
  document.documentElement.dataset.predictor = response.predictor;
  const state = predictorState(response, true, pending, problem);
  if (state.kind === 'learned' && performance.getEntriesByName('prenet:first-learned').length === 0) {
    requestAnimationFrame(() => performance.mark('prenet:first-learned'));
  }
  note.classList.toggle('fallback', state.kind === 'fallback' && state.problem !== null);
  note.textContent = predictorSentence(state, response.predictor);
}

/** The page's sentence for a predictor state (the element words it in describe's few words). */
function predictorSentence(state: PredictorState, predictor: string): string {
  switch (state.kind) {
    case 'learned':
      return `Predictor: learned models (ONNX, run in this browser); brackets give the 80% interval. The roofline step, in each accelerator's details, is the analytic baseline.${
        state.analyticRows ? ' Rows marked analytic (TPU, Gaudi) are timed by the roofline: the learned models cover GPUs only.' : ''
      }`;
    case 'loading':
      return `Predictor: ${predictor} (analytic) for now; the learned models are loading and will replace these numbers.`;
    case 'roofline-asked':
      return `Predictor: ${predictor} (analytic).`;
    case 'fallback':
      return `Predictor: ${predictor} (analytic)${
        state.problem !== null ? `, because ${state.problem}` : state.analyticRows ? ': the learned models cover GPUs only' : ''
      }.`;
  }
}

let announceTimer: ReturnType<typeof setTimeout> | undefined;
/** One short sentence for screen readers once typing pauses, instead of the whole table each keystroke. */
function announce(response: PredictResponse): void {
  clearTimeout(announceTimer);
  announceTimer = setTimeout(() => {
    const fastest = [...response.results].sort((a, b) => a.total_s - b.total_s)[0];
    byId('announce', HTMLElement).textContent =
      fastest === undefined ? '' : `Results updated for ${response.results.length} accelerators. Fastest: ${fastest.name}, ${formatDuration(fastest.total_s)} in total.`;
  }, 1000);
}

// ------------------------------------------------------------------ charts

/** Draws the chart `id` of the shown result. */
function drawChart(app: App, id: ChartId): void {
  const shown = app.shown;
  if (shown === null) return;
  const { response } = shown;
  const { results } = response;
  switch (id) {
    case 'time-chart': {
      const fastest = best(results, (r) => r.total_s);
      const timeBars: Bar[] = [...results]
        .sort((a, b) => a.total_s - b.total_s)
        .map((r) => ({ label: r.name, value: r.total_s, text: formatDuration(r.total_s), best: r.fits && r.total_s === fastest, noFit: !r.fits }));
      drawBarChart(byId(id, HTMLElement), timeBars, 'Total training time');
      return;
    }
    case 'cost-chart': {
      const cheapest = best(results, (r) => r.cost_usd);
      const costBars: Bar[] = [...results]
        .sort((a, b) => (a.cost_usd ?? Infinity) - (b.cost_usd ?? Infinity))
        .map((r) => ({
          label: r.name,
          value: r.cost_usd,
          text: r.cost_usd === null ? 'no price' : formatCost(r.cost_usd),
          best: r.fits && r.cost_usd !== null && r.cost_usd === cheapest,
          noFit: !r.fits,
        }));
      drawBarChart(byId(id, HTMLElement), costBars, 'Training cost');
      return;
    }
    case 'step-chart':
      drawStepChart(response);
      return;
    case 'memory-chart':
      drawMemoryChart(response);
      return;
    case 'layers-chart':
      if (!EMBED) drawLayers(app);
  }
}

function drawCharts(app: App, which: (id: ChartId) => boolean = () => true): void {
  for (const id of CHART_IDS) if (which(id)) drawChart(app, id);
}

/** Which result's charts are the latest to draw, and whether some are still left for after a frame. */
let chartRound = 0;
let chartsWaiting = false;

/**
 * Draws the charts on screen now and the others in the task after the next frame, so that the frame
 * showing new numbers does not wait for charts nobody sees yet (at 1400 × 900 all five are below the
 * first screen, and drawing them was a fifth of a repeat visit's script time before that frame).
 * The page stays data-busy until they are drawn; a newer result's charts replace older ones left waiting.
 */
function drawChartsOnScreenFirst(app: App): void {
  const round = (chartRound += 1);
  const later = CHART_IDS.filter((id) => !onScreen(byId(id, HTMLElement)));
  drawCharts(app, (id) => !later.includes(id));
  chartsWaiting = later.length > 0;
  if (!chartsWaiting) return;
  requestAnimationFrame(() =>
    setTimeout(() => {
      if (round !== chartRound) return;
      withChartWidths(
        later.map((id) => byId(id, HTMLElement)),
        () => drawCharts(app, (id) => later.includes(id)),
      );
      chartsWaiting = false;
      setBusy(inFlight);
    }, 0),
  );
}

/**
 * Applies one of the core's memory advice to the form: the changed settings replace the form's,
 * and a changed GPU count keeps the layout consistent (the core gave gpus with the change).
 */
function applyAdvice(app: App, change: MemoryAdvice['change']): void {
  const parallel: Parallel = { ...readParallel(app.form) };
  for (const [key, value] of Object.entries(change)) {
    if (key === 'recompute' && typeof value === 'string') parallel.recompute = value as Parallel['recompute'];
    else if (key === 'sequence_parallel' && typeof value === 'boolean') {
      if (value) parallel.sequence_parallel = true;
      else delete parallel.sequence_parallel;
    }
    else if (key === 'zero_stage' && typeof value === 'number') parallel.zero_stage = value;
    else if (typeof value === 'number') (parallel as unknown as Record<string, number>)[key] = value;
  }
  applyParallel(app.form, parallel);
  request(app, readScenario(app), performance.now());
}

/** What the one-glance answer may do (glance.ts): check a candidate in the engine, apply one to the form. */
function glanceActions(app: App): GlanceActions {
  return {
    catalog: app.catalog,
    compute: (candidate) => app.client.compute(scenarioToJob(candidate, { perLayer: 'none' })),
    apply: (candidate) => {
      applyScenario(app, candidate);
      request(app, readScenario(app), performance.now());
    },
    applyAdvice: (change) => applyAdvice(app, change),
    plan: (candidate) => app.client.plan(scenarioToPlanJob(candidate)),
    useLayout: (layout) => useLayout(app, layout),
  };
}

function drawLayers(app: App): void {
  const shown = app.shown;
  if (shown === null) return;
  const select = byId('layers-for', HTMLSelectElement);
  const results = shown.response.results;
  select.replaceChildren(
    ...results.map((r) => {
      const option = document.createElement('option');
      option.value = r.hardware;
      option.textContent = r.name;
      return option;
    }),
  );
  // The engine sent per-layer timings for one accelerator only (jobs.js): the chosen one, or the
  // first row of the table.
  const result = results.find((r) => r.layers !== undefined);
  if (result?.layers === undefined) return;
  select.value = result.hardware;
  const count = Number(byId('layers-top', HTMLSelectElement).value);
  const { bars, rest, total_ms } = topLayers(layerTimings(shown.response.layers ?? [], result.layers), count);
  const covered = bars.reduce((sum, bar) => sum + bar.total_ms, 0);
  byId('layers-note', HTMLElement).textContent =
    rest === null
      ? `All ${bars.length} layers on ${result.name}, slowest first.`
      : `The ${bars.length} slowest of ${bars.length + rest.layers} layers on ${result.name} take ${Math.round((covered / total_ms) * 100)} % of the step; the rest are summed in the last bar.`;
  drawLayerChart(byId('layers-chart', HTMLElement), bars, rest, `Time per layer on ${result.name}`);
}

/** Charts are drawn at their pixel width; redraw when it changes (rotation, resizing). */
function redrawOnResize(app: App): void {
  let frame = 0;
  const observer = new ResizeObserver(() => {
    // Only charts drawn at another width: the observer's first report, right after the first
    // result's frame, would otherwise redraw all five at the widths they were just drawn at.
    const resized = CHART_IDS.filter((id) => drawnAtOtherWidth(byId(id, HTMLElement)));
    if (resized.length === 0) return;
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => drawCharts(app, (id) => resized.includes(id)));
  });
  for (const id of CHART_IDS) observer.observe(byId(id, HTMLElement));
}

// ------------------------------------------------------------------ the Plan panel

let planning = false;

/**
 * Runs the planner in the engine for the current inputs. `data-plan-busy` on <html> is "1" while it
 * runs (tests wait on it); a second press while it runs is ignored.
 */
async function runPlanNow(app: App): Promise<void> {
  if (planning) return;
  const scenario = readScenario(app);
  app.scenario = scenario;
  scheduleLinkWrite(app, scenario);
  if (scenario.plan.budget === undefined) return showPlanError(`plan.${scenario.plan.unit}`, `Enter how many ${scenario.plan.unit} to train on.`);
  if (scenario.hardware.length === 0) return showPlanError('hardware', 'Tick at least one accelerator above.');
  planning = true;
  document.documentElement.dataset.planBusy = '1';
  app.plan.run.disabled = true;
  app.plan.note.textContent = 'Searching layouts…';
  const started = performance.now();
  try {
    const result = await app.client.plan(scenarioToPlanJob(scenario));
    if (!result.ok) {
      app.planShown = null;
      app.plan.table.hidden = true;
      app.plan.note.textContent = '';
      showPlanError(result.field, result.message);
      pictures?.planFailed();
      return;
    }
    showPlanError(null);
    app.planShown = result.response;
    renderPlan(app.plan, result.response, scenario.plan, (layout) => useLayout(app, layout));
    pictures?.planned(scenario, result.response);
    app.plan.note.textContent += ` Searched in ${Math.round(performance.now() - started)} ms.`;
  } catch (error) {
    reportFailure(error);
  } finally {
    planning = false;
    app.plan.run.disabled = false;
    document.documentElement.dataset.planBusy = '0';
  }
}

/**
 * Copies a planned layout into the form: the accelerator alone, its degrees, micro-batches, ZeRO
 * stage, recomputation and sequence parallelism, the global batch they make and, where the budget says, the samples.
 */
function useLayout(app: App, layout: PlanRow): void {
  const scenario = readScenario(app);
  const batch = layout.data * layout.micro_batch_size * layout.micro_batches;
  // The core's own mode for the layout (one of the recompute row's values, which the select offers).
  const recompute = layout.recompute as Parallel['recompute'];
  const parallel: Parallel = {
    gpus: layout.gpus,
    data: layout.data,
    tensor: layout.tensor,
    pipeline: layout.pipeline,
    micro_batch_size: layout.micro_batch_size,
    micro_batches: layout.micro_batches,
    zero_stage: layout.zero_stage,
    recompute,
    ...(layout.sequence_parallel ? { sequence_parallel: true } : {}),
  };
  // The layout's other degrees (context, experts, virtual stages: the table's rows without a box of their
  // own in the page), where they differ from their default.
  const fields = parallel as unknown as Record<string, number>;
  const row = layout as unknown as Record<string, unknown>;
  for (const option of app.catalog.parallel_options) {
    const value = row[option.key];
    if (option.kind !== 'integer' || typeof value !== 'number' || option.key in parallel || value === option.default) continue;
    if (!(PARALLEL_NUMBERS as readonly string[]).includes(option.key)) fields[option.key] = value;
  }
  // Link overrides stay: they describe the user's cluster, not the layout.
  for (const field of ['gpus_per_node', 'intra_node_gbs', 'intra_node_us', 'inter_node_gbs', 'inter_node_us'] as const) {
    const value = scenario.parallel[field];
    if (value !== undefined) parallel[field] = value;
  }
  const training = { ...scenario.training, batch_size: batch };
  const { budget, unit } = scenario.plan;
  const seqLen = app.planShown?.training.seq_len;
  const samples = budget === undefined ? undefined : unit === 'samples' ? budget : seqLen === undefined ? undefined : budget / seqLen;
  if (samples !== undefined) {
    training.dataset_size = Math.max(1, Math.round(samples));
    training.epochs = 1;
  }
  const next: Scenario = { ...scenario, hardware: scenario.hardware.includes(layout.hardware) ? [layout.hardware] : scenario.hardware, training, parallel };
  applyScenario(app, next);
  request(app, readScenario(app), performance.now());
  byId('results-heading', HTMLElement).scrollIntoView({ block: 'start' });
}

function wirePlan(app: App): void {
  app.plan.form.addEventListener('submit', (event) => {
    event.preventDefault();
    void runPlanNow(app);
  });
  app.plan.form.addEventListener('input', (event) => {
    app.scenario = { ...app.scenario, plan: readPlan(app.plan) };
    scheduleLinkWrite(app, app.scenario);
    // Ranking again needs no search: the layouts are the same.
    if (event.target === app.plan.rank && app.planShown !== null) {
      renderPlan(app.plan, app.planShown, app.scenario.plan, (layout) => useLayout(app, layout));
    }
  });
}

// ------------------------------------------------------------------ exports and sharing

/** The request as the core saw it: with the pasted config in place of the preset. */
function exportedRequest(job: Job, catalog: Catalog) {
  if (job.configText === undefined) return job.request;
  const reading = readModelConfig(job.configText, catalog.model_forms);
  return reading.ok ? { ...job.request, model: reading.model } : job.request;
}

function wireExports(app: App): void {
  byId('export-csv', HTMLButtonElement).addEventListener('click', () => {
    if (app.shown === null) return;
    download(resultsCsv(app.shown.response), exportFileName(app.shown.response.model.name, 'csv'), 'text/csv;charset=utf-8');
  });
  // The JSON export carries per-layer timings for every accelerator, so it is computed afresh.
  byId('export-json', HTMLButtonElement).addEventListener('click', async () => {
    if (app.shown === null) return;
    const job = scenarioToJob(app.shown.scenario, { perLayer: 'all' });
    const result = await app.client.compute(job).catch((error: unknown) => {
      reportFailure(error);
      return null;
    });
    if (result === null || !result.ok) return;
    download(exportJson(exportedRequest(job, app.catalog), result.response), exportFileName(result.response.model.name, 'json'), 'application/json');
  });
}

function wireShare(app: App): void {
  const note = byId('share-note', HTMLElement);
  byId('share', HTMLButtonElement).addEventListener('click', async () => {
    clearTimeout(linkTimer);
    const { configLeftOut } = await writeLink(app, readScenario(app));
    const url = location.href;
    let copied = false;
    try {
      await navigator.clipboard.writeText(url);
      copied = true;
    } catch {
      // No clipboard access (some file:// pages, old browsers): the address bar has the link.
    }
    note.textContent =
      (copied ? 'Link copied: it restores this scenario.' : 'The address bar now holds a link to this scenario; copy it from there.') +
      (configLeftOut ? ' Your config is too large for a link and was left out.' : '');
  });
}

// ------------------------------------------------------------------ start

function reportFailure(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  setStatus(`Something went wrong inside the calculator: ${message}. Reloading the page may help.`);
  console.error(error);
}

function wireInputs(app: App): void {
  const changed = (event: Event): void => {
    clearNote();
    request(app, readScenario(app), event.timeStamp);
  };
  app.form.form.addEventListener('input', (event) => {
    if (event.target === app.form.presetSearch) return filterPresets(app.form);
    if (event.target instanceof HTMLInputElement && event.target.type === 'file') return; // config-input.ts reads it
    if (event.target === app.form.config || (event.target instanceof HTMLInputElement && event.target.name === 'preset')) {
      refusedFile = null;
      // Text typed into the box (only a script can, while a large config hides it) replaces a held config.
      if (event.target === app.form.config && app.form.held !== null) setConfig(app.form, app.form.config.value, 'config');
      updatePresetNote(app.form);
    }
    changed(event);
  });
  // Only `input`: every current browser fires it for selects, radios and checkboxes too, and also
  // listening to `change` would compute each change twice.
  app.form.form.addEventListener('submit', (event) => {
    event.preventDefault(); // Enter in a field recomputes now instead of navigating
    changed(event);
  });
  app.form.configClear.addEventListener('click', (event) => {
    refusedFile = null;
    setConfig(app.form, '', ''); // drops a held config too
    app.form.config.focus();
    changed(event);
  });
  wireConfigInput({
    loaded: (text, name) => {
      refusedFile = null;
      const hadFocus = document.activeElement === app.form.config || document.activeElement === app.form.configHeld;
      setConfig(app.form, text, name);
      // The textarea is hidden while a large config is held: keep the keyboard where the config is.
      if (hadFocus) (app.form.held === null ? app.form.config : app.form.configHeld).focus();
      request(app, readScenario(app), performance.now());
    },
    rejected: (message) => {
      refusedFile = message;
      showError('config', message);
    },
  });
  // A file dropped beside the Model box would make the browser open it and leave the page.
  window.addEventListener('dragover', (event) => event.preventDefault());
  window.addEventListener('drop', (event) => event.preventDefault());

  wireSorting(
    () => app.scenario.sort,
    (sort) => {
      app.scenario = { ...app.scenario, sort };
      if (app.shown !== null) renderTable(app.shown.response, sort, app.shown.scenario.calibration?.hardware);
      scheduleLinkWrite(app, app.scenario);
    },
  );
  // Another accelerator's per-layer timings must be computed (jobs.js); a few milliseconds.
  byId('layers-for', HTMLSelectElement).addEventListener('change', (event) => {
    request(app, { ...app.scenario, layersFor: (event.target as HTMLSelectElement).value }, event.timeStamp);
  });
  byId('layers-top', HTMLSelectElement).addEventListener('change', () => drawLayers(app));

  // A link pasted into this tab's address bar changes only the hash: restore it without a reload. The
  // event's own URL is read, and a pending write of the previous scenario dropped: that write may land
  // between the paste and this event and would otherwise hide the pasted link.
  window.addEventListener('hashchange', (event) => {
    const pasted = new URL(event.newURL);
    if (pasted.hash === writtenHash) return;
    clearTimeout(linkTimer);
    writtenHash = '';
    pastedLinks += 1;
    void restore(app, paramsFromLocation(pasted));
  });
}

async function restore(app: App, link: URLSearchParams): Promise<void> {
  const { scenario, problems } = await paramsToScenario(link, known(app.catalog));
  applyScenario(app, scenario);
  setStatus(problems.length > 0 ? `Some of this link could not be used: ${problems.join('; ')}.` : '', 'note');
  request(app, scenario, performance.now());
}

function setUpEmbedMode(): void {
  if (!EMBED) return;
  document.documentElement.classList.add('embed');
  byId('inputs-panel', HTMLDetailsElement).open = false;
  // The full calculator, opened in a new tab with the same scenario.
  const footer = document.querySelector('footer');
  if (footer !== null) {
    const link = document.createElement('a');
    link.id = 'open-full';
    link.target = '_blank';
    link.rel = 'noopener';
    link.textContent = 'Open in the full calculator ↗';
    link.href = location.pathname; // writeLink adds the scenario
    footer.prepend(link);
  }
}

async function start(): Promise<void> {
  initTheme(byId('theme', HTMLButtonElement), params.get('theme'));
  setUpEmbedMode();
  setStatus('Loading the calculator…');
  const client = connectEngine(engineSource, catalogText, (reason) => console.info(`prenet: computing on the page's thread (${reason})`));
  void client.started.then((mode) => (document.documentElement.dataset.engine = mode), reportFailure);
  // For tests and the curious: the page's own engine, under a registered symbol (no page global),
  // so the browser tests can compare its numbers with the Node engine's for the same request.
  (globalThis as Record<symbol, unknown>)[Symbol.for('prenet.engine-client')] = client;
  const catalog = await client.catalog();
  const form = findForm();
  populateForm(form, catalog);
  // The picker reports its changes itself: its checkboxes are inside the form, but their events are
  // handled there (filters must not recompute).
  let app: App | undefined;
  const picker = createHardwarePicker(catalog, () => {
    if (app !== undefined) request(app, readScenario(app), performance.now());
  });
  app = { client, catalog, form, picker, plan: findPlan(), scenario: startScenario(), shown: null, planShown: null };
  if (!EMBED) renderGallery(byId('gallery', HTMLElement), byId('gallery-list', HTMLElement), catalog);
  wireInputs(app);
  wirePlan(app);
  wireExports(app);
  wireShare(app);
  redrawOnResize(app);
  const linked = app;
  if (!EMBED) {
    pictures = wirePictures({ client, catalog, nameOf: (id) => picker.nameOf(id), link: async () => (await writeLink(linked, readScenario(linked)), location.href) });
  }
  setStatus('');
  if (hasScenario(params, catalog)) await restore(app, params);
  else {
    applyScenario(app, app.scenario);
    // Read back from the form: a default accelerator missing from this catalogue is dropped there.
    request(app, readScenario(app), performance.now());
  }
  // The engine loads ONNX Runtime and the learned models beside its core from the start. A result
  // computed before they were ready is on the roofline (labelled); once they are, the same inputs are
  // computed again and the learned numbers replace the roofline's.
  const started = app;
  // A link with a budget shows its plan too, once the first results are on screen.
  void shownOnce.then(() => {
    if (started.scenario.plan.budget !== undefined && !EMBED) void runPlanNow(started);
  });
  void shownOnce.then(() => client.loadLearned()).then(() => {
    learnedReady = true;
    // The shown result's own state, not the client's latest: the glance and the pictures compute too.
    if (!inFlight && started.shown?.learnedPending === true && started.scenario.hardware.length > 0) request(started, started.scenario, performance.now());
    registerOfflineCache(EMBED); // speed + service worker (issue 21): offline.ts
  });
}

start().catch(reportFailure);
