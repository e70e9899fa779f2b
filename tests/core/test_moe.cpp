// Mixture of experts and expert parallelism (docs/PREDICTION.md, "Mixture of experts"): the router's work,
// permutation, grouped GEMMs at their per-expert token counts (dropless, capacity factor, imbalance), the
// all-to-all dispatch and combine of parallel.expert, expert memory / expert and the expert-data gradient group
// (folded over tensor and context: test_expert_folding.cpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "helpers.hpp"
#include "layers/moe.hpp"
#include "parallel/expert.hpp"
#include "prenet/api.hpp"
#include "prenet/memory.hpp"
#include "prenet/parallel.hpp"

using namespace prenet;
using testutil::call;
using testutil::d;
using testutil::layer_index;
using testutil::net_of;
using testutil::require_error;

namespace {

// 8 positions of width 64; a router and 8 gated experts of width 128 with top-2 routing.
const char* kMoe = R"({"input": {"kind": "sequence", "seq_len": 8, "features": 64}, "layers": [
    {"type": "layernorm", "name": "ln"},
    {"type": "dense", "name": "router", "units": 8, "bias": false},
    {"type": "dense", "name": "up", "units": 128, "gated": true, "activation": "silu", "bias": false,
     "experts": 8, "top_k": 2, "inputs": ["ln"]},
    {"type": "dense", "name": "down", "units": 64, "bias": false, "experts": 8, "top_k": 2}]})";

constexpr double S = 8, H = 64, N = 128, E = 8, K = 2;

/// One step of `net` for `batch` samples in bf16 under `context`'s routing.
StepWork work_of(const Network& net, double batch, KernelContext context = KernelContext(Precision::BF16)) {
  return step_work(net, static_cast<std::int64_t>(batch), context, Optimizer::None, OptimizerImpl::Fused);
}

/// The GEMM kernels (matmul class) of layer `l` in `phase`.
std::vector<Kernel> gemms(const StepWork& w, std::size_t l, Phase phase) {
  std::vector<Kernel> out;
  for (const Kernel& k : w.kernels) {
    if (static_cast<std::size_t>(k.layer) == l && k.phase == phase && is_matmul(k.cls)) out.push_back(k);
  }
  return out;
}

/// Bytes of layer l's kernels of class `cls` in `phase`.
double class_bytes(const StepWork& w, std::size_t l, Phase phase, KernelClass cls) {
  double total = 0;
  for (const Kernel& k : w.kernels) {
    if (static_cast<std::size_t>(k.layer) == l && k.phase == phase && k.cls == cls) total += k.bytes;
  }
  return total;
}

Json tiny_mixtral() {
  return {{"model_type", "mixtral"},       {"hidden_size", 256},       {"intermediate_size", 512},
          {"num_hidden_layers", 2},        {"num_attention_heads", 4}, {"num_key_value_heads", 2},
          {"num_local_experts", 8},        {"num_experts_per_tok", 2}, {"vocab_size", 1000},
          {"max_position_embeddings", 512}};
}

Json request(const Json& config, const Json& parallel, Json training = {{"batch_size", 16}, {"seq_len", 128}}) {
  training["precision"] = "bf16";
  Json r = {{"model", {{"hf_config", config}}},
            {"training", training},
            {"hardware", {"h100-sxm"}},
            {"options", {{"per_layer", false}}}};
  if (!parallel.is_null()) r["parallel"] = parallel;
  return r;
}

Json fixture(const std::string& file) {
  std::ifstream in(std::string(PRENET_SOURCE_DIR) + "/tests/fixtures/hf/" + file);
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str());
}

}  // namespace

TEST_CASE("moe: the expert MLP's first layer routes and permutes, its last combines", "[moe]") {
  const Network net = net_of(kMoe);
  const std::vector<MoeRole> roles = moe_roles(net);
  const std::size_t up = layer_index(net, "up"), down = layer_index(net, "down");
  CHECK(roles[up].dispatches);
  CHECK_FALSE(roles[up].combines);
  CHECK_FALSE(roles[down].dispatches);
  CHECK(roles[down].combines);
  CHECK_FALSE(roles[layer_index(net, "router")].dispatches);
}

