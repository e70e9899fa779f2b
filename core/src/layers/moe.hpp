#pragma once
// Mixture of experts (docs/PREDICTION.md, "Mixture of experts"): where the expert MLP routes and combines its
// tokens, how many tokens each local expert's grouped GEMM runs on, and the router's own small kernels.
#include <cstdint>
#include <vector>

#include "layers/layer_kind.hpp"

namespace prenet {

/// Whether `layer` is a mixture-of-experts dense layer (experts > 1).
bool is_expert_layer(const Layer& layer);

/// Per layer of `net`: an expert layer whose input no expert layer produced (through passthrough layers) routes
/// and permutes the tokens; one whose output no expert layer reads un-permutes and combines them.
std::vector<MoeRole> moe_roles(const Network& net);

/// The routed tokens the critical GPU's experts run over the balanced mean tokens x top_k / expert_shards:
/// with a capacity factor c every expert is padded to c x the mean (Megatron's get_capacity with padding);
/// dropless, the busiest of the `experts` gets moe_imbalance x the mean and the GPU holding it waits, the
/// others of its experts / shards keep the mean (all tokens at most: one GPU holding every expert waits for none).
double moe_load_factor(std::int64_t experts, std::int64_t shards, const KernelContext& context);

/// Tokens each of the GPU's experts / shards experts runs on, for `routed` = tokens x top_k of this GPU: the
/// balanced shards x routed / experts (each expert gathers its tokens from every GPU of the expert group)
/// times moe_load_factor.
double tokens_per_local_expert(double routed, std::int64_t experts, std::int64_t shards, const KernelContext& context);

/// The router's work beside its GEMM (a dense layer of its own): the score function (softmax) over
/// tokens x experts, top-k, the load-balancing loss's reduction, and their backward (Megatron-Core's
/// TopKRouter and switch_load_balancing_loss_func); `tokens` of this GPU.
void router_kernels(KernelBuilder& kb, double tokens, double experts, double top_k);

}  // namespace prenet
