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
  double saved = 0;
  for (const auto& layer : work.layers) saved += layer.saved_activation_bytes;
  m.activations_gb = saved / 1e9;
  m.overhead_gb = kRuntimeOverheadGb;
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
  // Full recomputation rebuilds one block's activations at a time during backward.
  if (cfg.recompute == Recompute::Full) m.activations_gb += in.largest_block / 1e9;
  // Gathered full layers under ZeRO-3 (the current one and the prefetched next), and two gradient
  // buckets in flight under data parallelism.
  if (cfg.zero_stage == 3 && cfg.data > 1) m.temporary_gb += 2.0 * in.largest_param * b.weights16 / 1e9;
  if (cfg.data > 1) m.temporary_gb += 2.0 * kGradientBucketBytes / 1e9;
  m.overhead_gb = kRuntimeOverheadGb;
  return m;
}

MemoryEstimate estimate_stage_memory(const ShardedNetwork& shard, const std::vector<double>& saved,
                                     const std::vector<double>& saved_without_recompute, std::size_t first,
                                     std::size_t last, std::size_t stage, const ParallelConfig& cfg,
                                     const TrainingConfig& training) {
  return stage_memory(stage_inputs(shard, saved, saved_without_recompute, first, last), stage, cfg, training);
}

}  // namespace prenet
