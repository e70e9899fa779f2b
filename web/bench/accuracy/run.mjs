// Predicts every case with the engine and keeps, per predictor, the value compared with the
// measurement.

import { PrenetError } from '../../src/engine.js';
import { PREDICTORS, caseValue, catalogPeak, flopsBaseline, intervalFor, readPredictors } from './predictors.mjs';

/**
 * @typedef {import('./rows.mjs').Case} Case
 * @typedef {import('./predictors.mjs').PredictorId} PredictorId
 * @typedef {import('./predictors.mjs').PredictorTimes} PredictorTimes
 * @typedef {import('../../src/types').Catalog} Catalog
 * @typedef {import('../../src/types').HardwareResult} HardwareResult
 * @typedef {import('../../src/types').PredictRequest} PredictRequest
 * @typedef {import('../../src/types').PredictResponse} PredictResponse
 */

/**
 * @typedef {object} CaseResult
 * @property {Case} case
 * @property {'predicted' | 'skipped' | 'unsupported'} status
 * @property {string} [reason] skipped or unsupported: why
 * @property {Record<PredictorId, number | null>} values compared with `case.measured`; null = n/a
 * @property {Record<PredictorId, string>} from where each predictor's numbers came from
 * @property {string} [predictor] `response.predictor`
 * @property {string} [version] `response.version`
 * @property {{forward_ms: number, backward_ms: number, optimizer_ms: number}} [phases] main predictor, the row's request
 * @property {string[]} warnings the core's warnings
 * @property {[number, number] | null} [interval] the main predictor's interval for the compared quantity
 * @property {number} [peakFraction] the model FLOPs the measurement implies per second, as a fraction of
 *   the catalogue's dense peak at the row's precision (> 1: more than the peak, see the report)
 */

/**
 * What the benchmark needs of the engine (web/src/engine.js). `predictRoofline`, when the engine has
 * it, runs the analytic path alone: baseline (a) while the core reports no baselines.
 * @typedef {object} BenchEngine
 * @property {(request: PredictRequest) => Promise<PredictResponse>} predict
 * @property {() => Promise<Catalog>} catalog
 * @property {(request: PredictRequest) => Promise<PredictResponse>} [predictRoofline]
 */

/** @returns {Record<PredictorId, number | null>} */
function noValues() {
  return { main: null, roofline: null, prenet: null, flops40: null };
}

/** @returns {Record<PredictorId, string>} */
function noSources() {
  return { main: '', roofline: '', prenet: '', flops40: '' };
}

/**
 * @param {BenchEngine} engine
 * @param {Case[]} cases
 * @returns {Promise<CaseResult[]>}
 */
