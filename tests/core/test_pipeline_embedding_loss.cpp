// How a pipeline splits the layers (docs/PREDICTION.md, "Interleaved pipeline"): Megatron-LM's embedding-and-loss
// split (parallel.pipeline_embedding_loss: blocks + 2 over p x v chunks), its equal whole-block chunks under
// interleaving, and the cost-balanced 1F1B split that keeps the embedding and the head with their neighbours.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "parallel/layout.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/parallel.hpp"

using namespace prenet;
using testutil::gpt_config;
using testutil::gpt_shard;

namespace {

/// Block instances whose first layer lies in [begin, end).
std::int64_t blocks_in(const ShardedNetwork& shard, std::size_t begin, std::size_t end) {
  std::int64_t n = 0;
  for (std::size_t l = begin; l < end; ++l) {
    const ShardLayer& sl = shard.layers[l];
    if (sl.in_block && !(l > 0 && shard.layers[l - 1].in_block && shard.layers[l - 1].block == sl.block)) ++n;
  }
  return n;
}

Json request(std::int64_t layers, const Json& parallel) {
  Json config = gpt_config();
  config["n_layer"] = layers;
  return {{"model", {{"hf_config", config}}},
          {"training", {{"batch_size", 16}, {"seq_len", 256}}},
          {"hardware", {"a100-sxm4-80gb"}},
          {"options", {{"per_layer", false}}},
          {"parallel", parallel}};
}

}  // namespace

TEST_CASE("blocks + 2 split evenly: the first and last chunks hold one block fewer, with the embedding and the head",
          "[parallel][pipeline_embedding_loss]") {
  // 126 blocks over 8 x 4 chunks (Llama 3.1 405B's layout): 4 per chunk, 3 in the first and the last.
  struct Case {
    std::int64_t blocks, p, v;
  };
  for (const Case& c : {Case{126, 8, 4}, Case{14, 4, 1}, Case{12, 2, 7}, Case{94, 8, 3}}) {
    INFO(c.blocks << " blocks, p " << c.p << ", v " << c.v);
    const ShardedNetwork shard = gpt_shard(c.blocks);
    const std::vector<double> cost(shard.layers.size(), 1.0);
    const std::vector<std::size_t> bounds = split_chunks(cost, shard, c.p, c.v, true);
    const std::int64_t chunks = c.p * c.v, per = (c.blocks + 2) / chunks;
    REQUIRE(bounds.size() == static_cast<std::size_t>(chunks) + 1);
    CHECK(bounds.front() == 0);
    CHECK(bounds.back() == shard.layers.size());
    for (std::int64_t j = 0; j < chunks; ++j) {
      const auto u = static_cast<std::size_t>(j);
      const std::int64_t expected = j == 0 || j == chunks - 1 ? per - 1 : per;
      CHECK(blocks_in(shard, bounds[u], bounds[u + 1]) == expected);
      CHECK(bounds[u] < bounds[u + 1]);
    }
    // The embedding opens the first chunk and the loss closes the last.
    CHECK_FALSE(shard.layers.front().in_block);
    CHECK_FALSE(shard.layers.back().in_block);
  }
}

TEST_CASE("the embedding-and-loss split is refused where Megatron refuses it, naming the field",
          "[parallel][pipeline_embedding_loss]") {
  auto error_of = [](const Json& r) { return Json::parse(predict_json(r.dump())); };
  Json out =
      error_of(request(12, {{"gpus", 4}, {"pipeline", 4}, {"micro_batches", 4}, {"pipeline_embedding_loss", true}}));
  REQUIRE(out.contains("error"));
  CHECK(out["error"]["field"] == "parallel.pipeline_embedding_loss");
  CHECK_THAT(out["error"]["message"].get<std::string>(), Catch::Contains("(14) do not split evenly over 4"));
  out = error_of(request(12, {{"gpus", 2}, {"data", 2}, {"pipeline_embedding_loss", true}}));
  REQUIRE(out.contains("error"));
  CHECK(out["error"]["field"] == "parallel.pipeline_embedding_loss");
  CHECK_THAT(out["error"]["message"].get<std::string>(), Catch::Contains("pipeline > 1"));
  // The same request the plain split refuses (12 blocks do not make 7 whole chunks per stage) is accepted.
  const Json parallel = {{"gpus", 2}, {"pipeline", 2}, {"virtual_stages", 7}, {"micro_batches", 8}};
  out = error_of(request(12, parallel));
  REQUIRE(out.contains("error"));
  CHECK(out["error"]["field"] == "parallel.virtual_stages");
  Json with = parallel;
  with["pipeline_embedding_loss"] = true;
  out = error_of(request(12, with));
  INFO(out.dump());
  REQUIRE_FALSE(out.contains("error"));
  CHECK(out["results"][0]["parallel"]["pipeline_embedding_loss"] == true);
  CHECK(out["results"][0]["parallel"]["virtual_stages"] == 7);
}

TEST_CASE("interleaved chunks hold the same whole number of blocks, the embedding first and the head last",
          "[parallel][pipeline_embedding_loss][interleaved]") {
  const ShardedNetwork shard = gpt_shard(48);
  // A head far costlier than a block must not make a chunk of its own: Megatron's chunks are counted, not balanced.
  std::vector<double> cost(shard.layers.size(), 1.0);
  cost.back() = cost[cost.size() - 2] = 1000.0;
  for (std::int64_t v : {2, 8, 24}) {
    INFO("v " << v);
    const std::vector<std::size_t> bounds = split_chunks(cost, shard, 2, v, false);
    REQUIRE(bounds.size() == static_cast<std::size_t>(2 * v) + 1);
    for (std::size_t j = 0; j + 1 < bounds.size(); ++j)
      CHECK(blocks_in(shard, bounds[j], bounds[j + 1]) == 48 / (2 * v));
    CHECK(shard.layers[bounds[bounds.size() - 2]].in_block);  // the last chunk starts at a block
  }
}

TEST_CASE("a cost-balanced pipeline never cuts the head from its loss, nor the embedding from what follows it",
          "[parallel][pipeline_embedding_loss]") {
  const ShardedNetwork shard = gpt_shard(8);
  std::size_t first_block = 0, after_last = 0;
  for (std::size_t l = 0; l < shard.layers.size(); ++l) {
    if (!shard.layers[l].in_block) continue;
    if (first_block == 0) first_block = l;
    after_last = l + 1;
  }
  REQUIRE(first_block > 1);                        // embedding and positions before the blocks
  REQUIRE(shard.layers.size() - after_last >= 2);  // norm, head and loss after them
  // Make every layer outside the blocks as costly as the blocks together: a per-layer balance would isolate them.
  std::vector<double> cost(shard.layers.size(), 1.0);
  for (std::size_t l = 0; l < cost.size(); ++l)
    if (!shard.layers[l].in_block) cost[l] = 100.0;
  for (std::int64_t p : {2, 4, 8}) {
    INFO("p " << p);
    const std::vector<std::size_t> bounds = split_chunks(cost, shard, p, 1, false);
    for (std::size_t b : bounds) {
      CHECK_FALSE((b > 0 && b < first_block));
      CHECK_FALSE((b > after_last && b < shard.layers.size()));
    }
  }
}
