#pragma once
// Reading Keras layer configs: activations, integer and integer-list fields, padding, the input shape and the
// tensor references of a Functional model's inbound nodes. Errors name the field under the given path.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "prenet/json_util.hpp"

namespace prenet::keras {

/// The layer list's activation for cfg.activation ("none" for linear or absent); `softmax` is set instead
/// when it is a softmax (a layer of its own).
std::string activation_of(const Json& cfg, const std::string& path, bool* softmax);

/// An integer field in [min, 2^31], or `fallback` when absent.
std::int64_t kint(const Json& cfg, const std::string& key, const std::string& path, std::int64_t fallback,
                  std::int64_t min = 1);

/// A positive integer field that must be present ("required integer is missing" otherwise).
std::int64_t required_kint(const Json& cfg, const std::string& key, const std::string& path);

/// An int, or a list of `n` ints (Keras writes kernel_size as [3, 3]); every element in [min, 2^31].
std::vector<std::int64_t> kints(const Json& cfg, const std::string& key, const std::string& path, std::size_t n,
                                std::int64_t fallback, std::int64_t min = 1);

/// cfg.padding as the layer list's "valid" / "same" (causal, when allowed, costs as "same").
std::string padding_of(const Json& cfg, const std::string& path, bool allow_causal);

/// Requires cfg[key] (a number or a list) to be 1 everywhere: dilations are not modelled.
void require_unit(const Json& cfg, const std::string& key, const std::string& path);

/// Requires cfg.data_format to be channels_last (the default).
void require_channels_last(const Json& cfg, const std::string& path);

/// A tensor reference of an inbound node: the producing layer's name and its call index.
using TensorRef = std::pair<std::string, std::int64_t>;

/// Collects tensor references (Keras 2 ["layer", node, tensor] triples and Keras 3 __keras_tensor__ objects)
/// from an inbound node, depth first, in order.
void collect_refs(const Json& node, std::vector<TensorRef>& out, int depth);

/// The per-sample shape from an InputLayer or first-layer config (batch dimension dropped); -1 for unknown,
/// empty when the config has none. `key_out` receives the key it was read from.
std::vector<std::int64_t> input_shape_of(const Json& cfg, const std::string& path, std::string* key_out);

}  // namespace prenet::keras
