// Error metrics of the accuracy benchmark. APE is |predicted − measured| / measured, in percent;
// MAPE its mean, median APE its median. Signed error keeps the direction (+ = over-prediction).

/**
 * @param {number} predicted
 * @param {number} measured must be > 0
 * @returns {number} absolute percentage error
 */
export function ape(predicted, measured) {
  if (!(measured > 0) || !Number.isFinite(predicted)) {
    throw new RangeError(`ape: need measured > 0 and a finite prediction, got ${predicted} vs ${measured}`);
  }
  return (Math.abs(predicted - measured) / measured) * 100;
}

/**
 * @param {number} predicted
 * @param {number} measured must be > 0
 * @returns {number} signed percentage error (+ = over-prediction)
 */
export function signedError(predicted, measured) {
  return ((predicted - measured) / measured) * 100;
}

/**
 * @param {number[]} values
 * @returns {number} NaN for an empty list
 */
export function mean(values) {
  if (values.length === 0) return NaN;
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

/**
 * @param {number[]} values
 * @returns {number} the middle value (mean of the two middle ones for an even count); NaN if empty
 */
export function median(values) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length % 2 === 1) return /** @type {number} */ (sorted[middle]);
  return (/** @type {number} */ (sorted[middle - 1]) + /** @type {number} */ (sorted[middle])) / 2;
}

/**
 * @typedef {object} ErrorSummary
 * @property {number} n        pairs compared
 * @property {number} mape     mean APE, %
 * @property {number} medape   median APE, %
 * @property {number} bias     mean signed error, % (+ = over-prediction)
 */

/**
 * @param {{predicted: number, measured: number}[]} pairs
 * @returns {ErrorSummary}
 */
export function summarize(pairs) {
  const errors = pairs.map((pair) => ape(pair.predicted, pair.measured));
  return {
    n: pairs.length,
    mape: mean(errors),
    medape: median(errors),
    bias: mean(pairs.map((pair) => signedError(pair.predicted, pair.measured))),
  };
}
