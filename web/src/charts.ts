// Horizontal bar charts drawn as SVG with DOM calls (no chart library, no markup strings): time and
// cost across accelerators, and the per-layer breakdown (forward / backward / optimizer stacked).
// Charts are drawn at the container's pixel width, so text stays 12 px on a phone instead of
// shrinking with a scaled viewBox; the page redraws them when the width changes. Colours come from
// CSS classes, so the themes restyle them.

import { element, svg } from './dom';
import { formatMs } from './format.js';
import type { LayerBar } from './layers.js';

const FALLBACK_WIDTH = 640;
const FONT_PX = 12;

let measurer: CanvasRenderingContext2D | null | undefined;
const textWidths = new Map<string, number>();

/**
 * The drawn width of chart text, measured with a canvas in the page's font (labels must fit their
 * column exactly; an average character width cuts "GeForce RTX 4090" off at the chart's edge).
 */
function textWidth(text: string): number {
  if (measurer === undefined) {
    measurer = document.createElement('canvas').getContext('2d');
    if (measurer !== null) measurer.font = `${FONT_PX}px ${getComputedStyle(document.body).fontFamily}`;
  }
  if (measurer === null) return text.length * FONT_PX * 0.6;
  let width = textWidths.get(text);
  if (width === undefined) {
    width = measurer.measureText(text).width;
    // Labels repeat across renders (names, layer names): each is measured once. Bounded, because
    // fitting a long name tries every shorter cut of it.
    if (textWidths.size >= 4096) textWidths.clear();
    textWidths.set(text, width);
  }
  return width;
}

/** The longest of `candidates(n)` for n = text length, text length − 1, … that fits `px`. */
function shortest(text: string, px: number, candidate: (keep: number) => string): string {
  if (textWidth(text) <= px) return text;
  for (let keep = text.length - 1; keep > 3; keep -= 1) {
    const short = candidate(keep);
    if (textWidth(short) <= px) return short;
  }
  return candidate(3);
}

export interface Bar {
  label: string;
  value: number | null;
  /** The value as shown ("1.2 h", "$4.10"), or why there is none ("no price"). */
  text: string;
  best?: boolean;
  /** The model does not fit in this accelerator's memory: drawn hatched, and said in the text. */
  noFit?: boolean;
}

/** Shortens text to fit `px`, keeping its start and end, for names without structure. */
export function fitText(text: string, px: number): string {
  return shortest(text, px, (keep) => {
    const head = Math.ceil((keep - 1) / 2);
    return `${text.slice(0, head)}…${text.slice(text.length - (keep - 1 - head))}`;
  });
}

/**
 * Shortens a dotted layer name to fit `px` without losing what tells siblings apart, the numbers:
 * words before the last part shrink to their initial first ("layer.10.attention" →
 * "l.10.attention"), and only then is the end cut ("l.10.atten…"). A plain middle cut would show
 * "layer.1…tention" for both layer.10 and layer.11.
 */
export function fitLayerName(name: string, px: number): string {
  if (textWidth(name) <= px) return name;
  const parts = name.split('.');
  for (let i = 0; i < parts.length - 1 && textWidth(parts.join('.')) > px; i += 1) {
    const part = parts[i] ?? '';
    if (/^[A-Za-z_]{2,}$/.test(part)) parts[i] = part[0] ?? part;
  }
  const short = parts.join('.');
  return shortest(short, px, (keep) => `${short.slice(0, keep - 1)}…`);
}

/** Drops the vendor and product-line words catalogue names start with; the chart is narrow. */
export function shortName(name: string): string {
  return name.replace(/^(NVIDIA|AMD|Google|Intel)\s+(Tesla\s+|GeForce\s+|Instinct\s+)?/i, '');
}

/** Boxes read before a render starts writing to the page (withChartWidths). */
const measuredBoxes = new Map<HTMLElement, { width: number; top: number; bottom: number }>();
/** The width each container's chart was last drawn at: a resize redraws only charts whose width changed. */
const drawnWidths = new WeakMap<HTMLElement, number>();

/**
 * Runs `draw` with the boxes of `containers` read once, before it writes anything: a chart that
 * reads its width after the table or another chart has changed the page forces a layout of the
 * whole page, once per chart (on the first screen that was a fifth of the page's script time).
 */
export function withChartWidths<T>(containers: readonly HTMLElement[], draw: () => T): T {
  for (const container of containers) {
    const { top, bottom } = container.getBoundingClientRect();
    measuredBoxes.set(container, { width: container.clientWidth, top, bottom });
  }
  try {
    return draw();
  } finally {
    measuredBoxes.clear();
  }
}

