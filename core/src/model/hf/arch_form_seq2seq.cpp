// The seq2seq family of the architecture form (arch_form.hpp): the fairseq / BART encoder-decoders (BART, mBART,
// Marian, FSMT) as their rows read them (model_types.cpp), the checks between fields; built by
// build_seq2seq_arch (seq2seq.cpp).
#include <string>
#include <utility>
#include <vector>

#include "model/hf/arch_form.hpp"
#include "model/hf/config_reader.hpp"

namespace prenet::hf::form {
namespace {

/// `f` with its default said in words (normalize_embedding's, set by read_seq2seq_extra).
Field with_default(Field f, const char* words) {
  f.fallback_doc = words;
  return f;
}

/// The fields, in reading order (a default or bound may name a field read before it).
const std::vector<Field>& seq2seq_fields() {
  static const std::vector<Field> table = {
      text_field("name", Kind::Text, at<&Arch::name>, {}, "the model's name in the response"),
      required_size("d_model", at<&Arch::hidden>, kMaxWidth, "features", "the width of both stacks"),
      required_size("encoder_layers", at<&Arch::layers>, kMaxDepth, "layers", "the encoder blocks"),
      size_field("decoder_layers", at<&Arch::decoder_layers>, of(&Arch::layers), 1, kMaxDepth, "layers",
                 "the decoder blocks", "encoder_layers"),
      required_size("encoder_attention_heads", at<&Arch::heads>, kMaxWidth, "heads",
                    "the heads of each encoder attention; must divide d_model"),
      size_field("decoder_attention_heads", at<&Arch::decoder_heads>, of(&Arch::heads), 1, kMaxWidth, "heads",
                 "the heads of each decoder attention (self and cross); must divide d_model",
                 "encoder_attention_heads"),
      size_field("encoder_ffn_dim", at<&Arch::inner>, of(&Arch::hidden, 4), 1, kMaxInner, "features",
                 "the encoder MLP's width", "4 × d_model"),
      size_field("decoder_ffn_dim", at<&Arch::decoder_inner>, of(&Arch::inner), 1, kMaxInner, "features",
                 "the decoder MLP's width", "encoder_ffn_dim"),
      required_size("vocab_size", at<&Arch::vocab>, kMaxVocab, "tokens",
                    "the rows of the token table (FSMT's src_vocab_size: the source table's)"),
      size_field("tgt_vocab_size", at<&Arch::tgt_vocab>, 0, 0, kMaxVocab, "tokens",
                 "FSMT: a separate target table of this many rows, tied to the LM head; 0: one table shared by "
                 "encoder, decoder and head"),
      flag_field("learned_positions", at<&Arch::learned_positions>,
                 "a learned position table per stack (BART, mBART); false: sinusoidal (Marian, FSMT), no "
                 "parameters"),
      size_field("max_position_embeddings", at<&Arch::max_positions>, 1024, 1, kMaxPositions, "tokens",
                 "the trained positions: the learned tables' rows and the default sequence length"),
      size_field("position_offset", at<&Arch::position_offset>, 2, 0, 1 << 16, "rows",
                 "extra rows of each learned position table (BART's 2)"),
      flag_field("normalize_before", at<&Arch::pre_norm>,
                 "pre-LayerNorm blocks (mBART); false: post-norm, the norm after each residual add (BART)"),
      flag_field("add_final_layer_norm", at<&Arch::final_norm>, "a LayerNorm after each stack's last block (mBART)"),
      with_default(flag_field("normalize_embedding", at<&Arch::embed_norm>,
                              "a LayerNorm on each stack's embeddings (BART's layernorm_embedding)"),
                   "learned_positions"),
      text_field("activation_function", Kind::Activation, at<&Arch::act>, {},
                 "the MLP's activation (Hugging Face names; Marian, FSMT: relu)"),
      real_field("dropout", Kind::Rate, at<&Arch::dropout>, 0, 0.999999, "probability",
                 "dropout on the embeddings and each branch's output"),
      real_field("attention_dropout", Kind::Rate, at<&Arch::attn_dropout>, 0, 0.999999, "probability",
                 "dropout on the attention probabilities"),
      real_field("activation_dropout", Kind::Rate, at<&Arch::act_dropout>, 0, 0.999999, "probability",
                 "dropout after the MLP's activation"),
  };
  return table;
}

/// Whether `j` gives `key` (null counts as absent, as read_field reads it).
bool given(const Json& j, const char* key) { return j.contains(key) && !j[key].is_null(); }

/// normalize_embedding's default (learned_positions, read before it), then the checks between fields, each
/// naming the field at fault.
void read_seq2seq_extra(const Json& j, const std::string& path, Arch& a) {
  if (!given(j, "normalize_embedding")) a.embed_norm = a.learned_positions;
  for (auto [key, heads] :
       {std::pair{"encoder_attention_heads", a.heads}, {"decoder_attention_heads", a.decoder_heads}}) {
    if (a.hidden % heads != 0) throw InputError(join(path, key), "must divide d_model " + std::to_string(a.hidden));
  }
}

void write_nothing(const Arch&, Json&) {}
std::vector<ArchFieldDoc> no_extra_docs() { return {}; }

/// BartConfig's defaults where the Arch's differ: no final LayerNorms, "gelu".
void seq2seq_defaults(Arch& a) {
  a.final_norm = false;
  a.act = "gelu";
}

/// build_seq2seq reads nothing beyond the rows' steps.
void seq2seq_from_config(const Cfg&, Arch&, std::vector<std::string>&) {}

}  // namespace

const Form& seq2seq_form() {
  static const Form form{"seq2seq",
                         "fairseq / BART encoder-decoders (BART, mBART, Marian, FSMT): biased attention and MLPs, "
                         "post- or pre-LayerNorm blocks, learned or sinusoidal positions, the LM head tied to the "
                         "target table",
                         seq2seq_fields,
                         {},
                         read_seq2seq_extra,
                         write_nothing,
                         no_extra_docs,
                         build_seq2seq,
                         seq2seq_from_config,
                         build_seq2seq_arch,
                         false,
                         seq2seq_defaults};
  return form;
}

}  // namespace prenet::hf::form
