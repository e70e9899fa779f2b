#!/usr/bin/env node
// `node web/bench/scale.mjs [--write]`: published large-scale training runs beside the core's prediction
// of the same layout (docs/SCALE.md). Each run is predicted once with the engine the CLI uses (wasm core,
// learned predictors when models/artifacts is present); the published throughput is converted to the
// paper's own FLOP accounting so like is compared with like. With --write the table replaces docs/SCALE.md.
//
// Nothing here is fitted: the requests are the papers' configurations, and the errors are what they are.

import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { engine } from '../cli/node-engine.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const write = process.argv.includes('--write');

/**
 * GPT-style decoder of Narayanan et al. 2021 (vocabulary 51,200, sequence 2048, learned positions); the
 * requests ask for Megatron-LM's kernels, which fuse its GELU.
 * @param {number} layers
 * @param {number} hidden
 * @param {number} heads
 */
function megatronGpt(layers, hidden, heads) {
  return {
    hf_config: {
      model_type: 'gpt2', n_layer: layers, n_embd: hidden, n_head: heads, vocab_size: 51200, n_positions: 2048,
      activation_function: 'gelu_new', attn_pdrop: 0.1, resid_pdrop: 0.1, embd_pdrop: 0.1,
    },
    name: `GPT ${layers}x${hidden}`,
  };
}

/**
 * Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM"
 * (SC21, arXiv 2104.04473), Table 1: per-GPU throughput on Selene (DGX A100 80GB, 8x 200 Gb/s HDR per
 * node), mixed precision, activation recomputation. The paper counts 96·B·s·l·h²·(1 + s/6h + V/16lh)
 * FLOPs per iteration (its Eq. 3), i.e. with the recomputed forward.
 * Not stated in the table, assumed here: micro-batch 1, full recomputation, no ZeRO, non-interleaved 1F1B.
 * No sequence parallelism: it came later (Korthikanti et al. 2022).
 */
const MEGATRON_2021 = /** @type {number[][]} */ ([
  [1.7, 24, 2304, 24, 1, 1, 32, 512, 137],
  [3.6, 32, 3072, 30, 2, 1, 64, 512, 138],
  [7.5, 32, 4096, 36, 4, 1, 128, 512, 142],
  [18.4, 48, 6144, 40, 8, 1, 256, 1024, 135],
  [39.1, 64, 8192, 48, 8, 2, 512, 1536, 138],
  [76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140],
  [145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148],
  [310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155],
  [529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163],
  [1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163],
]).map(([billions = 0, heads = 0, hidden = 0, layers = 0, tensor = 1, pipeline = 1, gpus = 1, batch = 1, tflops = 0]) => ({
  source: 'Narayanan et al. 2021, Table 1',
  run: `GPT ${billions}B, ${gpus}× A100 (TP ${tensor}, PP ${pipeline}, DP ${gpus / (tensor * pipeline)})`,
  published: tflops,
  request: {
    model: megatronGpt(layers, hidden, heads),
    training: { batch_size: batch, seq_len: 2048, precision: 'fp16', optimizer: 'adam', kernels: 'megatron' },
    hardware: ['a100-sxm4-80gb'],
    options: { per_layer: false },
    parallel: { gpus, tensor, pipeline, micro_batch_size: 1, recompute: 'full', sequence_parallel: false },
  },
  /** Predicted TFLOP/s per GPU in the paper's accounting. */
  convert: (/** @type {any} */ r) => {
    const s = 2048, V = 51200;
    const flops = 96 * batch * s * layers * hidden ** 2 * (1 + s / (6 * hidden) + V / (16 * layers * hidden));
    return flops / (r.step_ms / 1e3) / gpus / 1e12;
  },
}));

/**
 * Dubey et al., "The Llama 3 Herd of Models" (arXiv 2407.21783), Table 4: Llama 3 405B pre-training on
 * H100 (BF16), TFLOPs per GPU = BF16 MFU x 989 (model FLOPs, no recomputation). Architecture from its
 * Table 3: 126 layers, width 16,384, FFN 53,248, 128 heads, 8 key/value heads, vocabulary 128,000.
 * Assumed: micro-batch 1, fused (Flash) attention and no other recomputation, ZeRO stage 1, the catalogue's DGX H100 fabric (8x 400 Gb/s per node). Sequence parallelism on: the
 * paper's tensor parallelism is Megatron's with sequence parallelism (it cites Korthikanti et al.). The
 * long-context row runs context parallelism 16 (parallel.context: TransformerEngine's ring, load-balanced).
 */
