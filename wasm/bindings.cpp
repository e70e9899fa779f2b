// The only Emscripten code in the project: exposes the core's JSON API to JavaScript.
#include <emscripten/bind.h>

#include "prenet/api.hpp"

EMSCRIPTEN_BINDINGS(prenet_core) {
  emscripten::function("predict", &prenet::predict_json);
  emscripten::function("catalog", &prenet::catalog_json);
}
