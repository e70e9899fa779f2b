// The two-tower contrastive models (core/src/model/hf/two_towers.cpp, core/src/layers/contrastive.cpp):
// CLIPModel and SiglipModel with both towers and their loss. Every expected parameter count is written out below
// from the modules' __init__ in transformers' modeling_clip.py / modeling_siglip.py with the config classes'
// defaults, never from the code's output, and the formulas are checked against the counts MTEB's model metadata
// publishes (embeddings-benchmark/mteb ModelMeta.n_parameters). The training FLOPs per sample are checked against
// each tower's 6 N per token plus attention's scores, and the loss's share against the micro-batch.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/layer_list.hpp"

using namespace prenet;
using testutil::layer;

namespace {

Json fixture(const std::string& name) {
  std::ifstream file(std::string(PRENET_SOURCE_DIR) + "/tests/fixtures/hf/" + name + ".json");
  REQUIRE(file.good());
  std::stringstream text;
  text << file.rdbuf();
  return Json::parse(text.str());
}

Network build(const Json& config, std::vector<std::string>* warnings = nullptr, std::int64_t image_size = 0) {
  std::vector<std::string> local;
  Json model = hf_config_to_layers(config, "model.hf_config", 0, warnings ? *warnings : local, image_size);
  return parse_layer_list(model, "model.hf_config", {});
}

/// The field an InputError of building `config` names, "" when it builds.
std::string error_field(const Json& config) {
  try {
    build(config);
  } catch (const InputError& e) {
    return e.field();
  }
  return "";
}

bool mentions(const std::vector<std::string>& warnings, const std::string& text) {
  for (const auto& w : warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

double num(const Json& c, const char* key, double fallback) {
  auto it = c.find(key);
  return it == c.end() || it->is_null() ? fallback : it->get<double>();
}

double linear(double in, double out, bool bias) { return in * out + (bias ? out : 0); }

/// One tower's sizes, the config class's defaults filling what `c` leaves out.
struct Tower {
  double hidden, inner, layers, heads, vocab = 0, positions = 0, patch = 0, image = 0, channels = 3;
  double side() const { return std::floor(image / patch); }
};

Tower clip_vision(const Json& v) {  // CLIPVisionConfig
  return {num(v, "hidden_size", 768),
          num(v, "intermediate_size", 3072),
          num(v, "num_hidden_layers", 12),
          num(v, "num_attention_heads", 12),
          0,
          0,
          num(v, "patch_size", 32),
          num(v, "image_size", 224),
          num(v, "num_channels", 3)};
}
Tower clip_text(const Json& t) {  // CLIPTextConfig
  return {num(t, "hidden_size", 512),       num(t, "intermediate_size", 2048), num(t, "num_hidden_layers", 12),
          num(t, "num_attention_heads", 8), num(t, "vocab_size", 49408),       num(t, "max_position_embeddings", 77)};
}
Tower siglip_vision(const Json& v) {  // SiglipVisionConfig
  return {num(v, "hidden_size", 768),
          num(v, "intermediate_size", 3072),
          num(v, "num_hidden_layers", 12),
          num(v, "num_attention_heads", 12),
          0,
          0,
          num(v, "patch_size", 16),
          num(v, "image_size", 224),
          num(v, "num_channels", 3)};
}
Tower siglip_text(const Json& t) {  // SiglipTextConfig
  return {num(t, "hidden_size", 768),        num(t, "intermediate_size", 3072), num(t, "num_hidden_layers", 12),
          num(t, "num_attention_heads", 12), num(t, "vocab_size", 32000),       num(t, "max_position_embeddings", 64)};
}

/// CLIPEncoderLayer / SiglipEncoderLayer: layer_norm1, q/k/v/out_proj with biases, layer_norm2, fc1, fc2.
double encoder_layer(const Tower& w) {
  return 2 * w.hidden + 4 * linear(w.hidden, w.hidden, true) + 2 * w.hidden + linear(w.hidden, w.inner, true) +
         linear(w.inner, w.hidden, true);
}

/// SiglipMultiheadAttentionPoolingHead: probe, nn.MultiheadAttention (in_proj 3h x h + 3h, out_proj), LN, MLP.
double siglip_pool_head(const Tower& v) {
  return v.hidden + 3 * v.hidden * v.hidden + 3 * v.hidden + linear(v.hidden, v.hidden, true) + 2 * v.hidden +
         linear(v.hidden, v.inner, true) + linear(v.inner, v.hidden, true);
}

/// CLIPModel: CLIPVisionTransformer (unbiased patch conv, class_embedding, patches + 1 positions, pre_layrnorm,
/// encoder, post_layernorm), CLIPTextTransformer (token and position tables, encoder, final_layer_norm),
/// visual_projection and text_projection (no bias) to projection_dim, logit_scale.
double clip_parameters(const Json& c) {
  const Tower v = clip_vision(c.value("vision_config", Json::object()));
  const Tower t = clip_text(c.value("text_config", Json::object()));
  const double proj = num(c, "projection_dim", 512);
  const double vision = v.channels * v.patch * v.patch * v.hidden + v.hidden + (v.side() * v.side() + 1) * v.hidden +
                        2 * v.hidden + v.layers * encoder_layer(v) + 2 * v.hidden;
  const double text = (t.vocab + t.positions) * t.hidden + t.layers * encoder_layer(t) + 2 * t.hidden;
  return vision + text + v.hidden * proj + t.hidden * proj + 1;
}

/// SiglipModel: SiglipVisionTransformer (biased patch conv, patches positions, encoder, post_layernorm, pooling
/// head), SiglipTextTransformer (tables, encoder, final_layer_norm, head Linear(h, projection_size = h)),
/// logit_scale and logit_bias.
double siglip_parameters(const Json& c) {
  const Tower v = siglip_vision(c.value("vision_config", Json::object()));
  const Json tc = c.value("text_config", Json::object());
  const Tower t = siglip_text(tc);
  const double vision = linear(v.channels * v.patch * v.patch, v.hidden, true) + v.side() * v.side() * v.hidden +
                        v.layers * encoder_layer(v) + 2 * v.hidden + siglip_pool_head(v);
  const double text = (t.vocab + t.positions) * t.hidden + t.layers * encoder_layer(t) + 2 * t.hidden +
                      linear(t.hidden, num(tc, "projection_size", t.hidden), true);
  return vision + text + 2;
}

/// Training matrix FLOPs per token of a tower's encoder layer: 6 x (Q, K, V, O and the MLP's weights), plus the
/// eager attention's scores and P V over every key (2 x 2 s h forward, twice that backward).
double layer_flops_per_token(const Tower& w, double tokens) {
  return 6 * (4 * w.hidden * w.hidden + 2 * w.hidden * w.inner) + 12 * tokens * w.hidden;
}

/// The matrix FLOPs (forward and backward) per sample of a network over a batch of `b`.
double matmul_per_sample(const Network& net, std::int64_t b) {
  const StepWork w = step_work(net, b, KernelContext(Precision::FP32), Optimizer::Adam);
  return (testutil::matmul_flops(w, Phase::Forward) + testutil::matmul_flops(w, Phase::Backward)) / testutil::d(b);
}

}  // namespace

TEST_CASE("clip: openai/clip-vit-base-patch32 builds CLIPModel's 151,277,313 parameters, both towers and the loss",
          "[hf_config][two_towers]") {
  const Json cfg = fixture("onnx-community--clip-vit-base-patch32_hidden-states");
  CHECK(clip_parameters(cfg) == 151277313);  // MTEB ModelMeta openai/clip-vit-base-patch32: n_parameters
  std::vector<std::string> warnings;
  const Network net = build(cfg, &warnings);
  CHECK(testutil::d(net.parameters()) == clip_parameters(cfg));
  CHECK(net.input.image_size == 224);
  // The vision tower over the image, the text tower over 77 tokens, causal; both projected to 512.
  CHECK(layer(net, "patch_embedding").inputs == std::vector<int>{kNetworkInput});
  CHECK_FALSE(layer(net, "layers.11.self_attn").attrs.causal);
  CHECK(layer(net, "layers.11.self_attn").input_shapes[0] == Shape{50, 768});
  CHECK(layer(net, "text_layers.11.self_attn").attrs.causal);
  CHECK(layer(net, "text_layers.11.self_attn").input_shapes[0] == Shape{77, 512});
  CHECK(layer(net, "text_token_embedding").parameters == 49408 * 512);
  CHECK(layer(net, "text_position_embedding").parameters == 77 * 512);
  CHECK(layer(net, "visual_projection").parameters == 768 * 512);
  CHECK(layer(net, "text_projection").parameters == 512 * 512);
  const Layer& loss = layer(net, "loss");
  CHECK(loss.type == LayerType::ContrastiveLoss);
  CHECK(loss.attrs.loss == "softmax");
  CHECK(loss.parameters == 1);  // logit_scale
  CHECK(loss.input_shapes == std::vector<Shape>{{512}, {512}});
  CHECK(mentions(warnings, "reads 77 tokens per image"));
  CHECK(mentions(warnings, "micro-batch"));

  // openai/clip-vit-large-patch14's sizes (its config.json), 427,616,513 in MTEB's ModelMeta.
  Json large = {{"model_type", "clip"},
                {"projection_dim", 768},
                {"text_config", {{"hidden_size", 768}, {"intermediate_size", 3072}, {"num_attention_heads", 12}}},
                {"vision_config",
                 {{"hidden_size", 1024},
                  {"intermediate_size", 4096},
                  {"num_attention_heads", 16},
                  {"num_hidden_layers", 24},
                  {"patch_size", 14}}}};
  CHECK(clip_parameters(large) == 427616513);
  CHECK(testutil::d(build(large).parameters()) == clip_parameters(large));
}

TEST_CASE("siglip: google/siglip-so400m-patch14-384 builds SiglipModel's 877,960,498 parameters",
          "[hf_config][two_towers]") {
  const Json cfg = fixture("google--siglip-so400m-patch14-384");
  CHECK(siglip_parameters(cfg) == 877960498);  // MTEB ModelMeta google/siglip-so400m-patch14-384: n_parameters
  std::vector<std::string> warnings;
  const Network net = build(cfg, &warnings);
  CHECK(testutil::d(net.parameters()) == siglip_parameters(cfg));
  CHECK(net.input.image_size == 384);
  CHECK(layer(net, "layers.26.self_attn").input_shapes[0] == Shape{729, 1152});
  CHECK(layer(net, "head_attention").input_shapes[1] == Shape{729, 1152});
  CHECK_FALSE(layer(net, "text_layers.26.self_attn").attrs.causal);  // SigLIP's text tower has no mask
  CHECK(layer(net, "text_layers.26.self_attn").input_shapes[0] == Shape{64, 1152});
  CHECK(layer(net, "text_head").parameters == 1152 * 1152 + 1152);
  const Layer& loss = layer(net, "loss");
  CHECK(loss.attrs.loss == "sigmoid");
  CHECK(loss.parameters == 2);  // logit_scale, logit_bias
  CHECK(mentions(warnings, "reads 64 tokens per image"));

  // SiglipConfig() itself is google/siglip-base-patch16-224: 203,155,970 in MTEB's ModelMeta.
  const Json base = {{"model_type", "siglip"}, {"text_config", Json::object()}, {"vision_config", Json::object()}};
  CHECK(siglip_parameters(base) == 203155970);
  CHECK(testutil::d(build(base).parameters()) == siglip_parameters(base));
  // google/siglip-so400m-patch14-224: 16 x 16 patches and 16 text positions, 877,360,306 in MTEB's ModelMeta.
  Json small = cfg;
  small["vision_config"]["image_size"] = 224;
  small["text_config"]["max_position_embeddings"] = 16;
  CHECK(siglip_parameters(small) == 877360306);
  CHECK(testutil::d(build(small).parameters()) == siglip_parameters(small));
}

TEST_CASE("two towers: training FLOPs per sample are each tower's 6 N per token plus attention, and the loss's 6 B P",
          "[hf_config][two_towers]") {
  // Per sample, at FP32 with eager attention: each encoder layer's weights 6x per token and its scores and P V
  // 12 s h per token; the patch convolution 4x per patch (forward and the filter gradient: the image needs no
  // gradient); the pooled vectors' projections 6x once; the loss's similarity GEMM 2 B P forward and 4 B P
  // backward. Every other kernel is memory-bound.
  const Json clip_cfg = fixture("onnx-community--clip-vit-base-patch32_hidden-states");
  const Tower cv = clip_vision(clip_cfg["vision_config"]), ct = clip_text(clip_cfg["text_config"]);
  const double cp = 512, c_patches = cv.side() * cv.side();
  const double clip_towers = 4 * c_patches * 3 * cv.patch * cv.patch * cv.hidden +
                             cv.layers * (c_patches + 1) * layer_flops_per_token(cv, c_patches + 1) +
                             ct.layers * ct.positions * layer_flops_per_token(ct, ct.positions) +
                             6 * (cv.hidden + ct.hidden) * cp;
  const Network clip = build(clip_cfg);

  const Json siglip_cfg = fixture("google--siglip-so400m-patch14-384");
  const Tower sv = siglip_vision(siglip_cfg["vision_config"]), st = siglip_text(siglip_cfg["text_config"]);
  const double s_patches = sv.side() * sv.side(), h = sv.hidden;
  // The pooling head: the probe's Q and the output projection once, K and V over the patches, one query's scores
  // and P V against them, its MLP once.
  const double pool = 6 * 2 * h * h + 6 * 2 * h * h * s_patches + 12 * s_patches * h + 6 * 2 * h * sv.inner;
  const double siglip_towers = 4 * s_patches * 3 * sv.patch * sv.patch * h +
                               sv.layers * s_patches * layer_flops_per_token(sv, s_patches) + pool +
                               st.layers * st.positions * layer_flops_per_token(st, st.positions) + 6 * st.hidden * h;
  const Network siglip = build(siglip_cfg);

  for (std::int64_t b : {4, 64}) {
    INFO("micro-batch " << b);
    CHECK(matmul_per_sample(clip, b) == Approx(clip_towers + 6 * testutil::d(b) * cp).epsilon(1e-9));
    CHECK(matmul_per_sample(siglip, b) == Approx(siglip_towers + 6 * testutil::d(b) * h).epsilon(1e-9));
  }
  // The loss is tiny against the towers at any practical micro-batch: under 0.1% at 256 pairs per GPU.
  CHECK(6 * 256 * cp / clip_towers < 1e-3);
  CHECK(6 * 256 * h / siglip_towers < 1e-3);
}

TEST_CASE("contrastive_loss: its work is the micro-batch's B x B scores, from the request's batch",
          "[layer_list][two_towers]") {
  auto model = [](const std::string& loss_fields) {
    return R"({"input": {"kind": "vector", "features": 64}, "layers": [
      {"type": "dense", "name": "image", "units": 32, "inputs": ["input"]},
      {"type": "dense", "name": "text", "units": 32, "inputs": ["input"]},
      {"type": "contrastive_loss", "name": "loss", "inputs": ["image", "text"])" +
           loss_fields + "}]}";
  };
  const Network softmax = testutil::net_of(model(""));
  const Network sigmoid = testutil::net_of(model(R"(, "loss": "sigmoid")"));
  CHECK(softmax.layers[2].parameters == 1);
  CHECK(sigmoid.layers[2].parameters == 2);
  for (const Network* net : {&softmax, &sigmoid}) {
    for (double b : {8.0, 32.0}) {
      const StepWork w = step_work(*net, static_cast<std::int64_t>(b), KernelContext(Precision::BF16), Optimizer::Adam);
      CHECK(testutil::matmul_flops(w, 2, Phase::Forward) == 2 * b * b * 32);   // texts @ images.t()
      CHECK(testutil::matmul_flops(w, 2, Phase::Backward) == 4 * b * b * 32);  // both embeddings' gradients
      CHECK(w.layers[2].saved_activation_bytes > b * b * 2);                   // at least the scores
    }
  }
  // A loss function other than the two, one input, or embeddings of different widths or more than one vector.
  testutil::require_model_error(model(R"(, "loss": "cosine")"), "model.layers[2].loss", "sigmoid");
  testutil::require_model_error(
      R"({"input": {"kind": "vector", "features": 8}, "layers": [{"type": "contrastive_loss"}]})",
      "model.layers[0].inputs", "two inputs");
  testutil::require_model_error(R"({"input": {"kind": "vector", "features": 8}, "layers": [
      {"type": "dense", "name": "a", "units": 4}, {"type": "dense", "name": "b", "units": 6, "inputs": ["input"]},
      {"type": "contrastive_loss", "inputs": ["a", "b"]}]})",
                                "model.layers[2].inputs", "same width");
  testutil::require_model_error(R"({"input": {"kind": "sequence", "seq_len": 3, "features": 8}, "layers": [
      {"type": "contrastive_loss", "inputs": ["input", "input"]}]})",
                                "model.layers[0].inputs", "one embedding");
}

