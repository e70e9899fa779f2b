// Issue 21, point 6: the pictures. Strong scaling from plan mode (one line per accelerator, points at
// increasing GPU counts, the same numbers as the Plan table), time and memory by precision (one entry
// per precision of the catalogue, refused ones labelled with the core's reason), and the printable
// report (print emulation hides the form and the controls and shows the results; page.pdf writes a
// PDF). Run against the served site and the one-file build from file:// (offline), each opening its
// own link, so a change of the default scenario does not change what is tested.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { engine as nodeEngine } from '../../web/cli/node-engine.mjs';
import { ARTIFACTS, expectWithin, launch, servedOpener, settled, singleFileOpener } from './helpers.mjs';

/** A plan scenario: GPT-2 in BF16 on two accelerators, a budget of 1e9 tokens, up to 64 GPUs. */
const SCALING_LINK = 'preset=gpt2&hardware=h100-sxm,a100-sxm4-80gb&batch=64&precision=bf16&budget=1e9&budget_unit=tokens&max_gpus=64';
/** V100 lacks TF32, BF16 and FP8: the precision view must show them refused. */
const PRECISION_LINK = 'preset=gpt2&hardware=v100-sxm2-32gb,h100-sxm&batch=8';
const SCALING_HARDWARE = ['h100-sxm', 'a100-sxm4-80gb'];

const targets = [
  { title: 'pictures on the served site', ...servedOpener() },
  { title: 'pictures in the single file from file://, offline', ...singleFileOpener() },
];

