// The ONNX request forms: base64 text → file bytes → parsed graph (graph.cpp) → network (translator.hpp).
#include "prenet/onnx_model.hpp"

#include <array>

#include "model/onnx/graph.hpp"
#include "model/onnx/translator.hpp"

namespace prenet {

std::string decode_base64(std::string_view text, const std::string& path) {
  static const auto table = [] {
    std::array<int, 256> t{};
    t.fill(-1);
    const char* chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) t[static_cast<std::uint8_t>(chars[i])] = i;
    t[static_cast<std::uint8_t>('-')] = 62;  // URL-safe alphabet too
    t[static_cast<std::uint8_t>('_')] = 63;
    return t;
  }();
  if (text.size() / 4 * 3 > kMaxOnnxBytes + 3) {
    throw InputError(path, "the file is larger than " + std::to_string(kMaxOnnxBytes >> 20) +
                               " MiB; export it without weights (only the graph structure is needed)");
  }
  std::string out;
  out.reserve(text.size() / 4 * 3 + 3);
  std::uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    int v = table[static_cast<std::uint8_t>(c)];
    if (v < 0 || padding) {
      throw InputError(path, "not base64: unexpected character at offset " + std::to_string(i));
    }
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

Network onnx_bytes_to_network(std::string_view bytes, const std::string& path, const InputOverrides& overrides) {
  if (bytes.empty()) throw InputError(path, "the ONNX file is empty");
  if (bytes.size() > kMaxOnnxBytes) {
    throw InputError(path, "the file is larger than " + std::to_string(kMaxOnnxBytes >> 20) + " MiB");
  }
  onnx::Graph g = onnx::parse_model(bytes, path);
  onnx::Translator t(g, path, overrides);
  return t.run();
}

Network onnx_to_network(const Json& value, const std::string& path, const InputOverrides& overrides) {
  if (!value.is_string())
    throw InputError(path, "expected the .onnx file as a base64 string, got " + describe_type(value));
  std::string bytes = decode_base64(value.get_ref<const std::string&>(), path);
  return onnx_bytes_to_network(bytes, path, overrides);
}

}  // namespace prenet
