// The built page (dist/) in headless Chromium, served by web/serve.mjs with its CSP header:
// the default example renders, inputs recompute, errors are shown beside the input, and nothing
// is requested from anywhere but the page's own origin. Screenshots go to test-artifacts/.
//
// Needs: npm run build:wasm && npm run build:web, and Debian's chromium at /usr/bin/chromium.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ARTIFACTS = join(ROOT, 'test-artifacts');
const CHROMIUM = '/usr/bin/chromium';
// Headless as root, and no background traffic to hosts this machine cannot reach (TOOLCHAIN.md).
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const DEFAULT_HARDWARE = ['a100-sxm4-80gb', 'h100-sxm', 'v100-sxm2-32gb'];
const TIMEOUT = 20_000;

/**
 * Starts web/serve.mjs on a free port and resolves with the URL it prints. Spawned asynchronously:
 * a synchronous spawn would block this process, and the page would never load.
 * @returns {Promise<{ url: string, stop: () => void }>}
 */
function startServer() {
  const child = spawn(process.execPath, [join(ROOT, 'web/serve.mjs')], {
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`web/serve.mjs printed no URL within 10 s; stderr: ${stderr}`)), 10_000);
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = /^(http:\/\/\S+)\n/.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ url: match[1], stop: () => child.kill() });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`web/serve.mjs exited with ${code} before serving; stderr: ${stderr}`));
    });
  });
}

/** @type {{ url: string, stop: () => void } | undefined} */
let server;
/** @type {import('playwright-core').BrowserContext | undefined} */
let context;
/** @type {import('playwright-core').Page} */
let page;
let profile = '';
/** Every URL the browser asked for, and every console error or uncaught exception. */
const requests = /** @type {string[]} */ ([]);
const problems = /** @type {string[]} */ ([]);