for (const { title, open, close } of targets) {
  describe(title, () => {
    /** @type {import('./helpers.mjs').Target} */
    let target;
    /** @type {Awaited<ReturnType<typeof launch>>} */
    let browser;
    /** @type {import('playwright-core').Page} */
    let page;
    const within = (/** @type {string} */ what, /** @type {() => Promise<unknown>} */ wait) => expectWithin(page, what, wait, browser.problems);
    const shot = (/** @type {string} */ name) => page.screenshot({ path: join(ARTIFACTS, `pictures-${target.name}-${name}.png`), fullPage: true });

    before(async () => {
      target = await open();
      browser = await launch({ offline: target.offline });
      page = browser.page;
    });
    after(async () => {
      await browser?.close();
      close();
    });

    test('the scaling chart draws one line per accelerator at increasing GPU counts, with the Plan table\'s numbers', async () => {
      await page.goto(`${target.url}#${SCALING_LINK}`);
      await within('the scenario never rendered', () => settled(page));
      await within('the plan and its scaling never finished', () =>
        page.waitForFunction(() => document.documentElement.dataset.planBusy === '0' && document.documentElement.dataset.scalingBusy === '0', undefined, { timeout: 60_000 }),
      );
      assert.equal(await page.locator('#scaling-section').isVisible(), true, 'the Scaling section is shown after a plan');
      for (const chart of ['scaling-time-chart', 'scaling-cost-chart']) {
        const series = await page.locator(`#${chart} g.series`).evaluateAll((groups) => groups.map((g) => g.getAttribute('data-series')));
        assert.deepEqual([...series].sort(), [...SCALING_HARDWARE].sort(), `${chart}: one series per ticked accelerator`);
        for (const hardware of SCALING_HARDWARE) {
          const xs = await page.locator(`#${chart} g.series[data-series="${hardware}"] circle`).evaluateAll((cs) => cs.map((c) => Number(c.getAttribute('data-x'))));
          assert.ok(xs.length >= 3, `${chart} ${hardware}: points at several GPU counts (${xs})`);
          assert.ok(xs.every((x, i) => i === 0 || x > (xs[i - 1] ?? 0)), `${chart} ${hardware}: increasing GPU counts ${xs}`);
          assert.ok(xs.every((x) => Number.isInteger(Math.log2(x)) && x <= 64), `${chart} ${hardware}: powers of two up to the plan's 64 (${xs})`);
        }
      }
      const legend = (await page.locator('#scaling-time-chart .legend').textContent()) ?? '';
      assert.ok(/H100/.test(legend) && /A100/.test(legend), `the legend names the accelerators: ${legend}`);

      /** @type {(chart: string) => Promise<Map<string, number>>} points by "hardware@gpus" */
      const points = (chart) =>
        page.locator(`#${chart} circle`).evaluateAll((cs) =>
          cs.map((c) => [`${c.closest('g.series')?.getAttribute('data-series')}@${c.getAttribute('data-x')}`, Number(c.getAttribute('data-y'))]),
        ).then((entries) => new Map(/** @type {[string, number][]} */ (entries)));
      const time = await points('scaling-time-chart');
      const cost = await points('scaling-cost-chart');
      // The charts' numbers are the text table's.
      const tableRows = await page.locator('#scaling-table tbody tr').evaluateAll((rows) =>
        rows.map((r) => ({
          key: `${r.getAttribute('data-hardware')}@${r.getAttribute('data-gpus')}`,
          total: r.querySelector('[data-col="total_s"]')?.getAttribute('data-value') ?? null,
          cost: r.querySelector('[data-col="cost_usd"]')?.getAttribute('data-value') ?? null,
        })),
      );
      assert.equal(tableRows.length, SCALING_HARDWARE.length * 7, 'one table row per accelerator and GPU count 1..64');
      for (const row of tableRows) {
        assert.equal(row.total === null ? undefined : Number(row.total), time.get(row.key), `${row.key}: time point = table`);
        assert.equal(row.cost === null ? undefined : Number(row.cost), cost.get(row.key), `${row.key}: cost point = table`);
      }
      // The Plan table's layouts at a count are never faster than the scaling's best there, and its best one is it.
      const planRows = await page.locator('#plan-results tbody tr').evaluateAll((rows) =>
        rows.map((r) => ({ key: `${r.getAttribute('data-hardware')}@${r.querySelector('[data-col="gpus"]')?.getAttribute('data-value')}`, total: Number(r.querySelector('[data-col="total_s"]')?.getAttribute('data-value')) })),
      );
      assert.ok(planRows.length > 0, 'the plan listed layouts');
      /** @type {Map<string, number>} */
      const planBest = new Map();
      for (const { key, total } of planRows) planBest.set(key, Math.min(planBest.get(key) ?? Infinity, total));
      for (const [key, total] of planBest) assert.equal(time.get(key), total, `${key}: the scaling point is the Plan table's fastest layout there`);
      // And they are the Node engine's plan for that one count (the same core and learned calibration).
      for (const gpus of [1, 8, 64]) {
        const request = /** @type {import('../../web/src/types').PlanRequest} */ ({
          model: { preset: 'gpt2' },
          training: { batch_size: 64, precision: 'bf16', optimizer: 'adam' },
          hardware: SCALING_HARDWARE,
          plan: { tokens: 1e9, min_gpus: gpus, max_gpus: gpus, top: 1 },
        });
        const planned = await nodeEngine.plan(request);
        for (const result of planned.results) {
          assert.equal(time.get(`${result.hardware}@${gpus}`), result.by_time[0]?.total_s, `${result.hardware} at ${gpus} GPUs: the Node engine's fastest layout`);
          assert.equal(cost.get(`${result.hardware}@${gpus}`), result.by_cost[0]?.cost_usd, `${result.hardware} at ${gpus} GPUs: the Node engine's cheapest layout`);
        }
      }
      // Strong scaling: more GPUs never take longer for the fastest layout at the largest count than at one GPU.
      for (const hardware of SCALING_HARDWARE) assert.ok((time.get(`${hardware}@64`) ?? Infinity) < (time.get(`${hardware}@1`) ?? 0), `${hardware}: 64 GPUs faster than 1`);
      await page.locator('#scaling-section').screenshot({ path: join(ARTIFACTS, `pictures-${target.name}-scaling-section.png`) });
      await shot('scaling');
    });

    test('time and memory by precision: computed when opened, one entry per precision, refused ones with the core\'s reason', async () => {
      await page.goto(`${target.url}#${PRECISION_LINK}`);
      await page.reload(); // a hash change alone keeps the previous page's state
      await within('the scenario never rendered', () => settled(page));
      assert.equal(await page.locator('#precision-section').evaluate((d) => /** @type {HTMLDetailsElement} */ (d).open), false, 'folded by default');
      assert.equal(await page.locator('#precision-table tbody tr').count(), 0, 'nothing computed before it is opened');
      await page.locator('#precision-section > summary').click();
      await within('the precisions were never computed', () =>
        page.waitForFunction(() => document.documentElement.dataset.precisionBusy === '0' && document.querySelectorAll('#precision-table tbody tr').length > 0),
      );
      const catalog = await nodeEngine.catalog();
      const precisions = catalog.options.find((o) => o.key === 'precision')?.values ?? [];
      assert.ok(precisions.length >= 5, `the catalogue's precisions: ${precisions}`);
      for (const hardware of ['v100-sxm2-32gb', 'h100-sxm']) {
        await page.locator('#precision-hardware').selectOption(hardware);
        await within(`the precisions on ${hardware} were never computed`, () =>
          page.waitForFunction(
            (id) => document.documentElement.dataset.precisionBusy === '0' && (document.querySelector('#precision-note')?.textContent ?? '').length > 0 && /** @type {HTMLSelectElement} */ (document.querySelector('#precision-hardware')).value === id,
            hardware,
          ),
        );
        const rows = await page.locator('#precision-table tbody tr').evaluateAll((trs) =>
          trs.map((tr) => ({
            precision: tr.getAttribute('data-precision'),
            refused: tr.getAttribute('data-refused') === '1',
            step: tr.querySelector('[data-col="step_ms"]')?.textContent ?? '',
            memory: Number(tr.querySelector('[data-col="memory_gb"]')?.getAttribute('data-value')),
          })),
        );
        assert.deepEqual(rows.map((r) => r.precision), precisions, `${hardware}: one row per precision, none dropped`);
        let refusedCount = 0;
        for (const row of rows) {
          const request = /** @type {import('../../web/src/types').PredictRequest} */ ({ model: { preset: 'gpt2' }, training: { batch_size: 8, precision: row.precision ?? '' }, hardware: [hardware] });
          const expected = await nodeEngine.predict(request).then(
            (response) => ({ ok: true, memory: response.results[0]?.memory_gb, message: '' }),
            (error) => ({ ok: false, memory: NaN, message: String(error.message) }),
          );
          assert.equal(row.refused, !expected.ok, `${hardware} ${row.precision}: refused exactly when the core refuses it`);
          if (expected.ok) assert.equal(row.memory, expected.memory, `${hardware} ${row.precision}: memory as the engine computes it`);
          else {
            refusedCount += 1;
            assert.equal(row.step, `refused: ${expected.message}`, `${hardware} ${row.precision}: the core's reason`);
          }
        }
        if (hardware === 'v100-sxm2-32gb') assert.ok(refusedCount >= 1, 'V100 refuses some precisions');
        const chartRows = await page.locator('#precision-time-chart g.row').evaluateAll((gs) => gs.map((g) => g.textContent ?? ''));
        assert.equal(chartRows.length, precisions.length, `${hardware}: one chart entry per precision`);
        assert.equal(chartRows.filter((t) => /refused/.test(t)).length, refusedCount, `${hardware}: refused entries labelled in the chart`);
        assert.equal(await page.locator('#precision-memory-chart g.row').count(), precisions.length);
        await page.locator('#precision-section').screenshot({ path: join(ARTIFACTS, `pictures-${target.name}-precision-${hardware}-section.png`) });
        await shot(`precision-${hardware}`);
      }
    });

    test('the printed report hides the form and controls, shows the results, the link and the version; page.pdf writes it', async () => {
      await page.goto(`${target.url}#${SCALING_LINK}`);
      await page.reload();
      await within('the plan and its scaling never finished', () =>
        page.waitForFunction(() => document.documentElement.dataset.busy === '0' && document.documentElement.dataset.planBusy === '0' && document.documentElement.dataset.scalingBusy === '0', undefined, { timeout: 60_000 }),
      );
      // The dialog itself cannot be driven headless: record that the button asked for it.
      await page.evaluate(() => {
        window.print = () => {
          document.documentElement.dataset.printed = '1';
        };
      });
      assert.equal(await page.locator('#report-meta').isVisible(), false, 'the report header is for paper only');
      await page.locator('#print-report').click();
      await page.waitForFunction(() => document.documentElement.dataset.printed === '1');
      const link = (await page.locator('#report-link').textContent()) ?? '';
      assert.equal(link, page.url(), 'the printed link is the scenario\'s');
      assert.match(link, /preset=gpt2/);
      /** @type {Record<string, string | null | undefined>} */
      const inputs = await page.locator('#report-inputs dt').evaluateAll((dts) => Object.fromEntries(dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])));
      const linked = Object.fromEntries(new URLSearchParams(SCALING_LINK));
      for (const [name, value] of Object.entries(linked)) {
        const shown = name === 'hardware' ? inputs[name]?.split(',').sort().join(',') : inputs[name];
        const expected = name === 'hardware' ? value.split(',').sort().join(',') : value;
        assert.equal(Number(shown) || shown, Number(expected) || expected, `the printed inputs say ${name} = ${value}`);
      }
      assert.match((await page.locator('#report-version').textContent()) ?? '', /^Core \S+; predictor \S+\.$/);
      assert.match((await page.locator('#report-title').textContent()) ?? '', /gpt2/i);

      await page.emulateMedia({ media: 'print' });
      try {
        for (const hidden of ['#inputs', '#print-report', '#share', '#theme', '#plan-form', '#export-csv']) {
          assert.equal(await page.locator(hidden).isVisible(), false, `${hidden} is not printed`);
        }
        for (const shown of ['#report-meta', '#summary', '#results', '#memory-table', '#time-chart svg', '#scaling-time-chart svg', '#plan-results', '#version']) {
          assert.equal(await page.locator(shown).first().isVisible(), true, `${shown} is printed`);
        }
        const visibleControls = await page.evaluate(
          () =>
            [...document.querySelectorAll('button, select, input, textarea')]
              // The results table's sortable headings are buttons on screen and the column names on paper.
              .filter((el) => el.closest('th') === null && /** @type {HTMLElement} */ (el).offsetParent !== null)
              .map((el) => el.id || el.tagName),
        );
        assert.deepEqual(visibleControls, [], 'no control is printed');
        const headings = await page.locator('#results thead th').evaluateAll((ths) => ths.map((th) => (/** @type {HTMLElement} */ (th)).innerText.trim()));
        assert.ok(headings.length > 3 && headings.every((h) => h.length > 0), `the results table's column names are printed: ${headings.join(' | ')}`);
        // The report header comes first on paper.
        const firstCard = await page.evaluate(() => {
          const cards = [...document.querySelectorAll('#output > .card')].filter((el) => /** @type {HTMLElement} */ (el).offsetParent !== null);
          cards.sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
          return cards[0]?.id ?? '';
        });
        assert.equal(firstCard, 'report-meta');
        // An A4 page's width at 96 dpi (210 mm less the margins is narrower still): what paper shows.
        await page.setViewportSize({ width: 794, height: 1123 });
        await page.waitForTimeout(300); // the charts redraw at the new width (ResizeObserver, one frame)
        await shot('print');
        for (const format of /** @type {const} */ (['A4', 'Letter'])) {
          const pdf = await page.pdf({ format, printBackground: true });
          assert.ok(pdf.length > 10_000, `${format}: a PDF of ${pdf.length} bytes`);
          assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
          writeFileSync(join(ARTIFACTS, `pictures-${target.name}-report-${format}.pdf`), pdf);
        }
      } finally {
        await page.emulateMedia({ media: 'screen' });
        await page.setViewportSize({ width: 1400, height: 900 });
      }
      assert.deepEqual(browser.problems, [], 'no console errors');
    });
  });
}