TEST_CASE("two towers: bad nested configs name their field", "[hf_config][two_towers]") {
  const Json clip = fixture("onnx-community--clip-vit-base-patch32_hidden-states");
  const Json siglip = fixture("google--siglip-so400m-patch14-384");
  Json c = clip;
  c.erase("vision_config");
  CHECK(error_field(c) == "model.hf_config.vision_config");
  c = clip;
  c.erase("text_config");
  CHECK(error_field(c) == "model.hf_config.text_config");
  c = clip;
  c["vision_config"] = "clip";
  CHECK(error_field(c) == "model.hf_config.vision_config");
  c = clip;
  c["text_config"]["num_attention_heads"] = 7;  // 512 is not a multiple of 7
  CHECK(error_field(c) == "model.hf_config.text_config.num_attention_heads");
  c = clip;
  c["vision_config"]["num_attention_heads"] = 7;
  CHECK(error_field(c) == "model.hf_config.vision_config.num_attention_heads");
  c = clip;
  c["text_config"]["hidden_size"] = 0;
  CHECK(error_field(c) == "model.hf_config.text_config.hidden_size");
  c = clip;
  c["text_config"]["max_position_embeddings"] = -1;
  CHECK(error_field(c) == "model.hf_config.text_config.max_position_embeddings");
  c = clip;
  c["vision_config"]["num_hidden_layers"] = 100000;
  CHECK(error_field(c) == "model.hf_config.vision_config.num_hidden_layers");
  c = clip;
  c["vision_config"]["patch_size"] = 512;  // larger than the 224-pixel image
  CHECK(error_field(c) == "model.hf_config.vision_config.patch_size");
  c = clip;
  c["projection_dim"] = 0;
  CHECK(error_field(c) == "model.hf_config.projection_dim");
  c = clip;
  c["text_config"]["model_type"] = "bert";
  CHECK(error_field(c) == "model.hf_config.text_config.model_type");
  c = clip;
  c["vision_config"]["model_type"] = "siglip_vision_model";  // CLIPModel builds CLIP's tower
  CHECK(error_field(c) == "model.hf_config.vision_config.model_type");
  Json s = siglip;
  s["vision_config"]["vision_use_head"] = false;  // SiglipModel's image embedding is the head's output
  CHECK(error_field(s) == "model.hf_config.vision_config.vision_use_head");
  s = siglip;
  s["text_config"]["projection_size"] = 768;  // scored against the 1152-wide image embedding
  CHECK(error_field(s) == "model.hf_config.text_config.projection_size");
  s = siglip;
  s["text_config"]["hidden_size"] = 1024;  // 1024 = 16 x 64 heads, but not the image embedding's width
  CHECK(error_field(s) == "model.hf_config.text_config.hidden_size");
  s = siglip;
  s["text_config"]["hidden_act"] = "no_such_function";
  CHECK(error_field(s) == "model.hf_config.text_config.hidden_act");
}

