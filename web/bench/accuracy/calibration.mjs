// Calibration from one measurement (docs/PREDICTION.md): for every NeuSight single-GPU forward row whose
// model, shape and batch were also measured on a V100, tell the core the V100's measured time and see
// whether the other GPUs' predictions get closer to their measurements.

/**
 * @typedef {import('./run.mjs').CaseResult} CaseResult
 * @typedef {import('../../src/types').PredictRequest} PredictRequest
 * @typedef {import('../../src/types').PredictResponse} PredictResponse
 */

export const CALIBRATION_GPU = 'v100-pcie-32gb';

/**
 * @typedef {object} CalibrationRow
 * @property {string} row
 * @property {string} hardware
 * @property {number} measured forward ms
 * @property {number} before predicted forward ms without calibration
 * @property {number} after predicted forward ms calibrated on the V100's measurement
 */

/**
 * @param {{predict: (request: PredictRequest) => Promise<PredictResponse>}} engine
 * @param {CaseResult[]} results the benchmark's results
 * @returns {Promise<CalibrationRow[]>}
 */
export async function calibrationStudy(engine, results) {
  /** @type {Map<string, CaseResult[]>} */
  const groups = new Map();
  for (const r of results) {
    const plan = r.case.plan;
    if (r.status !== 'predicted' || r.case.source !== 'neusight' || r.case.group !== 'inf' || !plan) continue;
    const key = JSON.stringify({ model: plan.request.model, training: plan.request.training });
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  /** @type {CalibrationRow[]} */
  const rows = [];
  for (const members of groups.values()) {
    const reference = members.find((m) => m.case.hardware === CALIBRATION_GPU);
    const others = members.filter((m) => m.case.hardware && m.case.hardware !== CALIBRATION_GPU);
    if (!reference || others.length === 0 || !reference.case.plan) continue;
    const hardware = [CALIBRATION_GPU, ...others.map((m) => /** @type {string} */ (m.case.hardware))];
    const base = { ...reference.case.plan.request, hardware, options: { per_layer: false } };
    const plain = await engine.predict(base);
    const v100 = plain.results[0];
    if (!v100) continue;
    // The rows measure a forward pass; the request's step is forward + backward, so scale the measured
    // forward by the predicted step / forward ratio to state it as a step measurement.
    const stepMs = (reference.case.measured * v100.step_ms) / v100.forward_ms;
    const calibrated = await engine.predict({ ...base, calibration: { hardware: CALIBRATION_GPU, step_ms: stepMs } });
    others.forEach((m, i) => {
      const before = plain.results[i + 1];
      const after = calibrated.results[i + 1];
      if (!before || !after) return;
      rows.push({
        row: m.case.row,
        hardware: /** @type {string} */ (m.case.hardware),
        measured: m.case.measured,
        before: before.forward_ms,
        after: after.forward_ms,
      });
    });
  }
  return rows;
}

/**
 * Mean absolute percentage error of `pick` over rows.
 * @param {CalibrationRow[]} rows
 * @param {(row: CalibrationRow) => number} pick
 */
export function calibrationMape(rows, pick) {
  if (rows.length === 0) return NaN;
  return (100 * rows.reduce((sum, r) => sum + Math.abs(pick(r) - r.measured) / r.measured, 0)) / rows.length;
}

/**
 * The report section.
 * @param {CalibrationRow[]} rows
 */
export function calibrationText(rows) {
  const before = calibrationMape(rows, (r) => r.before);
  const after = calibrationMape(rows, (r) => r.after);
  const verdict = after <= before ? 'met' : 'not met';
  const lines = rows.map(
    (r) =>
      `| ${r.row} | \`${r.hardware}\` | ${r.measured.toFixed(1)} | ${r.before.toFixed(1)} (${signed(r.before, r.measured)}) | ${r.after.toFixed(1)} (${signed(r.after, r.measured)}) |`,
  );
  return `Calibrating on the \`${CALIBRATION_GPU}\` measurement of the same model, shape and batch (the core applies
the full correction f to that accelerator and f^s to each other one, s the share of an error GPUs have in
common as the trainer measured it per kernel class — docs/PREDICTION.md, Calibration): MAPE on the other GPUs
**${before.toFixed(1)}% → ${after.toFixed(1)}%** over ${rows.length} rows — must not get worse on average: **${verdict}**.

| row | accelerator | measured ms | without calibration | calibrated on V100 |
|---|---|---:|---:|---:|
${lines.join('\n')}`;
}

/**
 * @param {number} predicted
 * @param {number} measured
 */
function signed(predicted, measured) {
  const e = (100 * (predicted - measured)) / measured;
  return `${e >= 0 ? '+' : ''}${e.toFixed(1)}%`;
}
