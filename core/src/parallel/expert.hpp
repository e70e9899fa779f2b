#pragma once
// Expert parallelism (parallel.expert; docs/PREDICTION.md, "Mixture of experts"): each mixture-of-experts
// layer's experts sharded over `expert` of a stage's tensor x context x data ranks (whole experts: expert tensor
// parallel size 1), its tokens dispatched to them and combined back by all-to-all, and its parameters' gradients
// reduced over the expert-data group.
#include <cstdint>
#include <string>

#include "prenet/parallel.hpp"

namespace prenet {

/// Reads parallel.expert into `c` (its data, tensor and context degrees resolved): it must divide tensor x context
/// x data. Errors name parallel.expert.
void parse_expert(const Json& section, ParallelConfig& c);

/// Shards the experts of every mixture-of-experts layer of `shard` over `expert` GPUs: each keeps experts /
/// expert of them (their parameters / expert), and records the all-to-all elements per sample its forward
/// dispatches and combines (tokens x top_k x width, at the load moe_load_factor gives under `context`'s
/// routing). Throws InputError naming parallel.expert when `expert` does not divide a layer's experts or the
/// network has none and expert > 1.
void shard_experts(ShardedNetwork& shard, std::int64_t expert, const KernelContext& context);

/// Time (ms) of one dispatch or combine of `bytes` (per member) of layer `sl` over `ep` as `dispatch` runs it.
double expert_exchange_ms(double bytes, const ShardLayer& sl, const Communicator& ep, const Fabric& fabric,
                          ExpertDispatch dispatch);

/// Time (ms) of layer `sl`'s all-to-alls for one micro-batch of `micro_batch` samples at `e` bytes per element
/// over `ep` (Group::Expert): dispatch and combine forward, their gradients backward, and the forward pair again
/// when full recomputation repeats the layer (`recomputed`), each as `dispatch` runs it (flat or hierarchical).
/// Exposed: Megatron-Core's dispatchers wait for them (its overlap of expert communication is an option, off by
/// default).
double expert_alltoall_ms(const ShardLayer& sl, double micro_batch, double e, bool recomputed, const Communicator& ep,
                          const Fabric& fabric, ExpertDispatch dispatch);

/// The fewest experts of a mixture-of-experts layer of `net`; 0 when it has none (plan mode's expert degrees).
std::int64_t fewest_experts(const Network& net);

/// The note a response carries for a network with experts: the routing it assumes (balanced unless
/// training.moe_imbalance or moe_capacity_factor say otherwise); empty for a network without experts.
std::string moe_routing_note(const Network& net, const TrainingConfig& training);

}  // namespace prenet
