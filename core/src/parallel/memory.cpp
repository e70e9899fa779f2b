#include "prenet/memory.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "layers/fp8.hpp"
#include "layers/layer_kind.hpp"
#include "request/options.hpp"

namespace prenet {

TrainedTensors& TrainedTensors::operator+=(const TrainedTensors& o) {
  elements += o.elements;
  matrices += o.matrices;
  factored += o.factored;
  hidden += o.hidden;
  large += o.large;
  blocks += o.blocks;
  largest = std::max(largest, o.largest);
  linear += o.linear;
  frozen_gradients += o.frozen_gradients;
  return *this;
}

namespace {

/// True for the output head: role lm_head, or a plain dense matrix (no role of its own) of a layer named
/// "lm_head" (every Hugging Face family's reader names its head so; finetune.cpp's dense_roles does the same).
bool is_head(const LinearModule& m, const Layer& layer) {
  if (!m.role.empty()) return m.role == "lm_head";
  const auto dot = layer.name.rfind('.');
  return (dot == std::string::npos ? layer.name : layer.name.substr(dot + 1)) == "lm_head";
}

/// The layer's own weight matrices, in x out (copies): its kind's linear_modules; the head is no hidden matrix.
std::vector<TrainedMatrix> own_matrices(const Layer& layer) {
  std::vector<TrainedMatrix> out;
  for (const LinearModule& m : kind_of(layer.type).linear_modules(layer)) {
    out.push_back({m.in, m.out, m.copies, !is_head(m, layer)});
  }
  return out;
}

}  // namespace

std::vector<TrainedMatrix> trained_matrices(const Layer& layer) {
  std::vector<TrainedMatrix> out;
  if (layer.trainable) out = own_matrices(layer);
  const double rank = static_cast<double>(layer.adapter.rank);
  if (rank <= 0) return out;
  for (const LinearModule& w : layer.adapter.modules) {
    const bool hidden = !is_head(w, layer);
    out.push_back({w.in, rank, w.copies, hidden});   // A
    out.push_back({rank, w.out, w.copies, hidden});  // B
  }
  return out;
}

TrainedTensors trained_tensors(const Layer& layer) {
  TrainedTensors t;
  t.elements = t.largest = static_cast<double>(trainable_parameters(layer));
  t.frozen_gradients = static_cast<double>(gradient_parameters(layer) - trainable_parameters(layer));
  auto add = [&t](double rows, double cols, double copies, bool hidden) {
    const double n = rows * cols;
    t.matrices += n * copies;
    t.factored += (rows + cols) * copies;
    if (hidden) t.hidden += n * copies;
    if (n >= kMin8bitElements) {
      t.large += n * copies;
      t.blocks += std::ceil(n / kStateBlock) * copies;
    }
  };
  for (const TrainedMatrix& m : trained_matrices(layer)) {
    add(m.rows, m.cols, m.copies, m.hidden);
    t.linear += m.rows * m.cols * m.copies;
  }
  // An embedding's table is a matrix (vocab x width) to Adafactor and bitsandbytes; Muon leaves it to AdamW.
  const double vocab = static_cast<double>(layer.attrs.vocab_size);
  if (layer.trainable && layer.type == LayerType::Embedding && vocab > 0 && t.elements > t.matrices) {
    add(vocab, (t.elements - t.matrices) / vocab, 1, false);
  }
  // The rest (biases, norm scales) are vectors, taken as each under bitsandbytes' min_8bit_size.
  t.matrices = std::min(t.matrices, t.elements);
  t.hidden = std::min(t.hidden, t.elements);
  t.large = std::min(t.large, t.elements);
  t.linear = std::min(t.linear, t.elements);
  return t;
}

double optimizer_state_bytes(const TrainedTensors& t, const TrainingConfig& training) {
  const Optimizer o = training.optimizer;
  const double se = state_element_bytes(o, training.master_weights);
  switch (o) {
    case Optimizer::None: return 0;
    // bitsandbytes (optim/optimizer.py Optimizer2State.init_state): two uint8 states and one FP32 absmax per
    // 256-element block each for tensors of >= min_8bit_size elements; two FP32 states for smaller ones.
    case Optimizer::AdamW8bit:
    case Optimizer::PagedAdamW8bit: return 2 * (t.large + 4 * t.blocks) + 2 * 4 * (t.elements - t.large);
    // transformers' Adafactor (beta1 None): exp_avg_sq_row and _col (FP32) for tensors of 2 or more dimensions,
    // exp_avg_sq for the rest.
    case Optimizer::Adafactor: return 4 * (t.factored + (t.elements - t.matrices));
    // Muon: a momentum buffer per hidden matrix; AdamW's two states for everything else.
    case Optimizer::Muon: return se * t.hidden + 2 * se * (t.elements - t.hidden);
    default: return optimizer_states(o) * se * t.elements;
  }
}

double gradient_bytes(const TrainedTensors& t, const TrainingConfig& training) {
  const double per_parameter = state_bytes(training).gradients;
  return ((training.optimizer_in_backward ? t.largest : t.elements) + t.frozen_gradients) * per_parameter;
}

StateBytes state_bytes(const TrainingConfig& training) {
  const Precision precision = training.precision;
  const bool mixed = is_mixed(precision);
  const bool pure_bf16 = training.master_weights == MasterWeights::BF16;
  StateBytes b;
  // Mixed precision keeps a 16-bit working copy beside the FP32 master weights and 16-bit gradients; pure bf16
  // (master_weights bf16) keeps only the bf16 weights.
  b.weights16 = mixed || pure_bf16 ? 2.0 : 4.0;
  b.master = mixed && !pure_bf16 ? 4.0 : 0.0;
  b.gradients = mixed || pure_bf16 ? 2.0 : 4.0;
  b.compute = b.weights16;
  // Under FP32 training every framework keeps FP32 weights and gradients and nothing else: the accountings
  // coincide (autocast is refused there by check_state_accounting; pure bf16 takes only deepspeed).
  if (mixed && !pure_bf16) {
    switch (training.state_accounting) {
      case StateAccounting::DeepSpeed: break;
      // Megatron-LM: 16-bit parameters, FP32 main parameters in the optimizer and FP32 main gradients
      // (docs/source/api-guide/dist_optimizer.md: "float16 param, fp32 grads: 18", distributed "6 + 12/d").
      case StateAccounting::Megatron: b.gradients = 4.0; break;
      // Megatron-LM with grad_reduce_in_fp32 off (--accumulate-allreduce-grads-in-fp32 not given; Megatron-Bridge's
      // performance recipes, perf_recipes/_common.py _benchmark_common): 16-bit main gradients, FP32 main weights.
      case StateAccounting::MegatronBf16: break;
      // torch.autocast: the module's FP32 parameters are the optimizer's, gradients FP32; each linear weight is
      // cast to 16 bits per forward, and the cast is saved for backward.
      case StateAccounting::Autocast:
        b.weights16 = b.compute = 4.0;
        b.master = 0.0;
        b.gradients = 4.0;
        b.casts = 2.0;
        break;
      // FSDP2 MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32): sharded FP32 parameters (the
      // optimizer's) and FP32 sharded gradients; the all-gather casts to 16 bits, unsharded per layer only.
      case StateAccounting::Fsdp:
        b.weights16 = 0.0;
        b.compute = 2.0;
        b.gradients = 4.0;
        break;
    }
  }
  // Per parameter of a large hidden matrix (a plain tensor's rate).
  TrainedTensors unit;
  unit.elements = unit.matrices = unit.hidden = unit.large = 1;
  unit.blocks = 1 / kStateBlock;
  b.optimizer = optimizer_state_bytes(unit, training);
  return b;
}

void check_state_accounting(const TrainingConfig& training, const ParallelConfig* parallel) {
  const StateAccounting a = training.state_accounting;
  if (a == StateAccounting::DeepSpeed) return;
  const std::string field = "training.state_accounting";
  const std::string name = choice_name("state_accounting", static_cast<std::size_t>(a));
  if (a == StateAccounting::Autocast && !is_mixed(training.precision)) {
    throw InputError(field, std::string("autocast computes in 16 bits, which precision ") +
                                to_string(training.precision) +
                                " does not; under FP32 training every accounting keeps 4 + 4 bytes (leave it out)");
  }
  if (training.master_weights == MasterWeights::BF16) {
    const bool megatron = a == StateAccounting::Megatron || a == StateAccounting::MegatronBf16;
    throw InputError(field, name + " keeps FP32 " + (megatron ? "main weights" : "weights") +
                                ", which master_weights bf16 (pure bf16) has none of; leave state_accounting out");
  }
  if (training.offload == Offload::Optimizer && a != StateAccounting::DeepSpeed) {
    throw InputError(field, name +
                                " with offload optimizer is not modelled: ZeRO-Offload is DeepSpeed's "
                                "(state_accounting deepspeed)");
  }
  if (training.offload == Offload::OptimizerParams && a != StateAccounting::Fsdp) {
    throw InputError(field, name +
                                " with offload optimizer_params is not modelled (FSDP CPUOffload: "
                                "state_accounting fsdp; ZeRO-Infinity: deepspeed)");
  }
  if (a == StateAccounting::Fsdp && parallel && parallel->data > 1 && parallel->zero_stage != 3) {
    throw InputError(field, "fsdp shards parameters, gradients and states over the " + std::to_string(parallel->data) +
                                " data-parallel ranks: set parallel.fsdp true (zero_stage 3), not zero_stage " +
                                std::to_string(parallel->zero_stage));
  }
}

namespace {

/// Parameters of the layer of `net` with the most.
double largest_param(const Network& net) {
  double largest = 0;
  for (const Layer& layer : net.layers) largest = std::max(largest, static_cast<double>(layer.parameters));
  return largest;
}

/// Bytes the state accounting adds beside the persistent states: FSDP's 16-bit copies of the layer gathered and
/// the one prefetched (it keeps no other), autocast's casts of every linear weight the GPU trains.
double state_temporary_bytes(const StateBytes& b, const TrainedTensors& tensors, double largest_param) {
  const double gathered = b.weights16 == 0 ? 2.0 * largest_param * b.compute : 0.0;
  return gathered + b.casts * tensors.linear;
}

}  // namespace

std::vector<bool> loss_side_layers(const Network& net) {
  std::vector<bool> side(net.layers.size(), false);
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    if (net.layers[l].type != LayerType::CrossEntropy) continue;
    side[l] = true;
    for (int producer : net.layers[l].inputs) {
      if (producer >= 0 && static_cast<std::size_t>(producer) < side.size())
        side[static_cast<std::size_t>(producer)] = true;
    }
  }
  return side;
}

