// The rest of the page's promises, on the served site: the page-thread fallback when no worker can
// start (also from file://), custom accelerators, drag-and-drop, exports, themes and a phone screen.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ARTIFACTS, DEFAULT_HARDWARE, FIXTURES, SMALL_LINK, launch, requireBuilt, rowIds, settled, settledLearned, singleFileTarget, startServer } from './helpers.mjs';

/** @type {{ url: string, stop: () => void }} */
let server;

before(async () => {
  requireBuilt();
  server = await startServer();
});

after(() => server?.stop());

/** Makes every `new Worker()` fail, as a browser or policy without workers would. */
function breakWorkers() {
  // @ts-expect-error replaced on purpose, for this test page only
  window.Worker = function Worker() {
    throw new DOMException('workers are disabled for this test', 'SecurityError');
  };
}

describe('when no worker can start', () => {
  for (const where of ['served', 'single']) {
    test(`the ${where} page computes on its own thread instead`, async () => {
      const browser = await launch({ offline: where === 'single' });
      try {
        await browser.page.addInitScript(breakWorkers);
        await browser.page.goto(where === 'single' ? singleFileTarget().url : server.url);
        await settled(browser.page);
        assert.equal(await browser.page.evaluate(() => document.documentElement.dataset.engine), 'main');
        assert.equal((await rowIds(browser.page)).length, DEFAULT_HARDWARE.length, 'the first screen\'s accelerators');
        await settledLearned(browser.page);
        await browser.page.locator('#batch_size').fill('48');
        await settled(browser.page);
        assert.match((await browser.page.locator('#summary').textContent()) ?? '', /batch 48/);
        assert.match((await browser.page.locator('#version').textContent()) ?? '', /on the page's thread/);
        assert.match((await browser.page.locator('#version').textContent()) ?? '', /predictor learned/, 'the learned models load on the page\'s thread too');
        assert.deepEqual(browser.problems, []);
      } finally {
        await browser.close();
      }
    });
  }
});

describe('when the learned models cannot load', () => {
  test('the served page stays on the roofline and says why', async () => {
    const browser = await launch();
    try {
      // ONNX Runtime's wasm only: the core's own binary (assets/prenet_core-[hash].wasm) still loads.
      await browser.context.route(/\/ort-wasm[^/]*\.wasm$/, (route) => route.fulfill({ status: 404, body: 'gone' }));
      await browser.page.goto(server.url);
      await browser.page.waitForFunction(() => /did not load/.test(document.querySelector('#predictor')?.textContent ?? ''));
      await settled(browser.page);
      assert.equal(await browser.page.evaluate(() => document.documentElement.dataset.predictor), 'roofline');
      assert.match((await browser.page.locator('#predictor').textContent()) ?? '', /^Predictor: roofline \(analytic\), because the learned models did not load \(.*404/);
      assert.equal((await rowIds(browser.page)).length, DEFAULT_HARDWARE.length, 'the results are still there');
      assert.equal(await browser.page.locator('#results .interval').count(), 0, 'no interval without the learned predictor');
      await browser.page.locator('#batch_size').fill('48');
      await settled(browser.page);
      assert.match((await browser.page.locator('#summary').textContent()) ?? '', /batch 48/, 'the page keeps computing');
    } finally {
      await browser.close();
    }
  });
});

describe('the served page, further', () => {
  /** @type {Awaited<ReturnType<typeof launch>>} */
  let browser;
  /** @type {import('playwright-core').Page} */
  let page;

  before(async () => {
    browser = await launch();
    page = browser.page;
    await page.goto(`${server.url}${SMALL_LINK}`);
    await settled(page);
  });

  after(async () => browser?.close());

  test('the per-layer chart follows the chosen accelerator', async () => {
    const note = () => page.locator('#layers-note').textContent();
    assert.match((await note()) ?? '', /on NVIDIA H100/, 'the fastest row by default');
    await page.locator('#layers-for').selectOption('v100-sxm2-32gb');
    await page.waitForFunction(() => /V100/.test(document.querySelector('#layers-note')?.textContent ?? ''));
    await settled(page);
    assert.equal(await page.locator('#layers-for').inputValue(), 'v100-sxm2-32gb');
    await page.locator('#layers-top').selectOption('10');
    assert.match((await note()) ?? '', /^The 10 slowest of \d+ layers/);
    assert.equal(await page.locator('#layers-chart svg g.row').count(), 11, 'ten layers and the rest');
  });

  test('a link pasted into the same tab is restored without a reload', async () => {
    await page.evaluate(() => {
      location.hash = '#preset=resnet50&hardware=t4,l4&batch=16&precision=fp16';
    });
    await page.waitForFunction(() => /resnet50/.test(document.querySelector('#summary')?.textContent ?? ''));
    await settled(page);
    assert.deepEqual((await rowIds(page)).sort(), ['l4', 't4']);
    assert.equal(await page.locator('#precision').inputValue(), 'fp16');
    assert.equal(await page.locator('#image_size').getAttribute('placeholder'), '224 (default)');
    // Back to the small scenario for the tests that follow.
    await page.evaluate((link) => {
      location.hash = link;
    }, SMALL_LINK);
    await page.waitForFunction(() => /bert-base/.test(document.querySelector('#summary')?.textContent ?? ''));
    await settled(page);
  });

  test('a custom accelerator is checked beside its fields, then added and computed', async () => {
    await page.locator('#custom-hw summary').click();
    await page.locator('#custom-name').fill('Lab <b>card</b>');
    await page.locator('#custom-bf16').fill('300');
    await page.locator('#custom-add').click();
    assert.equal((await page.locator('#custom-error').textContent()) ?? '', 'FP32 peak TFLOP/s: required; Bandwidth GB/s: required; Memory GB: required');
    assert.equal(await page.locator('#custom-fp32').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('#custom-bf16').getAttribute('aria-invalid'), null);
    await page.locator('#custom-fp32').fill('60');
    await page.locator('#custom-bandwidth').fill('2000');
    await page.locator('#custom-memory').fill('48');
    await page.locator('#custom-price').fill('1.25');
    await page.locator('#custom-add').click();
    await settled(page);
    const row = page.locator('#results tr[data-hardware="custom-1"]');
    await row.waitFor();
    // The name is shown as text, never interpreted as markup.
    assert.match((await row.locator('th').textContent()) ?? '', /^Lab <b>card<\/b>custom$/);
    assert.equal(await row.locator('th b').count(), 0);
    assert.ok(Number(await row.locator('td[data-col="cost_usd"]').getAttribute('data-value')) > 0, 'priced');
    // bf16: the V100 (a default) lacks it, and the error beside the precision names it …
    await page.locator('#precision').selectOption('bf16');
    await settled(page);
    assert.match((await page.locator('#precision-error').textContent()) ?? '', /^training\.precision: bf16 is not supported by .*V100/);
    // … while the custom card, given a bf16 peak, is fine once the V100 is unticked.
    await page.locator('#hardware-list input[value="v100-sxm2-32gb"]').uncheck();
    await settled(page);
    assert.equal(await page.locator('#precision-error').isVisible(), false);
    assert.ok((await rowIds(page)).includes('custom-1'));
    // The custom accelerator is part of the link (written once typing pauses).
    await page.waitForFunction(() => /custom=/.test(location.hash) && /hardware=[^&]*custom-1/.test(location.hash));
  });

  test('a file dropped on the Model box is read like an upload', async () => {
    const text = readFileSync(join(FIXTURES, 'gpt2-medium-config.json'), 'utf8');
    const data = await page.evaluateHandle((json) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([json], 'config.json', { type: 'application/json' }));
      return transfer;
    }, text);
    await page.locator('#model-fields').dispatchEvent('dragenter', { dataTransfer: data });
    assert.ok(await page.locator('#drop-zone.dragging').count(), 'the drop target is highlighted');
    await page.locator('#model-fields').dispatchEvent('drop', { dataTransfer: data });
    await page.waitForFunction(() => /Hugging Face config/.test(document.querySelector('#summary')?.textContent ?? ''));
    assert.equal(await page.locator('#drop-zone.dragging').count(), 0);
    await settled(page);
  });

  test('CSV and JSON exports download the numbers shown', async () => {
    const [csv] = await Promise.all([page.waitForEvent('download'), page.locator('#export-csv').click()]);
    assert.match(csv.suggestedFilename(), /^prenet-gpt2-\d{4}-\d\d-\d\d\.csv$/);
    const csvText = readFileSync(/** @type {string} */ (await csv.path()), 'utf8');
    const lines = csvText.trim().split('\r\n');
    assert.match(lines[0] ?? '', /^accelerator,id,custom,step_ms,/);
    assert.equal(lines.length, 1 + (await rowIds(page)).length);
    assert.ok(lines.some((line) => line.startsWith('"Lab <b>card</b>",custom-1,true,') || line.startsWith('Lab <b>card</b>,custom-1,true,')));
    const [json] = await Promise.all([page.waitForEvent('download'), page.locator('#export-json').click()]);
    const exported = JSON.parse(readFileSync(/** @type {string} */ (await json.path()), 'utf8'));
    assert.equal(exported.request.model.hf_config.n_embd, 1024, 'the request carries the config, not the preset');
    assert.equal(exported.response.results.length, (await rowIds(page)).length);
    const columns = Math.max(...exported.response.layers.map((/** @type {{ timing: number }} */ l) => l.timing)) + 1;
    assert.ok(
      exported.response.results.every((/** @type {{ layers?: { forward_ms: number[] } }} */ r) => r.layers?.forward_ms.length === columns),
      'per-layer timings for every accelerator, a column for each timing the layer table names',
    );
  });

  test('the theme toggle switches to dark and is remembered', async () => {
    const background = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    const light = await background();
    await page.locator('#theme').click(); // auto → light
    await page.locator('#theme').click(); // light → dark
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
    assert.notEqual(await background(), light);
    await page.screenshot({ path: join(ARTIFACTS, 'served-dark.png'), fullPage: true });
    await page.reload();
    await settled(page);
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark', 'remembered after reload');
    assert.deepEqual(browser.problems, []);
  });
});

describe('on a phone', () => {
  test('a 390 px wide screen shows everything without sideways scrolling of the page', async () => {
    const browser = await launch({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
    try {
      const { page } = browser;
      await page.goto(server.url);
      await settled(page);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `the page is ${overflow} px wider than the screen`);
      assert.ok(await page.locator('#time-chart svg').isVisible());
      const chartWidth = await page.locator('#time-chart svg').evaluate((svg) => svg.getBoundingClientRect().width);
      assert.ok(chartWidth <= 390, `chart ${chartWidth} px`);
      await page.screenshot({ path: join(ARTIFACTS, 'phone-390.png'), fullPage: true });
      await page.locator('#output').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ARTIFACTS, 'phone-390-results.png') });
      assert.deepEqual(browser.problems, []);
    } finally {
      await browser.close();
    }
  });
});
