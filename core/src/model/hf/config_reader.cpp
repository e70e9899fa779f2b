#include "model/hf/config_reader.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace prenet::hf {
namespace {

/// "a or b or c", as the missing-field error lists the spellings.
std::string or_list(const std::vector<std::string>& keys) {
  std::string names;
  for (const auto& key : keys) names += (names.empty() ? "" : " or ") + key;
  return names;
}

}  // namespace

bool Cfg::has(const std::string& key) const {
  auto it = json_.find(key);
  return it != json_.end() && !it->is_null();
}

std::string Cfg::present(const std::vector<std::string>& keys) const {
  for (const auto& key : keys) {
    if (has(key)) return key;
  }
  return "";
}

std::int64_t Cfg::req(const std::vector<std::string>& keys, std::int64_t min, std::int64_t max) const {
  std::string key = present(keys);
  if (key.empty()) throw InputError(field(keys.front()), "required field is missing (" + or_list(keys) + ")");
  return get_int(json_, key, path_, 0, min, max);
}

std::int64_t Cfg::opt(const std::vector<std::string>& keys, std::int64_t fallback, std::int64_t min,
                      std::int64_t max) const {
  std::string key = present(keys);
  return key.empty() ? fallback : get_int(json_, key, path_, fallback, min, max);
}

double Cfg::rate(const std::vector<std::string>& keys, double fallback) const {
  std::string key = present(keys);
  return key.empty() ? fallback : get_number(json_, key, path_, fallback, 0.0, 0.999999);
}

std::string Cfg::act(const std::vector<std::string>& keys, const std::string& fallback) const {
  std::string key = present(keys);
  if (key.empty()) return fallback;
  std::string fn = get_string(json_, key, path_, fallback);
  return activation(fn, field(key));
}

std::string activation(const std::string& fn, const std::string& where) {
  static const std::map<std::string, std::string> known = {{"gelu", "gelu"},
                                                           {"gelu_new", "gelu_new"},
                                                           {"gelu_fast", "gelu_fast"},
                                                           {"gelu_pytorch_tanh", "gelu_pytorch_tanh"},
                                                           {"quick_gelu", "quick_gelu"},
                                                           {"relu", "relu"},
                                                           {"silu", "silu"},
                                                           {"swish", "swish"},
                                                           {"tanh", "tanh"},
                                                           {"sigmoid", "sigmoid"},
                                                           {"gelu_accurate", "gelu_new"},
                                                           {"gelu_python", "gelu"},
                                                           {"gelu_10", "gelu"},
                                                           {"relu2", "relu2"},
                                                           {"relu6", "relu6"},
                                                           {"leaky_relu", "leaky_relu"},
                                                           {"mish", "mish"},
                                                           {"linear", "linear"}};
  auto it = known.find(fn);
  if (it == known.end()) throw InputError(where, "unsupported activation \"" + printable(fn) + "\"");
  return it->second;
}

std::optional<std::int64_t> label_count(const Cfg& c) {
  if (c.has("num_labels")) return c.opt({"num_labels"}, 0, 1, kMaxVocab);
  const Json& json = c.json();
  if (c.has("id2label") && json["id2label"].is_object() && !json["id2label"].empty()) {
    return static_cast<std::int64_t>(json["id2label"].size());
  }
  return std::nullopt;
}

std::int64_t choose_seq(std::int64_t seq_len, std::int64_t positions, bool learned,
                        std::vector<std::string>& warnings) {
  if (seq_len <= 0) return positions > 0 ? std::min<std::int64_t>(positions, 1024) : 1024;
  if (positions > 0 && seq_len > positions) {
    if (learned) {
      throw InputError("training.seq_len", "is " + std::to_string(seq_len) + " but the model has only " +
                                               std::to_string(positions) + " learned positions");
    }
    warnings.push_back("training.seq_len " + std::to_string(seq_len) + " is beyond the model's " +
                       std::to_string(positions) + " trained positions");
  }
  return seq_len;
}

void check_heads(const Cfg& c, std::int64_t hidden, std::int64_t heads, std::int64_t kv_heads, bool has_head_dim,
                 const std::string& heads_field, const std::string& kv_field) {
  if (heads < 1) throw InputError(c.field(heads_field), "must be at least 1, got " + std::to_string(heads));
  if (kv_heads < 1) {
    throw InputError(c.field(kv_field),
                     "must be at least 1 where there are attention heads, got " + std::to_string(kv_heads));
  }
  if (!has_head_dim && hidden % heads != 0) {
    throw InputError(c.field(heads_field), "must divide the hidden size " + std::to_string(hidden));
  }
  if (heads % kv_heads != 0) {
    throw InputError(c.field(kv_field), "must divide num_attention_heads (" + std::to_string(heads) + "), got " +
                                            std::to_string(kv_heads));
  }
}

Json tokens_model(const std::string& name, std::int64_t seq, Json layers) {
  return {{"name", name}, {"input", {{"kind", "tokens"}, {"seq_len", seq}}}, {"layers", std::move(layers)}};
}

}  // namespace prenet::hf
