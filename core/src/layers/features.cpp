#include "prenet/features.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "layers/fp8.hpp"
#include "layers/kind_helpers.hpp"
#include "layers/lora.hpp"
#include "layers/moe.hpp"
#include "prenet/memory.hpp"

namespace prenet {

Kernel gemm_kernel(Phase phase, double m, double n, double k, double batch, double e) {
  Kernel kn;
  kn.cls = batch > 1 ? KernelClass::BatchedGemm : KernelClass::Gemm;
  kn.phase = phase;
  kn.m = m, kn.n = n, kn.k = k, kn.batch = batch;
  kn.flops = 2 * m * n * k * batch;
  kn.bytes = e * (m * k + k * n + m * n) * batch;
  return kn;
}

Kernel conv_kernel(Phase phase, double m, double n, double k, double in_elements, double weight_elements,
                   double out_elements, double window, double stride, double e) {
  Kernel kn;
  kn.cls = KernelClass::Conv;
  kn.phase = phase;
  kn.m = m, kn.n = n, kn.k = k, kn.batch = 1;
  kn.window = window;
  kn.stride = stride;
  kn.flops = 2 * m * n * k;
  kn.bytes = e * (in_elements + weight_elements + out_elements);
  return kn;
}

Kernel conv_pass_kernel(ConvPass pass, const ConvShape& c, double e) {
  double window = c.kernel_h * c.kernel_w;
  double in = c.batch * c.c_in * c.in_h * c.in_w, out = c.batch * c.c_out * c.out_h * c.out_w;
  double weights = window * c.c_in / c.groups * c.c_out;
  double flops_mnk = c.batch * c.out_h * c.out_w * window * c.c_in / c.groups * c.c_out;
  Kernel kn;
  switch (pass) {
    case ConvPass::Forward:
      kn = conv_kernel(Phase::Forward, c.batch * c.out_h * c.out_w, c.c_out, c.c_in / c.groups * window, in, weights,
                       out, window, c.stride, e);
      break;
    case ConvPass::Data:
      kn = conv_kernel(Phase::Backward, c.batch * c.in_h * c.in_w, c.c_in, c.c_out / c.groups * window, out, weights,
                       in, window, c.stride, e);
      break;
    case ConvPass::Filter:
      kn = conv_kernel(Phase::Backward, c.c_out, c.c_in / c.groups * window, c.batch * c.out_h * c.out_w, in, out,
                       weights, window, c.stride, e);
      break;
  }
  // The GEMM views differ, but every pass does the same multiply-adds (strided data gradients skip zeros).
  kn.flops = 2 * flops_mnk;
  return kn;
}

Kernel stream_kernel(KernelClass cls, Phase phase, double elements, double passes, double flops_per_element,
                     double e) {
  Kernel kn;
  kn.cls = cls;
  kn.phase = phase;
  kn.flops = elements * flops_per_element;
  kn.bytes = e * elements * passes;
  return kn;
}

Kernel recurrent_kernel(Phase phase, double steps, double m, double n, double k, double gate_elements, double e) {
  Kernel kn;
  kn.cls = KernelClass::Recurrent;
  kn.phase = phase;
  kn.m = m, kn.n = n, kn.k = k, kn.batch = 1;
  kn.repeats = steps;
  kn.flops = steps * (2 * m * n * k + 10 * gate_elements);
  kn.bytes = steps * e * (m * k + k * n + 2 * m * n + 2 * gate_elements);
  return kn;
}

const char* to_string(KernelClass c) {
  switch (c) {
    case KernelClass::Gemm: return "gemm";
    case KernelClass::BatchedGemm: return "bmm";
    case KernelClass::Conv: return "conv";
    case KernelClass::Recurrent: return "recurrent";
    case KernelClass::Elementwise: return "elementwise";
    case KernelClass::Normalization: return "normalization";
    case KernelClass::Softmax: return "softmax";
    case KernelClass::Embedding: return "embedding";
    case KernelClass::Optimizer: return "optimizer";
  }
  return "elementwise";
}

const char* to_string(Phase p) {
  switch (p) {
    case Phase::Forward: return "forward";
    case Phase::Backward: return "backward";
    case Phase::Optimizer: return "optimizer";
  }
  return "forward";
}

bool is_matmul(KernelClass c) {
  return c == KernelClass::Gemm || c == KernelClass::BatchedGemm || c == KernelClass::Conv ||
         c == KernelClass::Recurrent;
}

double prenet_co(const Layer& layer, std::int64_t batch) { return kind_of(layer.type).prenet_co(layer, d(batch)); }

double prenet_cm(const Layer& layer, std::int64_t batch, bool training) {
  double b = d(batch);
  double total = d(layer.parameters) + b * d(elements(layer.input_shapes.front())) + b * d(elements(layer.output_shape));
  return training ? 2 * total : total;
}

namespace {

/// Per layer, whether a dense or convolution layer consumes its output (and so saves that tensor).
std::vector<bool> output_saved_by_consumer(const Network& net) {
  std::vector<bool> held(net.layers.size(), false);
  for (const Layer& layer : net.layers) {
    // A frozen layer saves its input only for adapters that read it as it is (no dropout).
    const bool adapters_read_it = layer.adapter.rank > 0 && layer.adapter.dropout == 0;
    if (!kind_of(layer.type).saves_input() || (!own_weight_gradients(layer) && !adapters_read_it)) continue;
    for (int producer : layer.inputs) {
      const auto p = static_cast<std::size_t>(producer);
      if (producer >= 0 && p < held.size()) held[p] = true;
    }
  }
  return held;
}

/// Per layer, whether a cross-entropy loss reads its output (the vocabulary head, chunked with the loss).
std::vector<bool> feeds_loss(const Network& net) {
  std::vector<bool> head(net.layers.size(), false);
  for (const Layer& layer : net.layers) {
    if (layer.type != LayerType::CrossEntropy) continue;
    for (int producer : layer.inputs) {
      const auto p = static_cast<std::size_t>(producer);
      if (producer >= 0 && p < head.size()) head[p] = true;
    }
  }
  return head;
}

/// Appends layer `layer`'s kernels for `batch` samples and sets what it saves for backward.
void add_layer_kernels(const Layer& layer, double batch, const KernelContext& context, double e, bool head, MoeRole moe,
                       KernelBuilder& kb, LayerWork& lw) {
  const Shape& in = layer.input_shapes.front();
  const LayerAttrs& a = layer.attrs;
  // Megatron-LM fuses its GELU (the tanh form) into one kernel, and so does torch.compile (Inductor fuses the
  // chain's pointwise ops and its partitioner saves the chain's input only); PyTorch eager runs Hugging Face's
  // chains op by op.
  const bool fused_chains = context.fuses_pointwise();
  const LayerStep step{layer,
                       in,
                       a,
                       batch,
                       e,
                       batch * d(elements(in)),
                       batch * d(elements(layer.output_shape)),
                       layer.needs_input_grad,
                       activation_flops(a.activation),
                       fused_chains ? std::nullopt : composed_activation(a.activation, e),
                       context,
                       !own_weight_gradients(layer),
                       head,
                       moe};
  kb.set_frozen(!own_weight_gradients(layer));
  kind_of(layer.type).kernels(step, kb, lw);
  dequantize_kernels(step, kb);
  lw.saved_activation_bytes += lora_kernels(step, kb) + quantized_base_saved(step);
}

/// Drops the backward kernels of layer `l` (from `first` on in the step's list) and what it saves: a frozen
/// layer below everything that trains passes no gradient (fine-tuning's frozen bottom).
void drop_backward(StepWork& work, std::size_t l, std::size_t first) {
  LayerWork& lw = work.layers[l];
  auto& kernels = work.kernels;
  std::size_t kept = first;
  for (std::size_t i = first; i < kernels.size(); ++i) {
    const Kernel& k = kernels[i];
    if (k.phase != Phase::Backward) {
      kernels[kept++] = k;
      continue;
    }
    lw.kernels -= 1;
    work.flops[1] -= k.flops;
  }
  kernels.resize(kept);
  lw.flops[1] = 0;
  lw.bytes[1] = 0;
  lw.saved_activation_bytes = 0;
  lw.saved_input_bytes = 0;
}

/// Muon's orthogonalisation of one rows x cols momentum (KellerJordan/Muon zeropower_via_newtonschulz5): in
/// bf16, X (m x n, m <= n: the matrix or its transpose) is normalised, then 5 times A = X X^T (m x m x n),
/// B = b A + c A A (m x m x m), X = a X + B X (m x n x m), with (a, b, c) = (3.4445, -4.7750, 2.0315); the two
/// axpys read two operands and write one, in bf16.
void add_newton_schulz_kernels(const TrainedMatrix& w, KernelBuilder& kb) {
  constexpr int kIterations = 5;
  constexpr double kBf16 = 2.0;
  const double m = std::min(w.rows, w.cols), n = std::max(w.rows, w.cols);
  for (int i = 0; i < kIterations; ++i) {
    kb.add(gemm_kernel(Phase::Optimizer, m, m, n, w.copies, kBf16));
    kb.add(gemm_kernel(Phase::Optimizer, m, m, m, w.copies, kBf16));
    kb.stream(KernelClass::Elementwise, Phase::Optimizer, m * m * w.copies, 3, 3, kBf16);
    kb.add(gemm_kernel(Phase::Optimizer, m, n, m, w.copies, kBf16));
    kb.stream(KernelClass::Elementwise, Phase::Optimizer, m * n * w.copies, 3, 3, kBf16);
  }
}

/// Appends the update step of `layer`'s trained parameters: one pass of the optimizer's kernel over them
/// (bytes per parameter from optimizer_step_bytes); Muon: Newton-Schulz per hidden matrix and its momentum
/// update on those, AdamW over the rest (embeddings, the head, norms, biases).
void add_optimizer_kernels(const Layer& layer, const KernelContext& context, Optimizer optimizer, OptimizerImpl impl,
                           KernelBuilder& kb) {
  const double p = d(trainable_parameters(layer));
  if (p <= 0) return;
  const Precision precision = context.precision;
  const MasterWeights master = context.master_weights;
  double rest = p;
  if (optimizer == Optimizer::Muon) {
    double hidden = 0;
    for (const TrainedMatrix& w : trained_matrices(layer)) {
      if (!w.hidden) continue;
      add_newton_schulz_kernels(w, kb);
      hidden += w.rows * w.cols * w.copies;
    }
    hidden = std::min(hidden, p);
    kb.stream(KernelClass::Optimizer, Phase::Optimizer, hidden, 1, optimizer_flops_per_parameter(optimizer),
              optimizer_step_bytes(optimizer, impl, precision, master));
    rest = p - hidden;
    optimizer = Optimizer::AdamW;
  }
  kb.stream(KernelClass::Optimizer, Phase::Optimizer, rest, 1, optimizer_flops_per_parameter(optimizer),
            optimizer_step_bytes(optimizer, impl, precision, master));
}

}  // namespace

KernelContext kernel_context(const TrainingConfig& training) {
  KernelContext context(training.precision, training.attention, training.kernels);
  context.nchw = training.memory_format == MemoryFormat::NCHW;
  context.loss_chunks = training.loss == LossKind::ChunkedCE ? kLossChunks : 1;
  context.compiled = training.compile;
  context.compiled_loss = training.compile_loss;
  context.master_weights = training.master_weights;
  context.moe_imbalance = training.moe_imbalance;
  context.moe_capacity_factor = training.moe_capacity_factor.value_or(0.0);
  context.fp8_recipe = training.fp8_recipe.value_or(Fp8Recipe::Delayed);
  context.fp8_any_layout = training.fp8_any_layout;
  return context;
}

StepWork step_work(const Network& net, std::int64_t batch, const KernelContext& context, Optimizer optimizer,
                   OptimizerImpl impl) {
  const Precision precision = context.precision;
  StepWork work;
  work.context = context;
  work.layers.resize(net.layers.size());
  const double b = d(batch);
  const double e = activation_bytes(precision);
  const std::vector<bool> held = output_saved_by_consumer(net);
  const std::vector<bool> head = feeds_loss(net);
  const std::vector<MoeRole> moe = moe_roles(net);
  // FP8 training runs only the blocks' linear layers in FP8 (layers/fp8.cpp); every other GEMM in 16-bit.
  const std::vector<bool> fp8 =
      precision == Precision::FP8 ? fp8_linear_layers(net) : std::vector<bool>(net.layers.size(), false);
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const Layer& layer = net.layers[i];
    LayerWork& lw = work.layers[i];
    KernelBuilder kb(work, static_cast<int>(i), e);
    const std::size_t first = work.kernels.size();
    add_layer_kernels(layer, b, context, e, head[i], moe[i], kb, lw);
    if (fp8[i]) add_fp8_kernels(layer, context, optimizer != Optimizer::None, first, work, lw, kb);
    // A tensor kept only for a ReLU's backward, which reads nothing else, is free when its consumer saves
    // it too (PyTorch stores a tensor saved twice once, in place or not); other activations' backward
    // reads their input, a tensor apart from what the consumer saves.
    if (held[i] && kind_of(layer.type).saves_output_only_for_relu(layer)) lw.saved_activation_bytes -= e * b * d(elements(layer.output_shape));
    if (!own_weight_gradients(layer) && !layer.needs_input_grad && layer.adapter.rank == 0) {
      drop_backward(work, i, first);
    }
    lw.co = prenet_co(layer, batch);
    lw.cm = prenet_cm(layer, batch, optimizer != Optimizer::None);
    if (optimizer != Optimizer::None) add_optimizer_kernels(layer, context, optimizer, impl, kb);
  }
  // PyTorch's optimizers update every tensor with multi-tensor kernels (foreach or fused), a launch for
  // many layers at once rather than one per layer: each layer's update is its share of one launch.
  double optimizer_bytes = 0;
  for (const Kernel& k : work.kernels) optimizer_bytes += k.cls == KernelClass::Optimizer ? k.bytes : 0;
  for (Kernel& k : work.kernels) {
    if (k.cls == KernelClass::Optimizer && optimizer_bytes > 0) k.repeats = k.bytes / optimizer_bytes;
  }
  return work;
}

}  // namespace prenet
