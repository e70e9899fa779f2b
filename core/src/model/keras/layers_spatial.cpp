// Keras convolution and pooling classes. Images are [H, W, C] in Keras and [C, H, W] in the layer list;
// 1-D forms run as 2-D with height 1.
#include "model/keras/config.hpp"
#include "model/keras/converter.hpp"

namespace prenet::keras {

/// Conv2D, DepthwiseConv2D (groups = channels) and SeparableConv2D (depthwise, then a 1x1 pointwise conv).
Tensor Converter::conv2d(const Call& c) {
  const std::string& cpath = c.cpath;
  require_image(c.in(), c.lpath, c.cls);
  require_channels_last(c.cfg, cpath);
  require_unit(c.cfg, "dilation_rate", cpath);
  auto k = kints(c.cfg, "kernel_size", cpath, 2, 1);
  auto st = kints(c.cfg, "strides", cpath, 2, 1);
  std::string pad = padding_of(c.cfg, cpath, false);
  bool softmax = false;
  std::string act = activation_of(c.cfg, cpath, &softmax);
  bool bias = get_bool(c.cfg, "use_bias", cpath, true);
  std::int64_t channels = shape_of(c.in())[0];
  Json spec = {{"type", "conv2d"}, {"kernel_size", {k[0], k[1]}}, {"stride", {st[0], st[1]}}, {"padding", pad}};
  if (c.cls == "Conv2D") {
    spec["filters"] = required_kint(c.cfg, "filters", cpath);
    spec["groups"] = kint(c.cfg, "groups", cpath, 1);
    spec["bias"] = bias;
    spec["activation"] = act;
    return maybe_softmax(one(spec, c.name, c.lpath, c.in(), true), softmax, c.name, c.lpath);
  }
  std::int64_t mult = kint(c.cfg, "depth_multiplier", cpath, 1);
  spec["filters"] = channels * mult;
  spec["groups"] = channels;
  if (c.cls == "DepthwiseConv2D") {
    spec["bias"] = bias;
    spec["activation"] = act;
    return maybe_softmax(one(spec, c.name, c.lpath, c.in(), true), softmax, c.name, c.lpath);
  }
  spec["bias"] = false;
  Tensor dw = one(spec, c.name + ".depthwise", c.lpath, c.in(), true);
  std::int64_t filters = required_kint(c.cfg, "filters", cpath);
  Tensor out = one({{"type", "conv2d"}, {"filters", filters}, {"kernel_size", 1}, {"bias", bias}, {"activation", act}},
                   c.name, c.lpath, dw, true);
  return maybe_softmax(out, softmax, c.name, c.lpath);
}

/// Conv1D on [steps, features]: a conv2d of height 1 between two views.
Tensor Converter::conv1d(const Call& c) {
  const std::string& cpath = c.cpath;
  require_sequence(c.in(), c.lpath, c.cls);
  require_channels_last(c.cfg, cpath);
  require_unit(c.cfg, "dilation_rate", cpath);
  std::int64_t filters = required_kint(c.cfg, "filters", cpath);
  std::int64_t k = kints(c.cfg, "kernel_size", cpath, 1, 1)[0];
  std::int64_t st = kints(c.cfg, "strides", cpath, 1, 1)[0];
  std::string pad = padding_of(c.cfg, cpath, true);
  bool softmax = false;
  std::string act = activation_of(c.cfg, cpath, &softmax);
  Tensor img = seq_to_image(c.in(), c.name, c.lpath);
  Tensor conv = one({{"type", "conv2d"},
                     {"filters", filters},
                     {"kernel_size", {1, k}},
                     {"stride", {1, st}},
                     {"padding", pad},
                     {"groups", kint(c.cfg, "groups", cpath, 1)},
                     {"bias", get_bool(c.cfg, "use_bias", cpath, true)},
                     {"activation", act}},
                    c.name + ".conv", c.lpath, img, true);
  return maybe_softmax(image_to_seq(conv, c.name, c.lpath), softmax, c.name, c.lpath);
}

/// MaxPooling2D / AveragePooling2D (strides default to the pool size).
Tensor Converter::pool2d(const Call& c) {
  require_image(c.in(), c.lpath, c.cls);
  require_channels_last(c.cfg, c.cpath);
  auto p = kints(c.cfg, "pool_size", c.cpath, 2, 2);
  auto st = c.cfg.contains("strides") && !c.cfg["strides"].is_null() ? kints(c.cfg, "strides", c.cpath, 2, 1) : p;
  return one({{"type", c.cls == "MaxPooling2D" ? "max_pool2d" : "avg_pool2d"},
              {"pool_size", {p[0], p[1]}},
              {"stride", {st[0], st[1]}},
              {"padding", padding_of(c.cfg, c.cpath, false)}},
             c.name, c.lpath, c.in(), true);
}

/// MaxPooling1D / AveragePooling1D: a 2-D pooling of height 1 between two views.
Tensor Converter::pool1d(const Call& c) {
  require_sequence(c.in(), c.lpath, c.cls);
  std::int64_t p = kints(c.cfg, "pool_size", c.cpath, 1, 2)[0];
  std::int64_t st =
      c.cfg.contains("strides") && !c.cfg["strides"].is_null() ? kints(c.cfg, "strides", c.cpath, 1, 1)[0] : p;
  Tensor img = seq_to_image(c.in(), c.name, c.lpath);
  Tensor pooled = one({{"type", c.cls == "MaxPooling1D" ? "max_pool2d" : "avg_pool2d"},
                       {"pool_size", {1, p}},
                       {"stride", {1, st}},
                       {"padding", padding_of(c.cfg, c.cpath, false)}},
                      c.name + ".pool", c.lpath, img, true);
  return image_to_seq(pooled, c.name, c.lpath);
}

/// GlobalAveragePooling2D / GlobalMaxPooling2D: [C] (keepdims: viewed as [C, 1, 1]).
Tensor Converter::global_pool2d(const Call& c) {
  require_image(c.in(), c.lpath, c.cls);
  std::string type = c.cls == "GlobalAveragePooling2D" ? "global_avg_pool" : "global_max_pool";
  if (get_bool(c.cfg, "keepdims", c.cpath, false)) {
    Tensor pooled = one({{"type", type}}, c.name + ".pool", c.lpath, c.in(), false);
    return one({{"type", "reshape"}, {"shape", {shape_of(c.in())[0], 1, 1}}}, c.name, c.lpath, pooled, true);
  }
  return one({{"type", type}}, c.name, c.lpath, c.in(), false);
}

/// GlobalAveragePooling1D / GlobalMaxPooling1D over the steps: a global pooling of [F, S].
Tensor Converter::global_pool1d(const Call& c) {
  require_sequence(c.in(), c.lpath, c.cls);
  const Shape& s = shape_of(c.in());
  Tensor t = one({{"type", "reshape"}, {"shape", {s[1], s[0]}}}, c.name + ".by_feature", c.lpath, c.in(), false);
  return one({{"type", c.cls == "GlobalAveragePooling1D" ? "global_avg_pool" : "global_max_pool"}}, c.name, c.lpath, t,
             false);
}

}  // namespace prenet::keras
