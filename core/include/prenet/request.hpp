#pragma once
// A prediction request, validated (docs/API.md).
#include <optional>
#include <vector>

#include "prenet/hardware.hpp"
#include "prenet/json_util.hpp"
#include "prenet/parallel.hpp"
#include "prenet/training.hpp"

namespace prenet {

/// A step time the user measured on one of the requested accelerators, to correct the predictions.
struct Calibration {
  std::size_t hardware_index = 0;  // into Request::hardware
  double step_ms = 0;
};

struct Request {
  Json model;  // validated later by resolve_model
  TrainingConfig training;
  std::vector<Accelerator> hardware;
  bool per_layer = true;
  std::optional<Calibration> calibration;
  /// Absent: one accelerator. Present: training.batch_size is the global batch it splits.
  std::optional<ParallelConfig> parallel;
};

constexpr std::size_t kMaxAccelerators = 64;

/// Validates a parsed request document; every error names its field.
Request parse_request(const Json& doc);

}  // namespace prenet
