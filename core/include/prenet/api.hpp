#pragma once
// The core's whole public surface, as JSON text in and out (docs/API.md). Never throws.
#include <string>

namespace prenet {

/// Predicts training time, memory and cost for a request; returns the response or {"error": {field, message}}.
std::string predict_json(const std::string& request_text);

/// The hardware catalogue, presets, precisions, optimizers and version.
std::string catalog_json();

}  // namespace prenet