/**
 * Whether any of a chart's container is on screen (its box as read by withChartWidths, else now):
 * charts off screen can be drawn after the frame that shows the numbers.
 */
export function onScreen(container: HTMLElement): boolean {
  const box = measuredBoxes.get(container) ?? container.getBoundingClientRect();
  return box.bottom > 0 && box.top < window.innerHeight;
}

/** Whether a container's chart was drawn at another width than it has now (or never drawn). */
export function drawnAtOtherWidth(container: HTMLElement): boolean {
  return drawnWidths.get(container) !== container.clientWidth;
}

function widthOf(container: HTMLElement): number {
  const width = measuredBoxes.get(container)?.width ?? container.clientWidth;
  drawnWidths.set(container, width);
  return width > 50 ? width : FALLBACK_WIDTH;
}

function chartSvg(width: number, height: number, label: string): SVGSVGElement {
  return svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label, class: 'chart-svg' });
}

/**
 * One bar per item, in the given order. Items without a value get a row with their text only.
 * @param title what the chart shows, for its accessible name
 */
export function drawBarChart(container: HTMLElement, bars: readonly Bar[], title: string): void {
  if (bars.length === 0) {
    container.replaceChildren(element('p', 'Nothing to compare yet.', 'hint'));
    return;
  }
  const width = widthOf(container);
  const rowHeight = 28;
  const labelWidth = Math.round(Math.min(210, Math.max(110, width * 0.4)));
  const valueWidth = 76;
  const plotWidth = Math.max(40, width - labelWidth - valueWidth - 12);
  const max = Math.max(...bars.map((bar) => bar.value ?? 0), Number.MIN_VALUE);
  const height = bars.length * rowHeight + 4;
  const chart = chartSvg(width, height, `${title}: ${bars.map((bar) => `${bar.label} ${bar.text}${bar.noFit ? ", does not fit" : ''}`).join('; ')}`);

  bars.forEach((bar, index) => {
    const y = index * rowHeight + 2;
    const middle = y + rowHeight / 2;
    const group = svg('g', { class: ['row', bar.best ? 'best' : '', bar.noFit ? 'nofit' : ''].filter(Boolean).join(' ') });
    const text = bar.noFit ? `${bar.text} ✗` : bar.text;
    group.append(
      svg('title', {}, `${bar.label}: ${bar.text}${bar.noFit ? ' (the model does not fit in its memory)' : ''}`),
      svg('text', { x: labelWidth - 8, y: middle, 'text-anchor': 'end', 'dominant-baseline': 'central', class: 'label' }, fitText(shortName(bar.label), labelWidth - 10)),
    );
    if (bar.value === null) {
      group.append(svg('text', { x: labelWidth + 4, y: middle, 'dominant-baseline': 'central', class: 'value muted' }, bar.text));
    } else {
      const barWidth = Math.max(2, (bar.value / max) * plotWidth);
      group.append(
        svg('rect', { x: labelWidth, y: y + 5, width: barWidth.toFixed(1), height: rowHeight - 10, rx: 3, class: 'bar' }),
        svg('text', { x: labelWidth + barWidth + 6, y: middle, 'dominant-baseline': 'central', class: 'value' }, text),
      );
    }
    chart.append(group);
  });
  chart.append(svg('line', { x1: labelWidth, x2: labelWidth, y1: 0, y2: height, class: 'axis' }));
  container.replaceChildren(chart);
}

const PHASES = [
  ['forward_ms', 'forward', 'seg-forward'],
  ['backward_ms', 'backward', 'seg-backward'],
  ['optimizer_ms', 'optimizer', 'seg-optimizer'],
] as const;

/** The colour key shared by the layer chart (HTML, so it wraps on a phone). */
function legend(): HTMLElement {
  const list = element('ul', undefined, 'legend');
  for (const [, label, className] of PHASES) {
    const item = element('li');
    item.append(element('span', undefined, `swatch ${className}`), label);
    list.append(item);
  }
  return list;
}

/** The label of a layer bar; the folded rest says "103 others" when "103 other layers" is too long. */
function rowLabel(row: LayerBar, isRest: boolean, px: number): string {
  if (!isRest) return fitLayerName(row.name, px);
  return textWidth(row.name) <= px ? row.name : `${row.layers} others`;
}

