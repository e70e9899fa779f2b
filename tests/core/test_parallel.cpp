// Training on more than one GPU (docs/PREDICTION.md, "More than one GPU"): the `parallel` section,
// Megatron sharding, the 1F1B pipeline, collectives, and the response identities.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/parallel.hpp"

using namespace prenet;
using testutil::call;
using testutil::d;
using testutil::gpt_config;

namespace {

Json request(const Json& parallel, const Json& training = {{"batch_size", 16}, {"seq_len", 256}}) {
  Json r = {{"model", {{"hf_config", gpt_config()}}},
            {"training", training},
            {"hardware", {"a100-sxm4-80gb", "h100-sxm"}},
            {"options", {{"per_layer", false}}}};
  if (!parallel.is_null()) r["parallel"] = parallel;
  return r;
}

void require_error(const Json& r, const std::string& field) {
  Json out = call(r);
  INFO(out.dump());
  REQUIRE(out.contains("error"));
  CHECK(out["error"]["field"] == field);
}

}  // namespace

TEST_CASE("parallel degrees and micro-batches are derived and checked against the global batch", "[parallel]") {
  auto parse = [](const Json& p, std::optional<std::int64_t> batch) { return parse_parallel(p, batch); };
  ParallelConfig c = parse({{"gpus", 16}, {"tensor", 2}, {"pipeline", 2}}, 64);
  CHECK(c.data == 4);
  CHECK(c.micro_batch_size == 16);
  CHECK(c.micro_batches == 1);
  c = parse({{"data", 2}, {"micro_batch_size", 4}}, 64);
  CHECK(c.micro_batches == 8);
  CHECK(c.gpus == 2);
  c = parse({{"data", 2}, {"micro_batches", 4}}, 64);
  CHECK(c.micro_batch_size == 8);
  c = parse({{"micro_batch_size", 2}, {"micro_batches", 3}, {"gpus", 4}}, std::nullopt);
  CHECK(c.data == 4);
  c = parse({{"micro_batch_size", 2}, {"micro_batches", 3}}, 24);
  CHECK(c.data == 4);
  c = parse({{"fsdp", true}}, 8);
  CHECK(c.zero_stage == 3);

  require_error(request({{"gpus", 6}, {"tensor", 4}}), "parallel.gpus");
  require_error(request({{"gpus", 8}, {"data", 4}}), "parallel.gpus");
  require_error(request({{"data", 3}}), "parallel.data");
  require_error(request({{"data", 2}, {"micro_batch_size", 3}}), "parallel.micro_batch_size");
  require_error(request({{"data", 2}, {"micro_batch_size", 2}, {"micro_batches", 2}}), "parallel.micro_batch_size");
  require_error(request({{"data", 2}, {"micro_batches", 3}}), "parallel.micro_batches");
  require_error(request({{"zero_stage", 4}}), "parallel.zero_stage");
  require_error(request({{"zero_stage", 2}, {"fsdp", true}}), "parallel.fsdp");
  require_error(request({{"recompute", "some"}}), "parallel.recompute");
  require_error(request({{"tensor", 3}}), "parallel.tensor");  // 8 heads
  require_error(request({{"pipeline", 10000}}), "parallel.pipeline");
  require_error(request({{"intra_node", {{"bandwidth_gbs", -1}}}}), "parallel.intra_node.bandwidth_gbs");
  require_error(request({{"inter_node", {{"speed", 1}}}}), "parallel.inter_node.speed");
  require_error(request({{"gpus", 0}}), "parallel.gpus");
  require_error(request({{"bogus", 1}}), "parallel.bogus");
}

