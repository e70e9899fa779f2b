// State-space models and hybrids: Mamba, Mamba-2, Jamba, Nemotron-H, Granite 4.0, Falcon-H1.
// One row per model_type; see model_types.cpp for how to add one. The rows read everything the builder (ssm.cpp)
// needs into the Arch (arch_ssm.hpp): the sizes every decoder has, the mixer's own fields (state size,
// convolution, width, time-step rank, heads and groups, biases) under each class's spelling and defaults, and
// Jamba's attention, MLP and layer pattern; Mamba-2's chunk size (the SSD's diagonal blocks grow with it). The
// time-step limits do not change the cost and are not read.
#include <algorithm>

#include "model/hf/parts.hpp"
#include "model/hf/quirks.hpp"

namespace prenet::hf {

namespace {

/// The family: embeddings, a stack of mixers (and, in Jamba, attention and MLPs), a final RMSNorm, the LM head.
constexpr Family kSsm{build_ssm, false};
/// Nemotron-H: one mixer per layer by its pattern character (build_nemotron_h, ssm.cpp). A builder of its own, so
/// the architecture form (whose ssm fields cannot say a layer without a mixer) does not echo it.
constexpr Family kNemotronH{build_nemotron_h, false};
/// Granite 4.0: each layer a Mamba-2 mixer or attention, then routed experts beside a shared MLP
/// (build_granite_hybrid, ssm.cpp); a builder of its own for the same reason.
constexpr Family kGraniteHybrid{build_granite_hybrid, false};
/// Falcon-H1: every layer a Mamba-2 mixer and attention side by side, then a SwiGLU (build_falcon_h1, ssm.cpp).
constexpr Family kFalconH1{build_falcon_h1, false};

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
    opt(&Arch::ssm_chunk, {"chunk_size"}, 256, 1, 1 << 16),
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

// ---- Nemotron-H ------------------------------------------------------------------------------------------
// NemotronHConfig (huggingface/transformers src/transformers/models/nemotron_h/configuration_nemotron_h.py, read at
// commit 13923c63d59f): its defaults below; __post_init__'s older spellings (mamba_n_groups, mamba_d_conv,
// mamba_conv_bias) are read as the same fields; the layers come from hybrid_override_pattern (or layers_block_type),
// one character per layer. Only the fields that change the parameters or the work are read: the time-step limits,
// routed_scaling_factor and n_group / topk_group (which experts, not how many) are not. The MTP layers
// (which transformers does not build: _keys_to_ignore_on_load_unexpected "mtp.*") become the model's mtp_block, run
// only under training.mtp_layers.

/// One layer kind per pattern character: the legacy string's, or layers_block_type's names (both spellings).
char nemotron_kind(const std::string& name) {
  if (name == "mamba" || name == "linear_attention") return 'M';
  if (name == "attention" || name == "full_attention") return '*';
  if (name == "mlp") return '-';
  if (name == "moe") return 'E';
  return '\0';
}

/// `key` (hybrid_override_pattern or mtp_hybrid_override_pattern) as NemotronHConfig._pattern_to_list reads it,
/// each character checked.
std::string pattern_from_string(const Cfg& c, const std::string& key = "hybrid_override_pattern") {
  const std::string pattern = c.str(key, "");
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (std::string("M*-E").find(pattern[i]) == std::string::npos) {
      throw InputError(c.field(key), "character " + std::to_string(i) + " is '" + printable(pattern.substr(i, 1)) +
                                         "'; expected M (Mamba-2), * (attention), - (MLP) or E (mixture of experts)");
    }
  }
  return pattern;
}

/// layers_block_type (the list transformers 5 saves instead of the string), written as the string's characters.
std::string pattern_from_list(const Cfg& c) {
  const std::string key = "layers_block_type";
  const Json& list = c.json()[key];
  if (!list.is_array()) throw InputError(c.field(key), "expected a list of layer types");
  std::string pattern;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const char kind = list[i].is_string() ? nemotron_kind(list[i].get<std::string>()) : '\0';
    if (kind == '\0') {
      throw InputError(index(c.field(key), i),
                       "expected one of mamba, attention, mlp, moe (or linear_attention, full_attention)");
    }
    pattern += kind;
  }
  return pattern;
}

