// Recomputation (activation checkpointing): which forward kernels run again in backward and what each
// layer keeps for backward under each mode (docs/PREDICTION.md, "Memory" and "Recomputation granularity").
#include <algorithm>
#include <string>

#include "layers/layer_kind.hpp"
#include "prenet/json_util.hpp"
#include "prenet/parallel.hpp"

namespace prenet {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

/// The (sharded) layer kinds whose matmuls torchtitan's counter sees as one aten.mm per linear module.
bool counts_mm_by_module(const Layer& layer) {
  return layer.type == LayerType::Attention || (layer.type == LayerType::Dense && layer.attrs.experts <= 1);
}

/// For `layer` (its forward GEMM kernels' indices in `gemms`), the share of each kernel's output columns that
/// torchtitan's op policy recomputes, written into `share`, advancing the block's matmul `count`:
/// the block's linear modules are its aten.mm calls, counted from 1 per block in forward order, and the
/// even-numbered ones run again (`_apply_op_sac`: "saves output of all compute ops, except every second mm").
/// Modules sharing an input are one fused kernel here (Q, K, V; gate and up), in order of first use.
void alternate_mm_shares(const Layer& layer, const std::vector<std::size_t>& gemms, std::int64_t& count,
                         std::vector<double>& share) {
  if (!counts_mm_by_module(layer) || layer.adapter.rank > 0) {
    throw InputError("parallel.recompute",
                     "torchtitan_op counts a block's matmuls module by module, which the core does for attention "
                     "and dense (not mixture-of-experts) layers without LoRA adapters; layer \"" +
                         printable(layer.name) + "\" is not one (use \"ops\" or \"full\")");
  }
  std::vector<int> groups;
  std::vector<double> total, again;
  for (const LinearModule& m : kind_of(layer.type).linear_modules(layer)) {
    const auto at = std::find(groups.begin(), groups.end(), m.input_group);
    const std::size_t g = static_cast<std::size_t>(at - groups.begin());
    if (at == groups.end()) groups.push_back(m.input_group), total.push_back(0), again.push_back(0);
    total[g] += m.out;
    if (++count % 2 == 0) again[g] += m.out;
  }
  if (groups.size() != gemms.size()) {
    throw InputError("parallel.recompute", "torchtitan_op: layer \"" + printable(layer.name) + "\" runs " +
                                               std::to_string(gemms.size()) + " matmuls for " +
                                               std::to_string(groups.size()) +
                                               " groups of linear modules; the core cannot tell which to recompute");
  }
  for (std::size_t g = 0; g < gemms.size(); ++g) share[gemms[g]] = total[g] > 0 ? again[g] / total[g] : 0.0;
}

/// Per kernel of `work`, the share of its output that torchtitan_op recomputes (0 for all but block GEMMs).
std::vector<double> recomputed_mm_shares(const ShardedNetwork& shard, const StepWork& work, Recompute mode) {
  std::vector<double> share(work.kernels.size(), 0.0);
  if (mode != Recompute::TorchtitanOp) return share;
  std::vector<std::vector<std::size_t>> gemms(shard.net.layers.size());
  std::vector<bool> matmuls(shard.net.layers.size(), false);
  for (std::size_t i = 0; i < work.kernels.size(); ++i) {
    const Kernel& k = work.kernels[i];
    const auto l = static_cast<std::size_t>(k.layer);
    if (k.phase != Phase::Forward || !shard.layers[l].in_block || !is_matmul(k.cls)) continue;
    matmuls[l] = true;
    if (k.cls == KernelClass::Gemm) gemms[l].push_back(i);
  }
  std::int64_t count = 0;
  int block = -1;
  for (std::size_t l = 0; l < gemms.size(); ++l) {
    if (!shard.layers[l].in_block) continue;
    if (shard.layers[l].block != block) block = shard.layers[l].block, count = 0;
    if (matmuls[l]) alternate_mm_shares(shard.net.layers[l], gemms[l], count, share);
  }
  return share;
}

/// Kernel `k` with only `share` of its output columns (a GEMM's n), as its recomputation in backward.
Kernel partial_gemm(const Kernel& k, double share) {
  const double elements = k.batch * (k.m * k.k + k.k * k.n + k.m * k.n);
  const double e = elements > 0 ? k.bytes / elements : 0;
  Kernel part = k;
  part.phase = Phase::Backward;
  part.n = k.n * share;
  part.flops = k.flops * share;
  part.bytes = e * k.batch * (k.m * k.k + k.k * part.n + k.m * part.n);
  return part;
}

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
  const std::vector<double> mm_share = recomputed_mm_shares(shard, work, mode);
  for (std::size_t i = 0; i < count; ++i) {
    Kernel k = work.kernels[i];
    if (k.phase != Phase::Forward) continue;
    const auto l = static_cast<std::size_t>(k.layer);
    const Layer& L = shard.net.layers[l];
    bool again = false;
    switch (mode) {
      case Recompute::Full: again = checkpointed_block(shard.layers[l], mode, every); break;
      case Recompute::Ops:
      case Recompute::TorchtitanOp:
        again = shard.layers[l].in_block && recomputed_by_ops(L, k, work.context);
        if (!again && mm_share[i] > 0) k = partial_gemm(k, mm_share[i]), again = true;
        break;
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
/// again (matmul and fused attention outputs; under torchtitan_op less the recomputed matmuls' share), for the
/// layers inside blocks.
std::vector<double> ops_kept_bytes(const ShardedNetwork& shard, const StepWork& work, double e, Recompute mode) {
  std::vector<double> kept(shard.net.layers.size(), 0.0);
  const std::vector<double> mm_share = recomputed_mm_shares(shard, work, mode);
  for (std::size_t i = 0; i < work.kernels.size(); ++i) {
    const Kernel& k = work.kernels[i];
    const auto l = static_cast<std::size_t>(k.layer);
    if (k.phase != Phase::Forward || !shard.layers[l].in_block) continue;
    const Layer& L = shard.net.layers[l];
    if (!recomputed_by_ops(L, k, work.context)) {
      kept[l] += kind_of(L.type).ops_kept_bytes(L, k, e, work.context) * (1.0 - mm_share[i]);
    }
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
  const std::vector<double> kept = op_level(mode) ? ops_kept_bytes(shard, work, e, mode) : std::vector<double>();
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
    if ((whole_block || op_level(mode)) && sl.in_block) {
      // A checkpointed block keeps its input (the checkpoint's argument); op-level recomputation also keeps
      // the outputs of its matmuls. The rest is recomputed in backward.
      bytes = op_level(mode) ? kept[l] : 0.0;
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
