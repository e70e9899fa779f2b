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
const MEGATRON_BRIDGE_2511 = /** @type {[string, number, string, string, number, number, number, number, number, number, number, number, number, number][]} */ ([
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
]);

/**
 * Kimi K2 (1 T parameters, a DeepSeek-V3-shaped MLA + MoE decoder) as a Hugging Face `deepseek_v3` config.
 * No preset; the architecture is Megatron-Bridge's own KimiK2Provider (NVIDIA-NeMo/Megatron-Bridge
 * src/megatron/bridge/models/kimi/kimi_provider.py @ dc805f5c, Apache-2.0; removed by 217de1a2 when the
 * providers were replaced by reading the Hub config of moonshotai/Kimi-K2-Instruct, which the perf recipe
 * loads): 61 layers, the first dense (moe_layer_freq [0] + [1] × 60), width 7168, FFN 18432, 64 heads, MLA
 * q_lora_rank 1536, kv_lora_rank 512, qk 128 + 64 rope, v 128, 384 routed experts of 2048 plus one shared, top 8,
 * one group, sigmoid scores, scaling 2.827, RMSNorm eps 1e-6, rope base 50000, vocabulary 163,840, untied, no
 * MTP. The Hub config names model_type `kimi_k2` over the `DeepseekV3ForCausalLM` class; Moonshot's deploy
 * guidance says to set `deepseek_v3` where a framework does not know `kimi_k2`, which is what is sent here.
 */
const KIMI_K2 = {
  model_type: 'deepseek_v3', num_hidden_layers: 61, first_k_dense_replace: 1, moe_layer_freq: 1, hidden_size: 7168,
  intermediate_size: 18432, num_attention_heads: 64, num_key_value_heads: 64, q_lora_rank: 1536, kv_lora_rank: 512,
  qk_nope_head_dim: 128, qk_rope_head_dim: 64, v_head_dim: 128, n_routed_experts: 384, moe_intermediate_size: 2048,
  n_shared_experts: 1, num_experts_per_tok: 8, n_group: 1, topk_group: 1, routed_scaling_factor: 2.827,
  scoring_func: 'sigmoid', topk_method: 'noaux_tc', norm_topk_prob: true, hidden_act: 'silu', rms_norm_eps: 1e-6,
  rope_theta: 50000, vocab_size: 163840, tie_word_embeddings: false, attention_bias: false, num_nextn_predict_layers: 0,
  max_position_embeddings: 4096,
};

/**
 * Models of the 26.x tables the core cannot build, listed as refused with the reason (no request is sent):
 * no preset, and their Hugging Face model types are not in the core's table (docs/MODEL_FORMAT.md). What they
 * are: Megatron-Bridge's bridges at the same commit, src/megatron/bridge/models/nemotronh/nemotron_h_bridge.py
 * (Mamba-2 mixers placed by hybrid_override_pattern) and models/deepseek/deepseek_v4_bridge.py
 * (hyper-connections, compressed sparse attention); the perf recipes load nvidia/NVIDIA-Nemotron-3-*-BF16 and
 * deepseek-ai/DeepSeek-V4-Flash.
 */
const NOT_IN_CATALOGUE = /** @type {Record<string, string>} */ ({
  'nemotron-3-nano': 'architecture not in the catalogue: Nemotron 3 Nano 30B-A3B, a Mamba-2 / attention / MoE hybrid (model_type nemotron_h): no preset, no model type',
  'nemotron-3-super': 'architecture not in the catalogue: Nemotron 3 Super 120B-A12B, a Mamba-2 / attention / MoE hybrid (model_type nemotron_h): no preset, no model type',
  'nemotron-3-ultra': 'architecture not in the catalogue: Nemotron 3 Ultra 550B-A55B, a Mamba-2 / attention / MoE hybrid (model_type nemotron_h): no preset, no model type',
  'nemotron-3.5-lightning': 'architecture not in the catalogue: Nemotron 3.5 Lightning 30B-A3B, a Mamba-2 / attention / MoE hybrid (model_type nemotron_h): no preset, no model type',
  'deepseek-v4-flash': 'architecture not in the catalogue: DeepSeek-V4-Flash (compressed sparse attention, hyper-connections; model_type deepseek_v4): no preset, no model type',
});

