// <prenet-calculator>: the calculator as one element for documentation pages, from one classic
// script (dist/embed.js; docs/EMBED.md). Attributes use the link's parameter names (scenario.js):
//
//   <prenet-calculator preset="bert-base" hardware="h100-sxm,a100-sxm4-80gb" batch="32"
//                      precision="bf16"></prenet-calculator>
//
// A config can be given inline as a child <script type="application/json">…</script>.
// The element shows a compact comparison (step, total, memory, cost) in a shadow root, recomputes
// when an attribute changes, and fires `prenet-result` / `prenet-error` events.
//
// Predictor: the learned models, like the page. ONNX Runtime's JS is inside embed.js; its wasm and
// the class models are hashed files in assets/ beside embed.js, fetched when the first element
// predicts (once per page). Until they are there the elements show the roofline and say so; if they
// cannot be fetched or instantiated (file://, no CORS, the host's CSP) the roofline stays, with a
// note. `predictor="roofline"` asks for the roofline and fetches nothing.
//
// Why the engine runs on the page's thread here: a worker started by a script from another origin
// would need a blob: worker allowed by the host page's CSP, and a compact request (no per-layer
// timings) takes a few milliseconds. All elements on a page share one engine.

import createPrenetCore from '@wasm/prenet_core.mjs';
import { learnedAssets, type LearnedAssets } from 'virtual:prenet-learned-assets';
import css from './embed.css?inline';
import { element, svg } from './dom';
import { predictorState, readingCaution, trainingSettings } from './describe';
import { createEngine } from './engine.js';
import { formatCost, formatDuration, formatGB, formatMs, formatRange, formatSI } from './format.js';
import { runJob } from './jobs.js';
import { learnedLoader, loadOrtModels } from './learned-models';
import { defaultScenario, paramsToScenario, scenarioToJob, scenarioToParams, type Known } from './scenario.js';
import { sortResults } from './sort.js';
import type { Catalog, PredictRequest, PredictResponse } from './types';

/** Elements showing roofline numbers while the learned models load: each recomputes once they settle. */
const waiting = new Set<() => void>();

/** Why the learned models cannot even be asked for from where embed.js came, or null. */
function unreachable(assets: LearnedAssets | null): string | null {
  if (assets === null) return 'this build carries no learned models';
  if (!assets.fromScript || assets.base === null) return 'the address of embed.js is unknown (was it loaded as a classic <script src>?)';
  const { protocol } = new URL(assets.base);
  // Fetch cannot read file: URLs; trying would only log an error on the host page.
  if (protocol !== 'http:' && protocol !== 'https:') return `they cannot be fetched from ${protocol}//`;
  return null;
}

/**
 * ONNX Runtime and the class models, loaded once per page when the first element asks. A failure
 * leaves predictions on the roofline.
 */
const learnedModels = learnedLoader({
  async open() {
    const problem = unreachable(learnedAssets);
    if (problem !== null) throw new Error(problem);
    return loadOrtModels(learnedAssets as LearnedAssets);
  },
  problem: (reason) => `the learned models did not load: ${reason}`,
  tag: 'prenet-calculator',
  onSettled() {
    for (const recompute of waiting) recompute();
    waiting.clear();
  },
});

const engine = createEngine(() => createPrenetCore(), () => learnedModels.load());
/** The analytic roofline alone: asked for with predictor="roofline", and shown while the models load. */
const roofline = { predict: (request: PredictRequest) => engine.predictRoofline(request), catalog: engine.catalog };
let known: Promise<Known & { presetNames: Map<string, string> }> | undefined;

function loadKnown(): Promise<Known & { presetNames: Map<string, string> }> {
  known ??= engine.catalog().then((catalog: Catalog) => ({
    presets: catalog.presets.map((p) => p.id),
    hardware: catalog.hardware.map((h) => h.id),
    options: catalog.options,
    // The parallel fields are the page's only (docs/EMBED.md): none is an attribute, so none is read.
    parallel_options: catalog.parallel_options,
    presetNames: new Map(catalog.presets.map((p) => [p.id, p.name])),
  }));
  return known;
}

