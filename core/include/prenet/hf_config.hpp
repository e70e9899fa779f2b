#pragma once
// Hugging Face config.json → the project's layer list (so every format shares one parser and one feature path).
#include <optional>
#include <string>
#include <vector>

#include "prenet/json_util.hpp"

namespace prenet {

/// Expands a Hugging Face `config.json` into a layer-list model ({"name","input","layers"}).
/// The recognised `model_type`s are the rows of the tables (core/src/model/hf/model_types.cpp and types_*.cpp);
/// another type is read generically only where its fields decide the architecture (a Llama-style or GPT-2-style
/// decoder, with a warning naming the fields), else it is an error naming the model_type and the field.
/// `seq_len` is the sequence length to use (0: the config's maximum positions, capped at 4096 for rotary decoders
/// trained on 4096 or more, else at 1024); `image_size` likewise for vision models (0: the config's). Appends notes
/// for the user (assumptions, generic readings) to `warnings`. Errors name `path` (e.g. "model.hf_config.n_embd")
/// or the training field at fault.
Json hf_config_to_layers(const Json& config, const std::string& path, std::int64_t seq_len,
                         std::vector<std::string>& warnings, std::int64_t image_size = 0);

/// The model_types the tables read, for the catalogue: [{"model_type", "aliases", "input"}], in table order.
Json hf_model_types_catalogue();

/// True when the config describes an image model (its input is an image, not tokens).
bool hf_config_is_vision(const Json& config);

/// How a config that hf_config_to_layers reads is read (the response's model.reading, docs/API.md):
/// {"kind": "table", "model_type"} or {"kind": "generic", "model_type", "style": "llama" | "gpt2", "relied_on"}.
/// Only for a config that reads (it errors as hf_config_to_layers does otherwise).
Json hf_config_reading(const Json& config);

/// The training precision a config's own dtype names: `precision` ("bf16", "fp16", "fp32") and `field`
/// ("dtype", transformers 5, or "torch_dtype").
struct HfPrecision {
  std::string precision;
  std::string field;
};
/// The precision of `config`'s dtype; nullopt when it has none or names no training precision ("auto", "int8").
std::optional<HfPrecision> hf_config_precision(const Json& config);

/// Why a config that reads was given sequence length `seq_len` when the request set none: the position field
/// and any cap ("model.hf_config.max_position_embeddings (131072), capped at 4096 (...)").
std::string hf_config_seq_source(const Json& config, std::int64_t seq_len);

}  // namespace prenet
