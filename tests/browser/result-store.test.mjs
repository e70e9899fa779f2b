// The page's store of learned results (web/src/result-store.ts, used by engine-client.ts): a learned
// result is kept in localStorage per build of the engine; a repeat visit to the same scenario shows it
// as the first result, before the core and ONNX Runtime have loaded; it is exactly what the engine
// computes again; at most STORED_RESULTS scenarios and STORED_CHARS characters are kept; another
// build's results, and the Cache Storage results of builds before this store, are deleted.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectWithin, RESULT_INDEX_KEY as INDEX, RESULT_KEY_PREFIX as PREFIX, servedBrowser, settledLearned, SMALL_LINK } from './helpers.mjs';

const STORED_RESULTS = 16;
const STORED_CHARS = 2_000_000;

/**
 * The store as the page sees it: every stored result's key, and the index's keys (oldest first).
 * @param {import('playwright-core').Page} page
 * @returns {Promise<{ keys: string[], index: { engine: string, entries: [string, number][] } | null }>}
 */
const storeState = (page) =>
  page.evaluate(
    ({ prefix, index }) => ({
      keys: Object.keys(localStorage).filter((key) => key.startsWith(prefix)),
      index: JSON.parse(localStorage.getItem(index) ?? 'null'),
    }),
    { prefix: PREFIX, index: INDEX },
  );

/** Polls until the store satisfies `ok` (puts happen after the result is drawn). */
async function waitForStore(/** @type {import('playwright-core').Page} */ page, /** @type {(state: Awaited<ReturnType<typeof storeState>>) => boolean} */ ok, /** @type {string} */ what) {
  const deadline = Date.now() + 10_000;
  let seen = await storeState(page);
  while (!ok(seen) && Date.now() < deadline) {
    await page.waitForTimeout(100);
    seen = await storeState(page);
  }
  assert.ok(ok(seen), `${what}: ${JSON.stringify(seen).slice(0, 2000)}`);
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

  test('a learned result is kept in localStorage, under a key naming the engine script', async () => {
    const { page, problems } = served.browser;
    await page.goto(`${served.server.url}${SMALL_LINK}`);
    await expectWithin(page, 'the learned result never showed', () => settledLearned(page), problems);
    const seen = await waitForStore(page, (state) => state.keys.length === 1, 'one stored result');
    const [key] = seen.keys;
    assert.match(key ?? '', /^prenet-result http:\/\/127\.0\.0\.1:\d+\/assets\/engine-worker-[\w-]{8}\.js [0-9a-f]{16}$/);
    assert.deepEqual(seen.index?.entries.map(([listed]) => listed), [key], 'the index lists it');
    assert.deepEqual((await page.evaluate(() => caches.keys())).filter((name) => name.startsWith('prenet-results')), [], 'nothing in Cache Storage');
    firstTable = await tableText(page);
  });

  test('a repeat visit shows the stored learned result first, the same numbers', async () => {
    const { page, problems } = served.browser;
    await page.reload();
    await expectWithin(page, 'the repeat visit showed nothing learned', () => settledLearned(page), problems);
    // The first thing drawn was learned: one render, no roofline "for now" before it.
    assert.equal(await page.evaluate(() => document.documentElement.dataset.renders), '1');
    assert.equal(await tableText(page), firstTable);
    assert.match(await page.locator('#version').innerText(), /kept in this browser by an earlier visit/);
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

  test('a stored result whose job text differs (a hash collision) is not shown', async () => {
    const { page, problems } = served.browser;
    // The key names the job by a 64-bit hash; the item keeps the job's whole text and a lookup
    // compares it, so an item under the right key for another job must be ignored.
    await page.evaluate(
      (prefix) => {
        for (const key of Object.keys(localStorage)) {
          if (!key.startsWith(prefix)) continue;
          const item = JSON.parse(localStorage.getItem(key) ?? '{}');
          localStorage.setItem(key, JSON.stringify({ ...item, job: `${item.job} ` }));
        }
      },
      PREFIX,
    );
    // A new document at the first scenario (the link may still name the last batch size typed).
    await page.goto('about:blank');
    await page.goto(`${served.server.url}${SMALL_LINK}`);
    await expectWithin(page, 'the learned result never showed', () => settledLearned(page), problems);
    assert.doesNotMatch(await page.locator('#version').innerText(), /kept in this browser/, 'computed by the engine, not read from the store');
    assert.equal(await tableText(page), firstTable, 'the engine computed the same numbers');
  });

  test(`at most ${STORED_RESULTS} scenarios and ${STORED_CHARS} characters are kept; other builds' results are deleted`, async () => {
    const { page } = served.browser;
    await page.evaluate(
      async ({ prefix, index, chars }) => {
        // Another build's item, and one of this build listed as nearly the whole budget.
        localStorage.setItem(`${prefix}http://127.0.0.1:1/assets/engine-worker-OLDBUILD.js 0000000000000000`, '{}');
        const state = JSON.parse(localStorage.getItem(index) ?? 'null');
        const big = `${prefix}${state.engine} ffffffffffffffff`;
        localStorage.setItem(big, '{}');
        localStorage.setItem(index, JSON.stringify({ engine: state.engine, entries: [[big, chars - 100], ...state.entries] }));
        // What builds before this store kept in Cache Storage.
        await (await caches.open('prenet-results http://127.0.0.1:1/assets/engine-worker-OLDBUILD.js')).put('/prenet-results/0', new Response('{}'));
      },
      { prefix: PREFIX, index: INDEX, chars: STORED_CHARS },
    );
    // A page session sweeps other builds' results once, at its first store: a fresh one.
    await page.reload();
    await settledLearned(page);
    await recompute(page, () => page.locator('#batch_size').fill('1'));
    const afterOne = await waitForStore(page, (state) => !state.keys.some((key) => key.endsWith(' ffffffffffffffff')), 'the oldest entry evicted to stay within the characters');
    assert.ok(!afterOne.keys.some((key) => key.includes('OLDBUILD')), 'another build\'s result deleted');
    for (let batch = 2; batch <= STORED_RESULTS + 2; batch += 1) await recompute(page, () => page.locator('#batch_size').fill(String(batch)));
    const seen = await waitForStore(page, (state) => state.keys.length === STORED_RESULTS, `${STORED_RESULTS} results kept`);
    assert.deepEqual([...seen.keys].sort(), (seen.index?.entries.map(([key]) => key) ?? []).sort(), 'the index lists exactly what is stored');
    const total = seen.index?.entries.reduce((sum, [, size]) => sum + size, 0) ?? Infinity;
    assert.ok(total <= STORED_CHARS, `within ${STORED_CHARS} characters: ${total}`);
    assert.deepEqual(
      (await page.evaluate(() => caches.keys())).filter((name) => name.startsWith('prenet-results ')),
      [],
      'the results earlier builds kept in Cache Storage are deleted',
    );
    assert.deepEqual(served.browser.problems, []);
  });
});
