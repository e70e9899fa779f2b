// The layer-list parser and the step decomposition on what it accepts.
#include <string>

#include "fuzz_common.hpp"
#include "prenet/features.hpp"
#include "prenet/layer_list.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::run([&] {
    prenet::Json doc = prenet::parse_json_text(text, "model");
    prenet::Network net = prenet::parse_layer_list(doc, "model", {});
    prenet::step_work(net, 2, prenet::KernelContext(prenet::Precision::BF16), prenet::Optimizer::Adam);
  });
  return 0;
}