TEST_CASE("the step is the sum of its parts and one GPU matches the single-GPU prediction", "[parallel]") {
  Json single = call(request(nullptr));
  Json one = call(request(Json::object()));
  REQUIRE(one.contains("results"));
  for (std::size_t h = 0; h < 2; ++h) {
    const Json& a = single["results"][h];
    const Json& b = one["results"][h];
    CHECK(b["step_ms"].get<double>() == Approx(a["step_ms"].get<double>()).epsilon(1e-5));
    CHECK(b["memory_gb"].get<double>() == Approx(a["memory_gb"].get<double>()).epsilon(1e-5));
    CHECK(b["parallel"]["bubble_ms"] == 0);
  }
  for (const Json& par : {Json{{"data", 4}}, Json{{"tensor", 4}}, Json{{"pipeline", 4}, {"micro_batches", 8}},
                          Json{{"data", 2},
                               {"tensor", 2},
                               {"pipeline", 2},
                               {"micro_batches", 4},
                               {"zero_stage", 3},
                               {"recompute", "full"}},
                          Json{{"data", 16}, {"zero_stage", 1}, {"gpus_per_node", 4}}}) {
    Json out = call(request(par));
    INFO(par.dump() << " -> " << out.dump().substr(0, 400));
    REQUIRE(out.contains("results"));
    for (const Json& r : out["results"]) {
      const Json& p = r["parallel"];
      const Json& c = p["communication_ms"];
      double sum = r["forward_ms"].get<double>() + r["backward_ms"].get<double>() + r["optimizer_ms"].get<double>() +
                   c["data"].get<double>() + c["tensor"].get<double>() + c["pipeline"].get<double>() +
                   c["zero"].get<double>() + p["bubble_ms"].get<double>();
      CHECK(r["step_ms"].get<double>() == sum);
      CHECK(p["compute_ms"].get<double>() ==
            r["forward_ms"].get<double>() + r["backward_ms"].get<double>() + r["optimizer_ms"].get<double>());
      CHECK(r["cost_usd"].get<double>() == Approx(r["total_s"].get<double>() / 3600 *
                                                  r["price_per_hour_usd"].get<double>() * p["gpus"].get<double>()));
    }
  }
}

TEST_CASE("tensor parallelism shards the matrices of attention and MLP the Megatron way", "[parallel]") {
  TrainingConfig tr;
  tr.seq_len = 256;
  Network net = resolve_model({{"hf_config", gpt_config()}}, tr);
  ShardedNetwork s1 = shard_network(net, 1), s4 = shard_network(net, 4);
  StepWork w1 = step_work(s1.net, 2, KernelContext(Precision::BF16), Optimizer::Adam);
  StepWork w4 = step_work(s4.net, 2, KernelContext(Precision::BF16), Optimizer::Adam);
  int attention = 0, mlp_col = 0, mlp_row = 0;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const Layer& layer = net.layers[l];
    double f1 = testutil::matmul_flops(w1, l, Phase::Forward), f4 = testutil::matmul_flops(w4, l, Phase::Forward);
    if (layer.type == LayerType::Attention) {
      ++attention;
      CHECK(f4 == Approx(f1 / 4));
      CHECK(s4.layers[l].forward_allreduces == 1);
      CHECK(s4.layers[l].backward_allreduces == 1);
      // QKV and output weights split; the output bias stays whole.
      CHECK(d(s4.net.layers[l].parameters) == Approx((d(layer.parameters) - 512) / 4 + 512));
    } else if (layer.type == LayerType::Dense && layer.name.find("mlp_up") != std::string::npos) {
      ++mlp_col;
      CHECK(f4 == Approx(f1 / 4));
      CHECK(s4.net.layers[l].output_shape.back() == 2048 / 4);
      CHECK(s4.layers[l].backward_allreduces == 1);
    } else if (layer.type == LayerType::Dense && layer.name.find("mlp_down") != std::string::npos) {
      ++mlp_row;
      CHECK(f4 == Approx(f1 / 4));
      CHECK(s4.layers[l].forward_allreduces == 1);
      CHECK(d(s4.net.layers[l].parameters) == Approx((d(layer.parameters) - 512) / 4 + 512));
    } else if (layer.type == LayerType::LayerNorm) {
      CHECK(s4.net.layers[l].parameters == layer.parameters);  // replicated
      CHECK(f4 == f1);
    } else if (layer.name == "lm_head") {
      CHECK(s4.net.layers[l].output_shape.back() == 2000);  // vocabulary-parallel
    }
  }
  CHECK(attention == 8);
  CHECK(mlp_col == 8);
  CHECK(mlp_row == 8);
}

