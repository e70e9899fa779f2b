// Built-in presets: each resolves, matches its published parameter count, and does the published amount
// of work per step (FLOPs written out from the architectures and PREDICTION.md's formulas).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "helpers.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"

using namespace prenet;
using testutil::matmul_flops;

namespace {

Network preset(const std::string& id, TrainingConfig training = {}) {
  return resolve_model({{"preset", id}}, training);
}

TrainingConfig with_seq(std::int64_t seq) {
  TrainingConfig t;
  t.seq_len = seq;
  return t;
}

TrainingConfig with_image(std::int64_t size) {
  TrainingConfig t;
  t.image_size = size;
  return t;
}

double forward_matmul_per_sample(const Network& net) {
  StepWork w = step_work(net, 1, Precision::FP32, Optimizer::Adam);
  return matmul_flops(w, Phase::Forward);
}

}  // namespace

TEST_CASE("the six presets are present and each resolves", "[presets]") {
  const auto& list = presets();
  REQUIRE(list.size() == 6);
  for (const char* id : {"bert-base", "bert-large", "gpt2", "gpt2-large", "resnet50", "vgg16"}) {
    INFO(id);
    const Preset* p = find_preset(id);
    REQUIRE(p != nullptr);
    CHECK(p->id == id);
    CHECK_FALSE(p->name.empty());
    CHECK_FALSE(p->family.empty());
    CHECK_FALSE(p->source.empty());
    CHECK(p->published_parameters > 0);
  }
  CHECK(find_preset("gpt3") == nullptr);
  CHECK(find_preset("") == nullptr);

  for (const auto& p : list) {
    INFO(p.id);
    Network net = preset(p.id);
    CHECK(net.name == p.id);
    CHECK(net.parameters() > 0);
    CHECK(net.warnings.empty());
    // Within 1.5% of the published count.
    double rel = std::fabs(static_cast<double>(net.parameters()) - p.published_parameters) / p.published_parameters;
    CHECK(rel <= 0.015);
    // The API accepts it too, and the catalogue reports the same count.
    Json response = Json::parse(predict_json(Json({{"model", {{"preset", p.id}}}, {"training", {{"batch_size", 2}}},
                                                   {"options", {{"per_layer", false}}}})
                                                 .dump()));
    INFO(response.dump().substr(0, 400));
    REQUIRE_FALSE(response.contains("error"));
    CHECK(response["model"]["parameters"] == net.parameters());
    CHECK(response["model"]["source"] == "preset");
    CHECK(response["model"]["name"] == p.id);
    CHECK(response["results"][0]["step_ms"].get<double>() > 0);
  }
}

TEST_CASE("preset parameter counts that are published exactly match exactly", "[presets]") {
  CHECK(preset("vgg16").parameters() == 138357544);
  CHECK(preset("resnet50").parameters() == 25557032);
  CHECK(preset("gpt2").parameters() == 124439808);
  CHECK(preset("gpt2-large").parameters() == 774030080);
  // BertForMaskedLM: bert-base 109,514,298 and bert-large 335,174,458 (the papers round to 110M / 340M).
  CHECK(preset("bert-base").parameters() == 109514298);
  CHECK(preset("bert-large").parameters() == 335174458);
  // Sequence length and image size do not change parameter counts.
  CHECK(preset("gpt2", with_seq(128)).parameters() == 124439808);
  CHECK(preset("resnet50", with_image(160)).parameters() == 25557032);
}

TEST_CASE("gpt2 at seq 128: matmul FLOPs per step = 6 N tokens + 12 L h s tokens", "[presets][flops]") {
  const double V = 50257, h = 768, L = 12, s = 128, batch = 8;
  Network net = preset("gpt2", with_seq(128));
  CHECK(net.input.seq_len == 128);
  StepWork w = step_work(net, 8, Precision::FP32, Optimizer::Adam);
  const double tokens = batch * s;
  const double matmul = matmul_flops(w, Phase::Forward) + matmul_flops(w, Phase::Backward);

  // The rule of thumb with N = all parameters.
  const double N = 124439808;
  CHECK(matmul == Approx(6 * N * tokens).epsilon(0.10));

  // Exactly: every weight matrix (12 h^2 per block, and the tied V x h LM head) costs 2 FLOPs per token
  // forward and 4 backward; the attention scores and P V add 4 L h s forward and 8 L h s backward.
  // The embedding lookups are not matmuls and the first trainable layer (wte) has no matrix gradient.
  const double n_matmul = L * 12 * h * h + V * h;
  CHECK(matmul == Approx((6 * n_matmul + 12 * L * h * s) * tokens).epsilon(1e-9));
  CHECK(matmul_flops(w, Phase::Backward) == Approx(2 * matmul_flops(w, Phase::Forward)).epsilon(1e-9));

  // Forward per sequence = L (24 s h^2 + 4 s^2 h) + 2 s h V (PREDICTION.md).
  CHECK(matmul_flops(w, Phase::Forward) / batch == Approx(L * (24 * s * h * h + 4 * s * s * h) + 2 * s * h * V));
}

