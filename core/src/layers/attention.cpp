// attention: multi-head (or grouped-query) attention over [seq_len, embed_dim], self or cross (a second,
// memory input), with Transformer-XL's cached positions and relative scores, sliding-window or chunked
// local masks, QK-norm, attention sinks and logit soft-capping; eager or one fused (FlashAttention) kernel
// per pass. Heads shard over the tensor group. The attention core (scores to P V) is shared with mla.
#include <algorithm>

#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

/// The sizes of one attention layer's step: s queries, t keys (memory or cache included), heads, widths.
struct Dims {
  bool cross;
  double s, emb, heads, hd, t, q, kv, m, mk, bh, probs;
  double gate;  // the output gate's width (the queries', or 0 without one)
};

Dims dims_of(const LayerStep& st) {
  const LayerAttrs& a = st.a;
  Dims x{};
  // Cross-attention reads keys and values from a second (memory) input of t positions; self-attention t = s,
  // plus memory_len cached positions (Transformer-XL), which it projects with the segment and never
  // differentiates into.
  x.cross = st.layer.input_shapes.size() > 1;
  x.s = d(st.in[0]), x.emb = d(st.in[1]), x.heads = d(a.num_heads), x.hd = d(a.head_dim);
  x.t = x.cross ? d(st.layer.input_shapes[1][0]) : x.s + d(a.memory_len);
  x.q = x.heads * x.hd, x.kv = d(a.num_kv_heads) * x.hd;
  x.m = st.b * x.s, x.mk = st.b * x.t, x.bh = st.b * x.heads;
  x.probs = x.bh * x.s * x.t;
  x.gate = a.output_gate ? x.q : 0;
  return x;
}

/// The core's sizes for an attention layer: keys and values of one width, head_dim. Under context parallelism
/// the queries are this GPU's s positions and the keys those of every block of the ring (context x s).
AttentionCore core_of(const LayerStep& st, const Dims& x) {
  const double t = x.t * d(st.a.context);
  return {st.b, x.heads, d(st.a.num_kv_heads), x.s, t, x.hd, x.hd, visible_share(st.a, x.s, t)};
}

/// The QK-norm's kernels over the projected queries and keys (Qwen3RMSNorm, OLMo 2's q_norm/k_norm,
/// Llama 4's L2Norm as Hugging Face writes them, each timed as one memory-bound normalisation kernel
/// per tensor like a rmsnorm layer): forward reads the tensor and writes it, backward reads the input and
/// the gradient and writes the gradient (and the weight's gradient, a reduction of the same pass).
void qk_norm_kernels(const LayerStep& st, const Dims& x, KernelBuilder& kb, Phase phase) {
  if (st.a.qk_norm == QkNorm::None) return;
  const bool forward = phase == Phase::Forward;
  for (double elems : {x.m * x.q, x.mk * x.kv}) {
    kb.stream(KernelClass::Normalization, phase, elems, forward ? 2 : 3, forward ? 8 : 12);
  }
}

/// Rotary position embeddings on the projected queries and keys (`rotary_dim` of each head's width): under
/// Megatron's kernels (TransformerEngine's fused RoPE) or torch.compile one kernel per pass reading and writing
/// the rotated parts; under PyTorch's, Hugging Face's apply_rotary_pos_emb op by op, for the queries and for the
/// keys: rotate_half's neg (half the width) and cat, x·cos, rotate_half(x)·sin and their sum, and with a partial
/// rotation the cat with the unrotated rest. Backward: the two products' gradients (cos and sin are all they
/// save: no activation memory), neg's, rotate_half's two slices scattered back into zeros, the slices' and the
/// direct path's sums, and with a partial rotation the join with the rest's gradient.
void rotary_kernels(const LayerStep& st, const Dims& x, KernelBuilder& kb, Phase phase) {
  if (st.a.rotary_dim <= 0) return;
  const double e = st.e, share = d(st.a.rotary_dim) / x.hd;
  const bool forward = phase == Phase::Forward;
  kb.set_part(KernelPart::Rotary);
  if (st.context.fuses_pointwise()) {
    kb.stream(KernelClass::Elementwise, phase, share * (x.m * x.q + x.mk * x.kv), 2, 3);
  } else {
    for (double n : {x.m * x.q, x.mk * x.kv}) {
      if (forward) {
        kb.chain(phase, share * n, {e, 2 * e, 2 * e, 2 * e, 3 * e});
      } else {
        kb.chain(phase, share * n, {2 * e, 2 * e, e, 2 * e, 2 * e, 3 * e, 3 * e});
      }
      if (share < 1) kb.chain(phase, n, {forward ? 2 * e : 3 * e});
    }
  }
  kb.set_part(KernelPart::Other);
}

