// The 2025 decoders: GLM-4 / GLM-4.5, Seed-OSS, SmolLM3, EXAONE 4.0, Command R7B / A (cohere2), ERNIE 4.5 and
// Hunyuan (dense), ERNIE 4.5 MoE, OLMoE, OLMo 3, MiniMax-M2 and StarCoder (gpt_bigcode), and DeepSeek-V3.2 and GLM-5,
// which are refused (DeepSeek Sparse Attention). One row per model_type; see
// model_types.cpp for how to add one. Each family's parameters are as its transformers class builds them (the modeling
// file named at each part); layer patterns go through decoder_hooks.cpp's read_layer_types, so layer_types is checked
// the same way.
#include <string>
#include <vector>

#include "model/hf/decoder_hooks.hpp"
#include "model/hf/parts.hpp"
#include "model/hf/quirks.hpp"

namespace prenet::hf {
namespace {

// ---- hooks ----------------------------------------------------------------------------------------------

/// GLM's partial_rotary_factor (0.5) rotates part of each head (no parameters).
void partial_rotary(const Cfg& c, Arch& a, std::vector<std::string>&) {
  rotary_share(c, a, "partial_rotary_factor", 0.5);
}

/// GLM-4.5 (Glm4MoeAttention): use_qk_norm's RMSNorm over each head of q and k (head_dim weights each).
void glm_qk_norm(const Cfg& c, Arch& a, std::vector<std::string>&) {
  if (c.flag("use_qk_norm", false)) a.qk_norm = "head";
}

/// Sets plan[i].rope to false on the layers that attend fully (Cohere2's and EXAONE 4's global layers have no
/// positions); no parameters, it only keeps the plan honest.
void nope_on_full_layers(Arch& a) {
  for (auto& p : a.plan) p.rope = p.span != AttnSpan::Sliding;
}

/// The sliding window `key`: `fallback` when absent, 0 (none) when null.
std::int64_t window_or(const Cfg& c, std::int64_t fallback) {
  if (!c.json().contains("sliding_window")) return fallback;
  return c.opt({"sliding_window"}, 0, 1, kMaxPositions);
}

/// Cohere2 (Command R7B, Command A): one full layer after every sliding_window_pattern - 1 sliding ones (4), or
/// layer_types; the full layers have no positions (Cohere2Attention applies rotary only when sliding).
void cohere2_layers(const Cfg& c, Arch& a, std::vector<std::string>&) {
  std::int64_t pattern = c.opt({"sliding_window_pattern"}, 4, 1, kMaxDepth);
  std::vector<std::string> types;
  for (std::int64_t i = 0; i < a.layers; ++i)
    types.push_back((i + 1) % pattern ? "sliding_attention" : "full_attention");
  read_layer_types(c, a, types, window_or(c, 4096));
  nope_on_full_layers(a);
}

/// EXAONE 4.0 (Exaone4Config): layer_types, else sliding_window_pattern, an interval (4: three local layers, one
/// global) or a string of L and G repeated from layer 0 whose last layer is always global; sliding_window null:
/// every layer full, with rotary positions. With a window, the global layers have none (Exaone4Attention).
void exaone4_layers(const Cfg& c, Arch& a, std::vector<std::string>&) {
  const std::int64_t window = window_or(c, 4096);
  std::vector<std::string> types(static_cast<std::size_t>(a.layers), "full_attention");
  if (window > 0 && c.has("sliding_window_pattern") && c.json()["sliding_window_pattern"].is_string()) {
    const std::string pattern = c.str("sliding_window_pattern", "");
    if (pattern.empty() || pattern.find_first_not_of("LG") != std::string::npos) {
      throw InputError(c.field("sliding_window_pattern"), "must be an interval or a string of L and G");
    }
    for (std::size_t i = 0; i < types.size(); ++i) {
      bool last = i + 1 == types.size();
      if (pattern[i % pattern.size()] == 'L' && !last) types[i] = "sliding_attention";
    }
  } else if (window > 0) {
    std::int64_t every = c.opt({"sliding_window_pattern"}, 4, 1, kMaxDepth);
    for (std::int64_t i = 0; i < a.layers; ++i) {
      if ((i + 1) % every) types[static_cast<std::size_t>(i)] = "sliding_attention";
    }
  }
  read_layer_types(c, a, types, window);
  if (window > 0) nope_on_full_layers(a);
}

/// OLMo 3 (Olmo3Config): layer_types, else three sliding layers of sliding_window (4096) then one full, every layer
/// with rotary positions (Olmo3Attention; the YaRN rope_scaling of the long-context checkpoints changes no work).
void olmo3_layers(const Cfg& c, Arch& a, std::vector<std::string>&) {
  std::vector<std::string> types;
  for (std::int64_t i = 0; i < a.layers; ++i) types.push_back((i + 1) % 4 ? "sliding_attention" : "full_attention");
  read_layer_types(c, a, types, window_or(c, 4096));
}

/// SmolLM3 (SmolLM3Config): no_rope_layers (1: rotary, 0: NoPE), else NoPE every no_rope_layer_interval-th layer
/// (4); with use_sliding_window and sliding_window, the NoPE layers slide; or layer_types.
void smollm3_layers(const Cfg& c, Arch& a, std::vector<std::string>&) {
  const std::size_t n = static_cast<std::size_t>(a.layers);
  std::vector<bool> rope(n);
  const std::int64_t interval = c.opt({"no_rope_layer_interval"}, 4, 1, kMaxDepth);
  for (std::size_t i = 0; i < n; ++i) rope[i] = (static_cast<std::int64_t>(i) + 1) % interval != 0;
  if (c.has("no_rope_layers")) {
    const Json& list = c.json()["no_rope_layers"];
    if (!list.is_array() || list.size() != n) {
      throw InputError(c.field("no_rope_layers"),
                       "expected one 0 or 1 per layer (num_hidden_layers is " + std::to_string(n) + ")");
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!list[i].is_number_integer() || (list[i] != 0 && list[i] != 1)) {
        throw InputError(index(c.field("no_rope_layers"), i), "expected 0 or 1");
      }
      rope[i] = list[i] == 1;
    }
  }
  const std::int64_t window = c.flag("use_sliding_window", false) ? window_or(c, 0) : 0;
  std::vector<std::string> types;
  for (std::size_t i = 0; i < n; ++i) types.push_back(window > 0 && !rope[i] ? "sliding_attention" : "full_attention");
  read_layer_types(c, a, types, window);
  for (std::size_t i = 0; i < n; ++i) a.plan[i].rope = rope[i];
}

/// StarCoder (GPTBigCodeAttention): multi_query (default true) projects one K and one V head, c_attn being
/// hidden -> hidden + 2 head_dim.
void bigcode_kv_heads(const Cfg& c, Arch& a, std::vector<std::string>&) {
  a.kv_heads = c.flag("multi_query", true) ? 1 : a.heads;
  a.kv_field = "multi_query";
}

/// OLMoE: clip_qkv clamps q, k and v, an elementwise pass that is not costed.
void olmoe_clip_qkv(const Cfg& c, Arch&, std::vector<std::string>& warnings) {
  if (c.number("clip_qkv", 0.0, 0.0, 1e300) > 0) {
    warnings.push_back("clip_qkv: the clamp of q, k and v is not costed (no parameters)");
  }
}

/// DeepSeek-V3.2 (deepseek_v32) and GLM-5 (glm_moe_dsa): DeepSeek Sparse Attention, a lightning indexer beside the
/// latent attention that picks the keys each query attends to. Its training cost depends on the implementation
/// (transformers runs the indexer without gradients beside a dense masked attention, with an FP32 score tensor of
/// sequence x heads x keys; Megatron trains it with a KL loss and runs sparse attention), and neither is modelled:
/// refused rather than read as DeepSeek-V3 without the indexer.
void refuse_sparse_attention(const Cfg& c, Arch&, std::vector<std::string>&) {
  throw InputError(
      c.field("model_type"),
      "\"" + c.str("model_type", "") +
          "\" is not supported: its DeepSeek Sparse Attention (a lightning indexer of index_n_heads x "
          "index_head_dim choosing index_topk keys per query) is not modelled; read as DeepSeek-V3 it would "
          "leave out the indexer's work and memory (docs/MODEL_FORMAT.md)");
}

/// MiniMax-M2's rotated share of each head: partial_rotary_factor when the config (or its rope_parameters) gives one,
/// else rotary_dim (64 of head_dim 128 in the release) over head_dim, else the whole head.
void minimax_rotary(const Cfg& c, Arch& a, std::vector<std::string>&) {
  const std::int64_t head = a.head_dim > 0 ? a.head_dim : a.hidden / a.heads;
  const Json& rope = c.json().contains("rope_parameters") ? c.json()["rope_parameters"] : Json();
  if (c.has("partial_rotary_factor")) {
    rotary_share(c, a, "partial_rotary_factor", 1.0);
  } else if (rope.is_object() && rope.contains("partial_rotary_factor") && !rope["partial_rotary_factor"].is_null()) {
    const Cfg nested(rope, c.field("rope_parameters"));
    rotary_share(nested, a, "partial_rotary_factor", 1.0);
  } else {
    a.rotary = static_cast<double>(c.opt({"rotary_dim"}, head, 2, head)) / static_cast<double>(head);
  }
}

/// MiniMax-M2's layers and extras: full attention in every layer (attn_type_list, when given, must say 1 for each:
/// MiniMax-Text-01's 0, lightning attention, is not what MiniMaxM2 builds); the multi-token-prediction modules
/// (use_mtp, num_mtp_modules) are not built by transformers, so not counted (a warning); shared_intermediate_size is
/// not read by the class (a warning when above 0).
void minimax_layers(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  if (c.has("attn_type_list")) {
    const Json& list = c.json()["attn_type_list"];
    if (!list.is_array() || static_cast<std::int64_t>(list.size()) != a.layers) {
      throw InputError(c.field("attn_type_list"),
                       "expected a list of one entry per layer (" + std::to_string(a.layers) + ", num_hidden_layers)");
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!(list[i].is_number_integer() && list[i].get<std::int64_t>() == 1)) {
        throw InputError(index(c.field("attn_type_list"), i),
                         "expected 1 (full attention); MiniMax-M2 builds no other kind (0, MiniMax-Text-01's "
                         "lightning attention, is not modelled)");
      }
    }
  }
  const std::int64_t mtp = c.flag("use_mtp", false) ? c.opt({"num_mtp_modules"}, 0, 0, kMaxDepth) : 0;
  if (mtp > 0) {
    warnings.push_back("num_mtp_modules " + std::to_string(mtp) +
                       ": transformers builds no multi-token-prediction module, so neither its parameters nor its "
                       "training work are counted");
  }
  if (c.opt({"shared_intermediate_size"}, 0, 0, kMaxInner) > 0) {
    warnings.push_back("shared_intermediate_size is not read by transformers' MiniMaxM2 (no shared expert is built)");
  }
  all_moe_layers(c, a, warnings);
}

