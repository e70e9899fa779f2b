#include "model/keras/config.hpp"

#include <map>

#include "prenet/network.hpp"

namespace prenet::keras {
namespace {

const std::int64_t kMaxDim = Limits::kMaxDim;

/// The element `v` of the list at `field` as an integer in [min, 2^31]; errors name `field` without the
/// holder's key.
std::int64_t element_int(const Json& v, const std::string& field, std::int64_t fallback, std::int64_t min) {
  Json holder = {{"v", v}};
  try {
    return get_int(holder, "v", "", fallback, min, kMaxDim);
  } catch (const InputError& e) {
    std::string m = e.what();
    throw InputError(field, m.substr(m.find(": ") + 2));
  }
}

/// The function name an activation field holds (a string, or Keras 3's {"config": "relu", ...}).
std::string activation_name(const Json& value, const std::string& path) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("config") && value["config"].is_string()) {
    return value["config"].get<std::string>();  // Keras 3 may serialise a built-in as {"config": "relu", ...}
  }
  throw InputError(join(path, "activation"), "expected an activation name, got " + describe_type(value));
}

}  // namespace

std::string activation_of(const Json& cfg, const std::string& path, bool* softmax) {
  *softmax = false;
  auto it = cfg.find("activation");
  if (it == cfg.end() || it->is_null()) return "none";
  std::string fn = activation_name(*it, path);
  static const std::map<std::string, std::string> names = {{"linear", "none"},
                                                           {"relu", "relu"},
                                                           {"relu6", "relu6"},
                                                           {"sigmoid", "sigmoid"},
                                                           {"tanh", "tanh"},
                                                           {"elu", "elu"},
                                                           {"selu", "selu"},
                                                           {"gelu", "gelu"},
                                                           {"swish", "silu"},
                                                           {"silu", "silu"},
                                                           {"softplus", "softplus"},
                                                           {"hard_sigmoid", "hard_sigmoid"},
                                                           {"hard_silu", "hard_swish"},
                                                           {"hard_swish", "hard_swish"},
                                                           {"leaky_relu", "leaky_relu"},
                                                           {"mish", "mish"}};
  if (fn == "softmax") {
    *softmax = true;
    return "none";
  }
  auto found = names.find(fn);
  if (found == names.end())
    throw InputError(join(path, "activation"), "unsupported activation \"" + printable(fn) + "\"");
  return found->second;
}

std::int64_t kint(const Json& cfg, const std::string& key, const std::string& path, std::int64_t fallback,
                  std::int64_t min) {
  return get_int(cfg, key, path, fallback, min, kMaxDim);
}

std::int64_t required_kint(const Json& cfg, const std::string& key, const std::string& path) {
  std::int64_t v = kint(cfg, key, path, 0);
  if (v == 0) throw InputError(join(path, key), "required integer is missing");
  return v;
}

std::vector<std::int64_t> kints(const Json& cfg, const std::string& key, const std::string& path, std::size_t n,
                                std::int64_t fallback, std::int64_t min) {
  auto it = cfg.find(key);
  if (it == cfg.end() || it->is_null()) return std::vector<std::int64_t>(n, fallback);
  if (it->is_array()) {
    if (it->size() != n) {
      throw InputError(join(path, key),
                       "expected " + std::to_string(n) + " integers, got " + std::to_string(it->size()));
    }
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(element_int((*it)[i], index(join(path, key), i), fallback, min));
    return out;
  }
  return std::vector<std::int64_t>(n, get_int(cfg, key, path, fallback, min, kMaxDim));
}

std::string padding_of(const Json& cfg, const std::string& path, bool allow_causal) {
  std::vector<std::string> allowed = {"valid", "same"};
  if (allow_causal) allowed.push_back("causal");
  std::string p = get_enum(cfg, "padding", path, "valid", allowed);
  return p == "causal" ? "same" : p;  // causal pads k-1 on the left: same length and work as "same"
}

void require_unit(const Json& cfg, const std::string& key, const std::string& path) {
  auto it = cfg.find(key);
  if (it == cfg.end() || it->is_null()) return;
  Json values = it->is_array() ? *it : Json::array({*it});
  for (const auto& v : values) {
    if (!(v.is_number() && v.get<double>() == 1.0)) {
      throw InputError(join(path, key), "only 1 is supported (dilated convolutions are not modelled)");
    }
  }
}

void require_channels_last(const Json& cfg, const std::string& path) {
  std::string fmt = get_string(cfg, "data_format", path, "channels_last");
  if (fmt != "channels_last") throw InputError(join(path, "data_format"), "only channels_last is supported");
}

void collect_refs(const Json& node, std::vector<TensorRef>& out, int depth) {
  if (depth > 16 || out.size() > 64) return;
  if (node.is_array()) {
    if (node.size() >= 3 && node[0].is_string() && node[1].is_number_integer() && node[2].is_number_integer()) {
      out.emplace_back(node[0].get<std::string>(), node[1].get<std::int64_t>());
      if (node.size() >= 4) collect_refs(node[3], out, depth + 1);  // Keras 2 kwargs: {"value": [...]}
      return;
    }
    for (const auto& item : node) collect_refs(item, out, depth + 1);
  } else if (node.is_object()) {
    if (node.value("class_name", "") == "__keras_tensor__" && node.contains("config") && node["config"].is_object()) {
      const Json& hist = node["config"].value("keras_history", Json());
      if (hist.is_array() && hist.size() >= 2 && hist[0].is_string() && hist[1].is_number_integer()) {
        out.emplace_back(hist[0].get<std::string>(), hist[1].get<std::int64_t>());
      }
      return;
    }
    for (auto it = node.begin(); it != node.end(); ++it) collect_refs(it.value(), out, depth + 1);
  }
}

std::vector<std::int64_t> input_shape_of(const Json& cfg, const std::string& path, std::string* key_out) {
  for (const char* key : {"batch_input_shape", "batch_shape"}) {
    if (!cfg.contains(key) || cfg[key].is_null()) continue;
    *key_out = key;
    const Json& s = require_array(cfg[key], join(path, key));
    if (s.size() < 2 || s.size() > 4) {
      throw InputError(join(path, key), "expected a batch shape of rank 2 to 4, got rank " + std::to_string(s.size()));
    }
    std::vector<std::int64_t> dims;
    for (std::size_t i = 1; i < s.size(); ++i) {
      dims.push_back(s[i].is_null() ? -1 : element_int(s[i], index(join(path, key), i), 0, 1));
    }
    return dims;
  }
  if (cfg.contains("build_config") && cfg["build_config"].is_object() && cfg["build_config"].contains("input_shape")) {
    Json inner = {{"batch_shape", cfg["build_config"]["input_shape"]}};
    return input_shape_of(inner, join(join(path, "build_config"), "input_shape"), key_out);
  }
  return {};
}

}  // namespace prenet::keras
