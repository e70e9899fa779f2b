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
    if (type() == LayerType::RmsNorm && !st.context.fuses_pointwise()) {
      return eager_rmsnorm(st, kb, lw);
    }
    kb.stream(KernelClass::Normalization, Phase::Forward, st.in_elems, 2, 8);
    kb.stream(KernelClass::Normalization, Phase::Backward, st.in_elems, 3, 12);
    lw.saved_activation_bytes = st.e * st.in_elems + 8 * rows(st.in, st.b);
    lw.saved_input_bytes = st.e * st.in_elems;
  }

 private:
  /// Hugging Face's RMSNorm as PyTorch eager runs it, one kernel per operation (LlamaRMSNorm and its copies:
  /// x.to(float32), pow(2), mean(-1), + eps, rsqrt, x * rsqrt, .to(input dtype), weight * x), and autograd's
  /// backward of that chain; what the chain's operations save (the FP32 input, the row scales, and the
  /// normalized rows the weight's gradient reads). The casts are no-ops in FP32.
  static void eager_rmsnorm(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) {
    const double e = st.e, f = 4, n = st.in_elems, r = rows(st.in, st.b);
    const bool autocast = e < f;
    std::vector<double> forward;
    if (autocast) forward.push_back(e + f);
    forward.insert(forward.end(), {2 * f, f});  // pow(2), mean over the row (read)
    kb.chain(Phase::Forward, n, forward);
    kb.chain(Phase::Forward, r, {2 * f, 2 * f});  // + eps, rsqrt on the row means
    forward = {2 * f};                            // x * rsqrt
    if (autocast) forward.push_back(f + e);
    forward.push_back(2 * e);  // weight * x
    kb.chain(Phase::Forward, n, forward);
    std::vector<double> backward = {2 * e};  // the gradient times the weight
    if (!st.frozen) backward.insert(backward.end(), {3 * e, e});  // the weight's: gradient * x, summed over rows
    if (autocast) backward.push_back(e + f);
    backward.insert(backward.end(), {2 * f, 3 * f, f});  // * rsqrt; * x summed over the row, for rsqrt's
    kb.chain(Phase::Backward, n, backward);
    kb.chain(Phase::Backward, r, {3 * f, 3 * f});  // rsqrt's and the mean's backward on the row values
    backward = {f, 2 * f, 2 * f, 3 * f, 3 * f};     // mean's expand; pow's x^1, 2 x, times the gradient; sum of both
    if (autocast) backward.push_back(f + e);
    kb.chain(Phase::Backward, n, backward);
    const double normalized = st.frozen ? 0 : autocast ? e : f;  // weight * x saves x for the weight's gradient
    lw.saved_activation_bytes = (f + normalized) * n + f * r;
    lw.saved_input_bytes = autocast ? 0 : f * n;  // under FP32 the saved input is the input itself
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
