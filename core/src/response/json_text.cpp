#include "response/json_text.hpp"

namespace prenet {

std::string dump(const Json& doc) { return doc.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json error_document(const std::string& field, const std::string& message) {
  return {{"error", {{"field", field}, {"message", message}}}};
}

}  // namespace prenet
