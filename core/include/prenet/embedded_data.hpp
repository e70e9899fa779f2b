#pragma once
#include <string_view>
#include <vector>

namespace prenet {

struct EmbeddedPreset {
  std::string_view id;
  std::string_view json;
};

/// The hardware catalogue, core/data/hardware.json, compiled in.
std::string_view embedded_hardware_json();
/// models/artifacts/manifest.json: the learned predictors' manifest, compiled in.
std::string_view embedded_manifest_json();
/// Every core/data/presets/<id>.json, compiled in, sorted by file name.
const std::vector<EmbeddedPreset>& embedded_presets();

}  // namespace prenet
