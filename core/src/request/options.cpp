#include "request/options.hpp"

#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include "prenet/parallel.hpp"
#include "prenet/request.hpp"

namespace prenet {
namespace {

template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};

/// A field's value type, looking through std::optional.
template <typename F>
struct field_value {
  using type = F;
};
template <typename T>
struct field_value<std::optional<T>> {
  using type = T;
};

/// A typed value in the slot of OptionValue its kind reads (an enum as a choice index).
template <typename T>
OptionValue option_value(const T& value) {
  OptionValue v;
  if constexpr (std::is_same_v<T, bool>) {
    v.boolean = value;
  } else if constexpr (std::is_enum_v<T>) {
    v.choice = static_cast<std::size_t>(value);
  } else if constexpr (std::is_integral_v<T>) {
    v.integer = value;
  } else if constexpr (std::is_floating_point_v<T>) {
    v.number = value;
  } else if constexpr (std::is_same_v<T, std::string>) {
    v.text = value;
  } else {
    v.names = value;
  }
  return v;
}

/// Stores `v` in `field` as its type (an optional field becomes set).
template <typename F>
void assign(F& field, const OptionValue& v) {
  using T = typename field_value<F>::type;
  if constexpr (std::is_same_v<T, bool>) {
    field = v.boolean;
  } else if constexpr (std::is_enum_v<T>) {
    field = static_cast<T>(v.choice);  // the values are listed in the enum's order
  } else if constexpr (std::is_integral_v<T>) {
    field = v.integer;
  } else if constexpr (std::is_floating_point_v<T>) {
    field = v.number;
  } else if constexpr (std::is_same_v<T, std::string>) {
    field = v.text;
  } else {
    field = v.names;
  }
}

/// A field as an OptionValue; nullopt when an optional field is unset.
template <typename F>
std::optional<OptionValue> value_of(const F& field) {
  if constexpr (is_optional<F>::value) {
    if (!field) return std::nullopt;
    return option_value(*field);
  } else {
    return option_value(field);
  }
}

/// Stores an option's value in its TrainingConfig member.
template <auto Member>
void store_member(TrainingConfig& t, const OptionValue& v) {
  assign(t.*Member, v);
}

/// The member's value; nullopt when an optional member is unset.
template <auto Member>
std::optional<OptionValue> read_member(const TrainingConfig& t) {
  return value_of(t.*Member);
}

/// The member's value, unset while it holds `Default`: options whose table default is null ("absent: none")
/// and that the echo carries only when given otherwise (master_weights, offload, loss, the switches).
template <auto Member, auto Default>
std::optional<OptionValue> read_unless(const TrainingConfig& t) {
  if (t.*Member == Default) return std::nullopt;
  return value_of(t.*Member);
}

/// A list member, unset while empty (options whose table default is null: "absent: none").
template <auto Member>
std::optional<OptionValue> read_names_given(const TrainingConfig& t) {
  if ((t.*Member).empty()) return std::nullopt;
  return value_of(t.*Member);
}

/// dataset_size 0 means "batch_size x 100": unset for the table.
std::optional<OptionValue> read_dataset_size(const TrainingConfig& t) {
  if (t.dataset_size <= 0) return std::nullopt;
  return option_value(t.dataset_size);
}

/// training.moe_imbalance 1 (balanced routing) is the default: unset for the echo.
std::optional<OptionValue> read_moe_imbalance(const TrainingConfig& t) {
  if (t.moe_imbalance == 1.0) return std::nullopt;
  return option_value(t.moe_imbalance);
}

/// Stores a training.finetune field in its member of TrainingConfig::finetune.
template <auto Member>
void store_finetune(TrainingConfig& t, const OptionValue& v) {
  assign(t.finetune.*Member, v);
}

/// A training.finetune field; every one is echoed when the request has a finetune object (an unset optional
/// one excepted), none otherwise.
template <auto Member>
std::optional<OptionValue> read_finetune(const TrainingConfig& t) {
  if (!t.finetune.given) return std::nullopt;
  return value_of(t.finetune.*Member);
}

/// A training.finetune switch, echoed only when the request has a finetune object and sets it off `Default`.
template <auto Member, auto Default>
std::optional<OptionValue> read_finetune_unless(const TrainingConfig& t) {
  if (!t.finetune.given || t.finetune.*Member == Default) return std::nullopt;
  return value_of(t.finetune.*Member);
}

/// The rows of the model, batch, precision, optimizer, kernels and dataset (the first fields validated).
std::vector<TrainingOption> core_rows() {
  using K = OptionKind;
  using TC = TrainingConfig;
  // clang-format off
  return {
      {"batch_size", K::Integer, {}, {}, 1, 1 << 20, 32,
       "Batch size", "samples per optimizer step (with parallel: the global batch)",
       {"batch", "batch_size", "batch-size"}, "batch", "N", Echo::Always,
       store_member<&TC::batch_size>, read_member<&TC::batch_size>},
      {"seq_len", K::Integer, {}, {}, 1, 1 << 20, nullptr,
       "Sequence length", "tokens per sample; absent: the model's own",
       {"seq_len", "seq-len"}, "seq-len", "N", Echo::Never,
       store_member<&TC::seq_len>, read_member<&TC::seq_len>},
      {"image_size", K::Integer, {}, {}, 1, 16384, nullptr,
       "Image size (px)", "image height and width in pixels; absent: the model's own",
       {"image_size", "image-size"}, "image-size", "N", Echo::Never,
       store_member<&TC::image_size>, read_member<&TC::image_size>},
      {"precision", K::Choice, {"fp32", "tf32", "fp16", "bf16", "fp8"},
       {"FP32", "TF32", "FP16 mixed", "BF16 mixed", "FP8"}, 0, 0, "fp32",
       "Precision", "arithmetic of the matrix units; fp16, bf16 and fp8 train with FP32 master weights",
       {"precision"}, "precision", "P", Echo::Always,
       store_member<&TC::precision>, read_member<&TC::precision>},
      {"optimizer", K::Choice, {"none", "sgd", "momentum", "adam", "adamw", "adagrad", "adadelta", "rmsprop",
                                "adamw_8bit", "paged_adamw_8bit", "paged_adamw", "adafactor", "lion", "muon"},
       {"none (forward + backward only)", "SGD", "SGD with momentum", "Adam", "AdamW", "Adagrad", "Adadelta",
        "RMSprop", "AdamW 8-bit (bitsandbytes)", "paged AdamW 8-bit (bitsandbytes)", "paged AdamW (bitsandbytes)",
        "Adafactor", "Lion", "Muon (AdamW for embeddings, head, norms)"}, 0, 0, "adam",
       "Optimizer", "the update rule; none times forward and backward only",
       {"optimizer"}, "optimizer", "O", Echo::Always,
       store_member<&TC::optimizer>, read_member<&TC::optimizer>},
      {"optimizer_impl", K::Choice, {"fused", "foreach"}, {"fused (one pass)", "foreach (PyTorch default)"}, 0, 0,
       "fused", "Optimizer kernels",
       "fused: one pass over each parameter's states (apex, DeepSpeed, Megatron, fused=True); foreach: "
       "torch.optim's default, one pass per tensor operation",
       {"optimizer_impl"}, "optimizer-impl", "I", Echo::Always,
       store_member<&TC::optimizer_impl>, read_member<&TC::optimizer_impl>},
      {"attention", K::Choice, {"eager", "flash", "flash2"},
       {"eager (scores in memory)", "fused (the framework's kernel)", "fused (FlashAttention-2)"}, 0, 0,
       "eager", "Attention",
       "eager: attention writes its score matrices to memory; flash: one fused kernel per pass keeps them on chip, "
       "the one the kernel set runs on each accelerator (PyTorch 2.11 and later: cuDNN's on H100, H200 and B200-class "
       "parts, FlashAttention-2 elsewhere; Megatron-LM: cuDNN's); flash2: FlashAttention-2 on every accelerator "
       "(PyTorch up to 2.10, the flash-attn 2 package)",
       {"attention"}, "attention", "A", Echo::Always,
       store_member<&TC::attention>, read_member<&TC::attention>},
      {"kernels", K::Choice, {"pytorch", "megatron"}, {"PyTorch (Hugging Face code)", "Megatron-LM (fused)"}, 0, 0,
       "pytorch", "Layer kernels",
       "pytorch: the operations as Hugging Face writes them; megatron: Megatron-LM's fused bias-GELU, SwiGLU and "
       "softmax",
       {"kernels"}, "kernels", "K", Echo::Always,
       store_member<&TC::kernels>, read_member<&TC::kernels>},
      {"memory_format", K::Choice, {"channels_last", "nchw"}, {"channels_last (NHWC)", "NCHW (PyTorch default)"},
       0, 0, nullptr, "Memory format",
       "convolution networks: nchw adds cuDNN's layout transposes around each convolution under 16-bit training; "
       "absent: timed as channels_last",
       {"memory_format"}, "memory-format", "F", Echo::WhenGiven,
       store_member<&TC::memory_format>, read_member<&TC::memory_format>},
      {"dataset_size", K::Integer, {}, {}, 1, static_cast<double>(std::int64_t{1} << 50), nullptr,
       "Samples per epoch", "samples in one epoch; absent: batch_size x 100",
       {"dataset_size", "dataset-size"}, "dataset-size", "N", Echo::Never,
       store_member<&TC::dataset_size>, read_dataset_size},
      {"epochs", K::Number, {}, {}, 1e-6, 1e6, 1.0,
       "Epochs", "passes over the dataset (fractions allowed)",
       {"epochs"}, "epochs", "N", Echo::Never,
       store_member<&TC::epochs>, read_member<&TC::epochs>},
  };
  // clang-format on
}

/// The rows of the "finetune" section, nested in the request as training.finetune.<field>.
std::vector<TrainingOption> finetune_rows() {
  using K = OptionKind;
  // clang-format off
  return {
      {"finetune.method", K::Choice, {"full", "lora", "qlora", "freeze"},
       {"full (every weight)", "LoRA (adapters, frozen base)", "QLoRA (adapters, 4-bit base)",
        "freeze (top blocks train)"}, 0, 0, "full",
       "Fine-tuning", "what trains: every weight, LoRA adapters beside a frozen base (QLoRA: a 4-bit base), or the "
       "top trainable_layers blocks",
       {"finetune", "ft"}, "finetune", "M", Echo::WhenGiven,
       store_finetune<&Finetune::method>, read_finetune<&Finetune::method>},
      {"finetune.rank", K::Integer, {}, {}, 1, 65536, 16,
       "LoRA rank", "the adapters' rank r (each adapted matrix gains r x (in + out) weights)",
       {"lora_rank", "rank"}, "lora-rank", "R", Echo::WhenGiven,
       store_finetune<&Finetune::rank>, read_finetune<&Finetune::rank>},
      {"finetune.alpha", K::Number, {}, {}, 1e-9, 1e9, 32,
       "LoRA alpha", "the adapters' scale alpha / r (no effect on time or memory)",
       {"lora_alpha", "alpha"}, "lora-alpha", "A", Echo::WhenGiven,
       store_finetune<&Finetune::alpha>, read_finetune<&Finetune::alpha>},
      {"finetune.dropout", K::Number, {}, {}, 0, 0.999, 0.05,
       "LoRA dropout", "dropout on each adapter's input (0: none, its input is the layer's own)",
       {"lora_dropout"}, "lora-dropout", "P", Echo::WhenGiven,
       store_finetune<&Finetune::dropout>, read_finetune<&Finetune::dropout>},
      {"finetune.targets", K::Names, {}, {}, 0, 0, Json::array({"q_proj", "v_proj"}),
       "LoRA targets", "modules that get adapters, by Llama's names (q_proj, k_proj, v_proj, o_proj, gate_proj, "
       "up_proj, down_proj, lm_head; a family's own names are mapped) or all-linear",
       {"lora_targets", "targets"}, "lora-targets", "LIST", Echo::WhenGiven,
       store_finetune<&Finetune::targets>, read_finetune<&Finetune::targets>},
      {"finetune.base_precision", K::Choice, {"fp32", "bf16", "fp16", "int8", "nf4"},
       {"FP32", "BF16", "FP16", "int8 (LLM.int8)", "NF4 (4-bit, QLoRA)"}, 0, 0, nullptr,
       "Frozen weights", "how frozen weights are stored; absent: nf4 for qlora, else the training precision's",
       {"base_precision"}, "base-precision", "P", Echo::WhenGiven,
       store_finetune<&Finetune::base_precision>, read_finetune<&Finetune::base_precision>},
      {"finetune.trainable_layers", K::Integer, {}, {}, 0, Limits::kMaxLayers, nullptr,
       "Trainable blocks", "freeze: the top N blocks (and what follows them) train, the rest is frozen",
       {"trainable_layers"}, "trainable-layers", "N", Echo::WhenGiven,
       store_finetune<&Finetune::trainable_layers>, read_finetune<&Finetune::trainable_layers>},
      {"finetune.frozen_gradients", K::Boolean, {}, {}, 0, 0, nullptr,
       "Frozen weights' gradients", "frozen weights in a block (or among the layers outside blocks) that also trains "
       "get gradients, as FSDP1 with use_orig_params builds a unit mixing trained and frozen weights: their gradient "
       "memory and weight-gradient GEMMs, no optimizer states; needs method lora or freeze over an unquantized base; "
       "absent: false",
       {"frozen_gradients"}, "frozen-gradients", nullptr, Echo::WhenGiven,
       store_finetune<&Finetune::frozen_gradients>, read_finetune_unless<&Finetune::frozen_gradients, false>},
  };
  // clang-format on
}

/// The rows of the training recipe's switches: loss, compile, packing, offload, master weights, accounting,
/// mixture-of-experts routing and FP8.
std::vector<TrainingOption> recipe_rows() {
  using K = OptionKind;
  using TC = TrainingConfig;
  // clang-format off
  return {
      {"loss", K::Choice, {"standard", "chunked_ce"}, {"standard (full logits)", "chunked CE (8 chunks, torchtune)"},
       0, 0, nullptr, "Loss",
       "standard: one FP32 cross-entropy over the full logits; chunked_ce: torchtune's CEWithChunkedOutputLoss, the "
       "head and the FP32 loss over 8 chunks of the tokens; absent: standard",
       {"loss"}, "loss", "L", Echo::WhenGiven,
       store_member<&TC::loss>, read_unless<&TC::loss, LossKind::Standard>},
      {"compile", K::Boolean, {}, {}, 0, 0, nullptr,
       "torch.compile", "Inductor fuses elementwise chains (composed activations, a GLU's activation and product) "
       "into single kernels",
       {"compile"}, "compile", nullptr, Echo::WhenGiven,
       store_member<&TC::compile>, read_unless<&TC::compile, false>},
      {"compile_loss", K::Boolean, {}, {}, 0, 0, nullptr,
       "Compiled loss", "the cross-entropy under torch.compile too (torchtune's compile compiles model and loss; "
       "torchtitan's the blocks, the loss only with compile.components \"loss\"): it saves its 16-bit logits, not FP32 "
       "log-probabilities",
       {"compile_loss"}, "compile-loss", nullptr, Echo::WhenGiven,
       store_member<&TC::compile_loss>, read_unless<&TC::compile_loss, false>},
      {"cuda_graphs", K::Boolean, {}, {}, 0, 0, nullptr,
       "CUDA graphs", "the step captured and replayed as CUDA graphs (torch.compile mode \"reduce-overhead\", "
       "Megatron's full-iteration graphs): one launch per graph, so a pass of many short kernels no longer waits for "
       "the host to issue each one; absent: eager launches, each pass at least its kernels x 17.8 us",
       {"cuda_graphs", "graphs"}, "cuda-graphs", nullptr, Echo::WhenGiven,
       store_member<&TC::cuda_graphs>, read_unless<&TC::cuda_graphs, false>},
      {"packing", K::Boolean, {}, {}, 0, 0, nullptr,
       "Sequence packing", "token models: samples concatenated into full rows (no padding); false: each sample "
       "padded to seq_len",
       {"packing"}, "packing", nullptr, Echo::WhenGiven,
       store_member<&TC::packing>, read_unless<&TC::packing, false>},
      {"average_tokens", K::Integer, {}, {}, 1, 1 << 20, nullptr,
       "Tokens per sample", "token models: mean real tokens per sample of the dataset; absent: every sample is "
       "seq_len long",
       {"average_tokens", "average-tokens"}, "average-tokens", "N", Echo::WhenGiven,
       store_member<&TC::average_tokens>, read_member<&TC::average_tokens>},
      {"offload", K::Choice, {"none", "optimizer", "optimizer_params"},
       {"none", "optimizer states (ZeRO-Offload)", "optimizer and weights (FSDP CPU offload)"}, 0, 0, nullptr,
       "Offload to host", "optimizer: optimizer states, FP32 weights and gradients in host memory, the step on the CPU "
       "(DeepSpeed ZeRO-Offload); optimizer_params: the 16-bit weights too, streamed in per layer (ZeRO-Infinity "
       "CPU, FSDP CPUOffload); absent: none",
       {"offload"}, "offload", "O", Echo::WhenGiven,
       store_member<&TC::offload>, read_unless<&TC::offload, Offload::None>},
      {"activation_offload", K::Boolean, {}, {}, 0, 0, nullptr,
       "Activation offload", "saved activations copied to pinned host memory in forward and back in backward "
       "(torchtune OffloadActivations); absent: false",
       {"activation_offload", "act_offload"}, "activation-offload", nullptr, Echo::WhenGiven,
       store_member<&TC::activation_offload>, read_unless<&TC::activation_offload, false>},
      {"master_weights", K::Choice, {"fp32", "bf16"},
       {"FP32 (mixed precision)", "bf16 (pure bf16, no FP32 copy)"}, 0, 0, nullptr,
       "Master weights", "fp32: 16-bit weights beside an FP32 master copy; bf16: weights, gradients and optimizer "
       "states in bf16 (torchtune, litgpt); needs precision bf16; absent: fp32",
       {"master_weights", "master"}, "master-weights", "W", Echo::WhenGiven,
       store_member<&TC::master_weights>, read_unless<&TC::master_weights, MasterWeights::FP32>},
      {"optimizer_in_backward", K::Boolean, {}, {}, 0, 0, nullptr,
       "Optimizer in backward", "each parameter stepped and its gradient freed as backward produces it (torchtune "
       "optimizer_in_bwd): one layer's gradients held, not all; no gradient accumulation; absent: false",
       {"optimizer_in_backward", "opt_in_bwd"}, "optimizer-in-backward", nullptr, Echo::WhenGiven,
       store_member<&TC::optimizer_in_backward>, read_unless<&TC::optimizer_in_backward, false>},
      {"state_accounting", K::Choice, {"deepspeed", "megatron", "autocast", "fsdp", "megatron_bf16"},
       {"DeepSpeed (16-bit gradients)", "Megatron-LM (FP32 main gradients)", "PyTorch autocast (FP32 weights)",
        "FSDP2 mixed precision (FP32 shards)", "Megatron-LM, 16-bit gradient reduction"}, 0, 0, nullptr,
       "State accounting", "bytes per parameter of weights, master copy and gradients under mixed precision: deepspeed "
       "2 + 4 + 2, megatron 2 + 4 + 4 (FP32 main gradients), autocast 4 + 0 + 4 (FP32 weights, 16-bit casts per "
       "forward), fsdp 4 + 4 sharded (needs zero_stage 3), megatron_bf16 2 + 4 + 2 (grad_reduce_in_fp32 off, as "
       "Megatron-Bridge's performance recipes run); absent: deepspeed",
       {"state_accounting", "accounting"}, "state-accounting", "S", Echo::WhenGiven,
       store_member<&TC::state_accounting>, read_unless<&TC::state_accounting, StateAccounting::DeepSpeed>},
      {"moe_imbalance", K::Number, {}, {}, 1, 1 << 16, nullptr,
       "MoE imbalance", "mixture of experts: the busiest expert's routed tokens over the mean; the step waits for "
       "it; absent: 1 (balanced routing)",
       {"moe_imbalance"}, "moe-imbalance", "X", Echo::WhenGiven,
       store_member<&TC::moe_imbalance>, read_moe_imbalance},
      {"moe_capacity_factor", K::Number, {}, {}, 0.01, 1 << 16, nullptr,
       "MoE capacity factor", "mixture of experts: each expert takes at most capacity x tokens x top_k / experts, "
       "padded to it (the GEMMs run at the capacity); absent: dropless",
       {"moe_capacity_factor"}, "moe-capacity-factor", "C", Echo::WhenGiven,
       store_member<&TC::moe_capacity_factor>, read_member<&TC::moe_capacity_factor>},
      {"input_rate", K::Number, {}, {}, 1e-3, 1e9, nullptr,
       "Input pipeline rate", "batch_size units (samples, or rows of tokens) per second that each model replica's "
       "input pipeline delivers (loading, decoding, augmenting on the host, prefetched beside the compute); a step "
       "takes at least its share over this rate; absent: not limited",
       {"input_rate"}, "input-rate", "R", Echo::WhenGiven,
       store_member<&TC::input_rate>, read_member<&TC::input_rate>},
      {"fp8_recipe", K::Choice, {"delayed", "current", "mxfp8", "blockwise", "nvfp4"},
       {"delayed (per-tensor, amax history)", "current (per-tensor, this step's amax)",
        "MXFP8 (1x32 blocks, Blackwell)", "blockwise (1x128 / 128x128, DeepSeek-V3)", "NVFP4 (4-bit, Blackwell; experimental)"},
       0, 0, nullptr, "FP8 recipe",
       "precision fp8: how Transformer Engine scales the blocks' linear layers, which alone run in FP8 (attention's "
       "core, embeddings, head and norms stay 16-bit); mxfp8 needs B200/B300-class Blackwell, blockwise Hopper or "
       "later, nvfp4 (4-bit GEMMs at the FP4 peak, experimental) B200/B300-class Blackwell; absent: delayed",
       {"fp8_recipe"}, "fp8-recipe", "R", Echo::WhenGiven,
       store_member<&TC::fp8_recipe>, read_member<&TC::fp8_recipe>},
      {"mtp_layers", K::Integer, {}, {}, 0, 64, nullptr,
       "MTP depths", "multi-token prediction (DeepSeek-V3; Megatron-Core's mtp_num_layers): each depth adds two "
       "norms, a projection of the concatenated hidden state and embedding of the next token, a copy of the last "
       "block and a loss through the shared head; absent: none",
       {"mtp_layers"}, "mtp-layers", "N", Echo::WhenGiven,
       store_member<&TC::mtp_layers>, read_unless<&TC::mtp_layers, std::int64_t{0}>},
      {"mtp_repeated_layer", K::Boolean, {}, {}, 0, 0, nullptr,
       "MTP repeated layer", "multi-token prediction: every depth runs the first depth's module, one set of weights "
       "(Megatron-Core's mtp_use_repeated_layer; Nemotron 3 Super's recipes: 2 depths); absent: false",
       {"mtp_repeated_layer"}, "mtp-repeated-layer", nullptr, Echo::WhenGiven,
       store_member<&TC::mtp_repeated_layer>, read_unless<&TC::mtp_repeated_layer, false>},
      {"bf16_layers_at_start", K::Integer, {}, {}, 0, 10000, nullptr,
       "16-bit first blocks", "precision fp8: the first decoder blocks whose linears stay 16-bit (Megatron's "
       "first_last_layers_bf16 with num_layers_at_start_in_bf16); absent: 0",
       {"bf16_layers_at_start"}, "bf16-layers-at-start", "N", Echo::WhenGiven,
       store_member<&TC::bf16_layers_at_start>, read_unless<&TC::bf16_layers_at_start, std::int64_t{0}>},
      {"bf16_layers_at_end", K::Integer, {}, {}, 0, 10000, nullptr,
       "16-bit last blocks", "precision fp8: the last decoder blocks whose linears stay 16-bit (Megatron's "
       "first_last_layers_bf16 with num_layers_at_end_in_bf16; Nemotron 3 Super's NVFP4 recipe: 14); absent: 0",
       {"bf16_layers_at_end"}, "bf16-layers-at-end", "N", Echo::WhenGiven,
       store_member<&TC::bf16_layers_at_end>, read_unless<&TC::bf16_layers_at_end, std::int64_t{0}>},
      {"bf16_modules", K::Names, {}, {}, 0, 0, nullptr,
       "16-bit modules", "precision fp8: patterns over the layer names of the per-layer table ('*' any run of "
       "characters, '?' one) whose linears stay 16-bit, as Transformer Engine's quantization-recipe matchers keep "
       "modules in BF16 (Megatron-Core's quant_recipe; keep_mtp_spec_in_bf16 is mtp.*); absent: none",
       {"bf16_modules"}, "bf16-modules", "LIST", Echo::WhenGiven,
       store_member<&TC::bf16_modules>, read_names_given<&TC::bf16_modules>},
  };
  // clang-format on
}

/// One row per field of the request's "training" object, in the order they are validated. Each row: key, kind,
/// values and their labels (choices), min and max (numbers), default; label and doc; link names, CLI flag and
/// its placeholder; echo; how it is stored in and read from TrainingConfig.
std::vector<TrainingOption> build_options() {
  // A table, one row per option, reads better laid out by hand than one field per line; it is kept in three
  // parts so that each stays readable.
  std::vector<TrainingOption> rows = core_rows();
  for (auto part : {finetune_rows(), recipe_rows()}) rows.insert(rows.end(), part.begin(), part.end());
  return rows;
}

/// One row per field of the request's "parallel" object, in the order its accepted fields are listed (the links'
/// fields last, as "intra_node.<field>"). Same layout as build_options; no echo, store or read (parse_parallel
/// derives the section from the values as given).
std::vector<TrainingOption> build_parallel_options() {
  using K = OptionKind;
  const double gpus = static_cast<double>(kMaxGpus);
  // clang-format off
  return {
      {"gpus", K::Integer, {}, {}, 1, gpus, nullptr,
       "GPUs", "GPUs in all = data x tensor x pipeline; absent: derived",
       {"gpus"}, "gpus", "N", Echo::Never, nullptr, nullptr},
      {"data", K::Integer, {}, {}, 1, gpus, nullptr,
       "Data parallel", "model replicas, each on its own slice of the batch; absent: derived from gpus or the batch",
       {"data", "dp"}, "data", "N", Echo::Never, nullptr, nullptr},
      {"tensor", K::Integer, {}, {}, 1, 1024, 1,
       "Tensor parallel", "GPUs one layer is split over (Megatron)",
       {"tensor", "tp"}, "tensor", "N", Echo::Never, nullptr, nullptr},
      {"pipeline", K::Integer, {}, {}, 1, 4096, 1,
       "Pipeline stages", "consecutive groups of layers on different GPUs (1F1B schedule)",
       {"pipeline", "pp"}, "pipeline", "N", Echo::Never, nullptr, nullptr},
      {"micro_batch_size", K::Integer, {}, {}, 1, 1 << 20, nullptr,
       "Micro-batch size", "samples one replica processes at once; absent: derived from the batch",
       {"micro_batch", "mbs"}, "micro-batch-size", "N", Echo::Never, nullptr, nullptr},
      {"micro_batches", K::Integer, {}, {}, 1, 1 << 20, nullptr,
       "Micro-batches", "micro-batches per step (gradient accumulation; fills the pipeline); absent: derived or 1",
       {"micro_batches"}, "micro-batches", "N", Echo::Never, nullptr, nullptr},
      {"zero_stage", K::Integer, {}, {}, 0, 3, 0,
       "ZeRO stage", "ZeRO shards model states over the data-parallel group (3: FSDP)",
       {"zero"}, "zero-stage", "0..3", Echo::Never, nullptr, nullptr},
      {"fsdp", K::Boolean, {}, {}, 0, 0, false,
       "FSDP", "fully sharded data parallelism: the same as zero_stage 3",
       {}, nullptr, nullptr, Echo::Never, nullptr, nullptr},
      {"recompute", K::Choice, {"none", "selective", "full", "ops", "torchtitan_op"},
       {"none", "selective (attention)", "full (per block)", "ops (keep matmul outputs)",
        "torchtitan op (keep every other matmul)"},
       0, 0, "none", "Recompute",
       "activation recomputation: keep fewer activations, repeat part of the forward pass in backward",
       {"recompute"}, "recompute", "R", Echo::Never, nullptr, nullptr},
      {"sequence_parallel", K::Boolean, {}, {}, 0, 0, false,
       "Sequence parallelism", "Megatron sequence parallelism over the tensor group (no effect at tensor 1)",
       {"sp"}, "sequence-parallel", nullptr, Echo::Never, nullptr, nullptr},
      {"gpus_per_node", K::Integer, {}, {}, 1, 1 << 16, nullptr,
       "GPUs per node", "GPUs sharing the fast intra-node link; absent: the accelerator's node",
       {"gpus_per_node"}, "gpus-per-node", "N", Echo::Never, nullptr, nullptr},
      {"intra_node.bandwidth_gbs", K::Number, {}, {}, 1e-3, 1e6, nullptr,
       "Intra-node GB/s", "intra-node link bandwidth per GPU, one direction; absent: the catalogue's",
       {"intra_gbs"}, nullptr, nullptr, Echo::Never, nullptr, nullptr},
      {"intra_node.latency_us", K::Number, {}, {}, 0, 1e6, nullptr,
       "Intra-node latency", "intra-node link latency per hop (us); absent: the catalogue's",
       {"intra_us"}, nullptr, nullptr, Echo::Never, nullptr, nullptr},
      {"inter_node.bandwidth_gbs", K::Number, {}, {}, 1e-3, 1e6, nullptr,
       "Inter-node GB/s", "inter-node link bandwidth per GPU, one direction; absent: the catalogue's",
       {"inter_gbs"}, nullptr, nullptr, Echo::Never, nullptr, nullptr},
      {"inter_node.latency_us", K::Number, {}, {}, 0, 1e6, nullptr,
       "Inter-node latency", "inter-node link latency per hop (us); absent: the catalogue's",
       {"inter_us"}, nullptr, nullptr, Echo::Never, nullptr, nullptr},
      {"recompute_every", K::Integer, {}, {}, 1, 1 << 20, 1,
       "Recompute every", "with recompute full, only every n-th block is checkpointed and recomputed, the others keep "
       "their activations (torchtitan's selective_ac_option n); 1: every block",
       {"recompute_every"}, "recompute-every", "N", Echo::Never, nullptr, nullptr},
      {"virtual_stages", K::Integer, {}, {}, 1, 1024, 1,
       "Virtual stages", "model chunks per pipeline stage (Megatron's interleaved 1F1B): the bubble shrinks by this "
       "factor, point-to-point traffic grows by it; must divide the blocks per stage",
       {"virtual_stages", "vp"}, "virtual-stages", "N", Echo::Never, nullptr, nullptr},
      {"expert", K::Integer, {}, {}, 1, 1 << 16, 1,
       "Expert parallel", "GPUs each MoE layer's experts are sharded over (all-to-all dispatch and combine), carved "
       "out of a stage's tensor x context x data GPUs with whole experts (Megatron's MoE parallel folding); divides "
       "the experts and tensor x context x data; needs sequence_parallel beside tensor > 1",
       {"expert", "ep"}, "expert", "N", Echo::Never, nullptr, nullptr},
      {"context", K::Integer, {}, {}, 1, 1024, 1,
       "Context parallel", "GPUs the sequence is split over (ring attention, Megatron's context parallelism)",
       {"context", "cp"}, "context", "N", Echo::Never, nullptr, nullptr},
      {"accumulate_unsharded", K::Boolean, {}, {}, 0, 0, false,
       "Unsharded accumulation", "gradient accumulation inside FSDP's no_sync() (Lightning's no_backward_sync, "
       "accelerate's default): full gradients held unsharded over the micro-batches, reduce-scattered once per step; "
       "needs zero_stage 2 or 3 and micro_batches > 1",
       {"accumulate_unsharded"}, "accumulate-unsharded", nullptr, Echo::Never, nullptr, nullptr},
      {"pipeline_embedding_loss", K::Boolean, {}, {}, 0, 0, false,
       "Embedding and loss as layers", "Megatron-LM's pipeline split counting the embedding and the loss as one layer "
       "each (account_for_embedding_in_pipeline_split and _loss_): blocks + 2 split evenly over pipeline x "
       "virtual_stages chunks, the first and last one block short; needs pipeline > 1",
       {"pipeline_embedding_loss"}, "pipeline-embedding-loss", nullptr, Echo::Never, nullptr, nullptr},
      {"overlap_param_gather", K::Boolean, {}, {}, 0, 0, false,
       "Overlap weight gathers", "ZeRO 1/2: the updated weights' all-gather runs behind the next step's first "
       "forward, bucket by bucket (Megatron's --overlap-param-gather, on in Megatron-Bridge's recipes); needs "
       "zero_stage 1 or 2",
       {"overlap_param_gather"}, "overlap-param-gather", nullptr, Echo::Never, nullptr, nullptr},
      {"expert_overlap", K::Boolean, {}, {}, 0, 0, false,
       "Overlap expert all-to-all", "the expert all-to-alls of one micro-batch run behind another micro-batch's "
       "compute (Megatron's --overlap-moe-expert-parallel-comm, forward and backward of two micro-batches merged); "
       "needs expert > 1, no full recomputation, and virtual_stages > 1 with a pipeline",
       {"expert_overlap"}, "expert-overlap", nullptr, Echo::Never, nullptr, nullptr},
      {"expert_dispatch", K::Choice, {"alltoall", "hierarchical"},
       {"all-to-all (NCCL)", "hierarchical (DeepEP, HybridEP)"}, 0, 0, "alltoall",
       "Expert dispatch", "how expert all-to-alls cross nodes: alltoall sends every routed copy of a token through "
       "the sender's network card (Megatron's alltoall dispatcher); hierarchical sends one copy per destination node "
       "and fans it out there over the node's link (DeepEP, HybridEP: Megatron's flex dispatcher); needs expert > 1",
       {"expert_dispatch"}, "expert-dispatch", "D", Echo::Never, nullptr, nullptr},
      {"tensor_overlap", K::Boolean, {}, {}, 0, 0, false,
       "Overlap tensor collectives", "each tensor-parallel all-gather or reduce-scatter runs behind the GEMM it "
       "feeds or follows (TransformerEngine's userbuffers, Megatron's tp_comm_overlap); needs tensor > 1 and "
       "sequence_parallel",
       {"tensor_overlap"}, "tensor-overlap", nullptr, Echo::Never, nullptr, nullptr},
      {"recompute_modules", K::Names, {"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts"},
       {}, 0, 0, Json::array({"core_attn"}),
       "Recompute modules", "with recompute selective, what Megatron-Core reruns (TransformerConfig recompute_modules): "
       "attention's core, the experts' activation, the norms before MLA and mixture-of-experts layers, MLA's "
       "up-projections, dense MLPs, mixture-of-experts layers, shared experts",
       {"recompute_modules"}, "recompute-modules", "LIST", Echo::Never, nullptr, nullptr},
      {"pipeline_layout", K::Text, {}, {}, 0, 0, nullptr,
       "Pipeline layout", "Megatron-Core's pipeline_model_parallel_layout: the layers of each of the pipeline x "
       "virtual_stages model chunks, chunks split by '|': E the embedding, t a decoder block, m a multi-token "
       "prediction depth, L the loss; x*N and (...)*N repeat (DeepSeek-V3's \"Et*4|(t*4|)*14tmL\"); replaces the "
       "balanced split; absent virtual_stages is derived from it",
       {"pipeline_layout"}, "pipeline-layout", "S", Echo::Never, nullptr, nullptr},
  };
  // clang-format on
}

/// A Names option's value: one non-empty string, or an array of 1 to 256 of them; errors name `field`.
std::vector<std::string> names_of(const Json& value, const std::string& field) {
  constexpr std::size_t kMaxNames = 256;
  auto name_at = [](const Json& v, const std::string& where) {
    if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().size() > 128) {
      throw InputError(where, "expected a name (a non-empty string of at most 128 characters)");
    }
    return v.get<std::string>();
  };
  if (value.is_string()) return {name_at(value, field)};
  if (!value.is_array() || value.empty() || value.size() > kMaxNames) {
    throw InputError(field, "expected a name or a list of 1 to " + std::to_string(kMaxNames) + " names");
  }
  std::vector<std::string> names;
  for (std::size_t i = 0; i < value.size(); ++i) {
    names.push_back(name_at(value[i], field + "[" + std::to_string(i) + "]"));
  }
  return names;
}

