#include "prenet/features.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "layers/memory_format.hpp"

namespace prenet {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

/// Arithmetic per element of an activation function's forward pass (tanh-based GELU and friends cost more).
double activation_flops(const std::string& fn) {
  if (fn == "none" || fn == "linear" || fn.empty()) return 0;
  if (fn == "relu" || fn == "relu6" || fn == "leaky_relu") return 1;
  if (fn == "gelu" || fn == "gelu_new" || fn == "gelu_fast" || fn == "gelu_pytorch_tanh" || fn == "mish") return 8;
  return 4;
}

/// An activation that Hugging Face writes as a chain of PyTorch operations instead of one fused kernel:
/// per element of its input, the bytes each forward and each backward kernel moves (one launch each,
/// in order) and the bytes autograd saves for backward.
struct OpChain {
  std::vector<double> forward, backward;
  double saved = 0;
  double output = 0;  // bytes per element of the result before any cast for the next GEMM
};

/// The chain for gelu_new (NewGELUActivation, also gelu_accurate), gelu_fast (FastGELUActivation) and
/// quick_gelu (QuickGELUActivation), with activations of e bytes; nullopt for fused activations (relu,
/// gelu, gelu_pytorch_tanh, silu, ...). Derived from the forward code and PyTorch's derivative formulas:
/// gelu_new is 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·pow(x, 3)))); pow is on autocast's FP32 list, so
/// under 16-bit training x is cast up, and type promotion keeps FP32 from there to the multiplication
/// by 0.5·x; the result is cast back to e for the next GEMM, and its gradients are cast to each input's
/// type. Saved: pow's input (FP32), tanh's output, 1 + tanh and 0.5·x.
std::optional<OpChain> composed_activation(const std::string& fn, double e) {
  const double f = 4;  // FP32
  const bool autocast = e < f;
  OpChain c;
  if (fn == "gelu_new") {
    if (autocast) c.forward.push_back(e + f);                    // x to FP32 for pow
    c.forward.insert(c.forward.end(), {2 * f, 2 * f, e + 2 * f,  // pow, 0.044715·, x +
                                       2 * f, 2 * f, 2 * f,      // √(2/π)·, tanh, 1 +
                                       2 * e, e + 2 * f});       // 0.5·x, product
    if (autocast) c.forward.push_back(f + e);                    // down to e for the next GEMM
    if (autocast) c.backward.push_back(e + f);                   // the gradient up to FP32
    c.backward.insert(c.backward.end(), {3 * f, e + 2 * f,       // d(0.5·x), d(1 + tanh)
                                         3 * f, 2 * f, 2 * f,    // tanh backward, √(2/π)·, 0.044715·
                                         2 * f, 2 * f, 3 * f,    // pow backward: x², 3·, times the gradient
                                         2 * e, 3 * e, 3 * e});  // 0.5·, two sums into dx
    if (autocast) c.backward.insert(c.backward.end(), {f + e, f + e, f + e});  // gradients cast to e
    c.saved = 3 * f + e;
    c.output = f;
    return c;
  }
  if (fn == "gelu_fast") {
    // 0.5·x·(1 + tanh(x·0.7978845608·(1 + 0.044715·x·x))): no op on autocast's lists, all in e.
    c.forward = {2 * e, 3 * e, 2 * e, 2 * e, 3 * e, 2 * e, 2 * e, 2 * e, 3 * e};
    c.backward = {3 * e, 3 * e, 3 * e,         // the product's two terms, tanh backward
                  3 * e, 3 * e, 2 * e,         // x·0.79788 times (1 + ...): two terms, then the 0.79788·
                  3 * e, 3 * e, 2 * e, 2 * e,  // 0.044715·x times x: two terms, 0.044715·, 0.5·
                  3 * e, 3 * e, 3 * e};        // four gradients of x summed
    // Saved: x, 0.044715·x, x·0.79788, 1 + 0.044715·x², tanh, 0.5·x and 1 + tanh.
    c.saved = 7 * e;
    c.output = e;
    return c;
  }
  if (fn == "quick_gelu") {
    // x·sigmoid(1.702·x): the scaling, sigmoid (saves its output), the product (saves x and the sigmoid).
    c.forward = {2 * e, 2 * e, 3 * e};
    c.backward = {3 * e, 3 * e, 3 * e, 2 * e, 3 * e};  // two product terms, sigmoid backward, 1.702·, sum
    c.saved = 2 * e;
    c.output = e;
    return c;
  }
  return std::nullopt;
}

/// Appends kernels for one layer; `e` is bytes per activation element.
class KernelBuilder {
 public:
  KernelBuilder(StepWork& work, int layer, double e) : work_(work), layer_(layer), e_(e) {}

