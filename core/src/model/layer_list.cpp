#include "prenet/layer_list.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace prenet {
namespace {

constexpr int kMaxRepeatDepth = 8;
const std::int64_t kMaxDim = Limits::kMaxDim;

struct LayerSource {
  const Json* spec;
  std::string path;  // position in the request, for errors
  std::string name;  // final, unique-ish layer name
};

const std::vector<std::string>& activation_names() {
  static const std::vector<std::string> names = {
      "none",  "linear",  "relu",    "relu6",      "leaky_relu", "elu",        "selu",    "gelu",
      "gelu_new", "gelu_fast", "gelu_pytorch_tanh", "quick_gelu", "silu", "swish", "tanh",
      "sigmoid", "softplus", "hard_swish", "hard_sigmoid", "mish"};
  return names;
}

const std::map<std::string, LayerType>& layer_types() {
  static const std::map<std::string, LayerType> types = {
      {"dense", LayerType::Dense},
      {"conv2d", LayerType::Conv2d},
      {"max_pool2d", LayerType::MaxPool2d},
      {"avg_pool2d", LayerType::AvgPool2d},
      {"global_avg_pool", LayerType::GlobalAvgPool},
      {"global_max_pool", LayerType::GlobalMaxPool},
      {"batchnorm", LayerType::BatchNorm},
      {"layernorm", LayerType::LayerNorm},
      {"rmsnorm", LayerType::RmsNorm},
      {"activation", LayerType::Activation},
      {"dropout", LayerType::Dropout},
      {"flatten", LayerType::Flatten},
      {"reshape", LayerType::Reshape},
      {"softmax", LayerType::Softmax},
      {"embedding", LayerType::Embedding},
      {"rnn", LayerType::Rnn},
      {"lstm", LayerType::Lstm},
      {"gru", LayerType::Gru},
      {"attention", LayerType::Attention},
      {"add", LayerType::Add},
      {"concat", LayerType::Concat},
      {"identity", LayerType::Identity},
      {"cross_entropy", LayerType::CrossEntropy},
      {"multiply", LayerType::Multiply},
      {"parameter", LayerType::Parameter},
      {"adaptive_softmax", LayerType::AdaptiveSoftmax},
  };
  return types;
}

std::string type_list() {
  std::string list;
  for (const auto& [name, type] : layer_types()) list += (list.empty() ? "" : ", ") + name;
  return list + ", repeat";
}

/// Element `i` of an integer array in [min, 2^31]; errors name "path[i]".
std::int64_t element_int(const Json& array, std::size_t i, const std::string& path, std::int64_t min) {
  Json holder = {{"v", array[i]}};
  try {
    return require_int(holder, "v", "", min, kMaxDim);
  } catch (const InputError& e) {
    std::string message = e.what();
    throw InputError(index(path, i), message.substr(message.find(": ") + 2));
  }
}

/// Reads an int or a pair [h, w] into (h, w).
std::pair<std::int64_t, std::int64_t> get_pair(const Json& obj, const std::string& key, const std::string& path,
                                               std::int64_t fallback, std::int64_t min) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {fallback, fallback};
  if (it->is_array()) {
    if (it->size() != 2) throw InputError(join(path, key), "expected an integer or a pair [height, width]");
    return {element_int(*it, 0, join(path, key), min), element_int(*it, 1, join(path, key), min)};
  }
  std::int64_t v = get_int(obj, key, path, fallback, min, kMaxDim);
  return {v, v};
}

/// Parses conv/pool padding: "valid", "same" or explicit integers. Returns (pad_h, pad_w, same).
std::tuple<std::int64_t, std::int64_t, bool> get_padding(const Json& obj, const std::string& path) {
  auto it = obj.find("padding");
  if (it == obj.end() || it->is_null()) return {0, 0, false};
  if (it->is_string()) {
    std::string p = it->get<std::string>();
    if (p == "valid") return {0, 0, false};
    if (p == "same") return {0, 0, true};
    throw InputError(join(path, "padding"), "expected \"valid\", \"same\" or an integer, got \"" + p + "\"");
  }
  auto [h, w] = get_pair(obj, "padding", path, 0, 0);
  return {h, w, false};
}

