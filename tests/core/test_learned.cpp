// The learned-prediction path of the core: the rows it asks the models to time, and how it turns
// their outputs back into a response. ONNX Runtime is not here; outputs are supplied directly.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/hardware.hpp"
#include "prenet/json_util.hpp"
#include "prenet/learned.hpp"

using prenet::Json;

namespace {

const char* kRequest = R"J({"model": {"preset": "bert-base"}, "training": {"batch_size": 16, "seq_len": 128},
  "hardware": ["v100-sxm2-32gb", "a100-sxm4-80gb", "h100-sxm"], "options": {"per_layer": false}})J";
// The same on accelerators whose chip no training GPU shares: no measured level moves their kernels.
const char* kUnmeasuredRequest = R"J({"model": {"preset": "bert-base"}, "training": {"batch_size": 16,
  "seq_len": 128}, "hardware": ["h100-sxm", "l4", "mi300x"], "options": {"per_layer": false}})J";

/// Each class's outputs for prepared session `plan`, row r of class c from `value(session, class, row)`.
template <typename F>
std::vector<std::vector<float>> learned_outputs(const Json& plan, F value) {
  const auto session = plan["session"].get<std::uint32_t>();
  std::vector<std::vector<float>> outputs;
  for (std::size_t c = 0; c < plan["classes"].size(); ++c) {
    auto rows = plan["classes"][c]["rows"].get<std::size_t>();
    auto width = plan["classes"][c]["width"].get<std::size_t>();
    REQUIRE(prenet::learned_features(session, c).size() == rows * width);
    std::vector<float> y(rows);
    for (std::size_t r = 0; r < rows; ++r) y[r] = value(session, c, r);
    outputs.push_back(y);
  }
  return outputs;
}

/// Runs prepare, then finish with each row's output from `value(session, class, row)`.
template <typename F>
Json run_learned(const std::string& request, F value) {
  Json plan = Json::parse(prenet::learned_prepare(request));
  REQUIRE_FALSE(plan.contains("error"));
  std::vector<std::vector<float>> outputs = learned_outputs(plan, value);
  return Json::parse(prenet::learned_finish(plan["session"].get<std::uint32_t>(), outputs));
}

/// The output that makes class `c`'s row `r` of `session` take `scale` x its roofline time, whatever the
/// class's target.
float output_for_roofline(std::uint32_t session, std::size_t c, std::size_t r, double scale) {
  const auto& cls = prenet::learned_manifest().classes.at(c);
  if (cls.predicts_ratio) return static_cast<float>(std::log(scale));
  const double ms = scale * prenet::learned_roofline_ms(session, c).at(r);
  return static_cast<float>(std::log(testutil::harness_measured_ms(ms, cls.dataset)));
}

}  // namespace

TEST_CASE("the compiled-in manifest serves every kernel class with the core's own feature order", "[learned]") {
  const auto& m = prenet::learned_manifest();
  REQUIRE_FALSE(m.classes.empty());
  for (auto c : {prenet::KernelClass::Gemm, prenet::KernelClass::BatchedGemm, prenet::KernelClass::Conv,
                 prenet::KernelClass::Elementwise, prenet::KernelClass::Normalization, prenet::KernelClass::Softmax,
                 prenet::KernelClass::Recurrent, prenet::KernelClass::Embedding, prenet::KernelClass::Optimizer}) {
    INFO(prenet::to_string(c));
    CHECK(prenet::learned_class_for(c) >= 0);
  }
  for (const auto& c : m.classes) {
    CHECK(c.q10 < 0);
    CHECK(c.q90 > 0);
  }
}