void move_to_host(MemoryEstimate& m, const OffloadShare& share, const TrainingConfig& training) {
  const StateBytes b = state_bytes(training);
  double host = 0;
  if (training.offload != Offload::None) {
    const double updated = share.trained * share.s_opt;  // the parameters this GPU's CPU step updates
    // ZeRO-Offload (Ren et al. 2021; DeepSpeed stage_1_and_2.py): the FP32 weights, the optimizer states and
    // an FP32 gradient partition live in host memory; under FP32 training the host keeps its own FP32 copy.
    const double fp32_weights = b.master > 0 ? b.master : 4.0;
    host += updated * (fp32_weights + b.optimizer + 4.0);
    m.weights_gb -= updated * b.master / 1e9;
    m.optimizer_gb = 0;
    // Gradients leave for the host bucket by bucket: the device keeps two buckets in flight.
    m.gradients_gb = 0;
    if (!share.buckets) m.temporary_gb += 2.0 * kGradientBucketBytes / 1e9;
    if (training.offload == Offload::OptimizerParams) {
      // The 16-bit weights too live on the host and stream in layer by layer (FSDP CPUOffload, ZeRO-Infinity):
      // the device holds the current layer and the prefetched next one.
      // Every weight of the GPU leaves: the 16-bit (or FP32) copy and the frozen ones, whatever ZeRO left it.
      m.weights_gb = 0;
      host += (b.master > 0 ? share.trained * b.weights16 * share.s_w : 0.0) + share.frozen_bytes * share.s_w;
      const double layer =
          std::max(share.trained > 0 ? share.largest_param * b.compute : 0.0, share.largest_frozen_bytes);
      if (!share.gathered) m.temporary_gb += 2.0 * layer / 1e9;
    }
  }
  if (training.activation_offload) {
    // torchtune OffloadActivations: saved tensors go to pinned host memory as they are saved; the device keeps
    // the tensors in flight, modelled as two layers' worth (the one computing and the one copying). The loss
    // side stays: the recipes run the loss outside the offloading context and wrap the output head in a
    // NoOpManager (training/_activation_offloading.py, get_act_offloading_ctx_manager).
    const double offloaded = std::max(share.activations - share.loss_saved, 0.0);
    const double device = std::min(offloaded, 2.0 * share.largest_saved);
    host += offloaded;
    m.activations_gb -= (offloaded - device) / 1e9;
  }
  m.host_gb = host / 1e9;
}

