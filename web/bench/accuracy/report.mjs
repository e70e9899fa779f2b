// Groups, targets and the Markdown of docs/ACCURACY.md. Everything here is a pure function of the
// case results, so the same results give the same text (the date is passed in).

import { signedError, summarize } from './metrics.mjs';
import { BASELINE_IDS, BASELINE_TITLES, PREDICTORS } from './predictors.mjs';
import { MULTI_GPU_SKIP } from './rows.mjs';

/**
 * @typedef {import('./run.mjs').CaseResult} CaseResult
 * @typedef {import('./rows.mjs').Case} Case
 * @typedef {import('./predictors.mjs').PredictorId} PredictorId
 * @typedef {import('./metrics.mjs').ErrorSummary} ErrorSummary
 */

/** @typedef {{title: string, sub?: boolean, test: (item: Case) => boolean}} Group */

/** @type {Readonly<Record<import('./rows.mjs').SourceId, string>>} */
export const SOURCE_TITLES = Object.freeze({
  neusight: 'NeuSight (PyTorch, strict FP32; one GPU unless the group says otherwise)',
  'neusight-fusion': 'NeuSight, fused kernels (own group, in no target)',
  dle: 'DeepLearningExamples, V100 training throughput (one GPU unless the group says otherwise)',
  justus: 'Justus et al., VGG-16 on V100 (TensorFlow 1.x, FP32)',
});

/** @type {Readonly<Record<PredictorId, string>>} */
export const PREDICTOR_TITLES = Object.freeze({ main: 'main predictor', ...BASELINE_TITLES });

/** @param {Case} item */
export function isMultiGpu(item) {
  return item.plan?.request.parallel !== undefined || (item.skip?.startsWith(MULTI_GPU_SKIP) ?? false);
}

/**
 * Summary groups: per source (with subgroups), per accelerator, overall. Fused-kernel rows are only
 * in their own group.
 * @param {CaseResult[]} results
 * @returns {Group[]}
 */
export function summaryGroups(results) {
  /** @param {Case} item */
  const unfused = (item) => item.source !== 'neusight-fusion';
  const hardware = [...new Set(results.filter((r) => unfused(r.case) && r.case.hardware).map((r) => /** @type {string} */ (r.case.hardware)))].sort();
  return [
    { title: SOURCE_TITLES.neusight, test: (c) => c.source === 'neusight' },
    { title: 'training: forward + backward, no optimizer', sub: true, test: (c) => c.source === 'neusight' && c.group === 'train' },
    { title: '4× A100-SXM4 data/tensor/pipeline parallel: whole Megatron step', sub: true, test: (c) => c.source === 'neusight' && c.group === 'parallel' },
    { title: 'inference: forward only', sub: true, test: (c) => c.source === 'neusight' && c.group === 'inf' },
    { title: SOURCE_TITLES['neusight-fusion'], test: (c) => c.source === 'neusight-fusion' },
    { title: SOURCE_TITLES.dle, test: (c) => c.source === 'dle' },
    { title: 'FP32', sub: true, test: (c) => c.source === 'dle' && c.group === 'fp32' },
    { title: 'AMP (fp16 mixed precision)', sub: true, test: (c) => c.source === 'dle' && c.group === 'amp' },
    { title: SOURCE_TITLES.justus, test: (c) => c.source === 'justus' },
    { title: 'forward only', sub: true, test: (c) => c.source === 'justus' && c.group === 'fw' },
    { title: 'training step, SGD', sub: true, test: (c) => c.source === 'justus' && c.group === 'sgd' },
    { title: 'training step, Adam', sub: true, test: (c) => c.source === 'justus' && c.group === 'adam' },
    ...hardware.map((id) => ({ title: `accelerator \`${id}\``, test: (/** @type {Case} */ c) => unfused(c) && c.hardware === id })),
    { title: 'multi-GPU rows (every source)', test: isMultiGpu },
    { title: 'overall (every source; fused-kernel rows excluded)', test: unfused },
  ];
}

/**
 * @param {CaseResult[]} results
 * @param {PredictorId} id
 * @returns {ErrorSummary | null} null when the predictor has no value on any of the rows
 */
export function predictorSummary(results, id) {
  const pairs = results.flatMap((r) => {
    const value = r.values[id];
    return value === null ? [] : [{ predicted: value, measured: r.case.measured }];
  });
  return pairs.length ? summarize(pairs) : null;
}

// ------------------------------------------------------------------------------------------ targets

