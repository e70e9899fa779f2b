// Recomputation (activation checkpointing): which forward kernels run again in backward and what each
// layer keeps for backward under each mode (docs/PREDICTION.md, "Memory" and "Recomputation granularity").
#include <algorithm>
#include <string>

#include "layers/layer_kind.hpp"
#include "layers/moe.hpp"
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

/// Whether `modules` holds `m`.
bool has(RecomputeModules modules, RecomputeModule m) { return (modules & module_bit(m)) != 0; }

bool is_row_norm(const Layer& layer) { return layer.type == LayerType::LayerNorm || layer.type == LayerType::RmsNorm; }

/// Where the layers of a network sit in Megatron-Core's transformer layer, as recompute_modules sees them (layers
/// inside blocks only). A region is an MLP or a mixture of experts: the dense layers of a block that read one
/// tensor from outside (its entry: a norm's output, say), with the layers computing only from them (the experts'
/// second matrices, shared experts, gates, their sums), up to the residual add, which reads the stream too.
/// Attention, norms and dropout never join one (Megatron-Core's MLP ends before its bias-dropout-add).
struct ModuleLayout {
  enum Role : unsigned char { None, Norm, MlpNorm, Mlp, Moe };
  // Norm: a norm Megatron-Core keeps as a module of its own (Transformer Engine's layer spec: the input norm of
  // multi-latent attention, the pre-MLP norm of a mixture of experts), which "layernorm" recomputes. MlpNorm: the
  // norm before a dense MLP, fused into its first linear layer (TELayerNormColumnParallelLinear), so inside "mlp".
  std::vector<Role> role;
  std::vector<int> region;        // per layer: its region (-1: none); a fused norm: the region it is fused into
  std::vector<bool> shared;       // per layer: a shared expert's (a mixture's layer beside the routed experts)
  std::vector<bool> act_experts;  // per layer: experts with an activation, whose output "moe_act" drops
  std::vector<int> entry;         // per region: the layer whose output enters it (a fused norm's producer)
  std::vector<bool> moe;          // per region: whether it holds experts
};

/// The layout of `net`'s blocks (`in_block`, per layer).
ModuleLayout module_layout(const ShardedNetwork& shard) {
  const Network& net = shard.net;
  const std::size_t n = net.layers.size();
  ModuleLayout ml;
  ml.role.assign(n, ModuleLayout::None);
  ml.region.assign(n, -1);
  ml.shared.assign(n, false);
  ml.act_experts.assign(n, false);
  std::vector<std::vector<std::size_t>> consumers(n);
  for (std::size_t l = 0; l < n; ++l) {
    for (int in : net.layers[l].inputs) {
      if (in >= 0) consumers[static_cast<std::size_t>(in)].push_back(l);
    }
  }
  auto joins = [](const Layer& L) {
    return L.type != LayerType::Attention && L.type != LayerType::Mla && L.type != LayerType::Dropout &&
           L.type != LayerType::BatchNorm && !is_row_norm(L);
  };
  std::vector<int> region_block;
  for (std::size_t l = 0; l < n; ++l) {
    const Layer& L = net.layers[l];
    const ShardLayer& sl = shard.layers[l];
    if (!sl.in_block || !joins(L) || L.inputs.empty()) continue;
    const int first = L.inputs.front();
    const int first_region = first >= 0 ? ml.region[static_cast<std::size_t>(first)] : -1;
    if (L.type == LayerType::Dense && first_region < 0) {  // a dense layer reading from outside: an entry
      int r = 0;
      while (r < static_cast<int>(ml.entry.size()) && !(ml.entry[r] == first && region_block[r] == sl.block)) ++r;
      if (r == static_cast<int>(ml.entry.size())) ml.entry.push_back(first), region_block.push_back(sl.block);
      ml.region[l] = r;
      continue;
    }
    bool all = first_region >= 0;
    for (int in : L.inputs) all = all && in >= 0 && ml.region[static_cast<std::size_t>(in)] == first_region;
    if (all) ml.region[l] = first_region;
  }
  ml.moe.assign(ml.entry.size(), false);
  for (std::size_t l = 0; l < n; ++l) {
    if (ml.region[l] >= 0 && is_expert_layer(net.layers[l])) ml.moe[static_cast<std::size_t>(ml.region[l])] = true;
  }
  // Shared experts: a mixture's layers that no routed expert of it feeds and whose output is used (the router's
  // is not).
  std::vector<bool> routed(n, false);
  for (std::size_t l = 0; l < n; ++l) {
    const Layer& L = net.layers[l];
    const int r = ml.region[l];
    if (r < 0) continue;
    routed[l] = is_expert_layer(L);
    for (int in : L.inputs) routed[l] = routed[l] || (in >= 0 && routed[static_cast<std::size_t>(in)]);
    const bool moe = ml.moe[static_cast<std::size_t>(r)];
    ml.role[l] = moe ? ModuleLayout::Moe : ModuleLayout::Mlp;
    ml.shared[l] = moe && !routed[l] && !consumers[l].empty();
    ml.act_experts[l] = is_expert_layer(L) && (L.attrs.activation != "none" || L.attrs.gated);
  }
  // The norms: Megatron-Core's own module before multi-latent attention or a mixture of experts; fused into the
  // first linear layer of a dense MLP that alone reads it; fused into the QKV projection before other attention.
  for (std::size_t l = 0; l < n; ++l) {
    if (!shard.layers[l].in_block || !is_row_norm(net.layers[l]) || consumers[l].empty()) continue;
    bool own = false, one_mlp = true;
    const int r = ml.region[consumers[l].front()];
    for (std::size_t c : consumers[l]) {
      const int cr = ml.region[c];
      own = own || net.layers[c].type == LayerType::Mla || (cr >= 0 && ml.moe[static_cast<std::size_t>(cr)]);
      one_mlp = one_mlp && cr >= 0 && cr == r && ml.role[c] == ModuleLayout::Mlp;
    }
    if (own) {
      ml.role[l] = ModuleLayout::Norm;
    } else if (one_mlp) {
      ml.role[l] = ModuleLayout::MlpNorm;
      ml.region[l] = r;
      ml.entry[static_cast<std::size_t>(r)] =
          net.layers[l].inputs.empty() ? kNetworkInput : net.layers[l].inputs.front();
    }
  }
  return ml;
}

