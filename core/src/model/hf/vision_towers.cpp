// The CLIP and SigLIP vision towers (CLIPVisionModel[WithProjection], SiglipVisionModel; modeling_clip.py,
// modeling_siglip.py): a patch convolution, learned positions, a pre-LayerNorm encoder. CLIP adds a class token
// and a LayerNorm before the encoder and pools the class token; SigLIP has neither and pools with a multi-head
// attention head (a learned probe attending to the patches, then a LayerNorm and an MLP).
#include "model/hf/vision_towers.hpp"

#include "model/hf/layer_seq.hpp"
#include "model/hf/model_types.hpp"

namespace prenet::hf {
namespace {

/// SigLIP's SiglipMultiheadAttentionPoolingHead on "stream": the probe's nn.MultiheadAttention (biased in_proj
/// and out_proj) over the patches, its LayerNorm and MLP with a residual; one pooled vector.
void attention_pool(const Arch& v, Seq& s) {
  s.push({{"type", "parameter"}, {"name", "head_probe"}, {"shape", {1, v.hidden}}});
  s.push({{"type", "attention"},
          {"name", "head_attention"},
          {"num_heads", v.heads},
          {"inputs", {"head_probe", "stream"}}});
  s.push({{"type", "layernorm"}, {"name", "head_layernorm"}});
  s.push({{"type", "dense"}, {"name", "head_fc1"}, {"units", v.inner}, {"activation", v.act}});
  s.push({{"type", "dense"}, {"name", "head_fc2"}, {"units", v.hidden}});
  s.push({{"type", "add"}, {"name", "pooled"}, {"inputs", {"head_attention", "head_fc2"}}});
}

}  // namespace

Json encoder_block(const Arch& v, const std::string& stream, bool causal) {
  Seq b;
  b.push({{"type", "layernorm"}, {"name", "layer_norm1"}, {"inputs", {stream}}});
  Json at = {{"type", "attention"}, {"name", "self_attn"}, {"num_heads", v.heads}};
  if (causal) at["causal"] = true;
  if (v.attn_dropout > 0) at["dropout"] = v.attn_dropout;
  b.push(at);
  b.push({{"type", "add"}, {"name", "attention_residual"}, {"inputs", {stream, "self_attn"}}});
  b.push({{"type", "layernorm"}, {"name", "layer_norm2"}});
  b.push({{"type", "dense"}, {"name", "fc1"}, {"units", v.inner}, {"activation", v.act}});
  b.push({{"type", "dense"}, {"name", "fc2"}, {"units", v.hidden}});
  b.push({{"type", "add"}, {"name", stream}, {"inputs", {"attention_residual", "fc2"}}});
  return b.layers;
}

std::int64_t tower_image_size(const Cfg& c, const Arch& v, std::int64_t wanted) {
  const std::int64_t config_image = v.image_size;
  // The patch convolution drops a remainder, as Hugging Face's (image_size // patch_size)^2 patches do
  // (siglip-so400m-patch14-384: 27 x 27 patches of 14 over 384 pixels).
  if (v.patch > config_image) {
    throw InputError(c.field("patch_size"),
                     "is " + std::to_string(v.patch) + ", larger than image_size " + std::to_string(config_image));
  }
  std::int64_t image = wanted > 0 ? wanted : config_image;
  if (image < v.patch || image > config_image) {
    throw InputError("training.image_size", "is " + std::to_string(image) + "; the model's position table holds " +
                                                std::to_string(config_image) + "-pixel images (" +
                                                std::to_string(v.patch) + " to " + std::to_string(config_image) +
                                                " pixels is accepted)");
  }
  return image;
}

Cfg nested(const Cfg& c, const std::string& key) {
  if (!c.has(key)) throw InputError(c.field(key), "required object is missing (the " + key + " of the model)");
  if (!c.json()[key].is_object()) throw InputError(c.field(key), "expected an object (a nested config)");
  return Cfg(c.json()[key], c.field(key));
}

const ModelType& nested_row(const Cfg& n, const std::string& fallback) {
  std::string type = n.str("model_type", fallback);
  const ModelType* row = find_model_type(type);
  if (row == nullptr) {
    throw InputError(n.field("model_type"), "\"" + printable(type) + "\" is not a model type this calculator reads" +
                                                (type == fallback ? " (the wrapper's text model needs its row)" : ""));
  }
  return *row;
}

std::string first_architecture(const Cfg& c) {
  if (!c.has("architectures")) return "";
  const Json& names = c.json()["architectures"];
  if (!names.is_array() || (!names.empty() && !names[0].is_string())) {
    throw InputError(c.field("architectures"), "expected an array of class names");
  }
  return names.empty() ? "" : names[0].get<std::string>();
}

void check_vision_tower(const Cfg& c, const Arch& v) {
  check_heads(c, v.hidden, v.heads, v.heads, false, v.heads_field, "");
  if (v.pooling == "class_token" && !v.class_embedding) {
    throw InputError(c.field("pooling"), "is \"class_token\" but class_embedding is false (no class token to pool)");
  }
  if (v.projection_dim > 0 && v.pooling == "none") {
    throw InputError(c.field("projection_dim"), "is " + std::to_string(v.projection_dim) +
                                                    " but pooling is \"none\" (no pooled vector to project)");
  }
}

Json vision_tower_layers(const Cfg& c, const Arch& v) {
  check_vision_tower(c, v);
  const std::int64_t side = v.image_size / v.patch, extra = v.class_embedding ? 1 : 0;
  Seq s;
  s.push({{"type", "conv2d"},
          {"name", "patch_embedding"},
          {"filters", v.hidden},
          {"kernel_size", v.patch},
          {"stride", v.patch},
          {"bias", v.patch_bias}});
  // [hidden, H/p, W/p] viewed as [patches, hidden] (flatten + transpose; a view, no kernel).
  std::string cur = s.push({{"type", "reshape"}, {"name", "patches"}, {"shape", {-1, v.hidden}}});
  if (v.class_embedding) {
    s.push({{"type", "parameter"}, {"name", "class_embedding"}, {"shape", {1, v.hidden}}});
    cur = s.push({{"type", "concat"}, {"name", "tokens"}, {"axis", 0}, {"inputs", {"class_embedding", "patches"}}});
  }
  s.push({{"type", "embedding"},
          {"name", "position_embedding"},
          {"vocab_size", side * side + extra},
          {"dim", v.hidden},
          {"positional", true},
          {"inputs", {cur}}});
  cur = s.push({{"type", "add"}, {"name", "embeddings"}, {"inputs", {cur, "position_embedding"}}});
  if (v.pre_layernorm) cur = s.push({{"type", "layernorm"}, {"name", "pre_layrnorm"}, {"inputs", {cur}}});
  s.push({{"type", "identity"}, {"name", "stream"}, {"inputs", {cur}}});
  s.push({{"type", "repeat"}, {"name", "layers"}, {"count", v.layers}, {"layers", encoder_block(v, "stream", false)}});
  if (v.pooling == "class_token") {
    // pooled_output = post_layernorm(last_hidden_state[:, 0]).
    s.select_token("cls_view", "cls_select", v.hidden, "stream");
    s.push({{"type", "layernorm"}, {"name", "post_layernorm"}});
  } else {
    s.push({{"type", "layernorm"}, {"name", "post_layernorm"}, {"inputs", {"stream"}}});
    if (v.pooling == "attention_head") attention_pool(v, s);
  }
  // CLIPVisionModelWithProjection adds visual_projection (no bias) to projection_dim.
  if (v.projection_dim > 0) {
    s.push({{"type", "dense"}, {"name", "visual_projection"}, {"units", v.projection_dim}, {"bias", false}});
  }
  return s.layers;
}

void read_vision_projection(const Cfg& c, Arch& a, std::vector<std::string>&) {
  a.projection_dim =
      first_architecture(c) == "CLIPVisionModelWithProjection" ? c.opt({"projection_dim"}, 512, 1, kMaxWidth) : 0;
}

Json build_vision_tower(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  // The rows' steps read everything the tower is built from (the projection too: read_vision_projection).
  return build_vision_tower_arch(c, a, wanted, warnings);
}

Json build_vision_tower_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>&) {
  std::int64_t image = tower_image_size(c, a, wanted.image_size);
  return {{"name", a.name},
          {"input", {{"kind", "image"}, {"channels", a.channels}, {"image_size", image}}},
          {"layers", vision_tower_layers(c, a)}};
}

}  // namespace prenet::hf