  void gemm(Phase phase, double m, double n, double k, double batch = 1, KernelClass cls = KernelClass::Gemm) {
    Kernel kn = gemm_kernel(phase, m, n, k, batch, e_);
    if (cls != KernelClass::Gemm) kn.cls = cls;
    kn.misaligned = misaligned_;
    push(kn);
  }

  /// Marks the GEMMs added from now on as misaligned (or not): see Kernel::misaligned.
  void set_misaligned(bool misaligned) { misaligned_ = misaligned; }

  void add(const Kernel& kn) { push(kn); }

  void stream(KernelClass cls, Phase phase, double elements, double passes, double flops_per_element,
              double element_bytes = 0) {
    if (elements <= 0) return;
    push(stream_kernel(cls, phase, elements, passes, flops_per_element, element_bytes > 0 ? element_bytes : e_));
  }

  /// One elementwise kernel per entry of `bytes_per_element`, each over `elements`.
  void chain(Phase phase, double elements, const std::vector<double>& bytes_per_element) {
    for (double bytes : bytes_per_element) stream(KernelClass::Elementwise, phase, elements, bytes / e_, 1);
  }

  void recurrent(Phase phase, double steps, double m, double n, double k, double gate_elements) {
    push(recurrent_kernel(phase, steps, m, n, k, gate_elements, e_));
  }

 private:
  void push(Kernel kn) {
    kn.layer = layer_;
    LayerWork& lw = work_.layers[static_cast<std::size_t>(layer_)];
    auto p = static_cast<std::size_t>(kn.phase);
    lw.flops[p] += kn.flops;
    lw.bytes[p] += kn.bytes;
    lw.kernels += 1;
    work_.flops[p] += kn.flops;
    work_.kernels.push_back(kn);
  }

