// State-space language models: Mamba, FalconMamba, Mamba-2 and the Jamba hybrid (Mamba and attention layers,
// dense and mixture-of-experts MLPs), built as the transformers classes build them (modeling_mamba.py,
// modeling_falcon_mamba.py, modeling_mamba2.py, modeling_jamba.py); and Nemotron-H (modeling_nemotron_h.py, see
// build_nemotron_h below) and Granite 4.0 (modular_granitemoehybrid.py, build_granite_hybrid). The model-type rows
// (types_ssm.cpp) or the
// architecture form (arch_form_ssm.cpp) read everything into the Arch; build_ssm_arch builds from it alone.
#include <algorithm>
#include <vector>

#include "model/hf/builders.hpp"
#include "model/hf/heads.hpp"
#include "model/hf/layer_seq.hpp"

namespace prenet::hf {
namespace {

/// A mixer's sizes, as the `mamba` layer kind takes them.
struct Mixer {
  std::int64_t version = 1;
  std::int64_t inner = 0, state = 0, conv = 0, dt_rank = 0, heads = 0, groups = 0, chunk = 256;
  bool bias = false, conv_bias = true, out_bias = false, gated_norm = true;
  std::int64_t inner_norm_weights = 0;  // Jamba: dt_rank + 2·state
};

/// The mixer of `a`, its derived defaults resolved (the time-step rank, Mamba-2's heads).
Mixer mixer_of(const Arch& a) {
  Mixer m;
  m.version = a.ssm_version;
  m.inner = a.ssm_inner > 0 ? a.ssm_inner : 2 * a.hidden;
  m.state = a.ssm_state;
  m.conv = a.ssm_conv;
  m.bias = a.ssm_bias;
  m.conv_bias = a.ssm_conv_bias;
  m.out_bias = a.ssm_out_bias < 0 ? a.ssm_bias : a.ssm_out_bias == 1;
  m.gated_norm = a.ssm_gated_norm;
  if (m.version == 2) {
    m.heads = a.ssm_heads > 0 ? a.ssm_heads : m.inner / a.ssm_head_dim;
    m.groups = a.ssm_groups;
    m.chunk = a.ssm_chunk;
    return m;
  }
  m.dt_rank = a.ssm_dt_rank > 0 ? a.ssm_dt_rank : (a.hidden + 15) / 16;
  if (a.ssm_inner_norms == "weighted") m.inner_norm_weights = m.dt_rank + 2 * m.state;
  return m;
}

/// The `mamba` layer `name` reading `input`.
Json mamba_layer(const Mixer& m, const std::string& name, const std::string& input) {
  Json layer = {{"type", "mamba"},       {"name", name},          {"version", m.version}, {"inner", m.inner},
                {"state_size", m.state}, {"conv_kernel", m.conv}, {"bias", m.bias},       {"conv_bias", m.conv_bias},
                {"inputs", {input}}};
  if (m.out_bias != m.bias) layer["out_bias"] = m.out_bias;
  if (m.version == 1) {
    layer["dt_rank"] = m.dt_rank;
  } else {
    layer["num_heads"] = m.heads;
    layer["n_groups"] = m.groups;
    if (!m.gated_norm) layer["gated_norm"] = false;
    if (m.chunk != 256) layer["chunk_size"] = m.chunk;
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

// ---- hybrids (Jamba) ------------------------------------------------------------------------------------

/// The smallest P with layer i like layer i - P for every layer: the pattern repeats every P layers. `Kinds` is a
/// vector of SsmLayer (Jamba) or Nemotron-H's pattern string.
template <class Kinds>
std::int64_t smallest_period(const Kinds& kinds) {
  const auto n = static_cast<std::int64_t>(kinds.size());
  for (std::int64_t period = 1; period < n; ++period) {
    bool repeats = true;
    for (std::int64_t i = period; i < n && repeats; ++i) {
      repeats = kinds[static_cast<std::size_t>(i)] == kinds[static_cast<std::size_t>(i - period)];
    }
    if (repeats) return period;
  }
  return n;
}

/// Appends a router reading `router_input` and `a.experts` bias-free experts of `width` (top `a.top_k`, gated or
/// not) reading `expert_input` and writing `outer` wide rows; returns the experts' output. Jamba's MoE MLP and
/// Nemotron-H's routed experts (whose LatentMoE routes on the hidden state but runs the experts in the latent).
std::string push_routed_experts(Seq& s, const Arch& a, std::int64_t width, bool gated, std::int64_t outer,
                                const std::string& suffix, const std::string& router_input,
                                const std::string& expert_input) {
  s.push({{"type", "dense"},
          {"name", "router" + suffix},
          {"units", a.experts},
          {"bias", false},
          {"inputs", {router_input}}});
  Json up = {{"type", "dense"}, {"name", "experts_up" + suffix}, {"units", width},   {"activation", a.act},
             {"bias", false},   {"experts", a.experts},          {"top_k", a.top_k}, {"inputs", {expert_input}}};
  if (gated) up["gated"] = true;
  s.push(up);
  return s.push({{"type", "dense"},
                 {"name", "experts_down" + suffix},
                 {"units", outer},
                 {"bias", false},
                 {"experts", a.experts},
                 {"top_k", a.top_k}});
}

/// Appends a hybrid layer's feed-forward part reading `input`: a SwiGLU MLP, or a router and `experts` of them.
std::string hybrid_mlp(Seq& s, const Arch& a, bool experts, const std::string& suffix, const std::string& input) {
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
  return push_routed_experts(s, a, a.inner, true, a.hidden, suffix, input, input);
}

/// Appends a hybrid layer of kind `k` reading and writing "stream"; `suffix` tells the layers of one period apart.
void hybrid_layer(Seq& s, const Arch& a, const Mixer& m, const SsmLayer& k, const std::string& suffix) {
  std::string ln = s.push({{"type", "rmsnorm"}, {"name", "input_layernorm" + suffix}, {"inputs", {"stream"}}});
  std::string mixed;
  if (k.attention) {
    Json at = {{"type", "attention"},  {"name", "self_attn" + suffix},
               {"num_heads", a.heads}, {"num_kv_heads", a.kv_heads},
               {"causal", true},       {"bias", false},
               {"out_bias", false},    {"inputs", {ln}}};
    if (a.attn_dropout > 0) at["dropout"] = a.attn_dropout;
    mixed = s.push(at);
  } else {
    mixed = push_mixer(s, m, "mamba" + suffix, ln);
  }
  if (k.mlp == SsmMlp::None) {
    s.push({{"type", "add"}, {"name", "stream"}, {"inputs", {"stream", mixed}}});
    return;
  }
  std::string r = s.push({{"type", "add"}, {"name", "mixer_residual" + suffix}, {"inputs", {"stream", mixed}}});
  std::string ln2 = s.push({{"type", "rmsnorm"}, {"name", "pre_ff_layernorm" + suffix}, {"inputs", {r}}});
  std::string out = hybrid_mlp(s, a, k.mlp == SsmMlp::Moe, suffix, ln2);
  s.push({{"type", "add"}, {"name", "stream"}, {"inputs", {r, out}}});
}

/// `count` layers of `kinds` from layer `first` on, as one block.
Json hybrid_layers(const Arch& a, const Mixer& m, const std::vector<SsmLayer>& kinds, std::int64_t first,
                   std::int64_t count) {
  Seq block;
  for (std::int64_t j = 0; j < count; ++j) {
    hybrid_layer(block, a, m, kinds[static_cast<std::size_t>(first + j)], count > 1 ? "_" + std::to_string(j) : "");
  }
  return block.layers;
}

/// Appends a hybrid's layers: the smallest period repeated, then the layers left over.
void push_hybrid_stack(Seq& s, const Cfg& c, const Arch& a, const Mixer& m, const std::vector<SsmLayer>& kinds) {
  if (a.heads > 0) check_heads(c, a.hidden, a.heads, a.kv_heads, false, "num_attention_heads", "num_key_value_heads");
  std::int64_t period = smallest_period(kinds);
  s.push({{"type", "repeat"},
          {"name", "layers"},
          {"count", a.layers / period},
          {"layers", hybrid_layers(a, m, kinds, 0, period)}});
  std::int64_t left = a.layers % period;
  if (left > 0) {
    s.push({{"type", "repeat"},
            {"name", "last_layers"},
            {"count", 1},
            {"layers", hybrid_layers(a, m, kinds, a.layers - left, left)}});
  }
}

// ---- the model ------------------------------------------------------------------------------------------

/// Appends the head of `a`: the LM head (tied to the embeddings when `a.tied`) and its loss, or none.
void push_head(Seq& s, const Cfg& c, const Arch& a) {
  if (a.head.head == Head::None) return;
  if (a.head.head != Head::LanguageModel) {
    throw InputError(c.field("task_head"), "a state-space model takes the language-model head or none");
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

// ---- Nemotron-H ------------------------------------------------------------------------------------------
// As huggingface/transformers src/transformers/models/nemotron_h/modeling_nemotron_h.py builds it (read at commit
// 008d9e9577b0, the modular file modular_nemotron_h.py at the same commit): NemotronHBlock is norm (RMSNorm) ->
// one mixer -> residual add, the mixer by the layer's character: NemotronHMamba2Mixer (in_proj hidden -> 2 I + 2 G N
// + H with bias use_bias, a depthwise conv1d over I + 2 G N with bias use_conv_bias, dt_bias, A_log and D per head,
// the gated RMSNorm over I, out_proj I -> hidden; I = mamba_num_heads x mamba_head_dim), NemotronHAttention
// (JambaAttention: q/k/v/o without bias, head_dim from the config, no rotary embedding), NemotronHMLP (up_proj ->
// mlp_hidden_act -> down_proj, bias mlp_bias, not gated) or NemotronHMoE (a router hidden -> n_routed_experts
// without bias, non-gated experts without biases of moe_intermediate_size, and shared_experts, a NemotronHMLP of
// moe_shared_expert_intermediate_size, added). Then norm_f and an untied lm_head unless tie_word_embeddings.

/// Nemotron-H's attention mixer `name` reading `input`: grouped-query, head_dim from the config, no positions.
Json nemotron_attention(const Arch& a, const std::string& name, const std::string& input) {
  Json at = {{"type", "attention"},    {"name", name},   {"num_heads", a.heads}, {"num_kv_heads", a.kv_heads},
             {"head_dim", a.head_dim}, {"causal", true}, {"bias", false},        {"out_bias", false},
             {"inputs", {input}}};
  if (a.attn_dropout > 0) at["dropout"] = a.attn_dropout;
  return at;
}

/// Appends NemotronHMLP of `width` reading `input` (up, activation, down; no gate); returns its output.
std::string nemotron_mlp(Seq& s, const Arch& a, std::int64_t width, const std::string& prefix,
                         const std::string& suffix, const std::string& input) {
  s.push({{"type", "dense"},
          {"name", prefix + "_up" + suffix},
          {"units", width},
          {"activation", a.act},
          {"bias", a.mlp_bias},
          {"inputs", {input}}});
  return s.push({{"type", "dense"}, {"name", prefix + "_down" + suffix}, {"units", a.hidden}, {"bias", a.mlp_bias}});
}

/// Appends NemotronHMoE reading `input`: the router, the routed non-gated experts and the shared MLP, summed. With
/// moe_latent_size (Nemotron 3 Super's LatentMoE) the experts run in the latent: fc1_latent_proj takes the hidden
/// state down before them (so tokens are dispatched at the latent width, as Megatron-Core runs it) and
/// fc2_latent_proj back up after them; the router and the shared MLP read the hidden state.
std::string nemotron_moe(Seq& s, const Arch& a, const std::string& suffix, const std::string& input) {
  std::string routed;
  if (a.moe_latent > 0) {
    std::string latent = s.push({{"type", "dense"},
                                 {"name", "fc1_latent_proj" + suffix},
                                 {"units", a.moe_latent},
                                 {"bias", a.mlp_bias},
                                 {"inputs", {input}}});
    push_routed_experts(s, a, a.moe_inner, false, a.moe_latent, suffix, input, latent);
    routed =
        s.push({{"type", "dense"}, {"name", "fc2_latent_proj" + suffix}, {"units", a.hidden}, {"bias", a.mlp_bias}});
  } else {
    routed = push_routed_experts(s, a, a.moe_inner, false, a.hidden, suffix, input, input);
  }
  std::string shared = nemotron_mlp(s, a, a.shared_inner, "shared", suffix, input);
  return s.push({{"type", "add"}, {"name", "experts_sum" + suffix}, {"inputs", {routed, shared}}});
}

/// Appends one NemotronHBlock of kind `kind` (a pattern character) reading and writing "stream".
void nemotron_block(Seq& s, const Arch& a, const Mixer& m, char kind, const std::string& suffix) {
  std::string ln = s.push({{"type", "rmsnorm"}, {"name", "norm" + suffix}, {"inputs", {"stream"}}});
  std::string mixed;
  switch (kind) {
    case 'M': mixed = push_mixer(s, m, "mamba" + suffix, ln); break;
    case '*': mixed = s.push(nemotron_attention(a, "self_attn" + suffix, ln)); break;
    case '-': mixed = nemotron_mlp(s, a, a.inner, "mlp", suffix, ln); break;
    default: mixed = nemotron_moe(s, a, suffix, ln); break;  // 'E': the reader admits no other character
  }
  s.push({{"type", "add"}, {"name", "stream"}, {"inputs", {"stream", mixed}}});
}

/// Layer `i` of the pattern as one block: a repeat of one copy numbered `i` ("layers.i."), so every pattern layer is
/// its own block for pipeline stages, recomputation and the layout's `t`, as Megatron-Core's hybrid stack counts
/// layers.
Json nemotron_layer(const Arch& a, const Mixer& m, std::int64_t i) {
  Seq block;
  nemotron_block(block, a, m, a.block_pattern[static_cast<std::size_t>(i)], "");
  return {{"type", "repeat"}, {"name", "layers"}, {"count", 1}, {"start", i}, {"layers", block.layers}};
}

/// The model format's mtp_block: the layers of the MTP pattern, as the main stack's, reading the depth's input.
Json nemotron_mtp_block(const Arch& a, const Mixer& m) {
  Seq block;
  block.start_stream("stream", "input", 0.0);
  for (std::size_t j = 0; j < a.mtp_pattern.size(); ++j) {
    nemotron_block(block, a, m, a.mtp_pattern[j], "_" + std::to_string(j));
  }
  return {{"features", a.hidden}, {"layers", block.layers}};
}

// ---- Granite 4.0 -----------------------------------------------------------------------------------------
// As huggingface/transformers src/transformers/models/granitemoehybrid/modular_granitemoehybrid.py builds it (read
// at commit 023633dd6387): GraniteMoeHybridDecoderLayer is input_layernorm (RMSNorm) -> the layer's mixer by
// layers_block_type (GraniteMoeHybridMambaLayer, Bamba's Mamba-2 mixer: in_proj hidden -> 2 I + 2 G N + H and
// out_proj I -> hidden with bias mamba_proj_bias, a depthwise conv1d over I + 2 G N with bias mamba_conv_bias,
// dt_bias, A_log and D per head, the gated RMSNorm over I; or GraniteMoeSharedAttention: q/k/v/o with bias
// attention_bias, head_dim hidden / heads, rotary positions only when position_embedding_type is "rope") ->
// residual -> post_attention_layernorm -> block_sparse_moe (a bias-free router and num_local_experts SwiGLU
// experts of intermediate_size, none when num_local_experts is 0) plus shared_mlp (a SwiGLU of
// shared_intermediate_size) -> residual. Then norm and the lm_head, tied per tie_word_embeddings.

/// GraniteMoeSharedAttention `name` reading `input`: grouped-query, head_dim hidden / heads.
Json granite_attention(const Arch& a, const std::string& name, const std::string& input) {
  Json at = {{"type", "attention"}, {"name", name},       {"num_heads", a.heads},   {"num_kv_heads", a.kv_heads},
             {"causal", true},      {"bias", a.qkv_bias}, {"out_bias", a.out_bias}, {"inputs", {input}}};
  if (a.attn_dropout > 0) at["dropout"] = a.attn_dropout;
  const std::int64_t head = a.hidden / a.heads;
  if (a.rotary > 0 && head >= 2) at["rotary_dim"] = head - head % 2;
  return at;
}

/// Appends shared_mlp reading `input`: a bias-free SwiGLU of shared_intermediate_size; returns its output.
std::string granite_shared_mlp(Seq& s, const Arch& a, const std::string& input) {
  s.push({{"type", "dense"},
          {"name", "shared_mlp_up"},
          {"units", a.shared_inner},
          {"activation", a.act},
          {"gated", true},
          {"bias", false},
          {"inputs", {input}}});
  return s.push({{"type", "dense"}, {"name", "shared_mlp_down"}, {"units", a.hidden}, {"bias", false}});
}

/// Layer `i` of a Granite 4.0 model as one block (a repeat of one copy numbered `i`, as nemotron_layer).
Json granite_layer(const Arch& a, const Mixer& m, std::int64_t i) {
  Seq s;
  const bool attention = a.ssm_plan[static_cast<std::size_t>(i)].attention;
  std::string ln = s.push({{"type", "rmsnorm"}, {"name", "input_layernorm"}, {"inputs", {"stream"}}});
  std::string mixed = attention ? s.push(granite_attention(a, "self_attn", ln)) : push_mixer(s, m, "mamba", ln);
  std::string r = s.push({{"type", "add"}, {"name", "mixer_residual"}, {"inputs", {"stream", mixed}}});
  std::string ln2 = s.push({{"type", "rmsnorm"}, {"name", "post_attention_layernorm"}, {"inputs", {r}}});
  std::string out;
  if (a.experts > 0) {
    std::string routed = push_routed_experts(s, a, a.inner, true, a.hidden, "", ln2, ln2);
    std::string shared = granite_shared_mlp(s, a, ln2);
    out = s.push({{"type", "add"}, {"name", "experts_sum"}, {"inputs", {routed, shared}}});
  } else {
    out = granite_shared_mlp(s, a, ln2);
  }
  s.push({{"type", "add"}, {"name", "stream"}, {"inputs", {r, out}}});
  return {{"type", "repeat"}, {"name", "layers"}, {"count", 1}, {"start", i}, {"layers", s.layers}};
}

// ---- Falcon-H1 -------------------------------------------------------------------------------------------
// As huggingface/transformers src/transformers/models/falcon_h1/modular_falcon_h1.py builds it (read at commit
// 00511f5df3b6): FalconH1DecoderLayer is input_layernorm (RMSNorm) -> FalconH1Mixer (Mamba2Mixer's layout: in_proj
// hidden -> 2 I + 2 G N + H with bias mamba_proj_bias, the depthwise conv1d over I + 2 G N with bias mamba_conv_bias,
// dt_bias, A_log and D per head, the gated RMSNorm over I only when mamba_rms_norm, out_proj I -> hidden with bias
// projectors_bias; I = mamba_d_ssm) and FalconH1Attention (LlamaAttention: q/k/v/o with bias attention_bias,
// head_dim, rotary positions) side by side on the normed input, their outputs summed -> residual ->
// pre_ff_layernorm -> FalconH1MLP (a SwiGLU with bias mlp_bias) -> residual. Then final_layernorm and the lm_head,
// tied per tie_word_embeddings.

/// FalconH1Attention reading `input`: grouped-query, head_dim from the config, rotary positions on whole heads.
Json falcon_h1_attention(const Arch& a, const std::string& input) {
  const std::int64_t head = a.head_dim > 0 ? a.head_dim : a.hidden / a.heads;
  Json at = {{"type", "attention"},        {"name", "self_attn"},    {"num_heads", a.heads},
             {"num_kv_heads", a.kv_heads}, {"head_dim", head},       {"causal", true},
             {"bias", a.qkv_bias},         {"out_bias", a.out_bias}, {"rotary_dim", head - head % 2},
             {"inputs", {input}}};
  if (a.attn_dropout > 0) at["dropout"] = a.attn_dropout;
  return at;
}

/// One FalconH1DecoderLayer reading and writing "stream".
Json falcon_h1_block(const Arch& a, const Mixer& m) {
  Seq s;
  std::string ln = s.push({{"type", "rmsnorm"}, {"name", "input_layernorm"}, {"inputs", {"stream"}}});
  std::string mixed = push_mixer(s, m, "mamba", ln);
  std::string attended = s.push(falcon_h1_attention(a, ln));
  std::string sum = s.push({{"type", "add"}, {"name", "mixers_sum"}, {"inputs", {mixed, attended}}});
  std::string r = s.push({{"type", "add"}, {"name", "mixer_residual"}, {"inputs", {"stream", sum}}});
  std::string ln2 = s.push({{"type", "rmsnorm"}, {"name", "pre_ff_layernorm"}, {"inputs", {r}}});
  s.push({{"type", "dense"},
          {"name", "feed_forward_up"},
          {"units", a.inner},
          {"activation", a.act},
          {"gated", true},
          {"bias", a.mlp_bias},
          {"inputs", {ln2}}});
  std::string out =
      s.push({{"type", "dense"}, {"name", "feed_forward_down"}, {"units", a.hidden}, {"bias", a.mlp_bias}});
  s.push({{"type", "add"}, {"name", "stream"}, {"inputs", {r, out}}});
  return s.layers;
}

/// `a` with its head read from `c`: the bare model or the causal-LM head (`head_class`), else an error naming the
/// architectures and `subject`.
Arch with_causal_lm_head(const Cfg& c, const Arch& a, const std::string& head_class, const std::string& subject,
                         std::vector<std::string>& warnings) {
  Arch full = a;
  full.head = read_head(c, warnings);
  if (full.head.head != Head::None && full.head.head != Head::LanguageModel) {
    throw InputError(c.field("architectures"),
                     "only the causal-LM head (" + head_class + ") or the bare model is supported for " + subject);
  }
  return full;
}

/// The token model every state-space family builds: embeddings, the layers `push_layers` writes onto the stream
/// (given the mixer), the final RMSNorm `final_norm`, the head.
template <class PushLayers>
Json decoder_shell(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings,
                   const std::string& final_norm, PushLayers push_layers) {
  const Mixer mixer = mixer_of(a);
  const std::int64_t seq = ssm_seq(wanted, a, warnings);
  Seq s;
  s.push({{"type", "embedding"}, {"name", "embeddings"}, {"vocab_size", a.vocab}, {"dim", a.hidden}});
  s.start_stream("stream", "embeddings", 0.0);
  push_layers(s, mixer);
  s.push({{"type", "rmsnorm"}, {"name", final_norm}, {"inputs", {"stream"}}});
  push_head(s, c, a);
  return tokens_model(a.name, seq, s.layers);
}

}  // namespace

std::vector<SsmLayer> ssm_layer_kinds(const Arch& a) {
  if (!a.ssm_plan.empty()) return a.ssm_plan;
  std::vector<SsmLayer> kinds(static_cast<std::size_t>(a.layers));
  for (std::int64_t i = 0; i < a.layers; ++i) {
    SsmLayer& k = kinds[static_cast<std::size_t>(i)];
    k.attention = a.attn_period > 0 && i % a.attn_period == a.attn_offset;
    bool routed = a.experts > 1 && a.expert_period > 0 && i % a.expert_period == a.expert_offset;
    k.mlp = a.inner <= 0 ? SsmMlp::None : routed ? SsmMlp::Moe : SsmMlp::Dense;
  }
  return kinds;
}

Json build_ssm_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  const std::vector<SsmLayer> kinds = ssm_layer_kinds(a);
  // Only Mamba blocks (no attention, no MLP): the MambaBlock layout; otherwise Jamba's decoder layers.
  const bool hybrid =
      std::any_of(kinds.begin(), kinds.end(), [](const SsmLayer& k) { return k.attention || k.mlp != SsmMlp::None; });
  Json model = decoder_shell(c, a, wanted, warnings, "norm_f", [&](Seq& s, const Mixer& mixer) {
    if (hybrid) {
      push_hybrid_stack(s, c, a, mixer, kinds);
    } else {
      s.push({{"type", "repeat"}, {"name", "layers"}, {"count", a.layers}, {"layers", mamba_block(mixer)}});
    }
  });
  if (a.ssm_inner_norms == "weightless") {
    warnings.push_back(
        "FalconMamba's weightless RMS norms of B, C and dt inside each mixer (no parameters) are "
        "not costed");
  }
  const std::int64_t period = hybrid ? smallest_period(kinds) : 1;
  if (period > 1) {
    // Its last block is a whole period: copying it would be a guess at a block no config of this family states.
    model["mtp_block"] = "this hybrid repeats a period of " + std::to_string(period) +
                         " layers as one block, and its config states no multi-token-prediction block";
  }
  return model;
}

Json build_ssm(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  const Arch full = with_causal_lm_head(c, a, a.name + " ...ForCausalLM", "this model_type", warnings);
  return build_ssm_arch(c, full, wanted, warnings);
}

Json build_nemotron_h(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  const Arch full = with_causal_lm_head(c, a, "NemotronHForCausalLM", "nemotron_h", warnings);
  Json model = decoder_shell(c, full, wanted, warnings, "norm_f", [&](Seq& s, const Mixer& mixer) {
    for (std::int64_t i = 0; i < full.layers; ++i) s.push(nemotron_layer(full, mixer, i));
  });
  model["mtp_block"] = full.mtp_pattern.empty() ? Json(full.mtp_unavailable) : nemotron_mtp_block(full, mixer_of(full));
  return model;
}

Json build_granite_hybrid(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  const Arch full = with_causal_lm_head(c, a, "GraniteMoeHybridForCausalLM", "granitemoehybrid", warnings);
  Json model = decoder_shell(c, full, wanted, warnings, "norm_f", [&](Seq& s, const Mixer& mixer) {
    for (std::int64_t i = 0; i < full.layers; ++i) s.push(granite_layer(full, mixer, i));
  });
  model["mtp_block"] = "the granitemoehybrid config states no multi-token-prediction block";
  return model;
}

Json build_falcon_h1(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  const Arch full = with_causal_lm_head(c, a, "FalconH1ForCausalLM", "falcon_h1", warnings);
  return decoder_shell(c, full, wanted, warnings, "final_layernorm", [&](Seq& s, const Mixer& mixer) {
    s.push({{"type", "repeat"}, {"name", "layers"}, {"count", full.layers}, {"layers", falcon_h1_block(full, mixer)}});
  });
}

}  // namespace prenet::hf
