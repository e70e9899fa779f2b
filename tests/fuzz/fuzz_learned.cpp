// The learned path as the page runs it: learned_prepare on request text (opening a session), each class's
// feature rows (they go straight into ONNX Runtime, so every value must be finite), learned_finish of that
// session with the models' neutral output (0: the roofline's time), and a response that is valid JSON with finite, non-negative step times.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "prenet/api.hpp"
#include "prenet/json_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  prenet::Json prepared = prenet::Json::parse(prenet::learned_prepare(text));
  if (prepared.contains("error")) {
    fuzz::check_error_document(prepared);
    return 0;
  }
  const auto session = prepared["session"].get<std::uint32_t>();
  std::vector<std::vector<float>> outputs;
  const prenet::Json& classes = prepared["classes"];
  for (std::size_t c = 0; c < classes.size(); ++c) {
    auto rows = classes[c]["rows"].get<std::size_t>();
    auto width = classes[c]["width"].get<std::size_t>();
    const std::vector<float>& features = prenet::learned_features(session, c);
    if (features.size() != rows * width) __builtin_trap();
    for (float v : features) {
      if (!std::isfinite(v)) {
        std::fprintf(stderr, "non-finite feature in class %zu (%s)\n", c, classes[c]["dataset"].dump().c_str());
        __builtin_trap();
      }
    }
    outputs.emplace_back(rows, 0.0F);
  }
  prenet::Json response = prenet::Json::parse(prenet::learned_finish(session, outputs));
  if (response.contains("error")) {
    fuzz::check_error_document(response);
    return 0;
  }
  for (const auto& r : response["results"]) {
    const prenet::Json& step = r["step_ms"];
    if (!step.is_number() || !std::isfinite(step.get<double>()) || step.get<double>() < 0) {
      std::fprintf(stderr, "bad step_ms: %s\n", r.dump().substr(0, 400).c_str());
      __builtin_trap();
    }
  }
  return 0;
}
