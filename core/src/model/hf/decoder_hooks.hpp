#pragma once
// The reads of the 2024-2026 decoders (types_decoder.cpp) that are more than field renaming: which layers slide,
// chunk or route to experts, DeepSeek's latent attention, the nested DBRX config. Each has the signature of
// `Hook` (steps.hpp) and fills Arch::plan where layers differ.
#include <string>
#include <vector>

#include "model/hf/arch.hpp"
#include "model/hf/config_reader.hpp"

namespace prenet::hf {

/// Fills a.plan with one dense, fully attending, rotary layer of width a.inner per layer when it is empty.
void ensure_plan(Arch& a);
/// rope_scaling (Llama 3.1/3.2's "llama3", YaRN, linear, dynamic, LongRoPE): checked, no parameters.
void check_rope_scaling(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Qwen's windows: sliding_window on the layers from max_window_layers on when use_sliding_window, or
/// layer_types.
void qwen_layer_windows(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Qwen-MoE's sparse layers: every decoder_sparse_step-th layer not in mlp_only_layers routes to the experts.
void qwen_moe_layers(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Sliding and full attention alternating from a sliding first layer (Gemma 2, gpt-oss), or layer_types.
void alternating_windows(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Gemma 3: one full layer after every sliding_window_pattern - 1 sliding ones, or layer_types.
void gemma3_windows(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Every layer routes to the experts (gpt-oss, Mixtral-style families whose every layer is sparse).
void all_moe_layers(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// ERNIE 4.5 MoE: experts in the layers i with (i + 1) % moe_layer_interval == 0 from moe_layer_start_index (1) to
/// moe_layer_end_index (-1: the last), beside moe_num_shared_experts (2) × moe_intermediate_size of shared experts.
void ernie_moe_layers(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// gpt-oss: its clamped SwiGLU, costed as SiLU-gated (a warning says so).
void gpt_oss_activation(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Gemma 2's soft-capping (attention 50, LM head 30 unless given; the head's is not costed: a warning says so).
void gemma2_softcaps(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Gemma 3's soft-capping (none unless given).
void gemma3_softcaps(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// DeepSeek's latent attention: q_lora_rank (null: one q projection), kv_lora_rank and the head widths.
void deepseek_latent_attention(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// DeepSeek's experts: the first first_k_dense_replace layers dense, the rest routed with shared experts;
/// moe_layer_freq, the group-limited routing and the multi-token-prediction layers as transformers reads them.
void deepseek_v2_moe_layers(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// The same with DeepSeek-V3's defaults (3 dense layers, 1 shared expert).
void deepseek_v3_moe_layers(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Llama 4's text stack: NoPE layers (no_rope_layers) with full attention, the others chunked
/// (attention_chunk_size); MoE layers (moe_layers, else every interleave_moe_layer_step-th), dense ones of
/// intermediate_size_mlp.
void llama4_layers(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Mistral: sliding_window on every layer (4096 when absent, null: full attention).
void mistral_window(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Mixtral, Starcoder2: sliding_window on every layer when set (absent or null: full attention).
void optional_window(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Qwen3-MoE: sliding_window on every layer when use_sliding_window (its config has no max_window_layers).
void qwen_all_windows(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Cohere: use_qk_norm's LayerNorms over (heads, head_dim), as many weights as a full-width QK-norm.
void cohere_qk_norm(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Llama 4: use_qk_norm's weightless L2 norm, in the rotary layers only.
void llama4_qk_norm(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// DBRX: the sizes under attn_config and ffn_config.
void dbrx_nested(const Cfg& c, Arch& a, std::vector<std::string>& warnings);

/// Each layer's span from layer_types when given, else from `fallback` (one "full_attention" or
/// "sliding_attention" per layer, sliding over `window`); fills Arch::plan (types_recent.cpp's patterns).
void read_layer_types(const Cfg& c, Arch& a, const std::vector<std::string>& fallback, std::int64_t window);
/// GLM-4.5's experts: DeepSeek-V3's reading with GLM4MoeConfig's defaults (1 dense layer, 1 shared expert).
void glm4_moe_layers(const Cfg& c, Arch& a, std::vector<std::string>& warnings);

}  // namespace prenet::hf
