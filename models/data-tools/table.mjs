// Output tables: typed columns, per-(source, gpu) accounting of rows kept and skipped, deterministic
// sorting, fixed number formatting and gzip with fixed settings.

import { createHash } from 'node:crypto';
import { gzipSync, constants as zc } from 'node:zlib';
import { csvField } from './csv.mjs';

/** Largest compressed size a table may have before it is subsampled (the brief's 3 MB rule). */
export const MAX_TABLE_GZ_BYTES = 3 * 1024 * 1024;

/**
 * A number with 6 significant digits, written as a plain decimal (never exponent notation).
 * toPrecision rounds half away from zero on the decimal expansion of the double, which is the same on
 * every platform (ECMAScript specifies it exactly).
 * @param {number} x
 */
export function sig6(x) {
  if (!Number.isFinite(x)) throw new Error(`not a finite number: ${x}`);
  const rounded = Number(x.toPrecision(6));
  let s = String(rounded);
  if (/e/i.test(s)) {
    // Only for |x| < 1e-6 or >= 1e21; no measurement here is that small or large, but stay plain.
    const digits = Math.max(0, 5 - Math.floor(Math.log10(Math.abs(rounded))));
    s = rounded.toFixed(Math.min(digits, 100)).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
  }
  return s;
}

/**
 * Parses a latency cell: returns {value} or {reason} naming why it cannot be used.
 * @param {unknown} cell
 * @returns {{value: number, reason?: undefined} | {reason: string, value?: undefined}}
 */
export function parseTime(cell) {
  const s = String(cell ?? '').trim();
  if (s === '') return { reason: 'missing time' };
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) {
    if (/^nan$/i.test(s)) return { reason: 'NaN time' };
    return { reason: `non-numeric time (${s.slice(0, 12)})` };
  }
  const v = Number(s);
  if (Number.isNaN(v)) return { reason: 'NaN time' };
  if (!Number.isFinite(v)) return { reason: 'infinite time' };
  if (v === 0) return { reason: 'zero time' };
  if (v < 0) return { reason: 'negative time' };
  return { value: v };
}

/**
 * Parses a dimension cell that must be a non-negative integer; returns the number or null.
 * @param {unknown} cell
 * @returns {number | null}
 */
export function parseDim(cell) {
  const s = String(cell ?? '').trim();
  if (!/^\d+(\.0+)?$/.test(s)) return null;
  const v = Number(s);
  return Number.isSafeInteger(v) ? v : null;
}

export class Table {
  /**
   * @param {string} name file stem, e.g. "gemm"
   * @param {Array<[string, 'str'|'int'|'time']>} columns in output order
   */
  constructor(name, columns, { gpuLast = true } = {}) {
    this.name = name;
    this.columns = columns;
    // Sort order: every column, in header order, except that with gpuLast the gpu column moves to
    // just before time_ms. Tables whose shapes repeat on every GPU (NeuSight, DeepBench, Vidur) then
    // put the same shape on different GPUs next to each other, which gzip compresses ~20% better;
    // Justus draws random shapes per GPU, so its tables keep gpu second.
    const names = columns.map(([c]) => c);
    const order = names.filter((c) => !(gpuLast && (c === 'gpu' || c === 'time_ms')));
    if (gpuLast) order.push('gpu', 'time_ms');
    this.sortIndex = order.map((c) => names.indexOf(c));
    /** @type {Array<Array<string | number>>} */
    this.rows = [];
    /** @type {Map<string, {source: string, gpu: string, raw: number, out: number, skipped: Map<string, number>}>} */
    this.stats = new Map(); // "source\tgpu" -> {source, gpu, raw, out, skipped: Map}
    this.subsample = 1;
  }

  /**
   * @param {string} source
   * @param {string} gpu
   */
  entry(source, gpu) {
    const key = `${source}\t${gpu}`;
    let e = this.stats.get(key);
    if (!e) {
      e = { source, gpu, raw: 0, out: 0, skipped: new Map() };
      this.stats.set(key, e);
    }
    return e;
  }

  /**
   * Counts raw input rows (lines of the source files) read for this source and GPU.
   * @param {string} source
   * @param {string} gpu
   */
  countRaw(source, gpu, n = 1) {
    this.entry(source, gpu).raw += n;
  }

  /**
   * Adds one output row (an object with every column); checks types.
   * @param {Record<string, string | number>} row
   */
  add(row) {
    const values = this.columns.map(([col, type]) => {
      const v = row[col];
      if (v === undefined || v === null) throw new Error(`${this.name}: column ${col} missing in ${JSON.stringify(row)}`);
      if (type === 'str') {
        if (typeof v !== 'string' || v === '') throw new Error(`${this.name}: column ${col} must be a non-empty string`);
        return v;
      }
      if (type === 'int') {
        if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new Error(`${this.name}: column ${col} must be a non-negative integer, got ${v}`);
        return v;
      }
      if (!(typeof v === 'number' && Number.isFinite(v) && v > 0)) throw new Error(`${this.name}: ${col} must be > 0, got ${v}`);
      return Number(sig6(v));
    });
    this.rows.push(values);
    this.entry(String(row.source), String(row.gpu)).out += 1;
  }

