// The whole request path: JSON text in, JSON out. Never throws; an error document names a field.
#include <string>

#include "prenet/api.hpp"
#include "prenet/json_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::string out = prenet::predict_json(text);
  prenet::Json doc = prenet::Json::parse(out);  // must always be valid JSON
  if (doc.contains("error")) {
    std::string field = doc["error"]["field"].get<std::string>();
    std::string message = doc["error"]["message"].get<std::string>();
    if (field.empty() || message.rfind(field + ": ", 0) != 0 || (field == "request" && message.rfind("request: internal error", 0) == 0)) {
      __builtin_trap();
    }
  }
  return 0;
}
