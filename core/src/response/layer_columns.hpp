#pragma once
// The per-layer part of a prediction response (docs/API.md, `layers`): each result's timing columns and
// the layer table naming each layer's column, written as text (these responses run to megabytes).
#include <cstddef>
#include <string>
#include <vector>

#include "prenet/features.hpp"
#include "prenet/network.hpp"
#include "prenet/roofline.hpp"

namespace prenet {

/// Per-layer timings in the columnar form of docs/API.md: layers whose (rounded) timings are equal on
/// every accelerator share one column, so a model's repeated blocks are written once per result and a
/// full-catalogue response stays small (docs/PERFORMANCE.md). The layer table names each layer's column.
class LayerColumns {
 public:
  static constexpr std::size_t kFields = 7;  // 3 phases, compute, memory, CT, bound

  /// Groups the layers of `times` (one Timing per accelerator, each over the same layers; phase times
  /// scaled by that accelerator's `factors` entry).
  LayerColumns(const std::vector<Timing>& times, const std::vector<double>& factors);

  /// `{"backward_ms": [...], "bound": [...], "compute_ms", "ct_ms", "forward_ms", "memory_ms", "optimizer_ms"}`,
  /// one entry per column, for accelerator `h`.
  void write(std::string& out, std::size_t h) const;

  /// Bytes write() appends, roughly (to reserve the output once).
  std::size_t estimate() const { return 120 + (accelerators_ == 0 ? 0 : values_.size() / accelerators_) * 12; }

  /// The response's layer table (docs/API.md, `layers`), as text; identical entries are built once.
  std::string table(const Network& net, const StepWork& work) const;

 private:
  /// One layer's values on one accelerator in the order 3 phases (scaled by `factor`), compute,
  /// memory, CT, bound.
  static void fill(double* v, const LayerTiming& l, double factor);

  std::size_t accelerators_;
  std::vector<std::size_t> column_;  // by layer
  std::vector<double> values_;       // by column, then accelerator, then field (fill()'s order), rounded
};

}  // namespace prenet
