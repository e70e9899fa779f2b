#include "prenet/json_util.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace prenet {

std::string printable(const std::string& text) {
  // Replace invalid UTF-8 so messages can always be serialised, and control characters (a NUL would end
  // the message as C text) so they stay one visible line; cap the length for one-line messages.
  std::string clean = Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
  clean = Json::parse(clean).get<std::string>();
  std::string out;
  out.reserve(clean.size());
  for (char c : clean) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += "\xEF\xBF\xBD";
    } else {
      out += c;
    }
  }
  if (out.size() > 200) out = out.substr(0, 197) + "...";
  return out;
}

namespace {

/// nlohmann's messages start with "[json.exception.parse_error.101] "; users need only the rest.
std::string strip_prefix(const std::string& what) {
  auto pos = what.find("] ");
  return pos == std::string::npos ? what : what.substr(pos + 2);
}

std::string quote(const std::string& s) { return "\"" + printable(s) + "\""; }

std::string show(const Json& value) {
  std::string text = value.dump(-1, ' ', true, Json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

const Json* member(const Json& obj, const std::string& key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::int64_t to_int(const Json& v, const std::string& path, std::int64_t min, std::int64_t max) {
  auto expected = [min, max] {
    return "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  };
  if (!v.is_number()) throw InputError(path, expected() + ", got " + describe_type(v));
  double d = v.get<double>();
  if (!std::isfinite(d) || std::floor(d) != d) throw InputError(path, expected() + ", got " + show(v));
  if (d < static_cast<double>(min) || d > static_cast<double>(max)) {
    throw InputError(path, expected() + ", got " + show(v));
  }
  return v.is_number_integer() ? v.get<std::int64_t>() : static_cast<std::int64_t>(d);
}

double to_number(const Json& v, const std::string& path, double min, double max) {
  // The message is built only on failure: this runs for every number of every request.
  auto expected = [min, max] {
    std::ostringstream out;
    out << "expected a number in [" << min << ", " << max << "]";
    return out.str();
  };
  if (!v.is_number()) throw InputError(path, expected() + ", got " + describe_type(v));
  double d = v.get<double>();
  if (!std::isfinite(d) || d < min || d > max) throw InputError(path, expected() + ", got " + show(v));
  return d;
}

}  // namespace

std::string join(const std::string& base, const std::string& key) { return base.empty() ? key : base + "." + key; }

std::string index(const std::string& base, std::size_t i) { return base + "[" + std::to_string(i) + "]"; }

std::string describe_type(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::discarded: return "an invalid value";
    default: return "a number";
  }
}

const Json& require_object(const Json& value, const std::string& path) {
  if (!value.is_object()) throw InputError(path, "expected an object, got " + describe_type(value));
  return value;
}

const Json& require_array(const Json& value, const std::string& path) {
  if (!value.is_array()) throw InputError(path, "expected an array, got " + describe_type(value));
  return value;
}

std::int64_t get_int(const Json& obj, const std::string& key, const std::string& path, std::int64_t fallback,
                     std::int64_t min, std::int64_t max) {
  const Json* v = member(obj, key);
  return v ? to_int(*v, join(path, key), min, max) : fallback;
}

std::int64_t require_int(const Json& obj, const std::string& key, const std::string& path, std::int64_t min,
                         std::int64_t max) {
  const Json* v = member(obj, key);
  if (!v) throw InputError(join(path, key), "required integer is missing");
  return to_int(*v, join(path, key), min, max);
}

double get_number(const Json& obj, const std::string& key, const std::string& path, double fallback, double min,
                  double max) {
  const Json* v = member(obj, key);
  return v ? to_number(*v, join(path, key), min, max) : fallback;
}

double require_number(const Json& obj, const std::string& key, const std::string& path, double min, double max) {
  const Json* v = member(obj, key);
  if (!v) throw InputError(join(path, key), "required number is missing");
  return to_number(*v, join(path, key), min, max);
}

bool get_bool(const Json& obj, const std::string& key, const std::string& path, bool fallback) {
  const Json* v = member(obj, key);
  if (!v) return fallback;
  if (!v->is_boolean()) throw InputError(join(path, key), "expected true or false, got " + describe_type(*v));
  return v->get<bool>();
}

std::string get_string(const Json& obj, const std::string& key, const std::string& path, const std::string& fallback) {
  const Json* v = member(obj, key);
  if (!v) return fallback;
  if (!v->is_string()) throw InputError(join(path, key), "expected a string, got " + describe_type(*v));
  return v->get<std::string>();
}

std::string require_string(const Json& obj, const std::string& key, const std::string& path) {
  const Json* v = member(obj, key);
  if (!v) throw InputError(join(path, key), "required string is missing");
  if (!v->is_string() || v->get<std::string>().empty()) {
    throw InputError(join(path, key), "expected a non-empty string, got " + describe_type(*v));
  }
  return v->get<std::string>();
}

std::string get_enum(const Json& obj, const std::string& key, const std::string& path, const std::string& fallback,
                     const std::vector<std::string>& allowed) {
  std::string value = get_string(obj, key, path, fallback);
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw InputError(join(path, key), "expected one of " + list + ", got " + quote(value));
  }
  return value;
}

void reject_unknown_keys(const Json& obj, const std::string& path, const std::vector<std::string>& known) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      if (it.key().empty()) {
        // An empty name cannot be a path element; report it on the object that holds it.
        throw InputError(path.empty() ? "request" : path, "has a field with an empty name; expected one of " + list);
      }
      throw InputError(join(path, printable(it.key())), "unknown field; expected one of " + list);
    }
  }
}

Json parse_json_text(const std::string& text, const std::string& path) {
  if (text.size() > kMaxRequestBytes) {
    throw InputError(path, "input is " + std::to_string(text.size()) + " bytes; the limit is " +
                               std::to_string(kMaxRequestBytes) + " bytes");
  }
  // nlohmann's parser recurses per nesting level; a callback bounds the depth before it can exhaust the stack.
  bool too_deep = false;
  Json::parser_callback_t limit_depth = [&too_deep](int depth, Json::parse_event_t, Json&) {
    if (depth > kMaxJsonDepth) too_deep = true;
    return !too_deep;
  };
  try {
    Json parsed = Json::parse(text, limit_depth, true, false);
    if (too_deep) throw InputError(path, "JSON nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    return parsed;
  } catch (const Json::parse_error& e) {
    if (too_deep) throw InputError(path, "JSON nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    throw InputError(path, "malformed JSON: " + printable(strip_prefix(e.what())));
  } catch (const Json::out_of_range& e) {
    // e.g. a number beyond the range of a double (1e400)
    throw InputError(path, "unusable JSON: " + printable(strip_prefix(e.what())));
  } catch (const Json::exception& e) {
    throw InputError(path, "unusable JSON: " + printable(strip_prefix(e.what())));
  }
}

}  // namespace prenet
