// dropout: zeroes elements with probability `rate` while training, keeping a one-byte mask.
#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

class Dropout : public LayerKind {
 public:
  Dropout() : LayerKind(LayerType::Dropout, "dropout") {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    reject_unknown_keys(spec, path, common_keys({"rate"}));
    LayerAttrs a;
    a.rate = get_number(spec, "rate", path, 0.1, 0.0, 0.999999);
    return a;
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    if (st.a.rate <= 0) return;
    // The mask is one byte per element.
    kb.stream(KernelClass::Elementwise, Phase::Forward, st.in_elems, 2 + 1 / st.e, 2);
    if (st.dx) kb.stream(KernelClass::Elementwise, Phase::Backward, st.in_elems, 2 + 1 / st.e, 1);
    lw.saved_activation_bytes = st.in_elems;
  }

  bool token_wise() const override { return true; }
  bool passthrough() const override { return true; }
};

}  // namespace

const LayerKind& dropout_kind() {
  static const Dropout kind;
  return kind;
}

}  // namespace prenet
