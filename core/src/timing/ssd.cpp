// Mamba-2's chunk scan timed from measured mamba_chunk_scan_combined forwards: the catalogue's rate and launch
// overhead on an accelerator (models/fit-ssd.mjs). No public backward was measured at a stated shape, so the
// backward's FLOPs (twice the forward's) run at the forward's rate.
#include "prenet/kernel_features.hpp"

namespace prenet {

std::optional<double> ssd_ms(const Kernel& k, const Accelerator& acc, Precision precision) {
  if (k.part != KernelPart::Ssd) return std::nullopt;
  if (precision == Precision::FP32 || precision == Precision::TF32) return std::nullopt;
  const SsdTiming& t = acc.ssd;
  if (t.forward_tflops <= 0) return std::nullopt;
  return t.forward_overhead_ms + k.flops / (t.forward_tflops * 1e12) * 1e3;
}

}  // namespace prenet
