#include "parallel/context.hpp"

#include <algorithm>
#include <string>

#include "layers/layer_kind.hpp"
#include "prenet/error.hpp"
#include "prenet/roofline.hpp"

namespace prenet {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }
std::string str(std::int64_t v) { return std::to_string(v); }

bool is_attention(const Layer& layer) { return layer.type == LayerType::Attention || layer.type == LayerType::Mla; }

/// Refuses what TransformerEngine's ring (AttnFuncWithCPAndKVP2P, attn_forward_func_with_cp) does not run:
/// an unfused attention ("UnfusedDotProductAttention ... does not support context parallelism"), sliding
/// windows with cp_comm_type p2p, a non-vanilla softmax (sinks) outside a2a, attention biases (relative
/// positions), and what is not self-attention over this segment alone.
void check_ring_attention(const Layer& L, const KernelContext& kernels) {
  const LayerAttrs& a = L.attrs;
  const std::string layer = "layer \"" + printable(L.name) + "\"";
  auto refuse = [&](const std::string& why) {
    throw InputError("parallel.context", "the ring attention of context parallelism cannot run " + layer + ": " + why);
  };
  if (!fused_attention(kernels.attention)) {
    refuse(
        "it needs a fused attention kernel (TransformerEngine runs context parallelism only with flash or fused "
        "attention); set training.attention to \"flash\"");
  }
  if (L.input_shapes.size() > 1) refuse("cross-attention reads another sequence's keys");
  if (a.memory_len > 0) refuse("cached positions (memory_len) are not modelled");
  if (a.relative || a.disentangled > 0) refuse("relative-position scores are an attention bias the ring does not run");
  if (a.window > 0 || a.chunk > 0) refuse("sliding-window and chunked masks need the all-gather or all-to-all variant");
  if (a.sinks) refuse("attention sinks (a non-vanilla softmax) need the all-to-all variant");
  if (a.softcap > 0) refuse("logit soft-capping is not in the fused kernels the ring calls");
}

/// Kinds whose work on a position depends on that position alone (or, attention, on the ring's keys).
bool splits_by_position(const Layer& L) {
  switch (L.type) {
    case LayerType::Embedding:
    case LayerType::CrossEntropy:
    case LayerType::AdaptiveSoftmax:
    case LayerType::Softmax:
    case LayerType::Attention:
    case LayerType::Mla: return true;
    // Along the features (multi-token prediction's torch.cat of embedding and hidden state) a concatenation is too.
    case LayerType::Concat:
      return !L.input_shapes.empty() && L.input_shapes.front().size() >= 2 &&
             L.attrs.axis == static_cast<std::int64_t>(L.input_shapes.front().size()) - 1;
    default: return kind_of(L.type).token_wise();
  }
}

}  // namespace

Network split_context(const Network& net, std::int64_t c, const KernelContext& kernels) {
  if (c <= 1) return net;
  std::int64_t seq = 0;
  for (const Layer& L : net.layers) {
    if (!is_attention(L)) continue;
    const std::int64_t s = L.input_shapes.front()[0];
    if (seq != 0 && s != seq) {
      throw InputError("parallel.context", "attention layers see sequences of " + str(seq) + " and " + str(s) +
                                               " positions; context parallelism splits one sequence");
    }
    seq = s;
  }
  if (seq == 0) {
    throw InputError("parallel.context",
                     "the network has no attention layer: context parallelism splits the "
                     "sequence of attention layers (ring attention); use parallel.context 1");
  }
  if (seq % c != 0) {
    throw InputError("parallel.context",
                     "context degree " + str(c) + " must divide the sequence of " + str(seq) + " positions");
  }
  if (seq % (2 * c) != 0) {
    throw InputError("parallel.context", "2 x context = " + str(2 * c) + " must divide the sequence of " + str(seq) +
                                             " positions: the load balancing cuts it into 2 x context chunks");
  }
  Network out = net;
  for (Layer& L : out.layers) {
    const std::string layer = "layer \"" + printable(L.name) + "\"";
    // A loss reduces its positions to a scalar (each GPU's partial sum of the loss).
    const bool loss = L.type == LayerType::CrossEntropy || L.type == LayerType::AdaptiveSoftmax;
    bool sequence = L.output_shape.empty() ? loss : L.output_shape[0] == seq;
    for (const Shape& in : L.input_shapes) sequence = sequence && !in.empty() && in[0] == seq;
    if (!splits_by_position(L) || !sequence) {
      throw InputError("parallel.context", layer + " (" + std::string(to_string(L.type)) +
                                               ") does not run position by position over the sequence of " + str(seq) +
                                               ": context parallelism splits every layer's sequence");
    }
    if (is_attention(L)) {
      check_ring_attention(L, kernels);
      L.attrs.context = c;
    }
    for (Shape& in : L.input_shapes) in[0] /= c;
    if (!L.output_shape.empty()) L.output_shape[0] /= c;
  }
  return out;
}

