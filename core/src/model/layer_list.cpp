#include "prenet/layer_list.hpp"

#include <map>
#include <utility>

#include "layers/layer_kind.hpp"

namespace prenet {
namespace {

constexpr int kMaxRepeatDepth = 8;

struct LayerSource {
  const Json* spec;
  std::string path;  // position in the request, for errors
  std::string name;  // final, unique-ish layer name
};

void expand(const Json& layers, const std::string& path, const std::string& prefix, int depth,
            std::vector<LayerSource>& out) {
  require_array(layers, path);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    std::string item_path = index(path, i);
    const Json& spec = require_object(layers[i], item_path);
    std::string type = require_string(spec, "type", item_path);
    if (type == "repeat") {
      reject_unknown_keys(spec, item_path, {"type", "name", "count", "start", "layers", "comment"});
      if (depth >= kMaxRepeatDepth) throw InputError(item_path, "repeats nest deeper than 8 levels");
      std::int64_t count = require_int(spec, "count", item_path, 1, Limits::kMaxLayers);
      // The first copy's number: consecutive repeats of one name continue a stack whose blocks differ.
      std::int64_t start = get_int(spec, "start", item_path, 0, 0, Limits::kMaxLayers);
      std::string name = get_string(spec, "name", item_path, "block" + std::to_string(i));
      if (!spec.contains("layers")) throw InputError(join(item_path, "layers"), "required layer list is missing");
      const Json& body = require_array(spec["layers"], join(item_path, "layers"));
      if (body.empty()) throw InputError(join(item_path, "layers"), "a repeat needs at least one layer");
      for (std::int64_t c = 0; c < count; ++c) {
        expand(body, join(item_path, "layers"), prefix + name + "." + std::to_string(start + c) + ".", depth + 1, out);
      }
      continue;
    }
    if (out.size() >= static_cast<std::size_t>(Limits::kMaxLayers)) {
      throw InputError(path, "more than " + std::to_string(Limits::kMaxLayers) + " layers after expanding repeats");
    }
    std::string name = get_string(spec, "name", item_path, type + "_" + std::to_string(i));
    out.push_back({&spec, item_path, prefix + name});
  }
}

/// Rejects an inferred output with an empty dimension or more than 2^40 elements.
void check_output(const Layer& layer, const std::string& path) {
  for (auto d : layer.output_shape) {
    if (d <= 0) throw InputError(path, "produces an empty tensor " + to_string(layer.output_shape));
  }
  if (elements(layer.output_shape) > Limits::kMaxElementsPerSample) {
    throw InputError(path, "output " + to_string(layer.output_shape) + " is too large (more than 2^40 elements)");
  }
}

/// The producers of a layer-list entry's inputs: its "inputs" names resolved to their latest definitions
/// (trying the entry's repeat prefix first for local names), or the previous layer when it names none.
std::vector<int> resolve_inputs(const Json& spec, const std::string& path, const std::string& name,
                                const std::map<std::string, int>& latest, const Network& net) {
  std::vector<int> inputs;
  if (spec.contains("inputs")) {
    const Json& names = require_array(spec["inputs"], join(path, "inputs"));
    if (names.empty()) throw InputError(join(path, "inputs"), "expected at least one input name");
    for (std::size_t k = 0; k < names.size(); ++k) {
      std::string ref_path = index(join(path, "inputs"), k);
      if (!names[k].is_string()) throw InputError(ref_path, "expected a layer name, got " + describe_type(names[k]));
      std::string ref = names[k].get<std::string>();
      if (ref == "input") {
        inputs.push_back(kNetworkInput);
        continue;
      }
      // Names resolve to their latest definition, so a repeated block can refer to its own layers.
      auto it = latest.find(ref);
      if (it == latest.end()) {
        // Inside repeats, local names carry the block prefix; try it before giving up.
        std::string prefix = name.substr(0, name.rfind('.') + 1);
        it = latest.find(prefix + ref);
      }
      if (it == latest.end()) throw InputError(ref_path, "no earlier layer is named \"" + ref + "\"");
      inputs.push_back(it->second);
    }
  } else {
    inputs.push_back(net.layers.empty() ? kNetworkInput : static_cast<int>(net.layers.size()) - 1);
  }
  return inputs;
}

/// Checks that a layer tied to an embedding names an earlier embedding of the matching size.
void check_tied(const Layer& layer, const std::map<std::string, int>& latest, const Network& net,
                const std::string& path) {
  if (layer.attrs.tied_to.empty()) return;
  auto tied = latest.find(layer.attrs.tied_to);
  if (tied == latest.end() || net.layers[static_cast<std::size_t>(tied->second)].type != LayerType::Embedding) {
    throw InputError(join(path, "tied_to"), "no earlier embedding is named \"" + layer.attrs.tied_to + "\"");
  }
  const Layer& emb = net.layers[static_cast<std::size_t>(tied->second)];
  if (emb.attrs.vocab_size != layer.attrs.units || emb.attrs.dim != layer.input_shapes.front().back()) {
    throw InputError(join(path, "tied_to"),
                     "embedding \"" + layer.attrs.tied_to + "\" is " + std::to_string(emb.attrs.vocab_size) + " x " +
                         std::to_string(emb.attrs.dim) + "; this layer needs " +
                         std::to_string(layer.input_shapes.front().back()) + " x " + std::to_string(layer.attrs.units));
  }
}

}  // namespace

