// gated_deltanet: the Gated DeltaNet mixer (Yang, Kautz and Hatamizadeh 2024, "Gated Delta Networks") over
// [seq_len, hidden] as Hugging Face's Qwen3NextGatedDeltaNet and Qwen3_5GatedDeltaNet build and train it on the
// fast path: the input projections, causal_conv1d_fn's depthwise convolution with SiLU over q, k and v, the gates
// g = -exp(A_log) softplus(a + dt_bias) and beta = sigmoid(b), q and k repeated to the value heads, flash-linear-
// attention's chunk_gated_delta_rule (L2-normalised q and k, chunks of 64 positions), FusedRMSNormGated with z, and
// out_proj. Heads split over the tensor group as Megatron-Core's GatedDeltaNet splits them.
#include <cmath>

#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

/// flash-linear-attention's chunk length (fla/ops/gated_delta_rule/chunk.py: BT = 64).
constexpr double kChunk = 64;

/// The sizes of one mixer: hidden D, key heads Hk of width dk, value heads Hv of width dv, K = Hk dk and
/// V = Hv dv, conv channels Cc = 2K + V, conv kernel w.
struct DeltaDims {
  double D, Hk, Hv, dk, dv, K, V, Cc, w;
};

DeltaDims delta_dims(const Layer& layer) {
  const LayerAttrs& a = layer.attrs;
  DeltaDims x{};
  x.D = d(layer.input_shapes.front()[1]);
  x.Hk = d(a.num_kv_heads), x.Hv = d(a.num_heads), x.dk = d(a.head_dim), x.dv = d(a.v_head_dim);
  x.K = x.Hk * x.dk, x.V = x.Hv * x.dv, x.Cc = 2 * x.K + x.V, x.w = d(a.conv_kernel);
  return x;
}

/// The input projections as the model names them, each {role, width}: Qwen3-Next's in_proj_qkvz and in_proj_ba,
/// or Qwen3.5's in_proj_qkv, in_proj_z, in_proj_b and in_proj_a (`split_projections`).
std::vector<std::pair<std::string, double>> in_projections(const LayerAttrs& a, const DeltaDims& x) {
  if (!a.split_projections) return {{"in_proj_qkvz", 2 * x.K + 2 * x.V}, {"in_proj_ba", 2 * x.Hv}};
  return {{"in_proj_qkv", x.Cc}, {"in_proj_z", x.V}, {"in_proj_b", x.Hv}, {"in_proj_a", x.Hv}};
}

/// Every input projection's width summed: 2K + 2V + 2 Hv either way.
double in_width(const DeltaDims& x) { return 2 * x.K + 2 * x.V + 2 * x.Hv; }

/// The mixer's parameters: the input projections (no bias), the depthwise conv1d over Cc channels (no bias),
/// dt_bias and A_log (Hv each), the gated norm's weight (dv, shared by the heads) and out_proj (V x D, no bias).
std::int64_t delta_parameters(const LayerAttrs& a, std::int64_t hidden, const std::string& path) {
  const std::int64_t K = a.num_kv_heads * a.head_dim, V = a.num_heads * a.v_head_dim, C = 2 * K + V;
  return params_of({hidden, 2 * K + 2 * V + 2 * a.num_heads}, path) + C * a.conv_kernel + 2 * a.num_heads +
         a.v_head_dim + params_of({V, hidden}, path);
}

/// One of chunk_gated_delta_rule's kernels over m tokens of b samples of s positions: `flops` and `bytes` per
/// token and value head. Its products are small matrices per chunk and head (C x dk by dk x dv and the like):
/// timed as a batched GEMM of the chunk's shape, one per chunk and head, with the kernel's own FLOPs and bytes.
void chunk_kernel(KernelBuilder& kb, Phase phase, double b, double s, const DeltaDims& x, double e, double flops,
                  double bytes) {
  const double chunks = b * std::ceil(s / kChunk), tokens = b * s;
  Kernel k = gemm_kernel(phase, kChunk, x.dv, x.dk, chunks * x.Hv, e);
  k.cls = KernelClass::BatchedGemm;
  k.flops = tokens * x.Hv * flops;
  k.bytes = tokens * x.Hv * bytes;
  k.heads = x.Hv;
  kb.set_part(KernelPart::DeltaRule);
  kb.add(k);
  kb.set_part(KernelPart::Other);
}

