// Embedding: the <prenet-calculator> element (dist/embed.js) on a plain documentation page, once
// served from another origin under a strict host CSP and once from file:// offline; and the iframe
// mode (`?embed=1`) framed by another site. The element predicts with the learned models (ORT's wasm
// and the class models fetched from beside embed.js), with the Node engine's numbers, and falls
// back to the roofline, saying so, where those files cannot be fetched.

import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ARTIFACTS, DIST, FIXTURES, isInMemory, launch, requireBuilt, startServer } from './helpers.mjs';
import { engine as nodeEngine } from '../../web/cli/node-engine.mjs';
import { runJob } from '../../web/src/jobs.js';
import { defaultScenario, paramsToScenario, scenarioToJob } from '../../web/src/scenario.js';

/** The learned predictors' files, as the element asks for them. */
const LEARNED_FILE = /\/assets\/[^/]+\.(onnx|wasm)$/;

/**
 * The documentation site: a second server, on another port and so another origin, serving the
 * fixture pages. A real server rather than Playwright's request routing: Chromium treats routed
 * responses as public addresses and then refuses them loopback scripts (Private Network Access).
 * @param {(path: string) => string | null} page the HTML for a path, or null
 * @returns {Promise<{ origin: string, stop: () => void }>}
 */
function startDocsSite(page) {
  const site = createServer((req, res) => {
    const html = page(new URL(req.url ?? '/', 'http://localhost').pathname);
    res.writeHead(html === null ? 404 : 200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(html ?? 'not found');
  });
  return new Promise((resolve) => {
    site.listen(0, '127.0.0.1', () => {
      const address = /** @type {import('node:net').AddressInfo} */ (site.address());
      resolve({ origin: `http://127.0.0.1:${address.port}`, stop: () => site.close() });
    });
  });
}

/**
 * @param {string} name fixture file
 * @param {Record<string, string>} values placeholders to fill
 */
function fixture(name, values) {
  let html = readFileSync(join(FIXTURES, name), 'utf8');
  for (const [key, value] of Object.entries(values)) html = html.replaceAll(`{{${key}}}`, value);
  return html;
}

/**
 * Waits for an element to finish with the given predictor and returns its shadow table's rows.
 * @param {import('playwright-core').Page} page
 * @param {string} id
 * @param {'learned' | 'roofline'} [predictor]
 */
async function elementRows(page, id, predictor = 'learned') {
  await page.waitForFunction(
    ([elementId, wanted]) => {
      const element = document.getElementById(elementId ?? '');
      return element?.dataset.state === 'ready' && element.dataset.predictor === wanted;
    },
    [id, predictor],
  );
  return page.evaluate((elementId) => {
    const root = document.getElementById(elementId)?.shadowRoot;
    /** @param {Element | null | undefined} td */
    const numbers = (td) => ['data-value', 'data-low', 'data-high'].map((name) => (td?.hasAttribute(name) ? Number(td.getAttribute(name)) : null));
    return [...(root?.querySelectorAll('tbody tr') ?? [])].map((row) => {
      const stepCell = row.querySelector('td[data-col="step_ms"]');
      const totalCell = row.querySelector('td[data-col="total_s"]');
      return {
        hardware: row.getAttribute('data-hardware'),
        total: totalCell?.childNodes[0]?.textContent ?? '',
        step: Number(stepCell?.getAttribute('data-value')),
        /** [value, low, high] of the step and total cells; low and high null without an interval */
        stepCell: numbers(stepCell),
        totalCell: numbers(totalCell),
        ranges: [...row.querySelectorAll('.range')].map((small) => small.textContent ?? ''),
      };
    });
  }, id);
}

/**
 * What the element computes, computed in Node: its attributes read by the same scenario code, the
 * same job, the Node engine (web/cli/node-engine.mjs, learned models from models/artifacts).
 * @param {Record<string, string>} attributes
 * @param {string} [configText] an inline config
 */
async function nodeResponse(attributes, configText = '') {
  const catalog = await nodeEngine.catalog();
  const known = { presets: catalog.presets.map((p) => p.id), hardware: catalog.hardware.map((h) => h.id), options: catalog.options, parallel_options: catalog.parallel_options };
  const { scenario } = await paramsToScenario(new URLSearchParams(attributes), known, defaultScenario());
  scenario.config = configText;
  const result = await runJob(nodeEngine, scenarioToJob(scenario, { perLayer: 'none' }));
  assert.ok(result.ok, `Node refused the element's scenario: ${JSON.stringify(result)}`);
  return result.response;
}

/** The numbers the team requires to be identical in the browser and Node. */
const pick = (/** @type {import('../../web/src/types').PredictResponse} */ r) =>
  r.results.map((x) => ({
    hardware: x.hardware,
    step_ms: x.step_ms,
    step_ms_interval: x.step_ms_interval,
    total_s: x.total_s,
    total_s_interval: x.total_s_interval,
    memory_gb: x.memory_gb,
    cost_usd: x.cost_usd,
    calibration_factor: x.calibration_factor,
    roofline: x.baselines?.['roofline']?.step_ms,
  }));

/** @param {import('playwright-core').Page} page @param {string} id */
async function elementResult(page, id) {
  return page.evaluate((elementId) => /** @type {any} */ (document.getElementById(elementId))?.result, id);
}

/** @param {import('playwright-core').Page} page @param {string} id */
async function predictorNote(page, id) {
  return page.evaluate((elementId) => document.getElementById(elementId)?.shadowRoot?.querySelector('.foot .predictor')?.textContent ?? '', id);
}

/** @param {import('playwright-core').Page} page @param {string} id */
async function elementText(page, id) {
  return page.evaluate((elementId) => document.getElementById(elementId)?.shadowRoot?.textContent ?? '', id);
}

/**
 * Sets attribute `name` of element `id` and resolves with training field `field` of the result the
 * element then reports (its `prenet-result` event).
 * @param {import('playwright-core').Page} page @param {string} id @param {string} name @param {string} value
 * @param {string} field
 */
async function setAttributeAndWait(page, id, name, value, field) {
  return page.evaluate(
    ({ elementId, attribute, text, key }) =>
      new Promise((resolve) => {
        const element = /** @type {HTMLElement} */ (document.getElementById(elementId));
        element.addEventListener('prenet-result', (event) => resolve(/** @type {CustomEvent} */ (event).detail.training[key]), { once: true });
        element.setAttribute(attribute, text);
      }),
    { elementId: id, attribute: name, text: value, key: field },
  );
}

describe('the <prenet-calculator> element on a page of another site, under a strict CSP', () => {
  /** @type {{ url: string, stop: () => void }} */
  let server;
  /** @type {Awaited<ReturnType<typeof launch>>} */
  let browser;
  let DOCS_ORIGIN = '';
  /** @type {{ origin: string, stop: () => void }} */
  let docs;

  before(async () => {
    requireBuilt();
    server = await startServer();
    browser = await launch();
    const origin = new URL(server.url).origin;
    // What docs/EMBED.md asks of a host page's policy: the script's origin and 'wasm-unsafe-eval'
    // for the script, that origin in connect-src for the learned models' files.
    const csp = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src ${origin} 'wasm-unsafe-eval'; connect-src data: ${origin}; img-src data:" />`;
    docs = await startDocsSite((path) => {
      if (path === '/docs/guide.html') return fixture('embed-host.html', { CSP: csp, EMBED_SRC: `${origin}/embed.js` });
      if (path === '/docs/iframe.html') {
        const src = `${server.url}?embed=1&preset=gpt2&hardware=h100-sxm,a100-sxm4-80gb,rtx-4090&batch=8&precision=bf16`;
        return fixture('iframe-host.html', { IFRAME_SRC: src });
      }
      return null;
    });
    DOCS_ORIGIN = docs.origin;
  });

  after(async () => {
    await browser?.close();
    server?.stop();
    docs?.stop();
  });

  test('renders compact results for a preset and for an inline config', async () => {
    const { page } = browser;
    await page.goto(`${DOCS_ORIGIN}/docs/guide.html`);
    const rows = await elementRows(page, 'preset');
    assert.deepEqual(rows.map((r) => r.hardware).sort(), ['a100-sxm4-80gb', 'h100-sxm']);
    for (const row of rows) assert.match(row.total, /^\d[\d.,]* (ms|s|min|h|days)$/);
    assert.match(await elementText(page, 'preset'), /BERT-Base.*bf16/s);
    const inline = await elementRows(page, 'inline');
    assert.deepEqual(inline.map((r) => r.hardware).sort(), ['h100-sxm', 'rtx-4090']);
    assert.match(await elementText(page, 'inline'), /gpt2/);
    await page.screenshot({ path: join(ARTIFACTS, 'embed-element.png'), fullPage: true });
  });

  test('predicts with the learned models, shows their 80% interval, and loads them once for the page', async () => {
    const { page } = browser;
    for (const id of ['preset', 'inline']) {
      const response = await elementResult(page, id);
      assert.equal(response.predictor, 'learned', `${id}: the learned predictor`);
      for (const row of await elementRows(page, id)) {
        for (const [column, [value, low, high]] of /** @type {const} */ ([['step', row.stepCell], ['total', row.totalCell]])) {
          assert.ok(low != null && high != null && value != null && low > 0 && low <= value && value <= high, `${id} ${row.hardware} ${column}: ${low} ≤ ${value} ≤ ${high}`);
        }
        assert.equal(row.ranges.length, 2, `${id} ${row.hardware}: a range under the step and the total`);
        for (const range of row.ranges) assert.match(range, /^\d[\d.,]*( \w+)?–\d[\d.,]* (ms|s|min|h|days)$/);
      }
      assert.match(await predictorNote(page, id), /^learned models; small figures: 80% interval$/);
    }
    const origin = new URL(server.url).origin;
    const learnedFiles = browser.requests.filter((url) => LEARNED_FILE.test(url));
    assert.ok(learnedFiles.length > 1 && learnedFiles.every((url) => url.startsWith(`${origin}/assets/`)), `from beside embed.js: ${learnedFiles}`);
    assert.equal(new Set(learnedFiles).size, learnedFiles.length, `each file once, for both elements: ${learnedFiles}`);
  });

  test('the element\'s numbers are the Node engine\'s, preset and inline config', async () => {
    const { page } = browser;
    const presetAttributes = { preset: 'bert-base', hardware: 'h100-sxm,a100-sxm4-80gb', batch: '32', precision: 'bf16' };
    const node = await nodeResponse(presetAttributes);
    assert.equal(node.predictor, 'learned');
    assert.deepEqual(pick(await elementResult(page, 'preset')), pick(node), 'identical numbers from the element and Node');
    const config = await page.evaluate(() => document.querySelector('#inline script[type="application/json"]')?.textContent?.trim() ?? '');
    const inlineNode = await nodeResponse({ hardware: 'h100-sxm,rtx-4090', batch: '8' }, config);
    assert.deepEqual(pick(await elementResult(page, 'inline')), pick(inlineNode), 'identical numbers for the inline config');
  });

  test('measured and measured_on calibrate the element, as they do the page\'s links', async () => {
    const { page } = browser;
    await page.evaluate(() => {
      const element = document.getElementById('preset');
      element?.setAttribute('measured', '150');
      element?.setAttribute('measured_on', 'a100-sxm4-80gb');
    });
    await page.waitForFunction(() => /** @type {any} */ (document.getElementById('preset'))?.result?.results?.[0]?.calibration_factor !== undefined);
    await elementRows(page, 'preset');
    const calibrated = await elementResult(page, 'preset');
    const node = await nodeResponse({ preset: 'bert-base', hardware: 'h100-sxm,a100-sxm4-80gb', batch: '32', precision: 'bf16', measured: '150', measured_on: 'a100-sxm4-80gb' });
    assert.deepEqual(pick(calibrated), pick(node), 'identical calibrated numbers from the element and Node');
    const a100 = calibrated.results.find((/** @type {any} */ r) => r.hardware === 'a100-sxm4-80gb');
    assert.ok(Math.abs(a100.step_ms - 150) < 1e-6 * 150, `calibrated to the measured step on its accelerator: ${a100.step_ms}`);
    assert.match(await elementText(page, 'preset'), /calibrated to 150 ms measured on a100-sxm4-80gb/);
    await page.evaluate(() => {
      const element = document.getElementById('preset');
      element?.removeAttribute('measured');
      element?.removeAttribute('measured_on');
    });
    await page.waitForFunction(() => /** @type {any} */ (document.getElementById('preset'))?.result?.results?.[0]?.calibration_factor === undefined);
  });

  test('recomputes when an attribute changes, and tells the host page', async () => {
    const { page } = browser;
    const before = (await elementRows(page, 'preset')).find((r) => r.hardware === 'h100-sxm')?.step ?? 0;
    assert.equal(await setAttributeAndWait(page, 'preset', 'batch', '128', 'batch_size'), 128);
    const after = (await elementRows(page, 'preset')).find((r) => r.hardware === 'h100-sxm')?.step ?? 0;
    assert.ok(after > before, `batch 128 step ${after} > batch 32 step ${before}`);
  });

  test('attention="flash" fuses attention: a faster step, said in the element\'s summary', async () => {
    const { page } = browser;
    const before = (await elementRows(page, 'preset')).find((r) => r.hardware === 'h100-sxm')?.step ?? 0;
    assert.equal(await setAttributeAndWait(page, 'preset', 'attention', 'flash', 'attention'), 'flash');
    const after = (await elementRows(page, 'preset')).find((r) => r.hardware === 'h100-sxm')?.step ?? 0;
    assert.ok(after < before, `fused attention step ${after} < eager step ${before}`);
    assert.match(await elementText(page, 'preset'), /fused attention/);
  });

  test('optimizer_impl="foreach": torch.optim\'s default ops, a slower step, said in the element\'s summary', async () => {
    const { page } = browser;
    const before = (await elementRows(page, 'preset')).find((r) => r.hardware === 'h100-sxm')?.step ?? 0;
    assert.equal(await setAttributeAndWait(page, 'preset', 'optimizer_impl', 'foreach', 'optimizer_impl'), 'foreach');
    const after = (await elementRows(page, 'preset')).find((r) => r.hardware === 'h100-sxm')?.step ?? 0;
    assert.ok(after > before, `foreach step ${after} > fused step ${before}`);
    assert.match(await elementText(page, 'preset'), /\(foreach\)/);
  });

  test('kernels="megatron": Megatron-LM\'s fused kernels, said in the element\'s summary', async () => {
    const { page } = browser;
    assert.equal(await setAttributeAndWait(page, 'preset', 'kernels', 'megatron', 'kernels'), 'megatron');
    assert.match(await elementText(page, 'preset'), /Megatron kernels/);
    assert.equal(await setAttributeAndWait(page, 'preset', 'kernels', 'pytorch', 'kernels'), 'pytorch');
    assert.doesNotMatch(await elementText(page, 'preset'), /Megatron kernels/);
  });

  test('memory_format="nchw", an attribute from the core\'s table of options: ResNet-50 under bf16 slows down', async () => {
    const { page } = browser;
    const step = async () => (await elementRows(page, 'preset')).find((r) => r.hardware === 'h100-sxm')?.step ?? 0;
    try {
      await setAttributeAndWait(page, 'preset', 'preset', 'resnet50', 'batch_size');
      const before = await step();
      await setAttributeAndWait(page, 'preset', 'memory_format', 'nchw', 'batch_size');
      const after = await step();
      assert.ok(after > before, `NCHW step ${after} > channels_last step ${before}`);
    } finally {
      await setAttributeAndWait(page, 'preset', 'memory_format', '', 'batch_size');
      await setAttributeAndWait(page, 'preset', 'preset', 'bert-base', 'batch_size');
    }
  });

  test('a TPU beside a GPU: the TPU row is marked analytic and has no interval', async () => {
    const { page } = browser;
    const original = await page.evaluate(() => document.getElementById('preset')?.getAttribute('hardware'));
    try {
      await setAttributeAndWait(page, 'preset', 'hardware', 'tpu-v5p,h100-sxm', 'batch_size');
      const rows = await elementRows(page, 'preset');
      const marked = await page.evaluate(() =>
        [...(document.getElementById('preset')?.shadowRoot?.querySelectorAll('tbody tr') ?? [])].map((row) => [row.getAttribute('data-hardware'), row.querySelector('th .analytic') !== null]),
      );
      assert.deepEqual(Object.fromEntries(marked), { 'tpu-v5p': true, 'h100-sxm': false });
      assert.deepEqual(rows.find((r) => r.hardware === 'tpu-v5p')?.ranges, [], 'no learned interval on the TPU');
      assert.ok((rows.find((r) => r.hardware === 'h100-sxm')?.ranges.length ?? 0) > 0, 'the GPU keeps its interval');
    } finally {
      await setAttributeAndWait(page, 'preset', 'hardware', original ?? '', 'batch_size');
    }
  });

  test('a bad attribute is reported in the element, naming it', async () => {
    const { page } = browser;
    await page.evaluate(() => document.getElementById('preset')?.setAttribute('hardware', 'h100-sxm,not-a-gpu'));
    await elementRows(page, 'preset');
    assert.match(await elementText(page, 'preset'), /hardware: unknown accelerator "not-a-gpu" left out/);
    await page.evaluate(() => document.getElementById('preset')?.setAttribute('batch', '-4'));
    await page.waitForFunction(() => document.getElementById('preset')?.dataset.state === 'error');
    assert.match(await elementText(page, 'preset'), /training\.batch_size: /);
  });

  test('the iframe mode shows a compact calculator configured by the URL', async () => {
    const { page } = browser;
    await page.goto(`${DOCS_ORIGIN}/docs/iframe.html`);
    const frame = page.frameLocator('#calculator');
    await frame.locator('html[data-busy="0"][data-renders]').waitFor();
    const rows = await frame.locator('#results tbody tr[data-hardware]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-hardware')));
    assert.deepEqual([...rows].sort(), ['a100-sxm4-80gb', 'h100-sxm', 'rtx-4090']);
    assert.ok(await frame.locator('html.embed').count(), 'compact layout');
    assert.equal(await frame.locator('header.top').isVisible(), false, 'no page header in the iframe');
    assert.equal(await frame.locator('#layers-section').isVisible(), false, 'no per-layer chart in the iframe');
    assert.equal(await frame.locator('#batch_size').isVisible(), false, 'inputs start folded');
    assert.match((await frame.locator('#summary').textContent()) ?? '', /gpt2.*batch 8/s);
    assert.match((await frame.locator('#summary').textContent()) ?? '', /bf16/);
    await frame.locator('#open-full[href*="preset=gpt2"]').waitFor(); // written once the link is
    const full = (await frame.locator('#open-full').getAttribute('href')) ?? '';
    assert.match(full, /#.*hardware=h100-sxm,a100-sxm4-80gb,rtx-4090.*precision=bf16/, `the full calculator link carries the scenario: ${full}`);
    assert.doesNotMatch(full, /embed=1/);
    await page.screenshot({ path: join(ARTIFACTS, 'embed-iframe.png'), fullPage: true });
  });

  test('nothing but the two sites\' own files was requested, with no console errors', () => {
    const origin = new URL(server.url).origin;
    const foreign = browser.requests.filter((url) => !isInMemory(url) && ![origin, DOCS_ORIGIN].includes(new URL(url).origin));
    assert.deepEqual(foreign, []);
    assert.deepEqual(browser.problems, [], 'console errors (a CSP violation on the host page shows here)');
  });
});

