// Decoder-only transformers: GPT-2, GPT-NeoX, GPT-J, OPT, Phi, Falcon, Llama and relatives.
#include "model/hf/builders.hpp"
#include "model/hf/heads.hpp"
#include "model/hf/layer_seq.hpp"

namespace prenet::hf {
namespace {

/// The block's normalisation layer `name` reading `input`.
Json norm(const Arch& a, const std::string& name, const std::string& input) {
  Json n = {{"type", a.rms ? "rmsnorm" : "layernorm"}, {"name", name}, {"inputs", {input}}};
  if (!a.rms && !a.norm_bias) n["bias"] = false;
  if (!a.norm_scale) n["scale"] = false;
  return n;
}

/// Appends Mixtral's mixture of experts reading `input`: a router picks top_k of the experts for every token.
std::string experts_mlp(const Arch& a, Seq& s, const std::string& input) {
  s.push({{"type", "dense"}, {"name", "router"}, {"units", a.experts}, {"bias", false}, {"inputs", {input}}});
  s.push({{"type", "dense"},
          {"name", "experts_up"},
          {"units", a.inner},
          {"activation", a.act},
          {"gated", a.gated},
          {"bias", a.mlp_bias},
          {"experts", a.experts},
          {"top_k", a.top_k},
          {"inputs", {input}}});
  return s.push({{"type", "dense"},
                 {"name", "experts_down"},
                 {"units", a.hidden},
                 {"bias", a.mlp_bias},
                 {"experts", a.experts},
                 {"top_k", a.top_k}});
}

/// Appends the feed-forward part reading `input`; returns the name of its output.
std::string mlp(const Arch& a, Seq& s, const std::string& input) {
  if (a.experts > 1) return experts_mlp(a, s, input);
  Json up = {{"type", "dense"},     {"name", "mlp_up"},   {"units", a.inner},
             {"activation", a.act}, {"bias", a.mlp_bias}, {"inputs", {input}}};
  if (a.gated) up["gated"] = true;
  s.push(up);
  return s.push({{"type", "dense"}, {"name", "mlp_down"}, {"units", a.hidden}, {"bias", a.mlp_bias}});
}

/// The causal self-attention layer `name` reading `input`.
Json attention(const Arch& a, const std::string& name, const std::string& input) {
  Json at = {{"type", "attention"}, {"name", name},       {"num_heads", a.heads},   {"num_kv_heads", a.kv_heads},
             {"causal", true},      {"bias", a.qkv_bias}, {"out_bias", a.out_bias}, {"inputs", {input}}};
  if (a.head_dim > 0) at["head_dim"] = a.head_dim;
  if (a.attn_dropout > 0) at["dropout"] = a.attn_dropout;
  return at;
}

/// One block reading and writing "stream": post-norm (OPT-350m), parallel (GPT-J, GPT-NeoX, Phi, Falcon: one
/// residual sum) or sequential pre-norm.
Json decoder_block(const Arch& a) {
  Seq block;
  const std::string x = "stream";
  if (a.post_norm) {
    std::string at = block.push(attention(a, "attn", x));
    at = block.maybe_dropout("attn_dropout", at, a.dropout);
    block.push({{"type", "add"}, {"name", "attn_residual"}, {"inputs", {x, at}}});
    std::string n1 = block.push(norm(a, "ln_1", "attn_residual"));
    std::string out = block.maybe_dropout("mlp_dropout", mlp(a, block, n1), a.dropout);
    block.push({{"type", "add"}, {"name", "mlp_residual"}, {"inputs", {n1, out}}});
    block.push(norm(a, "stream", "mlp_residual"));
    return block.layers;
  }
  std::string ln1 = block.push(norm(a, "ln_1", x));
  std::string at = block.maybe_dropout("attn_dropout", block.push(attention(a, "attn", ln1)), a.dropout);
  if (a.parallel) {
    std::string mlp_in = a.parallel_norms == 2 ? block.push(norm(a, "ln_2", x)) : ln1;
    std::string out = block.maybe_dropout("mlp_dropout", mlp(a, block, mlp_in), a.dropout);
    block.push({{"type", "add"}, {"name", "stream"}, {"inputs", {x, at, out}}});
  } else {
    std::string r = block.push({{"type", "add"}, {"name", "attn_residual"}, {"inputs", {x, at}}});
    std::string ln2 = block.push(norm(a, "ln_2", r));
    std::string out = block.maybe_dropout("mlp_dropout", mlp(a, block, ln2), a.dropout);
    block.push({{"type", "add"}, {"name", "stream"}, {"inputs", {r, out}}});
  }
  return block.layers;
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
  s.push({{"type", "repeat"}, {"name", "h"}, {"count", a.layers}, {"layers", decoder_block(a)}});
  if (a.final_norm) s.push(norm(a, "ln_f", "stream"));
  if (embed_dim != a.hidden) {
    s.push({{"type", "dense"}, {"name", "project_out"}, {"units", embed_dim}, {"bias", false}});
  }
  decoder_head(a, s, h);
  return s.layers;
}

}  // namespace

Json build_decoder(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  check_heads(c, a.hidden, a.heads, a.kv_heads, a.head_dim > 0, a.heads_field, a.kv_field);
  std::int64_t seq = choose_seq(wanted.seq_len, a.max_positions, a.learned_positions, warnings);
  std::int64_t positions = 0;
  if (a.learned_positions) positions = a.max_positions > 0 ? a.max_positions : seq;
  HeadChoice h = read_head(c, warnings);
  return tokens_model(a.name, seq, decoder_layers(a, positions, h));
}

}  // namespace prenet::hf
