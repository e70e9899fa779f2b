// The constant-MFU baselines the benchmarks print beside the predictor (web/bench/accuracy/mfu-baseline.mjs): the
// arithmetic, and that the leave-one-out constant never sees the row it predicts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { leaveOneOutMfu, measuredMfu, stepAtMfu } from '../../web/bench/accuracy/mfu-baseline.mjs';

test('a step at the MFU a measurement implies is that measurement', () => {
  // The response: 100 ms predicted at 30% MFU; measured 150 ms, so 20% MFU.
  const mfu = measuredMfu(0.3, 100, 150);
  assert.ok(Math.abs(mfu - 0.2) < 1e-12);
  assert.ok(Math.abs(stepAtMfu(0.3, 100, mfu) - 150) < 1e-9);
  // Twice the MFU, half the step.
  assert.ok(Math.abs(stepAtMfu(0.3, 100, 0.6) - 50) < 1e-9);
});

test('leave-one-out: each row gets the median of the others in its group, never its own MFU', () => {
  const rows = [
    { mfu: 0.4, accelerator: 'h100-sxm', precision: 'bf16' },
    { mfu: 0.5, accelerator: 'h100-sxm', precision: 'bf16' },
    { mfu: 0.9, accelerator: 'h100-sxm', precision: 'bf16' },
    { mfu: 0.2, accelerator: 'h100-sxm', precision: 'fp8' },
    { mfu: 0.1, accelerator: 'b200', precision: 'bf16' },
  ];
  const out = leaveOneOutMfu(rows);
  assert.deepEqual(out.slice(0, 3).map((o) => o.group), ['accelerator and precision', 'accelerator and precision', 'accelerator and precision']);
  assert.equal(out[0]?.mfu, (0.5 + 0.9) / 2);
  assert.equal(out[2]?.mfu, (0.4 + 0.5) / 2); // the outlier's own 0.9 is not in its constant
  // Alone at its precision: the same accelerator's other rows.
  assert.deepEqual(out[3], { mfu: 0.5, group: 'accelerator' });
  // Alone on its accelerator: every other row.
  assert.deepEqual(out[4], { mfu: (0.4 + 0.5) / 2, group: 'all' });
  // Changing a row's own MFU never changes its own baseline.
  const moved = leaveOneOutMfu(rows.map((r, i) => (i === 1 ? { ...r, mfu: 0.05 } : r)));
  assert.equal(moved[1]?.mfu, out[1]?.mfu);
});