std::vector<std::string> common_keys(std::vector<std::string> extra) {
  extra.insert(extra.end(), {"type", "name", "inputs", "comment"});
  return extra;
}

LayerAttrs parse_attrs(LayerType type, const Json& spec, const std::string& path, bool* same_padding) {
  LayerAttrs a;
  *same_padding = false;
  switch (type) {
    case LayerType::Dense:
      reject_unknown_keys(spec, path,
                          common_keys({"units", "bias", "activation", "tied_to", "gated", "experts", "top_k"}));
      a.units = require_int(spec, "units", path, 1, kMaxDim);
      a.bias = get_bool(spec, "bias", path, true);
      a.activation = get_enum(spec, "activation", path, "none", activation_names());
      a.tied_to = get_string(spec, "tied_to", path, "");
      a.gated = get_bool(spec, "gated", path, false);
      a.experts = get_int(spec, "experts", path, 1, 1, 1 << 16);
      a.top_k = get_int(spec, "top_k", path, 1, 1, a.experts);
      if (!a.tied_to.empty() && (a.gated || a.experts > 1)) {
        throw InputError(join(path, "tied_to"), "a gated or mixture-of-experts dense layer cannot be tied");
      }
      break;
    case LayerType::Conv2d: {
      reject_unknown_keys(spec, path,
                          common_keys({"filters", "kernel_size", "stride", "padding", "groups", "bias", "activation"}));
      a.filters = require_int(spec, "filters", path, 1, kMaxDim);
      if (!spec.contains("kernel_size")) throw InputError(join(path, "kernel_size"), "required integer is missing");
      std::tie(a.kernel_h, a.kernel_w) = get_pair(spec, "kernel_size", path, 1, 1);
      std::tie(a.stride_h, a.stride_w) = get_pair(spec, "stride", path, 1, 1);
      std::tie(a.pad_h, a.pad_w, *same_padding) = get_padding(spec, path);
      a.groups = get_int(spec, "groups", path, 1, 1, kMaxDim);
      a.bias = get_bool(spec, "bias", path, true);
      a.activation = get_enum(spec, "activation", path, "none", activation_names());
      break;
    }
    case LayerType::MaxPool2d:
    case LayerType::AvgPool2d: {
      reject_unknown_keys(spec, path, common_keys({"pool_size", "stride", "padding"}));
      std::tie(a.kernel_h, a.kernel_w) = get_pair(spec, "pool_size", path, 2, 1);
      std::tie(a.stride_h, a.stride_w) = get_pair(spec, "stride", path, a.kernel_h, 1);
      if (!spec.contains("stride")) a.stride_w = a.kernel_w;
      std::tie(a.pad_h, a.pad_w, *same_padding) = get_padding(spec, path);
      break;
    }
    case LayerType::Activation:
      reject_unknown_keys(spec, path, common_keys({"function"}));
      a.activation = get_enum(spec, "function", path, "relu", activation_names());
      break;
    case LayerType::Dropout:
      reject_unknown_keys(spec, path, common_keys({"rate"}));
      a.rate = get_number(spec, "rate", path, 0.1, 0.0, 0.999999);
      break;
    case LayerType::Parameter: {
      reject_unknown_keys(spec, path, common_keys({"shape"}));
      if (!spec.contains("shape")) throw InputError(join(path, "shape"), "required array is missing");
      const Json& shape = require_array(spec["shape"], join(path, "shape"));
      if (shape.empty() || shape.size() > 8) throw InputError(join(path, "shape"), "expected 1 to 8 dimensions");
      for (std::size_t i = 0; i < shape.size(); ++i) a.target_shape.push_back(element_int(shape, i, join(path, "shape"), 1));
      break;
    }
    case LayerType::Reshape: {
      reject_unknown_keys(spec, path, common_keys({"shape"}));
      if (!spec.contains("shape")) throw InputError(join(path, "shape"), "required array is missing");
      const Json& shape = require_array(spec["shape"], join(path, "shape"));
      if (shape.empty() || shape.size() > 8) throw InputError(join(path, "shape"), "expected 1 to 8 dimensions");
      for (std::size_t i = 0; i < shape.size(); ++i) {
        a.target_shape.push_back(element_int(shape, i, join(path, "shape"), -1));
        if (a.target_shape.back() == 0) throw InputError(index(join(path, "shape"), i), "dimensions must be positive or -1");
      }
      if (std::count(a.target_shape.begin(), a.target_shape.end(), -1) > 1) {
        throw InputError(join(path, "shape"), "at most one dimension may be -1");
      }
      break;
    }
    case LayerType::Embedding:
      reject_unknown_keys(spec, path, common_keys({"vocab_size", "dim", "positional"}));
      a.vocab_size = require_int(spec, "vocab_size", path, 1, kMaxDim);
      a.dim = require_int(spec, "dim", path, 1, kMaxDim);
      a.positional = get_bool(spec, "positional", path, false);
      break;
    case LayerType::Rnn:
    case LayerType::Lstm:
    case LayerType::Gru:
      reject_unknown_keys(spec, path,
                          common_keys({"hidden_size", "num_layers", "bidirectional", "return_sequences", "bias"}));
      a.hidden_size = require_int(spec, "hidden_size", path, 1, 1 << 20);
      a.num_layers = get_int(spec, "num_layers", path, 1, 1, 1024);
      a.bidirectional = get_bool(spec, "bidirectional", path, false);
      a.return_sequences = get_bool(spec, "return_sequences", path, true);
      a.bias = get_bool(spec, "bias", path, true);
      break;
    case LayerType::Attention:
      reject_unknown_keys(spec, path,
                          common_keys({"num_heads", "num_kv_heads", "head_dim", "causal", "bias", "out_bias", "dropout",
                                       "memory_len", "relative_positions"}));
      a.memory_len = get_int(spec, "memory_len", path, 0, 0, 1 << 20);
      a.relative = get_bool(spec, "relative_positions", path, false);
      a.rate = get_number(spec, "dropout", path, 0.0, 0.0, 0.999999);
      a.num_heads = require_int(spec, "num_heads", path, 1, 1 << 16);
      a.num_kv_heads = get_int(spec, "num_kv_heads", path, a.num_heads, 1, a.num_heads);
      if (a.num_heads % a.num_kv_heads != 0) {
        throw InputError(join(path, "num_kv_heads"), "must divide num_heads (" + std::to_string(a.num_heads) + ")");
      }
      a.head_dim = get_int(spec, "head_dim", path, 0, 1, 1 << 16);
      a.causal = get_bool(spec, "causal", path, false);
      a.bias = get_bool(spec, "bias", path, true);
      a.out_bias = get_bool(spec, "out_bias", path, a.bias);
      break;
    case LayerType::AdaptiveSoftmax: {
      reject_unknown_keys(spec, path, common_keys({"vocab_size", "cutoffs", "tied_to", "bias", "tail_shares"}));
      a.units = require_int(spec, "vocab_size", path, 2, kMaxDim);
      a.tied_to = get_string(spec, "tied_to", path, "");
      a.bias = get_bool(spec, "bias", path, true);
      if (!spec.contains("cutoffs")) throw InputError(join(path, "cutoffs"), "required array is missing");
      const Json& cutoffs = require_array(spec["cutoffs"], join(path, "cutoffs"));
      if (cutoffs.empty() || cutoffs.size() > 64) throw InputError(join(path, "cutoffs"), "expected 1 to 64 cluster boundaries");
      for (std::size_t i = 0; i < cutoffs.size(); ++i) {
        std::int64_t c = element_int(cutoffs, i, join(path, "cutoffs"), 1);
        if (c >= a.units || (!a.cutoffs.empty() && c <= a.cutoffs.back())) {
          throw InputError(index(join(path, "cutoffs"), i),
                           "cutoffs must increase and stay below vocab_size (" + std::to_string(a.units) + ")");
        }
        a.cutoffs.push_back(c);
      }
      if (spec.contains("tail_shares")) {
        const Json& shares = require_array(spec["tail_shares"], join(path, "tail_shares"));
        if (shares.size() != cutoffs.size()) {
          throw InputError(join(path, "tail_shares"), "expected one share per tail cluster (" +
                                                          std::to_string(cutoffs.size()) + ")");
        }
        double sum = 0;
        for (std::size_t i = 0; i < shares.size(); ++i) {
          Json holder = {{"v", shares[i]}};
          double v = 0;
          try {
            v = get_number(holder, "v", "", 0.0, 0.0, 1.0);
          } catch (const InputError& e) {
            std::string message = e.what();
            throw InputError(index(join(path, "tail_shares"), i), message.substr(message.find(": ") + 2));
          }
          a.tail_shares.push_back(v);
          sum += v;
        }
        if (sum > 1.0) throw InputError(join(path, "tail_shares"), "the shares add up to more than 1");
      }
      break;
    }
    case LayerType::Concat:
      reject_unknown_keys(spec, path, common_keys({"axis"}));
      a.axis = get_int(spec, "axis", path, -1, -8, 7);
      break;
    case LayerType::LayerNorm:
    case LayerType::RmsNorm:
    case LayerType::BatchNorm:
      reject_unknown_keys(spec, path, common_keys({"bias"}));
      a.bias = get_bool(spec, "bias", path, true);
      break;
    default:
      reject_unknown_keys(spec, path, common_keys({}));
      break;
  }
  return a;
}

