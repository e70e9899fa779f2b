// The Keras document: its layer list, the network input, the inbound tensors of each layer and the emission
// helpers the layer converters share.
#include "model/keras/converter.hpp"

#include <utility>

#include "model/keras/config.hpp"
#include "prenet/keras.hpp"

namespace prenet::keras {

/// The document's config after checking its class (`sequential` set for a Sequential model).
const Json& Converter::model_config(const Json& doc, bool* sequential) {
  require_object(doc, path_);
  std::string cls = require_string(doc, "class_name", path_);
  if (!doc.contains("config")) throw InputError(join(path_, "config"), "required object is missing");
  const Json& config = require_object(doc["config"], join(path_, "config"));
  *sequential = cls == "Sequential";
  if (!*sequential && cls != "Functional" && cls != "Model") {
    throw InputError(join(path_, "class_name"),
                     "expected Sequential, Functional or Model, got \"" + printable(cls) + "\"");
  }
  return config;
}

Network Converter::run(const Json& doc) {
  bool sequential = false;
  const Json& config = model_config(doc, &sequential);
  const std::string cfg_path = join(path_, "config");
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
  for (std::size_t i = 0; i < layers.size(); ++i) convert_layer(layers[i], i, sequential, previous);
  if (builder_->network().layers.empty()) throw InputError(layers_path_, "the model has no layers besides its input");
  Network result = builder_->take();
  result.warnings.insert(result.warnings.end(), warnings_.begin(), warnings_.end());
  return result;
}

/// Converts layer `i` of the list; `previous` (a Sequential model's input to the next layer) becomes its output.
void Converter::convert_layer(const Json& layer_json, std::size_t i, bool sequential, Tensor& previous) {
  std::string lpath = index(layers_path_, i);
  const Json& layer = require_object(layer_json, lpath);
  std::string lcls = require_string(layer, "class_name", lpath);
  if (!layer.contains("config")) throw InputError(join(lpath, "config"), "required object is missing");
  const Json& cfg = require_object(layer["config"], join(lpath, "config"));
  std::string name = get_string(cfg, "name", join(lpath, "config"), lcls + "_" + std::to_string(i));
  if (name == "input" || produced_.count(name)) {
    throw InputError(join(join(lpath, "config"), "name"), "duplicate layer name \"" + printable(name) + "\"");
  }
  if (lcls == "InputLayer") {
    if (!sequential) produced_[name] = Tensor{"input", net_input_image_};
    return;
  }
  std::vector<Tensor> inputs;
  if (sequential) {
    inputs.push_back(previous);
  } else {
    inputs = inbound(layer, lpath);
  }
  Tensor out = convert(lcls, cfg, name, lpath, inputs);
  produced_[name] = out;
  previous = out;
}

// ------------------------------------------------------------------------------------------------ input

/// The input shape: an InputLayer's (only one allowed), else a Sequential model's first layer's.
InputShape Converter::locate_input(const Json& layers, bool sequential) const {
  InputShape found;
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
      found.dims = input_shape_of(layer["config"], where, &key);
      first_real = i + 1;
    } else if (found.dims.empty() && sequential && i == first_real) {
      where = join(lpath, "config");
      found.dims = input_shape_of(layer["config"], where, &key);
    }
  }
  if (found.dims.empty()) {
    throw InputError(layers_path_,
                     "no input shape found: add an InputLayer (keras.Input) or give the first layer "
                     "an input_shape");
  }
  if (first_real < layers.size() && layers[first_real].is_object()) {
    found.first_cls = layers[first_real].value("class_name", "");
  }
  found.field = join(where, key);
  return found;
}

