#include "prenet/keras.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace prenet {
namespace {

const std::int64_t kMaxDim = Limits::kMaxDim;

const char* kSupported =
    "InputLayer, Dense, Conv1D, Conv2D, DepthwiseConv2D, SeparableConv2D, MaxPooling1D/2D, AveragePooling1D/2D, "
    "GlobalAveragePooling1D/2D, GlobalMaxPooling1D/2D, BatchNormalization, LayerNormalization, Embedding, "
    "PositionEmbedding, "
    "SimpleRNN, LSTM, GRU, Bidirectional, MultiHeadAttention, Dropout, SpatialDropout1D/2D, Flatten, Reshape, "
    "Activation, ReLU, LeakyReLU, ELU, Softmax, Add, Subtract, Average, Maximum, Minimum, Multiply, Concatenate";

/// A Keras tensor as the layer list holds it: its producer and whether Keras sees it as [H, W, C]
/// while the layer list holds [C, H, W].
struct Tensor {
  std::string name;  // layer-list name of the producer ("input" for the network input)
  bool image = false;
};

std::string activation_of(const Json& cfg, const std::string& path, bool* softmax) {
  *softmax = false;
  auto it = cfg.find("activation");
  if (it == cfg.end() || it->is_null()) return "none";
  std::string fn;
  if (it->is_string()) {
    fn = it->get<std::string>();
  } else if (it->is_object() && it->contains("config") && (*it)["config"].is_string()) {
    fn = (*it)["config"].get<std::string>();  // Keras 3 may serialise a built-in as {"config": "relu", ...}
  } else {
    throw InputError(join(path, "activation"), "expected an activation name, got " + describe_type(*it));
  }
  static const std::map<std::string, std::string> names = {{"linear", "none"},
                                                           {"relu", "relu"},
                                                           {"relu6", "relu6"},
                                                           {"sigmoid", "sigmoid"},
                                                           {"tanh", "tanh"},
                                                           {"elu", "elu"},
                                                           {"selu", "selu"},
                                                           {"gelu", "gelu"},
                                                           {"swish", "silu"},
                                                           {"silu", "silu"},
                                                           {"softplus", "softplus"},
                                                           {"hard_sigmoid", "hard_sigmoid"},
                                                           {"hard_silu", "hard_swish"},
                                                           {"hard_swish", "hard_swish"},
                                                           {"leaky_relu", "leaky_relu"},
                                                           {"mish", "mish"}};
  if (fn == "softmax") {
    *softmax = true;
    return "none";
  }
  auto found = names.find(fn);
  if (found == names.end())
    throw InputError(join(path, "activation"), "unsupported activation \"" + printable(fn) + "\"");
  return found->second;
}

std::int64_t kint(const Json& cfg, const std::string& key, const std::string& path, std::int64_t fallback,
                  std::int64_t min = 1) {
  return get_int(cfg, key, path, fallback, min, kMaxDim);
}

/// An int, or a list of `n` ints (Keras writes kernel_size as [3, 3]); every element in [min, 2^31].
std::vector<std::int64_t> kints(const Json& cfg, const std::string& key, const std::string& path, std::size_t n,
                                std::int64_t fallback, std::int64_t min = 1) {
  auto it = cfg.find(key);
  if (it == cfg.end() || it->is_null()) return std::vector<std::int64_t>(n, fallback);
  if (it->is_array()) {
    if (it->size() != n) {
      throw InputError(join(path, key),
                       "expected " + std::to_string(n) + " integers, got " + std::to_string(it->size()));
    }
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < n; ++i) {
      Json holder = {{"v", (*it)[i]}};
      try {
        out.push_back(get_int(holder, "v", "", fallback, min, kMaxDim));
      } catch (const InputError& e) {
        std::string m = e.what();
        throw InputError(index(join(path, key), i), m.substr(m.find(": ") + 2));
      }
    }
    return out;
  }
  return std::vector<std::int64_t>(n, get_int(cfg, key, path, fallback, min, kMaxDim));
}

std::string padding_of(const Json& cfg, const std::string& path, bool allow_causal) {
  std::vector<std::string> allowed = {"valid", "same"};
  if (allow_causal) allowed.push_back("causal");
  std::string p = get_enum(cfg, "padding", path, "valid", allowed);
  return p == "causal" ? "same" : p;  // causal pads k-1 on the left: same length and work as "same"
}