/// The region whose checkpoint (tensor_parallel.checkpoint: only its input kept) holds layer `l` under `modules`,
/// the outermost where they nest (moe's holds shared_experts'); -1: none. `shared_only` is set for a checkpoint of
/// the shared experts alone.
int checkpoint_region(const ModuleLayout& ml, std::size_t l, RecomputeModules modules, bool* shared_only = nullptr) {
  if (shared_only != nullptr) *shared_only = false;
  const ModuleLayout::Role role = ml.role[l];
  if (role == ModuleLayout::Moe && has(modules, RecomputeModule::Moe)) return ml.region[l];
  if (ml.shared[l] && has(modules, RecomputeModule::SharedExperts)) {
    if (shared_only != nullptr) *shared_only = true;
    return ml.region[l];
  }
  if ((role == ModuleLayout::Mlp || role == ModuleLayout::MlpNorm) && has(modules, RecomputeModule::Mlp))
    return ml.region[l];
  return -1;
}

/// How many times the modules that rerun layer `l` whole do so: each checkpoint holding it (moe's and
/// shared_experts' nest: the inner one's forward runs again inside the outer's recomputation and once more for
/// its own backward), and layernorm for its norms.
int whole_reruns(const ModuleLayout& ml, std::size_t l, RecomputeModules modules) {
  const ModuleLayout::Role role = ml.role[l];
  int times = 0;
  if (role == ModuleLayout::Norm && has(modules, RecomputeModule::LayerNorm)) ++times;
  if (role == ModuleLayout::Moe && has(modules, RecomputeModule::Moe)) ++times;
  if (ml.shared[l] && has(modules, RecomputeModule::SharedExperts)) ++times;
  if ((role == ModuleLayout::Mlp || role == ModuleLayout::MlpNorm) && has(modules, RecomputeModule::Mlp)) ++times;
  return times;
}

/// How many times selective recomputation of `modules` runs forward kernel `k` of layer `l` again in backward.
int selective_reruns(const ShardedNetwork& shard, const ModuleLayout& ml, std::size_t l, const Kernel& k,
                     const KernelContext& context, RecomputeModules modules) {
  const Layer& L = shard.net.layers[l];
  const LayerKind& kind = kind_of(L.type);
  // core_attn is Korthikanti's selective recomputation, which has always applied to attention anywhere.
  int times =
      has(modules, RecomputeModule::CoreAttn) && kind.recomputed_selectively(L, k, context, RecomputeModule::CoreAttn)
          ? 1
          : 0;
  if (!shard.layers[l].in_block) return times;
  for (RecomputeModule m : {RecomputeModule::MlaUpProj, RecomputeModule::MoeAct}) {
    if (has(modules, m) && kind.recomputed_selectively(L, k, context, m)) ++times;
  }
  return times + whole_reruns(ml, l, modules);
}

}  // namespace

bool recomputed_selectively(const Layer& layer, const Kernel& k, const KernelContext& context) {
  return kind_of(layer.type).recomputed_selectively(layer, k, context, RecomputeModule::CoreAttn);
}