/**
 * @typedef {object} Target
 * @property {string} title
 * @property {number} limit MAPE, %
 * @property {(item: Case) => boolean} test the rows the target is on
 * @property {boolean} [sub] a part of the target above it
 * @property {boolean} [multi] a target on multi-GPU rows (the others leave them out)
 */

/** @type {readonly Target[]} */
export const TARGETS = Object.freeze([
  { title: 'NeuSight single-GPU rows, training and forward-only', limit: 12, test: (c) => c.source === 'neusight' },
  { title: 'training (forward + backward)', limit: 12, sub: true, test: (c) => c.source === 'neusight' && c.group === 'train' },
  { title: 'forward-only', limit: 12, sub: true, test: (c) => c.source === 'neusight' && c.group === 'inf' },
  { title: 'DeepLearningExamples V100 single-GPU rows, FP32 and AMP', limit: 20, test: (c) => c.source === 'dle' },
  { title: 'multi-GPU rows (NeuSight 4× A100 dp4/tp4/pp4_1, DLE 8× V100 ResNet-50)', limit: 15, multi: true, test: isMultiGpu },
]);

/**
 * @typedef {object} TargetVerdict
 * @property {Target} target
 * @property {number} rows single-GPU rows in the target
 * @property {number} predicted
 * @property {ErrorSummary | null} main
 * @property {boolean} met MAPE within the limit and every row predicted
 * @property {string} text
 * @property {{id: import('./predictors.mjs').BaselineId, better: boolean | null, text: string}[]} baselines better: null = cannot tell
 */

/**
 * @param {Target} target
 * @param {CaseResult[]} results
 * @returns {TargetVerdict}
 */
export function judgeTarget(target, results) {
  const inSet = results.filter((r) => target.test(r.case) && (target.multi === true || !isMultiGpu(r.case)));
  const predicted = inSet.filter((r) => r.status === 'predicted');
  const main = predictorSummary(predicted, 'main');
  const missing = inSet.length - predicted.length;
  const within = main !== null && main.mape <= target.limit;
  const met = within && missing === 0;
  let text;
  if (!main) text = `not met: none of its ${inSet.length} rows predicted`;
  else {
    const value = `MAPE ${pct(main.mape)} (limit ${target.limit}%)`;
    text = missing
      ? `not met: ${missing} of ${inSet.length} rows not predicted; ${value} on the ${predicted.length} predicted`
      : `${met ? 'met' : 'not met'}: ${value} on ${predicted.length} rows`;
  }
  const baselines = BASELINE_IDS.map((id) => {
    const both = predicted.filter((r) => r.values.main !== null && r.values[id] !== null);
    const ours = predictorSummary(both, 'main');
    const theirs = predictorSummary(both, id);
    if (!ours || !theirs) return { id, better: null, text: "cannot tell: no value on these rows" };
    const same = both.every((r) => r.values[id] === r.values.main);
    const better = ours.mape < theirs.mape;
    const detail = `${pct(ours.mape)} vs ${pct(theirs.mape)} on ${both.length} rows`;
    if (same) return { id, better: false, text: `not better: it is the main predictor today (${detail})` };
    return { id, better, text: `${better ? 'better' : 'not better'}: ${detail}` };
  });
  return { target, rows: inSet.length, predicted: predicted.length, main, met, text, baselines };
}

// ------------------------------------------------------------------------------------------ formatting

/** @param {number} value percent */
export function pct(value) {
  return Number.isFinite(value) ? `${value.toFixed(1)}%` : 'n/a';
}

/** @param {number} value percent, signed */
function signedPct(value) {
  return `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(1)}%`;
}

/**
 * Four significant digits without exponent notation.
 * @param {number} value
 */
export function num(value) {
  if (!Number.isFinite(value)) return 'n/a';
  const magnitude = Math.abs(value);
  const decimals = magnitude >= 1000 ? 0 : magnitude >= 100 ? 1 : magnitude >= 10 ? 2 : 3;
  return value.toFixed(decimals);
}