TEST_CASE("a kernel's time is the model's (ratio x roofline, or log time), never below the physical floor",
          "[learned]") {
  prenet::LearnedClass time_model, ratio_model;
  time_model.predicts_ratio = false;
  ratio_model.predicts_ratio = true;
  CHECK(prenet::learned_kernel_ms(time_model, static_cast<float>(std::log(3.0)), 4.0, 1.0) ==
        Approx(3.0).epsilon(1e-6));
  CHECK(prenet::learned_kernel_ms(time_model, static_cast<float>(std::log(1.0)), 4.0, 2.5) ==
        Approx(2.5).epsilon(1e-6));
  CHECK(prenet::learned_kernel_ms(ratio_model, static_cast<float>(std::log(3.0)), 4.0, 1.0) ==
        Approx(12.0).epsilon(1e-6));
  // The ceiling: never slower than the largest measured / roofline ratio of the class.
  ratio_model.ceiling_ratio = 2.0;
  CHECK(prenet::learned_kernel_ms(ratio_model, static_cast<float>(std::log(3.0)), 4.0, 1.0) ==
        Approx(8.0).epsilon(1e-6));
  time_model.ceiling_ratio = 2.0;
  CHECK(prenet::learned_kernel_ms(time_model, static_cast<float>(std::log(100.0)), 4.0, 1.0) ==
        Approx(8.0).epsilon(1e-6));
  // If floor and ceiling cross (a ratio below one cannot come from a manifest), the physical floor wins.
  CHECK(prenet::bounded_kernel_ms(5.0, 3.0, 2.0) == 3.0);
  CHECK(prenet::bounded_kernel_ms(2.5, 1.0, 4.0) == 2.5);
}

TEST_CASE("free inputs are held to the training range, growing ones are not", "[learned]") {
  const auto names = prenet::feature_names(prenet::FeatureSet::Monotone);
  const auto grows = prenet::size_monotone_features(prenet::FeatureSet::Monotone);
  auto at = [&](const char* name) {
    return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  const std::size_t compute = at("log2_compute_us"), stride = at("stride"), bytes = at("log2_element_bytes");
  REQUIRE(compute < names.size());
  REQUIRE(grows[compute] == 1);
  REQUIRE(grows[stride] == 0);
  std::vector<std::array<double, 2>> bounds(names.size(), {0.0, 10.0});
  bounds[stride] = {1.0, 2.0};
  bounds[bytes] = {1.0, 2.0};
  const prenet::FeatureRange range = prenet::make_feature_range(prenet::FeatureSet::Monotone, bounds);

  std::vector<double> row(names.size(), 5.0);
  row[stride] = 16.0;  // ViT's patch embedding
  row[bytes] = 0.0;    // FP8
  row[compute] = 30.0;
  prenet::fit_to_range(range, row);
  CHECK(row[stride] == 2.0);
  CHECK(row[bytes] == 1.0);
  CHECK(row[compute] == 30.0);  // a larger kernel keeps growing through its size terms
  row[stride] = 0.5;
  prenet::fit_to_range(range, row);
  CHECK(row[stride] == 1.0);

  CHECK_THROWS_AS(prenet::make_feature_range(prenet::FeatureSet::Monotone, {{0.0, 1.0}}), std::invalid_argument);
  CHECK_THROWS_AS(prenet::make_feature_range(
                      prenet::FeatureSet::Roofline,
                      std::vector<std::array<double, 2>>(prenet::feature_names(prenet::FeatureSet::Roofline).size())),
                  std::invalid_argument);
}

TEST_CASE("TPUs and Gaudi parts are timed by the roofline inside a learned response, and say so", "[learned]") {
  for (const char* id : {"tpu-v4", "tpu-v5e", "tpu-v5p", "gaudi2", "gaudi3"}) {
    INFO(id);
    CHECK_FALSE(prenet::learned_covers(*prenet::find_hardware(id)));
  }
  for (const char* id : {"a100-sxm4-80gb", "h100-sxm", "mi300x", "mi25", "t4"}) {
    INFO(id);
    CHECK(prenet::learned_covers(*prenet::find_hardware(id)));
  }
  Json custom = {{"peak_tflops", {{"fp32", 50}}}, {"memory_bandwidth_gbs", 2000}, {"memory_gb", 48}};
  CHECK(prenet::learned_covers(prenet::parse_accelerator(custom, "hardware[0]", true)));

  const char* mixed = R"J({"model": {"preset": "bert-base"}, "training": {"batch_size": 16, "seq_len": 128},
    "hardware": ["tpu-v5p", "a100-sxm4-80gb"], "options": {"per_layer": false}})J";
  Json roofline = Json::parse(prenet::predict_json(mixed));
  // Learned rows at three times their roofline time: the GPU moves, the TPU keeps the roofline's step.
  Json out = run_learned(
      mixed, [](std::uint32_t s, std::size_t c, std::size_t r) { return output_for_roofline(s, c, r, 3.0); });
  REQUIRE_FALSE(out.contains("error"));
  CHECK(out["predictor"] == "learned");
  const Json& tpu = out["results"][0];
  const Json& gpu = out["results"][1];
  CHECK(tpu["predictor"] == "roofline");
  CHECK(tpu["step_ms"].get<double>() == Approx(roofline["results"][0]["step_ms"].get<double>()).epsilon(1e-9));
  CHECK_FALSE(tpu.contains("step_ms_interval"));
  CHECK(gpu["predictor"] == "learned");
  CHECK(gpu.contains("step_ms_interval"));
  CHECK(gpu["step_ms"].get<double>() > 1.5 * roofline["results"][1]["step_ms"].get<double>());
  CHECK(roofline["results"][0]["predictor"] == "roofline");
}

