// DeepBench (baidu-research/DeepBench @ da81ba7, results/train/*.xlsx converted to CSV): each sheet
// holds several tables one after another (GEMM, convolution, RNN vanilla/LSTM/GRU, all-reduce), each
// introduced by a title in the first column. Columns are found by their header text, because the
// sheets order them differently (some give R,S,pad_h,pad_w,vertical,horizontal stride; others
// S,R,pad_w,pad_h,horizontal,vertical).

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readCsvRows } from './csv.mjs';
import { DEEPBENCH_DEVICES, DEEPBENCH_EXCLUDED } from './gpus.mjs';
import { parseDim, parseTime } from './table.mjs';

const SOURCE = 'deepbench';

/** The sheet's precision line -> table precision, or a skip reason. */
function precisionOf(text, path) {
  const t = text.trim().toLowerCase();
  if (t === 'float') return { precision: 'fp32' };
  if (t === '16 bit inputs, 16 bit multiplication, 32 bit addition') return { precision: 'fp16' };
  if (t === '16 bit inputs, 32 bit multiplication, 32 bit addition') {
    return { reason: 'P100 pseudo-FP16 sheet (FP16 storage, FP32 math): matches no catalogue precision' };
  }
  throw new Error(`${path}: unknown precision line "${text}"`);
}

const norm = (s) => String(s ?? '').trim().toLowerCase().replace(/\s+/g, ' ');

function findCol(header, path, label, ...tests) {
  const h = header.map(norm);
  for (const test of tests) {
    const i = h.findIndex((x) => (typeof test === 'string' ? x === test : test.test(x)));
    if (i >= 0) return i;
  }
  throw new Error(`${path}: ${label} column not found in header ${JSON.stringify(header.filter(Boolean))}`);
}

function optCol(header, ...names) {
  const h = header.map(norm);
  for (const n of names) {
    const i = h.indexOf(n);
    if (i >= 0) return i;
  }
  return -1;
}

const NUMBER = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;
// A measurement line: first column empty (or a stray number, see below), third column a number.
const isDataRow = (row) => row.length > 2 && /^\d+(\.\d+)?$/.test(String(row[2]).trim());

/** Time cell -> {value} or {reason}, with DeepBench's markers named. */
function timeCell(cell, direction) {
  const s = String(cell ?? '').trim();
  if (/^n\/a/i.test(s)) return { reason: `${direction}: N/A* in sheet (input layer, not measured)` };
  const t = parseTime(s);
  return t.reason ? { reason: `${direction}: ${t.reason}` } : t;
}

function gemmSection(header, path) {
  return {
    m: findCol(header, path, 'M', 'm'),
    n: findCol(header, path, 'N', 'n'),
    k: findCol(header, path, 'K', 'k'),
    ta: findCol(header, path, 'A Transpose', 'a transpose'),
    tb: findCol(header, path, 'B Transpose', 'b transpose'),
    time: findCol(header, path, 'Time (msec)', 'time (msec)'),
  };
}

function convSection(header, path) {
  return {
    w: findCol(header, path, 'W', 'w'),
    h: findCol(header, path, 'H', 'h'),
    c: findCol(header, path, 'C', 'c'),
    n: findCol(header, path, 'N', 'n'),
    k: findCol(header, path, 'K', 'k'),
    r: findCol(header, path, 'R (filter height)', 'r', /^r \(filter height\)/),
    s: findCol(header, path, 'S (filter width)', 's', /^s \(fi[lt]{2}er width\)/),
    padH: findCol(header, path, 'pad_h', 'pad_h'),
    padW: findCol(header, path, 'pad_w', 'pad_w'),
    strideH: findCol(header, path, 'Vertical stride', 'vertical stride'),
    strideW: findCol(header, path, 'Horizontal stride', 'horizontal stride'),
    fwd: findCol(header, path, 'Forward (msec)', 'forward (msec)'),
    bwdData: findCol(header, path, 'wrt Inputs (msec)', 'wrt inputs (msec)'),
    bwdFilter: findCol(header, path, 'wrt Parameters (msec)', 'wrt parameters (msec)'),
    p: optCol(header, 'p'),
    q: optCol(header, 'q'),
  };
}

