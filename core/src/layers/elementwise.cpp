// Layers that combine several inputs: add (equal shapes), multiply (NumPy broadcasting) and concat
// (along one axis).
#include <algorithm>

#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

/// Throws "<name> needs at least two inputs" for a layer with fewer.
void require_two_inputs(const Layer& layer, const std::string& path, const char* name) {
  if (layer.input_shapes.size() < 2) {
    throw InputError(join(path, "inputs"), std::string(name) + " needs at least two inputs");
  }
}

class Add : public LayerKind {
 public:
  Add() : LayerKind(LayerType::Add, "add") {}

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    const Shape& in = layer.input_shapes.front();
    require_two_inputs(layer, path, "add");
    for (std::size_t i = 1; i < layer.input_shapes.size(); ++i) {
      if (layer.input_shapes[i] != in) {
        throw InputError(join(path, "inputs"),
                         "add needs equal shapes, got " + to_string(in) + " and " + to_string(layer.input_shapes[i]));
      }
    }
    layer.output_shape = in;
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& /*lw*/) const override {
    double inputs = d(static_cast<std::int64_t>(st.layer.inputs.size()));
    kb.stream(KernelClass::Elementwise, Phase::Forward, st.out_elems, inputs + 1, inputs - 1);
    // Gradients of the branches meet where they forked and are summed there.
    if (st.dx) kb.stream(KernelClass::Elementwise, Phase::Backward, st.out_elems, 3, 1);
  }

  bool token_wise() const override { return true; }
};

class Multiply : public LayerKind {
 public:
  Multiply() : LayerKind(LayerType::Multiply, "multiply") {}

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    require_two_inputs(layer, path, "multiply");
    // NumPy broadcasting: align trailing dimensions; each pair must be equal or one of them 1.
    Shape out = layer.input_shapes.front();
    for (std::size_t i = 1; i < layer.input_shapes.size(); ++i) {
      const Shape& other = layer.input_shapes[i];
      Shape merged(std::max(out.size(), other.size()), 1);
      for (std::size_t k = 0; k < merged.size(); ++k) {
        std::int64_t x = k < out.size() ? out[out.size() - 1 - k] : 1;
        std::int64_t y = k < other.size() ? other[other.size() - 1 - k] : 1;
        if (x != y && x != 1 && y != 1) {
          throw InputError(join(path, "inputs"), "cannot broadcast " + to_string(out) + " and " + to_string(other));
        }
        merged[merged.size() - 1 - k] = std::max(x, y);
      }
      out = merged;
      std::int64_t n = 1;
      for (auto dim : out) n = checked_mul(n, dim, join(path, "inputs"));
    }
    layer.output_shape = out;
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    // Each input's gradient is the output gradient times the other inputs, which forward saved.
    double inputs = d(static_cast<std::int64_t>(st.layer.inputs.size()));
    kb.stream(KernelClass::Elementwise, Phase::Forward, st.out_elems, inputs + 1, inputs - 1);
    kb.stream(KernelClass::Elementwise, Phase::Backward, st.out_elems, 2 * inputs + 1, inputs);
    lw.saved_activation_bytes = st.e * st.out_elems * inputs;
  }

  bool token_wise() const override { return true; }
};

class Concat : public LayerKind {
 public:
  Concat() : LayerKind(LayerType::Concat, "concat") {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    reject_unknown_keys(spec, path, common_keys({"axis"}));
    LayerAttrs a;
    a.axis = get_int(spec, "axis", path, -1, -8, 7);
    return a;
  }

  /// Concatenates along `axis` (negative from the end, resolved here); other dimensions must agree.
  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    const Shape& in = layer.input_shapes.front();
    LayerAttrs& a = layer.attrs;
    require_two_inputs(layer, path, "concat");
    auto rank = static_cast<std::int64_t>(in.size());
    std::int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
    if (axis < 0 || axis >= rank) throw InputError(join(path, "axis"), "out of range for shape " + to_string(in));
    Shape out = in;
    for (std::size_t i = 1; i < layer.input_shapes.size(); ++i) {
      const Shape& other = layer.input_shapes[i];
      bool compatible = other.size() == in.size();
      for (std::int64_t dim = 0; compatible && dim < rank; ++dim) {
        const auto k = static_cast<std::size_t>(dim);
        if (dim != axis && other[k] != in[k]) compatible = false;
      }
      if (!compatible) {
        throw InputError(join(path, "inputs"), "cannot concatenate " + to_string(in) + " and " + to_string(other) +
                                                   " on axis " + std::to_string(a.axis));
      }
      out[static_cast<std::size_t>(axis)] += other[static_cast<std::size_t>(axis)];
    }
    a.axis = axis;
    layer.output_shape = out;
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& /*lw*/) const override {
    kb.stream(KernelClass::Elementwise, Phase::Forward, st.out_elems, 2, 0);
  }
};

}  // namespace

const LayerKind& add_kind() {
  static const Add kind;
  return kind;
}

const LayerKind& multiply_kind() {
  static const Multiply kind;
  return kind;
}

const LayerKind& concat_kind() {
  static const Concat kind;
  return kind;
}

}  // namespace prenet
