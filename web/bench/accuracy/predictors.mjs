// The main predictor and the three baselines, read from one response, and how a case's compared
// value is derived from their forward and step times.
//
// Baselines come from `results[].baselines` when the core reports them:
//   {"roofline": {"forward_ms", "step_ms"}, "prenet": {...}, "flops40": {...}}
// Until then: (a) roofline is the main predictor while `response.predictor` is "roofline" (else the
// engine's `predictRoofline` when it has one), (b) the PreNeT per-layer sum is not available, (c) FLOPs / (peak × 40%) is computed here from
// `model.flops_per_step` and the catalogue peak at the training precision.

/**
 * @typedef {import('../../src/types').PredictResponse} PredictResponse
 * @typedef {import('../../src/types').HardwareResult} HardwareResult
 * @typedef {import('../../src/types').Precision} Precision
 * @typedef {import('./rows.mjs').Case} Case
 */

/** @typedef {'roofline' | 'prenet' | 'flops40'} BaselineId */
/** @typedef {'main' | BaselineId} PredictorId */
/** @typedef {{forward_ms: number, step_ms: number}} Times */
/** @typedef {{times: Times, from: string} | {times: null, from: string}} PredictorTimes */

/** @type {readonly PredictorId[]} */
export const PREDICTORS = Object.freeze(['main', 'roofline', 'prenet', 'flops40']);

/** @type {readonly BaselineId[]} */
export const BASELINE_IDS = Object.freeze(['roofline', 'prenet', 'flops40']);

/** @type {Readonly<Record<BaselineId, string>>} */
export const BASELINE_TITLES = Object.freeze({
  roofline: '(a) roofline',
  prenet: '(b) PreNeT per-layer sum',
  flops40: '(c) FLOPs / (peak × 40%)',
});

/** Fraction of the dense peak assumed by baseline (c). */
export const FLOPS_BASELINE_EFFICIENCY = 0.4;

/**
 * @param {unknown} value
 * @returns {Times | null}
 */
export function asTimes(value) {
  if (typeof value !== 'object' || value === null) return null;
  const record = /** @type {Record<string, unknown>} */ (value);
  const forward = record.forward_ms;
  const step = record.step_ms;
  if (typeof forward !== 'number' || typeof step !== 'number' || !Number.isFinite(forward) || !Number.isFinite(step)) return null;
  return { forward_ms: forward, step_ms: step };
}

/**
 * Baseline (c): FLOPs / (peak × 40%), forward and whole step.
 * @param {{forward: number, total: number}} flops per step, from `model.flops_per_step`
 * @param {number} peakTflops dense peak at the training precision
 * @returns {Times}
 */
export function flopsBaseline(flops, peakTflops) {
  if (!(peakTflops > 0)) throw new RangeError(`flops baseline: peak must be positive, got ${peakTflops}`);
  const flopsPerMs = peakTflops * 1e12 * FLOPS_BASELINE_EFFICIENCY * 1e-3;
  return { forward_ms: flops.forward / flopsPerMs, step_ms: flops.total / flopsPerMs };
}

/**
 * The peak used by baseline (c): the catalogue's `peak_tflops[precision]`; mixed precision (fp16,
 * bf16) uses that 16-bit peak, as the catalogue keys it.
 * @param {import('../../src/types').HardwareEntry | undefined} entry
 * @param {Precision} precision
 * @returns {number}
 */
export function catalogPeak(entry, precision) {
  if (!entry) throw new Error('flops baseline: accelerator not in the catalogue');
  const peaks = /** @type {Record<string, unknown>} */ (entry.peak_tflops ?? {});
  const peak = peaks[precision];
  if (typeof peak !== 'number' || !(peak > 0)) throw new Error(`flops baseline: ${entry.id} has no ${precision} peak`);
  return peak;
}

/**
 * Every predictor's forward and step time for one result of a response.
 * @param {PredictResponse} response
 * @param {HardwareResult} result
 * @param {number} peakTflops for baseline (c) when the core does not report it
 * @param {HardwareResult | null} [rooflineResult] the same request through the engine's analytic path
 *   (`engine.predictRoofline`), used for (a) when the core reports no baselines and the main
 *   predictor is not the roofline
 * @returns {Record<PredictorId, PredictorTimes>}
 */
