// The vision families of the architecture form ("vision_tower", "two_towers"; docs/MODEL_FORMAT.md): every real
// CLIP and SigLIP config and the presets read from one, echoed as model.architecture and sent back, give the same
// layers and the same response but for the reading fields; every switch the rows read survives the echo; editing
// one field changes the parameters as the formula in the test says; bad fields are named, nested ones with their
// part ("model.architecture.vision.patch_size").
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "arch_form_roundtrip.hpp"
#include "hf_fixtures.hpp"
#include "model/hf/arch_json.hpp"
#include "prenet/hf_config.hpp"

using namespace prenet;
using testutil::check_error;
using I = std::int64_t;
using testutil::check_arch_round_trip;
using testutil::net_of_architecture;
using testutil::predict_err;
using testutil::predict_ok;
using testutil::request_for;

namespace {

/// The config's layers and the layers of its echoed architecture (of `family`) at `image` pixels (0: its own).
void check_same_layers(const Json& cfg, const std::string& family, I image, bool same_notes = true) {
  INFO("config: " << cfg.dump());
  std::optional<Json> arch = hf::hf_config_architecture(cfg);
  REQUIRE(arch);
  CHECK((*arch)["family"] == family);
  CHECK(hf::arch_to_json(hf::arch_from_json(*arch, "model.architecture")) == *arch);
  std::vector<std::string> w1, w2;
  Json from_cfg = hf_config_to_layers(cfg, "model.hf_config", 0, w1, image);
  Json from_arch = hf::architecture_to_layers(*arch, "model.architecture", 0, w2, image);
  CHECK(from_arch["input"] == from_cfg["input"]);
  CHECK(from_arch["layers"] == from_cfg["layers"]);
  if (same_notes) CHECK(w2 == w1);
}

/// `base` with `key` set to `value`; a key "vision.patch_size" sets the nested part's field.
Json with(Json base, const std::string& key, const Json& value) {
  const std::size_t dot = key.find('.');
  if (dot == std::string::npos) {
    base[key] = value;
  } else {
    base[key.substr(0, dot)][key.substr(dot + 1)] = value;
  }
  return base;
}

I params(const Json& arch) { return net_of_architecture(arch).parameters(); }

/// A small SigLIP-style tower: 2 blocks of width 64 (4 heads), MLP 128, 32-pixel images of 8-pixel patches.
Json small_tower() {
  return {{"family", "vision_tower"}, {"hidden_size", 64},          {"num_hidden_layers", 2},
          {"num_attention_heads", 4}, {"intermediate_size", 128},   {"image_size", 32},
          {"patch_size", 8},          {"class_embedding", false},   {"patch_bias", true},
          {"pre_layernorm", false},   {"pooling", "attention_head"}};
}

/// A small CLIP-style two-tower model: that tower's sizes with CLIP's modules, a 32-wide text tower, projection 24.
Json small_two_towers() {
  Json vision = small_tower();
  vision.erase("family");
  vision["class_embedding"] = true;
  vision["patch_bias"] = false;
  vision["pre_layernorm"] = true;
  vision["pooling"] = "class_token";
  return {{"family", "two_towers"},
          {"projection_dim", 24},
          {"vision", vision},
          {"text",
           {{"hidden_size", 32},
            {"num_hidden_layers", 2},
            {"num_attention_heads", 2},
            {"intermediate_size", 64},
            {"vocab_size", 100},
            {"max_position_embeddings", 16}}}};
}

/// One pre-LayerNorm block of width h and MLP i: two LayerNorms, biased q, k, v, o, fc1 and fc2.
I block(I h, I i) { return 2 * 2 * h + 4 * (h * h + h) + (h * i + i) + (i * h + h); }

}  // namespace

