#pragma once
// Training on more than one accelerator: the request's `parallel` section, Megatron-style tensor
// sharding of a network, pipeline stages, and the time of the collectives (docs/PREDICTION.md,
// "More than one GPU").
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "prenet/features.hpp"
#include "prenet/hardware.hpp"
#include "prenet/json_util.hpp"
#include "prenet/network.hpp"
#include "prenet/roofline.hpp"
#include "prenet/training.hpp"

namespace prenet {

/// Activation recomputation (parallel.recompute; docs/PREDICTION.md, "Recomputation granularity"): none,
/// Korthikanti's selective (attention's core), full (whole blocks), ops (op-level: matmul and attention
/// outputs kept, the rest of each block recomputed).
/// Ops: op-level checkpointing keeping every matmul output; TorchtitanOp: torchtitan's `op` policy, which also
/// recomputes every second matmul of a block (docs/PREDICTION.md, "Recomputation granularity").
enum class Recompute { None, Selective, Full, Ops, TorchtitanOp };
/// Whether `mode` is one of the op-level policies (a block keeps its input and some op outputs).
inline bool op_level(Recompute mode) { return mode == Recompute::Ops || mode == Recompute::TorchtitanOp; }
const char* to_string(Recompute r);

/// parallel.expert_dispatch: NCCL's flat all-to-all or DeepEP's / HybridEP's hierarchical dispatch.
enum class ExpertDispatch { AllToAll, Hierarchical };

/// Megatron-Core's modules of selective recomputation (parallel.recompute_modules; TransformerConfig
/// recompute_modules), in the order of the row's values: attention's core, a mixture of experts' activation, the
/// norms Megatron-Core keeps as modules of their own, MLA's up-projections, a dense MLP, a mixture-of-experts layer,
/// its shared experts (docs/PREDICTION.md, "Recomputation granularity").
enum class RecomputeModule { CoreAttn, MoeAct, LayerNorm, MlaUpProj, Mlp, Moe, SharedExperts };
/// A set of modules, one bit per RecomputeModule.
using RecomputeModules = unsigned;
constexpr RecomputeModules module_bit(RecomputeModule m) { return 1u << static_cast<unsigned>(m); }
/// Selective recomputation without a module list: attention's core (Korthikanti et al.; Megatron-Core's default).
constexpr RecomputeModules kDefaultRecomputeModules = module_bit(RecomputeModule::CoreAttn);
/// The module names, in RecomputeModule order (the row's values).
const std::vector<std::string>& recompute_module_names();

/// Megatron-Core's pipeline_model_parallel_layout (parallel.pipeline_layout; PipelineParallelLayerLayout): what each
/// model chunk holds, chunk j on pipeline stage j mod pipeline (virtual stage j / pipeline), as symbols in order:
/// 'E' the embedding (the layers before the first block), 't' one decoder block, 'm' one multi-token prediction
/// depth (training.mtp_layers), 'L' the loss (the final norm, head and losses).
struct PipelineLayout {
  std::string text;                 // as the request gave it
  std::vector<std::string> chunks;  // per model chunk, its symbols (repetitions unrolled; may be empty)
};

/// Parses a layout string as Megatron-Core's parse_str_to_list does: commas dropped, "(...)*N" then "x*N" unrolled,
/// '|' between chunks; then the checks of validate_layer_layout that need no network: 'E' first and 'L' last, each
/// exactly once, no 't' after an 'm', and all 'm' in one chunk of the last virtual stage. `pipeline` fixes the
/// virtual stages (chunks / pipeline). Errors name parallel.pipeline_layout.
PipelineLayout parse_pipeline_layout(const std::string& text, std::int64_t pipeline);

/// One kind of link between accelerators: per-GPU bandwidth in one direction and the latency of one hop.
struct Link {
  std::string kind;
  double bandwidth_gbs = 0;
  double latency_us = 0;
};

/// A link as the request gives it: each field may be absent and then comes from the catalogue.
struct LinkOverride {
  std::optional<std::string> kind;
  std::optional<double> bandwidth_gbs, latency_us;
};

/// The request's `parallel` section after validation; degrees are resolved, links maybe not.
struct ParallelConfig {
  std::int64_t gpus = 1, data = 1, tensor = 1, pipeline = 1;
  std::int64_t context = 1;  // context parallelism: the sequence split over this many GPUs (ring attention)
  std::int64_t expert = 1;   // expert parallelism: experts sharded over this many of the tensor x context x data ranks
  std::int64_t virtual_stages = 1;   // interleaved 1F1B: model chunks per pipeline stage
  std::int64_t recompute_every = 1;  // recomputation checkpoints every n-th block only (1: all)
  std::int64_t micro_batch_size = 1, micro_batches = 1;
  int zero_stage = 0;
  Recompute recompute = Recompute::None;
  RecomputeModules recompute_modules = kDefaultRecomputeModules;  // what recompute "selective" reruns
  bool sequence_parallel = false;  // Megatron sequence parallelism over the tensor group (no effect at tensor 1)
  // Gradient accumulation in FSDP's no_sync(): full (unsharded) gradients held over the micro-batches, reduce-
  // scattered once per step (needs zero_stage >= 2 and micro_batches > 1).
  bool accumulate_unsharded = false;
  // Megatron-LM's pipeline split that counts the embedding and the loss as one layer each
  // (account_for_embedding_in_pipeline_split, account_for_loss_in_pipeline_split): blocks + 2 over the chunks.
  bool pipeline_embedding_loss = false;
  // Megatron-Core's explicit layout of the layers over the pipeline x virtual_stages chunks (parallel.pipeline_layout);
  // absent: the cost-balanced split, or the even one with virtual stages or pipeline_embedding_loss.
  std::optional<PipelineLayout> pipeline_layout;
  // Communication hidden behind compute as Megatron-Core runs it (docs/PREDICTION.md, "Overlapped communication"):
  // ZeRO-1/2's gather of updated weights behind the next step's first forward (--overlap-param-gather), the expert
  // all-to-alls of one micro-batch behind another's compute (--overlap-moe-expert-parallel-comm), and the tensor-
  // parallel collectives behind their GEMMs (TransformerEngine's userbuffers, tp_comm_overlap).
  bool overlap_param_gather = false, expert_overlap = false, tensor_overlap = false;
  // How the expert all-to-alls cross domains (parallel.expert_dispatch): NCCL's flat all-to-all sends every routed
  // copy of a token through the sender's network card; DeepEP's and HybridEP's hierarchical dispatch (Megatron's
  // flex dispatcher) sends one copy per destination domain and fans it out there over the domain link.
  ExpertDispatch expert_dispatch = ExpertDispatch::AllToAll;
  std::int64_t gpus_per_node = 0;  // 0: the accelerator's typical node
  LinkOverride intra_node, inter_node;
};

constexpr std::int64_t kMaxGpus = std::int64_t{1} << 20;

/// Validates `parallel` against the global batch: batch = data x micro_batch_size x micro_batches and
/// gpus = data x tensor x context x pipeline, deriving what is missing. `batch` is the request's training.batch_size
/// (nullopt when the request leaves it out; it is then derived). Errors name `parallel.<field>`.
ParallelConfig parse_parallel(const Json& section, std::optional<std::int64_t> batch);

/// Fraction of a link's bandwidth that collectives achieve (NCCL bus bandwidth over the link rate).
constexpr double kLinkEfficiency = 0.80;
/// How much faster an all-reduce inside one scale-up domain runs with in-network reduction (NVLS) than the
/// ring: bus bandwidth ~480 vs ~370 GB/s on 8x H100, large messages (S. Jeaugey in NVIDIA/nccl-tests#212;
/// the same 1.30 in NVIDIA/nccl#1221 and #2140, which measured 1.22 on 8x B300).
constexpr double kInNetworkReductionGain = 1.30;
/// Default gradient bucket of data-parallel all-reduce (PyTorch DDP's 25 MB).
constexpr double kGradientBucketBytes = 25e6;

/// The links one accelerator uses for `cfg`: request overrides over catalogue defaults. `gpus_per_node` is
/// the scale-up domain: the GPUs that share the intra-node link (8 on an HGX board, 72 on an NVL72 rack);
/// `inter` is each GPU's share of the scale-out network (its NIC).
struct Fabric {
  Link intra, inter;
  std::int64_t gpus_per_node = 8;
  bool in_network_reduction = false;  // NVLink SHARP (NVLS) all-reduce inside the domain
};
Fabric resolve_fabric(const Accelerator& acc, const ParallelConfig& cfg);

/// The parallel groups. Ranks are laid out as Megatron-LM does (order tp-cp-dp-pp): tensor fastest, then
/// context, then data, then pipeline. The expert layers lay the same ranks out again (Megatron-Core's expert
/// order etp-ep-edp-pp with expert tensor parallel size 1, "MoE parallel folding"): an expert group is `expert`
/// consecutive ranks of a stage's tensor x context x data, the expert-data group the ranks `expert` apart.
enum class Group { Tensor, Context, Data, Expert, ExpertData, Pipeline };

/// One communicator of a group: its members, how many of them share one scale-up domain, and how many
/// groups of the same kind share that domain's network cards at once (they all communicate together).
struct Communicator {
  std::int64_t size = 1;        // members
  std::int64_t per_domain = 1;  // members inside one domain (size when the group fits in one)
  std::int64_t domains = 1;     // domains the group spans
  std::int64_t sharing = 1;     // groups of this kind in one domain, communicating at the same time
};
Communicator communicator(const ParallelConfig& cfg, const Fabric& fabric, Group group);

/// Whether each group's collectives leave the node (groups are laid out tensor-fastest, then data, then
/// pipeline, as Megatron does: a group stays on the intra-node link while its span fits in a node).
struct GroupLinks {
  bool tensor_inter = false, data_inter = false, pipeline_inter = false;
};
GroupLinks group_links(const ParallelConfig& cfg, const Fabric& fabric);

/// Time (ms) of a ring all-reduce of `bytes` over `n` members on `link`: 2(n-1)/n of the data through
/// each member's link plus 2(n-1) hops of latency.
double allreduce_ms(double bytes, std::int64_t n, const Link& link);
/// Reduce-scatter or all-gather: half an all-reduce's traffic and hops.
double allgather_ms(double bytes, std::int64_t n, const Link& link);
/// One point-to-point send of `bytes`.
double p2p_ms(double bytes, const Link& link);

/// The same collectives over a communicator of a two-level fabric, as NCCL runs them (docs/PREDICTION.md,
/// "Collectives"): the ring's bus bandwidth is the slower of the domain link and the group's share of the
/// domain's network cards (NCCL's channels spread a node's inter-node traffic over all of them).
double allreduce_ms(double bytes, const Communicator& c, const Fabric& fabric);
/// Reduce-scatter or all-gather of `bytes` (the full tensor) over the communicator.
double allgather_ms(double bytes, const Communicator& c, const Fabric& fabric);
/// All-to-all in which each member holds `bytes` and sends (size-1)/size of it to the others.
double alltoall_ms(double bytes, const Communicator& c, const Fabric& fabric);
/// Expected domains other than the sender's that a token routed to `top_k` distinct experts of `experts` reaches,
/// the experts spread evenly over `domains` domains and chosen uniformly (balanced routing).
double remote_domains_per_token(double top_k, double experts, std::int64_t domains);
/// Hierarchical expert all-to-all (DeepEP, HybridEP): each member holds `bytes` of `top_k` routed copies per token
/// of `experts` experts; one copy per remote domain crosses the network, the domain link carries the local copies
/// and the fan-out of what arrives; both run at once.
double hierarchical_alltoall_ms(double bytes, double top_k, double experts, const Communicator& c,
                                const Fabric& fabric);
/// A point-to-point send between neighbours of the group (a pipeline boundary, a context-parallel ring step).
double p2p_ms(double bytes, const Communicator& c, const Fabric& fabric);

/// Per layer of the sharded network: the tensor-parallel all-reduces its forward and backward need
/// (count each of `bytes` per sample), whether full recomputation covers it, and whether its parameters
/// are replicated over the tensor group.
struct ShardLayer {
  int forward_allreduces = 0, backward_allreduces = 0;
  double allreduce_bytes_per_sample = 0;
  bool in_block = false;  // inside a repeated block: a unit of full recomputation
  int block = -1;         // index of that block instance
  // Sequence parallelism: the layer runs on 1/tensor of the sequence (its shapes are divided); a
  // tensor-parallel layer keeps only its 1/saved_input_split slice of the input it saves (gathered
  // again in backward) and hands on 1/output_split of its output_shape (reduce-scattered).
  bool sequence_split = false;
  std::int64_t saved_input_split = 1, output_split = 1;
  // Expert parallelism (parallel/expert.cpp shard_experts): the layer's parameters are experts' (gradients
  // reduced over the expert-data group), and the elements per sample its forward all-to-alls send to dispatch
  // its input and combine its output (backward sends the same again).
  bool expert_parameters = false;
  double dispatch_elements_per_sample = 0, combine_elements_per_sample = 0;
  double routed_top_k = 0, routed_experts = 0;  // the copies per token those elements hold, over this many experts
};

struct ShardedNetwork {
  Network net;  // what one GPU of the tensor group computes (same layers, same order, smaller shapes)
  std::vector<ShardLayer> layers;
};

/// Splits `net` over `tensor` GPUs the Megatron way: attention heads and the QKV projection column-
/// parallel, the output projection row-parallel; an MLP's first matrix column-parallel and its second
/// row-parallel; the token embedding and the LM head vocabulary-parallel; norms and the rest replicated.
/// With `sequence_parallel` (Korthikanti et al. 2022) the replicated token-stream layers between the
/// tensor-parallel regions (norms, dropout, residual adds, elementwise layers, replicated dense layers)
/// run on 1/tensor of the sequence, and the tensor-parallel layers save their input sequence-split.
/// With `whole_experts` (expert parallelism, expert tensor parallel size 1) the mixture-of-experts layers are not
/// split but replicated token-wise layers, which sequence parallelism gives 1/tensor of the sequence each.
/// Throws InputError naming parallel.tensor when `tensor` does not divide what it must split, and
/// parallel.sequence_parallel when it does not divide the sequence or whole experts at tensor > 1 lack it.
ShardedNetwork shard_network(const Network& net, std::int64_t tensor, bool sequence_parallel = false,
                             bool whole_experts = false);

/// Whether selective recomputation (Korthikanti et al.) runs forward kernel `k` of `layer` again in
/// backward: attention's core (QK^T, softmax, dropout, PV) unless it is one fused kernel.
bool recomputed_selectively(const Layer& layer, const Kernel& k, const KernelContext& context);

/// Whether op-level recomputation (Recompute::Ops) runs forward kernel `k` of `layer` (inside a block) again in
/// backward: everything but the matmuls' and the fused attention's, whose outputs it keeps.
bool recomputed_by_ops(const Layer& layer, const Kernel& k, const KernelContext& context);

/// Whether full recomputation checkpoints the block of `layer` when every `every`-th block instance is
/// checkpointed (torchtitan's layer-wise selective_ac_option: blocks n, 2n, ... counted from 1).
bool checkpointed_block(const ShardLayer& layer, Recompute mode, std::int64_t every);

/// Appends the forward kernels that recomputation repeats during backward (as backward kernels); with `full`
/// only the checkpointed blocks' (`every`); with `torchtitan_op` also the recomputed share of every second
/// matmul of a block; with `selective` those of `modules`, a kernel once per module that reruns it. Throws naming
/// parallel.recompute when a block's matmuls cannot be counted one by one.
void add_recompute_kernels(StepWork& work, const ShardedNetwork& shard, Recompute mode, std::int64_t every = 1,
                           RecomputeModules modules = kDefaultRecomputeModules);

/// Bytes of activations one micro-batch (`work`, of `micro_batch` samples at its context's precision) keeps for
/// backward under `mode` (with full: every `every`-th block checkpointed; with selective: `modules`), per layer of
/// `shard`. Throws naming parallel.recompute_every when `every` exceeds the blocks, and parallel.recompute_modules
/// for a module the network does not have.
std::vector<double> saved_activation_bytes(const ShardedNetwork& shard, const StepWork& work, Recompute mode,
                                           std::int64_t micro_batch, std::int64_t every = 1,
                                           RecomputeModules modules = kDefaultRecomputeModules);

/// Per layer of `shard`, how many times recomputation runs its whole forward (collectives included) again in
/// backward: once in a checkpointed block under full; under selective once per module of `modules` that
/// checkpoints it whole (mlp, moe, shared_experts, nested where they overlap; layernorm's norms).
std::vector<int> whole_layer_reruns(const ShardedNetwork& shard, Recompute mode, std::int64_t every,
                                    RecomputeModules modules);

/// Contiguous split of layers into `stages` with the per-layer costs `cost` as even as possible;
/// returns the first layer of each stage plus layers.size(). Throws naming parallel.pipeline when there
/// are fewer layers than stages.
std::vector<std::size_t> split_stages(const std::vector<double>& cost, std::int64_t stages);

/// The same split with cuts only between repeated blocks (a block instance stays on one stage, as
/// Megatron assigns whole transformer layers); layer by layer when there are fewer blocks than stages.
std::vector<std::size_t> split_stages(const std::vector<double>& cost, const ShardedNetwork& shard,
                                      std::int64_t stages);

/// Repeated blocks of `shard` (block instances; layers outside blocks are none).
std::int64_t block_count(const ShardedNetwork& shard);

/// The layers split into pipeline x virtual_stages model chunks balanced by `cost`, cut only between blocks;
/// chunk j runs on stage j mod pipeline (Megatron's interleaved 1F1B). Returns the first layer of each chunk
/// plus layers.size(); virtual_stages 1 is split_stages. Throws naming parallel.virtual_stages when
/// virtual_stages does not divide the blocks per stage.
std::vector<std::size_t> split_chunks(const std::vector<double>& cost, const ShardedNetwork& shard,
                                      std::int64_t pipeline, std::int64_t virtual_stages, bool embedding_loss = false);

/// The chunk bounds of `cfg`'s layers, in their one home: parallel.pipeline_layout's chunks as the string places
/// them; else, with pipeline > 1, split_chunks's; else one chunk. Throws naming parallel.pipeline_layout when the
/// layout's blocks or multi-token prediction depths differ from the network's or its chunks from pipeline x
/// virtual_stages.
std::vector<std::size_t> chunk_bounds(const std::vector<double>& cost, const ShardedNetwork& shard,
                                      const ParallelConfig& cfg);

/// Per model chunk of `bounds`, the layers whose parameters it holds a copy of: the embedding a tied embedding in it
/// shares, when that one lies in another chunk (multi-token prediction's, model/mtp.cpp: Megatron-Core's
/// LanguageModule keeps a duplicate of the word embeddings in every model chunk that uses them but the first, its
/// gradient all-reduced with the first's).
std::vector<std::vector<std::size_t>> embedding_copies(const ShardedNetwork& shard,
                                                       const std::vector<std::size_t>& bounds);

/// Checks cfg.virtual_stages against the layout: it needs pipeline > 1, and Megatron-Core's interleaved
/// schedule needs micro_batches a multiple of pipeline. Throws InputError naming the field.
void check_virtual_stages(const ParallelConfig& cfg);

/// The time of one optimizer step on the GPU that limits it, in parts that add up exactly:
/// step = forward + backward + optimizer + communication (data + tensor + pipeline + zero) + bubble.
struct ParallelTiming {
  double forward_ms = 0, backward_ms = 0, optimizer_ms = 0;         // compute of the critical stage, all micro-batches
  double data_ms = 0, tensor_ms = 0, pipeline_ms = 0, zero_ms = 0;  // exposed communication
  double bubble_ms = 0;
  double offload_ms = 0;  // host transfers and the CPU optimizer step not hidden (training.offload, activation_offload)
  std::size_t critical_stage = 0;
  std::vector<std::size_t> stage_bounds;  // first layer of each model chunk (StagePlan::bounds), then the layer count
  double expert_ms = 0;   // exposed all-to-all dispatch and combine of the expert layers (parallel.expert)
  double context_ms = 0;  // exposed ring of context parallelism (parallel.context), all micro-batches
  // Not a part of the step: the host's time to issue the critical stage's forward and backward kernels, all
  // micro-batches, and whether it set that stage's forward or backward time (floor_at_host).
  std::array<double, 2> host_issue_ms{};  // forward, backward
  bool host_bound = false;
  double step_ms() const {
    return forward_ms + backward_ms + optimizer_ms + data_ms + tensor_ms + pipeline_ms + zero_ms + bubble_ms +
           offload_ms + expert_ms + context_ms;
  }
  std::int64_t virtual_stages = 1;  // model chunks per stage: chunk j of stage_bounds runs on stage j mod pipeline
};

/// Per stage of the pipeline (one micro-batch on one GPU of the stage): what the step needs from the
/// layers, so layouts that differ only in data degree, ZeRO stage or micro-batch count reuse it.
struct StagePlan {
  std::vector<std::size_t> bounds;                           // first layer of each chunk, then the layer count
  std::vector<double> forward, backward, tensor, optimizer;  // ms
  std::vector<double> params, largest_param;                 // parameters of the stage's shard
  std::vector<double> trainable;                             // of those, the ones the optimizer updates
  // Parameters whose gradients are reduced: the trainable ones and the frozen weights that get gradients
  // (training.finetune.frozen_gradients); empty in a plan built by hand: `trainable`.
  std::vector<double> reduced;
  double boundary_elements = 0;  // per sample, the largest activation sent between stages
  double busy_total = 0;         // sum over stages of forward + backward + tensor
  std::size_t critical = 0;      // the stage with the most forward + backward + tensor
  // Interleaved 1F1B: model chunks per stage; `bounds` then holds pipeline x virtual_stages chunks, chunk j on
  // stage j mod pipeline, and the per-stage sums add their chunks.
  std::int64_t virtual_stages = 1;
  // Expert parallelism: the all-to-alls per micro-batch (ms, counted in busy beside tensor), and the stage's
  // expert parameters, trainable ones and their optimizer time (sharded over the expert-data group).
  std::vector<double> expert, expert_params, expert_trainable, expert_optimizer;
  std::vector<double> context;  // ms, exposed context-parallel ring (part of busy)
  // parallel.expert_overlap: per stage, the all-to-all one merged forward-backward pair of micro-batches exposes
  // (paired_expert_exposure over its blocks); empty without the overlap.
  std::vector<double> expert_paired;
  // Per stage, one micro-batch: the host's time to issue its forward and backward kernels, and whether that time
  // set its forward or backward (floor_at_host); empty without the floor.
  std::vector<std::array<double, 2>> host_issue;
  std::vector<bool> host_bound;
};

/// Splits the layers into cfg.pipeline stages balanced by time and sums each stage (uses cfg's
/// tensor degree, micro-batch size and recomputation; not its data degree, ZeRO stage or micro-batches).
/// `context_ms`: per layer, the exposed context-parallel ring of one micro-batch (context_ring_ms); empty: none.
StagePlan plan_stages(const std::vector<std::array<double, 3>>& layer_ms, const ShardedNetwork& shard,
                      const ParallelConfig& cfg, const Fabric& fabric, Precision precision,
                      const std::vector<double>& context_ms = {});
/// The all-to-all time (ms) one merged pair of micro-batches exposes over layers [first, last) of `shard` under
/// Megatron-Core's combined 1F1B (parallel.expert_overlap): per block, max(0, combine - attention forward) +
/// max(0, 2 dispatch - (MLP backward + forward)) + max(0, combine - attention backward), the expert layers being the
/// MLP side and `layer_ms` their forward and backward; each all-to-all of `bytes_per_element` x its elements, run
/// as `dispatch` runs it.
double paired_expert_exposure(const ShardedNetwork& shard, const std::vector<std::array<double, 3>>& layer_ms,
                              double bytes_per_element, const Communicator& ep, const Fabric& fabric,
                              ExpertDispatch dispatch, std::size_t first, std::size_t last);

/// Exposed expert all-to-all time (ms) of a step under Megatron-Core's expert overlap (parallel.expert_overlap): the
/// forward of one micro-batch and the backward of another run merged, each one's all-to-alls behind the other's
/// compute; the micro-batches the critical stage runs alone (warm-up and cool-down, micro_batches_in_flight) expose
/// theirs: alone x a2a + (m - alone) x paired, `paired` the stage's expert_paired (a plan without it: the bound
/// max(0, a2a - (forward + backward)) of its per micro-batch sums).
double overlapped_expert_ms(const StagePlan& sp, const ParallelConfig& cfg);

/// Raises each stage's forward and backward of one micro-batch to at least the host's time to issue their kernels
/// (`layer_host_ms`: per layer, layer_host_ms of the sharded work; empty: no floor), then picks the critical stage
/// again.
void floor_at_host(StagePlan& plan, const std::vector<std::array<double, 2>>& layer_host_ms);

/// The step of `cfg` from its stage sums.
ParallelTiming finish_parallel(const StagePlan& plan, const ParallelConfig& cfg, const Fabric& fabric,
                               Precision precision);

/// Composes per-layer, per-micro-batch timings of the sharded work into the step of `cfg` on `acc`.
/// `layer_ms[l]` holds layer l's forward, backward (including recomputation) and optimizer time.
/// `layer_host_ms`: the host's issue time per layer (floor_at_host); empty: no floor.
ParallelTiming compose_parallel(const std::vector<std::array<double, 3>>& layer_ms, const ShardedNetwork& shard,
                                const ParallelConfig& cfg, const Fabric& fabric, Precision precision,
                                const std::vector<double>& context_ms = {},
                                const std::vector<std::array<double, 2>>& layer_host_ms = {});

}  // namespace prenet
