#pragma once
// Memory of one training step on one device: model states plus activations kept for backward.
#include "prenet/features.hpp"
#include "prenet/network.hpp"
#include "prenet/training.hpp"

namespace prenet {

struct MemoryEstimate {
  double weights_gb = 0;      // including FP32 master weights under mixed precision
  double gradients_gb = 0;
  double optimizer_gb = 0;
  double activations_gb = 0;
  double overhead_gb = 0;     // runtime context, workspaces, allocator slack
  double total_gb() const { return weights_gb + gradients_gb + optimizer_gb + activations_gb + overhead_gb; }
};

/// Fixed allowance for the framework's runtime context and workspaces (GB).
constexpr double kRuntimeOverheadGb = 0.75;

/// Estimates device memory (GB = 1e9 bytes) for training `net` with the step's saved activations.
MemoryEstimate estimate_memory(const Network& net, const StepWork& work, Precision precision, Optimizer optimizer);

}  // namespace prenet
