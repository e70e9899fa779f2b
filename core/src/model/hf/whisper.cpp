// Whisper (WhisperForConditionalGeneration, modeling_whisper.py): a convolution stem over the log-mel input
// (two 1-D convolutions of kernel 3, the second of stride 2, each followed by GELU), learned positions, a
// pre-LayerNorm encoder; a pre-LayerNorm decoder with cross-attention; the LM head (proj_out) tied to the
// decoder's token table. Attention has no K projection bias.
//
// The network has one input: the log-mel spectrogram of one 30 s window, [2 x max_source_positions frames,
// num_mel_bins] (WhisperEncoder refuses any other length). The decoder is costed over max_target_positions
// tokens (its whole position table, whose rows start the decoder's stream; the token table is looked up once
// per position, a gather like the token lookup).
#include "model/hf/builders.hpp"
#include "model/hf/layer_seq.hpp"

namespace prenet::hf {
namespace {

/// Attention `name` reading `inputs` (a memory stream too for cross-attention): biased Q, V and output, K without.
Json whisper_attention(const Arch& w, const std::string& name, std::int64_t heads, bool causal, Json inputs) {
  Json a = {{"type", "attention"}, {"name", name},      {"num_heads", heads},
            {"causal", causal},    {"key_bias", false}, {"inputs", inputs}};
  if (w.attn_dropout > 0) a["dropout"] = w.attn_dropout;
  return a;
}

/// Appends a pre-LayerNorm sublayer `kind` (norm, attention, dropout, residual) on `cur`; returns the stream.
std::string attention_sublayer(const Arch& w, Seq& b, const std::string& cur, const std::string& kind,
                               std::int64_t heads, bool causal, bool cross) {
  std::string n = b.push({{"type", "layernorm"}, {"name", kind + "_layer_norm"}, {"inputs", {cur}}});
  Json inputs = cross ? Json{n, "encoder_out"} : Json{n};
  std::string a =
      b.maybe_dropout(kind + "_dropout", b.push(whisper_attention(w, kind, heads, causal, inputs)), w.dropout);
  return b.push({{"type", "add"}, {"name", kind + "_residual"}, {"inputs", {cur, a}}});
}

/// One block reading and writing `x`: self-attention, (decoder) cross-attention, the MLP.
Json whisper_block(const Arch& w, const std::string& x, bool decoder) {
  Seq b;
  std::int64_t heads = decoder ? w.decoder_heads : w.heads, inner = decoder ? w.decoder_inner : w.inner;
  std::string cur = attention_sublayer(w, b, x, "self_attn", heads, decoder, false);
  if (decoder) cur = attention_sublayer(w, b, cur, "encoder_attn", heads, false, true);
  b.push({{"type", "layernorm"}, {"name", "final_layer_norm"}, {"inputs", {cur}}});
  b.push({{"type", "dense"}, {"name", "fc1"}, {"units", inner}, {"activation", w.act}});
  b.maybe_dropout("activation_dropout", "fc1", w.act_dropout);
  std::string out =
      b.maybe_dropout("fc2_dropout", b.push({{"type", "dense"}, {"name", "fc2"}, {"units", w.hidden}}), w.dropout);
  b.push({{"type", "add"}, {"name", x}, {"inputs", {cur, out}}});
  return b.layers;
}

/// Appends the encoder: the convolution stem (1-D convolutions as conv2d of height 1 between views), the
/// position table, the blocks and the final LayerNorm, up to "encoder_out".
void whisper_encoder(const Arch& w, Seq& s) {
  // [frames, mels] viewed as [mels, 1, frames] (the transpose PyTorch's channels-first Conv1d reads).
  s.push({{"type", "reshape"}, {"name", "mel_channels"}, {"shape", {w.mel_bins, 1, -1}}});
  s.push({{"type", "conv2d"},
          {"name", "conv1"},
          {"filters", w.hidden},
          {"kernel_size", {1, 3}},
          {"padding", {0, 1}},
          {"activation", w.act}});
  s.push({{"type", "conv2d"},
          {"name", "conv2"},
          {"filters", w.hidden},
          {"kernel_size", {1, 3}},
          {"stride", {1, 2}},
          {"padding", {0, 1}},
          {"activation", w.act}});
  std::string frames = s.push({{"type", "reshape"}, {"name", "frames"}, {"shape", {-1, w.hidden}}});
  // embed_positions: a table of max_source_positions rows (frozen in Hugging Face, see the warning).
  s.push({{"type", "embedding"},
          {"name", "encoder_embed_positions"},
          {"vocab_size", w.source_positions},
          {"dim", w.hidden},
          {"positional", true},
          {"inputs", {frames}}});
  std::string cur =
      s.push({{"type", "add"}, {"name", "encoder_embed"}, {"inputs", {frames, "encoder_embed_positions"}}});
  s.start_stream("stream", cur, w.dropout);
  s.push({{"type", "repeat"}, {"name", "encoder"}, {"count", w.layers}, {"layers", whisper_block(w, "stream", false)}});
  s.push({{"type", "layernorm"}, {"name", "encoder_out"}, {"inputs", {"stream"}}});
}

/// Appends the decoder over max_target_positions tokens, its final LayerNorm, the tied proj_out and the loss.
void whisper_decoder(const Arch& w, Seq& s) {
  s.push({{"type", "parameter"}, {"name", "decoder_embed_positions"}, {"shape", {w.target_positions, w.hidden}}});
  s.push({{"type", "embedding"},
          {"name", "decoder_embed_tokens"},
          {"vocab_size", w.vocab},
          {"dim", w.hidden},
          {"positional", true},
          {"inputs", {"decoder_embed_positions"}}});
  std::string cur = s.push(
      {{"type", "add"}, {"name", "decoder_embed"}, {"inputs", {"decoder_embed_tokens", "decoder_embed_positions"}}});
  s.start_stream("dstream", cur, w.dropout);
  s.push({{"type", "repeat"},
          {"name", "decoder"},
          {"count", w.decoder_layers},
          {"layers", whisper_block(w, "dstream", true)}});
  s.push({{"type", "layernorm"}, {"name", "decoder_layer_norm"}, {"inputs", {"dstream"}}});
  Json head = {{"type", "dense"}, {"name", "proj_out"}, {"units", w.vocab}, {"bias", false}};
  if (w.tied) head["tied_to"] = "decoder_embed_tokens";
  s.push(head);
  s.push({{"type", "cross_entropy"}, {"name", "loss"}});
}

}  // namespace

void check_whisper_class(const Cfg& c) {
  if (c.has("architectures")) {
    const Json& names = c.json()["architectures"];
    std::string name = names.is_array() && !names.empty() && names[0].is_string() ? names[0].get<std::string>() : "";
    if (name != "WhisperForConditionalGeneration") {
      throw InputError(c.field("architectures"),
                       "only WhisperForConditionalGeneration is supported; got \"" + printable(name) + "\"");
    }
  }
}

Json build_whisper(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  check_whisper_class(c);
  return build_whisper_arch(c, a, wanted, warnings);
}

Json build_whisper_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  for (auto [heads, field] :
       {std::pair{a.heads, "encoder_attention_heads"}, {a.decoder_heads, "decoder_attention_heads"}}) {
    if (a.hidden % heads != 0) {
      throw InputError(c.field(field), "must divide d_model (" + std::to_string(a.hidden) + ")");
    }
  }
  if (wanted.seq_len > 0 && wanted.seq_len != a.target_positions) {
    warnings.push_back("training.seq_len ignored: Whisper is costed over one 30 s window (" +
                       std::to_string(2 * a.source_positions) + " log-mel frames) and max_target_positions (" +
                       std::to_string(a.target_positions) + ") decoder tokens");
  }
  warnings.push_back("the encoder's position table (" + std::to_string(a.source_positions * a.hidden) +
                     " parameters) is frozen in Hugging Face; it is counted, and costed as trained");
  Seq s;
  whisper_encoder(a, s);
  whisper_decoder(a, s);
  return {{"name", a.name},
          {"input", {{"kind", "sequence"}, {"seq_len", 2 * a.source_positions}, {"features", a.mel_bins}}},
          {"layers", s.layers}};
}

}  // namespace prenet::hf
