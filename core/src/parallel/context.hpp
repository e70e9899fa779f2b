#pragma once
// Context parallelism (parallel.context; docs/PREDICTION.md, "Context parallelism"), as Megatron-Core runs it
// through TransformerEngine's ring ("p2p", AttnFuncWithCPAndKVP2P): every layer runs on 1/c of each sequence,
// attention's keys and values travel around the ring of the c GPUs in c - 1 steps overlapped with the attention
// of the block at hand, and the causal load balancing (the sequence cut into 2c chunks, GPU i holding chunks i
// and 2c - 1 - i) gives every GPU 1/c of the causal attention.
#include <cstdint>
#include <vector>

#include "prenet/features.hpp"
#include "prenet/hardware.hpp"
#include "prenet/network.hpp"
#include "prenet/parallel.hpp"

namespace prenet {

/// `net` as one GPU of a context group of `c` runs it: every layer's sequence (the leading dimension of the
/// attention layers' inputs) divided by c, each attention layer told to read the keys of all c blocks
/// (LayerAttrs::context). Throws InputError naming parallel.context when c does not divide the sequence in 2c
/// chunks, when the network has no attention or a layer that does not run position by position, and for an
/// attention the ring does not run (eager, cross-attention, cached or relative positions, sliding windows,
/// chunks, sinks, soft-capping). c = 1 returns the network unchanged.
Network split_context(const Network& net, std::int64_t c, const KernelContext& kernels);

/// The tensor shard of `net` split over cfg.context first (Megatron's order: the data loader hands each
/// context rank its chunks, sequence parallelism then splits those over the tensor group).
ShardedNetwork shard_with_context(const Network& net, const ParallelConfig& cfg, const KernelContext& kernels);

/// Elements per sample one ring step sends for attention layer `layer` of a context-split network (its K and
/// V blocks, as TransformerEngine concatenates them); 0 for a layer that is no attention.
double ring_elements(const Layer& layer);

/// Exposed forward ring of one layer and micro-batch on one GPU: c - 1 steps each sending this GPU's current
/// K and V block (`kv_ms`) while the attention of the block at hand runs (1/c of the pass's `attention_ms`):
/// (c - 1) max(0, kv_ms - attention_ms / c).
double ring_forward_ms(std::int64_t c, double kv_ms, double attention_ms);
/// Exposed backward ring: the first step sends K and V, the last dK and dV, the c - 2 between both at once
/// (`kv_dkv_ms`), each beside 1/c of the backward attention: 2 max(0, kv - A/c) + (c - 2) max(0, kv_dkv - A/c).
double ring_backward_ms(std::int64_t c, double kv_ms, double kv_dkv_ms, double attention_ms);

/// Per layer of `shard` (split by shard_with_context), the exposed ring time (ms) of one micro-batch of `work`
/// (its first fused attention kernel of each pass, timed on `acc` and scaled by `compute_scale`), plus the
/// forward ring again for blocks that full recomputation repeats. All zero at context 1.
std::vector<double> context_ring_ms(const ShardedNetwork& shard, const StepWork& work, const ParallelConfig& cfg,
                                    const Fabric& fabric, const Accelerator& acc, Precision precision,
                                    double compute_scale = 1.0);

/// The group gradients are reduced (and ZeRO shards) over: data x context GPUs, Megatron's data-parallel group
/// "with context parallel" (a context group's GPUs hold the same weights and see different tokens).
Communicator gradient_communicator(const ParallelConfig& cfg, const Fabric& fabric);

/// Sequences at least this long are where plan mode tries context degrees > 1 (the long-context recipes).
constexpr std::int64_t kPlanContextMinSequence = 16384;

}  // namespace prenet
