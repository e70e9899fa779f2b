#include "timing/baselines.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <utility>

#include "prenet/learned.hpp"
#include "response/json_text.hpp"

namespace prenet {

CtGroups ct_groups(const Network& net, const StepWork& work) {
  CtGroups g;
  g.of_layer.resize(net.layers.size());
  std::map<std::pair<bool, std::uint64_t>, std::size_t> index;  // by the bits of CO: equal bits, equal CT
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &work.layers[l].co, sizeof bits);
    auto [it, inserted] = index.emplace(std::make_pair(net.layers[l].type == LayerType::Conv2d, bits), g.first.size());
    if (inserted) g.first.push_back(l);
    g.of_layer[l] = it->second;
  }
  return g;
}

Json baselines_for(const Network& net, const StepWork& work, const Timing& roof, const CtGroups& groups,
                   const Accelerator& acc, Precision precision, double repeats) {
  const LearnedManifest& lm = learned_manifest();
  // PreNeT-faithful: each layer's time from its CT alone (log-log fit on whole-layer measurements).
  // The fits are evaluated once per group of equal layers (exp and log per layer dominated here),
  // then added layer by layer in order, as before.
  std::vector<std::array<double, 2>> group_ms(groups.first.size());
  for (std::size_t g = 0; g < groups.first.size(); ++g) {
    const std::size_t l = groups.first[g];
    double ct = roof.layers[l].ct_ms;
    if (!(ct > 0)) continue;
    bool conv = net.layers[l].type == LayerType::Conv2d;
    const auto& fwd = conv ? lm.prenet_conv_forward : lm.prenet_dense_forward;
    const auto& step = conv ? lm.prenet_conv_step : lm.prenet_dense_step;
    // The fits are log-log lines through small layers; never let them undercut the layer's CT (its time at peak).
    group_ms[g] = {std::max(ct, std::exp(fwd[0] + fwd[1] * std::log(ct))),
                   std::max(ct, std::exp(step[0] + step[1] * std::log(ct)))};
  }
  double prenet_forward = 0, prenet_step = 0;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    if (!(roof.layers[l].ct_ms > 0)) continue;
    prenet_forward += group_ms[groups.of_layer[l]][0];
    prenet_step += group_ms[groups.of_layer[l]][1];
  }
  // FLOPs at 40% of the dense peak for the training precision.
  double peak = matmul_peak_tflops(acc, precision, KernelClass::Gemm) * 1e12 * 0.4;
  const auto& flops = work.flops;
  const double m = repeats;
  return {{"roofline", {{"forward_ms", round6(roof.ms[0] * m)}, {"step_ms", round6(roof.step_ms * m)}}},
          {"prenet", {{"forward_ms", round6(prenet_forward * m)}, {"step_ms", round6(prenet_step * m)}}},
          {"flops40",
           {{"forward_ms", round6(flops[0] / peak * 1e3 * m)},
            {"step_ms", round6((flops[0] + flops[1] + flops[2]) / peak * 1e3 * m)}}}};
}

}  // namespace prenet
