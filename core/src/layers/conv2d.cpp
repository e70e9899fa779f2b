// conv2d: a 2-D convolution over [channels, height, width], grouped or not, with a fused activation.
#include "layers/kind_helpers.hpp"
#include "layers/memory_format.hpp"

namespace prenet {
namespace {

class Conv2d : public LayerKind {
 public:
  Conv2d() : LayerKind(LayerType::Conv2d, "conv2d") {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* same_padding) const override {
    reject_unknown_keys(spec, path,
                        common_keys({"filters", "kernel_size", "stride", "padding", "groups", "bias", "activation"}));
    LayerAttrs a;
    a.filters = require_int(spec, "filters", path, 1, Limits::kMaxDim);
    if (!spec.contains("kernel_size")) throw InputError(join(path, "kernel_size"), "required integer is missing");
    std::tie(a.kernel_h, a.kernel_w) = get_pair(spec, "kernel_size", path, 1, 1);
    std::tie(a.stride_h, a.stride_w) = get_pair(spec, "stride", path, 1, 1);
    std::tie(a.pad_h, a.pad_w, *same_padding) = get_padding(spec, path);
    a.groups = get_int(spec, "groups", path, 1, 1, Limits::kMaxDim);
    a.bias = get_bool(spec, "bias", path, true);
    a.activation = get_enum(spec, "activation", path, "none", activation_names());
    return a;
  }

  void infer(Layer& layer, bool same_padding, const std::string& path) const override {
    const Shape& in = layer.input_shapes.front();
    LayerAttrs& a = layer.attrs;
    require_rank(in, 3, path, "conv2d expects [channels, height, width]");
    if (in[0] % a.groups != 0 || a.filters % a.groups != 0) {
      throw InputError(join(path, "groups"), "must divide input channels (" + std::to_string(in[0]) +
                                                 ") and filters (" + std::to_string(a.filters) + ")");
    }
    std::int64_t ho = conv_out(in[1], a.kernel_h, a.stride_h, a.pad_h, same_padding, join(path, "kernel_size"), in);
    std::int64_t wo = conv_out(in[2], a.kernel_w, a.stride_w, a.pad_w, same_padding, join(path, "kernel_size"), in);
    if (same_padding) {
      a.pad_h = std::max<std::int64_t>((ho - 1) * a.stride_h + a.kernel_h - in[1], 0) / 2;
      a.pad_w = std::max<std::int64_t>((wo - 1) * a.stride_w + a.kernel_w - in[2], 0) / 2;
    }
    layer.output_shape = {a.filters, ho, wo};
    layer.parameters =
        params_of({a.kernel_h, a.kernel_w, in[0] / a.groups, a.filters}, path) + (a.bias ? a.filters : 0);
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    const Shape& in = st.in;
    const Shape& out = st.layer.output_shape;
    const LayerAttrs& a = st.a;
    const double e = st.e, act = st.act, out_elems = st.out_elems;
    ConvShape shape{st.b,     d(in[0]),  d(a.filters), d(a.kernel_h), d(a.kernel_w), d(in[1]),
                    d(in[2]), d(out[1]), d(out[2]),    d(a.stride_h), d(a.groups)};
    kb.add(conv_pass_kernel(ConvPass::Forward, shape, e));
    if (st.composed) {
      kb.chain(Phase::Forward, out_elems, st.composed->forward);
      kb.chain(Phase::Backward, out_elems, st.composed->backward);
    } else if (act > 0) {
      kb.stream(KernelClass::Elementwise, Phase::Forward, out_elems, 2, act);
      kb.stream(KernelClass::Elementwise, Phase::Backward, out_elems, 3, 2 * act);
    }
    if (st.dx) kb.add(conv_pass_kernel(ConvPass::Data, shape, e));
    kb.add_weight_gradient(conv_pass_kernel(ConvPass::Filter, shape, e));
    for (const Kernel& k : layout_transposes(st.context, st.in_elems, out_elems, e, st.layer.needs_input_grad)) {
      kb.add(k);
    }
    // The input is kept for the filter gradient only.
    lw.saved_activation_bytes = (st.frozen ? 0 : e * st.in_elems) + out_elems * (st.composed ? st.composed->saved
                                                                                 : act > 0   ? e
                                                                                             : 0);
  }

  double prenet_co(const Layer& layer, double b) const override {
    const Shape& in = layer.input_shapes.front();
    const LayerAttrs& a = layer.attrs;
    return b * d(layer.output_shape[1] * layer.output_shape[2]) * d(a.kernel_h * a.kernel_w) * d(in[0] / a.groups) *
           d(a.filters);
  }
  bool saves_input() const override { return true; }
  bool saves_output_only_for_relu(const Layer& layer) const override { return layer.attrs.activation == "relu"; }
};

}  // namespace

const LayerKind& conv2d_kind() {
  static const Conv2d kind;
  return kind;
}

}  // namespace prenet
