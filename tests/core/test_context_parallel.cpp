// Context parallelism (docs/PREDICTION.md, "Context parallelism"): parallel.context splits every layer's
// sequence, the ring of K/V blocks (TransformerEngine's AttnFuncWithCPAndKVP2P) overlapped with attention, the
// causal load balancing, gradients over data x context, activations / context, and every refusal.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "parallel/context.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/memory.hpp"
#include "prenet/parallel.hpp"
#include "prenet/roofline.hpp"

using namespace prenet;
using testutil::call;
using testutil::d;

namespace {

constexpr std::int64_t kSeq = 4096, kHidden = 512, kHeads = 8, kKvHeads = 2, kHeadDim = 64, kBlocks = 4;

Json llama_config() {
  return {{"model_type", "llama"},
          {"hidden_size", kHidden},
          {"num_attention_heads", kHeads},
          {"num_key_value_heads", kKvHeads},
          {"num_hidden_layers", kBlocks},
          {"intermediate_size", 1024},
          {"vocab_size", 8000},
          {"max_position_embeddings", 131072}};
}

TrainingConfig flash_training(std::int64_t seq = kSeq) {
  TrainingConfig tr;
  tr.seq_len = seq;
  tr.precision = Precision::BF16;
  tr.attention = AttentionKernel::Flash;
  return tr;
}

KernelContext flash_context() { return KernelContext(Precision::BF16, AttentionKernel::Flash); }

Network llama(std::int64_t seq = kSeq) { return resolve_model({{"hf_config", llama_config()}}, flash_training(seq)); }

Json request(const Json& parallel, std::int64_t seq = kSeq) {
  return {{"model", {{"hf_config", llama_config()}}},
          {"training", {{"batch_size", 8}, {"seq_len", seq}, {"precision", "bf16"}, {"attention", "flash"}}},
          {"hardware", {"h100-sxm"}},
          {"parallel", parallel},
          {"options", {{"per_layer", false}}}};
}

/// The fused attention kernel of layer l in `phase` (the only batched GEMM of a flash attention layer).
const Kernel& attention_kernel(const StepWork& w, std::size_t l, Phase phase) {
  for (const Kernel& k : w.kernels) {
    if (static_cast<std::size_t>(k.layer) == l && k.phase == phase && k.cls == KernelClass::BatchedGemm) return k;
  }
  FAIL("no attention kernel in layer " << l);
  return w.kernels.front();
}

void require_context_error(const Json& r, const std::string& needle) {
  Json out = call(r);
  INFO(out.dump());
  REQUIRE(out.contains("error"));
  CHECK(out["error"]["field"] == "parallel.context");
  CHECK_THAT(out["error"]["message"].get<std::string>(), Catch::Contains(needle));
}

}  // namespace

TEST_CASE("context parallelism: gpus = data x tensor x context x pipeline", "[parallel][context]") {
  ParallelConfig c = parse_parallel({{"gpus", 32}, {"tensor", 2}, {"context", 4}}, 64);
  CHECK(c.context == 4);
  CHECK(c.data == 4);
  c = parse_parallel({{"data", 2}, {"tensor", 2}, {"context", 4}, {"pipeline", 2}}, 64);
  CHECK(c.gpus == 2 * 2 * 4 * 2);
  CHECK(parse_parallel({{"data", 2}}, 64).context == 1);  // the default
  testutil::require_input_error(
      [] {
        parse_parallel({{"gpus", 12}, {"context", 8}}, 64);
      },
      "parallel.gpus", "12 GPUs do not split into tensor x context x pipeline = 8-GPU model replicas");
  testutil::require_input_error(
      [] {
        parse_parallel({{"gpus", 16}, {"data", 2}, {"context", 4}}, 64);
      },
      "parallel.gpus", "16 GPUs but data x tensor x context x pipeline = 2 x 1 x 4 x 1 = 8");
  testutil::require_input_error([] { parse_parallel({{"context", 0}}, 64); }, "parallel.context", "");
  testutil::require_input_error([] { parse_parallel({{"context", 2.5}}, 64); }, "parallel.context", "");
}