TEST_CASE("moe: router, permutation and grouped GEMMs of balanced dropless routing", "[moe]") {
  const Network net = net_of(kMoe);
  const double b = 2, T = b * S, e = 2;  // bf16 activations
  const StepWork w = work_of(net, b);
  const std::size_t up = layer_index(net, "up"), down = layer_index(net, "down");
  // Megatron's TopKRouter: softmax over T x E scores (read and write, 5 FLOPs each as the softmax layer counts),
  // backward reading scores, their gradient and writing the input's (3 passes).
  CHECK(class_bytes(w, up, Phase::Forward, KernelClass::Softmax) == Approx(2 * T * E * e));
  CHECK(class_bytes(w, up, Phase::Backward, KernelClass::Softmax) == Approx(3 * T * E * e));
  CHECK(class_bytes(w, down, Phase::Forward, KernelClass::Softmax) == 0);
  // Grouped GEMMs: each of the 8 experts at T x top_k / E tokens; up is gate and up (2 x 128 wide).
  const std::vector<Kernel> f = gemms(w, up, Phase::Forward);
  REQUIRE(f.size() == 1);
  CHECK(f[0].m == Approx(T * K / E));
  CHECK(f[0].batch == Approx(E));
  CHECK(testutil::matmul_flops(w, up, Phase::Forward) == Approx(2 * T * K * H * 2 * N));
  CHECK(testutil::matmul_flops(w, down, Phase::Forward) == Approx(2 * T * K * N * H));
  // Permutation (up, forward: read and write T x top_k x hidden) and its scatter back (backward) exist once;
  // the un-permutation's weighted sum reads T x top_k x hidden and writes T x hidden (down).
  const double routed_bytes = 2 * T * K * H * e;
  const double router_elementwise = (1 + 2 * K / E) * T * E * e + T * E * e;  // top-k and the aux loss
  const double up_activation = (2 + 3) * T * K * N * e;  // PyTorch's SiLU (2 passes) and product (3)
  CHECK(class_bytes(w, up, Phase::Forward, KernelClass::Elementwise) ==
        Approx(router_elementwise + routed_bytes + up_activation));
  CHECK(class_bytes(w, down, Phase::Forward, KernelClass::Elementwise) == Approx((T * K * H + T * H) * e));
}

TEST_CASE("moe: a capacity factor pads every expert; imbalance makes the busiest expert's GPU wait", "[moe]") {
  const Network net = net_of(kMoe);
  const double b = 2, T = b * S;
  const std::size_t up = layer_index(net, "up");
  KernelContext capped(Precision::BF16);
  capped.moe_capacity_factor = 1.5;
  capped.moe_imbalance = 3;  // dropped beyond the capacity: no effect
  const std::vector<Kernel> c = gemms(work_of(net, b, capped), up, Phase::Forward);
  CHECK(c[0].m == Approx(1.5 * T * K / E));  // Megatron get_capacity: capacity_factor x tokens x top_k / experts
  KernelContext skewed(Precision::BF16);
  skewed.moe_imbalance = 2;
  // One GPU holds all experts: the busiest's extra tokens are the others' missing ones; no wait.
  CHECK(gemms(work_of(net, b, skewed), up, Phase::Forward)[0].m == Approx(T * K / E));
  // Sharded over 4 (2 experts each): the busiest expert's GPU runs (2 - 1 + 2) x the mean per expert over 2.
  for (std::int64_t ep : {2, 4, 8}) {
    ShardedNetwork shard = shard_network(net, 1);
    shard_experts(shard, ep, skewed);
    const double local = E / d(ep), mean = d(ep) * T * K / E;
    const std::vector<Kernel> g = gemms(work_of(shard.net, b, skewed), up, Phase::Forward);
    REQUIRE(g.size() == 1);
    CHECK(g[0].batch == Approx(local));
    CHECK(g[0].m == Approx(std::min(local - 1 + 2, E) / local * mean));
    CHECK(moe_load_factor(8, ep, skewed) == Approx(std::min(local - 1 + 2, E) / local));
  }
}

