#include "prenet/training.hpp"

#include <string>

#include "prenet/error.hpp"
#include "request/options.hpp"

namespace prenet {

const char* to_string(Precision p) { return choice_name("precision", static_cast<std::size_t>(p)); }

const char* to_string(Optimizer o) { return choice_name("optimizer", static_cast<std::size_t>(o)); }

const char* to_string(AttentionKernel a) { return choice_name("attention", static_cast<std::size_t>(a)); }

const char* to_string(KernelSet k) { return choice_name("kernels", static_cast<std::size_t>(k)); }

const char* to_string(OptimizerImpl i) { return choice_name("optimizer_impl", static_cast<std::size_t>(i)); }

const std::vector<std::string>& precision_names() { return training_option("precision").values; }

const std::vector<std::string>& optimizer_names() { return training_option("optimizer").values; }

Precision precision_from_string(const std::string& name) {
  std::size_t i = choice_index("precision", name);
  return i < precision_names().size() ? static_cast<Precision>(i) : Precision::FP32;
}

Optimizer optimizer_from_string(const std::string& name) {
  std::size_t i = choice_index("optimizer", name);
  return i < optimizer_names().size() ? static_cast<Optimizer>(i) : Optimizer::None;
}

double activation_bytes(Precision p) { return p == Precision::FP32 || p == Precision::TF32 ? 4.0 : 2.0; }

bool is_mixed(Precision p) { return p == Precision::FP16 || p == Precision::BF16 || p == Precision::FP8; }

// Reads + writes per parameter: SGD p,g -> p; momentum adds m; Adam adds m and v (PREDICTION.md). Foreach:
// the sum over PyTorch's _multi_tensor_<optimizer> ops of 4 bytes per tensor each reads or writes, e.g.
// AdamW: p *= 1 - lr wd (8), m.lerp_(g) (12), v *= b2 (8), v.addcmul_(g, g) (12), s = sqrt(v) (8), s /= c (8),
// s += eps (8), p.addcdiv_(m, s) (16) = 80; Adam skips the decay (72 with weight_decay 0, PyTorch's default).
double optimizer_bytes_per_parameter(Optimizer o, OptimizerImpl impl) {
  if (impl == OptimizerImpl::Foreach) {
    switch (o) {
      case Optimizer::None: return 0;
      case Optimizer::SGD: return 12;       // p.add_(g)
      case Optimizer::Momentum: return 32;  // b *= mu (8), b.add_(g) (12), p.add_(b) (12)
      case Optimizer::Adagrad: return 44;   // s.addcmul_(g, g) (12), d = sqrt(s) (8), d += eps (8), p.addcdiv_ (16)
      case Optimizer::RMSProp: return 52;   // v *= a (8), v.addcmul_ (12), then as Adagrad (8 + 8 + 16)
      case Optimizer::Adam: return 72;
      case Optimizer::AdamW: return 80;
      case Optimizer::Adadelta: return 108;  // eleven passes over squares, deltas and parameters
    }
    return 0;
  }
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
  std::int64_t rows = dataset_size > 0 ? dataset_size : batch_size * 100;
  if (packing && average_tokens && token_seq_len > 0) {
    // Packed: the dataset's rows x average_tokens real tokens fill ceil(that / seq_len) full rows; split so the
    // product cannot overflow (average_tokens <= seq_len).
    const std::int64_t s = token_seq_len, a = *average_tokens;
    rows = rows / s * a + ((rows % s) * a + s - 1) / s;
  }
  return (rows + batch_size - 1) / batch_size;
}

double TrainingConfig::real_tokens_per_step() const {
  if (token_seq_len <= 0) return 0;
  // Packed rows are full of real tokens; padded rows hold one sample of average_tokens each.
  const std::int64_t per_row = packing || !average_tokens ? token_seq_len : *average_tokens;
  return static_cast<double>(batch_size) * static_cast<double>(per_row);
}

void resolve_packing(TrainingConfig& training, bool token_model, std::int64_t seq_len) {
  if (!token_model) {
    if (training.packing) throw InputError("training.packing", "sequence packing needs a model that reads tokens");
    if (training.average_tokens) {
      throw InputError("training.average_tokens", "real tokens per sample need a model that reads tokens");
    }
    return;
  }
  training.token_seq_len = seq_len;
  if (training.average_tokens && *training.average_tokens > seq_len) {
    throw InputError("training.average_tokens", std::to_string(*training.average_tokens) +
                                                    " real tokens per sample exceed the sequence length of " +
                                                    std::to_string(seq_len));
  }
}

}  // namespace prenet