function rnnSection(header, path) {
  return {
    hidden: findCol(header, path, 'Hidden units', 'hidden units'),
    n: findCol(header, path, 'N', 'n'),
    steps: findCol(header, path, 'Timesteps', 'timesteps'),
    fwd: findCol(header, path, 'Time Forward (msec)', 'time forward (msec)'),
    // Older sheets (AMD; P100 pseudo-FP16) have one "Time Backward (msec)" column. DeepBench's ROCm
    // benchmark (code/amd/rnn_bench_rocm.cpp, same commit as the Vega FE results) times only
    // miopenRNNBackwardData there and reports bwd_params_time = 0, so it is the data gradient.
    bwdData: findCol(header, path, 'Time Backward wrt inputs (msec)', 'time backward wrt inputs (msec)', 'time backward (msec)'),
    bwdWeights: optCol(header, 'time backward wrt weights (msec)'),
  };
}

/**
 * Reads every DeepBench sheet. `notes` collects counts of lines that are not measurements
 * (all-reduce rows, footnotes, stray cells) so that the summary accounts for every line.
 */
export function buildDeepbench(shared, tables, notes) {
  const root = join(shared, 'kernels', 'deepbench');
  const files = readdirSync(root).filter((f) => f.endsWith('.csv')).sort();
  const checks = { conv_pq_mismatch: 0 };
  for (const f of files) {
    const m = /^DeepBench_(.+?)__(.+)\.csv$/.exec(f);
    if (!m) throw new Error(`${root}/${f}: unexpected file name`);
    const [, tag, sheet] = m;
    if (/specs/i.test(sheet)) continue; // host description, read by hand for the GPU mapping
    const path = join(root, f);
    let gpu = DEEPBENCH_DEVICES[tag];
    let fileReason = null;
    if (!gpu) {
      if (!DEEPBENCH_EXCLUDED[tag]) throw new Error(`${path}: unmapped DeepBench device tag ${tag}`);
      gpu = `(${tag})`;
      fileReason = DEEPBENCH_EXCLUDED[tag];
    }
    const rows = readCsvRows(path);
    if (norm(rows[0]?.[0]) !== 'precision') throw new Error(`${path}: first line is not the precision line`);
    const prec = precisionOf(rows[0][1], path);
    const skipAll = fileReason ?? prec.reason ?? null;
    const precision = prec.precision;

    let section = null;
    let cols = null;
    let cell = null;
    const noteKey = (what) => {
      const key = `${f}: ${what}`;
      notes.set(key, (notes.get(key) ?? 0) + 1);
    };
    for (let li = 1; li < rows.length; li++) {
      const row = rows[li];
      let title = String(row[0] ?? '').trim();
      if (NUMBER.test(title)) {
        // A few sheets carry scratch numbers in the first column next to a measurement (e.g. the
        // TITAN X Pascal RNN table); they are not part of the measurement. Keep the line, note it.
        noteKey('stray number in the first column beside a measurement (ignored, line kept)');
        title = '';
      }
      if (title !== '') {
        const t = title.toLowerCase();
        if (t === 'dense matrix multiplication') {
          section = 'gemm';
          cols = gemmSection(row, path);
        } else if (t === 'convolution') {
          section = 'conv';
          cols = null; // header is on the next line
        } else if (t.startsWith('recurrent layers - ')) {
          section = 'rnn';
          const kind = t.slice('recurrent layers - '.length).trim();
          cell = { vanilla: 'rnn', lstm: 'lstm', gru: 'gru' }[kind];
          if (!cell) throw new Error(`${path}:${li + 1}: unknown recurrent cell "${kind}"`);
          cols = rnnSection(row, path);
        } else if (t === 'all-reduce') {
          section = 'allreduce';
          cols = null;
        } else {
          throw new Error(`${path}:${li + 1}: unknown section title "${title}"`);
        }
        continue;
      }
      if (section === 'conv' && cols === null && norm(row[2]) === 'w') {
        cols = convSection(row, path);
        continue;
      }
      if (!isDataRow(row)) {
        if (row.some((c) => String(c).trim() !== '')) noteKey('non-measurement line (footnote or stray cell)');
        continue;
      }
      if (section === 'allreduce') {
        noteKey('all-reduce row (not tabulated: multi-GPU communication, not a kernel)');
        continue;
      }
      if (section === null || cols === null) throw new Error(`${path}:${li + 1}: data row outside a table`);

      if (section === 'gemm') {
        const table = tables.gemm;
        table.countRaw(SOURCE, gpu);
        if (skipAll) {
          table.skip(SOURCE, gpu, skipAll);
          continue;
        }
        const mm = parseDim(row[cols.m]);
        const nn = parseDim(row[cols.n]);
        const kk = parseDim(row[cols.k]);
        const flag = { N: 0, T: 1 };
        const ta = flag[String(row[cols.ta]).trim().toUpperCase()];
        const tb = flag[String(row[cols.tb]).trim().toUpperCase()];
        if (!mm || !nn || !kk || ta === undefined || tb === undefined) {
          table.skip(SOURCE, gpu, 'missing or zero dims / transpose flag');
          continue;
        }
        const t = timeCell(row[cols.time], 'gemm');
        if (t.reason) {
          table.skip(SOURCE, gpu, t.reason);
          continue;
        }
        table.add({ source: SOURCE, gpu, precision, batch: 1, m: mm, n: nn, k: kk, trans_a: ta, trans_b: tb, time_ms: t.value });
      } else if (section === 'conv') {
        const table = tables.conv;
        table.countRaw(SOURCE, gpu);
        const directions = [['fwd', cols.fwd], ['bwd_data', cols.bwdData], ['bwd_filter', cols.bwdFilter]];
        if (skipAll) {
          table.skip(SOURCE, gpu, skipAll, directions.length);
          continue;
        }
        const d = {};
        let bad = false;
        for (const key of ['w', 'h', 'c', 'n', 'k', 'r', 's', 'padH', 'padW', 'strideH', 'strideW']) {
          d[key] = parseDim(row[cols[key]]);
          if (d[key] === null || (d[key] === 0 && !key.startsWith('pad'))) bad = true;
        }
        if (bad) {
          table.skip(SOURCE, gpu, 'missing, zero or non-integer conv dims', directions.length);
          continue;
        }
        const outH = Math.floor((d.h + 2 * d.padH - d.r) / d.strideH) + 1;
        const outW = Math.floor((d.w + 2 * d.padW - d.s) / d.strideW) + 1;
        if (outH < 1 || outW < 1) {
          table.skip(SOURCE, gpu, 'kernel larger than padded input', directions.length);
          continue;
        }
        // The sheets' P and Q are the output size (sometimes written as x.5). Sheets whose header runs
        // height-first (R, S, pad_h, pad_w, vertical, horizontal) give P = output height; sheets that run
        // width-first (S, R, pad_w, pad_h, horizontal, vertical) give P = output width. Checking them
        // confirms which of R/S is the filter height; a disagreement would mean a column mix-up.
        if (cols.p >= 0 && cols.q >= 0) {
          const p = Number(row[cols.p]);
          const q = Number(row[cols.q]);
          const [expP, expQ] = cols.s < cols.r ? [outW, outH] : [outH, outW];
          if (Number.isFinite(p) && Number.isFinite(q) && String(row[cols.p]).trim() !== '' && (Math.abs(p - expP) > 1 || Math.abs(q - expQ) > 1)) {
            checks.conv_pq_mismatch += 1;
          }
        }
        for (const [direction, ci] of directions) {
          const t = timeCell(row[ci], direction);
          if (t.reason) {
            table.skip(SOURCE, gpu, t.reason);
            continue;
          }
          table.add({
            source: SOURCE, gpu, precision, direction, batch: d.n, c_in: d.c, c_out: d.k,
            kernel_h: d.r, kernel_w: d.s, in_h: d.h, in_w: d.w, stride_h: d.strideH, stride_w: d.strideW,
            pad_h: d.padH, pad_w: d.padW, time_ms: t.value,
          });
        }
      } else if (section === 'rnn') {
        const table = tables.recurrent;
        table.countRaw(SOURCE, gpu);
        const directions = [['fwd', cols.fwd], ['bwd_data', cols.bwdData]];
        // Weight gradient: named bwd_filter as in the conv table (cuDNN's BackwardFilter / BackwardWeights),
        // so both tables share one vocabulary: fwd, bwd_data (input gradient), bwd_filter (weight gradient).
        if (cols.bwdWeights >= 0) directions.push(['bwd_filter', cols.bwdWeights]);
        if (skipAll) {
          table.skip(SOURCE, gpu, skipAll, directions.length);
          continue;
        }
        const hidden = parseDim(row[cols.hidden]);
        const batch = parseDim(row[cols.n]);
        const steps = parseDim(row[cols.steps]);
        if (!hidden || !batch || !steps) {
          table.skip(SOURCE, gpu, 'missing or zero RNN dims', directions.length);
          continue;
        }
        for (const [direction, ci] of directions) {
          const t = timeCell(row[ci], direction);
          if (t.reason) {
            table.skip(SOURCE, gpu, t.reason);
            continue;
          }
          table.add({ source: SOURCE, gpu, precision, direction, cell, hidden, batch, steps, time_ms: t.value });
        }
      }
    }
  }
  return checks;
}
