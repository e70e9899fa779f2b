// Fused attention passes timed from measured kernels: the catalogue's efficiency of each library on an
// accelerator (models/fit-fused-attention.mjs) applied to the score blocks a mask leaves to compute.
#include <cmath>

#include "prenet/kernel_features.hpp"

namespace prenet {
namespace {

/// Share of the s x s score blocks of `block` positions a causal pass computes: n (n + 1) / 2 of n^2 blocks
/// (n = ceil(s / block)), or, with a sliding window w, about ceil(w / block) + 1 blocks per row of blocks.
double visible_blocks(double s, bool causal, double window, double block) {
  const double n = std::ceil(s / block);
  if (window > 0) return std::min(n, std::ceil(window / block) + 1) / n;
  if (causal) return (n + 1) / (2 * n);
  return 1.0;
}

/// The efficiency multiplier of a head `width` wide: `narrow` at 64 or less, 1 at 128 or more (where the
/// efficiencies were fitted), linear between. Narrow heads do half the matrix work per score a softmax costs.
double head_width_factor(double width, double narrow) {
  if (width <= 64) return narrow;
  if (width >= 128) return 1.0;
  return narrow + (1.0 - narrow) * (width - 64) / 64;
}

}  // namespace

std::optional<double> fused_attention_ms(const Kernel& k, const Accelerator& acc, Precision precision) {
  if (k.fused_attention == FusedAttentionLibrary::None || acc.fused_attention_block <= 0) return std::nullopt;
  if (precision == Precision::FP32 || precision == Precision::TF32) return std::nullopt;
  const FusedAttentionLibrary library =
      k.fused_attention == FusedAttentionLibrary::PyTorchDefault ? acc.pytorch_attention : k.fused_attention;
  const FusedAttentionTiming& t = acc.fused_attention[static_cast<int>(library)];
  const bool forward = k.phase == Phase::Forward;
  // k.k is the query/key head width (layers/attention_core.cpp, flash_attention).
  const double efficiency =
      (forward ? t.forward : t.backward) * head_width_factor(k.k, forward ? t.narrow_forward : t.narrow_backward);
  const std::optional<double> peak = acc.peak(Precision::BF16) ? acc.peak(Precision::BF16) : acc.peak(Precision::FP16);
  if (efficiency <= 0 || !peak) return std::nullopt;
  // Masks other than causal or windowed over equal lengths (cached keys, chunks, context-parallel chunks)
  // count the FLOPs of their visible share as the kernel states them.
  const double work =
      k.causal || k.window_positions > 0
          ? k.unmasked_flops * visible_blocks(k.m, k.causal, k.window_positions, acc.fused_attention_block)
          : k.flops;
  const double overhead = forward ? t.forward_overhead_ms : t.backward_overhead_ms;
  return work / (efficiency * *peak * 1e12) * 1e3 + overhead * k.repeats;
}

}  // namespace prenet