/// The layer pattern and the depth: one layer per character, which num_hidden_layers, when given, must match
/// (transformers would warn and follow the pattern; a mismatch here is more likely a mistyped config, so it is
/// refused rather than guessed).
void nemotron_pattern(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  const bool listed = !c.has("hybrid_override_pattern") && c.has("layers_block_type");
  const std::string key = listed ? "layers_block_type" : "hybrid_override_pattern";
  if (!listed && !c.has(key)) {
    throw InputError(c.field(key), "is required: one character per layer (M, *, - or E)");
  }
  a.block_pattern = listed ? pattern_from_list(c) : pattern_from_string(c);
  const auto length = static_cast<std::int64_t>(a.block_pattern.size());
  if (length < 1 || length > kMaxDepth) {
    throw InputError(c.field(key),
                     "has " + std::to_string(length) + " layers; expected 1 to " + std::to_string(kMaxDepth));
  }
  const std::int64_t declared = c.has("num_hidden_layers") ? c.opt({"num_hidden_layers"}, 0, 1, kMaxDepth) : length;
  if (declared != length) {
    throw InputError(c.field(key), "has " + std::to_string(length) + " layers, but num_hidden_layers is " +
                                       std::to_string(declared) + "; expected one character per layer");
  }
  a.layers = length;
}

/// The multi-token-prediction block Megatron-Core's hybrid model runs at each depth (training.mtp_layers): the
/// layers of mtp_hybrid_override_pattern. transformers builds none, so num_nextn_predict_layers is noted as not
/// counted.
void nemotron_mtp(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  const std::int64_t depths = c.opt({"num_nextn_predict_layers"}, 0, 0, kMaxDepth);
  if (depths > 0) {
    warnings.push_back("num_nextn_predict_layers " + std::to_string(depths) +
                       ": transformers builds no multi-token-prediction layer, so neither its parameters nor its "
                       "training work are counted");
  }
  if (c.has("mtp_hybrid_override_pattern")) {
    a.mtp_pattern = pattern_from_string(c, "mtp_hybrid_override_pattern");
    if (a.mtp_pattern.empty() || a.mtp_pattern.size() > 64) {
      throw InputError(c.field("mtp_hybrid_override_pattern"), "expected 1 to 64 layer characters");
    }
    return;
  }
  a.mtp_unavailable =
      "the nemotron_h config states no mtp_hybrid_override_pattern, the layers of its multi-token-prediction block";
}

/// NemotronHMamba2Mixer: I = mamba_num_heads × mamba_head_dim (not expand × hidden_size), n_groups dividing the
/// heads, a SiLU mixer (mamba_hidden_act).
void nemotron_mixer(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  a.ssm_heads = c.opt({"mamba_num_heads"}, 128, 1, kMaxWidth);
  a.ssm_head_dim = c.opt({"mamba_head_dim"}, 64, 1, kMaxWidth);
  if (a.ssm_heads * a.ssm_head_dim > kMaxInner) {
    throw InputError(c.field("mamba_num_heads"), "mamba_num_heads × mamba_head_dim is too large");
  }
  a.ssm_inner = a.ssm_heads * a.ssm_head_dim;
  a.ssm_groups = c.opt({"n_groups", "mamba_n_groups"}, 8, 1, kMaxWidth);
  if (a.ssm_heads % a.ssm_groups != 0) {
    const std::string key = c.present({"n_groups", "mamba_n_groups"});
    throw InputError(
        c.field(key.empty() ? "n_groups" : key),
        "must divide mamba_num_heads (" + std::to_string(a.ssm_heads) + "), got " + std::to_string(a.ssm_groups));
  }
  a.ssm_conv_bias =
      c.flag(c.has("use_conv_bias") || !c.has("mamba_conv_bias") ? "use_conv_bias" : "mamba_conv_bias", true);
  const std::string mixer_act = c.act({"mamba_hidden_act"}, "silu");
  if (mixer_act != "silu" && mixer_act != "swish") {
    throw InputError(c.field("mamba_hidden_act"),
                     "the Mamba mixer is modelled with SiLU only, got \"" + mixer_act + "\"");
  }
}