export function readPredictors(response, result, peakTflops, rooflineResult = null) {
  const main = { forward_ms: result.forward_ms, step_ms: result.step_ms };
  // `baselines` is not in the response type yet; read it as unknown and check its shape.
  const reported = /** @type {{baselines?: unknown}} */ (/** @type {unknown} */ (result)).baselines;
  const baselines = typeof reported === 'object' && reported !== null ? /** @type {Record<string, unknown>} */ (reported) : null;

  /** @param {BaselineId} name @returns {PredictorTimes | null} */
  const fromCore = (name) => {
    if (!baselines) return null;
    const times = asTimes(baselines[name]);
    return times ? { times, from: 'core' } : { times: null, from: `core reports no usable "${name}" baseline` };
  };

  return {
    main: { times: main, from: `core (${response.predictor})` },
    roofline:
      fromCore('roofline') ??
      (response.predictor === 'roofline'
        ? { times: main, from: 'main predictor (it is the roofline)' }
        : rooflineResult
          ? { times: { forward_ms: rooflineResult.forward_ms, step_ms: rooflineResult.step_ms }, from: 'engine.predictRoofline (the analytic path)' }
          : { times: null, from: 'n/a: core reports no baselines' }),
    prenet: fromCore('prenet') ?? { times: null, from: 'n/a until the core reports it' },
    flops40: fromCore('flops40') ?? {
      times: flopsBaseline(response.model.flops_per_step, peakTflops),
      from: 'computed by the benchmark from flops_per_step and the catalogue peak',
    },
  };
}

/**
 * The value a case compares with its measurement, from one predictor's times.
 * @param {import('./rows.mjs').Metric} metric
 * @param {import('./rows.mjs').Plan} plan
 * @param {Times} times with the row's optimizer, at the micro-batch
 * @param {Times | null} noOptimizer the same request with optimizer "none" (needed when accumulating)
 * @returns {number}
 */
export function caseValue(metric, plan, times, noOptimizer) {
  if (metric === 'forward_ms') return times.forward_ms;
  if (metric === 'step_ms') return times.step_ms;
  return plan.samplesPerStep / (optimizerStepMs(plan, times, noOptimizer) / 1000);
}

/**
 * Time of one optimizer step: accumulation × (forward + backward) + one update.
 * @param {import('./rows.mjs').Plan} plan
 * @param {Times} times
 * @param {Times | null} noOptimizer
 * @returns {number} ms
 */
export function optimizerStepMs(plan, times, noOptimizer) {
  if (plan.accumulation === 1) return times.step_ms;
  if (!noOptimizer) throw new Error('accumulating rows need the optimizer-"none" times as well');
  const update = times.step_ms - noOptimizer.step_ms;
  return plan.accumulation * noOptimizer.step_ms + update;
}

/**
 * The main predictor's interval for the compared quantity, when the response gives one:
 * `<metric>_interval` ([low, high], e.g. `step_ms_interval`) for time rows; for throughput rows
 * without accumulation, `step_ms_interval` turned into samples per second. Accumulating rows mix two
 * requests, whose intervals do not combine simply: none.
 * @param {import('./rows.mjs').Metric} metric
 * @param {import('./rows.mjs').Plan} plan
 * @param {HardwareResult} result
 * @returns {[number, number] | null}
 */
export function intervalFor(metric, plan, result) {
  const record = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (result));
  /** @param {unknown} value @returns {[number, number] | null} */
  const pair = (value) => {
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [low, high] = value;
    return typeof low === 'number' && typeof high === 'number' && low > 0 && high >= low ? [low, high] : null;
  };
  if (metric === 'forward_ms') return pair(record.forward_ms_interval);
  const step = pair(record.step_ms_interval);
  if (metric === 'step_ms') return step;
  if (!step || plan.accumulation !== 1) return null;
  return [plan.samplesPerStep / (step[1] / 1000), plan.samplesPerStep / (step[0] / 1000)];
}
