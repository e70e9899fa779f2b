// web/bench/measured.mjs: every training run measure_gpu.py times (models/measure/e2e.json) is a request
// the real engine answers as described, and a measured row is compared with that same request's
// prediction. The measured row here is written by the test (no GPU measurement is needed to check the
// comparison).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { e2eRequest, e2eRuns } from '../../web/bench/measured.mjs';
import { engine, REPO_ROOT, requireBuiltCore } from './helpers.mjs';

const BENCH = join(REPO_ROOT, 'web', 'bench', 'measured.mjs');

test('every e2e.json run is a request the engine answers with its own batch, precision, optimizer and attention', async () => {
  requireBuiltCore();
  const runs = e2eRuns();
  assert.ok(runs.length >= 10);
  assert.equal(new Set(runs.map((r) => r.name)).size, runs.length, 'run names are unique');
  for (const run of runs) {
    const response = /** @type {any} */ (await engine.predict(/** @type {any} */ (e2eRequest(run, 'h200'))));
    assert.ok(!response.error, `${run.name}: ${JSON.stringify(response.error)}`);
    const t = response.training;
    assert.equal(t.batch_size, run.batch, run.name);
    assert.equal(t.precision, run.precision, run.name);
    assert.equal(t.optimizer, run.optimizer, run.name);
    assert.equal(t.attention, run.attention ?? 'eager', run.name);
    if (run.seq_len) assert.equal(t.seq_len, run.seq_len, run.name);
    const step = response.results[0].step_ms;
    assert.ok(Number.isFinite(step) && step > 0, `${run.name}: step ${step}`);
  }
});

test('a run neither preset nor hf_config is refused by name', () => {
  assert.throws(() => e2eRequest({ name: 'x', batch: 1, precision: 'bf16', optimizer: 'adamw' }, 'h200'), /e2e run x: needs a preset or an hf_config/);
});

test('a measured step is set beside the prediction of the same request', async (t) => {
  requireBuiltCore();
  const run = e2eRuns().find((r) => r.name === 'gpt2-b16-bf16-flash');
  assert.ok(run);
  const predicted = /** @type {any} */ (await engine.predict(/** @type {any} */ (e2eRequest(run, 'h200')))).results[0].step_ms;
  const root = mkdtempSync(join(tmpdir(), 'measured-bench-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'h200'));
  writeFileSync(
    join(root, 'h200', 'e2e.csv'),
    'name,gpu,precision,attention_impl,batch,seq_len,forward_ms,backward_ms,optimizer_ms,step_ms,step_ms_min,step_ms_max,reps,peak_memory_gb,parameters\n' +
      'gpt2-b16-bf16-flash,h200,bf16,sdpa,16,1024,15,30,5,50,49,52,10,12.5,124439808\n',
  );
  const out = execFileSync(process.execPath, [BENCH, '--measured', root], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const error = ((predicted - 50) / 50) * 100;
  assert.match(out, new RegExp(`\\| gpt2-b16-bf16-flash \\| \`h200\` \\| 50\\.0 \\| ${predicted.toFixed(1).replace('.', '\\.')}`));
  assert.match(out, new RegExp(`${error >= 0 ? '\\+' : ''}${error.toFixed(1).replace('.', '\\.')}%`));
  assert.match(out, /Over 1 runs: mean absolute error/);
});

test('a measured run missing from e2e.json stops the bench naming it', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'measured-bench-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'h200'));
  writeFileSync(join(root, 'h200', 'e2e.csv'), 'name,gpu,step_ms\nnot-a-run,h200,5\n');
  assert.throws(
    () => execFileSync(process.execPath, [BENCH, '--measured', root], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
    (/** @type {any} */ e) => /run "not-a-run" is not in models\/measure\/e2e\.json/.test(String(e.stderr)),
  );
});