/** Stacked bars, one per layer (forward, backward, optimizer), then the folded rest. */
export function drawLayerChart(container: HTMLElement, bars: readonly LayerBar[], rest: LayerBar | null, title: string): void {
  const rows = rest === null ? [...bars] : [...bars, rest];
  if (rows.length === 0) {
    container.replaceChildren(element('p', 'No per-layer timings in this result.', 'hint'));
    return;
  }
  const width = widthOf(container);
  const rowHeight = 22;
  const labelWidth = Math.round(Math.min(260, Math.max(100, width * 0.34)));
  const valueWidth = 70;
  const plotWidth = Math.max(40, width - labelWidth - valueWidth - 12);
  // The scale fits the named layers: the folded rest of a 300-layer model can be longer than all of
  // them together and would squash them to slivers. A longer rest bar is cut, with a break mark.
  const max = Math.max(...(bars.length > 0 ? bars : rows).map((row) => row.total_ms), Number.MIN_VALUE);
  const height = rows.length * rowHeight + 4;
  const chart = chartSvg(width, height, `${title}: ${rows.map((row) => `${row.name} ${formatMs(row.total_ms)}`).join('; ')}`);

  rows.forEach((row, index) => {
    const cut = row.total_ms > max * 1.0001;
    // A cut bar keeps its phases' proportions within the full plot width.
    const scale = cut ? plotWidth / row.total_ms : plotWidth / max;
    const y = index * rowHeight + 2;
    const middle = y + rowHeight / 2;
    const group = svg('g', { class: row === rest ? 'row rest' : 'row' });
    group.append(
      svg(
        'title',
        {},
        `${row.name}: ${formatMs(row.total_ms)} (forward ${formatMs(row.forward_ms)}, backward ${formatMs(row.backward_ms)}, optimizer ${formatMs(row.optimizer_ms)})`,
      ),
      svg('text', { x: labelWidth - 8, y: middle, 'text-anchor': 'end', 'dominant-baseline': 'central', class: 'label' }, rowLabel(row, row === rest, labelWidth - 10)),
    );
    let x = labelWidth;
    for (const [key, , className] of PHASES) {
      const segment = row[key] * scale;
      if (segment <= 0) continue;
      group.append(svg('rect', { x: x.toFixed(1), y: y + 4, width: Math.max(0.5, segment).toFixed(1), height: rowHeight - 8, class: className }));
      x += segment;
    }
    if (cut) {
      const at = labelWidth + plotWidth * 0.82;
      for (const offset of [0, 5]) {
        group.append(svg('line', { x1: at + offset, x2: at + offset + 4, y1: y + rowHeight - 3, y2: y + 3, class: 'break' }));
      }
    }
    group.append(svg('text', { x: x + 6, y: middle, 'dominant-baseline': 'central', class: 'value' }, formatMs(row.total_ms)));
    chart.append(group);
  });
  chart.append(svg('line', { x1: labelWidth, x2: labelWidth, y1: 0, y2: height, class: 'axis' }));
  container.replaceChildren(legend(), chart);
}

/** One coloured part of a stacked bar: its key in each row's `parts`, its legend text and CSS class. */
export interface Segment {
  key: string;
  label: string;
  className: string;
}

export interface StackedRow {
  label: string;
  /** The value of each segment, by key; missing or zero parts are not drawn. */
  parts: Record<string, number>;
  /** The bar's total as shown ("41.3 ms", "67 GB"). */
  text: string;
  /** A limit drawn as a line across the row (an accelerator's device memory), with its text. */
  limit?: { value: number; text: string };
  /** Drawn hatched and said in the text (the model does not fit). */
  noFit?: boolean;
}

function stackedLegend(segments: readonly Segment[], limitLabel?: string): HTMLElement {
  const list = element('ul', undefined, 'legend');
  for (const segment of segments) {
    const item = element('li');
    item.append(element('span', undefined, `swatch ${segment.className}`), segment.label);
    list.append(item);
  }
  if (limitLabel !== undefined) {
    const item = element('li');
    item.append(element('span', undefined, 'swatch limit'), limitLabel);
    list.append(item);
  }
  return list;
}

/**
 * Stacked horizontal bars, one per row (an accelerator), on one scale that also covers the rows'
 * limits, so a bar past its device-memory line shows by how much it does not fit.
 * @param describe a row's parts in words, for its tooltip and the chart's accessible name
 */