/// Bytes the QK-norm saves for backward: each norm's input and its per-row FP32 statistics (8 bytes a row,
/// as a rmsnorm layer keeps), rows being heads of a token ("head" forms) or tokens ("full").
double qk_norm_saved_bytes(const LayerStep& st, const Dims& x) {
  if (st.a.qk_norm == QkNorm::None) return 0;
  const double rows = st.a.qk_norm == QkNorm::Full ? x.m + x.mk : x.m * x.heads + x.mk * d(st.a.num_kv_heads);
  return st.e * (x.m * x.q + x.mk * x.kv) + 8 * rows;
}

/// Parameters beside the projections: the QK-norm's weights (shared by the heads for "head", one per
/// channel of the q and k projections for "full") and one sink logit per head.
std::int64_t norm_and_sink_parameters(const LayerAttrs& a) {
  std::int64_t p = a.sinks ? a.num_heads : 0;
  if (a.qk_norm == QkNorm::Head) p += 2 * a.head_dim;
  if (a.qk_norm == QkNorm::Full) p += (a.num_heads + a.num_kv_heads) * a.head_dim;
  return p;
}

/// The layer-list names of QkNorm, in enum order.
const std::vector<std::string>& qk_norm_names() {
  static const std::vector<std::string> names = {"none", "head", "full", "head_weightless"};
  return names;
}

/// The output gate's weights (Qwen3-Next's q_proj twice the queries' width): one more query-wide projection of the
/// input, biased as the queries are.
std::int64_t gate_parameters(const LayerAttrs& a, std::int64_t emb, const std::string& path) {
  if (!a.output_gate) return 0;
  const std::int64_t q = a.num_heads * a.head_dim;
  return params_of({emb, q}, path) + (a.bias ? q : 0);
}

/// The gate on the core's output, o * sigmoid(gate): under fused pointwise work one kernel per pass, else PyTorch's
/// sigmoid and product (backward: the product's two gradients and sigmoid's).
void output_gate_kernels(const LayerStep& st, const Dims& x, KernelBuilder& kb, Phase phase) {
  if (x.gate <= 0) return;
  const double e = st.e, n = x.m * x.q;
  const bool forward = phase == Phase::Forward;
  if (st.context.fuses_pointwise()) {
    kb.stream(KernelClass::Elementwise, phase, n, forward ? 3 : 5, forward ? 5 : 8);
  } else {
    kb.chain(phase, n, forward ? std::vector<double>{2 * e, 3 * e} : std::vector<double>{3 * e, 3 * e, 3 * e});
  }
}

/// What the gate keeps for backward: sigmoid(gate), and the ungated core output for the gate's gradient, except
/// that a fused kernel's kept output already is that when a frozen o_proj needs no input of its own.
double output_gate_saved_bytes(const LayerStep& st, const Dims& x, bool fused) {
  if (x.gate <= 0) return 0;
  return st.e * x.m * x.q * (fused && st.frozen ? 1 : 2);
}

/// The projections' backward: gradients of the input (when needed) and of the weights.
void projections_backward(const LayerStep& st, const Dims& x, KernelBuilder& kb) {
  if (x.cross) {
    if (st.dx) kb.gemm(Phase::Backward, x.m, x.emb, x.q + x.gate);  // Q projection: input gradient
    kb.weight_gradient(x.emb, x.q + x.gate, x.m);                   // Q projection: weight gradient
    kb.gemm(Phase::Backward, x.mk, x.emb, 2 * x.kv);       // K, V projections: memory gradient
    kb.weight_gradient(x.emb, 2 * x.kv, x.mk);             // K, V projections: weight gradient
  } else {
    // Autograd differentiates the whole projected block (segment and cache) before dropping the cache's part.
    if (st.dx) kb.gemm(Phase::Backward, x.mk, x.emb, x.q + x.gate + 2 * x.kv);  // projections: input gradient
    kb.weight_gradient(x.emb, x.q + x.gate + 2 * x.kv, x.mk);                   // projections: weight gradient
  }
}

