#pragma once
// Keras `model.to_json()` (Sequential and Functional, Keras 2 and 3) → a Network in the layer-list format.
#include <string>

#include "prenet/json_util.hpp"
#include "prenet/layer_list.hpp"
#include "prenet/network.hpp"

namespace prenet {

/// Translates a Keras model document (the parsed object, or the JSON text as a string) into a network.
/// Keras tensors are channels-last; images become the layer list's [C, H, W]. Errors name fields under
/// `path` (e.g. "model.keras.config.layers[3].class_name"); unsupported layers are errors naming the layer
/// and its class. `overrides` replace the input's sequence length or image size (and fill unknown ones).
Network keras_to_network(const Json& doc, const std::string& path, const InputOverrides& overrides);

}  // namespace prenet
