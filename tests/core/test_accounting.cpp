// Gradient and master-weight accounting (training.state_accounting; docs/PREDICTION.md, "Gradient and
// master-weight accounting"): bytes per parameter of DeepSpeed (16 with Adam), Megatron-LM (18: FP32 main
// gradients), PyTorch autocast (16: FP32 weights and gradients) and FSDP2 mixed precision (16, all sharded),
// exact per GPU under ZeRO stages 0 to 3, and the combinations refused.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
#include "prenet/memory.hpp"
#include "prenet/parallel.hpp"
#include "prenet/request.hpp"
#include "small_models.hpp"

using namespace prenet;
using testutil::d;
using testutil::require_input_error;
using testutil::trained_with;

namespace {

constexpr std::int64_t kHidden = 256, kHeads = 8, kSeq = 128, kLayers = 4, kVocab = 5000;

Network gpt() { return testutil::bf16_gpt2(kHidden, kHeads, kLayers, kVocab, kSeq); }

TrainingConfig accounted(StateAccounting a, Precision p = Precision::BF16) {
  TrainingConfig t = trained_with(p, Optimizer::Adam);
  t.state_accounting = a;
  return t;
}

double total(const StateBytes& b) { return b.weights16 + b.master + b.gradients + b.optimizer; }

}  // namespace

TEST_CASE("bytes per parameter of each accounting under mixed precision and FP32", "[memory][accounting]") {
  // Adam, 16-bit training: DeepSpeed 2 + 4 + 2 + 8 = 16; Megatron 2 + 4 + 4 + 8 = 18 (Korthikanti et al. 2022,
  // Megatron-LM dist_optimizer.md "float16 param, fp32 grads: 18"); autocast 4 + 0 + 4 + 8 = 16; FSDP2
  // 0 + 4 + 4 + 8 = 16 (its 16-bit copies exist for the gathered layers only).
  CHECK(total(state_bytes(accounted(StateAccounting::DeepSpeed))) == 16);
  CHECK(total(state_bytes(accounted(StateAccounting::Megatron))) == 18);
  CHECK(total(state_bytes(accounted(StateAccounting::Autocast))) == 16);
  CHECK(total(state_bytes(accounted(StateAccounting::Fsdp))) == 16);
  CHECK(state_bytes(accounted(StateAccounting::Megatron)).gradients == 4);
  CHECK(state_bytes(accounted(StateAccounting::Autocast)).master == 0);
  CHECK(state_bytes(accounted(StateAccounting::Autocast)).casts == 2);
  CHECK(state_bytes(accounted(StateAccounting::Fsdp)).weights16 == 0);
  CHECK(state_bytes(accounted(StateAccounting::Fsdp)).compute == 2);
  // FP32 training: every framework keeps 4 + 4 + the states, nothing else.
  for (StateAccounting a : {StateAccounting::DeepSpeed, StateAccounting::Megatron, StateAccounting::Fsdp}) {
    const StateBytes b = state_bytes(accounted(a, Precision::FP32));
    CHECK(b.weights16 == 4);
    CHECK(b.master == 0);
    CHECK(b.gradients == 4);
    CHECK(b.optimizer == 8);
  }
}

