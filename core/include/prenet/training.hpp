#pragma once
// The training configuration of a request: precision, optimizer, batch and dataset sizes. The names, defaults
// and limits of its fields live in one table (core/src/request/options.cpp); the enums are for the physics.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace prenet {

enum class Precision { FP32, TF32, FP16, BF16, FP8 };
/// The update rule (training.optimizer). The last six are fine-tuning's memory savers: bitsandbytes' 8-bit
/// AdamW and its paged variants (paging moves states to host only under memory pressure: same bytes), Adafactor
/// (transformers' defaults), Lion and Muon (Newton-Schulz on hidden matrices, AdamW on the rest).
enum class Optimizer {
  None,
  SGD,
  Momentum,
  Adam,
  AdamW,
  Adagrad,
  Adadelta,
  RMSProp,
  AdamW8bit,
  PagedAdamW8bit,
  PagedAdamW,
  Adafactor,
  Lion,
  Muon
};
/// Where the weights the optimizer updates live (training.master_weights): an FP32 master copy beside 16-bit
/// working weights (mixed precision), or pure bf16 weights, gradients and states (torchtune, litgpt).
enum class MasterWeights { FP32, BF16 };
/// How attention's core runs: separate kernels writing the score matrix (eager), or one fused kernel per
/// pass that keeps scores on chip: the one the kernel set picks on each accelerator (Flash: TransformerEngine's
/// cuDNN kernel; PyTorch SDPA's default, cuDNN's or FlashAttention-2's by part), or FlashAttention-2 on
/// every part (Flash2: PyTorch up to 2.10, the flash-attn 2 package).
enum class AttentionKernel { Eager, Flash, Flash2 };
/// Whether attention's core is one fused kernel per pass (no score matrix in memory).
inline bool fused_attention(AttentionKernel a) { return a != AttentionKernel::Eager; }
/// Whose kernels run the layers: PyTorch's operations as Hugging Face writes them (activations such as
/// gelu_new as chains of ops, GLUs as activation then product, eager softmax on autocast's FP32 list), or
/// Megatron-LM's fused ones (bias-GELU, SwiGLU and scale-mask-softmax in one 16-bit kernel each).
enum class KernelSet { PyTorch, Megatron };
/// How the optimizer's update runs: one fused pass over each parameter's states (apex, DeepSpeed,
/// Megatron, PyTorch's fused=True), or PyTorch's default multi-tensor "foreach" ops, one pass per op.
enum class OptimizerImpl { Fused, Foreach };
/// How convolution tensors lie in memory: NHWC (PyTorch's channels_last, cuDNN's tensor-core layout) or NCHW
/// (PyTorch's default), which cuDNN transposes around each convolution under 16-bit training.
enum class MemoryFormat { ChannelsLast, NCHW };
/// How FP8 training scales its tensors (training.fp8_recipe; core/src/layers/fp8.cpp): Transformer Engine's
/// DelayedScaling (per-tensor scales from an amax history), Float8CurrentScaling (per-tensor, this tensor's amax),
/// MXFP8BlockScaling (1x32 blocks, E8M0 scales; Blackwell), Float8BlockScaling (DeepSeek-V3's 1x128 activation
/// tiles and 128x128 weight blocks), NVFP4BlockScaling (refused: no catalogue part has an FP4 peak).
enum class Fp8Recipe { Delayed, Current, MXFP8, Blockwise, NVFP4 };

// Names as the request writes them (the options table's values).
const char* to_string(Precision p);
const char* to_string(Optimizer o);
const char* to_string(AttentionKernel a);
const char* to_string(KernelSet k);
const char* to_string(OptimizerImpl i);
const std::vector<std::string>& precision_names();
const std::vector<std::string>& optimizer_names();
/// Parses a name from precision_names(); the caller has validated it.
Precision precision_from_string(const std::string& name);
/// Parses a name from optimizer_names(); the caller has validated it.
Optimizer optimizer_from_string(const std::string& name);

/// Bytes of one activation element as stored between layers (half for mixed precision and FP8).
double activation_bytes(Precision p);
/// True when weights are kept in a 16-bit copy beside FP32 master weights.
bool is_mixed(Precision p);