const LLAMA3 = [
  { gpus: 8192, dp: 64, cp: 1, seq: 8192, batchPerDp: 32, published: 430 },
  { gpus: 16384, dp: 128, cp: 1, seq: 8192, batchPerDp: 16, published: 400 },
  { gpus: 16384, dp: 8, cp: 16, seq: 131072, batchPerDp: 16, published: 380 },
].map(({ gpus, dp, cp, seq, batchPerDp, published }) => ({
  source: 'Dubey et al. 2024, Table 4',
  run: `Llama 3 405B, ${gpus}× H100 (TP 8, ${cp > 1 ? `CP ${cp}, ` : ''}PP 16, DP ${dp}), sequence ${seq}`,
  published,
  request: {
    model: {
      hf_config: {
        model_type: 'llama', hidden_size: 16384, intermediate_size: 53248, num_hidden_layers: 126,
        num_attention_heads: 128, num_key_value_heads: 8, vocab_size: 128000, max_position_embeddings: seq,
        hidden_act: 'silu', tie_word_embeddings: false,
      },
      name: 'Llama 3 405B',
    },
    training: { batch_size: dp * batchPerDp, seq_len: seq, precision: 'bf16', optimizer: 'adamw', attention: 'flash' },
    hardware: ['h100-sxm'],
    options: { per_layer: false },
    parallel: { gpus, tensor: 8, context: cp, pipeline: 16, micro_batch_size: 1, zero_stage: 1, sequence_parallel: true },
  },
  convert: (/** @type {any} */ r) => r.mfu * 989,
}));

/**
 * torchtitan's published benchmarks (pytorch/torchtitan docs/performance.md @ eaea6f6a, BSD-3-Clause):
 * Llama 3.1 on Meta's Grand Teton hosts — 8 H100 per host on NVLink, 400 Gb/s RDMA per GPU, but H100s with
 * 96 GB of HBM2e at 2.4 TB/s and a 500 W power limit, which the catalogue's 700 W `h100-sxm` (3.35 TB/s) is
 * not: the predictions are expected to run fast (torchtitan itself reports 33-39% MFU for the 8B rows).
 * Throughput is tokens per second per GPU (TPS/GPU), memory the peak GiB per GPU. Sequence 8192 (the
 * torchtitan Llama 3.1 configs), AdamW, FSDP2 (ZeRO-3 with every layer resharded after forward), fused
 * attention (SDPA). "Selective activation checkpointing" is torchtitan's op-level policy (matmul outputs
 * kept except every second one of a block): `recompute: "torchtitan_op"`. Float8 is torchao's tensorwise dynamic scaling (`fp8_recipe: "current"`).
 */
/**
 * @typedef {{table: number, model: string, gpus: number, fsdp: number, local: number, ac: string,
 *   tr: Record<string, unknown>, tps: number, gib: number, what: string, tensor?: number, pipeline?: number,
 *   virtual?: number, context?: number, seq?: number}} TitanRun
 */
