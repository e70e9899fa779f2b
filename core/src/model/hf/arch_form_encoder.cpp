// The encoder families of the architecture form (arch_form.hpp): BERT-style post-LayerNorm encoders ("encoder":
// build_encoder, encoder.cpp), ViT image classifiers ("vit": build_vit_arch, vit.cpp) and DeBERTa-v2/v3
// ("deberta": build_deberta_arch, deberta.cpp). Three tables rather than one with a switch: each lists only
// what its builder reads, and ViT reads an image, not tokens.
#include <string>
#include <vector>

#include "model/hf/arch_form.hpp"
#include "model/hf/config_reader.hpp"

namespace prenet::hf::form {
namespace {

std::int64_t& labels_of(Arch& a) { return a.head.labels; }

/// The rows every encoder table starts with: the name and the shape of its blocks.
std::vector<Field> shape_fields(const char* blocks) {
  return {
      text_field("name", Kind::Text, at<&Arch::name>, {}, "the model's name in the response"),
      required_size("hidden_size", at<&Arch::hidden>, kMaxWidth, "features", "the width of the residual stream"),
      required_size("num_hidden_layers", at<&Arch::layers>, kMaxDepth, "layers", blocks),
      required_size("num_attention_heads", at<&Arch::heads>, kMaxWidth, "heads",
                    "the heads of each attention; must divide hidden_size"),
      size_field("intermediate_size", at<&Arch::inner>, of(&Arch::hidden, 4), 1, kMaxInner, "features",
                 "the MLP's width", "4 × hidden_size"),
  };
}

/// The activation and dropout rows (defaults: the family's, Form::defaults).
std::vector<Field> act_dropout_fields() {
  return {
      text_field("hidden_act", Kind::Activation, at<&Arch::act>, {}, "the MLP's activation (Hugging Face names)"),
      real_field("hidden_dropout", Kind::Rate, at<&Arch::dropout>, 0, 0.999999, "probability",
                 "dropout on the embeddings and on each branch's output (hidden_dropout_prob)"),
      real_field("attention_dropout", Kind::Rate, at<&Arch::attn_dropout>, 0, 0.999999, "probability",
                 "dropout on the attention probabilities (attention_probs_dropout_prob)"),
  };
}

/// The task head rows, the classifier's dropout said as the encoders use it.
std::vector<Field> encoder_head_fields(const char* dropout_doc) {
  std::vector<Field> rows = task_head_fields();
  for (Field& f : rows) {
    if (std::string(f.key) == "classifier_dropout") f.doc = dropout_doc;
  }
  return rows;
}

/// `parts` in order, one table.
std::vector<Field> joined(std::vector<std::vector<Field>> parts) {
  std::vector<Field> rows;
  for (auto& part : parts) {
    for (Field& f : part) rows.push_back(std::move(f));
  }
  return rows;
}

/// The heads must divide the width (no head_dim in these families), named as the form names them.
void check_encoder_heads(const Json& j, const std::string& path, const Arch& a) {
  check_heads(Cfg(j, path), a.hidden, a.heads, a.heads, false, "num_attention_heads", "");
}

void no_extra(const Arch&, Json&) {}
std::vector<ArchFieldDoc> no_extra_docs() { return {}; }
void nothing_from_config(const Cfg&, Arch&, std::vector<std::string>&) {}

// ---- encoder ----------------------------------------------------------------------------------------------

const std::vector<Field>& encoder_fields() {
  static const std::vector<Field> table = joined({
      shape_fields("the encoder blocks (post-LayerNorm)"),
      {
          required_size("vocab_size", at<&Arch::vocab>, kMaxVocab, "tokens", "the rows of the word embedding"),
          size_field("max_position_embeddings", at<&Arch::max_positions>, 512, 1, kMaxPositions, "tokens",
                     "the learned position table's rows: the longest sequence, and the default length (capped at "
                     "1024)"),
          size_field("type_vocab_size", at<&Arch::type_vocab>, 2, 0, 1 << 20, "types",
                     "the token-type embedding's rows (RoBERTa: 1); 0: none (DistilBERT)"),
      },
      act_dropout_fields(),
      {
          text_field("pooler_act", Kind::Activation, at<&Arch::pooler_act>, {},
                     "the activation of the dense layer on the first token under a sequence classifier (BERT's "
                     "pooler: tanh; DistilBERT's pre_classifier: relu)"),
          flag_field("add_pooling_layer", at<&Arch::bare_pooler>,
                     "the bare model (task_head none) keeps that pooler (DistilBERT: false)"),
      },
      encoder_head_fields("dropout before a sequence or token classifier; null: hidden_dropout"),
  });
  return table;
}

/// BertConfig's defaults.
void encoder_defaults(Arch& a) {
  a.act = "gelu";
  a.dropout = 0.1;
  a.attn_dropout = 0.1;
}

void read_encoder_extra(const Json& j, const std::string& path, Arch& a) { check_encoder_heads(j, path, a); }

// ---- vit --------------------------------------------------------------------------------------------------

const std::vector<Field>& vit_fields() {
  static const std::vector<Field> table = joined({
      shape_fields("the encoder blocks (pre-LayerNorm)"),
      {
          size_field("image_size", at<&Arch::image_size>, 224, 1, 16384, "pixels",
                     "the side of the square images the position table was trained for, and the default input; a "
                     "request's training.image_size may be smaller"),
          size_field("patch_size", at<&Arch::patch>, 16, 1, 4096, "pixels",
                     "the side of one patch (the patch convolution's kernel and stride); at most image_size"),
          size_field("num_channels", at<&Arch::channels>, 3, 1, 1 << 16, "channels", "the image's channels"),
          flag_field("qkv_bias", at<&Arch::qkv_bias>, "biases in the query, key and value projections"),
      },
      act_dropout_fields(),
      {size_field("num_labels", labels_of, 1000, 1, kMaxVocab, "classes",
                  "the classes of the classifier on the class token")},
  });
  return table;
}

/// ViTConfig's defaults.
void vit_defaults(Arch& a) {
  a.act = "gelu";
  a.head.labels = 1000;
}

void read_vit_extra(const Json& j, const std::string& path, Arch& a) {
  check_encoder_heads(j, path, a);
  if (a.patch > a.image_size) {
    throw InputError(join(path, "patch_size"), "is " + std::to_string(a.patch) + ", larger than the image_size (" +
                                                   std::to_string(a.image_size) + ")");
  }
}

// ---- deberta ----------------------------------------------------------------------------------------------

const std::vector<Field>& deberta_fields() {
  static const std::vector<Field> table = joined({
      shape_fields("the encoder blocks (post-LayerNorm)"),
      {
          required_size("vocab_size", at<&Arch::vocab>, kMaxVocab, "tokens", "the rows of the word embedding"),
          size_field("max_position_embeddings", at<&Arch::max_positions>, 512, 1, kMaxPositions, "tokens",
                     "the trained positions: the absolute table's rows (position_biased_input), the relative span "
                     "without buckets, and the default length (capped at 1024)"),
          size_field("type_vocab_size", at<&Arch::type_vocab>, 0, 0, 1 << 20, "types",
                     "the token-type embedding's rows; 0: none"),
          size_field("embedding_size", at<&Arch::embedding_size>, 0, 0, kMaxWidth, "features",
                     "the word embedding's width, projected to hidden_size when it differs; 0: hidden_size"),
          flag_field("position_biased_input", at<&Arch::position_biased_input>,
                     "a learned absolute position table added to the words (DeBERTa-v3: false)"),
          flag_field("relative_attention", at<&Arch::relative_attention>,
                     "disentangled attention against a shared table of relative position embeddings"),
          size_field("position_buckets", at<&Arch::position_buckets>, 0, 0, kMaxPositions, "buckets",
                     "log-bucketed relative distances: the table has 2 × position_buckets rows; 0: no buckets "
                     "(needs relative_attention)"),
          size_field("max_relative_positions", at<&Arch::max_relative_positions>, 0, 0, kMaxPositions, "tokens",
                     "the relative span without buckets (2 × this many rows); 0: max_position_embeddings (needs "
                     "relative_attention)"),
          text_field("pos_att_type", Kind::Text, at<&Arch::pos_att_type>, {"none", "c2p", "p2c", "c2p|p2c"},
                     "the position terms added to the content scores: content-to-position, position-to-content"),
          flag_field("share_att_key", at<&Arch::share_att_key>,
                     "the position keys and queries reuse the content projections (no projections of their own)"),
          text_field("norm_rel_ebd", Kind::Text, at<&Arch::norm_rel_ebd>, {"none", "layer_norm"},
                     "a LayerNorm on the relative table"),
      },
      act_dropout_fields(),
      encoder_head_fields("dropout before the sequence classifier (cls_dropout); null: hidden_dropout"),
      {
          text_field("pooler_hidden_act", Kind::Activation, at<&Arch::pooler_act>, {},
                     "the activation of the sequence classifier's pooler (ContextPooler)"),
          real_field("pooler_dropout", Kind::Rate, at<&Arch::pooler_dropout>, 0, 0.999999, "probability",
                     "dropout before the sequence classifier's pooler"),
      },
  });
  return table;
}

/// DebertaV2Config's defaults.
void deberta_defaults(Arch& a) {
  a.act = "gelu";
  a.dropout = 0.1;
  a.attn_dropout = 0.1;
  a.pooler_act = "gelu";
}

/// Errors naming `key` when a relative span of `value` is given without relative attention.
void check_relative(const std::string& path, const char* key, std::int64_t value, const Arch& a) {
  if (value > 0 && !a.relative_attention) {
    throw InputError(join(path, key), "is " + std::to_string(value) + " but relative_attention is false");
  }
}

void read_deberta_extra(const Json& j, const std::string& path, Arch& a) {
  check_encoder_heads(j, path, a);
  check_relative(path, "position_buckets", a.position_buckets, a);
  check_relative(path, "max_relative_positions", a.max_relative_positions, a);
}

}  // namespace

const Form& encoder_form() {
  static const Form form{"encoder",
                         "BERT-style encoders: post-LayerNorm blocks, learned positions, a task head (BERT, RoBERTa, "
                         "DistilBERT)",
                         encoder_fields,
                         {},
                         read_encoder_extra,
                         no_extra,
                         no_extra_docs,
                         build_encoder,
                         nothing_from_config,
                         build_encoder,
                         false,
                         encoder_defaults};
  return form;
}

const Form& vit_form() {
  static const Form form{"vit",
                         "ViT image classifiers: patch convolution, class token, learned positions, pre-LayerNorm "
                         "blocks",
                         vit_fields,
                         {},
                         read_vit_extra,
                         no_extra,
                         no_extra_docs,
                         build_vit,
                         read_vit_labels,
                         build_vit_arch,
                         true,
                         vit_defaults};
  return form;
}

const Form& deberta_form() {
  static const Form form{"deberta",
                         "DeBERTa-v2/v3: post-LayerNorm encoders with disentangled relative-position attention",
                         deberta_fields,
                         {},
                         read_deberta_extra,
                         no_extra,
                         no_extra_docs,
                         build_deberta,
                         read_deberta_config,
                         build_deberta_arch,
                         false,
                         deberta_defaults};
  return form;
}

}  // namespace prenet::hf::form