namespace {

/// FP8 training (layers/fp8.cpp): the FP8 copies of the FP8 linears' weights, beside the 16-bit and FP32 ones.
double fp8_weight_bytes(const Network& net, const TrainingConfig& training) {
  const double per_element = fp8_weight_bytes_per_element(training);
  if (per_element <= 0) return 0;
  const std::vector<bool> fp8 = fp8_linear_layers(net);
  double elements = 0;
  for (std::size_t l = 0; l < net.layers.size(); ++l) elements += fp8[l] ? fp8_weight_elements(net.layers[l]) : 0;
  return elements * per_element;
}

}  // namespace

MemoryEstimate estimate_memory(const Network& net, const StepWork& work, const TrainingConfig& training) {
  double frozen_bytes = 0;
  TrainedTensors tensors;
  for (const Layer& layer : net.layers) {
    tensors += trained_tensors(layer);
    if (!layer.trainable) frozen_bytes += static_cast<double>(layer.parameters) * layer.frozen_bytes_per_parameter;
  }
  const double trained = tensors.elements;
  const StateBytes b = state_bytes(training);
  MemoryEstimate m;
  m.weights_gb = (trained * (b.weights16 + b.master) + frozen_bytes + fp8_weight_bytes(net, training)) / 1e9;
  m.gradients_gb = gradient_bytes(tensors, training) / 1e9;
  m.optimizer_gb = optimizer_state_bytes(tensors, training) / 1e9;
  double saved = 0, largest_saved = 0, loss_saved = 0;
  const std::vector<bool> loss_side = loss_side_layers(net);
  for (std::size_t l = 0; l < work.layers.size(); ++l) {
    const double bytes = work.layers[l].saved_activation_bytes;
    saved += bytes;
    if (l < loss_side.size() && loss_side[l])
      loss_saved += bytes;
    else
      largest_saved = std::max(largest_saved, bytes);
  }
  m.activations_gb = saved / 1e9;
  m.temporary_gb += state_temporary_bytes(b, tensors, largest_param(net)) / 1e9;
  m.overhead_gb = kRuntimeOverheadGb;
  if (training.offload != Offload::None || training.activation_offload) {
    OffloadShare share;
    share.trained = trained;
    share.frozen_bytes = frozen_bytes;
    share.activations = saved;
    share.largest_saved = largest_saved;
    share.loss_saved = loss_saved;
    share.gathered = b.weights16 == 0;  // FSDP's gathered layers are in temporary_gb already
    for (const Layer& layer : net.layers) {
      share.largest_param = std::max(share.largest_param, static_cast<double>(layer.parameters));
      if (!layer.trainable)
        share.largest_frozen_bytes = std::max(share.largest_frozen_bytes,
                                              static_cast<double>(layer.parameters) * layer.frozen_bytes_per_parameter);
    }
    move_to_host(m, share, training);
  }
  return m;
}