  /**
   * Records one measurement that was not written, with the reason.
   * @param {string} source
   * @param {string} gpu
   * @param {string} reason
   */
  skip(source, gpu, reason, n = 1) {
    const e = this.entry(source, gpu);
    e.skipped.set(reason, (e.skipped.get(reason) ?? 0) + n);
  }

  sortRows() {
    const types = this.columns.map(([, t]) => t);
    const idx = this.sortIndex;
    this.rows.sort((a, b) => {
      for (const i of idx) {
        const x = /** @type {string | number} */ (a[i]);
        const y = /** @type {string | number} */ (b[i]);
        if (x === y) continue;
        if (types[i] === 'str') return x < y ? -1 : 1;
        return Number(x) - Number(y);
      }
      return 0;
    });
  }

  /** @param {Array<Array<string | number>>} rows */
  csvText(rows) {
    const lines = [this.columns.map(([c]) => c).join(',')];
    for (const r of rows) {
      lines.push(
        r.map((v, i) => {
          const t = this.columns[i]?.[1];
          if (t === 'str') return csvField(v);
          if (t === 'int') return String(v);
          return sig6(Number(v));
        }).join(','),
      );
    }
    return lines.join('\n') + '\n';
  }

  /** Sorts, formats and compresses; subsamples every k-th row only if the table would exceed the limit. */
  build() {
    this.sortRows();
    let rows = this.rows;
    let text = this.csvText(rows);
    let gz = gzip(text);
    if (gz.length > MAX_TABLE_GZ_BYTES) {
      let k = 2;
      for (;;) {
        rows = this.rows.filter((_, i) => i % k === 0);
        text = this.csvText(rows);
        gz = gzip(text);
        if (gz.length <= MAX_TABLE_GZ_BYTES) break;
        k += 1;
      }
      this.subsample = k;
    }
    this.outputRows = rows.length;
    // Rows actually written per source and GPU (differs from the kept count only when subsampled).
    const si = this.columns.findIndex(([c]) => c === 'source');
    const gi = this.columns.findIndex(([c]) => c === 'gpu');
    this.written = new Map();
    for (const r of rows) {
      const key = `${r[si]}\t${r[gi]}`;
      this.written.set(key, (this.written.get(key) ?? 0) + 1);
    }
    this.csvBytes = Buffer.byteLength(text);
    this.csvSha256 = createHash('sha256').update(text).digest('hex');
    this.gz = gz;
    return gz;
  }
}

/** gzip with fixed level, strategy and window; Node writes mtime 0 and no file name, so the bytes depend on the input only. */
/** @param {string} text */
export function gzip(text) {
  return gzipSync(Buffer.from(text, 'utf8'), {
    level: 9,
    memLevel: 9,
    windowBits: 15,
    strategy: zc.Z_DEFAULT_STRATEGY,
  });
}

/** The training tables build-data writes, empty: one schema per layer or kernel class (SOURCES.md). */
export function makeTables() {
  const S = 'str';
  const I = 'int';
  const T = 'time';
  return {
    gemm: new Table('gemm', [['source', S], ['gpu', S], ['precision', S], ['batch', I], ['m', I], ['n', I], ['k', I], ['trans_a', I], ['trans_b', I], ['time_ms', T]]),
    conv: new Table('conv', [['source', S], ['gpu', S], ['precision', S], ['direction', S], ['batch', I], ['c_in', I], ['c_out', I], ['kernel_h', I], ['kernel_w', I], ['in_h', I], ['in_w', I], ['stride_h', I], ['stride_w', I], ['pad_h', I], ['pad_w', I], ['time_ms', T]]),
    elementwise: new Table('elementwise', [['source', S], ['gpu', S], ['precision', S], ['op', S], ['elements', I], ['inputs', I], ['time_ms', T]]),
    normalization: new Table('normalization', [['source', S], ['gpu', S], ['precision', S], ['op', S], ['rows', I], ['cols', I], ['time_ms', T]]),
    recurrent: new Table('recurrent', [['source', S], ['gpu', S], ['precision', S], ['direction', S], ['cell', S], ['hidden', I], ['batch', I], ['steps', I], ['time_ms', T]]),
    layers_dense: new Table('layers_dense', [['source', S], ['gpu', S], ['precision', S], ['activation', S], ['batch', I], ['d_in', I], ['d_out', I], ['optimizer', S], ['time_ms', T]], { gpuLast: false }),
    layers_conv: new Table('layers_conv', [['source', S], ['gpu', S], ['precision', S], ['activation', S], ['batch', I], ['c_in', I], ['c_out', I], ['kernel', I], ['image_size', I], ['stride', I], ['padding', S], ['bias', I], ['optimizer', S], ['time_ms', T]], { gpuLast: false }),
    llm_ops: new Table('llm_ops', [['source', S], ['gpu', S], ['precision', S], ['model', S], ['op', S], ['num_tokens', I], ['tp', I], ['rows', I], ['cols', I], ['inner', I], ['time_ms', T]]),
  };
}