export function drawStackedChart(
  container: HTMLElement,
  rows: readonly StackedRow[],
  segments: readonly Segment[],
  title: string,
  describe: (row: StackedRow) => string,
  limitLabel?: string,
): void {
  if (rows.length === 0) {
    container.replaceChildren(element('p', 'Nothing to compare yet.', 'hint'));
    return;
  }
  const width = widthOf(container);
  const rowHeight = 26;
  const labelWidth = Math.round(Math.min(210, Math.max(110, width * 0.34)));
  const valueWidth = 86;
  const plotWidth = Math.max(40, width - labelWidth - valueWidth - 12);
  const total = (row: StackedRow): number => segments.reduce((sum, s) => sum + Math.max(0, row.parts[s.key] ?? 0), 0);
  const max = Math.max(...rows.map((row) => Math.max(total(row), row.limit?.value ?? 0)), Number.MIN_VALUE);
  const scale = plotWidth / max;
  const height = rows.length * rowHeight + 4;
  const chart = chartSvg(width, height, `${title}: ${rows.map((row) => `${row.label} ${row.text} (${describe(row)})`).join('; ')}`);
  rows.forEach((row, index) => {
    const y = index * rowHeight + 2;
    const middle = y + rowHeight / 2;
    const group = svg('g', { class: row.noFit ? 'row nofit' : 'row' });
    group.append(
      svg('title', {}, `${row.label}: ${row.text}; ${describe(row)}`),
      svg('text', { x: labelWidth - 8, y: middle, 'text-anchor': 'end', 'dominant-baseline': 'central', class: 'label' }, fitText(shortName(row.label), labelWidth - 10)),
    );
    let x = labelWidth;
    for (const segment of segments) {
      const value = row.parts[segment.key] ?? 0;
      if (!(value > 0)) continue;
      const w = value * scale;
      group.append(svg('rect', { x: x.toFixed(1), y: y + 5, width: Math.max(0.5, w).toFixed(1), height: rowHeight - 10, class: segment.className }));
      x += w;
    }
    const end = Math.max(x, row.limit === undefined ? 0 : labelWidth + row.limit.value * scale);
    if (row.limit !== undefined) {
      const lx = labelWidth + row.limit.value * scale;
      group.append(svg('line', { x1: lx.toFixed(1), x2: lx.toFixed(1), y1: y + 1, y2: y + rowHeight - 1, class: 'limit' }));
    }
    group.append(svg('text', { x: end + 6, y: middle, 'dominant-baseline': 'central', class: 'value' }, row.noFit ? `${row.text} ✗` : row.text));
    chart.append(group);
  });
  chart.append(svg('line', { x1: labelWidth, x2: labelWidth, y1: 0, y2: height, class: 'axis' }));
  container.replaceChildren(stackedLegend(segments, limitLabel), chart);
}

// ---------------------------------------------------------------- line chart (issue 21, point 6)

/** One point of a line: `y` null where there is no value (nothing fits at that GPU count). */
export interface LinePoint {
  x: number;
  y: number | null;
  /** The value as shown ("1.2 h"), or why there is none ("does not fit"). */
  text: string;
}

export interface LineSeries {
  /** Identifies the series in the drawing (data-series), e.g. an accelerator id. */
  key: string;
  label: string;
  points: readonly LinePoint[];
}

export interface LineChartOptions {
  title: string;
  /** The x axis in words, under the chart ("GPUs"). */
  xLabel: string;
  /** x is drawn on a log₂ scale (GPU counts 1, 2, 4, …); y on log₁₀ when `logY`, else linear from 0. */
  logY: boolean;
  formatY: (value: number) => string;
  /** Tick values for the y range [low, high], when the unit has rounder steps than decades (durations). */
  yTicks?: (low: number, high: number) => number[];
}

/** Tick values for a y range: decades (with 2 and 5 when few) on a log scale, ~4 round steps on a linear one. */
function yTicks(low: number, high: number, log: boolean): number[] {
  if (log) {
    const ticks: number[] = [];
    const decades = Math.log10(high) - Math.log10(low);
    const steps = decades < 2 ? [1, 2, 5] : [1];
    for (let e = Math.floor(Math.log10(low)); e <= Math.ceil(Math.log10(high)); e += 1) {
      for (const m of steps) {
        const t = m * 10 ** e;
        if (t >= low * 0.999 && t <= high * 1.001) ticks.push(t);
      }
    }
    return ticks.length > 0 ? ticks : [low, high];
  }
  const raw = high / 4;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  const ticks: number[] = [];
  for (let t = 0; t <= high * 1.0001; t += step) ticks.push(t);
  return ticks;
}

/** The y scale's range: the values' span, padded on a log scale, from 0 on a linear one. */
function yRange(values: readonly number[], log: boolean): [number, number] {
  const positive = log ? values.filter((v) => v > 0) : values;
  const max = Math.max(...positive, Number.MIN_VALUE);
  if (!log) return [0, max * 1.08];
  const min = Math.min(...positive, max);
  return min === max ? [min / 2, max * 2] : [min / 1.25, max * 1.25];
}