const TORCHTITAN = /** @type {TitanRun[]} */ ([
  { table: 1, model: 'llama-3.1-8b', gpus: 8, fsdp: 8, local: 2, ac: 'torchtitan_op', tr: {}, tps: 5762, gib: 82.4, what: 'FSDP' },
  { table: 1, model: 'llama-3.1-8b', gpus: 8, fsdp: 8, local: 2, ac: 'torchtitan_op', tr: { compile: true }, tps: 6667, gib: 77.0, what: 'FSDP + compile' },
  { table: 1, model: 'llama-3.1-8b', gpus: 8, fsdp: 8, local: 2, ac: 'torchtitan_op', tr: { compile: true, precision: 'fp8', fp8_recipe: 'current' }, tps: 8532, gib: 76.8, what: 'FSDP + compile + Float8' },
  { table: 3, model: 'llama-3.1-8b', gpus: 128, fsdp: 128, local: 2, ac: 'torchtitan_op', tr: {}, tps: 5605, gib: 67.0, what: 'FSDP' },
  { table: 3, model: 'llama-3.1-8b', gpus: 128, fsdp: 128, local: 2, ac: 'torchtitan_op', tr: { compile: true }, tps: 6514, gib: 62.0, what: 'FSDP + compile' },
  { table: 3, model: 'llama-3.1-8b', gpus: 128, fsdp: 128, local: 2, ac: 'torchtitan_op', tr: { compile: true, precision: 'fp8', fp8_recipe: 'current' }, tps: 8380, gib: 61.8, what: 'FSDP + compile + Float8' },
  { table: 4, model: 'llama-3.1-70b', gpus: 256, fsdp: 32, tensor: 8, local: 16, ac: 'full', tr: { compile: true, precision: 'fp8', fp8_recipe: 'current' }, tps: 829, gib: 71.9, what: 'FSDP 32 + TP 8 + compile + Float8' },
  { table: 5, model: 'llama-3.1-405b', gpus: 512, fsdp: 8, tensor: 8, pipeline: 8, local: 32, ac: 'full', tr: { compile: true, precision: 'fp8', fp8_recipe: 'current' }, tps: 100, gib: 82.5, what: 'FSDP 8 + TP 8 + PP 8 (1F1B) + compile + Float8' },
  { table: 5, model: 'llama-3.1-405b', gpus: 512, fsdp: 8, tensor: 8, pipeline: 8, virtual: 2, local: 32, ac: 'full', tr: { compile: true, precision: 'fp8', fp8_recipe: 'current' }, tps: 128, gib: 72.7, what: 'FSDP 8 + TP 8 + PP 8 (interleaved, 2 chunks per stage: assumed) + compile + Float8' },
  ...[[8, 1, 32768, 3890, 83.9], [4, 2, 65536, 2540, 84.2], [2, 4, 131072, 1071, 84.0], [1, 8, 262144, 548, 84.5]].map(
    ([fsdp = 1, context = 1, seq = 0, tps = 0, gib = 0]) => ({ table: 2, model: 'llama-3.1-8b', gpus: 8, fsdp, context, seq, local: 1, ac: 'full', tr: { compile: true, precision: 'fp8', fp8_recipe: 'current' }, tps, gib, what: `FSDP ${fsdp} + CP ${context} + compile + Float8` })),
]).map((t) => {
  const seq = t.seq ?? 8192;
  const batch = t.fsdp * t.local;
  return {
    source: `torchtitan docs/performance.md, Table ${t.table}`,
    run: `${t.model}, ${t.gpus}× H100 (${t.what}), sequence ${seq}, local batch ${t.local}`,
    unit: 'tokens/s/GPU',
    published: t.tps,
    publishedMemory: `${t.gib} GiB`,
    request: {
      model: { preset: t.model },
      training: { batch_size: batch, seq_len: seq, precision: 'bf16', optimizer: 'adamw', attention: 'flash', ...t.tr },
      hardware: ['h100-sxm'],
      options: { per_layer: false },
      parallel: {
        gpus: t.gpus, data: t.fsdp, fsdp: true, micro_batch_size: t.pipeline ? 1 : t.local, recompute: t.ac,
        ...(t.tensor ? { tensor: t.tensor, sequence_parallel: true } : {}),
        ...(t.pipeline ? { pipeline: t.pipeline } : {}),
        ...(t.virtual ? { virtual_stages: t.virtual } : {}),
        ...(t.context ? { context: t.context } : {}),
      },
    },
    /** Predicted tokens per second per GPU. */
    convert: (/** @type {any} */ r) => (batch * seq) / (r.step_ms / 1e3) / t.gpus,
  };
});

/**
 * Models whose base recipes set account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split
 * (src/megatron/bridge/recipes/llama/h100/llama3.py, the 405B pre-training config the perf recipes start
 * from; recipes/qwen/h100/qwen3_moe.py, the 235B-A22B one): `parallel.pipeline_embedding_loss`. DeepSeek-V3's
 * recipes give explicit layout strings with the MTP layer instead, which the request cannot state.
 */
const EMBEDDING_LOSS_SPLIT = new Set(['llama-3.1-405b', 'qwen3-235b-a22b']);