/// Refuses a name of `names` (the value `value` of Names option `o`) that is not among the row's values, when it
/// lists them; errors name the field, or the element of a list.
void check_names(const TrainingOption& o, const Json& value, const std::vector<std::string>& names,
                 const std::string& field) {
  if (o.values.empty()) return;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (std::find(o.values.begin(), o.values.end(), names[i]) != o.values.end()) continue;
    std::string accepted;
    for (const std::string& v : o.values) accepted += (accepted.empty() ? "" : ", ") + v;
    throw InputError(value.is_string() ? field : field + "[" + std::to_string(i) + "]",
                     "\"" + printable(names[i]) + "\" is not one of " + accepted);
  }
}

/// Validates the value `v` of option `o` at `path` (the object holding it) as its kind; errors name the field.
OptionValue validate(const TrainingOption& o, const Json& obj, const std::string& member, const std::string& path) {
  OptionValue v;
  switch (o.kind) {
    case OptionKind::Integer:
      v.integer = get_int(obj, member, path, 0, static_cast<std::int64_t>(o.min), static_cast<std::int64_t>(o.max));
      break;
    case OptionKind::Number: v.number = get_number(obj, member, path, 0, o.min, o.max); break;
    case OptionKind::Choice: {
      const std::string name = get_enum(obj, member, path, "", o.values);
      v.choice = static_cast<std::size_t>(std::find(o.values.begin(), o.values.end(), name) - o.values.begin());
      break;
    }
    case OptionKind::Boolean: v.boolean = get_bool(obj, member, path, false); break;
    case OptionKind::Names:
      v.names = names_of(obj[member], join(path, member));
      check_names(o, obj[member], v.names, join(path, member));
      break;
    case OptionKind::Text:
      v.text = require_string(obj, member, path);
      if (v.text.size() > kMaxOptionText) {
        throw InputError(join(path, member), "expected at most " + std::to_string(kMaxOptionText) +
                                                 " characters, got " + std::to_string(v.text.size()));
      }
      break;
  }
  return v;
}

