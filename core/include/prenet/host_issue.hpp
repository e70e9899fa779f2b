#pragma once
// The host's floor on a training step: in eager PyTorch the CPU issues every kernel one by one (Python, the
// dispatcher, autograd, the launch), ahead of the GPU while kernels are long; a pass of many short kernels
// takes at least the host's time to issue them (docs/PREDICTION.md, "Launch-bound steps"). CUDA graphs
// (training.cuda_graphs) replay a captured step with one launch, which removes the floor.

#include <array>
#include <vector>

#include "prenet/features.hpp"
#include "prenet/training.hpp"

namespace prenet {

/// The host's time to issue one op of an eager PyTorch step (ms): the 5th percentile of the H200's per-op
/// elementwise sweep, one small op between two CUDA events while the GPU waits for the host
/// (`node models/data-tools/harness-floor.mjs`, "the host's time to issue one op").
constexpr double kHostIssueMsPerLaunch = 0.0178;

/// Kernel launches per phase (forward, backward) of each layer of `work`, repeated launches counted.
std::vector<std::array<double, 2>> layer_launches(const StepWork& work);

/// The host's time (ms) to issue each layer's forward and backward kernels of `work` under `training`: launches x
/// kHostIssueMsPerLaunch; zero with training.cuda_graphs.
std::vector<std::array<double, 2>> layer_host_ms(const StepWork& work, const TrainingConfig& training);

/// The host's time to issue a whole step's forward and backward kernels: layer_host_ms summed.
std::array<double, 2> step_host_ms(const std::vector<std::array<double, 2>>& layer_host);

}  // namespace prenet
