// Memory per GPU (docs/PREDICTION.md, Memory): model states exact by formula, ZeRO sharding, and the
// activations of GPT-style layers against Korthikanti et al. (2022), "Reducing Activation Recomputation
// in Large Transformer Models", for each recomputation mode and tensor-parallel degree.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
#include "prenet/memory.hpp"
#include "prenet/parallel.hpp"

using namespace prenet;
using testutil::d;
using testutil::trained_with;

namespace {

// A GPT-2-style decoder (pre-norm, GELU MLP of 4h, dropout on attention probabilities and residuals), with
// Megatron-LM's kernels unless asked (fused GELU and 16-bit softmax): the layer Korthikanti et al. count.
constexpr std::int64_t kHidden = 256, kHeads = 8, kSeq = 128, kLayers = 4, kVocab = 5000;

Json gpt_config(double dropout = 0.1, const std::string& activation = "gelu_pytorch_tanh") {
  return {{"model_type", "gpt2"},  {"n_embd", kHidden},
          {"n_head", kHeads},      {"n_layer", kLayers},
          {"vocab_size", kVocab},  {"n_positions", kSeq},
          {"attn_pdrop", dropout}, {"resid_pdrop", dropout},
          {"embd_pdrop", dropout}, {"activation_function", activation}};
}

/// The kernels gpt() times with unless asked otherwise: Megatron-LM's.
KernelContext megatron_kernels(Precision precision, AttentionKernel attention = AttentionKernel::Eager) {
  return KernelContext(precision, attention, KernelSet::Megatron);
}

Network gpt(Precision precision, double dropout = 0.1, AttentionKernel attention = AttentionKernel::Eager,
            const std::string& activation = "gelu_pytorch_tanh", KernelSet kernels = KernelSet::Megatron) {
  TrainingConfig tr;
  tr.seq_len = kSeq;
  tr.precision = precision;
  tr.attention = attention;
  tr.kernels = kernels;
  return resolve_model({{"hf_config", gpt_config(dropout, activation)}}, tr);
}

/// Activation bytes of the layers of block instance "h.<i>." for one micro-batch.
double block_bytes(const ShardedNetwork& shard, const std::vector<double>& saved, int instance) {
  const std::string prefix = "h." + std::to_string(instance) + ".";
  double total = 0;
  for (std::size_t l = 0; l < shard.net.layers.size(); ++l) {
    if (shard.net.layers[l].name.rfind(prefix, 0) == 0) total += saved[l];
  }
  return total;
}

}  // namespace

TEST_CASE("model states per parameter follow the documented formula", "[memory]") {
  // FP32: 4 weights + 4 gradients + 4 per optimizer state. Mixed: 2 (16-bit) + 4 (master) + 2 gradients.
  auto check = [](Precision p, Optimizer o, double w, double g, double opt) {
    StateBytes b = state_bytes(trained_with(p, o));
    CHECK(b.weights16 + b.master == w);
    CHECK(b.gradients == g);
    CHECK(b.optimizer == opt);
  };
  check(Precision::FP32, Optimizer::Adam, 4, 4, 8);
  check(Precision::TF32, Optimizer::SGD, 4, 4, 0);
  check(Precision::BF16, Optimizer::AdamW, 6, 2, 8);
  check(Precision::FP16, Optimizer::Momentum, 6, 2, 4);
  check(Precision::FP8, Optimizer::None, 6, 2, 0);

  Network net = gpt(Precision::BF16);
  StepWork work = step_work(net, 2, megatron_kernels(Precision::BF16), Optimizer::Adam);
  MemoryEstimate m = estimate_memory(net, work, trained_with(Precision::BF16, Optimizer::Adam));
  const double params = d(net.parameters());
  CHECK(m.weights_gb == Approx(6 * params / 1e9).epsilon(1e-12));
  CHECK(m.gradients_gb == Approx(2 * params / 1e9).epsilon(1e-12));
  CHECK(m.optimizer_gb == Approx(8 * params / 1e9).epsilon(1e-12));
}

