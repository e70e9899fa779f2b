// Results beyond one number per accelerator: where a step on several GPUs goes (compute, exposed
// communication by kind, pipeline bubble) and the memory of one GPU by part, against its device
// memory, with the core's advice when it does not fit. Charts (charts.ts) plus tables with the same
// numbers (raw values in data-value). Text only (textContent), never HTML.

import { drawStackedChart, type Segment, type StackedRow } from './charts';
import { byId, element } from './dom';
import { formatGB, formatMs } from './format.js';
import type { HardwareResult, MemoryAdvice, ParallelResult, PredictResponse } from './types';

// ------------------------------------------------------------------ step parts

export const STEP_SEGMENTS: readonly Segment[] = [
  { key: 'compute', label: 'compute', className: 'seg-compute' },
  { key: 'data', label: 'data-parallel comm.', className: 'seg-comm-data' },
  { key: 'tensor', label: 'tensor-parallel comm.', className: 'seg-comm-tensor' },
  { key: 'pipeline', label: 'pipeline comm.', className: 'seg-comm-pipeline' },
  { key: 'zero', label: 'ZeRO comm.', className: 'seg-comm-zero' },
  { key: 'context', label: 'context-parallel comm.', className: 'seg-comm-context' },
  { key: 'expert', label: 'expert all-to-all', className: 'seg-comm-expert' },
  { key: 'bubble', label: 'pipeline bubble', className: 'seg-bubble' },
];

/** A step's parts in ms by segment key; they add up to step_ms (docs/API.md). */
export function stepParts(p: ParallelResult): Record<string, number> {
  return { compute: p.compute_ms, ...p.communication_ms, bubble: p.bubble_ms };
}

function describeParts(parts: Record<string, number>, segments: readonly Segment[], format: (v: number) => string): string {
  return segments
    .filter((s) => (parts[s.key] ?? 0) > 0)
    .map((s) => `${s.label} ${format(parts[s.key] ?? 0)}`)
    .join(', ');
}

function numberCell(column: string, value: number | undefined, format: (v: number) => string): HTMLTableCellElement {
  const td = element('td', value === undefined ? '—' : format(value), 'num');
  td.dataset.col = column;
  if (value !== undefined) td.dataset.value = String(value);
  return td;
}

function nameCell(result: HardwareResult): HTMLTableCellElement {
  const th = element('th', result.name);
  th.scope = 'row';
  return th;
}

function headRow(labels: readonly string[]): HTMLTableRowElement {
  const row = element('tr');
  labels.forEach((label, index) => {
    const th = element('th', label, index === 0 ? undefined : 'num');
    th.scope = 'col';
    row.append(th);
  });
  return row;
}

/** Which link each group's collectives use, "tensor: NVLink 4 450 GB/s; data: InfiniBand 50 GB/s". */
function linksText(p: ParallelResult): string {
  const groups = (['tensor', 'data', 'pipeline'] as const).flatMap((group) => {
    const use = p.links[group];
    if (use === null) return [];
    const link = p.links[use];
    return [`${group}: ${link.kind} ${Number(link.bandwidth_gbs.toPrecision(4))} GB/s ${use === 'intra_node' ? 'in' : 'across'} nodes`];
  });
  return groups.length > 0 ? groups.join('; ') : 'no collectives';
}

/** "data 8 × tensor 8 × pipeline 4", with context, experts and virtual stages where the layout has them. */
function layoutText(p: ParallelResult): string {
  const degrees: [string, number | undefined][] = [
    ['data', p.data],
    ['tensor', p.tensor],
    ['context', p.context],
    ['pipeline', p.pipeline],
  ];
  const text = degrees.filter(([name, v]) => v !== undefined && (v > 1 || name !== 'context')).map(([name, v]) => `${name} ${v}`);
  const extra = [
    p.expert !== undefined && p.expert > 1 ? `experts over ${p.expert} of the data ranks` : '',
    p.virtual_stages !== undefined && p.virtual_stages > 1 ? `${p.virtual_stages} model chunks per stage` : '',
  ].filter(Boolean);
  return text.join(' × ') + (extra.length > 0 ? `; ${extra.join(', ')}` : '');
}

