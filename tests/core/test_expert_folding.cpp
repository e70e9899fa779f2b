// Expert parallelism folded over tensor x context x data (docs/PREDICTION.md, "Mixture of experts": MoE
// parallel folding): whole experts beside tensor parallelism route their GPU's share of the sequence, the expert
// and expert-data groups laid over a stage's ranks, expert memory and gradients over tensor x context x data /
// expert GPUs, and the validation of the layouts Megatron-Core refuses.
#include <catch2/catch.hpp>
#include <string>

#include "helpers.hpp"
#include "parallel/expert.hpp"
#include "prenet/api.hpp"
#include "prenet/memory.hpp"
#include "prenet/parallel.hpp"

using namespace prenet;
using testutil::call;
using testutil::d;
using testutil::eight_per_node;
using testutil::layer_index;
using testutil::net_of;
using testutil::require_error;

namespace {

// 8 positions of width 64: a tensor-parallel MLP (fc1, fc2), then a router and 8 gated experts of width 128 with
// top-2 routing.
const char* kFolded = R"({"input": {"kind": "sequence", "seq_len": 8, "features": 64}, "layers": [
    {"type": "layernorm", "name": "ln1"},
    {"type": "dense", "name": "fc1", "units": 256, "activation": "gelu"},
    {"type": "dense", "name": "fc2", "units": 64},
    {"type": "layernorm", "name": "ln2"},
    {"type": "dense", "name": "router", "units": 8, "bias": false},
    {"type": "dense", "name": "up", "units": 128, "gated": true, "activation": "silu", "bias": false,
     "experts": 8, "top_k": 2, "inputs": ["ln2"]},
    {"type": "dense", "name": "down", "units": 64, "bias": false, "experts": 8, "top_k": 2}]})";

constexpr double S = 8, H = 64, K = 2;

ParallelConfig layout(std::int64_t tensor, std::int64_t data, std::int64_t expert, std::int64_t context = 1) {
  ParallelConfig c;
  c.tensor = tensor;
  c.data = data;
  c.expert = expert;
  c.context = context;
  c.sequence_parallel = tensor > 1;
  c.gpus = tensor * data * context;
  return c;
}

/// The GEMM FLOPs of layer `l`'s forward in one step of `net` at micro-batch 1.
double forward_gemm_flops(const Network& net, std::size_t l) {
  const StepWork w = step_work(net, 1, KernelContext(Precision::BF16), Optimizer::None, OptimizerImpl::Fused);
  return testutil::matmul_flops(w, l, Phase::Forward);
}

Json tiny_mixtral() {
  return {{"model_type", "mixtral"},       {"hidden_size", 256},       {"intermediate_size", 512},
          {"num_hidden_layers", 2},        {"num_attention_heads", 4}, {"num_key_value_heads", 2},
          {"num_local_experts", 8},        {"num_experts_per_tok", 2}, {"vocab_size", 1000},
          {"max_position_embeddings", 512}};
}

Json request(const Json& parallel) {
  return {{"model", {{"hf_config", tiny_mixtral()}}},
          {"training", {{"batch_size", 16}, {"seq_len", 128}, {"precision", "bf16"}, {"optimizer", "adamw"}}},
          {"hardware", {"h100-sxm"}},
          {"options", {{"per_layer", false}}},
          {"parallel", parallel}};
}