// ---- parts ----------------------------------------------------------------------------------------------

/// rope_scaling read and checked (no parameters).
const Steps kRope = {hook(check_rope_scaling)};

/// GLM (modeling_glm.py, modeling_glm4.py, modeling_glm4_moe.py): q, k and v biased by attention_bias, o_proj
/// never; a fused gate_up_proj (the same weights as gate and up); partial rotary.
const Steps kGlmAttention = {fix(&Arch::out_bias, false), hook(partial_rotary)};
const Step kGlmQkvBias = flag(&Arch::qkv_bias, "attention_bias", true);
const Step kGlmHeadDim = opt(&Arch::head_dim, {"head_dim"}, 128, 1, kMaxWidth);
const Step kLongPositions = opt(&Arch::max_positions, {"max_position_embeddings"}, 131072, 1, kMaxPositions);

/// GLM-4 (Glm4DecoderLayer): norms before and after both attention and MLP.
const Steps kGlm4Sandwich = {fix(&Arch::norm_after, true)};

/// GLM-4.5 / 4.6 (Glm4MoeConfig): the first first_k_dense_replace layers dense, the others n_routed_experts of
/// moe_intermediate_size, num_experts_per_tok each, and n_shared_experts shared; the router has no bias (its
/// e_score_correction_bias is a buffer); num_nextn_predict_layers is not built by transformers (a warning).
const Steps kGlm4MoeExperts = {
    hook(glm_qk_norm),
    opt(&Arch::experts, {"n_routed_experts"}, 128, 1, 1 << 16),
    opt(&Arch::top_k, {"num_experts_per_tok"}, 8, 1, of(&Arch::experts)),
    opt(&Arch::moe_inner, {"moe_intermediate_size"}, 1408, 1, kMaxInner),
    hook(glm4_moe_layers),
};

