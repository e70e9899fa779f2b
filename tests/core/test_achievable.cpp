// The catalogue's measured achievable matrix peak (`achievable_tflops`, docs/HARDWARE.md): the learned path's
// physical floor for a matrix kernel is its FLOPs at that rate, not at the datasheet's dense peak.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "prenet/api.hpp"
#include "prenet/hardware.hpp"
#include "prenet/json_util.hpp"
#include "prenet/learned.hpp"

using prenet::Json;

namespace {

/// A custom accelerator with a 1000 TFLOP/s BF16 peak; `achievable` (TFLOP/s) when given.
Json custom_part(const std::string& id, double achievable) {
  Json part = {{"id", id},
               {"peak_tflops", {{"fp32", 60.0}, {"bf16", 1000.0}, {"fp16", 1000.0}}},
               {"memory_bandwidth_gbs", 3000},
               {"memory_gb", 80},
               {"compute_units", 132},
               {"l2_cache_mb", 50}};
  if (achievable > 0) part["achievable_tflops"] = {{"bf16", achievable}};
  return part;
}

/// One large BF16 GEMM pair (8192 tokens, 4096 -> 14336 -> 4096) on the given parts, per-layer off.
std::string gemm_request(const Json& hardware) {
  Json request = {
      {"model",
       {{"name", "gemm"},
        {"input", {{"kind", "sequence"}, {"seq_len", 8192}, {"features", 4096}}},
        {"layers", Json::array({Json{{"type", "dense"}, {"name", "up"}, {"units", 14336}, {"bias", false}},
                                Json{{"type", "dense"}, {"name", "down"}, {"units", 4096}, {"bias", false}}})}}},
      {"training", {{"batch_size", 1}, {"precision", "bf16"}, {"optimizer", "sgd"}}},
      {"hardware", hardware},
      {"options", {{"per_layer", false}}}};
  return request.dump();
}

/// The learned response when every model output means `scale` x the row's roofline time.
Json learned_at(const std::string& request, double scale) {
  Json plan = Json::parse(prenet::learned_prepare(request));
  REQUIRE_FALSE(plan.contains("error"));
  const auto session = plan["session"].get<std::uint32_t>();
  std::vector<std::vector<float>> outputs;
  for (std::size_t c = 0; c < plan["classes"].size(); ++c) {
    const auto& cls = prenet::learned_manifest().classes.at(c);
    const std::vector<double>& roofline = prenet::learned_roofline_ms(session, c);
    std::vector<float> y(roofline.size());
    for (std::size_t r = 0; r < y.size(); ++r) {
      y[r] = static_cast<float>(cls.predicts_ratio ? std::log(scale) : std::log(scale * roofline[r]));
    }
    outputs.push_back(y);
  }
  return Json::parse(prenet::learned_finish(session, outputs));
}

void require_catalogue_error(const Json& record, const std::string& field, const std::string& part) {
  try {
    prenet::parse_accelerator(record, "hardware[0]", true);
    FAIL("accepted " << record.dump());
  } catch (const prenet::InputError& e) {
    INFO(e.what());
    CHECK(e.field() == field);
    CHECK(std::string(e.what()).find(part) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("achievable peak: the share of the dense peak a matrix kernel can reach", "[achievable]") {
  const prenet::Accelerator part = prenet::parse_accelerator(custom_part("p", 400), "hardware[0]", true);
  CHECK(part.achievable_fraction(prenet::Precision::BF16) == Approx(0.4));
  CHECK(part.achievable_fraction(prenet::Precision::FP16) == 1.0);  // none measured
  CHECK(part.achievable_fraction(prenet::Precision::FP32) == 1.0);
  // The catalogue's measured parts: below their dense peaks, FP16 at the BF16 figure where the peaks are equal.
  const prenet::Accelerator* a100 = prenet::find_hardware("a100-sxm4-80gb");
  REQUIRE(a100 != nullptr);
  CHECK(a100->achievable_fraction(prenet::Precision::BF16) == Approx(271.2 / 312.0));
  CHECK(a100->achievable_fraction(prenet::Precision::FP16) == Approx(271.2 / 312.0));
  CHECK(a100->achievable_fraction(prenet::Precision::TF32) == 1.0);
  for (const prenet::Accelerator& acc : prenet::hardware_catalogue()) {
    for (int p = 0; p < 5; ++p) {
      INFO(acc.id << " precision " << p);
      CHECK(acc.achievable_fraction(static_cast<prenet::Precision>(p)) <= 1.0);
      CHECK(acc.achievable_fraction(static_cast<prenet::Precision>(p)) > 0.3);
    }
  }
}

TEST_CASE("achievable peak: bad figures are errors naming the field", "[achievable][errors]") {
  Json above = custom_part("p", 1200);
  require_catalogue_error(above, "hardware[0].achievable_tflops.bf16", "1000");
  Json no_peak = custom_part("p", 400);
  no_peak["achievable_tflops"]["fp8"] = 900;
  require_catalogue_error(no_peak, "hardware[0].achievable_tflops.fp8", "no fp8 peak");
  Json unknown = custom_part("p", 400);
  unknown["achievable_tflops"]["int4"] = 10;
  require_catalogue_error(unknown, "hardware[0].achievable_tflops.int4", "");
  Json negative = custom_part("p", 400);
  negative["achievable_tflops"]["bf16"] = -1;
  require_catalogue_error(negative, "hardware[0].achievable_tflops.bf16", "");
}

TEST_CASE("achievable peak: a model output faster than it is held at it; slower ones are untouched",
          "[achievable][learned]") {
  const std::string request = gemm_request(Json::array({custom_part("free", 0), custom_part("capped", 400)}));
  // A model claiming 1% of the roofline time: the physical floor binds on both parts.
  const Json fast = learned_at(request, 0.01);
  REQUIRE_FALSE(fast.contains("error"));
  const double forward_flops = fast["model"]["flops_per_step"]["forward"].get<double>();
  const Json &free = fast["results"][0], &capped = fast["results"][1];
  // The forward is two GEMMs: their FLOPs at 1000 and at 400 TFLOP/s (memory time is far below both).
  CHECK(free["forward_ms"].get<double>() == Approx(forward_flops / 1000e12 * 1e3).epsilon(0.01));
  CHECK(capped["forward_ms"].get<double>() == Approx(forward_flops / 400e12 * 1e3).epsilon(0.01));
  // A model output slower than the floor is the model's, the same on both parts (the same roofline rows).
  const Json slow = learned_at(request, 4.0);
  CHECK(slow["results"][1]["forward_ms"].get<double>() ==
        Approx(slow["results"][0]["forward_ms"].get<double>()).epsilon(1e-9));
  CHECK(slow["results"][1]["forward_ms"].get<double>() > capped["forward_ms"].get<double>());
}