std::int64_t conv_out(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t pad, bool same,
                      const std::string& path, const Shape& in_shape) {
  if (same) return (in + stride - 1) / stride;
  std::int64_t span = in + 2 * pad - kernel;
  if (span < 0) {
    throw InputError(path, "kernel " + std::to_string(kernel) + " is larger than the padded input " +
                               to_string(in_shape));
  }
  return span / stride + 1;
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const std::string& path) {
  if (a != 0 && b > Limits::kMaxElementsPerSample / a) {
    throw InputError(path, "tensor is too large (more than 2^40 elements per sample)");
  }
  return a * b;
}

/// Product of sizes for a parameter count, rejected beyond 2^50 so sums over 10,000 layers cannot overflow.
std::int64_t params_of(std::initializer_list<std::int64_t> factors, const std::string& path) {
  constexpr std::int64_t kMaxParameters = std::int64_t{1} << 50;
  std::int64_t p = 1;
  for (auto f : factors) {
    if (f != 0 && p > kMaxParameters / f) {
      throw InputError(path, "has more than 2^50 parameters; check the layer's sizes");
    }
    p *= f;
  }
  return p;
}

void require_rank(const Shape& s, std::size_t rank, const std::string& path, const char* what) {
  if (s.size() != rank) throw InputError(path, std::string(what) + ", got an input of shape " + to_string(s));
}

