// Normalisation: batch, layer and RMS norms.
#include "model/onnx/translator.hpp"

namespace prenet::onnx {

/// BatchNormalization: a batchnorm layer.
void Translator::batchnorm(const Node& n) {
  Value x = activation(n, n.in(0));
  set(n, 0, emit({{"type", "batchnorm"}}, unique_name(n), {x}));
}

/// LayerNormalization (a layernorm, biased when it has a B input) or its RMS forms (an rmsnorm), over the
/// last axis.
void Translator::layernorm(const Node& n) {
  Value x = activation(n, n.in(0));
  std::int64_t axis = n.attr_i("axis", -1);
  auto rank = static_cast<std::int64_t>(x.shape.size()) + 1;
  if (axis != -1 && axis != rank - 1) note(n, "normalisation over several axes costed as over the last");
  Json spec = n.op == "LayerNormalization" ? Json{{"type", "layernorm"}, {"bias", !n.in(2).empty()}}
                                           : Json{{"type", "rmsnorm"}};
  set(n, 0, emit(spec, unique_name(n), {x}));
}

}  // namespace prenet::onnx
