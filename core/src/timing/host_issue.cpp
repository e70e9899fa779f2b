#include "prenet/host_issue.hpp"

namespace prenet {

std::vector<std::array<double, 2>> layer_launches(const StepWork& work) {
  std::vector<std::array<double, 2>> out(work.layers.size(), std::array<double, 2>{});
  for (const Kernel& k : work.kernels) {
    if (k.phase == Phase::Optimizer || k.layer < 0 || static_cast<std::size_t>(k.layer) >= out.size()) continue;
    out[static_cast<std::size_t>(k.layer)][static_cast<std::size_t>(k.phase)] += k.repeats;
  }
  return out;
}

std::vector<std::array<double, 2>> layer_host_ms(const StepWork& work, const TrainingConfig& training) {
  std::vector<std::array<double, 2>> out = layer_launches(work);
  const double per_launch = training.cuda_graphs ? 0.0 : kHostIssueMsPerLaunch;
  for (auto& phases : out) {
    for (double& v : phases) v *= per_launch;
  }
  return out;
}

std::array<double, 2> step_host_ms(const std::vector<std::array<double, 2>>& layer_host) {
  std::array<double, 2> total{};
  for (const auto& phases : layer_host) {
    total[0] += phases[0];
    total[1] += phases[1];
  }
  return total;
}

}  // namespace prenet
