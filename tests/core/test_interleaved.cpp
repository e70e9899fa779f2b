// The interleaved 1F1B schedule (parallel.virtual_stages; docs/PREDICTION.md, "Interleaved pipeline"):
// the bubble (p-1)/v of a stage's slot, v-fold point-to-point sends, Korthikanti's first-stage factor,
// Megatron's checks, the response echo and plan mode.
#include <array>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "parallel/layout.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/hardware.hpp"
#include "prenet/memory.hpp"
#include "prenet/parallel.hpp"

using namespace prenet;
using testutil::call;
using testutil::d;
using testutil::gpt_config;
using testutil::require_error;

namespace {

Network gpt() {
  TrainingConfig tr;
  tr.seq_len = 256;
  return resolve_model({{"hf_config", gpt_config()}}, tr);
}

Json request(const Json& parallel, std::int64_t batch = 16) {
  return {{"model", {{"hf_config", gpt_config()}}},
          {"training", {{"batch_size", batch}, {"seq_len", 256}}},
          {"hardware", {"a100-sxm4-80gb"}},
          {"options", {{"per_layer", false}}},
          {"parallel", parallel}};
}

/// Per layer: forward 1 ms and backward 2 ms inside blocks, nothing outside (every chunk of whole blocks
/// then costs the same: a uniform network).
std::vector<std::array<double, 3>> uniform_blocks(const ShardedNetwork& shard) {
  std::vector<std::array<double, 3>> ms(shard.layers.size(), std::array<double, 3>{0.0, 0.0, 0.0});
  for (std::size_t l = 0; l < ms.size(); ++l) {
    if (shard.layers[l].in_block) ms[l] = {1.0, 2.0, 0.0};
  }
  return ms;
}

double block_layers(const ShardedNetwork& shard) {
  double n = 0;
  for (const ShardLayer& l : shard.layers) n += l.in_block ? 1 : 0;
  return n;
}

ParallelConfig pipeline_of(std::int64_t p, std::int64_t v, std::int64_t m) {
  ParallelConfig cfg;
  cfg.pipeline = p;
  cfg.gpus = p;
  cfg.virtual_stages = v;
  cfg.micro_batches = m;
  return cfg;
}

}  // namespace

TEST_CASE("interleaved 1F1B: the bubble is (p-1)/v of a stage's slot, (p-1)/(v m) of the compute",
          "[parallel][interleaved]") {
  Network net = gpt();
  ShardedNetwork shard = shard_network(net, 1);
  const auto ms = uniform_blocks(shard);
  Fabric fabric;
  fabric.intra = Link{"x", 1e9, 0};
  // One stage's slot: its 1/p of the blocks' layers, forward + backward.
  for (std::int64_t p : {2, 4}) {
    const double slot = 3.0 * block_layers(shard) / d(p);
    for (std::int64_t v : {1, 2, 4}) {
      if (8 % (p * v) != 0) continue;
      for (std::int64_t m : {p, 2 * p, 4 * p}) {
        INFO("p=" << p << " v=" << v << " m=" << m);
        ParallelTiming t = compose_parallel(ms, shard, pipeline_of(p, v, m), fabric, Precision::BF16);
        CHECK(t.stage_bounds.size() == static_cast<std::size_t>(p * v) + 1);
        CHECK(t.forward_ms + t.backward_ms == Approx(d(m) * slot));
        CHECK(t.bubble_ms == Approx(d(p - 1) / d(v) * slot));
        CHECK(t.bubble_ms / (t.forward_ms + t.backward_ms) == Approx(d(p - 1) / (d(v) * d(m))));
      }
    }
  }
}

TEST_CASE("interleaved chunks are whole blocks assigned round-robin: chunk j on stage j mod p",
          "[parallel][interleaved]") {
  Network net = gpt();
  ShardedNetwork shard = shard_network(net, 1);
  const auto ms = uniform_blocks(shard);
  ParallelConfig cfg = pipeline_of(2, 2, 4);
  StagePlan sp = plan_stages(ms, shard, cfg, Fabric{}, Precision::BF16);
  REQUIRE(sp.bounds.size() == 5);
  CHECK(sp.virtual_stages == 2);
  for (std::size_t j = 1; j + 1 < sp.bounds.size(); ++j) {
    const ShardLayer& here = shard.layers[sp.bounds[j]];
    const ShardLayer& prev = shard.layers[sp.bounds[j] - 1];
    CHECK_FALSE((here.in_block && prev.in_block && here.block == prev.block));
  }
  // Each stage sums its two chunks: 4 blocks of the 8, whichever they are.
  REQUIRE(sp.forward.size() == 2);
  for (std::size_t s = 0; s < 2; ++s) {
    double forward = 0;
    for (std::size_t j = s; j < 4; j += 2) {
      for (std::size_t l = sp.bounds[j]; l < sp.bounds[j + 1]; ++l) forward += ms[l][0];
    }
    CHECK(sp.forward[s] == Approx(forward));
    CHECK(sp.forward[s] == Approx(block_layers(shard) / 2));
  }
}

