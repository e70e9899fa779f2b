// parallel.pipeline_layout (docs/PREDICTION.md, "Pipeline layout"): Megatron-Core's pipeline_model_parallel_layout
// string, its grammar and checks, and the chunk bounds it fixes in place of the balanced or even split.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/parallel.hpp"
#include "request/options.hpp"

using namespace prenet;
using testutil::call;
using testutil::gpt_config;
using testutil::gpt_shard;
using testutil::require_error;

namespace {

/// The first layer of each block instance of `shard`, then the first layer after the last block.
std::vector<std::size_t> block_starts(const ShardedNetwork& shard) {
  std::vector<std::size_t> starts;
  std::size_t after = 0;
  for (std::size_t l = 0; l < shard.layers.size(); ++l) {
    const ShardLayer& sl = shard.layers[l];
    if (!sl.in_block) continue;
    if (!(l > 0 && shard.layers[l - 1].in_block && shard.layers[l - 1].block == sl.block)) starts.push_back(l);
    after = l + 1;
  }
  starts.push_back(after);
  return starts;
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

/// The parse error of `text` over `pipeline` stages: parallel.pipeline_layout, with `message` in it.
void require_parse_error(const std::string& text, std::int64_t pipeline, const std::string& message) {
  INFO(text << " over " << pipeline);
  try {
    parse_pipeline_layout(text, pipeline);
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(e.field() == "parallel.pipeline_layout");
    CHECK_THAT(e.what(), Catch::Contains(message));
  }
}

}  // namespace

TEST_CASE("layout strings unroll as Megatron-Core's parse_str_to_list does", "[pipeline_layout]") {
  // DeepSeek-V3's layout in the Megatron-Bridge recipes: 16 chunks.
  PipelineLayout ds = parse_pipeline_layout("Et*4|(t*4|)*14tmL", 2);
  REQUIRE(ds.chunks.size() == 16);
  CHECK(ds.chunks.front() == "Etttt");
  for (std::size_t j = 1; j < 15; ++j) CHECK(ds.chunks[j] == "tttt");
  CHECK(ds.chunks.back() == "tmL");
  CHECK(ds.text == "Et*4|(t*4|)*14tmL");
  // The docstring's example, commas cosmetic: [["E","t","t","t"]] + [["t","t"]] * 29 + [["m"], ["L"]].
  PipelineLayout doc = parse_pipeline_layout("Ettt|(tt|)*29,m|L", 16);
  REQUIRE(doc.chunks.size() == 32);
  CHECK(doc.chunks[0] == "Ettt");
  CHECK(doc.chunks[29] == "tt");
  CHECK(doc.chunks[30] == "m");
  CHECK(doc.chunks[31] == "L");
  // Megatron-Core's tests (pipeline_parallel/test_pipeline_layout.py): an MTP chunk before the loss's.
  PipelineLayout mtp = parse_pipeline_layout("E|t*3|(t|)*3tt|m|L", 4);
  REQUIRE(mtp.chunks.size() == 8);
  CHECK(mtp.chunks[5] == "tt");
  CHECK(mtp.chunks[6] == "m");
  // Empty chunks are chunks; a repeat count of several digits, and of zero.
  PipelineLayout empty = parse_pipeline_layout("Et*12||t*0L", 3);
  REQUIRE(empty.chunks.size() == 3);
  CHECK(empty.chunks[0] == std::string("E") + std::string(12, 't'));
  CHECK(empty.chunks[1].empty());
  CHECK(empty.chunks[2] == "L");
}

TEST_CASE("layout strings Megatron-Core refuses are refused, naming parallel.pipeline_layout", "[pipeline_layout]") {
  require_parse_error("Et*4|tx|tL", 3, "'x' is no layer");
  require_parse_error("Et*4|(tt)|tL", 3, "'(' is no layer");  // a group without a count
  require_parse_error("((t)*2)*2EL", 1, "is no layer");       // nested groups leave a parenthesis
  require_parse_error("Et t|tL", 2, "' ' is no layer");
  require_parse_error("tE|tL", 2, "first layer must be the embedding");
  require_parse_error("Et|tLt", 2, "last layer must be the loss");
  require_parse_error("Et|EtL", 2, "'E' must appear exactly once");
  require_parse_error("EtL|tL", 2, "'L' must appear exactly once");
  require_parse_error("Etm|tL", 2, "'t' must come before");
  require_parse_error("Et|tL", 3, "2 chunks do not split over pipeline 3");
  // MTP only in a stage's last virtual stage, and all of it in one chunk.
  require_parse_error("Et|tm||L", 2, "outside the last virtual stage");
  require_parse_error("Et|t|tm|mL", 2, "in one chunk");
  require_parse_error("Et*99999999L", 1, "exceeds");
  require_parse_error("E(t*9|)*9999L", 1, "unrolls to more than");
}

TEST_CASE("the layout fixes the chunk bounds exactly as the string says", "[pipeline_layout]") {
  const ShardedNetwork shard = gpt_shard(8);
  const std::vector<std::size_t> b = block_starts(shard);  // 8 starts, then after the last block
  REQUIRE(b.size() == 9);
  const std::vector<double> cost(shard.layers.size(), 1.0);
  const std::size_t n = shard.layers.size();
  // 1, 3, 2 and 2 blocks over 4 stages: the embedding with the first, the final norm, head and loss with the last.
  ParallelConfig cfg =
      parse_parallel({{"gpus", 4}, {"pipeline", 4}, {"micro_batches", 4}, {"pipeline_layout", "Et|ttt|tt|ttL"}}, 16);
  CHECK(cfg.virtual_stages == 1);
  CHECK(chunk_bounds(cost, shard, cfg) == std::vector<std::size_t>{0, b[1], b[4], b[6], n});
  // 8 chunks over pipeline 2: virtual_stages 4 derived; an empty chunk is a chunk of no layers.
  cfg = parse_parallel({{"gpus", 2}, {"pipeline", 2}, {"micro_batches", 4}, {"pipeline_layout", "E|t*3|t||(t|)*3tL"}},
                       16);
  CHECK(cfg.virtual_stages == 4);
  CHECK(chunk_bounds(cost, shard, cfg) == std::vector<std::size_t>{0, b[0], b[3], b[4], b[4], b[5], b[6], b[7], n});
  // Megatron-Core builds the embedding on the first chunk and the loss on the last whatever chunk 'E' and 'L' are in.
  cfg = parse_parallel({{"gpus", 2}, {"pipeline", 2}, {"micro_batches", 2}, {"pipeline_layout", "|Et*8L"}}, 16);
  CHECK(chunk_bounds(cost, shard, cfg) == std::vector<std::size_t>{0, b[0], n});
  // A layout at pipeline 1 is one chunk: the whole network, checked all the same.
  cfg = parse_parallel({{"pipeline_layout", "Et*8L"}}, 16);
  CHECK(chunk_bounds(cost, shard, cfg) == std::vector<std::size_t>{0, n});
  cfg = parse_parallel({{"pipeline_layout", "Et*7L"}}, 16);
  CHECK_THROWS_WITH(chunk_bounds(cost, shard, cfg), Catch::Contains("places 7 decoder blocks 't'; the network has 8"));
}

TEST_CASE("a layout equal to the even split gives the same step and memory as that split", "[pipeline_layout]") {
  // Interleaved: 8 blocks over 2 x 2 chunks of 2 (split_chunks' even split).
  const Json even = {{"gpus", 2}, {"pipeline", 2}, {"virtual_stages", 2}, {"micro_batches", 4}};
  Json laid = even;
  laid["pipeline_layout"] = "Ett|tt|tt|ttL";
  Json a = call(request(8, even)), b = call(request(8, laid));
  INFO(a.dump() << "\n" << b.dump());
  REQUIRE_FALSE(a.contains("error"));
  REQUIRE_FALSE(b.contains("error"));
  CHECK(a["results"][0]["step_ms"] == b["results"][0]["step_ms"]);
  CHECK(a["results"][0]["memory_gb"] == b["results"][0]["memory_gb"]);
  CHECK(b["results"][0]["parallel"]["pipeline_layout"] == "Ett|tt|tt|ttL");
  CHECK_FALSE(a["results"][0]["parallel"].contains("pipeline_layout"));
  // Megatron's embedding-and-loss split of 6 blocks over 4 stages: (6 + 2) / 4 = 2, the first and last one block.
  const Json el = {{"gpus", 4}, {"pipeline", 4}, {"micro_batches", 4}, {"pipeline_embedding_loss", true}};
  Json same = {{"gpus", 4}, {"pipeline", 4}, {"micro_batches", 4}, {"pipeline_layout", "Et|tt|tt|tL"}};
  a = call(request(6, el));
  b = call(request(6, same));
  REQUIRE_FALSE(a.contains("error"));
  REQUIRE_FALSE(b.contains("error"));
  CHECK(a["results"][0]["step_ms"] == b["results"][0]["step_ms"]);
  CHECK(a["results"][0]["memory_gb"] == b["results"][0]["memory_gb"]);
  // A different layout of the same degrees is a different step: the layout is what splits.
  same["pipeline_layout"] = "Etttt|t|t|L";
  Json c = call(request(6, same));
  REQUIRE_FALSE(c.contains("error"));
  CHECK(c["results"][0]["step_ms"].get<double>() > b["results"][0]["step_ms"].get<double>());
}

TEST_CASE("a layout that does not fit the network or the degrees is refused, naming the field", "[pipeline_layout]") {
  const Json p4 = {{"gpus", 4}, {"pipeline", 4}, {"micro_batches", 4}};
  auto with = [](Json parallel, const std::string& layout) {
    parallel["pipeline_layout"] = layout;
    return parallel;
  };
  require_error(request(8, with(p4, "Et|ttt|tt|tL")), "parallel.pipeline_layout",
                "places 7 decoder blocks 't'; the network has 8");
  require_error(request(8, with(p4, "Et|ttt|tt|ttmL")), "parallel.pipeline_layout",
                "places 1 multi-token prediction layers 'm'; training.mtp_layers gives 0");
  require_error(request(8, with(p4, "Et|ttt|tt|tt|L")), "parallel.pipeline_layout", "5 chunks do not split over");
  Json v = with(p4, "Et|t|t|t|t|t|t|tL");  // 8 chunks: virtual stages 2, not the 3 given
  v["virtual_stages"] = 3;
  v["micro_batches"] = 8;
  require_error(request(8, v), "parallel.pipeline_layout", "are 2 virtual stages of pipeline 4; virtual_stages is 3");
  Json el = with(p4, "Et|ttt|tt|ttL");
  el["pipeline_embedding_loss"] = true;
  require_error(request(8, el), "parallel.pipeline_layout", "beside pipeline_embedding_loss");
  require_error(request(8, {{"pipeline_layout", "Et*4|t*4L"}}), "parallel.pipeline_layout", "need a pipeline");
  require_error(request(8, {{"pipeline_layout", ""}}), "parallel.pipeline_layout", "non-empty string");
  require_error(request(8, {{"pipeline_layout", 4}}), "parallel.pipeline_layout", "non-empty string");
  // The interleaved schedule's own check applies to the derived virtual stages.
  require_error(
      request(8, {{"gpus", 4}, {"pipeline", 4}, {"micro_batches", 2}, {"pipeline_layout", "Et|t|t|t|t|t|t|tL"}}),
      "parallel.micro_batches", "multiple of pipeline 4");
}

TEST_CASE("the catalogue publishes the layout row as text", "[pipeline_layout][options]") {
  const TrainingOption& row = parallel_option("pipeline_layout");
  CHECK(row.kind == OptionKind::Text);
  const Json catalog = catalog_document();
  bool found = false;
  for (const Json& r : catalog.at("parallel_options")) {
    if (r.at("key") != "pipeline_layout") continue;
    found = true;
    CHECK(r.at("kind") == "text");
    CHECK(r.at("field") == "parallel.pipeline_layout");
    CHECK(r.at("default").is_null());
  }
  CHECK(found);
}
