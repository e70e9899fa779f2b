// The only Emscripten code in the project: exposes the core's JSON API to JavaScript.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "prenet/api.hpp"

namespace {

/// A view of session `session`'s class i feature rows in wasm memory; valid until the next call into the
/// module, so the engine copies it at once.
emscripten::val learned_features(unsigned session, unsigned class_index) {
  const std::vector<float>& rows = prenet::learned_features(session, class_index);
  return emscripten::val(emscripten::typed_memory_view(rows.size(), rows.data()));
}

/// `outputs`: one Float32Array of model outputs per class, in the order learned_prepare listed them.
std::string learned_finish(unsigned session, const emscripten::val& outputs) {
  std::vector<std::vector<float>> values;
  const auto n = outputs["length"].as<unsigned>();
  for (unsigned i = 0; i < n; ++i) values.push_back(emscripten::convertJSArrayToNumberVector<float>(outputs[i]));
  return prenet::learned_finish(session, values);
}

void learned_release(unsigned session) { prenet::learned_release(session); }

/// `call` on `text`, except that a string whose characters alone exceed the request limit (UTF-8 takes at least a
/// byte per UTF-16 unit) is refused before embind copies it into wasm memory: a 100 MiB paste answers at once.
template <std::string (*call)(const std::string&)>
std::string text_call(const emscripten::val& text) {
  if (text.isString()) {
    std::string refused = prenet::oversize_request_json(text["length"].as<double>());
    if (!refused.empty()) return refused;
  }
  return call(text.as<std::string>());
}

}  // namespace

EMSCRIPTEN_BINDINGS(prenet_core) {
  emscripten::function("predict", &text_call<&prenet::predict_json>);
  emscripten::function("catalog", &prenet::catalog_json);
  emscripten::function("plan", &text_call<&prenet::plan_json>);
  emscripten::function("learnedPrepare", &text_call<&prenet::learned_prepare>);
  emscripten::function("learnedFeatures", &learned_features);
  emscripten::function("learnedFinish", &learned_finish);
  emscripten::function("learnedRelease", &learned_release);
}
