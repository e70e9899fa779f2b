#pragma once
// How every response is written: JSON text that never fails to serialise, numbers rounded to 6
// significant digits, and the error document of docs/API.md.
#include <cmath>
#include <string>

#include "prenet/json_util.hpp"

namespace prenet {

/// Serialises without ever throwing: user text with invalid UTF-8 is replaced, not rejected.
std::string dump(const Json& doc);

/// Rounds to 6 significant digits so responses are compact and identical across platforms' last bits.
/// Inline: responses with per-layer columns round tens of thousands of numbers.
inline double round6(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  double scale = std::pow(10.0, 5 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

/// {"error": {"field": field, "message": message}}.
Json error_document(const std::string& field, const std::string& message);

}  // namespace prenet