ShardedNetwork shard_with_context(const Network& net, const ParallelConfig& cfg, const KernelContext& kernels) {
  const bool whole_experts = cfg.expert > 1;
  if (cfg.context <= 1) return shard_network(net, cfg.tensor, cfg.sequence_parallel, whole_experts);
  return shard_network(split_context(net, cfg.context, kernels), cfg.tensor, cfg.sequence_parallel, whole_experts);
}

double ring_elements(const Layer& L) {
  const LayerAttrs& a = L.attrs;
  const double s = d(L.input_shapes.front()[0]);
  if (L.type == LayerType::Attention) return s * d(a.num_kv_heads) * d(a.head_dim) * 2;
  // MLA's keys (nope and rope parts) and values after the up-projection, one of each per head.
  if (L.type == LayerType::Mla) return s * d(a.num_heads) * d(a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim);
  return 0;
}

double ring_forward_ms(std::int64_t c, double kv_ms, double attention_ms) {
  if (c <= 1) return 0;
  const double n = d(c);
  return (n - 1) * std::max(0.0, kv_ms - attention_ms / n);
}

double ring_backward_ms(std::int64_t c, double kv_ms, double kv_dkv_ms, double attention_ms) {
  if (c <= 1) return 0;
  const double n = d(c), step = attention_ms / n;
  return 2 * std::max(0.0, kv_ms - step) + (n - 2) * std::max(0.0, kv_dkv_ms - step);
}

std::vector<double> context_ring_ms(const ShardedNetwork& shard, const StepWork& work, const ParallelConfig& cfg,
                                    const Fabric& fabric, const Accelerator& acc, Precision precision,
                                    double compute_scale) {
  const std::size_t n = shard.net.layers.size();
  std::vector<double> out(n, 0.0);
  if (cfg.context <= 1) return out;
  // Each pass's attention is the layer's first fused (batched) kernel of that phase: recomputation's copies
  // come after the layer's own kernels.
  std::vector<double> forward(n, -1.0), backward(n, -1.0);
  for (const Kernel& k : work.kernels) {
    const auto l = static_cast<std::size_t>(k.layer);
    if (k.cls != KernelClass::BatchedGemm || !is_attention(shard.net.layers[l])) continue;
    double& slot = k.phase == Phase::Forward ? forward[l] : backward[l];
    if (slot < 0) slot = kernel_time(k, acc, precision).total_ms() * compute_scale;
  }
  const Communicator ring = communicator(cfg, fabric, Group::Context);
  const double e = activation_bytes(precision) * d(cfg.micro_batch_size);
  for (std::size_t l = 0; l < n; ++l) {
    const Layer& L = shard.net.layers[l];
    if (L.attrs.context <= 1 || forward[l] < 0) continue;
    const double kv = e * ring_elements(L);
    const double kv_ms = p2p_ms(kv, ring, fabric), kv_dkv_ms = p2p_ms(2 * kv, ring, fabric);
    const double once = ring_forward_ms(cfg.context, kv_ms, forward[l]);
    // Full recomputation runs the block's forward, ring included, again in backward.
    const bool again = cfg.recompute == Recompute::Full && shard.layers[l].in_block;
    out[l] = (again ? 2 : 1) * once + ring_backward_ms(cfg.context, kv_ms, kv_dkv_ms, std::max(0.0, backward[l]));
  }
  return out;
}

Communicator gradient_communicator(const ParallelConfig& cfg, const Fabric& fabric) {
  ParallelConfig group = cfg;
  group.data = cfg.data * cfg.context;  // the data ranks of every context rank: consecutive in tp-cp-ep-dp-pp order
  group.context = 1;
  return communicator(group, fabric, Group::Data);
}

}  // namespace prenet
