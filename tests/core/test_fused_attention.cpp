// Fused attention passes timed from the catalogue's measured efficiencies (docs/PREDICTION.md, "Fused
// attention"; core/src/timing/fused_attention.cpp), and routed there by the learned path.
#include <catch2/catch.hpp>
#include <cmath>
#include <tuple>

#include "helpers.hpp"
#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
#include "prenet/hardware.hpp"
#include "prenet/kernel_features.hpp"
#include "prenet/learned.hpp"
#include "small_models.hpp"

using prenet::Accelerator;
using prenet::FusedAttentionLibrary;
using prenet::Kernel;
using prenet::Precision;

namespace {

/// A causal forward pass over b x h query heads of s positions and head width 128, as attention_core builds it.
Kernel causal_pass(double bh, double s, FusedAttentionLibrary library, prenet::Phase phase) {
  Kernel k;
  k.cls = prenet::KernelClass::BatchedGemm;
  k.phase = phase;
  k.m = k.n = s;
  k.k = 128;
  k.batch = bh;
  k.unmasked_flops = 2.0 * bh * s * s * (phase == prenet::Phase::Forward ? 256 : 640);
  k.flops = k.unmasked_flops / 2;
  k.bytes = 1e6;
  k.fused_attention = library;
  k.causal = true;
  return k;
}

const Accelerator& hw(const char* id) { return *prenet::find_hardware(id); }

}  // namespace

TEST_CASE("a causal fused pass takes its visible blocks' FLOPs at the measured efficiency, plus the overhead",
          "[fused_attention]") {
  const Accelerator& b200 = hw("b200");
  REQUIRE(b200.fused_attention_block > 0);
  const double block = b200.fused_attention_block;
  for (double s : {2048.0, 8192.0, 32768.0}) {
    INFO(s);
    for (auto phase : {prenet::Phase::Forward, prenet::Phase::Backward}) {
      const Kernel k = causal_pass(64, s, FusedAttentionLibrary::Cudnn, phase);
      const auto& t = b200.fused_attention[static_cast<int>(FusedAttentionLibrary::Cudnn)];
      const bool fwd = phase == prenet::Phase::Forward;
      const double n = std::ceil(s / block);
      const double expected = k.unmasked_flops * (n + 1) / (2 * n) /
                                  ((fwd ? t.forward : t.backward) * *b200.peak(Precision::BF16) * 1e12) * 1e3 +
                              (fwd ? t.forward_overhead_ms : t.backward_overhead_ms);
      REQUIRE(prenet::fused_attention_ms(k, b200, Precision::BF16).has_value());
      CHECK(*prenet::fused_attention_ms(k, b200, Precision::BF16) == Approx(expected).epsilon(1e-12));
      // The attention core runs in 16 bits under FP8 too.
      CHECK(*prenet::fused_attention_ms(k, b200, Precision::FP8) == Approx(expected).epsilon(1e-12));
    }
  }
}

TEST_CASE("a sliding window counts about ceil(w / block) + 1 blocks per row of blocks", "[fused_attention]") {
  const Accelerator& gb200 = hw("gb200");
  const double block = gb200.fused_attention_block, s = 32768, w = 4096;
  Kernel full = causal_pass(64, s, FusedAttentionLibrary::Cudnn, prenet::Phase::Forward);
  Kernel windowed = full;
  windowed.window_positions = w;
  const auto& t = gb200.fused_attention[static_cast<int>(FusedAttentionLibrary::Cudnn)];
  const double rate = t.forward * *gb200.peak(Precision::BF16) * 1e12;
  const double n = std::ceil(s / block);
  CHECK(*prenet::fused_attention_ms(windowed, gb200, Precision::BF16) ==
        Approx(full.unmasked_flops * (std::ceil(w / block) + 1) / n / rate * 1e3 + t.forward_overhead_ms));
  CHECK(*prenet::fused_attention_ms(windowed, gb200, Precision::BF16) <
        *prenet::fused_attention_ms(full, gb200, Precision::BF16));
}