TEST_CASE("vision forms: every real CLIP and SigLIP config round-trips to the same layers and response",
          "[arch_vision]") {
  int towers = 0, pairs = 0, wrappers = 0;
  for (const std::string& file : testutil::fixture_files()) {
    const Json cfg = testutil::read_fixture(file);
    if (!cfg.is_object() || !cfg.contains("model_type")) continue;
    const std::string type = cfg["model_type"];
    INFO(file);
    if (type == "clip" || type == "siglip") {
      ++pairs;
      check_same_layers(cfg, "two_towers", 0);
      check_arch_round_trip({{"hf_config", cfg}}, "two_towers");
    }
    if (type == "gemma3") {
      ++wrappers;
      check_same_layers(cfg, "multimodal", 0);
      check_arch_round_trip({{"hf_config", cfg}}, "multimodal");
    }
    // Each vision_config (a two-tower model's, Gemma 3's) read as a tower of its own.
    if (cfg.contains("vision_config") &&
        cfg["vision_config"].value("model_type", "").find("_vision_model") != std::string::npos) {
      ++towers;
      check_same_layers(cfg["vision_config"], "vision_tower", 0);
      check_arch_round_trip({{"hf_config", cfg["vision_config"]}}, "vision_tower");
    }
  }
  CHECK(pairs >= 2);   // clip-vit-base-patch32, siglip-so400m-patch14-384
  CHECK(towers >= 3);  // and gemma-3-4b's SigLIP tower without its head
  CHECK(wrappers >= 1);  // gemma-3-4b-it
}

TEST_CASE("vision forms: the siglip-so400m preset round-trips", "[arch_vision]") {
  const Json arch = check_arch_round_trip({{"preset", "siglip-so400m"}}, "vision_tower");
  CHECK(arch["pooling"] == "attention_head");
  CHECK(arch["class_embedding"] == false);
  CHECK(arch["patch_size"] == 14);
}

TEST_CASE("vision forms: the Gemma 3 presets round-trip as multimodal wrappers", "[arch_vision]") {
  for (const char* id : {"gemma-3-4b", "gemma-3-12b", "gemma-3-27b"}) {
    INFO(id);
    const Preset* preset = find_preset(id);
    REQUIRE(preset);
    const Json arch = check_arch_round_trip({{"preset", id}}, "multimodal", preset->input["seq_len"].get<I>());
    CHECK(arch["text"]["family"] == "decoder");
    CHECK(arch["vision"]["pooling"] == "none");  // Gemma 3's tower: vision_use_head false
  }
}

/// Gemma 3 4B's echoed architecture (the fixture's).
Json gemma3_arch() {
  std::optional<Json> arch =
      hf::hf_config_architecture(testutil::read_fixture("mlx-community--gemma-3-4b-it-bf16.json"));
  REQUIRE(arch);
  return *arch;
}

TEST_CASE("vision forms: a multimodal wrapper's parts edit and fail by field", "[arch_vision]") {
  const Json base = gemma3_arch();
  const I hv = base["vision"]["hidden_size"], iv = base["vision"]["intermediate_size"];
  const I ht = base["text"]["hidden_size"], p = params(base);
  // The tower is held as parameters: one block more, SigLIP's pooling head, a wider image's positions.
  CHECK(params(with(base, "vision.num_hidden_layers", base["vision"]["num_hidden_layers"].get<I>() + 1)) - p ==
        block(hv, iv));
  CHECK(params(with(base, "vision.pooling", "attention_head")) - p ==
        hv + 4 * (hv * hv + hv) + 2 * hv + (hv * iv + iv) + (iv * hv + hv));
  // The projector: [vision hidden, text hidden] and the vision-width RMSNorm; the text model: 10 more rows.
  CHECK(params(with(base, "text.vocab_size", base["text"]["vocab_size"].get<I>() + 10)) - p == 10 * ht);
  // The soft tokens change no parameters; 64 per image (8 x 8 over 64 patches a side) is accepted.
  CHECK(params(with(base, "mm_tokens_per_image", 64)) == p);
  const std::string f = "model.architecture";
  check_error(with(base, "vision.patch_size", 1000), f + ".vision.patch_size", "larger than the image_size");
  check_error(with(base, "text.num_attention_heads", 7), f + ".text.num_key_value_heads", "divide");
  check_error(with(base, "text.family", "encoder"), f + ".text.family", "decoder");
  check_error(with(base, "text.mm_tokens_per_image", 4), f + ".text.mm_tokens_per_image", "expected one of");
  check_error(with(base, "vision.vocab_size", 4), f + ".vision.vocab_size", "expected one of");
  Json no_text = base;
  no_text.erase("text");
  check_error(no_text, f + ".text", "required object is missing");
  // The square's side must divide the patches a side (64): 9 x 9 does not.
  Json request = request_for({{"architecture", with(base, "mm_tokens_per_image", 81)}});
  CHECK(predict_err(request)["field"] == f + ".mm_tokens_per_image");
}

