// The 2024–2026 decoders: Qwen3, DeepSeek, gpt-oss, Gemma 2/3, Llama 4 and relatives (MoE, MLA, layer patterns).
// One row per model_type; see model_types.cpp for how to add one. What varies between layers (sliding, chunked
// or full attention, dense or routed MLP) is Arch::plan, filled by the hooks of decoder_hooks.cpp.
#include "model/hf/decoder_hooks.hpp"
#include "model/hf/parts.hpp"
#include "model/hf/quirks.hpp"

namespace prenet::hf {
namespace {

/// rope_scaling read and checked (no parameters).
const Steps kRopeScaling = {hook(check_rope_scaling)};

/// Mistral: a sliding window on every layer (4096 unless the config says otherwise, null: none).
const Steps kMistralWindow = {hook(&Arch::window, mistral_window)};
/// Mixtral: a sliding window when the config sets one.
const Steps kOptionalWindow = {hook(&Arch::window, optional_window)};

/// Qwen3: per-head RMSNorm on q and k, head_dim (default 128), sliding windows from max_window_layers on.
const Steps kQwen3 = {fix(&Arch::qk_norm, "head"), hook(qwen_layer_windows)};
const Step kQwen3HeadDim = opt(&Arch::head_dim, {"head_dim"}, 128, 1, kMaxWidth);

/// Qwen-MoE's experts: num_experts of moe_intermediate_size, num_experts_per_tok each, sparse layers by
/// decoder_sparse_step and mlp_only_layers (norm_topk_prob only rescales the routing weights).
const Steps kQwenExperts = {
    opt(&Arch::experts, {"num_experts", "num_local_experts"}, 128, 0, 1 << 16),
    opt(&Arch::top_k, {"num_experts_per_tok"}, 8, 1, of(&Arch::experts)),
    opt(&Arch::moe_inner, {"moe_intermediate_size"}, 768, 1, kMaxInner),
    hook(qwen_moe_layers),
};

/// Qwen2-MoE: 60 experts, top-4, and a shared expert of shared_expert_intermediate_size behind a sigmoid gate.
const Steps kQwen2MoeDefaults = {
    opt(&Arch::experts, {"num_experts", "num_local_experts"}, 60, 0, 1 << 16),
    opt(&Arch::top_k, {"num_experts_per_tok"}, 4, 1, of(&Arch::experts)),
    opt(&Arch::moe_inner, {"moe_intermediate_size"}, 1408, 1, kMaxInner),
};
const Steps kQwen2SharedExpert = {
    opt(&Arch::shared_inner, {"shared_expert_intermediate_size"}, 5632, 1, kMaxInner),
    fix(&Arch::shared_gate, true),
};

/// DeepSeek-V2/V3: latent attention, routed experts (n_routed_experts of moe_intermediate_size, top
/// num_experts_per_tok) with n_shared_experts shared ones, the first first_k_dense_replace layers dense.
const Steps kDeepseekLatent = {hook(deepseek_latent_attention)};
const Steps kDeepseekV3Experts = {
    opt(&Arch::experts, {"n_routed_experts", "num_local_experts"}, 256, 1, 1 << 16),
    opt(&Arch::top_k, {"num_experts_per_tok"}, 8, 1, of(&Arch::experts)),
    opt(&Arch::moe_inner, {"moe_intermediate_size"}, 2048, 1, kMaxInner),
    hook(deepseek_v3_moe_layers),
};
const Steps kDeepseekV2Experts = {
    need(&Arch::experts, {"n_routed_experts"}, 1, 1 << 16),
    need(&Arch::top_k, {"num_experts_per_tok"}, 1, of(&Arch::experts)),
    opt(&Arch::moe_inner, {"moe_intermediate_size"}, 1407, 1, kMaxInner),
    hook(deepseek_v2_moe_layers),
};

/// gpt-oss: every layer routes (num_local_experts, experts and router with biases), attention with biases and
/// a sink logit per head, sliding and full layers alternating (layer_types, sliding_window).
const Steps kGptOss = {
    opt(&Arch::head_dim, {"head_dim"}, 64, 1, kMaxWidth),
    opt(&Arch::experts, {"num_local_experts"}, 128, 1, 1 << 16),
    opt(&Arch::top_k, {"num_experts_per_tok", "experts_per_token"}, 4, 1, of(&Arch::experts)),
    flag({&Arch::qkv_bias, &Arch::out_bias}, "attention_bias", true),
    fix(&Arch::expert_bias, true),
    fix(&Arch::router_bias, true),
    fix(&Arch::sinks, true),
    hook(alternating_windows),
    hook(all_moe_layers),
    hook(gpt_oss_activation),
};

/// Gemma 2 and 3: head_dim 256, sandwich norms (before and after attention and MLP).
const Steps kGemmaSandwich = {fix(&Arch::norm_after, true)};
const Step kGemmaHeadDim = opt(&Arch::head_dim, {"head_dim"}, 256, 1, kMaxWidth);
const Steps kGemma2 = {hook(gemma2_softcaps), hook(alternating_windows)};
/// Gemma 3: per-head QK-norm, one full layer in sliding_window_pattern (rope_local_base_freq: no parameters).
const Steps kGemma3 = {fix(&Arch::qk_norm, "head"), hook(gemma3_softcaps), hook(gemma3_windows)};

/// Llama 4's text model: top-1 of 16 experts plus a shared expert (both intermediate_size), dense layers of
/// intermediate_size_mlp, NoPE layers every fourth, the others chunked; the weightless QK-norm.
const Steps kLlama4 = {
    opt(&Arch::head_dim, {"head_dim"}, 128, 1, kMaxWidth),
    opt(&Arch::experts, {"num_local_experts"}, 16, 1, 1 << 16),
    opt(&Arch::top_k, {"num_experts_per_tok"}, 1, 1, of(&Arch::experts)),
    fix(&Arch::moe_inner, of(&Arch::inner)),
    fix(&Arch::shared_inner, of(&Arch::inner)),
    hook(llama4_qk_norm),
    hook(llama4_layers),
};

/// Cohere (Command R): LayerNorm without bias feeding attention and MLP in parallel, tied head, use_qk_norm
/// (logit_scale only scales the logits).
const Steps kCohere = {fix(&Arch::rms, false), fix(&Arch::norm_bias, false), fix(&Arch::parallel, true),
                       hook(cohere_qk_norm)};
const Step kTiedByDefault = flag(&Arch::tied, "tie_word_embeddings", true);

/// Starcoder2: LayerNorm with bias, an ungated MLP (c_fc, c_proj), biases everywhere (use_bias), rotary,
/// tied head, sliding_window.
const Steps kStarcoder2 = {
    opt(&Arch::kv_heads, {"num_key_value_heads"}, of(&Arch::heads), 1, of(&Arch::heads)),
    need(&Arch::inner, {"intermediate_size"}, 1, kMaxInner),
    act({"hidden_act"}, "gelu_pytorch_tanh"),
    flag({&Arch::qkv_bias, &Arch::out_bias, &Arch::mlp_bias}, "use_bias", true),
    flag(&Arch::tied, "tie_word_embeddings", true),
    rate(&Arch::dropout, {"residual_dropout"}, 0.0),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
    rate(&Arch::embed_dropout, {"embedding_dropout"}, 0.0),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 4096, 1, kMaxPositions),
    fix(&Arch::learned_positions, false),
    hook(&Arch::window, optional_window),
};

/// GraniteMoE: every layer routes to num_local_experts SwiGLU experts (no shared one); the granite multipliers
/// (embedding, attention, residual, logits) scale activations only.
const Steps kGraniteMoe = {
    opt(&Arch::experts, {"num_local_experts"}, 8, 1, 1 << 16),
    opt(&Arch::top_k, {"num_experts_per_tok"}, 2, 1, of(&Arch::experts)),
    hook(all_moe_layers),
};

/// DBRX: d_model, n_layers, n_heads, and attn_config / ffn_config; LayerNorm without bias, no biases,
/// every layer a mixture of GLU experts.
const Steps kDbrx = {
    need(&Arch::hidden, {"d_model"}, 1, kMaxWidth),
    need(&Arch::layers, {"n_layers"}, 1, kMaxDepth),
    head_count({"n_heads"}),
    need(&Arch::vocab, {"vocab_size"}, 1, kMaxVocab),
    hook(dbrx_nested),
    fix(&Arch::gated, true),
    fix(&Arch::norm_bias, false),
    fix(&Arch::qkv_bias, false),
    fix(&Arch::out_bias, false),
    fix(&Arch::mlp_bias, false),
    flag(&Arch::tied, "tie_word_embeddings", false),
    opt(&Arch::max_positions, {"max_seq_len"}, 2048, 1, kMaxPositions),
    fix(&Arch::learned_positions, false),
    hook(all_moe_layers),
};

const std::vector<ModelType> kRows = {
    {"llama", kDecoder, compose({kDecoderCore, kLlama, kRopeScaling})},
    {"mistral", kDecoder, compose({kDecoderCore, kLlama, kRopeScaling, kMistralWindow}, {kEightKvHeads})},
    {"mixtral", kDecoder,
     compose({kDecoderCore, kLlama, kMixtralExperts, kRopeScaling, kOptionalWindow}, {kEightKvHeads})},
    {"qwen3", kDecoder, compose({kDecoderCore, kLlama, kRopeScaling, kQwen3}, {kQwen3HeadDim})},
    {"qwen3_moe", kDecoder,
     compose(
         {kDecoderCore, kLlama, kRopeScaling, {fix(&Arch::qk_norm, "head"), hook(qwen_all_windows)}, kQwenExperts})},
    // Qwen3-VL's text models (Qwen3VLTextConfig, Qwen3VLMoeTextConfig in transformers' configuration_qwen3_vl.py and
    // configuration_qwen3_vl_moe.py): Qwen3's and Qwen3-MoE's layers with their own defaults; the interleaved mrope
    // sections only reorder the rotation.
    {"qwen3_vl_text", kDecoder,
     compose({kDecoderCore, kLlama, kRopeScaling, kQwen3},
             {kQwen3HeadDim, opt(&Arch::max_positions, {"max_position_embeddings"}, 128000, 1, kMaxPositions)})},
    {"qwen3_vl_moe_text", kDecoder,
     compose({kDecoderCore, kLlama, kRopeScaling, {fix(&Arch::qk_norm, "head"), hook(qwen_all_windows)}, kQwenExperts},
             {flag(&Arch::tied, "tie_word_embeddings", true),
              opt(&Arch::max_positions, {"max_position_embeddings"}, 128000, 1, kMaxPositions),
              opt(&Arch::experts, {"num_experts"}, 60, 0, 1 << 16),
              opt(&Arch::top_k, {"num_experts_per_tok"}, 4, 1, of(&Arch::experts)),
              opt(&Arch::moe_inner, {"moe_intermediate_size"}, 1408, 1, kMaxInner)})},
    {"qwen2_moe", kDecoder,
     compose(
         {kDecoderCore, kLlama, kQkvBias, kRopeScaling, {hook(qwen_layer_windows)}, kQwenExperts, kQwen2SharedExpert},
         kQwen2MoeDefaults)},
    {"deepseek_v2", kDecoder, compose({kDecoderCore, kLlama, kRopeScaling, kDeepseekLatent, kDeepseekV2Experts})},
    {"deepseek_v3", kDecoder, compose({kDecoderCore, kLlama, kRopeScaling, kDeepseekLatent, kDeepseekV3Experts})},
    {"gpt_oss", kDecoder, compose({kDecoderCore, kLlama, kRopeScaling, kGptOss})},
    {"gemma2", kDecoder,
     compose({kDecoderCore, kLlama, kGemmaSandwich, kGemma2}, {kGemma[0], kGemma[1], kGemmaHeadDim})},
    {"gemma3_text", kDecoder,
     compose({kDecoderCore, kLlama, kRopeScaling, kGemmaSandwich, kGemma3}, {kGemma[0], kGemma[1], kGemmaHeadDim})},
    {"llama4_text", kDecoder, compose({kDecoderCore, kLlama, kRopeScaling, kLlama4})},
    {"olmo2", kDecoder, compose({kDecoderCore, kLlama, kRopeScaling, kOlmo2})},
    {"cohere", kDecoder, compose({kDecoderCore, kLlama, kRopeScaling, kCohere}, {kTiedByDefault})},
    {"starcoder2", kDecoder, compose({kDecoderCore, kStarcoder2, kRopeScaling})},
    {"granitemoe", kDecoder, compose({kDecoderCore, kLlama, kRopeScaling, kGraniteMoe})},
    {"dbrx", kDecoder, compose({kDbrx, kRopeScaling})},
};

}  // namespace

const std::vector<ModelType>& decoder_model_types() { return kRows; }

}  // namespace prenet::hf
