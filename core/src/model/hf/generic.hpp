#pragma once
// The generic reading of a config whose model_type is not in the table (generic.cpp): only where its own
// fields decide the architecture, and saying which ones; otherwise an error naming the model_type.
#include <string>
#include <vector>

#include "model/hf/config_reader.hpp"
#include "model/hf/model_types.hpp"

namespace prenet::hf {

/// How a config outside the table is read.
struct GenericReading {
  const ModelType* row = nullptr;      // the steps and family it is read with
  std::string style;                   // "llama" (gated MLP, RMSNorm, rotary) or "gpt2" (LayerNorm, learned)
  std::vector<std::string> relied_on;  // the config fields that decided the reading, in the warning's order
  std::string warning;                 // the note the response carries
};

/// The generic reading of `c` (whose model_type has no row). Errors, naming the model_type, the field at fault
/// and the supported model_types, when a field changes the architecture in a way the generic reader does not
/// read (experts, latent attention, layer patterns, nested configs, ...) or when the fields decide no style.
GenericReading read_generically(const Cfg& c);

/// Every model_type the tables read, comma-separated, for errors.
std::string supported_model_types();

}  // namespace prenet::hf
