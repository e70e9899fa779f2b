// Readable results (issue 21, point 3), served and as the single file: at 1280 and 1400 px the
// results table fits without sideways scrolling, every column header in view; the details on demand
// (roofline step, epoch, parts) open by click and by keyboard; at 390 × 844 one card per accelerator
// replaces the table, with the table's numbers, its order and a sort of its own, and the page does
// not scroll sideways. Screenshots go to test-artifacts/.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ARTIFACTS, expectWithin, launch, rowIds, servedOpener, settled, settledLearned, singleFileOpener } from './helpers.mjs';

/** The six accelerators people rent, an 8B model in BF16 (the modern default), by link. */
const SIX = ['h100-sxm', 'h200', 'b200', 'mi300x', 'l40s', 'rtx-4090'];
const SCENARIO = `#preset=llama-3.1-8b&precision=bf16&hardware=${SIX.join(',')}`;
/** The widest rows the page draws: a calibration badge on every row, and a TPU with its "analytic" badge. */
const BADGED = `#preset=llama-3.1-8b&precision=bf16&hardware=${[...SIX, 'tpu-v5p'].join(',')}&measured=900&measured_on=h100-sxm`;

/**
 * How the results fit the window: the page's and the table's overflow, and each header's box
 * against the table's scrolling box (a header cut off or scrolled out of view fails).
 * @param {import('playwright-core').Page} page
 */
function measure(page) {
  return page.evaluate(() => {
    const wrap = /** @type {HTMLElement} */ (document.getElementById('results-wrap'));
    const box = wrap.getBoundingClientRect();
    const headers = [...document.querySelectorAll('#results thead th')].map((th) => {
      const r = th.getBoundingClientRect();
      return { text: th.textContent?.trim() ?? '', inView: r.width > 0 && r.left >= box.left - 1 && r.right <= box.right + 1 && r.right <= innerWidth };
    });
    return {
      page: document.documentElement.scrollWidth - innerWidth,
      table: wrap.scrollWidth - wrap.clientWidth,
      tableShown: box.width > 0,
      headers,
    };
  });
}

/**
 * @param {string} title
 * @param {() => Promise<import('./helpers.mjs').Target>} open
 * @param {() => void} [close]
 */