void require_unit(const Json& cfg, const std::string& key, const std::string& path) {
  auto it = cfg.find(key);
  if (it == cfg.end() || it->is_null()) return;
  Json values = it->is_array() ? *it : Json::array({*it});
  for (const auto& v : values) {
    if (!(v.is_number() && v.get<double>() == 1.0)) {
      throw InputError(join(path, key), "only 1 is supported (dilated convolutions are not modelled)");
    }
  }
}

void require_channels_last(const Json& cfg, const std::string& path) {
  std::string fmt = get_string(cfg, "data_format", path, "channels_last");
  if (fmt != "channels_last") throw InputError(join(path, "data_format"), "only channels_last is supported");
}

/// Collects tensor references (Keras 2 ["layer", node, tensor] triples and Keras 3 __keras_tensor__ objects)
/// from an inbound node, depth first, in order.
void collect_refs(const Json& node, std::vector<std::pair<std::string, std::int64_t>>& out, int depth) {
  if (depth > 16 || out.size() > 64) return;
  if (node.is_array()) {
    if (node.size() >= 3 && node[0].is_string() && node[1].is_number_integer() && node[2].is_number_integer()) {
      out.emplace_back(node[0].get<std::string>(), node[1].get<std::int64_t>());
      if (node.size() >= 4) collect_refs(node[3], out, depth + 1);  // Keras 2 kwargs: {"value": [...]}
      return;
    }
    for (const auto& item : node) collect_refs(item, out, depth + 1);
  } else if (node.is_object()) {
    if (node.value("class_name", "") == "__keras_tensor__" && node.contains("config") && node["config"].is_object()) {
      const Json& hist = node["config"].value("keras_history", Json());
      if (hist.is_array() && hist.size() >= 2 && hist[0].is_string() && hist[1].is_number_integer()) {
        out.emplace_back(hist[0].get<std::string>(), hist[1].get<std::int64_t>());
      }
      return;
    }
    for (auto it = node.begin(); it != node.end(); ++it) collect_refs(it.value(), out, depth + 1);
  }
}

/// The per-sample shape from an InputLayer or first-layer config (batch dimension dropped); -1 for unknown.
std::vector<std::int64_t> input_shape_of(const Json& cfg, const std::string& path, std::string* key_out) {
  for (const char* key : {"batch_input_shape", "batch_shape"}) {
    if (cfg.contains(key) && !cfg[key].is_null()) {
      *key_out = key;
      const Json& s = require_array(cfg[key], join(path, key));
      if (s.size() < 2 || s.size() > 4) {
        throw InputError(join(path, key),
                         "expected a batch shape of rank 2 to 4, got rank " + std::to_string(s.size()));
      }
      std::vector<std::int64_t> dims;
      for (std::size_t i = 1; i < s.size(); ++i) {
        if (s[i].is_null()) {
          dims.push_back(-1);
          continue;
        }
        Json holder = {{"v", s[i]}};
        try {
          dims.push_back(get_int(holder, "v", "", 0, 1, kMaxDim));
        } catch (const InputError& e) {
          std::string m = e.what();
          throw InputError(index(join(path, key), i), m.substr(m.find(": ") + 2));
        }
      }
      return dims;
    }
  }
  if (cfg.contains("build_config") && cfg["build_config"].is_object() && cfg["build_config"].contains("input_shape")) {
    Json inner = {{"batch_shape", cfg["build_config"]["input_shape"]}};
    return input_shape_of(inner, join(join(path, "build_config"), "input_shape"), key_out);
  }
  return {};
}

class Converter {
 public:
  Converter(const std::string& path, const InputOverrides& overrides) : path_(path), overrides_(overrides) {}

