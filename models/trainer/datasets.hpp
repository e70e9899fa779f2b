#pragma once
// Measured rows → work items (kernels built by the core's own feature code) with their accelerator and time.
#include <string>
#include <vector>

#include "prenet/features.hpp"
#include "prenet/hardware.hpp"

namespace trainer {

struct Sample {
  std::vector<prenet::Kernel> item;  // what the measurement timed
  const prenet::Accelerator* accelerator = nullptr;
  prenet::Precision precision = prenet::Precision::FP32;
  double time_ms = 0;
  std::string source;
};

/// One predictor's training data: a kernel class (gemm, conv, ...) or a whole-layer class (layer_dense, ...).
struct Dataset {
  std::string name;
  std::string description;
  std::vector<Sample> samples;
  /// Rows of calibration-only sources (calibration_only): they set their GPU's level at their precision
  /// (the manifest's gpu_levels) and nothing else; no model is fitted or scored on them.
  std::vector<Sample> calibration;
  std::vector<std::string> gpus() const;  // distinct accelerator ids of `samples`, sorted
};

/// Whether rows of `source` only calibrate levels: XLA's TF32 sweep (models/data/SOURCES.md), the one
/// source of TF32 kernels, timed at boost clock by a tracer; fitted on, such rows taught the GEMM model that
/// every tensor-core kernel is fast (models/README.md).
bool calibration_only(const std::string& source);

struct LoadOptions {
  std::string data_dir = "models/data";
  std::size_t max_rows_per_gpu = 5000;  // deterministic subsample cap per (dataset, accelerator)
};

/// Loads every table in `data_dir` into datasets; throws DataError naming file, row and column.
std::vector<Dataset> load_datasets(const LoadOptions& options);

/// The accelerator for a catalogue id; throws DataError naming `where` when the id is unknown.
const prenet::Accelerator& accelerator_for(const std::string& id, const std::string& where);

}  // namespace trainer
