#pragma once
// Layout transposes of convolutions kept in NCHW (training.memory_format, docs/PREDICTION.md).
#include <vector>

#include "prenet/features.hpp"
#include "prenet/network.hpp"

namespace prenet {

/// The NCHW <-> NHWC transposes cuDNN runs around conv2d `layer` (input `in_elements`, output `out_elements`
/// for the whole batch, `e` bytes each): none unless the layer is marked NCHW and trains in 16 bits.
std::vector<Kernel> layout_transposes(const Layer& layer, double in_elements, double out_elements, double e);

}  // namespace prenet