/// chunk_gated_delta_rule's forward (fla/ops/gated_delta_rule/chunk.py), per token and head with C = 64: the
/// chunk's beta-scaled K K^T (2 C dk) and its unit-triangular inverse (2 C^2 / 3), w = A (beta k e^g) and
/// u = A (beta v) (2 C dk + 2 C dv); the pass of states across the chunks (v_new = u - w S and
/// S <- e^g S + k^T v_new: 4 dk dv); the output (q e^g) S + (q k^T, masked) v_new (2 dk dv + 2 C dk + 2 C dv).
/// Bytes: each kernel reads its operands and writes its results once (q, k, v, w, u, v_new and o in e bytes, g
/// and the C x C block in FP32 before its inverse, one dk x dv state per chunk).
void delta_rule_forward(KernelBuilder& kb, double b, double s, const DeltaDims& x, double e) {
  const double C = kChunk, dk = x.dk, dv = x.dv, state = e * dk * dv / C, g = 4;
  chunk_kernel(kb, Phase::Forward, b, s, x, e, 4 * C * dk + 2 * C * dv + 2 * C * C / 3,
               e * (2 * dk + 2 * dv + 1) + g + 8 * C + 2 * e * C);
  chunk_kernel(kb, Phase::Forward, b, s, x, e, 4 * dk * dv, e * (2 * dk + 2 * dv) + g + state);
  chunk_kernel(kb, Phase::Forward, b, s, x, e, 2 * dk * dv + 2 * C * dk + 2 * C * dv,
               e * (2 * dk + 2 * dv) + g + state);
}

/// chunk_gated_delta_rule's backward, per token and head: w, u and the states recomputed (2 C dk + 2 C dv,
/// 4 dk dv); the local value gradient (2 C dk + 2 C dv); the reverse pass of state gradients (6 dk dv); the
/// gradients of q, k, w and g (6 dk dv + 4 C dk + 2 C dv); and back through the triangular inverse to k, v and
/// beta (6 C dk + 4 C dv + 4 C^2 / 3). In all 14 C dk + 10 C dv + 16 dk dv + 4 C^2 / 3, about 2.5 times the forward at
/// widths of 128.
void delta_rule_backward(KernelBuilder& kb, double b, double s, const DeltaDims& x, double e) {
  const double C = kChunk, dk = x.dk, dv = x.dv, state = e * dk * dv / C, g = 4;
  chunk_kernel(kb, Phase::Backward, b, s, x, e, 2 * C * dk + 2 * C * dv, e * (2 * dk + 2 * dv + 1 + C) + g);
  chunk_kernel(kb, Phase::Backward, b, s, x, e, 4 * dk * dv, e * (2 * dk + 2 * dv) + g + state);
  chunk_kernel(kb, Phase::Backward, b, s, x, e, 2 * C * dk + 2 * C * dv, e * (2 * dk + 2 * dv) + g);
  chunk_kernel(kb, Phase::Backward, b, s, x, e, 6 * dk * dv, e * (2 * dk + 4 * dv) + g + state);
  chunk_kernel(kb, Phase::Backward, b, s, x, e, 6 * dk * dv + 4 * C * dk + 2 * C * dv,
               e * (5 * dk + 4 * dv) + 2 * g + 2 * state);
  chunk_kernel(kb, Phase::Backward, b, s, x, e, 6 * C * dk + 4 * C * dv + 4 * C * C / 3,
               e * (4 * dk + 4 * dv + 3 + C) + 2 * g);
}