TEST_CASE("the shipped manifest bounds every kernel class", "[learned]") {
  for (const auto& cls : prenet::learned_manifest().classes) {
    INFO(cls.dataset);
    CHECK(std::isfinite(cls.ceiling_ratio));
    CHECK(cls.ceiling_ratio >= 1.0);
    // Monotone classes carry the range of every input, and never a reversed one.
    if (cls.monotone) {
      REQUIRE(cls.range.bounds.size() == cls.features.size());
      for (const auto& r : cls.range.bounds) CHECK(r[0] <= r[1]);
    }
  }
}

TEST_CASE("outputs meaning the roofline time reproduce the roofline, and repeated layers share rows", "[learned]") {
  Json roofline = Json::parse(prenet::predict_json(kUnmeasuredRequest));
  Json plan = Json::parse(prenet::learned_prepare(kUnmeasuredRequest));
  std::size_t rows = 0;
  for (const auto& c : plan["classes"]) rows += c["rows"].get<std::size_t>();
  // 12 identical encoder blocks: far fewer rows than kernels x accelerators.
  CHECK(rows < 3 * 200);
  prenet::learned_release(plan["session"].get<std::uint32_t>());
  Json learned = run_learned(kUnmeasuredRequest, [](std::uint32_t s, std::size_t c, std::size_t r) {
    return output_for_roofline(s, c, r, 1.0);
  });
  REQUIRE_FALSE(learned.contains("error"));
  CHECK(learned["predictor"] == "learned");
  REQUIRE(learned["results"].size() == 3);
  for (std::size_t h = 0; h < 3; ++h) {
    const Json& l = learned["results"][h];
    double expected = roofline["results"][h]["step_ms"].get<double>();
    CHECK(l["step_ms"].get<double>() == Approx(expected).epsilon(1e-4));
    CHECK(l["step_ms_interval"][0].get<double>() < l["step_ms"].get<double>());
    CHECK(l["step_ms_interval"][1].get<double>() > l["step_ms"].get<double>());
  }
}

TEST_CASE("an input-bound step's learned band is floored at the pipeline's delivery", "[learned][input]") {
  // ResNet-50 on an H100 delivered at half the rate its compute takes the batch (training.input_rate): the step is
  // the delivery, and neither end of the band goes below it, while the compute's own band still shows above.
  const std::string base =
      R"J({"model": {"preset": "resnet50"}, "hardware": ["h100-sxm"], "options": {"per_layer": false},
    "training": {"batch_size": 256, "precision": "bf16")J";
  const auto learned = [](const std::string& text) {
    return run_learned(text,
                       [](std::uint32_t s, std::size_t c, std::size_t r) { return output_for_roofline(s, c, r, 1.0); });
  };
  const Json free = learned(base + "}}")["results"][0];
  REQUIRE(free.contains("step_ms_interval"));
  const double compute = free["step_ms"].get<double>();
  const double delivery = 2 * compute;
  const Json bound = learned(base + ", \"input_rate\": " + std::to_string(256 / (delivery / 1e3)) + "}}")["results"][0];
  CHECK(bound["step_ms"].get<double>() == Approx(delivery).epsilon(1e-5));
  CHECK(bound["step_ms_interval"][0].get<double>() == Approx(delivery).epsilon(1e-5));
  const double compute_high = free["step_ms_interval"][1].get<double>();
  CHECK(bound["step_ms_interval"][1].get<double>() == Approx(std::max(delivery, compute_high)).epsilon(1e-5));
}