/// DeBERTa's disentangled attention (`disentangled` terms, c2p and/or p2c, over `position_span` rows).
void parse_disentangled(const Json& spec, const std::string& path, LayerAttrs& a) {
  a.disentangled = get_int(spec, "disentangled", path, 0, 0, 2);
  a.position_span = get_int(spec, "position_span", path, 0, 0, 1 << 20);
  a.position_projections = get_bool(spec, "position_projections", path, false);
  if (a.disentangled > 0 && a.position_span == 0) {
    throw InputError(join(path, "position_span"), "required (the relative table's rows) with disentangled");
  }
  if (a.disentangled == 0 && (a.position_span > 0 || a.position_projections)) {
    throw InputError(join(path, "disentangled"), "must be 1 or 2 with position_span or position_projections");
  }
}

/// DeBERTa's extra scores, per term: the relative table (span rows) projected by the layer's Q or K
/// matrices (batch-independent), its scores against every query (c2p) or key (p2c), gathered by relative
/// position into s x t and added to the content scores.
void disentangled_forward(const LayerStep& st, const Dims& x, KernelBuilder& kb) {
  const double terms = d(st.a.disentangled), span = d(st.a.position_span);
  for (double i = 0; i < terms; ++i) {
    kb.gemm(Phase::Forward, span, x.q, x.emb);                           // position keys / queries
    kb.gemm(Phase::Forward, x.s, span, x.hd, x.bh);                      // Q Kr^T (or K Qr^T)
    kb.stream(KernelClass::Elementwise, Phase::Forward, x.probs, 3, 1);  // gather, scale and add
  }
}

/// The backward of disentangled_forward.
void disentangled_backward(const LayerStep& st, const Dims& x, KernelBuilder& kb) {
  const double terms = d(st.a.disentangled), span = d(st.a.position_span);
  for (double i = 0; i < terms; ++i) {
    kb.stream(KernelClass::Elementwise, Phase::Backward, x.bh * x.s * span, 1, 0);  // zero the gather's gradient
    kb.stream(KernelClass::Elementwise, Phase::Backward, x.probs, 3, 1);            // scatter-add
    kb.gemm(Phase::Backward, x.s, x.hd, span, x.bh);                                // d(Q or K) += dC Kr
    kb.gemm(Phase::Backward, span, x.hd, x.s, x.bh);  // dKr = dC^T Q (summed over the batch)
    kb.weight_gradient(x.emb, x.q, span);             // projection: weight gradient
    kb.gemm(Phase::Backward, span, x.emb, x.q);       // relative table: gradient
  }
}