/// Nemotron 3 Super's LatentMoE width (moe_latent_size; null or absent: experts over the hidden size);
/// attention_bias is not read by NemotronHAttention (JambaAttention's projections have no bias).
void nemotron_checks(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  if (c.has("moe_latent_size")) a.moe_latent = c.opt({"moe_latent_size"}, 0, 1, kMaxWidth);
  if (c.flag("attention_bias", false)) {
    warnings.push_back(
        "attention_bias is not read by transformers' NemotronHAttention: its projections are built without biases");
  }
  const bool moe = a.block_pattern.find('E') != std::string::npos;
  if (moe && a.top_k > a.experts) {
    throw InputError(c.field("num_experts_per_tok"), "must be at most n_routed_experts (" + std::to_string(a.experts) +
                                                         "), got " + std::to_string(a.top_k));
  }
  if (a.block_pattern.find('*') != std::string::npos) {
    check_heads(c, a.hidden, a.heads, a.kv_heads, true, "num_attention_heads", "num_key_value_heads");
  }
}

/// NemotronHConfig's sizes and blocks, in its order and with its defaults.
const Steps kNemotronHSteps = {
    need(&Arch::hidden, {"hidden_size"}, 1, kMaxWidth),
    hook(&Arch::layers, nemotron_pattern),
    opt(&Arch::vocab, {"vocab_size"}, 131072, 1, kMaxVocab),
    flag(&Arch::tied, "tie_word_embeddings", false),
    fix(&Arch::rms, true),
    fix(&Arch::learned_positions, false),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 4096, 1, kMaxPositions),
    // Attention: num_key_value_heads 8 when absent, the attention heads when null (as JambaConfig reads it).
    opt(&Arch::heads, {"num_attention_heads"}, 32, 1, kMaxWidth),
    hook(&Arch::kv_heads, jamba_kv_heads),
    opt(&Arch::head_dim, {"head_dim"}, 128, 1, kMaxWidth),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
    // The MLP and the experts: non-gated, relu2 (squared ReLU) by default.
    opt(&Arch::inner, {"intermediate_size"}, 21504, 1, kMaxInner),
    act({"mlp_hidden_act"}, "relu2"),
    fix(&Arch::gated, false),
    flag(&Arch::mlp_bias, "mlp_bias", false),
    opt(&Arch::experts, {"n_routed_experts"}, 8, 1, 1 << 16),
    opt(&Arch::top_k, {"num_experts_per_tok"}, 2, 1, 1 << 16),
    opt(&Arch::moe_inner, {"moe_intermediate_size"}, 7688, 1, kMaxInner),
    opt(&Arch::shared_inner, {"moe_shared_expert_intermediate_size"}, 7688, 1, kMaxInner),
    // The Mamba-2 mixer.
    fix(&Arch::ssm_version, 2),
    opt(&Arch::ssm_state, {"ssm_state_size"}, 128, 1, 1 << 16),
    opt(&Arch::ssm_conv, {"conv_kernel", "mamba_d_conv"}, 4, 1, 1 << 16),
    flag(&Arch::ssm_bias, "use_bias", false),
    hook(&Arch::ssm_heads, nemotron_mixer),
    opt(&Arch::ssm_chunk, {"chunk_size", "mamba_chunk_size"}, 128, 1, 1 << 16),
    hook(nemotron_checks),
    hook(nemotron_mtp),
};

// ---- Granite 4.0 (granitemoehybrid) ---------------------------------------------------------------------
// GraniteMoeHybridConfig (huggingface/transformers src/transformers/models/granitemoehybrid/
// configuration_granitemoehybrid.py, read at commit 008f5c8c29be): its defaults below. The layers come from
// layer_types ("mamba" or "attention"; absent: every layer Mamba, as its layers_block_type property says). Every
// layer has the feed-forward part: num_local_experts routed SwiGLU experts of intermediate_size beside shared_mlp, a
// SwiGLU of shared_intermediate_size (num_local_experts 0: shared_mlp alone, as in the dense Granite 4.0 models).
// The four multipliers (embedding, residual, attention, logits) scale activations only; rope_theta and
// rope_scaling change neither the parameters nor the work as modelled: neither is read.

/// num_key_value_heads: the attention heads when absent or null (GraniteMoeHybridConfig's "backward compatibility").
void granite_kv_heads(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  a.kv_heads = c.opt({"num_key_value_heads"}, a.heads, 1, a.heads);
}

