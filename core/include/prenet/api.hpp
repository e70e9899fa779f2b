#pragma once
// The core's whole public surface, as JSON text in and out (docs/API.md). Never throws.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace prenet {

/// Predicts training time, memory and cost for a request; returns the response or {"error": {field, message}}.
std::string predict_json(const std::string& request_text);

/// Learned prediction by session (the models run outside the core, in ONNX Runtime, so several requests
/// may be between their first and last call at once):
/// 1. learned_prepare(request) validates the request and opens a session: {"session": id, "classes":
///    [{"dataset", "rows", "width"}]} (or an error object; at most kMaxLearnedSessions are open at a time);
/// 2. learned_features(id, i) gives class i's input rows (row-major float32);
/// 3. learned_finish(id, outputs) takes each class's model outputs (one per row), closes the session and
///    returns the response; learned_release(id) closes it without one (a caller whose models failed).
constexpr std::size_t kMaxLearnedSessions = 64;
std::string learned_prepare(const std::string& request_text);
/// Class i's rows of session `session`; empty when the session is not open or has no class i.
const std::vector<float>& learned_features(std::uint32_t session, std::size_t class_index);
/// The roofline time (ms) of each of class i's rows: what an output means for a ratio model (tests).
const std::vector<double>& learned_roofline_ms(std::uint32_t session, std::size_t class_index);
/// The response of session `session` from its outputs, or an error (also when it is not open); the
/// session is closed either way.
std::string learned_finish(std::uint32_t session, const std::vector<std::vector<float>>& outputs);
/// Closes session `session` without a response; nothing happens when it is not open.
void learned_release(std::uint32_t session);

/// Plan mode: the parallel layouts of the request's model on 1..plan.max_gpus of each requested
/// accelerator that fit in memory, ranked by training time and by cost (docs/API.md, "Plan").
std::string plan_json(const std::string& request_text);

/// The hardware catalogue, presets, precisions, optimizers and version.
std::string catalog_json();

/// For a caller that can count a text's characters without copying it: the error answer for a request text of at
/// least `at_least_bytes` bytes when that is over the request limit, else an empty string (then the text goes to the
/// call as usual). Lets the wasm binding refuse a 100 MiB text before converting it into wasm memory.
std::string oversize_request_json(double at_least_bytes);

}  // namespace prenet