TEST_CASE("vision forms: Llama 4's wrapper round-trips, edits and fails by field", "[arch_vision]") {
  const Json vision = {{"hidden_size", 64},          {"num_hidden_layers", 2},     {"num_attention_heads", 4},
                       {"intermediate_size", 256},   {"image_size", 56},           {"patch_size", 14},
                       {"projector_input_dim", 128}, {"projector_output_dim", 96}, {"vision_output_dim", 80}};
  const Json text = {{"hidden_size", 256},       {"num_hidden_layers", 2},   {"num_attention_heads", 4},
                     {"num_key_value_heads", 2}, {"intermediate_size", 512}, {"vocab_size", 1000}};
  for (const char* text_type : {"llama4_text", "llama"}) {
    INFO(text_type);
    Json cfg = {{"model_type", "llama4"}, {"vision_config", vision}, {"text_config", text}};
    cfg["text_config"]["model_type"] = text_type;
    // A text_config of another model type is noted by the config's reading only.
    check_same_layers(cfg, "llama4_multimodal", 0, std::string(text_type) == "llama4_text");
    check_arch_round_trip({{"hf_config", cfg}}, "llama4_multimodal", 128);
  }
  Json cfg = {{"model_type", "llama4"}, {"vision_config", vision}, {"text_config", text}};
  cfg["text_config"]["model_type"] = "llama4_text";
  const Json base = *hf::hf_config_architecture(cfg);
  const I ht = 256, po = 96, p = params(base);
  CHECK(params(with(base, "vision.projector_output_dim", po + 1)) - p == (po + 1) * (po + 1) - po * po);
  CHECK(params(with(base, "vision.vision_output_dim", 81)) - p == ht);          // the projector's linear_1
  CHECK(params(with(base, "vision.projector_input_dim", 130)) - p == 2 * 256);  // the adapter's fc1
  CHECK(params(with(base, "vision.image_size", 70)) - p == (25 - 16) * 64);     // 5 x 5 patches against 4 x 4
  const std::string f = "model.architecture";
  check_error(with(base, "vision.num_attention_heads", 5), f + ".vision.num_attention_heads", "must divide");
  check_error(with(base, "vision.patch_size", 60), f + ".vision.patch_size", "larger than image_size");
  check_error(with(base, "vision.pooling", "none"), f + ".vision.pooling", "expected one of");
  Json missing = base;
  missing["vision"].erase("projector_input_dim");
  check_error(missing, f + ".vision.projector_input_dim", "required field is missing");
  check_error(with(base, "text.num_key_value_heads", 3), f + ".text.num_key_value_heads", "divide");
  check_error(with(base, "mm_tokens_per_image", 64), f + ".mm_tokens_per_image", "expected one of");
}

TEST_CASE("vision forms: every switch the rows read survives the echo", "[arch_vision]") {
  const Json clip = {{"model_type", "clip_vision_model"}, {"hidden_size", 64}, {"num_hidden_layers", 2},
                     {"num_attention_heads", 4},          {"image_size", 32},  {"patch_size", 8}};
  for (const Json& extra :
       {Json::object(), Json{{"architectures", {"CLIPVisionModel"}}},
        Json{{"architectures", {"CLIPVisionModelWithProjection"}}},
        Json{{"architectures", {"CLIPVisionModelWithProjection"}}, {"projection_dim", 40}},
        Json{{"hidden_act", "gelu"}, {"attention_dropout", 0.1}, {"num_channels", 1}, {"intermediate_size", 96}}}) {
    Json cfg = clip;
    cfg.update(extra);
    check_same_layers(cfg, "vision_tower", 0);
    check_same_layers(cfg, "vision_tower", 16);  // smaller images than the position table's
    Json siglip = cfg;
    siglip["model_type"] = "siglip_vision_model";
    check_same_layers(siglip, "vision_tower", 0);
    siglip["vision_use_head"] = false;
    check_same_layers(siglip, "vision_tower", 24);
  }
  const Json text = {{"hidden_size", 32},       {"num_hidden_layers", 2}, {"num_attention_heads", 2},
                     {"intermediate_size", 64}, {"vocab_size", 100},      {"max_position_embeddings", 16}};
  Json clip_pair = {{"model_type", "clip"}, {"vision_config", clip}, {"text_config", text}};
  check_same_layers(clip_pair, "two_towers", 0);
  check_same_layers(with(clip_pair, "projection_dim", 48), "two_towers", 16);
  Json vision = clip;
  vision["hidden_size"] = 32;
  vision["num_attention_heads"] = 2;
  vision["model_type"] = "siglip_vision_model";
  Json siglip_pair = {{"model_type", "siglip"}, {"vision_config", vision}, {"text_config", text}};
  check_same_layers(siglip_pair, "two_towers", 0);
  check_same_layers(with(siglip_pair, "text_config.hidden_act", "relu"), "two_towers", 24);
}

