#pragma once
// Accelerators: the catalogue (core/data/hardware.json) and custom entries from requests.
#include <optional>
#include <string>
#include <vector>

#include "prenet/json_util.hpp"
#include "prenet/training.hpp"

namespace prenet {

struct Accelerator {
  std::string id;
  std::string name;
  std::string vendor;
  bool custom = false;
  double memory_gb = 0;
  double memory_bandwidth_gbs = 0;
  /// Dense peak TFLOP/s by Precision (index = enum value); empty when the part lacks that precision.
  std::optional<double> peak_tflops[5];
  double compute_units = 0;  // SMs / CUs; 0 when unknown
  double l2_cache_mb = 0;
  std::optional<double> price_per_hour_usd;
  Json record;  // the full catalogue record, returned by catalog()

  /// Peak for matrix work at `p`; nullopt when unsupported.
  std::optional<double> peak(Precision p) const { return peak_tflops[static_cast<int>(p)]; }
};

/// The built-in catalogue, parsed once from the embedded JSON.
const std::vector<Accelerator>& hardware_catalogue();
/// Looks up a catalogue id; nullptr when unknown.
const Accelerator* find_hardware(const std::string& id);
/// Parses a catalogue record or a custom accelerator object; errors name `path`.
Accelerator parse_accelerator(const Json& record, const std::string& path, bool custom);

}  // namespace prenet
