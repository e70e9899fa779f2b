// mamba: a selective state-space mixer over [seq_len, hidden] as Hugging Face's MambaMixer (version 1)
// and Mamba2Mixer (version 2) build and train it (the CUDA fast path: in_proj, then mamba_ssm's fused
// kernels for the causal convolution, the scan and out_proj). Mamba-2 splits its heads over the tensor group.
#include <cmath>
#include <vector>

#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

/// The sizes of one mixer: hidden D, inner I, state N, conv kernel K, dt_rank R (v1), heads H, groups G,
/// head width P = I / H, conv channels C (I for v1, I + 2 G N for v2) and the SSD's chunk length Q (v2).
struct MambaDims {
  double D, I, N, K, R, H, G, P, C, Q;
};

MambaDims mamba_dims(const Layer& layer) {
  const LayerAttrs& a = layer.attrs;
  MambaDims x{};
  x.D = d(layer.input_shapes.front()[1]), x.I = d(a.inner), x.N = d(a.state_size), x.K = d(a.conv_kernel);
  x.R = d(a.dt_rank), x.H = d(a.num_heads), x.G = d(a.n_groups);
  x.P = a.ssm_version == 2 ? x.I / x.H : 0;
  x.C = a.ssm_version == 2 ? x.I + 2 * x.G * x.N : x.I;
  x.Q = d(a.ssd_chunk);
  return x;
}

/// Width of in_proj's output: x and z (v1); z, x, B, C and dt (v2).
std::int64_t in_proj_width(const LayerAttrs& a) {
  return a.ssm_version == 1 ? 2 * a.inner : 2 * a.inner + 2 * a.n_groups * a.state_size + a.num_heads;
}

/// Mamba 1's fused selective scan (selective_scan_fwd, Gu & Dao 2023 section 3.3): memory-bound, it reads
/// u, delta and z (I per token) and B, C (N each) once and writes y; 9 I N FLOPs per token plus the D skip
/// and the z gate (I each), the count the mamba_ssm authors give (state-spaces/mamba issue 110). Backward
/// (selective_scan_bwd) reads the same and dy and writes du, ddelta, dz, dB, dC: twice the FLOPs.
void selective_scan(KernelBuilder& kb, Phase phase, double m, const MambaDims& x) {
  const bool forward = phase == Phase::Forward;
  const double passes = forward ? 4 + 2 * x.N / x.I : 9 + 4 * x.N / x.I;
  kb.stream(KernelClass::Elementwise, phase, m * x.I, passes, (forward ? 1 : 2) * (9 * x.N + 2));
}

/// Mamba-2's chunked SSD (mamba_chunk_scan_combined; Dao & Gu 2024 section 6) over chunks of Q positions
/// (chunk_size): per chunk and head, the diagonal block (C B^T within the chunk, Q^2 N multiply-adds per group,
/// then its masked product with X, Q^2 P per head), the chunk's state B^T X (Q N P) and the states' output
/// C h (Q N P); the pass of states between chunks is negligible. Per token: 2 (G Q N + H (Q P + 2 N P))
/// FLOPs forward, the diagonal blocks counted whole. Mostly batched matmuls: timed from the catalogue's measured
/// chunk scans where it has them (part Ssd), else as a batched GEMM of the chunk's shape; memory traffic is x, B,
/// C, dt read and y written once plus the FP32 chunk states. Backward: twice the forward FLOPs (each matmul's two
/// gradients) and twice the traffic.
void ssd(KernelBuilder& kb, Phase phase, double b, double s, const MambaDims& x, double e) {
  const double Q = x.Q, chunks = b * std::ceil(s / Q), m = b * s;
  Kernel k = gemm_kernel(phase, Q, x.P, x.N, chunks * x.H, e);
  k.cls = KernelClass::BatchedGemm;
  const double forward_flops = 2 * m * (x.G * Q * x.N + x.H * (Q * x.P + 2 * x.N * x.P));
  const double forward_bytes = e * m * (2 * x.I + 2 * x.G * x.N + x.H) + 4 * chunks * x.H * x.P * x.N * 2;
  const bool forward = phase == Phase::Forward;
  k.flops = (forward ? 1 : 2) * forward_flops;
  k.bytes = (forward ? 1 : 2) * forward_bytes;
  kb.set_part(KernelPart::Ssd);
  kb.add(k);
  kb.set_part(KernelPart::Other);
}