TEST_CASE("each accounting's model states per GPU under ZeRO stages 0 to 3", "[memory][accounting]") {
  // P parameters on 8 data-parallel GPUs; ZeRO shards (stage 1) the optimizer states and the FP32 master copy,
  // (2) the gradients, (3) the weights. Per GPU (s1, s2, s3 = 1/8 from those stages on, else 1):
  //   deepspeed: weights 2P·s3 + 4P·s1, gradients 2P·s2, states 8P·s1
  //   megatron:  weights 2P·s3 + 4P·s1, gradients 4P·s2, states 8P·s1 (stage 1: 6P + 12P/8, dist_optimizer.md)
  //   autocast:  weights 4P·s3,         gradients 4P·s2, states 8P·s1
  const Network net = gpt();
  const ShardedNetwork shard = shard_network(net, 1);
  const StepWork work = step_work(shard.net, 1, KernelContext(Precision::BF16), Optimizer::Adam);
  const auto saved = saved_activation_bytes(shard, work, Recompute::None, 1);
  const double P = d(net.parameters()), dp = 8;
  for (StateAccounting a : {StateAccounting::DeepSpeed, StateAccounting::Megatron, StateAccounting::Autocast}) {
    for (int stage = 0; stage <= 3; ++stage) {
      ParallelConfig cfg;
      cfg.data = cfg.gpus = 8;
      cfg.zero_stage = stage;
      const MemoryEstimate m = estimate_stage_memory(shard, saved, saved, 0, net.layers.size(), 0, cfg, accounted(a));
      const double s1 = stage >= 1 ? 1 / dp : 1, s2 = stage >= 2 ? 1 / dp : 1, s3 = stage >= 3 ? 1 / dp : 1;
      const bool autocast = a == StateAccounting::Autocast;
      const double weights = autocast ? 4 * P * s3 : 2 * P * s3 + 4 * P * s1;
      const double grads = (a == StateAccounting::DeepSpeed ? 2 : 4) * P * s2;
      INFO("accounting " << static_cast<int>(a) << ", ZeRO stage " << stage);
      CHECK(m.weights_gb * 1e9 == Approx(weights).epsilon(1e-12));
      CHECK(m.gradients_gb * 1e9 == Approx(grads).epsilon(1e-12));
      CHECK(m.optimizer_gb * 1e9 == Approx(8 * P * s1).epsilon(1e-12));
      if (a == StateAccounting::Megatron && stage == 1) {
        CHECK((m.weights_gb + m.gradients_gb + m.optimizer_gb) * 1e9 == Approx(6 * P + 12 * P / dp));
      }
    }
  }
}

TEST_CASE("fsdp keeps FP32 shards and 16-bit copies of two gathered layers only", "[memory][accounting]") {
  // FSDP2, MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32), on 8 GPUs: weights 4P/8 (the FP32
  // shards), gradients 4P/8, Adam 8P/8; temporaries: the gathered layer and the prefetched one in bf16,
  // 2 x 2 x (the largest layer's parameters), and the two 25 MB gradient buckets. On one GPU: the same with
  // nothing divided and no buckets.
  const Network net = gpt();
  const ShardedNetwork shard = shard_network(net, 1);
  const StepWork work = step_work(shard.net, 1, KernelContext(Precision::BF16), Optimizer::Adam);
  const auto saved = saved_activation_bytes(shard, work, Recompute::None, 1);
  const double P = d(net.parameters());
  double largest = 0;
  for (const Layer& l : net.layers) largest = std::max(largest, d(l.parameters));
  for (std::int64_t dp : {1, 8}) {
    ParallelConfig cfg;
    cfg.data = cfg.gpus = dp;
    cfg.zero_stage = 3;
    const MemoryEstimate m =
        estimate_stage_memory(shard, saved, saved, 0, net.layers.size(), 0, cfg, accounted(StateAccounting::Fsdp));
    INFO("data " << dp);
    CHECK(m.weights_gb * 1e9 == Approx(4 * P / d(dp)).epsilon(1e-12));
    CHECK(m.gradients_gb * 1e9 == Approx(4 * P / d(dp)).epsilon(1e-12));
    CHECK(m.optimizer_gb * 1e9 == Approx(8 * P / d(dp)).epsilon(1e-12));
    CHECK(m.temporary_gb * 1e9 == Approx(4 * largest + (dp > 1 ? 2 * 25e6 : 0)).epsilon(1e-12));
  }
  // DeepSpeed's ZeRO-3 holds the same 16 bytes (2 + 4 + 2 + 8, sharded) and the same two gathered layers; FSDP's
  // gradients are FP32 and it keeps no 16-bit shard.
  ParallelConfig cfg;
  cfg.data = cfg.gpus = 8;
  cfg.zero_stage = 3;
  const MemoryEstimate ds =
      estimate_stage_memory(shard, saved, saved, 0, net.layers.size(), 0, cfg, accounted(StateAccounting::DeepSpeed));
  const MemoryEstimate fs =
      estimate_stage_memory(shard, saved, saved, 0, net.layers.size(), 0, cfg, accounted(StateAccounting::Fsdp));
  CHECK(ds.total_gb() == Approx(fs.total_gb()));
  CHECK(fs.gradients_gb == Approx(2 * ds.gradients_gb));
  CHECK(ds.weights_gb * 1e9 == Approx(6 * P / 8));
}

