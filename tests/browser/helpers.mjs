// Shared by the Chromium tests: starting web/serve.mjs, launching Debian's Chromium with the flags
// this machine needs (docs: ../shared/notes/TOOLCHAIN.md), the two ways the page is opened (served
// over http, and the one-file build from file:// with the network blocked), recording every request
// and console problem, and waiting for the page to settle.
//
// Needs: npm run build:wasm && npm run build:web, and /usr/bin/chromium (npm run setup).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before } from 'node:test';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const DIST = join(ROOT, 'dist');
export const ARTIFACTS = join(ROOT, 'test-artifacts');
export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
export const SINGLE_FILE = join(DIST, 'prenet-calculator.html');
const CHROMIUM = '/usr/bin/chromium';
// Headless as root, and no background traffic to hosts this machine cannot reach (TOOLCHAIN.md).
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** The localStorage keys of the page's stored learned results start so (web/src/result-store.ts RESULT_KEY_PREFIX). */
export const RESULT_KEY_PREFIX = 'prenet-result ';
/** The localStorage key of that store's index (web/src/result-store.ts RESULT_INDEX_KEY). */
export const RESULT_INDEX_KEY = 'prenet-results';
/** The first screen's accelerators (web/src/scenario.js startScenario). */
export const DEFAULT_HARDWARE = ['h100-sxm', 'h200', 'b200', 'mi300x', 'l40s', 'rtx-4090'];
/**
 * A small scenario of the tests' own, as a link (BERT-Base on three accelerators, FP32): for tests that need a
 * model computed in milliseconds and a V100 among the rows, rather than the first screen's 8B model.
 */
export const SMALL_LINK = '#preset=bert-base&hardware=a100-sxm4-80gb,h100-sxm,v100-sxm2-32gb&batch=32&optimizer=adam';
/** The accelerators of SMALL_LINK. */
export const SMALL_HARDWARE = ['a100-sxm4-80gb', 'h100-sxm', 'v100-sxm2-32gb'];
export const TIMEOUT = 20_000;

