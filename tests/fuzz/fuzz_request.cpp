// The whole request path: JSON text in, JSON out. Never throws; an error document names a field.
#include <string>

#include "fuzz_common.hpp"
#include "prenet/api.hpp"
#include "prenet/json_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::string out = prenet::predict_json(text);
  prenet::Json doc = prenet::Json::parse(out);  // must always be valid JSON
  if (doc.contains("error")) fuzz::check_error_document(doc);
  return 0;
}
