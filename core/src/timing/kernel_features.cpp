#include "prenet/kernel_features.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace prenet {
namespace {

double log2p(double v) { return std::log2(1.0 + std::max(v, 0.0)); }

/// The kernel doing most of the arithmetic (ties: most bytes); its shape stands for the item's shape.
const Kernel& main_kernel(const std::vector<Kernel>& item) {
  return *std::max_element(item.begin(), item.end(), [](const Kernel& a, const Kernel& b) {
    return a.flops != b.flops ? a.flops < b.flops : a.bytes < b.bytes;
  });
}

struct Totals {
  double flops = 0, bytes = 0, launches = 0, matmul_flops = 0, optimizer_bytes = 0;
  bool backward = false, optimizer = false;
};

Totals totals(const std::vector<Kernel>& item) {
  Totals t;
  for (const Kernel& k : item) {
    t.flops += k.flops;
    t.bytes += k.bytes;
    t.launches += k.repeats;
    if (is_matmul(k.cls)) t.matmul_flops += k.flops;
    if (k.phase == Phase::Backward) t.backward = true;
    if (k.phase == Phase::Optimizer) {
      t.optimizer = true;
      t.optimizer_bytes += k.bytes;
    }
  }
  return t;
}

double clock_mhz(const Accelerator& acc) { return acc.record.value("boost_clock_mhz", 0.0); }

double units(const Accelerator& acc) { return acc.compute_units; }

/// Peak (TFLOP/s) the item's matrix work runs at; FP32 when the precision is unsupported for this class.
double item_peak(const Kernel& k, const Accelerator& acc, Precision precision) {
  if (!is_matmul(k.cls)) return *acc.peak(Precision::FP32);
  return matmul_peak_tflops(acc, precision, k);
}

// Raw shape enters the monotone set only up to these sizes (one tile for m and n, a reduction long
// enough to hide its pipeline for k, a few products for a batch): what a small dimension costs in
// efficiency. How long a larger kernel takes must come from the hardware-scaled terms (FLOPs at peak,
// bytes at bandwidth, waves), so a model carries over to hardware faster than any it saw: with raw
// sizes and FLOPs as inputs it timed an H100's BF16 GEMMs by their size alone (docs/SCALE.md,
// models/README.md).
constexpr double kTileCap = 128, kReductionCap = 1024, kBatchCap = 8;

/// The Monotone set's values, in kMonotone's order (see the audit there).
std::vector<double> monotone_features(const Kernel& main, const Totals& t, const Accelerator& acc,
                                      Precision precision) {
  const RooflineParams params;
  const double e = activation_bytes(precision);
  const double peak = item_peak(main, acc, precision) * 1e12;
  const double bandwidth = acc.memory_bandwidth_gbs * 1e9;
  const double machine = std::max(units(acc), 1.0);
  const double tiles =
      main.m > 0 ? std::ceil(main.m / params.tile) * std::ceil(main.n / params.tile) * std::max(main.batch, 1.0) : 0;
  return {log2p(std::min(main.m, kTileCap)),
          log2p(std::min(main.n, kTileCap)),
          log2p(std::min(main.k, kReductionCap)),
          log2p(std::min(main.batch, kBatchCap)),
          log2p(main.repeats),
          log2p(t.flops / peak * 1e6),
          log2p(t.bytes / bandwidth * 1e6),
          log2p(tiles > 0 ? std::ceil(tiles / machine) : 0),
          log2p(tiles / machine),
          log2p(t.bytes / 1e6 / std::max(acc.l2_cache_mb, 0.5)),
          log2p(main.k / machine),
          log2p(main.window),
          main.stride,
          t.backward ? 1.0 : 0.0,
          t.optimizer ? 1.0 : 0.0,
          std::log2(e)};
}

}  // namespace

const char* to_string(FeatureSet set) {
  switch (set) {
    case FeatureSet::Baseline: return "baseline";
    case FeatureSet::CO: return "co";
    case FeatureSet::CO_CM: return "co_cm";
    case FeatureSet::CO_CM_CT: return "co_cm_ct";
    case FeatureSet::Roofline: return "roofline";
    case FeatureSet::Monotone: return "monotone";
  }
  return "baseline";
}

FeatureSet feature_set_from_string(const std::string& name) {
  for (FeatureSet set : {FeatureSet::Baseline, FeatureSet::CO, FeatureSet::CO_CM, FeatureSet::CO_CM_CT,
                         FeatureSet::Roofline, FeatureSet::Monotone}) {
    if (name == to_string(set)) return set;
  }
  throw std::invalid_argument("unknown feature set \"" + name + "\"");
}

