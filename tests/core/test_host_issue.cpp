// The host's floor on a pass (docs/PREDICTION.md, "Launch-bound steps"): eager PyTorch issues each kernel from
// the CPU, so a forward or backward pass takes at least its launches x kHostIssueMsPerLaunch; CUDA graphs
// (training.cuda_graphs) remove the floor. Expected numbers come from that formula, not from the core's output.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "helpers.hpp"
#include "prenet/host_issue.hpp"
#include "prenet/parallel.hpp"

using namespace prenet;
using testutil::call;

namespace {

/// A small GPT-2 (helpers.hpp) on one H100: `batch` sequences of `seq` tokens, bf16, with `extra` training fields.
Json gpt_request(int batch, int seq, const Json& extra = Json::object()) {
  Json training = {{"batch_size", batch}, {"seq_len", seq}, {"precision", "bf16"}};
  training.update(extra);
  return {{"model", {{"hf_config", testutil::gpt_config()}}},
          {"training", training},
          {"hardware", {"h100-sxm"}},
          {"options", {{"per_layer", false}}}};
}

Kernel kernel_at(int layer, Phase phase, double repeats) {
  Kernel k;
  k.layer = layer;
  k.phase = phase;
  k.repeats = repeats;
  return k;
}

}  // namespace

TEST_CASE("host issue: launches per layer and pass, repeated launches counted, the optimizer left out", "[host]") {
  StepWork work;
  work.layers.resize(2);
  work.kernels = {kernel_at(0, Phase::Forward, 1), kernel_at(0, Phase::Forward, 3), kernel_at(0, Phase::Backward, 2),
                  kernel_at(1, Phase::Backward, 1), kernel_at(1, Phase::Optimizer, 5)};
  const auto launches = layer_launches(work);
  REQUIRE(launches.size() == 2);
  CHECK(launches[0][0] == 4);
  CHECK(launches[0][1] == 2);
  CHECK(launches[1][0] == 0);
  CHECK(launches[1][1] == 1);

  TrainingConfig eager;
  const auto host = layer_host_ms(work, eager);
  CHECK(host[0][0] == Approx(4 * kHostIssueMsPerLaunch));
  CHECK(host[1][1] == Approx(kHostIssueMsPerLaunch));
  const auto step = step_host_ms(host);
  CHECK(step[0] == Approx(4 * kHostIssueMsPerLaunch));
  CHECK(step[1] == Approx(3 * kHostIssueMsPerLaunch));

  TrainingConfig graphs;
  graphs.cuda_graphs = true;
  for (const auto& phases : layer_host_ms(work, graphs)) CHECK((phases[0] == 0 && phases[1] == 0));
}

TEST_CASE("host issue: a pass of short kernels takes the host's time to issue them; CUDA graphs remove it", "[host]") {
  const Json eager = call(gpt_request(1, 16));
  const Json graphs = call(gpt_request(1, 16, {{"cuda_graphs", true}}));
  INFO(eager.dump().substr(0, 400));
  REQUIRE(eager.contains("results"));
  REQUIRE(graphs.contains("results"));
  const Json& e = eager["results"][0];
  const Json& g = graphs["results"][0];
  const double fwd_host = e["host_issue_ms"]["forward"].get<double>();
  const double bwd_host = e["host_issue_ms"]["backward"].get<double>();
  // Whole launches: the issue time is a count of them times the per-launch cost.
  const double launches = fwd_host / kHostIssueMsPerLaunch;
  CHECK(std::fabs(launches - std::round(launches)) < 1e-3);
  CHECK(launches >= 8 * 5);  // eight blocks, each with more than five forward kernels
  // One sequence of 16 tokens: microseconds of device work per kernel, so the host sets both passes.
  CHECK(e["forward_ms"].get<double>() == Approx(fwd_host).epsilon(1e-6));
  CHECK(e["backward_ms"].get<double>() == Approx(bwd_host).epsilon(1e-6));
  CHECK(e["bottleneck"] == "overhead");
  // Replayed as graphs: no host floor, the device's (shorter) passes, the same memory.
  CHECK(g["host_issue_ms"]["forward"].get<double>() == 0);
  CHECK(g["host_issue_ms"]["backward"].get<double>() == 0);
  CHECK(g["forward_ms"].get<double>() < e["forward_ms"].get<double>());
  CHECK(g["backward_ms"].get<double>() < e["backward_ms"].get<double>());
  CHECK(g["memory_gb"].get<double>() == e["memory_gb"].get<double>());
  CHECK(graphs["training"]["cuda_graphs"] == true);
}

