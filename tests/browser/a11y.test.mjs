// Accessibility checked by a real tool (issue 21, point 7): axe-core (node_modules/axe-core, test-only)
// runs inside the page in Chromium on the served site and on the one file from file:// offline, each in
// the light and the dark theme, first after the learned result and then with every <details> opened,
// several GPUs (the "Step across GPUs" card) and a plan result shown, with an error shown, on a 390 px
// phone screen, and with the theme chosen by the button; and on the <prenet-calculator>
// element on another origin's page (both themes) and on the iframe mode. No violation of impact
// "serious" or "critical" may remain; every violation is printed with its nodes, and the full axe
// results are written to test-artifacts/axe-<name>.json. The keyboard walk is keyboard.test.mjs.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ARTIFACTS, FIXTURES, ROOT, expectWithin, launch, requireBuilt, servedOpener, settled, settledLearned, singleFileOpener, startServer } from './helpers.mjs';

/** axe-core's browser build; evaluated through the DevTools protocol, which the page's CSP does not govern. */
const AXE_SOURCE = readFileSync(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
/** The impacts that fail the test; "minor" and "moderate" ones are printed but allowed. */
const BLOCKING = new Set(['serious', 'critical']);

/**
 * Runs axe on the page's document (open shadow roots included) and saves the full results.
 * @param {import('playwright-core').Page | import('playwright-core').Frame} page
 * @param {string} name artifact name
 * @returns {Promise<string[]>} one line per node of each serious or critical violation
 */
async function axeProblems(page, name) {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE_SOURCE);
  // WCAG 2.x A and AA plus best practices; color-contrast covers both themes because each is run.
  const results = await page.evaluate(() => /** @type {any} */ (globalThis).axe.run(document, { resultTypes: ['violations'] }));
  writeFileSync(join(ARTIFACTS, `axe-${name}.json`), JSON.stringify(results, null, 1));
  /** @type {string[]} */
  const lines = [];
  for (const violation of results.violations) {
    const blocking = BLOCKING.has(violation.impact);
    for (const node of violation.nodes) {
      const line = `${violation.impact} ${violation.id} (${violation.help}) at ${node.target.join(' >> ')}: ${node.failureSummary?.replace(/\s+/g, ' ')}`;
      console.log(`# axe ${name}: ${line}`);
      if (blocking) lines.push(line);
    }
  }
  return lines;
}

/**
 * What axe leaves out: it cannot work out the background behind SVG text, nor does it check graphics.
 * Every visible chart text needs 4.5:1 against the background it is drawn on (WCAG 1.4.3) and every
 * bar or segment 3:1 (1.4.11), with the opacities of the mark and its groups blended in.
 * @returns {Promise<string[]>} one line per mark that falls short
 */
async function chartContrastProblems(/** @type {import('playwright-core').Page} */ page) {
  return page.evaluate(() => {
    const rgb = (/** @type {string} */ text) => (text.match(/[\d.]+/g) ?? []).map(Number);
    const linear = (/** @type {number} */ c) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
    const luminance = (/** @type {number[]} */ [r = 0, g = 0, b = 0]) => 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
    const ratio = (/** @type {number[]} */ a, /** @type {number[]} */ b) => {
      const [high, low] = [luminance(a), luminance(b)].sort((x, y) => y - x);
      return ((high ?? 0) + 0.05) / ((low ?? 0) + 0.05);
    };
    const parentOf = (/** @type {Element} */ el) => el.parentElement ?? /** @type {ShadowRoot} */ (el.getRootNode()).host ?? null;
    const background = (/** @type {Element} */ el) => {
      for (let at = /** @type {Element | null} */ (el); at; at = parentOf(at)) {
        const colour = rgb(getComputedStyle(at).backgroundColor);
        if (colour.length === 3 || (colour[3] ?? 0) > 0) return colour.slice(0, 3);
      }
      return [255, 255, 255];
    };
    const opacity = (/** @type {Element} */ el, /** @type {Element} */ root) => {
      let product = 1;
      for (let at = /** @type {Element | null} */ (el); at && at !== root.parentElement; at = at.parentElement) product *= Number(getComputedStyle(at).opacity);
      return product;
    };
    const roots = [document, ...[...document.querySelectorAll('*')].flatMap((el) => (el.shadowRoot ? [el.shadowRoot] : []))];
    /** @type {string[]} */
    const problems = [];
    for (const chart of roots.flatMap((root) => [...root.querySelectorAll('svg')])) {
      if (!chart.checkVisibility()) continue;
      const behind = background(chart);
      for (const mark of chart.querySelectorAll('text, rect')) {
        const style = getComputedStyle(mark);
        const paint = style.fill !== 'none' && rgb(style.fill)[3] !== 0 ? style.fill : style.stroke;
        if (paint === 'none' || mark.getBoundingClientRect().width === 0) continue;
        const alpha = opacity(mark, chart) * Number(mark.tagName === 'text' || style.fill === paint ? style.fillOpacity : style.strokeOpacity);
        const drawn = rgb(paint).slice(0, 3).map((c, i) => c * alpha + (behind[i] ?? 0) * (1 - alpha));
        const needed = mark.tagName === 'text' ? 4.5 : 3;
        const got = ratio(drawn, behind);
        if (got < needed) problems.push(`${chart.closest('[id]')?.id ?? 'svg'} ${mark.tagName}.${mark.getAttribute('class') ?? ''} "${(mark.textContent ?? '').slice(0, 30)}": ${got.toFixed(2)}:1 < ${needed}:1`);
      }
    }
    return problems;
  });
}