/// Bytes read and written per parameter by one update step of the optimizer (FP32 states): one pass that
/// reads and writes each state once when fused; PyTorch's foreach ops, each a pass, otherwise.
double optimizer_bytes_per_parameter(Optimizer o, OptimizerImpl impl = OptimizerImpl::Fused);
/// Arithmetic per parameter of one update step.
double optimizer_flops_per_parameter(Optimizer o);
/// State tensors kept per parameter (momentum, squared averages, ...) as the optimizer keeps them for a large
/// matrix: 8-bit ones count as one each (their bytes are in memory.cpp's rules); Adafactor's factored second
/// moment and Muon's momentum are shape-dependent (0 and 1 here, see optimizer_state_bytes).
int optimizer_states(Optimizer o);
/// True for bitsandbytes' optimizers (8-bit and paged): one fused CUDA kernel whatever optimizer_impl says,
/// 32-bit states kept in FP32 even beside bf16 weights.
bool is_bitsandbytes(Optimizer o);
/// True for the 8-bit optimizers (blockwise-quantized states, bitsandbytes).
bool is_8bit(Optimizer o);
/// Bytes of one 32-bit-kind state element: FP32, or the weights' bf16 under master_weights bf16 for the
/// optimizers that allocate states like their parameter (torch.optim, Lion, Muon; not bitsandbytes or
/// transformers' Adafactor, which keep FP32).
double state_element_bytes(Optimizer o, MasterWeights master);
/// Bytes one update step moves per parameter, with the 16-bit gradient read and weight copy written under
/// mixed precision; under master_weights bf16 every 4-byte access of weights, gradients and (torch-kind) states
/// is 2 bytes and there is no copy. For Muon: the elementwise part of its hidden matrices' step.
double optimizer_step_bytes(Optimizer o, OptimizerImpl impl, Precision precision, MasterWeights master);

/// How a fine-tune trains the model (training.finetune): every weight (full), low-rank adapters beside frozen
/// weights (LoRA; QLoRA over a 4-bit base), or only the top blocks with the rest frozen (freeze).
enum class FinetuneMethod { Full, Lora, Qlora, Freeze };
/// How frozen base weights are stored (training.finetune.base_precision): plain floats, or quantized as
/// bitsandbytes does (int8: LLM.int8() with a scale per row; nf4: 4-bit NormalFloat in blocks of 64 with
/// double-quantized scales).
enum class BasePrecision { FP32, BF16, FP16, INT8, NF4 };

/// The request's training.finetune (docs/API.md): its fields are options-table rows "finetune.<field>".
struct Finetune {
  bool given = false;  // the request had a finetune object (the echo carries it then)
  FinetuneMethod method = FinetuneMethod::Full;
  std::int64_t rank = 16;
  double alpha = 32, dropout = 0.05;
  std::vector<std::string> targets = {"q_proj", "v_proj"};  // module role names, or {"all-linear"} (PEFT's default)
  std::optional<BasePrecision> base_precision;   // absent: nf4 for qlora, else the training precision's weights
  std::optional<std::int64_t> trainable_layers;  // freeze: the top N blocks train
  // Frozen weights sharing a unit (a block; the layers outside blocks) with trained ones get gradients, as FSDP1's
  // flat parameters under use_orig_params give them (docs/PREDICTION.md, "Fine-tuning").
  bool frozen_gradients = false;
  /// True for the methods with LoRA adapters (lora, qlora).
  bool adapters() const { return method == FinetuneMethod::Lora || method == FinetuneMethod::Qlora; }
};

/// How the loss meets the vocabulary head (training.loss): one cross-entropy over the full logits, or
/// torchtune's CEWithChunkedOutputLoss (the head and the FP32 loss over 8 chunks of the tokens).
enum class LossKind { Standard, ChunkedCE };
/// Output chunks of torchtune's CEWithChunkedOutputLoss (num_output_chunks, its default 8).
constexpr int kLossChunks = 8;
/// What moves to host memory (training.offload): nothing, the optimizer's states with the FP32 weights and the
/// gradients (DeepSpeed ZeRO-Offload), or those and the 16-bit weights too (ZeRO-Infinity CPU, FSDP CPUOffload).
enum class Offload { None, Optimizer, OptimizerParams };
/// Whose bytes per parameter the model states follow under mixed precision (training.state_accounting;
/// docs/PREDICTION.md, "Gradient and master-weight accounting"): DeepSpeed's 16-bit weights, FP32 master and
/// 16-bit gradients; Megatron-LM's FP32 main gradients; PyTorch autocast's FP32 weights and gradients; FSDP2's
/// MixedPrecisionPolicy (FP32 sharded parameters and gradients, 16-bit copies of the gathered layers only).
enum class StateAccounting { DeepSpeed, Megatron, Autocast, Fsdp, MegatronBf16 };