TEST_CASE("autocast holds a 16-bit cast of every trained linear weight from forward to backward",
          "[memory][accounting]") {
  // GPT-2's linear weights: per block c_attn h x 3h, c_proj h x h, c_fc h x 4h, mlp c_proj 4h x h (12 h^2), and
  // the vocabulary head h x V when it has weights of its own. 2 bytes each, beside the FP32 states.
  const Network net = gpt();
  const StepWork work = step_work(net, 1, KernelContext(Precision::BF16), Optimizer::Adam);
  const double h = kHidden;
  double head = 0;
  for (const Layer& l : net.layers) {
    if (l.name == "lm_head" && l.parameters > 0) head = h * kVocab;
  }
  const MemoryEstimate a = estimate_memory(net, work, accounted(StateAccounting::Autocast));
  const MemoryEstimate b = estimate_memory(net, work, accounted(StateAccounting::DeepSpeed));
  CHECK((a.temporary_gb - b.temporary_gb) * 1e9 == Approx(2 * (12 * h * h * kLayers + head)));
  CHECK(a.weights_gb * 1e9 == Approx(4 * d(net.parameters())));
  CHECK(a.gradients_gb * 1e9 == Approx(4 * d(net.parameters())));
}

TEST_CASE("state accountings that contradict the request are refused", "[memory][accounting][options]") {
  const std::string field = "training.state_accounting";
  auto request = [](Json training, Json parallel = nullptr) {
    Json r = {{"model", {{"preset", "gpt2"}}}, {"training", training}, {"hardware", {"h100-sxm"}}};
    if (!parallel.is_null()) r["parallel"] = parallel;
    return r;
  };
  auto refused = [&](const Json& req, const std::string& needle) {
    require_input_error([&] { parse_request(req); }, field, needle);
  };
  refused(request({{"precision", "fp32"}, {"state_accounting", "autocast"}}), "autocast computes in 16 bits");
  refused(request({{"precision", "bf16"}, {"master_weights", "bf16"}, {"state_accounting", "megatron"}}),
          "master_weights bf16");
  refused(request({{"precision", "bf16"}, {"offload", "optimizer"}, {"state_accounting", "fsdp"}}), "ZeRO-Offload");
  refused(request({{"precision", "bf16"}, {"offload", "optimizer_params"}, {"state_accounting", "autocast"}}),
          "not modelled");
  refused(request({{"precision", "bf16"}, {"state_accounting", "fsdp"}, {"batch_size", 8}}, {{"data", 8}}),
          "parallel.fsdp true");
  refused(request({{"precision", "bf16"}, {"state_accounting", "deepspeedx"}}), "");
  // Accepted: FP32 training with megatron or fsdp (the same bytes), fsdp with FSDP CPU offload or sharding.
  CHECK_NOTHROW(parse_request(request({{"precision", "fp32"}, {"state_accounting", "megatron"}})));
  CHECK_NOTHROW(
      parse_request(request({{"precision", "bf16"}, {"offload", "optimizer_params"}, {"state_accounting", "fsdp"}})));
  CHECK_NOTHROW(parse_request(request({{"precision", "bf16"}, {"state_accounting", "fsdp"}, {"batch_size", 8}},
                                      {{"data", 8}, {"fsdp", true}})));
  const Request r = parse_request(request({{"precision", "bf16"}, {"state_accounting", "megatron"}}));
  CHECK(r.training.state_accounting == StateAccounting::Megatron);
}