/**
 * Megatron-Bridge's newer tables (docs/performance-summary.md, 26.08, and docs/performance-summary-archive.md,
 * 26.06.01 back to 26.02, @ 067f987d, Apache-2.0): pre-training, and Llama 3 70B SFT and LoRA (26.06). For each
 * distinct configuration (task, model, system, GPUs, precision, GBS, MBS, sequence, FSDP, TP, PP, CP, VP, EP) the
 * newest release that publishes it: 233 table rows, 80 configurations; the 153 older numbers of identical
 * configurations are superseded. Tables from 26.06 on have no FSDP column (0 here; of the recipes behind these
 * rows only Nemotron 3 Ultra's, not predicted, uses Megatron-FSDP (HSDP)); "n/a" VP or EP is 1. Precision:
 * "FP8" is the perf launcher's fp8_cs (per-tensor current scaling, `fp8_recipe: "current"`:
 * scripts/performance/argument_parser.py offers bf16, fp8_cs, fp8_mx, fp8_sc, nvfp4, and every FP8 row has an
 * `_fp8cs_` recipe), MXFP8 = `"mxfp8"`, NVFP4 = `"nvfp4"` (refused by the core).
 * The same mapping as the 25.11 rows otherwise, from the perf recipes at the same commit
 * (src/megatron/bridge/perf_recipes/<family>/<system>/*.py), which are the 26.08 ones: an older row's recipe
 * may have differed (the table's layout is used as published).
 * - Llama 3 70B (preset llama-3.1-70b, the same architecture), 405B: ZeRO 1, or Megatron-FSDP where FSDP is 64
 *   (with activation offload of 20 to 40 layers: not modelled), sequence parallelism with TP > 1, no
 *   recomputation; the 405B recipe counts embedding and loss as pipeline layers; the H100 70B FP8 recipe gives
 *   a layout string (one chunk of 3 layers, the last of 1) the request cannot state.
 * - SFT (llama3_70b_sft_config): full fine-tuning with the distributed optimizer (ZeRO 1), sequences packed
 *   offline to 4096 (`packing: true`). LoRA (llama3_70b_peft_config + perf overrides): rank 16, alpha 32,
 *   dropout 0, adapters on linear_qkv only (Megatron's fused QKV: `targets: ["qkv_proj"]`, one adapter), ZeRO 1,
 *   packed; the H100 LoRA row runs TP 2, which the core refuses for LoRA.
 * - DeepSeek-V3 (and Kimi K2): one MTP layer and explicit pipeline layout strings (not statable: rows without
 *   VP are split by cost over whole blocks, MTP not built); the GB200, B300, B200 and Kimi recipes recompute the
 *   MLA up-projection (B200 also the MLP) selectively: not modelled. Kimi K2 trains with Muon without the
 *   distributed optimizer (`optimizer: "muon"`, ZeRO 0).
 * - GPT-OSS, Qwen3: the MoE recipes' HybridEP/DeepEP dispatchers, full-iteration CUDA graphs, expert-rank
 *   capacity 1.5 for CUDA-graph padding, EP-communication overlap and delayed weight gradients, and GPT-OSS's
 *   selective recomputation of norms and expert activations (B200, GB200 BF16, H100) are not modelled.
 * Row: release, task, system, GPUs, model, precision (the table's), GBS, MBS, sequence, FSDP, TP, PP, CP, VP, EP,
 * published tokens/s/GPU.
 */