/// MambaMixer's parameters: in_proj (D x 2I, bias per use_bias), conv1d (I x K, groups I, bias per
/// use_conv_bias), x_proj (I x (R + 2N), no bias), dt_proj (R x I with bias), A_log (I x N), D (I),
/// out_proj (I x D, bias per out_bias, which defaults to use_bias).
std::int64_t mamba1_parameters(const LayerAttrs& a, std::int64_t hidden, const std::string& path) {
  const std::int64_t bias = a.bias ? 1 : 0, I = a.inner, N = a.state_size, R = a.dt_rank;
  return params_of({hidden + bias, 2 * I}, path) + I * a.conv_kernel + (a.conv_bias ? I : 0) +
         params_of({I, R + 2 * N}, path) + R * I + I + params_of({I, N}, path) + I + params_of({I, hidden}, path) +
         (a.out_bias ? hidden : 0);
}

/// Mamba2Mixer's parameters: in_proj (D x (2I + 2GN + H), bias per use_bias), conv1d over C = I + 2GN
/// channels (C x K, bias per use_conv_bias), dt_bias, A_log and D (H each), the gated RMSNorm (I, unless
/// gated_norm is false: Falcon-H1's mamba_rms_norm), out_proj (I x D, bias per out_bias: Falcon-H1's
/// projectors_bias).
std::int64_t mamba2_parameters(const LayerAttrs& a, std::int64_t hidden, const std::string& path) {
  const std::int64_t bias = a.bias ? 1 : 0, I = a.inner, C = I + 2 * a.n_groups * a.state_size;
  return params_of({hidden + bias, in_proj_width(a)}, path) + C * a.conv_kernel + (a.conv_bias ? C : 0) +
         3 * a.num_heads + (a.gated_norm ? I : 0) + params_of({I, hidden}, path) + (a.out_bias ? hidden : 0);
}

/// Mamba-2's output gate y · silu(z) before out_proj. With the gated RMSNorm it is the norm kernel (reads y and z,
/// writes the output); without it (gated_norm false) mamba_split_conv1d_scan_combined hands z to the chunk scan,
/// which reads it and writes the gated output beside y (kept for the backward).
void output_gate(KernelBuilder& kb, double m, const MambaDims& x, bool norm) {
  if (norm) {
    kb.stream(KernelClass::Normalization, Phase::Forward, m * x.I, 3, 8 + activation_flops("silu"));
  } else {
    kb.stream(KernelClass::Elementwise, Phase::Forward, m * x.I, 2, 1 + activation_flops("silu"));
  }
}

/// The gate's backward after out_proj's: the norm's backward (reads y, z and the output gradient, writes dy and dz;
/// its output was recomputed before out_proj's weight gradient); without the norm one kernel reads the output
/// gradient, z and y and writes dz, dy and the recomputed output.
void output_gate_backward(KernelBuilder& kb, double m, const MambaDims& x, bool norm) {
  if (norm) {
    kb.stream(KernelClass::Normalization, Phase::Backward, m * x.I, 4, 12 + 2 * activation_flops("silu"));
  } else {
    kb.stream(KernelClass::Elementwise, Phase::Backward, m * x.I, 6, 3 + 2 * activation_flops("silu"));
  }
}

