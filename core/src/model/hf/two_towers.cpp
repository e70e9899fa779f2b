// The two-tower contrastive models, CLIPModel and SiglipModel (modeling_clip.py, modeling_siglip.py), trained on
// image-text pairs: the vision tower of vision_towers.cpp over the image (the network's input), a text tower over
// one caption per image, each tower's embedding, and the contrastive loss over the micro-batch
// (layers/contrastive.cpp). The caption is a second stream beside the input, started as Whisper's decoder is
// (whisper.cpp): the position table's rows, the token table read once per position (a gather, as the lookup is).
//
// CLIP's text tower (CLIPTextTransformer) masks causally and pools the EOS token, then text_projection and
// visual_projection (no biases) map both towers to projection_dim; logit_scale is one learned scalar. SigLIP's
// (SiglipTextTransformer) has no mask, pools the last token and ends in `head`, a biased Linear to
// projection_size (= hidden_size); the image embedding is the attention-pooling head's output; logit_scale and
// logit_bias are learned scalars.
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "model/hf/layer_seq.hpp"
#include "model/hf/model_types.hpp"
#include "model/hf/vision_towers.hpp"

namespace prenet::hf {
namespace {

/// CLIPTextConfig's defaults (configuration_clip.py) for the text tower's sizes.
const Steps kClipText = {
    opt(&Arch::hidden, {"hidden_size"}, 512, 1, kMaxWidth),
    opt(&Arch::layers, {"num_hidden_layers"}, 12, 1, kMaxDepth),
    opt(&Arch::heads, {"num_attention_heads"}, 8, 1, kMaxWidth),
    opt(&Arch::inner, {"intermediate_size"}, 2048, 1, kMaxInner),
    opt(&Arch::vocab, {"vocab_size"}, 49408, 1, kMaxVocab),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 77, 1, 1 << 20),
    act({"hidden_act"}, "quick_gelu"),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
};

/// SiglipTextConfig's defaults (configuration_siglip.py).
const Steps kSiglipText = {
    opt(&Arch::hidden, {"hidden_size"}, 768, 1, kMaxWidth),
    opt(&Arch::layers, {"num_hidden_layers"}, 12, 1, kMaxDepth),
    opt(&Arch::heads, {"num_attention_heads"}, 12, 1, kMaxWidth),
    opt(&Arch::inner, {"intermediate_size"}, 3072, 1, kMaxInner),
    opt(&Arch::vocab, {"vocab_size"}, 32000, 1, kMaxVocab),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 64, 1, 1 << 20),
    act({"hidden_act"}, "gelu_pytorch_tanh"),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
};

/// What differs between CLIPModel and SiglipModel.
struct TwoTowers {
  const char* name;         // the top-level model_type
  const char* text_type;    // text_config's model_type
  const char* vision_type;  // vision_config's row
  const Steps& text_steps;  // the text config class's sizes and defaults
  bool clip;                // CLIP: causal text mask, EOS pooling, both towers projected; SigLIP: none of these
  const char* loss;         // contrastive_loss's function
};

const TwoTowers kModels[] = {
    {"clip", "clip_text_model", "clip_vision_model", kClipText, true, "softmax"},
    {"siglip", "siglip_text_model", "siglip_vision_model", kSiglipText, false, "sigmoid"},
};

const TwoTowers& two_towers_of(const std::string& name) {
  for (const TwoTowers& m : kModels) {
    if (name == m.name) return m;
  }
  throw std::logic_error("no two-tower row for " + name);
}

