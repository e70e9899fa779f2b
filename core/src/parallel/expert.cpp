// Expert parallelism as Megatron-Core runs it (megatron/core/transformer/moe/token_dispatcher.py
// MoEAlltoAllTokenDispatcher: permute, all-to-all over the expert group, the local experts' grouped GEMM,
// all-to-all back, un-permute; megatron/core/parallel_state.py: expert groups carved out of the tensor x context x
// data ranks of a stage ("MoE parallel folding", expert tensor parallel size 1), expert parameters' gradients
// reduced over the expert-data group).
#include "parallel/expert.hpp"

#include <algorithm>
#include <cstdio>

#include "layers/moe.hpp"
#include "request/options.hpp"

namespace prenet {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }
double d(std::int64_t v) { return static_cast<double>(v); }

/// A factor as a person writes it (1.25, 2).
std::string factor(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

void parse_expert(const Json& section, ParallelConfig& c) {
  std::optional<OptionValue> v = read_parallel_field(section, "expert", "parallel");
  c.expert = v ? v->integer : 1;
  if (c.expert == 1) return;
  // MoE parallel folding: the expert groups are laid over the ranks of one pipeline stage, tensor x context x data.
  const std::int64_t ranks = c.tensor * c.context * c.data;
  if (ranks % c.expert != 0) {
    throw InputError("parallel.expert", "expert degree " + str(c.expert) +
                                            " must divide tensor x context x data = " + str(c.tensor) + " x " +
                                            str(c.context) + " x " + str(c.data) + " = " + str(ranks) +
                                            " (the ranks of a pipeline stage the expert groups are "
                                            "carved out of)");
  }
}

void shard_experts(ShardedNetwork& shard, std::int64_t expert, const KernelContext& context) {
  const std::vector<MoeRole> roles = moe_roles(shard.net);
  bool any = false;
  for (std::size_t l = 0; l < shard.net.layers.size(); ++l) {
    Layer& L = shard.net.layers[l];
    if (!is_expert_layer(L)) continue;
    any = true;
    LayerAttrs& a = L.attrs;
    if (a.experts % expert != 0) {
      throw InputError("parallel.expert", "expert degree " + str(expert) + " must divide the " + str(a.experts) +
                                              " experts of layer \"" + printable(L.name) + "\"");
    }
    if (expert > 1 && L.adapter.rank > 0) {
      throw InputError("parallel.expert", "LoRA adapters on the expert layer \"" + printable(L.name) +
                                              "\" under expert parallelism are not modelled; use expert 1");
    }
    a.expert_shards = expert;
    L.parameters /= expert;
    ShardLayer& sl = shard.layers[l];
    sl.expert_parameters = true;
    // Tokens x top_k rows of the layer's input (dispatch) and output (combine) width, at the critical GPU's load.
    const double load = moe_load_factor(a.experts, expert, context), k = d(a.top_k);
    const Shape& in = L.input_shapes.front();
    if (roles[l].dispatches) sl.dispatch_elements_per_sample = load * k * d(elements(in));
    if (roles[l].combines) sl.combine_elements_per_sample = load * k * d(elements(L.output_shape));
    sl.routed_top_k = k;
    sl.routed_experts = d(a.experts);
  }
  if (expert > 1 && !any) {
    throw InputError("parallel.expert", "expert degree " + str(expert) +
                                            " shards experts, but the network has no mixture-of-experts layer");
  }
}

double expert_exchange_ms(double bytes, const ShardLayer& sl, const Communicator& ep, const Fabric& fabric,
                          ExpertDispatch dispatch) {
  return dispatch == ExpertDispatch::Hierarchical
             ? hierarchical_alltoall_ms(bytes, sl.routed_top_k, sl.routed_experts, ep, fabric)
             : alltoall_ms(bytes, ep, fabric);
}

double expert_alltoall_ms(const ShardLayer& sl, double micro_batch, double e, bool recomputed, const Communicator& ep,
                          const Fabric& fabric, ExpertDispatch dispatch) {
  if (ep.size <= 1) return 0;
  const double pair = expert_exchange_ms(micro_batch * sl.dispatch_elements_per_sample * e, sl, ep, fabric, dispatch) +
                      expert_exchange_ms(micro_batch * sl.combine_elements_per_sample * e, sl, ep, fabric, dispatch);
  return (recomputed ? 3.0 : 2.0) * pair;
}

std::int64_t fewest_experts(const Network& net) {
  std::int64_t fewest = 0;
  for (const Layer& L : net.layers) {
    if (is_expert_layer(L)) fewest = fewest == 0 ? L.attrs.experts : std::min(fewest, L.attrs.experts);
  }
  return fewest;
}

std::string moe_routing_note(const Network& net, const TrainingConfig& training) {
  bool any = false;
  for (const Layer& L : net.layers) any = any || is_expert_layer(L);
  if (!any) return "";
  if (training.moe_capacity_factor) {
    return "mixture of experts: every expert padded to capacity factor " + factor(*training.moe_capacity_factor) +
           " x tokens x top_k / experts (training.moe_capacity_factor)";
  }
  if (training.moe_imbalance != 1.0) {
    return "mixture of experts: dropless, the busiest expert gets " + factor(training.moe_imbalance) +
           " x the mean tokens and the step waits for it (training.moe_imbalance)";
  }
  return "mixture of experts: balanced routing assumed (each expert gets tokens x top_k / experts, dropless); set "
         "training.moe_imbalance for a skewed router or training.moe_capacity_factor for capped experts";
}

}  // namespace prenet
