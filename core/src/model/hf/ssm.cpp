// State-space language models: Mamba, FalconMamba, Mamba-2 and the Jamba hybrid (Mamba and attention layers,
// dense and mixture-of-experts MLPs), built as the transformers classes build them (modeling_mamba.py,
// modeling_falcon_mamba.py, modeling_mamba2.py, modeling_jamba.py).
#include <cmath>
#include <vector>

#include "model/hf/builders.hpp"
#include "model/hf/heads.hpp"
#include "model/hf/layer_seq.hpp"

namespace prenet::hf {
namespace {

/// How one model_type spells its mixer's fields, with the configuration class's defaults.
struct MixerSpelling {
  const char* model_type;
  int version;  // 1: MambaMixer (selective scan, dt_rank), 2: Mamba2Mixer (heads, groups, gated norm)
  const char *state, *conv, *expand, *dt_rank, *bias, *conv_bias;
  std::int64_t state_default;
  bool bias_default;
  // The mixer's extra RMSNorms over dt, B and C: Jamba's have weights (dt_rank + 2·state), FalconMamba's are
  // weightless (buffers, not parameters).
  bool weighted_inner_norms, weightless_inner_norms;
};

const MixerSpelling kSpellings[] = {
    {"mamba", 1, "state_size", "conv_kernel", "expand", "time_step_rank", "use_bias", "use_conv_bias", 16, true, false,
     false},
    {"falcon_mamba", 1, "state_size", "conv_kernel", "expand", "time_step_rank", "use_bias", "use_conv_bias", 16, false,
     false, true},
    {"mamba2", 2, "state_size", "conv_kernel", "expand", "", "use_bias", "use_conv_bias", 128, false, false, false},
    {"jamba", 1, "mamba_d_state", "mamba_d_conv", "mamba_expand", "mamba_dt_rank", "mamba_proj_bias", "mamba_conv_bias",
     16, false, true, false},
};

/// The spelling of `model_type` (a programming error when the table has none).
const MixerSpelling& spelling_of(const std::string& model_type) {
  for (const auto& s : kSpellings) {
    if (model_type == s.model_type) return s;
  }
  throw std::logic_error("no mixer spelling for model_type " + model_type);
}

/// A mixer's sizes, as the `mamba` layer kind takes them.
struct Mixer {
  int version = 1;
  std::int64_t inner = 0, state = 0, conv = 0, dt_rank = 0, heads = 0, groups = 0;
  bool bias = false, conv_bias = true;
  std::int64_t inner_norm_weights = 0;  // Jamba: dt_rank + 2·state
};

/// The rank of the time-step projection: an integer, or "auto" for ceil(hidden / 16).
std::int64_t read_dt_rank(const Cfg& c, const std::string& key, std::int64_t hidden) {
  std::int64_t automatic = (hidden + 15) / 16;
  if (!c.has(key)) return automatic;
  const Json& v = c.json()[key];
  if (v.is_string()) {
    if (v.get<std::string>() == "auto") return automatic;
    throw InputError(c.field(key), "expected an integer or \"auto\", got \"" + printable(v.get<std::string>()) + "\"");
  }
  return c.opt({key}, automatic, 1, kMaxWidth);
}

/// Mamba (v1) mixers take intermediate_size when the config stores one (the configuration class sets it from
/// expand·hidden, then the stored attribute replaces it; tiiuae/falcon-mamba-7b stores expand 16 beside
/// intermediate_size 8192), else expand·hidden.
std::int64_t v1_inner(const Cfg& c, const MixerSpelling& s, std::int64_t expanded, std::vector<std::string>& warnings) {
  if (std::string(s.model_type) == "jamba" || !c.has("intermediate_size")) return expanded;
  std::int64_t stored = c.opt({"intermediate_size"}, expanded, 1, kMaxInner);
  if (stored != expanded) {
    warnings.push_back("intermediate_size " + std::to_string(stored) + " is the mixer's width, as transformers reads " +
                       "it; " + s.expand + " × hidden_size would give " + std::to_string(expanded));
  }
  return stored;
}

/// Mamba-2's heads and groups: num_heads × head_dim must be expand × hidden, and n_groups must divide the heads.
void read_v2_heads(const Cfg& c, Mixer& m) {
  m.heads = c.opt({"num_heads"}, 128, 1, kMaxWidth);
  std::int64_t head_dim = c.opt({"head_dim"}, 64, 1, kMaxWidth);
  if (m.heads * head_dim != m.inner) {
    throw InputError(c.field("num_heads"), "num_heads (" + std::to_string(m.heads) + ") × head_dim (" +
                                               std::to_string(head_dim) + ") must equal expand × hidden_size (" +
                                               std::to_string(m.inner) + ")");
  }
  m.groups = c.opt({"n_groups"}, 8, 1, kMaxWidth);
  if (m.heads % m.groups != 0) {
    throw InputError(c.field("n_groups"),
                     "must divide num_heads (" + std::to_string(m.heads) + "), got " + std::to_string(m.groups));
  }
}

/// The mixer of model `a` as its spelling reads it from `c`.
Mixer read_mixer(const Cfg& c, const Arch& a, const MixerSpelling& s, std::vector<std::string>& warnings) {
  Mixer m;
  m.version = s.version;
  m.state = c.opt({s.state}, s.state_default, 1, 1 << 16);
  m.conv = c.opt({s.conv}, 4, 1, 1 << 16);
  std::int64_t expand = c.opt({s.expand}, 2, 1, 1 << 10);
  std::int64_t expanded = expand * a.hidden;
  if (expanded > kMaxInner) throw InputError(c.field(s.expand), "expand × hidden_size is too large");
  m.bias = c.flag(s.bias, s.bias_default);
  m.conv_bias = c.flag(s.conv_bias, true);
  std::string act_key = c.has("hidden_act") ? "hidden_act" : "";
  if (!act_key.empty() && a.act != "silu" && a.act != "swish") {
    throw InputError(c.field("hidden_act"),
                     "the Mamba mixer is modelled with SiLU only (transformers' kernels "
                     "take \"silu\"), got \"" +
                         a.act + "\"");
  }
  if (s.version == 2) {
    m.inner = expanded;  // Mamba2Mixer takes int(expand · hidden) itself
    read_v2_heads(c, m);
    return m;
  }
  m.inner = v1_inner(c, s, expanded, warnings);
  m.dt_rank = read_dt_rank(c, s.dt_rank, a.hidden);
  if (s.weighted_inner_norms) m.inner_norm_weights = m.dt_rank + 2 * m.state;
  return m;
}

/// The `mamba` layer `name` reading `input`.
Json mamba_layer(const Mixer& m, const std::string& name, const std::string& input) {
  Json layer = {{"type", "mamba"},       {"name", name},          {"version", m.version}, {"inner", m.inner},
                {"state_size", m.state}, {"conv_kernel", m.conv}, {"bias", m.bias},       {"conv_bias", m.conv_bias},
                {"inputs", {input}}};
  if (m.version == 1) {
    layer["dt_rank"] = m.dt_rank;
  } else {
    layer["num_heads"] = m.heads;
    layer["n_groups"] = m.groups;
  }
  return layer;
}

/// Appends the mixer reading `input`; returns its output. Jamba's dt/B/C RMSNorm weights are a `parameter`
/// beside it (they sit inside the mixer, which the layer kind does not expose).
std::string push_mixer(Seq& s, const Mixer& m, const std::string& name, const std::string& input) {
  std::string out = s.push(mamba_layer(m, name, input));
  if (m.inner_norm_weights > 0) {
    s.push({{"type", "parameter"}, {"name", name + "_dt_b_c_norms"}, {"shape", {m.inner_norm_weights}}});
  }
  return out;
}

/// One Mamba / Mamba-2 block reading and writing "stream": RMSNorm, mixer, residual.
Json mamba_block(const Mixer& m) {
  Seq block;
  block.push({{"type", "rmsnorm"}, {"name", "norm"}, {"inputs", {"stream"}}});
  std::string mixed = push_mixer(block, m, "mixer", "norm");
  block.push({{"type", "add"}, {"name", "stream"}, {"inputs", {"stream", mixed}}});
  return block.layers;
}

// ---- Jamba ----------------------------------------------------------------------------------------------

/// Jamba's layer pattern: which layers attend, which have experts.
struct JambaPattern {
  std::int64_t attn_period = 8, attn_offset = 4, expert_period = 2, expert_offset = 1;
  bool attention(std::int64_t i) const { return i % attn_period == attn_offset; }
  bool experts(std::int64_t i) const { return i % expert_period == expert_offset; }
};

/// A period and offset pair; the offset must be below the period (JambaConfig raises otherwise).
void read_period(const Cfg& c, const char* period_key, const char* offset_key, std::int64_t& period,
                 std::int64_t& offset) {
  period = c.opt({period_key}, period, 1, kMaxDepth);
  offset = c.opt({offset_key}, offset, 0, kMaxDepth);
  if (offset >= period) {
    throw InputError(c.field(offset_key), "must be smaller than " + std::string(period_key) + " (" +
                                              std::to_string(period) + "), got " + std::to_string(offset));
  }
}

JambaPattern read_jamba_pattern(const Cfg& c, const Arch& a) {
  JambaPattern p;
  read_period(c, "attn_layer_period", "attn_layer_offset", p.attn_period, p.attn_offset);
  read_period(c, "expert_layer_period", "expert_layer_offset", p.expert_period, p.expert_offset);
  if (a.experts > 1 && a.top_k > a.experts) {
    throw InputError(c.field("num_experts_per_tok"),
                     "must be at most num_experts (" + std::to_string(a.experts) + "), got " + std::to_string(a.top_k));
  }
  if (c.has("sliding_window")) {
    throw InputError(c.field("sliding_window"), "sliding-window attention in Jamba is not modelled; expected null");
  }
  return p;
}

/// Layer i's kind: bit 0 attention (else Mamba), bit 1 experts (else a dense MLP).
int jamba_kind(const Arch& a, const JambaPattern& p, std::int64_t i) {
  return (p.attention(i) ? 1 : 0) | (a.experts > 1 && p.experts(i) ? 2 : 0);
}

/// The smallest P with kind(i) == kind(i - P) for every layer: the pattern repeats every P layers.
std::int64_t smallest_period(const Arch& a, const JambaPattern& p) {
  for (std::int64_t period = 1; period < a.layers; ++period) {
    bool repeats = true;
    for (std::int64_t i = period; i < a.layers && repeats; ++i) {
      repeats = jamba_kind(a, p, i) == jamba_kind(a, p, i - period);
    }
    if (repeats) return period;
  }
  return a.layers;
}

/// Appends Jamba's feed-forward part reading `input`: a SwiGLU MLP, or a router and `experts` of them.
std::string jamba_mlp(Seq& s, const Arch& a, bool experts, const std::string& suffix, const std::string& input) {
  if (!experts) {
    s.push({{"type", "dense"},
            {"name", "mlp_up" + suffix},
            {"units", a.inner},
            {"activation", a.act},
            {"gated", true},
            {"bias", false},
            {"inputs", {input}}});
    return s.push({{"type", "dense"}, {"name", "mlp_down" + suffix}, {"units", a.hidden}, {"bias", false}});
  }
  s.push({{"type", "dense"}, {"name", "router" + suffix}, {"units", a.experts}, {"bias", false}, {"inputs", {input}}});
  s.push({{"type", "dense"},
          {"name", "experts_up" + suffix},
          {"units", a.inner},
          {"activation", a.act},
          {"gated", true},
          {"bias", false},
          {"experts", a.experts},
          {"top_k", a.top_k},
          {"inputs", {input}}});
  return s.push({{"type", "dense"},
                 {"name", "experts_down" + suffix},
                 {"units", a.hidden},
                 {"bias", false},
                 {"experts", a.experts},
                 {"top_k", a.top_k}});
}

/// Appends Jamba layer `kind` reading and writing "stream"; `suffix` tells the layers of one period apart.
void jamba_layer(Seq& s, const Arch& a, const Mixer& m, int kind, const std::string& suffix) {
  std::string ln = s.push({{"type", "rmsnorm"}, {"name", "input_layernorm" + suffix}, {"inputs", {"stream"}}});
  std::string mixed;
  if (kind & 1) {
    Json at = {{"type", "attention"},  {"name", "self_attn" + suffix},
               {"num_heads", a.heads}, {"num_kv_heads", a.kv_heads},
               {"causal", true},       {"bias", false},
               {"out_bias", false},    {"inputs", {ln}}};
    if (a.attn_dropout > 0) at["dropout"] = a.attn_dropout;
    mixed = s.push(at);
  } else {
    mixed = push_mixer(s, m, "mamba" + suffix, ln);
  }
  std::string r = s.push({{"type", "add"}, {"name", "mixer_residual" + suffix}, {"inputs", {"stream", mixed}}});
  std::string ln2 = s.push({{"type", "rmsnorm"}, {"name", "pre_ff_layernorm" + suffix}, {"inputs", {r}}});
  std::string out = jamba_mlp(s, a, (kind & 2) != 0, suffix, ln2);
  s.push({{"type", "add"}, {"name", "stream"}, {"inputs", {r, out}}});
}

/// `count` layers of the pattern from layer `first` on, as one block.
Json jamba_layers(const Arch& a, const Mixer& m, const JambaPattern& p, std::int64_t first, std::int64_t count) {
  Seq block;
  for (std::int64_t j = 0; j < count; ++j) {
    jamba_layer(block, a, m, jamba_kind(a, p, first + j), count > 1 ? "_" + std::to_string(j) : "");
  }
  return block.layers;
}

/// Appends Jamba's layers: the smallest period repeated, then the layers left over.
void push_jamba_stack(Seq& s, const Cfg& c, const Arch& a, const Mixer& m) {
  check_heads(c, a.hidden, a.heads, a.kv_heads, false, "num_attention_heads", "num_key_value_heads");
  JambaPattern p = read_jamba_pattern(c, a);
  std::int64_t period = smallest_period(a, p);
  s.push({{"type", "repeat"},
          {"name", "layers"},
          {"count", a.layers / period},
          {"layers", jamba_layers(a, m, p, 0, period)}});
  std::int64_t left = a.layers % period;
  if (left > 0) {
    s.push({{"type", "repeat"},
            {"name", "last_layers"},
            {"count", 1},
            {"layers", jamba_layers(a, m, p, a.layers - left, left)}});
  }
}

// ---- the model ------------------------------------------------------------------------------------------

/// Appends the head of `h`: the LM head (tied to the embeddings when `a.tied`) and its loss, or none.
void push_head(Seq& s, const Cfg& c, const Arch& a, const HeadChoice& h) {
  if (h.head == Head::None) return;
  if (h.head != Head::LanguageModel) {
    throw InputError(
        c.field("architectures"),
        "only the causal-LM head (" + a.name + " ...ForCausalLM) or the bare model is supported for this model_type");
  }
  Json head = {{"type", "dense"}, {"name", "lm_head"}, {"units", a.vocab}, {"bias", false}};
  if (a.tied) head["tied_to"] = "embeddings";
  s.push(head);
  s.push({{"type", "cross_entropy"}, {"name", "loss"}});
}

/// The sequence length: the request's, else the config's positions capped as for other decoders, else 1024.
std::int64_t ssm_seq(const Wanted& wanted, const Arch& a, std::vector<std::string>& warnings) {
  if (wanted.seq_len <= 0 && a.max_positions == 0) {
    warnings.push_back(
        "the config gives no max_position_embeddings (a state-space model has no position limit); "
        "training.seq_len defaults to 1024, as for other decoders");
  }
  return choose_seq(wanted.seq_len, a.max_positions, false, warnings);
}

}  // namespace

Json build_ssm(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  const MixerSpelling& spelling = spelling_of(a.name);
  Mixer mixer = read_mixer(c, a, spelling, warnings);
  std::int64_t seq = ssm_seq(wanted, a, warnings);
  HeadChoice h = read_head(c, warnings);
  Seq s;
  s.push({{"type", "embedding"}, {"name", "embeddings"}, {"vocab_size", a.vocab}, {"dim", a.hidden}});
  s.start_stream("stream", "embeddings", 0.0);
  if (std::string(spelling.model_type) == "jamba") {
    push_jamba_stack(s, c, a, mixer);
  } else {
    s.push({{"type", "repeat"}, {"name", "layers"}, {"count", a.layers}, {"layers", mamba_block(mixer)}});
  }
  s.push({{"type", "rmsnorm"}, {"name", "norm_f"}, {"inputs", {"stream"}}});
  if (spelling.weightless_inner_norms) {
    warnings.push_back(
        "FalconMamba's weightless RMS norms of B, C and dt inside each mixer (no parameters) are "
        "not costed");
  }
  push_head(s, c, a, h);
  return tokens_model(a.name, seq, s.layers);
}

}  // namespace prenet::hf