/// The layer list's input for the Keras shape: tokens (before an Embedding), vector, sequence or square image
/// (channels-last read as [C, H, W]); unknown sizes are filled from the overrides.
InputSpec Converter::input_spec(const InputShape& shape) const {
  const std::vector<std::int64_t>& dims = shape.dims;
  const std::string& field = shape.field;
  auto fill = [&](std::int64_t v, std::size_t i, const std::optional<std::int64_t>& over, const char* what) {
    if (over) return *over;
    if (v < 0) throw InputError(index(field, i + 1), std::string("is unknown (None); give training.") + what);
    return v;
  };
  InputSpec spec;
  if (dims.size() == 1) {
    if (shape.first_cls == "Embedding") {
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
  return spec;
}

/// Warns about the overrides the input kind has no use for.
void Converter::warn_ignored_overrides(const InputSpec& spec) {
  if (spec.kind != InputKind::Image && overrides_.image_size) {
    warnings_.push_back("training.image_size ignored: the model takes " + std::string(to_string(spec.kind)) + " input");
  }
  if ((spec.kind == InputKind::Image || spec.kind == InputKind::Vector) && overrides_.seq_len) {
    warnings_.push_back("training.seq_len ignored: the model takes " + std::string(to_string(spec.kind)) + " input");
  }
}

/// The network input of the layer list `layers`.
InputSpec Converter::find_input(const Json& layers, bool sequential) {
  InputSpec spec = input_spec(locate_input(layers, sequential));
  net_input_image_ = spec.kind == InputKind::Image;
  warn_ignored_overrides(spec);
  return spec;
}

/// The tensors a Functional model's layer reads (its only call; earlier layers' first outputs).
std::vector<Tensor> Converter::inbound(const Json& layer, const std::string& lpath) {
  std::string npath = join(lpath, "inbound_nodes");
  if (!layer.contains("inbound_nodes")) throw InputError(npath, "required for a Functional model's layer");
  const Json& nodes = require_array(layer["inbound_nodes"], npath);
  if (nodes.empty()) throw InputError(npath, "the layer is never called");
  if (nodes.size() > 1) throw InputError(npath, "shared layers (called more than once) are not supported");
  std::vector<TensorRef> refs;
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

// ------------------------------------------------------------------------------------------------ emission

/// The layer-list shape of `t`.
const Shape& Converter::shape_of(const Tensor& t) const { return builder_->shape(builder_->find(t.name)); }

/// Adds the layer `spec` named `name` reading `inputs`; its output is an image tensor when `image`.
Tensor Converter::emit(Json spec, const std::string& name, const std::string& lpath, const std::vector<Tensor>& inputs,
                       bool image) {
  Json names = Json::array();
  for (const auto& t : inputs) names.push_back(t.name);
  spec["inputs"] = names;
  builder_->add(spec, lpath, name);
  return Tensor{name, image};
}

/// emit() with one input.
Tensor Converter::one(const Json& spec, const std::string& name, const std::string& lpath, const Tensor& in,
                      bool image) {
  return emit(spec, name, lpath, {in}, image);
}

/// `t`, followed by a softmax layer when the layer's activation was softmax.
Tensor Converter::maybe_softmax(Tensor t, bool softmax, const std::string& name, const std::string& lpath) {
  if (!softmax) return t;
  return one({{"type", "softmax"}}, name + ".softmax", lpath, t, t.image);
}

/// Requires `t` to be an image tensor; errors name `lpath` and the class.
void Converter::require_image(const Tensor& t, const std::string& lpath, const std::string& cls) {
  if (!t.image || shape_of(t).size() != 3) {
    throw InputError(lpath, cls + " expects an image tensor [height, width, channels], got " + to_string(shape_of(t)) +
                                " (layer-list layout)");
  }
}

/// Requires `t` to be a sequence [steps, features]; errors name `lpath` and the class.
void Converter::require_sequence(const Tensor& t, const std::string& lpath, const std::string& cls) {
  if (t.image || shape_of(t).size() != 2) {
    throw InputError(lpath, cls + " expects a sequence [steps, features], got " + to_string(shape_of(t)));
  }
}

/// [S, F] → [F, 1, S] (a view costed as free), so 1-D convolution and pooling run as 2-D with height 1.
Tensor Converter::seq_to_image(const Tensor& t, const std::string& name, const std::string& lpath) {
  const Shape& s = shape_of(t);
  return one({{"type", "reshape"}, {"shape", {s[1], 1, s[0]}}}, name + ".to_2d", lpath, t, true);
}

/// [F, 1, S] → [S, F], the inverse of seq_to_image.
Tensor Converter::image_to_seq(const Tensor& t, const std::string& name, const std::string& lpath) {
  const Shape& s = shape_of(t);
  return one({{"type", "reshape"}, {"shape", {s[2], s[0]}}}, name, lpath, t, false);
}

/// Converts one layer of class `cls` through the class table; unsupported classes are errors.
Tensor Converter::convert(const std::string& cls, const Json& cfg, const std::string& name, const std::string& lpath,
                          const std::vector<Tensor>& inputs) {
  const auto& table = class_table();
  auto row = table.find(cls);
  if (row == table.end()) {
    throw InputError(join(lpath, "class_name"), "unsupported Keras layer class \"" + printable(cls) + "\" (layer \"" +
                                                    printable(name) + "\"); supported: " + supported_classes());
  }
  if (row->second.single_input && inputs.size() != 1) {
    throw InputError(join(lpath, "inbound_nodes"), cls + " takes one input");
  }
  return (this->*row->second.convert)(Call{cls, cfg, name, lpath, join(lpath, "config"), inputs});
}

}  // namespace prenet::keras

namespace prenet {

Network keras_to_network(const Json& doc, const std::string& path, const InputOverrides& overrides) {
  if (doc.is_string()) return keras_to_network(parse_json_text(doc.get<std::string>(), path), path, overrides);
  keras::Converter converter(path, overrides);
  return converter.run(doc);
}

}  // namespace prenet