/// The object and member a row's key names in `tr`: "a.b" is member b of tr's object a (nullptr when a is absent).
std::pair<const Json*, std::string> member_of(const TrainingOption& o, const Json& tr) {
  const std::string key = o.key;
  const std::size_t dot = key.find('.');
  if (dot == std::string::npos) return {&tr, key};
  const std::string section = key.substr(0, dot);
  if (!tr.contains(section) || tr[section].is_null()) return {nullptr, key.substr(dot + 1)};
  return {&tr[section], key.substr(dot + 1)};
}

/// Reads one option from `tr` into `t` when it is given (null counts as absent); errors name the field.
void read_option(const TrainingOption& o, const Json& tr, const std::string& path, TrainingConfig& t) {
  const auto [obj, member] = member_of(o, tr);
  if (obj == nullptr || !obj->contains(member) || (*obj)[member].is_null()) return;
  const std::string key = o.key;
  const std::string where = obj == &tr ? path : join(path, key.substr(0, key.find('.')));
  o.store(t, validate(o, *obj, member, where));
}

/// The sections of the training table ("finetune") and, per section, the members its rows name.
std::vector<std::pair<std::string, std::vector<std::string>>> option_sections() {
  std::vector<std::pair<std::string, std::vector<std::string>>> sections;
  for (const auto& o : training_options()) {
    const std::string key = o.key;
    const std::size_t dot = key.find('.');
    if (dot == std::string::npos) continue;
    const std::string section = key.substr(0, dot);
    if (sections.empty() || sections.back().first != section) sections.push_back({section, {}});
    sections.back().second.push_back(key.substr(dot + 1));
  }
  return sections;
}

