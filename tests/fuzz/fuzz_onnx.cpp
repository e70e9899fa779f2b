// The bounded protobuf reader and the ONNX graph translation, on raw file bytes.
#include <string_view>

#include "fuzz_common.hpp"
#include "prenet/features.hpp"
#include "prenet/onnx_model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz::run([&] {
    prenet::Network net = prenet::onnx_bytes_to_network(bytes, "model.onnx_base64", {});
    prenet::step_work(net, 2, prenet::KernelContext(prenet::Precision::FP32), prenet::Optimizer::SGD);
  });
  return 0;
}
