#pragma once
// Layout transposes of convolutions kept in NCHW (training.memory_format, docs/PREDICTION.md).
#include <vector>

#include "prenet/features.hpp"
#include "prenet/network.hpp"

namespace prenet {

/// The NCHW <-> NHWC transposes cuDNN runs around a convolution (input `in_elements`, output `out_elements`
/// for the whole batch, `e` bytes each; `input_grad`: backward produces the input's gradient): none unless
/// `context` keeps NCHW tensors and the convolution trains in 16 bits.
std::vector<Kernel> layout_transposes(const KernelContext& context, double in_elements, double out_elements, double e,
                                      bool input_grad);

}  // namespace prenet
