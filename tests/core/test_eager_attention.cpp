// Eager attention's score passes per kernel set (layers/attention_core.cpp): Hugging Face's op-by-op scale and
// mask, autocast's FP32 softmax with its casts, the fused forms of Megatron-LM and torch.compile; and how the
// learned path times a 16-bit batched GEMM (as one GEMM of its stacked products: no 16-bit batched rows exist).
#include <catch2/catch.hpp>
#include <cstddef>
#include <string>

#include "helpers.hpp"
#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
#include "prenet/kernel_features.hpp"
#include "prenet/learned.hpp"

using namespace prenet;
using testutil::net_of;

namespace {

constexpr double kBatch = 2, kHeads = 4, kSeq = 32;
constexpr double kScores = kBatch * kHeads * kSeq * kSeq;  // elements of one layer's score matrices

/// One attention layer of 4 heads of width 16 over 32 positions, no rotary embedding, no dropout.
Network one_attention(bool causal) {
  return net_of(R"J({"input": {"kind": "sequence", "seq_len": 32, "features": 64},
    "layers": [{"type": "attention", "name": "attn", "num_heads": 4, "causal": )J" +
                std::string(causal ? "true" : "false") + "}]}");
}

KernelContext context_of(Precision precision, KernelSet kernels, bool compiled) {
  KernelContext c(precision, AttentionKernel::Eager, kernels);
  c.compiled = compiled;
  return c;
}

double class_bytes(const StepWork& w, Phase phase, KernelClass cls) {
  double total = 0;
  for (const Kernel& k : w.kernels) {
    if (k.phase == phase && k.cls == cls) total += k.bytes;
  }
  return total;
}

StepWork work_of(bool causal, const KernelContext& context) {
  return step_work(one_attention(causal), static_cast<std::int64_t>(kBatch), context, Optimizer::None);
}

}  // namespace

TEST_CASE("the softmax reads and writes FP32 under autocast op by op, its input cast up in a pass of its own",
          "[attention][eager]") {
  const double e = 2;  // BF16
  const StepWork eager = work_of(true, context_of(Precision::BF16, KernelSet::PyTorch, false));
  const StepWork compiled = work_of(true, context_of(Precision::BF16, KernelSet::PyTorch, true));
  const StepWork megatron = work_of(true, context_of(Precision::BF16, KernelSet::Megatron, false));
  CHECK(class_bytes(eager, Phase::Forward, KernelClass::Softmax) == Approx(8 * kScores));
  CHECK(class_bytes(eager, Phase::Backward, KernelClass::Softmax) == Approx(12 * kScores));
  CHECK(class_bytes(compiled, Phase::Forward, KernelClass::Softmax) == Approx((e + 4) * kScores));
  CHECK(class_bytes(compiled, Phase::Backward, KernelClass::Softmax) == Approx((8 + e) * kScores));
  CHECK(class_bytes(megatron, Phase::Forward, KernelClass::Softmax) == Approx(2 * e * kScores));
  CHECK(class_bytes(megatron, Phase::Backward, KernelClass::Softmax) == Approx(3 * e * kScores));
  // FP32 has nothing to cast: its softmax reads and writes the scores once each way.
  const StepWork fp32 = work_of(true, context_of(Precision::FP32, KernelSet::PyTorch, false));
  CHECK(class_bytes(fp32, Phase::Forward, KernelClass::Softmax) == Approx(8 * kScores));
}

TEST_CASE("op by op, the scores are scaled in a pass of their own and a mask in another; fused kernels fold both",
          "[attention][eager]") {
  for (const Precision p : {Precision::FP32, Precision::BF16}) {
    const double e = p == Precision::FP32 ? 4 : 2;
    // Beyond what torch.compile runs: the scale (read and write e per score, both ways), the causal mask (forward
    // only: an added mask passes its gradient through) and autocast's cast up of the scores (e + 4 forward; the
    // gradient's cast back, 4 + e).
    const double cast_forward = p == Precision::FP32 ? 0 : e + 4, cast_backward = p == Precision::FP32 ? 0 : 4 + e;
    for (const bool causal : {false, true}) {
      INFO("precision " << to_string(p) << ", causal " << causal);
      const StepWork eager = work_of(causal, context_of(p, KernelSet::PyTorch, false));
      const StepWork compiled = work_of(causal, context_of(p, KernelSet::PyTorch, true));
      const double mask = causal ? 2 * e : 0;
      CHECK(class_bytes(eager, Phase::Forward, KernelClass::Elementwise) -
                class_bytes(compiled, Phase::Forward, KernelClass::Elementwise) ==
            Approx((2 * e + mask + cast_forward) * kScores));
      CHECK(class_bytes(eager, Phase::Backward, KernelClass::Elementwise) -
                class_bytes(compiled, Phase::Backward, KernelClass::Elementwise) ==
            Approx((2 * e + cast_backward) * kScores));
    }
  }
}

TEST_CASE("a 16-bit batched GEMM is timed by the GEMM model as its stacked products; FP32 ones by the batched model",
          "[learned][attention]") {
  const int gemm = learned_class_for(KernelClass::Gemm), bmm = learned_class_for(KernelClass::BatchedGemm);
  REQUIRE(gemm >= 0);
  REQUIRE(bmm >= 0);
  const Accelerator h100 = *find_hardware("h100-sxm");
  for (const Precision p : {Precision::BF16, Precision::FP16, Precision::FP32}) {
    INFO("precision " << to_string(p));
    const StepWork work = work_of(true, context_of(p, KernelSet::PyTorch, false));
    const LearnedBatch batch = learned_batch(work, {h100}, p);
    std::size_t batched = 0;
    for (std::size_t i = 0; i < work.kernels.size(); ++i) {
      const Kernel& k = work.kernels[i];
      if (k.cls != KernelClass::BatchedGemm) continue;
      ++batched;
      const auto [cls, row] = batch.kernel_rows[0][i];
      if (p == Precision::FP32) {
        CHECK(cls == bmm);
        CHECK(batch.slice_rows[0][i].first == gemm);  // bounded below by one product
        continue;
      }
      CHECK(cls == gemm);
      CHECK(batch.slice_rows[0][i].first == -1);
      CHECK(batch.products[0][i] == 1.0);
      Kernel stacked = k;
      stacked.cls = KernelClass::Gemm;
      stacked.m = k.m * k.batch;
      stacked.batch = 1;
      CHECK(batch.roofline_ms[static_cast<std::size_t>(gemm)][row] == Approx(roofline_ms({stacked}, h100, p)));
    }
    CHECK(batched == 6);  // scores and P V forward, four products backward
  }
}
