#pragma once
// The time of offload to host memory (training.offload, training.activation_offload; docs/PREDICTION.md, Offload):
// transfers over the host link, the CPU optimizer step at host memory bandwidth, and what hides behind compute.
#include <array>
#include <cstdint>
#include <vector>

#include "prenet/hardware.hpp"
#include "prenet/network.hpp"
#include "prenet/parallel.hpp"
#include "prenet/roofline.hpp"
#include "prenet/training.hpp"

namespace prenet {

/// What one GPU moves over its host link in one step.
struct OffloadTraffic {
  double updated = 0;              // parameters its CPU optimizer step updates (its ZeRO share of the trained ones)
  double streamed_bytes = 0;       // bytes of weights streamed in per pass (optimizer_params)
  double largest_layer_bytes = 0;  // of those, the largest layer's (its first load is not hidden)
  double backward_ms = 0;          // all backward passes of the step (gradient copies hide behind them)
  double compute_ms = 0;           // all forward and backward passes (weight streaming hides behind them)
  double passes = 1;               // micro-batches of the step
  std::vector<std::array<double, 3>> layers;  // per layer, one pass: saved bytes, forward ms, backward ms
  std::int64_t gpus_on_host = 1;              // GPUs of the job sharing the host's memory bandwidth
};

/// The step's offload time in parts (ms), each already what is not hidden behind compute.
struct OffloadTime {
  double gradients_ms = 0, cpu_step_ms = 0, parameters_ms = 0, activations_ms = 0;
  double total_ms() const { return gradients_ms + cpu_step_ms + parameters_ms + activations_ms; }
};

/// True when the request moves anything to host memory.
bool offloads(const TrainingConfig& training);
/// Refuses what offload cannot model: optimizer offload without an optimizer; errors name training.offload.
void check_offload(const TrainingConfig& training);
/// GPUs of a job of `job_gpus` sharing one host of `host` (the host's memory and bandwidth split among them).
std::int64_t gpus_on_host(const HostSpec& host, std::int64_t job_gpus);

/// Exposed time (ms) of one pass's activation copies over `host`'s link: per layer of `layers` (saved bytes, forward
/// ms, backward ms, in run order), a saving layer's copy hides behind the compute from it to the next saving layer,
/// out in forward and back in backward; what sticks out of each window is exposed.
double exposed_activation_copies_ms(const std::vector<std::array<double, 3>>& layers, const HostSpec& host);

/// The offload time of `traffic` on `host` under `training`.
OffloadTime offload_time(const OffloadTraffic& traffic, const TrainingConfig& training, const HostSpec& host);

/// One GPU without `parallel`: the whole network, its step work and the timing's per-layer times (x `factor`).
OffloadTraffic single_gpu_traffic(const Network& net, const StepWork& work, const Timing& timing, double factor,
                                  const TrainingConfig& training, const HostSpec& host);
/// The critical stage of a parallel step: its layers of `shard`, `saved` per layer and micro-batch, `layer_ms`
/// (forward, backward, optimizer per layer and micro-batch), the composed step `pt`.
OffloadTraffic stage_traffic(const ShardedNetwork& shard, const std::vector<double>& saved,
                             const std::vector<std::array<double, 3>>& layer_ms, const ParallelTiming& pt,
                             const ParallelConfig& cfg, const TrainingConfig& training, const HostSpec& host);

}  // namespace prenet
