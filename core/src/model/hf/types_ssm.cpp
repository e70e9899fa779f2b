// State-space models and hybrids: Mamba, Mamba-2, Jamba.
// One row per model_type; see model_types.cpp for how to add one. The rows read everything the builder (ssm.cpp)
// needs into the Arch (arch_ssm.hpp): the sizes every decoder has, the mixer's own fields (state size,
// convolution, width, time-step rank, heads and groups, biases) under each class's spelling and defaults, and
// Jamba's attention, MLP and layer pattern. The time-step limits and chunk size do not change the cost and are
// not read.
#include "model/hf/parts.hpp"
#include "model/hf/quirks.hpp"

namespace prenet::hf {

namespace {

/// The family: embeddings, a stack of mixers (and, in Jamba, attention and MLPs), a final RMSNorm, the LM head.
constexpr Family kSsm{build_ssm, false};

/// The Mamba kernels take SiLU only.
void silu_only(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  if (c.has("hidden_act") && a.act != "silu" && a.act != "swish") {
    throw InputError(
        c.field("hidden_act"),
        "the Mamba mixer is modelled with SiLU only (transformers' kernels take \"silu\"), got \"" + a.act + "\"");
  }
}

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

/// expand (spelled `key`) × hidden_size, as the mixers take their width.
std::int64_t expanded(const Cfg& c, const char* key, const Arch& a) {
  std::int64_t expand = c.opt({key}, 2, 1, 1 << 10);
  std::int64_t width = expand * a.hidden;
  if (width > kMaxInner) throw InputError(c.field(key), "expand × hidden_size is too large");
  return width;
}

/// Mamba (v1) mixers take intermediate_size when the config stores one (the configuration class sets it from
/// expand·hidden, then the stored attribute replaces it; tiiuae/falcon-mamba-7b stores expand 16 beside
/// intermediate_size 8192), else expand·hidden.
void mamba_inner(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  std::int64_t width = expanded(c, "expand", a);
  a.ssm_inner = c.opt({"intermediate_size"}, width, 1, kMaxInner);
  if (a.ssm_inner != width) {
    warnings.push_back("intermediate_size " + std::to_string(a.ssm_inner) +
                       " is the mixer's width, as transformers reads it; expand × hidden_size would give " +
                       std::to_string(width));
  }
}

/// Mamba2Mixer takes int(expand · hidden) itself.
void mamba2_inner(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  a.ssm_inner = expanded(c, "expand", a);
}

/// JambaMambaMixer: mamba_expand · hidden (intermediate_size is the MLP's).
void jamba_inner(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  a.ssm_inner = expanded(c, "mamba_expand", a);
}

/// The rank of the time-step projection spelled `key`: an integer, or "auto" for ceil(hidden / 16).
void read_dt_rank(const Cfg& c, const char* key, Arch& a) {
  std::int64_t automatic = (a.hidden + 15) / 16;
  a.ssm_dt_rank = automatic;
  if (!c.has(key)) return;
  const Json& v = c.json()[key];
  if (v.is_string()) {
    if (v.get<std::string>() == "auto") return;
    throw InputError(c.field(key), "expected an integer or \"auto\", got \"" + printable(v.get<std::string>()) + "\"");
  }
  a.ssm_dt_rank = c.opt({key}, automatic, 1, kMaxWidth);
}

void mamba_dt_rank(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  read_dt_rank(c, "time_step_rank", a);
}

void jamba_dt_rank(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  read_dt_rank(c, "mamba_dt_rank", a);
}

/// Mamba-2's heads and groups: num_heads × head_dim must be expand × hidden, and n_groups must divide the heads.
void mamba2_heads(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  a.ssm_heads = c.opt({"num_heads"}, 128, 1, kMaxWidth);
  a.ssm_head_dim = c.opt({"head_dim"}, 64, 1, kMaxWidth);
  if (a.ssm_heads * a.ssm_head_dim != a.ssm_inner) {
    throw InputError(c.field("num_heads"), "num_heads (" + std::to_string(a.ssm_heads) + ") × head_dim (" +
                                               std::to_string(a.ssm_head_dim) + ") must equal expand × hidden_size (" +
                                               std::to_string(a.ssm_inner) + ")");
  }
  a.ssm_groups = c.opt({"n_groups"}, 8, 1, kMaxWidth);
  if (a.ssm_heads % a.ssm_groups != 0) {
    throw InputError(c.field("n_groups"), "must divide num_heads (" + std::to_string(a.ssm_heads) + "), got " +
                                              std::to_string(a.ssm_groups));
  }
}

/// MambaConfig's mixer (FalconMambaConfig's too, but for its bias and norms).
const Steps kMambaMixer = {
    fix(&Arch::ssm_version, 1),
    opt(&Arch::ssm_state, {"state_size"}, 16, 1, 1 << 16),
    opt(&Arch::ssm_conv, {"conv_kernel"}, 4, 1, 1 << 16),
    hook(&Arch::ssm_inner, mamba_inner),
    flag(&Arch::ssm_bias, "use_bias", true),
    flag(&Arch::ssm_conv_bias, "use_conv_bias", true),
    hook(silu_only),
    hook(&Arch::ssm_dt_rank, mamba_dt_rank),
};

/// FalconMamba's mixer: no projection biases by default, and weightless RMS norms of B, C and dt.
const Steps kFalconMambaMixer = {fix(&Arch::ssm_inner_norms, "weightless")};
const Steps kFalconMambaOverrides = {flag(&Arch::ssm_bias, "use_bias", false)};

/// Mamba2Config's mixer.
const Steps kMamba2Mixer = {
    fix(&Arch::ssm_version, 2),
    opt(&Arch::ssm_state, {"state_size"}, 128, 1, 1 << 16),
    opt(&Arch::ssm_conv, {"conv_kernel"}, 4, 1, 1 << 16),
    hook(&Arch::ssm_inner, mamba2_inner),
    flag(&Arch::ssm_bias, "use_bias", false),
    flag(&Arch::ssm_conv_bias, "use_conv_bias", true),
    hook(silu_only),
    hook(&Arch::ssm_heads, mamba2_heads),
};

/// JambaConfig's KV heads: 8 when absent, the attention heads when null (its "backward compatibility").
void jamba_kv_heads(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  bool null = c.json().contains("num_key_value_heads") && c.json()["num_key_value_heads"].is_null();
  a.kv_heads = null ? a.heads : c.opt({"num_key_value_heads"}, 8, 1, a.heads);
}

/// Jamba's attention layers and MLPs (JambaConfig's defaults); top-k is checked against the experts with the
/// layer pattern, since a dense model (num_experts 1) keeps the default num_experts_per_tok of 2.
const Steps kJambaBlocks = {
    opt(&Arch::heads, {"num_attention_heads"}, 32, 1, kMaxWidth),
    hook(&Arch::kv_heads, jamba_kv_heads),
    opt(&Arch::inner, {"intermediate_size"}, 14336, 1, kMaxInner),
    fix(&Arch::gated, true),
    opt(&Arch::experts, {"num_experts"}, 16, 1, 1 << 16),
    opt(&Arch::top_k, {"num_experts_per_tok"}, 2, 1, 1 << 16),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
};

/// JambaMambaMixer, with its weighted RMSNorms of dt, B and C.
const Steps kJambaMixer = {
    fix(&Arch::ssm_version, 1),
    opt(&Arch::ssm_state, {"mamba_d_state"}, 16, 1, 1 << 16),
    opt(&Arch::ssm_conv, {"mamba_d_conv"}, 4, 1, 1 << 16),
    hook(&Arch::ssm_inner, jamba_inner),
    flag(&Arch::ssm_bias, "mamba_proj_bias", false),
    flag(&Arch::ssm_conv_bias, "mamba_conv_bias", true),
    hook(silu_only),
    hook(&Arch::ssm_dt_rank, jamba_dt_rank),
    fix(&Arch::ssm_inner_norms, "weighted"),
};

/// An offset must be below its period (JambaConfig raises otherwise).
void check_offset(const Cfg& c, const char* period_key, const char* offset_key, std::int64_t period,
                  std::int64_t offset) {
  if (offset >= period) {
    throw InputError(c.field(offset_key), "must be smaller than " + std::string(period_key) + " (" +
                                              std::to_string(period) + "), got " + std::to_string(offset));
  }
}

/// Jamba's pattern checks: the offsets below their periods, top-k within the experts, no sliding window.
void jamba_pattern(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  check_offset(c, "attn_layer_period", "attn_layer_offset", a.attn_period, a.attn_offset);
  check_offset(c, "expert_layer_period", "expert_layer_offset", a.expert_period, a.expert_offset);
  if (a.experts > 1 && a.top_k > a.experts) {
    throw InputError(c.field("num_experts_per_tok"),
                     "must be at most num_experts (" + std::to_string(a.experts) + "), got " + std::to_string(a.top_k));
  }
  if (c.has("sliding_window")) {
    throw InputError(c.field("sliding_window"), "sliding-window attention in Jamba is not modelled; expected null");
  }
}

/// Jamba's layer pattern: attention at i % attn_layer_period == attn_layer_offset, experts at i %
/// expert_layer_period == expert_layer_offset (JambaConfig's defaults: Jamba-v0.1's).
const Steps kJambaPattern = {
    opt(&Arch::attn_period, {"attn_layer_period"}, 8, 1, kMaxDepth),
    opt(&Arch::attn_offset, {"attn_layer_offset"}, 4, 0, kMaxDepth),
    opt(&Arch::expert_period, {"expert_layer_period"}, 2, 1, kMaxDepth),
    opt(&Arch::expert_offset, {"expert_layer_offset"}, 1, 0, kMaxDepth),
    hook(jamba_pattern),
};

}  // namespace

const std::vector<ModelType>& ssm_model_types() {
  static const std::vector<ModelType> rows = {
      {"mamba", kSsm, compose({kSsmCore, {kTiedByDefault}, kMambaMixer})},
      {"falcon_mamba", kSsm,
       compose({kSsmCore, {kTiedByDefault}, kMambaMixer, kFalconMambaMixer}, kFalconMambaOverrides)},
      {"mamba2", kSsm, compose({kSsmCore, {kUntiedByDefault}, kMamba2Mixer})},
      {"jamba", kSsm, compose({kSsmCore, {kUntiedByDefault}, kJambaBlocks, kJambaMixer, kJambaPattern})},
  };
  return rows;
}

}  // namespace prenet::hf
