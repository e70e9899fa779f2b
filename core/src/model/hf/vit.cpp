// ViT for image classification: patch convolution, class token, learned positions, pre-LN encoder.
#include "model/hf/builders.hpp"
#include "model/hf/layer_seq.hpp"

namespace prenet::hf {
namespace {

/// One pre-LayerNorm block reading and writing "stream".
Json vit_block(const Arch& v) {
  Seq block;
  block.push({{"type", "layernorm"}, {"name", "layernorm_before"}, {"inputs", {"stream"}}});
  Json at = {
      {"type", "attention"}, {"name", "attention"}, {"num_heads", v.heads}, {"bias", v.qkv_bias}, {"out_bias", true}};
  if (v.attn_dropout > 0) at["dropout"] = v.attn_dropout;
  std::string a = block.maybe_dropout("attention_dropout", block.push(at), v.dropout);
  block.push({{"type", "add"}, {"name", "attention_residual"}, {"inputs", {"stream", a}}});
  block.push({{"type", "layernorm"}, {"name", "layernorm_after"}});
  block.push({{"type", "dense"}, {"name", "intermediate"}, {"units", v.inner}, {"activation", v.act}});
  std::string out = block.maybe_dropout(
      "output_dropout", block.push({{"type", "dense"}, {"name", "output"}, {"units", v.hidden}}), v.dropout);
  block.push({{"type", "add"}, {"name", "stream"}, {"inputs", {"attention_residual", out}}});
  return block.layers;
}

/// The classifier's layers: `positions` learned rows (patches + class token), `labels` classes.
Json vit_layers(const Arch& v, std::int64_t positions, std::int64_t labels) {
  Seq s;
  s.push({{"type", "conv2d"},
          {"name", "patch_embeddings"},
          {"filters", v.hidden},
          {"kernel_size", v.patch},
          {"stride", v.patch}});
  // [hidden, H/p, W/p] viewed as [patches, hidden] (flatten + transpose; a view, no kernel).
  s.push({{"type", "reshape"}, {"name", "patches"}, {"shape", {-1, v.hidden}}});
  s.push({{"type", "parameter"}, {"name", "cls_token"}, {"shape", {1, v.hidden}}});
  s.push({{"type", "concat"}, {"name", "tokens"}, {"axis", 0}, {"inputs", {"cls_token", "patches"}}});
  s.push({{"type", "embedding"},
          {"name", "position_embeddings"},
          {"vocab_size", positions},
          {"dim", v.hidden},
          {"positional", true},
          {"inputs", {"tokens"}}});
  std::string cur = s.push({{"type", "add"}, {"name", "embeddings"}, {"inputs", {"tokens", "position_embeddings"}}});
  s.start_stream("stream", cur, v.dropout);
  s.push({{"type", "repeat"}, {"name", "layer"}, {"count", v.layers}, {"layers", vit_block(v)}});
  s.push({{"type", "layernorm"}, {"name", "layernorm"}, {"inputs", {"stream"}}});
  // The classifier reads the class token.
  s.select_token("by_feature", "cls_select", v.hidden);
  s.push({{"type", "dense"}, {"name", "classifier"}, {"units", labels}});
  s.push({{"type", "cross_entropy"}, {"name", "loss"}});
  return s.layers;
}

/// The image side to use: the request's, which must fit the position table of `config_image`-pixel images.
std::int64_t choose_image(std::int64_t wanted, std::int64_t config_image, std::int64_t patch) {
  auto patches = [&](std::int64_t side) { return (side / patch) * (side / patch); };
  std::int64_t image = wanted > 0 ? wanted : config_image;
  if (image < patch) {
    throw InputError("training.image_size",
                     "is " + std::to_string(image) + ", smaller than one " + std::to_string(patch) + "-pixel patch");
  }
  if (patches(image) > patches(config_image)) {
    throw InputError("training.image_size", "is " + std::to_string(image) +
                                                " but the model has position embeddings for " +
                                                std::to_string(config_image) + "-pixel images only");
  }
  return image;
}

}  // namespace

void read_vit_labels(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  std::optional<std::int64_t> labels = label_count(c);
  if (!labels) warnings.push_back("the config gives neither num_labels nor id2label; a 1000-class head is assumed");
  a.head.labels = labels.value_or(1000);
}

Json build_vit(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  check_heads(c, a.hidden, a.heads, a.heads, false, a.heads_field, "");
  if (a.image_size < a.patch) throw InputError(c.field("patch_size"), "is larger than the image_size");
  Arch read = a;
  read_vit_labels(c, read, warnings);
  return build_vit_arch(c, read, wanted, warnings);
}

Json build_vit_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& /*warnings*/) {
  check_heads(c, a.hidden, a.heads, a.heads, false, a.heads_field, "");
  if (a.image_size < a.patch) throw InputError(c.field("patch_size"), "is larger than the image_size");
  std::int64_t image = choose_image(wanted.image_size, a.image_size, a.patch);
  std::int64_t positions = (a.image_size / a.patch) * (a.image_size / a.patch) + 1;
  return {{"name", a.name},
          {"input", {{"kind", "image"}, {"channels", a.channels}, {"image_size", image}}},
          {"layers", vit_layers(a, positions, a.head.labels)}};
}

}  // namespace prenet::hf