TEST_CASE("adding log 2 to every model output doubles the kernel times", "[learned]") {
  Json base = run_learned(kUnmeasuredRequest, [](std::uint32_t s, std::size_t c, std::size_t r) {
    return output_for_roofline(s, c, r, 1.0);
  });
  Json doubled = run_learned(kUnmeasuredRequest, [](std::uint32_t s, std::size_t c, std::size_t r) {
    return output_for_roofline(s, c, r, 2.0);
  });
  CHECK(doubled["results"][0]["step_ms"].get<double>() ==
        Approx(2 * base["results"][0]["step_ms"].get<double>()).epsilon(1e-4));
}

TEST_CASE("a measured GPU's level: its own, else its chip's measured siblings', never a custom part's",
          "[learned][levels]") {
  prenet::LearnedClass cls;
  cls.levels = prenet::level_table({{"v100-pcie-32gb", {{"fp32", -0.2}}},
                                    {"v100-sxm2-16gb", {{"fp32", -0.4}, {"fp16", 0.3}}},
                                    {"t4", {{"fp32", 0.1}}}});
  auto level = [&](const std::string& id, prenet::Precision p) {
    const prenet::Accelerator* acc = prenet::find_hardware(id);
    REQUIRE(acc != nullptr);
    return prenet::learned_level(cls, *acc, p);
  };
  CHECK(level("v100-sxm2-16gb", prenet::Precision::FP32) == Approx(-0.4));
  CHECK(level("t4", prenet::Precision::FP32) == Approx(0.1));
  // v100-sxm2-32gb was never measured; both GV100 boards were.
  CHECK(level("v100-sxm2-32gb", prenet::Precision::FP32) == Approx(-0.3));
  CHECK(level("v100-pcie-32gb", prenet::Precision::FP16) == Approx(0.3));
  // No sibling measured at that precision, or no sibling at all.
  CHECK(level("t4", prenet::Precision::FP16) == 0.0);
  CHECK(level("h100-sxm", prenet::Precision::FP32) == 0.0);
  // FP16 and BF16 share the tensor cores: a GPU's (or its chip's) level in one stands for the other, its own first.
  prenet::LearnedClass ampere;
  ampere.levels = prenet::level_table({{"a100-sxm4-80gb", {{"fp16", 0.2}}}, {"a40", {{"fp16", -0.1}, {"bf16", -0.3}}}});
  auto ampere_level = [&](const std::string& id, prenet::Precision p) {
    return prenet::learned_level(ampere, *prenet::find_hardware(id), p);
  };
  CHECK(ampere_level("a100-sxm4-80gb", prenet::Precision::BF16) == Approx(0.2));
  CHECK(ampere_level("a100-pcie-40gb", prenet::Precision::BF16) == Approx(0.2));
  CHECK(ampere_level("a40", prenet::Precision::BF16) == Approx(-0.3));
  CHECK(ampere_level("a40", prenet::Precision::FP16) == Approx(-0.1));
  CHECK(ampere_level("a10", prenet::Precision::BF16) == Approx(-0.3));
  CHECK(ampere_level("a100-sxm4-80gb", prenet::Precision::FP32) == 0.0);  // 16 bits say nothing of FP32
  // A custom part named like a measured GPU is still the user's figures.
  Json custom = {
      {"id", "v100-sxm2-16gb"}, {"peak_tflops", {{"fp32", 15.7}}}, {"memory_bandwidth_gbs", 900}, {"memory_gb", 16}};
  CHECK(prenet::learned_level(cls, prenet::parse_accelerator(custom, "hardware[0]", true), prenet::Precision::FP32) ==
        0.0);
}