InputSpec parse_input_spec(const Json& input, const std::string& path) {
  require_object(input, path);
  InputSpec spec;
  std::string kind = get_enum(input, "kind", path, "", {"image", "tokens", "sequence", "vector"});
  if (kind == "image") {
    reject_unknown_keys(input, path, {"kind", "channels", "image_size"});
    spec.kind = InputKind::Image;
    spec.channels = get_int(input, "channels", path, 3, 1, 1 << 20);
    spec.image_size = require_int(input, "image_size", path, 1, 16384);
  } else if (kind == "tokens") {
    reject_unknown_keys(input, path, {"kind", "seq_len"});
    spec.kind = InputKind::Tokens;
    spec.seq_len = require_int(input, "seq_len", path, 1, 1 << 20);
  } else if (kind == "sequence") {
    reject_unknown_keys(input, path, {"kind", "seq_len", "features"});
    spec.kind = InputKind::Sequence;
    spec.seq_len = require_int(input, "seq_len", path, 1, 1 << 20);
    spec.features = require_int(input, "features", path, 1, Limits::kMaxDim);
  } else {
    reject_unknown_keys(input, path, {"kind", "features"});
    spec.kind = InputKind::Vector;
    spec.features = require_int(input, "features", path, 1, Limits::kMaxDim);
  }
  return spec;
}

namespace {

/// The model's "mtp_block" into `net`: a string (why multi-token prediction has no block to copy) or
/// {"features": F, "layers": [...]}, a block reading "input", a sequence of the model's length of F values each.
void read_mtp_block(const Json& block, const std::string& path, Network& net) {
  if (block.is_string()) {
    net.mtp_unavailable = block.get<std::string>();
    return;
  }
  require_object(block, path);
  reject_unknown_keys(block, path, {"features", "layers"});
  if (net.input.kind != InputKind::Tokens) throw InputError(path, "a multi-token-prediction block needs token input");
  const Json sub = {{"name", net.name + " mtp_block"},
                    {"input",
                     {{"kind", "sequence"},
                      {"seq_len", net.input.seq_len},
                      {"features", require_int(block, "features", path, 1, Limits::kMaxDim)}}},
                    {"layers", block.contains("layers") ? block["layers"] : Json()}};
  net.mtp_block = parse_layer_list(sub, path, {}).layers;
}

}  // namespace

