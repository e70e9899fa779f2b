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
      // lucidrains/lion-pytorch: p.mul_(1 - lr wd) (8), u = m.clone() (8), u.lerp_(g) (12), u.sign_() (8),
      // p.add_(u) (12), m.lerp_(g) (12).
      case Optimizer::Lion: return 60;
      default: break;  // the others have a single implementation (below)
    }
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
    // bitsandbytes' kernels (csrc/kernels.cu kOptimizer32bit2State, kOptimizerStatic8bit2StateBlockwise): one
    // pass; 8-bit states read and written as 1 byte each (absmax per 256 elements is noise).
    case Optimizer::AdamW8bit:
    case Optimizer::PagedAdamW8bit: return 8 + 4 + 2 + 2;
    case Optimizer::PagedAdamW: return 28;
    // transformers' Adafactor, a loop over tensors (no fused form): RMS(p) (4), g**2 (8), + eps (8), row and
    // column means (8), r (x) c (4), .mul_(g) (12), RMS(update) (4), .div_ (8), .mul_(lr) (8), -update (8),
    // p.add_ (12) = 84 (the factored states are rows + cols: nothing per element).
    case Optimizer::Adafactor: return 84;
    case Optimizer::Lion:
      return 20;  // one pass: p, g, m read; p, m written
    // KellerJordan/Muon muon_update: m.lerp_(g) (12), g.lerp_(m) nesterov (12), .bfloat16() (6), the norm (2),
    // p.mul_(1 - lr wd) (8), p.add_(update) (4 + 2 + 4); the Newton-Schulz GEMMs are kernels of their own.
    case Optimizer::Muon: return 50;
  }
  return 0;
}

bool is_bitsandbytes(Optimizer o) {
  return o == Optimizer::AdamW8bit || o == Optimizer::PagedAdamW8bit || o == Optimizer::PagedAdamW;
}

bool is_8bit(Optimizer o) { return o == Optimizer::AdamW8bit || o == Optimizer::PagedAdamW8bit; }

double state_element_bytes(Optimizer o, MasterWeights master) {
  // bitsandbytes allocates 32-bit states as float32 (Optimizer2State.init_state), transformers' Adafactor as
  // the float() gradient; torch.optim, Lion and Muon as zeros_like(p).
  if (master == MasterWeights::FP32 || is_bitsandbytes(o) || o == Optimizer::Adafactor) return 4.0;
  return 2.0;
}

double optimizer_step_bytes(Optimizer o, OptimizerImpl impl, Precision precision, MasterWeights master) {
  if (o == Optimizer::None) return 0;
  const double bytes = optimizer_bytes_per_parameter(o, is_bitsandbytes(o) ? OptimizerImpl::Fused : impl);
  if (master == MasterWeights::FP32) return bytes + (is_mixed(precision) ? 4.0 : 0.0);
  // Pure bf16: the FP32 accesses of weights and gradients (and of torch-kind states) are 2 bytes each. The
  // 8-bit kernels move 12 bytes of weights and gradients and 4 of states; bitsandbytes' and Adafactor's
  // 32-bit states stay FP32 (Adafactor's factored states are no per-element traffic).
  if (is_8bit(o)) return 12 * 0.5 + 4;
  if (o == Optimizer::PagedAdamW) return 12 * 0.5 + 16;
  return bytes * 0.5;
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
    // AdamW's 14 plus, per 8-bit state, a dequantizing lookup and scale (2) and quantizing: the absmax scale
    // and an 8-step binary search of the 256-entry code (bitsandbytes' dQuantizeDynamic).
    case Optimizer::AdamW8bit:
    case Optimizer::PagedAdamW8bit: return 14 + 2 * (2 + 1 + 8);
    case Optimizer::PagedAdamW: return 14;
    case Optimizer::Adafactor: return 12;  // square, means, rsqrt product, RMS, clip, scale, add
    case Optimizer::Lion: return 10;       // decay, lerp (3), sign, add (2), lerp (3)
    case Optimizer::Muon: return 10;       // two lerps, the cast and norm, decay, add
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
    case Optimizer::Adadelta:
    case Optimizer::AdamW8bit:
    case Optimizer::PagedAdamW8bit:
    case Optimizer::PagedAdamW: return 2;
    case Optimizer::Adafactor: return 0;  // beta1 None: no first moment; the second moment is factored
    case Optimizer::Lion:
    case Optimizer::Muon: return 1;
  }
  return 0;
}

void check_optimizer_switches(const TrainingConfig& t, std::int64_t micro_batches) {
  if (t.master_weights == MasterWeights::BF16 && t.precision != Precision::BF16 && t.precision != Precision::FP8) {
    throw InputError("training.master_weights", std::string("bf16 keeps the weights in bf16, which precision ") +
                                                    to_string(t.precision) +
                                                    " does not compute in; use "
                                                    "precision bf16 (or fp8) or master_weights fp32");
  }
  if (!t.optimizer_in_backward) return;
  if (t.optimizer == Optimizer::None) {
    throw InputError("training.optimizer_in_backward", "needs an optimizer (optimizer is none)");
  }
  if (micro_batches > 1) {
    throw InputError("training.optimizer_in_backward",
                     "steps each parameter as its gradient is ready, so it cannot accumulate gradients over " +
                         std::to_string(micro_batches) + " micro-batches (parallel.micro_batches must be 1)");
  }
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

double TrainingConfig::input_ms_per_step(std::int64_t replicas) const {
  if (!input_rate || replicas < 1) return 0;
  return static_cast<double>(batch_size) / static_cast<double>(replicas) / *input_rate * 1e3;
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
