// Constant-MFU baselines: "a step takes the model's FLOPs at a fixed fraction of the accelerator's peak", the rule
// of thumb planners use, stated exactly so that a benchmark can print it beside the predictor. Both are computed
// from the predictor's own response, whose `mfu` is the model's matrix FLOPs over (predicted step × peak at the
// training precision × GPUs): a step at MFU u is then the predicted step × mfu / u, and a row's measured MFU is the
// response's mfu × predicted step / measured step. Nothing here is fitted to the row it predicts.

import { median } from './metrics.mjs';

/** The fixed rule of thumb: 40% of the dense matrix peak at the training precision. */
export const RULE_OF_THUMB_MFU = 0.4;

/**
 * @param {number} mfu the response's `mfu` at its predicted step
 * @param {number} predictedStep the predicted step (any time unit; or 1 / throughput)
 * @param {number} measuredStep the measured step in the same unit
 * @returns {number} the MFU the measured step means
 */
export function measuredMfu(mfu, predictedStep, measuredStep) {
  return (mfu * predictedStep) / measuredStep;
}

/**
 * @param {number} mfu the response's `mfu` at its predicted step
 * @param {number} predictedStep the predicted step
 * @param {number} at the constant MFU
 * @returns {number} the step at MFU `at`
 */
export function stepAtMfu(mfu, predictedStep, at) {
  return (predictedStep * mfu) / at;
}

/**
 * The constant-MFU baseline per accelerator type, leave-one-out: for row i, the median measured MFU of the other
 * rows on the same accelerator at the same precision; else of the other rows on the same accelerator; else of all
 * other rows (none: NaN, group 'none'). So no row's baseline has seen its own measurement (an oracle constant would
 * have).
 * @param {{ mfu: number, accelerator: string, precision: string }[]} rows measured MFU of each row
 * @returns {{ mfu: number, group: 'accelerator and precision' | 'accelerator' | 'all' | 'none' }[]} each row's
 *   baseline MFU
 */
export function leaveOneOutMfu(rows) {
  return rows.map((row, i) => {
    const others = rows.filter((_, j) => j !== i);
    const same = others.filter((o) => o.accelerator === row.accelerator && o.precision === row.precision);
    if (same.length > 0) return { mfu: median(same.map((o) => o.mfu)), group: 'accelerator and precision' };
    const sameAccelerator = others.filter((o) => o.accelerator === row.accelerator);
    if (sameAccelerator.length > 0) return { mfu: median(sameAccelerator.map((o) => o.mfu)), group: 'accelerator' };
    if (others.length > 0) return { mfu: median(others.map((o) => o.mfu)), group: 'all' };
    return { mfu: NaN, group: 'none' };
  });
}
