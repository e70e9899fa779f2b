// Recomputation (activation checkpointing): which forward kernels run again in backward and what each
// layer keeps for backward under each mode (docs/PREDICTION.md, "Memory" and "Recomputation granularity").
#include <algorithm>
#include <string>

#include "layers/layer_kind.hpp"
#include "prenet/parallel.hpp"

namespace prenet {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

}  // namespace

bool recomputed_selectively(const Layer& layer, const Kernel& k, const KernelContext& context) {
  return kind_of(layer.type).recomputed_selectively(layer, k, context);
}

bool recomputed_by_ops(const Layer& layer, const Kernel& k, const KernelContext& context) {
  return kind_of(layer.type).recomputed_by_ops(layer, k, context);
}

bool checkpointed_block(const ShardLayer& layer, Recompute mode, std::int64_t every) {
  // torchtitan's _apply_layer_sac counts the blocks from 1 and wraps those with count % n == 0.
  return mode == Recompute::Full && layer.in_block && (layer.block + 1) % std::max<std::int64_t>(every, 1) == 0;
}

void add_recompute_kernels(StepWork& work, const ShardedNetwork& shard, Recompute mode, std::int64_t every) {
  if (mode == Recompute::None) return;
  const std::size_t count = work.kernels.size();
  for (std::size_t i = 0; i < count; ++i) {
    Kernel k = work.kernels[i];
    if (k.phase != Phase::Forward) continue;
    const auto l = static_cast<std::size_t>(k.layer);
    const Layer& L = shard.net.layers[l];
    bool again = false;
    switch (mode) {
      case Recompute::Full: again = checkpointed_block(shard.layers[l], mode, every); break;
      case Recompute::Ops: again = shard.layers[l].in_block && recomputed_by_ops(L, k, work.context); break;
      case Recompute::Selective: again = recomputed_selectively(L, k, work.context); break;
      case Recompute::None: break;
    }
    if (!again) continue;
    k.phase = Phase::Backward;
    LayerWork& lw = work.layers[l];
    lw.flops[1] += k.flops;
    lw.bytes[1] += k.bytes;
    lw.kernels += 1;
    work.flops[1] += k.flops;
    work.kernels.push_back(k);
  }
}

namespace {

/// Refuses a checkpoint interval the network cannot have: more than its blocks, or none to count.
void check_every(const ShardedNetwork& shard, Recompute mode, std::int64_t every) {
  if (mode != Recompute::Full || every <= 1) return;
  const std::int64_t blocks = block_count(shard);
  if (blocks == 0) throw InputError("parallel.recompute_every", "the model has no repeated blocks to count");
  if (every > blocks) {
    throw InputError("parallel.recompute_every", std::to_string(every) + " is more than the model's " +
                                                     std::to_string(blocks) +
                                                     " blocks (no block would be checkpointed)");
  }
}

/// Per layer, what op-level recomputation keeps of its forward: the outputs of the kernels it does not run
/// again (matmul and fused attention outputs), for the layers inside blocks.
std::vector<double> ops_kept_bytes(const ShardedNetwork& shard, const StepWork& work, double e) {
  std::vector<double> kept(shard.net.layers.size(), 0.0);
  for (const Kernel& k : work.kernels) {
    const auto l = static_cast<std::size_t>(k.layer);
    if (k.phase != Phase::Forward || !shard.layers[l].in_block) continue;
    const Layer& L = shard.net.layers[l];
    if (!recomputed_by_ops(L, k, work.context)) kept[l] += kind_of(L.type).ops_kept_bytes(L, k, e, work.context);
  }
  return kept;
}

}  // namespace

std::vector<double> saved_activation_bytes(const ShardedNetwork& shard, const StepWork& work, Recompute mode,
                                           std::int64_t micro_batch, std::int64_t every) {
  check_every(shard, mode, every);
  const std::size_t n = shard.net.layers.size();
  std::vector<double> out(n, 0.0);
  const double e = activation_bytes(work.context.precision);
  const double b = d(micro_batch);
  const std::vector<double> kept = mode == Recompute::Ops ? ops_kept_bytes(shard, work, e) : std::vector<double>();
  int seen_block = -1;
  for (std::size_t l = 0; l < n; ++l) {
    const Layer& L = shard.net.layers[l];
    const ShardLayer& sl = shard.layers[l];
    double bytes = work.layers[l].saved_activation_bytes;
    if (sl.saved_input_split > 1) {
      // Sequence parallelism: the input saved for the weight gradient is this GPU's slice of the sequence.
      const double input = e * b * d(elements(L.input_shapes.front())) * kind_of(L.type).saved_input_copies(L);
      bytes -= input * (1.0 - 1.0 / d(sl.saved_input_split));
    }
    if (mode == Recompute::Selective) bytes -= kind_of(L.type).selective_dropped_bytes(L, b, e, work.context);
    const bool whole_block = checkpointed_block(sl, mode, every);
    if ((whole_block || mode == Recompute::Ops) && sl.in_block) {
      // A checkpointed block keeps its input (the checkpoint's argument); op-level recomputation also keeps
      // the outputs of its matmuls. The rest is recomputed in backward.
      bytes = mode == Recompute::Ops ? kept[l] : 0.0;
      if (sl.block != seen_block) {
        seen_block = sl.block;
        bytes += e * b * d(elements(L.input_shapes.front()));
      }
    }
    out[l] = std::max(0.0, bytes);
  }
  return out;
}

}  // namespace prenet