TEST_CASE("one GPU laid out as a parallel job has the single-GPU memory", "[memory]") {
  Network net = gpt(Precision::BF16);
  ShardedNetwork shard = shard_network(net, 1);
  ParallelConfig cfg;
  cfg.micro_batch_size = 4;
  StepWork work = step_work(shard.net, 4, megatron_kernels(Precision::BF16), Optimizer::Adam);
  auto saved = saved_activation_bytes(shard, work, Recompute::None, 4);
  MemoryEstimate a = estimate_stage_memory(shard, saved, saved, 0, net.layers.size(), 0, cfg,
                                           trained_with(Precision::BF16, Optimizer::Adam));
  MemoryEstimate b = estimate_memory(net, work, trained_with(Precision::BF16, Optimizer::Adam));
  CHECK(a.total_gb() == Approx(b.total_gb()).epsilon(1e-12));
  CHECK(a.temporary_gb == 0);
}

TEST_CASE("ZeRO stages shard optimizer states, then gradients, then weights over the data group", "[memory]") {
  Network net = gpt(Precision::BF16);
  ShardedNetwork shard = shard_network(net, 1);
  StepWork work = step_work(shard.net, 1, megatron_kernels(Precision::BF16), Optimizer::Adam);
  auto saved = saved_activation_bytes(shard, work, Recompute::None, 1);
  const double P = d(net.parameters());
  const double dp = 8;
  for (int stage = 0; stage <= 3; ++stage) {
    ParallelConfig cfg;
    cfg.data = 8;
    cfg.gpus = 8;
    cfg.zero_stage = stage;
    MemoryEstimate m = estimate_stage_memory(shard, saved, saved, 0, net.layers.size(), 0, cfg,
                                             trained_with(Precision::BF16, Optimizer::Adam));
    const double w16 = stage >= 3 ? 2 * P / dp : 2 * P;
    const double master = stage >= 1 ? 4 * P / dp : 4 * P;
    const double grads = stage >= 2 ? 2 * P / dp : 2 * P;
    const double opt = stage >= 1 ? 8 * P / dp : 8 * P;
    INFO("ZeRO stage " << stage);
    CHECK(m.weights_gb * 1e9 == Approx(w16 + master).epsilon(1e-12));
    CHECK(m.gradients_gb * 1e9 == Approx(grads).epsilon(1e-12));
    CHECK(m.optimizer_gb * 1e9 == Approx(opt).epsilon(1e-12));
  }
}

TEST_CASE("GPT layer activations match Korthikanti et al. for each recomputation mode", "[memory]") {
  // Per layer, 16-bit, with dropout: none s·b·h·(34 + 5·a·s/h); selective 34·s·b·h; full 2·s·b·h.
  // With tensor parallelism t (no sequence parallelism): s·b·h·(10 + 24/t + 5·a·s/(h·t)) and 10 + 24/t.
  // The paper leaves out each layer norm's per-row statistics (FP32 mean and inverse deviation,
  // 8 bytes per token), which the core keeps: 2 norms x 8 bytes x s·b per layer are added here.
  const double s = kSeq, h = kHidden, a = kHeads;
  Network net = gpt(Precision::BF16);
  for (std::int64_t b : {1, 3}) {
    for (std::int64_t t : {1, 2, 4}) {
      ShardedNetwork shard = shard_network(net, t);
      StepWork work = step_work(shard.net, b, megatron_kernels(Precision::BF16), Optimizer::Adam);
      const double sbh = s * d(b) * h, stats = 2 * 8 * s * d(b), td = d(t);
      INFO("micro-batch " << b << ", tensor " << t);
      auto none = saved_activation_bytes(shard, work, Recompute::None, b);
      auto selective = saved_activation_bytes(shard, work, Recompute::Selective, b);
      auto full = saved_activation_bytes(shard, work, Recompute::Full, b);
      for (int layer = 0; layer < kLayers; ++layer) {
        CHECK(block_bytes(shard, none, layer) == Approx(sbh * (10 + 24 / td + 5 * a * s / (h * td)) + stats));
        CHECK(block_bytes(shard, selective, layer) == Approx(sbh * (10 + 24 / td) + stats));
        CHECK(block_bytes(shard, full, layer) == Approx(2 * sbh));
      }
    }
  }
}

