// Recomputation granularity (docs/PREDICTION.md, "Recomputation granularity"): op-level checkpointing
// (parallel.recompute "ops": the block input and the matmul and fused-attention outputs kept, everything else
// recomputed) and layer-wise full checkpointing of every n-th block (parallel.recompute_every), on a GPT-2
// decoder whose kept bytes are written out here from its shapes.
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
#include "prenet/parallel.hpp"

using namespace prenet;
using testutil::d;
using testutil::require_input_error;

namespace {

constexpr std::int64_t kHidden = 256, kHeads = 8, kSeq = 128, kLayers = 4, kVocab = 5000;

/// GPT-2 (pre-norm; GELU MLP of 4h; dropout on the probabilities and the residuals) with Megatron's kernels.
Network gpt(AttentionKernel attention) {
  TrainingConfig tr;
  tr.seq_len = kSeq;
  tr.precision = Precision::BF16;
  tr.attention = attention;
  tr.kernels = KernelSet::Megatron;
  const Json config = {{"model_type", "gpt2"}, {"n_embd", kHidden},
                       {"n_head", kHeads},     {"n_layer", kLayers},
                       {"vocab_size", kVocab}, {"n_positions", kSeq},
                       {"attn_pdrop", 0.1},    {"resid_pdrop", 0.1},
                       {"embd_pdrop", 0.1},    {"activation_function", "gelu_pytorch_tanh"}};
  return resolve_model({{"hf_config", config}}, tr);
}

KernelContext kernels(AttentionKernel attention) {
  return KernelContext(Precision::BF16, attention, KernelSet::Megatron);
}

/// Sum of `per_layer` over the layers of block instance "h.<i>.".
double block_sum(const ShardedNetwork& shard, const std::vector<double>& per_layer, int instance) {
  const std::string prefix = "h." + std::to_string(instance) + ".";
  double total = 0;
  for (std::size_t l = 0; l < shard.net.layers.size(); ++l) {
    if (shard.net.layers[l].name.rfind(prefix, 0) == 0) total += per_layer[l];
  }
  return total;
}

/// Per layer, the FLOPs of its forward kernels (all of them, or only the matrix products).
std::vector<double> forward_flops(const StepWork& work, bool matmul_only) {
  std::vector<double> out(work.layers.size(), 0.0);
  for (const Kernel& k : work.kernels) {
    if (k.phase == Phase::Forward && (!matmul_only || is_matmul(k.cls)))
      out[static_cast<std::size_t>(k.layer)] += k.flops;
  }
  return out;
}

/// Per layer, the FLOPs recomputation appended to `work` (kernels after the first `before`).
std::vector<double> appended_flops(const StepWork& work, std::size_t before) {
  std::vector<double> out(work.layers.size(), 0.0);
  for (std::size_t i = before; i < work.kernels.size(); ++i) {
    out[static_cast<std::size_t>(work.kernels[i].layer)] += work.kernels[i].flops;
  }
  return out;
}

}  // namespace

TEST_CASE("op-level recomputation keeps each block's input and its matmul and attention outputs", "[recompute]") {
  // Per block, 16-bit (2 bytes), micro-batch b, tensor degree t (no sequence parallelism): the block input
  // s·b·h, the QKV projection's output 3·s·b·h/t, the output projection's s·b·h (row-parallel: full width before
  // its all-reduce), the MLP's c_fc output 4·s·b·h/t and c_proj's s·b·h. A fused attention kernel's output
  // s·b·h/t and FP32 log-sum-exp (4 bytes per query row and head, a/t heads) are kept too; eager attention's
  // batched products (scores, P V) are recomputed with the softmax and dropout. Bytes:
  //   flash: s·b·h·(6 + 16/t) + 4·a·s·b/t       eager: s·b·h·(6 + 14/t)
  const double s = kSeq, h = kHidden, a = kHeads;
  for (AttentionKernel attention : {AttentionKernel::Flash, AttentionKernel::Eager}) {
    const Network net = gpt(attention);
    const bool flash = attention == AttentionKernel::Flash;
    for (std::int64_t b : {1, 3}) {
      for (std::int64_t t : {1, 2}) {
        const ShardedNetwork shard = shard_network(net, t);
        const StepWork work = step_work(shard.net, b, kernels(attention), Optimizer::Adam);
        const double sbh = s * d(b) * h, td = d(t);
        INFO((flash ? "flash" : "eager") << ", micro-batch " << b << ", tensor " << t);
        const auto ops = saved_activation_bytes(shard, work, Recompute::Ops, b);
        const auto none = saved_activation_bytes(shard, work, Recompute::None, b);
        const double expected = flash ? sbh * (6 + 16 / td) + 4 * a * s * d(b) / td : sbh * (6 + 14 / td);
        for (int layer = 0; layer < kLayers; ++layer) {
          CHECK(block_sum(shard, ops, layer) == Approx(expected));
          CHECK(block_sum(shard, ops, layer) < block_sum(shard, none, layer));
        }
        // Outside the blocks (embeddings, final norm, head, loss) nothing changes.
        for (std::size_t l = 0; l < ops.size(); ++l) {
          if (!shard.layers[l].in_block) CHECK(ops[l] == none[l]);
        }
      }
    }
  }
}