class Attention : public LayerKind {
 public:
  Attention() : LayerKind(LayerType::Attention, "attention") {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    reject_unknown_keys(spec, path,
                        common_keys({"num_heads",
                                     "num_kv_heads",
                                     "head_dim",
                                     "causal",
                                     "bias",
                                     "out_bias",
                                     "dropout",
                                     "memory_len",
                                     "relative_positions",
                                     "key_bias",
                                     "disentangled",
                                     "position_span",
                                     "position_projections",
                                     "window",
                                     "chunk",
                                     "qk_norm",
                                     "sinks",
                                     "softcap",
                                     "rotary_dim",
                                     "output_gate"}));
    LayerAttrs a;
    a.memory_len = get_int(spec, "memory_len", path, 0, 0, 1 << 20);
    a.relative = get_bool(spec, "relative_positions", path, false);
    a.rate = get_number(spec, "dropout", path, 0.0, 0.0, 0.999999);
    a.num_heads = require_int(spec, "num_heads", path, 1, 1 << 16);
    a.num_kv_heads = get_int(spec, "num_kv_heads", path, a.num_heads, 1, a.num_heads);
    if (a.num_heads % a.num_kv_heads != 0) {
      throw InputError(join(path, "num_kv_heads"), "must divide num_heads (" + std::to_string(a.num_heads) + ")");
    }
    a.head_dim = get_int(spec, "head_dim", path, 0, 1, 1 << 16);
    a.causal = get_bool(spec, "causal", path, false);
    a.bias = get_bool(spec, "bias", path, true);
    a.out_bias = get_bool(spec, "out_bias", path, a.bias);
    a.key_bias = get_bool(spec, "key_bias", path, a.bias);
    parse_disentangled(spec, path, a);
    parse_modern(spec, path, a);
    return a;
  }

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    const Shape& in = layer.input_shapes.front();
    LayerAttrs& a = layer.attrs;
    require_rank(in, 2, path, "attention expects [seq_len, embed_dim]");
    std::int64_t e = in[1];
    if (a.head_dim == 0) {
      if (e % a.num_heads != 0) {
        throw InputError(join(path, "num_heads"),
                         "must divide the embedding width " + std::to_string(e) + " (or give head_dim)");
      }
      a.head_dim = e / a.num_heads;
    }
    if (a.rotary_dim > a.head_dim || a.rotary_dim % 2 != 0) {
      throw InputError(join(path, "rotary_dim"), "must be an even width of at most head_dim (" +
                                                     std::to_string(a.head_dim) + "), got " +
                                                     std::to_string(a.rotary_dim));
    }
    std::int64_t q = a.num_heads * a.head_dim;
    std::int64_t kv = a.num_kv_heads * a.head_dim;
    check_inputs(layer, path);
    layer.parameters = params_of({e + 1, q + 2 * kv}, path) + params_of({q + 1, e}, path);
    if (!a.bias) layer.parameters -= q + 2 * kv;
    if (a.bias && !a.key_bias) layer.parameters -= kv;
    // DeBERTa without share_att_key: pos_key_proj (c2p) and pos_query_proj (p2c), biased.
    if (a.position_projections) layer.parameters += a.disentangled * params_of({e + 1, q}, path);
    if (!a.out_bias) layer.parameters -= e;
    // Transformer-XL's r_net projects the sinusoidal relative positions to the heads' keys (no bias).
    if (a.relative) layer.parameters += params_of({e, q}, path);
    layer.parameters += norm_and_sink_parameters(a) + gate_parameters(a, e, path);
    layer.output_shape = in;
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    const LayerAttrs& a = st.a;
    const double e = st.e;
    const Dims x = dims_of(st);
    const bool fused = fused_attention(st.context.attention);
    if (x.cross) {
      kb.gemm(Phase::Forward, x.m, x.q + x.gate, x.emb);  // Q projection (and the output gate's)
      kb.gemm(Phase::Forward, x.mk, 2 * x.kv, x.emb);     // K, V projections of the memory
    } else {
      // Q, K, V projections; Transformer-XL projects the cached positions' queries too and drops them.
      kb.gemm(Phase::Forward, x.mk, x.q + x.gate + 2 * x.kv, x.emb);
    }
    if (a.relative) {  // sinusoidal table, its r_net projection (batch-independent) and the position scores
      kb.stream(KernelClass::Elementwise, Phase::Forward, x.t * x.emb, 1, 2);
      kb.gemm(Phase::Forward, x.t, x.q, x.emb);
      kb.gemm(Phase::Forward, x.s, x.t, x.hd, x.bh);                       // (Q + r_r_bias) R^T
      kb.stream(KernelClass::Elementwise, Phase::Forward, x.probs, 2, 0);  // relative shift (pad, copy)
      kb.stream(KernelClass::Elementwise, Phase::Forward, x.probs, 3, 2);  // (AC + BD) * scale
    }
    disentangled_forward(st, x, kb);
    qk_norm_kernels(st, x, kb, Phase::Forward);
    rotary_kernels(st, x, kb, Phase::Forward);
    attention_core_forward(st, core_of(st, x), kb);
    output_gate_kernels(st, x, kb, Phase::Forward);
    kb.gemm(Phase::Forward, x.m, x.emb, x.q);   // output projection
    kb.gemm(Phase::Backward, x.m, x.q, x.emb);  // output projection: input gradient
    kb.weight_gradient(x.q, x.emb, x.m);        // output projection: weight gradient
    output_gate_kernels(st, x, kb, Phase::Backward);
    attention_core_backward(st, core_of(st, x), kb);
    if (a.relative) {
      kb.stream(KernelClass::Elementwise, Phase::Backward, x.probs, 2, 0);  // relative shift back
      kb.gemm(Phase::Backward, x.s, x.hd, x.t, x.bh);                       // dQ += dBD R
      kb.gemm(Phase::Backward, x.t, x.hd, x.s, x.bh);                       // dR = dBD^T Q (summed over the batch)
      kb.weight_gradient(x.emb, x.q, x.t);                                  // r_net: weight gradient
    }
    disentangled_backward(st, x, kb);
    rotary_kernels(st, x, kb, Phase::Backward);
    qk_norm_kernels(st, x, kb, Phase::Backward);
    projections_backward(st, x, kb);
    // The probabilities (attention_score_bytes); Transformer-XL also keeps its position scores. A fused
    // kernel keeps only each row's log-sum-exp (FP32) for its backward.
    const double scores = attention_score_bytes(a, x.probs, e, st.context) + (a.relative && !fused ? e * x.probs : 0);
    // The input, and the output projection's input (the fused kernel's own backward reads that output too),
    // are kept for the weight gradients only.
    const double weight_inputs =
        x.m * x.emb + (x.cross || a.memory_len > 0 ? x.mk * x.emb : 0) + (fused ? 0 : x.m * x.q);
    const double core_output = fused ? x.m * x.q : 0;
    lw.saved_activation_bytes = e * ((st.frozen ? 0 : weight_inputs) + core_output + x.m * x.q + x.mk * 2 * x.kv) +
                                scores + (fused ? 4 * x.bh * x.s : 0) +
                                e * d(a.disentangled) * d(a.position_span) * x.q + qk_norm_saved_bytes(st, x) +
                                output_gate_saved_bytes(st, x, fused);
    lw.saved_input_bytes = st.frozen ? 0 : e * x.m * x.emb;
  }

  /// Q, K, V (on the memory for cross-attention) and the output projection.
  std::vector<LinearModule> linear_modules(const Layer& layer) const override {
    const LayerAttrs& a = layer.attrs;
    const double s = d(layer.input_shapes.front()[0]), emb = d(layer.input_shapes.front()[1]);
    const bool cross = layer.input_shapes.size() > 1;
    const double t = cross ? d(layer.input_shapes[1][0]) : s + d(a.memory_len);
    const double q = d(a.num_heads * a.head_dim), kv = d(a.num_kv_heads * a.head_dim);
    const int kv_group = cross ? 2 : 0;
    // Qwen3-Next's q_proj also projects the output gate (twice the queries' width).
    const double gate = a.output_gate ? q : 0;
    return {{"q_proj", emb, q + gate, 1, s, 0},
            {"k_proj", emb, kv, 1, t, kv_group},
            {"v_proj", emb, kv, 1, t, kv_group},
            {"o_proj", q, emb, 1, s, 1}};
  }

  /// h * s * t * d per sample (t = s for self-attention without a cache).
  double prenet_co(const Layer& layer, double b) const override {
    const Shape& in = layer.input_shapes.front();
    double t = layer.input_shapes.size() > 1 ? d(layer.input_shapes[1][0]) : d(in[0]) + d(layer.attrs.memory_len);
    return b * d(layer.attrs.num_heads) * d(in[0]) * t * d(in[1]);
  }

  /// Megatron: heads and the QKV projection column-parallel, the output projection row-parallel.
  void shard(ShardStep& s) const override {
    Layer& L = s.shard.net.layers[s.l];
    LayerAttrs& a = L.attrs;
    const std::int64_t t = s.t;
    const std::int64_t e = L.input_shapes.front().back();
    a.num_heads = split_evenly(a.num_heads, t, L, "attention heads");
    // Fewer key/value heads than GPUs: each GPU keeps one, replicated (Megatron's GQA layout).
    if (a.num_kv_heads % t == 0) {
      a.num_kv_heads /= t;
    } else if (t % a.num_kv_heads == 0) {
      a.num_kv_heads = 1;
    } else {
      throw InputError("parallel.tensor", "tensor degree " + std::to_string(t) + " and the " +
                                              std::to_string(a.num_kv_heads) + " key/value heads of layer \"" +
                                              printable(L.name) + "\" do not divide one another");
    }
    const std::int64_t q = a.num_heads * a.head_dim, kv = a.num_kv_heads * a.head_dim;
    // The QK-norm's "full" weights and the sinks shard with their heads; "head" weights are replicated.
    L.parameters = (e + (a.bias ? 1 : 0)) * (q + 2 * kv) + q * e + (a.out_bias ? e : 0) -
                   (a.bias && !a.key_bias ? kv : 0) + (a.position_projections ? a.disentangled * (e + 1) * q : 0) +
                   norm_and_sink_parameters(a) + gate_parameters(a, e, "parallel.tensor");
    shard_as_mixer(s);
  }

  /// Op-level recomputation: projections and the fused kernel kept, the rest of the core recomputed.
  bool recomputed_by_ops(const Layer&, const Kernel& k, const KernelContext& context) const override {
    return attention_recomputed_by_ops(k, context);
  }
  double ops_kept_bytes(const Layer&, const Kernel& k, double e, const KernelContext& context) const override {
    return attention_ops_kept_bytes(k, e, context);
  }

  /// Selective recomputation (Korthikanti et al.): only attention's core (QK^T, soft-capping, sinks,
  /// softmax, dropout, PV) runs again, not the QK-norm; a fused kernel keeps no scores, and its backward
  /// recomputes them anyway.
  bool recomputed_selectively(const Layer&, const Kernel& k, const KernelContext& context,
                              RecomputeModule module) const override {
    return module == RecomputeModule::CoreAttn && !fused_attention(context.attention) && k.cls != KernelClass::Gemm &&
           k.cls != KernelClass::Normalization && k.part != KernelPart::Rotary;
  }

  /// What scales with s^2: the softmax output, and with dropout its mask and output.
  double selective_dropped_bytes(const Layer& layer, double b, double e, const KernelContext& context,
                                 RecomputeModule module) const override {
    if (module != RecomputeModule::CoreAttn || fused_attention(context.attention)) return 0.0;
    double s = d(layer.input_shapes.front()[0]);
    double t = layer.input_shapes.size() > 1 ? d(layer.input_shapes[1][0]) : s;
    double probs = b * d(layer.attrs.num_heads) * s * t;
    return attention_score_bytes(layer.attrs, probs, e, context);
  }

 private:
  /// The attributes of the 2024-2026 families: sliding window, chunks, QK-norm, sinks, soft-capping.
  static void parse_modern(const Json& spec, const std::string& path, LayerAttrs& a) {
    a.window = get_int(spec, "window", path, 0, 1, Limits::kMaxDim);
    a.chunk = get_int(spec, "chunk", path, 0, 1, Limits::kMaxDim);
    if (a.window > 0 && a.chunk > 0) {
      throw InputError(join(path, "chunk"), "cannot be combined with window (a query sees one or the other)");
    }
    const std::string norm = get_enum(spec, "qk_norm", path, "none", qk_norm_names());
    const auto& names = qk_norm_names();
    a.qk_norm = static_cast<QkNorm>(std::find(names.begin(), names.end(), norm) - names.begin());
    a.sinks = get_bool(spec, "sinks", path, false);
    a.output_gate = get_bool(spec, "output_gate", path, false);
    a.rotary_dim = get_int(spec, "rotary_dim", path, 0, 0, Limits::kMaxDim);
    a.softcap = get_number(spec, "softcap", path, 0.0, 0.0, 1e9);
    if (spec.contains("softcap") && !spec["softcap"].is_null() && !(a.softcap > 0)) {
      throw InputError(join(path, "softcap"), "must be a number > 0 (the cap c of c * tanh(x / c))");
    }
  }

  /// A query stream and optionally a memory stream of the query's width; cache and relative positions
  /// only for self-attention.
  static void check_inputs(const Layer& layer, const std::string& path) {
    const LayerAttrs& a = layer.attrs;
    const std::int64_t e = layer.input_shapes.front()[1];
    if (layer.input_shapes.size() > 2) {
      throw InputError(join(path, "inputs"), "attention takes a query stream and optionally a memory stream");
    }
    if ((a.window > 0 || a.chunk > 0) && (!a.causal || layer.input_shapes.size() == 2 || a.memory_len > 0)) {
      throw InputError(join(path, a.window > 0 ? "window" : "chunk"),
                       "applies to causal self-attention only (\"causal\": true, one input, no memory_len)");
    }
    if (layer.input_shapes.size() == 2 && (a.memory_len > 0 || a.relative)) {
      throw InputError(join(path, a.memory_len > 0 ? "memory_len" : "relative_positions"),
                       "applies to self-attention only (this layer reads a memory stream)");
    }
    if (layer.input_shapes.size() == 2) {  // cross-attention: keys and values come from the memory stream
      const Shape& memory = layer.input_shapes[1];
      if (memory.size() != 2 || memory[1] != e) {
        throw InputError(join(path, "inputs"),
                         "the memory stream must be [seq_len, " + std::to_string(e) + "], got " + to_string(memory));
      }
    }
  }
};

}  // namespace

const LayerKind& attention_kind() {
  static const Attention kind;
  return kind;
}

}  // namespace prenet
