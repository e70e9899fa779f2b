// A Hugging Face config whose model_type is not in the table is read generically: the page's "Read as" line
// and the <prenet-calculator> element show that as a caution (amber, the fields relied on), never as the
// green success of a table reading; and the precision select leaves the config's dtype in charge.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { servedBrowser, settled } from './helpers.mjs';

/** A Llama-style config under a made-up model_type, trained in bfloat16. */
const ZEBRA = {
  model_type: 'zebra_lm', hidden_size: 256, num_hidden_layers: 2, num_attention_heads: 8, num_key_value_heads: 2,
  intermediate_size: 512, vocab_size: 1000, max_position_embeddings: 128, hidden_act: 'silu', rms_norm_eps: 1e-6,
  rope_theta: 10000, tie_word_embeddings: false, torch_dtype: 'bfloat16',
};
const LLAMA = { ...ZEBRA, model_type: 'llama' };

const served = servedBrowser();

/** @param {import('playwright-core').Page} page */
const line = (page) => page.locator('#config-kind');

describe('the page', () => {
  test('a generic reading is a caution with the relied-on fields; a table reading stays green', async () => {
    const { page } = served.browser;
    // Accelerators with bf16 (the default list's V100 has none: the config's precision would be refused there).
    await page.goto(`${served.server.url}#preset=bert-base&hardware=h100-sxm,a100-sxm4-80gb&batch=32`);
    await settled(page);
    const green = await line(page).evaluate((el) => getComputedStyle(el).color);

    await page.locator('#config').fill(JSON.stringify(ZEBRA));
    await page.waitForFunction(() => /Caution/.test(document.querySelector('#config-kind')?.textContent ?? ''));
    await settled(page);
    const text = (await line(page).textContent()) ?? '';
    assert.match(text, /^Read as: Hugging Face config \(model_type "zebra_lm"\)\. Caution: model_type "zebra_lm" is not in the table; read generically as a Llama-style decoder from hidden_act, intermediate_size, rms_norm_eps, rope_theta/);
    assert.equal(await line(page).evaluate((el) => el.classList.contains('caution')), true);
    const amber = await line(page).evaluate((el) => getComputedStyle(el).color);
    assert.notEqual(amber, green, 'not the success colour');
    assert.notEqual(await line(page).evaluate((el) => getComputedStyle(el).borderLeftStyle), 'none');

    // The config's bfloat16 is the precision: the select sends none and says where the value came from.
    assert.equal(await page.locator('#precision').inputValue(), '');
    assert.match((await page.locator('#precision option').first().textContent()) ?? '', /^from the config \(BF16/);
    assert.match((await page.locator('#summary').textContent()) ?? '', /bf16/);

    await page.locator('#config').fill(JSON.stringify(LLAMA));
    await page.waitForFunction(() => /model_type "llama"/.test(document.querySelector('#config-kind')?.textContent ?? ''));
    await settled(page);
    assert.equal(await line(page).textContent(), 'Read as: Hugging Face config (model_type "llama").');
    assert.equal(await line(page).evaluate((el) => el.classList.contains('caution')), false);
    assert.equal(await line(page).evaluate((el) => getComputedStyle(el).color), green);

    // A chosen precision wins over the config's.
    await page.locator('#precision').selectOption('fp32');
    await settled(page);
    assert.match((await page.locator('#summary').textContent()) ?? '', /fp32/);
    assert.deepEqual(served.browser.problems, []);
  });
});

describe('the <prenet-calculator> element', () => {
  /** @type {import('node:http').Server} */
  let site;
  /** @type {string} */
  let origin;

  before(async () => {
    const embed = `${new URL(served.server.url).origin}/embed.js`;
    const page = `<!doctype html><html lang="en"><head><meta charset="utf-8" /><link rel="icon" href="data:," /><title>hf</title></head><body>
<prenet-calculator id="generic" predictor="roofline" hardware="h100-sxm"><script type="application/json">${JSON.stringify(ZEBRA)}</script></prenet-calculator>
<prenet-calculator id="table" predictor="roofline" hardware="h100-sxm"><script type="application/json">${JSON.stringify(LLAMA)}</script></prenet-calculator>
<script src="${embed}"></script></body></html>`;
    site = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(page);
    });
    await new Promise((resolve) => site.listen(0, '127.0.0.1', () => resolve(undefined)));
    origin = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (site.address()).port}`;
  });

  after(() => site?.close());

  test('shows a generic reading as a caution, a table reading without one', async () => {
    const { page } = served.browser;
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => ['generic', 'table'].every((id) => document.getElementById(id)?.dataset.state === 'ready'));
    /** @param {string} id */
    const status = (id) =>
      page.evaluate((elementId) => {
        const el = document.getElementById(elementId)?.shadowRoot?.querySelector('.status');
        return { text: el?.textContent ?? '', caution: el?.classList.contains('caution') ?? false };
      }, id);
    const generic = await status('generic');
    assert.match(generic.text, /^Caution: model_type "zebra_lm" is not in the table; read generically as a Llama-style decoder\./);
    assert.equal(generic.caution, true);
    assert.deepEqual(await status('table'), { text: '', caution: false });
    const result = await page.evaluate(() => /** @type {any} */ (document.getElementById('generic'))?.result);
    assert.equal(result.training.precision, 'bf16', 'the config\'s dtype, the element setting none');
  });
});