TEST_CASE("op-level recomputation reruns a block's forward except its matmuls and fused attention", "[recompute]") {
  // Flash: the matrix products of a block are QKV 2·sb·h·3h, the output projection 2·sb·h·h, c_fc 2·sb·h·4h,
  // c_proj 2·sb·4h·h (24·s·b·h^2 in all) and the fused kernel's causal half of 2·b·a·s^2·(2·h/a): 2·b·s^2·h.
  // Everything else of its forward (norms, GELU, dropouts, residual adds, biases) runs again in backward.
  const double s = kSeq, h = kHidden;
  const Network net = gpt(AttentionKernel::Flash);
  const std::int64_t b = 2;
  const ShardedNetwork shard = shard_network(net, 1);
  StepWork work = step_work(shard.net, b, kernels(AttentionKernel::Flash), Optimizer::Adam);
  const std::vector<double> all = forward_flops(work, false), matmul = forward_flops(work, true);
  const std::size_t before = work.kernels.size();
  add_recompute_kernels(work, shard, Recompute::Ops);
  const std::vector<double> again = appended_flops(work, before);
  for (std::size_t i = before; i < work.kernels.size(); ++i) {
    CHECK(work.kernels[i].phase == Phase::Backward);
    CHECK_FALSE(is_matmul(work.kernels[i].cls));
  }
  const double sb = s * d(b);
  for (int layer = 0; layer < kLayers; ++layer) {
    INFO("block " << layer);
    CHECK(block_sum(shard, matmul, layer) == Approx(24 * sb * h * h + 2 * d(b) * s * s * h));
    CHECK(block_sum(shard, again, layer) == Approx(block_sum(shard, all, layer) - block_sum(shard, matmul, layer)));
    CHECK(block_sum(shard, again, layer) > 0);
  }
  for (std::size_t l = 0; l < again.size(); ++l) {
    if (!shard.layers[l].in_block) CHECK(again[l] == 0);
  }
}

TEST_CASE("full recomputation of every n-th block: the others keep all their activations", "[recompute]") {
  // torchtitan's layer-wise checkpointing (selective_ac_option n): blocks counted from 1, those with
  // count % n == 0 wrapped. A wrapped block keeps its input, 2·s·b·h bytes, and reruns its forward; the others
  // keep what they keep without recomputation (Korthikanti et al.: s·b·h·(34 + 5·a·s/h), plus two layer norms'
  // FP32 row statistics, 16·s·b) and rerun nothing.
  const double s = kSeq, h = kHidden, a = kHeads;
  const Network net = gpt(AttentionKernel::Eager);
  const std::int64_t b = 2;
  const ShardedNetwork shard = shard_network(net, 1);
  const StepWork base = step_work(shard.net, b, kernels(AttentionKernel::Eager), Optimizer::Adam);
  const std::vector<double> forward = forward_flops(base, false);
  const double sbh = s * d(b) * h;
  const double kept = sbh * (34 + 5 * a * s / h) + 16 * s * d(b), input = 2 * sbh;
  for (std::int64_t n : {1, 2, 3, 4}) {
    const auto saved = saved_activation_bytes(shard, base, Recompute::Full, b, n);
    StepWork work = base;
    add_recompute_kernels(work, shard, Recompute::Full, n);
    const std::vector<double> again = appended_flops(work, base.kernels.size());
    for (int layer = 0; layer < kLayers; ++layer) {
      const bool wrapped = (layer + 1) % n == 0;
      INFO("every " << n << ", block " << layer);
      CHECK(block_sum(shard, saved, layer) == Approx(wrapped ? input : kept));
      CHECK(block_sum(shard, again, layer) == Approx(wrapped ? block_sum(shard, forward, layer) : 0.0));
    }
  }
  require_input_error([&] { saved_activation_bytes(shard, base, Recompute::Full, b, kLayers + 1); },
                      "parallel.recompute_every", "more than the model's 4 blocks");
}

