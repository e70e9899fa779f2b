// Views, which run no kernel: flatten, reshape (to `shape`, one dimension may be -1) and identity.
#include <algorithm>

#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

class Flatten : public LayerKind {
 public:
  Flatten() : LayerKind(LayerType::Flatten, "flatten") {}

  void infer(Layer& layer, bool /*same_padding*/, const std::string& /*path*/) const override {
    layer.output_shape = {elements(layer.input_shapes.front())};
  }
};

class Reshape : public LayerKind {
 public:
  Reshape() : LayerKind(LayerType::Reshape, "reshape") {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    reject_unknown_keys(spec, path, common_keys({"shape"}));
    const Json& shape = shape_entry(spec, path);
    LayerAttrs a;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      a.target_shape.push_back(element_int(shape, i, join(path, "shape"), -1));
      if (a.target_shape.back() == 0)
        throw InputError(index(join(path, "shape"), i), "dimensions must be positive or -1");
    }
    if (std::count(a.target_shape.begin(), a.target_shape.end(), -1) > 1) {
      throw InputError(join(path, "shape"), "at most one dimension may be -1");
    }
    return a;
  }

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    const Shape& in = layer.input_shapes.front();
    const LayerAttrs& a = layer.attrs;
    std::int64_t known = 1;
    for (auto dim : a.target_shape) known = dim > 0 ? checked_mul(known, dim, join(path, "shape")) : known;
    Shape out = a.target_shape;
    for (auto& dim : out) {
      if (dim == -1) {
        if (elements(in) % known != 0) throw InputError(join(path, "shape"), "cannot reshape " + to_string(in));
        dim = elements(in) / known;
        known *= dim;
      }
    }
    if (known != elements(in)) {
      throw InputError(join(path, "shape"), "cannot reshape " + to_string(in) + " (" + std::to_string(elements(in)) +
                                                " elements) to " + to_string(a.target_shape));
    }
    layer.output_shape = out;
  }
};

class Identity : public LayerKind {
 public:
  Identity() : LayerKind(LayerType::Identity, "identity") {}
  bool token_wise() const override { return true; }
  bool passthrough() const override { return true; }
};

}  // namespace

const LayerKind& flatten_kind() {
  static const Flatten kind;
  return kind;
}

const LayerKind& reshape_kind() {
  static const Reshape kind;
  return kind;
}

const LayerKind& identity_kind() {
  static const Identity kind;
  return kind;
}

}  // namespace prenet