export async function runCases(engine, cases) {
  const catalog = await engine.catalog();
  /** @type {CaseResult[]} */
  const results = [];
  for (const item of cases) {
    if (!item.plan) {
      results.push({ case: item, status: 'skipped', reason: item.skip ?? 'not predicted', values: noValues(), from: noSources(), warnings: [] });
      continue;
    }
    const { plan } = item;
    const precision = plan.request.training?.precision ?? 'fp32';
    const entry = catalog.hardware.find((hardware) => hardware.id === item.hardware);
    if (!entry) throw new Error(`${item.origin}: catalogue has no accelerator "${item.hardware}"`);
    const peak = catalogPeak(entry, precision);

    /**
     * @param {PredictRequest} request
     * @param {boolean} [roofline] through the analytic path
     * @returns {Promise<{response: PredictResponse} | {error: string}>}
     */
    const predict = async (request, roofline = false) => {
      try {
        const response = roofline && engine.predictRoofline ? engine.predictRoofline(request) : engine.predict(request);
        return { response: await response };
      } catch (error) {
        if (error instanceof PrenetError) return { error: error.message };
        throw error;
      }
    };

    const first = await predict(plan.request);
    if ('error' in first) {
      results.push({ case: item, status: 'unsupported', reason: `unsupported: ${first.error}`, values: noValues(), from: noSources(), warnings: [] });
      continue;
    }
    const { response } = first;
    const result = response.results[0];
    if (!result || result.hardware !== item.hardware) throw new Error(`${item.origin}: response has no result for ${item.hardware}`);
    /**
     * The analytic path's result for a request, when (a) must come from it.
     * @param {PredictRequest} request
     * @param {PredictResponse} main
     * @returns {Promise<HardwareResult | null>}
     */
    const rooflineOf = async (request, main) => {
      const reported = /** @type {{baselines?: unknown}} */ (/** @type {unknown} */ (main.results[0] ?? {})).baselines;
      if (reported !== undefined || main.predictor === 'roofline' || !engine.predictRoofline) return null;
      const analytic = await predict(request, true);
      if ('error' in analytic) throw new Error(`${item.origin}: predictRoofline failed where predict did not: ${analytic.error}`);
      return analytic.response.results[0] ?? null;
    };
    const predictors = readPredictors(response, result, peak, await rooflineOf(plan.request, response));

    /** @type {Record<PredictorId, PredictorTimes> | null} */
    let noOptimizer = null;
    if (plan.accumulation > 1) {
      const request = { ...plan.request, training: { ...plan.request.training, optimizer: /** @type {const} */ ('none') } };
      const second = await predict(request);
      if ('error' in second) throw new Error(`${item.origin}: the optimizer-"none" twin failed: ${second.error}`);
      const twin = second.response.results[0];
      if (!twin) throw new Error(`${item.origin}: the optimizer-"none" twin has no result`);
      noOptimizer = readPredictors(second.response, twin, peak, await rooflineOf(request, second.response));
    }

    const values = noValues();
    const from = noSources();
    for (const id of PREDICTORS) {
      const own = predictors[id];
      from[id] = own.from;
      const twin = noOptimizer ? noOptimizer[id].times : null;
      if (own.times && (!noOptimizer || twin)) values[id] = caseValue(item.metric, plan, own.times, twin);
    }
    // Cross-check of a reported (c) against its definition.
    const flops40 = predictors.flops40;
    const warnings = [...response.warnings];
    if (flops40.times && flops40.from === 'core') {
      const own = flopsBaseline(response.model.flops_per_step, peak);
      if (Math.abs(flops40.times.step_ms - own.step_ms) > 1e-3 * own.step_ms) {
        warnings.push(`bench: the core's flops40 step ${flops40.times.step_ms} ms differs from FLOPs / (peak × 40%) = ${own.step_ms.toFixed(3)} ms`);
      }
    }
    results.push({
      case: item,
      status: 'predicted',
      interval: intervalFor(item.metric, plan, result),
      peakFraction: impliedPeakFraction(item, response.model.flops_per_step, peak),
      values,
      from,
      predictor: response.predictor,
      version: response.version,
      phases: { forward_ms: result.forward_ms, backward_ms: result.backward_ms, optimizer_ms: result.optimizer_ms },
      warnings,
    });
  }
  return results;
}

/**
 * Model FLOPs per compared unit of work divided by the measured time, over the dense peak. The FLOPs
 * are the core's count for the row's request (forward for forward rows, the whole step otherwise;
 * accumulation × (forward + backward) + the update for accumulating throughput rows).
 * @param {Case} item
 * @param {import('../../src/types').FlopsPerStep} flops
 * @param {number} peakTflops
 * @returns {number}
 */
export function impliedPeakFraction(item, flops, peakTflops) {
  const plan = item.plan;
  if (!plan) return NaN;
  let work;
  let seconds;
  if (item.metric === 'forward_ms') {
    work = flops.forward;
    seconds = item.measured / 1000;
  } else if (item.metric === 'step_ms') {
    work = flops.total;
    seconds = item.measured / 1000;
  } else {
    work = plan.accumulation * (flops.forward + flops.backward) + flops.optimizer;
    seconds = plan.samplesPerStep / item.measured;
  }
  // Multi-GPU rows: the whole job's FLOPs over all of its accelerators' peak.
  const parallel = plan.request.parallel;
  const gpus = parallel ? (parallel.gpus ?? (parallel.data ?? 1) * (parallel.tensor ?? 1) * (parallel.pipeline ?? 1)) : 1;
  return work / seconds / (peakTflops * 1e12 * gpus);
}