struct TrainingConfig {
  std::int64_t batch_size = 32;
  std::optional<std::int64_t> seq_len;
  std::optional<std::int64_t> image_size;
  Precision precision = Precision::FP32;
  Optimizer optimizer = Optimizer::Adam;
  AttentionKernel attention = AttentionKernel::Eager;
  KernelSet kernels = KernelSet::PyTorch;
  OptimizerImpl optimizer_impl = OptimizerImpl::Fused;
  std::optional<MemoryFormat> memory_format;  // absent: timed as channels_last, and not echoed
  std::int64_t dataset_size = 0;              // 0: batch_size x 100
  double epochs = 1.0;
  // Where a setting the request left out came from, as the training echo says it ("" : the request or the
  // table's default): the config's dtype field for the precision, the config's positions for the length.
  std::string precision_from, seq_len_from;
  Finetune finetune;
  // issue 19, helper tricks: the loss, torch.compile and sequence packing (docs/PREDICTION.md, "Loss, compile and
  // packing").
  LossKind loss = LossKind::Standard;
  bool compile = false;                        // torch.compile (Inductor) fuses elementwise chains
  bool compile_loss = false;                   // the loss under torch.compile too (torchtune's compile does that)
  bool cuda_graphs = false;                    // replayed as CUDA graphs: no per-kernel host issue (host_issue.hpp)
  bool packing = false;                        // samples concatenated into full rows
  std::optional<std::int64_t> average_tokens;  // mean real tokens per sample; absent: every sample is full
  std::int64_t token_seq_len = 0;              // set once the model is read: a token model's positions per row
  Offload offload = Offload::None;             // training.offload (docs/PREDICTION.md, Offload)
  bool activation_offload = false;             // training.activation_offload: saved activations kept in host memory
  MasterWeights master_weights = MasterWeights::FP32;  // bf16: pure bf16 training, no FP32 copy
  bool optimizer_in_backward = false;                  // each parameter stepped, its gradient freed, during backward
  StateAccounting state_accounting = StateAccounting::DeepSpeed;  // training.state_accounting
  // issue 18, mixture of experts (docs/PREDICTION.md, "Mixture of experts"): the busiest expert's tokens over the
  // mean (1: balanced routing), and the capacity factor (absent: dropless).
  double moe_imbalance = 1.0;
  std::optional<double> moe_capacity_factor;
  // issue 18, helper fp8: training.fp8_recipe (absent under precision fp8: delayed), and whether every accelerator
  // of the request runs FP8 GEMMs in any layout (Blackwell B200/B300: no transposed copies; resolve_fp8_recipe).
  std::optional<Fp8Recipe> fp8_recipe;
  bool fp8_any_layout = false;
  // issue 18, multi-token prediction (Megatron-Core's mtp_num_layers): depths appended to a decoder
  // (model/mtp.cpp, run by resolve_model); 0: none.
  std::int64_t mtp_layers = 0;
  // Megatron-Core's mtp_use_repeated_layer: every depth runs depth 1's module (one set of weights).
  bool mtp_repeated_layer = false;
  // issue 18, FP8 recipes: the first and last decoder blocks whose linears stay 16-bit (Megatron's
  // first_last_layers_bf16 with num_layers_at_start_in_bf16 / num_layers_at_end_in_bf16); 0: none.
  std::int64_t bf16_layers_at_start = 0, bf16_layers_at_end = 0;
  // issue 18, FP8 recipes: glob patterns over layer names whose FP8 linears stay 16-bit (Transformer Engine's
  // quantization-recipe matchers, Megatron-Core's quant_recipe); empty: none.
  std::vector<std::string> bf16_modules;
  // issue 20, what the request can say: training.input_rate, the batch_size units (samples, or rows of tokens) per
  // second each model replica's input pipeline delivers; absent: not limited (docs/PREDICTION.md, "Input pipeline").
  std::optional<double> input_rate;

  /// Optimizer steps in one pass over the dataset: ceil(rows / batch_size), rows = dataset_size samples, or
  /// with packing ceil(dataset_size x average_tokens / seq_len) full rows.
  std::int64_t steps_per_epoch() const;
  /// Real (non-padding) tokens one step trains on: batch x seq_len packed or full, batch x average_tokens
  /// padded; 0 for a model that does not read tokens.
  double real_tokens_per_step() const;
  /// How long `replicas` model replicas' input pipelines take to deliver one step's batch (each its batch_size /
  /// replicas share at input_rate); 0 when input_rate is absent.
  double input_ms_per_step(std::int64_t replicas) const;
};

/// Once the model is read: records a token model's `seq_len` positions per row (token_model false: none) and
/// checks training.packing and training.average_tokens against it (errors name the field).
void resolve_packing(TrainingConfig& training, bool token_model, std::int64_t seq_len);
/// Refuses the optimizer switches the core cannot model or that contradict the request: master_weights bf16 with
/// precision fp32/tf32, optimizer_in_backward with gradient accumulation (micro_batches > 1) or no optimizer.
/// Throws InputError naming the field.
void check_optimizer_switches(const TrainingConfig& training, std::int64_t micro_batches);

}  // namespace prenet
