// Recomputation (activation checkpointing): which forward kernels run again in backward and what each
// layer keeps for backward under each mode (docs/PREDICTION.md, "Memory" and "Recomputation granularity").
#include <algorithm>

#include "layers/layer_kind.hpp"
#include "prenet/parallel.hpp"

namespace prenet {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

}  // namespace

bool recomputed_selectively(const Layer& layer, const Kernel& k, const KernelContext& context) {
  return kind_of(layer.type).recomputed_selectively(layer, k, context);
}

void add_recompute_kernels(StepWork& work, const ShardedNetwork& shard, Recompute mode) {
  if (mode == Recompute::None) return;
  const std::size_t count = work.kernels.size();
  for (std::size_t i = 0; i < count; ++i) {
    Kernel k = work.kernels[i];
    if (k.phase != Phase::Forward) continue;
    const auto l = static_cast<std::size_t>(k.layer);
    bool again = false;
    if (mode == Recompute::Full) {
      again = shard.layers[l].in_block;
    } else {
      const Layer& L = shard.net.layers[l];
      again = recomputed_selectively(L, k, work.context);
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

std::vector<double> saved_activation_bytes(const ShardedNetwork& shard, const StepWork& work, Recompute mode,
                                           std::int64_t micro_batch) {
  const std::size_t n = shard.net.layers.size();
  std::vector<double> out(n, 0.0);
  const double e = activation_bytes(work.context.precision);
  const double b = d(micro_batch);
  int seen_block = -1;
  for (std::size_t l = 0; l < n; ++l) {
    const Layer& L = shard.net.layers[l];
    double bytes = work.layers[l].saved_activation_bytes;
    if (shard.layers[l].saved_input_split > 1) {
      // Sequence parallelism: the input saved for the weight gradient is this GPU's slice of the sequence.
      const double input = e * b * d(elements(L.input_shapes.front())) * kind_of(L.type).saved_input_copies(L);
      bytes -= input * (1.0 - 1.0 / d(shard.layers[l].saved_input_split));
    }
    if (mode == Recompute::Selective) bytes -= kind_of(L.type).selective_dropped_bytes(L, b, e, work.context);
    if (mode == Recompute::Full && shard.layers[l].in_block) {
      // Only the input of each block instance is kept; the rest is recomputed in backward.
      bytes = 0;
      if (shard.layers[l].block != seen_block) {
        seen_block = shard.layers[l].block;
        bytes = e * b * d(elements(L.input_shapes.front()));
      }
    }
    out[l] = std::max(0.0, bytes);
  }
  return out;
}

}  // namespace prenet
