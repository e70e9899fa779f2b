#pragma once
// The project's own model format: {"name", "input": {...}, "layers": [...]} (docs/MODEL_FORMAT.md).
#include <optional>
#include <string>

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

}  // namespace prenet
