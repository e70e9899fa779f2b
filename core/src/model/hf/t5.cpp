// T5 and Switch Transformers: encoder and decoder stacks of RMS-normalised pre-norm blocks without biases,
// relative position buckets (one small table per stack), a shared embedding and an LM head tied to it by
// default; Switch makes every n-th block's MLP a top-1 mixture of experts.
#include "model/hf/builders.hpp"
#include "model/hf/layer_seq.hpp"

namespace prenet::hf {
namespace {

/// Whether block `i` of a Switch stack is sparse, as Hugging Face decides it (i % step == 1, or every block).
bool switch_sparse(std::int64_t i, std::int64_t step) { return step > 0 && (step == 1 || i % step == 1); }

/// Attention `name` without biases reading `inputs` (one for self-attention, two for cross-attention).
Json t5_attention(const Arch& t, const std::string& name, bool causal, Json inputs) {
  return Json{{"type", "attention"}, {"name", name},  {"num_heads", t.heads},       {"head_dim", t.head_dim},
              {"causal", causal},    {"bias", false}, {"inputs", std::move(inputs)}};
}

/// An RMSNorm `name` reading `input`.
Json rms(const std::string& name, const std::string& input) {
  return Json{{"type", "rmsnorm"}, {"name", name}, {"inputs", {input}}};
}

/// Appends Switch's routed MLP reading `input`: a router sends every token to one expert (top-1); each
/// expert is a dense MLP. Returns the output's name.
std::string switch_ff(const Arch& t, Seq& s, const std::string& input) {
  s.push({{"type", "dense"}, {"name", "router"}, {"units", t.experts}, {"bias", t.router_bias}, {"inputs", {input}}});
  s.push({{"type", "dense"},
          {"name", "experts_wi"},
          {"units", t.inner},
          {"activation", t.act},
          {"bias", false},
          {"experts", t.experts},
          {"top_k", 1},
          {"inputs", {input}}});
  std::string wo = s.push({{"type", "dense"},
                           {"name", "experts_wo"},
                           {"units", t.hidden},
                           {"bias", false},
                           {"experts", t.experts},
                           {"top_k", 1}});
  return s.maybe_dropout("ff_dropout", wo, t.dropout);
}

/// Appends the feed-forward part reading `input` (routed when `sparse`); returns the output's name.
std::string t5_ff(const Arch& t, Seq& s, const std::string& input, bool sparse) {
  if (sparse) return switch_ff(t, s, input);
  Json wi = {{"type", "dense"},     {"name", "wi"},  {"units", t.inner},
             {"activation", t.act}, {"bias", false}, {"inputs", {input}}};
  if (t.gated) wi["gated"] = true;
  s.push(wi);
  std::string wo = s.push({{"type", "dense"}, {"name", "wo"}, {"units", t.hidden}, {"bias", false}});
  return s.maybe_dropout("ff_dropout", wo, t.dropout);
}

/// One encoder block reading and writing "stream".
Json encoder_block(const Arch& t, bool sparse) {
  Seq enc;
  enc.push(rms("ln_1", "stream"));
  std::string a = enc.maybe_dropout("attn_dropout", enc.push(t5_attention(t, "self_attn", false, {"ln_1"})), t.dropout);
  enc.push({{"type", "add"}, {"name", "attn_residual"}, {"inputs", {"stream", a}}});
  enc.push(rms("ln_2", "attn_residual"));
  enc.push({{"type", "add"}, {"name", "stream"}, {"inputs", {"attn_residual", t5_ff(t, enc, "ln_2", sparse)}}});
  return enc.layers;
}

/// One decoder block reading and writing "dstream", attending to "encoder_out".
Json decoder_block(const Arch& t, bool sparse) {
  Seq dec;
  dec.push(rms("ln_1", "dstream"));
  std::string a =
      dec.maybe_dropout("self_attn_dropout", dec.push(t5_attention(t, "self_attn", true, {"ln_1"})), t.dropout);
  dec.push({{"type", "add"}, {"name", "self_residual"}, {"inputs", {"dstream", a}}});
  dec.push(rms("ln_2", "self_residual"));
  a = dec.maybe_dropout("cross_attn_dropout", dec.push(t5_attention(t, "cross_attn", false, {"ln_2", "encoder_out"})),
                        t.dropout);
  dec.push({{"type", "add"}, {"name", "cross_residual"}, {"inputs", {"self_residual", a}}});
  dec.push(rms("ln_3", "cross_residual"));
  dec.push({{"type", "add"}, {"name", "dstream"}, {"inputs", {"cross_residual", t5_ff(t, dec, "ln_3", sparse)}}});
  return dec.layers;
}

/// Appends a stack of `count` blocks. Identical blocks are one repeat; a Switch stack mixes dense and sparse
/// blocks, so its blocks are written out one by one under the names a repeat would give them (local names
/// resolve to the latest block).
void stack(const Arch& t, Seq& s, const std::string& name, std::int64_t count, std::int64_t step,
           Json (*block)(const Arch&, bool)) {
  bool any_sparse = false;
  for (std::int64_t i = 0; i < count; ++i) any_sparse = any_sparse || switch_sparse(i, step);
  if (!any_sparse) {
    s.push({{"type", "repeat"}, {"name", name}, {"count", count}, {"layers", block(t, false)}});
    return;
  }
  Json dense = block(t, false), sparse = block(t, true);
  for (std::int64_t i = 0; i < count; ++i) {
    for (Json layer : switch_sparse(i, step) ? sparse : dense) {
      layer["name"] = name + "." + std::to_string(i) + "." + layer["name"].get<std::string>();
      s.push(std::move(layer));
    }
  }
}

/// The relative position buckets of one stack: a (buckets x heads) table in its first block.
Json relative_bias(const Arch& t, const std::string& name) {
  return {{"type", "embedding"}, {"name", name}, {"vocab_size", t.buckets}, {"dim", t.heads}, {"inputs", {"input"}}};
}

/// The whole encoder-decoder with its LM head and loss.
Json t5_layers(const Arch& t) {
  Seq s;
  s.push({{"type", "embedding"}, {"name", "shared"}, {"vocab_size", t.vocab}, {"dim", t.hidden}});
  s.push(relative_bias(t, "encoder_relative_bias"));
  s.start_stream("stream", "shared", t.dropout);
  stack(t, s, "encoder", t.layers, t.experts > 0 ? t.encoder_sparse_step : 0, encoder_block);
  s.push(rms("encoder_final_norm", "stream"));
  s.start_stream("encoder_out", "encoder_final_norm", t.dropout);
  // The decoder reads the target tokens through the shared embedding (target length = seq_len).
  s.push(relative_bias(t, "decoder_relative_bias"));
  s.start_stream("dstream", "shared", t.dropout);
  stack(t, s, "decoder", t.decoder_layers, t.experts > 0 ? t.decoder_sparse_step : 0, decoder_block);
  s.push(rms("decoder_final_norm", "dstream"));
  s.maybe_dropout("decoder_out", "decoder_final_norm", t.dropout);
  Json head = {{"type", "dense"}, {"name", "lm_head"}, {"units", t.vocab}, {"bias", false}};
  if (t.tied) head["tied_to"] = "shared";
  s.push(head);
  s.push({{"type", "cross_entropy"}, {"name", "loss"}});
  return s.layers;
}

/// Warns when Switch's expert capacity drops tokens that the estimate still routes.
void warn_capacity(const Arch& t, std::int64_t seq, std::vector<std::string>& warnings) {
  if (t.experts <= 0 || t.expert_capacity <= 0) return;
  if (seq > t.experts * t.expert_capacity) {
    warnings.push_back("Switch routing: " + std::to_string(seq) +
                       " tokens per sequence exceed num_experts x "
                       "expert_capacity = " +
                       std::to_string(t.experts * t.expert_capacity) +
                       "; Hugging Face skips the overflow tokens' experts, the estimate runs every token through one");
  }
}

}  // namespace

Json build_t5(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  // The row's steps read everything the stacks need (expert_capacity included).
  return build_t5_arch(c, a, wanted, warnings);
}

Json build_t5_arch(const Cfg&, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  // The target sequence is taken as long as the input (docs/MODEL_FORMAT.md); relative buckets run longer.
  std::int64_t seq = choose_seq(wanted.seq_len, a.max_positions, false, warnings);
  warn_capacity(a, seq, warnings);
  return tokens_model(a.name, seq, t5_layers(a));
}

}  // namespace prenet::hf