TEST_CASE("context parallelism splits every layer's sequence; balanced causal attention is 1/c of the total",
          "[parallel][context]") {
  const Network net = llama();
  const double b = 2;
  for (std::int64_t c : {2, 4, 8}) {
    INFO("context " << c);
    const Network split = split_context(net, c, flash_context());
    const StepWork w1 = step_work(net, 2, flash_context(), Optimizer::Adam);
    const StepWork wc = step_work(split, 2, flash_context(), Optimizer::Adam);
    int attention = 0;
    for (std::size_t l = 0; l < net.layers.size(); ++l) {
      const Layer& L = split.layers[l];
      INFO("layer " << L.name);
      if (!L.output_shape.empty()) CHECK(L.output_shape[0] == net.layers[l].output_shape[0] / c);  // a loss: scalar
      if (L.type != LayerType::Attention) {
        // Token-wise work (projections of the MLP, norms, embeddings, the head) divided by c.
        CHECK(wc.layers[l].flops[0] == Approx(w1.layers[l].flops[0] / d(c)));
        CHECK(wc.layers[l].flops[1] == Approx(w1.layers[l].flops[1] / d(c)));
        continue;
      }
      ++attention;
      CHECK(L.attrs.context == c);
      // FlashAttention over the causal half of the s x s scores, 2 s t (dk + dv) per head forward and
      // 2 s t (3 dk + 2 dv) backward: this GPU's share is 1/c of it.
      const double causal = 0.5 * b * d(kHeads) * d(kSeq) * d(kSeq);
      const double forward = 2 * causal * d(2 * kHeadDim) / d(c), backward = 2 * causal * d(5 * kHeadDim) / d(c);
      CHECK(attention_kernel(wc, l, Phase::Forward).flops == Approx(forward));
      CHECK(attention_kernel(wc, l, Phase::Backward).flops == Approx(backward));
      CHECK(attention_kernel(w1, l, Phase::Forward).flops == Approx(forward * d(c)));
      // What one ring step sends: this GPU's K and V, s/c positions of the kv heads.
      CHECK(ring_elements(L) == d(kSeq / c) * d(kKvHeads) * d(kHeadDim) * 2);
    }
    CHECK(attention == kBlocks);
  }
  CHECK(split_context(net, 1, flash_context()).layers[2].output_shape == net.layers[2].output_shape);
}

TEST_CASE("context parallelism under tensor and sequence parallelism: ring bytes per layer", "[parallel][context]") {
  ParallelConfig cfg;
  cfg.tensor = 2;
  cfg.context = 4;
  cfg.sequence_parallel = true;
  const ShardedNetwork s = shard_with_context(llama(), cfg, flash_context());
  for (const Layer& L : s.net.layers) {
    if (L.type != LayerType::Attention) continue;
    // The tensor group holds 1 of the 2 kv heads on each GPU; the block is s / context positions.
    CHECK(L.input_shapes.front()[0] == kSeq / 4);
    CHECK(ring_elements(L) == d(kSeq / 4) * 1 * d(kHeadDim) * 2);
  }
  // Sequence parallelism splits the context block further: the norms hold s / (context x tensor).
  for (const Layer& L : s.net.layers) {
    if (L.type == LayerType::RmsNorm) CHECK(L.output_shape[0] == kSeq / 8);
  }
}