/// Seed-OSS (modeling_seed_oss.py): q, k, v biased by attention_bias (true), o_proj by attention_out_bias
/// (false), head_dim 128, residual_dropout on both branches and attention_dropout 0.1 by default.
const Steps kSeedOss = {flag(&Arch::out_bias, "attention_out_bias", false),
                        rate(&Arch::dropout, {"residual_dropout"}, 0.1)};
const Step kSeedAttnDropout = rate(&Arch::attn_dropout, {"attention_dropout"}, 0.1);

/// SmolLM3: the Llama block, tied by default, NoPE layers.
const Steps kSmolLM3 = {hook(smollm3_layers)};
/// OLMo 3 (modeling_olmo3.py): OLMo 2's block (kOlmo2) with its sliding layers.
const Steps kOlmo3 = {hook(olmo3_layers)};
const Step kTied = flag(&Arch::tied, "tie_word_embeddings", true);

/// EXAONE 4.0 (Exaone4Attention, Olmo2DecoderLayer): no biases, per-head QK-norm, norms after attention and MLP
/// instead of before.
const Steps kExaone4 = {fix(&Arch::qkv_bias, false),    fix(&Arch::out_bias, false),  fix(&Arch::qk_norm, "head"),
                        fix(&Arch::norm_before, false), fix(&Arch::norm_after, true), hook(exaone4_layers)};