TEST_CASE("parallel.recompute takes ops; recompute_every needs full", "[recompute][options]") {
  CHECK(parse_parallel({{"recompute", "ops"}}, 32).recompute == Recompute::Ops);
  CHECK(std::string(to_string(Recompute::Ops)) == "ops");
  const ParallelConfig every = parse_parallel({{"recompute", "full"}, {"recompute_every", 3}}, 32);
  CHECK(every.recompute_every == 3);
  CHECK(parse_parallel({{"recompute", "full"}}, 32).recompute_every == 1);
  for (const char* mode : {"none", "selective", "ops"}) {
    INFO("recompute " << mode);
    require_input_error(
        [&] {
          parse_parallel({{"recompute", mode}, {"recompute_every", 2}}, 32);
        },
        "parallel.recompute_every", "under recompute \"full\" only");
  }
  require_input_error(
      [&] {
        parse_parallel({{"recompute_every", 2}}, 32);
      },
      "parallel.recompute_every", "recompute is \"none\"");
  require_input_error(
      [&] {
        parse_parallel({{"recompute", "full"}, {"recompute_every", 0}}, 32);
      },
      "parallel.recompute_every", "");
}

TEST_CASE("full recomputation of every n-th block repeats the tensor all-reduces of those blocks only",
          "[recompute][parallel]") {
  // Megatron's row-parallel all-reduce runs again when a block's forward is recomputed: per checkpointed block
  // one forward all-reduce per tensor-parallel layer (attention, MLP) more than without recomputation.
  const Network net = gpt(AttentionKernel::Flash);
  const ShardedNetwork shard = shard_network(net, 2);
  std::vector<std::array<double, 3>> layer_ms(shard.net.layers.size(), {1.0, 2.0, 0.0});
  const Accelerator& acc = *find_hardware("h100-sxm");
  auto tensor_ms = [&](Recompute mode, std::int64_t every) {
    ParallelConfig cfg;
    cfg.tensor = 2;
    cfg.gpus = 2;
    cfg.recompute = mode;
    cfg.recompute_every = every;
    const Fabric fabric = resolve_fabric(acc, cfg);
    return plan_stages(layer_ms, shard, cfg, fabric, Precision::BF16).tensor[0];
  };
  const double none = tensor_ms(Recompute::None, 1), all = tensor_ms(Recompute::Full, 1);
  CHECK(all > none);
  // Every 2nd of 4 blocks: half the extra all-reduces; every 4th: a quarter.
  CHECK(tensor_ms(Recompute::Full, 2) == Approx(none + (all - none) / 2));
  CHECK(tensor_ms(Recompute::Full, 4) == Approx(none + (all - none) / 4));
  CHECK(tensor_ms(Recompute::Ops, 1) == Approx(none));
}

TEST_CASE("a request with recompute_every keeps memory between full and none and echoes it", "[recompute][api]") {
  auto run = [](const Json& parallel) {
    const Json r = {{"model", {{"preset", "gpt2"}}},
                    {"training", {{"batch_size", 16}, {"precision", "bf16"}}},
                    {"hardware", {"h100-sxm"}},
                    {"options", {{"per_layer", false}}},
                    {"parallel", parallel}};
    const Json out = Json::parse(predict_json(r.dump()));
    INFO(out.dump().substr(0, 400));
    REQUIRE(out.contains("results"));
    return out["results"][0];
  };
  const Json none = run({{"gpus", 8}}), full = run({{"gpus", 8}, {"recompute", "full"}});
  const Json half = run({{"gpus", 8}, {"recompute", "full"}, {"recompute_every", 2}});
  CHECK(half["parallel"]["recompute_every"] == 2);
  CHECK_FALSE(full["parallel"].contains("recompute_every"));
  const double a_none = none["memory"]["activations_gb"], a_full = full["memory"]["activations_gb"];
  const double a_half = half["memory"]["activations_gb"];
  CHECK(a_full < a_half);
  CHECK(a_half < a_none);
  CHECK(double(full["step_ms"]) > double(half["step_ms"]));
  CHECK(double(half["step_ms"]) > double(none["step_ms"]));
}