/// Fills output_shape and parameters of `layer` from its input shapes. Errors name `path`.
void infer(Layer& layer, bool same_padding, const std::string& path) {
  const Shape& in = layer.input_shapes.front();
  LayerAttrs& a = layer.attrs;
  auto last = [&]() -> std::int64_t {
    if (in.empty()) throw InputError(path, std::string(to_string(layer.type)) + " needs a non-scalar input");
    return in.back();
  };
  switch (layer.type) {
    case LayerType::Dense: {
      std::int64_t d = last();
      layer.output_shape = in;
      layer.output_shape.back() = a.units;
      std::int64_t mats = a.gated ? 2 : 1;
      layer.parameters = a.tied_to.empty() ? params_of({a.experts, mats, d + (a.bias ? 1 : 0), a.units}, path)
                                           : (a.bias ? a.units : 0);
      break;
    }
    case LayerType::Conv2d: {
      require_rank(in, 3, path, "conv2d expects [channels, height, width]");
      if (in[0] % a.groups != 0 || a.filters % a.groups != 0) {
        throw InputError(join(path, "groups"), "must divide input channels (" + std::to_string(in[0]) +
                                                   ") and filters (" + std::to_string(a.filters) + ")");
      }
      std::int64_t ho = conv_out(in[1], a.kernel_h, a.stride_h, a.pad_h, same_padding, join(path, "kernel_size"), in);
      std::int64_t wo = conv_out(in[2], a.kernel_w, a.stride_w, a.pad_w, same_padding, join(path, "kernel_size"), in);
      if (same_padding) {
        a.pad_h = std::max<std::int64_t>((ho - 1) * a.stride_h + a.kernel_h - in[1], 0) / 2;
        a.pad_w = std::max<std::int64_t>((wo - 1) * a.stride_w + a.kernel_w - in[2], 0) / 2;
      }
      layer.output_shape = {a.filters, ho, wo};
      layer.parameters = params_of({a.kernel_h, a.kernel_w, in[0] / a.groups, a.filters}, path) + (a.bias ? a.filters : 0);
      break;
    }
    case LayerType::MaxPool2d:
    case LayerType::AvgPool2d: {
      require_rank(in, 3, path, "pooling expects [channels, height, width]");
      std::int64_t ho = conv_out(in[1], a.kernel_h, a.stride_h, a.pad_h, same_padding, join(path, "pool_size"), in);
      std::int64_t wo = conv_out(in[2], a.kernel_w, a.stride_w, a.pad_w, same_padding, join(path, "pool_size"), in);
      layer.output_shape = {in[0], ho, wo};
      break;
    }
    case LayerType::GlobalAvgPool:
    case LayerType::GlobalMaxPool:
      if (in.size() < 2) throw InputError(path, "global pooling expects [channels, ...spatial], got " + to_string(in));
      layer.output_shape = {in[0]};
      break;
    case LayerType::BatchNorm:
      if (in.empty()) throw InputError(path, "batchnorm needs a non-scalar input");
      layer.output_shape = in;
      layer.parameters = 2 * in[0];
      break;
    case LayerType::LayerNorm:
      layer.output_shape = in;
      layer.parameters = (a.bias ? 2 : 1) * last();
      break;
    case LayerType::RmsNorm:
      layer.output_shape = in;
      layer.parameters = last();
      break;
    case LayerType::Activation:
    case LayerType::Dropout:
    case LayerType::Softmax:
    case LayerType::Identity:
      layer.output_shape = in;
      break;
    case LayerType::Flatten:
      layer.output_shape = {elements(in)};
      break;
    case LayerType::Reshape: {
      std::int64_t known = 1;
      for (auto d : a.target_shape) known = d > 0 ? checked_mul(known, d, join(path, "shape")) : known;
      Shape out = a.target_shape;
      for (auto& d : out) {
        if (d == -1) {
          if (elements(in) % known != 0) throw InputError(join(path, "shape"), "cannot reshape " + to_string(in));
          d = elements(in) / known;
          known *= d;
        }
      }
      if (known != elements(in)) {
        throw InputError(join(path, "shape"), "cannot reshape " + to_string(in) + " (" + std::to_string(elements(in)) +
                                                  " elements) to " + to_string(a.target_shape));
      }
      layer.output_shape = out;
      break;
    }
    case LayerType::Embedding:
      // A positional table only needs the sequence length, so it may read a [seq_len, features] stream too.
      if (!(a.positional && in.size() == 2)) {
        require_rank(in, 1, path, "embedding expects token ids of shape [seq_len]");
      }
      if (a.positional && in[0] > a.vocab_size) {
        throw InputError(path, "sequence length " + std::to_string(in[0]) + " exceeds the " +
                                   std::to_string(a.vocab_size) + " positions this embedding holds");
      }
      layer.output_shape = {in[0], a.dim};
      layer.parameters = params_of({a.vocab_size, a.dim}, path);
      break;
    case LayerType::Rnn:
    case LayerType::Lstm:
    case LayerType::Gru: {
      require_rank(in, 2, path, std::string(to_string(layer.type)) == "rnn"
                                    ? "rnn expects [seq_len, features]"
                                    : "recurrent layers expect [seq_len, features]");
      std::int64_t gates = layer.type == LayerType::Lstm ? 4 : layer.type == LayerType::Gru ? 3 : 1;
      std::int64_t dirs = a.bidirectional ? 2 : 1;
      std::int64_t h = a.hidden_size;
      std::int64_t params = 0;
      for (std::int64_t l = 0; l < a.num_layers; ++l) {
        std::int64_t d = l == 0 ? in[1] : h * dirs;
        params += params_of({dirs, gates * h, d + h + (a.bias ? 2 : 0)}, path);
      }
      layer.parameters = params;
      layer.output_shape = a.return_sequences ? Shape{in[0], h * dirs} : Shape{h * dirs};
      break;
    }
    case LayerType::Attention: {
      require_rank(in, 2, path, "attention expects [seq_len, embed_dim]");
      std::int64_t e = in[1];
      if (a.head_dim == 0) {
        if (e % a.num_heads != 0) {
          throw InputError(join(path, "num_heads"), "must divide the embedding width " + std::to_string(e) +
                                                        " (or give head_dim)");
        }
        a.head_dim = e / a.num_heads;
      }
      std::int64_t q = a.num_heads * a.head_dim;
      std::int64_t kv = a.num_kv_heads * a.head_dim;
      if (layer.input_shapes.size() > 2) {
        throw InputError(join(path, "inputs"), "attention takes a query stream and optionally a memory stream");
      }
      if (layer.input_shapes.size() == 2 && (a.memory_len > 0 || a.relative)) {
        throw InputError(join(path, a.memory_len > 0 ? "memory_len" : "relative_positions"),
                         "applies to self-attention only (this layer reads a memory stream)");
      }
      if (layer.input_shapes.size() == 2) {  // cross-attention: keys and values come from the memory stream
        const Shape& memory = layer.input_shapes[1];
        if (memory.size() != 2 || memory[1] != e) {
          throw InputError(join(path, "inputs"), "the memory stream must be [seq_len, " + std::to_string(e) +
                                                     "], got " + to_string(memory));
        }
      }
      layer.parameters = params_of({e + 1, q + 2 * kv}, path) + params_of({q + 1, e}, path);
      if (!a.bias) layer.parameters -= q + 2 * kv;
      if (!a.out_bias) layer.parameters -= e;
      // Transformer-XL's r_net projects the sinusoidal relative positions to the heads' keys (no bias).
      if (a.relative) layer.parameters += params_of({e, q}, path);
      layer.output_shape = in;
      break;
    }
    case LayerType::Add:
      if (layer.input_shapes.size() < 2) throw InputError(join(path, "inputs"), "add needs at least two inputs");
      for (std::size_t i = 1; i < layer.input_shapes.size(); ++i) {
        if (layer.input_shapes[i] != in) {
          throw InputError(join(path, "inputs"), "add needs equal shapes, got " + to_string(in) + " and " +
                                                     to_string(layer.input_shapes[i]));
        }
      }
      layer.output_shape = in;
      break;
    case LayerType::Concat: {
      if (layer.input_shapes.size() < 2) throw InputError(join(path, "inputs"), "concat needs at least two inputs");
      auto rank = static_cast<std::int64_t>(in.size());
      std::int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
      if (axis < 0 || axis >= rank) throw InputError(join(path, "axis"), "out of range for shape " + to_string(in));
      Shape out = in;
      for (std::size_t i = 1; i < layer.input_shapes.size(); ++i) {
        const Shape& other = layer.input_shapes[i];
        bool compatible = other.size() == in.size();
        for (std::int64_t d = 0; compatible && d < rank; ++d) {
          if (d != axis && other[static_cast<std::size_t>(d)] != in[static_cast<std::size_t>(d)]) compatible = false;
        }
        if (!compatible) {
          throw InputError(join(path, "inputs"), "cannot concatenate " + to_string(in) + " and " + to_string(other) +
                                                     " on axis " + std::to_string(a.axis));
        }
        out[static_cast<std::size_t>(axis)] += other[static_cast<std::size_t>(axis)];
      }
      a.axis = axis;
      layer.output_shape = out;
      break;
    }
    case LayerType::CrossEntropy:
      last();
      layer.output_shape = {};
      break;
    case LayerType::AdaptiveSoftmax: {
      // Output weights (vocab x D, unless tied to the embedding), their biases, and one weight row and bias per
      // tail cluster in the head (as PyTorch's ProjectedAdaptiveLogSoftmax with div_val 1 holds them).
      std::int64_t d = last();
      auto clusters = static_cast<std::int64_t>(a.cutoffs.size());
      layer.parameters = (a.tied_to.empty() ? params_of({a.units, d}, path) : 0) + (a.bias ? a.units : 0) +
                         params_of({clusters, d + 1}, path);
      layer.output_shape = {};
      break;
    }
    case LayerType::Multiply: {
      if (layer.input_shapes.size() < 2) throw InputError(join(path, "inputs"), "multiply needs at least two inputs");
      // NumPy broadcasting: align trailing dimensions; each pair must be equal or one of them 1.
      Shape out = in;
      for (std::size_t i = 1; i < layer.input_shapes.size(); ++i) {
        const Shape& other = layer.input_shapes[i];
        Shape merged(std::max(out.size(), other.size()), 1);
        for (std::size_t k = 0; k < merged.size(); ++k) {
          std::int64_t x = k < out.size() ? out[out.size() - 1 - k] : 1;
          std::int64_t y = k < other.size() ? other[other.size() - 1 - k] : 1;
          if (x != y && x != 1 && y != 1) {
            throw InputError(join(path, "inputs"), "cannot broadcast " + to_string(out) + " and " + to_string(other));
          }
          merged[merged.size() - 1 - k] = std::max(x, y);
        }
        out = merged;
        std::int64_t n = 1;
        for (auto dim : out) n = checked_mul(n, dim, join(path, "inputs"));
      }
      layer.output_shape = out;
      break;
    }
    case LayerType::Parameter:
    {
      std::int64_t n = 1;
      for (auto dim : a.target_shape) n = checked_mul(n, dim, join(path, "shape"));
      layer.output_shape = a.target_shape;
      layer.parameters = params_of({n}, path);
    }
      break;
  }
  for (auto d : layer.output_shape) {
    if (d <= 0) throw InputError(path, "produces an empty tensor " + to_string(layer.output_shape));
  }
  if (elements(layer.output_shape) > Limits::kMaxElementsPerSample) {
    throw InputError(path, "output " + to_string(layer.output_shape) + " is too large (more than 2^40 elements)");
  }
}

