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

/// The value type of a TrainingConfig member, looking through std::optional.
template <auto Member>
using member_value_t = typename std::conditional_t<
    is_optional<std::remove_reference_t<decltype(std::declval<TrainingConfig&>().*Member)>>::value,
    std::remove_reference_t<decltype(std::declval<TrainingConfig&>().*Member)>,
    std::optional<std::remove_reference_t<decltype(std::declval<TrainingConfig&>().*Member)>>>::value_type;

/// Stores an Integer option's value in its member.
template <auto Member>
void store_integer(TrainingConfig& t, const OptionValue& v) {
  t.*Member = v.integer;
}

/// Stores a Number option's value in its member.
template <auto Member>
void store_number(TrainingConfig& t, const OptionValue& v) {
  t.*Member = v.number;
}

/// Stores a Choice option's value as its enum (the values are listed in the enum's order).
template <auto Member>
void store_choice(TrainingConfig& t, const OptionValue& v) {
  t.*Member = static_cast<member_value_t<Member>>(v.choice);
}

/// The member's value as an OptionValue; nullopt when an optional member is unset.
template <auto Member>
std::optional<OptionValue> read_member(const TrainingConfig& t) {
  const auto& field = t.*Member;
  using Field = std::remove_cv_t<std::remove_reference_t<decltype(field)>>;
  OptionValue v;
  auto fill = [&v](const member_value_t<Member>& value) {
    if constexpr (std::is_enum_v<member_value_t<Member>>) {
      v.choice = static_cast<std::size_t>(value);
    } else if constexpr (std::is_integral_v<member_value_t<Member>>) {
      v.integer = value;
    } else {
      v.number = value;
    }
  };
  if constexpr (is_optional<Field>::value) {
    if (!field) return std::nullopt;
    fill(*field);
  } else {
    fill(field);
  }
  return v;
}

/// dataset_size 0 means "batch_size x 100": unset for the table.
std::optional<OptionValue> read_dataset_size(const TrainingConfig& t) {
  if (t.dataset_size <= 0) return std::nullopt;
  OptionValue v;
  v.integer = t.dataset_size;
  return v;
}

