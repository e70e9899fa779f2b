// Issue 4: calibrating on one V100 measurement must not make the other GPUs worse on average, on the
// development data (the same study docs/ACCURACY.md reports).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { calibrationMape, calibrationStudy } from '../../web/bench/accuracy/calibration.mjs';
import { loadCases, validationDir } from '../../web/bench/accuracy/load.mjs';
import { runCases } from '../../web/bench/accuracy/run.mjs';
import { REPO_ROOT, engine, requireBuiltCore } from './helpers.mjs';

/** The shared data sit beside the repository (CI clones it with a copy of shared/ next to it). */
const shared = join(REPO_ROOT, '..', 'shared', 'data');

test('calibrating on a V100 measurement does not make other GPUs worse on average', async () => {
  requireBuiltCore();
  assert.ok(existsSync(shared), `no shared data at ${shared}`);
  const loaded = loadCases(validationDir(shared));
  const results = await runCases(engine, loaded.cases.filter((c) => c.source === 'neusight'));
  const rows = await calibrationStudy(engine, results);
  assert.ok(rows.length >= 10, `only ${rows.length} rows to study`);
  const before = calibrationMape(rows, (r) => r.before);
  const after = calibrationMape(rows, (r) => r.after);
  assert.ok(after <= before, `MAPE on other GPUs rose from ${before.toFixed(1)}% to ${after.toFixed(1)}%`);
});
