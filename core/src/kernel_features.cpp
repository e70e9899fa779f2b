#include "prenet/kernel_features.hpp"

#include <algorithm>
#include <cmath>

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
  return matmul_peak_tflops(acc, precision, k.cls);
}

}  // namespace

const char* to_string(FeatureSet set) {
  switch (set) {
    case FeatureSet::Baseline: return "baseline";
    case FeatureSet::CO: return "co";
    case FeatureSet::CO_CM: return "co_cm";
    case FeatureSet::CO_CM_CT: return "co_cm_ct";
    case FeatureSet::Roofline: return "roofline";
  }
  return "baseline";
}

const std::vector<FeatureSet>& all_feature_sets() {
  static const std::vector<FeatureSet> sets = {FeatureSet::Baseline, FeatureSet::CO, FeatureSet::CO_CM,
                                               FeatureSet::CO_CM_CT, FeatureSet::Roofline};
  return sets;
}

bool predicts_roofline_ratio(FeatureSet set) { return set == FeatureSet::Roofline; }

std::vector<std::string> feature_names(FeatureSet set) {
  // Layer (kernel shape) and hardware features: PreNeT's baseline.
  std::vector<std::string> names = {"log2_m",         "log2_n",          "log2_k",        "log2_batch",
                                    "log2_window",    "stride",          "log2_elements", "kernels",
                                    "has_backward",   "has_optimizer",   "log2_opt_bytes", "hw_log2_bandwidth_gbs",
                                    "hw_log2_clock_mhz", "hw_log2_units", "hw_log2_memory_gb"};
  if (set == FeatureSet::Baseline) return names;
  names.push_back("log2_co");
  if (set == FeatureSet::CO) return names;
  names.push_back("log2_cm");
  if (set == FeatureSet::CO_CM) return names;
  names.push_back("log2_ct_us");
  if (set == FeatureSet::CO_CM_CT) return names;
  for (const char* extra : {"hw_log2_peak_tflops", "hw_log2_l2_mb", "log2_compute_us", "log2_memory_us",
                            "log2_roofline_us", "log2_intensity_over_balance", "wave_efficiency", "log2_waves",
                            "log2_working_set_over_l2", "matmul_fraction"}) {
    names.push_back(extra);
  }
  return names;
}

double roofline_ms(const std::vector<Kernel>& item, const Accelerator& acc, Precision precision,
                   const RooflineParams& params) {
  StepWork work;
  work.kernels = item;
  work.layers.resize(1);
  for (auto& k : work.kernels) k.layer = 0;
  return roofline_times(work, {acc}, precision, params).front().step_ms;
}

std::vector<double> item_features(const std::vector<Kernel>& item, const Accelerator& acc, Precision precision,
                                  FeatureSet set) {
  const Kernel& main = main_kernel(item);
  const Totals t = totals(item);
  const double e = activation_bytes(precision);
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
                           log2p(t.optimizer_bytes),
                           log2p(acc.memory_bandwidth_gbs),
                           log2p(clock_mhz(acc)),
                           log2p(units(acc)),
                           log2p(acc.memory_gb)};
  if (set == FeatureSet::Baseline) return f;
  f.push_back(log2p(t.flops));  // CO: operations (the reference code's 2 x multiply-adds)
  if (set == FeatureSet::CO) return f;
  f.push_back(log2p(t.bytes / e));  // CM: elements touched
  if (set == FeatureSet::CO_CM) return f;
  const double fp32_peak = *acc.peak(Precision::FP32) * 1e12;
  f.push_back(log2p(t.flops / fp32_peak * 1e6));  // CT: CO / FP32 peak, in microseconds
  if (set == FeatureSet::CO_CM_CT) return f;

  const RooflineParams params;
  const double peak = item_peak(main, acc, precision) * 1e12;
  const double bandwidth = acc.memory_bandwidth_gbs * 1e9;
  const double compute_us = t.flops / peak * 1e6;
  const double memory_us = t.bytes / bandwidth * 1e6;
  const double balance = peak / bandwidth;  // FLOPs per byte where compute and memory time are equal
  const double intensity = t.bytes > 0 ? t.flops / t.bytes : 0;
  double tiles = main.m > 0 ? std::ceil(main.m / params.tile) * std::ceil(main.n / params.tile) * std::max(main.batch, 1.0) : 0;
  double machine = std::max(units(acc), 1.0);
  double waves = tiles > 0 ? std::ceil(tiles / machine) : 0;
  double wave_eff = tiles > 0 ? tiles / (waves * machine) : 1.0;
  double working_set_mb = main.bytes / std::max(main.repeats, 1.0) / 1e6;
  double l2 = std::max(acc.l2_cache_mb, 0.5);
  f.push_back(log2p(peak / 1e12));
  f.push_back(log2p(acc.l2_cache_mb));
  f.push_back(log2p(compute_us));
  f.push_back(log2p(memory_us));
  f.push_back(log2p(roofline_ms(item, acc, precision) * 1e3));
  f.push_back(std::log2((intensity + 1e-9) / balance));
  f.push_back(wave_eff);
  f.push_back(log2p(waves));
  f.push_back(std::log2((working_set_mb + 1e-6) / l2));
  f.push_back(t.flops > 0 ? t.matmul_flops / t.flops : 0.0);
  return f;
}

}  // namespace prenet
