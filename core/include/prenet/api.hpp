#pragma once
// The core's whole public surface, as JSON text in and out (docs/API.md). Never throws.
#include <string>
#include <vector>

namespace prenet {

/// Predicts training time, memory and cost for a request; returns the response or {"error": {field, message}}.
std::string predict_json(const std::string& request_text);

/// Learned prediction, in three calls (the models run outside the core, in ONNX Runtime):
/// 1. learned_prepare(request) validates the request and returns {"classes": [{"dataset", "rows", "width"}]}
///    (or an error object); 2. learned_features(i) gives class i's input rows (row-major float32);
/// 3. learned_finish(outputs) takes each class's model outputs (one per row) and returns the response.
std::string learned_prepare(const std::string& request_text);
const std::vector<float>& learned_features(std::size_t class_index);
/// The roofline time (ms) of each of class i's rows: what an output means for a ratio model (tests).
const std::vector<double>& learned_roofline_ms(std::size_t class_index);
std::string learned_finish(const std::vector<std::vector<float>>& outputs);

/// Plan mode: the parallel layouts of the request's model on 1..plan.max_gpus of each requested
/// accelerator that fit in memory, ranked by training time and by cost (docs/API.md, "Plan").
std::string plan_json(const std::string& request_text);

/// The hardware catalogue, presets, precisions, optimizers and version.
std::string catalog_json();

}  // namespace prenet