StageInputs stage_inputs(const ShardedNetwork& shard, const std::vector<double>& saved,
                         const std::vector<double>& saved_without_recompute, std::size_t first, std::size_t last) {
  StageInputs in;
  const std::vector<bool> fp8 = fp8_linear_layers(shard.net);
  const std::vector<bool> loss_side = loss_side_layers(shard.net);
  double block_acts = 0;
  int block = -1;
  for (std::size_t l = first; l < last; ++l) {
    const Layer& layer = shard.net.layers[l];
    const double p = static_cast<double>(layer.parameters);
    in.params += p;
    in.trainable += static_cast<double>(trainable_parameters(layer));
    in.tensors += trained_tensors(layer);
    if (shard.layers[l].expert_parameters) {
      in.expert_trainable += static_cast<double>(trainable_parameters(layer));
      in.expert_tensors += trained_tensors(layer);
    }
    if (!layer.trainable) in.frozen_bytes += p * layer.frozen_bytes_per_parameter;
    if (fp8[l]) in.fp8_weights += fp8_weight_elements(layer);
    in.largest_param = std::max(in.largest_param, p);
    in.activations += saved[l];
    if (loss_side[l])
      in.loss_saved += saved[l];
    else
      in.largest_saved = std::max(in.largest_saved, saved[l]);
    if (!layer.trainable)
      in.largest_frozen_bytes = std::max(in.largest_frozen_bytes, p * layer.frozen_bytes_per_parameter);
    if (shard.layers[l].block != block) {
      block_acts = 0;
      block = shard.layers[l].block;
    }
    if (shard.layers[l].in_block) {
      block_acts += saved_without_recompute[l];
      in.largest_block = std::max(in.largest_block, block_acts);
    }
  }
  return in;
}