/** Fails early with the command that fixes a missing build or browser. */
export function requireBuilt() {
  for (const file of ['index.html', 'prenet-calculator.html', 'embed.js']) {
    assert.ok(existsSync(join(DIST, file)), `dist/${file} is missing; run: npm run build:web`);
  }
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing; run: npm run setup (installs Debian's chromium)`);
  mkdirSync(ARTIFACTS, { recursive: true });
}

/**
 * Starts web/serve.mjs on a free port and resolves with the URL it prints. Spawned asynchronously:
 * a synchronous spawn would block this process, and the page would never load.
 * @returns {Promise<{ url: string, stop: () => void }>}
 */
export function startServer() {
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

/**
 * A fresh Chromium profile, or the folder `profile` names (kept on close: a later launch with it is a
 * visit by the same browser after a restart). With `offline`, the network is off and any http(s)
 * request is aborted and recorded in `blocked`, so "works offline" is proven rather than assumed.
 * @param {{ offline?: boolean, viewport?: { width: number, height: number }, colorScheme?: 'light' | 'dark', profile?: string }} [options]
 */
export async function launch(options = {}) {
  const profile = options.profile ?? mkdtempSync(join(tmpdir(), 'prenet-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: options.viewport ?? { width: 1400, height: 900 },
    colorScheme: options.colorScheme ?? 'light',
    acceptDownloads: true,
  });
  /** Every URL any page asked for; http(s) requests aborted while offline; console errors. */
  const requests = /** @type {string[]} */ ([]);
  const blocked = /** @type {string[]} */ ([]);
  const problems = /** @type {string[]} */ ([]);
  context.on('request', (request) => requests.push(request.url()));
  if (options.offline) {
    await context.setOffline(true);
    await context.route(/^https?:/, (route) => {
      blocked.push(route.request().url());
      return route.abort('internetdisconnected');
    });
  }
  /** @param {import('playwright-core').Page} page */
  const watch = (page) => {
    page.setDefaultTimeout(TIMEOUT);
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  };
  context.on('page', watch);
  const page = context.pages()[0] ?? (await context.newPage());
  watch(page);
  return {
    context,
    page,
    requests,
    blocked,
    problems,
    async close() {
      await context.close();
      if (options.profile === undefined) rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The served site and a fresh browser for the calling test file or suite: started by a `before` hook (which then
 * awaits `ready`, the suite's own setup), closed by an `after` hook; read `server` and `browser` inside its tests
 * (before the hook has run they throw).
 * @param {(browser: Awaited<ReturnType<typeof launch>>, server: { url: string, stop: () => void }) => Promise<void>} [ready]
 */
export function servedBrowser(ready) {
  /** @type {{ url: string, stop: () => void } | undefined} */
  let server;
  /** @type {Awaited<ReturnType<typeof launch>> | undefined} */
  let browser;
  before(async () => {
    requireBuilt();
    server = await startServer();
    browser = await launch();
    await ready?.(browser, server);
  });
  after(async () => {
    await browser?.close();
    server?.stop();
  });
  const notYet = () => new Error('servedBrowser(): read before its before() hook ran');
  return {
    get server() {
      if (server === undefined) throw notYet();
      return server;
    },
    get browser() {
      if (browser === undefined) throw notYet();
      return browser;
    },
  };
}

/**
 * The two ways the calculator is opened in the acceptance tests.
 * @typedef {{ name: string, url: string, offline: boolean, ownFile: (url: string) => boolean }} Target
 */

/** @param {string} serverUrl @returns {Target} */
export function servedTarget(serverUrl) {
  const origin = new URL(serverUrl).origin;
  return { name: 'served', url: serverUrl, offline: false, ownFile: (url) => new URL(url).origin === origin };
}

/** @returns {Target} */
export function singleFileTarget() {
  const url = pathToFileURL(SINGLE_FILE).href;
  return { name: 'single', url, offline: true, ownFile: (request) => request.split('#')[0] === url || request.split('?')[0] === url };
}

/**
 * How a suite opens the page it tests: `open` resolves once the target can be loaded (the build checked,
 * a server started where one is needed), `close` frees what `open` started.
 * @typedef {{ open: () => Promise<Target>, close: () => void }} TargetOpener
 */

/** The served site: web/serve.mjs started when the suite opens, stopped when it closes. @returns {TargetOpener} */
export function servedOpener() {
  /** @type {{ url: string, stop: () => void } | undefined} */
  let server;
  return {
    async open() {
      requireBuilt();
      server = await startServer();
      return servedTarget(server.url);
    },
    close: () => server?.stop(),
  };
}

/** The one-file build from file:// with the network off. @returns {TargetOpener} */
export function singleFileOpener() {
  return {
    async open() {
      requireBuilt();
      return singleFileTarget();
    },
    close: () => undefined,
  };
}

/** Requests that reach no network: in-memory data: and blob: URLs. */
export function isInMemory(/** @type {string} */ url) {
  return /^(data|blob):/.test(url);
}

/**
 * Waits until the page shows the outcome of its latest inputs (main.ts sets data-busy).
 * @param {import('playwright-core').Page} page
 */
export async function settled(page) {
  await page.waitForFunction(() => document.documentElement.dataset.busy === '0' && Number(document.documentElement.dataset.renders ?? 0) > 0);
}

/**
 * Waits until the page shows its latest inputs' outcome from the learned predictors: the page paints
 * the roofline first and replaces it once ONNX Runtime and the models have loaded.
 * @param {import('playwright-core').Page} page
 */
export async function settledLearned(page) {
  await page.waitForFunction(
    () => document.documentElement.dataset.predictor === 'learned' && document.documentElement.dataset.busy === '0' && Number(document.documentElement.dataset.renders ?? 0) > 0,
  );
}

/** step_ms of one result row, from the cell's data-value. */
export async function stepMs(/** @type {import('playwright-core').Page} */ page, /** @type {string} */ hardware) {
  const value = await page.locator(`#results tr[data-hardware="${hardware}"] td[data-col="step_ms"]`).getAttribute('data-value');
  return Number(value);
}

/** Hardware ids of the table rows, in table order. */
export async function rowIds(/** @type {import('playwright-core').Page} */ page) {
  return page.locator('#results tbody tr[data-hardware]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-hardware') ?? ''));
}

/**
 * Runs `wait`; on failure, saves a screenshot and fails with what the page was saying.
 * @param {import('playwright-core').Page} page
 * @param {string} what
 * @param {() => Promise<unknown>} wait
 * @param {string[]} [problems]
 */
export async function expectWithin(page, what, wait, problems = []) {
  try {
    await wait();
  } catch (error) {
    await page.screenshot({ path: join(ARTIFACTS, 'failure.png'), fullPage: true }).catch(() => {});
    const status = (await page.locator('#status').textContent().catch(() => ''))?.trim() || '(empty)';
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    assert.fail(`${what}; status line: ${status}; problems: ${problems.join(' | ') || 'none'}; ${reason}`);
  }
}

/**
 * Ticks exactly these accelerators, using the search box as a user would.
 * @param {import('playwright-core').Page} page
 * @param {string[]} ids
 */
export async function chooseHardware(page, ids) {
  await page.locator('#hardware-clear').click();
  for (const id of ids) {
    await page.locator('#hardware-search').fill(id);
    await page.locator(`#hardware-list input[value="${id}"]`).check();
  }
  await page.locator('#hardware-search').fill('');
}

/** Picks preset `id` in the form (searching for it first, so it is shown), then clears the search. */
export async function choosePreset(/** @type {import('playwright-core').Page} */ page, /** @type {string} */ id) {
  await page.locator('#preset-search').fill(id);
  await page.locator(`#preset-list input[value="${id}"]`).check();
  await page.locator('#preset-search').fill('');
}
