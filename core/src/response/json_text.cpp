#include "response/json_text.hpp"

#include <cmath>

namespace prenet {

std::string dump(const Json& doc) { return doc.dump(-1, ' ', false, Json::error_handler_t::replace); }

double round6(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  double scale = std::pow(10.0, 5 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

Json error_document(const std::string& field, const std::string& message) {
  return {{"error", {{"field", field}, {"message", message}}}};
}

}  // namespace prenet
