// Bad input in the page: a 100 MiB paste and pathological models must not crash or freeze it. The engine
// runs in a worker, so the page's own thread should stay free while the core reads, rejects or computes
// them. Measured with the Long Tasks API (every main-thread task over 50 ms, with its duration) from the
// paste until the page shows the outcome; the paste's own task (the browser putting the text into the
// textarea) is reported apart, since the page cannot move it off its thread.
//
// A paste is simulated as the browser performs one: a cancelable `paste` event carrying the text; unless
// the page cancels it, the text goes into the box and an `input` event follows. (Chromium's textarea
// itself crashes the tab at about 100 MiB of text, so the page must refuse such a paste before that.)

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SMALL_LINK, rowIds, servedBrowser, settled, settledLearned } from './helpers.mjs';

/** The longest main-thread task allowed while the page works on a bad input (after the paste). */
const MAX_TASK_MS = 200;
const HUNDRED_MIB = 100 * 1024 * 1024;

const served = servedBrowser(async ({ page }, server) => {
  await page.addInitScript(() => {
    // Installed before the page's own scripts, so no long task is missed.
    /** @type {{ start: number, duration: number }[]} */
    const tasks = [];
    Object.assign(window, { __longTasks: tasks });
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) tasks.push({ start: entry.startTime, duration: entry.duration });
    }).observe({ type: 'longtask', buffered: true });
  });
  await page.goto(`${server.url}${SMALL_LINK}`);
  await settledLearned(page);
});

/**
 * Puts `make()`'s text into the config box as a paste would (value, then an `input` event), waits for
 * the page to show the outcome, and returns what the main thread did meanwhile.
 * @param {import('playwright-core').Page} page
 * @param {string} make the body of a function returning the text, run in the page
 */
async function pasteAndWait(page, make) {
  const before = await page.evaluate(() => ({ renders: Number(document.documentElement.dataset.renders), error: document.querySelector('#model-error')?.textContent ?? '' }));
  const paste = await page.evaluate((body) => {
    const text = /** @type {string} */ (new Function(body)());
    const box = /** @type {HTMLTextAreaElement} */ (document.querySelector('#config'));
    const data = new DataTransfer();
    data.setData('text/plain', text);
    const start = performance.now();
    const event = new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true });
    const inserted = box.dispatchEvent(event);
    if (inserted) {
      box.value = text;
      box.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertFromPaste' }));
    }
    return { start, end: performance.now(), chars: text.length, inserted };
  }, make);
  const t0 = Date.now();
  await page.waitForFunction(
    (was) => {
      const error = document.querySelector('#model-error')?.textContent ?? '';
      const rendered = Number(document.documentElement.dataset.renders) > was.renders && document.documentElement.dataset.busy === '0';
      return rendered || (error !== '' && error !== was.error);
    },
    before,
    { timeout: 60_000 },
  );
  const waitedMs = Date.now() - t0;
  await page.waitForTimeout(300); // a long task is reported when it ends; let the last ones arrive
  const tasks = await page.evaluate((start) => {
    // @ts-expect-error installed by the init script
    const all = /** @type {{ start: number, duration: number }[]} */ (window.__longTasks);
    return all.filter((task) => task.start + task.duration > start);
  }, paste.start);
  // The paste's own task contains the moment the value was set; everything after it is the page's work.
  const pasteTask = tasks.find((task) => task.start <= paste.start + 1 && task.start + task.duration >= paste.end - 1);
  const after = tasks.filter((task) => task !== pasteTask);
  const error = (await page.locator('#model-error').textContent())?.trim() ?? '';
  const status = (await page.locator('#status').textContent())?.trim() ?? '';
  return {
    pasteMs: pasteTask?.duration ?? paste.end - paste.start,
    inserted: paste.inserted,
    waitedMs,
    longest: Math.max(0, ...after.map((task) => task.duration)),
    longTasks: after.length,
    error,
    status,
    chars: paste.chars,
  };
}

/** @param {import('node:test').TestContext} t @param {string} what @param {Awaited<ReturnType<typeof pasteAndWait>>} r */
function report(t, what, r) {
  t.diagnostic(
    `${what}: ${r.chars.toLocaleString('en')} chars, ${r.inserted ? 'inserted' : 'taken by the page at the paste'}; paste task ${r.pasteMs.toFixed(0)} ms; outcome shown after ${r.waitedMs} ms; ` +
      `main-thread tasks over 50 ms after the paste: ${r.longTasks}, longest ${r.longest.toFixed(0)} ms; error: ${r.error.slice(0, 120) || '(none)'}`,
  );
}

