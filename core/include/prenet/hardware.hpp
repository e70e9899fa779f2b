#pragma once
// Accelerators: the catalogue (core/data/hardware.json) and custom entries from requests.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "prenet/json_util.hpp"
#include "prenet/training.hpp"

namespace prenet {

/// The host a device sits in (core/data/hardware.json `host`, docs/HARDWARE.md): what offload to host memory uses.
struct HostSpec {
  double memory_gb = 0;             // host RAM of the node
  double memory_bandwidth_gbs = 0;  // the node's memory bandwidth, all sockets (datasheet peak)
  double link_gbs = 0;              // host <-> device per device, one direction, achievable
  std::int64_t gpus = 1;            // devices sharing the host
};
/// The host of a custom accelerator that names none (or the fields it leaves out): a typical 8-GPU PCIe Gen4
/// server (768 GB, 2 sockets of 8-channel DDR4-3200: 409.6 GB/s, PCIe Gen4 x16: 25 GB/s per direction).
HostSpec default_host();

/// The library of a fused attention kernel: cuDNN's (TransformerEngine, PyTorch SDPA's cuDNN backend), the
/// flash_attn package's FlashAttention-2 (PyTorch SDPA's flash backend), or whichever of the two PyTorch SDPA
/// picks on the accelerator that times it (`Accelerator::pytorch_attention`).
enum class FusedAttentionLibrary { None = 0, Cudnn = 1, Flash = 2, PyTorchDefault = 3 };

/// Measured fused attention on one accelerator and library (catalogue `fused_attention`): a pass takes its
/// visible-block FLOPs / (efficiency x 16-bit peak) + overhead. Zero efficiency: not measured.
struct FusedAttentionTiming {
  double forward = 0, backward = 0;                          // fraction of the 16-bit dense peak
  double forward_overhead_ms = 0, backward_overhead_ms = 0;  // fixed cost per pass
  // The efficiencies' multipliers at a head width of 64 or less (catalogue `narrow_heads`; 1: not measured); the
  // efficiencies themselves are those of heads 128 wide.
  double narrow_forward = 1, narrow_backward = 1;
};

/// Measured flash-linear-attention delta-rule kernels (catalogue `delta_rule`): per direction the rate (TFLOP/s) the
/// chunk kernels reach with many value heads, and the heads at which they reach half of it; 0: none measured.
struct DeltaRuleTiming {
  double forward_tflops = 0, forward_half_heads = 0, backward_tflops = 0, backward_half_heads = 0;
};

/// Measured Mamba-2 chunk scans (catalogue `ssd`: mamba_ssm's mamba_chunk_scan_combined forward): the rate (TFLOP/s)
/// the scan reaches and the fixed cost of its launches; a rate of 0: none measured.
struct SsdTiming {
  double forward_tflops = 0, forward_overhead_ms = 0;
};

struct Accelerator {
  std::string id;
  std::string name;
  std::string vendor;
  bool custom = false;
  double memory_gb = 0;
  double memory_bandwidth_gbs = 0;
  /// Dense peak TFLOP/s by Precision (index = enum value); empty when the part lacks that precision.
  std::optional<double> peak_tflops[5];
  /// Dense FP4 (NVFP4) tensor-core peak TFLOP/s (catalogue `peak_tflops.fp4`): not a training precision, the rate
  /// of training.fp8_recipe nvfp4's GEMMs; empty when the part has none.
  std::optional<double> fp4_peak_tflops;
  double compute_units = 0;  // SMs / CUs; 0 when unknown
  double l2_cache_mb = 0;
  std::optional<double> price_per_hour_usd;
  HostSpec host;
  /// Mask block (positions) of the fused attention timings, and the timings by FusedAttentionLibrary; a
  /// block of 0 means none measured.
  double fused_attention_block = 0;
  FusedAttentionTiming fused_attention[3];
  /// The library PyTorch SDPA runs on this part by default (catalogue `fused_attention.pytorch`; Flash when
  /// absent).
  FusedAttentionLibrary pytorch_attention = FusedAttentionLibrary::Flash;
  DeltaRuleTiming delta_rule;
  SsdTiming ssd;
  Json record;  // the full catalogue record, returned by catalog()

  /// Measured achievable matrix TFLOP/s by Precision (catalogue `achievable_tflops`: the best a matmul reaches
  /// over a sweep of shapes); empty where none is measured.
  std::optional<double> achievable_tflops[5];

  /// Peak for matrix work at `p`; nullopt when unsupported.
  std::optional<double> peak(Precision p) const { return peak_tflops[static_cast<int>(p)]; }
  /// The share of the dense peak at `p` a matrix kernel can reach: achievable / peak, 1 where none is measured.
  double achievable_fraction(Precision p) const {
    const auto& achievable = achievable_tflops[static_cast<int>(p)];
    const auto& dense = peak_tflops[static_cast<int>(p)];
    return achievable && dense ? *achievable / *dense : 1.0;
  }
};

/// The built-in catalogue, parsed once from the embedded JSON.
const std::vector<Accelerator>& hardware_catalogue();
/// Looks up a catalogue id; nullptr when unknown.
const Accelerator* find_hardware(const std::string& id);
/// Parses a catalogue record or a custom accelerator object; errors name `path`.
Accelerator parse_accelerator(const Json& record, const std::string& path, bool custom);

}  // namespace prenet