/// Cohere2: Cohere's parallel block (LayerNorm without bias, tied head) without QK-norm, and its layer pattern.
const Steps kCohere2 = {fix(&Arch::rms, false), fix(&Arch::norm_bias, false), fix(&Arch::parallel, true),
                        hook(cohere2_layers)};

/// OLMoE (modeling_olmoe.py): RMSNorm over the whole q and k projections; every layer num_experts SwiGLU experts
/// of intermediate_size, num_experts_per_tok each, router without bias.
const Steps kOlmoe = {
    fix(&Arch::qk_norm, "full"),
    opt(&Arch::experts, {"num_experts"}, 64, 1, 1 << 16),
    opt(&Arch::top_k, {"num_experts_per_tok"}, 8, 1, of(&Arch::experts)),
    hook(all_moe_layers),
    hook(olmoe_clip_qkv),
};
const Step kOlmoePositions = opt(&Arch::max_positions, {"max_position_embeddings"}, 4096, 1, kMaxPositions);

/// ERNIE 4.5 dense (modeling_ernie4_5.py): every projection, attention and MLP, biased by use_bias (false), no
/// attention dropout (Ernie4_5Attention sets it to 0), head_dim 128, tied by default; its rotary interleaving adds
/// nothing.
const Steps kErnie = {flag({&Arch::qkv_bias, &Arch::out_bias, &Arch::mlp_bias}, "use_bias", false)};
const Step kNoAttnDropout = rate(&Arch::attn_dropout, {}, 0.0);

/// ERNIE 4.5 MoE (modular_ernie4_5_moe.py, read at commit 01187e21cda1): ERNIE 4.5's attention and projections,
/// every one (the LM head too) biased by use_bias (false), a dense SwiGLU of intermediate_size outside the expert
/// layers, and in them a bias-free router, moe_num_experts SwiGLU experts of moe_intermediate_size, top moe_k, beside
/// the shared experts (ernie_moe_layers); Ernie4_5_MoeConfig's defaults. Its multi-token-prediction weights are not
/// built by transformers ("mtp" is ignored on load).
const Steps kErnieMoe = {
    flag({&Arch::qkv_bias, &Arch::out_bias, &Arch::mlp_bias, &Arch::head_bias}, "use_bias", false),
    opt(&Arch::experts, {"moe_num_experts", "num_experts"}, 64, 1, 1 << 16),
    opt(&Arch::top_k, {"moe_k", "num_experts_per_tok"}, 6, 1, of(&Arch::experts)),
    opt(&Arch::moe_inner, {"moe_intermediate_size"}, 1536, 1, kMaxInner),
    hook(ernie_moe_layers),
};

/// Hunyuan dense (modeling_hunyuan_v1_dense.py): the Llama block whose attention always has RMSNorms of head_dim on
/// q and k (query_layernorm, key_layernorm, after the rotary; use_qk_norm is not read), and an MLP never biased.
const Steps kHunyuanDense = {fix(&Arch::qk_norm, "head"), fix(&Arch::mlp_bias, false)};

