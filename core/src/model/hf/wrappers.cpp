// Multimodal wrappers whose parts are separate configs (Gemma3ForConditionalGeneration: text_config read with
// its text row, vision_config a SigLIP tower, the multi-modal projector; Llama4ForConditionalGeneration:
// llama4_text and Llama 4's own vision model; Qwen3.5's and Qwen3-VL's wrappers: their text rows and Qwen3-VL's
// vision encoder). The two-tower models (clip, siglip) are two_towers.cpp.
#include <stdexcept>

#include "model/hf/arch_json.hpp"
#include "model/hf/heads.hpp"
#include "model/hf/model_types.hpp"
#include "model/hf/vision_towers.hpp"
#include "prenet/layer_list.hpp"
#include "prenet/network.hpp"

namespace prenet::hf {
namespace {

/// The parameters of vision tower `tower` (an image model of its own); `v` names its fields in errors.
std::int64_t tower_parameters(const Cfg& v, const Arch& tower) {
  Json model = {
      {"name", "vision_tower"},
      {"input", {{"kind", "image"}, {"channels", tower.channels}, {"image_size", tower_image_size(v, tower, 0)}}},
      {"layers", vision_tower_layers(v, tower)}};
  return parse_layer_list(model, v.field("model_type"), {}).parameters();
}

/// The nested part `form_key` of an architecture or `config_key` of a config, whichever `c` holds, as a reader
/// naming its fields (the arch builders run on both).
Cfg part_of(const Cfg& c, const char* form_key, const char* config_key) {
  // Cfg keeps a reference: both branches are lvalues that outlive it (a `: Json::object()` branch would make the
  // whole expression a temporary copy, destroyed before the Cfg is read).
  static const Json kNone = Json::object();
  const char* key = c.has(form_key) ? form_key : config_key;
  const Json& part = c.has(key) && c.json()[key].is_object() ? c.json()[key] : kNone;
  return Cfg(part, c.field(key));
}

/// Gemma3TextConfig's defaults (configuration_gemma3.py) for the fields that decide the text model:
/// Gemma3Config builds Gemma3TextConfig(**text_config), and the published configs leave some out
/// (gemma-3-4b's text_config names no head counts, head_dim or vocab_size).
const Json& gemma3_text_defaults() {
  static const Json defaults = {
      {"model_type", "gemma3_text"},       {"vocab_size", 262208},    {"hidden_size", 2304},
      {"intermediate_size", 9216},         {"num_hidden_layers", 26}, {"num_attention_heads", 8},
      {"num_key_value_heads", 4},          {"head_dim", 256},         {"hidden_activation", "gelu_pytorch_tanh"},
      {"max_position_embeddings", 131072}, {"rms_norm_eps", 1e-6},    {"tie_word_embeddings", true},
      {"rope_theta", 1000000.0},           {"attention_bias", false}, {"attention_dropout", 0.0},
      {"query_pre_attn_scalar", 256},      {"sliding_window", 4096},  {"rope_local_base_freq", 10000.0},
      {"sliding_window_pattern", 6}};
  return defaults;
}

/// `nested` with each field of `defaults` it leaves out (or sets to null) filled in.
Json with_defaults(const Json& nested, const Json& defaults) {
  Json out = nested;
  for (auto it = defaults.begin(); it != defaults.end(); ++it) {
    if (!out.contains(it.key()) || out[it.key()].is_null()) out[it.key()] = it.value();
  }
  return out;
}

/// Appends `count` parameters that no layer reads as one learned tensor named `name`: counted in
/// parameters, gradients and optimizer state, with no forward or backward kernels.
void held_parameters(Json& layers, const std::string& name, std::int64_t count) {
  layers.push_back({{"type", "parameter"}, {"name", name}, {"shape", {count}}});
}

/// Holds a wrapper's vision part (`tower` parameters named `tower_name`, `label` in the note) and its
/// projector as parameters no layer reads, and says so; `image_tokens` says how images enter the text.
void hold_vision_parts(Json& layers, const std::string& tower_name, const std::string& label, std::int64_t tower,
                       std::int64_t projector, const std::string& image_tokens, std::vector<std::string>& warnings) {
  held_parameters(layers, tower_name, tower);
  held_parameters(layers, "multi_modal_projector", projector);
  warnings.push_back(label + " (" + std::to_string(tower) + " parameters) and the multi-modal projector (" +
                     std::to_string(projector) +
                     ") are counted in parameters, gradients and optimizer state, but their compute is not costed: "
                     "the network has one input, so only the text model is costed, over training.seq_len tokens (" +
                     image_tokens + ")");
}

/// What the text decoder of a wrapper is asked for: the request's length, else the default a decoder config of its
/// own would get (4096 for rotary decoders trained on 4096 positions or more), from the text model's positions.
Wanted text_wanted(const Arch& text, const Wanted& wanted) {
  Wanted w = wanted;
  if (w.seq_len <= 0) w.seq_len = rotary_default_seq(text, false);
  return w;
}

/// The text decoder of a wrapper named `a.name`: text_config read with its model_type's row (`fallback` when it
/// names none; a warning when it names another), `defaults` filling what the fallback's class would, and its head
/// from its `architectures`, as build_decoder reads it; an error naming the model_type when it is not a decoder.
Arch read_wrapped_text(const Cfg& c, const Arch& a, const std::string& fallback, const Json& defaults,
                       std::vector<std::string>& warnings) {
  Cfg given = nested(c, "text_config");
  const ModelType& text_row = nested_row(given, fallback);
  if (text_row.name != fallback) {
    warnings.push_back("text_config is read as model_type \"" + text_row.name + "\", as it says; " + "the " + a.name +
                       " wrapper reads it as " + fallback);
  }
  if (text_row.family.build != build_decoder) {
    throw InputError(given.field("model_type"),
                     "\"" + text_row.name + "\" is not a decoder; the " + a.name + " wrapper's text model is");
  }
  const Json text_json = text_row.name == fallback ? with_defaults(given.json(), defaults) : given.json();
  Cfg text(text_json, c.field("text_config"));
  Arch t;
  t.name = a.name;
  t.family = "decoder";
  read_steps(text, text_row.steps, t, warnings);
  t.head = read_head(text, warnings);
  return t;
}

/// Llama4VisionConfig's sizes of `v` into a new Arch (required: the published configs give them all); errors name
/// the field.
Arch read_llama4_vision(const Cfg& v) {
  Arch t;
  t.name = "llama4_vision_model";
  t.hidden = v.req({"hidden_size"}, 1, kMaxWidth);
  t.layers = v.req({"num_hidden_layers"}, 1, kMaxDepth);
  t.heads = v.req({"num_attention_heads"}, 1, kMaxWidth);
  t.inner = v.req({"intermediate_size"}, 1, kMaxInner);
  t.image_size = v.req({"image_size"}, 1, 16384);
  t.patch = v.req({"patch_size"}, 1, 4096);
  t.channels = v.opt({"num_channels"}, 3, 1, 1 << 16);
  t.projector_input_dim = v.req({"projector_input_dim"}, 1, kMaxInner);
  t.projector_output_dim = v.req({"projector_output_dim"}, 1, kMaxInner);
  t.vision_output_dim = v.req({"vision_output_dim"}, 1, kMaxInner);
  return t;
}

/// Llama4VisionModel's parameters (modeling_llama4.py), every size read from `v` (required: the published
/// configs give them all): the unfolded patches' linear (no bias), class_embedding, positional_embedding_vlm
/// for the patches and the class token, layernorm_pre and layernorm_post, the encoder layers (LayerNorms,
/// biased q/k/v/o, fc1/fc2 with bias), and the pixel-shuffle adapter's fc1 (intermediate_size ->
/// projector_input_dim) and fc2 (projector_output_dim squared), both without bias. The rotary table is a buffer.
std::int64_t llama4_vision_parameters(const Cfg& v, const Arch& t) {
  const std::int64_t d = t.hidden, inner = t.inner, patch = t.patch;
  if (d % t.heads != 0) throw InputError(v.field("num_attention_heads"), "must divide hidden_size");
  if (patch > t.image_size) throw InputError(v.field("patch_size"), "is larger than image_size");
  const std::int64_t side = t.image_size / patch;
  const std::int64_t layer = 2 * 2 * d + 4 * (d * d + d) + (d * inner + inner) + (inner * d + d);
  return t.channels * patch * patch * d + d + (side * side + 1) * d + 2 * 2 * d + t.layers * layer +
         inner * t.projector_input_dim + t.projector_output_dim * t.projector_output_dim;
}

/// The text model of wrapper `a` (its decoder part, under the wrapper's name), as the decoder builder builds it.
Json build_wrapped_text(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  if (a.parts.size() != 2) throw std::logic_error("a multimodal wrapper without its parts");
  Arch t = a.parts[kTextPart];
  t.name = a.name;
  return build_decoder_arch(part_of(c, "text", "text_config"), t, text_wanted(t, wanted), warnings);
}

/// Qwen3-VL's vision encoder as Qwen3_5VisionModel builds it (modeling_qwen3_vl.py's Qwen3VLVisionModel; sizes from
/// `v` with Qwen3VLVisionConfig's defaults): the patch embedding (a biased Conv3d of in_channels x temporal_patch_size
/// x patch_size^2 per patch), the learned position table (num_position_embeddings rows), `depth` blocks (two biased
/// LayerNorms, a biased qkv and proj, a biased fc1 / fc2 MLP of intermediate_size), and the deepstack mergers of
/// `deepstack_visual_indexes`. Returns {encoder, merger}: the merger (LayerNorm, fc1 over spatial_merge_size^2
/// patches, fc2 to out_hidden_size, which must be the text model's width) is the projector into the text stream.
/// The release's vision config class decides two defaults (`QwenVision`).
struct QwenVision {
  std::string label;           // "Qwen3.5's" or "Qwen3-VL's", for the held parts' note
  std::int64_t deepstack = 0;  // deepstack mergers when deepstack_visual_indexes is absent
  std::int64_t out = 0;        // out_hidden_size when absent (0: the text model's width)
};

std::pair<std::int64_t, std::int64_t> qwen_vision_parameters(const Cfg& v, std::int64_t text_hidden,
                                                             const QwenVision& kind) {
  const std::int64_t depth = v.opt({"depth"}, 27, 1, kMaxDepth), h = v.opt({"hidden_size"}, 1152, 1, kMaxWidth);
  const std::int64_t inner = v.opt({"intermediate_size"}, 4304, 1, kMaxInner);
  const std::int64_t heads = v.opt({"num_heads"}, 16, 1, kMaxWidth);
  if (h % heads != 0) throw InputError(v.field("num_heads"), "must divide hidden_size (" + std::to_string(h) + ")");
  const std::int64_t channels = v.opt({"in_channels"}, 3, 1, 1 << 16), patch = v.opt({"patch_size"}, 16, 1, 4096);
  const std::int64_t frames = v.opt({"temporal_patch_size"}, 2, 1, 64);
  const std::int64_t merge = v.opt({"spatial_merge_size"}, 2, 1, 64);
  const std::int64_t positions = v.opt({"num_position_embeddings"}, 2304, 1, kMaxPositions);
  const std::int64_t out = v.opt({"out_hidden_size"}, kind.out > 0 ? kind.out : text_hidden, 1, kMaxWidth);
  if (out != text_hidden) {
    throw InputError(v.field("out_hidden_size"), "is " + std::to_string(out) + "; the merger feeds the text model, " +
                                                     "whose hidden_size is " + std::to_string(text_hidden));
  }
  std::int64_t deepstack = kind.deepstack;
  if (v.has("deepstack_visual_indexes")) {
    const Json& list = v.json()["deepstack_visual_indexes"];
    if (!list.is_array()) throw InputError(v.field("deepstack_visual_indexes"), "expected a list of block indices");
    deepstack = static_cast<std::int64_t>(list.size());
  }
  const std::int64_t block = 4 * h + (3 * h * h + 3 * h) + (h * h + h) + (h * inner + inner) + (inner * h + h);
  const std::int64_t merged = h * merge * merge;
  const std::int64_t merger_body = (merged * merged + merged) + (merged * out + out);
  const std::int64_t encoder = channels * frames * patch * patch * h + h + positions * h + depth * block +
                               deepstack * (2 * merged + merger_body);
  return {encoder, 2 * h + merger_body};
}

/// Qwen3.5's vision config (Qwen3_5VisionConfig: no deepstack mergers unless listed) and Qwen3-VL's
/// (Qwen3VLVisionConfig, Qwen3VLMoeVisionConfig: deepstack_visual_indexes [8, 16, 24], out_hidden_size 3584).
const QwenVision kQwen35Vision{"Qwen3.5's", 0, 0};
const QwenVision kQwen3VlVision{"Qwen3-VL's", 3, 3584};

/// A Qwen3.5 or Qwen3-VL wrapper (Qwen3_5ForConditionalGeneration, Qwen3VLForConditionalGeneration and their MoE
/// twins): text_config read as `text_type`, its decoder built as that row builds it, and the vision encoder and
/// merger held as parameters.
Json build_qwen_vl_wrapper(const Cfg& c, const Arch& a, const std::string& text_type, const QwenVision& kind,
                           const Wanted& wanted, std::vector<std::string>& warnings) {
  Arch t = read_wrapped_text(c, a, text_type, Json::object(), warnings);
  // Qwen3.5's releases state tie_word_embeddings at the top (the 0.8B to 4B models: true); the text model ties its
  // head as the wrapper says unless text_config says it too, and then they must agree.
  const std::string tie = "tie_word_embeddings";
  if (c.has(tie)) {
    const Cfg text = part_of(c, "text", "text_config");
    const bool top = c.flag(tie, false);
    if (text.has(tie) && text.flag(tie, false) != top) {
      throw InputError(c.field(tie), std::string("is ") + (top ? "true" : "false") + " but text_config's is " +
                                         (top ? "false" : "true") + "; the head is tied or not, not both");
    }
    t.tied = top;
  }
  Json model = build_decoder_arch(part_of(c, "text", "text_config"), t, text_wanted(t, wanted), warnings);
  const auto vision = qwen_vision_parameters(nested(c, "vision_config"), t.hidden, kind);
  hold_vision_parts(model["layers"], "visual", kind.label + " vision encoder", vision.first, vision.second,
                    "image tokens counted as text tokens", warnings);
  return model;
}

}  // namespace

Json build_qwen3_5(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  return build_qwen_vl_wrapper(c, a, "qwen3_5_text", kQwen35Vision, wanted, warnings);
}

Json build_qwen3_5_moe(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  return build_qwen_vl_wrapper(c, a, "qwen3_5_moe_text", kQwen35Vision, wanted, warnings);
}

Json build_qwen3_vl(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  return build_qwen_vl_wrapper(c, a, "qwen3_vl_text", kQwen3VlVision, wanted, warnings);
}

Json build_qwen3_vl_moe(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  return build_qwen_vl_wrapper(c, a, "qwen3_vl_moe_text", kQwen3VlVision, wanted, warnings);
}

void read_llama4_config(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  Cfg vision = nested(c, "vision_config");
  Arch t = read_wrapped_text(c, a, "llama4_text", Json::object(), warnings);
  Arch v = read_llama4_vision(vision);
  if (vision.flag("multi_modal_projector_bias", false)) {
    throw InputError(vision.field("multi_modal_projector_bias"), "only false is supported (Llama 4's own configs)");
  }
  a.parts = {v, t};
}

Json build_llama4(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  Arch read = a;
  read_llama4_config(c, read, warnings);
  return build_llama4_arch(c, read, wanted, warnings);
}

Json build_llama4_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  Json model = build_wrapped_text(c, a, wanted, warnings);
  const Cfg vision = part_of(c, "vision", "vision_config");
  const Arch &v = a.parts[kVisionPart], &t = a.parts[kTextPart];
  const std::int64_t tower = llama4_vision_parameters(vision, v);
  // Llama4MultiModalProjector: linear_1, vision_output_dim -> text hidden, no bias.
  const std::int64_t projector = v.vision_output_dim * t.hidden;
  hold_vision_parts(model["layers"], "vision_model", "Llama 4's vision model", tower, projector,
                    "image tokens counted as text tokens", warnings);
  return model;
}