TEST_CASE("host issue: a step of long kernels is the device's, with or without CUDA graphs", "[host]") {
  const Json eager = call(gpt_request(32, 256));
  const Json graphs = call(gpt_request(32, 256, {{"cuda_graphs", true}}));
  REQUIRE(eager.contains("results"));
  REQUIRE(graphs.contains("results"));
  const Json& e = eager["results"][0];
  CHECK(e["forward_ms"].get<double>() > e["host_issue_ms"]["forward"].get<double>());
  CHECK(e["backward_ms"].get<double>() > e["host_issue_ms"]["backward"].get<double>());
  CHECK(e["bottleneck"] != "overhead");
  CHECK(e["step_ms"].get<double>() == graphs["results"][0]["step_ms"].get<double>());
}

TEST_CASE("host issue: the floor never lowers a step as the batch grows", "[host]") {
  double before = 0;
  for (int batch : {1, 2, 4, 8, 16, 32, 64}) {
    const Json r = call(gpt_request(batch, 64));
    REQUIRE(r.contains("results"));
    const double step = r["results"][0]["step_ms"].get<double>();
    INFO("batch " << batch);
    CHECK(step >= before);
    before = step;
  }
}

TEST_CASE("host issue: floor_at_host raises each stage's passes and picks the critical stage again",
          "[host][parallel]") {
  StagePlan sp;
  sp.bounds = {0, 1, 2};
  sp.forward = {5, 1};
  sp.backward = {10, 2};
  sp.tensor = {0, 0};
  sp.expert = {0, 0};
  sp.context = {0, 0};
  floor_at_host(sp, {});
  CHECK(sp.host_issue.empty());  // no floor given: the plan is unchanged
  CHECK(sp.forward[1] == 1);
  floor_at_host(sp, {{0.5, 0.5}, {20, 1}});
  CHECK(sp.forward[0] == 5);
  CHECK(sp.backward[0] == 10);
  CHECK(sp.forward[1] == 20);  // the host issues stage 1's forward slower than the device runs it
  CHECK(sp.backward[1] == 2);
  CHECK(sp.critical == 1);
  CHECK(sp.busy_total == Approx(5 + 10 + 20 + 2));
  CHECK_FALSE(sp.host_bound[0]);
  CHECK(sp.host_bound[1]);
}

TEST_CASE("host issue: data-parallel micro-batches each wait for the host", "[host][parallel]") {
  Json r = gpt_request(8, 16);
  r["hardware"] = {"h100-sxm"};
  r["parallel"] = {{"data", 2}, {"micro_batches", 4}};
  const Json out = call(r);
  INFO(out.dump().substr(0, 400));
  REQUIRE(out.contains("results"));
  const Json& res = out["results"][0];
  const Json single = call(gpt_request(1, 16));
  REQUIRE(single.contains("results"));
  // Four micro-batches of one sequence: four times one sequence's issue time, which sets the passes.
  CHECK(res["host_issue_ms"]["forward"].get<double>() ==
        Approx(4 * single["results"][0]["host_issue_ms"]["forward"].get<double>()).epsilon(1e-6));
  CHECK(res["forward_ms"].get<double>() == Approx(res["host_issue_ms"]["forward"].get<double>()).epsilon(1e-6));
  CHECK(res["bottleneck"] == "overhead");
}
