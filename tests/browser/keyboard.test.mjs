// Keyboard-only use of every control (issue 21, point 7), on the served site and on the one file from
// file:// offline: with every <details> open and the learned result shown, Tab from the top reaches
// every interactive element (inputs, selects, buttons, summaries, links, the accelerator checkboxes, the
// table's sort buttons, the per-layer chart's accelerator select, the scrolling table regions, a plan's
// "Use" buttons) exactly
// once before focus leaves the page, each with a visible focus indicator (its outline or box-shadow
// differs from its unfocused state), and Shift+Tab walks the same way back: no keyboard trap. Sort
// buttons, the accelerator checkboxes, a summary and the chart's select are then operated by keys.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ARTIFACTS, expectWithin, launch, rowIds, servedBrowser, servedOpener, settled, settledLearned, singleFileOpener } from './helpers.mjs';

/**
 * Installs, in the page, the bookkeeping of the walk: every element the test expects to reach, and
 * `step()`, which records the focused element with its focused style and the style of the element
 * focused before it, now that it has lost focus. Elements are numbered in a WeakMap, so the page's
 * DOM is not changed.
 * @param {import('playwright-core').Page} page
 * @returns {Promise<string[]>} the expected elements' descriptions, in document order
 */
async function installWalk(page) {
  return page.evaluate(() => {
    const ids = new WeakMap();
    /** @type {Element[]} */
    const all = [];
    const indexOf = (/** @type {Element} */ el) => {
      if (!ids.has(el)) {
        ids.set(el, all.length);
        all.push(el);
      }
      return ids.get(el);
    };
    const describe = (/** @type {Element} */ el) => {
      const name = el.getAttribute('name');
      const text = (el.textContent ?? '').trim().replace(/\s+/g, ' ').slice(0, 40);
      const value = el instanceof HTMLInputElement && (el.type === 'checkbox' || el.type === 'radio') ? `[value=${el.value}]` : '';
      return `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${name ? `[name=${name}]` : ''}${value}${text && !el.id ? ` "${text}"` : ''}`;
    };
    const style = (/** @type {Element} */ el) => {
      const s = getComputedStyle(el);
      const outline = s.outlineStyle === 'none' || parseFloat(s.outlineWidth) === 0 ? 'none' : `${s.outlineStyle} ${s.outlineWidth} ${s.outlineColor}`;
      return { outline, boxShadow: s.boxShadow };
    };
    const focusable = 'a[href], button, input:not([type="hidden"]), select, textarea, summary, [tabindex]';
    const expected = [...document.querySelectorAll(focusable)].filter((el) => {
      if (!(el instanceof HTMLElement) || el.tabIndex < 0 || el.closest('[inert]')) return false;
      if ('disabled' in el && el.disabled) return false;
      if (!el.checkVisibility({ visibilityProperty: true })) return false;
      // A radio group is one tab stop: its checked radio (or its first, when none is checked).
      if (el instanceof HTMLInputElement && el.type === 'radio' && el.name) {
        const group = [...document.querySelectorAll(`input[type="radio"][name="${CSS.escape(el.name)}"]`)].filter((r) => r instanceof HTMLInputElement && !r.disabled);
        const stop = group.find((r) => r instanceof HTMLInputElement && r.checked) ?? group[0];
        return stop === el;
      }
      return true;
    });
    /** @type {{ index: number | null, focused?: { outline: string, boxShadow: string } }} */
    let previous = { index: null };
    const walk = {
      expected: expected.map(indexOf),
      step() {
        let active = document.activeElement;
        while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
        const index = active && active !== document.body ? indexOf(active) : null;
        const left = previous.index === null || !previous.focused ? null : { index: previous.index, focused: previous.focused, unfocused: style(/** @type {Element} */ (all[previous.index])) };
        previous = { index, focused: index === null ? undefined : style(/** @type {Element} */ (all[index])) };
        return { index, left };
      },
      describe: (/** @type {number} */ index) => describe(/** @type {Element} */ (all[index])),
    };
    /** @type {any} */ (globalThis).__keyboardWalk = walk;
    return walk.expected.map(walk.describe);
  });
}

/**
 * Presses `key` until focus leaves the page (or comes back to where it started), recording each stop.
 * @param {import('playwright-core').Page} page
 * @param {'Tab' | 'Shift+Tab'} key
 * @param {number} limit more presses than this means a trap
 * @returns {Promise<{ order: number[], unindicated: string[] }>}
 */
