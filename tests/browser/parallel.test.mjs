// Issue 7 on the page: GPUs and parallelism in the form, the step's parts and the memory of one GPU
// in the results, the core's errors beside the parallel boxes, the advice that makes a model fit,
// the Plan panel, and all of it in a shared link. Served site, plus the one file from file://.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ARTIFACTS, SMALL_LINK, chooseHardware, choosePreset, expectWithin, launch, requireBuilt, settled, settledLearned, singleFileTarget, startServer } from './helpers.mjs';

/** @type {{ url: string, stop: () => void }} */
let server;

before(async () => {
  requireBuilt();
  server = await startServer();
});

after(() => server?.stop());

/**
 * Raw numbers of one column of a table, by accelerator.
 * @param {import('playwright-core').Page} page
 * @param {string} table
 * @param {string} col
 * @returns {Promise<Record<string, number>>}
 */
async function column(page, table, col) {
  return page.locator(`#${table} tbody tr[data-hardware]`).evaluateAll(
    (rows, c) => Object.fromEntries(rows.map((row) => [row.getAttribute('data-hardware'), Number(row.querySelector(`[data-col="${c}"]`)?.getAttribute('data-value'))])),
    col,
  );
}

describe('GPUs and parallelism on the served page', () => {
  /** @type {Awaited<ReturnType<typeof launch>>} */
  let browser;
  /** @type {import('playwright-core').Page} */
  let page;
  const within = (/** @type {string} */ what, /** @type {() => Promise<unknown>} */ wait) => expectWithin(page, what, wait, browser.problems);

  before(async () => {
    browser = await launch();
    page = browser.page;
    await page.goto(`${server.url}${SMALL_LINK}`);
    await within('the small scenario never rendered', () => settled(page));
  });

  after(async () => {
    assert.deepEqual(browser?.problems ?? [], [], 'no console error');
    await browser?.close();
  });

  test('one GPU: no step-parts card, but the memory breakdown is shown', async () => {
    assert.equal(await page.locator('#parallel-section').isHidden(), true);
    assert.equal(await page.locator('#memory-table tbody tr').count(), 3);
    const weights = await column(page, 'memory-table', 'weights_gb');
    assert.ok(Object.values(weights).every((v) => v > 0), JSON.stringify(weights));
    assert.equal(await page.locator('#memory-chart svg line.limit').count(), 3, 'a device-memory line per accelerator');
  });

  test('8 GPUs with tensor 2: results show exposed communication and memory per GPU', async () => {
    await choosePreset(page, 'gpt2');
    await page.locator('#parallel-gpus').fill('8');
    await page.locator('#parallel-tensor').fill('2');
    // Learned numbers, so the columns below are read from one and the same result.
    await within('8 GPUs never rendered', () => settledLearned(page));
    assert.equal(await page.locator('#parallel-section').isVisible(), true);
    assert.match((await page.locator('#summary').textContent()) ?? '', /8 GPUs = data 4 × tensor 2 × pipeline 1/);
    assert.equal(await page.locator('#parallel-data').getAttribute('placeholder'), '4 (derived)', 'the derived degree is shown in its box');
    const tensor = await column(page, 'step-parts', 'comm_tensor_ms');
    const data = await column(page, 'step-parts', 'comm_data_ms');
    const compute = await column(page, 'step-parts', 'compute_ms');
    const step = await column(page, 'step-parts', 'step_ms');
    assert.equal(Object.keys(tensor).length, 3);
    for (const id of Object.keys(tensor)) {
      assert.ok((tensor[id] ?? 0) > 0 && (data[id] ?? 0) > 0, `${id}: tensor ${tensor[id]} and data ${data[id]} communication`);
      assert.ok((compute[id] ?? NaN) < (step[id] ?? NaN), `${id}: compute ${compute[id]} is part of the step ${step[id]}`);
      const shown = Number(await page.locator(`#results tr[data-hardware="${id}"] td[data-col="step_ms"]`).getAttribute('data-value'));
      assert.equal(shown, step[id], `${id}: the table's step is the parts' sum`);
    }
    assert.ok((await page.locator('#step-chart svg rect.seg-comm-tensor').count()) === 3, 'a tensor-communication segment per accelerator');
    assert.match((await page.locator('#step-parts td.links').first().textContent()) ?? '', /tensor: \S+ [\d.]+ GB\/s in nodes/);
    assert.equal(await page.locator('#memory-heading').textContent(), 'Memory per GPU');
    const temporary = await column(page, 'memory-table', 'temporary_gb');
    assert.ok(Object.values(temporary).every((v) => v > 0), `communication buffers per GPU: ${JSON.stringify(temporary)}`);

    const [csv] = await Promise.all([page.waitForEvent('download'), page.locator('#export-csv').click()]);
    const lines = readFileSync(/** @type {string} */ (await csv.path()), 'utf8').trim().split('\r\n');
    const header = (lines[0] ?? '').split(',');
    const row = (lines[1] ?? '').split(',');
    assert.equal(row[header.indexOf('gpus')], '8');
    assert.equal(row[header.indexOf('tensor')], '2');
    assert.ok(Number(row[header.indexOf('communication_tensor_ms')]) > 0);
    await page.screenshot({ path: join(ARTIFACTS, 'parallel-8-gpus.png'), fullPage: true });
  });

  test('sequence parallelism on with tensor 2: fewer activations per GPU, the same tensor communication', async () => {
    const activations = await column(page, 'memory-table', 'activations_gb');
    const tensor = await column(page, 'step-parts', 'comm_tensor_ms');
    await page.locator('#parallel-sequence_parallel').selectOption('on');
    await within('sequence parallelism never rendered', () => settledLearned(page));
    assert.match((await page.locator('#summary').textContent()) ?? '', /, sequence parallelism/);
    const after = await column(page, 'memory-table', 'activations_gb');
    for (const id of Object.keys(activations)) {
      assert.ok((after[id] ?? NaN) < (activations[id] ?? NaN), `${id}: activations ${after[id]} < ${activations[id]} GB`);
    }
    assert.deepEqual(await column(page, 'step-parts', 'comm_tensor_ms'), tensor, 'reduce-scatter + all-gather move what the all-reduce did');
    await page.locator('#share').click();
    assert.match(page.url(), /[#&]sp=1/);
    await page.locator('#parallel-sequence_parallel').selectOption('off');
    await settled(page);
    assert.doesNotMatch((await page.locator('#summary').textContent()) ?? '', /sequence parallelism/);
  });

  test('fused attention: a faster step and fewer activations, in the summary and the link', async () => {
    const step = await column(page, 'results', 'step_ms');
    const activations = await column(page, 'memory-table', 'activations_gb');
    await page.locator('#attention').selectOption('flash');
    await within('fused attention never rendered', () => settledLearned(page));
    assert.match((await page.locator('#summary').textContent()) ?? '', /, fused attention/);
    const faster = await column(page, 'results', 'step_ms');
    const smaller = await column(page, 'memory-table', 'activations_gb');
    for (const id of Object.keys(step)) {
      assert.ok((faster[id] ?? NaN) < (step[id] ?? NaN), `${id}: step ${faster[id]} < ${step[id]} ms`);
      assert.ok((smaller[id] ?? NaN) < (activations[id] ?? NaN), `${id}: activations ${smaller[id]} < ${activations[id]} GB`);
    }
    await page.locator('#share').click();
    assert.match(page.url(), /[#&]attention=flash/);
    await page.locator('#attention').selectOption('eager');
    await settled(page);
    assert.doesNotMatch((await page.locator('#summary').textContent()) ?? '', /fused attention/);
  });

  test('Megatron kernels under fp16: fewer activations than PyTorch\'s, in the summary and the link', async () => {
    const precision = await page.locator('#precision').inputValue();
    /** Waits for a learned render whose summary contains `text`. */
    const summaryShows = async (/** @type {string} */ text) => {
      await page.waitForFunction((t) => (document.getElementById('summary')?.textContent ?? '').includes(t), text);
      await settledLearned(page);
    };
    await page.locator('#precision').selectOption('fp16');  // 16-bit on every default GPU (a V100 has no bf16)
    await within('fp16 never rendered', () => summaryShows('fp16'));
    const activations = await column(page, 'memory-table', 'activations_gb');
    await page.locator('#kernels').selectOption('megatron');
    await within('Megatron kernels never rendered', () => summaryShows(', Megatron kernels'));
    const smaller = await column(page, 'memory-table', 'activations_gb');
    for (const id of Object.keys(activations)) {
      assert.ok((smaller[id] ?? NaN) < (activations[id] ?? NaN), `${id}: activations ${smaller[id]} < ${activations[id]} GB`);
    }
    await page.locator('#share').click();
    assert.match(page.url(), /[#&]kernels=megatron/);
    await page.locator('#kernels').selectOption('pytorch');
    await page.locator('#precision').selectOption(precision);
    await settled(page);
    assert.doesNotMatch((await page.locator('#summary').textContent()) ?? '', /Megatron kernels/);
  });

  test('foreach optimizer kernels: a slower optimizer step, in the summary and the link', async () => {
    const optimizer = await column(page, 'results', 'step_ms');
    await page.locator('#optimizer-impl').selectOption('foreach');
    await within('foreach optimizer never rendered', () => settledLearned(page));
    assert.match((await page.locator('#summary').textContent()) ?? '', /\(foreach\)/);
    const slower = await column(page, 'results', 'step_ms');
    for (const id of Object.keys(optimizer)) {
      assert.ok((slower[id] ?? NaN) > (optimizer[id] ?? NaN), `${id}: step ${slower[id]} > ${optimizer[id]} ms`);
    }
    await page.locator('#share').click();
    assert.match(page.url(), /[#&]optimizer_impl=foreach/);
    await page.locator('#optimizer-impl').selectOption('fused');
    await settled(page);
    assert.doesNotMatch((await page.locator('#summary').textContent()) ?? '', /\(foreach\)/);
  });

  test('memory format: a select built from the core\'s table; NCHW under fp16 slows ResNet-50, and the link says so', async () => {
    const select = page.locator('#memory-format');
    assert.deepEqual(await select.locator('option').evaluateAll((options) => options.map((o) => /** @type {HTMLOptionElement} */ (o).value)), ['', 'channels_last', 'nchw']);
    const preset = await page.locator('#preset-list input:checked').getAttribute('value');
    const precision = await page.locator('#precision').inputValue();
    await choosePreset(page, 'resnet50');
    await page.locator('#precision').selectOption('fp16');
    await page.waitForFunction(() => /resnet50/.test(document.querySelector('#summary')?.textContent ?? ''));
    await within('ResNet-50 never rendered', () => settledLearned(page));
    const step = await column(page, 'results', 'step_ms');
    await select.selectOption('nchw');
    await within('NCHW never rendered', () => settledLearned(page));
    const slower = await column(page, 'results', 'step_ms');
    for (const id of Object.keys(step)) {
      assert.ok((slower[id] ?? NaN) > (step[id] ?? NaN), `${id}: step ${slower[id]} > ${step[id]} ms`);
    }
    await page.locator('#share').click();
    assert.match(page.url(), /[#&]memory_format=nchw/);
    // Back to the settings the tests that follow build on.
    await select.selectOption('');
    await page.locator('#precision').selectOption(precision);
    await choosePreset(page, preset ?? 'bert-base');
    await settled(page);
    await page.locator('#share').click();
    assert.doesNotMatch(page.url(), /memory_format/);
  });

  test('degrees that do not multiply to the GPU count: the core\'s error beside GPUs', async () => {
    await page.locator('#parallel-data').fill('2');
    await settled(page);
    const box = page.locator('#parallel-gpus-error');
    assert.match((await box.textContent()) ?? '', /^parallel\.gpus: 8 GPUs but data x tensor x context x pipeline = 2 x 2 x 1 x 1 = 4/);
    assert.equal(await page.locator('#parallel-gpus').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('#output').evaluate((el) => el.classList.contains('stale')), true, 'the last results stay, dimmed');
    await page.locator('#parallel-data').fill('');
    await settled(page);
    assert.equal(await box.isHidden(), true);
  });

  test('tensor 3 for a model with 16 heads: the core\'s error beside Tensor parallel', async () => {
    await choosePreset(page, 'gpt2-medium');
    await page.locator('#parallel-gpus').fill('');
    await page.locator('#parallel-tensor').fill('3');
    await settled(page);
    assert.match((await page.locator('#parallel-tensor-error').textContent()) ?? '', /^parallel\.tensor: /);
    assert.equal(await page.locator('#parallel-tensor').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('#parallel-gpus').getAttribute('aria-invalid'), null);
  });

  test('a bad link override opens the advanced box and shows its error there', async () => {
    await page.locator('#parallel-tensor').fill('2');
    assert.equal(await page.locator('#parallel-links').evaluate((d) => /** @type {HTMLDetailsElement} */ (d).open), false, 'collapsed at first');
    await page.locator('#parallel-links > summary').click();
    await page.locator('#parallel-inter_node-bandwidth_gbs').fill('-5');
    await settled(page);
    await page.locator('#parallel-links > summary').click(); // closed again by the user
    await page.locator('#parallel-gpus').fill('4'); // the error is shown again after this change
    await settled(page);
    assert.match((await page.locator('#parallel-inter_node-error').textContent()) ?? '', /^parallel\.inter_node\.bandwidth_gbs: /);
    assert.equal(await page.locator('#parallel-inter_node-bandwidth_gbs').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('#parallel-links').evaluate((d) => /** @type {HTMLDetailsElement} */ (d).open), true, 'opened to show the error');
    // A valid override replaces the catalogue's value in every result.
    await page.locator('#parallel-inter_node-bandwidth_gbs').fill('7.5');
    await page.locator('#parallel-gpus').fill('16');
    await page.locator('#parallel-gpus_per_node').fill('4');
    await settled(page);
    const links = await page.locator('#step-parts td.links').allTextContents();
    assert.ok(links.every((text) => /data: \S+ 7\.5 GB\/s across nodes/.test(text)), links.join(' | '));
  });

  test('a model that does not fit gets the core\'s advice, and applying one makes it fit', async () => {
    await choosePreset(page, 'llama-2-7b');
    await chooseHardware(page, ['a100-sxm4-80gb', 'h100-sxm']);
    for (const id of ['tensor', 'inter_node-bandwidth_gbs', 'gpus_per_node']) await page.locator(`#parallel-${id}`).fill('');
    await page.locator('#parallel-gpus').fill('8');
    await page.locator('#precision').selectOption('bf16');
    await settled(page);
    const fits = await column(page, 'memory-table', 'memory_gb');
    assert.ok(Object.values(fits).every((gb) => gb > 80), `7B with Adam on 8-way data parallel needs more than 80 GB: ${JSON.stringify(fits)}`);
    const advice = page.locator('#memory-advice li[data-hardware="h100-sxm"] button');
    assert.ok((await advice.count()) > 0, 'at least one change that fits');
    await page.locator('#memory-chart').screenshot({ path: join(ARTIFACTS, 'parallel-memory-nofit.png') });
    await advice.first().click();
    await settled(page);
    assert.equal(await page.locator('#memory-table tr[data-hardware="h100-sxm"] td[data-col="fits"]').getAttribute('data-value'), 'true');
  });

  test('the parallel settings survive a shared link', async () => {
    await page.locator('#parallel-zero_stage').selectOption('1');
    await page.locator('#parallel-recompute').selectOption('selective');
    await page.locator('#parallel-sequence_parallel').selectOption('on');
    await page.locator('#parallel-inter_node-latency_us').fill('9');
    await settled(page);
    const expected = await page.evaluate(() =>
      Object.fromEntries([...document.querySelectorAll('#parallel-fields input, #parallel-fields select')].map((el) => [el.id, /** @type {HTMLInputElement} */ (el).value])),
    );
    await settledLearned(page);
    const steps = await column(page, 'step-parts', 'step_ms');
    await page.locator('#share').click();
    const url = page.url();
    assert.match(url, /gpus=\d+/);
    const other = await browser.context.newPage();
    await other.goto(url);
    await settledLearned(other);
    const restored = await other.evaluate(() =>
      Object.fromEntries([...document.querySelectorAll('#parallel-fields input, #parallel-fields select')].map((el) => [el.id, /** @type {HTMLInputElement} */ (el).value])),
    );
    assert.deepEqual(restored, expected);
    assert.equal(await other.locator('#parallel-links').evaluate((d) => /** @type {HTMLDetailsElement} */ (d).open), true, 'a link override is shown, not folded away');
    assert.deepEqual(await column(other, 'step-parts', 'step_ms'), steps, 'the same numbers');
    await other.close();
  });

  test('the Plan panel ranks layouts for llama-2-7b in the engine; the top row fits; Use copies it', async () => {
    await page.locator('#plan-budget').fill('2e9');
    await page.locator('#plan-max_gpus').fill('64');
    await page.locator('#plan-run').click();
    await page.waitForFunction(() => document.documentElement.dataset.planBusy === '0');
    assert.equal(await page.locator('#plan-error').isHidden(), true, (await page.locator('#plan-error').textContent()) ?? '');
    const rows = page.locator('#plan-results tbody tr');
    assert.ok((await rows.count()) > 0, 'some layouts');
    const top = rows.first();
    const memory = Number(await top.locator('[data-col="memory_gb"]').getAttribute('data-value'));
    const device = Number(await top.locator('[data-col="memory_gb"]').getAttribute('data-device'));
    assert.ok(memory > 0 && memory <= device, `the top layout fits: ${memory} of ${device} GB`);
    const values = (/** @type {string} */ col) => page.locator(`#plan-results tbody td[data-col="${col}"]`).evaluateAll((cells) => cells.map((c) => Number(c.getAttribute('data-value'))));
    const times = await values('total_s');
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'ranked by time');
    assert.ok((await values('gpus')).every((g) => g >= 1 && g <= 64));
    const note = (await page.locator('#plan-note').textContent()) ?? '';
    const ms = Number(/Searched in (\d+) ms/.exec(note)?.[1]);
    assert.ok(ms < 5000, `planned in ${ms} ms: ${note}`);
    console.log(`# plan, llama-2-7b, 2 accelerators, up to 64 GPUs, in the page's worker: ${ms} ms`);

    await page.locator('#plan-rank').selectOption('cost');
    const costs = await values('cost_usd');
    assert.deepEqual(costs, [...costs].sort((a, b) => a - b), 'ranked by cost, without searching again');

    await page.locator('#plan-rank').selectOption('time');
    const [hardware, gpus] = [await top.getAttribute('data-hardware'), await top.locator('[data-col="gpus"]').getAttribute('data-value')];
    await top.locator('button').click();
    await settled(page);
    assert.equal(await page.locator('#parallel-gpus').inputValue(), gpus);
    assert.deepEqual(await page.locator('#results tbody tr[data-hardware]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-hardware'))), [hardware]);
    assert.equal(await page.locator(`#memory-table tr[data-hardware="${hardware}"] td[data-col="fits"]`).getAttribute('data-value'), 'true', 'the copied layout fits');
    await page.screenshot({ path: join(ARTIFACTS, 'parallel-plan.png'), fullPage: true });
  });

  test('a budget in a shared link shows its plan on opening', async () => {
    await page.locator('#share').click();
    assert.match(page.url(), /budget=2000000000&budget_unit=tokens/);
    const other = await browser.context.newPage();
    await other.goto(page.url());
    await other.waitForFunction(() => document.documentElement.dataset.planBusy === '0');
    assert.equal(await other.locator('#plan-budget').inputValue(), '2000000000');
    assert.equal(await other.locator('#plan-max_gpus').inputValue(), '64');
    assert.ok((await other.locator('#plan-results tbody tr').count()) > 0);
    await other.close();
  });

  test('a plan the core refuses names its field beside the box', async () => {
    await page.locator('#plan-max_gpus').fill('0');
    await page.locator('#plan-run').click();
    await page.waitForFunction(() => document.documentElement.dataset.planBusy === '0');
    assert.match((await page.locator('#plan-max_gpus-error').textContent()) ?? '', /^plan\.max_gpus: /);
    assert.equal(await page.locator('#plan-max_gpus').getAttribute('aria-invalid'), 'true');
    await page.locator('#plan-max_gpus').fill('64');
  });
});

describe('GPUs and parallelism in the one file from file://, offline', () => {
  test('8 GPUs show communication and memory per GPU', async () => {
    const browser = await launch({ offline: true });
    try {
      await browser.page.goto(`${singleFileTarget().url}#preset=gpt2&gpus=8&tensor=2&hardware=h100-sxm`);
      await settled(browser.page);
      const tensor = await column(browser.page, 'step-parts', 'comm_tensor_ms');
      assert.ok((tensor['h100-sxm'] ?? 0) > 0, JSON.stringify(tensor));
      assert.equal(await browser.page.locator('#memory-table tbody tr').count(), 1);
      assert.deepEqual(browser.blocked, []);
      assert.deepEqual(browser.problems, []);
    } finally {
      await browser.close();
    }
  });
});
