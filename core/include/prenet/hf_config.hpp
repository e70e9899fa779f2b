#pragma once
// Hugging Face config.json → the project's layer list (so every format shares one parser and one feature path).
#include <string>
#include <vector>

#include "prenet/json_util.hpp"

namespace prenet {

/// Expands a Hugging Face `config.json` into a layer-list model ({"name","input","layers"}).
/// The recognised `model_type`s are the rows of core/src/model/hf/model_types.cpp; another type with the usual
/// fields becomes a GPT-2-style decoder with a warning. `seq_len` is the sequence length to use (0: the config's
/// maximum positions, capped at 1024); `image_size` likewise for vision models (0: the config's). Appends notes for the
/// user (assumptions, unknown model types) to `warnings`. Errors name `path` (e.g. "model.hf_config.n_embd") or the
/// training field at fault.
Json hf_config_to_layers(const Json& config, const std::string& path, std::int64_t seq_len,
                         std::vector<std::string>& warnings, std::int64_t image_size = 0);

/// The model_types the tables read, for the catalogue: [{"model_type", "aliases", "input"}], in table order.
Json hf_model_types_catalogue();

/// True when the config describes an image model (its input is an image, not tokens).
bool hf_config_is_vision(const Json& config);

}  // namespace prenet