  StepWork& work_;
  int layer_;
  double e_;
  bool misaligned_ = false;
};

/// Rows of the GEMM a layer applies to its last dimension: batch x all leading dimensions.
double rows(const Shape& in, double batch) {
  double r = batch;
  for (std::size_t i = 0; i + 1 < in.size(); ++i) r *= d(in[i]);
  return r;
}

/// FlashAttention's one kernel per pass (Dao 2023) over `bh` query heads of s positions, `bkv` key/value
/// heads of t positions, width hd: forward QK^T and PV (4 s t hd FLOPs per query head), backward
/// recomputes the scores, then dV, dP, dQ, dK (10 s t hd); a causal mask skips the blocks above the
/// diagonal (half, for s = t). Memory traffic is the inputs and outputs only: forward reads Q, K, V and
/// writes O and each row's log-sum-exp (FP32); backward reads Q, K, V, O, dO and the row statistics and
/// writes dQ, dK, dV. Timed as a batched GEMM of the QK^T shape.
void flash_attention(KernelBuilder& kb, Phase phase, double s, double t, double hd, double bh, double bkv, bool causal,
                     double e) {
  const double masked = causal && s == t ? 0.5 : 1.0;
  Kernel k = gemm_kernel(phase, s, t, hd, bh, e);
  k.cls = KernelClass::BatchedGemm;
  const bool forward = phase == Phase::Forward;
  k.flops = (forward ? 4.0 : 10.0) * bh * s * t * hd * masked;
  k.bytes =
      forward ? e * hd * (2 * bh * s + 2 * bkv * t) + 4 * bh * s : e * hd * (4 * bh * s + 4 * bkv * t) + 8 * bh * s;
  kb.add(k);
}

void add_layer_kernels(const Layer& layer, double b, Precision precision, KernelBuilder& kb, LayerWork& lw) {
  const Shape& in = layer.input_shapes.front();
  const LayerAttrs& a = layer.attrs;
  const double e = activation_bytes(precision);
  const double in_elems = b * d(elements(in));
  const double out_elems = b * d(elements(layer.output_shape));
  const bool dx = layer.needs_input_grad;
  const double act = activation_flops(a.activation);
  // Megatron-LM fuses its GELU (the tanh form) into one kernel; PyTorch runs Hugging Face's chains.
  const std::optional<OpChain> composed = a.megatron ? std::nullopt : composed_activation(a.activation, e);
  switch (layer.type) {
    case LayerType::Dense: {
      // Mixture of experts: every token runs through top_k of the experts (a grouped GEMM, modelled as a
      // batched GEMM over experts, so all experts' weights are read); gated (GLU) layers have two matrices.
      const double m = rows(in, b), n = d(a.units), k = d(in.back());
      const double experts = d(a.experts), routed = m * d(a.top_k), mats = a.gated ? 2 : 1;
      const double hidden = routed * n;  // == out_elems for an ordinary dense layer
      const bool moe = a.experts > 1;
      // The rows cuBLAS reads and writes in all three GEMMs are d_in and d_out long (PyTorch's row-major
      // weight and activations), never the token count. Grouped expert GEMMs were not measured: unmarked.
      kb.set_misaligned(!moe && (std::fmod(k * e, 16.0) != 0 || std::fmod(n * e, 16.0) != 0));
      if (moe) kb.stream(KernelClass::Elementwise, Phase::Forward, routed * k, 2, 0);  // dispatch tokens
      kb.gemm(Phase::Forward, routed / experts, mats * n, k, experts);
      if (a.gated && composed) {
        // The chain on the gate, then its product with up (both saved), in the chain's output type;
        // backward, the product's two terms, then the chain.
        const double product = 2 * composed->output + e;
        kb.chain(Phase::Forward, hidden, composed->forward);
        kb.chain(Phase::Forward, hidden, {product});
        kb.chain(Phase::Backward, hidden, {product, product});
        kb.chain(Phase::Backward, hidden, composed->backward);
      } else if (a.gated && a.megatron) {  // one fused kernel each way, saving only its input (gate and up)
        kb.stream(KernelClass::Elementwise, Phase::Forward, hidden, 3, act + 1);
        kb.stream(KernelClass::Elementwise, Phase::Backward, hidden, 5, 2 * act + 2);
      } else if (a.gated) {
        // PyTorch's GLU as Hugging Face writes it, act(gate) * up: the activation, then the product (which
        // saves both factors); backward, the product's two terms, then the activation's.
        kb.stream(KernelClass::Elementwise, Phase::Forward, hidden, 2, act);
        kb.stream(KernelClass::Elementwise, Phase::Forward, hidden, 3, 1);
        kb.stream(KernelClass::Elementwise, Phase::Backward, hidden, 3, 1);
        kb.stream(KernelClass::Elementwise, Phase::Backward, hidden, 3, 1);
        kb.stream(KernelClass::Elementwise, Phase::Backward, hidden, 3, 2 * act);
      } else if (composed) {
        kb.chain(Phase::Forward, hidden, composed->forward);
        kb.chain(Phase::Backward, hidden, composed->backward);
      } else {
        if (act > 0) kb.stream(KernelClass::Elementwise, Phase::Forward, hidden, 2, act);
        if (act > 0) kb.stream(KernelClass::Elementwise, Phase::Backward, hidden, 3, 2 * act);
      }
      if (moe) {  // combine: weighted sum of each token's top_k expert outputs, and its gradient
        kb.stream(KernelClass::Elementwise, Phase::Forward, hidden + out_elems, 1, 2 * hidden / (hidden + out_elems));
        kb.stream(KernelClass::Elementwise, Phase::Backward, hidden + out_elems, 2, 2 * hidden / (hidden + out_elems));
      }
      if (dx) kb.gemm(Phase::Backward, routed / experts, k, mats * n, experts);
      if (dx && moe) kb.stream(KernelClass::Elementwise, Phase::Backward, routed * k, 2, 1);  // scatter back
      // Weight gradient; tied layers accumulate into the embedding's.
      kb.gemm(Phase::Backward, k, mats * n, routed / experts, experts);
      if (a.bias) kb.stream(KernelClass::Elementwise, Phase::Backward, hidden * mats, 1, 1);
      // Per element of hidden: what the activation saves, and for a gated layer the product's two factors,
      // up and the activation's output (in the chain's type for a chain); Megatron's fused GLU keeps only
      // its input, gate and up.
      const double act_saved = composed ? composed->saved : act > 0 ? e : 0;
      const double gate_saved = !a.gated ? 0 : a.megatron ? e : e + (composed ? composed->output : e);
      lw.saved_activation_bytes = e * routed * k + hidden * (act_saved + gate_saved);
      kb.set_misaligned(false);
      break;
    }
    case LayerType::Conv2d: {
      ConvShape shape{b,        d(in[0]),   d(a.filters),        d(a.kernel_h),       d(a.kernel_w), d(in[1]),
                      d(in[2]), d(layer.output_shape[1]), d(layer.output_shape[2]), d(a.stride_h), d(a.groups)};
      kb.add(conv_pass_kernel(ConvPass::Forward, shape, e));
      if (composed) {
        kb.chain(Phase::Forward, out_elems, composed->forward);
        kb.chain(Phase::Backward, out_elems, composed->backward);
      } else if (act > 0) {
        kb.stream(KernelClass::Elementwise, Phase::Forward, out_elems, 2, act);
        kb.stream(KernelClass::Elementwise, Phase::Backward, out_elems, 3, 2 * act);
      }
      if (dx) kb.add(conv_pass_kernel(ConvPass::Data, shape, e));
      kb.add(conv_pass_kernel(ConvPass::Filter, shape, e));
      for (const Kernel& k : layout_transposes(layer, in_elems, out_elems, e)) kb.add(k);
      lw.saved_activation_bytes = e * in_elems + out_elems * (composed ? composed->saved : act > 0 ? e : 0);
      break;
    }
    case LayerType::MaxPool2d:
    case LayerType::AvgPool2d:
    case LayerType::GlobalAvgPool:
    case LayerType::GlobalMaxPool: {
      double window = layer.type == LayerType::MaxPool2d || layer.type == LayerType::AvgPool2d
                          ? d(a.kernel_h * a.kernel_w)
                          : d(elements(in) / std::max<std::int64_t>(in[0], 1));
      // Reads every input once and writes every output once; one comparison or addition per window element.
      kb.stream(KernelClass::Elementwise, Phase::Forward, in_elems + out_elems, 1,
                out_elems * window / (in_elems + out_elems));
      if (dx) kb.stream(KernelClass::Elementwise, Phase::Backward, in_elems + out_elems, 1, 0);
      bool keeps_input = layer.type == LayerType::MaxPool2d || layer.type == LayerType::GlobalMaxPool;
      lw.saved_activation_bytes = keeps_input ? e * in_elems : 0;
      break;
    }
    case LayerType::BatchNorm:
      kb.stream(KernelClass::Normalization, Phase::Forward, in_elems, 3, 8);
      kb.stream(KernelClass::Normalization, Phase::Backward, in_elems, 4, 12);
      lw.saved_activation_bytes = e * in_elems;
      break;
    case LayerType::LayerNorm:
    case LayerType::RmsNorm:
      kb.stream(KernelClass::Normalization, Phase::Forward, in_elems, 2, 8);
      kb.stream(KernelClass::Normalization, Phase::Backward, in_elems, 3, 12);
      lw.saved_activation_bytes = e * in_elems + 8 * rows(in, b);
      break;
    case LayerType::Activation:
      if (composed) {
        kb.chain(Phase::Forward, in_elems, composed->forward);
        if (dx) kb.chain(Phase::Backward, in_elems, composed->backward);
        lw.saved_activation_bytes = composed->saved * in_elems;
        break;
      }
      kb.stream(KernelClass::Elementwise, Phase::Forward, in_elems, 2, act);
      if (dx) kb.stream(KernelClass::Elementwise, Phase::Backward, in_elems, 3, 2 * act);
      lw.saved_activation_bytes = e * in_elems;
      break;
    case LayerType::Dropout:
      if (a.rate <= 0) break;
      // The mask is one byte per element.
      kb.stream(KernelClass::Elementwise, Phase::Forward, in_elems, 2 + 1 / e, 2);
      if (dx) kb.stream(KernelClass::Elementwise, Phase::Backward, in_elems, 2 + 1 / e, 1);
      lw.saved_activation_bytes = in_elems;
      break;
    case LayerType::Softmax:
      kb.stream(KernelClass::Softmax, Phase::Forward, in_elems, 2, 5);
      if (dx) kb.stream(KernelClass::Softmax, Phase::Backward, in_elems, 3, 4);
      lw.saved_activation_bytes = e * out_elems;
      break;
    case LayerType::Embedding: {
      double tokens = b * d(in[0]);
      double table = d(a.vocab_size * a.dim);
      kb.stream(KernelClass::Embedding, Phase::Forward, out_elems, 2, 0);
      // Dense gradients (PyTorch's default): zero the whole table gradient (FP32), then scatter-add.
      kb.stream(KernelClass::Elementwise, Phase::Backward, table, 1, 0, 4.0);
      kb.stream(KernelClass::Embedding, Phase::Backward, out_elems, 2, 1);
      lw.saved_activation_bytes = 8 * tokens;
      break;
    }
    case LayerType::Rnn:
    case LayerType::Lstm:
    case LayerType::Gru: {
      double gates = layer.type == LayerType::Lstm ? 4 : layer.type == LayerType::Gru ? 3 : 1;
      double dirs = a.bidirectional ? 2 : 1;
      double s = d(in[0]), h = d(a.hidden_size);
      for (std::int64_t l = 0; l < a.num_layers; ++l) {
        double din = l == 0 ? d(in[1]) : h * dirs;
        for (int dir = 0; dir < static_cast<int>(dirs); ++dir) {
          // cuDNN: one large GEMM for the input projection of all steps, then a dependent loop over steps.
          kb.gemm(Phase::Forward, b * s, gates * h, din, 1, KernelClass::Gemm);
          kb.recurrent(Phase::Forward, s, b, gates * h, h, b * gates * h);
          kb.recurrent(Phase::Backward, s, b, h, gates * h, b * gates * h);       // hidden-state gradient
          kb.gemm(Phase::Backward, gates * h, h, b * s, 1, KernelClass::Gemm);    // recurrent weight gradient
          if (dx || l > 0) kb.gemm(Phase::Backward, b * s, din, gates * h, 1, KernelClass::Gemm);
          kb.gemm(Phase::Backward, din, gates * h, b * s, 1, KernelClass::Gemm);  // input weight gradient
        }
        lw.saved_activation_bytes += e * b * s * dirs * h * (gates + 2);
      }
      break;
    }
    case LayerType::Attention: {
      // Cross-attention reads keys and values from a second (memory) input of t positions; self-attention t = s,
      // plus memory_len cached positions (Transformer-XL), which it projects with the segment and never
      // differentiates into.
      const bool cross = layer.input_shapes.size() > 1;
      double s = d(in[0]), emb = d(in[1]), heads = d(a.num_heads), hd = d(a.head_dim);
      double t = cross ? d(layer.input_shapes[1][0]) : s + d(a.memory_len);
      double q = heads * hd, kv = d(a.num_kv_heads) * hd;
      double m = b * s, mk = b * t, bh = b * heads;
      double probs = bh * s * t;
      if (cross) {
        kb.gemm(Phase::Forward, m, q, emb);                      // Q projection
        kb.gemm(Phase::Forward, mk, 2 * kv, emb);                // K, V projections of the memory
      } else {
        // Q, K, V projections; Transformer-XL projects the cached positions' queries too and drops them.
        kb.gemm(Phase::Forward, mk, q + 2 * kv, emb);
      }
      if (a.relative) {  // sinusoidal table, its r_net projection (batch-independent) and the position scores
        kb.stream(KernelClass::Elementwise, Phase::Forward, t * emb, 1, 2);
        kb.gemm(Phase::Forward, t, q, emb);
        kb.gemm(Phase::Forward, s, t, hd, bh);                   // (Q + r_r_bias) R^T
        kb.stream(KernelClass::Elementwise, Phase::Forward, probs, 2, 0);  // relative shift (pad, copy)
        kb.stream(KernelClass::Elementwise, Phase::Forward, probs, 3, 2);  // (AC + BD) * scale
      }
      // Under autocast an eager softmax writes FP32 probabilities, cast to e for PV; backward casts the
      // gradient up, and the softmax backward reads it and the FP32 output.
      const bool fp32_probs = fp32_probabilities(a, e);
      if (a.fused) {
        flash_attention(kb, Phase::Forward, s, t, hd, bh, b * d(a.num_kv_heads), a.causal, e);
      } else {
        kb.gemm(Phase::Forward, s, t, hd, bh);  // scores Q K^T
        // Scale, mask and softmax.
        kb.stream(KernelClass::Softmax, Phase::Forward, probs, fp32_probs ? (e + 4) / e : 2, 6);
        if (fp32_probs) kb.stream(KernelClass::Elementwise, Phase::Forward, probs, (4 + e) / e, 0);
        if (a.rate > 0) kb.stream(KernelClass::Elementwise, Phase::Forward, probs, 2 + 1 / e, 2);  // dropout + mask
        kb.gemm(Phase::Forward, s, hd, t, bh);                                                     // P V
      }
      kb.gemm(Phase::Forward, m, emb, q);   // output projection
      kb.gemm(Phase::Backward, m, q, emb);  // output projection: input gradient
      kb.gemm(Phase::Backward, q, emb, m);  // output projection: weight gradient
      if (a.fused) {
        flash_attention(kb, Phase::Backward, s, t, hd, bh, b * d(a.num_kv_heads), a.causal, e);
      } else {
        kb.gemm(Phase::Backward, s, t, hd, bh);  // dP = dO V^T
        kb.gemm(Phase::Backward, t, hd, s, bh);  // dV = P^T dO
        if (a.rate > 0) kb.stream(KernelClass::Elementwise, Phase::Backward, probs, 2 + 1 / e, 1);
        if (fp32_probs) kb.stream(KernelClass::Elementwise, Phase::Backward, probs, (e + 4) / e, 0);
        kb.stream(KernelClass::Softmax, Phase::Backward, probs, fp32_probs ? (8 + e) / e : 3, 4);
        kb.gemm(Phase::Backward, s, hd, t, bh);  // dQ = dS K
        kb.gemm(Phase::Backward, t, hd, s, bh);  // dK = dS^T Q
      }
      if (a.relative) {
        kb.stream(KernelClass::Elementwise, Phase::Backward, probs, 2, 0);  // relative shift back
        kb.gemm(Phase::Backward, s, hd, t, bh);                             // dQ += dBD R
        kb.gemm(Phase::Backward, t, hd, s, bh);                             // dR = dBD^T Q (summed over the batch)
        kb.gemm(Phase::Backward, emb, q, t);                                // r_net: weight gradient
      }
      if (cross) {
        if (dx) kb.gemm(Phase::Backward, m, emb, q);  // Q projection: input gradient
        kb.gemm(Phase::Backward, emb, q, m);          // Q projection: weight gradient
        kb.gemm(Phase::Backward, mk, emb, 2 * kv);    // K, V projections: memory gradient
        kb.gemm(Phase::Backward, emb, 2 * kv, mk);    // K, V projections: weight gradient
      } else {
        // Autograd differentiates the whole projected block (segment and cache) before dropping the cache's part.
        if (dx) kb.gemm(Phase::Backward, mk, emb, q + 2 * kv);  // projections: input gradient
        kb.gemm(Phase::Backward, emb, q + 2 * kv, mk);          // projections: weight gradient
      }
      // The probabilities (attention_score_bytes); Transformer-XL also keeps its position scores. A fused
      // kernel keeps only each row's log-sum-exp (FP32) for its backward.
      const double scores = attention_score_bytes(a, probs, e) + (a.relative && !a.fused ? e * probs : 0);
      lw.saved_activation_bytes =
          e * (m * emb + (cross || a.memory_len > 0 ? mk * emb : 0) + m * q + mk * 2 * kv + m * q) + scores +
          (a.fused ? 4 * bh * s : 0);
      break;
    }
    case LayerType::AdaptiveSoftmax: {
      // Every token scores the head (the shortlist plus one logit per tail cluster); a tail cluster's words are
      // scored only for the tokens whose target lies in it (gathered rows), so the work follows the tail shares.
      const double rows_n = rows(in, b), dim = d(in.back());
      const std::vector<double> shares = adaptive_softmax_tail_shares(a);
      const double head = d(a.cutoffs.front()) + d(static_cast<std::int64_t>(a.cutoffs.size()));
      const double slices = d(static_cast<std::int64_t>(a.cutoffs.size())) + 1;
      double saved = rows_n * dim + rows_n * head;
      kb.gemm(Phase::Forward, rows_n, head, dim);
      kb.stream(KernelClass::Softmax, Phase::Forward, rows_n * head, 2, 6);
      kb.stream(KernelClass::Softmax, Phase::Backward, rows_n * head, 2, 2);
      if (dx) kb.gemm(Phase::Backward, rows_n, dim, head);
      kb.gemm(Phase::Backward, dim, head, rows_n);
      for (std::size_t i = 0; i < a.cutoffs.size(); ++i) {
        const double lo = d(a.cutoffs[i]), hi = i + 1 < a.cutoffs.size() ? d(a.cutoffs[i + 1]) : d(a.units);
        const double tokens = rows_n * shares[i], size = hi - lo;
        if (tokens <= 0) continue;
        kb.stream(KernelClass::Elementwise, Phase::Forward, tokens * dim, 2, 0);  // index_select of the rows
        kb.gemm(Phase::Forward, tokens, size, dim);
        kb.stream(KernelClass::Softmax, Phase::Forward, tokens * size, 2, 6);
        kb.stream(KernelClass::Softmax, Phase::Backward, tokens * size, 2, 2);
        if (dx) kb.gemm(Phase::Backward, tokens, dim, size);
        if (dx) kb.stream(KernelClass::Elementwise, Phase::Backward, tokens * dim, 2, 1);  // scatter back
        kb.gemm(Phase::Backward, dim, size, tokens);
        saved += tokens * (dim + size);
      }
      // The clusters slice one weight matrix; each slice's backward writes a full-size zero-padded gradient
      // that autograd accumulates (PyTorch's slice_backward).
      kb.stream(KernelClass::Elementwise, Phase::Backward, d(a.units) * dim * slices, 3, 1);
      if (a.bias) kb.stream(KernelClass::Elementwise, Phase::Backward, rows_n * head, 1, 1);
      lw.saved_activation_bytes = e * saved;
      break;
    }
    case LayerType::Add: {
      double inputs = d(static_cast<std::int64_t>(layer.inputs.size()));
      kb.stream(KernelClass::Elementwise, Phase::Forward, out_elems, inputs + 1, inputs - 1);
      // Gradients of the branches meet where they forked and are summed there.
      if (dx) kb.stream(KernelClass::Elementwise, Phase::Backward, out_elems, 3, 1);
      break;
    }
    case LayerType::Concat:
      kb.stream(KernelClass::Elementwise, Phase::Forward, out_elems, 2, 0);
      break;
    case LayerType::Multiply: {
      // Each input's gradient is the output gradient times the other inputs, which forward saved.
      double inputs = d(static_cast<std::int64_t>(layer.inputs.size()));
      kb.stream(KernelClass::Elementwise, Phase::Forward, out_elems, inputs + 1, inputs - 1);
      kb.stream(KernelClass::Elementwise, Phase::Backward, out_elems, 2 * inputs + 1, inputs);
      lw.saved_activation_bytes = e * out_elems * inputs;
      break;
    }
    case LayerType::Parameter:
      break;  // the weight itself is the output: no kernel (its update is the optimizer's)
    case LayerType::CrossEntropy:
      // The loss runs in FP32 whatever the training precision (autocast's FP32 list; Hugging Face upcasts
      // the logits first), as PyTorch's unfused log_softmax + nll_loss: 16-bit logits are cast up before it
      // and their gradient cast back after; the backward fills the gradient of the log-probabilities with
      // zeros before scattering into it, and the log-softmax backward reads that gradient and its output.
      if (e < 4) kb.stream(KernelClass::Elementwise, Phase::Forward, in_elems, 1, 0, e + 4);
      kb.stream(KernelClass::Softmax, Phase::Forward, in_elems, 2, 6, 4);
      kb.stream(KernelClass::Elementwise, Phase::Backward, in_elems, 1, 0, 4);
      kb.stream(KernelClass::Softmax, Phase::Backward, in_elems, 3, 2, 4);
      if (e < 4) kb.stream(KernelClass::Elementwise, Phase::Backward, in_elems, 1, 0, 4 + e);
      // Its log-probabilities are saved, and the first backward kernels, which run while every activation
      // is still held (a step's memory peak), add the FP32 gradients of the log-probabilities and of the
      // logits: 12 bytes per logit (docs/PREDICTION.md, Memory).
      lw.saved_activation_bytes = 12.0 * in_elems;
      break;
    case LayerType::Flatten:
    case LayerType::Reshape:
    case LayerType::Identity:
      break;  // views: no kernel
  }
}

}  // namespace

