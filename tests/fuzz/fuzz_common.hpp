#pragma once
// Shared checks for the fuzz targets: a rejection must be an InputError whose message starts with its
// field; anything else (another exception, a crash, a sanitizer report) is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "prenet/error.hpp"
#include "prenet/json_util.hpp"

namespace fuzz {

inline void check_rejection(const prenet::InputError& e) {
  std::string message = e.what();
  if (e.field().empty() || message.rfind(e.field() + ": ", 0) != 0 || message.size() <= e.field().size() + 2) {
    std::fprintf(stderr, "unclear rejection: field \"%s\", message \"%s\"\n", e.field().c_str(), message.c_str());
    std::abort();
  }
}

/// Aborts unless `doc` is an error document whose message starts with its field and is not the API's own
/// internal-error report (field "request", message "request: internal error: ..."). A user's key may itself
/// read "request: internal error..." and then is only the field a rejection names, not a finding.
inline void check_error_document(const prenet::Json& doc) {
  std::string field = doc["error"]["field"].get<std::string>();
  std::string message = doc["error"]["message"].get<std::string>();
  bool internal = field == "request" && message.rfind("request: internal error", 0) == 0;
  if (field.empty() || message.rfind(field + ": ", 0) != 0 || internal) {
    std::fprintf(stderr, "unclear rejection: %s\n", doc.dump().substr(0, 400).c_str());
    std::abort();
  }
}

/// Runs `f`; InputErrors are checked, any other exception aborts (the fuzzer reports it).
template <class F>
void run(F&& f) {
  try {
    f();
  } catch (const prenet::InputError& e) {
    check_rejection(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
}

}  // namespace fuzz