TEST_CASE("ring collectives cost 2(n-1)/n of the data through each link plus latency", "[parallel]") {
  Link l{"nvlink", 100, 0};
  CHECK(allreduce_ms(1e9, 4, l) == Approx(2.0 * 3 / 4 * 1e9 / (100e9 * kLinkEfficiency) * 1e3));
  CHECK(allgather_ms(1e9, 4, l) == Approx(allreduce_ms(1e9, 4, l) / 2));
  CHECK(allreduce_ms(1e9, 1, l) == 0);
  Link slow{"ib", 100, 10};
  CHECK(allreduce_ms(8, 2, slow) == Approx(2 * 10e-3).epsilon(1e-3));          // latency-bound: 2 hops
  CHECK(allreduce_ms(8, 1024, slow) == Approx(2 * 10 * 10e-3).epsilon(1e-3));  // tree: 2 log2 n hops
}

TEST_CASE("1F1B: the bubble is (p-1)/(m+p-1) of the step for balanced stages", "[parallel]") {
  TrainingConfig tr;
  tr.seq_len = 256;
  Network net = resolve_model({{"hf_config", gpt_config()}}, tr);
  ShardedNetwork shard = shard_network(net, 1);
  // Equal layers (no communication: one accelerator per stage on a very fast link).
  std::vector<std::array<double, 3>> ms(net.layers.size(), std::array<double, 3>{1.0, 2.0, 0.0});
  for (std::int64_t p : {2, 4}) {
    for (std::int64_t m : {1, 4, 16}) {
      if (net.layers.size() % static_cast<std::size_t>(p) != 0) continue;
      ParallelConfig cfg;
      cfg.pipeline = p;
      cfg.gpus = p;
      cfg.micro_batches = m;
      Fabric fabric;
      fabric.intra = Link{"x", 1e9, 0};
      ParallelTiming t = compose_parallel(ms, shard, cfg, fabric, Precision::BF16);
      double busy = t.forward_ms + t.backward_ms + t.bubble_ms;
      INFO("p=" << p << " m=" << m);
      CHECK(t.bubble_ms / busy == Approx(d(p - 1) / d(m + p - 1)));
      CHECK(t.forward_ms + t.backward_ms == Approx(d(m) * 3.0 * d(net.layers.size()) / d(p)));
    }
  }
}

TEST_CASE("split_stages balances contiguous stages", "[parallel]") {
  auto b = split_stages({1, 1, 1, 1, 1, 1, 1, 1}, 4);
  CHECK(b == std::vector<std::size_t>{0, 2, 4, 6, 8});
  b = split_stages({4, 1, 1, 1, 1}, 2);
  CHECK(b == std::vector<std::size_t>{0, 1, 5});
  b = split_stages({0, 0, 0, 5}, 4);
  CHECK(b.size() == 5);
  for (std::size_t i = 0; i + 1 < b.size(); ++i) CHECK(b[i] < b[i + 1]);
  CHECK_THROWS_AS(split_stages({1, 1}, 3), InputError);
}

TEST_CASE("pipeline stages are cut between transformer blocks, never inside one", "[parallel]") {
  TrainingConfig tr;
  tr.seq_len = 256;
  Network net = resolve_model({{"hf_config", gpt_config()}}, tr);
  ShardedNetwork shard = shard_network(net, 1);
  std::vector<double> cost(net.layers.size(), 1.0);
  for (std::int64_t p : {2, 3, 4, 8}) {
    auto bounds = split_stages(cost, shard, p);
    INFO("stages " << p);
    REQUIRE(bounds.size() == static_cast<std::size_t>(p) + 1);
    for (std::size_t s = 1; s + 1 < bounds.size(); ++s) {
      const std::size_t cut = bounds[s];
      REQUIRE(cut > bounds[s - 1]);
      // The first layer of a stage starts a block (or is outside blocks): it does not continue the block before.
      const ShardLayer& here = shard.layers[cut];
      const ShardLayer& prev = shard.layers[cut - 1];
      CHECK_FALSE((here.in_block && prev.in_block && here.block == prev.block));
    }
  }
  // With more stages than blocks and other layers, the split goes layer by layer.
  CHECK(split_stages(cost, shard, 40).size() == 41);
}