bool warns(const Json& out, const std::string& part) {
  for (const Json& w : out["warnings"])
    if (w.get<std::string>().find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("expert folding: whole experts beside tensor parallelism run on the GPU's share of the sequence",
          "[expert_folding]") {
  const Network net = net_of(kFolded);
  const std::size_t fc1 = layer_index(net, "fc1"), up = layer_index(net, "up"), down = layer_index(net, "down");
  const std::size_t router = layer_index(net, "router");
  ShardedNetwork folded = shard_network(net, 2, true, true);
  // The experts keep their width and parameters; the tensor-parallel MLP is split as before.
  CHECK(folded.net.layers[up].parameters == net.layers[up].parameters);
  CHECK(folded.net.layers[up].attrs.units == 128);
  CHECK(folded.net.layers[fc1].attrs.units == 128);
  // Sequence parallelism gives the router and the experts half the positions, with no tensor collectives.
  for (std::size_t l : {router, up, down}) {
    INFO(net.layers[l].name);
    CHECK(d(folded.net.layers[l].input_shapes.front()[0]) == S / 2);
    CHECK(folded.layers[l].sequence_split);
    CHECK(folded.layers[l].forward_allreduces + folded.layers[l].backward_allreduces == 0);
  }
  shard_experts(folded, 4, KernelContext(Precision::BF16));
  CHECK(folded.net.layers[up].parameters == net.layers[up].parameters / 4);
  CHECK(folded.layers[up].dispatch_elements_per_sample == (S / 2) * K * H);
  CHECK(folded.layers[down].combine_elements_per_sample == (S / 2) * K * H);
  // Per GPU the experts' GEMMs do half the work of the same expert degree at tensor 1: half the routed tokens.
  ShardedNetwork flat = shard_network(net, 1);
  shard_experts(flat, 4, KernelContext(Precision::BF16));
  CHECK(forward_gemm_flops(folded.net, up) == Approx(forward_gemm_flops(flat.net, up) / 2));
  CHECK(forward_gemm_flops(folded.net, down) == Approx(forward_gemm_flops(flat.net, down) / 2));
  // Without expert parallelism the experts are split over the tensor group as before.
  const ShardedNetwork split = shard_network(net, 2, true, false);
  CHECK(split.net.layers[up].attrs.units == 64);
}

TEST_CASE("expert folding: whole experts at tensor > 1 need sequence parallelism", "[expert_folding][errors]") {
  const Network net = net_of(kFolded);
  try {
    shard_network(net, 2, false, true);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.field() == "parallel.sequence_parallel");
  }
  require_error(request({{"data", 4}, {"tensor", 2}, {"expert", 2}}), "parallel.sequence_parallel",
                "needs sequence parallelism");
  require_error(request({{"data", 1}, {"tensor", 2}, {"expert", 4}, {"sequence_parallel", true}}), "parallel.expert",
                "must divide tensor x context x data = 2 x 1 x 1 = 2");
}

TEST_CASE("expert folding: the expert group is consecutive ranks of a stage, expert-data the ranks expert apart",
          "[expert_folding][collectives]") {
  const Fabric f = eight_per_node();
  // Tensor 2 x data 8 = 16 ranks a stage; expert 4: four consecutive ranks (one node), expert-data 16 / 4 = 4
  // ranks 4 apart: two per node, over two nodes.
  const ParallelConfig c = layout(2, 8, 4);
  const Communicator ep = communicator(c, f, Group::Expert), ed = communicator(c, f, Group::ExpertData);
  CHECK(ep.size == 4);
  CHECK(ep.per_domain == 4);
  CHECK(ep.domains == 1);
  CHECK(ed.size == 4);
  CHECK(ed.per_domain == 2);
  CHECK(ed.domains == 2);
  // Qwen3-235B-A22B on 256 H100 (Megatron-Bridge): tensor 2, pipeline 8, data 16, expert 32 spans four nodes and
  // leaves one expert-data rank.
  ParallelConfig q = layout(2, 16, 32);
  q.pipeline = 8;
  q.gpus = 256;
  const Communicator qe = communicator(q, f, Group::Expert), qd = communicator(q, f, Group::ExpertData);
  CHECK(qe.size == 32);
  CHECK(qe.per_domain == 8);
  CHECK(qe.domains == 4);
  CHECK(qd.size == 1);
  // Context ranks fold in too: tensor 1, context 2, data 4, expert 8.
  CHECK(communicator(layout(1, 4, 8, 2), f, Group::ExpertData).size == 1);
  CHECK(communicator(layout(1, 4, 4, 2), f, Group::ExpertData).size == 2);
}

TEST_CASE("expert folding: expert weights, gradients and states per GPU, ZeRO over tensor x data / expert",
          "[expert_folding][memory]") {
  const Network net = net_of(kFolded);
  TrainingConfig tr = testutil::trained_with(Precision::BF16, Optimizer::AdamW);
  for (int zero : {0, 1, 2, 3}) {
    ParallelConfig cfg = layout(2, 4, 4);
    cfg.zero_stage = zero;
    ShardedNetwork shard = shard_network(net, 2, true, true);
    shard_experts(shard, cfg.expert, kernel_context(tr));
    double dense = 0, local = 0;
    for (const Layer& L : shard.net.layers) (L.attrs.experts > 1 ? local : dense) += d(L.parameters);
    const double experts =
        d(net.layers[layer_index(net, "up")].parameters) + d(net.layers[layer_index(net, "down")].parameters);
    CHECK(local == Approx(experts / 4));
    const std::vector<double> none(net.layers.size(), 0.0);
    const MemoryEstimate m = stage_memory(stage_inputs(shard, none, none, 0, net.layers.size()), 0, cfg, tr);
    // Mixed precision AdamW: 2-byte weights, a 4-byte master copy, 2-byte gradients, two 4-byte states. Dense
    // states shard over data (4), the experts' over tensor x data / expert = 2.
    const double dp = 4, ed = 2;
    auto share = [zero](int stage, double group) { return zero >= stage ? 1.0 / group : 1.0; };
    INFO("zero " << zero);
    CHECK(m.weights_gb * 1e9 ==
          Approx(dense * (2 * share(3, dp) + 4 * share(1, dp)) + local * (2 * share(3, ed) + 4 * share(1, ed))));
    CHECK(m.gradients_gb * 1e9 == Approx(dense * 2 * share(2, dp) + local * 2 * share(2, ed)));
    CHECK(m.optimizer_gb * 1e9 == Approx(dense * 8 * share(1, dp) + local * 8 * share(1, ed)));
  }
}

TEST_CASE("expert folding: expert gradients reduce over the expert-data group even without data parallelism",
          "[expert_folding][parallel]") {
  const Fabric f = eight_per_node();
  StagePlan sp;
  sp.bounds = {0, 1};
  sp.forward = {3};
  sp.backward = {0};
  sp.tensor = {0};
  sp.optimizer = {4};
  sp.params = sp.trainable = {1e9};
  sp.largest_param = {1e8};
  sp.expert = {0.25};
  sp.expert_params = sp.expert_trainable = {6e8};
  sp.expert_optimizer = {2};
  sp.busy_total = 3.25;
  // Tensor 4, expert 2, one data rank: each expert is held by two GPUs of the stage, reduced between them.
  ParallelConfig cfg = layout(4, 1, 2);
  const Communicator ed = communicator(cfg, f, Group::ExpertData);
  REQUIRE(ed.size == 2);
  const ParallelTiming r = finish_parallel(sp, cfg, f, Precision::BF16);
  CHECK(r.data_ms == Approx(allreduce_ms(6e8 * 2, ed, f)));
  cfg.zero_stage = 1;
  const ParallelTiming z = finish_parallel(sp, cfg, f, Precision::BF16);
  CHECK(z.optimizer_ms == Approx((4.0 - 2.0) + 2.0 / 2));
  // Tensor 2, expert 2: the experts are not replicated; nothing to reduce.
  const ParallelTiming none = finish_parallel(sp, layout(2, 1, 2), f, Precision::BF16);
  CHECK(none.data_ms == 0);
}

TEST_CASE("expert folding: through the API, whole experts beside tensor and context parallelism", "[expert_folding]") {
  const Json folded = call(request({{"data", 4}, {"tensor", 2}, {"expert", 8}, {"sequence_parallel", true}}));
  INFO(folded.dump().substr(0, 1500));
  REQUIRE_FALSE(folded.contains("error"));
  CHECK(folded["results"][0]["parallel"]["expert"] == 8);
  CHECK(folded["results"][0]["parallel"]["communication_ms"]["expert"].get<double>() > 0);
  CHECK(warns(folded, "expert tensor parallel size 1"));
  // The same experts per GPU as expert 8 over 8 data ranks at tensor 1: the experts' bytes do not depend on the
  // tensor degree (whole experts), only the dense part does.
  const Json flat = call(request({{"data", 8}, {"expert", 8}}));
  REQUIRE_FALSE(flat.contains("error"));
  CHECK_FALSE(warns(flat, "expert tensor parallel size 1"));
  const double experts = 2.0 * 8 * 3 * 256 * 512;  // 2 layers x 8 experts x gate, up, down of 256 x 512
  const double total = flat["model"]["parameters"].get<double>(), dense = total - experts;
  // No ZeRO: 2 + 4 bytes per parameter held; the tensor-parallel half of the dense part is what differs.
  const double flat_w = flat["results"][0]["memory"]["weights_gb"].get<double>() * 1e9;
  const double folded_w = folded["results"][0]["memory"]["weights_gb"].get<double>() * 1e9;
  CHECK(flat_w == Approx((dense + experts / 8) * 6));
  CHECK(folded_w > experts / 8 * 6);
  CHECK(folded_w < flat_w);
  // Context ranks fold in too (the expert group spans context x data).
  Json with_context = request({{"data", 2}, {"context", 2}, {"expert", 4}});
  with_context["training"]["attention"] = "flash";  // context parallelism needs a fused attention kernel
  const Json context = call(with_context);
  INFO(context.dump().substr(0, 1500));
  REQUIRE_FALSE(context.contains("error"));
  CHECK(context["results"][0]["parallel"]["expert"] == 4);
}
