#pragma once
// How every response is written: JSON text that never fails to serialise, numbers rounded to 6
// significant digits, and the error document of docs/API.md.
#include <string>

#include "prenet/json_util.hpp"

namespace prenet {

/// Serialises without ever throwing: user text with invalid UTF-8 is replaced, not rejected.
std::string dump(const Json& doc);

/// Rounds to 6 significant digits so responses are compact and identical across platforms' last bits.
double round6(double v);

/// {"error": {"field": field, "message": message}}.
Json error_document(const std::string& field, const std::string& message);

}  // namespace prenet