const std::vector<FeatureSet>& all_feature_sets() {
  static const std::vector<FeatureSet> sets = {FeatureSet::Baseline, FeatureSet::CO, FeatureSet::CO_CM,
                                               FeatureSet::CO_CM_CT, FeatureSet::Roofline};
  return sets;
}

bool predicts_roofline_ratio(FeatureSet set) { return set == FeatureSet::Roofline; }

namespace {

// Layer (kernel shape) features, PreNeT's "layer parameters".
const std::vector<std::string> kShapeNames = {"log2_m",       "log2_n",        "log2_k",   "log2_batch",
                                              "log2_window",  "stride",        "log2_elements", "kernels",
                                              "has_backward", "has_optimizer", "log2_opt_bytes"};
// PreNeT's hardware features.
const std::vector<std::string> kHardwareNames = {"hw_log2_bandwidth_gbs", "hw_log2_clock_mhz", "hw_log2_units",
                                                 "hw_log2_memory_gb"};
// This project's: the item measured against the accelerator's own roofline and tiling, so that what the
// model learns is a dimensionless efficiency that carries over to hardware it never saw.
const std::vector<std::string> kRooflineNames = {
    "log2_co",          "log2_cm",          "log2_compute_us",   "log2_memory_us",
    "log2_roofline_us", "log2_intensity_over_balance", "tiling_efficiency", "log2_waves",
    "log2_tiles_per_unit", "log2_working_set_over_l2", "matmul_fraction", "log2_k_per_unit_tile",
    "hw_log2_tdp_w",    "hw_log2_watts_per_tflop"};

// The monotone set, audited feature by feature for one kernel (the product times kernels one at a time).
// grows = 1: never decreases when m, n, k, batch, elements or recurrent steps grow (a min with a constant
// cap keeps that), hence when the batch, sequence length or image size grows (every kernel's GEMM view
// and element count scale up with them).
// grows = 0: fixed for a given layer, phase, precision and accelerator, whatever the problem size.
// Every value is computed as a fixed chain of monotone floating-point steps (products, sums, quotients
// by a size-independent divisor, min with a constant, ceil, log2(1 + x)), so monotonicity holds exactly,
// not just up to rounding: the roofline's tiled compute time is left out for that reason (its tiling
// efficiency cancels m x n in floating point and wobbles by an ulp; tests/core/test_kernel_features.cpp
// caught it), and the net rebuilds tiling from waves and tiles per unit.
// Left out on purpose: tiling efficiency and intensity / balance (sawtooth or falling in some dimension),
// the number of kernels and the matmul fraction (item composition, not size), uncapped sizes, FLOPs and
// element counts (see kTileCap), and raw hardware figures (peak, bandwidth, units, clock, L2, TDP, TDP per
// TFLOP/s): with a dozen training GPUs a free hardware input lets the net learn each GPU by name, and
// leave-one-GPU-out errors grew (models/README.md, also when the hardware entered only linearly);
// hardware enters only through the size-scaled roofline terms (times in us, waves and tiles per unit,
// bytes over L2) and, for GPUs that were measured, through their level (core/src/timing/learned.cpp).
struct MonotoneFeature {
  const char* name;
  int grows;
};
const MonotoneFeature kMonotone[] = {
    {"log2_m_upto_tile", 1},     // GEMM-view rows (batch x sequence (x image)), capped at one tile
    {"log2_n_upto_tile", 1},     // GEMM-view columns (grow with sequence or not at all), capped alike
    {"log2_k_upto_1024", 1},     // reduction (grows with sequence or batch), capped at 1024
    {"log2_batch_upto_8", 1},    // batched-GEMM count (batch x heads), capped at 8
    {"log2_steps", 1},           // recurrent launches: the sequence length
    {"log2_compute_us", 1},      // FLOPs / peak
    {"log2_memory_us", 1},       // bytes / bandwidth
    {"log2_waves", 1},           // ceil(tiles / units), tiles = ceil(m/T) ceil(n/T) batch
    {"log2_tiles_per_unit", 1},  // tiles / units
    {"log2_bytes_over_l2", 1},   // bytes / L2 size
    {"log2_k_per_unit", 1},      // k / units
    {"log2_window", 0},          // convolution window: a layer constant
    {"stride", 0},               // convolution stride: a layer constant
    {"has_backward", 0},         // the kernel's phase
    {"has_optimizer", 0},        // the kernel's phase
    {"log2_element_bytes", 0},   // the training precision
};

}  // namespace

std::vector<int> size_monotone_features(FeatureSet set) {
  std::vector<int> out;
  if (set != FeatureSet::Monotone) return out;
  for (const auto& f : kMonotone) out.push_back(f.grows);
  return out;
}

