// mla: multi-head latent attention (DeepSeek-V2/V3) over [seq_len, hidden]: queries through a low-rank
// down-projection, its RMSNorm and an up-projection (or one q_proj), keys and values through a shared
// latent (kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj) plus one rotary key shared by the heads, the
// attention core of query/key width qk_nope + qk_rope and value width v_head_dim, and o_proj. As
// Hugging Face's DeepseekV3Attention builds and runs it; heads shard over the tensor group.
#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

/// The widths of one MLA layer: hidden D, heads H, ranks rq (0: q_proj) and rkv, query/key width dk =
/// nope + rope, value width dv.
struct MlaDims {
  double D, H, rq, rkv, nope, rope, dk, dv;
};

MlaDims mla_dims(const Layer& layer) {
  const LayerAttrs& a = layer.attrs;
  const double nope = d(a.qk_nope_head_dim), rope = d(a.qk_rope_head_dim);
  return {d(layer.input_shapes.front()[1]),
          d(a.num_heads),
          d(a.q_lora_rank),
          d(a.kv_lora_rank),
          nope,
          rope,
          nope + rope,
          d(a.v_head_dim)};
}

/// DeepseekV3Attention's parameters: q_a_proj (bias = attention_bias), q_a_layernorm, q_b_proj (no bias), or
/// q_proj (no bias) when q_lora_rank is 0; kv_a_proj_with_mqa (bias), kv_a_layernorm, kv_b_proj (no bias);
/// o_proj (bias). `replicated` counts only the down-projections and their norms, `heads` the rest for
/// `num_heads` heads.
std::int64_t mla_parameters(const LayerAttrs& a, std::int64_t hidden, bool replicated, bool heads,
                            const std::string& path) {
  const std::int64_t bias = a.bias ? 1 : 0, dk = a.qk_nope_head_dim + a.qk_rope_head_dim;
  std::int64_t p = 0;
  if (replicated) {
    if (a.q_lora_rank > 0) p += params_of({hidden + bias, a.q_lora_rank}, path) + a.q_lora_rank;
    p += params_of({hidden + bias, a.kv_lora_rank + a.qk_rope_head_dim}, path) + a.kv_lora_rank;
  }
  if (heads) {
    p += a.q_lora_rank > 0 ? params_of({a.q_lora_rank, a.num_heads, dk}, path)
                           : params_of({hidden, a.num_heads, dk}, path);
    p += params_of({a.kv_lora_rank, a.num_heads, a.qk_nope_head_dim + a.v_head_dim}, path);
    p += params_of({a.num_heads, a.v_head_dim, hidden}, path) + bias * hidden;
  }
  return p;
}

