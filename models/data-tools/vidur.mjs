// Vidur (microsoft/vidur @ 7d47513, data/profiling/compute/<device>/<org>/<model>/mlp.csv): the
// operators of one transformer block (vidur/profiling/mlp/mlp_impl.py, run through sarathi-serve
// layers), FP16, forward, inference mode, one GPU holding one tensor-parallel shard. Per op the CSV
// has time_stats.<op>.{min,max,mean,median,std} in ms; we use the median.
//
// Shapes come from the CSV's own columns (n_head, n_kv_head, n_embd, n_expanded_embd, vocab_size,
// use_gated_mlp, num_tokens, num_tensor_parallel_workers); nothing is derived from the model name.
// With t = tp, hd = n_embd / n_head, f = n_expanded_embd (per op: rows, cols, inner):
//   emb                       num_tokens, n_embd, vocab_size / t     (gather from a vocab/t x n_embd table)
//   input_layernorm           num_tokens, n_embd, 0
//   post_attention_layernorm  num_tokens, n_embd, 0
//   attn_pre_proj  (GEMM)     num_tokens, (n_head + 2 n_kv_head) hd / t, n_embd     (M, N, K)
//   attn_rope                 num_tokens, (n_head + n_kv_head) hd / t, hd          (q and k widths, head dim)
//   attn_post_proj (GEMM)     num_tokens, n_embd, n_head hd / t                    (M, N, K)
//   mlp_up_proj    (GEMM)     num_tokens, (gated ? 2 : 1) f / t, n_embd            (M, N, K)
//   mlp_act                   num_tokens, f / t, 0                                 (output width)
//   mlp_down_proj  (GEMM)     num_tokens, n_embd, f / t                            (M, N, K)
//   add                       num_tokens, n_embd, 0

import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readCsvObjects } from './csv.mjs';
import { VIDUR_DEVICES, mapDevice } from './gpus.mjs';
import { parseDim, parseTime } from './table.mjs';

const SOURCE = 'vidur';
export const VIDUR_OPS = [
  'emb', 'input_layernorm', 'attn_pre_proj', 'attn_rope', 'attn_post_proj',
  'post_attention_layernorm', 'mlp_up_proj', 'mlp_act', 'mlp_down_proj', 'add',
];

function shape(op, c) {
  const { tokens, tp, nHead, nKv, embd, ffn, vocab, gated } = c;
  const hd = embd / nHead;
  switch (op) {
    case 'emb': return [tokens, embd, vocab / tp];
    case 'input_layernorm':
    case 'post_attention_layernorm':
    case 'add': return [tokens, embd, 0];
    case 'attn_pre_proj': return [tokens, ((nHead + 2 * nKv) * hd) / tp, embd];
    case 'attn_rope': return [tokens, ((nHead + nKv) * hd) / tp, hd];
    case 'attn_post_proj': return [tokens, embd, (nHead * hd) / tp];
    case 'mlp_up_proj': return [tokens, ((gated ? 2 : 1) * ffn) / tp, embd];
    case 'mlp_act': return [tokens, ffn / tp, 0];
    case 'mlp_down_proj': return [tokens, embd, ffn / tp];
    default: throw new Error(`unknown Vidur op ${op}`);
  }
}

function findModels(deviceDir) {
  // <device>/<org>/<model>/mlp.csv
  const out = [];
  for (const org of readdirSync(deviceDir).sort()) {
    const orgDir = join(deviceDir, org);
    if (!statSync(orgDir).isDirectory()) continue;
    for (const model of readdirSync(orgDir).sort()) {
      const file = join(orgDir, model, 'mlp.csv');
      if (existsSync(file)) out.push({ model: `${org}/${model}`, file });
    }
  }
  return out;
}

export function buildVidur(shared, tables, notes) {
  const root = join(shared, 'ops', 'vidur');
  const table = tables.llm_ops;
  const devices = readdirSync(root).filter((d) => statSync(join(root, d)).isDirectory()).sort();
  for (const dev of devices) {
    const gpu = mapDevice(VIDUR_DEVICES, dev, join(root, dev));
    for (const { model, file } of findModels(join(root, dev))) {
      const { header, records } = readCsvObjects(file);
      const ops = VIDUR_OPS.filter((op) => header.includes(`time_stats.${op}.median`));
      const unknown = header.filter((h) => /^time_stats\.[^.]+\.median$/.test(h) && !VIDUR_OPS.includes(h.split('.')[1]));
      if (unknown.length) throw new Error(`${file}: unknown ops ${unknown.join(', ')}`);
      const seen = new Map();
      for (const rec of records) {
        table.countRaw(SOURCE, gpu);
        const c = {
          tokens: parseDim(rec.num_tokens),
          tp: parseDim(rec.num_tensor_parallel_workers),
          nHead: parseDim(rec.n_head),
          nKv: parseDim(rec.n_kv_head),
          embd: parseDim(rec.n_embd),
          ffn: parseDim(rec.n_expanded_embd),
          vocab: parseDim(rec.vocab_size),
          gated: { True: true, False: false }[String(rec.use_gated_mlp).trim()],
        };
        if (Object.values(c).some((v) => v === null || v === undefined || v === 0)) {
          table.skip(SOURCE, gpu, 'missing or zero shape column', ops.length);
          continue;
        }
        const key = `${c.tokens}/${c.tp}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        for (const op of ops) {
          const t = parseTime(rec[`time_stats.${op}.median`]);
          if (t.reason) {
            table.skip(SOURCE, gpu, `${op}: ${t.reason}`);
            continue;
          }
          const [rows, cols, inner] = shape(op, c);
          if (![rows, cols, inner].every(Number.isSafeInteger)) {
            table.skip(SOURCE, gpu, `${op}: shape not divisible by tp`);
            continue;
          }
          table.add({ source: SOURCE, gpu, precision: 'fp16', model, op, num_tokens: c.tokens, tp: c.tp, rows, cols, inner, time_ms: t.value });
        }
      }
      const dups = [...seen.values()].filter((v) => v > 1).length;
      if (dups) {
        const key = `vidur ${dev}/${model}: (num_tokens, tp) measured twice, both rows kept`;
        notes.set(key, (notes.get(key) ?? 0) + dups);
      }
    }
  }
}