/**
 * Attributes read as scenario parameters (scenario.js accepts each of these names), besides the training
 * options': those are the link names of the catalogue's table of options (watched once it is loaded).
 */
const SCENARIO_ATTRIBUTES = ['preset', 'hardware', 'custom', 'measured', 'measured_on', 'sort'] as const;

/** Every attribute read as a scenario parameter. */
function scenarioAttributes(known: Known): string[] {
  return [...SCENARIO_ATTRIBUTES, ...known.options.flatMap((option) => option.link)];
}

let sheet: CSSStyleSheet | undefined;

/** One stylesheet object shared by every element's shadow root. */
function styles(root: ShadowRoot): void {
  if (typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype) {
    sheet ??= new CSSStyleSheet();
    if (sheet.cssRules.length === 0) sheet.replaceSync(css);
    root.adoptedStyleSheets = [sheet];
  } else {
    // Browsers before constructable stylesheets; a host CSP without 'unsafe-inline' blocks this.
    root.append(element('style', css));
  }
}

function spark(fraction: number): SVGSVGElement {
  const width = 48;
  const chart = svg('svg', { width, height: 8, class: 'spark', 'aria-hidden': 'true' });
  chart.append(svg('rect', { x: 0, y: 0, height: 8, rx: 2, width: Math.max(1, fraction * width).toFixed(1) }));
  return chart;
}

function cell(column: string, text: string, value: number | boolean | null, className = 'num'): HTMLTableCellElement {
  const td = element('td', text, className);
  td.dataset.col = column;
  if (value !== null) td.dataset.value = String(value);
  return td;
}

/** The learned predictor's 80% interval, small under the value (data-low, data-high, and a title). */
function withInterval(td: HTMLTableCellElement, interval: [number, number] | undefined, format: (value: number) => string): HTMLTableCellElement {
  if (interval === undefined) return td;
  td.dataset.low = String(interval[0]);
  td.dataset.high = String(interval[1]);
  const range = formatRange(interval[0], interval[1], format);
  td.title = `80% interval: ${range}`;
  td.append(element('small', range, 'range'));
  return td;
}

export class PrenetCalculatorElement extends HTMLElement {
  static observedAttributes = [...SCENARIO_ATTRIBUTES, 'calculator', 'predictor'];

  /** The latest response, for scripts on the host page; null until the first result. */
  result: PredictResponse | null = null;