/// The gates from a and b over m tokens (Hv values each), as PyTorch runs them op by op: a.float() + dt_bias,
/// softplus, times -exp(A_log), and sigmoid(b); one kernel when the request fuses pointwise work. Backward runs
/// the same chain's gradients.
void gate_kernels(const LayerStep& st, KernelBuilder& kb, Phase phase, double m, const DeltaDims& x) {
  const double e = st.e, n = m * x.Hv;
  if (st.context.fuses_pointwise()) {
    kb.stream(KernelClass::Elementwise, phase, n, phase == Phase::Forward ? 3 : 5, 12, 0);
    return;
  }
  kb.chain(
      phase, n,
      phase == Phase::Forward ? std::vector<double>{e + 4, 8, 8, 2 * e} : std::vector<double>{2 * e, 12, 12, 4 + e});
}

/// The forward kernels: projections, convolution, gates, the repeat of q and k to the value heads, the L2 norms,
/// the delta rule, the gated norm and out_proj.
void forward_kernels(const LayerStep& st, KernelBuilder& kb, const DeltaDims& x, double s) {
  const double m = st.b * s, e = st.e;
  for (const auto& proj : in_projections(st.a, x)) kb.gemm(Phase::Forward, m, proj.second, x.D);
  causal_conv1d_kernels(kb, Phase::Forward, m, x.Cc, x.w);
  gate_kernels(st, kb, Phase::Forward, m, x);
  if (x.Hv > x.Hk) kb.stream(KernelClass::Elementwise, Phase::Forward, m * 2 * x.Hv * x.dk, 1 + x.Hk / x.Hv, 0);
  kb.stream(KernelClass::Normalization, Phase::Forward, m * 2 * x.Hv * x.dk, 2, 4);  // l2norm of q and k
  delta_rule_forward(kb, st.b, s, x, e);
  kb.stream(KernelClass::Normalization, Phase::Forward, m * x.V, 3, 8 + activation_flops("silu"));
  kb.gemm(Phase::Forward, m, x.D, x.V);  // out_proj
}

/// The backward kernels, in reverse; causal_conv1d's backward recomputes the convolution's output.
void backward_kernels(const LayerStep& st, KernelBuilder& kb, const DeltaDims& x, double s) {
  const double m = st.b * s, e = st.e;
  kb.gemm(Phase::Backward, m, x.V, x.D);  // out_proj: input gradient
  kb.weight_gradient(x.V, x.D, m);        // out_proj: weight gradient
  kb.stream(KernelClass::Normalization, Phase::Backward, m * x.V, 5, 12 + 2 * activation_flops("silu"));
  delta_rule_backward(kb, st.b, s, x, e);
  kb.stream(KernelClass::Normalization, Phase::Backward, m * 2 * x.Hv * x.dk, 3, 6);  // l2norm of q and k
  if (x.Hv > x.Hk) kb.stream(KernelClass::Elementwise, Phase::Backward, m * 2 * x.Hv * x.dk, 1 + x.Hk / x.Hv, 1);
  gate_kernels(st, kb, Phase::Backward, m, x);
  kb.stream(KernelClass::Elementwise, Phase::Backward, m * x.Cc, 2, 2 * x.w);  // conv output recomputed
  causal_conv1d_kernels(kb, Phase::Backward, m, x.Cc, x.w);
  for (const auto& proj : in_projections(st.a, x)) {
    if (st.dx) kb.gemm(Phase::Backward, m, x.D, proj.second);  // input gradient (summed into one)
    kb.weight_gradient(x.D, proj.second, m);
  }
}

/// Bytes kept for backward over m tokens: the projections' input (for their weight gradients) and outputs (the
/// convolution's input, z, a and b); what chunk_gated_delta_rule saves (q and k normed at the value heads with
/// their FP32 inverse norms, v, g in FP32, beta and the inverted C x C block per chunk and head); the gated norm's
/// input and its FP32 inverse norm per head; out_proj's input.
double saved_bytes(const LayerStep& st, const DeltaDims& x, double m) {
  const double e = st.e, weights = st.frozen ? 0 : e * m * (x.D + x.V);
  const double projections = e * m * (x.Cc + x.V + 2 * x.Hv);
  const double rule = e * m * x.Hv * (2 * x.dk + x.dv + 1 + kChunk) + 4 * m * x.Hv * 3;
  const double norm = e * m * x.V + 4 * m * x.Hv;
  return weights + projections + rule + norm;
}