function tableSuite(title, open, close) {
  describe(title, () => {
    /** @type {import('./helpers.mjs').Target} */
    let target;
    /** @type {Awaited<ReturnType<typeof launch>>} */
    let browser;
    /** @type {import('playwright-core').Page} */
    let page;
    const within = (/** @type {string} */ what, /** @type {() => Promise<unknown>} */ wait) => expectWithin(page, what, wait, browser.problems);
    const shot = (/** @type {string} */ name) => page.screenshot({ path: join(ARTIFACTS, `table-${target.name}-${name}.png`), fullPage: true });

    before(async () => {
      target = await open();
      browser = await launch({ offline: target.offline, viewport: { width: 1280, height: 800 } });
      page = browser.page;
    });

    after(async () => {
      await browser?.close();
      close?.();
    });

    for (const [width, height] of /** @type {Array<[number, number]>} */ ([[1280, 800], [1400, 900]])) {
      test(`at ${width} × ${height} the table fits with every column header in view`, async () => {
        await page.setViewportSize({ width, height });
        for (const [name, hash] of [['six', SCENARIO], ['badged', BADGED]]) {
          await page.goto('about:blank'); // a new document each time: a hash change alone may not reload
          await page.goto(`${target.url}${hash}`);
          await within(`the ${name} scenario never showed learned results`, () => settledLearned(page));
          assert.equal((await rowIds(page)).length, name === 'six' ? 6 : 7, `${name}: one row per accelerator`);
          const m = await measure(page);
          assert.ok(m.tableShown, 'the table is shown, not the cards');
          assert.ok(m.page <= 0, `${name}: the page is ${m.page} px wider than the ${width} px window`);
          assert.ok(m.table <= 0, `${name}: the table scrolls sideways by ${m.table} px`);
          assert.ok(m.headers.length >= 8, `the decisive columns have headers: ${m.headers.map((h) => h.text)}`);
          for (const header of m.headers) assert.ok(header.inView, `${name}: header "${header.text}" is cut off or out of view`);
          await page.locator('#results').scrollIntoViewIfNeeded();
          await page.locator('#results-wrap').screenshot({ path: join(ARTIFACTS, `table-${target.name}-${width}-${name}.png`) });
        }
        assert.equal(await page.locator('#result-cards').isVisible(), false, 'no cards beside the table');
      });
    }

    test('details on demand open by click and by keyboard, and stay open across a re-sort', async () => {
      const first = (await rowIds(page))[0] ?? '';
      const toggle = page.locator(`#results tr[data-hardware="${first}"] .row-toggle`);
      const details = page.locator(`#results tr[data-details-for="${first}"]`);
      assert.equal(await details.isVisible(), false, 'details start closed');
      assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
      assert.equal(await toggle.getAttribute('aria-controls'), await details.getAttribute('id'));
      await toggle.click();
      assert.ok(await details.isVisible(), 'a click opens the details');
      assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
      for (const col of ['roofline_step_ms', 'epoch_s']) {
        const value = Number(await details.locator(`[data-col="${col}"]`).getAttribute('data-value'));
        assert.ok(value > 0, `${first}: ${col} is in the details (${value})`);
      }
      const m = await measure(page);
      assert.ok(m.page <= 0 && m.table <= 0, `open details do not widen the table (${m.page}, ${m.table})`);
      await page.locator('#results-wrap').screenshot({ path: join(ARTIFACTS, `table-${target.name}-details-open.png`) });
      await toggle.click();
      assert.equal(await details.isVisible(), false, 'a second click closes them');

      // Keyboard only: Tab from the last header button reaches the first row's name, Enter opens, Space closes.
      await page.locator('#results thead th:last-child button').focus();
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.closest('tr')?.getAttribute('data-hardware')), first, 'Tab reaches the first name');
      await page.keyboard.press('Enter');
      assert.ok(await details.isVisible(), 'Enter opens the details');
      await page.keyboard.press('Space');
      assert.equal(await details.isVisible(), false, 'Space closes them');
      await page.keyboard.press('Enter');

      // Sorting re-renders the rows: the open details stay open, right under their row.
      await page.locator('#results th[data-sort="mfu"] button').click();
      await within('sorting did not settle', () => settled(page));
      assert.equal(await page.locator('#results th[data-sort="mfu"]').getAttribute('aria-sort'), 'ascending');
      assert.ok(await details.isVisible(), 'still open after sorting');
      const next = await page.locator(`#results tr[data-hardware="${first}"]`).evaluate((row) => row.nextElementSibling?.getAttribute('data-details-for'));
      assert.equal(next, first, 'the details follow their row');
      assert.deepEqual(browser.problems, []);
    });

    test('cards are built only when shown: none on a wide screen, the latest results once the window narrows', async () => {
      await page.setViewportSize({ width: 1400, height: 900 });
      await page.goto('about:blank');
      await page.goto(`${target.url}${SCENARIO}`);
      await within('the six-accelerator scenario never showed learned results', () => settledLearned(page));
      assert.equal(await page.locator('#result-cards-list > li').count(), 0, 'no cards built beside the table');
      await page.setViewportSize({ width: 390, height: 844 });
      await within('the cards never appeared after narrowing the window', () =>
        page.waitForFunction((n) => document.querySelectorAll('#result-cards-list > li').length === n, SIX.length),
      );
      const learned = await page.evaluate(() => document.documentElement.dataset.predictor);
      assert.equal(learned, 'learned');
      const cards = await page.locator('#result-cards-list [data-col="step_ms"]').evaluateAll((dds) => dds.map((dd) => dd.getAttribute('data-value')));
      const cells = await page.locator('#results tr[data-hardware] [data-col="step_ms"]').evaluateAll((tds) => tds.map((td) => td.getAttribute('data-value')));
      assert.deepEqual(cards, cells, 'the cards carry the results on screen (the learned ones), in the table\'s order');
      assert.deepEqual(browser.problems, []);
    });

    test('at 390 × 844 one card per accelerator, with the table\'s numbers and order, and no sideways scroll', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto('about:blank');
      await page.goto(`${target.url}${SCENARIO}`);
      await within('the six-accelerator scenario never showed learned results on a phone', () => settledLearned(page));
      assert.equal(await page.locator('#results-wrap').isVisible(), false, 'the table gives way to the cards');
      assert.ok(await page.locator('#result-cards').isVisible(), 'the cards are shown');
      const cards = await page.locator('#result-cards-list > li').evaluateAll((items) => items.map((li) => li.getAttribute('data-hardware')));
      assert.deepEqual(cards, await rowIds(page), 'one card per accelerator, in the table\'s order');
      assert.deepEqual([...cards].sort(), [...SIX].sort());

      // The same numbers: every fact of a card equals the table's cell (or detail) of that column.
      const mismatches = await page.evaluate(() => {
        const problems = [];
        for (const card of document.querySelectorAll('#result-cards-list > li')) {
          const id = card.getAttribute('data-hardware');
          const facts = card.querySelectorAll('[data-col]');
          if (facts.length < 8) problems.push(`${id}: only ${facts.length} facts`);
          for (const fact of facts) {
            const col = fact.getAttribute('data-col');
            const cell = document.querySelector(`#results tr[data-hardware="${id}"] [data-col="${col}"]`) ?? document.querySelector(`#results tr[data-details-for="${id}"] [data-col="${col}"]`);
            if (cell === null) problems.push(`${id} ${col}: not in the table`);
            else if (cell.getAttribute('data-value') !== fact.getAttribute('data-value') || cell.textContent !== fact.textContent) {
              problems.push(`${id} ${col}: card "${fact.textContent}" (${fact.getAttribute('data-value')}), table "${cell.textContent}" (${cell.getAttribute('data-value')})`);
            }
          }
        }
        return problems;
      });
      assert.deepEqual(mismatches, []);

      const overflow = await page.evaluate(() => ({
        page: document.documentElement.scrollWidth - innerWidth,
        cards: Math.max(...[...document.querySelectorAll('#result-cards-list > li')].map((li) => li.getBoundingClientRect().right)) - innerWidth,
      }));
      assert.ok(overflow.page <= 0, `the page is ${overflow.page} px wider than the phone`);
      assert.ok(overflow.cards <= 0, `a card sticks out by ${overflow.cards} px`);
      await page.locator('#result-cards').scrollIntoViewIfNeeded();
      await shot('phone-cards');

      // The cards' sort select sorts both views, and the table's header says so.
      await page.locator('#result-cards-sort').selectOption('-step_ms');
      await within('sorting the cards did not settle', () => settled(page));
      const steps = await page.locator('#result-cards-list [data-col="step_ms"]').evaluateAll((dds) => dds.map((dd) => Number(dd.getAttribute('data-value'))));
      assert.deepEqual(steps, [...steps].sort((a, b) => b - a), 'cards by step, slowest first');
      assert.equal(await page.locator('#results th[data-sort="step_ms"]').getAttribute('aria-sort'), 'descending');
      assert.deepEqual(await page.locator('#result-cards-list > li').evaluateAll((items) => items.map((li) => li.getAttribute('data-hardware'))), await rowIds(page));

      // A card's "More" (the details on demand) opens from the keyboard.
      const more = page.locator('#result-cards-list > li').first().locator('details.card-more');
      await more.locator('summary').focus();
      await page.keyboard.press('Enter');
      assert.equal(await more.evaluate((d) => /** @type {HTMLDetailsElement} */ (d).open), true, 'Enter opens a card\'s details');
      assert.ok(Number(await more.locator('[data-col="roofline_step_ms"]').getAttribute('data-value')) > 0, 'with the roofline step');
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), 'open details do not widen the page');
      await more.scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ARTIFACTS, `table-${target.name}-phone-card-more.png`) });
      assert.deepEqual(browser.problems, []);
    });
  });
}

const served = servedOpener();
tableSuite('readable results, the served site', served.open, served.close);

const single = singleFileOpener();
tableSuite('readable results, the single file from file:// offline', single.open, single.close);
