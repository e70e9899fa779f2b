// State-space models and hybrids: Mamba, Mamba-2, Jamba.
// One row per model_type; see model_types.cpp for how to add one. The rows read what every decoder has (sizes,
// vocabulary, tied head, Jamba's attention and MLP); the mixer's own fields (state size, convolution, expand,
// time-step rank, heads and groups, biases) are read by the builder (ssm.cpp), one spelling per model_type.
#include "model/hf/parts.hpp"
#include "model/hf/quirks.hpp"

namespace prenet::hf {

namespace {

/// The family: embeddings, a stack of mixers (and, in Jamba, attention and MLPs), a final RMSNorm, the LM head.
constexpr Family kSsm{build_ssm, false};

/// What every state-space model has: the sizes, the vocabulary, RMSNorms and no position table.
const Steps kSsmCore = {
    need(&Arch::hidden, {"hidden_size"}, 1, kMaxWidth),
    need(&Arch::layers, {"num_hidden_layers"}, 1, kMaxDepth),
    need(&Arch::vocab, {"vocab_size"}, 1, kMaxVocab),
    act({"hidden_act"}, "silu"),
    fix(&Arch::rms, true),
    fix(&Arch::learned_positions, false),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 0, 1, kMaxPositions),
};

/// MambaConfig and FalconMambaConfig tie the LM head to the embeddings by default.
const Step kTiedByDefault = flag(&Arch::tied, "tie_word_embeddings", true);
/// Mamba2Config and JambaConfig do not.
const Step kUntiedByDefault = flag(&Arch::tied, "tie_word_embeddings", false);

/// JambaConfig's KV heads: 8 when absent, the attention heads when null (its "backward compatibility").
void jamba_kv_heads(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  bool null = c.json().contains("num_key_value_heads") && c.json()["num_key_value_heads"].is_null();
  a.kv_heads = null ? a.heads : c.opt({"num_key_value_heads"}, 8, 1, a.heads);
}

/// Jamba's attention layers and MLPs (JambaConfig's defaults); top-k is checked against the experts by the
/// builder, since a dense model (num_experts 1) keeps the default num_experts_per_tok of 2.
const Steps kJambaBlocks = {
    opt(&Arch::heads, {"num_attention_heads"}, 32, 1, kMaxWidth),
    hook(&Arch::kv_heads, jamba_kv_heads),
    opt(&Arch::inner, {"intermediate_size"}, 14336, 1, kMaxInner),
    fix(&Arch::gated, true),
    opt(&Arch::experts, {"num_experts"}, 16, 1, 1 << 16),
    opt(&Arch::top_k, {"num_experts_per_tok"}, 2, 1, 1 << 16),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
};

}  // namespace

const std::vector<ModelType>& ssm_model_types() {
  static const std::vector<ModelType> rows = {
      {"mamba", kSsm, compose({kSsmCore, {kTiedByDefault}})},
      {"falcon_mamba", kSsm, compose({kSsmCore, {kTiedByDefault}})},
      {"mamba2", kSsm, compose({kSsmCore, {kUntiedByDefault}})},
      {"jamba", kSsm, compose({kSsmCore, {kUntiedByDefault}, kJambaBlocks})},
  };
  return rows;
}

}  // namespace prenet::hf
