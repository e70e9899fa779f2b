#include "parallel/layout.hpp"

#include <algorithm>
#include <utility>

#include "parallel/context.hpp"
#include "parallel/expert.hpp"
#include "prenet/error.hpp"

namespace prenet {

namespace {

/// Adds the sums of another chunk of the same stage to `to`.
void add_chunk(StageInputs& to, const StageInputs& c) {
  to.params += c.params;
  to.trainable += c.trainable;
  to.frozen_bytes += c.frozen_bytes;
  to.activations += c.activations;
  to.tensors += c.tensors;
  to.largest_param = std::max(to.largest_param, c.largest_param);
  to.largest_block = std::max(to.largest_block, c.largest_block);
  to.largest_saved = std::max(to.largest_saved, c.largest_saved);
  to.loss_saved += c.loss_saved;
  to.largest_frozen_bytes = std::max(to.largest_frozen_bytes, c.largest_frozen_bytes);
}

}  // namespace

std::vector<StageInputs> stage_inputs_of(const ShardedNetwork& shard, const std::vector<double>& saved,
                                         const std::vector<double>& saved_none, const std::vector<std::size_t>& bounds,
                                         std::int64_t virtual_stages) {
  return stage_inputs_of(shard, shard_facts(shard), saved, saved_none, bounds, virtual_stages);
}

std::vector<StageInputs> stage_inputs_of(const ShardedNetwork& shard, const ShardFacts& facts,
                                         const std::vector<double>& saved, const std::vector<double>& saved_none,
                                         const std::vector<std::size_t>& bounds, std::int64_t virtual_stages) {
  const std::size_t chunks = bounds.size() - 1;
  const std::size_t stages = chunks / static_cast<std::size_t>(std::max<std::int64_t>(virtual_stages, 1));
  std::vector<StageInputs> out(stages);
  const std::vector<std::vector<std::size_t>> copies = embedding_copies(shard, bounds);
  // Chunk j runs on stage j mod stages (the interleaved assignment; one chunk per stage without it).
  for (std::size_t j = 0; j < chunks; ++j) {
    StageInputs& in = out[j % stages];
    add_chunk(in, stage_inputs(shard, facts, saved, saved_none, bounds[j], bounds[j + 1]));
    // A copy of the word embeddings (multi-token prediction's in a later chunk): its weights and their states.
    for (std::size_t src : copies[j]) {
      const Layer& layer = shard.net.layers[src];
      in.params += static_cast<double>(layer.parameters);
      in.trainable += static_cast<double>(trainable_parameters(layer));
      in.tensors += trained_tensors(layer);
      in.largest_param = std::max(in.largest_param, static_cast<double>(layer.parameters));
    }
  }
  return out;
}

namespace {

/// The stage whose GPU holds the most (the first of those that tie) and that memory (GB).
std::pair<std::size_t, double> fullest_stage(const std::vector<StageInputs>& stages, const ParallelConfig& cfg,
                                             const TrainingConfig& training) {
  std::pair<std::size_t, double> fullest{0, 0.0};
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const double gb = stage_memory(stages[s], s, cfg, training).total_gb();
    if (s == 0 || gb > fullest.second) fullest = {s, gb};
  }
  return fullest;
}

}  // namespace

MemoryEstimate fullest_memory(const std::vector<StageInputs>& stages, const ParallelConfig& cfg,
                              const TrainingConfig& training) {
  const std::size_t s = fullest_stage(stages, cfg, training).first;
  return stage_memory(stages[s], s, cfg, training);
}

std::vector<double> recompute_ms(const ShardedNetwork& shard, const StepWork& work, const Timing& timing,
                                 Recompute mode, const Accelerator& acc, Precision precision, std::int64_t every,
                                 RecomputeModules modules) {
  const std::size_t n = shard.net.layers.size();
  std::vector<double> extra(n, 0.0);
  if (mode == Recompute::Full) {
    // Whole blocks run forward again: their layers' forward time, which the timing has.
    for (std::size_t l = 0; l < n; ++l) {
      extra[l] = checkpointed_block(shard.layers[l], mode, every) ? timing.layers[l].ms[0] : 0.0;
    }
  } else if (mode != Recompute::None) {
    // Which kernels run again is add_recompute_kernels' rule: those it appends to the forward kernels (it
    // repeats no others, so the rest of the step need not be copied), timed one by one.
    StepWork again;
    again.context = work.context;
    again.layers = work.layers;
    again.kernels.reserve(work.kernels.size());
    for (const Kernel& k : work.kernels) {
      if (k.phase == Phase::Forward) again.kernels.push_back(k);
    }
    const std::size_t forward = again.kernels.size();
    add_recompute_kernels(again, shard, mode, every, modules);
    for (std::size_t i = forward; i < again.kernels.size(); ++i) {
      const Kernel& k = again.kernels[i];
      extra[static_cast<std::size_t>(k.layer)] += kernel_time(k, acc, precision).total_ms();
    }
  }
  return extra;
}