TEST_CASE("moe: expert parallelism shards the experts and all-to-alls the routed tokens", "[moe][parallel]") {
  const Network net = net_of(kMoe);
  const std::size_t up = layer_index(net, "up"), down = layer_index(net, "down"), router = layer_index(net, "router");
  ShardedNetwork shard = shard_network(net, 1);
  shard_experts(shard, 4, KernelContext(Precision::BF16));
  CHECK(shard.net.layers[up].parameters == net.layers[up].parameters / 4);
  CHECK(shard.net.layers[down].parameters == net.layers[down].parameters / 4);
  CHECK(shard.net.layers[router].parameters == net.layers[router].parameters);
  CHECK(shard.layers[up].expert_parameters);
  CHECK_FALSE(shard.layers[router].expert_parameters);
  // Dispatch: tokens x top_k x hidden per sample before the first matrix; combine after the last.
  CHECK(shard.layers[up].dispatch_elements_per_sample == S * K * H);
  CHECK(shard.layers[up].combine_elements_per_sample == 0);
  CHECK(shard.layers[down].combine_elements_per_sample == S * K * H);
  // Forward dispatch + combine, backward the same again; full recomputation repeats the forward pair.
  ParallelConfig cfg;
  cfg.data = cfg.gpus = 8;
  cfg.expert = 4;
  Fabric fabric;
  fabric.intra = {"nvlink", 450, 3};
  fabric.inter = {"ib", 50, 5};
  const Communicator ep = communicator(cfg, fabric, Group::Expert);
  CHECK(ep.size == 4);
  const double mbs = 2, e = 2, bytes = mbs * S * K * H * e;
  CHECK(expert_alltoall_ms(shard.layers[up], mbs, e, false, ep, fabric, ExpertDispatch::AllToAll) ==
        Approx(2 * alltoall_ms(bytes, ep, fabric)));
  CHECK(expert_alltoall_ms(shard.layers[down], mbs, e, true, ep, fabric, ExpertDispatch::AllToAll) ==
        Approx(3 * alltoall_ms(bytes, ep, fabric)));
  // The all-to-all bytes follow the critical GPU's load: a capacity factor of 1.25 sends 1.25 x.
  KernelContext capped(Precision::BF16);
  capped.moe_capacity_factor = 1.25;
  ShardedNetwork padded = shard_network(net, 1);
  shard_experts(padded, 4, capped);
  CHECK(padded.layers[up].dispatch_elements_per_sample == Approx(1.25 * S * K * H));
}

TEST_CASE("moe: expert gradients reduce over the expert-data group, the rest over data", "[moe][parallel]") {
  ParallelConfig cfg;
  cfg.data = cfg.gpus = 16;
  cfg.expert = 4;
  cfg.micro_batches = 2;
  Fabric fabric;
  fabric.intra = {"nvlink", 450, 3};
  fabric.inter = {"ib", 50, 5};
  StagePlan sp;
  sp.bounds = {0, 1};
  sp.forward = {3};
  sp.backward = {0};  // nothing hides the reduction
  sp.tensor = {0};
  sp.optimizer = {4};
  sp.params = sp.trainable = {1e9};
  sp.largest_param = {1e8};
  sp.expert = {0.25};
  sp.expert_params = sp.expert_trainable = {6e8};
  sp.expert_optimizer = {2};
  sp.busy_total = 3.25;
  const Communicator dp = communicator(cfg, fabric, Group::Data), ed = communicator(cfg, fabric, Group::ExpertData);
  CHECK(dp.size == 16);
  CHECK(ed.size == 4);
  const ParallelTiming r = finish_parallel(sp, cfg, fabric, Precision::BF16);
  CHECK(r.data_ms == Approx(allreduce_ms(4e8 * 2, dp, fabric) + allreduce_ms(6e8 * 2, ed, fabric)));
  CHECK(r.expert_ms == Approx(2 * 0.25));
  CHECK(r.step_ms() == Approx(r.forward_ms + r.backward_ms + r.optimizer_ms + r.data_ms + r.expert_ms));
  // ZeRO-1: optimizer work and the weight gather split the same way.
  cfg.zero_stage = 1;
  const ParallelTiming z = finish_parallel(sp, cfg, fabric, Precision::BF16);
  CHECK(z.optimizer_ms == Approx((4.0 - 2.0) / 16 + 2.0 / 4));
  CHECK(z.zero_ms == Approx(allgather_ms(4e8 * 2, dp, fabric) + allgather_ms(6e8 * 2, ed, fabric)));
}

TEST_CASE("moe: expert weights, gradients and optimizer states per GPU are 1/expert, ZeRO over data / expert",
          "[moe][memory]") {
  const Network net = net_of(kMoe);
  double dense = 0, experts = 0;
  for (const Layer& L : net.layers) (L.attrs.experts > 1 ? experts : dense) += d(L.parameters);
  TrainingConfig tr = testutil::trained_with(Precision::BF16, Optimizer::AdamW);
  for (int zero : {0, 1, 2, 3}) {
    ParallelConfig cfg;
    cfg.data = cfg.gpus = 8;
    cfg.expert = 4;
    cfg.zero_stage = zero;
    ShardedNetwork shard = shard_network(net, 1);
    shard_experts(shard, cfg.expert, kernel_context(tr));
    const std::vector<double> none(net.layers.size(), 0.0);
    const MemoryEstimate m = stage_memory(stage_inputs(shard, none, none, 0, net.layers.size()), 0, cfg, tr);
    // Mixed precision AdamW: 2-byte weights, a 4-byte master copy, 2-byte gradients, two 4-byte states.
    const double dp = 8, ed = 8.0 / 4, local = experts / 4;
    auto share = [zero](int stage, double group) { return zero >= stage ? 1.0 / group : 1.0; };
    INFO("zero " << zero);
    CHECK(m.weights_gb * 1e9 ==
          Approx(dense * (2 * share(3, dp) + 4 * share(1, dp)) + local * (2 * share(3, ed) + 4 * share(1, ed))));
    CHECK(m.gradients_gb * 1e9 == Approx(dense * 2 * share(2, dp) + local * 2 * share(2, ed)));
    CHECK(m.optimizer_gb * 1e9 == Approx(dense * 8 * share(1, dp) + local * 8 * share(1, ed)));
  }
}