namespace {

constexpr std::int64_t kLlamaHidden = 256, kLlamaHeads = 8, kLlamaKv = 2, kLlamaInner = 512, kLlamaLayers = 3;

/// A Llama decoder (bias-free Q, K, V, O; SwiGLU MLP) with flash attention, BF16.
Network llama(const Json& extra = Json::object()) {
  TrainingConfig tr;
  tr.seq_len = kSeq;
  tr.precision = Precision::BF16;
  tr.attention = AttentionKernel::Flash;
  Json config = {{"model_type", "llama"},
                 {"hidden_size", kLlamaHidden},
                 {"intermediate_size", kLlamaInner},
                 {"num_attention_heads", kLlamaHeads},
                 {"num_key_value_heads", kLlamaKv},
                 {"num_hidden_layers", kLlamaLayers},
                 {"vocab_size", kVocab},
                 {"max_position_embeddings", kSeq},
                 {"rms_norm_eps", 1e-5},
                 {"rope_theta", 10000.0},
                 {"hidden_act", "silu"},
                 {"tie_word_embeddings", false}};
  config.update(extra);
  return resolve_model({{"hf_config", config}}, tr);
}

/// Sum of `per_layer` over the layers of block instance `block` (ShardLayer::block).
double sum_of_block(const ShardedNetwork& shard, const std::vector<double>& per_layer, int block) {
  double total = 0;
  for (std::size_t l = 0; l < per_layer.size(); ++l) {
    if (shard.layers[l].in_block && shard.layers[l].block == block) total += per_layer[l];
  }
  return total;
}

}  // namespace

TEST_CASE("torchtitan_op recomputes every second matmul of a Llama block: k_proj, o_proj and up_proj", "[recompute]") {
  // torchtitan's _apply_op_sac counts a block's aten.mm calls from 1 (wq, wk, wv, wo, w1, w3, w2) and recomputes
  // the even ones. Against "ops" (every matmul output kept), per block and tensor degree t: the K projection's
  // s·b·kv/t, the output projection's s·b·h (row-parallel: full width) and up_proj's s·b·I/t outputs are not kept
  // (2 bytes each), and their GEMMs run again: 2·s·b·h·(kv + q + I)/t FLOPs (q = h here).
  const double s = kSeq, h = kLlamaHidden, kv = d(kLlamaKv) * (h / d(kLlamaHeads)), inner = kLlamaInner;
  const Network net = llama();
  for (std::int64_t b : {1, 2}) {
    for (std::int64_t t : {1, 2}) {
      INFO("micro-batch " << b << ", tensor " << t);
      const ShardedNetwork shard = shard_network(net, t);
      const KernelContext context(Precision::BF16, AttentionKernel::Flash, KernelSet::PyTorch);
      const StepWork work = step_work(shard.net, b, context, Optimizer::Adam);
      const double sb = s * d(b), td = d(t);
      const auto ops = saved_activation_bytes(shard, work, Recompute::Ops, b);
      const auto titan = saved_activation_bytes(shard, work, Recompute::TorchtitanOp, b);
      StepWork again_ops = work, again_titan = work;
      add_recompute_kernels(again_ops, shard, Recompute::Ops);
      add_recompute_kernels(again_titan, shard, Recompute::TorchtitanOp);
      const auto extra_ops = appended_flops(again_ops, work.kernels.size());
      const auto extra_titan = appended_flops(again_titan, work.kernels.size());
      for (int block = 0; block < kLlamaLayers; ++block) {
        INFO("block " << block);
        CHECK(sum_of_block(shard, ops, block) - sum_of_block(shard, titan, block) ==
              Approx(2 * sb * (kv / td + h + inner / td)));
        CHECK(sum_of_block(shard, extra_titan, block) - sum_of_block(shard, extra_ops, block) ==
              Approx(2 * sb * h * (kv + h + inner) / td));
      }
      for (std::size_t l = 0; l < ops.size(); ++l) {
        if (!shard.layers[l].in_block) CHECK(titan[l] == ops[l]);
      }
    }
  }
}

TEST_CASE("torchtitan_op is refused where the core cannot count a block's matmuls one by one", "[recompute]") {
  CHECK(parse_parallel({{"recompute", "torchtitan_op"}}, 32).recompute == Recompute::TorchtitanOp);
  CHECK(std::string(to_string(Recompute::TorchtitanOp)) == "torchtitan_op");
  // A mixture of experts runs its experts as grouped GEMMs, not one aten.mm per module.
  const Network moe = llama({{"model_type", "mixtral"}, {"num_local_experts", 4}, {"num_experts_per_tok", 2}});
  const ShardedNetwork shard = shard_network(moe, 1);
  const KernelContext context(Precision::BF16, AttentionKernel::Flash, KernelSet::PyTorch);
  StepWork work = step_work(shard.net, 1, context, Optimizer::Adam);
  require_input_error([&] { saved_activation_bytes(shard, work, Recompute::TorchtitanOp, 1); }, "parallel.recompute",
                      "use \"ops\" or \"full\"");
  require_input_error([&] { add_recompute_kernels(work, shard, Recompute::TorchtitanOp); }, "parallel.recompute",
                      "mixture-of-experts");
}
