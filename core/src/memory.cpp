#include "prenet/memory.hpp"

namespace prenet {

MemoryEstimate estimate_memory(const Network& net, const StepWork& work, Precision precision, Optimizer optimizer) {
  const double params = static_cast<double>(net.parameters());
  const bool training = optimizer != Optimizer::None;
  const bool mixed = is_mixed(precision);
  MemoryEstimate m;
  // Mixed precision keeps a 16-bit working copy beside the FP32 master weights and 16-bit gradients.
  m.weights_gb = params * (mixed ? 6.0 : 4.0) / 1e9;
  m.gradients_gb = params * (mixed ? 2.0 : 4.0) / 1e9;
  m.optimizer_gb = training ? params * 4.0 * optimizer_states(optimizer) / 1e9 : 0.0;
  double saved = 0;
  for (const auto& layer : work.layers) saved += layer.saved_activation_bytes;
  m.activations_gb = saved / 1e9;
  m.overhead_gb = kRuntimeOverheadGb;
  return m;
}

}  // namespace prenet