TEST_CASE("the ring's exposed time is max(0, transfer - attention / c) per step", "[parallel][context]") {
  // Forward: c - 1 steps of K, V beside 1/c of the attention each.
  CHECK(ring_forward_ms(4, 1.0, 2.0) == Approx(3 * (1.0 - 0.5)));
  CHECK(ring_forward_ms(4, 1.0, 8.0) == 0.0);
  CHECK(ring_forward_ms(1, 1.0, 0.0) == 0.0);
  // Backward: K, V first, dK, dV last, both between.
  CHECK(ring_backward_ms(4, 1.0, 2.0, 4.0) == Approx(2 * 0.0 + 2 * (2.0 - 1.0)));
  CHECK(ring_backward_ms(2, 1.0, 2.0, 1.0) == Approx(2 * (1.0 - 0.5)));
  CHECK(ring_backward_ms(8, 1.0, 2.0, 100.0) == 0.0);

  // Wired to the layers: a slow ring (100 ms of latency a hop) exposes nearly all of it.
  ParallelConfig cfg;
  cfg.context = 4;
  cfg.micro_batch_size = 2;
  cfg.gpus = 4;
  REQUIRE(find_hardware("h100-sxm") != nullptr);
  const Accelerator acc = *find_hardware("h100-sxm");
  Fabric fabric = resolve_fabric(acc, cfg);
  fabric.intra.latency_us = 1e5;
  const ShardedNetwork shard = shard_with_context(llama(), cfg, flash_context());
  const StepWork work = step_work(shard.net, 2, flash_context(), Optimizer::Adam);
  const std::vector<double> ring = context_ring_ms(shard, work, cfg, fabric, acc, Precision::BF16);
  const double bytes = 2.0 * 2 * d(kSeq / 4) * d(kKvHeads) * d(kHeadDim) * 2;  // bf16, 2 samples, K and V
  const double link = fabric.intra.bandwidth_gbs * 1e9 * kLinkEfficiency;
  const double kv = bytes / link * 1e3 + 100.0, kv_dkv = 2 * bytes / link * 1e3 + 100.0;
  for (std::size_t l = 0; l < shard.net.layers.size(); ++l) {
    if (shard.net.layers[l].type != LayerType::Attention) {
      CHECK(ring[l] == 0.0);
      continue;
    }
    const double a_f = kernel_time(attention_kernel(work, l, Phase::Forward), acc, Precision::BF16).total_ms();
    const double a_b = kernel_time(attention_kernel(work, l, Phase::Backward), acc, Precision::BF16).total_ms();
    const double expected = 3 * (kv - a_f / 4) + 2 * (kv - a_b / 4) + 2 * (kv_dkv - a_b / 4);
    CHECK(ring[l] == Approx(expected));
  }
  // Full recomputation repeats the forward ring of every block.
  cfg.recompute = Recompute::Full;
  const std::vector<double> again = context_ring_ms(shard, work, cfg, fabric, acc, Precision::BF16);
  for (std::size_t l = 0; l < shard.net.layers.size(); ++l) {
    if (shard.net.layers[l].type != LayerType::Attention) continue;
    const double a_f = kernel_time(attention_kernel(work, l, Phase::Forward), acc, Precision::BF16).total_ms();
    CHECK(again[l] - ring[l] == Approx(3 * (kv - a_f / 4)));
  }
}

TEST_CASE("context parallelism keeps 1/c of the activations", "[parallel][context][memory]") {
  const Network net = llama();
  const double b = 2, e = 2;
  for (std::int64_t c : {2, 4}) {
    ParallelConfig one, cp;
    cp.context = c;
    const ShardedNetwork s1 = shard_with_context(net, one, flash_context());
    const ShardedNetwork sc = shard_with_context(net, cp, flash_context());
    const StepWork w1 = step_work(s1.net, 2, flash_context(), Optimizer::Adam);
    const StepWork wc = step_work(sc.net, 2, flash_context(), Optimizer::Adam);
    const std::vector<double> a1 = saved_activation_bytes(s1, w1, Recompute::None, 2);
    const std::vector<double> ac = saved_activation_bytes(sc, wc, Recompute::None, 2);
    double t1 = 0, tc = 0;
    for (std::size_t l = 0; l < a1.size(); ++l) {
      t1 += a1[l], tc += ac[l];
      CHECK(ac[l] == Approx(a1[l] / d(c)));
      if (net.layers[l].type != LayerType::Attention) continue;
      // Fused attention keeps its input, Q, K, V (this GPU's block only: the ring is run again in backward),
      // its output and the FP32 row log-sum-exp: e (m h + 2 m q + 2 m kv) + 4 b heads s, m = b s / c.
      const double m = b * d(kSeq / c), q = d(kHeads * kHeadDim), kv = d(kKvHeads * kHeadDim);
      CHECK(ac[l] == Approx(e * (m * d(kHidden) + 2 * m * q + 2 * m * kv) + 4 * b * d(kHeads) * d(kSeq / c)));
    }
    CHECK(tc == Approx(t1 / d(c)));
    // Full recomputation: one block's input per block, also 1/c.
    const std::vector<double> f1 = saved_activation_bytes(s1, w1, Recompute::Full, 2);
    const std::vector<double> fc = saved_activation_bytes(sc, wc, Recompute::Full, 2);
    for (std::size_t l = 0; l < f1.size(); ++l) CHECK(fc[l] == Approx(f1[l] / d(c)));
  }
}