class Mla : public LayerKind {
 public:
  Mla() : LayerKind(LayerType::Mla, "mla") {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    reject_unknown_keys(spec, path,
                        common_keys({"num_heads", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                                     "v_head_dim", "causal", "bias", "dropout"}));
    LayerAttrs a;
    a.num_heads = require_int(spec, "num_heads", path, 1, 1 << 16);
    a.num_kv_heads = a.num_heads;  // keys and values are expanded to every head
    a.q_lora_rank = get_int(spec, "q_lora_rank", path, 0, 0, 1 << 20);
    a.kv_lora_rank = require_int(spec, "kv_lora_rank", path, 1, 1 << 20);
    a.qk_nope_head_dim = require_int(spec, "qk_nope_head_dim", path, 0, 1 << 16);
    a.qk_rope_head_dim = require_int(spec, "qk_rope_head_dim", path, 0, 1 << 16);
    if (a.qk_nope_head_dim + a.qk_rope_head_dim == 0) {
      throw InputError(join(path, "qk_rope_head_dim"), "qk_nope_head_dim + qk_rope_head_dim must be at least 1");
    }
    a.head_dim = a.qk_nope_head_dim + a.qk_rope_head_dim;
    a.v_head_dim = require_int(spec, "v_head_dim", path, 1, 1 << 16);
    a.causal = get_bool(spec, "causal", path, true);
    a.bias = get_bool(spec, "bias", path, false);
    a.rate = get_number(spec, "dropout", path, 0.0, 0.0, 0.999999);
    return a;
  }

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    require_rank(layer.input_shapes.front(), 2, path, "mla expects [seq_len, hidden]");
    if (layer.input_shapes.size() > 1) throw InputError(join(path, "inputs"), "mla is self-attention: one input");
    layer.parameters = mla_parameters(layer.attrs, layer.input_shapes.front()[1], true, true, path);
    layer.output_shape = layer.input_shapes.front();
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    const MlaDims x = mla_dims(st.layer);
    const double s = d(st.in[0]), m = st.b * s, e = st.e;
    const bool fused = fused_attention(st.context.attention);
    const double q_width = x.H * x.dk, kv_up = x.H * (x.nope + x.dv), latent = x.rkv + x.rope;
    // Forward: the query path, the key/value path, the core, the output projection. The latents' norms and
    // up-projections (q_proj without a query latent) are the part Megatron-Core's mla_up_proj reruns.
    if (x.rq > 0) {
      kb.gemm(Phase::Forward, m, x.rq, x.D);  // q_a_proj
      kb.set_part(KernelPart::LatentUp);
      kb.stream(KernelClass::Normalization, Phase::Forward, m * x.rq, 2, 8);
      kb.gemm(Phase::Forward, m, q_width, x.rq);  // q_b_proj
    } else {
      kb.set_part(KernelPart::LatentUp);
      kb.gemm(Phase::Forward, m, q_width, x.D);  // q_proj
    }
    kb.set_part(KernelPart::Other);
    kb.gemm(Phase::Forward, m, latent, x.D);  // kv_a_proj_with_mqa
    kb.set_part(KernelPart::LatentUp);
    kb.stream(KernelClass::Normalization, Phase::Forward, m * x.rkv, 2, 8);
    kb.gemm(Phase::Forward, m, kv_up, x.rkv);  // kv_b_proj
    kb.set_part(KernelPart::Other);
    // Hugging Face pads the values to the query width for FlashAttention-2 (qk_head_dim != v_head_dim).
    // Under context parallelism the keys are those of every block of the ring (context x s).
    const double t = s * d(st.a.context);
    const AttentionCore core{st.b, x.H, x.H, s, t, x.dk, fused ? x.dk : x.dv, visible_share(st.a, s, t)};
    attention_core_forward(st, core, kb);
    kb.gemm(Phase::Forward, m, x.D, x.H * x.dv);  // o_proj
    // Backward, in reverse.
    kb.gemm(Phase::Backward, m, x.H * x.dv, x.D);  // o_proj: input gradient
    kb.weight_gradient(x.H * x.dv, x.D, m);        // o_proj: weight gradient
    attention_core_backward(st, core, kb);
    kb.gemm(Phase::Backward, m, x.rkv, kv_up);  // kv_b_proj: input gradient
    kb.weight_gradient(x.rkv, kv_up, m);        // kv_b_proj: weight gradient
    kb.stream(KernelClass::Normalization, Phase::Backward, m * x.rkv, 3, 12);
    if (st.dx) kb.gemm(Phase::Backward, m, x.D, latent);  // kv_a_proj_with_mqa: input gradient
    kb.weight_gradient(x.D, latent, m);                   // kv_a_proj_with_mqa: weight gradient
    if (x.rq > 0) {
      kb.gemm(Phase::Backward, m, x.rq, q_width);  // q_b_proj: input gradient
      kb.weight_gradient(x.rq, q_width, m);        // q_b_proj: weight gradient
      kb.stream(KernelClass::Normalization, Phase::Backward, m * x.rq, 3, 12);
      if (st.dx) kb.gemm(Phase::Backward, m, x.D, x.rq);  // q_a_proj: input gradient
      kb.weight_gradient(x.D, x.rq, m);                   // q_a_proj: weight gradient
    } else {
      if (st.dx) kb.gemm(Phase::Backward, m, x.D, q_width);  // q_proj: input gradient
      kb.weight_gradient(x.D, q_width, m);                   // q_proj: weight gradient
    }
    // Saved for backward: the input (read by both down-projections), each norm's input and output (the
    // up-projection's input) with 8 bytes of row statistics, the core's Q, K (expanded to every head) and V,
    // its output (o_proj's input), and the probabilities (eager) or the row log-sum-exp (fused).
    const double bh = st.b * x.H, probs = bh * s * s;
    const double norms = (x.rq > 0 ? e * 2 * m * x.rq + 8 * m : 0) + e * 2 * m * x.rkv + 8 * m;
    lw.saved_activation_bytes = e * (m * x.D + 2 * m * q_width + 2 * m * x.H * x.dv) + norms +
                                attention_score_bytes(st.a, probs, e, st.context) + (fused ? 4 * bh * s : 0);
    lw.saved_input_bytes = e * m * x.D;
  }

  /// DeepseekV3Attention's projections (q_a_proj and q_b_proj, or q_proj; kv_a_proj_with_mqa; kv_b_proj; o_proj).
  std::vector<LinearModule> linear_modules(const Layer& layer) const override {
    const MlaDims x = mla_dims(layer);
    const double s = d(layer.input_shapes.front()[0]);
    const double q_width = x.H * x.dk, kv_up = x.H * (x.nope + x.dv);
    std::vector<LinearModule> modules;
    if (x.rq > 0) {
      modules.push_back({"q_a_proj", x.D, x.rq, 1, s, 0});
      modules.push_back({"q_b_proj", x.rq, q_width, 1, s, 1});
    } else {
      modules.push_back({"q_proj", x.D, q_width, 1, s, 0});
    }
    modules.push_back({"kv_a_proj_with_mqa", x.D, x.rkv + x.rope, 1, s, 0});
    modules.push_back({"kv_b_proj", x.rkv, kv_up, 1, s, 2});
    modules.push_back({"o_proj", x.H * x.dv, x.D, 1, s, 3});
    return modules;
  }

  /// As attention's: heads x s^2 x hidden per sample.
  double prenet_co(const Layer& layer, double b) const override {
    const double s = d(layer.input_shapes.front()[0]);
    return b * d(layer.attrs.num_heads) * s * s * d(layer.input_shapes.front()[1]);
  }

  /// Megatron's MLA layout: the heads (q_b_proj or q_proj, kv_b_proj, o_proj) split over the group, the
  /// down-projections and their norms replicated. One all-reduce of the output forward; backward the
  /// gradients the up-projections hand to the replicated part are summed, counted as one all-reduce of the
  /// layer's width (it is s * (q_lora_rank + kv_lora_rank + qk_rope_head_dim) per sample in Megatron, less),
  /// unless nothing below the up-projections needs a gradient (a frozen layer on a frozen input).
  void shard(ShardStep& s) const override {
    Layer& L = s.shard.net.layers[s.l];
    LayerAttrs& a = L.attrs;
    a.num_heads = split_evenly(a.num_heads, s.t, L, "attention heads");
    a.num_kv_heads = a.num_heads;
    L.parameters = mla_parameters(a, L.input_shapes.front()[1], true, true, L.name);
    shard_as_mixer(s);
    // The latents' gradient is summed for the replicated down-projections' weights too, even where the layer's
    // input needs none (the first trained layer under trainable_layers). LoRA adapters are refused under tensor
    // parallelism before this.
    if (L.trainable) s.shard.layers[s.l].backward_allreduces = 1;
  }

  /// Op-level recomputation: projections and the fused kernel kept, the rest of the core recomputed.
  bool recomputed_by_ops(const Layer&, const Kernel& k, const KernelContext& context) const override {
    return attention_recomputed_by_ops(k, context);
  }
  double ops_kept_bytes(const Layer&, const Kernel& k, double e, const KernelContext& context) const override {
    return attention_ops_kept_bytes(k, e, context);
  }

  /// Selective recomputation: core_attn the attention core only, as for attention; mla_up_proj the latents'
  /// norms and up-projections (Megatron-Core's qkv_up_proj_and_rope_apply under CheckpointWithoutOutput, with
  /// Transformer Engine's norms fused into linear_q_up_proj and linear_kv_up_proj).
  bool recomputed_selectively(const Layer&, const Kernel& k, const KernelContext& context,
                              RecomputeModule module) const override {
    if (module == RecomputeModule::MlaUpProj) return k.part == KernelPart::LatentUp;
    return module == RecomputeModule::CoreAttn && !fused_attention(context.attention) && k.cls != KernelClass::Gemm &&
           k.cls != KernelClass::Normalization;
  }

  /// core_attn: the scores. mla_up_proj: the up-projections' outputs Q, K and V (its checkpoint's discarded
  /// outputs, which the core kept), and, as the checkpoint runs without autograd, what the norms and the
  /// up-projections saved: each norm's output (the up-projection's input) and its row statistics. The latents
  /// themselves stay, the checkpoint's inputs.
  double selective_dropped_bytes(const Layer& layer, double b, double e, const KernelContext& context,
                                 RecomputeModule module) const override {
    const MlaDims x = mla_dims(layer);
    const double s = d(layer.input_shapes.front()[0]), m = b * s;
    if (module == RecomputeModule::MlaUpProj) {
      const double q_norm = x.rq > 0 ? e * m * x.rq + 8 * m : 0;
      return q_norm + e * m * x.rkv + 8 * m + e * m * x.H * (2 * x.dk + x.dv);
    }
    if (module != RecomputeModule::CoreAttn) return 0.0;
    return attention_score_bytes(layer.attrs, b * x.H * s * s, e, context);
  }
};

}  // namespace

const LayerKind& mla_kind() {
  static const Mla kind;
  return kind;
}

}  // namespace prenet
