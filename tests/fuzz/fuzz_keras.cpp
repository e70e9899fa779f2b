// Keras model.to_json() translation.
#include <string>

#include "fuzz_common.hpp"
#include "prenet/features.hpp"
#include "prenet/keras.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::run([&] {
    prenet::Network net = prenet::keras_to_network(prenet::Json(text), "model.keras", {});
    prenet::step_work(net, 2, prenet::KernelContext(prenet::Precision::FP32), prenet::Optimizer::SGD);
  });
  return 0;
}
