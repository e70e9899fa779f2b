#pragma once
// Presets (core/data/presets/*.json) and the resolution of a request's model section into a Network.
#include <string>
#include <vector>

#include "prenet/json_util.hpp"
#include "prenet/network.hpp"
#include "prenet/training.hpp"

namespace prenet {

struct Preset {
  std::string id;
  std::string name;
  std::string family;
  std::string source;
  double published_parameters = 0;
  Json input;  // default input specification
  Json model;  // {"hf_config": {...}} or {"layers": [...]}
};

/// Every built-in preset, parsed once.
const std::vector<Preset>& presets();
/// Looks up a preset id; nullptr when unknown.
const Preset* find_preset(const std::string& id);

/// Turns the request's `model` section into a network with shapes for `training`. Errors name fields.
Network resolve_model(const Json& model, const TrainingConfig& training);

/// The catalogue document returned by catalog(): version, hardware, presets, precisions, optimizers.
Json catalog_document();

}  // namespace prenet