TEST_CASE("moe: Qwen3-30B-A3B through the Hugging Face path keeps its parameters; experts / 4 per GPU",
          "[moe][parallel]") {
  const Json config = fixture("Qwen--Qwen3-30B-A3B.json");
  const Json training = {{"batch_size", 8}, {"seq_len", 1024}, {"optimizer", "adamw"}};
  const Json one = call(request(config, {{"data", 8}}, training));
  const Json four = call(request(config, {{"data", 8}, {"expert", 4}}, training));
  INFO(four.dump().substr(0, 2000));
  REQUIRE_FALSE(four.contains("error"));
  CHECK(four["model"]["parameters"] == one["model"]["parameters"]);
  // 48 layers of 128 experts, each gate, up (2048 x 768) and down (768 x 2048), no biases.
  const double experts = 48.0 * 128 * 3 * 2048 * 768;
  const double total = one["model"]["parameters"].get<double>(), dense = total - experts;
  const Json& r = four["results"][0];
  CHECK(r["parallel"]["expert"] == 4);
  CHECK(one["results"][0]["parallel"]["expert"] == 1);
  CHECK(r["parallel"]["communication_ms"]["expert"].get<double>() > 0);
  CHECK(one["results"][0]["parallel"]["communication_ms"]["expert"] == 0);
  // No ZeRO: weights at 2 + 4 bytes per parameter held.
  CHECK(r["memory"]["weights_gb"].get<double>() == Approx((dense + experts / 4) * 6 / 1e9).margin(1e-6));
  bool noted = false;
  for (const Json& w : four["warnings"])
    noted = noted || w.get<std::string>().find("balanced routing") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("moe: parallel.expert and the routing fields are validated", "[moe][errors]") {
  const Json moe = tiny_mixtral();
  require_error(request(moe, {{"data", 6}, {"expert", 4}}, {{"batch_size", 24}, {"seq_len", 128}}), "parallel.expert",
                "must divide tensor x context x data = 1 x 1 x 6 = 6");
  require_error(request(moe, {{"data", 16}, {"expert", 16}}), "parallel.expert", "the 8 experts of layer");
  require_error(request(moe, {{"data", 4}, {"expert", 0}}), "parallel.expert", "");
  const Json dense = {{"model_type", "gpt2"}, {"n_embd", 256},      {"n_head", 4},
                      {"n_layer", 2},         {"vocab_size", 1000}, {"n_positions", 256}};
  require_error(request(dense, {{"data", 4}, {"expert", 2}}), "parallel.expert", "no mixture-of-experts layer");
  require_error(
      request(moe, {{"data", 4}, {"expert", 2}}, {{"batch_size", 16}, {"seq_len", 128}, {"offload", "optimizer"}}),
      "parallel.expert", "offload");
  require_error(request(moe, nullptr, {{"batch_size", 16}, {"seq_len", 128}, {"moe_imbalance", 0.5}}),
                "training.moe_imbalance", "");
  require_error(request(moe, nullptr, {{"batch_size", 16}, {"seq_len", 128}, {"moe_capacity_factor", 0}}),
                "training.moe_capacity_factor", "");
}

TEST_CASE("moe: plan mode searches expert degrees only for networks with experts", "[moe][plan]") {
  auto plan = [](const Json& config) {
    Json r = request(config, nullptr, {{"batch_size", 16}, {"seq_len", 128}});
    r["plan"] = {{"max_gpus", 16}, {"top", 100}};
    return Json::parse(plan_json(r.dump()));
  };
  auto experts_seen = [](const Json& out) {
    std::int64_t most = 0;
    for (const Json& l : out["results"][0]["by_time"])
      most = std::max<std::int64_t>(most, l["expert"].get<std::int64_t>());
    return most;
  };
  const Json moe = plan(tiny_mixtral());
  INFO(moe.dump().substr(0, 1500));
  CHECK(experts_seen(moe) > 1);
  const Json dense = plan({{"model_type", "gpt2"},
                           {"n_embd", 256},
                           {"n_head", 4},
                           {"n_layer", 2},
                           {"vocab_size", 1000},
                           {"n_positions", 256}});
  CHECK(experts_seen(dense) == 1);
}
