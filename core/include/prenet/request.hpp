#pragma once
// A prediction request, validated (docs/API.md).
#include <vector>

#include "prenet/hardware.hpp"
#include "prenet/json_util.hpp"
#include "prenet/training.hpp"

namespace prenet {

struct Request {
  Json model;  // validated later by resolve_model
  TrainingConfig training;
  std::vector<Accelerator> hardware;
  bool per_layer = true;
};

constexpr std::size_t kMaxAccelerators = 64;

/// Validates a parsed request document; every error names its field.
Request parse_request(const Json& doc);

}  // namespace prenet
