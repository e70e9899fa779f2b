// The acceptance tests of issue 6, written once and run against each way the calculator is opened
// (page-served.test.mjs: the static site over http; page-single.test.mjs: the one-file build from
// file:// with the network blocked). Tests run in order and share one page, like a user's visit.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  ARTIFACTS,
  DEFAULT_HARDWARE,
  SMALL_HARDWARE,
  SMALL_LINK,
  FIXTURES,
  chooseHardware,
  expectWithin,
  isInMemory,
  launch,
  rowIds,
  settled,
  settledLearned,
  stepMs,
} from './helpers.mjs';
import { engine as nodeEngine } from '../../web/cli/node-engine.mjs';

/** The repository's format fixtures (small ONNX files written by tests/fuzz/make_seeds --fixtures). */
const REPO_FIXTURES = new URL('../fixtures/', import.meta.url).pathname;

/**
 * @param {string} title
 * @param {() => Promise<import('./helpers.mjs').Target>} open resolves once the target can be loaded
 * @param {() => void} [close]
 */
export function pageSuite(title, open, close) {
  describe(title, () => {
    /** @type {import('./helpers.mjs').Target} */
    let target;
    /** @type {Awaited<ReturnType<typeof launch>>} */
    let browser;
    /** @type {import('playwright-core').Page} */
    let page;
    const shot = (/** @type {string} */ name) => page.screenshot({ path: join(ARTIFACTS, `${target.name}-${name}.png`), fullPage: true });
    const within = (/** @type {string} */ what, /** @type {() => Promise<unknown>} */ wait) => expectWithin(page, what, wait, browser.problems);

    before(async () => {
      target = await open();
      browser = await launch({ offline: target.offline });
      page = browser.page;
    });

    after(async () => {
      await browser?.close();
      close?.();
    });

    test('the default example shows results on load, with the summary before them', async () => {
      await page.goto(target.url);
      await within('the default example never rendered', () => settled(page));
      await within('the learned predictors never replaced the first (roofline) numbers', () => settledLearned(page));
      assert.deepEqual((await rowIds(page)).sort(), [...DEFAULT_HARDWARE].sort(), 'one row per default accelerator');
      for (const hardware of DEFAULT_HARDWARE) {
        const step = await stepMs(page, hardware);
        assert.ok(Number.isFinite(step) && step > 0, `${hardware}: step_ms ${step}`);
        const text = await page.locator(`#results tr[data-hardware="${hardware}"] td[data-col="total_s"]`).textContent();
        assert.match(text ?? '', /^\d[\d.,]* (ms|s|min|h|days) \(\d[\d.,]*( \w+)?–\d[\d.,]* (ms|s|min|h|days)\)$/, `${hardware}: total "${text}" is a number with a unit and its 80% interval`);
        // The learned predictor's 80% interval brackets the estimate, in the step and total cells.
        for (const column of ['step_ms', 'total_s']) {
          const td = page.locator(`#results tr[data-hardware="${hardware}"] td[data-col="${column}"]`);
          const [value = NaN, low = NaN, high = NaN] = await Promise.all(['data-value', 'data-low', 'data-high'].map((name) => td.getAttribute(name).then(Number)));
          assert.ok(low > 0 && low <= value && value <= high, `${hardware} ${column}: ${low} ≤ ${value} ≤ ${high}`);
          assert.match((await td.locator('.interval').textContent()) ?? '', /^ \(.+–.+\)$/);
        }
        const roofline = await page.locator(`#results tr[data-details-for="${hardware}"] [data-col="roofline_step_ms"]`).getAttribute('data-value');
        assert.ok(Number(roofline) > 0, `${hardware}: the roofline baseline is shown (${roofline})`);
      }
      assert.equal(await page.evaluate(() => document.documentElement.dataset.predictor), 'learned', 'the default example ends on the learned predictor');
      assert.match((await page.locator('#predictor').textContent()) ?? '', /^Predictor: learned/);
      assert.match((await page.locator('#version').textContent()) ?? '', /predictor learned/);
      // The first screen: an 8B model in BF16 (scenario.js startScenario).
      const summary = (await page.locator('#summary').textContent()) ?? '';
      assert.match(summary, /llama-3\.1-8b \(from preset\)/);
      assert.match(summary, /Parameters\s*8\.\d+ G/);
      assert.match(summary, /Precision, optimizer\s*bf16/);
      assert.match(summary, /FLOPs per step\s*\d/);
      const order = await page.evaluate(() => {
        const summaryBox = document.querySelector('#summary');
        const table = document.querySelector('#results');
        return summaryBox && table ? summaryBox.compareDocumentPosition(table) & Node.DOCUMENT_POSITION_FOLLOWING : 0;
      });
      assert.ok(order, '"What was understood" comes before the times');
      assert.equal(await page.locator('#time-chart svg rect.bar').count(), DEFAULT_HARDWARE.length, 'a time bar per accelerator');
      assert.ok((await page.locator('#layers-chart svg rect').count()) > 10, 'the per-layer chart is drawn');
      const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
      assert.match(csp ?? '', /script-src [^;]*'wasm-unsafe-eval'/, 'the page carries its CSP');
      assert.doesNotMatch(csp ?? '', /'unsafe-inline'|'unsafe-eval'/, 'no unsafe-inline or unsafe-eval');
      assert.equal(await page.evaluate(() => document.documentElement.dataset.engine), 'worker', 'the engine runs in a worker');
      await shot('default');
    });

    test('the rest of this suite opens a small scenario of its own, as a link', async () => {
      await page.goto(`${target.url}${SMALL_LINK}`);
      await within('the small scenario never rendered', () => page.waitForFunction(() => /bert-base/.test(document.querySelector('#summary')?.textContent ?? '')));
      await within('the small scenario never settled', () => settledLearned(page));
      assert.deepEqual((await rowIds(page)).sort(), [...SMALL_HARDWARE].sort());
      assert.match((await page.locator('#summary').textContent()) ?? '', /Parameters\s*110 M/);
    });

    test('the page\'s engine gives the same numbers as the Node engine for the same request', async () => {
      /** @type {import('../../web/src/types').PredictRequest} */
      const request = { model: { preset: 'gpt2' }, hardware: ['a100-sxm4-80gb', 'h100-sxm', 'mi300x', 't4'], training: { batch_size: 16, precision: 'fp16' } };
      const browserResult = await page.evaluate(async (req) => {
        const client = /** @type {any} */ (globalThis)[Symbol.for('prenet.engine-client')];
        return client.compute({ request: req });
      }, request);
      assert.ok(browserResult.ok, `the page's engine refused the request: ${JSON.stringify(browserResult)}`);
      const nodeResponse = await nodeEngine.predict(request);
      assert.equal(browserResult.response.predictor, 'learned');
      assert.equal(nodeResponse.predictor, 'learned');
      const pick = (/** @type {import('../../web/src/types').PredictResponse} */ r) =>
        r.results.map((x) => ({ hardware: x.hardware, step_ms: x.step_ms, step_ms_interval: x.step_ms_interval, total_s: x.total_s, roofline: x.baselines?.['roofline']?.step_ms }));
      assert.deepEqual(pick(browserResult.response), pick(nodeResponse), 'identical numbers from the browser and Node');
    });

    test('a preset picked by search and three accelerators picked by search and filters', async () => {
      await page.locator('#preset-search').fill('gpt');
      const shown = await page.locator('#preset-list label.pick:visible').allTextContents();
      assert.ok(shown.length >= 1 && shown.every((text) => /gpt/i.test(text)), `search "gpt" shows only GPT presets: ${shown}`);
      await page.locator('#preset-list input[value="gpt2"]').check();
      await page.locator('#preset-search').fill('');
      await chooseHardware(page, ['h100-sxm', 'rtx-4090']);
      // The third by the filters: AMD parts with at least 128 GB.
      await page.locator('#filter-vendor').selectOption('amd');
      await page.locator('#filter-memory').selectOption('128');
      const amd = await page.locator('#hardware-list .pick:visible input').evaluateAll((boxes) => boxes.map((box) => /** @type {HTMLInputElement} */ (box).value));
      assert.ok(amd.includes('mi300x') && amd.every((id) => id.startsWith('mi')), `AMD ≥ 128 GB filter shows ${amd}`);
      await page.locator('#hardware-list input[value="mi300x"]').check();
      assert.match((await page.locator('#hardware-count').textContent()) ?? '', /^3 selected \(2 hidden by the filters\)/);
      await page.locator('#filter-vendor').selectOption('');
      await page.locator('#filter-memory').selectOption('0');
      await within('the GPT-2 scenario was not computed', () => settled(page));
      assert.deepEqual((await rowIds(page)).sort(), ['h100-sxm', 'mi300x', 'rtx-4090']);
      assert.match((await page.locator('#summary').textContent()) ?? '', /gpt2 \(from preset\)/);
      await shot('gpt2-three-accelerators');
    });

    test('changing the batch size changes the numbers', async () => {
      const before = await stepMs(page, 'h100-sxm');
      await page.locator('#batch_size').fill('64');
      await within('no result for batch 64', () => settled(page));
      const after = await stepMs(page, 'h100-sxm');
      assert.ok(after > before, `step at batch 64 (${after} ms) should exceed batch 32 (${before} ms)`);
      assert.match((await page.locator('#summary').textContent()) ?? '', /batch 64/);
    });

    test('the table sorts by a column, and the order follows', async () => {
      await page.locator('#results th[data-sort="step_ms"] button').click();
      const ascending = await page.locator('#results td[data-col="step_ms"]').evaluateAll((cells) => cells.map((c) => Number(c.getAttribute('data-value'))));
      assert.deepEqual(ascending, [...ascending].sort((a, b) => a - b));
      assert.equal(await page.locator('#results th[data-sort="step_ms"]').getAttribute('aria-sort'), 'ascending');
      await page.locator('#results th[data-sort="step_ms"] button').press('Enter'); // the keyboard works too
      assert.equal(await page.locator('#results th[data-sort="step_ms"]').getAttribute('aria-sort'), 'descending');
      const descending = await page.locator('#results td[data-col="step_ms"]').evaluateAll((cells) => cells.map((c) => Number(c.getAttribute('data-value'))));
      assert.deepEqual(descending, [...ascending].reverse());
    });

    test('a shared link restores the same scenario in a new tab', async () => {
      await page.locator('#precision').selectOption('bf16');
      await page.locator('#epochs').fill('3');
      await within('no result for bf16, 3 epochs', () => settled(page));
      await page.locator('#share').click();
      await page.waitForFunction(() => /precision=bf16/.test(location.hash) && /epochs=3/.test(location.hash));
      const link = page.url();
      const expected = {
        rows: await rowIds(page),
        steps: await page.locator('#results td[data-col="step_ms"]').allTextContents(),
        summary: await page.locator('#summary').textContent(),
      };
      const second = await browser.context.newPage();
      await second.goto(link);
      await expectWithin(second, 'the shared link did not compute', () => settledLearned(second), browser.problems);
      assert.deepEqual(await rowIds(second), expected.rows, 'same accelerators, same order');
      assert.deepEqual(await second.locator('#results td[data-col="step_ms"]').allTextContents(), expected.steps, 'same numbers');
      assert.equal(await second.locator('#summary').textContent(), expected.summary);
      assert.equal(await second.locator('#batch_size').inputValue(), '64');
      assert.equal(await second.locator('#precision').inputValue(), 'bf16');
      assert.equal(await second.locator('#results th[data-sort="step_ms"]').getAttribute('aria-sort'), 'descending', 'the sort is restored');
      assert.ok(await second.locator('#preset-list input[value="gpt2"]').isChecked());
      await second.close();
    });

    test('an uploaded config file is read, understood and computed', async () => {
      await page.locator('#config-file').setInputFiles(join(FIXTURES, 'gpt2-medium-config.json'));
      await within('the uploaded config was not computed', () =>
        page.waitForFunction(() => /Hugging Face config/.test(document.querySelector('#summary')?.textContent ?? '')),
      );
      await settled(page);
      assert.match(await page.locator('#config').inputValue(), /"n_embd": 1024/, 'the file text is in the box');
      assert.match((await page.locator('#config-kind').textContent()) ?? '', /Read as: Hugging Face config \(model_type "gpt2"\)/);
      assert.match((await page.locator('#summary').textContent()) ?? '', /Parameters\s*355 M/);
      assert.ok(await page.locator('#preset-list input[value="gpt2"]').isDisabled(), 'presets are off while a config is used');
      await shot('uploaded-config');
    });

    test('an ONNX file is skimmed to its graph and computed; one without a graph is refused clearly', async () => {
      await page.locator('#config-file').setInputFiles(join(REPO_FIXTURES, 'onnx', 'lenet5-no-weights.onnx'));
      await within('the ONNX file was not computed', () =>
        page.waitForFunction(() => /ONNX graph/.test(document.querySelector('#config-kind')?.textContent ?? '')),
      );
      await settled(page);
      assert.match(await page.locator('#config').inputValue(), /^\{"onnx_base64":"/, 'the skimmed graph is in the box');
      assert.match((await page.locator('#summary').textContent()) ?? '', /Parameters\s*61\.7 k/);
      // tiny.onnx holds a model header and no graph.
      await page.locator('#config-file').setInputFiles(join(FIXTURES, 'tiny.onnx'));
      const box = page.locator('#model-error');
      await within('no message for the ONNX file', () => box.waitFor({ state: 'visible' }));
      assert.match((await box.textContent()) ?? '', /^config: "tiny\.onnx" \(1 KiB\) cannot be read as ONNX: .*no graph found/);
    });

    test('bad JSON shows an error naming the config, and the old results are marked stale', async () => {
      await page.locator('#config').fill('{"model_type": "gpt2", "n_embd": ');
      const box = page.locator('#model-error');
      // Wait for this error, not just any: the ONNX message of the previous test is still showing.
      await within('no JSON error beside the config box', () =>
        page.waitForFunction(() => /^config: not valid JSON/.test(document.querySelector('#model-error')?.textContent ?? '')),
      );
      assert.ok(await box.isVisible());
      assert.equal(await page.locator('#config').getAttribute('aria-invalid'), 'true');
      assert.ok(await page.locator('#output.stale').count(), 'results are marked stale');
      await shot('bad-json');
      // A core error names the field inside the config.
      await page.locator('#config').fill('{"model_type": "gpt2", "n_embd": "wide", "n_layer": 2, "n_head": 2, "vocab_size": 100}');
      await within('no error for a bad field', () => page.waitForFunction(() => /model\.hf_config\.n_embd/.test(document.querySelector('#model-error')?.textContent ?? '')));
      await page.locator('#config-clear').click();
      await within('clearing the config did not bring the preset back', () => box.waitFor({ state: 'hidden' }));
      await settled(page);
      assert.match((await page.locator('#summary').textContent()) ?? '', /gpt2 \(from preset\)/);
    });

    test('an out-of-range number gets the core\'s message beside its input', async () => {
      await page.locator('#batch_size').fill('-4');
      const box = page.locator('#batch_size-error');
      await within('no error beside the batch size', () => box.waitFor({ state: 'visible' }));
      assert.match((await box.textContent()) ?? '', /^training\.batch_size: /);
      assert.equal(await page.locator('#batch_size').getAttribute('aria-invalid'), 'true');
      await page.locator('#batch_size').fill('32');
      await within('the error did not clear', () => box.waitFor({ state: 'hidden' }));
    });

    test('a measured step calibrates its accelerator, is marked in the table, and travels in the link', async () => {
      const measuredOn = page.locator('#measured_on');
      assert.deepEqual((await measuredOn.locator('option').evaluateAll((options) => options.map((o) => /** @type {HTMLOptionElement} */ (o).value))).sort(), ['h100-sxm', 'mi300x', 'rtx-4090'], '"Measured on" offers the selected accelerators');
      await measuredOn.selectOption('mi300x');
      await page.locator('#measured_step').fill('250');
      const badge = page.locator('#results tr[data-hardware="mi300x"] .badge.calibrated');
      await within('the calibrated row was never marked', () => badge.waitFor({ state: 'visible' }));
      await settled(page);
      const step = await stepMs(page, 'mi300x');
      assert.ok(Math.abs(step - 250) < 0.05, `the measured accelerator's step is the measurement: ${step}`);
      assert.match((await page.locator('#results tr[data-hardware="mi300x"] td[data-col="step_ms"]').textContent()) ?? '', /^250(\.0+)? ms/);
      assert.match((await badge.textContent()) ?? '', /^calibrated ×\d+\.\d\d$/);
      const factor = Number(await badge.getAttribute('data-factor'));
      const otherBadge = page.locator('#results tr[data-hardware="h100-sxm"] .badge.calibrated');
      const other = Number(await otherBadge.getAttribute('data-factor'));
      const share = Number(await otherBadge.getAttribute('data-share'));
      assert.ok(share >= 0 && share <= 1, `a share in [0, 1]: ${share}`);
      assert.ok(Math.abs(other - factor ** share) < 1e-3, `the others get the shared part: ${other} vs ${factor}^${share}`);
      await page.waitForFunction(() => /measured=250/.test(location.hash) && /measured_on=mi300x/.test(location.hash));
      await shot('calibrated');
      // Unticking the measured accelerator is an error beside the field, not a silent change.
      await page.locator('#hardware-list input[value="mi300x"]').uncheck();
      const box = page.locator('#measured_step-error');
      await within('no error when the measured accelerator was unticked', () => box.waitFor({ state: 'visible' }));
      assert.match((await box.textContent()) ?? '', /^calibration\.hardware: /);
      assert.equal(await measuredOn.getAttribute('aria-invalid'), 'true');
      await page.locator('#hardware-list input[value="mi300x"]').check();
      await within('the error did not clear once it was ticked again', () => box.waitFor({ state: 'hidden' }));
      await page.locator('#measured_step').fill('0');
      await within('no error for a zero step', () => page.waitForFunction(() => /^calibration\.step_ms: /.test(document.querySelector('#measured_step-error')?.textContent ?? '')));
      assert.equal(await page.locator('#measured_step').getAttribute('aria-invalid'), 'true');
      await page.locator('#measured_step').fill('');
      await within('clearing the step did not remove the calibration', () => page.locator('#results .badge.calibrated').first().waitFor({ state: 'detached' }));
      await settled(page);
      assert.equal(await box.isHidden(), true);
    });

    test('a TPU beside a GPU: the TPU row is marked analytic, without an interval, and the note says why', async () => {
      await chooseHardware(page, ['tpu-v5p', 'h100-sxm']);
      await within('no result for the TPU and the H100', () => page.locator('#results tr[data-hardware="tpu-v5p"]').waitFor());
      await settledLearned(page);
      assert.equal(await page.locator('#results tr[data-hardware="tpu-v5p"] .badge.analytic').count(), 1, 'the TPU row is marked analytic');
      assert.equal(await page.locator('#results tr[data-hardware="tpu-v5p"] .interval').count(), 0, 'and has no learned interval');
      assert.equal(await page.locator('#results tr[data-hardware="h100-sxm"] .badge.analytic').count(), 0);
      assert.ok((await page.locator('#results tr[data-hardware="h100-sxm"] .interval').count()) > 0, 'the GPU keeps its interval');
      assert.match((await page.locator('#predictor').textContent()) ?? '', /Rows marked analytic \(TPU, Gaudi\)/);
    });

    test('no request left the page: only its own files, and no console errors', () => {
      const foreign = browser.requests.filter((url) => !isInMemory(url) && !target.ownFile(url));
      assert.deepEqual(foreign, [], 'requests for anything but the page\'s own files');
      assert.deepEqual(browser.blocked, [], 'network requests attempted while offline');
      assert.ok(browser.requests.length > 0, 'requests were recorded');
      assert.deepEqual(browser.problems, [], 'console errors or uncaught exceptions (a CSP violation shows here)');
    });
  });
}
