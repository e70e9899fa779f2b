#pragma once
// Shared checks for the fuzz targets: a rejection must be an InputError whose message starts with its
// field; anything else (another exception, a crash, a sanitizer report) is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "prenet/error.hpp"

namespace fuzz {

inline void check_rejection(const prenet::InputError& e) {
  std::string message = e.what();
  if (e.field().empty() || message.rfind(e.field() + ": ", 0) != 0 || message.size() <= e.field().size() + 2) {
    std::fprintf(stderr, "unclear rejection: field \"%s\", message \"%s\"\n", e.field().c_str(), message.c_str());
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