LayoutEvaluator::LayoutEvaluator(const Network& net, const TrainingConfig& training, const Accelerator& acc)
    : net_(net), training_(training), acc_(acc) {}

LayoutEvaluator::Key LayoutEvaluator::key_of(const ParallelConfig& cfg, std::size_t depth) {
  Key k = {cfg.tensor,  cfg.sequence_parallel ? 1 : 0, cfg.expert,
           cfg.context, cfg.micro_batch_size,          static_cast<std::int64_t>(cfg.recompute)};
  for (std::size_t i = depth; i < k.size(); ++i) k[i] = -1;
  return k;
}

void LayoutEvaluator::reuse(const ParallelConfig& cfg, const ShardedNetwork& shard, const StepWork& work) {
  reused_key_ = key_of(cfg, 5);
  reused_shard_ = &shard;
  reused_work_ = &work;
}

bool LayoutEvaluator::reused(const ParallelConfig& cfg) const { return reused_key_ == key_of(cfg, 5); }

const ShardedNetwork* LayoutEvaluator::shard(const ParallelConfig& cfg) {
  const Key key = key_of(cfg, 4);
  if (reused_key_ && Key{(*reused_key_)[0], (*reused_key_)[1], (*reused_key_)[2], (*reused_key_)[3], -1, -1} == key)
    return reused_shard_;
  if (shard_key_ != key) {
    shard_key_ = key;
    shard_.reset();
    facts_.reset();
    try {
      ShardedNetwork s = shard_with_context(net_, cfg, kernel_context(training_));
      shard_experts(s, cfg.expert, kernel_context(training_));
      shard_ = std::move(s);
    } catch (const InputError&) {
      // The network does not split that way: no layout of this shard exists.
    }
  }
  return shard_ ? &*shard_ : nullptr;
}

const StepWork& LayoutEvaluator::work(const ParallelConfig& cfg) {
  if (reused(cfg)) return *reused_work_;
  const Key key = key_of(cfg, 5);
  if (work_key_ != key) {
    const TrainingConfig& tr = training_;
    work_ = step_work(shard(cfg)->net, cfg.micro_batch_size, kernel_context(tr), tr.optimizer, tr.optimizer_impl);
    work_key_ = key;
  }
  return work_;
}

const Timing& LayoutEvaluator::roofline(const ParallelConfig& cfg) {
  const Key key = key_of(cfg, 5);
  if (timing_key_ != key) {
    timing_ = roofline_times(work(cfg), {acc_}, training_.precision).front();
    timing_key_ = key;
  }
  return timing_;
}

const std::vector<double>& LayoutEvaluator::saved(const ParallelConfig& cfg, Recompute mode) {
  ParallelConfig c = cfg;
  c.recompute = mode;
  const Key key = key_of(c, 6);
  std::optional<Key>& slot_key = mode == Recompute::None ? none_key_ : saved_key_;
  std::vector<double>& slot = mode == Recompute::None ? none_ : saved_;
  if (slot_key != key) {
    // The modules are the request's in every layout an evaluator sees: no part of the key.
    slot = saved_activation_bytes(*shard(c), work(c), mode, c.micro_batch_size, 1, c.recompute_modules);
    slot_key = key;
  }
  return slot;
}

const std::vector<StageInputs>& LayoutEvaluator::stages(const ParallelConfig& cfg,
                                                        const std::vector<std::size_t>& bounds) {
  const Key key = key_of(cfg, 6);
  // The bounds alone do not say how chunks group into stages (2 stages of 2 chunks cut like 4 stages).
  if (stages_key_ != key || stage_bounds_ != bounds || stages_virtual_ != cfg.virtual_stages) {
    const std::vector<double>& kept = saved(cfg, cfg.recompute);
    const std::vector<double>& none = saved(cfg, Recompute::None);
    const ShardedNetwork& sharded = *shard(cfg);
    // The reused shard (memory advice) is not shard_: its facts are computed here, not kept.
    if (!shard_ || &sharded != &*shard_) {
      stages_ = stage_inputs_of(sharded, kept, none, bounds, cfg.virtual_stages);
    } else {
      if (!facts_) facts_ = shard_facts(sharded);
      stages_ = stage_inputs_of(sharded, *facts_, kept, none, bounds, cfg.virtual_stages);
    }
    stages_key_ = key;
    stage_bounds_ = bounds;
    stages_virtual_ = cfg.virtual_stages;
  }
  return stages_;
}

MemoryEstimate LayoutEvaluator::fullest(const ParallelConfig& cfg, const std::vector<std::size_t>& bounds) {
  return fullest_memory(stages(cfg, bounds), cfg, training_);
}

double LayoutEvaluator::fullest_gb(const ParallelConfig& cfg, const std::vector<std::size_t>& bounds) {
  return fullest_stage(stages(cfg, bounds), cfg, training_).second;
}

}  // namespace prenet