const MEGATRON_BRIDGE_26 = /** @type {[string, string, string, number, string, string, number, number, number, number, number, number, number, number, number, number][]} */ ([
  // 26.02
  ['26.02', 'pretrain', 'b300', 64, 'gpt-oss-120b', 'BF16', 1280, 4, 4096, 0, 1, 1, 1, 1, 64, 8359],
  ['26.02', 'pretrain', 'b200', 64, 'gpt-oss-120b', 'BF16', 1280, 4, 4096, 0, 1, 1, 1, 1, 64, 8047],
  ['26.02', 'pretrain', 'b200', 8, 'qwen3-30b-a3b', 'MXFP8', 512, 1, 4096, 0, 1, 1, 1, 1, 8, 9691],
  // 26.02.01
  ['26.02.01', 'pretrain', 'gb300', 64, 'llama-3.1-70b', 'MXFP8', 256, 2, 8192, 0, 1, 4, 1, 1, 1, 4798],
  ['26.02.01', 'pretrain', 'gb300', 64, 'llama-3.1-70b', 'NVFP4', 256, 2, 8192, 0, 1, 1, 1, 1, 1, 7002],
  ['26.02.01', 'pretrain', 'gb300', 256, 'llama-3.1-405b', 'FP8', 1536, 1, 8192, 0, 2, 8, 2, 4, 1, 1024],
  ['26.02.01', 'pretrain', 'gb300', 256, 'qwen3-235b-a22b', 'MXFP8', 8192, 2, 4096, 0, 1, 4, 1, 1, 32, 6583],
  ['26.02.01', 'pretrain', 'gb200', 256, 'llama-3.1-405b', 'NVFP4', 1536, 1, 8192, 0, 4, 16, 1, 4, 1, 1083],
  ['26.02.01', 'pretrain', 'gb200', 256, 'qwen3-235b-a22b', 'MXFP8', 8192, 1, 4096, 0, 1, 8, 1, 1, 32, 5530],
  ['26.02.01', 'pretrain', 'b300', 256, 'qwen3-235b-a22b', 'MXFP8', 8192, 1, 4096, 0, 1, 8, 1, 4, 8, 2644],
  ['26.02.01', 'pretrain', 'h100-sxm', 16, 'qwen3-30b-a3b', 'FP8', 1024, 1, 4096, 0, 1, 2, 1, 12, 8, 9058],
  // 26.04
  ['26.04', 'pretrain', 'b300', 256, 'deepseek-v3', 'MXFP8', 4096, 1, 4096, 0, 1, 16, 1, 1, 8, 3131],
  ['26.04', 'pretrain', 'b200', 256, 'deepseek-v3', 'MXFP8', 4096, 1, 4096, 0, 1, 16, 1, 1, 8, 2815],
  // 26.04.01
  ['26.04.01', 'pretrain', 'gb300', 64, 'llama-3.1-70b', 'FP8', 256, 2, 8192, 64, 1, 1, 1, 1, 1, 5248],
  ['26.04.01', 'pretrain', 'gb300', 64, 'llama-3.1-70b', 'MXFP8', 256, 1, 8192, 0, 1, 4, 1, 5, 1, 4864],
  ['26.04.01', 'pretrain', 'gb300', 64, 'llama-3.1-70b', 'NVFP4', 256, 1, 8192, 0, 1, 4, 1, 5, 1, 7296],
  ['26.04.01', 'pretrain', 'gb300', 256, 'deepseek-v3', 'MXFP8', 4096, 2, 4096, 0, 1, 2, 1, 8, 32, 4992],
  ['26.04.01', 'pretrain', 'gb300', 64, 'gpt-oss-120b', 'BF16', 1280, 4, 4096, 0, 1, 1, 1, 1, 64, 19200],
  ['26.04.01', 'pretrain', 'gb200', 64, 'llama-3.1-70b', 'FP8', 256, 2, 8192, 64, 1, 1, 1, 1, 1, 4224],
  ['26.04.01', 'pretrain', 'gb200', 64, 'llama-3.1-70b', 'MXFP8', 256, 1, 8192, 0, 2, 4, 1, 5, 1, 3712],
  ['26.04.01', 'pretrain', 'gb200', 64, 'llama-3.1-70b', 'NVFP4', 256, 1, 8192, 0, 2, 4, 1, 5, 1, 4864],
  ['26.04.01', 'pretrain', 'gb200', 64, 'gpt-oss-120b', 'BF16', 1280, 4, 4096, 0, 1, 1, 1, 1, 64, 16640],
  ['26.04.01', 'pretrain', 'b300', 64, 'gpt-oss-120b', 'BF16', 1280, 4, 4096, 0, 1, 1, 1, 1, 8, 15232],
  ['26.04.01', 'pretrain', 'b300', 256, 'qwen3-235b-a22b', 'MXFP8', 8192, 2, 4096, 0, 1, 8, 1, 1, 8, 5936],
  ['26.04.01', 'pretrain', 'b200', 256, 'deepseek-v3', 'MXFP8', 4096, 1, 4096, 0, 1, 8, 1, 2, 32, 3328],
  ['26.04.01', 'pretrain', 'b200', 64, 'gpt-oss-120b', 'BF16', 1280, 4, 4096, 0, 1, 1, 1, 1, 8, 13568],
  ['26.04.01', 'pretrain', 'b200', 8, 'qwen3-30b-a3b', 'MXFP8', 512, 4, 4096, 0, 1, 1, 1, 1, 8, 27136],
  ['26.04.01', 'pretrain', 'b200', 256, 'qwen3-235b-a22b', 'MXFP8', 8192, 1, 4096, 0, 1, 8, 1, 1, 8, 3776],
  ['26.04.01', 'pretrain', 'b200', 8, 'nemotron-3-nano', 'MXFP8', 512, 2, 8192, 0, 1, 1, 1, 1, 8, 32768],
  ['26.04.01', 'pretrain', 'b200', 64, 'nemotron-3-super', 'MXFP8', 512, 1, 8192, 0, 1, 1, 1, 1, 64, 6400],
  ['26.04.01', 'pretrain', 'b200', 64, 'nemotron-3-super', 'NVFP4', 512, 1, 8192, 0, 2, 1, 1, 1, 64, 5632],
  ['26.04.01', 'pretrain', 'h100-sxm', 64, 'llama-3.1-70b', 'FP8', 256, 1, 8192, 0, 4, 8, 1, 5, 1, 1664],
  ['26.04.01', 'pretrain', 'h100-sxm', 64, 'gpt-oss-120b', 'BF16', 1280, 1, 4096, 0, 1, 4, 1, 1, 8, 5824],
  ['26.04.01', 'pretrain', 'h100-sxm', 256, 'qwen3-235b-a22b', 'FP8', 8192, 1, 4096, 0, 2, 8, 1, 4, 32, 1712],
  // 26.06
  ['26.06', 'pretrain', 'gb300', 256, 'llama-3.1-405b', 'FP8', 1536, 1, 8192, 0, 4, 8, 1, 4, 1, 1048],
  ['26.06', 'pretrain', 'gb300', 256, 'llama-3.1-405b', 'MXFP8', 1536, 1, 8192, 0, 2, 8, 2, 4, 1, 952],
  ['26.06', 'pretrain', 'gb300', 256, 'llama-3.1-405b', 'NVFP4', 1536, 1, 8192, 0, 4, 8, 1, 4, 1, 1413],
  ['26.06', 'pretrain', 'gb300', 256, 'deepseek-v3', 'MXFP8', 15360, 1, 4096, 0, 1, 2, 1, 8, 32, 6422],
  ['26.06', 'pretrain', 'gb300', 256, 'kimi-k2', 'MXFP8', 4096, 2, 4096, 0, 1, 4, 1, 4, 64, 5372],
  ['26.06', 'pretrain', 'gb200', 256, 'llama-3.1-405b', 'FP8', 1536, 1, 8192, 0, 4, 16, 1, 4, 1, 843],
  ['26.06', 'pretrain', 'gb200', 256, 'llama-3.1-405b', 'MXFP8', 1536, 1, 8192, 0, 4, 16, 1, 8, 1, 783],
  ['26.06', 'pretrain', 'gb200', 256, 'llama-3.1-405b', 'NVFP4', 1536, 1, 8192, 0, 4, 16, 1, 8, 1, 1166],
  ['26.06', 'pretrain', 'b300', 256, 'deepseek-v3', 'MXFP8', 4096, 2, 4096, 0, 1, 8, 1, 1, 8, 3541],
  ['26.06', 'pretrain', 'b300', 64, 'gpt-oss-120b', 'MXFP8', 1280, 4, 4096, 0, 1, 1, 1, 1, 8, 18534],
  ['26.06', 'pretrain', 'b300', 8, 'qwen3-30b-a3b', 'MXFP8', 512, 8, 4096, 0, 1, 1, 1, 1, 8, 40769],
  ['26.06', 'pretrain', 'b300', 8, 'nemotron-3-nano', 'MXFP8', 512, 4, 8192, 0, 1, 1, 1, 1, 8, 37316],
  ['26.06', 'pretrain', 'b300', 64, 'nemotron-3-super', 'MXFP8', 512, 1, 8192, 0, 1, 1, 1, 1, 8, 7867],
  ['26.06', 'pretrain', 'b300', 64, 'nemotron-3-super', 'NVFP4', 512, 1, 8192, 0, 1, 1, 1, 1, 8, 8131],
  ['26.06', 'pretrain', 'h100-sxm', 1024, 'llama-3.1-405b', 'FP8', 1536, 1, 8192, 0, 8, 8, 2, 8, 1, 326],
  ['26.06', 'pretrain', 'h100-sxm', 16, 'qwen3-30b-a3b', 'FP8', 1024, 1, 4096, 0, 1, 1, 1, 1, 16, 8826],
  ['26.06', 'pretrain', 'h100-sxm', 16, 'nemotron-3-nano', 'FP8', 1024, 1, 8192, 0, 1, 1, 1, 1, 8, 14719],
  ['26.06', 'sft', 'gb300', 32, 'llama-3.1-70b', 'FP8', 32, 1, 4096, 0, 1, 2, 1, 20, 1, 4819],
  ['26.06', 'sft', 'gb300', 32, 'llama-3.1-70b', 'MXFP8', 32, 1, 4096, 0, 1, 2, 1, 20, 1, 4312],
  ['26.06', 'sft', 'gb200', 32, 'llama-3.1-70b', 'FP8', 32, 1, 4096, 0, 1, 8, 1, 10, 1, 3864],
  ['26.06', 'sft', 'gb200', 32, 'llama-3.1-70b', 'MXFP8', 32, 1, 4096, 0, 1, 8, 1, 10, 1, 3593],
  ['26.06', 'sft', 'h100-sxm', 32, 'llama-3.1-70b', 'FP8', 32, 1, 4096, 0, 4, 4, 1, 5, 1, 1638],
  ['26.06', 'lora', 'gb300', 8, 'llama-3.1-70b', 'FP8', 32, 1, 4096, 0, 1, 2, 1, 20, 1, 7481],
  ['26.06', 'lora', 'gb300', 8, 'llama-3.1-70b', 'MXFP8', 32, 1, 4096, 0, 1, 2, 1, 20, 1, 7447],
  ['26.06', 'lora', 'gb200', 8, 'llama-3.1-70b', 'FP8', 32, 1, 4096, 0, 1, 2, 1, 20, 1, 6206],
  ['26.06', 'lora', 'gb200', 8, 'llama-3.1-70b', 'MXFP8', 32, 1, 4096, 0, 1, 4, 1, 20, 1, 5958],
  ['26.06', 'lora', 'h100-sxm', 8, 'llama-3.1-70b', 'FP8', 32, 1, 4096, 0, 2, 4, 1, 20, 1, 2643],
  // 26.06.01
  ['26.06.01', 'pretrain', 'gb200', 8, 'nemotron-3-nano', 'MXFP8', 512, 2, 8192, 0, 1, 1, 1, 1, 8, 34816],
  // 26.08
  ['26.08', 'pretrain', 'gb300', 256, 'deepseek-v3', 'MXFP8', 4096, 1, 4096, 0, 1, 2, 1, 8, 32, 6288],
  ['26.08', 'pretrain', 'gb300', 64, 'gpt-oss-120b', 'MXFP8', 1280, 4, 4096, 0, 1, 1, 1, 1, 16, 33024],
  ['26.08', 'pretrain', 'gb300', 8, 'qwen3-30b-a3b', 'MXFP8', 512, 8, 4096, 0, 1, 1, 1, 1, 8, 44544],
  ['26.08', 'pretrain', 'gb300', 256, 'qwen3-235b-a22b', 'MXFP8', 8192, 2, 4096, 0, 1, 4, 1, 12, 32, 8816],
  ['26.08', 'pretrain', 'gb300', 8, 'nemotron-3-nano', 'MXFP8', 512, 4, 8192, 0, 1, 1, 1, 1, 8, 39936],
  ['26.08', 'pretrain', 'gb300', 64, 'nemotron-3-super', 'MXFP8', 512, 1, 8192, 0, 1, 1, 1, 1, 64, 9856],
  ['26.08', 'pretrain', 'gb300', 64, 'nemotron-3-super', 'NVFP4', 512, 1, 8192, 0, 1, 1, 1, 1, 64, 10240],
  ['26.08', 'pretrain', 'gb300', 256, 'nemotron-3-ultra', 'MXFP8', 256, 1, 8192, 0, 1, 1, 1, 1, 64, 3552],
  ['26.08', 'pretrain', 'gb300', 128, 'deepseek-v4-flash', 'MXFP8', 2048, 1, 4096, 0, 1, 1, 1, 1, 64, 8224],
  ['26.08', 'pretrain', 'gb200', 256, 'deepseek-v3', 'MXFP8', 4096, 1, 4096, 0, 1, 4, 1, 4, 64, 4912],
  ['26.08', 'pretrain', 'gb200', 64, 'gpt-oss-120b', 'MXFP8', 1280, 4, 4096, 0, 1, 1, 1, 1, 64, 28672],
  ['26.08', 'pretrain', 'gb200', 8, 'qwen3-30b-a3b', 'MXFP8', 512, 4, 4096, 0, 1, 1, 1, 1, 8, 39936],
  ['26.08', 'pretrain', 'gb200', 256, 'qwen3-235b-a22b', 'MXFP8', 8192, 1, 4096, 0, 1, 8, 1, 3, 32, 7280],
  ['26.08', 'pretrain', 'gb200', 64, 'nemotron-3-super', 'MXFP8', 512, 1, 8192, 0, 2, 1, 1, 1, 64, 7040],
  ['26.08', 'pretrain', 'gb200', 64, 'nemotron-3-super', 'NVFP4', 512, 1, 8192, 0, 2, 1, 1, 1, 64, 7168],
  ['26.08', 'pretrain', 'gb200', 256, 'nemotron-3-ultra', 'MXFP8', 256, 1, 8192, 0, 2, 1, 1, 1, 64, 2528],
  ['26.08', 'pretrain', 'gb200', 8, 'nemotron-3.5-lightning', 'MXFP8', 512, 2, 8192, 0, 1, 1, 1, 1, 8, 28672],
  ['26.08', 'pretrain', 'gb200', 128, 'deepseek-v4-flash', 'MXFP8', 2048, 1, 4096, 0, 1, 1, 1, 1, 64, 7776],
]);