/** The "Step across GPUs" card (its chart: drawStepChart): hidden unless the response has a layout of several GPUs. */
export function renderStepParts(response: PredictResponse): void {
  const section = byId('parallel-section', HTMLElement);
  // A one-GPU job (micro-batches or recomputation set, as on the first screen) has no step parts to show.
  const rows = response.results.filter((r) => r.parallel !== undefined && r.parallel.gpus > 1);
  section.hidden = rows.length === 0;
  if (rows.length === 0) return;
  const table = byId('step-parts', HTMLTableElement);
  const head = table.tHead ?? table.createTHead();
  // One column per kind of communication some row has (context and expert only where the layout uses them).
  const comms = STEP_SEGMENTS.filter(
    (s) => s.key !== 'compute' && s.key !== 'bubble' && rows.some((r) => s.key in (r.parallel as ParallelResult).communication_ms),
  );
  const title = (label: string): string => label.replace(/^./, (c) => c.toUpperCase());
  head.replaceChildren(headRow(['Accelerator', 'Compute', ...comms.map((s) => title(s.label)), 'Bubble', 'Step', 'Links used']));
  const body = table.tBodies[0] ?? table.createTBody();
  body.replaceChildren(
    ...rows.map((result) => {
      const p = result.parallel as ParallelResult;
      const row = element('tr');
      row.dataset.hardware = result.hardware;
      const links = element('td', linksText(p), 'links');
      links.dataset.col = 'links';
      links.title = `${p.links.gpus_per_node} GPUs per node; intra-node ${p.links.intra_node.kind} ${p.links.intra_node.bandwidth_gbs} GB/s, ${p.links.intra_node.latency_us} µs; inter-node ${p.links.inter_node.kind} ${p.links.inter_node.bandwidth_gbs} GB/s, ${p.links.inter_node.latency_us} µs`;
      row.append(
        nameCell(result),
        numberCell('compute_ms', p.compute_ms, formatMs),
        ...comms.map((s) => numberCell(`comm_${s.key}_ms`, p.communication_ms[s.key], formatMs)),
        numberCell('bubble_ms', p.bubble_ms, formatMs),
        numberCell('step_ms', result.step_ms, formatMs),
        links,
      );
      return row;
    }),
  );
  const first = rows[0]?.parallel as ParallelResult;
  byId('parallel-summary', HTMLElement).textContent =
    `One step on ${first.gpus} GPUs (${layoutText(first)}), on the GPU that limits it: ` +
    'compute, then the communication that compute does not hide, then the time pipeline stages wait.';
}

export function drawStepChart(response: PredictResponse): void {
  const rows: StackedRow[] = response.results
    .filter((r) => r.parallel !== undefined && r.parallel.gpus > 1) // as renderStepParts shows them
    .map((r) => ({ label: r.name, parts: stepParts(r.parallel as ParallelResult), text: formatMs(r.step_ms) }));
  drawStackedChart(byId('step-chart', HTMLElement), rows, STEP_SEGMENTS, 'Step time by part', (row) => describeParts(row.parts, STEP_SEGMENTS, formatMs));
}

// ------------------------------------------------------------------ memory

export const MEMORY_SEGMENTS: readonly Segment[] = [
  { key: 'weights_gb', label: 'weights', className: 'seg-mem-weights' },
  { key: 'gradients_gb', label: 'gradients', className: 'seg-mem-gradients' },
  { key: 'optimizer_gb', label: 'optimizer state', className: 'seg-mem-optimizer' },
  { key: 'activations_gb', label: 'activations', className: 'seg-mem-activations' },
  { key: 'temporary_gb', label: 'temporary', className: 'seg-mem-temporary' },
  { key: 'overhead_gb', label: 'runtime', className: 'seg-mem-overhead' },
];

function memoryParts(result: HardwareResult): Record<string, number> {
  return { ...result.memory };
}

export function drawMemoryChart(response: PredictResponse): void {
  const rows: StackedRow[] = response.results.map((r) => ({
    label: r.name,
    parts: memoryParts(r),
    text: formatGB(r.memory_gb),
    noFit: !r.fits,
    ...(r.device_memory_gb === undefined ? {} : { limit: { value: r.device_memory_gb, text: formatGB(r.device_memory_gb) } }),
  }));
  const perGpu = response.results.some((r) => r.parallel !== undefined) ? ' per GPU' : '';
  drawStackedChart(
    byId('memory-chart', HTMLElement),
    rows,
    MEMORY_SEGMENTS,
    `Memory${perGpu} by part`,
    (row) => `${describeParts(row.parts, MEMORY_SEGMENTS, formatGB)}${row.limit === undefined ? '' : `; device ${row.limit.text}`}`,
    'device memory',
  );
}