class GatedDeltaNet : public LayerKind {
 public:
  GatedDeltaNet() : LayerKind(LayerType::GatedDeltaNet, "gated_deltanet") {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    reject_unknown_keys(spec, path,
                        common_keys({"key_heads", "value_heads", "key_head_dim", "value_head_dim", "conv_kernel",
                                     "split_projections"}));
    LayerAttrs a;
    a.num_kv_heads = require_int(spec, "key_heads", path, 1, 1 << 16);
    a.num_heads = require_int(spec, "value_heads", path, 1, 1 << 16);
    a.head_dim = require_int(spec, "key_head_dim", path, 1, 1 << 16);
    a.v_head_dim = require_int(spec, "value_head_dim", path, 1, 1 << 16);
    a.conv_kernel = get_int(spec, "conv_kernel", path, 4, 1, 1 << 10);
    a.split_projections = get_bool(spec, "split_projections", path, false);
    a.causal = true;
    if (a.num_heads % a.num_kv_heads != 0) {
      throw InputError(join(path, "value_heads"), "must be a multiple of key_heads (" + std::to_string(a.num_kv_heads) +
                                                      "): each key head serves value_heads / key_heads value heads");
    }
    return a;
  }

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    require_rank(layer.input_shapes.front(), 2, path, "gated_deltanet expects [seq_len, hidden]");
    layer.parameters = delta_parameters(layer.attrs, layer.input_shapes.front()[1], path);
    layer.output_shape = layer.input_shapes.front();
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    const DeltaDims x = delta_dims(st.layer);
    const double s = d(st.in[0]);
    forward_kernels(st, kb, x, s);
    backward_kernels(st, kb, x, s);
    lw.saved_activation_bytes = saved_bytes(st, x, st.b * s);
  }

  /// The input projections (one input group: they read the same tensor) and out_proj.
  std::vector<LinearModule> linear_modules(const Layer& layer) const override {
    const DeltaDims x = delta_dims(layer);
    const double s = d(layer.input_shapes.front()[0]);
    std::vector<LinearModule> modules;
    for (const auto& proj : in_projections(layer.attrs, x)) modules.push_back({proj.first, x.D, proj.second, 1, s, 0});
    modules.push_back({"out_proj", x.V, x.D, 1, s, 1});
    return modules;
  }

  /// As for dense layers, 2 x d_in x d_out per token summed over the projections.
  double prenet_co(const Layer& layer, double b) const override {
    const DeltaDims x = delta_dims(layer);
    return 2 * b * d(layer.input_shapes.front()[0]) * x.D * (in_width(x) + x.V);
  }

  std::string timing_note(const Layer& /*layer*/) const override {
    return "gated_deltanet layers: flash-linear-attention's chunk_gated_delta_rule kernels are timed from public "
           "measurements where the catalogue has them (H100 SXM, H200, GH200, B200, GB200, B300, GB300: the learned "
           "predictor only); elsewhere each is timed as a batched GEMM of its chunk's shape carrying its own FLOPs and "
           "bytes, which the measurements show too fast (forward 1.2-2.2x, backward about 1.8x), so there these "
           "layers are probably predicted too fast (docs/MODEL_FORMAT.md, \"Gated DeltaNet\")";
  }

  /// Megatron-Core's GatedDeltaNet (megatron/core/ssm/gated_delta_net.py): key and value heads each divided by the
  /// group, the input projections column-parallel, the convolution, gates, delta rule and gated norm on the local
  /// heads, out_proj row-parallel with its output summed over the group (the norm's weight whole on every GPU).
  void shard(ShardStep& s) const override {
    Layer& L = s.shard.net.layers[s.l];
    LayerAttrs& a = L.attrs;
    a.num_kv_heads = split_evenly(a.num_kv_heads, s.t, L, "Gated DeltaNet key heads");
    a.num_heads = split_evenly(a.num_heads, s.t, L, "Gated DeltaNet value heads");
    L.parameters = delta_parameters(a, L.input_shapes.front()[1], "parallel.tensor");
    shard_as_mixer(s);
  }
};

}  // namespace

const LayerKind& gated_deltanet_kind() {
  static const GatedDeltaNet kind;
  return kind;
}

}  // namespace prenet