/// MiniMax-M2 (modular_minimax_m2.py, read at commit 001f85b38fb4): Mixtral's sparse block in every layer
/// (num_local_experts SwiGLU experts of intermediate_size, top num_experts_per_tok, a bias-free router; its
/// e_score_correction_bias is a buffer) under FlexOlmo's attention (no biases, head_dim from the config, RMSNorm over
/// the whole q and k projections) with partial rotary positions; MiniMaxM2Config's defaults.
const Steps kMinimaxM2 = {
    fix(&Arch::qkv_bias, false),
    fix(&Arch::out_bias, false),
    fix(&Arch::qk_norm, "full"),
    opt(&Arch::experts, {"num_local_experts", "num_experts"}, 256, 1, 1 << 16),
    opt(&Arch::top_k, {"num_experts_per_tok"}, 8, 1, of(&Arch::experts)),
    hook(minimax_rotary),
    hook(minimax_layers),
};
const Steps kMinimaxM2Defaults = {
    opt(&Arch::head_dim, {"head_dim"}, 128, 1, kMaxWidth),
    opt(&Arch::kv_heads, {"num_key_value_heads"}, capped(8, &Arch::heads), 1, of(&Arch::heads)),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 196608, 1, kMaxPositions),
};

/// StarCoder (modeling_gpt_bigcode.py): GPT-2's block with multi-query attention and a tanh-GELU MLP.
const Steps kBigcode = {hook(&Arch::kv_heads, bigcode_kv_heads)};
const Step kBigcodeAct = act({"activation_function"}, "gelu_pytorch_tanh");
const Step kBigcodePositions =
    opt(&Arch::max_positions, {"n_positions", "max_position_embeddings"}, 1024, 1, kMaxPositions);

}  // namespace

const std::vector<ModelType>& recent_model_types() {
  static const std::vector<ModelType> rows = {
      {"glm", kDecoder,
       compose({kDecoderCore, kLlama, kRope, kGlmAttention}, {kGlmQkvBias, kGlmHeadDim, kLongPositions})},
      {"glm4", kDecoder,
       compose({kDecoderCore, kLlama, kRope, kGlmAttention, kGlm4Sandwich},
               {kGlmQkvBias, kGlmHeadDim, kLongPositions})},
      {"glm4_moe", kDecoder,
       compose({kDecoderCore, kLlama, kRope, kGlmAttention, kGlm4MoeExperts},
               {flag(&Arch::qkv_bias, "attention_bias", false), kLongPositions})},
      {"seed_oss", kDecoder,
       compose({kDecoderCore, kLlama, kRope, kSeedOss},
               {flag(&Arch::qkv_bias, "attention_bias", true), kGlmHeadDim, kSeedAttnDropout,
                opt(&Arch::max_positions, {"max_position_embeddings"}, 524288, 1, kMaxPositions)})},
      {"smollm3", kDecoder,
       compose({kDecoderCore, kLlama, kRope, kSmolLM3},
               {kTied, opt(&Arch::max_positions, {"max_position_embeddings"}, 32768, 1, kMaxPositions)})},
      {"exaone4", kDecoder, compose({kDecoderCore, kLlama, kRope, kExaone4})},
      {"cohere2", kDecoder,
       compose({kDecoderCore, kLlama, kRope, kCohere2},
               {kTied, opt(&Arch::max_positions, {"max_position_embeddings"}, 8192, 1, kMaxPositions)})},
      {"ernie4_5", kDecoder,
       compose({kDecoderCore, kLlama, kRope, kErnie}, {kGlmHeadDim, kTied, kNoAttnDropout, kLongPositions})},
      {"ernie4_5_moe", kDecoder,
       compose({kDecoderCore, kLlama, kRope, kErnieMoe}, {kTied, kNoAttnDropout, kLongPositions})},
      {"hunyuan_v1_dense", kDecoder, compose({kDecoderCore, kLlama, kRope, kHunyuanDense})},
      {"olmoe", kDecoder, compose({kDecoderCore, kLlama, kRope, kOlmoe}, {kOlmoePositions})},
      {"olmo3", kDecoder, compose({kDecoderCore, kLlama, kRope, kOlmo2, kOlmo3})},
      {"minimax_m2", kDecoder, compose({kDecoderCore, kLlama, kRope, kMinimaxM2}, kMinimaxM2Defaults)},
      {"gpt_bigcode", kDecoder, compose({kDecoderCore, kGpt2, kBigcode}, {kBigcodeAct, kBigcodePositions})},
      {"deepseek_v32", kDecoder, {hook(refuse_sparse_attention)}},
      {"glm_moe_dsa", kDecoder, {hook(refuse_sparse_attention)}},
  };
  return rows;
}

}  // namespace prenet::hf