/// An option's value as JSON: the number, or the choice's name.
Json value_json(const TrainingOption& o, const OptionValue& v) {
  switch (o.kind) {
    case OptionKind::Integer: return v.integer;
    case OptionKind::Number: return v.number;
    case OptionKind::Choice: return o.values.at(v.choice);
    case OptionKind::Boolean: return v.boolean;
    case OptionKind::Names: return v.names;
    case OptionKind::Text: return v.text;
  }
  return nullptr;
}

const char* kind_name(OptionKind kind) {
  switch (kind) {
    case OptionKind::Integer: return "integer";
    case OptionKind::Number: return "number";
    case OptionKind::Choice: return "choice";
    case OptionKind::Boolean: return "boolean";
    case OptionKind::Names: return "names";
    case OptionKind::Text: return "text";
  }
  return "choice";
}

/// A C string as JSON; null for nullptr.
Json text_or_null(const char* text) { return text == nullptr ? Json(nullptr) : Json(text); }

/// One option of section `section` ("training", "parallel") as the catalogue publishes it.
Json option_json(const TrainingOption& o, const char* section) {
  Json j = {{"key", o.key},
            {"field", join(section, o.key)},
            {"kind", kind_name(o.kind)},
            {"default", o.fallback},
            {"label", o.label},
            {"doc", o.doc},
            {"link", o.link},
            {"flag", o.flag == nullptr ? Json(nullptr) : Json(std::string("--") + o.flag)},
            {"flag_value", text_or_null(o.flag_value)}};
  if (o.kind == OptionKind::Choice) {
    j["values"] = o.values;
    j["labels"] = o.labels;
  } else if (o.kind == OptionKind::Names && !o.values.empty()) {
    j["values"] = o.values;  // the names it accepts
  } else if (o.kind == OptionKind::Integer) {
    j["min"] = static_cast<std::int64_t>(o.min);
    j["max"] = static_cast<std::int64_t>(o.max);
  } else if (o.kind == OptionKind::Number) {
    j["min"] = o.min;
    j["max"] = o.max;
  }
  return j;
}