/** The request's FP8 recipe for each precision label of the tables (absent: BF16). */
const MB_FP8_RECIPE = /** @type {Record<string, string>} */ ({ 'fp8-cs': 'current', FP8: 'current', 'fp8-mx': 'mxfp8', MXFP8: 'mxfp8', NVFP4: 'nvfp4' });

/**
 * One Megatron-Bridge row as a bench item: the table's columns and the recipe's settings mapped to a request
 * the same way for every release (the 25.11 rows give the same requests as before).
 * @param {string} release
 * @param {string} task pretrain, sft or lora
 * @param {[string, number, string, string, number, number, number, number, number, number, number, number, number, number]} row
 */
function megatronBridge(release, task, [hw, gpus, model, precision, gbs, mbs, seq, fsdp, tensor, pipeline, context, virtual, expert, tps]) {
  const recipe = MB_FP8_RECIPE[precision];
  const fp8 = recipe ? { precision: 'fp8', fp8_recipe: recipe } : {};
  const layout = [fsdp ? `FSDP ${fsdp}` : '', tensor > 1 ? `TP ${tensor}` : '', pipeline > 1 ? `PP ${pipeline}` : '',
    context > 1 ? `CP ${context}` : '', virtual > 1 ? `VP ${virtual}` : '', expert > 1 ? `EP ${expert}` : ''].filter(Boolean);
  const what = task === 'sft' ? ' SFT' : task === 'lora' ? ' LoRA' : '';
  const finetune = task === 'sft' ? { finetune: { method: 'full' }, packing: true }
    : task === 'lora' ? { finetune: { method: 'lora', rank: 16, alpha: 32, dropout: 0, targets: ['qkv_proj'] }, packing: true } : {};
  const muon = model === 'kimi-k2';
  return {
    source: `Megatron-Bridge performance summary, ${release}`,
    run: `${model}${what}, ${gpus}× ${hw.toUpperCase()} (${layout.join(' + ') || 'DP'}), ${precision.toUpperCase()}, sequence ${seq}, micro-batch ${mbs}, global batch ${gbs}`,
    unit: 'tokens/s/GPU',
    published: tps,
    refusedWhy: NOT_IN_CATALOGUE[model],
    request: {
      model: muon ? { hf_config: KIMI_K2, name: 'Kimi K2' } : { preset: model },
      training: {
        batch_size: gbs, seq_len: seq, precision: 'bf16', optimizer: muon ? 'muon' : 'adamw', attention: 'flash', kernels: 'megatron',
        state_accounting: 'megatron', ...fp8, ...finetune,
      },
      hardware: [hw],
      options: { per_layer: false },
      parallel: {
        gpus, tensor, pipeline, micro_batch_size: mbs, recompute: 'none',
        ...(fsdp ? { fsdp: true } : muon ? {} : { zero_stage: 1 }),
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
}

const MEGATRON_BRIDGE = [
  ...MEGATRON_BRIDGE_2511.map((row) => megatronBridge('25.11', 'pretrain', row)),
  ...MEGATRON_BRIDGE_26.map(([release = '', task = '', ...row]) => megatronBridge(release, task,
    /** @type {[string, number, string, string, number, number, number, number, number, number, number, number, number, number]} */ (row))),
];

/** @type {{ source: string, run: string, published: number, why: string }[]} */
const NOT_PREDICTED = [];

/** @param {number} v */
const f1 = (v) => v.toFixed(1);

export async function main() {
  /**
   * @type {{source: string, run: string, unit: string, published: number, predictor: string, predicted: number,
   *   error: number, step_s: number, bubble: number, comm: number, fits: boolean, memory: number, publishedMemory: string}[]}
   */
  const rows = [];
  /** @type {{source: string, run: string, unit: string, published: number, why: string}[]} */
  const refused = NOT_PREDICTED.map((r) => ({ ...r, unit: 'TFLOP/s/GPU' }));
  const items = [...MEGATRON_2021, ...LLAMA3, ...TORCHTITAN, ...MEGATRON_BRIDGE];
  for (const item of items) {
    const unit = 'unit' in item ? String(item.unit) : 'TFLOP/s/GPU';
    if ('refusedWhy' in item && item.refusedWhy) {
      // A model the core has no form for: listed with the reason, no request sent.
      refused.push({ source: item.source, run: item.run, unit, published: item.published, why: item.refusedWhy });
      process.stderr.write(`${item.run}: not sent: ${item.refusedWhy}\n`);
      continue;
    }
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
      source: item.source,
      run: item.run,
      published: item.published,
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
  /**
   * Mean absolute and mean signed error, in percent, of some predicted rows.
   * @param {{error: number}[]} rs
   */
  const stats = (rs) => ({
    mape: (rs.reduce((a, r) => a + Math.abs(r.error), 0) / rs.length) * 100,
    signed: (rs.reduce((a, r) => a + r.error, 0) / rs.length) * 100,
  });
  const { mape, signed } = stats(rows);
  /** @param {number} v */
  const sign1 = (v) => `${v >= 0 ? '+' : ''}${f1(v)}`;
  const sources = [...new Set([...refused.filter((r) => !items.some((i) => i.source === r.source)), ...items].map((r) => r.source))];
  const perSource = sources.map((source) => {
    const mine = rows.filter((r) => r.source === source);
    const none = refused.filter((r) => r.source === source).length;
    if (!mine.length) return `| ${source} | 0 | ${none} | n/a | n/a |`;
    const s = stats(mine);
    return `| ${source} | ${mine.length} | ${none} | ${f1(s.mape)}% | ${sign1(s.signed)}% |`;
  });
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
    `Over the ${rows.length} predicted runs: mean absolute error ${f1(mape)}%, mean signed error ${sign1(signed)}%.`,
    '',
    'By source (each Megatron-Bridge release is its own block; error = (predicted − published) / published):',
    '',
    '| source | predicted | refused | mean absolute error | mean signed error |',
    '|---|---:|---:|---:|---:|',
    ...perSource,
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
    '- Megatron-Bridge 26.02 to 26.08 (same repository and commit: docs/performance-summary.md for 26.08,',
    '  docs/performance-summary-archive.md for 26.06.01, 26.06, 26.04.01, 26.04, 26.02.01 and 26.02; Apache-2.0): each',
    '  distinct configuration (task, model, system, GPUs, precision, GBS, MBS, sequence, FSDP, TP, PP, CP, VP, EP) once,',
    '  from the newest release that publishes it; the older releases\' numbers for identical configurations (153 of',
    '  the 233 table rows) are superseded and not shown. The 25.11 rows above are kept as they were. The mapping is',
    '  the 25.11 one with each row\'s release as its source: tables from 26.06 on have no FSDP column (taken as 0; of',
    '  their recipes only Nemotron 3 Ultra\'s, not predicted, uses Megatron-FSDP), "n/a" VP or EP is 1; "FP8" is the',
    '  perf launcher\'s `fp8_cs` (per-tensor',
    '  current scaling, `fp8_recipe: "current"`; scripts/performance offers bf16, fp8_cs, fp8_mx, fp8_sc and nvfp4, and',
    '  each FP8 row has an `_fp8cs_` recipe, on H100 as on Blackwell), MXFP8 = `"mxfp8"`, NVFP4 = `"nvfp4"`, which the',
    '  core refuses (no FP4 peak in the catalogue). Unstated settings come from the perf recipes at the same commit',
    '  (src/megatron/bridge/perf_recipes), which are 26.08\'s: an older row\'s recipe may have differed, and its layout',
    '  is used as published. Llama 3 70B is the `llama-3.1-70b` preset (the same architecture, as for 25.11). SFT',
    '  (26.06): full fine-tuning (`finetune.method: "full"`), distributed optimizer (ZeRO 1), sequences packed offline',
    '  to 4096 (`packing: true`; attention timed over the whole row). LoRA (26.06): rank 16, alpha 32, dropout 0 on',
    '  Megatron\'s fused linear_qkv only (`targets: ["qkv_proj"]`: one adapter on Q, K and V), ZeRO 1, packed; the',
    '  H100 LoRA row runs TP 2, which the core refuses for LoRA. Kimi K2 (no preset): a `deepseek_v3` config of',
    '  Megatron-Bridge\'s KimiK2Provider (src/megatron/bridge/models/kimi/kimi_provider.py @ dc805f5c: 61 layers, 384',
    '  experts, 64 heads, first layer dense), Muon without the distributed optimizer (`optimizer: "muon"`, ZeRO 0) as',
    '  its recipe and the table\'s note say. Not modelled, besides what the 25.11 note lists: one MTP layer and explicit',
    '  layout strings in the DeepSeek-V3 and Kimi K2 recipes (rows without VP are split by cost, MTP not built; rows',
    '  with VP are refused, 61 blocks not dividing), the H100 70B FP8 layout string, the MoE recipes\' HybridEP /',
    '  DeepEP dispatchers, full-iteration CUDA graphs with an expert-rank capacity of 1.5 for padding, expert-parallel',
    '  communication overlap and delayed weight gradients. Not predicted: Nemotron 3 Nano / Super / Ultra and',
    '  Nemotron 3.5 Lightning (Mamba-2 / attention / MoE hybrids, `nemotron_h`) and DeepSeek-V4-Flash (compressed',
    '  sparse attention, hyper-connections): no preset and no model type in the core, listed as refused with that reason.',
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
