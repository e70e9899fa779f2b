// One computation as the page asks for it: a request plus, optionally, the config text the user
// pasted, turned into a result or the one error to show. Runs wherever the engine runs (the worker,
// or the page's thread when no worker can start), so that parsing a large pasted config never
// blocks typing. Plain JS with JSDoc types (see engine.js) so the Node tests cover it.
//
// Learned predictors need nothing here: the engine passed in is built with a ModelRunner (ONNX
// Runtime, engine-worker.ts), so `engine.predict` already returns the learned response.

import { PrenetError } from './engine.js';
import { readModelConfig } from './model-config.js';
import { sortResults } from './sort.js';

/**
 * @typedef {import('./types').PredictRequest} PredictRequest
 * @typedef {import('./types').PredictResponse} PredictResponse
 * @typedef {{ request: PredictRequest, configText?: string,
 *   layersFor?: { id: string, sort: import('./scenario.js').Sort } }} Job
 *   `configText`, when not blank, replaces `request.model` (read by model-config.js).
 *   `layersFor` asks for per-layer timings on one accelerator only (the one the page's chart
 *   shows: `id`, or else the first row in `sort` order). Since per-layer results became columns
 *   (docs/API.md), asking for every accelerator would cost little more, so this split could go.
 * @typedef {{ ok: true, response: PredictResponse, understood: string | null }
 *   | { ok: false, field: string, message: string, understood: string | null }} JobResult
 *   `understood` describes how the config text was read ("Hugging Face config (model_type "gpt2")"),
 *   null when the preset was used; it is given with errors too, so the page can say what it tried.
 */

/**
 * The job's request with the pasted config, when there is one, in place of its model.
 * @template {{ model?: unknown }} R
 * @param {{ catalog(): Promise<import('./types').Catalog> }} engine whose catalogue names the model forms
 * @param {{ request: R, configText?: string }} job
 * @returns {Promise<{ ok: true, request: R, understood: string | null } | { ok: false, field: string, message: string, understood: null }>}
 */
async function withConfig(engine, job) {
  const text = job.configText ?? '';
  if (text.trim() === '') return { ok: true, request: job.request, understood: null };
  const reading = readModelConfig(text, (await engine.catalog()).model_forms);
  if (!reading.ok) return { ok: false, field: 'config', message: reading.message, understood: null };
  return { ok: true, request: { ...job.request, model: reading.model }, understood: reading.description };
}

/**
 * @param {{ predict(request: PredictRequest): Promise<PredictResponse>, catalog(): Promise<import('./types').Catalog> }} engine
 * @param {Job} job
 * @returns {Promise<JobResult>} rejects only when the core itself fails (not for a bad request)
 */
export async function runJob(engine, job) {
  const configured = await withConfig(engine, job);
  if (!configured.ok) return configured;
  const { request, understood } = configured;
  try {
    const response = job.layersFor === undefined ? await engine.predict(request) : await predictWithLayersForOne(engine, request, job.layersFor);
    return { ok: true, response, understood };
  } catch (error) {
    if (error instanceof PrenetError) return { ok: false, field: error.field, message: error.message, understood };
    throw error;
  }
}

/**
 * @typedef {import('./types').HardwareRef} HardwareRef
 * @param {HardwareRef} ref
 */
function idOf(ref) {
  return typeof ref === 'string' ? ref : ref.id;
}

/**
 * All accelerators without per-layer timings, then the chosen one again with them, its result
 * replacing the first (the core is deterministic, so its totals are the same numbers).
 * @param {{ predict(request: PredictRequest): Promise<PredictResponse> }} engine
 * @param {PredictRequest} request
 * @param {NonNullable<Job['layersFor']>} layersFor
 */
async function predictWithLayersForOne(engine, request, layersFor) {
  const response = await engine.predict({ ...request, options: { ...request.options, per_layer: false } });
  const hardware = request.hardware;
  if (hardware === undefined || hardware.length !== response.results.length) return response;
  const chosen = response.results.find((result) => result.hardware === layersFor.id) ?? sortResults(response.results, layersFor.sort)[0];
  const index = chosen === undefined ? -1 : response.results.indexOf(chosen);
  const ref = hardware[index];
  if (ref === undefined) return response;
  // A calibration needs its measured accelerator in the request (its factor is the others' too).
  const calibrated = request.calibration === undefined ? -1 : hardware.findIndex((candidate) => idOf(candidate) === request.calibration?.hardware);
  const refs = calibrated < 0 || calibrated === index ? [ref] : [ref, /** @type {HardwareRef} */ (hardware[calibrated])];
  const detail = await engine.predict({ ...request, hardware: refs, options: { ...request.options, per_layer: true } });
  const result = detail.results[0];
  if (result === undefined) return response;
  const results = [...response.results];
  results[index] = result;
  return { ...response, results, layers: detail.layers };
}

/**
 * @typedef {import('./types').PlanRequest} PlanRequest
 * @typedef {import('./types').PlanResponse} PlanResponse
 * @typedef {{ request: PlanRequest, configText?: string }} PlanJob the Plan panel's search
 * @typedef {{ ok: true, response: PlanResponse, understood: string | null }
 *   | { ok: false, field: string, message: string, understood: string | null }} PlanResult
 */

/**
 * Searches layouts for a budget (the core's plan mode), with the same config handling as runJob.
 * @param {{ plan(request: PlanRequest): Promise<PlanResponse>, catalog(): Promise<import('./types').Catalog> }} planner
 *   the engine (engine.js), whose plan() scales the roofline search by the learned predictors when they are loaded
 * @param {PlanJob} job
 * @returns {Promise<PlanResult>} rejects only when the core itself fails
 */
export async function runPlan(planner, job) {
  const configured = await withConfig(planner, job);
  if (!configured.ok) return configured;
  const { request, understood } = configured;
  try {
    return { ok: true, response: await planner.plan(request), understood };
  } catch (error) {
    if (error instanceof PrenetError) return { ok: false, field: error.field, message: error.message, understood };
    throw error;
  }
}