/// The members a request's "training" object may hold: the table's keys, a section ("finetune") once.
std::vector<std::string> option_keys() {
  std::vector<std::string> keys;
  for (const auto& o : training_options()) {
    const std::string key = o.key;
    const std::string member = key.substr(0, key.find('.'));
    if (std::find(keys.begin(), keys.end(), member) == keys.end()) keys.push_back(member);
  }
  return keys;
}

/// The row of `key` in `table` (the `section` options); throws std::out_of_range for a key not in it.
const TrainingOption& row_of(const std::vector<TrainingOption>& table, const std::string& key, const char* section) {
  for (const auto& o : table) {
    if (key == o.key) return o;
  }
  throw std::out_of_range(std::string("no ") + section + " option " + key);
}

}  // namespace

const std::vector<TrainingOption>& training_options() {
  static const std::vector<TrainingOption> table = build_options();
  return table;
}

const TrainingOption& training_option(const std::string& key) { return row_of(training_options(), key, "training"); }

const char* choice_name(const std::string& key, std::size_t index) {
  return training_option(key).values.at(index).c_str();
}

std::size_t choice_index(const std::string& key, const std::string& name) {
  const auto& values = training_option(key).values;
  std::size_t i = 0;
  while (i < values.size() && values[i] != name) ++i;
  return i;
}

