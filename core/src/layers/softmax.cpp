// softmax: normalizes the last dimension; backward reads its output.
#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

class Softmax : public LayerKind {
 public:
  Softmax() : LayerKind(LayerType::Softmax, "softmax") {}

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    kb.stream(KernelClass::Softmax, Phase::Forward, st.in_elems, 2, 5);
    if (st.dx) kb.stream(KernelClass::Softmax, Phase::Backward, st.in_elems, 3, 4);
    lw.saved_activation_bytes = st.e * st.out_elems;
  }
};

}  // namespace

const LayerKind& softmax_kind() {
  static const Softmax kind;
  return kind;
}

}  // namespace prenet