  readonly #root: ShadowRoot;
  readonly #head = element('div', undefined, 'head');
  readonly #status = element('p', undefined, 'status');
  readonly #body = element('tbody');
  readonly #foot = element('p', undefined, 'foot');
  readonly #box = element('div', undefined, 'box');
  #scheduled = false;
  #generation = 0;
  readonly #recompute = (): void => this.#schedule();
  /** Watches the training options' attributes, which observedAttributes cannot name before the catalogue loads. */
  #optionAttributes: MutationObserver | undefined;

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    styles(this.#root);
    this.#status.setAttribute('role', 'status');
    const table = element('table');
    const headRow = element('tr');
    for (const [text, numeric] of [['Accelerator', false], ['Step', true], ['Total', true], ['Memory', true], ['Cost', true]] as const) {
      const th = element('th', text, numeric ? 'num' : undefined);
      th.scope = 'col';
      headRow.append(th);
    }
    table.append(element('thead'), this.#body);
    table.tHead?.append(headRow);
    const wrap = element('div', undefined, 'wrap');
    wrap.append(table);
    this.#box.append(this.#head, this.#status, wrap, this.#foot);
    this.#root.append(this.#box);
    this.#status.textContent = 'Loading the calculator…';
  }

  connectedCallback(): void {
    this.#schedule();
    void loadKnown().then((known) => {
      this.#optionAttributes ??= new MutationObserver(this.#recompute);
      this.#optionAttributes.observe(this, { attributes: true, attributeFilter: known.options.flatMap((option) => option.link) });
    }, () => undefined);
  }

  disconnectedCallback(): void {
    this.#optionAttributes?.disconnect();
  }

  attributeChangedCallback(): void {
    this.#schedule();
  }

  /** Several attributes set in a row compute once. */
  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      if (this.isConnected) void this.#compute();
    });
  }

  #params(known: Known): URLSearchParams {
    const params = new URLSearchParams();
    for (const name of scenarioAttributes(known)) {
      const value = this.getAttribute(name);
      if (value !== null) params.set(name, value);
    }
    return params;
  }

  /** A config given as a child <script type="application/json"> (JSON needs no escaping there). */
  #inlineConfig(): string {
    return this.querySelector('script[type="application/json"]')?.textContent?.trim() ?? '';
  }

  async #compute(): Promise<void> {
    const generation = ++this.#generation;
    this.dataset.state = 'loading';
    try {
      const catalogue = await loadKnown();
      const { scenario, problems } = await paramsToScenario(this.#params(catalogue), catalogue, defaultScenario());
      scenario.config = this.#inlineConfig();
      if (scenario.hardware.length === 0) problems.push('hardware: name at least one accelerator');
      const asked = this.getAttribute('predictor');
      if (asked !== null && asked !== 'learned' && asked !== 'roofline') problems.push(`predictor: expected learned or roofline, got "${asked}"`);
      const learned = asked !== 'roofline';
      if (learned) void learnedModels.load();
      const pending = learned && !learnedModels.settled;
      const result = scenario.hardware.length === 0 ? null : await runJob(learned && !pending ? engine : roofline, scenarioToJob(scenario, { perLayer: 'none' }));
      if (generation !== this.#generation) return;
      if (result === null || !result.ok) {
        const message = result?.ok === false ? result.message : problems.join('; ');
        this.#showError(message, result?.ok === false ? result.field : 'hardware');
        return;
      }
      // Roofline numbers shown while the models load are replaced once they have (or have failed to).
      if (pending) {
        if (learnedModels.settled) this.#schedule();
        else waiting.add(this.#recompute);
      }
      this.result = result.response;
      const { model } = result.response;
      this.#render(result.response, scenario, model.source === 'preset' ? (catalogue.presetNames.get(model.name) ?? model.name) : model.name);
      this.#status.classList.remove('error');
      const caution = readingCaution(result.response, true);
      this.#status.classList.toggle('caution', caution !== null);
      const notes = [...(caution === null ? [] : [caution]), ...(problems.length > 0 ? [`Ignored: ${problems.join('; ')}`] : [])];
      this.#status.textContent = notes.join(' ');
      await this.#footer(scenario, this.#predictorNote(result.response, learned, pending));
      if (generation !== this.#generation) return;
      this.dataset.predictor = result.response.predictor;
      this.dataset.state = 'ready';
      this.dispatchEvent(new CustomEvent('prenet-result', { detail: result.response }));
    } catch (error) {
      if (generation !== this.#generation) return;
      this.#showError(`the calculator failed: ${error instanceof Error ? error.message : String(error)}`, 'request');
    }
  }

  #showError(message: string, field: string): void {
    this.#status.classList.remove('caution');
    this.#status.classList.add('error');
    this.#status.textContent = message;
    this.#box.classList.toggle('stale', this.result !== null);
    this.dataset.state = 'error';
    this.dispatchEvent(new CustomEvent('prenet-error', { detail: { field, message } }));
  }

  /** Which predictor computed the numbers shown, and why when it is not the one asked for. */
  #predictorNote(response: PredictResponse, learned: boolean, pending: boolean): string {
    const state = predictorState(response, learned, pending, learnedModels.problem);
    switch (state.kind) {
      case 'learned':
        return 'learned models; small figures: 80% interval';
      case 'roofline-asked':
        return `${response.predictor}, the analytic model`;
      case 'loading':
        return `${response.predictor} for now; loading the learned models`;
      case 'fallback':
        if (state.problem === null && state.analyticRows) return `${response.predictor}, the analytic model: the learned models cover GPUs only`;
        return `${response.predictor}, because ${state.problem ?? 'the learned models are not available'}`;
    }
  }

  /** @param title the preset's catalogue name, or the model's name for a config */
  #render(response: PredictResponse, scenario: ReturnType<typeof defaultScenario>, title: string): void {
    const { model, training } = response;
    const { sort, calibration } = scenario;
    this.#box.classList.remove('stale');
    this.#head.replaceChildren(
      element('strong', title),
      element(
        'span',
        `${formatSI(model.parameters)} parameters · ${formatSI(model.flops_per_step.total, 'FLOP')} per step · batch ${training.batch_size} · ` +
          `${trainingSettings(training).join(' · ')} · ${training.steps_per_epoch.toLocaleString('en-US')} steps × ${training.epochs} epoch${training.epochs === 1 ? '' : 's'}` +
          (calibration === null ? '' : ` · calibrated to ${formatMs(calibration.step_ms)} measured on ${calibration.hardware}`),
        'meta',
      ),
    );
    const longest = Math.max(...response.results.map((r) => r.total_s));
    const fastest = Math.min(...response.results.map((r) => r.total_s));
    this.#body.replaceChildren(
      ...sortResults(response.results, sort).map((r) => {
        const row = element('tr');
        row.dataset.hardware = r.hardware;
        const name = element('th', r.name);
        name.scope = 'row';
        if (r.predictor === 'roofline' && response.predictor === 'learned') {
          const badge = element('span', ' analytic', 'analytic');
          badge.title = 'timed by the analytic roofline: the learned models cover GPUs only';
          name.append(badge);
        }
        const best = r.total_s === fastest && response.results.length > 1;
        const total = cell('total_s', formatDuration(r.total_s), r.total_s, best ? 'num best' : 'num');
        total.append(spark(r.total_s / longest));
        withInterval(total, r.total_s_interval, formatDuration);
        const memory = cell('memory_gb', `${formatGB(r.memory_gb)}${r.fits ? '' : ' ✗ too big'}`, r.memory_gb, r.fits ? 'num' : 'num no');
        const step = withInterval(cell('step_ms', formatMs(r.step_ms), r.step_ms), r.step_ms_interval, formatMs);
        row.append(name, step, total, memory, cell('cost_usd', r.cost_usd === null ? '—' : formatCost(r.cost_usd), r.cost_usd));
        return row;
      }),
    );
  }

  /** Credits the calculator and, with a `calculator="URL"` attribute, links to it with the same scenario. */
  async #footer(scenario: Awaited<ReturnType<typeof paramsToScenario>>['scenario'], predictor: string): Promise<void> {
    this.#foot.replaceChildren(`Predicted in your browser by the PreNeT training-time calculator (`, element('span', predictor, 'predictor'), ').');
    const base = this.getAttribute('calculator');
    if (base === null || base === '') return;
    let url: URL;
    try {
      url = new URL(base, document.baseURI);
    } catch {
      return;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:' && url.protocol !== 'file:') return; // no javascript: links
    const { params } = await scenarioToParams(scenario, await loadKnown());
    url.hash = params.toString();
    const link = element('a', 'Open in the calculator ↗');
    link.href = url.href;
    link.target = '_blank';
    link.rel = 'noopener';
    this.#foot.append(' ', link);
  }
}

if (!customElements.get('prenet-calculator')) customElements.define('prenet-calculator', PrenetCalculatorElement);

declare global {
  interface HTMLElementTagNameMap {
    'prenet-calculator': PrenetCalculatorElement;
  }
}