describe('the <prenet-calculator> element without the learned models', () => {
  /** @type {{ url: string, stop: () => void }} */
  let server;
  /** @type {Awaited<ReturnType<typeof launch>>} */
  let browser;
  /** @type {{ origin: string, stop: () => void }} */
  let docs;

  before(async () => {
    requireBuilt();
    server = await startServer();
    browser = await launch();
    const origin = new URL(server.url).origin;
    /** @param {string} connect the host page's connect-src */
    const csp = (connect) => `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src ${origin} 'wasm-unsafe-eval'; connect-src ${connect}; img-src data:" />`;
    docs = await startDocsSite((path) => {
      // A policy written before the element fetched anything: its files' origin is not allowed.
      if (path === '/docs/no-connect.html') return fixture('embed-host.html', { CSP: csp('data:'), EMBED_SRC: `${origin}/embed.js` });
      if (path === '/docs/allowed.html') return fixture('embed-host.html', { CSP: csp(`data: ${origin}`), EMBED_SRC: `${origin}/embed.js` });
      if (path === '/docs/roofline.html') {
        return `<!doctype html><html lang="en"><head><meta charset="utf-8" />${csp('data:')}<link rel="icon" href="data:," /><title>roofline</title></head><body>
<prenet-calculator id="preset" predictor="roofline" preset="bert-base" hardware="h100-sxm,a100-sxm4-80gb" batch="32" precision="bf16"></prenet-calculator>
<script src="${origin}/embed.js"></script></body></html>`;
      }
      return null;
    });
  });

  after(async () => {
    await browser?.close();
    server?.stop();
    docs?.stop();
  });

  test('predictor="roofline" computes analytically and fetches nothing', async () => {
    const { page } = browser;
    const first = browser.requests.length;
    await page.goto(`${docs.origin}/docs/roofline.html`);
    const rows = await elementRows(page, 'preset', 'roofline');
    assert.equal(rows.length, 2);
    for (const row of rows) assert.deepEqual(row.ranges, [], 'no interval without the learned models');
    assert.equal((await elementResult(page, 'preset')).predictor, 'roofline');
    assert.match(await predictorNote(page, 'preset'), /^roofline, the analytic model$/);
    // A moment for any stray fetch to show up.
    await page.waitForTimeout(300);
    assert.deepEqual(browser.requests.slice(first).filter((url) => LEARNED_FILE.test(url)), [], 'no learned model file requested');
    assert.deepEqual(browser.problems, []);
  });

  test('a host policy without connect-src for its origin: the roofline, with a note, and nothing breaks', async () => {
    const { page } = browser;
    const first = browser.problems.length;
    await page.goto(`${docs.origin}/docs/no-connect.html`);
    for (const id of ['preset', 'inline']) {
      assert.equal((await elementRows(page, id, 'roofline')).length, 2);
      assert.equal((await elementResult(page, id)).predictor, 'roofline', `${id}: the response says roofline`);
      assert.match(await predictorNote(page, id), /^roofline, because the learned models did not load: /);
    }
    // The browser itself reports the refused fetch (a CSP violation); nothing else may go wrong.
    const problems = browser.problems.slice(first);
    assert.ok(problems.length >= 1, 'the refused fetch is reported by the browser');
    const refused = /^console error: (Connecting to '[^']+\/assets\/[^']+' violates the following Content Security Policy directive: "connect-src data:"|Fetch API cannot load \S+\/assets\/\S+ Refused to connect because it violates the document's Content Security Policy)/;
    assert.deepEqual(problems.filter((text) => !refused.test(text)), []);
  });

  test('the files failing to load (aborted requests): the roofline, with a note', async () => {
    const { page } = browser;
    const first = browser.problems.length;
    await page.route(LEARNED_FILE, (route) => route.abort('failed'));
    try {
      await page.goto(`${docs.origin}/docs/allowed.html`);
      for (const id of ['preset', 'inline']) {
        assert.equal((await elementRows(page, id, 'roofline')).length, 2);
        assert.match(await predictorNote(page, id), /^roofline, because the learned models did not load: /);
      }
      // Then a change recomputes, still on the roofline, without a second attempt.
      const requests = browser.requests.length;
      await page.evaluate(() => document.getElementById('preset')?.setAttribute('batch', '64'));
      await page.waitForFunction(() => /** @type {any} */ (document.getElementById('preset'))?.result?.training?.batch_size === 64);
      assert.equal((await elementResult(page, 'preset')).predictor, 'roofline');
      assert.deepEqual(browser.requests.slice(requests).filter((url) => LEARNED_FILE.test(url)), [], 'the failure is kept for the page');
    } finally {
      await page.unroute(LEARNED_FILE);
    }
    assert.deepEqual(browser.problems.slice(first).filter((text) => !/^console error: Failed to load resource: net::ERR_FAILED$/.test(text)), []);
  });
});

describe('the <prenet-calculator> element from file://, offline', () => {
  /** @type {Awaited<ReturnType<typeof launch>>} */
  let browser;
  let folder = '';

  before(async () => {
    requireBuilt();
    // A documentation folder on disk: the page and a copy of embed.js beside it.
    folder = mkdtempSync(join(tmpdir(), 'prenet-embed-'));
    copyFileSync(join(DIST, 'embed.js'), join(folder, 'embed.js'));
    writeFileSync(join(folder, 'guide.html'), fixture('embed-host.html', { CSP: '', EMBED_SRC: 'embed.js' }));
    browser = await launch({ offline: true });
  });

  after(async () => {
    await browser?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  test('renders with no network at all, on the roofline, saying why', async () => {
    const { page } = browser;
    await page.goto(pathToFileURL(join(folder, 'guide.html')).href);
    assert.deepEqual((await elementRows(page, 'preset', 'roofline')).map((r) => r.hardware).sort(), ['a100-sxm4-80gb', 'h100-sxm']);
    assert.equal((await elementRows(page, 'inline', 'roofline')).length, 2);
    assert.match(await predictorNote(page, 'preset'), /^roofline, because the learned models did not load: they cannot be fetched from file:\/\/$/);
    assert.deepEqual(browser.blocked, [], 'network requests attempted');
    const files = browser.requests.filter((url) => !isInMemory(url));
    assert.ok(files.every((url) => url.startsWith(pathToFileURL(folder).href)), `only the folder's files: ${files}`);
    assert.deepEqual(browser.problems, []);
  });
});