TrainingConfig parse_training_options(const Json& tr, const std::string& path) {
  static const std::vector<std::string> accepted = option_keys();
  reject_unknown_keys(tr, path, accepted);
  static const auto sections = option_sections();
  TrainingConfig t;
  for (const auto& [section, members] : sections) {
    if (!tr.contains(section) || tr[section].is_null()) continue;
    reject_unknown_keys(require_object(tr[section], join(path, section)), join(path, section), members);
    if (section == "finetune") t.finetune.given = true;
  }
  for (const auto& o : training_options()) read_option(o, tr, path, t);
  return t;
}

Json options_echo(const TrainingConfig& training) {
  Json echo = Json::object();
  for (const auto& o : training_options()) {
    if (o.echo == Echo::Never) continue;
    std::optional<OptionValue> v = o.read(training);
    if (!v) continue;
    const std::string key = o.key;
    const std::size_t dot = key.find('.');
    if (dot == std::string::npos)
      echo[key] = value_json(o, *v);
    else
      echo[key.substr(0, dot)][key.substr(dot + 1)] = value_json(o, *v);
  }
  return echo;
}

Json options_catalogue() {
  Json list = Json::array();
  for (const auto& o : training_options()) list.push_back(option_json(o, "training"));
  return list;
}

const std::vector<TrainingOption>& parallel_options() {
  static const std::vector<TrainingOption> table = build_parallel_options();
  return table;
}

