#pragma once
// The one evaluator of a parallel layout (docs/PREDICTION.md, "More than one GPU"): for a ParallelConfig
// on one accelerator kind, the tensor shard, one micro-batch's step work and its roofline, the activations
// kept for backward and the memory of the fullest GPU. Memory advice and plan mode both ask it; it keeps
// the last result of each step, so layouts that differ only in later choices reuse the earlier ones (a
// reference it returns stays valid until it is asked about a layout that differs in that step).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "prenet/features.hpp"
#include "prenet/hardware.hpp"
#include "prenet/memory.hpp"
#include "prenet/network.hpp"
#include "prenet/parallel.hpp"
#include "prenet/roofline.hpp"
#include "prenet/training.hpp"

namespace prenet {

/// What each pipeline stage of `shard` keeps, with the layers split at `bounds` (first layer of each model chunk,
/// then the layer count; chunk j on stage j mod (chunks / virtual_stages)); `saved` and `saved_none` per layer
/// and micro-batch, under the recompute mode and without.
std::vector<StageInputs> stage_inputs_of(const ShardedNetwork& shard, const std::vector<double>& saved,
                                         const std::vector<double>& saved_none, const std::vector<std::size_t>& bounds,
                                         std::int64_t virtual_stages = 1);
/// The same with the shard's facts (shard_facts) computed once by the caller.
std::vector<StageInputs> stage_inputs_of(const ShardedNetwork& shard, const ShardFacts& facts,
                                         const std::vector<double>& saved, const std::vector<double>& saved_none,
                                         const std::vector<std::size_t>& bounds, std::int64_t virtual_stages);

/// Memory of the fullest GPU of `cfg` whose stages keep `stages` (the first stage's when several tie).
MemoryEstimate fullest_memory(const std::vector<StageInputs>& stages, const ParallelConfig& cfg,
                              const TrainingConfig& training);

/// Per layer of `shard`, the time (ms) on `acc` of the forward kernels that recomputation `mode` runs
/// again in backward (`timing`: the roofline of `work`, which has no recomputation kernels yet); with full,
/// those of every `every`-th block; with selective, those of `modules`.
std::vector<double> recompute_ms(const ShardedNetwork& shard, const StepWork& work, const Timing& timing,
                                 Recompute mode, const Accelerator& acc, Precision precision, std::int64_t every = 1,
                                 RecomputeModules modules = kDefaultRecomputeModules);

class LayoutEvaluator {
 public:
  /// Layouts of `net` trained as `training` says, on accelerator `acc` (all three kept by reference).
  LayoutEvaluator(const Network& net, const TrainingConfig& training, const Accelerator& acc);

  /// Takes what a prepared request already holds for its own layout `cfg` (kept by reference): its shard,
  /// and one micro-batch's step work (its recomputation kernels do not change what it saves).
  void reuse(const ParallelConfig& cfg, const ShardedNetwork& shard, const StepWork& work);
  /// Whether `cfg` runs the step work reuse() was given.
  bool reused(const ParallelConfig& cfg) const;

  /// The network split over cfg.context and cfg.tensor GPUs (with cfg.sequence_parallel); nullptr when it does
  /// not split so.
  const ShardedNetwork* shard(const ParallelConfig& cfg);
  /// One micro-batch of cfg.micro_batch_size on one GPU of that shard, which must exist.
  const StepWork& work(const ParallelConfig& cfg);
  /// The roofline timing of work(cfg) on the accelerator.
  const Timing& roofline(const ParallelConfig& cfg);
  /// Bytes per layer one micro-batch of work(cfg) keeps for backward under recomputation `mode`.
  const std::vector<double>& saved(const ParallelConfig& cfg, Recompute mode);
  /// Memory of the fullest GPU of `cfg` with its layers split into the stages `bounds`.
  MemoryEstimate fullest(const ParallelConfig& cfg, const std::vector<std::size_t>& bounds);
  /// Its total (GB) alone, for searches that try many layouts.
  double fullest_gb(const ParallelConfig& cfg, const std::vector<std::size_t>& bounds);

 private:
  /// What selects the shard (tensor, sequence parallel, expert, context), then the step work (+ micro-batch
  /// size), then what it saves (+ recompute mode).
  using Key = std::array<std::int64_t, 6>;  // tensor, sequence_parallel, expert, context, micro_batch_size, recompute
  static Key key_of(const ParallelConfig& cfg, std::size_t depth);
  /// What each stage of `cfg` split at `bounds` keeps.
  const std::vector<StageInputs>& stages(const ParallelConfig& cfg, const std::vector<std::size_t>& bounds);

  const Network& net_;
  const TrainingConfig& training_;
  const Accelerator& acc_;
  std::optional<Key> reused_key_;
  const ShardedNetwork* reused_shard_ = nullptr;
  const StepWork* reused_work_ = nullptr;

  std::optional<Key> shard_key_, work_key_, timing_key_, saved_key_, none_key_, stages_key_;
  std::optional<ShardedNetwork> shard_;  // empty after a refused split
  std::optional<ShardFacts> facts_;      // of shard_, computed on first use
  StepWork work_;
  Timing timing_;
  std::vector<double> saved_, none_;
  std::vector<std::size_t> stage_bounds_;
  std::int64_t stages_virtual_ = 1;
  std::vector<StageInputs> stages_;
};

}  // namespace prenet
