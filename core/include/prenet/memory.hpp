#pragma once
// Memory of one training step on one device: model states plus activations kept for backward.
#include <vector>

#include "prenet/features.hpp"
#include "prenet/network.hpp"
#include "prenet/parallel.hpp"
#include "prenet/training.hpp"

namespace prenet {

struct MemoryEstimate {
  double weights_gb = 0;  // including FP32 master weights under mixed precision
  double gradients_gb = 0;
  double optimizer_gb = 0;
  double activations_gb = 0;
  double temporary_gb = 0;  // communication buffers and gathered weights (parallel training)
  double overhead_gb = 0;   // runtime context, workspaces, allocator slack
  double host_gb = 0;       // host memory this GPU's share of what training.offload / activation_offload moved (not on
                            // the device: not in total_gb)
  double paged_gb = 0;      // a paged optimizer's states that do not fit beside the rest: paged out to host memory
                            // (bitsandbytes' unified memory; not in total_gb)
  double total_gb() const {
    return weights_gb + gradients_gb + optimizer_gb + activations_gb + temporary_gb + overhead_gb;
  }
};

/// Fixed allowance for the framework's runtime context and workspaces (GB).
constexpr double kRuntimeOverheadGb = 0.75;

/// Bytes per trained parameter of the model states (docs/PREDICTION.md, Memory): weights (16-bit copy plus
/// FP32 master under mixed precision), gradients, optimizer states. Unsharded. Frozen weights hold only
/// Layer::frozen_bytes_per_parameter each. training.state_accounting chooses whose bytes mixed precision keeps
/// (docs/PREDICTION.md, "Gradient and master-weight accounting"): `weights16` is the persistent copy the GPU
/// computes with (0 under FSDP's mixed precision, which casts each gathered layer), `compute` the bytes of the
/// copy a ZeRO-3 gather makes, `casts` autocast's 16-bit copy of each linear weight, held from its forward use
/// to its backward.
struct StateBytes {
  double weights16 = 0, master = 0, gradients = 0, optimizer = 0;
  double compute = 0, casts = 0;
};
StateBytes state_bytes(const TrainingConfig& training);
/// Refuses a state accounting that contradicts the request (errors name training.state_accounting):
/// autocast under FP32 training, any but deepspeed with pure bf16 (master_weights bf16) or with ZeRO-Offload,
/// fsdp with offload of the optimizer alone or with an unsharded data-parallel group (`parallel`: the
/// request's section, nullptr when it has none).
void check_state_accounting(const TrainingConfig& training, const ParallelConfig* parallel);

/// What the optimizer-state rules need of the tensors a layer trains (its own when trainable, its adapters'):
/// sums over them, so that stages add up. Matrices come from the layer kind's linear_modules; what else it
/// trains is vectors (biases, norm scales) except an embedding's table, a matrix.
struct TrainedTensors {
  double elements = 0;  // trainable_parameters
  double matrices = 0;  // elements of the trained matrices (each expert's its own)
  double factored = 0;  // rows + columns summed over them (Adafactor's factored second moment)
  double hidden = 0;    // elements of the hidden matrices (Muon's; not the embedding table or lm_head)
  double large = 0;     // elements of tensors of at least kMin8bitElements (bitsandbytes quantizes their states)
  double blocks = 0;    // their kStateBlock-element blocks (one FP32 absmax per block and state)
  double largest = 0;   // the layer's trainable parameters; summed stages keep the largest layer's
  double linear = 0;    // elements of the trained linear weights (not an embedding table): autocast casts these
  // Elements of frozen weights that get gradients anyway (training.finetune.frozen_gradients): gradient memory
  // only, no optimizer states; not in `elements`.
  double frozen_gradients = 0;
  TrainedTensors& operator+=(const TrainedTensors& o);
};
/// bitsandbytes' min_8bit_size (optim/optimizer.py): smaller tensors keep 32-bit states.
constexpr double kMin8bitElements = 4096;
/// bitsandbytes' blockwise state quantization: one absmax per 256 elements (Optimizer2State.init_state).
constexpr double kStateBlock = 256;
/// One matrix the optimizer updates: rows x cols, `copies` of it (experts); hidden unless it is lm_head's
/// (Muon steps only hidden matrices by Newton-Schulz).
struct TrainedMatrix {
  double rows = 0, cols = 0, copies = 1;
  bool hidden = true;
};
/// The matrices of `layer` the optimizer updates: its own (linear_modules) when trainable, its LoRA adapters'
/// A (in x rank) and B (rank x out). The embedding table is not one of them (see trained_tensors).
std::vector<TrainedMatrix> trained_matrices(const Layer& layer);
TrainedTensors trained_tensors(const Layer& layer);
/// Bytes of optimizer state for tensors `t` under the request's optimizer and master weights, unsharded.
double optimizer_state_bytes(const TrainedTensors& t, const TrainingConfig& training);
/// Bytes of gradients held for tensors `t`: every trained parameter's, or under optimizer_in_backward only the
/// largest layer's (each is stepped and freed as backward produces it); plus those of the frozen weights that get
/// gradients (t.frozen_gradients), which no optimizer step frees, at the same bytes per element.
double gradient_bytes(const TrainedTensors& t, const TrainingConfig& training);

/// Estimates device memory (GB = 1e9 bytes) for training `net` with the step's saved activations.
MemoryEstimate estimate_memory(const Network& net, const StepWork& work, const TrainingConfig& training);

/// What the memory of one pipeline stage depends on, summed over its layers (one micro-batch).
struct StageInputs {
  double params = 0, largest_param = 0;  // of the tensor shard
  double trainable = 0;                  // parameters the optimizer updates (trainable_parameters)
  double frozen_bytes = 0;               // bytes of the frozen weights (Layer::frozen_bytes_per_parameter)
  double activations = 0;                // bytes kept under the recompute mode
  double largest_block = 0;              // bytes of the largest block without recomputation
  double largest_saved = 0;              // bytes the layer that keeps the most keeps, loss side apart (offload)
  double loss_saved = 0;                 // bytes the loss and the head it reads keep (loss_side_layers)
  double largest_frozen_bytes = 0;       // bytes of the frozen weights of the layer with the most parameters
  TrainedTensors tensors;                // the trained tensors' sums (optimizer states, gradients)
  // Of those, the expert layers' (parallel.expert: already 1/expert of them, ZeRO-sharded over data / expert).
  double expert_trainable = 0;
  TrainedTensors expert_tensors;
  double fp8_weights = 0;  // weight elements of FP8 linears (layers/fp8.cpp), kept in FP8 too
};
StageInputs stage_inputs(const ShardedNetwork& shard, const std::vector<double>& saved,
                         const std::vector<double>& saved_without_recompute, std::size_t first, std::size_t last);
/// The per-layer facts stage_inputs reads beside the shard's layers, computed once per shard: FP8 linears
/// (layers/fp8.cpp) and the loss side (kept on the device by activation offload).
struct ShardFacts {
  std::vector<bool> fp8, loss_side;
};
ShardFacts shard_facts(const ShardedNetwork& shard);
/// stage_inputs with the shard's facts given (plan mode asks for every stage of every layout of one shard).
StageInputs stage_inputs(const ShardedNetwork& shard, const ShardFacts& facts, const std::vector<double>& saved,
                         const std::vector<double>& saved_without_recompute, std::size_t first, std::size_t last);
/// What training.offload and training.activation_offload move from one GPU's device memory to the host.
/// `trained` and `frozen_bytes` are the GPU's parameters before ZeRO sharding, `s_opt` / `s_w` the shares ZeRO
/// leaves it of the optimizer states and of the weights; `activations` the bytes of saved activations it keeps
/// (all micro-batches in flight), `largest_saved` those of the layer that keeps the most (loss side apart);
/// `largest_param` and `largest_frozen_bytes` the largest layer's; `buckets` whether m already holds the gradient
/// buckets; `loss_saved` the part of `activations` the loss side keeps, which activation offload leaves on the GPU.
struct OffloadShare {
  double trained = 0, frozen_bytes = 0, s_opt = 1, s_w = 1;
  double activations = 0, largest_saved = 0, largest_param = 0, largest_frozen_bytes = 0;
  bool buckets = false, gathered = false;  // gathered: m holds ZeRO-3's two gathered layers
  double loss_saved = 0;
};
/// Per layer of `net`, whether it is on the loss side: a cross-entropy loss or a layer whose output one reads
/// (the vocabulary head). Their saved tensors are freed when the loss's and the head's backward end, before
/// any block's, and torchtune's activation offload keeps them on the GPU.
std::vector<bool> loss_side_layers(const Network& net);
void move_to_host(MemoryEstimate& m, const OffloadShare& share, const TrainingConfig& training);

/// Micro-batches whose activations stage `stage` of cfg's pipeline keeps at its peak, in units of one
/// micro-batch through all the stage's layers (1F1B: pipeline - stage; interleaved: Megatron's warm-up count).
double micro_batches_in_flight(const ParallelConfig& cfg, std::size_t stage);
/// Memory of the GPU of stage `stage` from its sums (see estimate_stage_memory).
MemoryEstimate stage_memory(const StageInputs& in, std::size_t stage, const ParallelConfig& cfg,
                            const TrainingConfig& training);

/// Memory of the GPU of pipeline stage `stage` (layers [first, last)) under `cfg`: tensor-sharded
/// parameters of the stage, ZeRO sharding over the data group, activations of the micro-batches the
/// 1F1B schedule keeps in flight on that stage. `saved` is per layer and micro-batch under cfg.recompute,
/// `saved_without_recompute` the same with nothing recomputed (full recomputation rebuilds one block).
MemoryEstimate estimate_stage_memory(const ShardedNetwork& shard, const std::vector<double>& saved,
                                     const std::vector<double>& saved_without_recompute, std::size_t first,
                                     std::size_t last, std::size_t stage, const ParallelConfig& cfg,
                                     const TrainingConfig& training);

}  // namespace prenet
