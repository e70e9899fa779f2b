// The catalogue's fused_attention timings (core/data/hardware.json) are what models/fit-fused-attention.mjs
// computes from the committed cuDNN frontend benchmarks: measured ones equal the fit, derived ones their
// source GPU's; and the fit's error stays what docs/PREDICTION.md reports it as (a test that can fail).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { cataloguePeaks, fit, readTimings, visibleBlocks } from '../../models/fit-fused-attention.mjs';

const catalogue = JSON.parse(readFileSync(new URL('../../core/data/hardware.json', import.meta.url), 'utf8')).hardware;
const result = fit(readTimings(), cataloguePeaks());
/** Catalogue ids whose timings are copied from another GPU's, as their `source` says. */
const DERIVED = { 'h100-sxm': 'h200', b300: 'gb300' };

test('every measured GPU, library and pass in the catalogue equals the fit (3 decimals)', () => {
  const measured = new Set(result.groups.map((g) => g.gpu));
  assert.deepEqual([...measured].sort(), ['b200', 'gb200', 'gb300', 'h200']);
  for (const h of catalogue) {
    const from = measured.has(h.id) ? h.id : DERIVED[/** @type {keyof typeof DERIVED} */ (h.id)];
    if (!from) {
      assert.equal(h.fused_attention, undefined, `${h.id} has no measurement to take fused_attention from`);
      continue;
    }
    assert.ok(h.fused_attention, `${h.id}: fused_attention missing`);
    assert.equal(h.fused_attention.block_positions, result.block);
    if (from !== h.id) assert.match(h.fused_attention.source, /derived from/);
    for (const g of result.groups.filter((x) => x.gpu === from)) {
      const entry = h.fused_attention[g.library];
      const pass = g.direction === 'fwd' ? 'forward' : 'backward';
      assert.equal(entry[pass], Number(g.efficiency.toFixed(3)), `${h.id} ${g.library} ${pass}`);
      assert.equal(entry[`${pass}_overhead_ms`], Number(g.overhead_ms.toFixed(3)), `${h.id} ${g.library} ${pass} overhead`);
    }
  }
});

test('the fit reproduces the kernel timings within its stated error', () => {
  assert.ok(result.timings >= 270, `${result.timings} timings`);
  assert.ok(result.mape < 0.1, `mean error ${result.mape}`);
  for (const g of result.groups) assert.ok(g.efficiency > 0.05 && g.efficiency < 1, `${g.gpu} ${g.library} ${g.direction}`);
});

test('visible blocks: causal n(n+1)/2 of n^2, a window about ceil(w/G)+1 per row, no mask all', () => {
  assert.equal(visibleBlocks(8192, 8192, true, 0, 512), 17 / 32);
  assert.equal(visibleBlocks(8192, 8192, false, 0, 512), 1);
  assert.equal(visibleBlocks(8192, 8192, true, 128, 512), 2 / 16);
  assert.equal(visibleBlocks(100, 100, true, 0, 512), 1);
});