function seriesLegend(series: readonly LineSeries[]): HTMLElement {
  const list = element('ul', undefined, 'legend');
  series.forEach((s, index) => {
    const item = element('li');
    item.append(element('span', undefined, `swatch series-swatch series-${index % 6}`), shortName(s.label));
    list.append(item);
  });
  return list;
}

/**
 * Lines over a log₂ x axis, one per series (an accelerator), with a marked point per value; a
 * missing value breaks its line. Points carry data-x / data-y (the exact numbers) and a tooltip.
 */
export function drawLineChart(container: HTMLElement, series: readonly LineSeries[], options: LineChartOptions): void {
  const xs = [...new Set(series.flatMap((s) => s.points.map((p) => p.x)))].filter((x) => x > 0).sort((a, b) => a - b);
  const values = series.flatMap((s) => s.points.flatMap((p) => (p.y === null ? [] : [p.y])));
  if (xs.length === 0 || values.length === 0) {
    container.replaceChildren(element('p', 'Nothing to draw: no value at any GPU count.', 'hint'));
    return;
  }
  const width = widthOf(container);
  const height = 240;
  const [low, high] = yRange(values, options.logY);
  const ticks = options.yTicks?.(low, high) ?? yTicks(low, high, options.logY);
  const left = Math.ceil(Math.max(...ticks.map((t) => textWidth(options.formatY(t))))) + 12;
  const right = 14;
  const top = 10;
  const bottom = 36;
  const plotW = Math.max(40, width - left - right);
  const plotH = height - top - bottom;
  const [xMin, xMax] = [Math.log2(xs[0] ?? 1), Math.log2(xs[xs.length - 1] ?? 1)];
  const xAt = (x: number): number => left + (xMax === xMin ? plotW / 2 : ((Math.log2(x) - xMin) / (xMax - xMin)) * plotW);
  const yAt = (y: number): number => {
    const f = options.logY ? (Math.log10(Math.max(y, low)) - Math.log10(low)) / (Math.log10(high) - Math.log10(low)) : y / high;
    return top + plotH - f * plotH;
  };
  const described = series.map((s) => `${s.label}: ${s.points.map((p) => `${p.x} ${options.xLabel} ${p.text}`).join(', ')}`).join('; ');
  const chart = chartSvg(width, height, `${options.title} against ${options.xLabel}: ${described}`);

  const grid = svg('g', { class: 'grid' });
  for (const t of ticks) {
    const y = yAt(t).toFixed(1);
    grid.append(
      svg('line', { x1: left, x2: left + plotW, y1: y, y2: y, class: 'gridline' }),
      svg('text', { x: left - 6, y, 'text-anchor': 'end', 'dominant-baseline': 'central', class: 'label tick' }, options.formatY(t)),
    );
  }
  // Every count labelled when there is room; otherwise every other one (always the ends).
  const every = xs.length * 34 > plotW ? 2 : 1;
  xs.forEach((x, index) => {
    if (index % every !== 0 && index !== xs.length - 1) return;
    grid.append(svg('text', { x: xAt(x).toFixed(1), y: top + plotH + 14, 'text-anchor': 'middle', class: 'label tick' }, x.toLocaleString('en-US')));
  });
  grid.append(
    svg('line', { x1: left, x2: left, y1: top, y2: top + plotH, class: 'axis' }),
    svg('line', { x1: left, x2: left + plotW, y1: top + plotH, y2: top + plotH, class: 'axis' }),
    svg('text', { x: left + plotW / 2, y: height - 4, 'text-anchor': 'middle', class: 'label axis-label' }, options.xLabel),
  );
  chart.append(grid);

  series.forEach((s, index) => {
    const group = svg('g', { class: `series series-${index % 6}`, 'data-series': s.key });
    // A missing value ends the current run of the line; the next value starts a new one.
    let path = '';
    let pen = false;
    for (const p of s.points) {
      if (p.y === null) {
        pen = false;
        continue;
      }
      path += `${pen ? 'L' : 'M'}${xAt(p.x).toFixed(1)},${yAt(p.y).toFixed(1)}`;
      pen = true;
    }
    if (path !== '') group.append(svg('path', { d: path, class: 'line' }));
    for (const p of s.points) {
      if (p.y === null) continue;
      const point = svg('circle', { cx: xAt(p.x).toFixed(1), cy: yAt(p.y).toFixed(1), r: 3.5, class: 'point', 'data-x': p.x, 'data-y': p.y });
      point.append(svg('title', {}, `${s.label}, ${p.x.toLocaleString('en-US')} ${options.xLabel}: ${p.text}`));
      group.append(point);
    }
    chart.append(group);
  });
  container.replaceChildren(seriesLegend(series), chart);
}
