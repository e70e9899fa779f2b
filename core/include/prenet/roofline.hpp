#pragma once
// The analytic predictor: each kernel takes the longer of its compute and memory time at achievable
// fractions of the accelerator's peaks, plus a fixed launch cost. A baseline once learned models land.
#include <array>
#include <string>
#include <vector>

#include "prenet/features.hpp"
#include "prenet/hardware.hpp"

namespace prenet {

/// Achievable fractions and fixed costs of the analytic model (docs/PREDICTION.md explains each).
struct RooflineParams {
  double matmul_efficiency = 0.75;    // of dense peak, before wave quantisation
  double memory_efficiency = 0.80;    // of datasheet bandwidth
  double launch_overhead_ms = 0.005;  // per kernel launch
  double tile = 128;                  // output tile side used for wave quantisation
  // How much longer a misaligned tensor-core GEMM takes than its aligned neighbour on NVIDIA GPUs: the
  // median over 54 pairs per precision (three passes of a linear layer, three token counts, six widths)
  // timed by models/measure/alignment.py on an H200 (models/measured/h200/alignment.csv; FP32: 1.00).
  // tests/js/alignment-data.test.mjs recomputes both from that file.
  double misaligned_tf32_slowdown = 2.596;
  double misaligned_16bit_slowdown = 5.232;
};

enum class Bound { Compute, Memory, Overhead };
const char* to_string(Bound b);

struct LayerTiming {
  std::array<double, 3> ms{};  // by Phase
  double compute_ms = 0;       // the layer's kernels at achievable peak FLOP/s (all phases)
  double memory_ms = 0;        // the layer's kernels at achievable bandwidth (all phases)
  double ct_ms = 0;            // PreNeT CT: CO / FP32 peak
  Bound bound = Bound::Overhead;
};

struct Timing {
  std::array<double, 3> ms{};  // by Phase
  double step_ms = 0;
  double compute_ms = 0, memory_ms = 0, overhead_ms = 0;  // what dominated each kernel, summed
  Bound bottleneck = Bound::Compute;
  std::vector<LayerTiming> layers;
  // Exponent of another accelerator's calibration correction carried over to this one (docs/PREDICTION.md,
  // Calibration): the learned path weighs its classes' measured shares by time; the analytic path uses 0.5.
  double calibration_share = 0.5;
};

/// The precision whose peak matrix kernels of class `cls` use in a `precision` step (FP8 steps keep
/// convolutions and recurrent cells in 16-bit).
Precision matmul_precision(const Accelerator& acc, Precision precision, KernelClass cls);
/// The peak (TFLOP/s) used for matrix kernels of class `cls` at `precision`; throws InputError naming
/// training.precision when the accelerator lacks it.
double matmul_peak_tflops(const Accelerator& acc, Precision precision, KernelClass cls);
/// The precision matrix kernel `k` runs at in a `precision` step: under fp8 only the FP8 linears' GEMMs
/// (Kernel::fp8) run in FP8, every other matrix kernel in bf16 (fp16 where the part lacks bf16).
Precision kernel_precision(const Kernel& k, const Accelerator& acc, Precision precision);
/// The peak (TFLOP/s) of matrix kernel `k` in a `precision` step: matmul_peak_tflops at kernel_precision, the FP4
/// peak for an NVFP4 GEMM (Kernel::fp4; InputError naming training.fp8_recipe where the part has none).
double matmul_peak_tflops(const Accelerator& acc, Precision precision, const Kernel& k);
/// The share of that peak kernel `k` can reach: the catalogue's measured achievable matrix peak over the dense one
/// (Accelerator::achievable_fraction), 1 where none is measured; an NVFP4 GEMM takes the FP8 share.
double achievable_matmul_fraction(const Accelerator& acc, Precision precision, const Kernel& k);

/// Fraction of peak a GEMM-like kernel can use once cut into output tiles of at most `max_tile` spread
/// over `units` SMs/CUs (whole tiles, whole waves, split-K for small grids); 1 when unknown.
double tiling_efficiency(const Kernel& k, double units, double max_tile);

/// One kernel's analytic time split: the longer of compute and memory, plus launches.
struct KernelTime {
  double compute_ms = 0, memory_ms = 0, overhead_ms = 0;
  double total_ms() const { return (compute_ms > memory_ms ? compute_ms : memory_ms) + overhead_ms; }
};

/// The analytic time of one kernel on `acc` (the same arithmetic roofline_times applies to every kernel).
KernelTime kernel_time(const Kernel& k, const Accelerator& acc, Precision precision, const RooflineParams& params = {});

/// The factor a misaligned GEMM's compute time takes on `acc` at `precision`: the measured slowdown for TF32
/// and 16-bit GEMMs on NVIDIA GPUs, 1 in FP32 (no tensor cores), FP8 (not measured) or on other vendors'
/// hardware (other libraries, not measured).
double misaligned_slowdown(const Accelerator& acc, Precision precision, const RooflineParams& params = {});
/// The same for kernel `k`: 1 unless it is a misaligned matrix kernel.
double misaligned_slowdown(const Kernel& k, const Accelerator& acc, Precision precision,
                           const RooflineParams& params = {});

/// Times one step of `work` on every accelerator (one Timing per accelerator, same order).
std::vector<Timing> roofline_times(const StepWork& work, const std::vector<Accelerator>& accelerators,
                                   Precision precision, const RooflineParams& params = {});

}  // namespace prenet