TEST_CASE("data-parallel gradients hide behind backward except the last bucket", "[parallel]") {
  TrainingConfig tr;
  tr.seq_len = 256;
  Network net = resolve_model({{"hf_config", gpt_config()}}, tr);
  ShardedNetwork shard = shard_network(net, 1);
  ParallelConfig cfg;
  cfg.data = 8;
  cfg.gpus = 8;
  Fabric fabric;
  fabric.intra = Link{"nvlink", 100, 0};
  double params = 0;
  for (const Layer& l : shard.net.layers) params += d(l.parameters);
  const double all = allreduce_ms(params * 2, 8, fabric.intra);
  const double bucket = allreduce_ms(kGradientBucketBytes, 8, fabric.intra);
  REQUIRE(all > 2 * bucket);
  // Long backward: only the last bucket is exposed.
  std::vector<std::array<double, 3>> slow(net.layers.size(), std::array<double, 3>{1.0, 1000.0, 0.0});
  CHECK(compose_parallel(slow, shard, cfg, fabric, Precision::BF16).data_ms == Approx(bucket));
  // No backward to hide behind: the whole all-reduce is exposed.
  std::vector<std::array<double, 3>> none(net.layers.size(), std::array<double, 3>{1.0, 0.0, 0.0});
  CHECK(compose_parallel(none, shard, cfg, fabric, Precision::BF16).data_ms == Approx(all));
}

TEST_CASE("recomputation adds the recomputed forward to backward", "[parallel]") {
  TrainingConfig tr;
  tr.seq_len = 256;
  Network net = resolve_model({{"hf_config", gpt_config()}}, tr);
  ShardedNetwork shard = shard_network(net, 2);
  StepWork base = step_work(shard.net, 2, KernelContext(Precision::BF16), Optimizer::Adam);
  StepWork full = base, selective = base;
  add_recompute_kernels(full, shard, Recompute::Full);
  add_recompute_kernels(selective, shard, Recompute::Selective);
  double block_forward = 0, attention_core = 0;
  for (const Kernel& k : base.kernels) {
    if (k.phase != Phase::Forward) continue;
    if (shard.layers[static_cast<std::size_t>(k.layer)].in_block) block_forward += k.flops;
    if (shard.net.layers[static_cast<std::size_t>(k.layer)].type == LayerType::Attention &&
        k.cls != KernelClass::Gemm) {
      attention_core += k.flops;
    }
  }
  CHECK(full.flops[1] == Approx(base.flops[1] + block_forward));
  CHECK(selective.flops[1] == Approx(base.flops[1] + attention_core));
  CHECK(attention_core > 0);
  CHECK(attention_core < block_forward);
  CHECK(full.flops[0] == base.flops[0]);
}

TEST_CASE("a model that does not fit gets the smallest changes that would make it fit", "[parallel]") {
  Json r = {{"model", {{"preset", "llama-2-7b"}}},
            {"training", {{"batch_size", 8}, {"seq_len", 4096}, {"precision", "bf16"}, {"optimizer", "adamw"}}},
            {"hardware", {"a100-sxm4-40gb"}},
            {"options", {{"per_layer", false}}},
            {"parallel", {{"data", 8}}}};
  Json out = call(r);
  REQUIRE(out.contains("results"));
  const Json& res = out["results"][0];
  CHECK_FALSE(res["fits"].get<bool>());
  REQUIRE(res.contains("memory_advice"));
  REQUIRE(res["memory_advice"].size() >= 1);
  for (const Json& a : res["memory_advice"]) {
    CHECK(a["memory_gb"].get<double>() <= 40);
    // Applying the change gives that memory and a result that fits.
    Json changed = r;
    for (auto& [k, v] : a["change"].items()) changed["parallel"][k] = v;
    if (changed["parallel"].contains("gpus")) changed["parallel"].erase("data");
    if (changed["parallel"].contains("tensor") || changed["parallel"].contains("pipeline")) {
      changed["parallel"]["data"] = 8;
      changed["parallel"].erase("gpus");
    }
    Json again = call(changed);
    INFO(changed["parallel"].dump() << " " << again.dump().substr(0, 300));
    REQUIRE(again.contains("results"));
    CHECK(again["results"][0]["fits"].get<bool>());
    CHECK(again["results"][0]["memory_gb"].get<double>() == Approx(a["memory_gb"].get<double>()).epsilon(1e-4));
  }
  Json small = call(request({{"data", 2}}));
  CHECK_FALSE(small["results"][0].contains("memory_advice"));
}