std::vector<int> whole_layer_reruns(const ShardedNetwork& shard, Recompute mode, std::int64_t every,
                                    RecomputeModules modules) {
  const std::size_t n = shard.layers.size();
  std::vector<int> times(n, 0);
  if (mode == Recompute::Full) {
    for (std::size_t l = 0; l < n; ++l) times[l] = checkpointed_block(shard.layers[l], mode, every) ? 1 : 0;
  } else if (mode == Recompute::Selective && (modules & ~kDefaultRecomputeModules) != 0) {
    const ModuleLayout ml = module_layout(shard);
    for (std::size_t l = 0; l < n; ++l) times[l] = shard.layers[l].in_block ? whole_reruns(ml, l, modules) : 0;
  }
  return times;
}

bool recomputed_by_ops(const Layer& layer, const Kernel& k, const KernelContext& context) {
  return kind_of(layer.type).recomputed_by_ops(layer, k, context);
}

bool checkpointed_block(const ShardLayer& layer, Recompute mode, std::int64_t every) {
  // torchtitan's _apply_layer_sac counts the blocks from 1 and wraps those with count % n == 0.
  return mode == Recompute::Full && layer.in_block && (layer.block + 1) % std::max<std::int64_t>(every, 1) == 0;
}

void add_recompute_kernels(StepWork& work, const ShardedNetwork& shard, Recompute mode, std::int64_t every,
                           RecomputeModules modules) {
  if (mode == Recompute::None) return;
  const std::size_t count = work.kernels.size();
  const std::vector<double> mm_share = recomputed_mm_shares(shard, work, mode);
  const ModuleLayout ml = mode == Recompute::Selective ? module_layout(shard) : ModuleLayout{};
  for (std::size_t i = 0; i < count; ++i) {
    Kernel k = work.kernels[i];
    if (k.phase != Phase::Forward) continue;
    const auto l = static_cast<std::size_t>(k.layer);
    const Layer& L = shard.net.layers[l];
    int again = 0;
    switch (mode) {
      case Recompute::Full: again = checkpointed_block(shard.layers[l], mode, every) ? 1 : 0; break;
      case Recompute::Ops:
      case Recompute::TorchtitanOp:
        again = shard.layers[l].in_block && recomputed_by_ops(L, k, work.context) ? 1 : 0;
        if (again == 0 && mm_share[i] > 0) k = partial_gemm(k, mm_share[i]), again = 1;
        break;
      case Recompute::Selective: again = selective_reruns(shard, ml, l, k, work.context, modules); break;
      case Recompute::None: break;
    }
    k.phase = Phase::Backward;
    LayerWork& lw = work.layers[l];
    for (int t = 0; t < again; ++t) {
      lw.flops[1] += k.flops;
      lw.bytes[1] += k.bytes;
      lw.kernels += 1;
      work.flops[1] += k.flops;
      work.kernels.push_back(k);
    }
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

/// Refuses a module the network does not have (core_attn, the default, excepted: it has always applied wherever
/// there is attention), and layernorm or moe_act under FP8 with delayed scaling, which Megatron-Core refuses.
void check_modules(const ShardedNetwork& shard, const ModuleLayout& ml, RecomputeModules modules,
                   const KernelContext& context) {
  const char* field = "parallel.recompute_modules";
  auto any = [&](auto&& pred) {
    for (std::size_t l = 0; l < shard.layers.size(); ++l) {
      if (shard.layers[l].in_block && pred(l)) return true;
    }
    return false;
  };
  struct Need {
    RecomputeModule module;
    bool present;
    const char* missing;
  };
  const Need needs[] = {
      {RecomputeModule::MoeAct, any([&](std::size_t l) { return ml.act_experts[l]; }),
       "the model has no mixture-of-experts layer with an activation inside its blocks"},
      {RecomputeModule::LayerNorm, any([&](std::size_t l) { return ml.role[l] == ModuleLayout::Norm; }),
       "the model has no norm before a multi-latent attention (mla) or mixture-of-experts layer inside its blocks, "
       "the norms Megatron-Core keeps as modules of their own (the others are fused into the linear layer after "
       "them: nothing to recompute)"},
      {RecomputeModule::MlaUpProj, any([&](std::size_t l) { return shard.net.layers[l].type == LayerType::Mla; }),
       "the model has no multi-latent attention (mla) layer inside its blocks"},
      {RecomputeModule::Mlp, any([&](std::size_t l) { return ml.role[l] == ModuleLayout::Mlp; }),
       "the model has no dense MLP inside its blocks (mlp leaves mixture-of-experts layers alone: moe)"},
      {RecomputeModule::Moe, any([&](std::size_t l) { return ml.role[l] == ModuleLayout::Moe; }),
       "the model has no mixture-of-experts layer inside its blocks"},
      {RecomputeModule::SharedExperts, any([&](std::size_t l) { return ml.shared[l]; }),
       "the model's mixture-of-experts layers have no shared experts"},
  };
  for (const Need& need : needs) {
    if (has(modules, need.module) && !need.present) {
      const std::string name = recompute_module_names()[static_cast<std::size_t>(need.module)];
      throw InputError(field, name + ": " + need.missing);
    }
  }
  const bool output_discarding = has(modules, RecomputeModule::LayerNorm) || has(modules, RecomputeModule::MoeAct);
  if (output_discarding && context.precision == Precision::FP8 && context.fp8_recipe == Fp8Recipe::Delayed) {
    throw InputError(field,
                     "layernorm and moe_act under FP8 need a training.fp8_recipe other than delayed (Megatron-Core "
                     "refuses delayed scaling with them)");
  }
}

/// Per layer, selective recomputation's saved bytes for `modules` from `bytes` (saved without recomputation, as
/// sequence parallelism leaves them): the kinds' own drops (core_attn's scores, mla_up_proj's Q, K, V and
/// latent norms); a recomputed norm keeps its input only, and its consumers drop their copy of its output, as
/// moe_act's consumers drop theirs of the activation's (the checkpoints discard those outputs); a checkpointed
/// region keeps only its input, once, unless that is a recomputed norm's output.
std::vector<double> selective_saved(const ShardedNetwork& shard, const StepWork& work, const ModuleLayout& ml,
                                    RecomputeModules modules, std::vector<double> bytes, double b, double e) {
  const std::size_t n = bytes.size();
  const KernelContext& context = work.context;
  const bool norms = has(modules, RecomputeModule::LayerNorm), act = has(modules, RecomputeModule::MoeAct);
  std::vector<bool> kept_entry(ml.entry.size(), false), kept_shared(ml.entry.size(), false);
  for (std::size_t l = 0; l < n; ++l) {
    const Layer& L = shard.net.layers[l];
    const LayerKind& kind = kind_of(L.type);
    const ShardLayer& sl = shard.layers[l];
    if (has(modules, RecomputeModule::CoreAttn))
      bytes[l] -= kind.selective_dropped_bytes(L, b, e, context, RecomputeModule::CoreAttn);
    if (!sl.in_block) continue;
    if (has(modules, RecomputeModule::MlaUpProj))
      bytes[l] -= kind.selective_dropped_bytes(L, b, e, context, RecomputeModule::MlaUpProj);
    if (act) bytes[l] -= kind.selective_dropped_bytes(L, b, e, context, RecomputeModule::MoeAct);
    const LayerWork& lw = work.layers[l];
    if (norms && ml.role[l] == ModuleLayout::Norm) bytes[l] = lw.saved_input_bytes;
    const int producer = L.inputs.empty() ? kNetworkInput : L.inputs.front();
    if (producer >= 0) {
      const auto p = static_cast<std::size_t>(producer);
      if ((norms && ml.role[p] == ModuleLayout::Norm) || (act && ml.act_experts[p]))
        bytes[l] -= lw.saved_input_bytes / d(std::max<std::int64_t>(sl.saved_input_split, 1));
    }
    bool shared_only = false;
    const int r = checkpoint_region(ml, l, modules, &shared_only);
    if (r < 0) continue;
    bytes[l] = 0;
    std::vector<bool>& kept = shared_only ? kept_shared : kept_entry;
    const auto ri = static_cast<std::size_t>(r);
    if (kept[ri]) continue;
    kept[ri] = true;  // the checkpoint's input, once, on its first layer
    const int in = ml.entry[ri];
    const bool discarded = in >= 0 && norms && ml.role[static_cast<std::size_t>(in)] == ModuleLayout::Norm;
    const Shape& shape = in >= 0 ? shard.net.layers[static_cast<std::size_t>(in)].output_shape : L.input_shapes.front();
    if (!discarded) bytes[l] += e * b * d(elements(shape));
  }
  return bytes;
}

}  // namespace

std::vector<double> saved_activation_bytes(const ShardedNetwork& shard, const StepWork& work, Recompute mode,
                                           std::int64_t micro_batch, std::int64_t every, RecomputeModules modules) {
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
    out[l] = bytes;
  }
  if (mode == Recompute::Selective) {
    const ModuleLayout ml = module_layout(shard);
    check_modules(shard, ml, modules, work.context);
    out = selective_saved(shard, work, ml, modules, std::move(out), b, e);
  }
  for (double& bytes : out) bytes = std::max(0.0, bytes);
  return out;
}

}  // namespace prenet
