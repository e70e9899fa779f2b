#include "layers/lora.hpp"

#include <set>

#include "layers/kind_helpers.hpp"

namespace prenet {

double lora_kernels(const LayerStep& st, KernelBuilder& kb) {
  const LoraAdapter& adapter = st.layer.adapter;
  if (adapter.rank <= 0) return 0;
  const double r = d(adapter.rank), e = st.e;
  const bool dropout = adapter.dropout > 0;
  double saved = 0;
  std::set<int> inputs_saved;
  for (const LinearModule& m : adapter.modules) {
    const double rows = st.b * m.rows_per_sample, per_copy = rows / m.copies;
    const double x = rows * m.in, y = rows * m.out;
    // Forward: dropout(x) (its own per adapter, PEFT's lora_dropout[name]), x A, (x A) B, times alpha / r,
    // added to the base layer's output (one fused kernel under torch.compile).
    if (dropout) kb.stream(KernelClass::Elementwise, Phase::Forward, x, 2 + 1 / e, 2);
    kb.gemm(Phase::Forward, per_copy, r, m.in, m.copies);
    kb.gemm(Phase::Forward, per_copy, m.out, r, m.copies);
    if (st.context.compiled) {
      // Inductor fuses the scaling into the add: one kernel reading both products, writing the sum.
      kb.stream(KernelClass::Elementwise, Phase::Forward, y, 3, 2);
    } else {
      kb.stream(KernelClass::Elementwise, Phase::Forward, y, 2, 1);
      kb.stream(KernelClass::Elementwise, Phase::Forward, y, 3, 1);
    }
    // Backward: the scaling, B's and A's weight gradients, and the input gradient through A when the layer
    // passes one on (added to the base's).
    kb.stream(KernelClass::Elementwise, Phase::Backward, y, 2, 1);
    kb.gemm(Phase::Backward, r, m.out, per_copy, m.copies);
    kb.gemm(Phase::Backward, per_copy, r, m.out, m.copies);
    kb.gemm(Phase::Backward, m.in, r, per_copy, m.copies);
    if (st.dx) {
      kb.gemm(Phase::Backward, per_copy, m.in, r, m.copies);
      kb.stream(KernelClass::Elementwise, Phase::Backward, x, 3, 1);
      if (dropout) kb.stream(KernelClass::Elementwise, Phase::Backward, x, 2 + 1 / e, 1);
    }
    // Saved: x A for B's gradient; A's input, the dropped-out copy and its mask (1 byte) per adapter, or the
    // layer's input once for every adapter reading it (the frozen base saves none of its own).
    saved += e * rows * r;
    if (dropout) {
      saved += (e + 1) * x;
    } else if (inputs_saved.insert(m.input_group).second) {
      saved += e * x;
    }
  }
  return saved;
}

void dequantize_kernels(const LayerStep& st, KernelBuilder& kb) {
  const Layer& layer = st.layer;
  if (layer.trainable || layer.quantized_bytes <= 0) return;
  for (const LinearModule& m : kind_of(layer.type).linear_modules(layer)) {
    if (m.role == "lm_head") continue;
    const double weights = m.in * m.out * m.copies;
    // Reads the packed codes and scales, writes the weight in the compute type.
    kb.stream(KernelClass::Elementwise, Phase::Forward, weights, 1, 2, layer.quantized_bytes + st.e);
    if (st.dx) kb.stream(KernelClass::Elementwise, Phase::Backward, weights, 1, 2, layer.quantized_bytes + st.e);
  }
}

double quantized_base_saved(const LayerStep& st) {
  const Layer& layer = st.layer;
  if (layer.trainable || layer.quantized_bytes <= 0 || !st.dx) return 0;
  std::set<int> saved_by_adapter;
  if (layer.adapter.rank > 0 && layer.adapter.dropout == 0) {
    for (const LinearModule& m : layer.adapter.modules) saved_by_adapter.insert(m.input_group);
  }
  std::set<int> groups;
  double saved = 0;
  for (const LinearModule& m : kind_of(layer.type).linear_modules(layer)) {
    if (m.role == "lm_head" || saved_by_adapter.count(m.input_group) > 0) continue;
    if (groups.insert(m.input_group).second) saved += st.e * st.b * m.rows_per_sample * m.in;
  }
  return saved;
}

}  // namespace prenet