TEST_CASE("the catalogue gives every accelerator a fabric", "[parallel]") {
  for (const Accelerator& acc : hardware_catalogue()) {
    Fabric f = resolve_fabric(acc, ParallelConfig{});
    INFO(acc.id);
    CHECK(f.intra.bandwidth_gbs > 0);
    CHECK(f.inter.bandwidth_gbs > 0);
    CHECK(f.intra.latency_us > 0);
    CHECK(f.inter.latency_us > 0);
    CHECK(f.gpus_per_node >= 1);
    CHECK(acc.record["inter_node"].contains("source"));
  }
  ParallelConfig cfg;
  cfg.intra_node.bandwidth_gbs = 123;
  cfg.gpus_per_node = 4;
  Fabric f = resolve_fabric(*find_hardware("h100-sxm"), cfg);
  CHECK(f.intra.bandwidth_gbs == 123);
  CHECK(f.intra.kind == "nvlink4");
  CHECK(f.gpus_per_node == 4);
}

TEST_CASE("sequence parallelism splits the replicated layers by the sequence and keeps the tensor traffic",
          "[parallel]") {
  TrainingConfig tr;
  tr.seq_len = 256;
  Network net = resolve_model({{"hf_config", gpt_config()}}, tr);
  for (std::int64_t t : {2, 4}) {
    ShardedNetwork off = shard_network(net, t), on = shard_network(net, t, true);
    StepWork w_off = step_work(off.net, 2, KernelContext(Precision::BF16), Optimizer::Adam);
    StepWork w_on = step_work(on.net, 2, KernelContext(Precision::BF16), Optimizer::Adam);
    int split = 0;
    for (std::size_t l = 0; l < net.layers.size(); ++l) {
      const Layer& layer = net.layers[l];
      INFO("tensor " << t << ", layer " << layer.name);
      // The same collectives of the same volume (reduce-scatter + all-gather = one all-reduce) and parameters.
      CHECK(on.layers[l].forward_allreduces == off.layers[l].forward_allreduces);
      CHECK(on.layers[l].backward_allreduces == off.layers[l].backward_allreduces);
      CHECK(on.layers[l].allreduce_bytes_per_sample == off.layers[l].allreduce_bytes_per_sample);
      CHECK(on.net.layers[l].parameters == off.net.layers[l].parameters);
      const auto& f_on = w_on.layers[l].flops;
      const auto& f_off = w_off.layers[l].flops;
      const bool token_stream =
          layer.type == LayerType::LayerNorm || layer.type == LayerType::Dropout || layer.type == LayerType::Add;
      CHECK(on.layers[l].sequence_split == token_stream);
      if (token_stream) {
        ++split;
        CHECK(on.net.layers[l].output_shape.front() == 256 / t);
        CHECK(f_on[0] == Approx(f_off[0] / d(t)));
        CHECK(f_on[1] == Approx(f_off[1] / d(t)));
        CHECK(w_on.layers[l].saved_activation_bytes == Approx(w_off.layers[l].saved_activation_bytes / d(t)));
      } else {
        // Attention, the MLP's matrices and the chain between them, embeddings and the head keep their work.
        CHECK(f_on[0] == f_off[0]);
        CHECK(f_on[1] == f_off[1]);
        CHECK(on.net.layers[l].output_shape == off.net.layers[l].output_shape);
      }
      const bool gathers = layer.type == LayerType::Attention || layer.name.find("mlp_up") != std::string::npos ||
                           layer.name == "lm_head";
      const bool scatters =
          layer.type == LayerType::Attention || layer.name.find("mlp_down") != std::string::npos || layer.name == "wte";
      CHECK(on.layers[l].saved_input_split == (gathers ? t : 1));
      CHECK(on.layers[l].output_split == (scatters ? t : 1));
    }
    CHECK(split == 2 + 8 * 6 + 1);  // embedding add and dropout; 2 norms, 2 dropouts, 2 adds per block; ln_f
  }
  // Tensor degree 1: nothing to split.
  ShardedNetwork one = shard_network(net, 1, true);
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    CHECK(one.net.layers[l].output_shape == net.layers[l].output_shape);
    CHECK_FALSE(one.layers[l].sequence_split);
  }
}