void expand(const Json& layers, const std::string& path, const std::string& prefix, int depth,
            std::vector<LayerSource>& out) {
  require_array(layers, path);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    std::string item_path = index(path, i);
    const Json& spec = require_object(layers[i], item_path);
    std::string type = require_string(spec, "type", item_path);
    if (type == "repeat") {
      reject_unknown_keys(spec, item_path, {"type", "name", "count", "layers", "comment"});
      if (depth >= kMaxRepeatDepth) throw InputError(item_path, "repeats nest deeper than 8 levels");
      std::int64_t count = require_int(spec, "count", item_path, 1, Limits::kMaxLayers);
      std::string name = get_string(spec, "name", item_path, "block" + std::to_string(i));
      if (!spec.contains("layers")) throw InputError(join(item_path, "layers"), "required layer list is missing");
      const Json& body = require_array(spec["layers"], join(item_path, "layers"));
      if (body.empty()) throw InputError(join(item_path, "layers"), "a repeat needs at least one layer");
      for (std::int64_t c = 0; c < count; ++c) {
        expand(body, join(item_path, "layers"), prefix + name + "." + std::to_string(c) + ".", depth + 1, out);
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
    spec.features = require_int(input, "features", path, 1, kMaxDim);
  } else {
    reject_unknown_keys(input, path, {"kind", "features"});
    spec.kind = InputKind::Vector;
    spec.features = require_int(input, "features", path, 1, kMaxDim);
  }
  return spec;
}

Network parse_layer_list(const Json& model, const std::string& path, const InputOverrides& overrides) {
  require_object(model, path);
  Network net;
  net.name = get_string(model, "name", path, "custom");
  if (!model.contains("input")) throw InputError(join(path, "input"), "required input specification is missing");
  net.input = parse_input_spec(model["input"], join(path, "input"));
  if (elements(net.input.shape()) > Limits::kMaxElementsPerSample / 8) {
    throw InputError(join(path, "input"), "one sample of " + to_string(net.input.shape()) +
                                              " is too large (more than 2^37 elements)");
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
      net.warnings.push_back("training.image_size ignored: the model takes " +
                             std::string(to_string(net.input.kind)) + " input");
    }
  }

  std::vector<LayerSource> sources;
  if (!model.contains("layers")) throw InputError(join(path, "layers"), "required layer list is missing");
  expand(model["layers"], join(path, "layers"), "", 0, sources);
  if (sources.empty()) throw InputError(join(path, "layers"), "the layer list is empty");

  LayerListBuilder builder(std::move(net));
  for (const auto& src : sources) builder.add(*src.spec, src.path, src.name);
  return builder.take();
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
  auto found = layer_types().find(type);
  if (found == layer_types().end()) {
    throw InputError(join(path, "type"), "unknown layer type \"" + type + "\"; expected one of " + type_list());
  }
  layer.type = found->second;
  bool same_padding = false;
  layer.attrs = parse_attrs(layer.type, spec, path, &same_padding);

  if (spec.contains("inputs")) {
    const Json& names = require_array(spec["inputs"], join(path, "inputs"));
    if (names.empty()) throw InputError(join(path, "inputs"), "expected at least one input name");
    for (std::size_t k = 0; k < names.size(); ++k) {
      std::string ref_path = index(join(path, "inputs"), k);
      if (!names[k].is_string()) throw InputError(ref_path, "expected a layer name, got " + describe_type(names[k]));
      std::string ref = names[k].get<std::string>();
      if (ref == "input") {
        layer.inputs.push_back(kNetworkInput);
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
      layer.inputs.push_back(it->second);
    }
  } else {
    layer.inputs.push_back(net.layers.empty() ? kNetworkInput : static_cast<int>(net.layers.size()) - 1);
  }
  bool upstream = false;
  for (int producer : layer.inputs) {
    layer.input_shapes.push_back(producer == kNetworkInput ? input_shape_
                                                           : net.layers[static_cast<std::size_t>(producer)].output_shape);
    if (producer != kNetworkInput) upstream = upstream || trains_upstream[static_cast<std::size_t>(producer)];
  }
  if (!layer.attrs.tied_to.empty()) {
    auto tied = latest.find(layer.attrs.tied_to);
    if (tied == latest.end() || net.layers[static_cast<std::size_t>(tied->second)].type != LayerType::Embedding) {
      throw InputError(join(path, "tied_to"), "no earlier embedding is named \"" + layer.attrs.tied_to + "\"");
    }
    const Layer& emb = net.layers[static_cast<std::size_t>(tied->second)];
    if (emb.attrs.vocab_size != layer.attrs.units || emb.attrs.dim != layer.input_shapes.front().back()) {
      throw InputError(join(path, "tied_to"), "embedding \"" + layer.attrs.tied_to + "\" is " +
                                                      std::to_string(emb.attrs.vocab_size) + " x " +
                                                      std::to_string(emb.attrs.dim) + "; this layer needs " +
                                                      std::to_string(layer.input_shapes.front().back()) + " x " +
                                                      std::to_string(layer.attrs.units));
    }
  }
  infer(layer, same_padding, path);
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
