// Audio and vision models and multimodal wrappers: Whisper, CLIP/SigLIP, Gemma 3 and Llama 4 wrappers, DeBERTa.
// One row per model_type; see model_types.cpp for how to add one.
#include "model/hf/parts.hpp"
#include "model/hf/quirks.hpp"

namespace prenet::hf {

const std::vector<ModelType>& multimodal_model_types() {
  static const std::vector<ModelType> rows = {};
  return rows;
}

}  // namespace prenet::hf