TEST_CASE("vision forms: a hand-written architecture takes the documented defaults", "[arch_vision]") {
  const Json minimal = {
      {"family", "vision_tower"}, {"hidden_size", 64}, {"num_hidden_layers", 2}, {"num_attention_heads", 4}};
  hf::Arch a = hf::arch_from_json(minimal, "model.architecture");
  CHECK(a.image_size == 224);
  CHECK(a.patch == 32);
  CHECK(a.inner == 256);
  CHECK(a.class_embedding);
  CHECK_FALSE(a.patch_bias);
  CHECK(a.pre_layernorm);
  CHECK(a.pooling == "class_token");
  CHECK(a.act == "quick_gelu");
  CHECK(a.projection_dim == 0);
  Network net = net_of_architecture(minimal);
  CHECK(net.input.kind == InputKind::Image);
  CHECK(net.input.image_size == 224);
  // The echo says every documented field, each default as the docs say it; the nested parts likewise.
  const Json pair = small_two_towers();
  for (const Json& given : {minimal, pair}) {
    const std::string family = given["family"];
    Json echoed = hf::arch_to_json(hf::arch_from_json(given, "model.architecture"));
    CHECK(echoed["family"] == family);
    std::vector<hf::ArchFieldDoc> docs = hf::arch_field_docs(family);
    for (auto& d : hf::arch_layer_field_docs(family)) docs.push_back(d);
    for (const auto& doc : docs) {
      INFO(family << "." << doc.key);
      const std::size_t dot = doc.key.find('.');
      const Json& holder = dot == std::string::npos ? echoed : echoed[doc.key.substr(0, dot)];
      const Json& source = dot == std::string::npos ? given : given[doc.key.substr(0, dot)];
      const std::string key = dot == std::string::npos ? doc.key : doc.key.substr(dot + 1);
      REQUIRE(holder.contains(key));
      if (source.contains(key) || doc.fallback == "required" || key == "name") continue;
      const Json& v = holder[key];
      if (doc.type == "integer" && doc.fallback.find_first_not_of("0123456789") == std::string::npos) {
        CHECK(v.get<I>() == std::stoll(doc.fallback));
      } else if (doc.type == "boolean" || doc.type == "number") {
        CHECK(v.dump() == doc.fallback);
      } else if (doc.type == "string") {
        CHECK(v.get<std::string>() == doc.fallback);
      }
    }
  }
}

TEST_CASE("vision forms: editing one field changes the parameters by its formula", "[arch_vision]") {
  SECTION("vision_tower") {
    const Json base = small_tower();
    const I h = 64, i = 128, p = params(base);
    CHECK(params(with(base, "num_hidden_layers", 3)) - p == block(h, i));
    // A class token and its position row.
    CHECK(params(with(base, "class_embedding", true)) - p == 2 * h);
    CHECK(p - params(with(base, "patch_bias", false)) == h);
    CHECK(params(with(base, "pre_layernorm", true)) - p == 2 * h);
    // SigLIP's head: the probe, a biased multi-head attention (q, k, v, o), its LayerNorm and MLP.
    CHECK(p - params(with(base, "pooling", "none")) == h + 4 * (h * h + h) + 2 * h + (h * i + i) + (i * h + h));
    CHECK(params(with(base, "projection_dim", 16)) - p == 16 * h);
    // 64-pixel images: 64 patch positions against 16.
    CHECK(params(with(base, "image_size", 64)) - p == (64 - 16) * h);
    // 16-pixel patches: 3 x 16 x 16 kernels per filter against 3 x 8 x 8, 4 positions against 16.
    CHECK(params(with(base, "patch_size", 16)) - p == 3 * (16 * 16 - 8 * 8) * h - (16 - 4) * h);
    CHECK(params(with(base, "num_channels", 1)) - p == -2 * 8 * 8 * h);
    CHECK(params(with(base, "intermediate_size", 96)) - p == -3 * 32 * (2 * h + 1));
  }
  SECTION("two_towers") {
    const Json base = small_two_towers();
    const I hv = 64, ht = 32, it = 64, proj = 24, p = params(base);
    // visual_projection and text_projection, no biases.
    CHECK(params(with(base, "projection_dim", 32)) - p == (32 - proj) * (hv + ht));
    // No projection: SigLIP's biased text head to the vision width instead.
    CHECK(params(with(base, "projection_dim", 0)) - p == (ht * hv + hv) - proj * (hv + ht));
    CHECK(params(with(base, "text.num_hidden_layers", 3)) - p == block(ht, it));
    CHECK(params(with(base, "text.max_position_embeddings", 26)) - p == 10 * ht);
    CHECK(params(with(base, "text.vocab_size", 110)) - p == 10 * ht);
    CHECK(params(with(base, "vision.num_hidden_layers", 3)) - p == block(hv, 128));
    // SigLIP's loss learns a bias beside the scale.
    CHECK(params(with(base, "loss", "sigmoid")) - p == 1);
    // The text mask costs no parameters but changes the attention's work.
    CHECK(params(with(base, "text.causal", false)) == p);
  }
}

