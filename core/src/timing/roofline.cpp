#include "prenet/roofline.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>

#include "prenet/error.hpp"

namespace prenet {

/// Output tile side a GEMM library would pick for a dimension: the next power of two, 16 to `max_tile`.
static double tile_for(double dim, double max_tile) {
  double t = 16;
  while (t < dim && t < max_tile) t *= 2;
  return t;
}

/// Fraction of peak a GEMM-like kernel can use once its output is cut into tiles spread over the units.
/// Each unit computes one tile at a time at 1/units of peak; a grid smaller than the machine splits the
/// reduction (split-K) to fill it. Charging whole tiles and whole waves keeps time non-decreasing in every
/// dimension. 1 when the shape or the unit count is unknown.
double tiling_efficiency(const Kernel& k, double units, double max_tile) {
  if (k.m <= 0 || k.n <= 0 || k.k <= 0 || units < 8) return 1.0;
  double tm = tile_for(k.m, max_tile), tn = tile_for(k.n, max_tile);
  double tiles = std::ceil(k.m / tm) * std::ceil(k.n / tn) * std::max(k.batch, 1.0);
  double splits = std::max(1.0, std::min(std::floor(units / tiles), k.k / max_tile));
  double waves = std::ceil(tiles * splits / units);
  return k.m * k.n * std::max(k.batch, 1.0) * splits / (waves * units * tm * tn);
}

const char* to_string(Bound b) {
  switch (b) {
    case Bound::Compute: return "compute";
    case Bound::Memory: return "memory";
    case Bound::Overhead: return "overhead";
  }
  return "compute";
}

Precision matmul_precision(const Accelerator& acc, Precision precision, KernelClass cls) {
  // FP8 training keeps convolutions and recurrent cells in 16-bit; only GEMMs run in FP8.
  if (precision == Precision::FP8 && (cls == KernelClass::Conv || cls == KernelClass::Recurrent)) {
    return acc.peak(Precision::BF16) ? Precision::BF16 : Precision::FP16;
  }
  return precision;
}

double matmul_peak_tflops(const Accelerator& acc, Precision precision, KernelClass cls) {
  const Precision effective = matmul_precision(acc, precision, cls);
  auto peak = acc.peak(effective);
  if (!peak && effective != precision) {
    throw InputError("training.precision", std::string(to_string(precision)) + " training runs convolutions and " +
                                               "recurrent cells in bf16 or fp16, which " + acc.name + " (" + acc.id +
                                               ") lacks");
  }
  if (!peak) {
    throw InputError("training.precision", std::string(to_string(precision)) + " is not supported by " + acc.name +
                                               " (" + acc.id + "); choose a precision it has");
  }
  return *peak;
}

Precision kernel_precision(const Kernel& k, const Accelerator& acc, Precision precision) {
  // Transformer Engine's fp8_autocast runs its te.Linear GEMMs in FP8; attention's batched GEMMs, the head, the
  // embeddings and everything outside TE modules stay in the 16-bit autocast type (layers/fp8.cpp).
  if (precision != Precision::FP8 || k.fp8 || k.cls == KernelClass::Conv || k.cls == KernelClass::Recurrent) {
    return precision;
  }
  return acc.peak(Precision::BF16) || !acc.peak(Precision::FP16) ? Precision::BF16 : Precision::FP16;
}

double matmul_peak_tflops(const Accelerator& acc, Precision precision, const Kernel& k) {
  if (k.fp4) {
    // resolve_fp8_recipe admits nvfp4 only on parts with an FP4 peak; this guards callers that did not resolve.
    if (!acc.fp4_peak_tflops) {
      throw InputError("training.fp8_recipe", "nvfp4 needs an FP4 tensor-core peak (peak_tflops.fp4), which " +
                                                  acc.name + " (" + acc.id + ") lacks");
    }
    return *acc.fp4_peak_tflops;
  }
  return matmul_peak_tflops(acc, kernel_precision(k, acc, precision), k.cls);
}

double achievable_matmul_fraction(const Accelerator& acc, Precision precision, const Kernel& k) {
  // No FP4 matmul sweep is published: an NVFP4 GEMM is assumed to reach the FP8 share of its own peak.
  if (k.fp4) return acc.achievable_fraction(Precision::FP8);
  return acc.achievable_fraction(matmul_precision(acc, kernel_precision(k, acc, precision), k.cls));
}

double misaligned_slowdown(const Accelerator& acc, Precision precision, const RooflineParams& params) {
  if (!acc.record.is_object() || acc.record.value("vendor", "") != "nvidia") return 1.0;
  if (precision == Precision::TF32) return params.misaligned_tf32_slowdown;
  if (precision == Precision::BF16 || precision == Precision::FP16) return params.misaligned_16bit_slowdown;
  return 1.0;
}

double misaligned_slowdown(const Kernel& k, const Accelerator& acc, Precision precision, const RooflineParams& params) {
  return k.misaligned && is_matmul(k.cls) ? misaligned_slowdown(acc, kernel_precision(k, acc, precision), params) : 1.0;
}

KernelTime kernel_time(const Kernel& k, const Accelerator& acc, Precision precision, const RooflineParams& params) {
  double rate = is_matmul(k.cls) ? matmul_peak_tflops(acc, precision, k) * 1e12 * params.matmul_efficiency *
                                       tiling_efficiency(k, acc.compute_units, params.tile) /
                                       misaligned_slowdown(k, acc, precision, params)
                                 : *acc.peak(Precision::FP32) * 1e12;
  KernelTime t;
  t.compute_ms = k.flops / rate * 1e3;
  t.memory_ms = k.bytes / (acc.memory_bandwidth_gbs * 1e9 * params.memory_efficiency) * 1e3;
  t.overhead_ms = k.repeats * params.launch_overhead_ms;
  return t;
}

std::vector<Timing> roofline_times(const StepWork& work, const std::vector<Accelerator>& accelerators,
                                   Precision precision, const RooflineParams& params) {
  const auto kernels = static_cast<Eigen::Index>(work.kernels.size());
  Eigen::ArrayXd flops(kernels), bytes(kernels), launches(kernels);
  for (Eigen::Index i = 0; i < kernels; ++i) {
    const Kernel& k = work.kernels[static_cast<std::size_t>(i)];
    flops(i) = k.flops;
    bytes(i) = k.bytes;
    launches(i) = k.repeats;
  }

  // A matrix kernel's rate depends only on its class and shape, which repeated layers share: each
  // distinct one is rated once per accelerator (keyed by bits, so equal keys always mean equal rates).
  std::vector<std::size_t> shape_of(work.kernels.size());
  std::vector<const Kernel*> shapes;
  {
    std::map<std::array<std::uint64_t, 7>, std::size_t> index;
    for (std::size_t i = 0; i < work.kernels.size(); ++i) {
      const Kernel& k = work.kernels[i];
      if (!is_matmul(k.cls)) continue;
      const double fields[] = {static_cast<double>(k.cls), k.m, k.n, k.k, k.batch, k.misaligned ? 1.0 : 0.0,
                               k.fp8 ? 1.0 : 0.0};
      std::array<std::uint64_t, 7> key{};
      std::memcpy(key.data(), fields, sizeof fields);
      auto [it, inserted] = index.emplace(key, shapes.size());
      if (inserted) shapes.push_back(&k);
      shape_of[i] = it->second;
    }
  }
  std::vector<double> shape_rate(shapes.size());
  // Launch overheads do not depend on the accelerator: their per-kernel, per-layer and total sums once.
  const Eigen::ArrayXd overhead_ms = launches * params.launch_overhead_ms;
  std::vector<double> layer_overhead(work.layers.size(), 0.0);
  double total_overhead = 0;
  std::vector<std::uint32_t> kernel_phase(work.kernels.size()), kernel_layer(work.kernels.size());
  for (Eigen::Index i = 0; i < kernels; ++i) {
    const Kernel& k = work.kernels[static_cast<std::size_t>(i)];
    kernel_phase[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(k.phase);
    kernel_layer[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(k.layer);
    total_overhead += overhead_ms(i);
    layer_overhead[static_cast<std::size_t>(k.layer)] += overhead_ms(i);
  }

  std::vector<Timing> out;
  out.reserve(accelerators.size());
  for (const Accelerator& acc : accelerators) {
    // Achieved FLOP/s per kernel: matrix kernels at the training precision, the rest on the FP32 vector units.
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      const Kernel& k = *shapes[s];
      shape_rate[s] = matmul_peak_tflops(acc, precision, k) * 1e12 * params.matmul_efficiency *
                      tiling_efficiency(k, acc.compute_units, params.tile) /
                      misaligned_slowdown(k, acc, precision, params);
    }
    const double vector_rate = *acc.peak(Precision::FP32) * 1e12;
    Eigen::ArrayXd rate(kernels);
    for (Eigen::Index i = 0; i < kernels; ++i) {
      const auto u = static_cast<std::size_t>(i);
      rate(i) = is_matmul(work.kernels[u].cls) ? shape_rate[shape_of[u]] : vector_rate;
    }
    Eigen::ArrayXd compute_ms = flops / rate * 1e3;
    Eigen::ArrayXd memory_ms = bytes / (acc.memory_bandwidth_gbs * 1e9 * params.memory_efficiency) * 1e3;
    Eigen::ArrayXd total_ms = compute_ms.max(memory_ms) + overhead_ms;

    Timing t;
    t.layers.resize(work.layers.size());
    t.overhead_ms = total_overhead;
    std::vector<std::array<double, 2>> by_bound(work.layers.size(), std::array<double, 2>{});  // compute, memory
    for (Eigen::Index i = 0; i < kernels; ++i) {
      const std::size_t phase = kernel_phase[static_cast<std::size_t>(i)];
      const std::size_t layer = kernel_layer[static_cast<std::size_t>(i)];
      t.ms[phase] += total_ms(i);
      t.layers[layer].ms[phase] += total_ms(i);
      t.layers[layer].compute_ms += compute_ms(i);
      t.layers[layer].memory_ms += memory_ms(i);
      bool compute_bound = compute_ms(i) >= memory_ms(i);
      double dominant = std::max(compute_ms(i), memory_ms(i));
      (compute_bound ? t.compute_ms : t.memory_ms) += dominant;
      by_bound[layer][compute_bound ? 0 : 1] += dominant;
    }
    double fp32_flops_per_ms = *acc.peak(Precision::FP32) * 1e9;
    for (std::size_t l = 0; l < work.layers.size(); ++l) {
      t.layers[l].ct_ms = work.layers[l].co / fp32_flops_per_ms;
      const auto& b = by_bound[l];
      const double o = layer_overhead[l];
      t.layers[l].bound = b[0] >= b[1] && b[0] >= o ? Bound::Compute : b[1] >= o ? Bound::Memory : Bound::Overhead;
    }
    t.step_ms = t.ms[0] + t.ms[1] + t.ms[2];
    t.bottleneck = t.compute_ms >= t.memory_ms && t.compute_ms >= t.overhead_ms ? Bound::Compute
                   : t.memory_ms >= t.overhead_ms                               ? Bound::Memory
                                                                                : Bound::Overhead;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace prenet
