#pragma once
// Warnings a response adds about the request's model beyond those the model readers raise.
#include <string>
#include <vector>

#include "prenet/features.hpp"
#include "prenet/hardware.hpp"
#include "prenet/network.hpp"
#include "prenet/roofline.hpp"
#include "prenet/training.hpp"

namespace prenet {

/// One warning per dense layer of `net` whose misaligned GEMMs (Kernel::misaligned) in `work` cost at least
/// 1% of the roofline step (`roofline`, per accelerator of `hardware`) on a requested GPU, naming the width,
/// the slowdown and the padding that avoids it (five at most, then how many more).
std::vector<std::string> misaligned_warnings(const Network& net, const StepWork& work,
                                             const std::vector<Accelerator>& hardware,
                                             const std::vector<Timing>& roofline, Precision precision);

}  // namespace prenet