std::vector<double> adaptive_softmax_tail_shares(const LayerAttrs& a) {
  if (!a.tail_shares.empty()) return a.tail_shares;
  // Zipf's law with exponent 1: the share of tokens among ranks [lo, hi) is (H(hi) - H(lo)) / H(V).
  auto harmonic = [](double n) { return std::log(n) + 0.5772156649 + 1 / (2 * n); };
  std::vector<double> shares;
  const double total = harmonic(d(a.units));
  for (std::size_t i = 0; i < a.cutoffs.size(); ++i) {
    double lo = d(a.cutoffs[i]), hi = i + 1 < a.cutoffs.size() ? d(a.cutoffs[i + 1]) : d(a.units);
    shares.push_back((harmonic(hi) - harmonic(lo)) / total);
  }
  return shares;
}

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

bool fp32_probabilities(const LayerAttrs& a, double e) { return !a.fused && !a.megatron && e < 4; }

double attention_score_bytes(const LayerAttrs& a, double probs, double e) {
  if (a.fused) return 0;
  // Korthikanti et al. (16-bit probabilities): the softmax output, and with dropout its mask and output.
  // Autocast's FP32 softmax: its output (saved by its backward), then the cast for PV, or the dropout's.
  const double dropout = a.rate > 0 ? probs * (1 + e) : 0;
  if (fp32_probabilities(a, e)) return 4 * probs + (a.rate > 0 ? dropout : e * probs);
  return e * probs + dropout;
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

double prenet_co(const Layer& layer, std::int64_t batch) {
  const Shape& in = layer.input_shapes.front();
  const LayerAttrs& a = layer.attrs;
  double b = d(batch);
  switch (layer.type) {
    case LayerType::Dense: return 2 * rows(in, b) * d(in.back()) * d(a.units);  // the reference code's 2*b*d_in*d_out
    case LayerType::Conv2d:
      return b * d(layer.output_shape[1] * layer.output_shape[2]) * d(a.kernel_h * a.kernel_w) * d(in[0] / a.groups) *
             d(a.filters);
    case LayerType::Rnn:
    case LayerType::Lstm:
    case LayerType::Gru: {
      double g = layer.type == LayerType::Lstm ? 4 : layer.type == LayerType::Gru ? 3 : 2;
      double dirs = a.bidirectional ? 2 : 1, h = d(a.hidden_size), s = d(in[0]);
      double co = 0;
      for (std::int64_t l = 0; l < a.num_layers; ++l) co += g * b * s * h * (h + (l == 0 ? d(in[1]) : h * dirs));
      return co * dirs;
    }
    case LayerType::Attention: {  // h * s * t * d per sample (t = s for self-attention without a cache)
      double t = layer.input_shapes.size() > 1 ? d(layer.input_shapes[1][0]) : d(in[0]) + d(a.memory_len);
      return b * d(a.num_heads) * d(in[0]) * t * d(in[1]);
    }
    case LayerType::AdaptiveSoftmax: {  // the multiply-adds of the head and of the tails' gathered rows
      std::vector<double> shares = adaptive_softmax_tail_shares(a);
      double logits = d(a.cutoffs.front()) + d(static_cast<std::int64_t>(a.cutoffs.size()));
      for (std::size_t i = 0; i < a.cutoffs.size(); ++i) {
        double hi = i + 1 < a.cutoffs.size() ? d(a.cutoffs[i + 1]) : d(a.units);
        logits += shares[i] * (hi - d(a.cutoffs[i]));
      }
      return rows(in, b) * d(in.back()) * logits;
    }
    case LayerType::Embedding: return b * d(in[0]) * d(a.dim);
    default: return b * d(elements(layer.output_shape));  // not defined by PreNeT: one operation per output element
  }
}

double prenet_cm(const Layer& layer, std::int64_t batch, bool training) {
  double b = d(batch);
  double total = d(layer.parameters) + b * d(elements(layer.input_shapes.front())) + b * d(elements(layer.output_shape));
  return training ? 2 * total : total;
}

/// Whether the layer keeps its whole input for backward (its weight gradient reads it).
bool saves_input(const Layer& layer) { return layer.type == LayerType::Dense || layer.type == LayerType::Conv2d; }

/// Per layer, whether a dense or convolution layer consumes its output (and so saves that tensor).
std::vector<bool> output_saved_by_consumer(const Network& net) {
  std::vector<bool> held(net.layers.size(), false);
  for (const Layer& layer : net.layers) {
    if (!saves_input(layer)) continue;
    for (int producer : layer.inputs) {
      const auto p = static_cast<std::size_t>(producer);
      if (producer >= 0 && p < held.size()) held[p] = true;
    }
  }
  return held;
}

/// Whether `layer` keeps its output only for a ReLU's backward, which reads nothing else: a consumer that
/// saves the same tensor makes that copy free (PyTorch stores a tensor saved twice once, in place or not).
/// Other activations' backward reads their input, a tensor apart from what the consumer saves.
bool relu_output_only(const Layer& layer) {
  if (layer.attrs.activation != "relu") return false;
  return layer.type == LayerType::Activation ||
         (saves_input(layer) && !layer.attrs.gated && layer.attrs.experts <= 1);
}

StepWork step_work(const Network& net, std::int64_t batch, Precision precision, Optimizer optimizer,
                   OptimizerImpl impl) {
  StepWork work;
  work.layers.resize(net.layers.size());
  const double b = d(batch);
  const double e = activation_bytes(precision);
  const std::vector<bool> held = output_saved_by_consumer(net);
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const Layer& layer = net.layers[i];
    LayerWork& lw = work.layers[i];
    KernelBuilder kb(work, static_cast<int>(i), e);
    add_layer_kernels(layer, b, precision, kb, lw);
    if (held[i] && relu_output_only(layer)) lw.saved_activation_bytes -= e * b * d(elements(layer.output_shape));
    lw.co = prenet_co(layer, batch);
    lw.cm = prenet_cm(layer, batch, optimizer != Optimizer::None);
    if (optimizer != Optimizer::None && layer.parameters > 0) {
      double p = d(layer.parameters);
      // Mixed precision also reads the 16-bit gradient and writes the 16-bit weight copy.
      double extra = is_mixed(precision) ? 4.0 : 0.0;
      kb.stream(KernelClass::Optimizer, Phase::Optimizer, p, 1, optimizer_flops_per_parameter(optimizer),
                optimizer_bytes_per_parameter(optimizer, impl) + extra);
    }
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