/** @param {string} text */
function cell(text) {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/**
 * @param {string[]} header
 * @param {string[][]} rows
 * @param {string} [align] one character per column: l or r
 */
export function table(header, rows, align) {
  const rule = header.map((_, i) => ((align ?? '')[i] === 'r' ? '---:' : '---'));
  return [header, rule, ...rows].map((row) => `| ${row.map(cell).join(' | ')} |`).join('\n');
}

/** @param {ErrorSummary | null} summary @param {number} predicted */
function mapeCell(summary, predicted) {
  if (!summary) return 'n/a';
  return `${pct(summary.mape)} / ${pct(summary.medape)}${summary.n === predicted ? '' : ` (${summary.n})`}`;
}

/** @param {ErrorSummary | null} summary */
function biasCell(summary) {
  return summary ? signedPct(summary.bias) : 'n/a';
}

/** @param {Case} item */
function measuredText(item) {
  return `${num(item.measured)} ${item.unit}`;
}

/** @param {import('./rows.mjs').Metric} metric */
function metricText(metric) {
  return metric === 'step_ms' ? 'step' : metric === 'forward_ms' ? 'forward' : 'throughput';
}

// ------------------------------------------------------------------------------------------ sections

/**
 * @param {CaseResult[]} results
 * @returns {string}
 */
export function summaryTable(results) {
  const rows = summaryGroups(results).flatMap((group) => {
    const inGroup = results.filter((r) => group.test(r.case));
    if (inGroup.length === 0) return [];
    const predicted = inGroup.filter((r) => r.status === 'predicted');
    return [
      [
        group.sub ? `  ↳ ${group.title}` : group.title,
        String(inGroup.length),
        String(predicted.length),
        ...PREDICTORS.map((id) => mapeCell(predictorSummary(predicted, id), predicted.length)),
        biasCell(predictorSummary(predicted, 'main')),
        coverageCell(predicted),
      ],
    ];
  });
  const header = ['rows', 'in data', 'predicted', ...PREDICTORS.map((id) => PREDICTOR_TITLES[id]), 'main: mean signed error', 'main: inside its interval'];
  return table(header, rows, 'lrrrrrrrr');
}

/**
 * Measurements inside the main predictor's interval, over the rows that have one.
 * @param {CaseResult[]} predicted
 */
export function coverageCell(predicted) {
  const withInterval = predicted.filter((r) => r.interval);
  if (withInterval.length === 0) return '—';
  const inside = withInterval.filter((r) => isInside(r)).length;
  return `${inside} of ${withInterval.length}`;
}

/** @param {CaseResult} r */
function isInside(r) {
  return r.interval ? r.case.measured >= r.interval[0] && r.case.measured <= r.interval[1] : false;
}

/** @param {CaseResult} r */
function intervalCell(r) {
  if (!r.interval) return '—';
  return `${num(r.interval[0])}–${num(r.interval[1])} ${isInside(r) ? '✓' : '✗'}`;
}

/**
 * @param {TargetVerdict[]} verdicts
 * @returns {string}
 */
export function targetsText(verdicts) {
  const lines = verdicts.map((v) => {
    const head = `${v.target.sub ? '  - ' : '- '}**${v.target.title}**, ≤ ${v.target.limit}% MAPE: ${v.text}`;
    if (v.target.sub) return head;
    const all = v.baselines.every((b) => b.better === true);
    const unknown = v.baselines.some((b) => b.better === null);
    const verdict = all ? 'met' : unknown && v.baselines.every((b) => b.better !== false) ? 'cannot tell' : 'not met';
    const each = v.baselines.map((b) => `    - ${BASELINE_TITLES[b.id]}: ${b.text}`);
    return [head, `  - better than every baseline on these rows: ${verdict}`, ...each].join('\n');
  });
  return lines.join('\n');
}

/**
 * @param {CaseResult[]} results
 * @returns {string}
 */
export function notPredictedText(results) {
  /** @type {Map<string, CaseResult[]>} */
  const byReason = new Map();
  for (const r of results) {
    if (r.status === 'predicted') continue;
    const reason = r.reason ?? '';
    byReason.set(reason, [...(byReason.get(reason) ?? []), r]);
  }
  return [...byReason].map(([reason, rows]) => `- ${rows.length} × ${reason} — ${rows.map((r) => r.case.row).join('; ')}`).join('\n');
}

/**
 * @param {CaseResult[]} results
 * @returns {string}
 */
export function appendixRows(results) {
  const rows = results
    .map((r, index) => ({ r, index: index + 1 }))
    .filter(({ r }) => r.status === 'predicted')
    .map(({ r, index }) => [
      String(index),
      r.case.row,
      `\`${r.case.hardware}\``,
      metricText(r.case.metric),
      measuredText(r.case),
      ...PREDICTORS.flatMap((id) => {
        const value = r.values[id];
        const cells = value === null ? ['n/a', ''] : [num(value), signedPct(signedError(value, r.case.measured))];
        return id === 'main' ? [...cells, intervalCell(r)] : cells;
      }),
      peakCell(r.peakFraction),
    ]);
  const header = ['#', 'row', 'accelerator', 'compared', 'measured'];
  for (const id of PREDICTORS) {
    header.push(id === 'main' ? 'main' : `(${id === 'roofline' ? 'a' : id === 'prenet' ? 'b' : 'c'})`, 'error');
    if (id === 'main') header.push('main interval');
  }
  header.push('measured % of peak');
  return table(header, rows, 'rlllrrrrrrrrrrr');
}

/** @param {number | undefined} fraction */
function peakCell(fraction) {
  if (fraction === undefined || !Number.isFinite(fraction)) return 'n/a';
  return `${(fraction * 100).toFixed(0)}%${fraction > 1 ? ' ⚠' : ''}`;
}

/**
 * Rows whose measurement implies more model FLOPs per second than the accelerator's dense peak at the
 * row's precision: the measured run did less work than the request describes (or the data are off).
 * @param {CaseResult[]} results
 * @returns {string}
 */
export function overPeakText(results) {
  const rows = results
    .map((r, index) => ({ r, index: index + 1 }))
    .filter(({ r }) => r.status === 'predicted' && (r.peakFraction ?? 0) > 1);
  if (rows.length === 0) return '_No row implies more than the peak._';
  return rows.map(({ r, index }) => `- #${index} ${r.case.row}: ${peakCell(r.peakFraction)} of \`${r.case.hardware}\`'s peak`).join('\n');
}

/**
 * @param {CaseResult[]} results
 * @returns {string}
 */
export function appendixPhases(results) {
  const rows = results.flatMap((r) => {
    const measured = r.case.measuredPhases;
    if (r.status !== 'predicted' || !measured || !r.phases) return [];
    const { forward_ms: fw, backward_ms: bw } = r.phases;
    // The inference label of the same model, shape and GPU, when the data have one.
    const twinRow = r.case.row.replace('-train-', '-inf-');
    const twin = results.find((other) => other.case.source === r.case.source && other.case.row === twinRow);
    return [
      [
        r.case.row,
        twin ? num(twin.case.measured) : '—',
        num(measured.forward_ms),
        num(fw),
        signedPct(signedError(fw, measured.forward_ms)),
        num(measured.backward_ms),
        num(bw),
        signedPct(signedError(bw, measured.backward_ms)),
        (measured.backward_ms / measured.forward_ms).toFixed(2),
        (bw / fw).toFixed(2),
      ],
    ];
  });
  if (rows.length === 0) return '_No NeuSight training row was predicted._';
  return table(
    ['row', 'inf label, same shape (ms)', 'forward measured (ms)', 'predicted', 'error', 'backward measured (ms)', 'predicted', 'error', 'bwd/fwd measured', 'predicted'],
    rows,
    'lrrrrrrrrr',
  );
}

/**
 * @param {CaseResult[]} results
 * @returns {string}
 */
export function appendixNotPredicted(results) {
  const rows = results
    .map((r, index) => ({ r, index: index + 1 }))
    .filter(({ r }) => r.status !== 'predicted')
    .map(({ r, index }) => [String(index), r.case.row, r.case.hardware ? `\`${r.case.hardware}\`` : '—', measuredText(r.case), r.reason ?? '']);
  return rows.length ? table(['#', 'row', 'accelerator', 'measured', 'why not predicted'], rows, 'rllrl') : '_Every row was predicted._';
}

/**
 * Distinct mapping notes and core warnings, with the rows (by #) they apply to.
 * @param {CaseResult[]} results
 * @returns {string}
 */
export function notesText(results) {
  /** @type {Map<string, number[]>} */
  const notes = new Map();
  results.forEach((r, index) => {
    if (r.status !== 'predicted') return;
    const lines = [...r.case.notes, ...r.warnings.map((w) => `core warning: ${w}`)];
    for (const note of lines) notes.set(note, [...(notes.get(note) ?? []), index + 1]);
  });
  if (notes.size === 0) return '_None._';
  return [...notes].map(([note, rows]) => `- ${rows.length === 1 ? 'row' : 'rows'} ${rows.join(', ')}: ${note}`).join('\n');
}

/**
 * Where each predictor's numbers came from in this run.
 * @param {CaseResult[]} results
 * @returns {string}
 */
export function provenanceText(results) {
  return PREDICTORS.map((id) => {
    const sources = [...new Set(results.filter((r) => r.status === 'predicted').map((r) => r.from[id]))];
    return `- ${PREDICTOR_TITLES[id]}: ${sources.join('; ') || 'no row predicted'}`;
  }).join('\n');
}