/// position_embedding_type: rotary positions only with "rope" (GraniteMoeHybridModel builds its rotary embedding
/// for that value alone); null or "nope" (what the released configs say): none.
void granite_positions(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  const std::string kind = c.str("position_embedding_type", "");
  if (kind != "" && kind != "nope" && kind != "rope") {
    throw InputError(c.field("position_embedding_type"),
                     "expected \"rope\", \"nope\" or null, got \"" + printable(kind) + "\"");
  }
  a.rotary = kind == "rope" ? 1.0 : 0.0;
}

/// The routed experts: none when num_local_experts is 0 (then num_experts_per_tok is not read); otherwise at least
/// two (one routed expert is not modelled) and top-k within them.
void granite_experts(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  a.experts = c.opt({"num_local_experts"}, 8, 0, 1 << 16);
  if (a.experts == 0) {
    a.top_k = 0;
    return;
  }
  if (a.experts == 1) {
    throw InputError(c.field("num_local_experts"),
                     "a single routed expert is not modelled; expected 0 (shared_mlp alone) or at least 2");
  }
  a.top_k = c.opt({"num_experts_per_tok"}, 2, 1, 1 << 16);
  if (a.top_k > a.experts) {
    throw InputError(c.field("num_experts_per_tok"), "must be at most num_local_experts (" + std::to_string(a.experts) +
                                                         "), got " + std::to_string(a.top_k));
  }
}

/// The heads of a Mamba-2 mixer `width` wide (a.ssm_inner, named `width_name` in errors), as BambaMixer and
/// FalconH1Mixer read them: mamba_n_heads (128) dividing the width, heads of mamba_d_head ("auto": width / heads;
/// otherwise heads × head width must be the width), mamba_n_groups (1) dividing the heads.
void mamba2_heads(const Cfg& c, Arch& a, const std::string& width_name) {
  a.ssm_heads = c.opt({"mamba_n_heads"}, 128, 1, kMaxWidth);
  if (a.ssm_inner % a.ssm_heads != 0) {
    throw InputError(c.field("mamba_n_heads"), "must divide " + width_name + " (" + std::to_string(a.ssm_inner) +
                                                   "), got " + std::to_string(a.ssm_heads));
  }
  const bool automatic = !c.has("mamba_d_head") || (c.json()["mamba_d_head"].is_string() &&
                                                    c.json()["mamba_d_head"].get<std::string>() == "auto");
  a.ssm_head_dim = automatic ? a.ssm_inner / a.ssm_heads : c.opt({"mamba_d_head"}, 0, 1, kMaxWidth);
  if (a.ssm_heads * a.ssm_head_dim != a.ssm_inner) {
    throw InputError(c.field("mamba_d_head"), "mamba_n_heads (" + std::to_string(a.ssm_heads) + ") × mamba_d_head (" +
                                                  std::to_string(a.ssm_head_dim) + ") must equal " + width_name + " (" +
                                                  std::to_string(a.ssm_inner) + ")");
  }
  a.ssm_groups = c.opt({"mamba_n_groups"}, 1, 1, kMaxWidth);
  if (a.ssm_heads % a.ssm_groups != 0) {
    throw InputError(c.field("mamba_n_groups"), "must divide mamba_n_heads (" + std::to_string(a.ssm_heads) +
                                                    "), got " + std::to_string(a.ssm_groups));
  }
}

/// BambaMixer's sizes (GraniteMoeHybridMambaLayer): mamba_expand × hidden_size channels in its heads.
void granite_mixer(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  a.ssm_inner = expanded(c, "mamba_expand", a);
  mamba2_heads(c, a, "mamba_expand × hidden_size");
}

/// layer_types into the plan, one entry per layer (num_hidden_layers must match: a shorter list fails in
/// transformers, a longer one is more likely a mistyped config than meant), each layer with the feed-forward part.
void granite_layers(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  const SsmMlp mlp = a.experts > 0 ? SsmMlp::Moe : SsmMlp::Dense;
  a.ssm_plan.assign(static_cast<std::size_t>(a.layers), SsmLayer{false, mlp});
  if (!c.has("layer_types")) return;
  const Json& list = c.json()["layer_types"];
  if (!list.is_array()) throw InputError(c.field("layer_types"), "expected a list of \"mamba\" or \"attention\"");
  if (static_cast<std::int64_t>(list.size()) != a.layers) {
    throw InputError(c.field("layer_types"), "has " + std::to_string(list.size()) +
                                                 " entries, but num_hidden_layers is " + std::to_string(a.layers) +
                                                 "; expected one per layer");
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string kind = list[i].is_string() ? list[i].get<std::string>() : "";
    if (kind != "mamba" && kind != "attention") {
      throw InputError(index(c.field("layer_types"), i), "expected \"mamba\" or \"attention\"");
    }
    a.ssm_plan[i].attention = kind == "attention";
  }
  const bool attends = std::any_of(a.ssm_plan.begin(), a.ssm_plan.end(), [](const SsmLayer& k) { return k.attention; });
  if (attends) check_heads(c, a.hidden, a.heads, a.kv_heads, false, "num_attention_heads", "num_key_value_heads");
}