TEST_CASE("the level multiplies the learned kernels of that accelerator only", "[learned][levels]") {
  // v100-sxm2-32gb against a custom part with its exact figures: the same feature rows, so the same model
  // outputs; only the catalogue entry inherits its GV100 siblings' measured levels.
  const prenet::Accelerator* v100 = prenet::find_hardware("v100-sxm2-32gb");
  REQUIRE(v100 != nullptr);
  Json twin = Json::object();
  for (const char* key : {"peak_tflops", "memory_bandwidth_gbs", "memory_gb", "compute_units", "l2_cache_mb"}) {
    twin[key] = v100->record.at(key);
  }
  twin["id"] = "twin";
  Json req = Json::parse(kRequest);
  req["hardware"] = Json::array({"v100-sxm2-32gb", twin});
  double low = 1e300, high = 0;
  for (const auto& c : prenet::learned_manifest().classes) {
    double factor = std::exp(prenet::learned_level(c, *v100, prenet::Precision::FP32));
    low = std::min(low, factor);
    high = std::max(high, factor);
  }
  REQUIRE(high - low > 1e-3);  // the shipped manifest has measured GV100 levels
  // Learned kernels at the largest multiple of their roofline time that no level lifts past a class's
  // ceiling: far above every physical floor, and they outweigh the roofline-timed remainder, which pulls
  // the step's ratio towards 1.
  double ceiling = 1e300;
  for (const auto& c : prenet::learned_manifest().classes) ceiling = std::min(ceiling, c.ceiling_ratio);
  const double scale = 0.99 * ceiling / high;
  REQUIRE(scale > 2);
  Json out = run_learned(
      req.dump(), [&](std::uint32_t s, std::size_t c, std::size_t r) { return output_for_roofline(s, c, r, scale); });
  REQUIRE_FALSE(out.contains("error"));
  double ratio = out["results"][0]["step_ms"].get<double>() / out["results"][1]["step_ms"].get<double>();
  CHECK(ratio >= std::min(low, 1.0) * (1 - 1e-6));
  CHECK(ratio <= std::max(high, 1.0) * (1 + 1e-6));
  CHECK(std::abs(ratio - 1) > 1e-3);
}

TEST_CASE("wrong output counts and finishing without preparing are errors, not crashes", "[learned][errors]") {
  Json plan = Json::parse(prenet::learned_prepare(kRequest));
  const auto session = plan["session"].get<std::uint32_t>();
  Json r = Json::parse(prenet::learned_finish(session, {{1.0f}}));
  REQUIRE(r.contains("error"));
  CHECK(r["error"]["field"] == "outputs");
  // A failed finish closes the session too: finishing it again is finishing without preparing.
  r = Json::parse(prenet::learned_finish(session, {}));
  REQUIRE(r.contains("error"));
  CHECK(r["error"]["field"] == "request");
  r = Json::parse(prenet::learned_finish(0, {}));
  REQUIRE(r.contains("error"));
  CHECK(r["error"]["field"] == "request");
  r = Json::parse(prenet::learned_prepare("{oops"));
  REQUIRE(r.contains("error"));
  CHECK(r["error"]["field"] == "request");
}

TEST_CASE("two learned sessions interleaved give the answers each gives alone", "[learned][sessions]") {
  const char* other = R"J({"model": {"preset": "gpt2"}, "training": {"batch_size": 4},
    "hardware": ["h100-sxm", "a100-sxm4-80gb"], "options": {"per_layer": true}})J";
  auto scaled = [](double scale) {
    return [scale](std::uint32_t s, std::size_t c, std::size_t r) { return output_for_roofline(s, c, r, scale); };
  };
  const std::string alone_a = run_learned(kRequest, scaled(2.0)).dump();
  const std::string alone_b = run_learned(other, scaled(0.5)).dump();
  // Both prepared before either finishes, their features read in between, and finished in reverse order.
  Json a = Json::parse(prenet::learned_prepare(kRequest));
  Json b = Json::parse(prenet::learned_prepare(other));
  REQUIRE_FALSE(a.contains("error"));
  REQUIRE_FALSE(b.contains("error"));
  const auto ida = a["session"].get<std::uint32_t>(), idb = b["session"].get<std::uint32_t>();
  CHECK(ida != idb);
  auto outputs_a = learned_outputs(a, scaled(2.0));
  auto outputs_b = learned_outputs(b, scaled(0.5));
  CHECK(Json::parse(prenet::learned_finish(idb, outputs_b)).dump() == alone_b);
  CHECK(Json::parse(prenet::learned_finish(ida, outputs_a)).dump() == alone_a);
  // Finished sessions are gone: no rows, and finishing again is an error naming the request.
  CHECK(prenet::learned_features(ida, 0).empty());
  CHECK(prenet::learned_roofline_ms(idb, 0).empty());
  Json again = Json::parse(prenet::learned_finish(ida, outputs_a));
  REQUIRE(again.contains("error"));
  CHECK(again["error"]["field"] == "request");
}

