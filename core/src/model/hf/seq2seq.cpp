// The fairseq / BART family of encoder-decoders (bart, mbart, marian, fsmt): biased attention and ReLU or GELU
// MLPs, learned or sinusoidal positions, post- or pre-LayerNorm blocks, shared or separate embeddings.
#include "model/hf/builders.hpp"
#include "model/hf/layer_seq.hpp"

namespace prenet::hf {
namespace {

/// Attention `name` with `heads` heads reading `inputs`.
Json s2s_attention(const Arch& t, const std::string& name, std::int64_t heads, bool causal, Json inputs) {
  Json a = {{"type", "attention"}, {"name", name}, {"num_heads", heads}, {"causal", causal}, {"inputs", inputs}};
  if (t.attn_dropout > 0) a["dropout"] = t.attn_dropout;
  return a;
}

/// A LayerNorm `name` reading `input`.
Json ln(const std::string& name, const std::string& input) {
  return Json{{"type", "layernorm"}, {"name", name}, {"inputs", {input}}};
}

/// Appends the MLP of `inner` units reading `input`; returns the output's name.
std::string s2s_ff(const Arch& t, Seq& s, const std::string& input, std::int64_t inner) {
  s.push({{"type", "dense"}, {"name", "fc1"}, {"units", inner}, {"activation", t.act}, {"inputs", {input}}});
  s.maybe_dropout("activation_dropout", "fc1", t.act_dropout);
  return s.maybe_dropout("ff_dropout", s.push({{"type", "dense"}, {"name", "fc2"}, {"units", t.hidden}}), t.dropout);
}

/// Appends one attention sublayer with its residual reading `cur`; post-norm normalises the residual sum,
/// pre-norm the sublayer's input. Returns the stream's name after it.
std::string s2s_sublayer(const Arch& t, Seq& b, const std::string& cur, const std::string& kind, std::int64_t heads,
                         bool causal, bool cross) {
  std::string in = t.pre_norm ? b.push(ln(kind + "_attn_norm", cur)) : cur;
  Json inputs = cross ? Json{in, "encoder_out"} : Json{in};
  std::string a = b.maybe_dropout(kind + "_attn_dropout",
                                  b.push(s2s_attention(t, kind + "_attn", heads, causal, inputs)), t.dropout);
  std::string sum = b.push({{"type", "add"}, {"name", kind + "_residual"}, {"inputs", {cur, a}}});
  return t.pre_norm ? sum : b.push(ln(kind + "_attn_norm", sum));
}

/// One block reading and writing `x` (the encoder's "stream", or the decoder's "dstream" with cross-attention).
Json s2s_block(const Arch& t, const std::string& x, bool decoder) {
  Seq b;
  std::int64_t heads = decoder ? t.decoder_heads : t.heads, inner = decoder ? t.decoder_inner : t.inner;
  std::string cur = s2s_sublayer(t, b, x, "self", heads, decoder, false);
  if (decoder) cur = s2s_sublayer(t, b, cur, "cross", heads, false, true);
  std::string in = t.pre_norm ? b.push(ln("final_norm", cur)) : cur;
  std::string out = s2s_ff(t, b, in, inner);
  if (t.pre_norm) {
    b.push({{"type", "add"}, {"name", x}, {"inputs", {cur, out}}});
  } else {
    b.push({{"type", "add"}, {"name", "ff_residual"}, {"inputs", {cur, out}}});
    b.push({{"type", "layernorm"}, {"name", x}});
  }
  return b.layers;
}

/// Appends the embeddings of one stack reading token table `table` (with `positions` learned rows when > 0)
/// up to its `stream`.
void s2s_embed(const Arch& t, Seq& s, const std::string& prefix, const std::string& table, const std::string& stream,
               std::int64_t positions) {
  std::string cur = table;
  if (positions > 0) {
    s.push({{"type", "embedding"},
            {"name", prefix + "_positions"},
            {"vocab_size", positions},
            {"dim", t.hidden},
            {"positional", true},
            {"inputs", {"input"}}});
    cur = s.push({{"type", "add"}, {"name", prefix + "_embed"}, {"inputs", {table, prefix + "_positions"}}});
  }
  if (t.embed_norm) cur = s.push(ln(prefix + "_layernorm_embedding", cur));
  s.start_stream(stream, cur, t.dropout);
}

/// The whole encoder-decoder with its LM head and loss; `positions` learned rows per stack (0: sinusoidal).
Json seq2seq_layers(const Arch& t, std::int64_t positions) {
  Seq s;
  bool separate = t.tgt_vocab > 0;
  std::string src_table = s.push({{"type", "embedding"},
                                  {"name", separate ? "encoder_embed_tokens" : "shared"},
                                  {"vocab_size", t.vocab},
                                  {"dim", t.hidden}});
  s2s_embed(t, s, "encoder", src_table, "stream", positions);
  s.push({{"type", "repeat"}, {"name", "encoder"}, {"count", t.layers}, {"layers", s2s_block(t, "stream", false)}});
  if (t.final_norm) {
    s.push(ln("encoder_out", "stream"));
  } else {
    s.push({{"type", "identity"}, {"name", "encoder_out"}, {"inputs", {"stream"}}});
  }
  // The decoder reads the target tokens (as long as the source) through its table.
  std::string tgt_table = "decoder_tokens";
  if (separate) {
    tgt_table = s.push({{"type", "embedding"},
                        {"name", "decoder_embed_tokens"},
                        {"vocab_size", t.tgt_vocab},
                        {"dim", t.hidden},
                        {"inputs", {"input"}}});
  } else {
    s.push({{"type", "identity"}, {"name", "decoder_tokens"}, {"inputs", {src_table}}});
  }
  s2s_embed(t, s, "decoder", tgt_table, "dstream", positions);
  s.push({{"type", "repeat"},
          {"name", "decoder"},
          {"count", t.decoder_layers},
          {"layers", s2s_block(t, "dstream", true)}});
  if (t.final_norm) s.push(ln("decoder_out", "dstream"));
  s.push({{"type", "dense"},
          {"name", "lm_head"},
          {"units", separate ? t.tgt_vocab : t.vocab},
          {"bias", false},
          {"tied_to", separate ? "decoder_embed_tokens" : "shared"}});
  s.push({{"type", "cross_entropy"}, {"name", "loss"}});
  return s.layers;
}

}  // namespace

Json build_seq2seq(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  // The rows' steps read everything (the heads dividing d_model included).
  return build_seq2seq_arch(c, a, wanted, warnings);
}

Json build_seq2seq_arch(const Cfg&, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  std::int64_t positions = a.learned_positions ? a.max_positions + a.position_offset : 0;
  std::int64_t seq = choose_seq(wanted.seq_len, a.max_positions, a.learned_positions, warnings);
  return tokens_model(a.name, seq, seq2seq_layers(a, positions));
}

}  // namespace prenet::hf