TEST_CASE("sequence parallelism: same tensor traffic, less compute and memory, smaller pipeline sends", "[parallel]") {
  Json base = {{"tensor", 4}, {"pipeline", 2}, {"micro_batches", 4}};
  Json with = base;
  with["sequence_parallel"] = true;
  // The device's compute: CUDA graphs, so the host's issue time (the same with and without) sets no pass.
  const Json graphs = {{"batch_size", 16}, {"seq_len", 256}, {"cuda_graphs", true}};
  Json off = call(request(base, graphs)), on = call(request(with, graphs));
  REQUIRE(off.contains("results"));
  REQUIRE(on.contains("results"));
  for (std::size_t h = 0; h < 2; ++h) {
    const Json& a = off["results"][h];
    const Json& b = on["results"][h];
    CHECK(a["parallel"]["sequence_parallel"] == false);
    CHECK(b["parallel"]["sequence_parallel"] == true);
    CHECK(b["parallel"]["communication_ms"]["tensor"].get<double>() ==
          Approx(a["parallel"]["communication_ms"]["tensor"].get<double>()));
    CHECK(b["parallel"]["compute_ms"].get<double>() < a["parallel"]["compute_ms"].get<double>());
    CHECK(b["memory"]["activations_gb"].get<double>() < a["memory"]["activations_gb"].get<double>());
    CHECK(b["parallel"]["communication_ms"]["pipeline"].get<double>() <
          a["parallel"]["communication_ms"]["pipeline"].get<double>());
  }

  // The activation sent between stages is this GPU's slice of the sequence (Megatron's scatter-gather).
  TrainingConfig tr;
  tr.seq_len = 256;
  Network net = resolve_model({{"hf_config", gpt_config()}}, tr);
  ShardedNetwork s_off = shard_network(net, 4), s_on = shard_network(net, 4, true);
  std::vector<std::array<double, 3>> layer_ms(net.layers.size(), {0.0, 0.0, 0.0});
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    if (net.layers[l].name.find(".stream") != std::string::npos) layer_ms[l] = {1.0, 2.0, 0.0};
  }
  ParallelConfig cfg;
  cfg.tensor = 4;
  cfg.pipeline = 2;
  cfg.gpus = 8;
  const Fabric fabric = resolve_fabric(*find_hardware("h100-sxm"), cfg);
  StagePlan p_off = plan_stages(layer_ms, s_off, cfg, fabric, Precision::BF16);
  cfg.sequence_parallel = true;
  StagePlan p_on = plan_stages(layer_ms, s_on, cfg, fabric, Precision::BF16);
  REQUIRE(p_on.bounds == p_off.bounds);
  REQUIRE(s_on.layers[p_on.bounds[1] - 1].sequence_split);
  CHECK(p_on.boundary_elements * 4 == p_off.boundary_elements);
  CHECK(p_on.tensor == p_off.tensor);
}

TEST_CASE("sequence parallelism is off by default and checked", "[parallel]") {
  // Off or absent: the same response (the echo aside, the numbers are those of tensor parallelism alone).
  for (const Json& par :
       {Json{{"tensor", 2}}, Json{{"tensor", 4}, {"pipeline", 2}, {"recompute", "selective"}}, Json{{"data", 2}}}) {
    Json off = par;
    off["sequence_parallel"] = false;
    CHECK(call(request(par)).dump() == call(request(off)).dump());
  }
  // Tensor degree 1: a no-op but for the echo.
  Json one = call(request({{"data", 2}})), one_sp = call(request({{"data", 2}, {"sequence_parallel", true}}));
  REQUIRE(one_sp.contains("results"));
  CHECK(one_sp["results"][0]["parallel"]["sequence_parallel"] == true);
  one_sp["results"][0]["parallel"]["sequence_parallel"] = false;
  one_sp["results"][1]["parallel"]["sequence_parallel"] = false;
  CHECK(one.dump() == one_sp.dump());

  require_error(request({{"tensor", 2}, {"sequence_parallel", "yes"}}), "parallel.sequence_parallel");
  require_error(request({{"tensor", 2}, {"sequence_parallel", 1}}), "parallel.sequence_parallel");
  // 4 does not divide a sequence of 250 tokens; without sequence parallelism the layout is fine.
  Json odd = {{"batch_size", 16}, {"seq_len", 250}};
  require_error(request({{"tensor", 4}, {"sequence_parallel", true}}, odd), "parallel.sequence_parallel");
  Json out = call(request({{"tensor", 4}, {"sequence_parallel", true}}, odd));
  CHECK(out["error"]["message"].get<std::string>().find("250") != std::string::npos);
  CHECK(call(request({{"tensor", 4}}, odd)).contains("results"));
  CHECK(call(request({{"tensor", 2}, {"sequence_parallel", true}}, odd)).contains("results"));
}

