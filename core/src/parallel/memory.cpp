#include "prenet/memory.hpp"

#include <algorithm>

namespace prenet {

StateBytes state_bytes(const TrainingConfig& training) {
  const Precision precision = training.precision;
  const Optimizer optimizer = training.optimizer;
  const bool mixed = is_mixed(precision);
  StateBytes b;
  // Mixed precision keeps a 16-bit working copy beside the FP32 master weights and 16-bit gradients.
  b.weights16 = mixed ? 2.0 : 4.0;
  b.master = mixed ? 4.0 : 0.0;
  b.gradients = mixed ? 2.0 : 4.0;
  b.optimizer = optimizer != Optimizer::None ? 4.0 * optimizer_states(optimizer) : 0.0;
  return b;
}

void move_to_host(MemoryEstimate& m, const OffloadShare& share, const TrainingConfig& training) {
  const StateBytes b = state_bytes(training);
  double host = 0;
  if (training.offload != Offload::None) {
    const double updated = share.trained * share.s_opt;  // the parameters this GPU's CPU step updates
    // ZeRO-Offload (Ren et al. 2021; DeepSpeed stage_1_and_2.py): the FP32 weights, the optimizer states and
    // an FP32 gradient partition live in host memory; under FP32 training the host keeps its own FP32 copy.
    const double fp32_weights = b.master > 0 ? b.master : 4.0;
    host += updated * (fp32_weights + b.optimizer + 4.0);
    m.weights_gb -= updated * b.master / 1e9;
    m.optimizer_gb = 0;
    // Gradients leave for the host bucket by bucket: the device keeps two buckets in flight.
    m.gradients_gb = 0;
    if (!share.buckets) m.temporary_gb += 2.0 * kGradientBucketBytes / 1e9;
    if (training.offload == Offload::OptimizerParams) {
      // The 16-bit weights too live on the host and stream in layer by layer (FSDP CPUOffload, ZeRO-Infinity):
      // the device holds the current layer and the prefetched next one.
      // Every weight of the GPU leaves: the 16-bit (or FP32) copy and the frozen ones, whatever ZeRO left it.
      m.weights_gb = 0;
      host += (b.master > 0 ? share.trained * b.weights16 * share.s_w : 0.0) + share.frozen_bytes * share.s_w;
      const double layer =
          std::max(share.trained > 0 ? share.largest_param * b.weights16 : 0.0, share.largest_frozen_bytes);
      if (!share.gathered) m.temporary_gb += 2.0 * layer / 1e9;
    }
  }
  if (training.activation_offload) {
    // torchtune OffloadActivations: saved tensors go to pinned host memory as they are saved; the device keeps
    // the tensors in flight, modelled as two layers' worth (the one computing and the one copying).
    const double device = std::min(share.activations, 2.0 * share.largest_saved);
    host += share.activations;
    m.activations_gb -= (share.activations - device) / 1e9;
  }
  m.host_gb = host / 1e9;
}

MemoryEstimate estimate_memory(const Network& net, const StepWork& work, const TrainingConfig& training) {
  double trained = 0, frozen_bytes = 0;
  for (const Layer& layer : net.layers) {
    trained += static_cast<double>(trainable_parameters(layer));
    if (!layer.trainable) frozen_bytes += static_cast<double>(layer.parameters) * layer.frozen_bytes_per_parameter;
  }
  const StateBytes b = state_bytes(training);
  MemoryEstimate m;
  m.weights_gb = (trained * (b.weights16 + b.master) + frozen_bytes) / 1e9;
  m.gradients_gb = trained * b.gradients / 1e9;
  m.optimizer_gb = trained * b.optimizer / 1e9;
  double saved = 0, largest_saved = 0;
  for (const auto& layer : work.layers) {
    saved += layer.saved_activation_bytes;
    largest_saved = std::max(largest_saved, layer.saved_activation_bytes);
  }
  m.activations_gb = saved / 1e9;
  m.overhead_gb = kRuntimeOverheadGb;
  if (training.offload != Offload::None || training.activation_offload) {
    OffloadShare share;
    share.trained = trained;
    share.frozen_bytes = frozen_bytes;
    share.activations = saved;
    share.largest_saved = largest_saved;
    for (const Layer& layer : net.layers) {
      share.largest_param = std::max(share.largest_param, static_cast<double>(layer.parameters));
      if (!layer.trainable)
        share.largest_frozen_bytes = std::max(share.largest_frozen_bytes,
                                              static_cast<double>(layer.parameters) * layer.frozen_bytes_per_parameter);
    }
    move_to_host(m, share, training);
  }
  return m;
}

StageInputs stage_inputs(const ShardedNetwork& shard, const std::vector<double>& saved,
                         const std::vector<double>& saved_without_recompute, std::size_t first, std::size_t last) {
  StageInputs in;
  double block_acts = 0;
  int block = -1;
  for (std::size_t l = first; l < last; ++l) {
    const Layer& layer = shard.net.layers[l];
    const double p = static_cast<double>(layer.parameters);
    in.params += p;
    in.trainable += static_cast<double>(trainable_parameters(layer));
    if (!layer.trainable) in.frozen_bytes += p * layer.frozen_bytes_per_parameter;
    in.largest_param = std::max(in.largest_param, p);
    in.activations += saved[l];
    in.largest_saved = std::max(in.largest_saved, saved[l]);
    if (!layer.trainable)
      in.largest_frozen_bytes = std::max(in.largest_frozen_bytes, p * layer.frozen_bytes_per_parameter);
    if (shard.layers[l].block != block) {
      block_acts = 0;
      block = shard.layers[l].block;
    }
    if (shard.layers[l].in_block) {
      block_acts += saved_without_recompute[l];
      in.largest_block = std::max(in.largest_block, block_acts);
    }
  }
  return in;
}

MemoryEstimate stage_memory(const StageInputs& in, std::size_t stage, const ParallelConfig& cfg,
                            const TrainingConfig& training) {
  const StateBytes b = state_bytes(training);
  const double dp = static_cast<double>(cfg.data);
  // ZeRO: stage 1 shards optimizer states (and the FP32 master copy, an optimizer state in ZeRO's
  // accounting), stage 2 also gradients, stage 3 also the 16-bit weights.
  const double s_opt = cfg.zero_stage >= 1 ? 1.0 / dp : 1.0;
  const double s_grad = cfg.zero_stage >= 2 ? 1.0 / dp : 1.0;
  const double s_w = cfg.zero_stage >= 3 ? 1.0 / dp : 1.0;
  MemoryEstimate m;
  m.weights_gb = (in.trainable * (b.weights16 * s_w + b.master * s_opt) + in.frozen_bytes * s_w) / 1e9;
  m.gradients_gb = in.trainable * b.gradients * s_grad / 1e9;
  m.optimizer_gb = in.trainable * b.optimizer * s_opt / 1e9;
  // 1F1B keeps the activations of (pipeline - stage) micro-batches on a stage, never more than there are.
  const auto remaining = cfg.pipeline - static_cast<std::int64_t>(stage);
  const double in_flight = static_cast<double>(std::min<std::int64_t>(cfg.micro_batches, remaining));
  m.activations_gb = in.activations * (cfg.pipeline > 1 ? in_flight : 1.0) / 1e9;
  const double kept_activations = m.activations_gb * 1e9;
  // Full recomputation rebuilds one block's activations at a time during backward.
  if (cfg.recompute == Recompute::Full) m.activations_gb += in.largest_block / 1e9;
  // Gathered full layers under ZeRO-3 (the current one and the prefetched next), and two gradient
  // buckets in flight under data parallelism.
  if (cfg.zero_stage == 3 && cfg.data > 1) m.temporary_gb += 2.0 * in.largest_param * b.weights16 / 1e9;
  if (cfg.data > 1) m.temporary_gb += 2.0 * kGradientBucketBytes / 1e9;
  m.overhead_gb = kRuntimeOverheadGb;
  if (training.offload != Offload::None || training.activation_offload) {
    OffloadShare share{in.trainable,
                       in.frozen_bytes,
                       s_opt,
                       s_w,
                       kept_activations,
                       in.largest_saved,
                       in.largest_param,
                       in.largest_frozen_bytes,
                       cfg.data > 1,
                       cfg.zero_stage == 3 && cfg.data > 1};
    move_to_host(m, share, training);
  }
  return m;
}

MemoryEstimate estimate_stage_memory(const ShardedNetwork& shard, const std::vector<double>& saved,
                                     const std::vector<double>& saved_without_recompute, std::size_t first,
                                     std::size_t last, std::size_t stage, const ParallelConfig& cfg,
                                     const TrainingConfig& training) {
  return stage_memory(stage_inputs(shard, saved, saved_without_recompute, first, last), stage, cfg, training);
}

}  // namespace prenet
