// The page's store of learned results (web/src/result-store.ts, used by engine-client.ts): a learned
// result is kept per build of the engine; a repeat visit to the same scenario shows it as the first
// result, before the core and ONNX Runtime have loaded; it is exactly what the engine computes again;
// at most STORED_RESULTS scenarios are kept; another build's results are deleted.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectWithin, RESULT_CACHE_PREFIX as PREFIX, servedBrowser, settledLearned, SMALL_LINK } from './helpers.mjs';

const STORED_RESULTS = 16;

/** @param {import('playwright-core').Page} page @returns {Promise<Record<string, number>>} entries per result cache */
const resultCaches = (page) =>
  page.evaluate(async (prefix) => {
    /** @type {Record<string, number>} */
    const out = {};
    for (const name of await caches.keys()) if (name.startsWith(prefix)) out[name] = (await (await caches.open(name)).keys()).length;
    return out;
  }, PREFIX);

/** Polls until the result caches satisfy `ok` (puts happen after the result is drawn). */
async function waitForCaches(/** @type {import('playwright-core').Page} */ page, /** @type {(caches: Record<string, number>) => boolean} */ ok, /** @type {string} */ what) {
  const deadline = Date.now() + 10_000;
  let seen = await resultCaches(page);
  while (!ok(seen) && Date.now() < deadline) {
    await page.waitForTimeout(100);
    seen = await resultCaches(page);
  }
  assert.ok(ok(seen), `${what}: ${JSON.stringify(seen)}`);
  return seen;
}

/** The results table as shown: every row's cells, intervals included. */
const tableText = (/** @type {import('playwright-core').Page} */ page) => page.locator('#results tbody').innerText();

/** Waits for a recompute after `change` and for the learned numbers. */
async function recompute(/** @type {import('playwright-core').Page} */ page, /** @type {() => Promise<void>} */ change) {
  const renders = Number(await page.evaluate(() => document.documentElement.dataset.renders));
  await change();
  await page.waitForFunction((before) => Number(document.documentElement.dataset.renders) > before && document.documentElement.dataset.busy === '0', renders);
  await settledLearned(page);
}

describe('the store of learned results', () => {
  const served = servedBrowser();
  let firstTable = '';

  test('a learned result is kept, in one cache named by the engine script', async () => {
    const { page, problems } = served.browser;
    await page.goto(`${served.server.url}${SMALL_LINK}`);
    await expectWithin(page, 'the learned result never showed', () => settledLearned(page), problems);
    const seen = await waitForCaches(page, (found) => Object.values(found).some((count) => count === 1), 'one stored result');
    const [name] = Object.keys(seen);
    assert.match(name ?? '', /^prenet-results http:\/\/127\.0\.0\.1:\d+\/assets\/engine-worker-[\w-]{8}\.js$/);
    firstTable = await tableText(page);
  });

  test('a repeat visit shows the stored learned result first, the same numbers', async () => {
    const { page, problems } = served.browser;
    await page.reload();
    await expectWithin(page, 'the repeat visit showed nothing learned', () => settledLearned(page), problems);
    // The first thing drawn was learned: one render, no roofline "for now" before it.
    assert.equal(await page.evaluate(() => document.documentElement.dataset.renders), '1');
    assert.equal(await tableText(page), firstTable);
  });

  test('the stored result is what the engine computes again for the same scenario', async () => {
    const { page } = served.browser;
    // Another batch size is not stored: the engine computes it (with the learned models, once loaded),
    // and from then on the engine answers; back at the stored scenario, it computes that one again.
    await recompute(page, () => page.locator('#batch_size').fill('48'));
    assert.notEqual(await tableText(page), firstTable, 'another scenario, other numbers');
    await recompute(page, () => page.locator('#batch_size').fill('32'));
    assert.equal(await tableText(page), firstTable, 'computed again: the same table as the stored one');
  });

  test(`at most ${STORED_RESULTS} scenarios are kept, and another build's results are deleted`, async () => {
    const { page } = served.browser;
    await page.evaluate((prefix) => caches.open(`${prefix}http://127.0.0.1:1/assets/engine-worker-OLDBUILD.js`).then((cache) => cache.put('/prenet-results/0', new Response('{}'))), PREFIX);
    // A page session sweeps other builds' results once, at its first store: a fresh one.
    await page.reload();
    await settledLearned(page);
    for (let batch = 1; batch <= STORED_RESULTS + 2; batch += 1) await recompute(page, () => page.locator('#batch_size').fill(String(batch)));
    const seen = await waitForCaches(page, (found) => Object.keys(found).length === 1 && Object.values(found)[0] === STORED_RESULTS, `${STORED_RESULTS} results in this build's cache only`);
    assert.ok(!Object.keys(seen).some((name) => name.includes('OLDBUILD')));
    assert.deepEqual(served.browser.problems, []);
  });
});
