// Replays the shared manifest tests/cases/requests.json (also replayed natively by
// tests/core/test_cases.cpp) through the real wasm module, via the engine the page and CLI use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PrenetError } from '../../web/src/engine.js';
import { REPO_ROOT, engine, requireBuiltCore } from './helpers.mjs';

/**
 * @typedef {{name: string, request?: object, request_text?: string, known_bug?: string,
 *   expect: {error_field?: string, message_contains?: string, parameters?: number, results?: number,
 *   hardware?: string[], fits?: boolean[], layer_count?: number, warnings?: number, warning_contains?: string}}} Case
 */

/** @type {Case[]} */
const cases = JSON.parse(readFileSync(join(REPO_ROOT, 'tests', 'cases', 'requests.json'), 'utf8'));

/**
 * Per-layer results, when present, follow docs/API.md: one table entry per layer, per result seven
 * columns of one length, every column some layer's, and (one GPU) the layers adding up to the phases, or
 * to less where the host's issue time sets the pass.
 * @param {import('../../web/src/types').PredictResponse} r
 */
function checkLayerColumns(r) {
  const table = r.layers ?? [];
  assert.equal(table.length, r.model.layer_count, 'one table entry per layer');
  const used = new Set(table.map((layer) => layer.timing));
  for (const res of r.results) {
    const cols = res.layers;
    assert.ok(cols !== undefined, `${res.hardware}: per-layer results`);
    const n = cols.forward_ms.length;
    for (const key of /** @type {const} */ (['backward_ms', 'optimizer_ms', 'compute_ms', 'memory_ms', 'ct_ms', 'bound'])) assert.equal(cols[key].length, n, `${res.hardware}: ${key}`);
    assert.deepEqual([...used].sort((a, b) => a - b), Array.from({ length: n }, (_, k) => k), `${res.hardware}: every column is some layer's`);
    assert.ok(cols.bound.every((b) => ['compute', 'memory', 'overhead'].includes(b)));
    if (res.parallel !== undefined) continue;
    for (const phase of /** @type {const} */ (['forward_ms', 'backward_ms', 'optimizer_ms'])) {
      const sum = table.reduce((s, layer) => s + (cols[phase][layer.timing] ?? NaN), 0);
      // Where the host sets a pass, the pass is its issue time and the layers its device time (docs/API.md).
      const host = phase === 'optimizer_ms' ? 0 : (res.host_issue_ms?.[phase === 'forward_ms' ? 'forward' : 'backward'] ?? 0);
      const expected = Math.max(sum, host);
      assert.ok(Math.abs(expected - res[phase]) <= 1e-4 * Math.max(res[phase], 1e-6), `${res.hardware}: layers' ${phase} ${sum} (host ${host}) add up to ${res[phase]}`);
    }
  }
}

test('the manifest has cases', () => {
  assert.ok(cases.length >= 20);
});

for (const c of cases) {
  test(`case: ${c.name}`, { todo: c.known_bug }, async () => {
    requireBuiltCore();
    // Raw text (malformed JSON, 1e400) or a request object sent as JSON: either way the core validates it.
    const request = c.request_text ?? JSON.stringify(c.request);
    const e = c.expect;
    if (e.error_field !== undefined) {
      const field = e.error_field;
      await assert.rejects(engine.predict(request), (err) => {
        assert.ok(err instanceof PrenetError, `expected a PrenetError, got ${err}`);
        assert.equal(err.field, field);
        assert.ok(err.message.startsWith(`${field}: `), `message does not start with the field: ${err.message}`);
        if (e.message_contains !== undefined) assert.ok(err.message.includes(e.message_contains), err.message);
        return true;
      });
      return;
    }
    const r = await engine.predict(request);
    assert.ok(r.results.length > 0);
    for (const res of r.results) assert.ok(Number.isFinite(res.step_ms) && res.step_ms > 0, `step_ms ${res.step_ms}`);
    if (r.layers !== undefined) checkLayerColumns(r);
    if (e.parameters !== undefined) assert.equal(r.model.parameters, e.parameters);
    if (e.results !== undefined) assert.equal(r.results.length, e.results);
    if (e.hardware !== undefined) assert.deepEqual(r.results.map((x) => x.hardware), e.hardware);
    if (e.fits !== undefined) assert.deepEqual(r.results.map((x) => x.fits), e.fits);
    if (e.layer_count !== undefined) assert.equal(r.model.layer_count, e.layer_count);
    if (e.warnings !== undefined) assert.equal(r.warnings.length, e.warnings);
    if (e.warning_contains !== undefined) {
      const text = e.warning_contains;
      assert.ok(r.warnings.some((w) => w.includes(text)), `no warning contains "${text}": ${r.warnings}`);
    }
  });
}