TEST_CASE("gradients are reduced, and ZeRO shards, over data x context GPUs", "[parallel][context]") {
  ParallelConfig cfg;
  cfg.tensor = 2;
  cfg.context = 4;
  cfg.data = 2;
  cfg.gpus = 16;
  Fabric fabric;
  fabric.gpus_per_node = 8;
  const Communicator g = gradient_communicator(cfg, fabric);
  // Megatron's data-parallel group with context parallelism: 8 ranks at stride tensor = 2, 4 in each node.
  CHECK(g.size == 8);
  CHECK(g.per_domain == 4);
  CHECK(g.domains == 2);
  const Communicator cp = communicator(cfg, fabric, Group::Context);
  CHECK(cp.size == 4);
  CHECK(cp.domains == 1);
  // The step: the same data_ms as 8 data ranks at context 1, whose group is the same 8 GPUs.
  ParallelConfig flat = cfg;
  flat.context = 1;
  flat.data = 8;
  StagePlan sp;
  sp.bounds = {0, 1};
  sp.forward = sp.backward = {1.0};
  sp.tensor = sp.optimizer = sp.context = {0.0};
  sp.params = sp.trainable = sp.largest_param = {1e8};
  fabric.intra = {"nvlink", 450, 1};
  fabric.inter = {"ib", 50, 5};
  const ParallelTiming a = finish_parallel(sp, cfg, fabric, Precision::BF16);
  const ParallelTiming b = finish_parallel(sp, flat, fabric, Precision::BF16);
  CHECK(a.data_ms > 0);
  CHECK(a.data_ms == b.data_ms);
  const double all = allreduce_ms(2e8, g, fabric);
  CHECK(a.data_ms == Approx(std::max(all - 1.0, allreduce_ms(kGradientBucketBytes, g, fabric))));
  // ZeRO-1: the optimizer states are 1/(data x context) on each GPU.
  TrainingConfig tr = flash_training();
  StageInputs in;
  in.params = in.trainable = 1e8;
  in.tensors.elements = in.tensors.matrices = 1e8;
  cfg.zero_stage = flat.zero_stage = 1;
  CHECK(stage_memory(in, 0, cfg, tr).optimizer_gb == stage_memory(in, 0, flat, tr).optimizer_gb);
  ParallelConfig unsharded = cfg;
  unsharded.zero_stage = 0;
  CHECK(stage_memory(in, 0, cfg, tr).optimizer_gb == Approx(stage_memory(in, 0, unsharded, tr).optimizer_gb / 8));
}

TEST_CASE("the response echoes context and reports the ring's exposed time", "[parallel][context]") {
  const Json one = call(request({{"data", 2}, {"context", 1}}));
  REQUIRE_FALSE(one.contains("error"));
  const Json& p1 = one["results"][0]["parallel"];
  CHECK(p1["context"] == 1);
  CHECK(p1["communication_ms"]["context"] == 0.0);
  CHECK(p1["links"]["context"].is_null());
  const Json four = call(request({{"data", 2}, {"context", 4}}));
  REQUIRE_FALSE(four.contains("error"));
  const Json& r = four["results"][0];
  const Json& p = r["parallel"];
  CHECK(p["gpus"] == 8);
  CHECK(p["context"] == 4);
  CHECK(p["links"]["context"] == "intra_node");
  const double context = p["communication_ms"]["context"].get<double>();
  CHECK(context >= 0.0);
  double sum = r["forward_ms"].get<double>() + r["backward_ms"].get<double>() + r["optimizer_ms"].get<double>();
  for (const char* k : {"data", "tensor", "pipeline", "zero", "context"}) sum += p["communication_ms"][k].get<double>();
  sum += p["bubble_ms"].get<double>();
  CHECK(r["step_ms"].get<double>() == Approx(sum).epsilon(1e-9));
  // 1/4 of the sequence per GPU: less compute and activation memory than one GPU of the same replica count.
  CHECK(r["forward_ms"].get<double>() < one["results"][0]["forward_ms"].get<double>());
  CHECK(r["memory"]["activations_gb"].get<double>() ==
        Approx(one["results"][0]["memory"]["activations_gb"].get<double>() / 4).epsilon(1e-5));
}

