// The public functions of prenet/api.hpp: each runs its stages behind the one boundary guard.
#include "prenet/api.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "api/guard.hpp"
#include "api/learned_sessions.hpp"
#include "api/prepare.hpp"
#include "prenet/catalog.hpp"
#include "prenet/error.hpp"
#include "prenet/json_util.hpp"
#include "prenet/learned.hpp"
#include "response/json_text.hpp"
#include "response/plan_document.hpp"
#include "response/response.hpp"

namespace prenet {
namespace {

/// The response of a finished learned session: times from the models; what limits each kernel (compute,
/// memory, launches) from the roofline. Accelerators the models do not cover keep the roofline's times
/// and have no band.
std::string learned_response(const LearnedSession& s, const std::vector<std::vector<float>>& outputs) {
  std::vector<std::array<double, 2>> intervals;
  std::vector<Timing> learned = learned_times(s.prepared.work, s.batch, outputs, intervals);
  std::vector<Timing> merged = s.prepared.roofline;
  std::vector<const char*> predictors(merged.size(), "roofline");
  std::vector<std::optional<std::array<double, 2>>> bands(merged.size());
  for (std::size_t h = 0; h < merged.size(); ++h) {
    if (!learned_covers(s.prepared.req.hardware[h])) continue;
    predictors[h] = "learned";
    bands[h] = intervals[h];
    merged[h].ms = learned[h].ms;
    merged[h].step_ms = learned[h].step_ms;
    merged[h].calibration_share = learned[h].calibration_share;
    for (std::size_t l = 0; l < merged[h].layers.size(); ++l) merged[h].layers[l].ms = learned[h].layers[l].ms;
  }
  return assemble(s.prepared, merged, predictors, bands);
}

/// The `classes` of a prepared session: each class model's dataset, rows to time and row width.
Json classes_json(const LearnedBatch& batch) {
  Json classes = Json::array();
  const auto& lm = learned_manifest().classes;
  for (std::size_t c = 0; c < lm.size(); ++c) {
    classes.push_back({{"dataset", lm[c].dataset}, {"rows", batch.rows(c)}, {"width", lm[c].features.size()}});
  }
  return classes;
}

}  // namespace

std::string predict_json(const std::string& request_text) {
  return guarded("request", [&] {
    Prepared p = prepare(parse_json_text(request_text, "request"));
    return assemble(p, p.roofline, std::vector<const char*>(p.roofline.size(), "roofline"),
                    std::vector<std::optional<std::array<double, 2>>>(p.roofline.size()));
  });
}

std::string learned_prepare(const std::string& request_text) {
  return guarded("request", [&] {
    if (learned_manifest().classes.empty()) throw InputError("request", "no learned models are compiled in");
    Prepared p = prepare(parse_json_text(request_text, "request"));
    LearnedBatch batch = learned_batch(p.work, p.req.hardware, p.req.training.precision);
    Json classes = classes_json(batch);
    const std::uint32_t id = learned_sessions().open(LearnedSession{std::move(p), std::move(batch)});
    return dump({{"session", id}, {"classes", std::move(classes)}});
  });
}

const std::vector<float>& learned_features(std::uint32_t session, std::size_t class_index) {
  static const std::vector<float> empty;
  const LearnedSession* s = learned_sessions().find(session);
  if (!s || class_index >= s->batch.features.size()) return empty;
  return s->batch.features[class_index];
}

const std::vector<double>& learned_roofline_ms(std::uint32_t session, std::size_t class_index) {
  static const std::vector<double> empty;
  const LearnedSession* s = learned_sessions().find(session);
  if (!s || class_index >= s->batch.roofline_ms.size()) return empty;
  return s->batch.roofline_ms[class_index];
}

std::string learned_finish(std::uint32_t session, const std::vector<std::vector<float>>& outputs) {
  return guarded("request", [&] { return learned_response(*learned_sessions().take(session), outputs); });
}

void learned_release(std::uint32_t session) { learned_sessions().release(session); }

std::string plan_json(const std::string& request_text) {
  return guarded("request", [&] { return dump(plan_document(search_plan(parse_json_text(request_text, "request")))); });
}

std::string catalog_json() {
  return guarded("catalog", [] { return dump(catalog_document()); });
}

std::string oversize_request_json(double at_least_bytes) {
  if (!(at_least_bytes > static_cast<double>(kMaxRequestBytes))) return "";
  return guarded("request", [&]() -> std::string {
    throw InputError("request", "input is at least " + std::to_string(static_cast<std::uint64_t>(at_least_bytes)) +
                                    " bytes (one per character at the least); the limit is " +
                                    std::to_string(kMaxRequestBytes) + " bytes");
  });
}

}  // namespace prenet
