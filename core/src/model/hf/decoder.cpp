// Decoder-only transformers: GPT-2, GPT-NeoX, GPT-J, OPT, Phi, Falcon, Llama and relatives.
#include "model/hf/builders.hpp"
#include "model/hf/heads.hpp"
#include "model/hf/layer_seq.hpp"
#include "prenet/network.hpp"

namespace prenet::hf {
namespace {

/// The block's normalisation layer `name` reading `input`.
Json norm(const Arch& a, const std::string& name, const std::string& input) {
  Json n = {{"type", a.rms ? "rmsnorm" : "layernorm"}, {"name", name}, {"inputs", {input}}};
  if (!a.rms && !a.norm_bias) n["bias"] = false;
  if (!a.norm_scale) n["scale"] = false;
  return n;
}

/// Appends the routed experts reading `input` (a router picks top_k of them for every token), and beside them
/// the shared expert (DeepSeek, Qwen2-MoE, Llama 4), gated by sigmoid(x·w) in Qwen2-MoE; returns the output.
std::string experts_mlp(const Arch& a, Seq& s, const std::string& input) {
  const bool bias = a.mlp_bias || a.expert_bias;
  s.push({{"type", "dense"}, {"name", "router"}, {"units", a.experts}, {"bias", a.router_bias}, {"inputs", {input}}});
  Json experts_up = {{"type", "dense"},
                     {"name", "experts_up"},
                     {"units", a.moe_inner > 0 ? a.moe_inner : a.inner},
                     {"activation", a.act},
                     {"gated", a.gated},
                     {"bias", bias},
                     {"experts", a.experts},
                     {"top_k", a.top_k},
                     {"inputs", {input}}};
  if (a.swiglu_limit > 0) {  // gpt-oss: (clamp(up) + 1) * act(clamp(gate))
    experts_up["glu_limit"] = a.swiglu_limit;
    experts_up["glu_offset"] = 1.0;
  }
  s.push(experts_up);
  std::string routed = s.push({{"type", "dense"},
                               {"name", "experts_down"},
                               {"units", a.hidden},
                               {"bias", bias},
                               {"experts", a.experts},
                               {"top_k", a.top_k}});
  if (a.shared_inner <= 0) return routed;
  Json up = {{"type", "dense"},     {"name", "shared_up"}, {"units", a.shared_inner},
             {"activation", a.act}, {"bias", a.mlp_bias},  {"inputs", {input}}};
  if (a.gated) up["gated"] = true;
  s.push(up);
  std::string shared = s.push({{"type", "dense"}, {"name", "shared_down"}, {"units", a.hidden}, {"bias", a.mlp_bias}});
  if (a.shared_gate) {
    s.push({{"type", "dense"},
            {"name", "shared_gate"},
            {"units", 1},
            {"activation", "sigmoid"},
            {"bias", false},
            {"inputs", {input}}});
    shared = s.push({{"type", "multiply"}, {"name", "shared_gated"}, {"inputs", {shared, "shared_gate"}}});
  }
  return s.push({{"type", "add"}, {"name", "experts_sum"}, {"inputs", {routed, shared}}});
}

/// Appends the feed-forward part of a layer planned as `p` reading `input`; returns the name of its output.
std::string mlp(const Arch& a, const LayerPlan& p, Seq& s, const std::string& input) {
  if (p.moe) return experts_mlp(a, s, input);
  Json up = {{"type", "dense"},     {"name", "mlp_up"},   {"units", p.inner},
             {"activation", a.act}, {"bias", a.mlp_bias}, {"inputs", {input}}};
  if (a.gated) up["gated"] = true;
  s.push(up);
  return s.push({{"type", "dense"}, {"name", "mlp_down"}, {"units", a.hidden}, {"bias", a.mlp_bias}});
}

/// The attention layer's name: what it attends to, so the layers of a mixed stack read apart.
std::string attention_name(const LayerPlan& p) {
  switch (p.span) {
    case AttnSpan::Sliding: return "sliding_attn";
    case AttnSpan::Chunked: return "chunked_attn";
    case AttnSpan::Full: break;
  }
  return "attn";
}

/// DeepSeek's multi-head latent attention reading `input`.
Json latent_attention(const Arch& a, const std::string& input) {
  Json at = {{"type", "mla"},
             {"name", "attn"},
             {"num_heads", a.heads},
             {"q_lora_rank", a.q_lora_rank},
             {"kv_lora_rank", a.kv_lora_rank},
             {"qk_nope_head_dim", a.qk_nope_dim},
             {"qk_rope_head_dim", a.qk_rope_dim},
             {"v_head_dim", a.v_head_dim},
             {"causal", true},
             {"bias", a.qkv_bias},
             {"inputs", {input}}};
  if (a.attn_dropout > 0) at["dropout"] = a.attn_dropout;
  return at;
}

/// A Gated DeltaNet mixer reading `input` (Qwen3-Next's and Qwen3.5's linear_attention layers).
Json gated_deltanet(const Arch& a, const std::string& input) {
  Json mixer = {{"type", "gated_deltanet"},        {"name", "linear_attn"},
                {"key_heads", a.delta_key_heads},  {"value_heads", a.delta_value_heads},
                {"key_head_dim", a.delta_key_dim}, {"value_head_dim", a.delta_value_dim},
                {"conv_kernel", a.delta_conv},     {"inputs", {input}}};
  if (a.delta_split) mixer["split_projections"] = true;
  return mixer;
}

/// The token mixer of a layer planned as `p`, reading `input`: causal self-attention, or a Gated DeltaNet.
Json attention(const Arch& a, const LayerPlan& p, const std::string& input) {
  if (p.linear) return gated_deltanet(a, input);
  if (a.mla) return latent_attention(a, input);
  Json at = {{"type", "attention"}, {"name", attention_name(p)}, {"num_heads", a.heads},   {"num_kv_heads", a.kv_heads},
             {"causal", true},      {"bias", a.qkv_bias},        {"out_bias", a.out_bias}, {"inputs", {input}}};
  if (a.head_dim > 0) at["head_dim"] = a.head_dim;
  if (a.attn_dropout > 0) at["dropout"] = a.attn_dropout;
  if (p.span == AttnSpan::Sliding) at["window"] = p.window;
  if (p.span == AttnSpan::Chunked) at["chunk"] = p.window;
  if (a.qk_norm != "none" && (p.rope || !a.qk_norm_rope_only)) at["qk_norm"] = a.qk_norm;
  if (!a.learned_positions && p.rope && a.rotary > 0) {
    // The rotated width of each head, even (RoPE turns pairs): Hugging Face's int(head_dim * factor).
    const std::int64_t head = a.head_dim > 0 ? a.head_dim : a.hidden / a.heads;
    const auto width = static_cast<std::int64_t>(static_cast<double>(head) * a.rotary);
    if (width >= 2) at["rotary_dim"] = width - width % 2;
  }
  if (a.sinks) at["sinks"] = true;
  if (a.softcap > 0) at["softcap"] = a.softcap;
  if (a.attn_output_gate) at["output_gate"] = true;
  return at;
}

/// Appends `branch`'s output norm when the family has one (Gemma 2, OLMo 2); returns the branch's output.
std::string after_branch(const Arch& a, Seq& s, const std::string& name, const std::string& branch) {
  return a.norm_after ? s.push(norm(a, name, branch)) : branch;
}

/// One block planned as `p`, reading and writing "stream": post-norm (OPT-350m), parallel (GPT-J, GPT-NeoX,
/// Phi, Falcon, Cohere: one residual sum) or sequential, its branches normed before (pre-norm), after (OLMo 2)
/// or both (Gemma 2's sandwich).
Json decoder_block(const Arch& a, const LayerPlan& p) {
  Seq block;
  const std::string x = "stream";
  if (a.post_norm) {
    std::string at = block.push(attention(a, p, x));
    at = block.maybe_dropout("attn_dropout", at, a.dropout);
    block.push({{"type", "add"}, {"name", "attn_residual"}, {"inputs", {x, at}}});
    std::string n1 = block.push(norm(a, "ln_1", "attn_residual"));
    std::string out = block.maybe_dropout("mlp_dropout", mlp(a, p, block, n1), a.dropout);
    block.push({{"type", "add"}, {"name", "mlp_residual"}, {"inputs", {n1, out}}});
    block.push(norm(a, "stream", "mlp_residual"));
    return block.layers;
  }
  std::string ln1 = a.norm_before ? block.push(norm(a, "ln_1", x)) : x;
  std::string at = after_branch(a, block, "post_attn_norm", block.push(attention(a, p, ln1)));
  at = block.maybe_dropout("attn_dropout", at, a.dropout);
  if (a.parallel) {
    std::string mlp_in = a.parallel_norms == 2 ? block.push(norm(a, "ln_2", x)) : ln1;
    std::string out = block.maybe_dropout("mlp_dropout", mlp(a, p, block, mlp_in), a.dropout);
    block.push({{"type", "add"}, {"name", "stream"}, {"inputs", {x, at, out}}});
  } else {
    std::string r = block.push({{"type", "add"}, {"name", "attn_residual"}, {"inputs", {x, at}}});
    std::string ln2 = a.norm_before ? block.push(norm(a, "ln_2", r)) : r;
    std::string out = after_branch(a, block, "post_mlp_norm", mlp(a, p, block, ln2));
    out = block.maybe_dropout("mlp_dropout", out, a.dropout);
    block.push({{"type", "add"}, {"name", "stream"}, {"inputs", {r, out}}});
  }
  return block.layers;
}

/// Every layer's plan: the family's, else all alike from the uniform fields.
std::vector<LayerPlan> layer_plans(const Arch& a) {
  if (!a.plan.empty()) return a.plan;
  LayerPlan p;
  if (a.window > 0) {
    p.span = AttnSpan::Sliding;
    p.window = a.window;
  }
  p.moe = a.experts > 1;
  p.inner = p.moe ? 0 : a.inner;
  return std::vector<LayerPlan>(static_cast<std::size_t>(a.layers), p);
}

/// `count` consecutive repetitions of the `period` plans starting at layer `start`.
struct Run {
  std::size_t start, period, count;
};

/// How many times plans[i, i + period) repeats back to back from i.
std::size_t repetitions(const std::vector<LayerPlan>& plans, std::size_t i, std::size_t period) {
  std::size_t count = 1;
  while (i + (count + 1) * period <= plans.size()) {
    for (std::size_t k = 0; k < period; ++k) {
      if (plans[i + count * period + k] != plans[i + k]) return count;
    }
    ++count;
  }
  return count;
}

/// Splits the stack into runs, each the period (up to 16 layers) whose repetitions cover the most layers from
/// where the previous run ended (the shorter period on a tie): a uniform stack is one run of period 1, Gemma 3's
/// five sliding layers and one full one a run of period 6 and a remainder.
std::vector<Run> runs_of(const std::vector<LayerPlan>& plans) {
  constexpr std::size_t kMaxPeriod = 16;
  std::vector<Run> runs;
  for (std::size_t i = 0; i < plans.size();) {
    Run best{i, 1, repetitions(plans, i, 1)};
    for (std::size_t p = 2; p <= kMaxPeriod && i + 2 * p <= plans.size(); ++p) {
      std::size_t count = repetitions(plans, i, p);
      if (count >= 2 && p * count > best.period * best.count) best = {i, p, count};
    }
    runs.push_back(best);
    i += best.period * best.count;
  }
  return runs;
}

/// The layers of one period of `run`: its block itself, or each stretch of like layers within the period as a
/// repeat named after its offset ("l0", "l5"), so every layer keeps a name of its own.
Json run_body(const Arch& a, const std::vector<LayerPlan>& plans, const Run& run) {
  if (run.period == 1) return decoder_block(a, plans[run.start]);
  Json body = Json::array();
  for (std::size_t k = 0; k < run.period;) {
    std::size_t same = 1;
    while (k + same < run.period && plans[run.start + k + same] == plans[run.start + k]) ++same;
    body.push_back({{"type", "repeat"},
                    {"name", "l" + std::to_string(k)},
                    {"count", same},
                    {"layers", decoder_block(a, plans[run.start + k])}});
    k += same;
  }
  return body;
}

/// Appends the stack of blocks: one repeat "h" when every layer is alike, else one repeat per run named after
/// its first layer ("h0", "h3": DeepSeek-V3's three dense layers, then its 58 MoE layers).
void decoder_stack(const Arch& a, Seq& s) {
  const std::vector<LayerPlan> plans = layer_plans(a);
  const std::vector<Run> runs = runs_of(plans);
  for (const Run& run : runs) {
    std::string name = runs.size() == 1 ? "h" : "h" + std::to_string(run.start);
    s.push({{"type", "repeat"}, {"name", name}, {"count", run.count}, {"layers", run_body(a, plans, run)}});
  }
}

/// The layers `layers` expands to, nested repeats included.
std::int64_t expanded_size(const Json& layers) {
  std::int64_t n = 0;
  for (const auto& layer : layers) {
    n += layer["type"] == "repeat" ? layer["count"].get<std::int64_t>() * expanded_size(layer["layers"]) : 1;
  }
  return n;
}

/// Appends the token (and learned position, `positions` rows > 0) embeddings up to the "stream".
void decoder_embeddings(const Arch& a, Seq& s, std::int64_t embed_dim, std::int64_t positions) {
  std::string cur = s.push({{"type", "embedding"}, {"name", "wte"}, {"vocab_size", a.vocab}, {"dim", embed_dim}});
  if (embed_dim != a.hidden) {
    cur = s.push({{"type", "dense"}, {"name", "project_in"}, {"units", a.hidden}, {"bias", false}});
  }
  if (positions > 0) {
    s.push({{"type", "embedding"},
            {"name", "wpe"},
            {"vocab_size", positions + a.position_offset},
            {"dim", a.hidden},
            {"positional", true},
            {"inputs", {"input"}}});
    cur = s.push({{"type", "add"}, {"name", "embed"}, {"inputs", {cur, "wpe"}}});
  }
  if (a.embed_norm) cur = s.push(norm(a, "word_embeddings_layernorm", cur));  // BLOOM
  s.start_stream("stream", cur, a.embed_dropout);
}

/// Appends the head `h` on the final stream, and its loss.
void decoder_head(const Arch& a, Seq& s, const HeadChoice& h) {
  switch (h.head) {
    case Head::None: break;
    case Head::TokenClassification:
    case Head::QuestionAnswering: token_head(s, h, h.dropout >= 0 ? h.dropout : a.dropout); break;
    case Head::SequenceClassification:
      // Scores every token, then keeps the last one's (the sequence is taken as unpadded).
      s.push({{"type", "dense"}, {"name", "score"}, {"units", h.labels}, {"bias", false}});
      s.select_token("by_label", "last_token", h.labels);
      s.push({{"type", "cross_entropy"}, {"name", "loss"}});
      break;
    case Head::LanguageModel: {
      Json head = {{"type", "dense"}, {"name", "lm_head"}, {"units", a.vocab}, {"bias", a.head_bias}};
      if (a.tied) head["tied_to"] = "wte";
      s.push(head);
      s.push({{"type", "cross_entropy"}, {"name", "loss"}});
      break;
    }
  }
}

/// The decoder's layers: embeddings, `layers` blocks, the final norm and head `h`.
Json decoder_layers(const Arch& a, std::int64_t positions, const HeadChoice& h) {
  Seq s;
  std::int64_t embed_dim = a.embed_dim > 0 ? a.embed_dim : a.hidden;
  decoder_embeddings(a, s, embed_dim, positions);
  decoder_stack(a, s);
  if (a.final_norm) s.push(norm(a, "ln_f", "stream"));
  if (embed_dim != a.hidden) {
    s.push({{"type", "dense"}, {"name", "project_out"}, {"units", embed_dim}, {"bias", false}});
  }
  decoder_head(a, s, h);
  return s.layers;
}

}  // namespace

Json build_decoder(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  // Before the head is read, so that of a bad head count and a bad `architectures` the count is reported.
  check_heads(c, a.hidden, a.heads, a.kv_heads, a.head_dim > 0, a.heads_field, a.kv_field);
  Arch with_head = a;
  with_head.head = read_head(c, warnings);
  return build_decoder_arch(c, with_head, wanted, warnings);
}

Json build_decoder_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  check_heads(c, a.hidden, a.heads, a.kv_heads, a.head_dim > 0, a.heads_field, a.kv_field);
  std::int64_t seq = choose_seq(wanted.seq_len, a.max_positions, a.learned_positions, warnings);
  std::int64_t positions = 0;
  if (a.learned_positions) positions = a.max_positions > 0 ? a.max_positions : seq;
  Json layers = decoder_layers(a, positions, a.head);
  // Nested repeats hide their size from the caller's check: say here which field makes the model too large.
  if (expanded_size(layers) > Limits::kMaxLayers) {
    std::string depth = c.present({"num_hidden_layers", "n_layer", "num_layers", "n_layers"});
    throw InputError(c.field(depth.empty() ? "num_hidden_layers" : depth),
                     "the model expands to " + std::to_string(expanded_size(layers)) + " layers; the limit is " +
                         std::to_string(Limits::kMaxLayers));
  }
  return tokens_model(a.name, seq, std::move(layers));
}

}  // namespace prenet::hf
