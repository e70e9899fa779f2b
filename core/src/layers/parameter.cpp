// parameter: a learned tensor of `shape` used as an activation (ViT's class token); it reads no input and
// runs no kernel (its update is the optimizer's).
#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

class Parameter : public LayerKind {
 public:
  Parameter() : LayerKind(LayerType::Parameter, "parameter") {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    reject_unknown_keys(spec, path, common_keys({"shape"}));
    const Json& shape = shape_entry(spec, path);
    LayerAttrs a;
    for (std::size_t i = 0; i < shape.size(); ++i)
      a.target_shape.push_back(element_int(shape, i, join(path, "shape"), 1));
    return a;
  }

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    std::int64_t n = 1;
    for (auto dim : layer.attrs.target_shape) n = checked_mul(n, dim, join(path, "shape"));
    layer.output_shape = layer.attrs.target_shape;
    layer.parameters = params_of({n}, path);
  }
};

}  // namespace

const LayerKind& parameter_kind() {
  static const Parameter kind;
  return kind;
}

}  // namespace prenet