TEST_CASE("a fused (flash) attention keeps no scores: Korthikanti's selective numbers without recomputing",
          "[memory][flash]") {
  // FlashAttention saves Q, K, V, O and each row's log-sum-exp (FP32, per head); the 5·a·s/h term is gone
  // in every mode, and selective recomputation has nothing left to drop or redo.
  const double s = kSeq, h = kHidden, a = kHeads;
  Network net = gpt(Precision::BF16, 0.1, AttentionKernel::Flash);
  for (std::int64_t b : {1, 3}) {
    ShardedNetwork shard = shard_network(net, 1);
    const KernelContext flash = megatron_kernels(Precision::BF16, AttentionKernel::Flash);
    StepWork work = step_work(shard.net, b, flash, Optimizer::Adam);
    const double sbh = s * d(b) * h, stats = 2 * 8 * s * d(b), lse = 4 * a * s * d(b);
    INFO("micro-batch " << b);
    auto none = saved_activation_bytes(shard, work, Recompute::None, b);
    auto selective = saved_activation_bytes(shard, work, Recompute::Selective, b);
    for (int layer = 0; layer < kLayers; ++layer) {
      CHECK(block_bytes(shard, none, layer) == Approx(34 * sbh + stats + lse));
      CHECK(block_bytes(shard, selective, layer) == Approx(34 * sbh + stats + lse));
    }
    StepWork again = work;
    add_recompute_kernels(again, shard, Recompute::Selective);
    CHECK(again.kernels.size() == work.kernels.size());
  }
}

TEST_CASE("with sequence parallelism every term of the GPT layer activations is divided by t", "[memory]") {
  // Korthikanti et al. (2022), sequence parallelism: none s·b·h·(34 + 5·a·s/h)/t, selective 34·s·b·h/t; full
  // keeps the block input, which Megatron holds sequence-split: 2·s·b·h/t. The layer norms' row
  // statistics (8 bytes per token, see above) are split with the sequence too. At t = 1 nothing changes.
  const double s = kSeq, h = kHidden, a = kHeads;
  Network net = gpt(Precision::BF16);
  for (std::int64_t b : {1, 3}) {
    for (std::int64_t t : {1, 2, 4}) {
      ShardedNetwork shard = shard_network(net, t, true);
      StepWork work = step_work(shard.net, b, megatron_kernels(Precision::BF16), Optimizer::Adam);
      const double sbh = s * d(b) * h, td = d(t), stats = 2 * 8 * s * d(b) / td;
      INFO("micro-batch " << b << ", tensor " << t);
      auto none = saved_activation_bytes(shard, work, Recompute::None, b);
      auto selective = saved_activation_bytes(shard, work, Recompute::Selective, b);
      auto full = saved_activation_bytes(shard, work, Recompute::Full, b);
      for (int layer = 0; layer < kLayers; ++layer) {
        CHECK(block_bytes(shard, none, layer) == Approx(sbh * (34 + 5 * a * s / h) / td + stats));
        CHECK(block_bytes(shard, selective, layer) == Approx(sbh * 34 / td + stats));
        CHECK(block_bytes(shard, full, layer) == Approx(2 * sbh / td));
      }
    }
  }
}

TEST_CASE("sequence parallelism never keeps more activations than tensor parallelism alone", "[memory]") {
  Network net = gpt(Precision::BF16);
  for (std::int64_t t : {2, 4}) {
    ShardedNetwork off = shard_network(net, t), on = shard_network(net, t, true);
    StepWork w_off = step_work(off.net, 2, megatron_kernels(Precision::BF16), Optimizer::Adam);
    StepWork w_on = step_work(on.net, 2, megatron_kernels(Precision::BF16), Optimizer::Adam);
    for (Recompute mode : {Recompute::None, Recompute::Selective, Recompute::Full}) {
      auto a = saved_activation_bytes(off, w_off, mode, 2);
      auto b = saved_activation_bytes(on, w_on, mode, 2);
      double total_a = 0, total_b = 0;
      for (std::size_t l = 0; l < a.size(); ++l) {
        INFO("tensor " << t << ", mode " << to_string(mode) << ", layer " << net.layers[l].name);
        CHECK(b[l] <= a[l]);
        total_a += a[l];
        total_b += b[l];
      }
      CHECK(total_b < total_a);
    }
  }
}

