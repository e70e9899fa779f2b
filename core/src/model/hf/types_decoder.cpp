// The 2024–2026 decoders: Qwen3, DeepSeek, gpt-oss, Gemma 2/3, Llama 4 and relatives (MoE, MLA, layer patterns).
// One row per model_type; see model_types.cpp for how to add one.
#include "model/hf/parts.hpp"
#include "model/hf/quirks.hpp"

namespace prenet::hf {

const std::vector<ModelType>& decoder_model_types() {
  static const std::vector<ModelType> rows = {};
  return rows;
}

}  // namespace prenet::hf
