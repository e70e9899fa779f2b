#!/usr/bin/env node
// `node web/bench/scale.mjs [--write]`: published large-scale training runs beside the core's prediction
// of the same layout (docs/SCALE.md). Each run is predicted once with the engine the CLI uses (wasm core,
// learned predictors when models/artifacts is present); the published throughput is converted to the
// paper's own FLOP accounting so like is compared with like. With --write the table replaces docs/SCALE.md.
//
// Nothing here is fitted: the requests are the papers' configurations, and the errors are what they are.

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { engine } from '../cli/node-engine.mjs';
import { RULE_OF_THUMB_MFU, leaveOneOutMfu, measuredMfu, stepAtMfu } from './accuracy/mfu-baseline.mjs';

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
 * Stated in its §3.3.2 and used here: an interleaved schedule whose first and last stages each hold one block
 * fewer, so that "the first model chunk on the first stage has only the embedding, and the last model chunk on
 * the last stage has only output projection and loss calculation" — one block per model chunk, 128 chunks
 * (E, 126 blocks, L) over 16 stages: `pipeline_layout` "E|(t|)*126L", 8 virtual stages; optimizer states and
 * gradients sharded over data parallelism, weights not resharded after the forward (ZeRO stage 2).
 * Assumed: micro-batch 1, fused attention as FlashAttention-2 (`flash2`: the fused kernel of 2024; the paper does
 * not name one, and cuDNN's became PyTorch's default on H100 only with 2.11) and no recomputation, the catalogue's
 * DGX H100 fabric (8x 400 Gb/s per node). Sequence parallelism on: the
 * paper's tensor parallelism is Megatron's with sequence parallelism (it cites Korthikanti et al.). The
 * long-context row runs context parallelism 16 (parallel.context: TransformerEngine's ring, load-balanced;
 * the paper's own context parallelism all-gathers the keys and values instead, exposed but small under GQA).
 */
const LLAMA3 = [
  { gpus: 8192, dp: 64, cp: 1, seq: 8192, batchPerDp: 32, published: 430 },
  { gpus: 16384, dp: 128, cp: 1, seq: 8192, batchPerDp: 16, published: 400 },
  { gpus: 16384, dp: 8, cp: 16, seq: 131072, batchPerDp: 16, published: 380 },
].map(({ gpus, dp, cp, seq, batchPerDp, published }) => ({
  source: 'Dubey et al. 2024, Table 4',
  run: `Llama 3 405B, ${gpus}× H100 (TP 8, ${cp > 1 ? `CP ${cp}, ` : ''}PP 16 + VP 8, DP ${dp}), sequence ${seq}`,
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
    training: { batch_size: dp * batchPerDp, seq_len: seq, precision: 'bf16', optimizer: 'adamw', attention: 'flash2' },
    hardware: ['h100-sxm'],
    options: { per_layer: false },
    parallel: { gpus, tensor: 8, context: cp, pipeline: 16, micro_batch_size: 1, zero_stage: 2, sequence_parallel: true, pipeline_layout: 'E|(t|)*126L' },
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
 * attention (SDPA: FlashAttention-2 on these runs' PyTorch, `flash2`; a December 2024 nightly does not pick cuDNN's
 * kernel on H100, pytorch/pytorch#142132, and torchtitan enabled cuDNN attention in March 2025, pytorch/torchtitan#1000).
 * "Selective activation checkpointing" is torchtitan's op-level policy (matmul outputs
 * kept except every second one of a block): `recompute: "torchtitan_op"`. Float8 is torchao's tensorwise dynamic scaling (`fp8_recipe: "current"`).
 * Table 5's pipelines as torchtitan ran them at the table's commit (9dec370, torchtitan/parallelisms/pipelining_utils.py):
 * no micro-batch count given, so as many micro-batches as pipeline ranks (8 of 4 sequences, build_pipeline_schedule),
 * and no split points given, so generate_split_points' split: one stage per rank for 1F1B, two for interleaved 1F1B,
 * the first stage `layers // stages` blocks, middle stages one more while the remainder lasts, the last the rest
 * (`pipeline_layout`); its AsyncTP (micro-pipelined tensor-parallel collectives) is `tensor_overlap`.
 */
/**
 * @typedef {{table: number, model: string, gpus: number, fsdp: number, local: number, ac: string,
 *   tr: Record<string, unknown>, tps: number, gib: number, what: string, tensor?: number, asyncTp?: boolean,
 *   pipeline?: number, virtual?: number, layout?: string, context?: number, seq?: number}} TitanRun
 */
const TORCHTITAN = /** @type {TitanRun[]} */ ([
  { table: 1, model: 'llama-3.1-8b', gpus: 8, fsdp: 8, local: 2, ac: 'torchtitan_op', tr: {}, tps: 5762, gib: 82.4, what: 'FSDP' },
  { table: 1, model: 'llama-3.1-8b', gpus: 8, fsdp: 8, local: 2, ac: 'torchtitan_op', tr: { compile: true }, tps: 6667, gib: 77.0, what: 'FSDP + compile' },
  { table: 1, model: 'llama-3.1-8b', gpus: 8, fsdp: 8, local: 2, ac: 'torchtitan_op', tr: { compile: true, precision: 'fp8', fp8_recipe: 'current' }, tps: 8532, gib: 76.8, what: 'FSDP + compile + Float8' },
  { table: 3, model: 'llama-3.1-8b', gpus: 128, fsdp: 128, local: 2, ac: 'torchtitan_op', tr: {}, tps: 5605, gib: 67.0, what: 'FSDP' },
  { table: 3, model: 'llama-3.1-8b', gpus: 128, fsdp: 128, local: 2, ac: 'torchtitan_op', tr: { compile: true }, tps: 6514, gib: 62.0, what: 'FSDP + compile' },
  { table: 3, model: 'llama-3.1-8b', gpus: 128, fsdp: 128, local: 2, ac: 'torchtitan_op', tr: { compile: true, precision: 'fp8', fp8_recipe: 'current' }, tps: 8380, gib: 61.8, what: 'FSDP + compile + Float8' },
  { table: 4, model: 'llama-3.1-70b', gpus: 256, fsdp: 32, tensor: 8, local: 16, ac: 'full', tr: { compile: true, precision: 'fp8', fp8_recipe: 'current' }, tps: 829, gib: 71.9, what: 'FSDP 32 + TP 8 + compile + Float8' },
  { table: 5, model: 'llama-3.1-405b', gpus: 512, fsdp: 8, tensor: 8, asyncTp: true, pipeline: 8, layout: 'Et*15|(t*16|)*6t*15L', local: 32, ac: 'full', tr: { compile: true, precision: 'fp8', fp8_recipe: 'current' }, tps: 100, gib: 82.5, what: 'FSDP 8 + TP 8 + PP 8 (1F1B) + compile + Float8 + AsyncTP' },
  { table: 5, model: 'llama-3.1-405b', gpus: 512, fsdp: 8, tensor: 8, asyncTp: true, pipeline: 8, virtual: 2, layout: 'Et*7|(t*8|)*14t*7L', local: 32, ac: 'full', tr: { compile: true, precision: 'fp8', fp8_recipe: 'current' }, tps: 128, gib: 72.7, what: 'FSDP 8 + TP 8 + PP 8 (interleaved 1F1B, 2 stages per rank) + compile + Float8 + AsyncTP' },
  ...[[8, 1, 32768, 76, 75.3], [4, 2, 65536, 47, 75.9], [2, 4, 131072, 31, 77.1], [1, 8, 262144, 16, 84.9]].map(
    ([fsdp = 1, context = 1, seq = 0, tps = 0, gib = 0]) => ({ table: 6, model: 'llama-3.1-405b', gpus: 512, fsdp, context, seq, tensor: 8, asyncTp: true, pipeline: 8, layout: 'Et*15|(t*16|)*6t*15L', local: 8, ac: 'full', tr: { compile: true, precision: 'fp8', fp8_recipe: 'current' }, tps, gib, what: `FSDP ${fsdp} + TP 8 + PP 8 (1F1B) + CP ${context} + compile + Float8 + AsyncTP` })),
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
      training: { batch_size: batch, seq_len: seq, precision: 'bf16', optimizer: 'adamw', attention: 'flash2', ...t.tr },
      hardware: ['h100-sxm'],
      options: { per_layer: false },
      parallel: {
        // torchtitan's default at the benchmarks' commit: as many micro-batches as pipeline ranks.
        gpus: t.gpus, data: t.fsdp, fsdp: true, micro_batch_size: t.pipeline ? t.local / t.pipeline : t.local, recompute: t.ac,
        ...(t.tensor ? { tensor: t.tensor, sequence_parallel: true } : {}),
        ...(t.asyncTp ? { tensor_overlap: true } : {}),
        ...(t.pipeline ? { pipeline: t.pipeline } : {}),
        ...(t.layout ? { pipeline_layout: t.layout } : {}),
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
 * (src/megatron/bridge/recipes/llama/llama3.py llama31_405b_pretrain_config and recipes/qwen/qwen3_moe.py
 * qwen3_235b_a22b_pretrain_config at every tag from v0.2.0 to v0.5.1; recipes/llama/h100/llama3.py and
 * recipes/qwen/h100/qwen3_moe.py at 067f987d): `parallel.pipeline_embedding_loss`. DeepSeek-V3's and Kimi K2's recipes
 * place embedding, loss and the MTP layer with layout strings instead (`parallel.pipeline_layout`, MB_LAYOUT_MAPS).
 */
const EMBEDDING_LOSS_SPLIT = new Set(['llama-3.1-405b', 'qwen3-235b-a22b']);

/**
 * What a Megatron-Bridge benchmark's own recipe ran, the last element of each row below. Read at the release
 * tag of the row's container (NVIDIA-NeMo/Megatron-Bridge, Apache-2.0): 25.11 = v0.2.0, 26.02 = v0.3.0,
 * 26.02.01 = v0.3.1, 26.04 = v0.4.0, 26.04.01 = v0.4.1, 26.06 = v0.5.0, 26.06.01 = v0.5.1, 26.08 = v0.6.0
 * (docs/releases/software-versions.md names 0.2.0, 0.3.0, 0.4.0 and 0.5.0 for 25.11, 26.02, 26.04 and 26.06; the
 * v0.6.0 release notes are titled "NeMo Framework 26.08"; each patch container's table was first published
 * within days after the patch tag: 26.02.01 on 2026-03-21 after v0.3.1 of 03-20, 26.04.01 on 05-16 after v0.4.1
 * of 05-06, 26.06.01 on 07-22 after v0.5.1 of 07-20). `recipe`: the workload preset under
 * scripts/performance/configs/ (v0.2.0 to v0.5.1: the launcher's default config variant v2, else v1, or the
 * variant whose layout the table gives), applied by that family's *_llm_pretrain.py / *_llm_finetune.py and
 * utils (helpers.py at v0.2.0, overrides.py after), on top of the base recipe in src/megatron/bridge/recipes;
 * or the function under src/megatron/bridge/perf_recipes/ (v0.6.0). Every recipe sets grad_reduce_in_fp32 off
 * (`state_accounting: "megatron_bf16"`). Fields, all for the table's layout:
 * - recipeLayout: where the recipe's own preset differs from the published row (the table's values are sent).
 * - zero: 0 without the distributed optimizer (Muon, LoRA); absent: ZeRO 1, or Megatron-FSDP where the table
 *   says FSDP.
 * - hsdp: Megatron-FSDP as hybrid sharding where the table has no FSDP column (Nemotron 3 Ultra's
 *   _apply_nemotron_3_ultra_fsdp_hsdp, perf_recipes/nemotronh/common.py: parameters, gradients and optimizer
 *   states sharded within NVLink domains of `hsdp` GPUs, the optimizer states also across the domains) →
 *   `parallel.fsdp` (ZeRO 3 over all data ranks; the shard group is noted, not stated).
 * - paramGather: the distributed optimizer's parameter all-gather overlapped with the forward
 *   (`parallel.overlap_param_gather`): training/comm_overlap.py `_get_optimizer_overlap_cfgs` turns it and the
 *   grad-reduce overlap on with data parallelism > 1, or the base recipe's DDP config does; off where the perf
 *   script turns it off (v0.2.0's MXFP8 Llama 70B/405B, DeepSeek-V3 and Qwen3-235B B200 functions: "keeping this
 *   enabled causes NaN grad norm").
 * - tensorOverlap: TransformerEngine userbuffers for the tensor-parallel collectives (`tp_comm_overlap`, on in
 *   the Llama 70B/405B recipes and set to TP > 1 by the 8B and fine-tuning scripts, off for NVFP4; the Qwen3
 *   scripts ask for it except on H100) → `parallel.tensor_overlap`.
 * - expertOverlap: `overlap_moe_expert_parallel_comm` (the preset's moe_a2a_overlap, with delayed weight
 *   gradients) → `parallel.expert_overlap`.
 * - recompute: `full` (recomputeEvery: the request's `recompute_every`) or `selective` with Megatron-Core's
 *   `recompute_modules`, sent as parallel.recompute_modules (noted per row; `[]`
 *   recomputes nothing); modulesIgnored: modules the v0.2.0 GPT-OSS presets list while its recipe leaves
 *   recompute_granularity unset, so nothing is recomputed.
 * - layout: the preset's Megatron pipeline layout string → `parallel.pipeline_layout`; without one, DeepSeek-V3's
 *   and Kimi K2's recipes take it from their (PP, VP) map (MB_LAYOUT_MAPS), sent where the map has the table's
 *   PP and VP. mtp: the multi-token-prediction layers → `training.mtp_layers` (absent: none, as the 25.11 table's
 *   "w/o MTP" rows): DeepSeek-V3's one, Nemotron 3 Super's `mtp_num_layers` 2 over one module (mtpRepeated:
 *   `mtp_use_repeated_layer` → `training.mtp_repeated_layer`). bf16End:
 *   the precision config's first_last_layers_bf16 with num_layers_at_end_in_bf16 → `training.bf16_layers_at_end`.
 *   bf16Modules: the modules the recipe keeps in BF16 by name (its quant_recipe's te_quant.cfg matchers, or
 *   keep_mtp_spec_in_bf16 as `mtp.*`), as globs over the core's layer names → `training.bf16_modules`.
 * - dispatcher: the MoE token dispatcher, alltoall or the flex dispatcher with HybridEP or DeepEP (→
 *   `parallel.expert_dispatch: "hierarchical"` where the row has expert parallelism).
 * - graphs: the recipe's CUDA graphs; full-iteration graphs → `training.cuda_graphs`, per-module ones listed in the
 *   row's note. offload (activation offload, layers), other: not statable in the request, listed in the row's note.
 * @typedef {{ tag: string, recipe?: string, recipeLayout?: string, zero?: number, paramGather?: boolean,
 *   tensorOverlap?: boolean, expertOverlap?: boolean, recompute?: string, modules?: string[], modulesIgnored?: string[],
 *   recomputeEvery?: number, graphs?: string, dispatcher?: string, offload?: number, layout?: string, mtp?: number,
 *   bf16End?: number, bf16Modules?: string[], mtpRepeated?: boolean, hsdp?: number, other?: string }} MbFacts
 */

/**
 * NVIDIA NeMo Megatron-Bridge's published pre-training benchmarks (NVIDIA-NeMo/Megatron-Bridge
 * docs/performance-summary-archive.md @ 067f987d, "25.11 NeMo Container", Apache-2.0): tokens per second per
 * GPU on DGX-GB300, DGX-GB200, DGX-B200 and DGX-H100 with the table's stated layout (FSDP, TP, PP, CP, VP, EP,
 * micro-batch, global batch, sequence). MoE benchmarks force-balanced routing, token-dropless (the page's
 * note); DeepSeek-V3 rows without multi-token prediction (the page's "w/o MTP"). FP8-CS = per-tensor current
 * scaling, FP8-MX = MXFP8. Each row ends with what its own recipe ran (MbFacts above), read at v0.2.0,
 * the Megatron-Bridge release in the 25.11 container.
 * Row: system, GPUs, model preset, precision, global batch, micro-batch, sequence, FSDP, TP, PP, CP, VP, EP,
 * published tokens/s/GPU, recipe facts.
 */
const MEGATRON_BRIDGE_2511 = /** @type {[string, number, string, string, number, number, number, number, number, number, number, number, number, number, MbFacts][]} */ ([
  ['gb300', 8, 'llama-3-8b', 'fp8-cs', 128, 2, 8192, 0, 1, 1, 1, 1, 1, 37556,
    { tag: 'v0.2.0', recipe: 'llama3/workload_base_configs.py LLAMA3_8B_GB300_FP8_CS_BASE_CONFIG', recipeLayout: 'MBS 4', paramGather: true, graphs: 'full iteration' }],
  ['gb300', 8, 'llama-3-8b', 'fp8-mx', 128, 2, 8192, 0, 1, 1, 1, 1, 1, 36108,
    { tag: 'v0.2.0', recipe: 'llama3/workload_base_configs.py LLAMA3_8B_GB300_FP8_MX_BASE_CONFIG', recipeLayout: 'MBS 4', paramGather: true, graphs: 'full iteration' }],
  ['gb300', 64, 'llama-3.1-70b', 'fp8-cs', 256, 2, 8192, 64, 1, 1, 1, 1, 1, 4520,
    { tag: 'v0.2.0', recipe: 'llama3/workload_base_configs.py LLAMA3_70B_GB300_FP8_CS_BASE_CONFIG', recipeLayout: 'GBS 128', offload: 20 }],
  ['gb300', 256, 'llama-3.1-405b', 'fp8-cs', 1536, 1, 8192, 0, 2, 8, 2, 4, 1, 999,
    { tag: 'v0.2.0', recipe: 'llama31/workload_base_configs.py LLAMA31_405B_GB300_FP8_CS_BASE_CONFIG', recipeLayout: '128 GPUs, GBS 64, PP 1, CP 1, VP 1, FSDP with 10 layers\' activations offloaded', paramGather: true, tensorOverlap: true }],
  ['gb300', 256, 'deepseek-v3', 'bf16', 4096, 1, 4096, 0, 1, 2, 1, 4, 32, 3848,
    { tag: 'v0.2.0', recipe: 'deepseek/workload_base_configs.py DEEPSEEK_V3_GB300_BF16_BASE_CONFIG', recipeLayout: 'GBS 2048, PP 4, EP 64, 1 MTP layer', paramGather: true, recompute: 'selective', modules: ['moe_act'], graphs: 'TE attn/router/preprocess', dispatcher: 'HybridEP', other: 'BF16 Adam moments and main gradients' }],
  ['gb300', 256, 'deepseek-v3', 'fp8-mx', 4096, 1, 4096, 0, 1, 2, 1, 4, 32, 4357,
    { tag: 'v0.2.0', recipe: 'deepseek/workload_base_configs.py DEEPSEEK_V3_GB300_FP8_MX_BASE_CONFIG', recipeLayout: 'GBS 2048, PP 4, EP 64, 1 MTP layer', recompute: 'selective', modules: ['moe_act'], graphs: 'TE attn/router/preprocess', dispatcher: 'HybridEP', other: 'BF16 Adam moments and main gradients' }],
  ['gb300', 64, 'gpt-oss-120b', 'bf16', 1280, 2, 8192, 0, 1, 1, 1, 1, 64, 18347,
    { tag: 'v0.2.0', recipe: 'gpt_oss/workload_base_configs.py GPT_OSS_120B_GB300_BF16_BASE_CONFIG', recipeLayout: 'GBS 512, MBS 4', paramGather: true, graphs: 'TE attn/router/preprocess', dispatcher: 'alltoall' }],
  ['gb300', 8, 'qwen3-30b-a3b', 'fp8-mx', 512, 4, 4096, 0, 1, 1, 1, 1, 8, 28934,
    { tag: 'v0.2.0', recipe: 'qwen3/workload_base_configs.py QWEN3_30B_A3B_GB300_FP8_MX_BASE_CONFIG', recipeLayout: 'MBS 8', paramGather: true, graphs: 'TE router/preprocess', dispatcher: 'HybridEP' }],
  ['gb300', 256, 'qwen3-235b-a22b', 'bf16', 8192, 2, 4096, 0, 1, 4, 1, 12, 16, 6131,
    { tag: 'v0.2.0', recipe: 'qwen3/workload_base_configs.py QWEN3_235B_A22B_GB300_BF16_BASE_CONFIG', recipeLayout: '64 GPUs, GBS 1024, MBS 4, TP 2, PP 1, VP 1, EP 64', paramGather: true, graphs: 'TE router/preprocess', dispatcher: 'HybridEP' }],
  ['gb200', 8, 'llama-3-8b', 'fp8-cs', 128, 2, 8192, 0, 1, 1, 1, 1, 1, 31508,
    { tag: 'v0.2.0', recipe: 'llama3/workload_base_configs.py LLAMA3_8B_GB200_FP8_CS_BASE_CONFIG', paramGather: true, graphs: 'full iteration' }],
  ['gb200', 8, 'llama-3-8b', 'fp8-mx', 128, 2, 8192, 0, 1, 1, 1, 1, 1, 29789,
    { tag: 'v0.2.0', recipe: 'llama3/workload_base_configs.py LLAMA3_8B_GB200_FP8_MX_BASE_CONFIG', paramGather: true, graphs: 'full iteration' }],
  ['gb200', 64, 'llama-3.1-70b', 'fp8-cs', 256, 2, 8192, 64, 1, 1, 1, 1, 1, 4312,
    { tag: 'v0.2.0', recipe: 'llama3/workload_base_configs.py LLAMA3_70B_GB200_FP8_CS_BASE_CONFIG', recipeLayout: 'GBS 128', offload: 40 }],
  ['gb200', 256, 'llama-3.1-405b', 'fp8-cs', 1536, 1, 8192, 0, 4, 16, 1, 4, 1, 813,
    { tag: 'v0.2.0', recipe: 'llama31/workload_base_configs.py LLAMA31_405B_GB200_FP8_CS_BASE_CONFIG', recipeLayout: '128 GPUs, GBS 64, TP 2, PP 1, VP 1, FSDP with 92 layers\' activations offloaded', paramGather: true, tensorOverlap: true }],
  ['gb200', 256, 'deepseek-v3', 'bf16', 4096, 1, 4096, 0, 1, 4, 1, 4, 64, 3139,
    { tag: 'v0.2.0', recipe: 'deepseek/workload_base_configs.py DEEPSEEK_V3_GB200_BF16_BASE_CONFIG', recipeLayout: 'GBS 2048, 1 MTP layer', paramGather: true, recompute: 'selective', modules: ['mla_up_proj'], graphs: 'TE router/preprocess', dispatcher: 'HybridEP', other: 'BF16 Adam moments and main gradients' }],
  ['gb200', 256, 'deepseek-v3', 'fp8-mx', 4096, 1, 4096, 0, 1, 8, 1, 4, 32, 4018,
    { tag: 'v0.2.0', recipe: 'deepseek/workload_base_configs.py DEEPSEEK_V3_GB200_FP8_MX_BASE_CONFIG', recipeLayout: 'GBS 2048, PP 4, EP 64, 1 MTP layer', recompute: 'selective', modules: ['mla_up_proj'], graphs: 'TE router/preprocess', dispatcher: 'HybridEP', other: 'BF16 Adam moments and main gradients' }],
  ['gb200', 64, 'gpt-oss-120b', 'bf16', 1280, 1, 8192, 0, 1, 1, 1, 1, 64, 15876,
    { tag: 'v0.2.0', recipe: 'gpt_oss/workload_base_configs.py GPT_OSS_120B_GB200_BF16_BASE_CONFIG', recipeLayout: 'GBS 512, MBS 4', paramGather: true, modulesIgnored: ['layernorm', 'moe_act'], dispatcher: 'alltoall' }],
  ['gb200', 8, 'qwen3-30b-a3b', 'fp8-mx', 512, 4, 4096, 0, 1, 1, 1, 1, 8, 23766,
    { tag: 'v0.2.0', recipe: 'qwen3/workload_base_configs.py QWEN3_30B_A3B_GB200_FP8_MX_BASE_CONFIG', paramGather: true, graphs: 'TE router/preprocess', dispatcher: 'HybridEP' }],
  ['gb200', 256, 'qwen3-235b-a22b', 'bf16', 8192, 1, 4096, 0, 1, 8, 1, 3, 32, 4916,
    { tag: 'v0.2.0', recipe: 'qwen3/workload_base_configs.py QWEN3_235B_A22B_GB200_BF16_BASE_CONFIG', recipeLayout: '64 GPUs, GBS 1024, VP 1, EP 8', paramGather: true, graphs: 'TE attn/router/preprocess', dispatcher: 'HybridEP' }],
  ['b200', 8, 'llama-3-8b', 'fp8-cs', 128, 2, 8192, 0, 1, 1, 1, 1, 1, 30624,
    { tag: 'v0.2.0', recipe: 'llama3/workload_base_configs.py LLAMA3_8B_B200_FP8_CS_BASE_CONFIG', paramGather: true, graphs: 'full iteration' }],
  ['b200', 8, 'llama-3-8b', 'fp8-mx', 128, 2, 8192, 0, 1, 1, 1, 1, 1, 29521,
    { tag: 'v0.2.0', recipe: 'llama3/workload_base_configs.py LLAMA3_8B_B200_FP8_MX_BASE_CONFIG', paramGather: true, graphs: 'full iteration' }],
  ['b200', 128, 'llama-3.1-405b', 'fp8-cs', 64, 1, 8192, 0, 4, 8, 2, 8, 1, 661,
    { tag: 'v0.2.0', recipe: 'llama31/workload_base_configs.py LLAMA31_405B_B200_FP8_CS_BASE_CONFIG', paramGather: true, tensorOverlap: true }],
  ['b200', 128, 'llama-3.1-405b', 'fp8-mx', 64, 1, 8192, 0, 4, 8, 2, 8, 1, 624,
    { tag: 'v0.2.0', recipe: 'llama31/workload_base_configs.py LLAMA31_405B_B200_FP8_MX_BASE_CONFIG', tensorOverlap: true }],
  ['b200', 64, 'gpt-oss-120b', 'bf16', 512, 4, 4096, 0, 1, 1, 1, 1, 8, 8213,
    { tag: 'v0.2.0', recipe: 'gpt_oss/workload_base_configs.py GPT_OSS_120B_B200_BF16_BASE_CONFIG', recipeLayout: 'EP 64', paramGather: true, modulesIgnored: ['layernorm', 'moe_act'], dispatcher: 'alltoall' }],
  ['b200', 8, 'qwen3-30b-a3b', 'fp8-mx', 512, 1, 4096, 0, 1, 1, 1, 1, 8, 9299,
    { tag: 'v0.2.0', recipe: 'qwen3/workload_base_configs.py QWEN3_30B_A3B_B200_FP8_MX_BASE_CONFIG', paramGather: true, graphs: 'TE router/preprocess', dispatcher: 'alltoall' }],
  ['b200', 64, 'qwen3-235b-a22b', 'fp8-mx', 1024, 1, 4096, 0, 1, 8, 1, 2, 8, 3269,
    { tag: 'v0.2.0', recipe: 'qwen3/workload_base_configs.py QWEN3_235B_A22B_B200_FP8_MX_BASE_CONFIG', recipeLayout: 'VP 4', expertOverlap: true, dispatcher: 'alltoall', other: 'delayed weight gradients' }],
  ['h100-sxm', 8, 'llama-3-8b', 'fp8-cs', 128, 1, 8192, 8, 1, 1, 1, 1, 1, 14451,
    { tag: 'v0.2.0', recipe: 'llama3/workload_base_configs.py LLAMA3_8B_H100_FP8_CS_BASE_CONFIG', recipeLayout: 'no FSDP', recompute: 'full', recomputeEvery: 6, other: 'block recomputation of 5 of the 32 layers, stated as every 6th block (5 blocks)' }],
  ['h100-sxm', 64, 'llama-3.1-70b', 'fp8-cs', 128, 1, 8192, 0, 4, 8, 1, 5, 1, 1602,
    { tag: 'v0.2.0', recipe: 'llama3/workload_base_configs.py LLAMA3_70B_H100_FP8_CS_BASE_CONFIG', paramGather: true, tensorOverlap: true }],
  ['h100-sxm', 1024, 'llama-3.1-405b', 'fp8-cs', 512, 1, 8192, 0, 8, 8, 2, 8, 1, 292,
    { tag: 'v0.2.0', recipe: 'llama31/workload_base_configs.py LLAMA31_405B_H100_FP8_CS_BASE_CONFIG', paramGather: true, tensorOverlap: true }],
  ['h100-sxm', 64, 'gpt-oss-120b', 'bf16', 512, 4, 4096, 0, 1, 4, 1, 1, 8, 5630,
    { tag: 'v0.2.0', recipe: 'gpt_oss/workload_base_configs.py GPT_OSS_120B_H100_BF16_BASE_CONFIG', recipeLayout: 'MBS 1', paramGather: true, modulesIgnored: ['layernorm', 'moe_act'], dispatcher: 'alltoall' }],
  ['h100-sxm', 16, 'qwen3-30b-a3b', 'fp8-cs', 512, 2, 4096, 0, 1, 2, 1, 24, 8, 5275,
    { tag: 'v0.2.0', recipe: 'qwen3/workload_base_configs.py QWEN3_30B_A3B_H100_FP8_CS_BASE_CONFIG', recipeLayout: 'MBS 1, VP 12', paramGather: true, expertOverlap: true, dispatcher: 'alltoall', other: 'delayed weight gradients' }],
  ['h100-sxm', 256, 'qwen3-235b-a22b', 'fp8-cs', 2048, 1, 4096, 0, 2, 8, 1, 4, 32, 1575,
    { tag: 'v0.2.0', recipe: 'qwen3/workload_base_configs.py QWEN3_235B_A22B_H100_FP8_CS_BASE_CONFIG', paramGather: true, expertOverlap: true, dispatcher: 'alltoall', other: 'delayed weight gradients' }],
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
 * Nemotron 3 Ultra (550B-A55B: Mamba-2, attention and LatentMoE layers, model_type nemotron_h) as a Hugging Face
 * config. No preset; the perf recipes build it with AutoBridge from the Hub config of
 * nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16 (recipes/nemotronh/h100/nemotron_3_ultra.py @ 067f987d, line 39).
 * The sizes are NVIDIA's Megatron-LM arguments for that checkpoint (NVIDIA/Megatron-LM
 * examples/post_training/modelopt/conf/nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16.sh @ d98e8a64, added by
 * 6f14bf92; Apache-2.0): --num-layers 108 with --hybrid-override-pattern (48 Mamba-2, 48 MoE, 12 attention
 * layers; lines 38, 45), --hidden-size 8192, 64 heads, 2 query groups, --kv-channels 128 (lines 46-51),
 * --ffn-hidden-size 5120 (line 50; the experts' width, Megatron's moe_ffn_hidden_size defaulting to it,
 * megatron/training/arguments.py line 1651), 512 experts, top 22, shared expert 10240, --moe-latent-size 2048,
 * scaling 5.0, sigmoid scores (lines 20-27), 256 Mamba heads of 64 (lines 36-37), squared ReLU, no biases,
 * untied embeddings (lines 40-44). Not in those arguments, so Megatron-Core's defaults: Mamba state 128 and 8
 * groups (megatron/core/transformer/transformer_config.py lines 1259, 1265), convolution 4
 * (megatron/core/ssm/mamba_mixer.py line 179). Vocabulary 131,072: Megatron-Bridge's verification card for the
 * checkpoint (examples/model_verification_cards/nemotron-3-ultra-550b-a55b/card.yaml on branch
 * chcui/sol/nemotron-ultra-verification-card @ addfc1d2, line 125). The MTP block, which the Megatron-LM
 * arguments leave out: `*E` (attention, then a LatentMoE layer), as Super's and Lightning's recipes state theirs
 * and as third-party copies of the Hub config quote it (mtp_layers_block_type ["attention", "moe"]); the same card
 * counts 560,524,603,904 parameters with the MTP tensors (lines 84, 122), which this config reproduces exactly:
 * 560,524,578,816 counted with one `*E` MTP block, plus the 49 × 512 FP32 router correction biases.
 */
const NEMOTRON_3_ULTRA = {
  model_type: 'nemotron_h', architectures: ['NemotronHForCausalLM'], num_hidden_layers: 108,
  hybrid_override_pattern: 'MEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME',
  mtp_hybrid_override_pattern: '*E', hidden_size: 8192, num_attention_heads: 64, num_key_value_heads: 2, head_dim: 128,
  intermediate_size: 5120, moe_intermediate_size: 5120, moe_shared_expert_intermediate_size: 10240, moe_latent_size: 2048,
  n_routed_experts: 512, num_experts_per_tok: 22, n_shared_experts: 1, routed_scaling_factor: 5.0, n_group: 1,
  topk_group: 1, norm_topk_prob: true, mamba_num_heads: 256, mamba_head_dim: 64, ssm_state_size: 128, n_groups: 8,
  conv_kernel: 4, chunk_size: 128, use_conv_bias: true, use_bias: false, mlp_bias: false, attention_bias: false,
  mamba_hidden_act: 'silu', mlp_hidden_act: 'relu2', layer_norm_epsilon: 1e-5, vocab_size: 131072,
  tie_word_embeddings: false,
};

/**
 * Nemotron 3.5 Lightning (30B-A3B) as a Hugging Face config. Its perf recipes are Nemotron 3 Nano's with an MTP
 * block (perf_recipes/nemotronh/gb200/nemotronh.py @ v0.6.0, nemotron_3_5_lightning_pretrain_8gpu_gb200_fp8mx_config,
 * lines 492-503: nemotron_3_nano_pretrain_8gpu_gb200_fp8mx_config, then mtp_num_layers 2,
 * mtp_hybrid_override_pattern "*E", mtp_use_repeated_layer, keep_mtp_spec_in_bf16); the Nano recipe states the
 * architecture itself (recipes/nemotronh/h100/nemotron_3_nano.py @ 067f987d = v0.6.0, lines 78-114: the pattern,
 * 52 layers, width 2688, 64 Mamba heads of 64, state 128, 8 groups, 32 heads, 2 query groups, 128 experts of 1856,
 * shared 3712, top 6), which is the nemotron-3-nano preset's, and the example README says "the same
 * architecture as Nemotron 3 Nano" (examples/models/nemotron/nemotron_3/lightning/README.md @ 067f987d, line 3).
 * So: the preset's config with the recipe's MTP pattern. Megatron-Bridge's verification card for
 * nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16 (examples/model_verification_cards/nemotron-3.5-lightning/
 * card.yaml @ 067f987d, line 62) counts 32,913,266,240 parameters with the MTP layers: 32,913,263,168 counted here
 * with one `*E` block, plus the 24 × 128 FP32 router correction biases.
 */
const NEMOTRON_3_5_LIGHTNING = {
  ...JSON.parse(readFileSync(`${ROOT}core/data/presets/nemotron-3-nano.json`, 'utf8')).model.hf_config,
  mtp_hybrid_override_pattern: '*E',
};

/** Models sent as Hugging Face configs rather than presets, by the tables' model id. */
const MB_HF_MODELS = /** @type {Record<string, { hf_config: Record<string, unknown>, name: string }>} */ ({
  'kimi-k2': { hf_config: KIMI_K2, name: 'Kimi K2' },
  'nemotron-3-ultra': { hf_config: NEMOTRON_3_ULTRA, name: 'Nemotron 3 Ultra 550B-A55B' },
  'nemotron-3.5-lightning': { hf_config: NEMOTRON_3_5_LIGHTNING, name: 'Nemotron 3.5 Lightning 30B-A3B' },
});

/**
 * Models of the 26.x tables the core has no form for, listed as refused with the reason (no request is sent):
 * DeepSeek-V4's model type is not in the core's table (docs/MODEL_FORMAT.md). What it is: Megatron-Bridge's bridge
 * at the same commit, models/deepseek/deepseek_v4_bridge.py (hyper-connections, compressed sparse attention); the
 * perf recipes load deepseek-ai/DeepSeek-V4-Flash.
 */
const NOT_IN_CATALOGUE = /** @type {Record<string, string>} */ ({
  'deepseek-v4-flash': 'architecture not in the catalogue: DeepSeek-V4-Flash (compressed sparse attention, hyper-connections; model_type deepseek_v4): no preset, no model type',
});

/**
 * Megatron-Bridge's newer tables (docs/performance-summary.md, 26.08, and docs/performance-summary-archive.md,
 * 26.06.01 back to 26.02, @ 067f987d, Apache-2.0): pre-training, and Llama 3 70B SFT and LoRA (26.06). For each
 * distinct configuration (task, model, system, GPUs, precision, GBS, MBS, sequence, FSDP, TP, PP, CP, VP, EP) the
 * newest release that publishes it: 233 table rows, 80 configurations; the 153 older numbers of identical
 * configurations are superseded. Tables from 26.06 on have no FSDP column (0 here; of the recipes behind these
 * rows only Nemotron 3 Ultra's uses Megatron-FSDP, as HSDP: MbFacts `hsdp`); "n/a" VP or EP is 1. Precision:
 * "FP8" is the perf launcher's fp8_cs (per-tensor current scaling, `fp8_recipe: "current"`:
 * scripts/performance/argument_parser.py offers bf16, fp8_cs, fp8_mx, fp8_sc, nvfp4, and every FP8 row has an
 * `_fp8cs_`/`FP8_CS` recipe), MXFP8 = `"mxfp8"`, NVFP4 = `"nvfp4"` (experimental in the core). Each row ends with
 * what its own recipe ran, read at the release tag of its container (MbFacts above).
 * - Llama 3 70B is the llama-3.1-70b preset (the same architecture). SFT (llama3_70b_sft_config): full
 *   fine-tuning, sequences packed offline to 4096 (`packing: true`); the recipe's DDP config turns the
 *   distributed optimizer off but its optimizer config (distributed_fused_adam_with_cosine_annealing) turns it
 *   on, and ConfigContainer.validate enables both: ZeRO 1, after the comm-overlap setup has skipped the
 *   optimizer overlaps (param gather and grad reduce not overlapped). LoRA (llama3_70b_peft_config + perf
 *   overrides): rank 16, alpha 32, dropout 0, adapters on linear_qkv only (Megatron's fused QKV:
 *   `targets: ["qkv_proj"]`, one adapter), no distributed optimizer (ZeRO 0), packed; the H100 LoRA row runs
 *   TP 2, which the core refuses for LoRA.
 * - Kimi K2 trains with Muon without the distributed optimizer (`optimizer: "muon"`, ZeRO 0).
 * Row: release, task, system, GPUs, model, precision (the table's), GBS, MBS, sequence, FSDP, TP, PP, CP, VP, EP,
 * published tokens/s/GPU, recipe facts.
 */
const MEGATRON_BRIDGE_26 = /** @type {[string, string, string, number, string, string, number, number, number, number, number, number, number, number, number, number, MbFacts][]} */ ([
  // 26.02
  ['26.02', 'pretrain', 'b300', 64, 'gpt-oss-120b', 'BF16', 1280, 4, 4096, 0, 1, 1, 1, 1, 64, 8359,
    { tag: 'v0.3.0', recipe: 'gpt_oss/gpt_oss_workload_base_configs.py GPT_OSS_120B_PRETRAIN_CONFIG_B300_BF16_V2', paramGather: true, graphs: 'TE attn/router/preprocess', dispatcher: 'alltoall' }],
  ['26.02', 'pretrain', 'b200', 64, 'gpt-oss-120b', 'BF16', 1280, 4, 4096, 0, 1, 1, 1, 1, 64, 8047,
    { tag: 'v0.3.0', recipe: 'gpt_oss/gpt_oss_workload_base_configs.py GPT_OSS_120B_PRETRAIN_CONFIG_B200_BF16_V2', paramGather: true, recompute: 'selective', modules: ['layernorm', 'moe_act'], dispatcher: 'alltoall' }],
  ['26.02', 'pretrain', 'b200', 8, 'qwen3-30b-a3b', 'MXFP8', 512, 1, 4096, 0, 1, 1, 1, 1, 8, 9691,
    { tag: 'v0.3.0', recipe: 'qwen/qwen3_workload_base_configs.py QWEN3_30B_A3B_PRETRAIN_CONFIG_B200_FP8_MX_V1', paramGather: true, graphs: 'TE router/preprocess', dispatcher: 'alltoall' }],
  // 26.02.01
  ['26.02.01', 'pretrain', 'gb300', 64, 'llama-3.1-70b', 'MXFP8', 256, 2, 8192, 0, 1, 4, 1, 1, 1, 4798,
    { tag: 'v0.3.1', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_MX_V2', recipeLayout: 'MBS 1, VP 5', paramGather: true }],
  ['26.02.01', 'pretrain', 'gb300', 64, 'llama-3.1-70b', 'NVFP4', 256, 2, 8192, 0, 1, 1, 1, 1, 1, 7002,
    { tag: 'v0.3.1', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_PRETRAIN_CONFIG_GB300_NVFP4_V2', recipeLayout: 'MBS 1, PP 4, VP 5', paramGather: true }],
  ['26.02.01', 'pretrain', 'gb300', 256, 'llama-3.1-405b', 'FP8', 1536, 1, 8192, 0, 2, 8, 2, 4, 1, 1024,
    { tag: 'v0.3.1', recipe: 'llama/llama31_workload_base_configs.py LLAMA31_405B_PRETRAIN_CONFIG_GB300_FP8_CS_V2', recipeLayout: 'TP 4, CP 1', paramGather: true, tensorOverlap: true }],
  ['26.02.01', 'pretrain', 'gb300', 256, 'qwen3-235b-a22b', 'MXFP8', 8192, 2, 4096, 0, 1, 4, 1, 1, 32, 6583,
    { tag: 'v0.3.1', recipe: 'qwen/qwen3_workload_base_configs.py QWEN3_235B_A22B_PRETRAIN_CONFIG_GB300_FP8_MX_V2', paramGather: true, graphs: 'TE attn/router/preprocess', dispatcher: 'HybridEP' }],
  ['26.02.01', 'pretrain', 'gb200', 256, 'llama-3.1-405b', 'NVFP4', 1536, 1, 8192, 0, 4, 16, 1, 4, 1, 1083,
    { tag: 'v0.3.1', recipe: 'llama/llama31_workload_base_configs.py LLAMA31_405B_PRETRAIN_CONFIG_GB200_NVFP4_V2', recipeLayout: 'VP 8', paramGather: true }],
  ['26.02.01', 'pretrain', 'gb200', 256, 'qwen3-235b-a22b', 'MXFP8', 8192, 1, 4096, 0, 1, 8, 1, 1, 32, 5530,
    { tag: 'v0.3.1', recipe: 'qwen/qwen3_workload_base_configs.py QWEN3_235B_A22B_PRETRAIN_CONFIG_GB200_FP8_MX_V2', paramGather: true, graphs: 'TE attn/router/preprocess', dispatcher: 'HybridEP' }],
  ['26.02.01', 'pretrain', 'b300', 256, 'qwen3-235b-a22b', 'MXFP8', 8192, 1, 4096, 0, 1, 8, 1, 4, 8, 2644,
    { tag: 'v0.3.1', recipe: 'qwen/qwen3_workload_base_configs.py QWEN3_235B_A22B_PRETRAIN_CONFIG_B300_FP8_MX_V2', recipeLayout: 'VP 1', paramGather: true, dispatcher: 'alltoall' }],
  ['26.02.01', 'pretrain', 'h100-sxm', 16, 'qwen3-30b-a3b', 'FP8', 1024, 1, 4096, 0, 1, 2, 1, 12, 8, 9058,
    { tag: 'v0.3.1', recipe: 'qwen/qwen3_workload_base_configs.py QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1', recipeLayout: 'PP 1, VP 1, EP 16', paramGather: true, dispatcher: 'HybridEP' }],
  // 26.04
  ['26.04', 'pretrain', 'b300', 256, 'deepseek-v3', 'MXFP8', 4096, 1, 4096, 0, 1, 16, 1, 1, 8, 3131,
    { tag: 'v0.4.0', recipe: 'deepseek/deepseek_workload_base_configs.py DEEPSEEK_V3_PRETRAIN_CONFIG_B300_FP8_MX_V2', paramGather: true, recompute: 'selective', modules: ['mla_up_proj'], dispatcher: 'HybridEP', mtp: 1, other: 'BF16 Adam moments and main gradients' }],
  ['26.04', 'pretrain', 'b200', 256, 'deepseek-v3', 'MXFP8', 4096, 1, 4096, 0, 1, 16, 1, 1, 8, 2815,
    { tag: 'v0.4.0', recipe: 'deepseek/deepseek_workload_base_configs.py DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2', paramGather: true, recompute: 'selective', modules: ['mla_up_proj'], dispatcher: 'HybridEP', mtp: 1, other: 'BF16 Adam moments and main gradients' }],
  // 26.04.01
  ['26.04.01', 'pretrain', 'gb300', 64, 'llama-3.1-70b', 'FP8', 256, 2, 8192, 64, 1, 1, 1, 1, 1, 5248,
    { tag: 'v0.4.1', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_CS_V2', offload: 20 }],
  ['26.04.01', 'pretrain', 'gb300', 64, 'llama-3.1-70b', 'MXFP8', 256, 1, 8192, 0, 1, 4, 1, 5, 1, 4864,
    { tag: 'v0.4.1', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_MX_V2', paramGather: true }],
  ['26.04.01', 'pretrain', 'gb300', 64, 'llama-3.1-70b', 'NVFP4', 256, 1, 8192, 0, 1, 4, 1, 5, 1, 7296,
    { tag: 'v0.4.1', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_PRETRAIN_CONFIG_GB300_NVFP4_V2', paramGather: true }],
  ['26.04.01', 'pretrain', 'gb300', 256, 'deepseek-v3', 'MXFP8', 4096, 2, 4096, 0, 1, 2, 1, 8, 32, 4992,
    { tag: 'v0.4.1', recipe: 'deepseek/deepseek_workload_base_configs.py DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_V2', paramGather: true, recompute: 'selective', modules: ['mla_up_proj'], dispatcher: 'HybridEP', layout: 'Et*4|(t*4|)*14tmL', mtp: 1, other: 'BF16 Adam moments and main gradients' }],
  ['26.04.01', 'pretrain', 'gb300', 64, 'gpt-oss-120b', 'BF16', 1280, 4, 4096, 0, 1, 1, 1, 1, 64, 19200,
    { tag: 'v0.4.1', recipe: 'gpt_oss/gpt_oss_workload_base_configs.py GPT_OSS_120B_PRETRAIN_CONFIG_GB300_BF16_V2', paramGather: true, graphs: 'TE attn/router/preprocess', dispatcher: 'alltoall' }],
  ['26.04.01', 'pretrain', 'gb200', 64, 'llama-3.1-70b', 'FP8', 256, 2, 8192, 64, 1, 1, 1, 1, 1, 4224,
    { tag: 'v0.4.1', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_CS_V2', offload: 40 }],
  ['26.04.01', 'pretrain', 'gb200', 64, 'llama-3.1-70b', 'MXFP8', 256, 1, 8192, 0, 2, 4, 1, 5, 1, 3712,
    { tag: 'v0.4.1', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_MX_V2', paramGather: true, tensorOverlap: true }],
  ['26.04.01', 'pretrain', 'gb200', 64, 'llama-3.1-70b', 'NVFP4', 256, 1, 8192, 0, 2, 4, 1, 5, 1, 4864,
    { tag: 'v0.4.1', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_PRETRAIN_CONFIG_GB200_NVFP4_V2', paramGather: true }],
  ['26.04.01', 'pretrain', 'gb200', 64, 'gpt-oss-120b', 'BF16', 1280, 4, 4096, 0, 1, 1, 1, 1, 64, 16640,
    { tag: 'v0.4.1', recipe: 'gpt_oss/gpt_oss_workload_base_configs.py GPT_OSS_120B_PRETRAIN_CONFIG_GB200_BF16_V2', paramGather: true, expertOverlap: true, recompute: 'selective', modules: ['layernorm', 'moe_act'], dispatcher: 'HybridEP', other: 'delayed weight gradients' }],
  ['26.04.01', 'pretrain', 'b300', 64, 'gpt-oss-120b', 'BF16', 1280, 4, 4096, 0, 1, 1, 1, 1, 8, 15232,
    { tag: 'v0.4.1', recipe: 'gpt_oss/gpt_oss_workload_base_configs.py GPT_OSS_120B_PRETRAIN_CONFIG_B300_BF16_V2', paramGather: true, graphs: 'TE attn/router/preprocess', dispatcher: 'HybridEP' }],
  ['26.04.01', 'pretrain', 'b300', 256, 'qwen3-235b-a22b', 'MXFP8', 8192, 2, 4096, 0, 1, 8, 1, 1, 8, 5936,
    { tag: 'v0.4.1', recipe: 'qwen/qwen3_workload_base_configs.py QWEN3_235B_A22B_PRETRAIN_CONFIG_B300_FP8_MX_V2', paramGather: true, dispatcher: 'alltoall' }],
  ['26.04.01', 'pretrain', 'b200', 256, 'deepseek-v3', 'MXFP8', 4096, 1, 4096, 0, 1, 8, 1, 2, 32, 3328,
    { tag: 'v0.4.1', recipe: 'deepseek/deepseek_workload_base_configs.py DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2', recipeLayout: 'PP 16, VP 1, EP 8', paramGather: true, recompute: 'selective', modules: ['mla_up_proj'], dispatcher: 'HybridEP', mtp: 1, other: 'BF16 Adam moments and main gradients' }],
  ['26.04.01', 'pretrain', 'b200', 64, 'gpt-oss-120b', 'BF16', 1280, 4, 4096, 0, 1, 1, 1, 1, 8, 13568,
    { tag: 'v0.4.1', recipe: 'gpt_oss/gpt_oss_workload_base_configs.py GPT_OSS_120B_PRETRAIN_CONFIG_B200_BF16_V2', paramGather: true, recompute: 'selective', modules: ['layernorm', 'moe_act'], dispatcher: 'HybridEP' }],
  ['26.04.01', 'pretrain', 'b200', 8, 'qwen3-30b-a3b', 'MXFP8', 512, 4, 4096, 0, 1, 1, 1, 1, 8, 27136,
    { tag: 'v0.4.1', recipe: 'qwen/qwen3_workload_base_configs.py QWEN3_30B_A3B_PRETRAIN_CONFIG_B200_FP8_MX_V1', paramGather: true, graphs: 'TE attn/router/preprocess', dispatcher: 'HybridEP' }],
  ['26.04.01', 'pretrain', 'b200', 256, 'qwen3-235b-a22b', 'MXFP8', 8192, 1, 4096, 0, 1, 8, 1, 1, 8, 3776,
    { tag: 'v0.4.1', recipe: 'qwen/qwen3_workload_base_configs.py QWEN3_235B_A22B_PRETRAIN_CONFIG_B200_FP8_MX_V2', paramGather: true, dispatcher: 'alltoall' }],
  ['26.04.01', 'pretrain', 'b200', 8, 'nemotron-3-nano', 'MXFP8', 512, 2, 8192, 0, 1, 1, 1, 1, 8, 32768,
    { tag: 'v0.4.1', recipe: 'nemotronh/nemotron_3_workload_base_configs.py NEMOTRON_3_NANO_PRETRAIN_CONFIG_B200_FP8_MX_V1', paramGather: true, graphs: 'TE attn/mamba/router/preprocess', dispatcher: 'HybridEP' }],
  ['26.04.01', 'pretrain', 'b200', 64, 'nemotron-3-super', 'MXFP8', 512, 1, 8192, 0, 1, 1, 1, 1, 64, 6400,
    { tag: 'v0.4.1', recipe: 'nemotronh/nemotron_3_workload_base_configs.py NEMOTRON_3_SUPER_PRETRAIN_CONFIG_B200_FP8_MX_V1', paramGather: true, recompute: 'selective', modules: ['moe_act', 'layernorm'], dispatcher: 'HybridEP', mtp: 2, mtpRepeated: true, bf16Modules: ['mtp.*'] }],
  ['26.04.01', 'pretrain', 'b200', 64, 'nemotron-3-super', 'NVFP4', 512, 1, 8192, 0, 2, 1, 1, 1, 64, 5632,
    { tag: 'v0.4.1', recipe: 'nemotronh/nemotron_3_workload_base_configs.py NEMOTRON_3_SUPER_PRETRAIN_CONFIG_B200_NVFP4_V1', paramGather: true, graphs: 'TE mamba/attn/router/preprocess', dispatcher: 'HybridEP', mtp: 2, mtpRepeated: true, bf16Modules: ['*self_attn*', '*latent_proj*', 'mtp.*'], other: 'Mamba out_proj in MXFP8 (te_quant.cfg)', bf16End: 14 }],
  ['26.04.01', 'pretrain', 'h100-sxm', 64, 'llama-3.1-70b', 'FP8', 256, 1, 8192, 0, 4, 8, 1, 5, 1, 1664,
    { tag: 'v0.4.1', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_PRETRAIN_CONFIG_H100_FP8_CS_V2', paramGather: true, tensorOverlap: true }],
  ['26.04.01', 'pretrain', 'h100-sxm', 64, 'gpt-oss-120b', 'BF16', 1280, 1, 4096, 0, 1, 4, 1, 1, 8, 5824,
    { tag: 'v0.4.1', recipe: 'gpt_oss/gpt_oss_workload_base_configs.py GPT_OSS_120B_PRETRAIN_CONFIG_H100_BF16_V2', paramGather: true, recompute: 'selective', modules: ['layernorm', 'moe_act'], dispatcher: 'alltoall' }],
  ['26.04.01', 'pretrain', 'h100-sxm', 256, 'qwen3-235b-a22b', 'FP8', 8192, 1, 4096, 0, 2, 8, 1, 4, 32, 1712,
    { tag: 'v0.4.1', recipe: 'qwen/qwen3_workload_base_configs.py QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS_V2', paramGather: true, expertOverlap: true, dispatcher: 'alltoall', other: 'delayed weight gradients' }],
  // 26.06
  ['26.06', 'pretrain', 'gb300', 256, 'llama-3.1-405b', 'FP8', 1536, 1, 8192, 0, 4, 8, 1, 4, 1, 1048,
    { tag: 'v0.5.0', recipe: 'llama/llama31_workload_base_configs.py LLAMA31_405B_PRETRAIN_CONFIG_GB300_FP8_CS_V2', paramGather: true, tensorOverlap: true }],
  ['26.06', 'pretrain', 'gb300', 256, 'llama-3.1-405b', 'MXFP8', 1536, 1, 8192, 0, 2, 8, 2, 4, 1, 952,
    { tag: 'v0.5.0', recipe: 'llama/llama31_workload_base_configs.py LLAMA31_405B_PRETRAIN_CONFIG_GB300_FP8_MX_V2', paramGather: true, tensorOverlap: true }],
  ['26.06', 'pretrain', 'gb300', 256, 'llama-3.1-405b', 'NVFP4', 1536, 1, 8192, 0, 4, 8, 1, 4, 1, 1413,
    { tag: 'v0.5.0', recipe: 'llama/llama31_workload_base_configs.py LLAMA31_405B_PRETRAIN_CONFIG_GB300_NVFP4_V2', paramGather: true }],
  ['26.06', 'pretrain', 'gb300', 256, 'deepseek-v3', 'MXFP8', 15360, 1, 4096, 0, 1, 2, 1, 8, 32, 6422,
    { tag: 'v0.5.0', recipe: 'deepseek/deepseek_workload_base_configs.py DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_GBS15360', paramGather: true, expertOverlap: true, graphs: 'full iteration', dispatcher: 'HybridEP', layout: 'Et*4|(t*4|)*14tmL', mtp: 1, other: 'cuteDSL fused grouped MLP, FP8 attention, experts padded to 1.5x capacity for the graph, delayed weight gradients, BF16 Adam moments and main gradients' }],
  ['26.06', 'pretrain', 'gb300', 256, 'kimi-k2', 'MXFP8', 4096, 2, 4096, 0, 1, 4, 1, 4, 64, 5372,
    { tag: 'v0.5.0', recipe: 'kimi/kimi_workload_base_configs.py KIMI_K2_PRETRAIN_CONFIG_GB300_FP8_MX', zero: 0, recompute: 'selective', modules: ['mla_up_proj'], dispatcher: 'HybridEP' }],
  ['26.06', 'pretrain', 'gb200', 256, 'llama-3.1-405b', 'FP8', 1536, 1, 8192, 0, 4, 16, 1, 4, 1, 843,
    { tag: 'v0.5.0', recipe: 'llama/llama31_workload_base_configs.py LLAMA31_405B_PRETRAIN_CONFIG_GB200_FP8_CS_V2', paramGather: true, tensorOverlap: true }],
  ['26.06', 'pretrain', 'gb200', 256, 'llama-3.1-405b', 'MXFP8', 1536, 1, 8192, 0, 4, 16, 1, 8, 1, 783,
    { tag: 'v0.5.0', recipe: 'llama/llama31_workload_base_configs.py LLAMA31_405B_PRETRAIN_CONFIG_GB200_FP8_MX_V2', paramGather: true, tensorOverlap: true }],
  ['26.06', 'pretrain', 'gb200', 256, 'llama-3.1-405b', 'NVFP4', 1536, 1, 8192, 0, 4, 16, 1, 8, 1, 1166,
    { tag: 'v0.5.0', recipe: 'llama/llama31_workload_base_configs.py LLAMA31_405B_PRETRAIN_CONFIG_GB200_NVFP4_V2', paramGather: true }],
  ['26.06', 'pretrain', 'b300', 256, 'deepseek-v3', 'MXFP8', 4096, 2, 4096, 0, 1, 8, 1, 1, 8, 3541,
    { tag: 'v0.5.0', recipe: 'deepseek/deepseek_workload_base_configs.py DEEPSEEK_V3_PRETRAIN_CONFIG_B300_FP8_MX_V2', paramGather: true, recompute: 'selective', modules: ['mla_up_proj'], graphs: 'TE attn/router/preprocess', dispatcher: 'HybridEP', mtp: 1, other: 'BF16 Adam moments and main gradients' }],
  ['26.06', 'pretrain', 'b300', 64, 'gpt-oss-120b', 'MXFP8', 1280, 4, 4096, 0, 1, 1, 1, 1, 8, 18534,
    { tag: 'v0.5.0', recipe: 'gpt_oss/gpt_oss_workload_base_configs.py GPT_OSS_120B_PRETRAIN_CONFIG_B300_FP8_MX_V2', paramGather: true, graphs: 'TE attn/router/preprocess', dispatcher: 'HybridEP' }],
  ['26.06', 'pretrain', 'b300', 8, 'qwen3-30b-a3b', 'MXFP8', 512, 8, 4096, 0, 1, 1, 1, 1, 8, 40769,
    { tag: 'v0.5.0', recipe: 'qwen/qwen3_workload_base_configs.py QWEN3_30B_A3B_PRETRAIN_CONFIG_B300_FP8_MX_V1', paramGather: true, expertOverlap: true, graphs: 'full iteration', dispatcher: 'HybridEP', other: 'cuteDSL fused grouped MLP, FP8 attention, experts padded to 1.5x capacity for the graph, delayed weight gradients' }],
  ['26.06', 'pretrain', 'b300', 8, 'nemotron-3-nano', 'MXFP8', 512, 4, 8192, 0, 1, 1, 1, 1, 8, 37316,
    { tag: 'v0.5.0', recipe: 'nemotronh/nemotron_3_workload_base_configs.py NEMOTRON_3_NANO_PRETRAIN_CONFIG_B300_FP8_MX_V1', paramGather: true, graphs: 'TE attn/mamba/router/preprocess', dispatcher: 'HybridEP' }],
  ['26.06', 'pretrain', 'b300', 64, 'nemotron-3-super', 'MXFP8', 512, 1, 8192, 0, 1, 1, 1, 1, 8, 7867,
    { tag: 'v0.5.0', recipe: 'nemotronh/nemotron_3_workload_base_configs.py NEMOTRON_3_SUPER_PRETRAIN_CONFIG_B300_FP8_MX_V1', paramGather: true, graphs: 'TE attn/mamba/router/preprocess', dispatcher: 'HybridEP', mtp: 2, mtpRepeated: true, bf16Modules: ['mtp.*'] }],
  ['26.06', 'pretrain', 'b300', 64, 'nemotron-3-super', 'NVFP4', 512, 1, 8192, 0, 1, 1, 1, 1, 8, 8131,
    { tag: 'v0.5.0', recipe: 'nemotronh/nemotron_3_workload_base_configs.py NEMOTRON_3_SUPER_PRETRAIN_CONFIG_B300_NVFP4_V1', paramGather: true, recompute: 'selective', modules: ['moe_act', 'layernorm'], graphs: 'TE attn/mamba/router/preprocess', dispatcher: 'HybridEP', mtp: 2, mtpRepeated: true, bf16Modules: ['*self_attn*', '*latent_proj*', 'mtp.*'], other: 'Mamba out_proj in MXFP8 (te_quant.cfg)', bf16End: 14 }],
  ['26.06', 'pretrain', 'h100-sxm', 1024, 'llama-3.1-405b', 'FP8', 1536, 1, 8192, 0, 8, 8, 2, 8, 1, 326,
    { tag: 'v0.5.0', recipe: 'llama/llama31_workload_base_configs.py LLAMA31_405B_PRETRAIN_CONFIG_H100_FP8_CS_V2', paramGather: true, tensorOverlap: true }],
  ['26.06', 'pretrain', 'h100-sxm', 16, 'qwen3-30b-a3b', 'FP8', 1024, 1, 4096, 0, 1, 1, 1, 1, 16, 8826,
    { tag: 'v0.5.0', recipe: 'qwen/qwen3_workload_base_configs.py QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1', paramGather: true, dispatcher: 'HybridEP' }],
  ['26.06', 'pretrain', 'h100-sxm', 16, 'nemotron-3-nano', 'FP8', 1024, 1, 8192, 0, 1, 1, 1, 1, 8, 14719,
    { tag: 'v0.5.0', recipe: 'nemotronh/nemotron_3_workload_base_configs.py NEMOTRON_3_NANO_PRETRAIN_CONFIG_H100_FP8_CS_V1', paramGather: true, recompute: 'selective', modules: ['moe', 'layernorm', 'core_attn', 'moe_act'], graphs: 'TE mamba', dispatcher: 'HybridEP' }],
  ['26.06', 'sft', 'gb300', 32, 'llama-3.1-70b', 'FP8', 32, 1, 4096, 0, 1, 2, 1, 20, 1, 4819,
    { tag: 'v0.5.0', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_SFT_CONFIG_GB300_FP8_CS_V1', graphs: 'TE mlp' }],
  ['26.06', 'sft', 'gb300', 32, 'llama-3.1-70b', 'MXFP8', 32, 1, 4096, 0, 1, 2, 1, 20, 1, 4312,
    { tag: 'v0.5.0', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_SFT_CONFIG_GB300_FP8_MX_V1', graphs: 'TE mlp' }],
  ['26.06', 'sft', 'gb200', 32, 'llama-3.1-70b', 'FP8', 32, 1, 4096, 0, 1, 8, 1, 10, 1, 3864,
    { tag: 'v0.5.0', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_SFT_CONFIG_GB200_FP8_CS_V1', graphs: 'TE mlp' }],
  ['26.06', 'sft', 'gb200', 32, 'llama-3.1-70b', 'MXFP8', 32, 1, 4096, 0, 1, 8, 1, 10, 1, 3593,
    { tag: 'v0.5.0', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_SFT_CONFIG_GB200_FP8_MX_V1', graphs: 'TE mlp' }],
  ['26.06', 'sft', 'h100-sxm', 32, 'llama-3.1-70b', 'FP8', 32, 1, 4096, 0, 4, 4, 1, 5, 1, 1638,
    { tag: 'v0.5.0', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_SFT_CONFIG_H100_FP8_CS_V1', tensorOverlap: true, graphs: 'TE mlp' }],
  ['26.06', 'lora', 'gb300', 8, 'llama-3.1-70b', 'FP8', 32, 1, 4096, 0, 1, 2, 1, 20, 1, 7481,
    { tag: 'v0.5.0', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_LORA_CONFIG_GB300_FP8_CS_V1', zero: 0, graphs: 'TE mlp' }],
  ['26.06', 'lora', 'gb300', 8, 'llama-3.1-70b', 'MXFP8', 32, 1, 4096, 0, 1, 2, 1, 20, 1, 7447,
    { tag: 'v0.5.0', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_LORA_CONFIG_GB300_FP8_MX_V1', zero: 0, graphs: 'TE mlp' }],
  ['26.06', 'lora', 'gb200', 8, 'llama-3.1-70b', 'FP8', 32, 1, 4096, 0, 1, 2, 1, 20, 1, 6206,
    { tag: 'v0.5.0', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_LORA_CONFIG_GB200_FP8_CS_V1', zero: 0, graphs: 'TE mlp' }],
  ['26.06', 'lora', 'gb200', 8, 'llama-3.1-70b', 'MXFP8', 32, 1, 4096, 0, 1, 4, 1, 20, 1, 5958,
    { tag: 'v0.5.0', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_LORA_CONFIG_GB200_FP8_MX_V1', zero: 0, graphs: 'TE mlp' }],
  ['26.06', 'lora', 'h100-sxm', 8, 'llama-3.1-70b', 'FP8', 32, 1, 4096, 0, 2, 4, 1, 20, 1, 2643,
    { tag: 'v0.5.0', recipe: 'llama/llama3_workload_base_configs.py LLAMA3_70B_LORA_CONFIG_H100_FP8_CS_V1', zero: 0, tensorOverlap: true }],
  // 26.06.01
  ['26.06.01', 'pretrain', 'gb200', 8, 'nemotron-3-nano', 'MXFP8', 512, 2, 8192, 0, 1, 1, 1, 1, 8, 34816,
    { tag: 'v0.5.1', recipe: 'nemotronh/nemotron_3_workload_base_configs.py NEMOTRON_3_NANO_PRETRAIN_CONFIG_GB200_FP8_MX_V1', paramGather: true, graphs: 'TE attn/mamba/router/preprocess', dispatcher: 'HybridEP' }],
  // 26.08
  ['26.08', 'pretrain', 'gb300', 256, 'deepseek-v3', 'MXFP8', 4096, 1, 4096, 0, 1, 2, 1, 8, 32, 6288,
    { tag: 'v0.6.0', recipe: 'perf_recipes/deepseek/gb300/deepseek_v3.py deepseek_v3_pretrain_256gpu_gb300_fp8mx_config', paramGather: true, expertOverlap: true, graphs: 'full iteration', dispatcher: 'HybridEP', layout: 'Et*4|(t*4|)*14tmL', mtp: 1, other: 'FP8 attention, TE op fuser, experts padded to 1.5x capacity for the graph, delayed weight gradients, BF16 Adam moments and main gradients' }],
  ['26.08', 'pretrain', 'gb300', 64, 'gpt-oss-120b', 'MXFP8', 1280, 4, 4096, 0, 1, 1, 1, 1, 16, 33024,
    { tag: 'v0.6.0', recipe: 'perf_recipes/gpt_oss/gb300/gpt_oss.py gpt_oss_120b_pretrain_64gpu_gb300_fp8mx_config', paramGather: true, expertOverlap: true, graphs: 'full iteration', dispatcher: 'HybridEP', other: 'FP8 attention, TE op fuser, experts padded to 1.5x capacity for the graph, delayed weight gradients' }],
  ['26.08', 'pretrain', 'gb300', 8, 'qwen3-30b-a3b', 'MXFP8', 512, 8, 4096, 0, 1, 1, 1, 1, 8, 44544,
    { tag: 'v0.6.0', recipe: 'perf_recipes/qwen/gb300/qwen3_moe.py qwen3_30b_a3b_pretrain_8gpu_gb300_fp8mx_config', paramGather: true, expertOverlap: true, graphs: 'full iteration', dispatcher: 'HybridEP', other: 'FP8 attention, TE op fuser, experts padded to 1.5x capacity for the graph, delayed weight gradients' }],
  ['26.08', 'pretrain', 'gb300', 256, 'qwen3-235b-a22b', 'MXFP8', 8192, 2, 4096, 0, 1, 4, 1, 12, 32, 8816,
    { tag: 'v0.6.0', recipe: 'perf_recipes/qwen/gb300/qwen3_moe.py qwen3_235b_a22b_pretrain_256gpu_gb300_fp8mx_config', paramGather: true, expertOverlap: true, graphs: 'full iteration', dispatcher: 'HybridEP', other: 'FP8 attention, TE op fuser, experts padded to 1.5x capacity for the graph, delayed weight gradients' }],
  ['26.08', 'pretrain', 'gb300', 8, 'nemotron-3-nano', 'MXFP8', 512, 4, 8192, 0, 1, 1, 1, 1, 8, 39936,
    { tag: 'v0.6.0', recipe: 'perf_recipes/nemotronh/gb300/nemotronh.py nemotron_3_nano_pretrain_8gpu_gb300_fp8mx_config', paramGather: true, graphs: 'TE attn/mamba/router/preprocess', dispatcher: 'HybridEP' }],
  ['26.08', 'pretrain', 'gb300', 64, 'nemotron-3-super', 'MXFP8', 512, 1, 8192, 0, 1, 1, 1, 1, 64, 9856,
    { tag: 'v0.6.0', recipe: 'perf_recipes/nemotronh/gb300/nemotronh.py nemotron_3_super_pretrain_64gpu_gb300_fp8mx_config', paramGather: true, graphs: 'TE attn/mamba/router/preprocess', dispatcher: 'HybridEP', mtp: 2, mtpRepeated: true, bf16Modules: ['mtp.*'] }],
  ['26.08', 'pretrain', 'gb300', 64, 'nemotron-3-super', 'NVFP4', 512, 1, 8192, 0, 1, 1, 1, 1, 64, 10240,
    { tag: 'v0.6.0', recipe: 'perf_recipes/nemotronh/gb300/nemotronh.py nemotron_3_super_pretrain_64gpu_gb300_nvfp4_config', paramGather: true, graphs: 'TE attn/mamba/router/preprocess', dispatcher: 'HybridEP', mtp: 2, mtpRepeated: true, bf16Modules: ['*self_attn*', '*latent_proj*', 'mtp.*'], other: 'Mamba out_proj in MXFP8 (te_quant.cfg)', bf16End: 14 }],
  ['26.08', 'pretrain', 'gb300', 256, 'nemotron-3-ultra', 'MXFP8', 256, 1, 8192, 0, 1, 1, 1, 1, 64, 3552,
    { tag: 'v0.6.0', recipe: 'perf_recipes/nemotronh/gb300/nemotronh.py nemotron_3_ultra_pretrain_256gpu_gb300_fp8mx_config', hsdp: 64, recompute: 'selective', modules: ['moe_act'], dispatcher: 'HybridEP', mtp: 2, mtpRepeated: true, bf16Modules: ['mtp.*'], other: 'fine-grained activation offload of the expert MLP (fused_group_mlp tensors above 500M elements), cuteDSL fused grouped MLP, TE op fuser' }],
  ['26.08', 'pretrain', 'gb300', 128, 'deepseek-v4-flash', 'MXFP8', 2048, 1, 4096, 0, 1, 1, 1, 1, 64, 8224,
    { tag: 'v0.6.0', recipe: 'perf_recipes/deepseek/gb300/deepseek_v4.py deepseek_v4_flash_pretrain_128gpu_gb300_fp8mx_config' }],
  ['26.08', 'pretrain', 'gb200', 256, 'deepseek-v3', 'MXFP8', 4096, 1, 4096, 0, 1, 4, 1, 4, 64, 4912,
    { tag: 'v0.6.0', recipe: 'perf_recipes/deepseek/gb200/deepseek_v3.py deepseek_v3_pretrain_256gpu_gb200_fp8mx_config', paramGather: true, expertOverlap: true, recompute: 'selective', modules: ['mla_up_proj'], graphs: 'full iteration', dispatcher: 'HybridEP', mtp: 1, other: 'TE op fuser, experts padded to 1.5x capacity for the graph, delayed weight gradients, BF16 Adam moments and main gradients' }],
  ['26.08', 'pretrain', 'gb200', 64, 'gpt-oss-120b', 'MXFP8', 1280, 4, 4096, 0, 1, 1, 1, 1, 64, 28672,
    { tag: 'v0.6.0', recipe: 'perf_recipes/gpt_oss/gb200/gpt_oss.py gpt_oss_120b_pretrain_64gpu_gb200_fp8mx_config', paramGather: true, expertOverlap: true, graphs: 'full iteration', dispatcher: 'HybridEP', other: 'FP8 attention, TE op fuser, experts padded to 1.5x capacity for the graph, delayed weight gradients' }],
  ['26.08', 'pretrain', 'gb200', 8, 'qwen3-30b-a3b', 'MXFP8', 512, 4, 4096, 0, 1, 1, 1, 1, 8, 39936,
    { tag: 'v0.6.0', recipe: 'perf_recipes/qwen/gb200/qwen3_moe.py qwen3_30b_a3b_pretrain_8gpu_gb200_fp8mx_config', paramGather: true, expertOverlap: true, graphs: 'full iteration', dispatcher: 'HybridEP', other: 'FP8 attention, TE op fuser, experts padded to 1.5x capacity for the graph, delayed weight gradients' }],
  ['26.08', 'pretrain', 'gb200', 256, 'qwen3-235b-a22b', 'MXFP8', 8192, 1, 4096, 0, 1, 8, 1, 3, 32, 7280,
    { tag: 'v0.6.0', recipe: 'perf_recipes/qwen/gb200/qwen3_moe.py qwen3_235b_a22b_pretrain_256gpu_gb200_fp8mx_config', paramGather: true, expertOverlap: true, graphs: 'full iteration', dispatcher: 'HybridEP', other: 'FP8 attention, TE op fuser, experts padded to 1.5x capacity for the graph, delayed weight gradients' }],
  ['26.08', 'pretrain', 'gb200', 64, 'nemotron-3-super', 'MXFP8', 512, 1, 8192, 0, 2, 1, 1, 1, 64, 7040,
    { tag: 'v0.6.0', recipe: 'perf_recipes/nemotronh/gb200/nemotronh.py nemotron_3_super_pretrain_64gpu_gb200_fp8mx_config', paramGather: true, graphs: 'TE attn/mamba/router/preprocess', dispatcher: 'HybridEP', mtp: 2, mtpRepeated: true, bf16Modules: ['mtp.*'] }],
  ['26.08', 'pretrain', 'gb200', 64, 'nemotron-3-super', 'NVFP4', 512, 1, 8192, 0, 2, 1, 1, 1, 64, 7168,
    { tag: 'v0.6.0', recipe: 'perf_recipes/nemotronh/gb200/nemotronh.py nemotron_3_super_pretrain_64gpu_gb200_nvfp4_config', paramGather: true, graphs: 'TE attn/mamba/router/preprocess', dispatcher: 'HybridEP', mtp: 2, mtpRepeated: true, bf16Modules: ['*self_attn*', '*latent_proj*', 'mtp.*'], other: 'Mamba out_proj in MXFP8 (te_quant.cfg)', bf16End: 14 }],
  ['26.08', 'pretrain', 'gb200', 256, 'nemotron-3-ultra', 'MXFP8', 256, 1, 8192, 0, 2, 1, 1, 1, 64, 2528,
    { tag: 'v0.6.0', recipe: 'perf_recipes/nemotronh/gb200/nemotronh.py nemotron_3_ultra_pretrain_256gpu_gb200_fp8mx_config', hsdp: 64, recompute: 'selective', modules: ['moe_act'], dispatcher: 'HybridEP', mtp: 2, mtpRepeated: true, bf16Modules: ['mtp.*'], other: 'fine-grained activation offload of the expert MLP (fused_group_mlp tensors above 350M elements), cuteDSL fused grouped MLP, TE op fuser' }],
  ['26.08', 'pretrain', 'gb200', 8, 'nemotron-3.5-lightning', 'MXFP8', 512, 2, 8192, 0, 1, 1, 1, 1, 8, 28672,
    { tag: 'v0.6.0', recipe: 'perf_recipes/nemotronh/gb200/nemotronh.py nemotron_3_5_lightning_pretrain_8gpu_gb200_fp8mx_config', paramGather: true, graphs: 'TE attn/mamba/router/preprocess', dispatcher: 'HybridEP', mtp: 2, mtpRepeated: true, bf16Modules: ['mtp.*'] }],
  ['26.08', 'pretrain', 'gb200', 128, 'deepseek-v4-flash', 'MXFP8', 2048, 1, 4096, 0, 1, 1, 1, 1, 64, 7776,
    { tag: 'v0.6.0', recipe: 'perf_recipes/deepseek/gb200/deepseek_v4.py deepseek_v4_flash_pretrain_128gpu_gb200_fp8mx_config' }],
]);

/**
 * The pipeline layouts Megatron-Bridge's recipes give DeepSeek-V3 and Kimi K2 where the preset names no string, by
 * "PP,VP": `layout_map` of set_deepseek_v3_pipeline_model_parallel_layout (src/megatron/bridge/recipes/deepseek/
 * deepseek_v3.py, the same entries at v0.2.0, v0.4.0, v0.4.1 and v0.5.0, and as recipes/deepseek/h100/
 * deepseek_v3.py at v0.6.0) and `map_pp_vp_to_layout` of _get_kimi_k2_pipeline_layout (recipes/kimi/kimi_k2.py,
 * v0.5.0), written as Megatron layout strings without their last symbols: DeepSeek-V3's last chunk ends with one
 * 'm' per MTP layer, then 'L' (`last_layer = ["mtp"] * mtp_layers + ["loss"]`), Kimi K2's with 'L'. The perf
 * scripts apply them (scripts/performance/configs/deepseek/deepseek_llm_pretrain.py where the preset has no
 * pp_layout, configs/kimi/kimi_llm_pretrain.py, and utils/overrides.py for a PP or VP given on the launcher's
 * command line, from v0.4.1), as the v0.6.0 perf_recipes do; a (PP, VP) not in a map gets no layout (Megatron's
 * even split, which 61 blocks refuse).
 */
const MB_LAYOUT_MAPS = /** @type {Record<string, Record<string, string>>} */ ({
  'deepseek-v3': {
    '4,1': 'Et*16|t*16|t*16|t*13', '8,1': 'Et*8|(t*8|)*6t*5', '4,2': 'Et*8|(t*8|)*6t*5',
    '16,1': 'Et*4|(t*4|)*14t', '8,2': 'Et*4|(t*4|)*14t', '4,4': 'Et*4|(t*4|)*14t',
  },
  'kimi-k2': {
    '4,1': 'Et*16|t*16|t*16|t*13', '8,1': 'Et*8|(t*8|)*6t*5', '4,2': 'Et*8|(t*8|)*6t*5',
    '16,1': 'Et*4|(t*4|)*14t', '8,2': 'Et*4|(t*4|)*14t', '4,4': 'Et*4|(t*4|)*14t', '2,8': 'Et*4|(t*4|)*14t',
  },
});

/**
 * The pipeline layout a row's recipe ran: its preset's string, else its model's map at the table's PP and VP with
 * the row's MTP layers; undefined for none.
 * @param {string} model @param {number} pipeline @param {number} virtual @param {MbFacts} f
 */
function mbLayout(model, pipeline, virtual, f) {
  if (f.layout) return f.layout;
  const head = MB_LAYOUT_MAPS[model]?.[`${pipeline},${virtual}`];
  return head === undefined ? undefined : `${head}${'m'.repeat(f.mtp ?? 0)}L`;
}

/**
 * The recipes' CUDA graphs that capture the whole step (`training.cuda_graphs`); per-module graphs (TE attention,
 * router, MLP) still leave the rest to eager launches, so they stay unstated.
 */
const FULL_GRAPHS = 'full iteration';

/** The flex dispatcher's backends, which send a token once per destination node (`parallel.expert_dispatch`). */
const HIERARCHICAL_DISPATCHERS = new Set(['HybridEP', 'DeepEP']);

/** The request's FP8 recipe for each precision label of the tables (absent: BF16). */
const MB_FP8_RECIPE = /** @type {Record<string, string>} */ ({ 'fp8-cs': 'current', FP8: 'current', 'fp8-mx': 'mxfp8', MXFP8: 'mxfp8', NVFP4: 'nvfp4' });

/**
 * The row's note: the recipe it was read from, where the recipe's preset differs from the published layout, the
 * pipeline layout sent (`layout`), and what the recipe ran that the request cannot state.
 * @param {MbFacts} f @param {string | undefined} layout
 */
function mbNote(f, layout) {
  const name = f.recipe ? f.recipe.split(' ').pop() : '';
  const unstated = [
    f.modulesIgnored ? `${f.modulesIgnored.join(', ')} listed for recomputation, not enabled` : '',
    f.graphs && f.graphs !== FULL_GRAPHS ? `CUDA graphs (${f.graphs})` : '',
    f.dispatcher && f.dispatcher !== 'alltoall' && !HIERARCHICAL_DISPATCHERS.has(f.dispatcher) ? `${f.dispatcher} dispatcher` : '',
    f.offload ? `activation offload of ${f.offload} layers` : '',
    f.hsdp ? `HSDP shard groups of ${f.hsdp} GPUs (sent as FSDP over all data ranks)` : '',
    f.other ?? '',
  ].filter(Boolean);
  const stated = [
    f.hsdp ? 'Megatron-FSDP (fsdp)' : '',
    f.recompute === 'selective' && f.modules?.length ? `recomputes ${f.modules.join(', ')}` : '',
    layout ? `layout ${layout}` : '',
    f.mtp ? `${f.mtp} MTP layer` : '',
    f.bf16End ? `last ${f.bf16End} layers BF16 (bf16_layers_at_end)` : '',
    f.bf16Modules ? `${f.bf16Modules.join(', ')} in BF16 (bf16_modules)` : '',
    f.mtpRepeated ? 'one MTP module repeated (mtp_repeated_layer)' : '',
    f.graphs === FULL_GRAPHS ? 'full-iteration CUDA graphs (cuda_graphs)' : '',
    f.dispatcher && HIERARCHICAL_DISPATCHERS.has(f.dispatcher) ? `${f.dispatcher} dispatcher (expert_dispatch hierarchical)` : '',
  ].filter(Boolean).join(', ');
  return [`${f.tag} ${name}`, stated, f.recipeLayout ? `recipe's own preset: ${f.recipeLayout}` : '',
    unstated.length ? `not stated: ${unstated.join('; ')}` : ''].filter(Boolean).join('. ');
}

/**
 * One Megatron-Bridge row as a bench item: the table's layout, and the settings its own recipe ran (`f`) where
 * the request can state them.
 * @param {string} release
 * @param {string} task pretrain, sft or lora
 * @param {[string, number, string, string, number, number, number, number, number, number, number, number, number, number, MbFacts]} row
 */
function megatronBridge(release, task, [hw, gpus, model, precision, gbs, mbs, seq, fsdp, tensor, pipeline, context, virtual, expert, tps, f]) {
  const recipe = MB_FP8_RECIPE[precision];
  const fp8 = recipe ? { precision: 'fp8', fp8_recipe: recipe } : {};
  const layout = [fsdp ? `FSDP ${fsdp}` : '', tensor > 1 ? `TP ${tensor}` : '', pipeline > 1 ? `PP ${pipeline}` : '',
    context > 1 ? `CP ${context}` : '', virtual > 1 ? `VP ${virtual}` : '', expert > 1 ? `EP ${expert}` : ''].filter(Boolean);
  const what = task === 'sft' ? ' SFT' : task === 'lora' ? ' LoRA' : '';
  const finetune = task === 'sft' ? { finetune: { method: 'full' }, packing: true }
    : task === 'lora' ? { finetune: { method: 'lora', rank: 16, alpha: 32, dropout: 0, targets: ['qkv_proj'] }, packing: true } : {};
  const muon = model === 'kimi-k2';
  const zero = f.zero ?? 1;
  const selective = f.recompute === 'selective' && (f.modules?.length ?? 0) > 0;
  const pipelineLayout = mbLayout(model, pipeline, virtual, f);
  return {
    source: `Megatron-Bridge performance summary, ${release}`,
    run: `${model}${what}, ${gpus}× ${hw.toUpperCase()} (${layout.join(' + ') || 'DP'}), ${precision.toUpperCase()}, sequence ${seq}, micro-batch ${mbs}, global batch ${gbs}`,
    unit: 'tokens/s/GPU',
    published: tps,
    note: mbNote(f, pipelineLayout),
    refusedWhy: NOT_IN_CATALOGUE[model],
    request: {
      model: MB_HF_MODELS[model] ?? { preset: model },
      training: {
        batch_size: gbs, seq_len: seq, precision: 'bf16', optimizer: muon ? 'muon' : 'adamw', attention: 'flash', kernels: 'megatron',
        state_accounting: 'megatron_bf16', ...fp8, ...finetune, ...(f.mtp ? { mtp_layers: f.mtp } : {}),
        ...(f.bf16End ? { bf16_layers_at_end: f.bf16End } : {}),
        ...(f.bf16Modules ? { bf16_modules: f.bf16Modules } : {}),
        ...(f.mtpRepeated ? { mtp_repeated_layer: true } : {}),
        ...(f.graphs === FULL_GRAPHS ? { cuda_graphs: true } : {}),
      },
      hardware: [hw],
      options: { per_layer: false },
      parallel: {
        // Megatron's selective recomputation of named modules: parallel.recompute_modules.
        gpus, tensor, pipeline, micro_batch_size: mbs,
        recompute: f.recompute === 'full' ? 'full' : selective ? 'selective' : 'none',
        ...(selective ? { recompute_modules: f.modules } : {}),
        ...(f.recomputeEvery ? { recompute_every: f.recomputeEvery } : {}),
        ...(fsdp || f.hsdp ? { fsdp: true } : zero ? { zero_stage: zero } : {}),
        ...(tensor > 1 ? { sequence_parallel: true } : {}),
        ...(virtual > 1 ? { virtual_stages: virtual } : {}),
        ...(context > 1 ? { context } : {}),
        ...(expert > 1 ? { expert } : {}),
        ...(pipeline > 1 && EMBEDDING_LOSS_SPLIT.has(model) ? { pipeline_embedding_loss: true } : {}),
        // The recipe's Megatron layout: which chunk holds which blocks, the MTP module and the loss.
        ...(pipelineLayout ? { pipeline_layout: pipelineLayout } : {}),
        ...(f.paramGather ? { overlap_param_gather: true } : {}),
        ...(f.tensorOverlap ? { tensor_overlap: true } : {}),
        ...(f.expertOverlap ? { expert_overlap: true } : {}),
        ...(expert > 1 && HIERARCHICAL_DISPATCHERS.has(f.dispatcher ?? '') ? { expert_dispatch: 'hierarchical' } : {}),
      },
    },
    /** Predicted tokens per second per GPU. */
    convert: (/** @type {any} */ r) => (gbs * seq) / (r.step_ms / 1e3) / gpus,
  };
}

const MEGATRON_BRIDGE = [
  ...MEGATRON_BRIDGE_2511.map((row) => megatronBridge('25.11', 'pretrain', row)),
  ...MEGATRON_BRIDGE_26.map(([release = '', task = '', ...row]) => megatronBridge(release, task,
    /** @type {[string, number, string, string, number, number, number, number, number, number, number, number, number, number, MbFacts]} */ (row))),
];

/** @type {{ source: string, run: string, published: number, why: string }[]} */
const NOT_PREDICTED = [];

/** @param {number} v */
const f1 = (v) => v.toFixed(1);

export async function main() {
  /**
   * @type {{source: string, run: string, unit: string, published: number, predictor: string, predicted: number,
   *   error: number, step_s: number, bubble: number, comm: number, fits: boolean, memory: number, publishedMemory: string,
   *   note: string, mfu: number, accelerator: string, precision: string}[]}
   */
  const rows = [];
  /** @type {{source: string, run: string, unit: string, published: number, why: string, note: string}[]} */
  const refused = NOT_PREDICTED.map((r) => ({ ...r, unit: 'TFLOP/s/GPU', note: '' }));
  const items = [...MEGATRON_2021, ...LLAMA3, ...TORCHTITAN, ...MEGATRON_BRIDGE];
  for (const item of items) {
    const unit = 'unit' in item ? String(item.unit) : 'TFLOP/s/GPU';
    const note = 'note' in item ? String(item.note) : '';
    if ('refusedWhy' in item && item.refusedWhy) {
      // A model the core has no form for: listed with the reason, no request sent.
      refused.push({ source: item.source, run: item.run, unit, published: item.published, why: item.refusedWhy, note });
      process.stderr.write(`${item.run}: not sent: ${item.refusedWhy}\n`);
      continue;
    }
    let response;
    try {
      response = await engine.predict(/** @type {import('../src/types').PredictRequest} */ (/** @type {unknown} */ (item.request)));
    } catch (e) {
      // A layout the core refuses is reported as refused, with the core's own reason.
      const why = /** @type {Error} */ (e).message.split('; expected')[0]?.slice(0, 160) ?? '';
      refused.push({ source: item.source, run: item.run, unit, published: item.published, why, note });
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
      note,
      mfu: r.mfu,
      accelerator: r.hardware,
      precision: String(/** @type {any} */ (item.request).training.precision ?? 'fp32'),
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
  // Constant-MFU baselines in each row's unit (throughput: inversely proportional to the step): the other rows'
  // median MFU on the same accelerator and precision (leave-one-out), and the rule of thumb.
  const loo = leaveOneOutMfu(rows.map((r) => ({
    mfu: measuredMfu(r.mfu, 1 / r.predicted, 1 / r.published), accelerator: r.accelerator, precision: r.precision,
  })));
  /** @param {typeof rows[number]} r @param {number} at @returns {number} the row's value at constant MFU `at` */
  const valueAt = (r, at) => 1 / stepAtMfu(r.mfu, 1 / r.predicted, at);
  const baselineRows = rows.map((r, i) => {
    const at = /** @type {{mfu: number}} */ (loo[i]).mfu;
    const value = valueAt(r, at);
    return { source: r.source, at, value, error: (value - r.published) / r.published };
  });
  const ruleRows = rows.map((r) => ({ error: (valueAt(r, RULE_OF_THUMB_MFU) - r.published) / r.published }));
  const baseline = stats(baselineRows.filter((r) => Number.isFinite(r.error)));
  const rule = stats(ruleRows);
  /** @param {number} v */
  const sign1 = (v) => `${v >= 0 ? '+' : ''}${f1(v)}`;
  const sources = [...new Set([...refused.filter((r) => !items.some((i) => i.source === r.source)), ...items].map((r) => r.source))];
  const perSource = sources.map((source) => {
    const mine = rows.filter((r) => r.source === source);
    const none = refused.filter((r) => r.source === source).length;
    if (!mine.length) return `| ${source} | 0 | ${none} | n/a | n/a | n/a |`;
    const s = stats(mine);
    const b = stats(baselineRows.filter((r) => r.source === source && Number.isFinite(r.error)));
    return `| ${source} | ${mine.length} | ${none} | ${f1(s.mape)}% | ${sign1(s.signed)}% | ${f1(b.mape)}% |`;
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
    'Baseline beside each row: a constant MFU (the model\'s matrix FLOPs at a fixed share of the dense peak at the',
    'training precision, as the response\'s `mfu` counts them), the median MFU the *other* predicted runs on the same',
    'accelerator at the same precision published (leave-one-out, so it never saw its own row; the same accelerator at',
    'any precision where no other run shares both, else all other runs; web/bench/accuracy/mfu-baseline.mjs).',
    '',
    '| source | run | unit | published | predicted | error | constant MFU (error) at MFU | step (s) | bubble | exposed comm. | fits (GB/GPU) | published memory | recipe note |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|',
    ...rows.map(
      (r, i) => {
        const b = /** @type {{at: number, value: number, error: number}} */ (baselineRows[i]);
        return `| ${r.source} | ${r.run} | ${r.unit} | ${r.published} | ${f1(r.predicted)} | ${r.error >= 0 ? '+' : ''}${f1(r.error * 100)}% | ${f1(b.value)} (${sign1(b.error * 100)}%) at ${f1(b.at * 100)}% | ${r.step_s.toFixed(2)} | ${f1(r.bubble * 100)}% | ${f1(r.comm * 100)}% | ${r.fits ? 'yes' : 'no'} (${f1(r.memory)}) | ${r.publishedMemory} | ${r.note.replace(/\|/g, '/')} |`;
      },
    ),
    ...refused.map((r) => `| ${r.source} | ${r.run} | ${r.unit} | ${r.published} | n/a | refused: ${r.why.replace(/\|/g, '/')} | | | | | | | ${r.note.replace(/\|/g, '/')} |`),
    '',
    `Over the ${rows.length} predicted runs: mean absolute error ${f1(mape)}%, mean signed error ${sign1(signed)}%; ` +
      `a constant MFU per accelerator and precision (leave-one-out) ${f1(baseline.mape)}% (${sign1(baseline.signed)}%); ` +
      `the ${RULE_OF_THUMB_MFU * 100}% rule of thumb ${f1(rule.mape)}% (${sign1(rule.signed)}%).`,
    '',
    'By source (each Megatron-Bridge release is its own block; error = (predicted − published) / published):',
    '',
    '| source | predicted | refused | mean absolute error | mean signed error | constant MFU, leave-one-out: mean absolute error |',
    '|---|---:|---:|---:|---:|---:|',
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
    '  the paper\'s tensor parallelism cites Korthikanti et al.). The pipeline as the paper\'s §3.3.2 states it: an',
    '  interleaved schedule (bubble (p − 1)/(v·m)) whose first and last stages each hold one block fewer, so that the',
    '  first model chunk holds only the embedding and the last only the output projection and loss: one block per',
    '  chunk, 128 chunks (E, 126 blocks, L) over 16 stages, `pipeline_layout` `"E|(t|)*126L"` (8 virtual stages);',
    '  optimizer states and gradients sharded over data parallelism, weights kept after the forward (ZeRO 2, §3.3.2).',
    '  Assumed: micro-batch 1, fused attention',
    '  as FlashAttention-2 (`training.attention: "flash2"`: one kernel per pass, no s² score traffic or activations;',
    '  the fused kernel of 2024, the paper names none; the catalogue has no H100 FlashAttention-2 timings, so the',
    '  learned batched-GEMM model times it) and no recomputation. Meta\'s flexible micro-batch counts per',
    '  stage, asynchronous point-to-point and communication tuning are not modelled. The predicted memory',
    '  per GPU is reported as is (`fits` no: the interleaved schedule\'s in-flight activations of the first stage,',
    '  without recomputation, exceed 80 GB as we model them; the paper does not say how it kept them in). The 131,072-token',
    '  row runs context parallelism 16 (`parallel.context`: TransformerEngine\'s ring, causal load balancing,',
    '  gradients over data × context; docs/PREDICTION.md, "Context parallelism"; the paper all-gathers the keys and',
    '  values instead, exposed but small under GQA) with 16 micro-batches of one sequence each (16M tokens per step).',
    '- torchtitan (pytorch/torchtitan docs/performance.md @ eaea6f6a, BSD-3-Clause, runs of December 2024):',
    '  Grand Teton H100s with 96 GB HBM2e at 2.4 TB/s under a 500 W limit, predicted as the catalogue\'s 700 W',
    '  `h100-sxm` (3.35 TB/s): expect the predictions to run fast. SDPA ran FlashAttention-2 (`attention: "flash2"`:',
    '  a December 2024 PyTorch nightly does not pick cuDNN\'s kernel on H100, pytorch/pytorch#142132; torchtitan',
    '  enabled cuDNN attention in March 2025, pytorch/torchtitan#1000). FSDP2 as ZeRO-3; "selective" checkpointing',
    '  is torchtitan\'s op-level policy, which also recomputes every second matmul of a block (`recompute: "torchtitan_op"`); Float8 is torchao\'s tensorwise dynamic scaling',
    '  (`fp8_recipe: "current"`). Table 5\'s pipelines as torchtitan ran them at the table\'s commit (9dec370,',
    '  torchtitan/parallelisms/pipelining_utils.py): no micro-batch count given, so as many micro-batches as',
    '  pipeline ranks (8 of 4 sequences); no split points given, so its default split (one stage per rank for 1F1B,',
    '  two for interleaved 1F1B; the first stage `layers // stages` blocks, middle ones one more while the remainder',
    '  lasts, the last the rest: `pipeline_layout` `"Et*15|(t*16|)*6t*15L"` and `"Et*7|(t*8|)*14t*7L"`); its AsyncTP',
    '  (micro-pipelined tensor-parallel collectives) as `tensor_overlap`; Table 6 (405B with context parallelism, 1F1B)',
    '  the same. Memory is compared with the published peak GiB per GPU. Tables 2 and 6 share a pattern the',
    '  predictions do not follow: with PyTorch\'s experimental `context_parallel` of December 2024 (keys and values',
    '  all-gathered, partial results merged in FP32, load-balanced causal blocks) the published throughput falls',
    '  faster with the sequence than the model\'s: Table 2 at 128K and 256K (CP 4 and 8) +41/+57%, Table 6 at 64K to',
    '  256K (CP 2 to 8) +42/+53/+95%, while the 32K rows (CP 1) and Table 2\'s 64K row (CP 2) are within −3…+14%.',
    '- Megatron-Bridge (NVIDIA-NeMo/Megatron-Bridge, Apache-2.0): the tables of docs/performance-summary-archive.md',
    '  (25.11, 26.02 to 26.06.01) and docs/performance-summary.md (26.08) @ 067f987d, each release its own block;',
    '  the 25.11 rows as published, and from 26.02 on each distinct configuration (task, model, system, GPUs,',
    '  precision, GBS, MBS, sequence, FSDP, TP, PP, CP, VP, EP) once, from the newest release that publishes it (153',
    '  of the 233 newer table rows are older numbers of identical configurations, not shown). The layout sent is',
    '  the table\'s. Everything else comes from the row\'s own benchmark recipe, read at the release tag of its',
    '  container: 25.11 = v0.2.0, 26.02 = v0.3.0, 26.02.01 = v0.3.1, 26.04 = v0.4.0, 26.04.01 = v0.4.1, 26.06 =',
    '  v0.5.0, 26.06.01 = v0.5.1, 26.08 = v0.6.0 (docs/releases/software-versions.md for the four base containers,',
    '  the v0.6.0 release notes for 26.08, the tag and table dates for the patch containers); the recipe is the',
    '  workload preset in scripts/performance/configs/ up to v0.5.1 and the function in src/megatron/bridge/',
    '  perf_recipes/ at v0.6.0, named in each row\'s note with the places where its preset differs from the',
    '  published layout (web/bench/scale.mjs, MbFacts). Stated from the recipe: Megatron\'s distributed',
    '  optimizer (ZeRO 1; none for Kimi K2\'s Muon and for LoRA, whose recipes turn it off; Megatron-FSDP where the',
    '  FSDP column says so, and for Nemotron 3 Ultra, whose recipes run Megatron-FSDP as HSDP over 64-GPU NVLink',
    '  domains: `fsdp`, the shard group noted), gradients reduced in BF16 (`state_accounting: "megatron_bf16"`:',
    '  every perf recipe sets grad_reduce_in_fp32 off), the parameter all-gather overlapped with the forward with',
    '  data parallelism > 1',
    '  (`overlap_param_gather`; not in v0.2.0\'s MXFP8 Llama 70B/405B, DeepSeek-V3 and Qwen3-235B-B200 runs, whose',
    '  scripts turn it off, nor in the SFT runs), TransformerEngine\'s tensor-parallel overlap (`tensor_overlap`:',
    '  Llama 70B/405B and the fine-tuning runs with TP > 1, not NVFP4; the Qwen3 H100 scripts turn it off), the',
    '  MoE all-to-all overlap (`expert_overlap`, where the preset sets moe_a2a_overlap or the v0.6.0 recipe turns',
    '  it on), the HybridEP / DeepEP flex dispatchers (`expert_dispatch: "hierarchical"`: one copy of a token per',
    '  destination node), Megatron-Core\'s selective recomputation of named modules (`recompute_modules`: MLA',
    '  up-projections, expert activations, norms; per row), full block recomputation (Llama 3 8B on H100: 5 of 32 layers, stated as every 6th block), sequence',
    '  parallelism with TP > 1, fused attention (`kernels: "megatron"`: cuDNN, timed from the catalogue\'s measured',
    '  `fused_attention`), FP8-CS / "FP8" = `fp8_recipe: "current"`, FP8-MX / MXFP8 = `"mxfp8"`, NVFP4 = `"nvfp4"`',
    '  (experimental: the FP8 linears\' GEMMs at the FP4 peak, reaching the FP8 share of it); the 405B and',
    '  Qwen3-235B recipes count embedding and loss as',
    '  pipeline layers (`pipeline_embedding_loss`), DeepSeek-V3\'s and Kimi K2\'s recipes place them with Megatron',
    '  pipeline layout strings (`pipeline_layout`: the preset\'s, else the recipe\'s (PP, VP) map, MB_LAYOUT_MAPS;',
    '  none for a PP and VP outside the map, which 61 blocks then refuse), and DeepSeek-V3\'s multi-token',
    '  prediction layer (`mtp_layers: 1`, the rows from 26.02 on; the 25.11 rows are "w/o MTP"); MoE routing',
    '  balanced and dropless as the page says. SFT: full',
    '  fine-tuning on sequences packed to 4096 (`packing: true`). LoRA: rank 16, alpha 32, dropout 0 on Megatron\'s',
    '  fused linear_qkv (`targets: ["qkv_proj"]`), packed; the H100 LoRA row runs TP 2, which the core refuses for',
    '  LoRA. Kimi K2 (no preset): a `deepseek_v3` config of Megatron-Bridge\'s KimiK2Provider',
    '  (src/megatron/bridge/models/kimi/kimi_provider.py @ dc805f5c: 61 layers, 384 experts, 64 heads, first layer',
    '  dense) trained with Muon (`optimizer: "muon"`); full-iteration CUDA graphs (`cuda_graphs`: no host floor on a',
    '  pass). Not stated, listed per row: TransformerEngine\'s per-module CUDA graphs (the rest of the step still',
    '  issued eagerly), the full-iteration graphs\' experts padded to 1.5x capacity, activation',
    '  offload of 5 to 40 layers, BF16 Adam moments and main gradients in the',
    '  DeepSeek-V3 recipes, FP8 attention,',
    '  cuteDSL / TE-op-fuser grouped MLPs, delayed weight gradients, the FP8 parameter all-gather of the FP8 and',
    '  MXFP8 recipes, and the param gather overlapped with the optimizer step (DP > 1, PP > 1, VP > 1). Where a',
    '  preset disagrees with the published layout (20 of the 31 25.11 rows, 2 of them in the global batch only;',
    '  7 of the 80 newer configurations; the launcher takes layout and batch from its command line), its other',
    '  settings are still applied. Nemotron 3 Nano and Super (`nemotron_h`: Mamba-2, attention and MoE layers by',
    '  `hybrid_override_pattern`; Super\'s experts in a 1024-wide latent, LatentMoE) run from their presets, the',
    '  Mamba-2 in/out projections as TE linears in FP8 (Megatron-Core\'s mamba_mixer.py); Super\'s recipes run',
    '  `mtp_num_layers` 2 over one repeated `*E` module (`training.mtp_layers` 2 with `mtp_repeated_layer`);',
    '  its NVFP4 recipe keeps the last 14 layers in BF16 (`num_layers_at_end_in_bf16`, sent as',
    '  `training.bf16_layers_at_end`) and, by module (te_quant.cfg), attention\'s projections, the latent',
    '  projections and the MTP block in BF16 (`training.bf16_modules` `*self_attn*`, `*latent_proj*`, `mtp.*`) and',
    '  Mamba out_proj in MXFP8, which the request cannot say (NVFP4 here); its MXFP8 recipes keep the MTP block in',
    '  BF16 (`keep_mtp_spec_in_bf16`, sent as `bf16_modules` `mtp.*`). Nemotron 3 Ultra (no preset): a `nemotron_h`',
    '  config of NVIDIA\'s Megatron-LM arguments for the checkpoint (NVIDIA/Megatron-LM examples/post_training/modelopt/',
    '  conf/nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16.sh @ d98e8a64: 108 layers, 48 of them LatentMoE with 512',
    '  experts of 5120 in a 2048-wide latent, top 22, width 8192, 256 Mamba heads), Megatron-Core\'s defaults for the',
    '  Mamba state (128, 8 groups) and the vocabulary and parameter count of Megatron-Bridge\'s verification card',
    '  (131,072; 560,524,603,904 with the MTP tensors, reproduced exactly with an `*E` MTP block); its recipes run',
    '  `mtp_num_layers` 2 over that repeated block kept in BF16 and recompute the expert activation',
    '  (`recompute_modules` `moe_act`); their offload of the expert MLP\'s inputs to the host and the HSDP shard',
    '  groups are not stated. Nemotron 3.5 Lightning (no preset):',
    '  its recipes are Nemotron 3 Nano\'s with an `*E` MTP block (`mtp_num_layers` 2, repeated, BF16), so the',
    '  nemotron-3-nano preset\'s config with that `mtp_hybrid_override_pattern` (the verification card\'s',
    '  32,913,266,240 parameters reproduced exactly).',
    '  Not predicted: DeepSeek-V4-Flash (compressed sparse attention, hyper-connections; no model type in the',
    '  core): no preset, listed as refused with that reason.',
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