TEST_CASE("unmeasured libraries, GPUs and 32-bit steps are not timed from the table", "[fused_attention]") {
  const Kernel cudnn = causal_pass(64, 8192, FusedAttentionLibrary::Cudnn, prenet::Phase::Forward);
  const Kernel flash = causal_pass(64, 8192, FusedAttentionLibrary::Flash, prenet::Phase::Forward);
  CHECK(prenet::fused_attention_ms(cudnn, hw("h100-sxm"), Precision::BF16).has_value());
  CHECK_FALSE(prenet::fused_attention_ms(flash, hw("h100-sxm"), Precision::BF16).has_value());  // FA2 not measured
  CHECK(prenet::fused_attention_ms(flash, hw("b200"), Precision::BF16).has_value());
  CHECK_FALSE(prenet::fused_attention_ms(cudnn, hw("a100-sxm4-80gb"), Precision::BF16).has_value());
  CHECK_FALSE(prenet::fused_attention_ms(cudnn, hw("b200"), Precision::FP32).has_value());
  Kernel plain = cudnn;
  plain.fused_attention = FusedAttentionLibrary::None;
  CHECK_FALSE(prenet::fused_attention_ms(plain, hw("b200"), Precision::BF16).has_value());
  // On B200 cuDNN's kernel is measured about three times FlashAttention-2's speed.
  CHECK(*prenet::fused_attention_ms(flash, hw("b200"), Precision::BF16) >
        2 * *prenet::fused_attention_ms(cudnn, hw("b200"), Precision::BF16));
}

TEST_CASE(
    "a flash-attention step's fused passes name their library and mask, and the learned path times them "
    "from the table",
    "[fused_attention][learned]") {
  prenet::TrainingConfig tr;
  tr.seq_len = 4096;
  prenet::Json config = prenet::Json::parse(testutil::small_llama_config());
  config["max_position_embeddings"] = 4096;
  const prenet::Network net = prenet::resolve_model({{"hf_config", config}}, tr);
  using prenet::AttentionKernel;
  const std::tuple<prenet::KernelSet, AttentionKernel, FusedAttentionLibrary> cases[] = {
      {prenet::KernelSet::Megatron, AttentionKernel::Flash, FusedAttentionLibrary::Cudnn},
      {prenet::KernelSet::PyTorch, AttentionKernel::Flash, FusedAttentionLibrary::PyTorchDefault},
      {prenet::KernelSet::Megatron, AttentionKernel::Flash2, FusedAttentionLibrary::Flash},
      {prenet::KernelSet::PyTorch, AttentionKernel::Flash2, FusedAttentionLibrary::Flash}};
  for (const auto& [set, attention, library] : cases) {
    const prenet::KernelContext context(Precision::BF16, attention, set);
    const prenet::StepWork work = prenet::step_work(net, 2, context, prenet::Optimizer::AdamW);
    const Accelerator& b200 = hw("b200");
    const prenet::LearnedBatch batch = prenet::learned_batch(work, {b200}, Precision::BF16);
    std::size_t fused = 0;
    for (std::size_t i = 0; i < work.kernels.size(); ++i) {
      const Kernel& k = work.kernels[i];
      if (k.fused_attention == FusedAttentionLibrary::None) continue;
      ++fused;
      CHECK(k.fused_attention == library);
      CHECK(k.causal);
      CHECK(k.m == 4096);
      const auto [cls, row] = batch.kernel_rows[0][i];
      REQUIRE(cls == -1);
      CHECK(batch.fallback_ms[row] == Approx(*prenet::fused_attention_ms(k, b200, Precision::BF16)));
    }
    CHECK(fused == 2 * 2);  // forward and backward of each of the 2 layers
  }
}

TEST_CASE("PyTorch's default fused kernel is the one the catalogue names for the part: cuDNN's on Hopper and B200",
          "[fused_attention]") {
  const Kernel cudnn = causal_pass(64, 8192, FusedAttentionLibrary::Cudnn, prenet::Phase::Backward);
  const Kernel flash = causal_pass(64, 8192, FusedAttentionLibrary::Flash, prenet::Phase::Backward);
  const Kernel sdpa = causal_pass(64, 8192, FusedAttentionLibrary::PyTorchDefault, prenet::Phase::Backward);
  for (const char* id : {"h100-sxm", "h200", "b200", "gb200"}) {
    INFO(id);
    CHECK(hw(id).pytorch_attention == FusedAttentionLibrary::Cudnn);
    CHECK(*prenet::fused_attention_ms(sdpa, hw(id), Precision::BF16) ==
          *prenet::fused_attention_ms(cudnn, hw(id), Precision::BF16));
  }
  // A part whose record does not name cuDNN keeps FlashAttention-2, here unmeasured (the learned time then).
  prenet::Json r = hw("b200").record;
  r["fused_attention"].erase("pytorch");
  const Accelerator older = prenet::parse_accelerator(r, "hw", false);
  CHECK(older.pytorch_attention == FusedAttentionLibrary::Flash);
  CHECK(*prenet::fused_attention_ms(sdpa, older, Precision::BF16) ==
        *prenet::fused_attention_ms(flash, older, Precision::BF16));
  CHECK(hw("a100-sxm4-80gb").pytorch_attention == FusedAttentionLibrary::Flash);
  CHECK_FALSE(prenet::fused_attention_ms(sdpa, hw("a100-sxm4-80gb"), Precision::BF16).has_value());
}

