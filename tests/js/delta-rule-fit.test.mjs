// The catalogue's delta_rule timings (core/data/hardware.json) are what models/fit-delta-rule.mjs computes from the
// committed FlashQLA benchmark rows (models/data/found/fla-gated-delta-rule.csv): measured GPUs equal their fit, the
// parts of the same die their source GPU's; and the fit's error stays what docs/MODEL_FORMAT.md reports (a test
// that can fail). The learned engine then times a Gated DeltaNet's chunk kernels from them.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { catalogueEntries, fitGpus, meanAbs, readRows } from '../../models/fit-delta-rule.mjs';
import { engine } from '../../web/cli/node-engine.mjs';

const catalogue = JSON.parse(readFileSync(new URL('../../core/data/hardware.json', import.meta.url), 'utf8')).hardware;
const rows = readRows();
const fits = fitGpus(rows);

test('every delta_rule entry of the catalogue equals the fit; no other part has one', () => {
  const entries = catalogueEntries(fits);
  assert.deepEqual(Object.keys(entries).sort(), ['b200', 'b300', 'gb200', 'gb300', 'gh200', 'h100-sxm', 'h200']);
  for (const h of catalogue) assert.deepEqual(h.delta_rule, entries[h.id], h.id);
});

test('the fit reproduces the kernel timings within its stated error', () => {
  assert.equal(rows.length, 98);
  for (const [gpu, f] of Object.entries(fits)) {
    for (const [direction, { rate, half }] of Object.entries(f)) {
      const own = rows.filter((r) => r.gpu === gpu && r.direction === direction);
      const bound = direction === 'fwd' ? 0.06 : 0.15;
      assert.ok(meanAbs(own, rate, half) < bound, `${gpu} ${direction}: ${meanAbs(own, rate, half)}`);
    }
  }
  // The forward fits carry from one part to the other within 7%: the kernels do not follow the parts' peaks.
  for (const [gpu, other] of /** @type {[string, string][]} */ ([['h200', 'gb200'], ['gb200', 'h200']])) {
    const mine = rows.filter((r) => r.gpu === gpu && r.direction === 'fwd');
    const theirs = fits[other]?.fwd;
    assert.ok(theirs && meanAbs(mine, theirs.rate, theirs.half) < 0.07, `${other} on ${gpu}`);
  }
});

test('the learned engine times the chunk kernels from the catalogue on an H200', async () => {
  const layer = (/** @type {string} */ hw) => ({
    model: {
      input: { kind: 'sequence', seq_len: 32768, features: 64 },
      layers: [{ type: 'gated_deltanet', name: 'g', key_heads: 16, value_heads: 32, key_head_dim: 128, value_head_dim: 128 }],
    },
    hardware: [hw],
    training: { batch_size: 1, precision: 'bf16', optimizer: 'none' },
    options: { per_layer: true },
  });
  /** @returns {Promise<number>} */
  const forward = async (/** @type {string} */ hw) => {
    const r = /** @type {any} */ (await engine.predict(JSON.stringify(layer(hw))));
    assert.equal(r.predictor, 'learned');
    const i = r.layers.findIndex((/** @type {{name: string}} */ l) => l.name === 'g');
    return r.results[0].layers.forward_ms[r.layers[i].timing];
  };
  // FlashQLA measured the delta rule alone at 1.890 ms forward on an H200; the layer adds its projections, the
  // convolution, the gates, the norms and the gated RMSNorm.
  const h200 = await forward('h200');
  assert.ok(h200 > 1.890 && h200 < 1.890 * 2.5, `h200 ${h200}`);
  const note = (/** @type {any} */ (await engine.predict(JSON.stringify(layer('h200'))))).warnings.join(' ');
  assert.match(note, /timed from public measurements where the catalogue has them/);
});
