// The vision families of the architecture form (arch_form.hpp): the CLIP and SigLIP vision towers alone
// ("vision_tower": build_vision_tower_arch, vision_towers.cpp) and the two-tower contrastive models ("two_towers":
// build_two_towers_arch, two_towers.cpp). A two-tower architecture holds each tower as a nested object of its own
// ("vision": the vision tower's table, "text": the text tower's), read into VisionArch::parts: the towers have the
// same quantities (width, depth, heads), so one flat table could not hold both.
#include <string>
#include <vector>

#include "model/hf/arch_form.hpp"
#include "model/hf/config_reader.hpp"
#include "model/hf/vision_towers.hpp"

namespace prenet::hf::form {
namespace {

/// The vision tower's rows (without the name and the projection, which the two-tower model has once for both).
std::vector<Field> tower_rows() {
  return {
      required_size("hidden_size", at<&Arch::hidden>, kMaxWidth, "features", "the width of the residual stream"),
      required_size("num_hidden_layers", at<&Arch::layers>, kMaxDepth, "layers", "the encoder blocks (pre-LayerNorm)"),
      required_size("num_attention_heads", at<&Arch::heads>, kMaxWidth, "heads",
                    "the heads of each attention (and of SigLIP's pooling head); must divide hidden_size"),
      size_field("intermediate_size", at<&Arch::inner>, of(&Arch::hidden, 4), 1, kMaxInner, "features",
                 "the MLP's width (fc1)", "4 × hidden_size"),
      size_field("image_size", at<&Arch::image_size>, 224, 1, 16384, "pixels",
                 "the side of the square images the position table was trained for, and the default input; a "
                 "request's training.image_size may be smaller"),
      size_field("patch_size", at<&Arch::patch>, 32, 1, 4096, "pixels",
                 "the side of one patch (the patch convolution's kernel and stride); at most image_size"),
      size_field("num_channels", at<&Arch::channels>, 3, 1, 1 << 16, "channels", "the image's channels"),
      flag_field("class_embedding", at<&Arch::class_embedding>,
                 "a learned class token before the patches, with its own position row (CLIP; SigLIP: false)"),
      flag_field("patch_bias", at<&Arch::patch_bias>, "a bias in the patch convolution (SigLIP: true; CLIP: false)"),
      flag_field("pre_layernorm", at<&Arch::pre_layernorm>,
                 "a LayerNorm on the embeddings before the encoder (CLIP's pre_layrnorm; SigLIP: false)"),
      text_field("pooling", Kind::Text, at<&Arch::pooling>, {"class_token", "attention_head", "none"},
                 "the pooled output: post_layernorm on the class token (CLIP), or post_layernorm on every token "
                 "then SigLIP's attention-pooling head (vision_use_head), or on every token with no head"),
      text_field("hidden_act", Kind::Activation, at<&Arch::act>, {}, "the MLP's activation (Hugging Face names)"),
      real_field("attention_dropout", Kind::Rate, at<&Arch::attn_dropout>, 0, 0.999999, "probability",
                 "dropout on the attention probabilities"),
  };
}

/// CLIPVisionConfig's defaults and CLIP's modules (a SigLIP tower sets class_embedding, patch_bias,
/// pre_layernorm and pooling).
void tower_defaults(Arch& a) {
  a.class_embedding = true;
  a.patch_bias = false;
  a.pre_layernorm = true;
  a.pooling = "class_token";
  a.act = "quick_gelu";
}

/// The checks between a tower's fields, each naming the field of `c` at fault.
void check_tower(const Cfg& c, const Arch& v) {
  check_vision_tower(c, v);
  if (v.patch > v.image_size) {
    throw InputError(c.field("patch_size"), "is " + std::to_string(v.patch) + ", larger than the image_size (" +
                                                std::to_string(v.image_size) + ")");
  }
}

/// The keys of `table`.
std::vector<std::string> keys_of(const std::vector<Field>& table) {
  std::vector<std::string> keys;
  for (const Field& f : table) keys.emplace_back(f.key);
  return keys;
}

/// The nested object `key` of `j` read with `table` into a new Arch (`defaults` first); its path for errors.
Arch read_part(const Json& j, const std::string& path, const char* key, const std::vector<Field>& table,
               void (*defaults)(Arch&)) {
  const std::string where = join(path, key);
  if (!j.contains(key) || j[key].is_null()) throw InputError(where, "required object is missing");
  const Json& part = require_object(j[key], where);
  reject_unknown_keys(part, where, keys_of(table));
  Arch a;
  a.name = key;
  defaults(a);
  for (const Field& f : table) read_field(f, part, where, a);
  return a;
}

/// Part `a` as the object of `table`.
Json write_part(const Arch& a, const std::vector<Field>& table) {
  Arch copy = a;  // the accessors reach members through a mutable Arch; this one is only read
  Json j = Json::object();
  for (const Field& f : table) j[f.key] = value_of(f, copy);
  return j;
}

/// The docs' rows of `table` under `key` ("vision.patch_size").
void nested_docs(const char* key, const std::vector<Field>& table, void (*defaults)(Arch&),
                 std::vector<ArchFieldDoc>& out) {
  for (ArchFieldDoc row : docs_of(table, defaults)) {
    row.key = std::string(key) + "." + row.key;
    out.push_back(std::move(row));
  }
}

// ---- vision_tower -----------------------------------------------------------------------------------------

const std::vector<Field>& vision_tower_fields() {
  static const std::vector<Field> table = [] {
    std::vector<Field> rows = {text_field("name", Kind::Text, at<&Arch::name>, {}, "the model's name in the response")};
    for (Field& f : tower_rows()) rows.push_back(std::move(f));
    rows.push_back(size_field("projection_dim", at<&Arch::projection_dim>, 0, 0, kMaxWidth, "features",
                              "visual_projection (no bias) on the pooled vector, as CLIPVisionModelWithProjection "
                              "has; 0: none"));
    return rows;
  }();
  return table;
}

void read_vision_tower_extra(const Json& j, const std::string& path, Arch& a) { check_tower(Cfg(j, path), a); }
void no_extra(const Arch&, Json&) {}
void nothing_from_config(const Cfg&, Arch&, std::vector<std::string>&) {}
std::vector<ArchFieldDoc> no_extra_docs() { return {}; }

// ---- two_towers -------------------------------------------------------------------------------------------

/// The nested vision tower's table.
const std::vector<Field>& vision_part_fields() {
  static const std::vector<Field> table = tower_rows();
  return table;
}

/// The text tower's table (CLIPTextConfig, SiglipTextConfig).
const std::vector<Field>& text_part_fields() {
  static const std::vector<Field> table = {
      required_size("hidden_size", at<&Arch::hidden>, kMaxWidth, "features", "the text tower's width"),
      required_size("num_hidden_layers", at<&Arch::layers>, kMaxDepth, "layers", "the encoder blocks (pre-LayerNorm)"),
      required_size("num_attention_heads", at<&Arch::heads>, kMaxWidth, "heads",
                    "the heads of each attention; must divide hidden_size"),
      size_field("intermediate_size", at<&Arch::inner>, of(&Arch::hidden, 4), 1, kMaxInner, "features",
                 "the MLP's width (fc1)", "4 × hidden_size"),
      required_size("vocab_size", at<&Arch::vocab>, kMaxVocab, "tokens", "the rows of the token embedding"),
      size_field("max_position_embeddings", at<&Arch::max_positions>, 77, 1, 1 << 20, "tokens",
                 "the caption's length: the position table's rows, every one read per image"),
      flag_field("causal", at<&Arch::text_causal>, "a causal mask in the text tower's attention (CLIP; SigLIP: false)"),
      text_field("hidden_act", Kind::Activation, at<&Arch::act>, {}, "the MLP's activation (Hugging Face names)"),
      real_field("attention_dropout", Kind::Rate, at<&Arch::attn_dropout>, 0, 0.999999, "probability",
                 "dropout on the attention probabilities"),
  };
  return table;
}

/// CLIPTextConfig's defaults.
void text_defaults(Arch& a) {
  a.act = "quick_gelu";
  a.text_causal = true;
}

const std::vector<Field>& two_towers_fields() {
  static const std::vector<Field> table = {
      text_field("name", Kind::Text, at<&Arch::name>, {}, "the model's name in the response"),
      size_field("projection_dim", at<&Arch::projection_dim>, 512, 0, kMaxWidth, "features",
                 "both towers' pooled vectors projected to this width without bias (CLIP's visual_projection and "
                 "text_projection); 0: none, the text tower ends in a biased head to vision.hidden_size (SigLIP)"),
      text_field("loss", Kind::Text, at<&Arch::contrastive_loss>, {"softmax", "sigmoid"},
                 "the contrastive loss over the micro-batch's image-text pairs: CLIP's softmax, SigLIP's sigmoid"),
  };
  return table;
}

void two_towers_defaults(Arch& a) { a.contrastive_loss = "softmax"; }

void read_two_towers_extra(const Json& j, const std::string& path, Arch& a) {
  Arch v = read_part(j, path, "vision", vision_part_fields(), tower_defaults);
  Arch t = read_part(j, path, "text", text_part_fields(), text_defaults);
  const Cfg vision(j["vision"], join(path, "vision")), text(j["text"], join(path, "text"));
  check_tower(vision, v);
  if (v.pooling == "none") {
    throw InputError(vision.field("pooling"), "is \"none\"; the image embedding is the tower's pooled vector");
  }
  check_heads(text, t.hidden, t.heads, t.heads, false, "num_attention_heads", "");
  a.parts = {v, t};
}

void write_two_towers_extra(const Arch& a, Json& j) {
  if (a.parts.size() != 2) return;  // an Arch not read as this family has no towers to write
  j["vision"] = write_part(a.parts[kVisionPart], vision_part_fields());
  j["text"] = write_part(a.parts[kTextPart], text_part_fields());
}

std::vector<ArchFieldDoc> two_towers_part_docs() {
  std::vector<ArchFieldDoc> out;
  nested_docs("vision", vision_part_fields(), tower_defaults, out);
  nested_docs("text", text_part_fields(), text_defaults, out);
  return out;
}

std::vector<ArchFieldDoc> two_towers_key_docs() {
  return {{"vision", "object", "", "required",
           "the vision tower: the vision_tower family's fields but name and "
           "projection_dim (below)"},
          {"text", "object", "", "required", "the text tower (below)"}};
}

// ---- multimodal -------------------------------------------------------------------------------------------

const std::vector<Field>& multimodal_fields() {
  static const std::vector<Field> table = {
      text_field("name", Kind::Text, at<&Arch::name>, {}, "the model's name in the response"),
      size_field("mm_tokens_per_image", at<&Arch::mm_tokens_per_image>, 256, 1, kMaxPositions, "tokens",
                 "the soft tokens each image becomes after the projector's average pool: a square whose side divides "
                 "the patches per image side"),
  };
  return table;
}

void multimodal_defaults(Arch&) {}

/// The text decoder under "text": the decoder family's form, read by arch_from_json.
Arch read_text_decoder(const Json& j, const std::string& path) {
  const std::string where = join(path, "text");
  if (!j.contains("text") || j["text"].is_null()) throw InputError(where, "required object is missing");
  require_object(j["text"], where);
  if (j["text"].contains("family") && j["text"]["family"] != "decoder") {
    throw InputError(join(where, "family"), "expected \"decoder\" (the wrapper's text model)");
  }
  return arch_from_json(j["text"], where);
}

void read_multimodal_extra(const Json& j, const std::string& path, Arch& a) {
  Arch v = read_part(j, path, "vision", vision_part_fields(), tower_defaults);
  check_tower(Cfg(j["vision"], join(path, "vision")), v);
  Arch t = read_text_decoder(j, path);
  a.parts = {v, t};
}

void write_multimodal_extra(const Arch& a, Json& j) {
  if (a.parts.size() != 2) return;  // an Arch not read as this family has no parts to write
  j["vision"] = write_part(a.parts[kVisionPart], vision_part_fields());
  Json text = arch_to_json(a.parts[kTextPart], "decoder");
  text.erase("name");  // the wrapper's name is the model's
  j["text"] = text;
}

std::vector<ArchFieldDoc> multimodal_part_docs() {
  std::vector<ArchFieldDoc> out;
  nested_docs("vision", vision_part_fields(), tower_defaults, out);
  return out;
}

std::vector<ArchFieldDoc> multimodal_key_docs() {
  return {{"vision", "object", "", "required",
           "the SigLIP vision tower, held as parameters: the vision_tower family's fields but name and "
           "projection_dim (below)"},
          {"text", "object", "", "required", "the text model: an architecture of the decoder family (its fields)"}};
}

// ---- llama4_multimodal -----------------------------------------------------------------------------------

/// Llama 4's vision model's table (Llama4VisionConfig): its own encoder, not a CLIP or SigLIP tower.
const std::vector<Field>& llama4_vision_fields() {
  static const std::vector<Field> table = {
      required_size("hidden_size", at<&Arch::hidden>, kMaxWidth, "features", "the vision encoder's width"),
      required_size("num_hidden_layers", at<&Arch::layers>, kMaxDepth, "layers", "the vision encoder's blocks"),
      required_size("num_attention_heads", at<&Arch::heads>, kMaxWidth, "heads",
                    "the heads of each attention; must divide hidden_size"),
      required_size("intermediate_size", at<&Arch::inner>, kMaxInner, "features",
                    "the MLP's width, and the pixel-shuffle adapter's input"),
      required_size("image_size", at<&Arch::image_size>, 16384, "pixels", "the side of the square images"),
      required_size("patch_size", at<&Arch::patch>, 4096, "pixels", "the side of one patch; at most image_size"),
      size_field("num_channels", at<&Arch::channels>, 3, 1, 1 << 16, "channels", "the image's channels"),
      required_size("projector_input_dim", at<&Arch::projector_input_dim>, kMaxInner, "features",
                    "the adapter's fc1 width (intermediate_size to this, no bias)"),
      required_size("projector_output_dim", at<&Arch::projector_output_dim>, kMaxInner, "features",
                    "the adapter's fc2, this width squared (no bias)"),
      required_size("vision_output_dim", at<&Arch::vision_output_dim>, kMaxInner, "features",
                    "the vision output the projector maps to the text model's hidden_size (no bias)"),
  };
  return table;
}

void no_defaults(Arch&) {}

const std::vector<Field>& llama4_fields() {
  static const std::vector<Field> table = {
      text_field("name", Kind::Text, at<&Arch::name>, {}, "the model's name in the response")};
  return table;
}

void read_llama4_extra(const Json& j, const std::string& path, Arch& a) {
  Arch v = read_part(j, path, "vision", llama4_vision_fields(), no_defaults);
  const Cfg vision(j["vision"], join(path, "vision"));
  if (v.hidden % v.heads != 0) throw InputError(vision.field("num_attention_heads"), "must divide hidden_size");
  if (v.patch > v.image_size) throw InputError(vision.field("patch_size"), "is larger than image_size");
  Arch t = read_text_decoder(j, path);
  a.parts = {v, t};
}

void write_llama4_extra(const Arch& a, Json& j) {
  if (a.parts.size() != 2) return;  // an Arch not read as this family has no parts to write
  j["vision"] = write_part(a.parts[kVisionPart], llama4_vision_fields());
  Json text = arch_to_json(a.parts[kTextPart], "decoder");
  text.erase("name");  // the wrapper's name is the model's
  j["text"] = text;
}

std::vector<ArchFieldDoc> llama4_part_docs() {
  std::vector<ArchFieldDoc> out;
  nested_docs("vision", llama4_vision_fields(), no_defaults, out);
  return out;
}

std::vector<ArchFieldDoc> llama4_key_docs() {
  return {{"vision", "object", "", "required", "Llama 4's vision model, held as parameters (below)"},
          {"text", "object", "", "required", "the text model: an architecture of the decoder family (its fields)"}};
}

}  // namespace

const Form& vision_tower_form() {
  static const Form form{"vision_tower",
                         "CLIP and SigLIP vision towers alone (CLIPVisionModel[WithProjection], SiglipVisionModel): "
                         "patch convolution, learned positions, pre-LayerNorm blocks, a pooled vector",
                         vision_tower_fields,
                         {},
                         read_vision_tower_extra,
                         no_extra,
                         no_extra_docs,
                         build_vision_tower,
                         nothing_from_config,
                         build_vision_tower_arch,
                         true,
                         tower_defaults};
  return form;
}

const Form& two_towers_form() {
  static const Form form{"two_towers",
                         "CLIP and SigLIP with both towers (CLIPModel, SiglipModel): a vision tower over the image, a "
                         "text tower over one caption, the contrastive loss over the micro-batch",
                         two_towers_fields,
                         {"vision", "text"},
                         read_two_towers_extra,
                         write_two_towers_extra,
                         two_towers_part_docs,
                         build_two_towers,
                         read_two_towers_config,
                         build_two_towers_arch,
                         true,
                         two_towers_defaults,
                         two_towers_key_docs};
  return form;
}

const Form& multimodal_form() {
  static const Form form{"multimodal",
                         "multimodal wrappers (Gemma3ForConditionalGeneration): a decoder costed over the tokens, "
                         "a SigLIP vision tower and the projector held as parameters",
                         multimodal_fields,
                         {"vision", "text"},
                         read_multimodal_extra,
                         write_multimodal_extra,
                         multimodal_part_docs,
                         build_gemma3,
                         read_gemma3_config,
                         build_gemma3_arch,
                         false,
                         multimodal_defaults,
                         multimodal_key_docs};
  return form;
}

const Form& llama4_multimodal_form() {
  static const Form form{"llama4_multimodal",
                         "Llama4ForConditionalGeneration: a decoder costed over the tokens, Llama 4's vision model "
                         "and the projector held as parameters",
                         llama4_fields,
                         {"vision", "text"},
                         read_llama4_extra,
                         write_llama4_extra,
                         llama4_part_docs,
                         build_llama4,
                         read_llama4_config,
                         build_llama4_arch,
                         false,
                         no_defaults,
                         llama4_key_docs};
  return form;
}

}  // namespace prenet::hf::form
