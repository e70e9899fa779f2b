// Pooling: max_pool2d and avg_pool2d over windows of [channels, height, width], and global_avg_pool and
// global_max_pool over all spatial positions.
#include <algorithm>

#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

/// One pass over input and output with one comparison or addition per window element; max pooling keeps
/// its input for backward (where the maxima were).
void pooling_kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw, double window, bool keeps_input) {
  const double in_elems = st.in_elems, out_elems = st.out_elems;
  kb.stream(KernelClass::Elementwise, Phase::Forward, in_elems + out_elems, 1,
            out_elems * window / (in_elems + out_elems));
  if (st.dx) kb.stream(KernelClass::Elementwise, Phase::Backward, in_elems + out_elems, 1, 0);
  lw.saved_activation_bytes = keeps_input ? st.e * in_elems : 0;
}

class WindowPool : public LayerKind {
 public:
  WindowPool(LayerType type, const char* name, bool keeps_input) : LayerKind(type, name), keeps_input_(keeps_input) {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* same_padding) const override {
    reject_unknown_keys(spec, path, common_keys({"pool_size", "stride", "padding"}));
    LayerAttrs a;
    std::tie(a.kernel_h, a.kernel_w) = get_pair(spec, "pool_size", path, 2, 1);
    std::tie(a.stride_h, a.stride_w) = get_pair(spec, "stride", path, a.kernel_h, 1);
    if (!spec.contains("stride")) a.stride_w = a.kernel_w;
    std::tie(a.pad_h, a.pad_w, *same_padding) = get_padding(spec, path);
    return a;
  }

  void infer(Layer& layer, bool same_padding, const std::string& path) const override {
    const Shape& in = layer.input_shapes.front();
    const LayerAttrs& a = layer.attrs;
    require_rank(in, 3, path, "pooling expects [channels, height, width]");
    std::int64_t ho = conv_out(in[1], a.kernel_h, a.stride_h, a.pad_h, same_padding, join(path, "pool_size"), in);
    std::int64_t wo = conv_out(in[2], a.kernel_w, a.stride_w, a.pad_w, same_padding, join(path, "pool_size"), in);
    layer.output_shape = {in[0], ho, wo};
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    pooling_kernels(st, kb, lw, d(st.a.kernel_h * st.a.kernel_w), keeps_input_);
  }

 private:
  bool keeps_input_;
};

class GlobalPool : public LayerKind {
 public:
  GlobalPool(LayerType type, const char* name, bool keeps_input) : LayerKind(type, name), keeps_input_(keeps_input) {}

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    const Shape& in = layer.input_shapes.front();
    if (in.size() < 2) throw InputError(path, "global pooling expects [channels, ...spatial], got " + to_string(in));
    layer.output_shape = {in[0]};
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    pooling_kernels(st, kb, lw, d(elements(st.in) / std::max<std::int64_t>(st.in[0], 1)), keeps_input_);
  }

 private:
  bool keeps_input_;
};

}  // namespace

const LayerKind& max_pool2d_kind() {
  static const WindowPool kind(LayerType::MaxPool2d, "max_pool2d", true);
  return kind;
}

const LayerKind& avg_pool2d_kind() {
  static const WindowPool kind(LayerType::AvgPool2d, "avg_pool2d", false);
  return kind;
}

const LayerKind& global_avg_pool_kind() {
  static const GlobalPool kind(LayerType::GlobalAvgPool, "global_avg_pool", false);
  return kind;
}

const LayerKind& global_max_pool_kind() {
  static const GlobalPool kind(LayerType::GlobalMaxPool, "global_max_pool", true);
  return kind;
}

}  // namespace prenet
