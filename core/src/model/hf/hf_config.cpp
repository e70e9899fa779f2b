// Hugging Face config.json → the project's layer list: the model_type's row (model_types.cpp) reads the
// config into an Arch, and the row's family builds the layers. A model_type without a row is read
// generically only where its fields decide the architecture (generic.cpp), with a warning naming them.
#include "prenet/hf_config.hpp"

#include <algorithm>

#include "model/hf/arch_json.hpp"
#include "model/hf/generic.hpp"
#include "model/hf/heads.hpp"
#include "model/hf/model_types.hpp"
#include "prenet/network.hpp"

namespace prenet {
namespace {

/// The spellings of a config's depth, in the order the layer-limit error looks for one to name.
const std::vector<std::string> kDepthFields = {"num_hidden_layers",  "n_layer",       "num_layers", "n_layers",
                                               "num_decoder_layers", "encoder_layers"};

/// The spellings of the trained positions, in the order the steps read them (for saying where a length came from).
const std::vector<std::string> kPositionFields = {"max_position_embeddings", "n_positions", "n_ctx", "max_seq_len"};

/// The default sequence length of a rotary decoder trained on at least this many positions (longer contexts are
/// reached by fine-tuning from shorter pre-training sequences, and cost grows with the square of the length).
constexpr std::int64_t kRotaryDefaultSeq = 4096;

/// How `c` is read: its table row, or (no row) the generic reading, which errors when the fields decide nothing.
struct Reading {
  const hf::ModelType* row = nullptr;
  std::optional<hf::GenericReading> generic;
};

Reading reading_of(const hf::Cfg& c) {
  const hf::ModelType* row = hf::find_model_type(c.str("model_type", ""));
  if (row) return {row, std::nullopt};
  hf::GenericReading generic = hf::read_generically(c);
  return {generic.row, generic};
}

/// The model's name: the model_type, or for a config without one "gpt2" (GPT-2 spellings) or "hf-model".
std::string model_name(const hf::Cfg& c, const Reading& r) {
  if (!r.generic) return r.row->name;
  std::string type = c.str("model_type", "");
  if (!type.empty()) return type;
  return r.generic->style == "gpt2" ? "gpt2" : "hf-model";
}

/// Reads `c` with its row into an Arch.
hf::Arch read_arch(const hf::Cfg& c, const Reading& r, std::vector<std::string>& warnings) {
  hf::Arch arch;
  arch.name = model_name(c, r);
  if (r.generic) warnings.push_back(r.generic->warning);
  hf::read_steps(c, r.row->steps, arch, warnings);
  return arch;
}

/// Errors, naming the config's depth field, when `model` expands to more layers than the layer list allows.
void check_expanded_size(const hf::Cfg& c, const Json& model) {
  std::int64_t expanded = 0;
  for (const auto& layer : model["layers"]) {
    expanded += layer["type"] == "repeat"
                    ? layer["count"].get<std::int64_t>() * static_cast<std::int64_t>(layer["layers"].size())
                    : 1;
  }
  if (expanded > Limits::kMaxLayers) {
    std::string key = c.present(kDepthFields);
    throw InputError(c.field(key.empty() ? "num_hidden_layers" : key),
                     "the model expands to " + std::to_string(expanded) + " layers; the limit is " +
                         std::to_string(Limits::kMaxLayers));
  }
}

/// The config's dtype field: transformers 5's "dtype", else "torch_dtype"; "" when neither is a string.
std::string dtype_field(const Json& config) {
  for (const char* key : {"dtype", "torch_dtype"}) {
    if (config.contains(key) && config[key].is_string()) return key;
  }
  return "";
}

/// The training precision a dtype names ("torch." prefix allowed), or "" when it names none.
std::string precision_of_dtype(std::string dtype) {
  if (dtype.rfind("torch.", 0) == 0) dtype = dtype.substr(6);
  if (dtype == "bfloat16") return "bf16";
  if (dtype == "float16" || dtype == "half") return "fp16";
  if (dtype == "float32" || dtype == "float") return "fp32";
  return "";
}

/// Notes a dtype that names no training precision (float64, int8, ...: the request's precision stands).
void note_unused_dtype(const hf::Cfg& c, std::vector<std::string>& warnings) {
  std::string key = dtype_field(c.json());
  if (key.empty()) return;
  std::string dtype = c.json()[key].get<std::string>();
  if (dtype == "auto" || !precision_of_dtype(dtype).empty()) return;
  warnings.push_back(c.field(key) + " \"" + printable(dtype) +
                     "\" names no training precision (bfloat16, float16 or float32); the precision is the "
                     "request's");
}

}  // namespace

namespace hf {

std::int64_t rotary_default_seq(const Arch& a, bool image_input) {
  bool rotary = !image_input && !a.learned_positions;
  return rotary && a.max_positions >= kRotaryDefaultSeq ? kRotaryDefaultSeq : 0;
}

std::optional<Json> hf_config_architecture(const Json& config) {
  if (!config.is_object()) return std::nullopt;
  Cfg c(config, "model.hf_config");
  std::vector<std::string> scratch;
  try {
    Reading r = reading_of(c);
    std::optional<std::string> family = arch_family_of_builder(r.row->family.build);
    if (!family) return std::nullopt;
    Arch arch = read_arch(c, r, scratch);
    arch_complete_from_config(*family, c, arch, scratch);
    return arch_to_json(arch, *family);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

}  // namespace hf

bool hf_config_is_vision(const Json& config) {
  if (!config.is_object() || !config.contains("model_type") || !config["model_type"].is_string()) return false;
  const hf::ModelType* row = hf::find_model_type(config["model_type"].get<std::string>());
  return row && row->family.image_input;
}

Json hf_config_to_layers(const Json& config, const std::string& path, std::int64_t seq_len,
                         std::vector<std::string>& warnings, std::int64_t image_size) {
  require_object(config, path);
  hf::Cfg c(config, path);
  Reading r = reading_of(c);
  hf::Arch arch = read_arch(c, r, warnings);
  note_unused_dtype(c, warnings);
  if (seq_len <= 0) seq_len = hf::rotary_default_seq(arch, r.row->family.image_input);
  Json model = r.row->family.build(c, arch, {seq_len, image_size}, warnings);
  check_expanded_size(c, model);
  return model;
}

Json hf_config_reading(const Json& config) {
  if (!config.is_object()) return nullptr;
  hf::Cfg c(config, "model.hf_config");
  Reading r = reading_of(c);
  if (!r.generic) return {{"kind", "table"}, {"model_type", r.row->name}};
  return {{"kind", "generic"},
          {"model_type", c.str("model_type", "")},
          {"style", r.generic->style},
          {"relied_on", r.generic->relied_on}};
}

std::optional<HfPrecision> hf_config_precision(const Json& config) {
  if (!config.is_object()) return std::nullopt;
  std::string key = dtype_field(config);
  if (key.empty()) {
    // A multimodal wrapper saved by transformers 5 (Qwen3.5's releases) states the dtype of its text model only.
    const Json& text = config.contains("text_config") ? config["text_config"] : Json();
    const std::string nested = text.is_object() ? dtype_field(text) : "";
    if (nested.empty()) return std::nullopt;
    std::string precision = precision_of_dtype(text[nested].get<std::string>());
    if (precision.empty()) return std::nullopt;
    return HfPrecision{precision, "text_config." + nested};
  }
  std::string precision = precision_of_dtype(config[key].get<std::string>());
  if (precision.empty()) return std::nullopt;
  return HfPrecision{precision, key};
}

std::string hf_config_seq_source(const Json& config, std::int64_t seq_len) {
  if (!config.is_object()) return "";
  hf::Cfg c(config, "model.hf_config");
  std::vector<std::string> scratch;
  Reading r = reading_of(c);
  hf::Arch arch = read_arch(c, r, scratch);
  std::string key = c.present(kPositionFields);
  if (key.empty() && c.has("text_config") && config["text_config"].is_object()) {
    // A multimodal wrapper: its text model's trained positions decided the length (wrappers.cpp).
    const hf::Cfg text(config["text_config"], "model.hf_config.text_config");
    const std::string nested = text.present(kPositionFields);
    if (!nested.empty()) {
      return hf::trained_positions_source("config", text.field(nested), text.opt({nested}, 0, 0, hf::kMaxPositions),
                                          seq_len);
    }
  }
  return hf::trained_positions_source("config", key.empty() ? "" : "model.hf_config." + key, arch.max_positions,
                                      seq_len);
}

namespace hf {

std::string trained_positions_source(const std::string& source, const std::string& field, std::int64_t max_positions,
                                     std::int64_t seq_len) {
  if (max_positions <= 0 || field.empty())
    return "no trained positions in the " + source + ": the default of " + std::to_string(seq_len);
  std::string from = field + " (" + std::to_string(max_positions) + ")";
  if (seq_len >= max_positions) return from;
  return from + ", capped at " + std::to_string(seq_len) +
         " (the default: 4096 for rotary decoders trained on 4096 positions or more, else 1024)";
}

}  // namespace hf

}  // namespace prenet