TEST_CASE("interleaving sends each micro-batch across every chunk boundary: 2(v m + p - 1) sends",
          "[parallel][interleaved]") {
  Network net = gpt();
  ShardedNetwork shard = shard_network(net, 1);
  const auto ms = uniform_blocks(shard);
  Fabric fabric;
  fabric.intra = Link{"x", 100, 0};  // 100 GB/s, no latency: the time is the bytes
  for (std::int64_t p : {2, 4}) {
    for (std::int64_t v : {1, 2}) {
      const std::int64_t m = 2 * p;
      INFO("p=" << p << " v=" << v);
      ParallelConfig cfg = pipeline_of(p, v, m);
      StagePlan sp = plan_stages(ms, shard, cfg, fabric, Precision::BF16);
      // Every cut is between blocks: one sample's block output, sequence 256 x width 512.
      CHECK(sp.boundary_elements == Approx(256.0 * 512.0));
      const double send_ms = 256.0 * 512.0 * 2 / (100e9 * kLinkEfficiency) * 1e3;
      ParallelTiming t = finish_parallel(sp, cfg, fabric, Precision::BF16);
      CHECK(t.pipeline_ms == Approx(2.0 * d(v * m + p - 1) * send_ms));
    }
  }
}

TEST_CASE("the first stage keeps p(1 + (p-1)/(p v)) micro-batches under interleaving (Korthikanti et al.)",
          "[memory][interleaved]") {
  for (std::int64_t p : {2, 4, 8}) {
    for (std::int64_t v : {2, 3, 4}) {
      INFO("p=" << p << " v=" << v);
      // Enough micro-batches that the warm-up does not hold them all.
      ParallelConfig cfg = pipeline_of(p, v, 4 * p);
      CHECK(micro_batches_in_flight(cfg, 0) == Approx(d(p) * (1.0 + d(p - 1) / (d(p) * d(v)))));
      // Megatron's warm-up of the last stage: (v - 1) p chunk forwards, then one more.
      CHECK(micro_batches_in_flight(cfg, static_cast<std::size_t>(p - 1)) == Approx(d((v - 1) * p + 1) / d(v)));
      // m = p: the warm-up holds every chunk of every micro-batch, p micro-batches as without interleaving.
      cfg.micro_batches = p;
      CHECK(micro_batches_in_flight(cfg, 0) == Approx(d(p)));
      cfg.virtual_stages = 1;
      cfg.micro_batches = 4 * p;
      CHECK(micro_batches_in_flight(cfg, 0) == Approx(d(p)));  // 1F1B: p - s
    }
  }
  // The stage's activations scale by that count.
  StageInputs in;
  in.activations = 1e9;
  ParallelConfig cfg = pipeline_of(4, 2, 8);
  MemoryEstimate m = stage_memory(in, 0, cfg, testutil::trained_with(Precision::BF16, Optimizer::Adam));
  CHECK(m.activations_gb == Approx(4.0 * (1.0 + 3.0 / 8.0)));
}

TEST_CASE("a stage's memory sums its chunks, and the layout cache tells chunks from stages", "[memory][interleaved]") {
  Network net = gpt();
  TrainingConfig tr = testutil::trained_with(Precision::BF16, Optimizer::Adam);
  tr.seq_len = 256;
  const Accelerator* found = find_hardware("a100-sxm4-80gb");
  REQUIRE(found != nullptr);
  const Accelerator& acc = *found;
  ShardedNetwork shard = shard_network(net, 1);
  std::vector<double> cost(net.layers.size(), 0.0);
  for (std::size_t l = 0; l < cost.size(); ++l) cost[l] = shard.layers[l].in_block ? 1.0 : 0.0;
  // Two stages of two chunks cut where four stages of one chunk are.
  ParallelConfig two = pipeline_of(2, 2, 8), four = pipeline_of(4, 1, 8);
  const std::vector<std::size_t> bounds = split_chunks(cost, shard, 2, 2);
  REQUIRE(bounds == split_chunks(cost, shard, 4, 1));
  LayoutEvaluator fresh_two(net, tr, acc), fresh_four(net, tr, acc), shared(net, tr, acc);
  const double gb_two = fresh_two.fullest_gb(two, bounds), gb_four = fresh_four.fullest_gb(four, bounds);
  CHECK(shared.fullest_gb(four, bounds) == Approx(gb_four));
  CHECK(shared.fullest_gb(two, bounds) == Approx(gb_two));
  CHECK(gb_two > gb_four);  // half the stages: twice the weights per GPU
  // The stage inputs add the chunks' sums.
  const auto& saved = fresh_two.saved(two, Recompute::None);
  std::vector<StageInputs> stages = stage_inputs_of(shard, saved, saved, bounds, 2);
  REQUIRE(stages.size() == 2);
  double params0 = 0, acts1 = 0;
  for (std::size_t l = bounds[0]; l < bounds[1]; ++l) params0 += d(shard.net.layers[l].parameters);
  for (std::size_t l = bounds[2]; l < bounds[3]; ++l) params0 += d(shard.net.layers[l].parameters);
  for (std::size_t l = bounds[1]; l < bounds[2]; ++l) acts1 += saved[l];
  for (std::size_t l = bounds[3]; l < bounds[4]; ++l) acts1 += saved[l];
  CHECK(stages[0].params == Approx(params0));
  CHECK(stages[1].activations == Approx(acts1));
}

