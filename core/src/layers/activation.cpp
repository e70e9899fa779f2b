// activation: an elementwise function as a layer; also the home of the activation functions' costs,
// which dense and conv2d use for their fused activations.
#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

class Activation : public LayerKind {
 public:
  Activation() : LayerKind(LayerType::Activation, "activation") {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    reject_unknown_keys(spec, path, common_keys({"function"}));
    LayerAttrs a;
    a.activation = get_enum(spec, "function", path, "relu", activation_names());
    return a;
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    const double in_elems = st.in_elems;
    if (st.composed) {
      kb.chain(Phase::Forward, in_elems, st.composed->forward);
      if (st.dx) kb.chain(Phase::Backward, in_elems, st.composed->backward);
      lw.saved_activation_bytes = st.composed->saved * in_elems;
      return;
    }
    kb.stream(KernelClass::Elementwise, Phase::Forward, in_elems, 2, st.act);
    if (st.dx) kb.stream(KernelClass::Elementwise, Phase::Backward, in_elems, 3, 2 * st.act);
    lw.saved_activation_bytes = st.e * in_elems;
  }

  bool saves_output_only_for_relu(const Layer& layer) const override { return layer.attrs.activation == "relu"; }
  bool token_wise() const override { return true; }
  bool passthrough() const override { return true; }
};

}  // namespace

const LayerKind& activation_kind() {
  static const Activation kind;
  return kind;
}

const std::vector<std::string>& activation_names() {
  static const std::vector<std::string> names = {
      "none",       "linear",       "relu",  "relu2",    "relu6",     "leaky_relu",
      "elu",        "selu",         "gelu",  "gelu_new", "gelu_fast", "gelu_pytorch_tanh",
      "quick_gelu", "silu",         "swish", "tanh",     "sigmoid",   "softplus",
      "hard_swish", "hard_sigmoid", "mish"};
  return names;
}

double activation_flops(const std::string& fn) {
  if (fn == "none" || fn == "linear" || fn.empty()) return 0;
  if (fn == "relu" || fn == "relu6" || fn == "leaky_relu") return 1;
  if (fn == "relu2") return 2;  // max(x, 0), then its square
  if (fn == "gelu" || fn == "gelu_new" || fn == "gelu_fast" || fn == "gelu_pytorch_tanh" || fn == "mish") return 8;
  return 4;
}

/// The chain for gelu_new (NewGELUActivation, also gelu_accurate), gelu_fast (FastGELUActivation) and
/// quick_gelu (QuickGELUActivation), with activations of e bytes; nullopt for fused activations (relu,
/// gelu, gelu_pytorch_tanh, silu, ...). Derived from the forward code and PyTorch's derivative formulas:
/// gelu_new is 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·pow(x, 3)))); pow is on autocast's FP32 list, so
/// under 16-bit training x is cast up, and type promotion keeps FP32 from there to the multiplication
/// by 0.5·x; the result is cast back to e for the next GEMM, and its gradients are cast to each input's
/// type. Saved: pow's input (FP32), tanh's output, 1 + tanh and 0.5·x.
std::optional<OpChain> composed_activation(const std::string& fn, double e) {
  const double f = 4;  // FP32
  const bool autocast = e < f;
  OpChain c;
  if (fn == "gelu_new") {
    if (autocast) c.forward.push_back(e + f);                    // x to FP32 for pow
    c.forward.insert(c.forward.end(), {2 * f, 2 * f, e + 2 * f,  // pow, 0.044715·, x +
                                       2 * f, 2 * f, 2 * f,      // √(2/π)·, tanh, 1 +
                                       2 * e, e + 2 * f});       // 0.5·x, product
    if (autocast) c.forward.push_back(f + e);                    // down to e for the next GEMM
    if (autocast) c.backward.push_back(e + f);                   // the gradient up to FP32
    c.backward.insert(c.backward.end(), {3 * f, e + 2 * f,       // d(0.5·x), d(1 + tanh)
                                         3 * f, 2 * f, 2 * f,    // tanh backward, √(2/π)·, 0.044715·
                                         2 * f, 2 * f, 3 * f,    // pow backward: x², 3·, times the gradient
                                         2 * e, 3 * e, 3 * e});  // 0.5·, two sums into dx
    if (autocast) c.backward.insert(c.backward.end(), {f + e, f + e, f + e});  // gradients cast to e
    c.saved = 3 * f + e;
    c.output = f;
    return c;
  }
  if (fn == "gelu_fast") {
    // 0.5·x·(1 + tanh(x·0.7978845608·(1 + 0.044715·x·x))): no op on autocast's lists, all in e.
    c.forward = {2 * e, 3 * e, 2 * e, 2 * e, 3 * e, 2 * e, 2 * e, 2 * e, 3 * e};
    c.backward = {3 * e, 3 * e, 3 * e,         // the product's two terms, tanh backward
                  3 * e, 3 * e, 2 * e,         // x·0.79788 times (1 + ...): two terms, then the 0.79788·
                  3 * e, 3 * e, 2 * e, 2 * e,  // 0.044715·x times x: two terms, 0.044715·, 0.5·
                  3 * e, 3 * e, 3 * e};        // four gradients of x summed
    // Saved: x, 0.044715·x, x·0.79788, 1 + 0.044715·x², tanh, 0.5·x and 1 + tanh.
    c.saved = 7 * e;
    c.output = e;
    return c;
  }
  if (fn == "relu2") {
    // Hugging Face's ReLUSquaredActivation (Nemotron-H's relu2): relu, then torch.square, two kernels; square's
    // gradient reads the relu output (2·r·grad), relu's the same output as its mask. Saved: that one tensor.
    c.forward = {2 * e, 2 * e};
    c.backward = {3 * e, 3 * e};
    c.saved = e;
    c.output = e;
    return c;
  }
  if (fn == "quick_gelu") {
    // x·sigmoid(1.702·x): the scaling, sigmoid (saves its output), the product (saves x and the sigmoid).
    c.forward = {2 * e, 2 * e, 3 * e};
    c.backward = {3 * e, 3 * e, 3 * e, 2 * e, 3 * e};  // two product terms, sigmoid backward, 1.702·, sum
    c.saved = 2 * e;
    c.output = e;
    return c;
  }
  return std::nullopt;
}

}  // namespace prenet
