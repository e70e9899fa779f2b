// NVIDIA cuDNN frontend SDPA training benchmarks (NVIDIA/cudnn-frontend, MIT; provenance, methods and
// file list in models/data/SOURCES.md, "cuDNN frontend SDPA and normalisation benchmarks") -> a fused
// attention table, one row per forward or backward timing:
//
//   attention: source,gpu,precision,direction,batch,seq_q,seq_kv,heads_q,heads_kv,head_dim_qk,head_dim_v,
//              causal,window,deterministic,time_ms
//
// direction `fwd` or `bwd` (the backward pass alone: dQ, dK, dV); causal 1 = cuDNN's `top_left` mask
// (PyTorch's is_causal), 0 = no mask; window = sliding-window size (0 = none); deterministic = 1 for a
// deterministic backward (0 for every forward row). Sources name the backend: `cudnn` (cuDNN frontend
// called directly), `pyt-cudnn`, `pyt-flash` and `pyt-math` (PyTorch SDPA with that backend forced) and
// `fa2` (the flash_attn package).
//
// Two layouts are read, found by header: the current runner's results/**.csv (one row per profiled
// pass, or `both` with fwd_time_ms and bwd_time_ms) and the older artifacts/*.csv (one row with
// forward_time and backward_time; the device only in the file name, `..._NVIDIA_<GPU>.csv`).
//
// The project keeps the table, not NVIDIA's files (fetched data files are not committed): run
//   node models/data-tools/cudnn-sdpa.mjs DIR [--out FILE]
// on a checkout's `benchmark/` folder (commits and files in SOURCES.md) to rewrite FOUND_TABLE, which
// models/fit-fused-attention.mjs reads. models/build-data.mjs --cudnn-sdpa DIR --out OUT does the same into OUT.

import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readCsvObjects } from './csv.mjs';
import { Table, parseDim, parseTime } from './table.mjs';

/** The committed table of timings this converter made (facts: shapes and times, with the source per row). */
export const FOUND_TABLE = fileURLToPath(new URL('../data/found/cudnn-sdpa.csv.gz', import.meta.url));

/** `gpu_name` (or the file-name tag) -> catalogue id. @type {Readonly<Record<string, string>>} */
export const CUDNN_SDPA_DEVICES = {
  'NVIDIA H200': 'h200',
  'NVIDIA B200': 'b200',
  'NVIDIA GB200': 'gb200',
  'NVIDIA GB300': 'gb300',
};

/** Devices left out, with the reason counted (none since the catalogue has GB200 and GB300). @type {Readonly<Record<string, string>>} */
export const CUDNN_SDPA_EXCLUDED = {};

/** @type {Readonly<Record<string, {source: string, precision?: string}>>} */
const BACKENDS = {
  cudnn: { source: 'cudnn' },
  cudnn_fe: { source: 'cudnn' },
  cudnn_fe_fp8: { source: 'cudnn', precision: 'fp8' },
  pyt_cudnn: { source: 'pyt-cudnn' },
  pyt_flash_attention: { source: 'pyt-flash' },
  pyt_math: { source: 'pyt-math' },
  flash_attention: { source: 'fa2' },
};

/** @type {Readonly<Record<string, string>>} */
const PRECISIONS = { bfloat16: 'bf16', bf16: 'bf16', fp8: 'fp8' };

/** The attention table (only created when this source is read). */
export function makeAttentionTable() {
  const S = 'str';
  const I = 'int';
  return new Table('attention', [
    ['source', S], ['gpu', S], ['precision', S], ['direction', S], ['batch', I], ['seq_q', I], ['seq_kv', I],
    ['heads_q', I], ['heads_kv', I], ['head_dim_qk', I], ['head_dim_v', I], ['causal', I], ['window', I],
    ['deterministic', I], ['time_ms', 'time'],
  ]);
}

/** @param {string} dir @returns {string[]} */
function csvFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...csvFiles(p));
    else if (name.endsWith('.csv')) out.push(p);
  }
  return out;
}

/** @param {string | undefined} v */
const isTrue = (v) => String(v ?? '').trim().toLowerCase() === 'true';

/**
 * Reads every SDPA CSV under `dir` (norm results, recognised by a `norm_type` column, are left alone).
 * @param {string} dir
 * @param {Table} table from makeAttentionTable()
 */
