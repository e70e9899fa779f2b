// Gated DeltaNet's chunk kernels timed from measured flash-linear-attention kernels: the catalogue's rate of each
// direction on an accelerator (models/fit-delta-rule.mjs), reached as the value heads fill the part.
#include "prenet/kernel_features.hpp"

namespace prenet {

std::optional<double> delta_rule_ms(const Kernel& k, const Accelerator& acc, Precision precision) {
  if (k.part != KernelPart::DeltaRule || k.heads <= 0) return std::nullopt;
  if (precision == Precision::FP32 || precision == Precision::TF32) return std::nullopt;
  const DeltaRuleTiming& t = acc.delta_rule;
  const bool forward = k.phase == Phase::Forward;
  const double rate = forward ? t.forward_tflops : t.backward_tflops;
  const double half = forward ? t.forward_half_heads : t.backward_half_heads;
  if (rate <= 0) return std::nullopt;
  // The kernels run each head's recurrence over the chunks in turn: few heads leave the part partly idle.
  const double reached = rate * k.heads / (k.heads + half);
  return k.flops / (reached * 1e12) * 1e3;
}

}  // namespace prenet
