// Issue 19 on the served page: the Fine-tuning fieldset built from the core's table (the LoRA fields only
// for lora and qlora, the trained blocks only for freeze), the request and the link it makes, the core's
// error beside the rank box, the example links, and the element's fine-tuning attributes.
// Written so that it passes whether or not the core models LoRA yet: a method the core refuses shows its
// error beside the method's select; one it models shows the fine-tune in the summary.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ARTIFACTS, SMALL_LINK, choosePreset, expectWithin, launch, requireBuilt, settled, startServer } from './helpers.mjs';

/** @type {{ url: string, stop: () => void }} */
let server;

before(async () => {
  requireBuilt();
  server = await startServer();
});

after(() => server?.stop());

/** The visible error boxes, by id, and their text. @param {import('playwright-core').Page} page */
async function errors(page) {
  return page.locator('#inputs p.error:not([hidden])').evaluateAll((boxes) => Object.fromEntries(boxes.map((box) => [box.id, box.textContent ?? ''])));
}

describe('fine-tuning on the served page', () => {
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

  test('a Fine-tuning fieldset with the method; LoRA fields hidden for a full fine-tune', async () => {
    assert.equal(await page.locator('fieldset#finetune legend').textContent(), 'Fine-tuning');
    assert.equal(await page.locator('#finetune-method').inputValue(), 'full');
    for (const id of ['finetune-rank', 'finetune-alpha', 'finetune-dropout', 'finetune-targets', 'finetune-trainable-layers', 'finetune-base-precision']) {
      assert.equal(await page.locator(`#${id}`).isVisible(), false, `#${id} hidden for full`);
    }
    assert.equal(await page.locator('#finetune-targets').getAttribute('placeholder'), 'q_proj, v_proj (default)');
  });

  test('LoRA with rank 8: the fields show, the link carries them, and the core answers beside the fields or in the summary', async () => {
    await choosePreset(page, 'gpt2');
    await page.locator('#finetune-method').selectOption('lora');
    for (const id of ['finetune-rank', 'finetune-alpha', 'finetune-dropout', 'finetune-targets', 'finetune-base-precision']) {
      assert.equal(await page.locator(`#${id}`).isVisible(), true, `#${id} shown for lora`);
    }
    assert.equal(await page.locator('#finetune-trainable-layers').isVisible(), false);
    await page.locator('#finetune-rank').fill('8');
    await page.locator('#finetune-targets').fill('q_proj, v_proj, o_proj');
    await within('LoRA never settled', () => settled(page));
    await page.locator('#share').click();
    const hash = new URLSearchParams(new URL(page.url()).hash.slice(1));
    assert.equal(hash.get('finetune'), 'lora');
    assert.equal(hash.get('lora_rank'), '8');
    assert.equal(hash.get('lora_targets'), 'q_proj,v_proj,o_proj');
    const shown = await errors(page);
    const summary = (await page.locator('#summary').textContent()) ?? '';
    if (Object.keys(shown).length > 0) {
      // Not modelled yet: the refusal sits beside a fine-tuning field and names it.
      const [[box, text] = ['', '']] = Object.entries(shown);
      assert.match(box, /^finetune/, `the error is in the Fine-tuning fieldset: ${JSON.stringify(shown)}`);
      assert.match(text, /^training\.finetune/);
    } else {
      assert.match(summary, /Fine-tuning\s*LoRA r8 on q_proj, v_proj, o_proj/);
    }
  });

  test('rank 0: the core\'s error appears beside the rank box, which is marked invalid', async () => {
    await page.locator('#finetune-rank').fill('0');
    await within('rank 0 never settled', () => settled(page));
    const box = page.locator('#finetune-rank-error');
    assert.equal(await box.isVisible(), true);
    assert.match((await box.textContent()) ?? '', /^training\.finetune\.rank: /);
    assert.equal(await page.locator('#finetune-rank').getAttribute('aria-invalid'), 'true');
    await page.locator('#finetune-rank').fill('');
    await settled(page);
    assert.equal(await box.isVisible(), false);
  });

  test('freeze: the trained blocks show, the LoRA fields hide and leave the link', async () => {
    await page.locator('#finetune-method').selectOption('freeze');
    assert.equal(await page.locator('#finetune-trainable-layers').isVisible(), true);
    assert.equal(await page.locator('#finetune-rank').isVisible(), false);
    await page.locator('#finetune-trainable-layers').fill('4');
    await within('freeze never settled', () => settled(page));
    await page.locator('#share').click();
    const hash = new URLSearchParams(new URL(page.url()).hash.slice(1));
    assert.equal(hash.get('finetune'), 'freeze');
    assert.equal(hash.get('trainable_layers'), '4');
    assert.equal(hash.has('lora_targets'), false, 'a hidden field is not in the link');
    const shown = await errors(page);
    if (Object.keys(shown).length === 0) assert.match((await page.locator('#summary').textContent()) ?? '', /freeze: top 4 blocks/);
    await page.locator('#finetune-method').selectOption('full');
    await settled(page);
  });

  test('the QLoRA example link fills the form: preset, accelerator, method, rank, targets, batch, length', async () => {
    const link = page.locator('#example-list a', { hasText: 'Llama 3.1 8B QLoRA on one RTX 4090' });
    assert.equal(await page.locator('#example-list a').count(), 3);
    await link.click();
    await within('the example never settled', () => settled(page));
    assert.equal(await page.locator('#preset-list input[value="llama-3.1-8b"]').isChecked(), true);
    assert.equal(await page.locator('#hardware-list input[value="rtx-4090"]').isChecked(), true);
    assert.equal(await page.locator('#finetune-method').inputValue(), 'qlora');
    assert.equal(await page.locator('#finetune-rank').inputValue(), '16');
    assert.equal(await page.locator('#finetune-targets').inputValue(), 'all-linear');
    assert.equal(await page.locator('#batch_size').inputValue(), '2');
    assert.equal(await page.locator('#seq_len').inputValue(), '2048');
    const shown = await errors(page);
    if (Object.keys(shown).length === 0) assert.match((await page.locator('#summary').textContent()) ?? '', /QLoRA r16 on all linear layers/);
    else assert.ok(Object.keys(shown).every((id) => id.startsWith('finetune')), JSON.stringify(shown));
    await page.screenshot({ path: join(ARTIFACTS, 'finetune-qlora-example.png'), fullPage: true });
  });

  test('the element takes the same names as attributes and reports the core\'s field', async () => {
    const detail = await page.evaluate(async () => {
      const script = document.createElement('script');
      script.src = 'embed.js';
      const loaded = new Promise((resolve) => script.addEventListener('load', resolve));
      document.body.append(script);
      await loaded;
      const element = document.createElement('prenet-calculator');
      for (const [name, value] of Object.entries({ preset: 'gpt2', hardware: 'h100-sxm', predictor: 'roofline', finetune: 'lora', lora_rank: '0' })) element.setAttribute(name, value);
      const failed = new Promise((resolve) => element.addEventListener('prenet-error', (event) => resolve(/** @type {CustomEvent} */ (event).detail)));
      document.body.append(element);
      return failed;
    });
    assert.equal(/** @type {{ field: string }} */ (detail).field, 'training.finetune.rank');
  });
});