/// One row per field of the request's "training" object, in the order they are validated. Each row: key, kind,
/// values and their labels (choices), min and max (numbers), default; label and doc; link names, CLI flag and
/// its placeholder; echo; how it is stored in and read from TrainingConfig.
std::vector<TrainingOption> build_options() {
  using K = OptionKind;
  using TC = TrainingConfig;
  // A table, one row per option, reads better laid out by hand than one field per line.
  // clang-format off
  return {
      {"batch_size", K::Integer, {}, {}, 1, 1 << 20, 32,
       "Batch size", "samples per optimizer step (with parallel: the global batch)",
       {"batch", "batch_size", "batch-size"}, "batch", "N", Echo::Always,
       store_integer<&TC::batch_size>, read_member<&TC::batch_size>},
      {"seq_len", K::Integer, {}, {}, 1, 1 << 20, nullptr,
       "Sequence length", "tokens per sample; absent: the model's own",
       {"seq_len", "seq-len"}, "seq-len", "N", Echo::Never,
       store_integer<&TC::seq_len>, read_member<&TC::seq_len>},
      {"image_size", K::Integer, {}, {}, 1, 16384, nullptr,
       "Image size (px)", "image height and width in pixels; absent: the model's own",
       {"image_size", "image-size"}, "image-size", "N", Echo::Never,
       store_integer<&TC::image_size>, read_member<&TC::image_size>},
      {"precision", K::Choice, {"fp32", "tf32", "fp16", "bf16", "fp8"},
       {"FP32", "TF32", "FP16 mixed", "BF16 mixed", "FP8"}, 0, 0, "fp32",
       "Precision", "arithmetic of the matrix units; fp16, bf16 and fp8 train with FP32 master weights",
       {"precision"}, "precision", "P", Echo::Always,
       store_choice<&TC::precision>, read_member<&TC::precision>},
      {"optimizer", K::Choice, {"none", "sgd", "momentum", "adam", "adamw", "adagrad", "adadelta", "rmsprop"},
       {"none (forward + backward only)", "SGD", "SGD with momentum", "Adam", "AdamW", "Adagrad", "Adadelta",
        "RMSprop"}, 0, 0, "adam",
       "Optimizer", "the update rule; none times forward and backward only",
       {"optimizer"}, "optimizer", "O", Echo::Always,
       store_choice<&TC::optimizer>, read_member<&TC::optimizer>},
      {"optimizer_impl", K::Choice, {"fused", "foreach"}, {"fused (one pass)", "foreach (PyTorch default)"}, 0, 0,
       "fused", "Optimizer kernels",
       "fused: one pass over each parameter's states (apex, DeepSpeed, Megatron, fused=True); foreach: "
       "torch.optim's default, one pass per tensor operation",
       {"optimizer_impl"}, "optimizer-impl", "I", Echo::Always,
       store_choice<&TC::optimizer_impl>, read_member<&TC::optimizer_impl>},
      {"attention", K::Choice, {"eager", "flash"}, {"eager (scores in memory)", "fused (FlashAttention)"}, 0, 0,
       "eager", "Attention",
       "eager: attention writes its score matrices to memory; flash: one fused kernel per pass keeps them on chip",
       {"attention"}, "attention", "A", Echo::Always,
       store_choice<&TC::attention>, read_member<&TC::attention>},
      {"kernels", K::Choice, {"pytorch", "megatron"}, {"PyTorch (Hugging Face code)", "Megatron-LM (fused)"}, 0, 0,
       "pytorch", "Layer kernels",
       "pytorch: the operations as Hugging Face writes them; megatron: Megatron-LM's fused bias-GELU, SwiGLU and "
       "softmax",
       {"kernels"}, "kernels", "K", Echo::Always,
       store_choice<&TC::kernels>, read_member<&TC::kernels>},
      {"memory_format", K::Choice, {"channels_last", "nchw"}, {"channels_last (NHWC)", "NCHW (PyTorch default)"},
       0, 0, nullptr, "Memory format",
       "convolution networks: nchw adds cuDNN's layout transposes around each convolution under 16-bit training; "
       "absent: timed as channels_last",
       {"memory_format"}, "memory-format", "F", Echo::WhenGiven,
       store_choice<&TC::memory_format>, read_member<&TC::memory_format>},
      {"dataset_size", K::Integer, {}, {}, 1, static_cast<double>(std::int64_t{1} << 50), nullptr,
       "Samples per epoch", "samples in one epoch; absent: batch_size x 100",
       {"dataset_size", "dataset-size"}, "dataset-size", "N", Echo::Never,
       store_integer<&TC::dataset_size>, read_dataset_size},
      {"epochs", K::Number, {}, {}, 1e-6, 1e6, 1.0,
       "Epochs", "passes over the dataset (fractions allowed)",
       {"epochs"}, "epochs", "N", Echo::Never,
       store_number<&TC::epochs>, read_member<&TC::epochs>},
  };
  // clang-format on
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
      {"recompute", K::Choice, {"none", "selective", "full"}, {"none", "selective (attention)", "full (per block)"},
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
  };
  // clang-format on
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
  }
  return v;
}

/// Reads one option from `tr` into `t` when it is given (null counts as absent); errors name the field.
void read_option(const TrainingOption& o, const Json& tr, const std::string& path, TrainingConfig& t) {
  if (!tr.contains(o.key) || tr[o.key].is_null()) return;
  o.store(t, validate(o, tr, o.key, path));
}

/// An option's value as JSON: the number, or the choice's name.
Json value_json(const TrainingOption& o, const OptionValue& v) {
  switch (o.kind) {
    case OptionKind::Integer: return v.integer;
    case OptionKind::Number: return v.number;
    case OptionKind::Choice: return o.values.at(v.choice);
    case OptionKind::Boolean: return v.boolean;
  }
  return nullptr;
}

const char* kind_name(OptionKind kind) {
  switch (kind) {
    case OptionKind::Integer: return "integer";
    case OptionKind::Number: return "number";
    case OptionKind::Choice: return "choice";
    case OptionKind::Boolean: return "boolean";
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
  } else if (o.kind == OptionKind::Integer) {
    j["min"] = static_cast<std::int64_t>(o.min);
    j["max"] = static_cast<std::int64_t>(o.max);
  } else if (o.kind == OptionKind::Number) {
    j["min"] = o.min;
    j["max"] = o.max;
  }
  return j;
}

/// The keys of the table, in its order.
std::vector<std::string> option_keys() {
  std::vector<std::string> keys;
  for (const auto& o : training_options()) keys.emplace_back(o.key);
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
  TrainingConfig t;
  for (const auto& o : training_options()) read_option(o, tr, path, t);
  return t;
}

Json options_echo(const TrainingConfig& training) {
  Json echo = Json::object();
  for (const auto& o : training_options()) {
    if (o.echo == Echo::Never) continue;
    std::optional<OptionValue> v = o.read(training);
    if (v) echo[o.key] = value_json(o, *v);
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
