// Mixture of experts: the expert MLP's roles, its per-expert token counts and the router's small kernels
// (Megatron-Core megatron/core/transformer/moe: router.py TopKRouter, moe_utils.py get_capacity and
// switch_load_balancing_loss_func, token_dispatcher.py, experts.py GroupedMLP).
#include "layers/moe.hpp"

#include <algorithm>

#include "layers/kind_helpers.hpp"

namespace prenet {

bool is_expert_layer(const Layer& layer) { return layer.type == LayerType::Dense && layer.attrs.experts > 1; }

std::vector<MoeRole> moe_roles(const Network& net) {
  const std::size_t n = net.layers.size();
  std::vector<std::vector<std::size_t>> consumers(n);
  for (std::size_t l = 0; l < n; ++l) {
    for (int in : net.layers[l].inputs) {
      if (in != kNetworkInput) consumers[static_cast<std::size_t>(in)].push_back(l);
    }
  }
  auto single_input_passthrough = [&](std::size_t l) {
    const Layer& L = net.layers[l];
    return L.inputs.size() == 1 && kind_of(L.type).passthrough();
  };
  std::vector<MoeRole> roles(n);
  for (std::size_t l = 0; l < n; ++l) {
    if (!is_expert_layer(net.layers[l])) continue;
    // Back through passthrough layers to the producer of the tokens.
    int producer = net.layers[l].inputs.empty() ? kNetworkInput : net.layers[l].inputs.front();
    while (producer != kNetworkInput && single_input_passthrough(static_cast<std::size_t>(producer)))
      producer = net.layers[static_cast<std::size_t>(producer)].inputs.front();
    roles[l].dispatches = producer == kNetworkInput || !is_expert_layer(net.layers[static_cast<std::size_t>(producer)]);
    // On through a chain of single consumers that pass through.
    std::size_t cur = l;
    while (consumers[cur].size() == 1 && single_input_passthrough(consumers[cur][0])) cur = consumers[cur][0];
    roles[l].combines = !(consumers[cur].size() == 1 && is_expert_layer(net.layers[consumers[cur][0]]));
  }
  return roles;
}

double moe_load_factor(std::int64_t experts, std::int64_t shards, const KernelContext& context) {
  if (context.moe_capacity_factor > 0) return context.moe_capacity_factor;
  const double local = d(experts) / d(std::max<std::int64_t>(shards, 1));
  return std::min(local - 1 + context.moe_imbalance, d(experts)) / local;
}

double tokens_per_local_expert(double routed, std::int64_t experts, std::int64_t shards, const KernelContext& context) {
  return moe_load_factor(experts, shards, context) * d(shards) * routed / d(experts);
}

void router_kernels(KernelBuilder& kb, double tokens, double experts, double top_k) {
  const double scores = tokens * experts;
  // Forward: softmax over each token's expert logits (as the softmax layer counts it), top-k reading the
  // scores and writing top_k probabilities and indices per token, and the auxiliary loss reading the scores
  // once against the tokens per expert (a multiply-add each).
  kb.stream(KernelClass::Softmax, Phase::Forward, scores, 2, 5);
  kb.stream(KernelClass::Elementwise, Phase::Forward, scores, 1 + 2 * top_k / experts, 1);
  kb.stream(KernelClass::Elementwise, Phase::Forward, scores, 1, 2);
  // Backward: the loss's gradient on the scores, then the top-k probabilities' gradient scattered into the
  // scores and through the softmax.
  kb.stream(KernelClass::Elementwise, Phase::Backward, scores, 2, 1);
  kb.stream(KernelClass::Softmax, Phase::Backward, scores, 3, 4);
}

}  // namespace prenet