TEST_CASE("virtual_stages is checked: a pipeline, micro-batches a multiple of it, whole blocks per chunk",
          "[parallel][interleaved]") {
  require_error(request({{"virtual_stages", 0}}), "parallel.virtual_stages", "");
  require_error(request({{"virtual_stages", 2}}), "parallel.virtual_stages", "needs pipeline > 1 (pipeline is 1)");
  // Megatron-Core: micro-batches a multiple of the pipeline size.
  require_error(request({{"pipeline", 4}, {"virtual_stages", 2}, {"micro_batches", 2}}), "parallel.micro_batches",
                "needs micro_batches a multiple of pipeline 4; micro_batches is 2");
  // 8 blocks over 2 stages: 4 per stage, which 3 does not divide.
  require_error(request({{"pipeline", 2}, {"virtual_stages", 3}, {"micro_batches", 4}}), "parallel.virtual_stages",
                "virtual_stages 3 does not divide the 4 blocks per stage (8 blocks over 2 pipeline stages)");
  // 8 blocks do not split over 3 stages at all.
  require_error(request({{"pipeline", 3}, {"virtual_stages", 2}, {"micro_batches", 6}}, 24), "parallel.virtual_stages",
                "the 8 blocks do not split evenly over 3 pipeline stages");
  // Default 1 and a valid interleaving are accepted.
  CHECK_FALSE(call(request({{"pipeline", 2}, {"virtual_stages", 1}, {"micro_batches", 3}}, 24)).contains("error"));
  CHECK_FALSE(call(request({{"pipeline", 2}, {"virtual_stages", 4}, {"micro_batches", 4}})).contains("error"));
}

TEST_CASE("the response echoes virtual_stages; its stages sum their chunks and the bubble shrinks",
          "[parallel][interleaved]") {
  Json plain = call(request({{"pipeline", 2}, {"micro_batches", 4}}));
  Json inter = call(request({{"pipeline", 2}, {"virtual_stages", 2}, {"micro_batches", 4}}));
  REQUIRE_FALSE(inter.contains("error"));
  const Json& p1 = plain["results"][0]["parallel"];
  const Json& p2 = inter["results"][0]["parallel"];
  CHECK(p1["virtual_stages"] == 1);
  CHECK(p2["virtual_stages"] == 2);
  REQUIRE(p2["stage_layers"].size() == 2);
  CHECK(p2["stage_layers"][0].get<std::size_t>() + p2["stage_layers"][1].get<std::size_t>() == gpt().layers.size());
  CHECK(p2["bubble_ms"].get<double>() < p1["bubble_ms"].get<double>());
  CHECK(p2["communication_ms"]["pipeline"].get<double>() > p1["communication_ms"]["pipeline"].get<double>());
}

TEST_CASE("plan mode searches virtual stages where they divide the blocks per stage", "[parallel][interleaved][plan]") {
  Json doc = {{"model", {{"hf_config", gpt_config()}}},
              {"training", {{"batch_size", 64}, {"seq_len", 256}}},
              {"hardware", {"a100-sxm4-80gb"}},
              {"plan", {{"max_gpus", 16}, {"top", 100}}}};
  Json out = Json::parse(plan_json(doc.dump()));
  REQUIRE_FALSE(out.contains("error"));
  bool interleaved = false;
  for (const Json& l : out["results"][0]["by_time"]) {
    const std::int64_t p = l["pipeline"], v = l["virtual_stages"], m = l["micro_batches"];
    if (v == 1) continue;
    interleaved = true;
    INFO(l.dump());
    CHECK(p > 1);
    CHECK(8 % (p * v) == 0);
    CHECK(m % p == 0);
  }
  CHECK(interleaved);
}
