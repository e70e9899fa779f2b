// The whisper family of the architecture form (arch_form.hpp): Whisper as its row reads it (types_multimodal.cpp),
// its audio front-end included as fields of its own (the log-mel bins, the encoder's and the decoder's
// positions); built by build_whisper_arch (whisper.cpp).
#include <string>
#include <utility>
#include <vector>

#include "model/hf/arch_form.hpp"
#include "model/hf/config_reader.hpp"

namespace prenet::hf::form {
namespace {

/// The fields, in reading order, with WhisperConfig's defaults (those the row's steps take).
const std::vector<Field>& whisper_fields() {
  static const std::vector<Field> table = {
      text_field("name", Kind::Text, at<&Arch::name>, {}, "the model's name in the response"),
      size_field("d_model", at<&Arch::hidden>, 384, 1, kMaxWidth, "features",
                 "the width of both stacks and of the convolution stem's filters"),
      size_field("encoder_layers", at<&Arch::layers>, 4, 1, kMaxDepth, "layers", "the encoder blocks"),
      size_field("decoder_layers", at<&Arch::decoder_layers>, 4, 1, kMaxDepth, "layers", "the decoder blocks"),
      size_field("encoder_attention_heads", at<&Arch::heads>, 6, 1, kMaxWidth, "heads",
                 "the heads of each encoder attention; must divide d_model"),
      size_field("decoder_attention_heads", at<&Arch::decoder_heads>, 6, 1, kMaxWidth, "heads",
                 "the heads of each decoder attention (self and cross); must divide d_model"),
      size_field("encoder_ffn_dim", at<&Arch::inner>, 1536, 1, kMaxInner, "features", "the encoder MLP's width"),
      size_field("decoder_ffn_dim", at<&Arch::decoder_inner>, 1536, 1, kMaxInner, "features",
                 "the decoder MLP's width"),
      size_field("vocab_size", at<&Arch::vocab>, 51865, 1, kMaxVocab, "tokens",
                 "the rows of the decoder's token table (tied to proj_out)"),
      size_field("num_mel_bins", at<&Arch::mel_bins>, 80, 1, 1 << 16, "features",
                 "audio front-end: the log-mel bins of each input frame (the first convolution's channels)"),
      size_field("max_source_positions", at<&Arch::source_positions>, 1500, 1, kMaxPositions, "frames",
                 "audio front-end: the encoder's positions; the input is one window of 2 × this many log-mel "
                 "frames, halved by the stride-2 convolution"),
      size_field("max_target_positions", at<&Arch::target_positions>, 448, 1, kMaxPositions, "tokens",
                 "the decoder's positions, the tokens it is costed over (training.seq_len is ignored)"),
      text_field("activation_function", Kind::Activation, at<&Arch::act>, {},
                 "the MLP's and the convolution stem's activation (Hugging Face names)"),
      real_field("dropout", Kind::Rate, at<&Arch::dropout>, 0, 0.999999, "probability",
                 "dropout on the embeddings and each branch's output"),
      real_field("attention_dropout", Kind::Rate, at<&Arch::attn_dropout>, 0, 0.999999, "probability",
                 "dropout on the attention probabilities"),
      real_field("activation_dropout", Kind::Rate, at<&Arch::act_dropout>, 0, 0.999999, "probability",
                 "dropout after the MLP's activation"),
      flag_field("tie_word_embeddings", at<&Arch::tied>, "proj_out shares the decoder's token table"),
  };
  return table;
}

/// The checks between fields, each naming the field at fault.
void read_whisper_extra(const Json&, const std::string& path, Arch& a) {
  for (auto [key, heads] :
       {std::pair{"encoder_attention_heads", a.heads}, {"decoder_attention_heads", a.decoder_heads}}) {
    if (a.hidden % heads != 0)
      throw InputError(join(path, key), "must divide d_model (" + std::to_string(a.hidden) + ")");
  }
}

void write_nothing(const Arch&, Json&) {}
std::vector<ArchFieldDoc> no_extra_docs() { return {}; }

/// WhisperConfig's default where the Arch's differs: "gelu".
void whisper_defaults(Arch& a) { a.act = "gelu"; }

/// The row's steps read the audio front-end too; what build_whisper adds is the refusal of other
/// `architectures`, which leaves such a config without an architecture (hf_config_architecture: nullopt).
void whisper_from_config(const Cfg& c, Arch&, std::vector<std::string>&) { check_whisper_class(c); }

}  // namespace

const Form& whisper_form() {
  static const Form form{"whisper",
                         "Whisper speech models: a convolution stem over log-mel frames, a pre-LayerNorm encoder, a "
                         "decoder with cross-attention, proj_out tied to its token table",
                         whisper_fields,
                         {},
                         read_whisper_extra,
                         write_nothing,
                         no_extra_docs,
                         build_whisper,
                         whisper_from_config,
                         build_whisper_arch,
                         false,
                         whisper_defaults};
  return form;
}

}  // namespace prenet::hf::form