/// Appends the text tower of `t` and its last layer (`width` units; `projected`: CLIP's text_projection without
/// bias, else SigLIP's biased head): returns the text embedding's name.
std::string text_tower(const Arch& t, bool projected, std::int64_t width, Seq& s) {
  // The caption's stream starts from the position table's rows (all max_position_embeddings of them); the token
  // table is read once per position.
  s.push({{"type", "parameter"}, {"name", "text_position_embedding"}, {"shape", {t.max_positions, t.hidden}}});
  s.push({{"type", "embedding"},
          {"name", "text_token_embedding"},
          {"vocab_size", t.vocab},
          {"dim", t.hidden},
          {"positional", true},
          {"inputs", {"text_position_embedding"}}});
  s.push(
      {{"type", "add"}, {"name", "text_embeddings"}, {"inputs", {"text_token_embedding", "text_position_embedding"}}});
  s.push({{"type", "identity"}, {"name", "text_stream"}});
  s.push({{"type", "repeat"},
          {"name", "text_layers"},
          {"count", t.layers},
          {"layers", encoder_block(t, "text_stream", t.text_causal)}});
  s.push({{"type", "layernorm"}, {"name", "final_layer_norm"}, {"inputs", {"text_stream"}}});
  // CLIP: the hidden state at the EOS token (an argmax over the ids); SigLIP: the last position's.
  s.select_token("text_pool_view", "text_pooled", t.hidden);
  return s.push({{"type", "dense"},
                 {"name", projected ? "text_projection" : "text_head"},
                 {"units", width},
                 {"bias", !projected}});
}

/// Matrix parameters a token runs through in one tower of `layers` encoder layers.
double block_weights(const Arch& a) {
  const double h = static_cast<double>(a.hidden), inner = static_cast<double>(a.inner);
  return static_cast<double>(a.layers) * (4 * h + 2 * inner) * h;
}

/// The notes every two-tower model carries: the caption's length, and what the loss over the micro-batch costs
/// against the towers (their training FLOPs per sample, 6 N per token plus attention's 12 s d per layer and
/// token) and what it leaves out.
void two_tower_notes(const Arch& v, std::int64_t image_tokens, const Arch& t, std::int64_t width,
                     std::vector<std::string>& warnings) {
  warnings.push_back("the text tower reads " + std::to_string(t.max_positions) +
                     " tokens per image (text_config.max_position_embeddings: captions padded to it, as CLIP and "
                     "SigLIP train); training.seq_len does not change it");
  const double vision_tokens = static_cast<double>(image_tokens), text_tokens = static_cast<double>(t.max_positions);
  const double attention =
      static_cast<double>(v.layers) * vision_tokens * vision_tokens * static_cast<double>(v.hidden) +
      static_cast<double>(t.layers) * text_tokens * text_tokens * static_cast<double>(t.hidden);
  const double towers = 6 * (block_weights(v) * vision_tokens + block_weights(t) * text_tokens) + 12 * attention;
  constexpr double kExampleBatch = 256;
  const double percent = 100 * 6 * kExampleBatch * static_cast<double>(width) / towers;
  std::ostringstream share;
  if (percent < 1e-3) {
    share << "under 0.001";
  } else {
    share << std::setprecision(2) << percent;
  }
  warnings.push_back(
      "the contrastive loss is costed over each GPU's micro-batch of B pairs: B x B similarities of its images and "
      "texts, 6 B^2 x " +
      std::to_string(width) + " FLOPs a step, " + share.str() +
      "% of the towers' at B = 256. Gathering every data-parallel rank's embeddings first (open_clip's "
      "gather_with_grad, SigLIP's chunked loss over devices) is not modelled: it multiplies the loss's work by the "
      "data-parallel degree and adds an all-gather of the B x " +
      std::to_string(width) + " embeddings");
}

}  // namespace