before(async () => {
  assert.ok(existsSync(join(ROOT, 'dist/index.html')), 'dist/index.html is missing; run: npm run build:web');
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing; run: npm run setup (installs Debian's chromium)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await startServer();
  profile = mkdtempSync(join(tmpdir(), 'prenet-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1400, height: 900 },
  });
  context.on('request', (request) => requests.push(request.url()));
  page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.setDefaultTimeout(TIMEOUT);
});

after(async () => {
  await context?.close();
  server?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** The status line, for failure messages. */
async function statusText() {
  return (await page.locator('#status').textContent())?.trim() || '(empty)';
}

/** step_ms of one result row, from the cell's data-value. */
async function stepMs(/** @type {string} */ hardware) {
  const value = await page.locator(`#results tr[data-hardware="${hardware}"] td[data-col="step_ms"]`).getAttribute('data-value');
  return Number(value);
}

/**
 * @param {string} what
 * @param {() => Promise<unknown>} wait
 */
async function expectWithin(what, wait) {
  try {
    await wait();
  } catch (error) {
    await page.screenshot({ path: join(ARTIFACTS, 'page-failure.png'), fullPage: true });
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    assert.fail(`${what}; status line: ${await statusText()}; problems: ${problems.join(' | ') || 'none'}; ${reason}`);
  }
}

describe('the page', () => {
  test('shows the default example with numbers for every default accelerator', async () => {
    assert.ok(server);
    await page.goto(server.url);
    await expectWithin('the results table never showed the default example', () =>
      page.locator('#results tbody tr').nth(DEFAULT_HARDWARE.length - 1).waitFor(),
    );
    const rows = page.locator('#results tbody tr');
    const shown = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-hardware')));
    assert.deepEqual(shown.sort(), [...DEFAULT_HARDWARE].sort(), 'one row per default accelerator');
    for (const hardware of DEFAULT_HARDWARE) {
      const step = await stepMs(hardware);
      assert.ok(Number.isFinite(step) && step > 0, `${hardware}: step_ms data-value ${step}`);
      const cells = await page.locator(`#results tr[data-hardware="${hardware}"] td`).allTextContents();
      assert.match(cells[0] ?? '', /^\d[\d.,]* (ms|s|min|h|days)$/, `${hardware}: step cell "${cells[0]}" should be a number with a unit`);
      assert.ok(cells.every((text) => text.trim() !== ''), `${hardware}: empty cell in ${JSON.stringify(cells)}`);
    }
    const summary = (await page.locator('#summary').textContent()) ?? '';
    assert.match(summary, /bert-base/, 'the summary names the model');
    assert.match(summary, /Parameters\s*\d/, 'the summary gives the parameter count');
    assert.match(summary, /FLOPs per step\s*\d/, 'the summary gives FLOPs per step');
    const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
    assert.match(csp ?? '', /script-src 'self' 'wasm-unsafe-eval'/, 'the built page carries its CSP meta tag');
    await page.screenshot({ path: join(ARTIFACTS, 'page-default.png'), fullPage: true });
  });

  test('changing the batch size recomputes the step time', async () => {
    const before = await stepMs('h100-sxm');
    await page.locator('#batch_size').fill('256');
    await expectWithin('step time did not change after setting batch size 256', () =>
      page.waitForFunction(
        (old) => Number(document.querySelector('#results tr[data-hardware="h100-sxm"] td[data-col="step_ms"]')?.getAttribute('data-value')) !== old,
        before,
      ),
    );
    const after = await stepMs('h100-sxm');
    assert.ok(after > before, `step_ms at batch 256 (${after}) should exceed batch 32 (${before})`);
    assert.match((await page.locator('#summary').textContent()) ?? '', /batch 256/);
  });

  test('a core error appears beside its input, naming the field', async () => {
    await page.locator('#batch_size').fill('-4');
    const box = page.locator('#batch_size-error');
    await expectWithin('no error appeared beside the batch size', () => box.waitFor({ state: 'visible' }));
    assert.match((await box.textContent()) ?? '', /^training\.batch_size: /);
    assert.equal(await page.locator('#batch_size').getAttribute('aria-invalid'), 'true');
    await page.locator('#batch_size').fill('32');
    await expectWithin('the error did not clear after fixing the batch size', () => box.waitFor({ state: 'hidden' }));
  });

  test('pasting bad JSON shows an error naming the problem, and the old results are marked stale', async () => {
    await page.locator('#config').fill('{"layers": [');
    const box = page.locator('#model-error');
    await expectWithin('no error appeared beside the config box', () => box.waitFor({ state: 'visible' }));
    assert.match((await box.textContent()) ?? '', /^config: not valid JSON/);
    assert.equal(await page.locator('#config').getAttribute('aria-invalid'), 'true', 'the config box is marked invalid');
    assert.equal(await page.locator('#preset').getAttribute('aria-invalid'), null, 'the preset is not blamed');
    assert.ok(await page.locator('#output.stale').count(), 'results are marked stale');
    await page.screenshot({ path: join(ARTIFACTS, 'page-error.png'), fullPage: true });
  });

  test('a pasted Hugging Face config is understood and computed', async () => {
    const gpt2 = { model_type: 'gpt2', n_embd: 768, n_layer: 12, n_head: 12, n_positions: 1024, n_ctx: 1024, vocab_size: 50257 };
    await page.locator('#config').fill(JSON.stringify(gpt2, null, 2));
    await expectWithin('the pasted GPT-2 config.json was not computed', () =>
      page.waitForFunction(() => /Hugging Face config/.test(document.querySelector('#summary')?.textContent ?? '') && !document.querySelector('#output.stale')),
    );
    assert.match((await page.locator('#config-kind').textContent()) ?? '', /Hugging Face config \(model_type "gpt2"\)/);
    assert.ok((await stepMs('h100-sxm')) > 0);
    await page.screenshot({ path: join(ARTIFACTS, 'page-hf-config.png'), fullPage: true });
  });

  test('unticking every accelerator asks for one', async () => {
    const ticked = page.locator('#hardware-list input:checked');
    const ids = await ticked.evaluateAll((boxes) => boxes.map((box) => /** @type {HTMLInputElement} */ (box).value));
    for (const id of ids) await page.locator(`#hardware-list input[value="${id}"]`).uncheck();
    const box = page.locator('#hardware-error');
    await expectWithin('no error after unticking every accelerator', () => box.waitFor({ state: 'visible' }));
    assert.match((await box.textContent()) ?? '', /^hardware: tick at least one accelerator/);
    for (const id of ids) await page.locator(`#hardware-list input[value="${id}"]`).check();
    await expectWithin('the error did not clear after ticking accelerators again', () => box.waitFor({ state: 'hidden' }));
  });

  test('the accelerator search filters the list', async () => {
    await page.locator('#hardware-search').fill('h100');
    const visible = await page.locator('#hardware-list label.check:visible').allTextContents();
    assert.ok(visible.length > 0, 'search "h100" shows something');
    assert.ok(visible.every((text) => /h100/i.test(text)), `search "h100" shows only H100s: ${visible}`);
    await page.locator('#hardware-search').fill('');
  });

  test('every request went to the page\'s own origin, with no console errors', () => {
    assert.ok(server);
    const origin = new URL(server.url).origin;
    // data: and blob: URLs are in-memory and reach no network.
    const foreign = requests.filter((url) => !/^(data|blob):/.test(url) && new URL(url).origin !== origin);
    assert.deepEqual(foreign, [], `requests left the page's origin ${origin}`);
    assert.ok(requests.length > 0, 'requests were recorded');
    assert.deepEqual(problems, [], 'console errors or uncaught exceptions (a CSP violation shows here)');
  });
});