async function walk(page, key, limit) {
  /** @type {number[]} */
  const order = [];
  /** @type {string[]} */
  const unindicated = [];
  await page.evaluate(() => /** @type {any} */ (globalThis).__keyboardWalk.step());
  for (let press = 0; press < limit; press += 1) {
    await page.keyboard.press(key);
    const { index, left } = await page.evaluate(() => /** @type {any} */ (globalThis).__keyboardWalk.step());
    if (left && left.focused.outline === left.unfocused.outline && left.focused.boxShadow === left.unfocused.boxShadow) {
      unindicated.push(`${await page.evaluate((i) => /** @type {any} */ (globalThis).__keyboardWalk.describe(i), left.index)}: focused ${JSON.stringify(left.focused)}`);
    }
    if (index === null || index === order[0]) return { order, unindicated }; // left the page, or went round
    order.push(index);
  }
  assert.fail(`${key} pressed ${limit} times without leaving the page: a keyboard trap after ${order.length} stops`);
}

/**
 * @param {string} title
 * @param {() => Promise<import('./helpers.mjs').Target>} open
 * @param {() => void} [close]
 */
function keyboardChecks(title, open, close) {
  describe(title, () => {
    /** @type {import('./helpers.mjs').Target} */
    let target;
    /** @type {Awaited<ReturnType<typeof launch>>} */
    let browser;
    before(async () => {
      target = await open();
      browser = await launch({ offline: target.offline });
    });
    after(async () => {
      await browser?.close();
      close?.();
    });

    test('Tab reaches every control once, each with a visible focus indicator, and Shift+Tab walks back', async () => {
      const { page } = browser;
      await page.goto(target.url);
      await expectWithin(page, 'the learned result never showed', () => settledLearned(page), browser.problems);
      await page.evaluate(() => document.querySelectorAll('details').forEach((details) => (details.open = true)));
      // A plan result, so its "Use" buttons are on the way too.
      await page.locator('#plan-budget').fill('2e9');
      await page.locator('#plan-run').click();
      await page.waitForFunction(() => document.documentElement.dataset.planBusy === '0');
      const expected = await installWalk(page);
      for (const wanted of ['#hardware-list input[type="checkbox"]', '#results th[data-sort] button', '#layers-for', '#custom-hw > summary', '#example-list a', '#plan-results tbody button']) {
        assert.ok((await page.locator(wanted).count()) > 0, `the page has ${wanted} to reach`);
      }
      // Start from the top: a click on the page's empty corner moves the sequential-focus starting point there.
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.mouse.click(2, 2);
      const forward = await walk(page, 'Tab', expected.length + 20);
      const reached = new Set(forward.order);
      const expectedIndexes = await page.evaluate(() => /** @type {any} */ (globalThis).__keyboardWalk.expected);
      const missed = expectedIndexes.filter((/** @type {number} */ index) => !reached.has(index));
      const describeAll = (/** @type {number[]} */ indexes) => page.evaluate((list) => list.map((i) => /** @type {any} */ (globalThis).__keyboardWalk.describe(i)), indexes);
      assert.deepEqual(await describeAll(missed), [], 'controls Tab never reached');
      assert.equal(reached.size, forward.order.length, `no control is reached twice: ${await describeAll(forward.order)}`);
      assert.deepEqual(forward.unindicated, [], 'controls whose focus draws nothing different');
      console.log(`# keyboard ${target.name}: ${forward.order.length} tab stops, ${expected.length} controls expected`);
      await page.screenshot({ path: join(ARTIFACTS, `keyboard-${target.name}-end.png`) });
      // From past the end, Shift+Tab visits the same stops in reverse.
      const backward = await walk(page, 'Shift+Tab', expected.length + 20);
      assert.deepEqual(await describeAll(backward.order), await describeAll([...forward.order].reverse()), 'Shift+Tab retraces Tab');
      assert.deepEqual(backward.unindicated, []);
    });

    test('sort buttons, accelerator checkboxes, a summary and the chart\'s select work from the keyboard', async () => {
      const { page } = browser;
      const header = page.locator('#results th[data-sort="memory_gb"]');
      await header.locator('button').focus();
      await page.keyboard.press('Space');
      assert.equal(await header.getAttribute('aria-sort'), 'ascending', 'Space sorts');
      await page.keyboard.press('Enter');
      assert.equal(await header.getAttribute('aria-sort'), 'descending', 'Enter reverses');
      const memory = await page.locator('#results td[data-col="memory_gb"]').evaluateAll((cells) => cells.map((c) => Number(c.getAttribute('data-value'))));
      assert.deepEqual(memory, [...memory].sort((a, b) => b - a), 'the rows follow');

      const box = page.locator('#hardware-list input[value="a100-sxm4-80gb"]');
      assert.equal(await box.isChecked(), false);
      await box.focus();
      await page.keyboard.press('Space');
      await expectWithin(page, 'ticking by Space did not recompute', () => settled(page), browser.problems);
      assert.ok((await rowIds(page)).includes('a100-sxm4-80gb'), 'Space ticks an accelerator: its row appears');
      await page.keyboard.press('Space');
      await expectWithin(page, 'unticking by Space did not recompute', () => settled(page), browser.problems);
      assert.ok(!(await rowIds(page)).includes('a100-sxm4-80gb'), 'Space again unticks it');

      const custom = page.locator('#custom-hw');
      await custom.locator('summary').focus();
      await page.keyboard.press('Enter');
      assert.equal(await custom.evaluate((d) => /** @type {HTMLDetailsElement} */ (d).open), false, 'Enter folds the details');
      await page.keyboard.press('Space');
      assert.equal(await custom.evaluate((d) => /** @type {HTMLDetailsElement} */ (d).open), true, 'Space unfolds them');

      const select = page.locator('#layers-for');
      const before = await select.inputValue();
      await select.focus();
      await page.keyboard.press(before === (await select.locator('option').last().getAttribute('value')) ? 'ArrowUp' : 'ArrowDown');
      const chosen = await select.inputValue();
      assert.notEqual(chosen, before, 'the arrow keys choose the chart\'s accelerator');
      await expectWithin(page, 'the per-layer chart was not redrawn', () => settled(page), browser.problems);
      assert.deepEqual(browser.problems, []);
    });
  });
}

