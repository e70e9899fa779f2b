// The served site's service worker (web/src/service-worker.js → dist/sw.js, registered by offline.ts):
// a first visit precaches this build, a repeat visit is served from that cache, the site then works
// with the network off and the server gone, and a new build's worker deletes the old build's cache.
// The one-file build (file://) and the iframe mode register none.

import assert from 'node:assert/strict';
import { createReadStream, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CSP_HEADER } from '../../web/csp.mjs';
import { ARTIFACTS, DIST, expectWithin, launch, requireBuilt, settledLearned, singleFileTarget, startServer, stepMs, TIMEOUT } from './helpers.mjs';

/** The build's version and files, as written into dist/sw.js by vite.config.ts. */
function swBuild(text = readFileSync(join(DIST, 'sw.js'), 'utf8')) {
  const match = /const BUILD = \/\*\* @type [^*]*\*\/ \(\/\*\* @type \{unknown\} \*\/ \((\{.*?\})\)\);/.exec(text);
  assert.ok(match?.[1], 'dist/sw.js carries its BUILD object');
  return /** @type {{ version: string, page: string, files: string[] }} */ (JSON.parse(match[1]));
}

/** @param {import('playwright-core').Page} page */
const offlineCacheReady = (page) => page.waitForFunction(() => document.documentElement.dataset.offlineCache === 'ready');

/**
 * Each cache's URLs. Only the service worker's: the page keeps its learned results in localStorage
 * (web/src/result-store.ts, tested in result-store.test.mjs), so any other cache here is a leak.
 * @param {import('playwright-core').Page} page @returns {Promise<Record<string, string[]>>}
 */
const cacheContents = (page) =>
  page.evaluate(async () => {
    /** @type {Record<string, string[]>} */
    const out = {};
    for (const name of await caches.keys()) out[name] = (await (await caches.open(name)).keys()).map((request) => new URL(request.url).pathname);
    return out;
  });

/** @param {import('playwright-core').Page} page */
async function expectLearnedRows(page) {
  for (const hardware of await page.locator('#results tbody tr[data-hardware]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-hardware') ?? ''))) {
    assert.ok((await stepMs(page, hardware)) > 0, `${hardware} has a step time`);
  }
  assert.equal(await page.evaluate(() => document.documentElement.dataset.predictor), 'learned');
  assert.ok((await page.locator('#results .interval').count()) > 0, 'the learned 80% intervals are shown');
}

describe('the served site: service worker, repeat visit, offline', () => {
  /** @type {{ url: string, stop: () => void } | undefined} */
  let server;
  /** @type {Awaited<ReturnType<typeof launch>>} */
  let browser;
  /** @type {string[]} */
  const responses = [];

  before(async () => {
    requireBuilt();
    server = await startServer();
    browser = await launch();
    browser.context.on('response', (response) => responses.push(`${new URL(response.url()).pathname} ${response.fromServiceWorker() ? 'sw' : 'network'}`));
  });
  after(async () => {
    await browser?.close();
    server?.stop();
  });

  test('a first visit shows learned numbers, then precaches every file of this build', async () => {
    const { page } = browser;
    await page.goto(server?.url ?? '');
    await expectWithin(page, 'the learned result never showed', () => settledLearned(page), browser.problems);
    await expectWithin(page, 'the service worker never became ready', () => offlineCacheReady(page), browser.problems);
    const build = swBuild();
    const contents = await cacheContents(page);
    assert.deepEqual(Object.keys(contents), [`prenet-calculator-${build.version}`], 'one cache, named by this build');
    const cached = new Set(Object.values(contents)[0]);
    for (const file of build.files) assert.ok(cached.has(`/${file}`), `${file} is precached`);
    assert.ok(build.files.some((file) => /ort-wasm-simd-threaded-[\w-]{8}\.wasm$/.test(file)), "ONNX Runtime's wasm is one of them");
    assert.ok(build.files.some((file) => /\.onnx$/.test(file)), 'and the class models');
    assert.deepEqual(browser.problems, []);
  });

  test('a repeat visit is served from the cache and shows the learned result', async () => {
    const { page } = browser;
    responses.length = 0;
    await page.reload();
    await expectWithin(page, 'the learned result never showed on the repeat visit', () => settledLearned(page), browser.problems);
    await expectLearnedRows(page);
    const assets = responses.filter((line) => line.startsWith('/assets/'));
    assert.ok(assets.length >= 5, `the page, engine, wasm and models were asked for: ${assets.join(', ')}`);
    assert.deepEqual(assets.filter((line) => !line.endsWith(' sw')), [], 'every hashed file came from the service worker');
    assert.ok(await page.evaluate(() => navigator.serviceWorker.controller !== null), 'the page is controlled');
  });

  test('with the network off and the server stopped, the page loads and computes learned results', async () => {
    const { page, context } = browser;
    server?.stop();
    server = undefined;
    await context.setOffline(true);
    await context.route(/^https?:/, (route) => route.abort('internetdisconnected'));
    await page.reload();
    await expectWithin(page, 'the page did not come up offline', () => settledLearned(page), browser.problems);
    await expectLearnedRows(page);
    // A change computes again, offline.
    const renders = Number(await page.evaluate(() => document.documentElement.dataset.renders));
    await page.locator('#batch_size').fill('24');
    await page.waitForFunction((before) => Number(document.documentElement.dataset.renders) > before && document.documentElement.dataset.busy === '0', renders);
    // The reload drew the stored result before ONNX Runtime loaded: a change made that early is drawn on the
    // roofline first ("for now") and computed again once the learned models are there.
    await expectWithin(page, 'the change never got learned numbers offline', () => settledLearned(page), browser.problems);
    await expectLearnedRows(page);
    await page.screenshot({ path: join(ARTIFACTS, 'served-offline-after-one-visit.png'), fullPage: true });
  });
});