export function buildCudnnSdpa(dir, table) {
  for (const file of csvFiles(dir)) {
    const { header, records } = readCsvObjects(file);
    if (header.includes('norm_type')) continue;
    const old = header.includes('forward_time');
    const tag = old ? /_(NVIDIA_[A-Za-z0-9]+)\.csv$/.exec(basename(file))?.[1]?.replace('_', ' ') : undefined;
    if (old && !tag) throw new Error(`${file}: no _NVIDIA_<GPU>.csv device tag in the file name`);
    records.forEach((rec, line) => {
      const where = `${file}:${line + 2}`;
      const backendName = String(rec.backend ?? (old ? (rec.precision === 'fp8' ? 'cudnn_fe_fp8' : 'cudnn_fe') : ''));
      const backend = Object.hasOwn(BACKENDS, backendName) ? BACKENDS[backendName] : undefined;
      if (!backend) throw new Error(`${where}: unknown backend "${backendName}"`);
      const source = backend.source;
      const device = old ? String(tag) : String(rec.gpu_name ?? '').trim();
      if (!old && !isTrue(rec.success)) {
        table.countRaw(source, device ? (CUDNN_SDPA_DEVICES[device] ?? `(${device})`) : '(none)');
        table.skip(source, device ? (CUDNN_SDPA_DEVICES[device] ?? `(${device})`) : '(none)', 'run failed (success=False)');
        return;
      }
      const excluded = Object.hasOwn(CUDNN_SDPA_EXCLUDED, device) ? CUDNN_SDPA_EXCLUDED[device] : undefined;
      const gpu = Object.hasOwn(CUDNN_SDPA_DEVICES, device) ? CUDNN_SDPA_DEVICES[device] : undefined;
      if (!gpu && !excluded) throw new Error(`${where}: unmapped device "${device}" (add it to CUDNN_SDPA_DEVICES)`);
      const id = gpu ?? `(${device})`;
      table.countRaw(source, id);
      const dtype = String(rec.data_type ?? rec.precision ?? 'bfloat16');
      const precision = backend.precision ?? (Object.hasOwn(PRECISIONS, dtype) ? PRECISIONS[dtype] : undefined);
      const passes = old ? ['fwd', 'bwd'] : rec.profile_pass === 'both' ? ['fwd', 'bwd'] : [String(rec.profile_pass)];
      for (const dir of passes) {
        if (dir !== 'fwd' && dir !== 'bwd') throw new Error(`${where}: unknown profile_pass "${dir}"`);
        if (excluded || !gpu) {
          table.skip(source, id, excluded ?? 'excluded');
          continue;
        }
        if (!precision) {
          table.skip(source, id, `data type ${dtype}: no catalogue precision`);
          continue;
        }
        const cell = old ? (dir === 'fwd' ? rec.forward_time : rec.backward_time)
          : rec.profile_pass === 'both' ? (dir === 'fwd' ? rec.fwd_time_ms : rec.bwd_time_ms) : rec.time_ms;
        const t = parseTime(cell);
        if (t.value === undefined) {
          table.skip(source, id, t.reason);
          continue;
        }
        const mask = old ? (isTrue(rec.is_causal) ? 'top_left' : 'no_mask') : String(rec.attn_mask);
        if (mask !== 'top_left' && mask !== 'no_mask') throw new Error(`${where}: unknown attn_mask "${mask}"`);
        const hd = parseDim(rec.head_dim);
        const dims = {
          batch: parseDim(rec.batch_size), seq_q: parseDim(rec.q_seqlen), seq_kv: parseDim(rec.kv_seqlen),
          heads_q: parseDim(rec.num_q_heads), heads_kv: parseDim(rec.num_kv_heads),
          head_dim_qk: old ? hd : parseDim(rec.head_dim_qk), head_dim_v: old ? hd : parseDim(rec.head_dim_vo),
        };
        /** @type {Record<string, number>} */
        const sizes = {};
        for (const [k, d] of Object.entries(dims)) if (d !== null && d > 0) sizes[k] = d;
        if (Object.keys(sizes).length !== Object.keys(dims).length) {
          table.skip(source, id, 'missing or zero dimension');
          continue;
        }
        const window = String(rec.sliding_window_size ?? '').trim() === '' ? 0 : parseDim(rec.sliding_window_size);
        if (window === null) throw new Error(`${where}: bad sliding_window_size "${rec.sliding_window_size}"`);
        table.add({
          source, gpu, precision, direction: dir, ...sizes, causal: mask === 'top_left' ? 1 : 0, window,
          deterministic: dir === 'bwd' && isTrue(rec.deterministic_bwd) ? 1 : 0, time_ms: t.value,
        });
      }
    });
  }
}

/** `node models/data-tools/cudnn-sdpa.mjs DIR [--out FILE]`: the table from the CSVs under DIR, written gzipped. */
function main() {
  const args = process.argv.slice(2);
  const outAt = args.indexOf('--out');
  const out = outAt >= 0 ? resolve(String(args[outAt + 1])) : FOUND_TABLE;
  const dir = args.find((a, i) => !a.startsWith('--') && (outAt < 0 || i !== outAt + 1));
  if (!dir) throw new Error('usage: node models/data-tools/cudnn-sdpa.mjs DIR [--out FILE]');
  const table = makeAttentionTable();
  buildCudnnSdpa(resolve(dir), table);
  const gz = table.build();
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, gz);
  console.log(`${table.outputRows} timings -> ${out} (${gz.length} bytes)`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) main();