/**
 * NVIDIA NeMo Megatron-Bridge's published pre-training benchmarks (NVIDIA-NeMo/Megatron-Bridge
 * docs/performance-summary-archive.md @ 067f987d, "25.11 NeMo Container", Apache-2.0): tokens per second per
 * GPU on DGX-GB300, DGX-GB200, DGX-B200 and DGX-H100 with the table's stated layout (FSDP, TP, PP, CP, VP, EP,
 * micro-batch, global batch, sequence). MoE benchmarks force-balanced routing, token-dropless (the page's
 * note); DeepSeek-V3 rows without multi-token prediction. Not in the table and taken from the repository's
 * perf recipes (src/megatron/bridge/perf_recipes, same commit): Megatron's distributed optimizer (ZeRO 1) or
 * Megatron-FSDP where the FSDP column says so, fused (TransformerEngine) attention, sequence parallelism with
 * TP > 1, no full or selective recomputation (the MoE recipes recompute small modules — MLA up-projections,
 * the expert activation, norms — which the core cannot state: not modelled), FP8-CS = per-tensor current
 * scaling, FP8-MX = MXFP8. CUDA graphs and TP communication overlap are not modelled.
 * Row: system, GPUs, model preset, precision, global batch, micro-batch, sequence, FSDP, TP, PP, CP, VP, EP,
 * published tokens/s/GPU.
 */
