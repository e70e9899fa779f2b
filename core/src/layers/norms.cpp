// Normalizations: batchnorm (per channel, the first dimension), layernorm and rmsnorm (over the last).
#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

/// A norm's layer-list attributes: the common ones and `bias` (default true).
LayerAttrs bias_only(const Json& spec, const std::string& path) {
  reject_unknown_keys(spec, path, common_keys({"bias"}));
  LayerAttrs a;
  a.bias = get_bool(spec, "bias", path, true);
  return a;
}

class BatchNorm : public LayerKind {
 public:
  BatchNorm() : LayerKind(LayerType::BatchNorm, "batchnorm") {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    return bias_only(spec, path);
  }

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    const Shape& in = layer.input_shapes.front();
    if (in.empty()) throw InputError(path, "batchnorm needs a non-scalar input");
    layer.output_shape = in;
    layer.parameters = 2 * in[0];
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    kb.stream(KernelClass::Normalization, Phase::Forward, st.in_elems, 3, 8);
    kb.stream(KernelClass::Normalization, Phase::Backward, st.in_elems, 4, 12);
    lw.saved_activation_bytes = st.e * st.in_elems;
  }
};

/// layernorm (a scale and, with bias, a shift) and rmsnorm (a scale only) over the last dimension; `scale`
/// false drops the learned scale (OLMo's LayerNorm has neither).
class RowNorm : public LayerKind {
 public:
  RowNorm(LayerType type, const char* name) : LayerKind(type, name) {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    reject_unknown_keys(spec, path, common_keys({"bias", "scale"}));
    LayerAttrs a;
    a.bias = get_bool(spec, "bias", path, true);
    a.scale = get_bool(spec, "scale", path, true);
    return a;
  }

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    layer.output_shape = layer.input_shapes.front();
    const bool shift = type() == LayerType::LayerNorm && layer.attrs.bias;
    layer.parameters = ((layer.attrs.scale ? 1 : 0) + (shift ? 1 : 0)) * last_dim(layer, path);
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    kb.stream(KernelClass::Normalization, Phase::Forward, st.in_elems, 2, 8);
    kb.stream(KernelClass::Normalization, Phase::Backward, st.in_elems, 3, 12);
    lw.saved_activation_bytes = st.e * st.in_elems + 8 * rows(st.in, st.b);
    lw.saved_input_bytes = st.e * st.in_elems;
  }

  bool token_wise() const override { return true; }
};

}  // namespace

const LayerKind& batchnorm_kind() {
  static const BatchNorm kind;
  return kind;
}

const LayerKind& layernorm_kind() {
  static const RowNorm kind(LayerType::LayerNorm, "layernorm");
  return kind;
}

const LayerKind& rmsnorm_kind() {
  static const RowNorm kind(LayerType::RmsNorm, "rmsnorm");
  return kind;
}

}  // namespace prenet
