// What the export buttons write: the comparison as CSV (one row per accelerator, raw numbers in
// stated units, so a spreadsheet can compute with them) and the full request + response as JSON.
// Plain JS with JSDoc types (see engine.js) so the Node tests cover it.

/**
 * @typedef {import('./types').PredictResponse} PredictResponse
 * @typedef {import('./types').PredictRequest} PredictRequest
 * @typedef {import('./types').HardwareResult} HardwareResult
 */

/** @type {ReadonlyArray<readonly [header: string, value: (result: HardwareResult) => string | number | boolean | null]>} */
const COLUMNS = [
  ['accelerator', (r) => r.name],
  ['id', (r) => r.hardware],
  ['custom', (r) => r.custom],
  ['step_ms', (r) => r.step_ms],
  ['forward_ms', (r) => r.forward_ms],
  ['backward_ms', (r) => r.backward_ms],
  ['optimizer_ms', (r) => r.optimizer_ms],
  ['epoch_s', (r) => r.epoch_s],
  ['total_s', (r) => r.total_s],
  ['memory_gb', (r) => r.memory_gb],
  ['device_memory_gb', (r) => r.device_memory_gb ?? null],
  ['fits', (r) => r.fits],
  ['price_per_hour_usd', (r) => r.price_per_hour_usd],
  ['cost_usd', (r) => r.cost_usd],
  ['mfu', (r) => r.mfu],
  ['bottleneck', (r) => r.bottleneck],
];

/**
 * Last, so the earlier columns keep their places: which predictor made the row, the learned
 * predictor's 80% interval (empty for the roofline) and the roofline baseline.
 * @type {ReadonlyArray<readonly [header: string, value: (result: HardwareResult, response: PredictResponse) => string | number | null]>}
 */
const PREDICTOR_COLUMNS = [
  ['predictor', (r, response) => r.predictor ?? response.predictor],
  ['step_ms_low', (r) => r.step_ms_interval?.[0] ?? null],
  ['step_ms_high', (r) => r.step_ms_interval?.[1] ?? null],
  ['total_s_low', (r) => r.total_s_interval?.[0] ?? null],
  ['total_s_high', (r) => r.total_s_interval?.[1] ?? null],
  ['roofline_step_ms', (r) => r.baselines?.['roofline']?.step_ms ?? null],
];

/**
 * After those: the layout on several GPUs and the step's parts (empty for one GPU), then the memory
 * of one GPU by part.
 * @type {ReadonlyArray<readonly [header: string, value: (result: HardwareResult) => string | number | null]>}
 */
const PARALLEL_COLUMNS = [
  ['gpus', (r) => r.parallel?.gpus ?? null],
  ['data', (r) => r.parallel?.data ?? null],
  ['tensor', (r) => r.parallel?.tensor ?? null],
  ['pipeline', (r) => r.parallel?.pipeline ?? null],
  ['micro_batch_size', (r) => r.parallel?.micro_batch_size ?? null],
  ['micro_batches', (r) => r.parallel?.micro_batches ?? null],
  ['zero_stage', (r) => r.parallel?.zero_stage ?? null],
  ['recompute', (r) => r.parallel?.recompute ?? null],
  ['sequence_parallel', (r) => (r.parallel === undefined ? null : String(r.parallel.sequence_parallel))],
  ['compute_ms', (r) => r.parallel?.compute_ms ?? null],
  ['communication_data_ms', (r) => r.parallel?.communication_ms.data ?? null],
  ['communication_tensor_ms', (r) => r.parallel?.communication_ms.tensor ?? null],
  ['communication_pipeline_ms', (r) => r.parallel?.communication_ms.pipeline ?? null],
  ['communication_zero_ms', (r) => r.parallel?.communication_ms.zero ?? null],
  ['bubble_ms', (r) => r.parallel?.bubble_ms ?? null],
  ['intra_node_gbs', (r) => r.parallel?.links.intra_node.bandwidth_gbs ?? null],
  ['inter_node_gbs', (r) => r.parallel?.links.inter_node.bandwidth_gbs ?? null],
  ['weights_gb', (r) => r.memory.weights_gb],
  ['gradients_gb', (r) => r.memory.gradients_gb],
  ['optimizer_gb', (r) => r.memory.optimizer_gb],
  ['activations_gb', (r) => r.memory.activations_gb],
  ['temporary_gb', (r) => r.memory.temporary_gb ?? null],
  ['overhead_gb', (r) => r.memory.overhead_gb ?? null],
];

/**
 * One CSV field (RFC 4180). Text that a spreadsheet would run as a formula (a custom accelerator
 * named "=HYPERLINK(...)") gets a leading apostrophe.
 * @param {string | number | boolean | null} value
 */
function csvField(value) {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/**
 * @param {PredictResponse} response
 * @returns {string} with a header row and CRLF line ends, as spreadsheets expect
 */
export function resultsCsv(response) {
  const { model, training } = response;
  const context = [
    ['model', model.name],
    ['batch_size', training.batch_size],
    ['precision', training.precision],
    ['optimizer', training.optimizer],
    ['dataset_size', training.dataset_size],
    ['epochs', training.epochs],
  ];
  const header = [
    ...COLUMNS.map(([name]) => name),
    ...context.map(([name]) => name),
    ...PREDICTOR_COLUMNS.map(([name]) => name),
    ...PARALLEL_COLUMNS.map(([name]) => name),
  ];
  const rows = response.results.map((result) => [
    ...COLUMNS.map(([, value]) => csvField(value(result))),
    ...context.map(([, value]) => csvField(value ?? null)),
    ...PREDICTOR_COLUMNS.map(([, value]) => csvField(value(result, response))),
    ...PARALLEL_COLUMNS.map(([, value]) => csvField(value(result))),
  ]);
  return [header.join(','), ...rows.map((row) => row.join(','))].join('\r\n') + '\r\n';
}

/**
 * The JSON export: what was asked and what came back, enough to reproduce the numbers with
 * `npx prenet predict --request`.
 * @param {PredictRequest} request
 * @param {PredictResponse} response
 */
export function exportJson(request, response) {
  return `${JSON.stringify({ request, response }, null, 2)}\n`;
}

/**
 * A file name safe on every OS: prenet-<model>-<yyyy-mm-dd>.<ext>.
 * @param {string} model
 * @param {string} extension
 * @param {Date} [date]
 */
export function exportFileName(model, extension, date = new Date()) {
  const slug = model.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'model';
  return `prenet-${slug}-${date.toISOString().slice(0, 10)}.${extension}`;
}