void read_two_towers_config(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  const TwoTowers& m = two_towers_of(a.name);
  const Cfg given_vision = nested(c, "vision_config"), text = nested(c, "text_config");
  // The model builds its towers from the nested configs' sizes; their own `architectures` (a
  // CLIPVisionModelWithProjection's visual_projection) are not read.
  Json vision_json = given_vision.json();
  vision_json.erase("architectures");
  const Cfg vision(vision_json, c.field("vision_config"));

  const ModelType& vision_row = nested_row(vision, m.vision_type);
  if (vision_row.name != m.vision_type) {
    throw InputError(vision.field("model_type"), "expected \"" + std::string(m.vision_type) +
                                                     "\" (the vision tower of " + m.name + "), got \"" +
                                                     printable(vision_row.name) + "\"");
  }
  const std::string text_type = text.str("model_type", m.text_type);
  if (text_type != m.text_type) {
    throw InputError(text.field("model_type"), "expected \"" + std::string(m.text_type) + "\" (the text tower of " +
                                                   m.name + "), got \"" + printable(text_type) + "\"");
  }
  Arch v, t;
  v.name = vision_row.name;
  t.name = text_type;
  read_steps(vision, vision_row.steps, v, warnings);
  read_steps(text, m.text_steps, t, warnings);
  t.text_causal = m.clip;
  check_heads(text, t.hidden, t.heads, t.heads, false, "num_attention_heads", "");
  if (v.pooling == "none") {
    throw InputError(vision.field("vision_use_head"),
                     "must be true in SiglipModel: the attention-pooling head's output is the image embedding");
  }

  // CLIP projects both towers to projection_dim; SigLIP's text head maps to projection_size, which the image
  // embedding (the vision width) must equal.
  a.projection_dim = m.clip ? c.opt({"projection_dim"}, 512, 1, kMaxWidth) : 0;
  if (!m.clip) {
    const std::int64_t width = text.opt({"projection_size"}, t.hidden, 1, kMaxWidth);
    if (width != v.hidden) {
      throw InputError(text.field(text.has("projection_size") ? "projection_size" : "hidden_size"),
                       "is " + std::to_string(width) + "; SiglipModel scores it against the image embedding of " +
                           "vision_config.hidden_size " + std::to_string(v.hidden) + ", which must be as wide");
    }
  }
  tower_image_size(vision, v, 0);
  check_vision_tower(vision, v);
  a.contrastive_loss = m.loss;
  a.parts = {v, t};
}

Json build_two_towers(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  Arch read = a;
  read_two_towers_config(c, read, warnings);
  return build_two_towers_arch(c, read, wanted, warnings);
}

Json build_two_towers_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  if (a.parts.size() != 2) throw std::logic_error("two towers without their parts");
  const Arch &v = a.parts[kVisionPart], &t = a.parts[kTextPart];
  // The architecture form holds the tower under "vision", a config under "vision_config": errors name the
  // field where it was read (a config's are checked by read_two_towers_config first).
  const char* key = c.has("vision") ? "vision" : "vision_config";
  // Cfg keeps a reference: both branches must be lvalues that outlive it (a `: Json::object()` branch would make
  // the expression a temporary copy, gone before the reads below).
  static const Json kNone = Json::object();
  const Cfg vision(c.has(key) && c.json()[key].is_object() ? c.json()[key] : kNone, c.field(key));
  const bool projected = a.projection_dim > 0;
  const std::int64_t width = projected ? a.projection_dim : v.hidden;

  const std::int64_t image = tower_image_size(vision, v, wanted.image_size);
  Seq s;
  s.layers = vision_tower_layers(vision, v);
  std::string image_embeds = v.pooling == "class_token" ? "post_layernorm" : "pooled";
  if (projected) {
    image_embeds = s.push({{"type", "dense"}, {"name", "visual_projection"}, {"units", width}, {"bias", false}});
  }
  const std::string text_embeds = text_tower(t, projected, width, s);
  s.push({{"type", "contrastive_loss"},
          {"name", "loss"},
          {"loss", a.contrastive_loss},
          {"inputs", {image_embeds, text_embeds}}});

  const std::int64_t side = image / v.patch;
  two_tower_notes(v, side * side + (v.class_embedding ? 1 : 0), t, width, warnings);
  return {{"name", a.name},
          {"input", {{"kind", "image"}, {"channels", v.channels}, {"image_size", image}}},
          {"layers", s.layers}};
}

}  // namespace prenet::hf