TEST_CASE("plan mode lays out tensor parallelism with sequence parallelism where the sequence splits", "[parallel]") {
  auto plan = [](std::int64_t seq) {
    Json r = {{"model", {{"hf_config", gpt_config()}}},
              {"training", {{"batch_size", 16}, {"seq_len", seq}, {"precision", "bf16"}}},
              {"hardware", {"h100-sxm"}},
              {"plan", {{"max_gpus", 8}, {"top", 100}}}};
    return Json::parse(plan_json(r.dump()));
  };
  for (std::int64_t seq : {256, 250}) {
    Json out = plan(seq);
    REQUIRE(out.contains("results"));
    int tensor_layouts = 0;
    for (const Json& l : out["results"][0]["by_time"]) {
      const std::int64_t t = l["tensor"].get<std::int64_t>();
      tensor_layouts += t > 1;
      // 250 splits over 2 but not over 4 or 8.
      const bool expect = t > 1 && seq % t == 0;
      CHECK(l["sequence_parallel"].get<bool>() == expect);
    }
    CHECK(tensor_layouts > 0);
  }
}

TEST_CASE("plan mode echoes the request's kernels and applies them: Megatron's keep less, so more layouts fit",
          "[parallel][plan]") {
  auto plan = [](const std::string& kernels) {
    Json r = {{"model", {{"preset", "llama-2-7b"}}},
              {"training", {{"batch_size", 32}, {"precision", "bf16"}, {"kernels", kernels}}},
              {"hardware", {"h100-sxm"}},
              {"plan", {{"max_gpus", 16}, {"tokens", 1e9}}}};
    return Json::parse(plan_json(r.dump()));
  };
  Json pytorch = plan("pytorch"), megatron = plan("megatron");
  REQUIRE(pytorch.contains("results"));
  REQUIRE(megatron.contains("results"));
  CHECK(pytorch["training"]["kernels"] == "pytorch");
  CHECK(megatron["training"]["kernels"] == "megatron");
  CHECK(megatron["training"]["attention"] == "eager");
  CHECK(megatron["training"]["optimizer_impl"] == "fused");
  CHECK(megatron["results"][0]["layouts_fitting"].get<int>() > pytorch["results"][0]["layouts_fitting"].get<int>());
}

TEST_CASE("a tensor-parallel layout that does not fit is advised sequence parallelism when that suffices",
          "[parallel]") {
  // Megatron's layout, with its fused kernels (Korthikanti et al.'s accounting).
  Json r = {
      {"model", {{"preset", "llama-2-7b"}}},
      {"training",
       {{"batch_size", 8}, {"seq_len", 4096}, {"precision", "bf16"}, {"optimizer", "adamw"}, {"kernels", "megatron"}}},
      {"hardware", {"a100-sxm4-80gb"}},
      {"options", {{"per_layer", false}}},
      {"parallel", {{"tensor", 2}, {"data", 4}, {"zero_stage", 1}}}};
  Json out = call(r);
  REQUIRE(out.contains("results"));
  const Json& res = out["results"][0];
  INFO(res.dump().substr(0, 600));
  REQUIRE_FALSE(res["fits"].get<bool>());
  REQUIRE(res.contains("memory_advice"));
  REQUIRE(res["memory_advice"][0]["change"] == Json{{"sequence_parallel", true}});
  Json changed = r;
  changed["parallel"]["sequence_parallel"] = true;
  Json again = call(changed);
  CHECK(again["results"][0]["fits"].get<bool>());
  CHECK(again["results"][0]["memory_gb"].get<double>() ==
        Approx(res["memory_advice"][0]["memory_gb"].get<double>()).epsilon(1e-4));
}
