#pragma once
// Typed reads from a Hugging Face config.json, and the checks every family shares.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "prenet/json_util.hpp"

namespace prenet::hf {

constexpr std::int64_t kMaxWidth = std::int64_t{1} << 20;
constexpr std::int64_t kMaxInner = kMaxWidth * 16;
constexpr std::int64_t kMaxDepth = 10000;
constexpr std::int64_t kMaxVocab = kMaxWidth * 16;
constexpr std::int64_t kMaxPositions = std::int64_t{1} << 24;

/// Typed reads from a config object; every error names `path.key`.
class Cfg {
 public:
  Cfg(const Json& json, std::string path) : json_(json), path_(std::move(path)) {}

  const Json& json() const { return json_; }
  /// The config field `key` as errors name it ("model.hf_config.key").
  std::string field(const std::string& key) const { return join(path_, key); }
  /// Whether `key` is present and not null.
  bool has(const std::string& key) const;
  /// The first of `keys` that is present, or "" when none is.
  std::string present(const std::vector<std::string>& keys) const;
  /// A required size: the first present of `keys`, else an error naming the first key and all spellings.
  std::int64_t req(const std::vector<std::string>& keys, std::int64_t min, std::int64_t max) const;
  /// An optional size: the first present of `keys`, else `fallback`.
  std::int64_t opt(const std::vector<std::string>& keys, std::int64_t fallback, std::int64_t min,
                   std::int64_t max) const;
  /// A dropout rate in [0, 1): the first present of `keys`, else `fallback`.
  double rate(const std::vector<std::string>& keys, double fallback) const;
  /// A number in [min, max], `fallback` when absent.
  double number(const std::string& key, double fallback, double min, double max) const {
    return get_number(json_, key, path_, fallback, min, max);
  }
  /// A boolean switch, `fallback` when absent.
  bool flag(const std::string& key, bool fallback) const { return get_bool(json_, key, path_, fallback); }
  /// A string, `fallback` when absent.
  std::string str(const std::string& key, const std::string& fallback) const {
    return get_string(json_, key, path_, fallback);
  }
  /// An activation name from the first present of `keys`, mapped onto the layer list's names.
  std::string act(const std::vector<std::string>& keys, const std::string& fallback) const;

 private:
  const Json& json_;
  std::string path_;
};

/// The layer list's name for Hugging Face activation `fn`; an error naming `where` when it has none.
std::string activation(const std::string& fn, const std::string& where);

/// The classes a config declares (num_labels, else the size of a non-empty id2label), if it declares any.
std::optional<std::int64_t> label_count(const Cfg& c);

/// Sequence length for token models: the request's, else the config's positions capped at 1024.
/// `learned`: positions are a table, so a longer sequence is an error; otherwise only a warning.
std::int64_t choose_seq(std::int64_t seq_len, std::int64_t positions, bool learned, std::vector<std::string>& warnings);

/// Errors unless there is at least one head and one KV head, the heads divide the hidden size (skipped with an
/// explicit head_dim) and the KV heads divide the heads; the errors name `heads_field` and `kv_field`.
void check_heads(const Cfg& c, std::int64_t hidden, std::int64_t heads, std::int64_t kv_heads, bool has_head_dim,
                 const std::string& heads_field, const std::string& kv_field);

/// A layer-list model reading `seq` tokens.
Json tokens_model(const std::string& name, std::int64_t seq, Json layers);

}  // namespace prenet::hf