const MEGATRON_BRIDGE = /** @type {[string, number, string, string, number, number, number, number, number, number, number, number, number, number][]} */ ([
  ['gb300', 8, 'llama-3-8b', 'fp8-cs', 128, 2, 8192, 0, 1, 1, 1, 1, 1, 37556],
  ['gb300', 8, 'llama-3-8b', 'fp8-mx', 128, 2, 8192, 0, 1, 1, 1, 1, 1, 36108],
  ['gb300', 64, 'llama-3.1-70b', 'fp8-cs', 256, 2, 8192, 64, 1, 1, 1, 1, 1, 4520],
  ['gb300', 256, 'llama-3.1-405b', 'fp8-cs', 1536, 1, 8192, 0, 2, 8, 2, 4, 1, 999],
  ['gb300', 256, 'deepseek-v3', 'bf16', 4096, 1, 4096, 0, 1, 2, 1, 4, 32, 3848],
  ['gb300', 256, 'deepseek-v3', 'fp8-mx', 4096, 1, 4096, 0, 1, 2, 1, 4, 32, 4357],
  ['gb300', 64, 'gpt-oss-120b', 'bf16', 1280, 2, 8192, 0, 1, 1, 1, 1, 64, 18347],
  ['gb300', 8, 'qwen3-30b-a3b', 'fp8-mx', 512, 4, 4096, 0, 1, 1, 1, 1, 8, 28934],
  ['gb300', 256, 'qwen3-235b-a22b', 'bf16', 8192, 2, 4096, 0, 1, 4, 1, 12, 16, 6131],
  ['gb200', 8, 'llama-3-8b', 'fp8-cs', 128, 2, 8192, 0, 1, 1, 1, 1, 1, 31508],
  ['gb200', 8, 'llama-3-8b', 'fp8-mx', 128, 2, 8192, 0, 1, 1, 1, 1, 1, 29789],
  ['gb200', 64, 'llama-3.1-70b', 'fp8-cs', 256, 2, 8192, 64, 1, 1, 1, 1, 1, 4312],
  ['gb200', 256, 'llama-3.1-405b', 'fp8-cs', 1536, 1, 8192, 0, 4, 16, 1, 4, 1, 813],
  ['gb200', 256, 'deepseek-v3', 'bf16', 4096, 1, 4096, 0, 1, 4, 1, 4, 64, 3139],
  ['gb200', 256, 'deepseek-v3', 'fp8-mx', 4096, 1, 4096, 0, 1, 8, 1, 4, 32, 4018],
  ['gb200', 64, 'gpt-oss-120b', 'bf16', 1280, 1, 8192, 0, 1, 1, 1, 1, 64, 15876],
  ['gb200', 8, 'qwen3-30b-a3b', 'fp8-mx', 512, 4, 4096, 0, 1, 1, 1, 1, 8, 23766],
  ['gb200', 256, 'qwen3-235b-a22b', 'bf16', 8192, 1, 4096, 0, 1, 8, 1, 3, 32, 4916],
  ['b200', 8, 'llama-3-8b', 'fp8-cs', 128, 2, 8192, 0, 1, 1, 1, 1, 1, 30624],
  ['b200', 8, 'llama-3-8b', 'fp8-mx', 128, 2, 8192, 0, 1, 1, 1, 1, 1, 29521],
  ['b200', 128, 'llama-3.1-405b', 'fp8-cs', 64, 1, 8192, 0, 4, 8, 2, 8, 1, 661],
  ['b200', 128, 'llama-3.1-405b', 'fp8-mx', 64, 1, 8192, 0, 4, 8, 2, 8, 1, 624],
  ['b200', 64, 'gpt-oss-120b', 'bf16', 512, 4, 4096, 0, 1, 1, 1, 1, 8, 8213],
  ['b200', 8, 'qwen3-30b-a3b', 'fp8-mx', 512, 1, 4096, 0, 1, 1, 1, 1, 8, 9299],
  ['b200', 64, 'qwen3-235b-a22b', 'fp8-mx', 1024, 1, 4096, 0, 1, 8, 1, 2, 8, 3269],
  ['h100-sxm', 8, 'llama-3-8b', 'fp8-cs', 128, 1, 8192, 8, 1, 1, 1, 1, 1, 14451],
  ['h100-sxm', 64, 'llama-3.1-70b', 'fp8-cs', 128, 1, 8192, 0, 4, 8, 1, 5, 1, 1602],
  ['h100-sxm', 1024, 'llama-3.1-405b', 'fp8-cs', 512, 1, 8192, 0, 8, 8, 2, 8, 1, 292],
  ['h100-sxm', 64, 'gpt-oss-120b', 'bf16', 512, 4, 4096, 0, 1, 4, 1, 1, 8, 5630],
  ['h100-sxm', 16, 'qwen3-30b-a3b', 'fp8-cs', 512, 2, 4096, 0, 1, 2, 1, 24, 8, 5275],
  ['h100-sxm', 256, 'qwen3-235b-a22b', 'fp8-cs', 2048, 1, 4096, 0, 2, 8, 1, 4, 32, 1575],
]).map(([hw, gpus, model, precision, gbs, mbs, seq, fsdp, tensor, pipeline, context, virtual, expert, tps]) => {
  const fp8 = precision === 'bf16' ? {} : { precision: 'fp8', fp8_recipe: precision === 'fp8-mx' ? 'mxfp8' : 'current' };
  const layout = [fsdp ? `FSDP ${fsdp}` : '', tensor > 1 ? `TP ${tensor}` : '', pipeline > 1 ? `PP ${pipeline}` : '',
    context > 1 ? `CP ${context}` : '', virtual > 1 ? `VP ${virtual}` : '', expert > 1 ? `EP ${expert}` : ''].filter(Boolean);
  return {
    source: 'Megatron-Bridge performance summary, 25.11',
    run: `${model}, ${gpus}× ${hw.toUpperCase()} (${layout.join(' + ') || 'DP'}), ${precision.toUpperCase()}, sequence ${seq}, micro-batch ${mbs}, global batch ${gbs}`,
    unit: 'tokens/s/GPU',
    published: tps,
    request: {
      model: { preset: model },
      training: { batch_size: gbs, seq_len: seq, precision: 'bf16', optimizer: 'adamw', attention: 'flash', kernels: 'megatron', state_accounting: 'megatron', ...fp8 },
      hardware: [hw],
      options: { per_layer: false },
      parallel: {
        gpus, tensor, pipeline, micro_batch_size: mbs, recompute: 'none',
        ...(fsdp ? { fsdp: true } : { zero_stage: 1 }),
        ...(tensor > 1 ? { sequence_parallel: true } : {}),
        ...(virtual > 1 ? { virtual_stages: virtual } : {}),
        ...(context > 1 ? { context } : {}),
        ...(expert > 1 ? { expert } : {}),
        ...(pipeline > 1 && EMBEDDING_LOSS_SPLIT.has(model) ? { pipeline_embedding_loss: true } : {}),
      },
    },
    /** Predicted tokens per second per GPU. */
    convert: (/** @type {any} */ r) => (gbs * seq) / (r.step_ms / 1e3) / gpus,
  };
});

/** @type {{ source: string, run: string, published: number, why: string }[]} */
const NOT_PREDICTED = [];

/** @param {number} v */
const f1 = (v) => v.toFixed(1);

