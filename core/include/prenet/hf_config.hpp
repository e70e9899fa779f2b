#pragma once
// Hugging Face config.json → the project's layer list (so every format shares one parser and one feature path).
#include <string>
#include <vector>

#include "prenet/json_util.hpp"

namespace prenet {

/// Expands a Hugging Face `config.json` into a layer-list model ({"name","input","layers"}).
/// `seq_len` is the sequence length to use (0: the config's maximum positions, capped at 1024).
/// Appends notes for the user (assumptions, unknown model types) to `warnings`. Errors name `path`.
Json hf_config_to_layers(const Json& config, const std::string& path, std::int64_t seq_len,
                         std::vector<std::string>& warnings);

}  // namespace prenet