TEST_CASE("without dropout the attention keeps only the softmax output", "[memory]") {
  // Korthikanti's 5as/h term is 2as/h (softmax) + as/h (mask) + 2as/h (dropout output); no dropout: 2as/h,
  // and the two residual dropout masks (sbh each) go too.
  const double s = kSeq, h = kHidden, a = kHeads;
  Network net = gpt(Precision::BF16, 0.0);
  ShardedNetwork shard = shard_network(net, 1);
  StepWork work = step_work(shard.net, 2, megatron_kernels(Precision::BF16), Optimizer::Adam);
  auto none = saved_activation_bytes(shard, work, Recompute::None, 2);
  const double sbh = s * 2 * h;
  CHECK(block_bytes(shard, none, 1) == Approx(sbh * (32 + 2 * a * s / h) + 2 * 8 * s * 2));
}

TEST_CASE("PyTorch's eager attention under autocast keeps FP32 probabilities and a 16-bit copy",
          "[memory][attention]") {
  // PyTorch's softmax is on autocast's FP32 list: its FP32 output (saved by its backward) is cast to 16 bits
  // for PV (saved by that GEMM), or the dropout's mask and output are; a fused 16-bit softmax keeps 2 bytes.
  // In FP32 both are the same kernel. Per score element: 4 + 2 (no dropout), 4 + 1 + 2 (dropout), against
  // 2 and 2 + 1 + 2 for the fused softmax.
  const double s = kSeq, a = kHeads;
  for (double dropout : {0.0, 0.1}) {
    INFO("dropout " << dropout);
    for (Precision p : {Precision::BF16, Precision::FP32}) {
      Network eager = gpt(p, dropout, AttentionKernel::Eager, "gelu_pytorch_tanh", KernelSet::PyTorch);
      Network fused = gpt(p, dropout);
      ShardedNetwork es = shard_network(eager, 1), fs = shard_network(fused, 1);
      StepWork ew = step_work(es.net, 2, KernelContext(p), Optimizer::Adam);
      StepWork fw = step_work(fs.net, 2, megatron_kernels(p), Optimizer::Adam);
      auto eb = saved_activation_bytes(es, ew, Recompute::None, 2);
      auto fb = saved_activation_bytes(fs, fw, Recompute::None, 2);
      // Bytes per score beyond the fused softmax's: 4 + 1 + 2 - (2 + 1 + 2) with dropout, 4 + 2 - 2 without.
      const double autocast_extra = dropout > 0 ? 2.0 : 4.0;
      const double scores = 2 * a * s * s, extra = p == Precision::BF16 ? autocast_extra : 0.0;
      CHECK(block_bytes(es, eb, 1) - block_bytes(fs, fb, 1) == Approx(extra * scores).margin(1e-6));
      // Selective recomputation drops all of it.
      auto esel = saved_activation_bytes(es, ew, Recompute::Selective, 2);
      auto fsel = saved_activation_bytes(fs, fw, Recompute::Selective, 2);
      CHECK(block_bytes(es, esel, 1) == Approx(block_bytes(fs, fsel, 1)));
      // Op by op, per layer: the scale (each way) and the causal mask (forward); under autocast also the casts
      // around the FP32 softmax, two each way.
      CHECK(ew.kernels.size() - fw.kernels.size() == (p == Precision::BF16 ? 7u : 3u) * kLayers);
    }
  }
}