TEST_CASE("context parallelism refuses what it cannot model, naming parallel.context", "[parallel][context]") {
  require_context_error(request({{"context", 3}}), "context degree 3 must divide the sequence of 4096");
  require_context_error(request({{"context", 4}}, 4100), "2 x context = 8 must divide the sequence of 4100");
  Json eager = request({{"context", 2}});
  eager["training"]["attention"] = "eager";
  require_context_error(eager, "set training.attention to \"flash\"");
  // No attention: a stack of dense layers over a sequence.
  Json mlp = request({{"context", 2}});
  mlp["model"] = Json::parse(R"({"input": {"kind": "sequence", "seq_len": 64, "features": 32},
    "layers": [{"type": "dense", "units": 32}]})");
  require_context_error(mlp, "the network has no attention layer");
  auto attention_model = [](const std::string& extra) {
    return Json::parse(R"({"input": {"kind": "sequence", "seq_len": 64, "features": 64}, "layers": [
      {"type": "attention", "name": "a", "num_heads": 4, "causal": true)" +
                       extra + "}]}");
  };
  Json r = request({{"context", 2}});
  r["model"] = attention_model(R"(, "window": 16)");
  require_context_error(r, "sliding-window");
  r["model"] = attention_model(R"(, "sinks": true)");
  require_context_error(r, "sinks");
  r["model"] = attention_model(R"(, "softcap": 30.0)");
  require_context_error(r, "soft-capping");
  r["model"] = attention_model(R"(, "memory_len": 16)");
  require_context_error(r, "memory_len");
  // A layer that does not run position by position (a recurrent mixer).
  r["model"] = Json::parse(R"({"input": {"kind": "sequence", "seq_len": 64, "features": 64}, "layers": [
      {"type": "attention", "num_heads": 4, "causal": true}, {"type": "lstm", "hidden_size": 64}]})");
  require_context_error(r, "does not run position by position");
  // Non-causal attention runs on the ring (no mask; every step a full block).
  r["model"] = attention_model("");
  r["model"]["layers"][0]["causal"] = false;
  CHECK_FALSE(call(r).contains("error"));
}

TEST_CASE("plan mode tries context degrees for long sequences only", "[parallel][context][plan]") {
  auto plan = [](std::int64_t seq) {
    Json req = {{"model", {{"hf_config", llama_config()}}},
                {"training", {{"batch_size", 64}, {"seq_len", seq}, {"precision", "bf16"}, {"attention", "flash"}}},
                {"hardware", {"h100-sxm"}},
                {"plan", {{"max_gpus", 64}, {"top", 100}}}};
    return Json::parse(plan_json(req.dump()));
  };
  auto contexts = [](const Json& out) {
    std::int64_t most = 0;
    for (const Json& l : out["results"][0]["by_time"]) most = std::max(most, l["context"].get<std::int64_t>());
    return most;
  };
  const Json short_plan = plan(4096), long_plan = plan(kPlanContextMinSequence);
  INFO(long_plan.dump().substr(0, 2000));
  REQUIRE_FALSE(long_plan.contains("error"));
  CHECK(contexts(short_plan) == 1);
  CHECK(contexts(long_plan) > 1);
  // The search stays small: context > 1 only at micro-batch size 1.
  const double considered_short = short_plan["results"][0]["layouts_considered"].get<double>();
  const double considered_long = long_plan["results"][0]["layouts_considered"].get<double>();
  CHECK(considered_long < 2 * considered_short);
}