void read_gemma3_config(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  Cfg vision = nested(c, "vision_config");
  // The text model is Gemma3TextConfig(**text_config): its defaults fill what the nested config leaves out.
  Arch t = read_wrapped_text(c, a, "gemma3_text", gemma3_text_defaults(), warnings);

  const ModelType& row = nested_row(vision, "siglip_vision_model");
  if (row.name != "siglip_vision_model") {
    throw InputError(vision.field("model_type"), "expected \"siglip_vision_model\" (Gemma 3's vision tower)");
  }
  Arch tower;
  tower.name = row.name;
  read_steps(vision, row.steps, tower, warnings);
  a.mm_tokens_per_image = c.opt({"mm_tokens_per_image"}, 256, 1, kMaxPositions);
  a.parts = {tower, t};
}

Json build_gemma3(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  Arch read = a;
  read_gemma3_config(c, read, warnings);
  return build_gemma3_arch(c, read, wanted, warnings);
}

Json build_gemma3_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  Json model = build_wrapped_text(c, a, wanted, warnings);
  const Cfg vision = part_of(c, "vision", "vision_config");
  const Arch &tower = a.parts[kVisionPart], &t = a.parts[kTextPart];

  std::int64_t tower_params = tower_parameters(vision, tower);
  const std::int64_t tokens = a.mm_tokens_per_image;
  std::int64_t side = tower.image_size / tower.patch, pooled = 1;
  while (pooled * pooled < tokens) ++pooled;
  if (pooled * pooled != tokens || side % pooled != 0) {
    throw InputError(c.field("mm_tokens_per_image"),
                     "must be a square whose side divides the " + std::to_string(side) + " patches per image side");
  }
  // Gemma3MultiModalProjector: mm_input_projection_weight [vision hidden, text hidden] and the RMSNorm
  // mm_soft_emb_norm over the vision width; its average pool has no parameters.
  std::int64_t projector = tower.hidden * t.hidden + tower.hidden;
  hold_vision_parts(model["layers"], "vision_tower", "the SigLIP vision tower", tower_params, projector,
                    "image soft tokens counted as text tokens, " + std::to_string(tokens) + " per image", warnings);
  return model;
}

}  // namespace prenet::hf