TEST_CASE("pipeline stages keep the activations of the micro-batches in flight", "[memory]") {
  Network net = gpt(Precision::BF16);
  ShardedNetwork shard = shard_network(net, 1);
  StepWork work = step_work(shard.net, 1, megatron_kernels(Precision::BF16), Optimizer::Adam);
  auto saved = saved_activation_bytes(shard, work, Recompute::None, 1);
  ParallelConfig cfg;
  cfg.pipeline = 4;
  cfg.gpus = 4;
  cfg.micro_batches = 8;
  const std::size_t n = net.layers.size();
  std::vector<std::size_t> bounds = {0, n / 4, n / 2, 3 * n / 4, n};
  for (std::size_t st = 0; st < 4; ++st) {
    double acts = 0;
    for (std::size_t l = bounds[st]; l < bounds[st + 1]; ++l) acts += saved[l];
    MemoryEstimate m = estimate_stage_memory(shard, saved, saved, bounds[st], bounds[st + 1], st, cfg,
                                             trained_with(Precision::BF16, Optimizer::Adam));
    CHECK(m.activations_gb * 1e9 == Approx(acts * d(4 - static_cast<std::int64_t>(st))));
  }
  cfg.micro_batches = 2;  // fewer micro-batches than stages: never more than exist
  MemoryEstimate first = estimate_stage_memory(shard, saved, saved, bounds[0], bounds[1], 0, cfg,
                                               trained_with(Precision::BF16, Optimizer::Adam));
  double acts = 0;
  for (std::size_t l = bounds[0]; l < bounds[1]; ++l) acts += saved[l];
  CHECK(first.activations_gb * 1e9 == Approx(2 * acts));
}

TEST_CASE("the loss keeps FP32 log-probabilities and meets the backward peak with two FP32 gradients", "[memory]") {
  // 12 bytes per logit whatever the training precision: autocast and Hugging Face run the loss in FP32.
  Network net = testutil::net_of(R"J({"input": {"kind": "sequence", "seq_len": 16, "features": 32},
    "layers": [{"type": "dense", "name": "head", "units": 1000},
               {"type": "cross_entropy", "name": "loss"}]})J");
  const std::size_t loss = testutil::layer_index(net, "loss");
  for (Precision p : {Precision::FP32, Precision::BF16}) {
    StepWork work = step_work(net, 4, KernelContext(p), Optimizer::Adam);
    CHECK(work.layers[loss].saved_activation_bytes == Approx(12.0 * 4 * 16 * 1000));
  }
}

TEST_CASE("a ReLU whose output a dense or convolution layer saves adds no activation memory", "[memory]") {
  // PyTorch stores a tensor saved by two layers once; a ReLU's backward reads only its output.
  Network net = testutil::net_of(R"J({"input": {"kind": "vector", "features": 64},
    "layers": [{"type": "dense", "name": "fc1", "units": 128},
               {"type": "activation", "name": "relu", "function": "relu"},
               {"type": "dense", "name": "fc2", "units": 128, "activation": "relu"},
               {"type": "dense", "name": "fc3", "units": 128, "activation": "gelu"},
               {"type": "dense", "name": "fc4", "units": 10, "activation": "relu"}]})J");
  const double b = 8, e = 4;
  StepWork work = step_work(net, 8, KernelContext(Precision::FP32), Optimizer::Adam);
  auto saved = [&](const char* name) { return work.layers[testutil::layer_index(net, name)].saved_activation_bytes; };
  CHECK(saved("fc1") == Approx(e * b * 64));           // its input only: no activation of its own
  CHECK(saved("relu") == 0);                           // fc2 saves the same tensor
  CHECK(saved("fc2") == Approx(e * b * 128));          // fused ReLU output held by fc3: the input alone
  CHECK(saved("fc3") == Approx(e * b * (128 + 128)));  // GELU's backward reads its input, a tensor apart
  CHECK(saved("fc4") == Approx(e * b * (128 + 10)));   // no consumer keeps its ReLU output
}

