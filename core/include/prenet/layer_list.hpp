#pragma once
// The project's own model format: {"name", "input": {...}, "layers": [...]} (docs/MODEL_FORMAT.md).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "prenet/json_util.hpp"
#include "prenet/network.hpp"

namespace prenet {

/// Values from the request's training section that override the model's default input.
struct InputOverrides {
  std::optional<std::int64_t> seq_len;
  std::optional<std::int64_t> image_size;
};

/// Parses an input specification object ({"kind": "image", "channels": 3, "image_size": 224}, ...).
InputSpec parse_input_spec(const Json& input, const std::string& path);

/// Parses a layer list, expands repeats, resolves inputs and infers every shape.
/// `path` names `model` in errors; overrides replace the input's sequence length or image size.
Network parse_layer_list(const Json& model, const std::string& path, const InputOverrides& overrides);

/// Builds a network one layer at a time, inferring each shape as it goes, so converters from other formats
/// (Keras, ONNX) can read shapes while they translate. Each spec is one layer-list layer (no repeats).
class LayerListBuilder {
 public:
  /// `start` holds the name and input specification; its layers are empty.
  explicit LayerListBuilder(Network start);
  /// Appends a layer; errors name `path`. Returns the new layer's index.
  int add(const Json& spec, const std::string& path);
  /// As above with the layer's final name given.
  int add(const Json& spec, const std::string& path, const std::string& name);
  /// The index of the latest layer named `name` (kNetworkInput for "input"), or -2 when there is none.
  int find(const std::string& name) const;
  /// The output shape of layer `layer` (or of the network input for kNetworkInput).
  const Shape& shape(int layer) const;
  const Network& network() const { return net_; }
  Network& network() { return net_; }
  Network take() { return std::move(net_); }

 private:
  Network net_;
  Shape input_shape_;
  std::map<std::string, int> latest_;  // name -> most recent layer with that name
  std::vector<bool> trains_upstream_;  // whether layer i or anything before it holds trainable weights
};

}  // namespace prenet
