#pragma once
// The three baselines every result carries (docs/ACCURACY.md): the roofline, PreNeT's CT-only fits and
// FLOPs at 40% of peak, forward and whole step.
#include <cstddef>
#include <vector>

#include "prenet/features.hpp"
#include "prenet/hardware.hpp"
#include "prenet/json_util.hpp"
#include "prenet/network.hpp"
#include "prenet/roofline.hpp"
#include "prenet/training.hpp"

namespace prenet {

/// Layers that the PreNeT baseline times alike: same family (conv or dense) and same CO, so the same CT
/// on every accelerator. Each layer's group, and each group's first layer.
struct CtGroups {
  std::vector<std::size_t> of_layer;
  std::vector<std::size_t> first;
};
CtGroups ct_groups(const Network& net, const StepWork& work);

/// The baselines of `work` (the layers of `net`) on `acc`, whose roofline timing is `roof`; each is run
/// `repeats` times (the micro-batches of a parallel step, without communication or pipeline bubble).
Json baselines_for(const Network& net, const StepWork& work, const Timing& roof, const CtGroups& groups,
                   const Accelerator& acc, Precision precision, double repeats);

}  // namespace prenet