/** Fails with every serious or critical violation, after a full-page screenshot. */
async function expectAccessible(/** @type {import('playwright-core').Page} */ page, /** @type {string} */ name) {
  const problems = [...(await axeProblems(page, name)), ...(await chartContrastProblems(page))];
  await page.screenshot({ path: join(ARTIFACTS, `axe-${name}.png`), fullPage: true });
  assert.deepEqual(problems, [], `serious or critical violations (${name}); axe's full results in test-artifacts/axe-${name}.json`);
}

/** Both themes of the same page state: the automatic theme follows the emulated system setting. */
async function expectAccessibleInBothThemes(/** @type {import('playwright-core').Page} */ page, /** @type {string} */ name) {
  for (const colorScheme of /** @type {const} */ (['light', 'dark'])) {
    await page.emulateMedia({ colorScheme });
    const dark = await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches);
    assert.equal(dark, colorScheme === 'dark', `the ${colorScheme} theme is in effect`);
    await expectAccessible(page, `${name}-${colorScheme}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/**
 * The page checks, on one way of opening it.
 * @param {string} title
 * @param {() => Promise<import('./helpers.mjs').Target>} open
 * @param {() => void} [close]
 */
function pageChecks(title, open, close) {
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

    test('no serious or critical axe violation after the learned result, light and dark', async () => {
      const { page } = browser;
      await page.goto(target.url);
      await expectWithin(page, 'the learned result never showed', () => settledLearned(page), browser.problems);
      await expectAccessibleInBothThemes(page, `${target.name}-default`);
    });

    test('none with every <details> open, several GPUs and a plan result shown, light and dark', async () => {
      const { page } = browser;
      await page.evaluate(() => document.querySelectorAll('details').forEach((details) => (details.open = true)));
      await page.locator('#parallel-gpus').fill('8');
      await page.locator('#parallel-tensor').fill('2');
      await expectWithin(page, 'the 8-GPU scenario never rendered', () => settled(page), browser.problems);
      await page.locator('#parallel-section').waitFor({ state: 'visible' });
      await page.locator('#plan-budget').fill('2e9');
      await page.locator('#plan-max_gpus').fill('64');
      await page.locator('#plan-run').click();
      await page.waitForFunction(() => document.documentElement.dataset.planBusy === '0');
      assert.ok((await page.locator('#plan-results tbody tr').count()) > 0, 'a plan result is shown');
      await expectAccessibleInBothThemes(page, `${target.name}-advanced-plan`);
    });

    test('none with an error shown beside a field, light and dark', async () => {
      const { page } = browser;
      await page.locator('#batch_size').fill('-4');
      await expectWithin(page, 'the bad batch size was not answered', () => settled(page), browser.problems);
      await page.locator('#batch_size-error').waitFor({ state: 'visible' });
      await expectAccessibleInBothThemes(page, `${target.name}-error`);
      await page.locator('#batch_size').fill('32');
      await expectWithin(page, 'batch 32 was not computed again', () => settled(page), browser.problems);
    });

    test('none with the theme chosen by the Theme button (dark, then light)', async () => {
      const { page } = browser;
      const theme = page.locator('#theme');
      // auto → light → dark (theme.ts); the system setting stays light, so dark is the button's doing.
      for (let press = 0; press < 3 && (await page.evaluate(() => document.documentElement.dataset.theme)) !== 'dark'; press += 1) await theme.click();
      assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark', 'the Theme button reaches dark within a cycle');
      await expectAccessible(page, `${target.name}-button-dark`);
      await theme.click(); // dark → auto
      await theme.click(); // auto → light
      assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'light');
    });

    test('none on a 390 px phone screen, light and dark', async () => {
      const { page } = browser;
      await page.setViewportSize({ width: 390, height: 844 });
      try {
        // The charts are redrawn at the new width (on resize); wait until the time chart fits the phone.
        await page.waitForFunction(() => (document.querySelector('#time-chart svg')?.getBoundingClientRect().width ?? 1e9) <= 390);
        await expectAccessibleInBothThemes(page, `${target.name}-phone`);
      } finally {
        await page.setViewportSize({ width: 1400, height: 900 });
      }
    });

    test('no console error on the way', () => {
      assert.deepEqual(browser.problems, []);
    });
  });
}

const served = servedOpener();
pageChecks('axe on the served site', served.open, served.close);

const single = singleFileOpener();
pageChecks('axe on the single file from file://, offline', single.open, single.close);

describe('axe on the embeds: the element on another origin\'s page, and the iframe mode', () => {
  /** @type {{ url: string, stop: () => void }} */
  let site;
  /** @type {import('node:http').Server} */
  let docs;
  let docsOrigin = '';
  /** @type {Awaited<ReturnType<typeof launch>>} */
  let browser;

  before(async () => {
    requireBuilt();
    site = await startServer();
    const origin = new URL(site.url).origin;
    // The host page's policy as docs/EMBED.md asks for it (embed.test.mjs uses the same fixture).
    const csp = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src ${origin} 'wasm-unsafe-eval'; connect-src data: ${origin}; img-src data:" />`;
    const html = readFileSync(join(FIXTURES, 'embed-host.html'), 'utf8').replaceAll('{{CSP}}', csp).replaceAll('{{EMBED_SRC}}', `${origin}/embed.js`);
    // A real second server (another origin): routed responses would meet Chromium's private-network checks.
    docs = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(html);
    });
    await new Promise((resolve) => docs.listen(0, '127.0.0.1', () => resolve(undefined)));
    docsOrigin = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (docs.address()).port}`;
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
    site?.stop();
    docs?.close();
  });

  test('the <prenet-calculator> elements (one forced dark), light and dark host page', async () => {
    const { page } = browser;
    await page.goto(`${docsOrigin}/docs/guide.html`);
    await page.waitForFunction(() =>
      ['preset', 'inline'].every((id) => {
        const element = document.getElementById(id);
        return element?.dataset.state === 'ready' && element.dataset.predictor === 'learned';
      }),
    );
    await expectAccessibleInBothThemes(page, 'embed-element');
  });

  test('an element showing an error over its last numbers, light and dark', async () => {
    const { page } = browser;
    await page.evaluate(() => document.getElementById('preset')?.setAttribute('batch', '-4'));
    await page.waitForFunction(() => document.getElementById('preset')?.dataset.state === 'error');
    await expectAccessibleInBothThemes(page, 'embed-element-error');
  });

  test('the iframe mode (?embed=1), folded and unfolded, light and dark', async () => {
    const { page } = browser;
    await page.goto(`${site.url}?embed=1&preset=gpt2&hardware=h100-sxm,a100-sxm4-80gb,rtx-4090&batch=8&precision=bf16`);
    await expectWithin(page, 'the iframe mode never showed learned numbers', () => settledLearned(page), browser.problems);
    await expectAccessibleInBothThemes(page, 'embed-iframe-folded');
    await page.locator('#inputs-panel > summary').click();
    await page.locator('#batch_size').waitFor({ state: 'visible' });
    await expectAccessibleInBothThemes(page, 'embed-iframe-open');
  });

  test('no console error on the way', () => {
    assert.deepEqual(browser.problems, []);
  });
});
