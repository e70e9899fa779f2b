// Hugging Face config.json expansion, then the layer list it produces.
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "prenet/features.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/layer_list.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::run([&] {
    prenet::Json doc = prenet::parse_json_text(text, "model.hf_config");
    std::vector<std::string> warnings;
    prenet::Json model = prenet::hf_config_to_layers(doc, "model.hf_config", 0, warnings);
    prenet::Network net = prenet::parse_layer_list(model, "model.hf_config", {});
    prenet::step_work(net, 1, prenet::KernelContext(prenet::Precision::FP32), prenet::Optimizer::Adam);
  });
  return 0;
}
