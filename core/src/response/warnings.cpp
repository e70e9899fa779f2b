#include "response/warnings.hpp"

#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <map>
#include <sstream>

namespace prenet {
namespace {

/// Layer -> the largest slowdown among the GPUs where that layer's misaligned GEMMs cost >= 1% of the step.
std::map<int, double> costly_misaligned(const StepWork& work, const std::vector<Accelerator>& hardware,
                                        const std::vector<Timing>& roofline, Precision precision) {
  std::map<int, double> slowdown_of;
  for (std::size_t h = 0; h < hardware.size(); ++h) {
    const Accelerator& acc = hardware[h];
    // Under fp8 a misaligned GEMM is no FP8 linear's (layers/fp8.cpp): it runs, and slows down, in bf16.
    const double slowdown = misaligned_slowdown(acc, precision == Precision::FP8 ? Precision::BF16 : precision);
    if (slowdown <= 1) continue;
    std::map<int, double> extra_ms;
    for (const Kernel& k : work.kernels) {
      if (!k.misaligned || !is_matmul(k.cls)) continue;
      Kernel aligned = k;
      aligned.misaligned = false;
      extra_ms[k.layer] += kernel_time(k, acc, precision).total_ms() - kernel_time(aligned, acc, precision).total_ms();
    }
    for (const auto& [layer, ms] : extra_ms) {
      if (ms >= 0.01 * roofline[h].step_ms) slowdown_of[layer] = std::max(slowdown_of[layer], slowdown);
    }
  }
  return slowdown_of;
}

}  // namespace

std::vector<std::string> misaligned_warnings(const Network& net, const StepWork& work,
                                             const std::vector<Accelerator>& hardware,
                                             const std::vector<Timing>& roofline, Precision precision) {
  const std::map<int, double> slowdown_of = costly_misaligned(work, hardware, roofline, precision);
  const auto step = static_cast<std::int64_t>(16 / activation_bytes(precision));
  const auto padded = [step](std::int64_t v) { return v % step == 0 ? v : v + step - v % step; };
  std::vector<std::string> warnings;
  std::size_t named = 0;
  for (const auto& [l, slowdown] : slowdown_of) {
    if (++named > 5) break;
    const Layer& layer = net.layers[static_cast<std::size_t>(l)];
    const std::int64_t in = layer.input_shapes.front().back(), out = layer.attrs.units;
    const std::int64_t odd = out % step != 0 ? out : in;
    std::ostringstream text;
    text << "layer \"" << layer.name << "\": a width of " << odd << " is not a multiple of " << step
         << " elements, so on NVIDIA GPUs its GEMMs cannot use the aligned tensor-core kernels in "
         << to_string(precision == Precision::FP8 ? Precision::BF16 : precision) << " and run about " << std::fixed
         << std::setprecision(1) << slowdown
         << "x slower (the median measured on an H200, docs/PREDICTION.md); a width of " << padded(odd)
         << " avoids that";
    warnings.push_back(text.str());
  }
  if (slowdown_of.size() > 5) {
    warnings.push_back(std::to_string(slowdown_of.size() - 5) + " more layers have misaligned widths");
  }
  return warnings;
}

}  // namespace prenet
