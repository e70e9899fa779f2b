#pragma once
// The table of Hugging Face model types (model_types.cpp): what each model_type reads and which builder
// turns it into layers.
#include <string>
#include <vector>

#include "model/hf/builders.hpp"
#include "model/hf/steps.hpp"

namespace prenet::hf {

/// A kind of network with one builder.
struct Family {
  Builder build;
  bool image_input;  // the model reads an image, not tokens
};

/// One row: a model_type, its family, and the steps that read its config.
struct ModelType {
  std::string name;  // the model_type (and the model's name in the response)
  Family family;
  Steps steps;                            // read in order
  std::vector<std::string> aliases = {};  // other model_type spellings of the same model
};

/// The rows of each table, one file per group of families (a new group is one file and one line in
/// model_type_tables):
const std::vector<ModelType>& classic_model_types();     // model_types.cpp: GPT-2 ... Mixtral, BERT, T5, BART, ViT
const std::vector<ModelType>& decoder_model_types();     // types_decoder.cpp: the 2024–2026 decoders (MoE, MLA, ...)
const std::vector<ModelType>& plain_model_types();       // types_plain.cpp: decoders read by field renaming alone
const std::vector<ModelType>& ssm_model_types();         // types_ssm.cpp: Mamba, Mamba-2 and hybrids
const std::vector<ModelType>& multimodal_model_types();  // types_multimodal.cpp: audio, vision towers, wrappers
const std::vector<ModelType>& recent_model_types();      // types_recent.cpp: GLM-4.5, Seed-OSS, SmolLM3, ... (2025)
const std::vector<ModelType>& qwen_next_model_types();   // types_qwen_next.cpp: Qwen3-Next, Qwen3.5 (Gated DeltaNet)

/// Every table above, in lookup order.
const std::vector<const std::vector<ModelType>*>& model_type_tables();

/// The row for `model_type`, or nullptr when the table has none.
const ModelType* find_model_type(const std::string& model_type);

// A model_type without a row is read generically where its fields decide the architecture: generic.hpp.

}  // namespace prenet::hf
