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