describe('pathological input in the page (served site, engine in a worker)', () => {
  test('a 100 MiB paste is refused with the size limit, and the page stays responsive', async (t) => {
    const { page } = served.browser;
    const r = await pasteAndWait(page, `return '{"model_type": "gpt2", "notes": "' + 'a'.repeat(${HUNDRED_MIB}) + '"}';`);
    report(t, '100 MiB config', r);
    assert.match(r.error, /^config: .*16 MiB/, `the error names the config and the size limit: ${r.error} (status: ${r.status})`);
    assert.ok(r.longest <= MAX_TASK_MS, `no main-thread task over ${MAX_TASK_MS} ms after the paste; longest ${r.longest.toFixed(0)} ms`);
  });

  // Chromium lays a textarea's text out on the page's thread (about 1.8 ms per KiB of pretty-printed JSON,
  // seconds for 15 MiB), and the charts force that layout when they read their width. So a config over
  // 64 KiB never goes into the box: the page takes the paste itself (cancels it) and holds the text in
  // memory, showing a one-line summary where the box was (web/src/form.ts setConfig).
  test('a 15 MiB config (under the limit) is held out of the box, read in the worker and computed', async (t) => {
    const { page } = served.browser;
    const r = await pasteAndWait(
      page,
      `const config = { model_type: 'gpt2', n_embd: 768, n_layer: 12, n_head: 12, vocab_size: 50257, n_positions: 1024 }; return JSON.stringify(config).replace('{', '{"notes": "' + 'a'.repeat(15 * 1024 * 1024) + '", ');`,
    );
    report(t, '15 MiB config', r);
    assert.equal(r.inserted, false, 'the page takes a large paste itself; it never reaches the textarea');
    assert.equal(r.error, '', 'computed, not refused');
    assert.match((await page.locator('#summary').textContent()) ?? '', /Hugging Face|gpt2/i);
    assert.ok(r.longest <= MAX_TASK_MS, `no main-thread task over ${MAX_TASK_MS} ms after the paste; longest ${r.longest.toFixed(0)} ms`);
    assert.equal(await page.locator('#config').isHidden(), true);
    assert.equal(await page.locator('#config').inputValue(), '');
    assert.match((await page.locator('#config-held').textContent()) ?? '', /^pasted text — 15\.0 MiB, too large to show here.*Clear/);
    // Clear drops the held config: the box and the presets come back.
    await page.locator('#config-clear').click();
    await settled(page);
    assert.equal(await page.locator('#config-held').isHidden(), true);
    assert.equal(await page.locator('#config').isVisible(), true);
    assert.equal(await page.locator('#preset-list input[type=radio]').first().isDisabled(), false);
    assert.doesNotMatch((await page.locator('#summary').textContent()) ?? '', /Hugging Face/);
  });

  test('10,000 layers (the limit), computed with the learned predictors, without blocking the page', async (t) => {
    const { page } = served.browser;
    const r = await pasteAndWait(
      page,
      `return JSON.stringify({ input: { kind: 'vector', features: 32 }, layers: [{ type: 'repeat', count: 9998, layers: [{ type: 'dense', units: 32 }] }, { type: 'dense', units: 10 }, { type: 'cross_entropy' }] });`,
    );
    report(t, '10,000 layers', r);
    assert.equal(r.error, '', 'computed, not refused');
    assert.equal((await rowIds(page)).length, 3);
    assert.ok(r.longest <= MAX_TASK_MS, `no main-thread task over ${MAX_TASK_MS} ms; longest ${r.longest.toFixed(0)} ms`);
  });

  test('JSON nested 100,000 deep, and 10^9 layers by nested repeats, are refused quickly', async (t) => {
    const { page } = served.browser;
    const deep = await pasteAndWait(page, `return '['.repeat(100000);`);
    report(t, '100,000 unclosed [', deep);
    assert.match(deep.error, /^config|nest|JSON/, deep.error);
    assert.ok(deep.longest <= MAX_TASK_MS, `longest main-thread task ${deep.longest.toFixed(0)} ms`);
    const huge = await pasteAndWait(
      page,
      `const r = (n, inner) => ({ type: 'repeat', count: n, layers: [inner] }); return JSON.stringify({ input: { kind: 'vector', features: 32 }, layers: [r(1000, r(1000, r(1000, { type: 'dense', units: 32 })))] });`,
    );
    report(t, '10^9 layers', huge);
    assert.match(huge.error, /more than 10000 layers/, huge.error);
    assert.ok(huge.longest <= MAX_TASK_MS, `longest main-thread task ${huge.longest.toFixed(0)} ms`);
  });

  test('after all that, clearing the box computes the default example again', async () => {
    const { page } = served.browser;
    await page.locator('#config-clear').click();
    await settled(page);
    assert.equal(((await page.locator('#model-error').textContent()) ?? '').trim(), '');
    assert.equal((await rowIds(page)).length, 3);
    await page.locator('#batch_size').fill('24');
    await settled(page);
    assert.match((await page.locator('#summary').textContent()) ?? '', /batch 24/);
    assert.deepEqual(served.browser.problems, []);
  });
});
