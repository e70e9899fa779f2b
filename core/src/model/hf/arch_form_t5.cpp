// The t5 family of the architecture form (arch_form.hpp): T5, mT5 and Switch Transformers as their rows read
// them (model_types.cpp), the checks between fields; built by build_t5_arch (t5.cpp).
#include <string>
#include <utility>
#include <vector>

#include "model/hf/arch_form.hpp"
#include "model/hf/config_reader.hpp"

namespace prenet::hf::form {
namespace {

/// The fields, in reading order (a default or bound may name a field read before it).
const std::vector<Field>& t5_fields() {
  static const std::vector<Field> table = {
      text_field("name", Kind::Text, at<&Arch::name>, {}, "the model's name in the response"),
      required_size("d_model", at<&Arch::hidden>, kMaxWidth, "features", "the width of the residual stream"),
      required_size("num_heads", at<&Arch::heads>, kMaxWidth, "heads", "the heads of each attention"),
      size_field("d_kv", at<&Arch::head_dim>, per(&Arch::hidden, &Arch::heads), 1, kMaxWidth, "features",
                 "the width of one head, independent of d_model (the attention is num_heads × d_kv wide); required "
                 "when num_heads exceeds d_model",
                 "d_model / num_heads"),
      required_size("d_ff", at<&Arch::inner>, kMaxInner, "features", "the MLP's width (each expert's in Switch)"),
      required_size("num_layers", at<&Arch::layers>, kMaxDepth, "layers", "the encoder blocks"),
      size_field("num_decoder_layers", at<&Arch::decoder_layers>, of(&Arch::layers), 1, kMaxDepth, "layers",
                 "the decoder blocks", "num_layers"),
      required_size("vocab_size", at<&Arch::vocab>, kMaxVocab, "tokens",
                    "the rows of the embedding the encoder and decoder share"),
      size_field("relative_attention_num_buckets", at<&Arch::buckets>, 32, 1, 1 << 16, "buckets",
                 "the relative position buckets: a (buckets × num_heads) table in each stack"),
      size_field("max_position_embeddings", at<&Arch::max_positions>, 512, 1, kMaxPositions, "tokens",
                 "the trained length (T5's n_positions), the default sequence length of both stacks; relative "
                 "positions run longer, with a warning"),
      text_field("dense_act_fn", Kind::Activation, at<&Arch::act>, {},
                 "the MLP's activation (Hugging Face names; feed_forward_proj without \"gated-\")"),
      flag_field("is_gated_act", at<&Arch::gated>,
                 "a gated MLP (feed_forward_proj \"gated-…\": T5 v1.1, mT5); not with num_experts"),
      real_field("dropout_rate", Kind::Rate, at<&Arch::dropout>, 0, 0.999999, "probability",
                 "dropout on the embeddings, each branch's output and the final norms"),
      flag_field("tie_word_embeddings", at<&Arch::tied>, "the LM head shares the embedding's matrix (mT5: false)"),
      size_field("num_experts", at<&Arch::experts>, 0, 0, 1 << 16, "experts",
                 "Switch Transformers: the experts of each sparse block's top-1 routed MLP; 0: dense T5"),
      size_field("encoder_sparse_step", at<&Arch::encoder_sparse_step>, 0, 0, kMaxDepth, "layers",
                 "Switch: encoder block i is sparse when i % step == 1 (1: every block); 0: none"),
      size_field("decoder_sparse_step", at<&Arch::decoder_sparse_step>, 0, 0, kMaxDepth, "layers",
                 "Switch: the same for the decoder's blocks"),
      flag_field("router_bias", at<&Arch::router_bias>, "Switch: a bias in the router"),
      size_field("expert_capacity", at<&Arch::expert_capacity>, 0, 0, kMaxWidth * 16, "tokens",
                 "Switch: the tokens each expert takes per sequence, only warned about (the estimate routes every "
                 "token); 0: not given"),
  };
  return table;
}

/// The checks between fields, each naming the field at fault.
void read_t5_extra(const Json&, const std::string& path, Arch& a) {
  if (a.head_dim == 0) throw InputError(join(path, "d_kv"), "required when num_heads exceeds d_model");
  if (a.experts == 0) {
    // The Switch-only fields would change nothing in a dense T5: say so rather than ignore them.
    for (auto [key, set] : {std::pair{"encoder_sparse_step", a.encoder_sparse_step > 0},
                            {"decoder_sparse_step", a.decoder_sparse_step > 0},
                            {"expert_capacity", a.expert_capacity > 0},
                            {"router_bias", a.router_bias}}) {
      if (set) throw InputError(join(path, key), "needs num_experts of at least 1 (Switch Transformers)");
    }
  } else if (a.gated) {
    throw InputError(join(path, "is_gated_act"),
                     "Switch Transformers' blocks are not gated (its experts read dense_act_fn alone); set it false "
                     "or num_experts to 0");
  }
}

void write_nothing(const Arch&, Json&) {}
std::vector<ArchFieldDoc> no_extra_docs() { return {}; }

/// T5Config's defaults where the Arch's differ: feed_forward_proj "relu".
void t5_defaults(Arch& a) { a.act = "relu"; }

/// build_t5 reads nothing beyond the row's steps.
void t5_from_config(const Cfg&, Arch&, std::vector<std::string>&) {}

}  // namespace

const Form& t5_form() {
  static const Form form{"t5",
                         "T5-style encoder-decoders (T5, T5 v1.1, mT5, Switch Transformers): RMSNorm pre-norm blocks "
                         "without biases, relative position buckets, one shared embedding",
                         t5_fields,
                         {},
                         read_t5_extra,
                         write_nothing,
                         no_extra_docs,
                         build_t5,
                         t5_from_config,
                         build_t5_arch,
                         false,
                         t5_defaults};
  return form;
}

}  // namespace prenet::hf::form
