// Qwen3-Next and Qwen3.5 (its text models, dense and MoE, and the multimodal wrappers of the releases, wrappers.cpp):
// decoders whose layers are Gated DeltaNet mixers (linear_attention) with a gated full attention every few layers. One
// row per model_type; see model_types.cpp for how to add one. Read from transformers' Qwen3NextConfig
// (configuration_qwen3_next.py, commit 008e574391), and Qwen3_5TextConfig / Qwen3_5MoeTextConfig (modular_qwen3_5.py,
// modular_qwen3_5_moe.py), whose defaults are below; the modules are Qwen3NextGatedDeltaNet, Qwen3_5GatedDeltaNet and
// Qwen3NextAttention (modular_qwen3_next.py).
#include <string>
#include <vector>

#include "model/hf/decoder_hooks.hpp"
#include "model/hf/parts.hpp"
#include "model/hf/quirks.hpp"

namespace prenet::hf {
namespace {

constexpr Family kQwen35Wrapper{build_qwen3_5, false};
constexpr Family kQwen35MoeWrapper{build_qwen3_5_moe, false};

/// Each layer's mixer from layer_types ("linear_attention" or "full_attention"), else every
/// full_attention_interval-th layer full (Qwen3NextConfig.__post_init__: interval 4).
void qwen_next_mixers(const Cfg& c, Arch& a, std::vector<std::string>&) {
  ensure_plan(a);
  const std::string key = "layer_types";
  if (!c.has(key)) {
    const std::int64_t interval = c.opt({"full_attention_interval"}, 4, 1, kMaxDepth);
    for (std::size_t i = 0; i < a.plan.size(); ++i) a.plan[i].linear = (static_cast<std::int64_t>(i) + 1) % interval;
    return;
  }
  const Json& list = c.json()[key];
  if (!list.is_array() || static_cast<std::int64_t>(list.size()) != a.layers) {
    throw InputError(c.field(key), "expected a list of one entry per layer (" + std::to_string(a.layers) +
                                       ", num_hidden_layers) of \"linear_attention\" or \"full_attention\"");
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string type = list[i].is_string() ? list[i].get<std::string>() : "";
    if (type != "linear_attention" && type != "full_attention") {
      throw InputError(index(c.field(key), i), "expected \"linear_attention\" or \"full_attention\"");
    }
    a.plan[i].linear = type == "linear_attention";
  }
}

/// The Gated DeltaNet's heads: each key head serves linear_num_value_heads / linear_num_key_heads value heads
/// (the query and key heads are repeated to the value heads), so the key heads must divide the value heads.
void check_delta_heads(const Cfg& c, Arch& a, std::vector<std::string>&) {
  if (a.delta_value_heads % a.delta_key_heads != 0) {
    throw InputError(c.field("linear_num_value_heads"),
                     "must be a multiple of linear_num_key_heads (" + std::to_string(a.delta_key_heads) + ")");
  }
}

/// The rotated share of each attention head: partial_rotary_factor at the top level or in rope_parameters
/// (Qwen3.5's, beside its mrope sections, which only reorder the rotation), else 0.25.
void qwen_next_rotary(const Cfg& c, Arch& a, std::vector<std::string>&) {
  const Json& rope = c.json().contains("rope_parameters") ? c.json()["rope_parameters"] : Json();
  if (!c.has("partial_rotary_factor") && rope.is_object() && rope.contains("partial_rotary_factor") &&
      !rope["partial_rotary_factor"].is_null()) {
    rotary_share(Cfg(rope, c.field("rope_parameters")), a, "partial_rotary_factor", 0.25);
    return;
  }
  rotary_share(c, a, "partial_rotary_factor", 0.25);
}

/// Qwen3NextAttention always projects the output gate with q (q_proj twice the queries' width), whatever
/// attn_output_gate says; the multi-token-prediction layers (mtp_num_hidden_layers) are not built by transformers
/// (_keys_to_ignore_on_load_unexpected "^mtp.*"), so counted only under training.mtp_layers. Each a warning.
void qwen_next_extras(const Cfg& c, Arch&, std::vector<std::string>& warnings) {
  if (c.has("attn_output_gate") && !c.flag("attn_output_gate", true)) {
    warnings.push_back(
        "attn_output_gate false: transformers' Qwen3NextAttention gates the attention output "
        "regardless, so the gate is costed");
  }
  const std::int64_t mtp = c.opt({"mtp_num_hidden_layers", "num_nextn_predict_layers"}, 0, 0, kMaxDepth);
  if (mtp > 0) {
    warnings.push_back("mtp_num_hidden_layers " + std::to_string(mtp) +
                       ": transformers builds no multi-token-prediction layer, so it is counted only when "
                       "training.mtp_layers asks for it (then as the checkpoints hold it: the last layer repeated "
                       "after its projection of embedding and hidden state)");
  }
}

/// What every row shares: Qwen3NextConfig's attention (16 heads, 2 key/value heads of 256, per-head QK-norm, the
/// output gate, partial rotary) and Gated DeltaNet (16 key heads and 32 value heads of 128, a 4-tap convolution).
const Steps kQwenNextCore = {
    fix(&Arch::qk_norm, "head"),
    fix(&Arch::attn_output_gate, true),
    hook(qwen_next_rotary),
    opt(&Arch::delta_key_heads, {"linear_num_key_heads"}, 16, 1, kMaxWidth),
    opt(&Arch::delta_value_heads, {"linear_num_value_heads"}, 32, 1, kMaxWidth),
    opt(&Arch::delta_key_dim, {"linear_key_head_dim"}, 128, 1, kMaxWidth),
    opt(&Arch::delta_value_dim, {"linear_value_head_dim"}, 128, 1, kMaxWidth),
    opt(&Arch::delta_conv, {"linear_conv_kernel_dim"}, 4, 1, 1 << 10),
    hook(check_delta_heads),
    hook(qwen_next_mixers),
    hook(qwen_next_extras),
};

/// Qwen3NextSparseMoeBlock: a bias-free router over num_experts SwiGLU experts of moe_intermediate_size, top
/// num_experts_per_tok, beside one shared expert of shared_expert_intermediate_size behind a sigmoid gate.
const Steps kQwenNextExperts = {
    opt(&Arch::experts, {"num_experts"}, 512, 1, 1 << 16),
    opt(&Arch::top_k, {"num_experts_per_tok"}, 10, 1, of(&Arch::experts)),
    opt(&Arch::moe_inner, {"moe_intermediate_size"}, 512, 1, kMaxInner),
    opt(&Arch::shared_inner, {"shared_expert_intermediate_size"}, 512, 1, kMaxInner),
    fix(&Arch::shared_gate, true),
};

/// Qwen3.5's input projections: in_proj_qkv, in_proj_z, in_proj_b and in_proj_a (the same weights as Qwen3-Next's
/// in_proj_qkvz and in_proj_ba, four GEMMs).
const Step kSplitProjections = fix(&Arch::delta_split, true);

/// Llama's block (kLlama) with the dense MLP's width optional: Qwen3_5MoeTextConfig has no intermediate_size, and in
/// the other two a published config always gives it.
Steps llama_block(std::int64_t inner) {
  Steps out;
  for (const Step& s : kLlama)
    out.push_back(s.size == &Arch::inner ? opt(&Arch::inner, {"intermediate_size"}, inner, 1, kMaxInner) : s);
  return out;
}

const Step kPositions32k = opt(&Arch::max_positions, {"max_position_embeddings"}, 32768, 1, kMaxPositions);
const Step kHeadDim256 = opt(&Arch::head_dim, {"head_dim"}, 256, 1, kMaxWidth);
const Step kTwoKvHeads = opt(&Arch::kv_heads, {"num_key_value_heads"}, capped(2, &Arch::heads), 1, of(&Arch::heads));

}  // namespace

const std::vector<ModelType>& qwen_next_model_types() {
  static const std::vector<ModelType> rows = {
      {"qwen3_next", kDecoder,
       compose({kDecoderCore,
                llama_block(5632),
                {hook(check_rope_scaling)},
                kQwenNextCore,
                kQwenNextExperts,
                {hook(qwen_moe_layers)}},
               {kTwoKvHeads, kHeadDim256, kPositions32k})},
      {"qwen3_5_text", kDecoder,
       compose({kDecoderCore, llama_block(12288), {hook(check_rope_scaling)}, kQwenNextCore, {kSplitProjections}},
               {opt(&Arch::kv_heads, {"num_key_value_heads"}, capped(4, &Arch::heads), 1, of(&Arch::heads)),
                kHeadDim256, kPositions32k})},
      {"qwen3_5_moe_text", kDecoder,
       compose({kDecoderCore,
                llama_block(512),
                {hook(check_rope_scaling)},
                kQwenNextCore,
                {kSplitProjections},
                kQwenNextExperts,
                {hook(all_moe_layers)}},
               {opt(&Arch::experts, {"num_experts"}, 256, 1, 1 << 16),
                opt(&Arch::top_k, {"num_experts_per_tok"}, 8, 1, of(&Arch::experts)), kTwoKvHeads, kHeadDim256,
                kPositions32k})},
      {"qwen3_5", kQwen35Wrapper, {}},
      {"qwen3_5_moe", kQwen35MoeWrapper, {}},
  };
  return rows;
}

}  // namespace prenet::hf