class Mamba : public LayerKind {
 public:
  Mamba() : LayerKind(LayerType::Mamba, "mamba") {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    reject_unknown_keys(spec, path,
                        common_keys({"version", "inner", "state_size", "conv_kernel", "dt_rank", "num_heads",
                                     "n_groups", "bias", "conv_bias", "out_bias", "gated_norm", "chunk_size"}));
    LayerAttrs a;
    a.ssm_version = require_int(spec, "version", path, 1, 2);
    a.inner = require_int(spec, "inner", path, 1, Limits::kMaxDim);
    a.state_size = require_int(spec, "state_size", path, 1, 1 << 16);
    a.conv_kernel = get_int(spec, "conv_kernel", path, 4, 1, 1 << 10);
    a.bias = get_bool(spec, "bias", path, false);
    a.conv_bias = get_bool(spec, "conv_bias", path, true);
    a.out_bias = get_bool(spec, "out_bias", path, a.bias);
    a.gated_norm = get_bool(spec, "gated_norm", path, true);
    a.ssd_chunk = get_int(spec, "chunk_size", path, 256, 1, 1 << 16);
    const std::vector<const char*> other_version_keys =
        a.ssm_version == 1 ? std::vector<const char*>{"num_heads", "n_groups", "gated_norm", "chunk_size"}
                           : std::vector<const char*>{"dt_rank"};
    for (const char* key : other_version_keys) {
      if (!spec.contains(key)) continue;
      throw InputError(join(path, key), "applies to mamba version " + std::string(a.ssm_version == 1 ? "2" : "1") +
                                            " only (this layer is version " + std::to_string(a.ssm_version) + ")");
    }
    if (a.ssm_version == 1) {
      a.dt_rank = require_int(spec, "dt_rank", path, 1, 1 << 20);
      return a;
    }
    a.num_heads = require_int(spec, "num_heads", path, 1, 1 << 20);
    a.n_groups = get_int(spec, "n_groups", path, 1, 1, 1 << 20);
    if (a.inner % a.num_heads != 0) {
      throw InputError(join(path, "num_heads"),
                       "must divide inner (" + std::to_string(a.inner) + "): head_dim = inner / num_heads");
    }
    if (a.num_heads % a.n_groups != 0) {
      throw InputError(join(path, "n_groups"), "must divide num_heads (" + std::to_string(a.num_heads) + ")");
    }
    return a;
  }

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    require_rank(layer.input_shapes.front(), 2, path, "mamba expects [seq_len, hidden]");
    const std::int64_t hidden = layer.input_shapes.front()[1];
    layer.parameters = layer.attrs.ssm_version == 1 ? mamba1_parameters(layer.attrs, hidden, path)
                                                    : mamba2_parameters(layer.attrs, hidden, path);
    layer.output_shape = layer.input_shapes.front();
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    const MambaDims x = mamba_dims(st.layer);
    const double s = d(st.in[0]), m = st.b * s, e = st.e, width = d(in_proj_width(st.a));
    const bool v1 = st.a.ssm_version == 1;
    kb.gemm(Phase::Forward, m, width, x.D);  // in_proj
    causal_conv1d_kernels(kb, Phase::Forward, m, x.C, x.K);
    if (v1) {  // mamba_inner_fn: x_proj, dt_proj, the scan (gated by z), out_proj
      kb.gemm(Phase::Forward, m, x.R + 2 * x.N, x.I);
      kb.gemm(Phase::Forward, m, x.I, x.R);
      selective_scan(kb, Phase::Forward, m, x);
    } else {  // mamba_split_conv1d_scan_combined: SSD, the gated RMSNorm, out_proj
      ssd(kb, Phase::Forward, st.b, s, x, e);
      output_gate(kb, m, x, st.a.gated_norm);
    }
    kb.gemm(Phase::Forward, m, x.D, x.I);  // out_proj
    // Backward. Both fused functions recompute the convolution's output (and v1 delta, v2 the gated output
    // for out_proj's weight gradient) instead of saving them.
    kb.stream(KernelClass::Elementwise, Phase::Backward, m * x.C, 2, 2 * x.K);  // conv1d recomputed
    if (v1) kb.gemm(Phase::Backward, m, x.I, x.R);                              // delta recomputed
    if (!v1 && st.a.gated_norm) {
      kb.stream(KernelClass::Normalization, Phase::Backward, m * x.I, 3, 8);  // norm output recomputed
    }
    kb.gemm(Phase::Backward, m, x.I, x.D);  // out_proj: input gradient
    kb.weight_gradient(x.I, x.D, m);        // out_proj: weight gradient
    if (v1) {
      selective_scan(kb, Phase::Backward, m, x);
      kb.gemm(Phase::Backward, m, x.R, x.I);            // dt_proj: input gradient
      kb.weight_gradient(x.R, x.I, m);                  // dt_proj: weight gradient
      kb.gemm(Phase::Backward, m, x.I, x.R + 2 * x.N);  // x_proj: input gradient
      kb.weight_gradient(x.I, x.R + 2 * x.N, m);        // x_proj: weight gradient
    } else {
      output_gate_backward(kb, m, x, st.a.gated_norm);
      ssd(kb, Phase::Backward, st.b, s, x, e);
    }
    causal_conv1d_kernels(kb, Phase::Backward, m, x.C, x.K);
    if (st.dx) kb.gemm(Phase::Backward, m, x.D, width);  // in_proj: input gradient
    kb.weight_gradient(x.D, width, m);                   // in_proj: weight gradient
    // Saved: in_proj's input and output (the fused function's input), v1 x_dbl (delta's rank and B, C)
    // and the scan's output (out_proj's input) with its FP32 chunk states (2N per channel per chunk of
    // 2048); v2 the SSD output before the gate and the norm's FP32 row statistics (per group; none without it).
    const double common = e * (m * x.D + m * width);
    lw.saved_activation_bytes =
        v1 ? common + e * m * (x.R + 2 * x.N + x.I) + 4 * st.b * x.I * std::ceil(s / 2048) * 2 * x.N
           : common + e * m * x.I + (st.a.gated_norm ? 4 * m * x.G : 0);
  }

  /// MambaMixer's in_proj, x_proj, dt_proj and out_proj (Mamba2Mixer: in_proj and out_proj).
  std::vector<LinearModule> linear_modules(const Layer& layer) const override {
    const MambaDims x = mamba_dims(layer);
    const double s = d(layer.input_shapes.front()[0]), width = d(in_proj_width(layer.attrs));
    if (layer.attrs.ssm_version != 1) return {{"in_proj", x.D, width, 1, s, 0}, {"out_proj", x.I, x.D, 1, s, 1}};
    return {{"in_proj", x.D, width, 1, s, 0},
            {"x_proj", x.I, x.R + 2 * x.N, 1, s, 1},
            {"dt_proj", x.R, x.I, 1, s, 2},
            {"out_proj", x.I, x.D, 1, s, 3}};
  }

  /// transformers' CUDA training path hands weights to mamba_ssm's fused functions: Mamba-2's out_proj.weight to
  /// mamba_split_conv1d_scan_combined (Mamba2, Bamba / Granite 4.0, Nemotron-H, Falcon-H1), and Mamba-1's
  /// dt_proj.weight to the scan (MambaMixer's mamba_inner_fn, Jamba's selective_scan_fn); in_proj is called.
  std::string adapter_bypass(const Layer& layer, const std::string& role) const override {
    const bool v2 = layer.attrs.ssm_version == 2;
    if ((v2 && role == "out_proj") || (!v2 && role == "dt_proj")) {
      return std::string(v2 ? "mamba_split_conv1d_scan_combined" : "the selective scan") + " reads " + role +
             "'s weight itself in transformers' CUDA training path";
    }
    return "";
  }

  std::string timing_note(const Layer& layer) const override {
    if (layer.attrs.ssm_version != 2) return "";
    return "mamba version 2 layers: the chunk scan (mamba_chunk_scan_combined) is timed from public forward "
           "measurements where the catalogue has them (H100 SXM, H200, GH200, B200, GB200, B300, GB300: the learned "
           "predictor only), its backward at the forward's measured rate (no backward was measured at a stated "
           "shape); elsewhere it is timed as a batched GEMM of its chunk's shape, about 5x faster than the "
           "measurements, so there these layers are probably predicted too fast (docs/MODEL_FORMAT.md, \"Mamba "
           "mixers\")";
  }

  /// As for dense layers, 2 x d_in x d_out per token summed over the projections.
  double prenet_co(const Layer& layer, double b) const override {
    const MambaDims x = mamba_dims(layer);
    return 2 * b * d(layer.input_shapes.front()[0]) * x.D * (d(in_proj_width(layer.attrs)) + x.I);
  }

  /// Mamba-2 over the tensor group as Megatron-Core's MambaMixer splits it (megatron/core/ssm/mamba_mixer.py:
  /// nheads, ngroups and d_inner each divided by the group, which must divide ngroups): in_proj column-parallel,
  /// the convolution, the scan and the gated norm on the local heads, out_proj row-parallel with its output summed
  /// over the group (out_proj's bias whole on every GPU). Mamba-1 (not split by Megatron-Core) is refused.
  void shard(ShardStep& s) const override {
    Layer& L = s.shard.net.layers[s.l];
    LayerAttrs& a = L.attrs;
    if (a.ssm_version != 2) {
      throw InputError("parallel.tensor", "tensor parallelism of Mamba-1 mixers (layer \"" + printable(L.name) +
                                              "\") is not modelled; Megatron-Core splits Mamba-2's heads");
    }
    a.num_heads = split_evenly(a.num_heads, s.t, L, "Mamba heads");
    a.n_groups = split_evenly(a.n_groups, s.t, L, "Mamba groups");
    a.inner = split_evenly(a.inner, s.t, L, "Mamba channels");
    L.parameters = mamba2_parameters(a, L.input_shapes.front()[1], "parallel.tensor");
    shard_as_mixer(s);
  }
};

}  // namespace

/// Memory-bound, reading its input once and writing its output, 2 K FLOPs a channel (forward); backward reads the
/// input and the output gradient and writes the input gradient (and the weight gradient, a reduction).
void causal_conv1d_kernels(KernelBuilder& kb, Phase phase, double m, double channels, double kernel) {
  const bool forward = phase == Phase::Forward;
  kb.stream(KernelClass::Elementwise, phase, m * channels, forward ? 2 : 3,
            (forward ? 2 * kernel : 4 * kernel) + (forward ? 1 : 2) * activation_flops("silu"));
}

const LayerKind& mamba_kind() {
  static const Mamba kind;
  return kind;
}

}  // namespace prenet
