#pragma once
// Typed, validated reads from JSON objects. Every failure is an InputError naming the field.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "prenet/error.hpp"

namespace prenet {

using Json = nlohmann::json;

/// Path of a member: join("model", "layers") == "model.layers"; an empty base yields the key.
std::string join(const std::string& base, const std::string& key);
/// Path of an array element: index("model.layers", 3) == "model.layers[3]".
std::string index(const std::string& base, std::size_t i);

/// Requires `value` to be an object; `path` names it in the error.
const Json& require_object(const Json& value, const std::string& path);
/// Requires `value` to be an array; `path` names it in the error.
const Json& require_array(const Json& value, const std::string& path);

/// An integer member in [min, max], or `fallback` when absent or null. Rejects fractions, NaN, strings.
std::int64_t get_int(const Json& obj, const std::string& key, const std::string& path, std::int64_t fallback,
                     std::int64_t min, std::int64_t max);
/// A required integer member in [min, max].
std::int64_t require_int(const Json& obj, const std::string& key, const std::string& path, std::int64_t min,
                         std::int64_t max);
/// A finite number member in [min, max], or `fallback` when absent or null.
double get_number(const Json& obj, const std::string& key, const std::string& path, double fallback, double min,
                  double max);
/// A required finite number member in [min, max].
double require_number(const Json& obj, const std::string& key, const std::string& path, double min, double max);
/// A boolean member, or `fallback` when absent or null.
bool get_bool(const Json& obj, const std::string& key, const std::string& path, bool fallback);
/// A string member, or `fallback` when absent or null.
std::string get_string(const Json& obj, const std::string& key, const std::string& path, const std::string& fallback);
/// A required non-empty string member.
std::string require_string(const Json& obj, const std::string& key, const std::string& path);
/// A string member that must be one of `allowed`, or `fallback` when absent.
std::string get_enum(const Json& obj, const std::string& key, const std::string& path, const std::string& fallback,
                     const std::vector<std::string>& allowed);
/// Rejects members of `obj` not listed in `known`, so typos do not pass silently.
void reject_unknown_keys(const Json& obj, const std::string& path, const std::vector<std::string>& known);

/// The longest request text the core reads, in bytes (docs/API.md "Limits").
constexpr std::size_t kMaxRequestBytes = 16u << 20;
/// The deepest nesting of JSON the core reads.
constexpr int kMaxJsonDepth = 64;

/// Parses text as JSON with a depth and size limit; errors name `path` and say where parsing stopped.
Json parse_json_text(const std::string& text, const std::string& path);

/// `text` with invalid UTF-8 replaced and at most 200 characters, safe to put in a message.
std::string printable(const std::string& text);

/// Human-readable name of a JSON value's type, for messages ("a string", "an array", ...).
std::string describe_type(const Json& value);

}  // namespace prenet