TEST_CASE("vision forms: every bad field is named with what was expected", "[arch_vision]") {
  const std::string p = "model.architecture";
  const Json tower = small_tower(), pair = small_two_towers();
  REQUIRE_NOTHROW(hf::arch_from_json(tower, p));
  REQUIRE_NOTHROW(hf::arch_from_json(pair, p));
  check_error(with(tower, "num_attention_heads", 5), p + ".num_attention_heads", "must divide");
  check_error(with(tower, "patch_size", 48), p + ".patch_size", "larger than the image_size (32)");
  check_error(with(tower, "image_size", 0), p + ".image_size", "[1,");
  check_error(with(tower, "num_channels", 0), p + ".num_channels", "[1,");
  check_error(with(tower, "pooling", "mean"), p + ".pooling", "class_token, attention_head, none");
  check_error(with(tower, "pooling", "class_token"), p + ".pooling", "class_embedding is false");
  check_error(with(with(tower, "pooling", "none"), "projection_dim", 8), p + ".projection_dim", "pooling is \"none\"");
  check_error(with(tower, "projection_dim", -1), p + ".projection_dim", "[0,");
  check_error(with(tower, "hidden_act", "swoosh"), p + ".hidden_act", "unsupported activation");
  check_error(with(tower, "vision_use_head", false), p + ".vision_use_head", "expected one of");
  check_error(with(tower, "vocab_size", 100), p + ".vocab_size", "expected one of");
  check_error(with(tower, "family", "clip"), p + ".family", "vision_tower, two_towers");
  Json missing = tower;
  missing.erase("hidden_size");
  check_error(missing, p + ".hidden_size", "required field is missing");

  check_error(with(pair, "vision.patch_size", 48), p + ".vision.patch_size", "larger than the image_size (32)");
  check_error(with(pair, "vision.num_attention_heads", 6), p + ".vision.num_attention_heads", "must divide");
  check_error(with(pair, "vision.pooling", "none"), p + ".vision.pooling", "image embedding");
  check_error(with(pair, "vision.projection_dim", 8), p + ".vision.projection_dim", "expected one of");
  check_error(with(pair, "vision.class_embedding", 1), p + ".vision.class_embedding", "true or false");
  check_error(with(pair, "text.num_attention_heads", 3), p + ".text.num_attention_heads", "must divide");
  check_error(with(pair, "text.vocab_size", 0), p + ".text.vocab_size", "[1,");
  check_error(with(pair, "text.causal", "yes"), p + ".text.causal", "true or false");
  check_error(with(pair, "text.patch_size", 8), p + ".text.patch_size", "expected one of");
  check_error(with(pair, "loss", "hinge"), p + ".loss", "softmax, sigmoid");
  check_error(with(pair, "hidden_size", 64), p + ".hidden_size", "expected one of");
  check_error(with(pair, "text", 3), p + ".text", "object");
  Json no_text = pair;
  no_text.erase("text");
  check_error(no_text, p + ".text", "required object is missing");
  missing = pair;
  missing["text"].erase("vocab_size");
  check_error(missing, p + ".text.vocab_size", "required field is missing");

  // Through the request: images larger than the position table name the request's field; a nested bad field its
  // part; too deep to expand, the depth.
  Json request = request_for({{"architecture", tower}});
  request["training"]["image_size"] = 64;
  CHECK(predict_err(request)["field"] == "training.image_size");
  request = request_for({{"architecture", with(pair, "vision.num_attention_heads", 6)}});
  CHECK(predict_err(request)["field"] == "model.architecture.vision.num_attention_heads");
  Json deep = predict_err(request_for({{"architecture", with(tower, "num_hidden_layers", 5000)}}));
  CHECK(deep["field"] == "model.architecture.num_hidden_layers");
}