/// GraniteMoeHybridConfig's sizes and blocks, in its order and with its defaults.
const Steps kGraniteHybridSteps = {
    opt(&Arch::vocab, {"vocab_size"}, 32000, 1, kMaxVocab),
    opt(&Arch::hidden, {"hidden_size"}, 4096, 1, kMaxWidth),
    opt(&Arch::inner, {"intermediate_size"}, 11008, 1, kMaxInner),
    opt(&Arch::layers, {"num_hidden_layers"}, 32, 1, kMaxDepth),
    opt(&Arch::heads, {"num_attention_heads"}, 32, 1, kMaxWidth),
    hook(&Arch::kv_heads, granite_kv_heads),
    act({"hidden_act"}, "silu"),
    hook(silu_only),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 2048, 1, kMaxPositions),
    flag(&Arch::tied, "tie_word_embeddings", false),
    fix(&Arch::rms, true),
    fix(&Arch::learned_positions, false),
    hook(granite_positions),
    flag({&Arch::qkv_bias, &Arch::out_bias}, "attention_bias", false),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
    fix(&Arch::gated, true),
    hook(&Arch::experts, granite_experts),
    opt(&Arch::shared_inner, {"shared_intermediate_size"}, 1024, 1, kMaxInner),
    fix(&Arch::ssm_version, 2),
    opt(&Arch::ssm_state, {"mamba_d_state"}, 256, 1, 1 << 16),
    opt(&Arch::ssm_conv, {"mamba_d_conv"}, 4, 1, 1 << 16),
    flag(&Arch::ssm_conv_bias, "mamba_conv_bias", true),
    flag(&Arch::ssm_bias, "mamba_proj_bias", false),
    hook(&Arch::ssm_heads, granite_mixer),
    opt(&Arch::ssm_chunk, {"mamba_chunk_size"}, 256, 1, 1 << 16),
    hook(granite_layers),
};

// ---- Falcon-H1 (falcon_h1) -------------------------------------------------------------------------------
// FalconH1Config (huggingface/transformers src/transformers/models/falcon_h1/configuration_falcon_h1.py, read at
// commit 020a37d2264e): its defaults below. Every layer has the mixer, attention and the MLP (layers_block_type is
// "hybrid" for all; the released configs' attn_layer_indices and mamba_use_mlp are not read by transformers, nor
// here). mamba_norm_before_gate (where the gate is applied, not whether), the time-step limits and rope_theta
// change neither the parameters nor the work as modelled: none is read.

/// FalconH1Mixer's width: mamba_d_ssm (default 1024; null: mamba_expand × hidden_size) in its heads (mamba2_heads);
/// out_proj's bias by projectors_bias.
void falcon_h1_mixer(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  const bool from_expand = c.json().contains("mamba_d_ssm") && c.json()["mamba_d_ssm"].is_null();
  a.ssm_inner = from_expand ? expanded(c, "mamba_expand", a) : c.opt({"mamba_d_ssm"}, 1024, 1, kMaxInner);
  mamba2_heads(c, a, from_expand ? "mamba_expand × hidden_size" : "mamba_d_ssm");
  a.ssm_out_bias = c.flag("projectors_bias", false) ? 1 : 0;
}

/// The attention heads: num_key_value_heads (null: the attention heads) dividing them; head_dim when the config
/// states it (LlamaAttention's getattr), else hidden_size / heads.
void falcon_h1_heads(const Cfg& c, Arch& a, std::vector<std::string>& /*warnings*/) {
  a.kv_heads = c.opt({"num_key_value_heads"}, a.heads, 1, a.heads);
  a.head_dim = c.opt({"head_dim"}, 0, 1, kMaxWidth);
  check_heads(c, a.hidden, a.heads, a.kv_heads, a.head_dim > 0, "num_attention_heads", "num_key_value_heads");
}