TEST_CASE("learned sessions are limited, and a released one frees its place", "[learned][sessions][errors]") {
  std::vector<std::uint32_t> open;
  for (std::size_t i = 0; i < prenet::kMaxLearnedSessions; ++i) {
    Json plan = Json::parse(prenet::learned_prepare(kRequest));
    REQUIRE_FALSE(plan.contains("error"));
    open.push_back(plan["session"].get<std::uint32_t>());
  }
  Json refused = Json::parse(prenet::learned_prepare(kRequest));
  REQUIRE(refused.contains("error"));
  CHECK(refused["error"]["field"] == "request");
  CHECK(refused["error"]["message"].get<std::string>().find("64 learned predictions are already open") !=
        std::string::npos);
  const std::uint32_t last = open.back();
  open.pop_back();
  prenet::learned_release(last);
  prenet::learned_release(last);  // twice: the second time nothing happens
  CHECK(prenet::learned_features(last, 0).empty());
  Json plan = Json::parse(prenet::learned_prepare(kRequest));
  REQUIRE_FALSE(plan.contains("error"));
  open.push_back(plan["session"].get<std::uint32_t>());
  for (std::uint32_t id : open) prenet::learned_release(id);
  CHECK(prenet::learned_features(open.back(), 0).empty());
}

TEST_CASE(
    "calibration (roofline path): the measured accelerator matches the measurement, others move half-way in log space",
    "[learned][calibration]") {
  Json plain = Json::parse(prenet::predict_json(kRequest));
  double predicted = plain["results"][0]["step_ms"].get<double>();
  Json req = Json::parse(kRequest);
  req["calibration"] = {{"hardware", "v100-sxm2-32gb"}, {"step_ms", 2 * predicted}};
  Json cal = Json::parse(prenet::predict_json(req.dump()));
  REQUIRE_FALSE(cal.contains("error"));
  CHECK(cal["results"][0]["step_ms"].get<double>() == Approx(2 * predicted).epsilon(1e-5));
  CHECK(cal["results"][1]["step_ms"].get<double>() ==
        Approx(std::sqrt(2.0) * plain["results"][1]["step_ms"].get<double>()).epsilon(1e-5));
  CHECK(cal["results"][0]["calibration_share"] == 1.0);
  CHECK(cal["results"][1]["calibration_share"] == 0.5);
  req["calibration"]["hardware"] = "t4";
  Json bad = Json::parse(prenet::predict_json(req.dump()));
  REQUIRE(bad.contains("error"));
  CHECK(bad["error"]["field"] == "calibration.hardware");
}

TEST_CASE("baselines: FLOPs at 40% of peak, the roofline, and the PreNeT-style per-layer sum", "[learned][baselines]") {
  Json r = Json::parse(prenet::predict_json(kRequest));
  const Json& b = r["results"][2]["baselines"];  // h100-sxm, fp32 peak 67 TFLOP/s
  double total = r["model"]["flops_per_step"]["total"].get<double>();
  CHECK(b["flops40"]["step_ms"].get<double>() == Approx(total / (67e12 * 0.4) * 1e3).epsilon(1e-4));
  CHECK(b["roofline"]["step_ms"].get<double>() == Approx(r["results"][2]["step_ms"].get<double>()).epsilon(1e-5));
  CHECK(b["prenet"]["step_ms"].get<double>() > 0);
  CHECK(b["prenet"]["forward_ms"].get<double>() > 0);
}

TEST_CASE("with monotone models, a batched GEMM is never faster than one of its products timed as a GEMM",
          "[learned]") {
  const auto& classes = prenet::learned_manifest().classes;
  const int gemm = prenet::learned_class_for(prenet::KernelClass::Gemm);
  const int bmm = prenet::learned_class_for(prenet::KernelClass::BatchedGemm);
  REQUIRE(gemm >= 0);
  REQUIRE(bmm >= 0);
  REQUIRE(gemm != bmm);
  // GEMM rows take just under their class's ceiling times their roofline time; batched GEMMs either their
  // roofline time or 1.5 times it. This request's batched GEMMs are small (launch-bound), so one product
  // timed that slowly as a GEMM outlasts either.
  const double gemm_scale = 0.99 * classes[static_cast<std::size_t>(gemm)].ceiling_ratio;
  REQUIRE(gemm_scale > 3);
  auto run = [&](bool slow_bmm) {
    return run_learned(kUnmeasuredRequest, [&](std::uint32_t s, std::size_t c, std::size_t r) {
      if (static_cast<int>(c) == gemm) return output_for_roofline(s, c, r, gemm_scale);
      if (static_cast<int>(c) == bmm && slow_bmm) return output_for_roofline(s, c, r, 1.5);
      return output_for_roofline(s, c, r, 1.0);
    });
  };
  Json fast = run(false), slow = run(true);
  REQUIRE_FALSE(fast.contains("error"));
  const double fast_ms = fast["results"][0]["step_ms"].get<double>();
  const double slow_ms = slow["results"][0]["step_ms"].get<double>();
  if (classes[static_cast<std::size_t>(gemm)].monotone && classes[static_cast<std::size_t>(bmm)].monotone) {
    CHECK(fast_ms == Approx(slow_ms).epsilon(1e-6));  // the one-product bound lifts every batched GEMM alike
  } else {
    CHECK(fast_ms < slow_ms);  // ratio models promise nothing, and are not bounded
  }
}