/** @type {Record<string, string>} */
const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.onnx': 'application/octet-stream' };

/**
 * A static server over dist/ whose sw.js can be switched to another build version: what a deploy
 * of a new build looks like to a visitor's service worker, without building twice.
 */
async function versionedServer() {
  let version = '';
  const original = readFileSync(join(DIST, 'sw.js'), 'utf8');
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const file = join(DIST, normalize(path.endsWith('/') ? `${path}index.html` : path));
    if (!file.startsWith(DIST)) return void res.writeHead(400).end();
    if (path === '/sw.js') {
      const build = swBuild(original);
      const text = version === '' ? original : original.replace(JSON.stringify(build), JSON.stringify({ ...build, version }));
      return void res.writeHead(200, { 'Content-Type': MIME['.js'], 'Cache-Control': 'no-cache', 'Content-Security-Policy': CSP_HEADER }).end(text);
    }
    stat(file).then(
      (info) => {
        if (!info.isFile()) return void res.writeHead(404).end();
        res.writeHead(200, { 'Content-Type': MIME[extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-cache', 'Content-Security-Policy': CSP_HEADER });
        createReadStream(file).pipe(res);
      },
      () => void res.writeHead(404).end(),
    );
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { url: `http://127.0.0.1:${port}/`, setVersion: (/** @type {string} */ next) => (version = next), stop: () => server.close() };
}

describe('a new build version replaces the old cache', () => {
  /** @type {Awaited<ReturnType<typeof versionedServer>> | undefined} */
  let server;
  /** @type {Awaited<ReturnType<typeof launch>>} */
  let browser;
  before(async () => {
    requireBuilt();
    server = await versionedServer();
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    server?.stop();
  });

  test('on activation the new worker deletes the old build cache (and only this site\'s caches)', async () => {
    const { page } = browser;
    await page.goto(server?.url ?? '');
    await expectWithin(page, 'the learned result never showed', () => settledLearned(page), browser.problems);
    await expectWithin(page, 'the service worker never became ready', () => offlineCacheReady(page), browser.problems);
    const old = `prenet-calculator-${swBuild().version}`;
    assert.deepEqual(Object.keys(await cacheContents(page)), [old]);
    // Another cache of this origin that is not ours must survive the cleanup.
    await page.evaluate(() => caches.open('someone-else').then((cache) => cache.put('/robots.txt', new Response('kept'))));
    server?.setVersion('next-build-1');
    await page.evaluate(() => navigator.serviceWorker.getRegistration().then((registration) => registration?.update()));
    // Polled from here: the worker installs (precaching the build again), then activates and cleans up.
    const deadline = Date.now() + TIMEOUT;
    let names = /** @type {string[]} */ ([]);
    while (Date.now() < deadline) {
      names = await page.evaluate(() => caches.keys());
      if (names.includes('prenet-calculator-next-build-1') && !names.includes(old)) break;
      await page.waitForTimeout(200);
    }
    assert.deepEqual(names.sort(), ['prenet-calculator-next-build-1', 'someone-else'], 'the old build\'s cache is gone, the other cache kept');
    const fresh = (await cacheContents(page))['prenet-calculator-next-build-1'] ?? [];
    assert.equal(fresh.length, swBuild().files.length, 'the new cache holds the whole build');
    await page.reload();
    await expectWithin(page, 'the page did not compute under the new worker', () => settledLearned(page), browser.problems);
    await expectLearnedRows(page);
  });
});

describe('no service worker where there should be none', () => {
  test('the one-file build from file:// registers none and computes learned results offline', async () => {
    requireBuilt();
    const browser = await launch({ offline: true });
    try {
      const { page } = browser;
      await page.goto(singleFileTarget().url);
      await expectWithin(page, 'the single file did not compute', () => settledLearned(page), browser.problems);
      await expectLearnedRows(page);
      await page.waitForFunction(() => document.documentElement.dataset.offlineCache !== undefined);
      assert.equal(await page.evaluate(() => document.documentElement.dataset.offlineCache), 'off');
      const registrations = await page.evaluate(async () => {
        if (!('serviceWorker' in navigator)) return 0;
        return navigator.serviceWorker.getRegistrations().then((list) => list.length, () => 0);
      });
      assert.equal(registrations, 0);
      assert.deepEqual(browser.blocked, [], 'nothing was asked of the network');
      await page.screenshot({ path: join(ARTIFACTS, 'single-offline-no-service-worker.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });

  test('the iframe mode (?embed=1) of the served site registers none', async () => {
    requireBuilt();
    const server = await startServer();
    const browser = await launch();
    try {
      const { page } = browser;
      await page.goto(`${server.url}?embed=1`);
      await expectWithin(page, 'the iframe mode did not compute', () => settledLearned(page), browser.problems);
      await page.waitForFunction(() => document.documentElement.dataset.offlineCache !== undefined);
      assert.equal(await page.evaluate(() => document.documentElement.dataset.offlineCache), 'off');
      assert.equal(await page.evaluate(() => navigator.serviceWorker.getRegistrations().then((list) => list.length)), 0);
    } finally {
      await browser.close();
      server.stop();
    }
  });
});