TEST_CASE("Hugging Face's gelu_new is a chain of PyTorch operations: more saved bytes and more kernels",
          "[memory][activation]") {
  // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) keeps pow's FP32 input, tanh's output, 1 + tanh (FP32)
  // and 0.5·x (e bytes): 3·4 + e bytes per element of the 4h hidden, where the fused GELU keeps e.
  const double s = kSeq, h = kHidden;
  for (Precision p : {Precision::BF16, Precision::FP32}) {
    const double e = activation_bytes(p);
    // PyTorch's kernels both, so only the GELU differs; Megatron's would fuse gelu_new too (below).
    Network fused = gpt(p, 0.1, AttentionKernel::Eager, "gelu_pytorch_tanh", KernelSet::PyTorch);
    Network chain = gpt(p, 0.1, AttentionKernel::Eager, "gelu_new", KernelSet::PyTorch);
    ShardedNetwork fs = shard_network(fused, 1), cs = shard_network(chain, 1);
    StepWork fw = step_work(fs.net, 2, KernelContext(p), Optimizer::Adam),
             cw = step_work(cs.net, 2, KernelContext(p), Optimizer::Adam);
    auto fb = saved_activation_bytes(fs, fw, Recompute::None, 2);
    auto cb = saved_activation_bytes(cs, cw, Recompute::None, 2);
    INFO(to_string(p));
    for (int layer = 0; layer < kLayers; ++layer) {
      CHECK(block_bytes(cs, cb, layer) - block_bytes(fs, fb, layer) == Approx((3 * 4 + e - e) * 4 * h * s * 2));
    }
    // One fused kernel each way becomes 10 forward and 15 backward launches under autocast (its casts to and
    // from FP32), 8 and 11 in FP32.
    const bool autocast = p == Precision::BF16;
    CHECK(cw.kernels.size() - fw.kernels.size() == kLayers * ((autocast ? 10 + 15 : 8 + 11) - 2));
    // Megatron's kernels fuse the same function: gelu_new then costs what gelu_pytorch_tanh does.
    ShardedNetwork mn = shard_network(gpt(p, 0.1, AttentionKernel::Eager, "gelu_new"), 1);
    ShardedNetwork mt = shard_network(gpt(p), 1);
    StepWork nw = step_work(mn.net, 2, megatron_kernels(p), Optimizer::Adam);
    StepWork tw = step_work(mt.net, 2, megatron_kernels(p), Optimizer::Adam);
    CHECK(nw.kernels.size() == tw.kernels.size());
    CHECK(block_bytes(mn, saved_activation_bytes(mn, nw, Recompute::None, 2), 1) ==
          Approx(block_bytes(mt, saved_activation_bytes(mt, tw, Recompute::None, 2), 1)));
  }
}

TEST_CASE("a GLU as PyTorch runs it saves gate, activation and up, and Megatron's fused one its input",
          "[memory][activation]") {
  // Llama's MLP, down(act(gate(x)) * up(x)): SiLU saves gate, the product act(gate) and up (3 tensors of
  // the hidden width); Megatron's fused SwiGLU keeps gate and up and recomputes the rest in backward.
  const Json glu = Json::parse(R"J({"input": {"kind": "tokens", "seq_len": 64},
    "layers": [{"type": "embedding", "name": "emb", "vocab_size": 100, "dim": 32},
               {"type": "dense", "name": "up", "units": 96, "gated": true, "activation": "silu", "bias": false},
               {"type": "dense", "name": "down", "units": 32, "bias": false}]})J");
  for (Precision p : {Precision::BF16, Precision::FP32}) {
    const double e = activation_bytes(p), hidden = 2.0 * 64 * 96;
    TrainingConfig pytorch, megatron;
    pytorch.precision = megatron.precision = p;
    megatron.kernels = KernelSet::Megatron;
    StepWork pw = step_work(resolve_model(glu, pytorch), 2, kernel_context(pytorch), Optimizer::Adam);
    StepWork mw = step_work(resolve_model(glu, megatron), 2, kernel_context(megatron), Optimizer::Adam);
    INFO(to_string(p));
    CHECK(pw.layers[1].saved_activation_bytes - mw.layers[1].saved_activation_bytes == Approx(e * hidden));
    CHECK(pw.kernels.size() == mw.kernels.size() + 3);  // activation and product; two product terms and one
  }
}