TEST_CASE("bert-base forward FLOPs follow 24 b s h^2 + 4 b s^2 h per layer", "[presets][flops]") {
  const double V = 30522, h = 768, L = 12, s = 128;
  Network net = preset("bert-base");
  CHECK(net.input.seq_len == 128);  // the preset's default
  // Encoder layers, the MLM transform (2 s h^2) and the tied decoder (2 s h V).
  const double expected = L * (24 * s * h * h + 4 * s * s * h) + 2 * s * h * h + 2 * s * h * V;
  CHECK(forward_matmul_per_sample(net) == Approx(expected).epsilon(1e-9));
}

TEST_CASE("resnet50 forward is about 4.1 GMACs (8.2 GFLOP) per 224 image", "[presets][flops]") {
  Network net = preset("resnet50");
  CHECK(net.input.image_size == 224);
  CHECK(net.layers.back().output_shape.size() <= 1);
  const double fwd = forward_matmul_per_sample(net);
  CHECK(fwd == Approx(8.2e9).epsilon(0.05));
  // torchvision resnet50 (v1.5): 4.09 GMACs counting convolutions and the classifier.
  CHECK(fwd == Approx(2 * 4.09e9).epsilon(0.005));
  // All work (including elementwise) stays close: matmuls dominate a CNN.
  StepWork w = step_work(net, 1, Precision::FP32, Optimizer::Adam);
  CHECK(w.flops[0] >= fwd);
  CHECK(w.flops[0] <= 1.05 * fwd);
  // Doubling the image side quadruples the convolution work (within padding effects).
  CHECK(forward_matmul_per_sample(preset("resnet50", with_image(448))) == Approx(4 * fwd).epsilon(0.02));
}

TEST_CASE("vgg16 forward is 15.47 GMACs (31 GFLOP) per 224 image", "[presets][flops]") {
  Network net = preset("vgg16");
  const double fwd = forward_matmul_per_sample(net);
  CHECK(fwd == Approx(31e9).epsilon(0.05));
  // Written out: 3x3 convolutions, MACs = H W 9 Cin Cout at each resolution, then the classifier.
  const double conv = 224.0 * 224 * 9 * (3 * 64 + 64 * 64) + 112.0 * 112 * 9 * (64 * 128 + 128 * 128) +
                      56.0 * 56 * 9 * (128 * 256 + 2 * 256 * 256) + 28.0 * 28 * 9 * (256 * 512 + 2 * 512 * 512) +
                      14.0 * 14 * 9 * (3 * 512 * 512);
  const double fc = 25088.0 * 4096 + 4096.0 * 4096 + 4096.0 * 1000;
  CHECK(conv + fc == Approx(15470264320.0));
  CHECK(fwd == Approx(2 * (conv + fc)).epsilon(1e-9));
  // The first convolution needs no input gradient, every other matmul layer does.
  StepWork w = step_work(net, 1, Precision::FP32, Optimizer::Adam);
  const double first = 2.0 * 224 * 224 * 9 * 3 * 64;
  CHECK(matmul_flops(w, Phase::Backward) == Approx(2 * fwd - first).epsilon(1e-9));
}

TEST_CASE("preset overrides: sequence length and image size", "[presets]") {
  CHECK(preset("gpt2").input.seq_len == 1024);
  CHECK(preset("gpt2", with_seq(64)).input.seq_len == 64);
  CHECK(preset("bert-large", with_seq(256)).input.seq_len == 256);
  CHECK(preset("vgg16", with_image(64)).input.image_size == 64);
  testutil::require_input_error([] { preset("gpt2", with_seq(4096)); }, "training.seq_len", "1024");
  testutil::require_input_error([] { preset("bert-base", with_seq(1024)); }, "training.seq_len", "512");
  testutil::require_input_error([] { resolve_model({{"preset", "gpt-5"}}, TrainingConfig{}); }, "model.preset",
                                "unknown preset \"gpt-5\"; expected one of");
  testutil::require_input_error([] { resolve_model({{"preset", "gpt2"}, {"layers", Json::array()}}, TrainingConfig{}); },
                                "model", "exactly one of preset, hf_config or layers");
  // A name labels the network.
  CHECK(resolve_model({{"preset", "gpt2"}, {"name", "mine"}}, with_seq(32)).name == "mine");
}

// Regression test (fixed): an image-size override too small for a preset fails inside the preset's own layer list and the
// error names "presets.vgg16.layers[9].pool_size", a path that is not in the request (API.md: the field
// is a dotted path into the request). The user's input at fault is training.image_size.
TEST_CASE("an override too small for a preset names training.image_size", "[presets][errors]") {
  Json response = Json::parse(predict_json(R"J({"model": {"preset": "vgg16"}, "training": {"image_size": 16}})J"));
  INFO(response.dump());
  REQUIRE(response.contains("error"));
  CHECK(response["error"]["field"] == "training.image_size");
}
