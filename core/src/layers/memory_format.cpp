#include "layers/memory_format.hpp"

namespace prenet {

// cuDNN's tensor-core convolution kernels read and write NHWC. Under 16-bit training a model kept in NCHW
// (PyTorch's default) has each convolution transpose its input into NHWC and its output back in forward, and
// in backward the output's gradient in and the input's gradient out (when the input needs one). Each is a
// memory-bound kernel reading and writing the tensor once, one launch each. FP32 and TF32 run NCHW kernels of
// their own, so the format changes nothing there. Filters are small and left out.
std::vector<Kernel> layout_transposes(const KernelContext& context, double in_elements, double out_elements, double e,
                                      bool input_grad) {
  if (!context.nchw || e >= 4) return {};
  auto transpose = [e](Phase phase, double elements) {
    return stream_kernel(KernelClass::Elementwise, phase, elements, 2, 0, e);
  };
  std::vector<Kernel> out = {transpose(Phase::Forward, in_elements), transpose(Phase::Forward, out_elements),
                             transpose(Phase::Backward, out_elements)};
  if (input_grad) out.push_back(transpose(Phase::Backward, in_elements));
  return out;
}

}  // namespace prenet
