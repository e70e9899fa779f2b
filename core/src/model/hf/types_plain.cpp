// Decoders read by renaming fields onto the classic parts alone.
// One row per model_type; see model_types.cpp for how to add one.
#include "model/hf/parts.hpp"
#include "model/hf/quirks.hpp"

namespace prenet::hf {

const std::vector<ModelType>& plain_model_types() {
  static const std::vector<ModelType> rows = {};
  return rows;
}

}  // namespace prenet::hf