/** How one advice reads: "sequence parallelism", "recompute full", "ZeRO stage 3", "tensor 4 (16 GPUs)". */
export function adviceText(advice: MemoryAdvice, currentGpus: number): string {
  const c = advice.change;
  const parts: string[] = [];
  if (c['sequence_parallel'] === true) parts.push('sequence parallelism');
  if (c['recompute'] !== undefined) parts.push(`recompute ${c['recompute']}`);
  if (c['zero_stage'] !== undefined) parts.push(`ZeRO stage ${c['zero_stage']}`);
  if (c['micro_batch_size'] !== undefined) parts.push(`micro-batch ${c['micro_batch_size']} × ${c['micro_batches'] ?? '?'}`);
  if (c['tensor'] !== undefined) parts.push(`tensor ${c['tensor']}`);
  if (c['pipeline'] !== undefined) parts.push(`pipeline ${c['pipeline']}`);
  for (const [key, value] of Object.entries(c)) {
    if (!['sequence_parallel', 'recompute', 'zero_stage', 'micro_batch_size', 'micro_batches', 'tensor', 'pipeline', 'gpus'].includes(key)) parts.push(`${key} ${value}`);
  }
  const gpus = advice.gpus !== currentGpus ? ` on ${advice.gpus} GPUs` : '';
  return `${parts.join(', ')}${gpus}: ${formatGB(advice.memory_gb)}`;
}

/**
 * The memory card (its chart: drawMemoryChart): table and, for each accelerator the model does not fit on, the core's
 * smallest changes that would (each a button applying it to the form).
 */
export function renderMemory(response: PredictResponse, apply: (change: MemoryAdvice['change']) => void): void {
  const parallel = response.results.some((r) => r.parallel !== undefined);
  byId('memory-heading', HTMLElement).textContent = parallel ? 'Memory per GPU' : 'Memory';
  const table = byId('memory-table', HTMLTableElement);
  const head = table.tHead ?? table.createTHead();
  head.replaceChildren(headRow(['Accelerator', 'Weights', 'Gradients', 'Optimizer', 'Activations', 'Temporary', 'Runtime', 'Total', 'Device', 'Fits']));
  const body = table.tBodies[0] ?? table.createTBody();
  body.replaceChildren(
    ...response.results.map((r) => {
      const row = element('tr');
      row.dataset.hardware = r.hardware;
      const fits = element('td', r.fits ? 'yes' : 'no', r.fits ? 'fits' : 'fits no');
      fits.dataset.col = 'fits';
      fits.dataset.value = String(r.fits);
      row.append(
        nameCell(r),
        ...MEMORY_SEGMENTS.map((s) => numberCell(s.key, r.memory[s.key as keyof HardwareResult['memory']], formatGB)),
        numberCell('memory_gb', r.memory_gb, formatGB),
        numberCell('device_memory_gb', r.device_memory_gb, formatGB),
        fits,
      );
      return row;
    }),
  );
  const list = byId('memory-advice', HTMLElement);
  list.replaceChildren(...response.results.filter((r) => !r.fits).map((r) => adviceItem(r, parallel, apply)));
}

function adviceItem(result: HardwareResult, parallel: boolean, apply: (change: MemoryAdvice['change']) => void): HTMLLIElement {
  const item = element('li');
  item.dataset.hardware = result.hardware;
  const need = `${result.name} needs ${formatGB(result.memory_gb)}${parallel ? ' per GPU' : ''}` +
    (result.device_memory_gb === undefined ? '' : ` of its ${formatGB(result.device_memory_gb)}`);
  const advice = result.memory_advice ?? [];
  if (!parallel) {
    item.append(`${need}. Spread the model over several GPUs (GPUs and parallelism), recompute activations, or use a smaller batch.`);
    return item;
  }
  if (advice.length === 0) {
    item.append(`${need}. No single change of recomputation, ZeRO stage, micro-batch, tensor or pipeline degree makes it fit; combine them or use more GPUs.`);
    return item;
  }
  item.append(`${need}. Any one of these fits:`);
  const options = element('ul', undefined, 'advice');
  const gpus = result.parallel?.gpus ?? 1;
  for (const a of advice) {
    const option = element('li');
    const button = element('button', adviceText(a, gpus), 'button small');
    button.type = 'button';
    button.title = 'Apply this change to the form';
    button.addEventListener('click', () => apply(a.change));
    option.append(button);
    options.append(option);
  }
  item.append(options);
  return item;
}
