#pragma once
// ONNX model files → a Network. A small bounded protobuf reader (no protobuf library): varints and lengths are
// checked against the buffer, message nesting follows the fixed ONNX schema (subgraphs are skipped), weight
// bytes (raw_data) are skipped without copying, and nothing is allocated beyond what the input implies.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "prenet/json_util.hpp"
#include "prenet/layer_list.hpp"
#include "prenet/network.hpp"

namespace prenet {

/// Largest ONNX file accepted (decoded bytes). Base64 in a 16 MiB request holds at most 12 MiB anyway.
constexpr std::size_t kMaxOnnxBytes = 12u << 20;

/// Decodes standard base64 (RFC 4648, padding optional, whitespace ignored). Errors name `path`.
std::string decode_base64(std::string_view text, const std::string& path);

/// Translates an ONNX ModelProto (the file's bytes) into a network. Errors name `path`; unsupported
/// operators are listed in the network's warnings with their cost estimated from tensor sizes.
Network onnx_bytes_to_network(std::string_view bytes, const std::string& path, const InputOverrides& overrides);

/// The request form: `value` is the file as a base64 string.
Network onnx_to_network(const Json& value, const std::string& path, const InputOverrides& overrides);

}  // namespace prenet
