#pragma once
#include <stdexcept>
#include <string>

namespace prenet {

/// A problem with the user's input. `field` is a dotted path into the request
/// (e.g. "model.layers[3].units"); what() is a one-line message that starts with it.
class InputError : public std::runtime_error {
 public:
  InputError(std::string field, const std::string& problem)
      : std::runtime_error(field + ": " + problem), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

}  // namespace prenet