Network parse_layer_list(const Json& model, const std::string& path, const InputOverrides& overrides) {
  require_object(model, path);
  Network net;
  net.name = get_string(model, "name", path, "custom");
  if (!model.contains("input")) throw InputError(join(path, "input"), "required input specification is missing");
  net.input = parse_input_spec(model["input"], join(path, "input"));
  if (elements(net.input.shape()) > Limits::kMaxElementsPerSample / 8) {
    throw InputError(join(path, "input"),
                     "one sample of " + to_string(net.input.shape()) + " is too large (more than 2^37 elements)");
  }
  if (overrides.seq_len) {
    if (net.input.kind == InputKind::Tokens || net.input.kind == InputKind::Sequence) {
      net.input.seq_len = *overrides.seq_len;
    } else {
      net.warnings.push_back("training.seq_len ignored: the model takes " + std::string(to_string(net.input.kind)) +
                             " input");
    }
  }
  if (overrides.image_size) {
    if (net.input.kind == InputKind::Image) {
      net.input.image_size = *overrides.image_size;
    } else {
      net.warnings.push_back("training.image_size ignored: the model takes " + std::string(to_string(net.input.kind)) +
                             " input");
    }
  }

  std::vector<LayerSource> sources;
  if (!model.contains("layers")) throw InputError(join(path, "layers"), "required layer list is missing");
  expand(model["layers"], join(path, "layers"), "", 0, sources);
  if (sources.empty()) throw InputError(join(path, "layers"), "the layer list is empty");

  LayerListBuilder builder(std::move(net));
  for (const auto& src : sources) builder.add(*src.spec, src.path, src.name);
  Network built = builder.take();
  if (model.contains("mtp_block")) read_mtp_block(model["mtp_block"], join(path, "mtp_block"), built);
  return built;
}

LayerListBuilder::LayerListBuilder(Network start) : net_(std::move(start)), input_shape_(net_.input.shape()) {}

int LayerListBuilder::add(const Json& spec, const std::string& path) {
  require_object(spec, path);
  std::string type = require_string(spec, "type", path);
  return add(spec, path, get_string(spec, "name", path, type + "_" + std::to_string(net_.layers.size())));
}

int LayerListBuilder::find(const std::string& name) const {
  if (name == "input") return kNetworkInput;
  auto it = latest_.find(name);
  return it == latest_.end() ? -2 : it->second;
}

const Shape& LayerListBuilder::shape(int layer) const {
  return layer == kNetworkInput ? input_shape_ : net_.layers.at(static_cast<std::size_t>(layer)).output_shape;
}

int LayerListBuilder::add(const Json& spec, const std::string& path, const std::string& name) {
  if (net_.layers.size() >= static_cast<std::size_t>(Limits::kMaxLayers)) {
    throw InputError(path, "more than " + std::to_string(Limits::kMaxLayers) + " layers");
  }
  Network& net = net_;
  std::map<std::string, int>& latest = latest_;
  std::vector<bool>& trains_upstream = trains_upstream_;
  Layer layer;
  layer.name = name;
  std::string type = require_string(spec, "type", path);
  const LayerKind* kind = kind_named(type);
  if (kind == nullptr) {
    throw InputError(join(path, "type"),
                     "unknown layer type \"" + type + "\"; expected one of " + kind_name_list() + ", repeat");
  }
  layer.type = kind->type();
  bool same_padding = false;
  layer.attrs = kind->parse(spec, path, &same_padding);

  layer.inputs = resolve_inputs(spec, path, name, latest, net);
  bool upstream = false;
  for (int producer : layer.inputs) {
    layer.input_shapes.push_back(
        producer == kNetworkInput ? input_shape_ : net.layers[static_cast<std::size_t>(producer)].output_shape);
    if (producer != kNetworkInput) upstream = upstream || trains_upstream[static_cast<std::size_t>(producer)];
  }
  check_tied(layer, latest, net, path);
  kind->infer(layer, same_padding, path);
  check_output(layer, path);
  layer.needs_input_grad = upstream;
  bool has_weights = layer.parameters > 0 || !layer.attrs.tied_to.empty();
  trains_upstream.push_back(upstream || has_weights);
  latest[layer.name] = static_cast<int>(net.layers.size());
  auto dot = layer.name.rfind('.');
  if (dot != std::string::npos) latest[layer.name.substr(dot + 1)] = static_cast<int>(net.layers.size());
  net.layers.push_back(std::move(layer));
  return static_cast<int>(net.layers.size()) - 1;
}

}  // namespace prenet