TEST_CASE("a malformed fused_attention field in a catalogue record is an error naming it",
          "[fused_attention][catalog]") {
  const prenet::Json base = hw("gb200").record;
  auto parse = [](const prenet::Json& r) { return [r] { prenet::parse_accelerator(r, "hw", false); }; };
  prenet::Json r = base;
  r["fused_attention"]["cudnn"]["forward"] = 1.5;
  testutil::require_input_error(parse(r), "hw.fused_attention.cudnn.forward", "");
  r = base;
  r["fused_attention"]["xformers"] = prenet::Json::object();
  testutil::require_input_error(parse(r), "hw.fused_attention.xformers", "expected one of block_positions");
  r = base;
  r["fused_attention"]["pytorch"] = "xformers";
  testutil::require_input_error(parse(r), "hw.fused_attention.pytorch", "cudnn");
  r = base;
  r["fused_attention"].erase("block_positions");
  testutil::require_input_error(parse(r), "hw.fused_attention.block_positions", "");
  r = base;
  r["fused_attention"]["cudnn"]["narrow_heads"] = {{"forward", 0.7}};
  testutil::require_input_error(parse(r), "hw.fused_attention.cudnn.narrow_heads.backward", "");
  r["fused_attention"]["cudnn"]["narrow_heads"] = {{"forward", 1.2}, {"backward", 0.8}};
  testutil::require_input_error(parse(r), "hw.fused_attention.cudnn.narrow_heads.forward", "");
}

TEST_CASE("heads 64 wide or narrower run at the catalogue's narrow-head share of the efficiency; 128 and wider at it",
          "[fused_attention]") {
  const Accelerator& h200 = hw("h200");
  const auto& t = h200.fused_attention[static_cast<int>(FusedAttentionLibrary::Cudnn)];
  REQUIRE(t.narrow_forward < 1);
  REQUIRE(t.narrow_backward < 1);
  for (auto phase : {prenet::Phase::Forward, prenet::Phase::Backward}) {
    const bool fwd = phase == prenet::Phase::Forward;
    const double overhead = fwd ? t.forward_overhead_ms : t.backward_overhead_ms;
    const double narrow = fwd ? t.narrow_forward : t.narrow_backward;
    // The same FLOPs at every width, so the compute part scales by the efficiency alone.
    auto compute_ms = [&](double width) {
      Kernel k = causal_pass(64, 8192, FusedAttentionLibrary::Cudnn, phase);
      k.k = width;
      return *prenet::fused_attention_ms(k, h200, Precision::BF16) - overhead;
    };
    const double wide = compute_ms(128);
    CHECK(compute_ms(64) == Approx(wide / narrow).epsilon(1e-12));
    CHECK(compute_ms(32) == Approx(wide / narrow).epsilon(1e-12));
    CHECK(compute_ms(96) == Approx(wide / ((narrow + 1) / 2)).epsilon(1e-12));
    CHECK(compute_ms(192) == Approx(wide).epsilon(1e-12));
  }
  // A part without a narrow-head measurement keeps its efficiency at every width.
  Kernel k64 = causal_pass(64, 8192, FusedAttentionLibrary::Cudnn, prenet::Phase::Forward), k128 = k64;
  k64.k = 64;
  CHECK(*prenet::fused_attention_ms(k64, hw("b200"), Precision::BF16) ==
        Approx(*prenet::fused_attention_ms(k128, hw("b200"), Precision::BF16)));
}