/// The µP multipliers scale activations (the embeddings, the mixer's input and each part of its projection, the
/// keys, both branches' outputs, the MLP's gate and output, the logits) in every step, whatever their values: each
/// is read as a number (or a list of them) and the elementwise passes are left out, with a warning.
void falcon_h1_multipliers(const Cfg& c, Arch&, std::vector<std::string>& warnings) {
  for (const char* key : {"embedding_multiplier", "lm_head_multiplier", "key_multiplier", "attention_in_multiplier",
                          "attention_out_multiplier", "ssm_in_multiplier", "ssm_out_multiplier"}) {
    c.number(key, 1.0, -1e300, 1e300);
  }
  for (const char* key : {"mlp_multipliers", "ssm_multipliers"}) {
    if (!c.has(key)) continue;
    const Json& list = c.json()[key];
    const std::size_t length = std::string(key) == "mlp_multipliers" ? 2 : 5;
    const bool numbers = list.is_array() && list.size() == length &&
                         std::all_of(list.begin(), list.end(), [](const Json& v) { return v.is_number(); });
    if (!numbers) throw InputError(c.field(key), "expected a list of " + std::to_string(length) + " numbers");
  }
  warnings.push_back(
      "Falcon-H1's µP multipliers (embedding, lm_head, key, attention and SSM input and output, the mixer's "
      "projection, the MLP's gate and output) are elementwise scalings in every step; they are not costed "
      "(no parameters; torch.compile folds them into neighbouring kernels)");
}

/// FalconH1Config's sizes and blocks, in its order and with its defaults.
const Steps kFalconH1Steps = {
    opt(&Arch::vocab, {"vocab_size"}, 128000, 1, kMaxVocab),
    flag(&Arch::tied, "tie_word_embeddings", false),
    opt(&Arch::hidden, {"hidden_size"}, 4096, 1, kMaxWidth),
    opt(&Arch::inner, {"intermediate_size"}, 14336, 1, kMaxInner),
    opt(&Arch::layers, {"num_hidden_layers"}, 32, 1, kMaxDepth),
    opt(&Arch::heads, {"num_attention_heads"}, 32, 1, kMaxWidth),
    hook(&Arch::kv_heads, falcon_h1_heads),
    act({"hidden_act"}, "silu"),
    hook(silu_only),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 8192, 1, kMaxPositions),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
    fix(&Arch::rms, true),
    fix(&Arch::learned_positions, false),
    fix(&Arch::gated, true),
    flag({&Arch::qkv_bias, &Arch::out_bias}, "attention_bias", false),
    flag(&Arch::mlp_bias, "mlp_bias", false),
    fix(&Arch::ssm_version, 2),
    opt(&Arch::ssm_state, {"mamba_d_state"}, 256, 1, 1 << 16),
    opt(&Arch::ssm_conv, {"mamba_d_conv"}, 4, 1, 1 << 16),
    flag(&Arch::ssm_conv_bias, "mamba_conv_bias", true),
    flag(&Arch::ssm_bias, "mamba_proj_bias", false),
    flag(&Arch::ssm_gated_norm, "mamba_rms_norm", false),
    hook(&Arch::ssm_heads, falcon_h1_mixer),
    opt(&Arch::ssm_chunk, {"mamba_chunk_size"}, 256, 1, 1 << 16),
    hook(falcon_h1_multipliers),
};
}  // namespace

const std::vector<ModelType>& ssm_model_types() {
  static const std::vector<ModelType> rows = {
      {"mamba", kSsm, compose({kSsmCore, {kTiedByDefault}, kMambaMixer})},
      {"falcon_mamba", kSsm,
       compose({kSsmCore, {kTiedByDefault}, kMambaMixer, kFalconMambaMixer}, kFalconMambaOverrides)},
      {"mamba2", kSsm, compose({kSsmCore, {kUntiedByDefault}, kMamba2Mixer})},
      {"jamba", kSsm, compose({kSsmCore, {kUntiedByDefault}, kJambaBlocks, kJambaMixer, kJambaPattern})},
      {"nemotron_h", kNemotronH, kNemotronHSteps},
      {"granitemoehybrid", kGraniteHybrid, kGraniteHybridSteps},
      {"falcon_h1", kFalconH1, kFalconH1Steps},
  };
  return rows;
}

}  // namespace prenet::hf
