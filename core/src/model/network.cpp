#include "prenet/network.hpp"

#include "layers/layer_kind.hpp"

namespace prenet {

std::int64_t elements(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string to_string(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Shape InputSpec::shape() const {
  switch (kind) {
    case InputKind::Image: return {channels, image_size, image_size};
    case InputKind::Tokens: return {seq_len};
    case InputKind::Sequence: return {seq_len, features};
    case InputKind::Vector: return {features};
  }
  return {};
}

const char* to_string(InputKind kind) {
  switch (kind) {
    case InputKind::Image: return "image";
    case InputKind::Tokens: return "tokens";
    case InputKind::Sequence: return "sequence";
    case InputKind::Vector: return "vector";
  }
  return "vector";
}

const char* to_string(LayerType type) { return kind_of(type).name(); }

std::int64_t Network::parameters() const {
  std::int64_t total = 0;
  for (const auto& layer : layers) total += layer.parameters;
  return total;
}

std::int64_t trainable_parameters(const Layer& layer) {
  return (layer.trainable ? layer.parameters : 0) + layer.adapter.parameters;
}

std::int64_t gradient_parameters(const Layer& layer) {
  return trainable_parameters(layer) + (!layer.trainable && layer.frozen_gradient ? layer.parameters : 0);
}

std::vector<int> block_of_layers(const Network& net) {
  std::vector<int> blocks(net.layers.size(), -1);
  int block = -1;
  std::string last;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const std::string& name = net.layers[l].name;
    const auto dot = name.rfind('.');
    const std::string prefix = dot == std::string::npos ? std::string() : name.substr(0, dot + 1);
    if (prefix.empty()) {
      last.clear();
      continue;
    }
    if (prefix != last) ++block;
    last = prefix;
    blocks[l] = block;
  }
  return blocks;
}

std::int64_t Network::trainable_parameters() const {
  std::int64_t total = 0;
  for (const auto& layer : layers) total += prenet::trainable_parameters(layer);
  return total;
}

std::int64_t Network::active_parameters() const {
  std::int64_t total = 0;
  for (const auto& layer : layers) total += kind_of(layer.type).active_parameters(layer);
  return total;
}

}  // namespace prenet