TEST_CASE("the optimizer's per-layer updates are one multi-tensor update, timed once and shared by bytes",
          "[learned][optimizer]") {
  prenet::TrainingConfig tr;
  tr.image_size = 224;
  const prenet::Network net = prenet::resolve_model({{"preset", "resnet50"}}, tr);
  const prenet::StepWork work =
      prenet::step_work(net, 32, prenet::KernelContext(prenet::Precision::FP32), prenet::Optimizer::Momentum);
  const prenet::LearnedBatch batch =
      prenet::learned_batch(work, {*prenet::find_hardware("a100-sxm4-80gb")}, prenet::Precision::FP32);
  double shares = 0, launches = 0;
  std::size_t updates = 0;
  std::pair<int, std::size_t> row{-2, 0};
  for (std::size_t i = 0; i < work.kernels.size(); ++i) {
    if (work.kernels[i].cls != prenet::KernelClass::Optimizer) {
      CHECK(batch.kernel_share[i] == 1.0);
      continue;
    }
    ++updates;
    shares += batch.kernel_share[i];
    launches += work.kernels[i].repeats;
    if (row.first == -2) row = batch.kernel_rows[0][i];
    CHECK(batch.kernel_rows[0][i] == row);  // every layer's update reads the one row of the whole update
  }
  CHECK(updates > 100);  // ResNet-50's parameter tensors, layer by layer
  CHECK(shares == Approx(1.0).epsilon(1e-12));
  CHECK(launches == Approx(1.0).epsilon(1e-12));  // one launch in the roofline, too
}

TEST_CASE("a per-op harness's floor is taken out of a kernel's time inside a step, in quadrature and bounded",
          "[learned][harness]") {
  // Measured 0.05 ms where the harness floor is 0.03 ms: the device's own time is 0.04 ms.
  CHECK(prenet::in_step_ms(0.05, 0.03, 0.001) == Approx(0.04).epsilon(1e-12));
  // A time on the floor keeps only what the device must take (its ideal time and the gap between kernels).
  CHECK(prenet::in_step_ms(0.03, 0.03, 0.004) == Approx(0.004).epsilon(1e-12));
  CHECK(prenet::in_step_ms(0.02, 0.03, 0.004) == Approx(0.004).epsilon(1e-12));
  // Never above the harness's time (a least time above it cannot raise it), unchanged without a floor.
  CHECK(prenet::in_step_ms(0.003, 0.03, 0.004) == Approx(0.003).epsilon(1e-12));
  CHECK(prenet::in_step_ms(0.05, 0.0, 0.001) == Approx(0.05).epsilon(1e-12));
  // Large kernels barely move: 10 ms less 26 us in quadrature.
  CHECK(prenet::in_step_ms(10.0, 0.026, 0.001) == Approx(10.0).epsilon(1e-5));
  // Non-decreasing in the harness time.
  double last = 0;
  for (double ms = 0.001; ms < 0.2; ms *= 1.1) {
    const double t = prenet::in_step_ms(ms, 0.0261, 0.002);
    CHECK(t >= last);
    last = t;
  }
}

TEST_CASE("only the classes measured by one per-op harness have a floor to take out", "[learned][harness]") {
  for (const char* one_harness : {"elementwise", "normalization", "softmax"}) {
    CHECK(prenet::harness_floor_ms(one_harness) > 0.02);
    CHECK(prenet::harness_floor_ms(one_harness) < 0.05);
  }
  for (const char* mixed : {"gemm", "bmm", "conv", "recurrent", "no such class"}) {
    CHECK(prenet::harness_floor_ms(mixed) == 0.0);
  }
}
