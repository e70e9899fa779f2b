// Convolution and pooling. 1-D forms run as 2-D with height 1, as the layer list writes them.
#include <algorithm>

#include "model/onnx/translator.hpp"

namespace prenet::onnx {

/// Padding for conv and pooling: explicit symmetric pads, or "same" / "valid" from auto_pad.
Json Translator::padding(const Node& n, std::size_t spatial) {
  std::string autopad = n.attr_s("auto_pad", "NOTSET");
  if (autopad == "SAME_UPPER" || autopad == "SAME_LOWER") return "same";
  if (autopad == "VALID") return "valid";
  auto pads = n.attr_ints("pads");
  if (pads.empty()) return 0;
  if (pads.size() != 2 * spatial) fail(n, "pads must have " + std::to_string(2 * spatial) + " entries");
  for (auto p : pads) {
    if (p < 0 || p > Limits::kMaxDim) fail(n, "negative or huge padding");
  }
  bool asymmetric = false;
  for (std::size_t i = 0; i < spatial; ++i) asymmetric = asymmetric || pads[i] != pads[i + spatial];
  if (asymmetric) note(n, "asymmetric padding taken as its leading side");
  if (spatial == 1) return Json::array({0, pads[0]});
  return Json::array({pads[0], pads[1]});
}

/// A per-spatial-axis attribute (kernel_shape, strides) as [h, w] (1-D: [1, w]); `fallback` when absent.
std::vector<std::int64_t> Translator::pair_attr(const Node& n, const std::string& key, std::size_t spatial,
                                                std::int64_t fallback) {
  auto v = n.attr_ints(key);
  if (v.empty()) v.assign(spatial, fallback);
  if (v.size() != spatial) fail(n, key + " must have " + std::to_string(spatial) + " entries");
  for (auto x : v) {
    if (x < 1 || x > Limits::kMaxDim) fail(n, key + " entries must be positive");
  }
  if (spatial == 1) return {1, v[0]};
  return v;
}

/// 1-D conv and pooling run as 2-D with height 1: [C, L] is viewed as [C, 1, L].
Value Translator::as_2d(const Value& x, const Node& n) {
  if (x.shape.size() == 3) return x;
  if (x.shape.size() != 2)
    fail(n, "expects [channels, length] or [channels, height, width], got " + to_string(x.shape));
  Value v = x;
  v.shape = {x.shape[0], 1, x.shape[1]};
  return v;
}

/// The [C, 1, L] result of a 1-D operator viewed back as [C, L].
Value Translator::back_to_1d(Value v, bool was_1d) {
  if (was_1d) v.shape = {v.shape[0], v.shape[2]};
  return v;
}

/// Conv by a rank-3 or rank-4 initializer: a conv2d layer (groups kept, the following activation fused).
void Translator::conv(const Node& n) {
  Value x0 = activation(n, n.in(0));
  bool one_d = x0.shape.size() == 2;
  Value x = as_2d(x0, n);
  const Value& w = weight(n, 1, 3, 4);
  std::size_t spatial = w.shape.size() - 2;
  if ((spatial == 1) != one_d) fail(n, "weight " + to_string(w.shape) + " does not match input " + to_string(x0.shape));
  for (auto d : n.attr_ints("dilations")) {
    if (d != 1) fail(n, "dilated convolutions are not supported");
  }
  std::int64_t group = n.attr_i("group", 1);
  if (group < 1) fail(n, "group must be positive");
  std::vector<std::int64_t> kernel =
      spatial == 1 ? std::vector<std::int64_t>{1, w.shape[2]} : std::vector<std::int64_t>{w.shape[2], w.shape[3]};
  if (w.shape[1] * group != x.shape[0]) {
    fail(n, "weight " + to_string(w.shape) + " with group " + std::to_string(group) + " does not match " +
                std::to_string(x.shape[0]) + " input channels");
  }
  auto strides = pair_attr(n, "strides", spatial, 1);
  std::string fused;
  std::string act = fuse_activation(n.outputs[0], current_, &fused);
  Json spec = {{"type", "conv2d"},
               {"filters", w.shape[0]},
               {"kernel_size", kernel},
               {"stride", strides},
               {"padding", padding(n, spatial)},
               {"groups", group},
               {"bias", !n.in(2).empty()},
               {"activation", act}};
  set_fused(n, back_to_1d(emit(spec, unique_name(n), {x}), one_d), fused);
}

/// MaxPool / AveragePool: a max_pool2d / avg_pool2d layer (ceil_mode costed as floor).
void Translator::pool(const Node& n) {
  Value x0 = activation(n, n.in(0));
  bool one_d = x0.shape.size() == 2;
  Value x = as_2d(x0, n);
  std::size_t spatial = one_d ? 1 : 2;
  auto kernel = pair_attr(n, "kernel_shape", spatial, 0);
  auto strides = pair_attr(n, "strides", spatial, 1);
  if (n.attr_i("ceil_mode", 0) != 0) note(n, "ceil_mode costed as floor");
  Json spec = {{"type", n.op == "MaxPool" ? "max_pool2d" : "avg_pool2d"},
               {"pool_size", kernel},
               {"stride", strides},
               {"padding", padding(n, spatial)}};
  set(n, 0, back_to_1d(emit(spec, unique_name(n), {x}), one_d));
}

/// GlobalAveragePool / GlobalMaxPool: the pooled [C], seen by ONNX as [C, 1, ...].
void Translator::global_pool(const Node& n) {
  Value x = activation(n, n.in(0));
  if (x.shape.size() < 2) fail(n, "expects [channels, ...spatial], got " + to_string(x.shape));
  Value out =
      emit({{"type", n.op == "GlobalAveragePool" ? "global_avg_pool" : "global_max_pool"}}, unique_name(n), {x});
  out.shape = x.shape;  // ONNX keeps the spatial axes as 1s: a view of the pooled [C]
  std::fill(out.shape.begin() + 1, out.shape.end(), 1);
  set(n, 0, out);
}

}  // namespace prenet::onnx