double micro_batches_in_flight(const ParallelConfig& cfg, std::size_t stage) {
  const std::int64_t p = cfg.pipeline, v = cfg.virtual_stages, m = cfg.micro_batches;
  const auto s = static_cast<std::int64_t>(stage);
  if (p <= 1) return 1.0;
  // 1F1B keeps the activations of (pipeline - stage) micro-batches on a stage, never more than there are.
  if (v <= 1) return static_cast<double>(std::min<std::int64_t>(m, p - s));
  // Interleaved 1F1B (Megatron-Core schedules.py get_pp_rank_microbatches): stage s runs 2(p - s - 1) +
  // (v - 1) p chunk forwards before its first backward, then keeps one more in flight, of the v m there are.
  // A chunk holds 1/v of the stage's layers. On the first stage: (v p + p - 1)/v = p (1 + (p - 1)/(p v)),
  // Korthikanti et al. 2022's interleaving factor (Sec. 4.2.3).
  const std::int64_t chunks = std::min<std::int64_t>(2 * (p - s - 1) + (v - 1) * p + 1, v * m);
  return static_cast<double>(chunks) / static_cast<double>(v);
}

MemoryEstimate stage_memory(const StageInputs& in, std::size_t stage, const ParallelConfig& cfg,
                            const TrainingConfig& training) {
  const StateBytes b = state_bytes(training);
  // Gradients are reduced and ZeRO shards over data x context GPUs (Megatron's data-parallel group with
  // context parallelism); the activations of a context-split network are already this GPU's 1/context.
  const std::int64_t ranks = cfg.data * cfg.context;
  const double dp = static_cast<double>(ranks);
  // ZeRO: stage 1 shards optimizer states (and the FP32 master copy, an optimizer state in ZeRO's
  // accounting), stage 2 also gradients, stage 3 also the 16-bit weights.
  const double s_opt = cfg.zero_stage >= 1 ? 1.0 / dp : 1.0;
  // Accumulating inside FSDP's no_sync() (parallel.accumulate_unsharded) keeps the full gradients until the last
  // micro-batch's reduce-scatter: "FSDP will accumulate the full model gradients (instead of gradient shards)".
  const bool unsharded = cfg.accumulate_unsharded;
  const double s_grad = cfg.zero_stage >= 2 && !unsharded ? 1.0 / dp : 1.0;
  const double s_w = cfg.zero_stage >= 3 ? 1.0 / dp : 1.0;
  MemoryEstimate m;
  // FP8 weight copies are sharded like the 16-bit weights they are cast from.
  m.weights_gb = (in.trainable * (b.weights16 * s_w + b.master * s_opt) + in.frozen_bytes * s_w +
                  in.fp8_weights * fp8_weight_bytes_per_element(training) * s_w) /
                 1e9;
  m.gradients_gb = gradient_bytes(in.tensors, training) * s_grad / 1e9;
  m.optimizer_gb = optimizer_state_bytes(in.tensors, training) * s_opt / 1e9;
  if (cfg.expert > 1) {
    // Expert parallelism: the experts' states (1/expert of them here) are ZeRO-sharded over the expert-data
    // group of tensor x context x data / expert GPUs, not the data group; the shares' difference replaces their
    // dense share.
    const double ed = static_cast<double>(cfg.tensor) * dp / static_cast<double>(cfg.expert);
    const double e_opt = cfg.zero_stage >= 1 ? 1.0 / ed : 1.0;
    const double e_grad = cfg.zero_stage >= 2 && !unsharded ? 1.0 / ed : 1.0;
    const double e_w = cfg.zero_stage >= 3 ? 1.0 / ed : 1.0;
    m.weights_gb += in.expert_trainable * (b.weights16 * (e_w - s_w) + b.master * (e_opt - s_opt)) / 1e9;
    m.gradients_gb += gradient_bytes(in.expert_tensors, training) * (e_grad - s_grad) / 1e9;
    m.optimizer_gb += optimizer_state_bytes(in.expert_tensors, training) * (e_opt - s_opt) / 1e9;
  }
  m.activations_gb = in.activations * micro_batches_in_flight(cfg, stage) / 1e9;
  const double kept_activations = m.activations_gb * 1e9;
  // Gathered full layers under ZeRO-3 (the current one and the prefetched next), and two gradient
  // buckets in flight under data parallelism.
  if (cfg.zero_stage == 3 && ranks > 1 && b.weights16 > 0) m.temporary_gb += 2.0 * in.largest_param * b.compute / 1e9;
  m.temporary_gb += state_temporary_bytes(b, in.tensors, in.largest_param) / 1e9;
  if (ranks > 1) m.temporary_gb += 2.0 * kGradientBucketBytes / 1e9;
  m.overhead_gb = kRuntimeOverheadGb;
  if (training.offload != Offload::None || training.activation_offload) {
    OffloadShare share{in.trainable,
                       in.frozen_bytes,
                       s_opt,
                       s_w,
                       kept_activations,
                       in.largest_saved,
                       in.largest_param,
                       in.largest_frozen_bytes,
                       ranks > 1,
                       (cfg.zero_stage == 3 && ranks > 1) || b.weights16 == 0};
    share.loss_saved = in.loss_saved;
    const double accumulated = m.gradients_gb;
    move_to_host(m, share, training);
    // FSDP's no_sync() docstring: "the gradients will not be offloaded to CPU when inside the context manager".
    if (unsharded && training.offload != Offload::None) m.gradients_gb = accumulated;
  }
  // Full and op-level recomputation rebuild one block's activations at a time during backward. By then the
  // loss's and the head's backward have run and freed what they saved (for the micro-batch in backward), so the
  // rebuilt block adds to the rest only: the peak is the larger of the two moments.
  if (cfg.recompute == Recompute::Full || op_level(cfg.recompute)) {
    const double kept = m.activations_gb * 1e9;
    m.activations_gb = std::max(kept, kept - std::min(in.loss_saved, kept) + in.largest_block) / 1e9;
  }
  return m;
}

MemoryEstimate estimate_stage_memory(const ShardedNetwork& shard, const std::vector<double>& saved,
                                     const std::vector<double>& saved_without_recompute, std::size_t first,
                                     std::size_t last, std::size_t stage, const ParallelConfig& cfg,
                                     const TrainingConfig& training) {
  return stage_memory(stage_inputs(shard, saved, saved_without_recompute, first, last), stage, cfg, training);
}

}  // namespace prenet