/**
 * Tab from the top of `page` through every control and out, with a focus indicator at each stop.
 * @param {import('playwright-core').Page} page
 * @returns {Promise<string[]>} the stops, described
 */
async function expectFullWalk(page) {
  const expected = await installWalk(page);
  // Start from the top: a click on the page's empty corner moves the sequential-focus starting point there.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.mouse.click(2, 2);
  const forward = await walk(page, 'Tab', expected.length + 20);
  const stops = await page.evaluate((list) => list.map((i) => /** @type {any} */ (globalThis).__keyboardWalk.describe(i)), forward.order);
  assert.deepEqual(stops, expected, 'Tab visits every control once, in document order');
  assert.deepEqual(forward.unindicated, [], 'controls whose focus draws nothing different');
  return stops;
}

describe('the keyboard in the iframe mode (?embed=1)', () => {
  const site = servedBrowser();

  test('folded, Tab reaches the summary and the full-calculator link; Enter unfolds the inputs, which Tab then reaches', async () => {
    const { browser } = site;
    const { page } = browser;
    await page.goto(`${site.server.url}?embed=1&preset=gpt2&hardware=h100-sxm,rtx-4090&batch=8`);
    await expectWithin(page, 'the iframe mode never showed learned numbers', () => settledLearned(page), browser.problems);
    await page.locator('#open-full[href]').waitFor();
    const folded = await expectFullWalk(page);
    assert.ok(folded.some((stop) => stop.startsWith('summary')) && folded.some((stop) => stop.startsWith('a#open-full')), `folded stops: ${folded}`);
    assert.ok(!folded.some((stop) => stop.startsWith('input#batch_size')), 'the folded inputs are not in the way');
    await page.locator('#inputs-panel > summary').focus();
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('#batch_size').isVisible(), true, 'Enter unfolds the inputs');
    const open = await expectFullWalk(page);
    assert.ok(open.includes('input#batch_size') && open.length > folded.length, `unfolded stops: ${open.length}`);
    assert.deepEqual(browser.problems, []);
  });
});

const served = servedOpener();
keyboardChecks('the keyboard on the served site', served.open, served.close);

const single = singleFileOpener();
keyboardChecks('the keyboard on the single file from file://, offline', single.open, single.close);
