#include "prenet/training.hpp"

namespace prenet {

const char* to_string(Precision p) {
  switch (p) {
    case Precision::FP32: return "fp32";
    case Precision::TF32: return "tf32";
    case Precision::FP16: return "fp16";
    case Precision::BF16: return "bf16";
    case Precision::FP8: return "fp8";
  }
  return "fp32";
}

const char* to_string(Optimizer o) {
  switch (o) {
    case Optimizer::None: return "none";
    case Optimizer::SGD: return "sgd";
    case Optimizer::Momentum: return "momentum";
    case Optimizer::Adam: return "adam";
    case Optimizer::AdamW: return "adamw";
    case Optimizer::Adagrad: return "adagrad";
    case Optimizer::Adadelta: return "adadelta";
    case Optimizer::RMSProp: return "rmsprop";
  }
  return "none";
}

const char* to_string(AttentionKernel a) { return a == AttentionKernel::Flash ? "flash" : "eager"; }

const std::vector<std::string>& attention_kernel_names() {
  static const std::vector<std::string> names = {"eager", "flash"};
  return names;
}

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> names = {"fp32", "tf32", "fp16", "bf16", "fp8"};
  return names;
}

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names = {"none",    "sgd",      "momentum", "adam",
                                                 "adamw",   "adagrad",  "adadelta", "rmsprop"};
  return names;
}

Precision precision_from_string(const std::string& name) {
  for (auto p : {Precision::FP32, Precision::TF32, Precision::FP16, Precision::BF16, Precision::FP8}) {
    if (name == to_string(p)) return p;
  }
  return Precision::FP32;
}

Optimizer optimizer_from_string(const std::string& name) {
  for (auto o : {Optimizer::None, Optimizer::SGD, Optimizer::Momentum, Optimizer::Adam, Optimizer::AdamW,
                 Optimizer::Adagrad, Optimizer::Adadelta, Optimizer::RMSProp}) {
    if (name == to_string(o)) return o;
  }
  return Optimizer::None;
}

double activation_bytes(Precision p) { return p == Precision::FP32 || p == Precision::TF32 ? 4.0 : 2.0; }

bool is_mixed(Precision p) { return p == Precision::FP16 || p == Precision::BF16 || p == Precision::FP8; }

// Reads + writes per parameter: SGD p,g -> p; momentum adds m; Adam adds m and v (PREDICTION.md).
double optimizer_bytes_per_parameter(Optimizer o) {
  switch (o) {
    case Optimizer::None: return 0;
    case Optimizer::SGD: return 12;
    case Optimizer::Momentum: return 20;
    case Optimizer::Adagrad: return 20;
    case Optimizer::RMSProp: return 20;
    case Optimizer::Adam: return 28;
    case Optimizer::AdamW: return 28;
    case Optimizer::Adadelta: return 28;
  }
  return 0;
}

double optimizer_flops_per_parameter(Optimizer o) {
  switch (o) {
    case Optimizer::None: return 0;
    case Optimizer::SGD: return 2;
    case Optimizer::Momentum: return 4;
    case Optimizer::Adagrad: return 6;
    case Optimizer::RMSProp: return 7;
    case Optimizer::Adam: return 12;
    case Optimizer::AdamW: return 14;
    case Optimizer::Adadelta: return 12;
  }
  return 0;
}

int optimizer_states(Optimizer o) {
  switch (o) {
    case Optimizer::None:
    case Optimizer::SGD: return 0;
    case Optimizer::Momentum:
    case Optimizer::Adagrad:
    case Optimizer::RMSProp: return 1;
    case Optimizer::Adam:
    case Optimizer::AdamW:
    case Optimizer::Adadelta: return 2;
  }
  return 0;
}

std::int64_t TrainingConfig::steps_per_epoch() const {
  std::int64_t dataset = dataset_size > 0 ? dataset_size : batch_size * 100;
  return (dataset + batch_size - 1) / batch_size;
}

}  // namespace prenet