TEST_CASE("two towers: the vision tower alone still reads, training.image_size shrinks the image, and requests run",
          "[hf_config][two_towers]") {
  const Json clip = fixture("onnx-community--clip-vit-base-patch32_hidden-states");
  const Json siglip = fixture("google--siglip-so400m-patch14-384");
  // CLIPVisionModel / SiglipVisionModel from the same vision_config: the vision parts of the formulas above.
  Json tower = clip["vision_config"];
  tower["model_type"] = "clip_vision_model";
  const Tower cv = clip_vision(tower);
  CHECK(testutil::d(build(tower).parameters()) ==
        3 * 32 * 32 * cv.hidden + cv.hidden + 50 * cv.hidden + 2 * cv.hidden + 12 * encoder_layer(cv) + 2 * cv.hidden);
  tower = siglip["vision_config"];
  const Tower sv = siglip_vision(tower);
  CHECK(testutil::d(build(tower).parameters()) == linear(3 * 14 * 14, sv.hidden, true) + 729 * sv.hidden +
                                                      27 * encoder_layer(sv) + 2 * sv.hidden + siglip_pool_head(sv));

  // A smaller image: fewer patches (the position table stays the config's), the same parameters.
  const Network small = build(clip, nullptr, 160);
  CHECK(small.input.image_size == 160);
  CHECK(layer(small, "layers.0.self_attn").input_shapes[0] == Shape{26, 768});  // 5 x 5 patches + the class token
  CHECK(small.parameters() == build(clip).parameters());
  std::vector<std::string> w;
  CHECK_THROWS_WITH(build(clip, &w, 448), Catch::Contains("training.image_size"));

  // training.seq_len is not the caption's length: said by the request path.
  TrainingConfig training;
  training.seq_len = 32;
  const Network resolved = resolve_model({{"hf_config", clip}}, training);
  CHECK(mentions(resolved.warnings, "training.seq_len ignored"));
  CHECK(layer(resolved, "text_layers.0.self_attn").input_shapes[0] == Shape{77, 512});

  // Whole requests: one GPU, data and tensor parallelism, a pipeline of two stages.
  for (const Json& cfg : {clip, siglip}) {
    for (const Json& parallel : {Json(nullptr), Json{{"data", 4}}, Json{{"tensor", 2}}, Json{{"pipeline", 2}}}) {
      Json request = {{"model", {{"hf_config", cfg}}},
                      {"training", {{"batch_size", 64}, {"precision", "bf16"}}},
                      {"options", {{"per_layer", false}}}};
      if (!parallel.is_null()) request["parallel"] = parallel;
      Json response = Json::parse(predict_json(request.dump()));
      INFO(cfg["model_type"].get<std::string>() << " " << parallel.dump() << ": " << response.dump().substr(0, 600));
      CHECK_FALSE(response.contains("error"));
    }
  }
}