  Network run(const Json& doc) {
    require_object(doc, path_);
    std::string cls = require_string(doc, "class_name", path_);
    if (!doc.contains("config")) throw InputError(join(path_, "config"), "required object is missing");
    const std::string cfg_path = join(path_, "config");
    const Json& config = require_object(doc["config"], cfg_path);
    bool sequential = cls == "Sequential";
    if (!sequential && cls != "Functional" && cls != "Model") {
      throw InputError(join(path_, "class_name"),
                       "expected Sequential, Functional or Model, got \"" + printable(cls) + "\"");
    }
    layers_path_ = join(cfg_path, "layers");
    if (!config.contains("layers")) throw InputError(layers_path_, "required layer list is missing");
    const Json& layers = require_array(config["layers"], layers_path_);
    if (layers.size() > static_cast<std::size_t>(Limits::kMaxLayers)) {
      throw InputError(layers_path_, "more than " + std::to_string(Limits::kMaxLayers) + " layers");
    }
    Network net;
    net.name = get_string(config, "name", cfg_path, "keras-model");
    net.input = find_input(layers, sequential);
    builder_.emplace(std::move(net));

    Tensor previous{"input", net_input_image_};
    for (std::size_t i = 0; i < layers.size(); ++i) {
      std::string lpath = index(layers_path_, i);
      const Json& layer = require_object(layers[i], lpath);
      std::string lcls = require_string(layer, "class_name", lpath);
      if (!layer.contains("config")) throw InputError(join(lpath, "config"), "required object is missing");
      const Json& cfg = require_object(layer["config"], join(lpath, "config"));
      std::string name = get_string(cfg, "name", join(lpath, "config"), lcls + "_" + std::to_string(i));
      if (name == "input" || produced_.count(name)) {
        throw InputError(join(join(lpath, "config"), "name"), "duplicate layer name \"" + printable(name) + "\"");
      }
      std::vector<Tensor> inputs;
      if (lcls == "InputLayer") {
        if (!sequential) produced_[name] = Tensor{"input", net_input_image_};
        continue;
      }
      if (sequential) {
        inputs.push_back(previous);
      } else {
        inputs = inbound(layer, lpath);
      }
      Tensor out = convert(lcls, cfg, name, lpath, inputs);
      produced_[name] = out;
      previous = out;
    }
    if (builder_->network().layers.empty()) throw InputError(layers_path_, "the model has no layers besides its input");
    Network result = builder_->take();
    result.warnings.insert(result.warnings.end(), warnings_.begin(), warnings_.end());
    return result;
  }

