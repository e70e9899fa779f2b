// training.input_rate (issue 20, what the request can say; docs/PREDICTION.md, "Input pipeline"): each model
// replica's input pipeline delivers batch_size / replicas samples per step at input_rate per second, prefetched
// beside the compute, so a step takes max(its own time, that delivery). Expected numbers come from that formula.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "helpers.hpp"
#include "prenet/api.hpp"

using namespace prenet;
using testutil::call;
using testutil::require_error;

namespace {

constexpr std::int64_t kBatch = 256;

/// ResNet-50 on one H100 in bf16, its training object extended by `training`.
Json request(const Json& training, const Json& parallel = nullptr) {
  Json t = {{"batch_size", kBatch}, {"precision", "bf16"}};
  if (!training.is_null()) t.update(training);  // {} reads as null
  Json r = {{"model", {{"preset", "resnet50"}}},
            {"training", t},
            {"hardware", {"h100-sxm"}},
            {"options", {{"per_layer", false}}}};
  if (!parallel.is_null()) r["parallel"] = parallel;
  return r;
}

/// The time one step's batch takes to arrive: each replica's share at `rate` samples per second.
double delivery_ms(double rate, double replicas) { return static_cast<double>(kBatch) / replicas / rate * 1e3; }

double step_of(const Json& result) { return result["step_ms"].get<double>(); }

}  // namespace

TEST_CASE("input_rate: a slow pipeline sets the step, a fast one changes nothing", "[options][input]") {
  const Json free = call(request({}))["results"][0];
  REQUIRE(free.count("input_ms") == 0);
  const double compute = step_of(free);

  const double slow_rate = 0.5 * kBatch / (compute / 1e3);  // delivers the batch in twice the compute's time
  const Json slow = call(request({{"input_rate", slow_rate}}))["results"][0];
  CHECK(step_of(slow) == Approx(delivery_ms(slow_rate, 1)).epsilon(1e-6));
  CHECK(slow["input_ms"].get<double>() == Approx(delivery_ms(slow_rate, 1) - compute).epsilon(1e-6));
  CHECK(slow["bottleneck"] == "input");
  CHECK(slow["forward_ms"] == free["forward_ms"]);  // the compute itself is unchanged
  // Everything per step follows the longer step: a quarter of the throughput's time, the cost with it.
  CHECK(slow["total_s"].get<double>() / free["total_s"].get<double>() == Approx(step_of(slow) / compute));

  const double fast_rate = 4.0 * kBatch / (compute / 1e3);
  const Json fast = call(request({{"input_rate", fast_rate}}))["results"][0];
  CHECK(step_of(fast) == compute);
  CHECK(fast["input_ms"] == 0);
  CHECK(fast["bottleneck"] == free["bottleneck"]);
}

TEST_CASE("input_rate: each data-parallel replica loads its share of the batch", "[options][input][parallel]") {
  const Json parallel = {{"data", 8}};
  const Json free = call(request({}, parallel))["results"][0];
  const double compute = step_of(free);
  // A rate at which one replica would need 3x the step for the whole batch: 8 replicas share it.
  const double rate = kBatch / (3.0 * compute / 1e3);
  const Json shared = call(request({{"input_rate", rate}}, parallel))["results"][0];
  CHECK(delivery_ms(rate, 8) < compute);
  CHECK(step_of(shared) == compute);
  CHECK(shared["input_ms"] == 0);
  // Half the replicas' rate that just matches 8 replicas' compute: now the pipeline sets the step.
  const double tight = 0.5 * kBatch / 8.0 / (compute / 1e3);
  const Json bound = call(request({{"input_rate", tight}}, parallel))["results"][0];
  CHECK(step_of(bound) == Approx(delivery_ms(tight, 8)).epsilon(1e-6));
  CHECK(bound["bottleneck"] == "input");
}

TEST_CASE("input_rate: plan mode's steps are floored at each layout's delivery", "[options][input][plan]") {
  Json doc = request({});
  doc["plan"] = {{"max_gpus", 8}, {"top", 50}};
  const Json free = Json::parse(plan_json(doc.dump()));
  REQUIRE_FALSE(free.contains("error"));
  const double rate = 200;  // samples per second per replica: 1.28 s for the whole batch on one
  doc["training"]["input_rate"] = rate;
  const Json bound = Json::parse(plan_json(doc.dump()));
  REQUIRE_FALSE(bound.contains("error"));
  const Json& layouts = bound["results"][0]["by_time"];
  REQUIRE(layouts.size() > 0);
  for (const Json& l : layouts) {
    INFO(l.dump());
    CHECK(l["step_ms"].get<double>() >= delivery_ms(rate, l["data"].get<double>()) * (1 - 1e-9));
  }
  // The fastest layout with a slow pipeline is the one with the most replicas sharing it.
  std::int64_t most = 0;
  for (const Json& l : free["results"][0]["by_time"]) most = std::max(most, l["data"].get<std::int64_t>());
  CHECK(layouts[0]["data"].get<std::int64_t>() == most);
}

TEST_CASE("input_rate: echoed when given, refused outside its range with the field named", "[options][input]") {
  CHECK(call(request({{"input_rate", 1500}}))["training"]["input_rate"] == 1500);
  CHECK(call(request({}))["training"].count("input_rate") == 0);
  require_error(request({{"input_rate", 0}}), "training.input_rate", "expected a number");
  require_error(request({{"input_rate", -5}}), "training.input_rate", "expected a number");
  require_error(request({{"input_rate", "fast"}}), "training.input_rate", "");
}