std::vector<std::string> feature_names(FeatureSet set) {
  if (set == FeatureSet::Monotone) {
    std::vector<std::string> names;
    for (const auto& f : kMonotone) names.emplace_back(f.name);
    return names;
  }
  std::vector<std::string> names = kShapeNames;
  if (set == FeatureSet::Roofline) {
    names.insert(names.end(), kRooflineNames.begin(), kRooflineNames.end());
    return names;
  }
  names.insert(names.end(), kHardwareNames.begin(), kHardwareNames.end());
  if (set == FeatureSet::Baseline) return names;
  names.push_back("log2_co");
  if (set == FeatureSet::CO) return names;
  names.push_back("log2_cm");
  if (set == FeatureSet::CO_CM) return names;
  names.push_back("log2_ct_us");
  return names;
}

double roofline_ms(const std::vector<Kernel>& item, const Accelerator& acc, Precision precision,
                   const RooflineParams& params) {
  double total = 0;
  for (const Kernel& k : item) total += kernel_time(k, acc, precision, params).total_ms();
  return total;
}

std::vector<double> item_features(const std::vector<Kernel>& item, const Accelerator& acc, Precision precision,
                                  FeatureSet set) {
  const Kernel& main = main_kernel(item);
  const Totals t = totals(item);
  const double e = activation_bytes(precision);
  if (set == FeatureSet::Monotone) return monotone_features(main, t, acc, precision);
  std::vector<double> f = {log2p(main.m),
                           log2p(main.n),
                           log2p(main.k),
                           log2p(main.batch),
                           log2p(main.window),
                           main.stride,
                           log2p(t.bytes / e),
                           static_cast<double>(item.size()),
                           t.backward ? 1.0 : 0.0,
                           t.optimizer ? 1.0 : 0.0,
                           log2p(t.optimizer_bytes)};
  if (set != FeatureSet::Roofline) {
    for (double v : {log2p(acc.memory_bandwidth_gbs), log2p(clock_mhz(acc)), log2p(units(acc)), log2p(acc.memory_gb)}) {
      f.push_back(v);
    }
    if (set == FeatureSet::Baseline) return f;
    f.push_back(log2p(t.flops));  // CO: operations (the reference code's 2 x multiply-adds)
    if (set == FeatureSet::CO) return f;
    f.push_back(log2p(t.bytes / e));  // CM: elements touched
    if (set == FeatureSet::CO_CM) return f;
    f.push_back(log2p(t.flops / (*acc.peak(Precision::FP32) * 1e12) * 1e6));  // CT: CO / FP32 peak, in us
    return f;
  }

  const RooflineParams params;
  const double peak = item_peak(main, acc, precision) * 1e12;
  const double bandwidth = acc.memory_bandwidth_gbs * 1e9;
  const double balance = peak / bandwidth;  // FLOPs per byte where compute and memory time are equal
  const double intensity = t.bytes > 0 ? t.flops / t.bytes : 0;
  const double machine = std::max(units(acc), 1.0);
  double tiles = main.m > 0 ? std::ceil(main.m / params.tile) * std::ceil(main.n / params.tile) * std::max(main.batch, 1.0) : 0;
  double waves = tiles > 0 ? std::ceil(tiles / machine) : 0;
  double working_set_mb = main.bytes / std::max(main.repeats, 1.0) / 1e6;
  f.push_back(log2p(t.flops));
  f.push_back(log2p(t.bytes / e));
  f.push_back(log2p(t.flops / peak * 1e6));
  f.push_back(log2p(t.bytes / bandwidth * 1e6));
  f.push_back(log2p(roofline_ms(item, acc, precision) * 1e3));
  f.push_back(std::log2((intensity + 1e-9) / balance));
  f.push_back(main.m > 0 ? tiling_efficiency(main, machine, params.tile) : 1.0);
  f.push_back(log2p(waves));
  f.push_back(std::log2((tiles + 1) / machine));
  f.push_back(std::log2((working_set_mb + 1e-6) / std::max(acc.l2_cache_mb, 0.5)));
  f.push_back(t.flops > 0 ? t.matmul_flops / t.flops : 0.0);
  f.push_back(log2p(main.k / machine));
  // Power-capped parts (T4, P4, L4) sustain clocks far below their boost figure under load.
  const double tdp = acc.record.contains("tdp_w") && acc.record["tdp_w"].is_number() ? acc.record["tdp_w"].get<double>() : 0.0;
  f.push_back(log2p(tdp));
  f.push_back(log2p(tdp / (peak / 1e12)));
  return f;
}

}  // namespace prenet