 private:
  // ---- input
  InputSpec find_input(const Json& layers, bool sequential) {
    std::vector<std::int64_t> dims;
    std::string key, where;
    std::size_t first_real = 0;
    int inputs = 0;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      std::string lpath = index(layers_path_, i);
      const Json& layer = require_object(layers[i], lpath);
      std::string lcls = require_string(layer, "class_name", lpath);
      if (!layer.contains("config") || !layer["config"].is_object()) continue;
      if (lcls == "InputLayer") {
        if (++inputs > 1) throw InputError(lpath, "models with several inputs are not supported");
        where = join(lpath, "config");
        dims = input_shape_of(layer["config"], where, &key);
        first_real = i + 1;
      } else if (dims.empty() && sequential && i == first_real) {
        where = join(lpath, "config");
        dims = input_shape_of(layer["config"], where, &key);
      }
    }
    if (dims.empty()) {
      throw InputError(layers_path_,
                       "no input shape found: add an InputLayer (keras.Input) or give the first layer "
                       "an input_shape");
    }
    std::string first_cls;
    if (first_real < layers.size() && layers[first_real].is_object()) {
      first_cls = layers[first_real].value("class_name", "");
    }
    std::string field = join(where, key);
    auto fill = [&](std::int64_t v, std::size_t i, const std::optional<std::int64_t>& over, const char* what) {
      if (over) return *over;
      if (v < 0) {
        throw InputError(index(field, i + 1), std::string("is unknown (None); give training.") + what);
      }
      return v;
    };
    InputSpec spec;
    if (dims.size() == 1) {
      if (first_cls == "Embedding") {
        spec.kind = InputKind::Tokens;
        spec.seq_len = fill(dims[0], 0, overrides_.seq_len, "seq_len");
      } else {
        spec.kind = InputKind::Vector;
        if (dims[0] < 0) throw InputError(index(field, 1), "the feature count must be known");
        spec.features = dims[0];
      }
    } else if (dims.size() == 2) {
      spec.kind = InputKind::Sequence;
      spec.seq_len = fill(dims[0], 0, overrides_.seq_len, "seq_len");
      if (dims[1] < 0) throw InputError(index(field, 2), "the feature count must be known");
      spec.features = dims[1];
    } else {
      spec.kind = InputKind::Image;
      net_input_image_ = true;
      if (dims[2] < 0) throw InputError(index(field, 3), "the channel count must be known");
      spec.channels = dims[2];
      std::int64_t h = fill(dims[0], 0, overrides_.image_size, "image_size");
      std::int64_t w = fill(dims[1], 1, overrides_.image_size, "image_size");
      if (h != w) {
        throw InputError(field, "non-square images (" + std::to_string(h) + " x " + std::to_string(w) +
                                    ") are not supported; the layer list takes a square image_size");
      }
      spec.image_size = h;
    }
    if (spec.seq_len > (1 << 20)) throw InputError(field, "sequence length above 2^20");
    if (spec.image_size > 16384) throw InputError(field, "image side above 16384");
    if (spec.kind != InputKind::Image && overrides_.image_size) {
      warnings_.push_back("training.image_size ignored: the model takes " + std::string(to_string(spec.kind)) +
                          " input");
    }
    if ((spec.kind == InputKind::Image || spec.kind == InputKind::Vector) && overrides_.seq_len) {
      warnings_.push_back("training.seq_len ignored: the model takes " + std::string(to_string(spec.kind)) + " input");
    }
    return spec;
  }

  std::vector<Tensor> inbound(const Json& layer, const std::string& lpath) {
    std::string npath = join(lpath, "inbound_nodes");
    if (!layer.contains("inbound_nodes")) throw InputError(npath, "required for a Functional model's layer");
    const Json& nodes = require_array(layer["inbound_nodes"], npath);
    if (nodes.empty()) throw InputError(npath, "the layer is never called");
    if (nodes.size() > 1) throw InputError(npath, "shared layers (called more than once) are not supported");
    std::vector<std::pair<std::string, std::int64_t>> refs;
    collect_refs(nodes[0], refs, 0);
    if (refs.empty()) throw InputError(index(npath, 0), "no input tensors found");
    std::vector<Tensor> out;
    for (const auto& [producer, node_index] : refs) {
      auto it = produced_.find(producer);
      if (it == produced_.end()) {
        throw InputError(index(npath, 0), "reads \"" + printable(producer) + "\", which is not an earlier layer");
      }
      if (node_index != 0) throw InputError(index(npath, 0), "reads a shared layer's second call; not supported");
      out.push_back(it->second);
    }
    return out;
  }

  // ---- emission
  const Shape& shape_of(const Tensor& t) const { return builder_->shape(builder_->find(t.name)); }

  Tensor emit(Json spec, const std::string& name, const std::string& lpath, const std::vector<Tensor>& inputs,
              bool image) {
    Json names = Json::array();
    for (const auto& t : inputs) names.push_back(t.name);
    spec["inputs"] = names;
    builder_->add(spec, lpath, name);
    return Tensor{name, image};
  }

  Tensor one(const Json& spec, const std::string& name, const std::string& lpath, const Tensor& in, bool image) {
    return emit(spec, name, lpath, {in}, image);
  }

  Tensor maybe_softmax(Tensor t, bool softmax, const std::string& name, const std::string& lpath) {
    if (!softmax) return t;
    return one({{"type", "softmax"}}, name + ".softmax", lpath, t, t.image);
  }

  void require_image(const Tensor& t, const std::string& lpath, const std::string& cls) {
    if (!t.image || shape_of(t).size() != 3) {
      throw InputError(lpath, cls + " expects an image tensor [height, width, channels], got " +
                                  to_string(shape_of(t)) + " (layer-list layout)");
    }
  }

  void require_sequence(const Tensor& t, const std::string& lpath, const std::string& cls) {
    if (t.image || shape_of(t).size() != 2) {
      throw InputError(lpath, cls + " expects a sequence [steps, features], got " + to_string(shape_of(t)));
    }
  }

  /// [S, F] → [F, 1, S] (a view costed as free), so 1-D convolution and pooling run as 2-D with height 1.
  Tensor seq_to_image(const Tensor& t, const std::string& name, const std::string& lpath) {
    const Shape& s = shape_of(t);
    return one({{"type", "reshape"}, {"shape", {s[1], 1, s[0]}}}, name + ".to_2d", lpath, t, true);
  }
  Tensor image_to_seq(const Tensor& t, const std::string& name, const std::string& lpath) {
    const Shape& s = shape_of(t);
    return one({{"type", "reshape"}, {"shape", {s[2], s[0]}}}, name, lpath, t, false);
  }

  Tensor convert(const std::string& cls, const Json& cfg, const std::string& name, const std::string& lpath,
                 const std::vector<Tensor>& inputs) {
    const std::string cpath = join(lpath, "config");
    const Tensor& in = inputs.front();
    auto single = [&]() {
      if (inputs.size() != 1) throw InputError(join(lpath, "inbound_nodes"), cls + " takes one input");
    };
    bool softmax = false;
    if (cls == "Dense") {
      single();
      std::int64_t units = kint(cfg, "units", cpath, 0);
      if (units == 0) throw InputError(join(cpath, "units"), "required integer is missing");
      std::string act = activation_of(cfg, cpath, &softmax);
      bool bias = get_bool(cfg, "use_bias", cpath, true);
      Tensor out;
      if (in.image) {  // Dense on [H, W, C] acts on channels: a 1x1 convolution in [C, H, W]
        out = one({{"type", "conv2d"}, {"filters", units}, {"kernel_size", 1}, {"bias", bias}, {"activation", act}},
                  name, lpath, in, true);
      } else {
        out = one({{"type", "dense"}, {"units", units}, {"bias", bias}, {"activation", act}}, name, lpath, in, false);
      }
      return maybe_softmax(out, softmax, name, lpath);
    }
    if (cls == "Conv2D" || cls == "DepthwiseConv2D" || cls == "SeparableConv2D") {
      single();
      require_image(in, lpath, cls);
      require_channels_last(cfg, cpath);
      require_unit(cfg, "dilation_rate", cpath);
      auto k = kints(cfg, "kernel_size", cpath, 2, 1);
      auto st = kints(cfg, "strides", cpath, 2, 1);
      std::string pad = padding_of(cfg, cpath, false);
      std::string act = activation_of(cfg, cpath, &softmax);
      bool bias = get_bool(cfg, "use_bias", cpath, true);
      std::int64_t channels = shape_of(in)[0];
      Json spec = {{"type", "conv2d"}, {"kernel_size", {k[0], k[1]}}, {"stride", {st[0], st[1]}}, {"padding", pad}};
      if (cls == "Conv2D") {
        spec["filters"] = kint(cfg, "filters", cpath, 0);
        if (spec["filters"] == 0) throw InputError(join(cpath, "filters"), "required integer is missing");
        spec["groups"] = kint(cfg, "groups", cpath, 1);
        spec["bias"] = bias;
        spec["activation"] = act;
        return maybe_softmax(one(spec, name, lpath, in, true), softmax, name, lpath);
      }
      std::int64_t mult = kint(cfg, "depth_multiplier", cpath, 1);
      spec["filters"] = channels * mult;
      spec["groups"] = channels;
      if (cls == "DepthwiseConv2D") {
        spec["bias"] = bias;
        spec["activation"] = act;
        return maybe_softmax(one(spec, name, lpath, in, true), softmax, name, lpath);
      }
      spec["bias"] = false;
      Tensor dw = one(spec, name + ".depthwise", lpath, in, true);
      std::int64_t filters = kint(cfg, "filters", cpath, 0);
      if (filters == 0) throw InputError(join(cpath, "filters"), "required integer is missing");
      Tensor out =
          one({{"type", "conv2d"}, {"filters", filters}, {"kernel_size", 1}, {"bias", bias}, {"activation", act}}, name,
              lpath, dw, true);
      return maybe_softmax(out, softmax, name, lpath);
    }
    if (cls == "Conv1D") {
      single();
      require_sequence(in, lpath, cls);
      require_channels_last(cfg, cpath);
      require_unit(cfg, "dilation_rate", cpath);
      std::int64_t filters = kint(cfg, "filters", cpath, 0);
      if (filters == 0) throw InputError(join(cpath, "filters"), "required integer is missing");
      std::int64_t k = kints(cfg, "kernel_size", cpath, 1, 1)[0];
      std::int64_t st = kints(cfg, "strides", cpath, 1, 1)[0];
      std::string pad = padding_of(cfg, cpath, true);
      std::string act = activation_of(cfg, cpath, &softmax);
      Tensor img = seq_to_image(in, name, lpath);
      Tensor conv = one({{"type", "conv2d"},
                         {"filters", filters},
                         {"kernel_size", {1, k}},
                         {"stride", {1, st}},
                         {"padding", pad},
                         {"groups", kint(cfg, "groups", cpath, 1)},
                         {"bias", get_bool(cfg, "use_bias", cpath, true)},
                         {"activation", act}},
                        name + ".conv", lpath, img, true);
      return maybe_softmax(image_to_seq(conv, name, lpath), softmax, name, lpath);
    }
    if (cls == "MaxPooling2D" || cls == "AveragePooling2D") {
      single();
      require_image(in, lpath, cls);
      require_channels_last(cfg, cpath);
      auto p = kints(cfg, "pool_size", cpath, 2, 2);
      auto st = cfg.contains("strides") && !cfg["strides"].is_null() ? kints(cfg, "strides", cpath, 2, 1) : p;
      return one({{"type", cls == "MaxPooling2D" ? "max_pool2d" : "avg_pool2d"},
                  {"pool_size", {p[0], p[1]}},
                  {"stride", {st[0], st[1]}},
                  {"padding", padding_of(cfg, cpath, false)}},
                 name, lpath, in, true);
    }
    if (cls == "MaxPooling1D" || cls == "AveragePooling1D") {
      single();
      require_sequence(in, lpath, cls);
      std::int64_t p = kints(cfg, "pool_size", cpath, 1, 2)[0];
      std::int64_t st =
          cfg.contains("strides") && !cfg["strides"].is_null() ? kints(cfg, "strides", cpath, 1, 1)[0] : p;
      Tensor img = seq_to_image(in, name, lpath);
      Tensor pooled = one({{"type", cls == "MaxPooling1D" ? "max_pool2d" : "avg_pool2d"},
                           {"pool_size", {1, p}},
                           {"stride", {1, st}},
                           {"padding", padding_of(cfg, cpath, false)}},
                          name + ".pool", lpath, img, true);
      return image_to_seq(pooled, name, lpath);
    }
    if (cls == "GlobalAveragePooling2D" || cls == "GlobalMaxPooling2D") {
      single();
      require_image(in, lpath, cls);
      std::string type = cls == "GlobalAveragePooling2D" ? "global_avg_pool" : "global_max_pool";
      if (get_bool(cfg, "keepdims", cpath, false)) {
        Tensor pooled = one({{"type", type}}, name + ".pool", lpath, in, false);
        return one({{"type", "reshape"}, {"shape", {shape_of(in)[0], 1, 1}}}, name, lpath, pooled, true);
      }
      return one({{"type", type}}, name, lpath, in, false);
    }
    if (cls == "GlobalAveragePooling1D" || cls == "GlobalMaxPooling1D") {
      single();
      require_sequence(in, lpath, cls);
      const Shape& s = shape_of(in);
      Tensor t = one({{"type", "reshape"}, {"shape", {s[1], s[0]}}}, name + ".by_feature", lpath, in, false);
      return one({{"type", cls == "GlobalAveragePooling1D" ? "global_avg_pool" : "global_max_pool"}}, name, lpath, t,
                 false);
    }
    if (cls == "BatchNormalization") {
      single();
      const Shape& s = shape_of(in);
      if (in.image || s.size() == 1) return one({{"type", "batchnorm"}}, name, lpath, in, in.image);
      if (s.size() == 2) {  // normalises the last (feature) axis: costed on [F, S]
        Tensor t = one({{"type", "reshape"}, {"shape", {s[1], s[0]}}}, name + ".by_feature", lpath, in, false);
        Tensor n = one({{"type", "batchnorm"}}, name + ".norm", lpath, t, false);
        return one({{"type", "reshape"}, {"shape", {s[0], s[1]}}}, name, lpath, n, false);
      }
      throw InputError(lpath, "BatchNormalization on a tensor of shape " + to_string(s) + " is not supported");
    }
    if (cls == "LayerNormalization") {
      single();
      if (in.image) throw InputError(lpath, "LayerNormalization of an image tensor is not supported");
      return one({{"type", "layernorm"}, {"bias", get_bool(cfg, "center", cpath, true)}}, name, lpath, in, false);
    }
    if (cls == "Embedding") {
      single();
      std::int64_t vocab = kint(cfg, "input_dim", cpath, 0), dim = kint(cfg, "output_dim", cpath, 0);
      if (vocab == 0) throw InputError(join(cpath, "input_dim"), "required integer is missing");
      if (dim == 0) throw InputError(join(cpath, "output_dim"), "required integer is missing");
      return one({{"type", "embedding"}, {"vocab_size", vocab}, {"dim", dim}}, name, lpath, in, false);
    }
    if (cls == "PositionEmbedding") {
      // KerasHub's (keras_nlp's) learned position table: sequence_length rows of the input's width, added by the
      // model to its input. It reads only the input's length, so it reads the network input when that has the
      // same positions (as the Hugging Face translation writes position tables), else the tensor it is given.
      single();
      require_sequence(in, lpath, cls);
      std::int64_t rows = kint(cfg, "sequence_length", cpath, 0);
      if (rows == 0) throw InputError(join(cpath, "sequence_length"), "required integer is missing");
      const Shape& s = shape_of(in);
      Tensor source = in;
      const Shape& net_in = shape_of(Tensor{"input", false});
      if (!net_in.empty() && net_in.size() <= 2 && net_in[0] == s[0]) source = Tensor{"input", false};
      return one({{"type", "embedding"}, {"vocab_size", rows}, {"dim", s[1]}, {"positional", true}}, name, lpath,
                 source, false);
    }
    if (cls == "SimpleRNN" || cls == "LSTM" || cls == "GRU") {
      single();
      return recurrent(cls, cfg, cpath, name, lpath, in, false);
    }
    if (cls == "Bidirectional") {
      single();
      std::string merge = get_string(cfg, "merge_mode", cpath, "concat");
      if (merge != "concat") throw InputError(join(cpath, "merge_mode"), "only \"concat\" is supported");
      std::string inner_path = join(cpath, "layer");
      if (!cfg.contains("layer")) throw InputError(inner_path, "required object is missing");
      const Json& inner = require_object(cfg["layer"], inner_path);
      std::string inner_cls = require_string(inner, "class_name", inner_path);
      if (inner_cls != "SimpleRNN" && inner_cls != "LSTM" && inner_cls != "GRU") {
        throw InputError(join(inner_path, "class_name"),
                         "Bidirectional wraps SimpleRNN, LSTM or GRU, got \"" + printable(inner_cls) + "\"");
      }
      if (!inner.contains("config")) throw InputError(join(inner_path, "config"), "required object is missing");
      const Json& inner_cfg = require_object(inner["config"], join(inner_path, "config"));
      return recurrent(inner_cls, inner_cfg, join(inner_path, "config"), name, lpath, in, true);
    }
    if (cls == "MultiHeadAttention") {
      if (inputs.size() > 3)
        throw InputError(join(lpath, "inbound_nodes"), "MultiHeadAttention takes query, value, key");
      std::int64_t heads = kint(cfg, "num_heads", cpath, 0);
      if (heads == 0) throw InputError(join(cpath, "num_heads"), "required integer is missing");
      std::int64_t key_dim = kint(cfg, "key_dim", cpath, 0);
      if (key_dim == 0) throw InputError(join(cpath, "key_dim"), "required integer is missing");
      if (cfg.contains("value_dim") && !cfg["value_dim"].is_null() &&
          kint(cfg, "value_dim", cpath, key_dim) != key_dim) {
        throw InputError(join(cpath, "value_dim"), "must equal key_dim");
      }
      if (cfg.contains("output_shape") && !cfg["output_shape"].is_null()) {
        throw InputError(join(cpath, "output_shape"), "a custom output_shape is not supported");
      }
      if (cfg.contains("attention_axes") && !cfg["attention_axes"].is_null()) {
        throw InputError(join(cpath, "attention_axes"), "only the default attention axes are supported");
      }
      require_sequence(in, lpath, cls);
      Json spec = {{"type", "attention"},
                   {"num_heads", heads},
                   {"head_dim", key_dim},
                   {"bias", get_bool(cfg, "use_bias", cpath, true)}};
      double dropout = get_number(cfg, "dropout", cpath, 0.0, 0.0, 0.999999);
      if (dropout > 0) spec["dropout"] = dropout;
      std::vector<Tensor> used = {in};
      if (inputs.size() > 1 && inputs[1].name != in.name) used.push_back(inputs[1]);
      if (inputs.size() > 2 && inputs[2].name != inputs[1].name) {
        throw InputError(join(lpath, "inbound_nodes"), "a key different from the value is not supported");
      }
      return emit(spec, name, lpath, used, false);
    }
    if (cls == "Dropout" || cls == "SpatialDropout1D" || cls == "SpatialDropout2D" || cls == "GaussianDropout" ||
        cls == "AlphaDropout") {
      single();
      return one({{"type", "dropout"}, {"rate", get_number(cfg, "rate", cpath, 0.5, 0.0, 0.999999)}}, name, lpath, in,
                 in.image);
    }
    if (cls == "Flatten") {
      single();
      return one({{"type", "flatten"}}, name, lpath, in, false);
    }
    if (cls == "Reshape") {
      single();
      if (!cfg.contains("target_shape")) throw InputError(join(cpath, "target_shape"), "required array is missing");
      const Json& target = require_array(cfg["target_shape"], join(cpath, "target_shape"));
      Json shape = target;
      bool image = target.size() == 3;
      if (image) shape = Json::array({target[2], target[0], target[1]});  // [H, W, C] → [C, H, W]
      return one({{"type", "reshape"}, {"shape", shape}}, name, join(cpath, "target_shape"), in, image);
    }
    if (cls == "Activation" || cls == "ReLU" || cls == "LeakyReLU" || cls == "ELU" || cls == "Softmax") {
      single();
      std::string fn;
      if (cls == "Activation") {
        fn = activation_of(cfg, cpath, &softmax);
      } else if (cls == "Softmax") {
        softmax = true;
      } else {
        fn = cls == "ReLU"  ? (cfg.contains("max_value") && !cfg["max_value"].is_null() &&
                                      cfg["max_value"].is_number() && cfg["max_value"].get<double>() == 6.0
                                   ? "relu6"
                                   : "relu")
             : cls == "ELU" ? "elu"
                            : "leaky_relu";
      }
      if (softmax) return one({{"type", "softmax"}}, name, lpath, in, in.image);
      return one({{"type", "activation"}, {"function", fn == "none" ? "linear" : fn}}, name, lpath, in, in.image);
    }
    if (cls == "Add" || cls == "Subtract" || cls == "Average" || cls == "Maximum" || cls == "Minimum" ||
        cls == "Multiply") {
      if (inputs.size() < 2) throw InputError(join(lpath, "inbound_nodes"), cls + " needs at least two inputs");
      return emit({{"type", cls == "Multiply" ? "multiply" : "add"}}, name, lpath, inputs, in.image);
    }
    if (cls == "Concatenate") {
      if (inputs.size() < 2) throw InputError(join(lpath, "inbound_nodes"), "Concatenate needs at least two inputs");
      std::int64_t axis = get_int(cfg, "axis", cpath, -1, -8, 8);
      auto rank = static_cast<std::int64_t>(shape_of(in).size());
      if (axis == 0) throw InputError(join(cpath, "axis"), "cannot concatenate along the batch axis");
      std::int64_t keras_axis = axis < 0 ? axis + rank : axis - 1;  // per-sample Keras axis
      if (keras_axis < 0 || keras_axis >= rank) throw InputError(join(cpath, "axis"), "out of range");
      std::int64_t ours = keras_axis;
      if (in.image && rank == 3) ours = keras_axis == 2 ? 0 : keras_axis + 1;  // [H, W, C] → [C, H, W]
      return emit({{"type", "concat"}, {"axis", ours}}, name, lpath, inputs, in.image);
    }
    throw InputError(join(lpath, "class_name"), "unsupported Keras layer class \"" + printable(cls) + "\" (layer \"" +
                                                    printable(name) + "\"); supported: " + kSupported);
  }

  Tensor recurrent(const std::string& cls, const Json& cfg, const std::string& cpath, const std::string& name,
                   const std::string& lpath, const Tensor& in, bool bidirectional) {
    require_sequence(in, lpath, cls);
    std::int64_t units = kint(cfg, "units", cpath, 0);
    if (units == 0) throw InputError(join(cpath, "units"), "required integer is missing");
    if (units > (1 << 20)) throw InputError(join(cpath, "units"), "expected at most 2^20 units");
    if (cls != "SimpleRNN") {
      bool softmax = false;
      std::string act = activation_of(cfg, cpath, &softmax);
      if (act != "tanh" && !(cfg.contains("activation") && cfg["activation"].is_null())) {
        warnings_.push_back("layer \"" + printable(name) + "\": activation \"" + act + "\" costed as tanh");
      }
    }
    const char* type = cls == "LSTM" ? "lstm" : cls == "GRU" ? "gru" : "rnn";
    return one({{"type", type},
                {"hidden_size", units},
                {"bidirectional", bidirectional},
                {"return_sequences", get_bool(cfg, "return_sequences", cpath, false)},
                {"bias", get_bool(cfg, "use_bias", cpath, true)}},
               name, lpath, in, false);
  }

  std::string path_, layers_path_;
  InputOverrides overrides_;
  std::optional<LayerListBuilder> builder_;
  std::map<std::string, Tensor> produced_;
  std::vector<std::string> warnings_;
  bool net_input_image_ = false;
};

}  // namespace

Network keras_to_network(const Json& doc, const std::string& path, const InputOverrides& overrides) {
  if (doc.is_string()) return keras_to_network(parse_json_text(doc.get<std::string>(), path), path, overrides);
  Converter converter(path, overrides);
  return converter.run(doc);
}

}  // namespace prenet
