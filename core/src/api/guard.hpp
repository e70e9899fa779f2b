#pragma once
// The core's one boundary between exceptions and the error documents of docs/API.md: every public call
// runs its work through guarded(), so no exception ever leaves the core.
#include <exception>
#include <string>

#include "prenet/error.hpp"
#include "response/json_text.hpp"

namespace prenet {

/// `work()`'s text, or the error document of what it threw: an InputError names its own field; any other
/// exception is an internal error reported against `field` ("request", "catalog").
template <typename Work>
std::string guarded(const char* field, Work&& work) {
  try {
    return work();
  } catch (const InputError& e) {
    return dump(error_document(e.field(), e.what()));
  } catch (const std::exception& e) {
    return dump(error_document(field, std::string(field) + ": internal error: " + e.what()));
  }
}

}  // namespace prenet