const TrainingOption& parallel_option(const std::string& key) { return row_of(parallel_options(), key, "parallel"); }

std::optional<OptionValue> read_parallel_field(const Json& section, const std::string& row_key,
                                               const std::string& path) {
  const std::string member = row_key.substr(row_key.rfind('.') + 1);
  if (!section.contains(member) || section[member].is_null()) return std::nullopt;
  return validate(parallel_option(row_key), section, member, path);
}

Json parallel_options_catalogue() {
  Json list = Json::array();
  for (const auto& o : parallel_options()) list.push_back(option_json(o, "parallel"));
  return list;
}

const std::vector<ModelForm>& model_forms() {
  static const std::vector<ModelForm> forms = {
      {"preset", "a catalogue preset id"},
      {"hf_config", "a Hugging Face config.json object"},
      {"architecture",
       "an architecture as data, its family naming the builder (docs/MODEL_FORMAT.md, \"Architecture form\")"},
      {"keras", "a Keras model.to_json() object"},
      {"onnx_base64", "an .onnx file in base64 (the graph; weights may be left out)"},
      {"layers", "a layer list, with \"input\""},
  };
  return forms;
}

const char* model_form_of(const Json& model) {
  const auto& forms = model_forms();
  for (std::size_t i = 0; i + 1 < forms.size(); ++i) {
    if (model.contains(forms[i].key)) return forms[i].key;
  }
  return forms.back().key;
}

std::string model_form_list() {
  const auto& forms = model_forms();
  std::string list;
  for (std::size_t i = 0; i < forms.size(); ++i) {
    list += (i == 0 ? "" : i + 1 == forms.size() ? " or " : ", ") + std::string(forms[i].key);
  }
  return list;
}

Json model_forms_catalogue() {
  Json list = Json::array();
  for (const auto& f : model_forms()) list.push_back({{"key", f.key}, {"doc", f.doc}});
  return list;
}

Json limits_catalogue() {
  return {{"request_bytes", kMaxRequestBytes}, {"json_depth", kMaxJsonDepth}, {"accelerators", kMaxAccelerators}};
}

}  // namespace prenet
