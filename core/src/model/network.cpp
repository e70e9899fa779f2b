#include "prenet/network.hpp"

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

const char* to_string(LayerType type) {
  switch (type) {
    case LayerType::Dense: return "dense";
    case LayerType::Conv2d: return "conv2d";
    case LayerType::MaxPool2d: return "max_pool2d";
    case LayerType::AvgPool2d: return "avg_pool2d";
    case LayerType::GlobalAvgPool: return "global_avg_pool";
    case LayerType::GlobalMaxPool: return "global_max_pool";
    case LayerType::BatchNorm: return "batchnorm";
    case LayerType::LayerNorm: return "layernorm";
    case LayerType::RmsNorm: return "rmsnorm";
    case LayerType::Activation: return "activation";
    case LayerType::Dropout: return "dropout";
    case LayerType::Flatten: return "flatten";
    case LayerType::Reshape: return "reshape";
    case LayerType::Softmax: return "softmax";
    case LayerType::Embedding: return "embedding";
    case LayerType::Rnn: return "rnn";
    case LayerType::Lstm: return "lstm";
    case LayerType::Gru: return "gru";
    case LayerType::Attention: return "attention";
    case LayerType::Add: return "add";
    case LayerType::Concat: return "concat";
    case LayerType::Identity: return "identity";
    case LayerType::CrossEntropy: return "cross_entropy";
    case LayerType::Multiply: return "multiply";
    case LayerType::Parameter: return "parameter";
    case LayerType::AdaptiveSoftmax: return "adaptive_softmax";
  }
  return "identity";
}

bool is_recurrent(LayerType type) {
  return type == LayerType::Rnn || type == LayerType::Lstm || type == LayerType::Gru;
}

std::int64_t Network::parameters() const {
  std::int64_t total = 0;
  for (const auto& layer : layers) total += layer.parameters;
  return total;
}

}  // namespace prenet
