// Embedding: the <prenet-calculator> element (dist/embed.js) on a plain documentation page, once
// served from another origin under a strict host CSP and once from file:// offline; and the iframe
// mode (`?embed=1`) framed by another site.

import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ARTIFACTS, DIST, FIXTURES, isInMemory, launch, requireBuilt, startServer } from './helpers.mjs';

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
 * Waits for an element to finish and returns its shadow table's rows.
 * @param {import('playwright-core').Page} page
 * @param {string} id
 */
async function elementRows(page, id) {
  await page.waitForFunction((elementId) => document.getElementById(elementId)?.dataset.state === 'ready', id);
  return page.evaluate((elementId) => {
    const root = document.getElementById(elementId)?.shadowRoot;
    return [...(root?.querySelectorAll('tbody tr') ?? [])].map((row) => ({
      hardware: row.getAttribute('data-hardware'),
      total: row.querySelector('td[data-col="total_s"]')?.textContent ?? '',
      step: Number(row.querySelector('td[data-col="step_ms"]')?.getAttribute('data-value')),
    }));
  }, id);
}

/** @param {import('playwright-core').Page} page @param {string} id */
async function elementText(page, id) {
  return page.evaluate((elementId) => document.getElementById(elementId)?.shadowRoot?.textContent ?? '', id);
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
    // What docs/EMBED.md asks of a host page's policy: the script's origin and 'wasm-unsafe-eval'.
    const csp = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src ${origin} 'wasm-unsafe-eval'; connect-src data:; img-src data:" />`;
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

  test('recomputes when an attribute changes, and tells the host page', async () => {
    const { page } = browser;
    const before = (await elementRows(page, 'preset')).find((r) => r.hardware === 'h100-sxm')?.step ?? 0;
    const detail = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const element = /** @type {HTMLElement} */ (document.getElementById('preset'));
          element.addEventListener('prenet-result', (event) => resolve(/** @type {CustomEvent} */ (event).detail.training.batch_size), { once: true });
          element.setAttribute('batch', '128');
        }),
    );
    assert.equal(detail, 128);
    const after = (await elementRows(page, 'preset')).find((r) => r.hardware === 'h100-sxm')?.step ?? 0;
    assert.ok(after > before, `batch 128 step ${after} > batch 32 step ${before}`);
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
    const rows = await frame.locator('#results tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-hardware')));
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

  test('renders with no network at all', async () => {
    const { page } = browser;
    await page.goto(pathToFileURL(join(folder, 'guide.html')).href);
    assert.deepEqual((await elementRows(page, 'preset')).map((r) => r.hardware).sort(), ['a100-sxm4-80gb', 'h100-sxm']);
    assert.equal((await elementRows(page, 'inline')).length, 2);
    assert.deepEqual(browser.blocked, [], 'network requests attempted');
    const files = browser.requests.filter((url) => !isInMemory(url));
    assert.ok(files.every((url) => url.startsWith(pathToFileURL(folder).href)), `only the folder's files: ${files}`);
    assert.deepEqual(browser.problems, []);
  });
});
