// Hugging Face config.json → the project's layer list: the model_type's row (model_types.cpp) reads the
// config into an Arch, and the row's family builds the layers.
#include "prenet/hf_config.hpp"

#include "model/hf/model_types.hpp"
#include "prenet/network.hpp"

namespace prenet {
namespace {

/// The spellings of a config's depth, in the order the layer-limit error looks for one to name.
const std::vector<std::string> kDepthFields = {"num_hidden_layers",  "n_layer",       "num_layers", "n_layers",
                                               "num_decoder_layers", "encoder_layers"};

/// The row that reads `config` (the unrecognised-type row when the table has none for its model_type).
const hf::ModelType& model_type_of(const hf::Cfg& c) {
  const hf::ModelType* row = hf::find_model_type(c.str("model_type", ""));
  return row ? *row : hf::unrecognised_model_type();
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

}  // namespace

bool hf_config_is_vision(const Json& config) {
  if (!config.is_object() || !config.contains("model_type") || !config["model_type"].is_string()) return false;
  const hf::ModelType* row = hf::find_model_type(config["model_type"].get<std::string>());
  return row && row->family.image_input;
}

Json hf_config_to_layers(const Json& config, const std::string& path, std::int64_t seq_len,
                         std::vector<std::string>& warnings, std::int64_t image_size) {
  require_object(config, path);
  hf::Cfg c(config, path);
  const hf::ModelType& row = model_type_of(c);
  hf::Arch arch;
  arch.name = row.name;
  hf::read_steps(c, row.steps, arch, warnings);
  Json model = row.family.build(c, arch, {seq_len, image_size}, warnings);
  check_expanded_size(c, model);
  return model;
}

}  // namespace prenet
