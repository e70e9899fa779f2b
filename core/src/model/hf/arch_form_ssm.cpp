// The ssm family of the architecture form (arch_form.hpp): state-space models (Mamba, FalconMamba, Mamba-2) and
// hybrids (Jamba): the mixer's fields, the hybrid's attention, MLP and layer pattern, an optional per-layer list,
// and the checks between fields; built by build_ssm_arch (ssm.cpp).
#include <string>
#include <vector>

#include "model/hf/arch_form.hpp"
#include "model/hf/config_reader.hpp"
#include "model/hf/heads.hpp"

namespace prenet::hf::form {
namespace {

/// The activation row, whose default is SiLU here (the Arch's own is GPT-2's; read_ssm_extra sets it).
Field silu_act() {
  Field f = text_field("hidden_act", Kind::Activation, at<&Arch::act>, {},
                       "the activation of the mixer's gate and of the MLPs (the Mamba kernels take silu only)");
  f.fallback_doc = "silu";
  return f;
}

/// The task head row: this family builds the language model's head or none (read_ssm_extra refuses the others).
Field language_model_or_none() {
  Field f = task_head_fields().front();
  f.doc = "language_model (the causal-LM head) or none (the bare model); the classification heads are refused";
  return f;
}

/// The fields, in reading order (a default or bound may name a field read before it).
const std::vector<Field>& ssm_fields() {
  static const std::vector<Field> table = [] {
    std::vector<Field> rows = {
        text_field("name", Kind::Text, at<&Arch::name>, {}, "the model's name in the response"),
        required_size("hidden_size", at<&Arch::hidden>, kMaxWidth, "features", "the width of the residual stream"),
        required_size("num_hidden_layers", at<&Arch::layers>, kMaxDepth, "layers", "the blocks"),
        required_size("vocab_size", at<&Arch::vocab>, kMaxVocab, "tokens", "the rows of the token embedding"),
        size_field("max_position_embeddings", at<&Arch::max_positions>, 0, 0, kMaxPositions, "tokens",
                   "the default sequence length, capped as a rotary decoder's (a state-space model has no position "
                   "table); 0: none given"),
        flag_field("tie_word_embeddings", at<&Arch::tied>, "the LM head shares the token embedding's matrix"),
        silu_act(),
        size_field("ssm_version", at<&Arch::ssm_version>, 1, 1, 2, "",
                   "the mixer: 1 MambaMixer (selective scan, time_step_rank), 2 Mamba2Mixer (SSD: num_heads, "
                   "head_dim, n_groups)"),
        size_field("d_inner", at<&Arch::ssm_inner>, of(&Arch::hidden, 2), 1, kMaxInner, "features",
                   "the mixer's inner width: expand × hidden_size (MambaConfig's intermediate_size)",
                   "2 × hidden_size"),
        size_field("state_size", at<&Arch::ssm_state>, 16, 1, 1 << 16, "features",
                   "the state size N of each channel (Mamba-2: of each group's B and C)"),
        size_field("conv_kernel", at<&Arch::ssm_conv>, 4, 1, 1 << 16, "tokens",
                   "the width of the depthwise causal convolution"),
        size_field("time_step_rank", at<&Arch::ssm_dt_rank>, 0, 0, kMaxWidth, "features",
                   "version 1: the rank of the time-step projection; 0: ceil(hidden_size / 16)"),
        size_field("num_heads", at<&Arch::ssm_heads>, 0, 0, kMaxWidth, "heads",
                   "version 2: the mixer's heads; 0: d_inner / head_dim. num_heads × head_dim must be d_inner"),
        size_field("head_dim", at<&Arch::ssm_head_dim>, 64, 1, kMaxWidth, "features",
                   "version 2: the width of one mixer head"),
        size_field("n_groups", at<&Arch::ssm_groups>, 1, 1, kMaxWidth, "groups",
                   "version 2: the groups of heads sharing B and C; must divide the heads"),
        size_field("chunk_size", at<&Arch::ssm_chunk>, 256, 1, 1 << 16, "tokens",
                   "version 2: positions per chunk of the SSD scan (its diagonal blocks grow with it)"),
        flag_field("use_bias", at<&Arch::ssm_bias>, "biases in the mixer's in_proj and out_proj"),
        flag_field("use_conv_bias", at<&Arch::ssm_conv_bias>, "a bias in the mixer's convolution"),
        text_field("inner_norms", Kind::Text, at<&Arch::ssm_inner_norms>, {"none", "weighted", "weightless"},
                   "RMSNorms of dt, B and C inside the mixer: weighted (Jamba: time_step_rank + 2 × state_size "
                   "parameters, version 1), weightless (FalconMamba: no parameters, not costed)"),
        size_field("intermediate_size", at<&Arch::inner>, 0, 0, kMaxInner, "features",
                   "a gated MLP after each layer's mixer (Jamba); 0: none, plain Mamba blocks"),
        size_field("num_attention_heads", at<&Arch::heads>, 0, 0, kMaxWidth, "heads",
                   "the query heads of the attention layers (Jamba); must divide hidden_size; 0: no attention"),
        size_field("num_key_value_heads", at<&Arch::kv_heads>, of(&Arch::heads), 0, of(&Arch::heads), "heads",
                   "the attention layers' key/value heads; must divide num_attention_heads", "num_attention_heads"),
        real_field("attention_dropout", Kind::Rate, at<&Arch::attn_dropout>, 0, 0.999999, "probability",
                   "dropout on the attention probabilities"),
        size_field("num_experts", at<&Arch::experts>, 0, 0, 1 << 16, "experts",
                   "the routed experts of the MoE layers; 0 or 1: every MLP dense"),
        size_field("num_experts_per_tok", at<&Arch::top_k>, 1, 1, 1 << 16, "experts",
                   "the experts each token runs through (top-k); at most num_experts"),
        size_field("attn_layer_period", at<&Arch::attn_period>, 0, 0, kMaxDepth, "layers",
                   "when `layers` is absent, layer i attends when i % attn_layer_period == attn_layer_offset; 0: "
                   "no attention layer"),
        size_field("attn_layer_offset", at<&Arch::attn_offset>, 0, 0, kMaxDepth, "layers",
                   "below attn_layer_period (0 when that is 0)"),
        size_field("expert_layer_period", at<&Arch::expert_period>, 0, 0, kMaxDepth, "layers",
                   "when `layers` is absent and num_experts > 1, layer i's MLP is routed when i % "
                   "expert_layer_period == expert_layer_offset; 0: none"),
        size_field("expert_layer_offset", at<&Arch::expert_offset>, 0, 0, kMaxDepth, "layers",
                   "below expert_layer_period (0 when that is 0)"),
        language_model_or_none(),
    };
    return rows;
  }();
  return table;
}

std::string num(std::int64_t n) { return std::to_string(n); }

/// Errors naming `offset_key` unless the offset is below its period (0 with a period of 0).
void check_offset(const std::string& path, const char* period_key, const char* offset_key, std::int64_t period,
                  std::int64_t offset) {
  if (period == 0 && offset != 0) {
    throw InputError(join(path, offset_key), std::string("must be 0 when ") + period_key + " is 0, got " + num(offset));
  }
  if (period > 0 && offset >= period) {
    throw InputError(join(path, offset_key),
                     std::string("must be smaller than ") + period_key + " (" + num(period) + "), got " + num(offset));
  }
}

/// The mixer's checks: SiLU, Mamba-2's heads and groups, the weighted norms only in a version-1 mixer.
void check_mixer(const std::string& path, const Arch& a) {
  if (a.act != "silu" && a.act != "swish") {
    throw InputError(join(path, "hidden_act"), "the Mamba mixer is modelled with SiLU only, got \"" + a.act + "\"");
  }
  if (a.ssm_version == 2) {
    if (a.ssm_heads == 0 && a.ssm_inner % a.ssm_head_dim != 0) {
      throw InputError(join(path, "head_dim"), "must divide d_inner (" + num(a.ssm_inner) +
                                                   ") when num_heads is 0, got " + num(a.ssm_head_dim));
    }
    if (a.ssm_heads > 0 && a.ssm_heads * a.ssm_head_dim != a.ssm_inner) {
      throw InputError(join(path, "num_heads"), "num_heads (" + num(a.ssm_heads) + ") × head_dim (" +
                                                    num(a.ssm_head_dim) + ") must equal d_inner (" + num(a.ssm_inner) +
                                                    ")");
    }
    const std::int64_t heads = a.ssm_heads > 0 ? a.ssm_heads : a.ssm_inner / a.ssm_head_dim;
    if (heads % a.ssm_groups != 0) {
      throw InputError(join(path, "n_groups"),
                       "must divide the mixer's heads (" + num(heads) + "), got " + num(a.ssm_groups));
    }
    if (a.ssm_inner_norms == "weighted") {
      throw InputError(join(path, "inner_norms"), "weighted dt, B and C norms are JambaMambaMixer's: ssm_version 1");
    }
  }
}

/// The hybrid's checks: heads, top-k, the pattern's offsets; a pattern placing attention needs heads.
void check_hybrid(const Json& j, const std::string& path, const Arch& a) {
  if (a.heads > 0)
    check_heads(Cfg(j, path), a.hidden, a.heads, a.kv_heads, false, "num_attention_heads", "num_key_value_heads");
  if (a.experts > 1 && a.top_k > a.experts) {
    throw InputError(join(path, "num_experts_per_tok"),
                     "is " + num(a.top_k) + ", above num_experts (" + num(a.experts) + ")");
  }
  check_offset(path, "attn_layer_period", "attn_layer_offset", a.attn_period, a.attn_offset);
  check_offset(path, "expert_layer_period", "expert_layer_offset", a.expert_period, a.expert_offset);
  if (a.heads == 0 && a.attn_period > 0 && a.attn_offset < a.layers) {
    throw InputError(join(path, "num_attention_heads"),
                     "attn_layer_period places attention layers, which need at least 1 head");
  }
}

const char* mlp_name(SsmMlp m) {
  switch (m) {
    case SsmMlp::Dense: return "dense";
    case SsmMlp::Moe: return "moe";
    case SsmMlp::None: break;
  }
  return "none";
}

/// The default of an absent entry key: a Mamba layer, with the dense MLP when intermediate_size is set.
SsmLayer default_entry(const Arch& a) {
  SsmLayer k;
  k.mlp = a.inner > 0 ? SsmMlp::Dense : SsmMlp::None;
  return k;
}

/// Plan entry `where` of `j`.
SsmLayer entry_from_json(const Arch& a, const Json& e, const std::string& where) {
  require_object(e, where);
  reject_unknown_keys(e, where, {"mixer", "mlp"});
  SsmLayer k = default_entry(a);
  k.attention = get_enum(e, "mixer", where, "mamba", {"mamba", "attention"}) == "attention";
  if (k.attention && a.heads < 1) {
    throw InputError(join(where, "mixer"), "an attention layer needs num_attention_heads of at least 1");
  }
  std::string mlp = get_enum(e, "mlp", where, mlp_name(k.mlp), {"none", "dense", "moe"});
  k.mlp = mlp == "dense" ? SsmMlp::Dense : mlp == "moe" ? SsmMlp::Moe : SsmMlp::None;
  if (k.mlp != SsmMlp::None && a.inner < 1) {
    throw InputError(join(where, "mlp"), "an MLP needs intermediate_size of at least 1");
  }
  if (k.mlp == SsmMlp::Moe && a.experts < 2) {
    throw InputError(join(where, "mlp"), "a routed MLP needs num_experts of at least 2, got " + num(a.experts));
  }
  return k;
}

/// The per-layer list `layers` of `j` into `a.ssm_plan` (absent or null: the pattern's layers).
void read_plan(const Json& j, const std::string& path, Arch& a) {
  if (!j.contains("layers") || j["layers"].is_null()) return;
  const std::string where = join(path, "layers");
  const Json& list = require_array(j["layers"], where);
  if (static_cast<std::int64_t>(list.size()) != a.layers) {
    throw InputError(where, "has " + num(static_cast<std::int64_t>(list.size())) +
                                " entries; expected one per layer, " + num(a.layers) + " (num_hidden_layers)");
  }
  for (std::size_t i = 0; i < list.size(); ++i) a.ssm_plan.push_back(entry_from_json(a, list[i], index(where, i)));
}

/// What the family fixes (no position table, RMSNorms, gated MLPs, SiLU unless given), then the checks.
void read_ssm_extra(const Json& j, const std::string& path, Arch& a) {
  a.learned_positions = false;
  a.rms = true;
  a.gated = true;
  if (!j.contains("hidden_act") || j["hidden_act"].is_null()) a.act = "silu";
  if (a.head.head != Head::LanguageModel && a.head.head != Head::None) {
    throw InputError(join(path, "task_head"), "a state-space model takes language_model or none");
  }
  check_mixer(path, a);
  check_hybrid(j, path, a);
  read_plan(j, path, a);
}

/// The plan, only when one was given; each entry only what differs from default_entry.
void write_ssm_extra(const Arch& a, Json& j) {
  if (a.ssm_plan.empty()) return;
  const SsmLayer d = default_entry(a);
  Json plan = Json::array();
  for (const SsmLayer& k : a.ssm_plan) {
    Json e = Json::object();
    if (k.attention) e["mixer"] = "attention";
    if (k.mlp != d.mlp) e["mlp"] = mlp_name(k.mlp);
    plan.push_back(e);
  }
  j["layers"] = plan;
}

std::vector<ArchFieldDoc> ssm_plan_docs() {
  return {{"mixer", "string", "", "mamba", "mamba (the state-space mixer) or attention"},
          {"mlp", "string", "", "dense when intermediate_size > 0, else none",
           "none, dense (intermediate_size) or moe (num_experts)"}};
}

/// build_ssm reads the task head from `architectures` before it runs build_ssm_arch; a head it refuses is not
/// echoed.
void ssm_from_config(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  a.head = read_head(c, warnings);
  if (a.head.head != Head::LanguageModel && a.head.head != Head::None) {
    throw InputError(c.field("architectures"), "only the causal-LM head or the bare model is supported");
  }
}

}  // namespace

const Form& ssm_form() {
  static const Form form{"ssm",
                         "state-space models and hybrids (Mamba, FalconMamba, Mamba-2, Jamba)",
                         ssm_fields,
                         {"layers"},
                         read_ssm_extra,
                         write_ssm_extra,
                         ssm_plan_docs,
                         build_ssm,
                         ssm_from_config,
                         build_ssm_arch,
                         false};
  return form;
}

}  // namespace prenet::hf::form