export async function main() {
  const rows = [];
  /** @type {{source: string, run: string, unit: string, published: number, why: string}[]} */
  const refused = NOT_PREDICTED.map((r) => ({ ...r, unit: 'TFLOP/s/GPU' }));
  for (const item of [...MEGATRON_2021, ...LLAMA3, ...TORCHTITAN, ...MEGATRON_BRIDGE]) {
    const unit = 'unit' in item ? String(item.unit) : 'TFLOP/s/GPU';
    let response;
    try {
      response = await engine.predict(/** @type {import('../src/types').PredictRequest} */ (/** @type {unknown} */ (item.request)));
    } catch (e) {
      // A layout the core refuses is reported as refused, with the core's own reason.
      const why = /** @type {Error} */ (e).message.split('; expected')[0]?.slice(0, 160) ?? '';
      refused.push({ source: item.source, run: item.run, unit, published: item.published, why });
      process.stderr.write(`${item.run}: refused: ${/** @type {Error} */ (e).message}\n`);
      continue;
    }
    const r = /** @type {any} */ (response.results[0]);
    const predicted = item.convert(r);
    const p = r.parallel;
    const comm = Object.values(/** @type {Record<string, number>} */ (p.communication_ms)).reduce((a, b) => a + b, 0);
    rows.push({
      ...item,
      unit,
      predictor: response.predictor,
      predicted,
      error: (predicted - item.published) / item.published,
      step_s: r.step_ms / 1e3,
      bubble: p.bubble_ms / r.step_ms,
      comm: comm / r.step_ms,
      fits: r.fits,
      memory: r.memory_gb,
      publishedMemory: 'publishedMemory' in item ? String(item.publishedMemory) : '',
    });
    process.stderr.write(`${item.run}: ${f1(predicted)} vs ${item.published}\n`);
  }
  const abs = rows.map((r) => Math.abs(r.error));
  const mape = (abs.reduce((a, b) => a + b, 0) / abs.length) * 100;
  const signed = (rows.reduce((a, r) => a + r.error, 0) / rows.length) * 100;
  const lines = [
    '# Large-scale sanity check',
    '',
    'Published multi-node training runs beside the core\'s prediction of the same layout. Generated by',
    '`node web/bench/scale.mjs --write` (needs `npm run build:wasm`); predictor: ' +
      `\`${[...new Set(rows.map((r) => r.predictor))].join(', ')}\`.`,
    'Nothing is fitted to these numbers: the requests are the papers\' configurations (web/bench/scale.mjs),',
    'with the assumptions listed below where a paper does not state a setting.',
    '',
    'Throughput is per GPU in each paper\'s own accounting: Narayanan et al. count the recomputed forward',
    '(their Eq. 3, 96·B·s·l·h²·(1 + s/6h + V/16lh) FLOPs per iteration, divided by our predicted step);',
    'Llama 3 reports model FLOPs (BF16 MFU × 989 TFLOP/s; ours is the response\'s `mfu` × 989).',
    '',
    '| source | run | unit | published | predicted | error | step (s) | bubble | exposed comm. | fits (GB/GPU) | published memory |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|',
    ...rows.map(
      (r) =>
        `| ${r.source} | ${r.run} | ${r.unit} | ${r.published} | ${f1(r.predicted)} | ${r.error >= 0 ? '+' : ''}${f1(r.error * 100)}% | ${r.step_s.toFixed(2)} | ${f1(r.bubble * 100)}% | ${f1(r.comm * 100)}% | ${r.fits ? 'yes' : 'no'} (${f1(r.memory)}) | ${r.publishedMemory} |`,
    ),
    ...refused.map((r) => `| ${r.source} | ${r.run} | ${r.unit} | ${r.published} | n/a | refused: ${r.why.replace(/\|/g, '/')} | | | | | |`),
    '',
    `Over the ${rows.length} predicted runs: mean absolute error ${f1(mape)}%, mean signed error ${signed >= 0 ? '+' : ''}${f1(signed)}%.`,
    '',
    '## Assumptions and known gaps',
    '',
    '- Narayanan et al. 2021 (arXiv 2104.04473, Table 1): Selene, DGX A100 80GB with 8× 200 Gb/s HDR',
    '  InfiniBand per node (the catalogue\'s `a100-sxm4-80gb` fabric); fp16 mixed precision, Adam; Megatron-LM\'s',
    '  fused kernels (`training.kernels: "megatron"`: bias-GELU, scale-mask-softmax). Not in the',
    '  table and assumed: micro-batch 1, full recomputation, no ZeRO, and the plain 1F1B schedule (the paper',
    '  uses the interleaved schedule for some runs without saying which; `parallel.virtual_stages` could say it). No sequence',
    '  parallelism: it was introduced after these runs (Korthikanti et al. 2022).',
    '- Dubey et al. 2024 (arXiv 2407.21783, Table 4): 405B on H100 with the catalogue\'s DGX H100 fabric',
    '  (8× 400 Gb/s per node), with Megatron sequence parallelism over the tensor group (`sequence_parallel`;',
    '  the paper\'s tensor parallelism cites Korthikanti et al.). Assumed: micro-batch 1, fused attention',
    '  (`training.attention: "flash"`: one kernel per pass, no s² score traffic or activations; timed by the',
    '  learned batched-GEMM model, which never saw a fused kernel) and no other recomputation, ZeRO 1.',
    '  Meta\'s own pipeline schedule changes and communication tuning are not modelled: most of the gap is the',
    '  plain 1F1B bubble, (p − 1)/(m + p − 1) with p = 16 and m = 32 or 16 micro-batches, which Llama 3\'s',
    '  interleaved stages divide by the number of virtual stages (126 layers do not split into whole blocks over',
    '  16 stages and 2 chunks, so `virtual_stages` cannot state it). The predicted memory',
    '  per GPU is reported as is (`fits` no means the layout as we model it would not fit). The 131,072-token',
    '  row runs context parallelism 16 (`parallel.context`: TransformerEngine\'s ring, causal load balancing,',
    '  gradients over data × context; docs/PREDICTION.md, "Context parallelism") with 16 micro-batches of one',
    '  sequence each (16M tokens per step).',
    '- torchtitan (pytorch/torchtitan docs/performance.md @ eaea6f6a, BSD-3-Clause, runs of December 2024):',
    '  Grand Teton H100s with 96 GB HBM2e at 2.4 TB/s under a 500 W limit, predicted as the catalogue\'s 700 W',
    '  `h100-sxm` (3.35 TB/s): expect the predictions to run fast. FSDP2 as ZeRO-3; "selective" checkpointing',
    '  is torchtitan\'s op-level policy, which also recomputes every second matmul of a block (`recompute: "torchtitan_op"`); Float8 is torchao\'s tensorwise dynamic scaling',
    '  (`fp8_recipe: "current"`); AsyncTP is not modelled; the interleaved run\'s chunks per stage are not',
    '  stated (2 assumed). Memory is compared with the published peak GiB per GPU.',
    '- Megatron-Bridge (NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md @ 067f987d, 25.11 container,',
    '  Apache-2.0): the table\'s layouts as stated; from the recipes (same commit): ZeRO 1 (distributed optimizer) or',
    '  Megatron-FSDP where the table says FSDP, TransformerEngine kernels (`kernels: "megatron"`: cuDNN fused attention,',
    '  timed from the catalogue\'s measured `fused_attention`), sequence parallelism with TP > 1, no recomputation;',
    '  FP8-CS = `fp8_recipe: "current"`, FP8-MX = `"mxfp8"`; MoE routing balanced and dropless as the page says.',
    '  Not modelled: CUDA graphs, TP communication overlap, the MoE recipes\' recomputation of small modules (MLA',
    '  up-projections, expert activations, norms), the 70B FSDP rows\' activation offload. The 405B and Qwen3-235B',
    '  recipes count the embedding and the loss as pipeline layers (`parallel.pipeline_embedding_loss`). Refused:',
    '  DeepSeek-V3\'s explicit layout strings (with its MTP layer), and EP carved out of TP × DP (parallel folding).',
    '- Zero-bubble schedules, asynchronous tensor parallelism and communication/compute contention are not',
    '  modelled (docs/PREDICTION.md, "More than one GPU").',
    '',
  ];
  const text = lines.join('\n');
  if (write) {
    writeFileSync(`${ROOT}docs/SCALE.md`, text);
    process.stderr.write('wrote docs/SCALE.md\n');
  } else {
    process.stdout.write(text);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
