// The attention core shared by attention and mla: scores, the mask, soft-capping and sinks, softmax,
// dropout and P V (eager, as PyTorch runs Hugging Face's eager_attention_forward), or one fused
// (FlashAttention) kernel per pass; what it saves for backward.
#include <cmath>

#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

/// FlashAttention's one kernel per pass (Dao 2023) over `c.b * c.heads` query heads of s positions and
/// `c.b * c.kv_heads` key/value heads of t positions, query/key width dk, value width dv: forward QK^T and
/// PV (2 s t (dk + dv) FLOPs per query head), backward recomputes the scores, then dV, dP, dQ, dK
/// (2 s t (3 dk + 2 dv)), both over the visible share of the score matrix (a mask's fully masked tiles are
/// skipped). Memory traffic is the inputs and outputs only: forward reads Q, K, V and writes O and each
/// row's log-sum-exp (FP32); backward reads Q, K, V, O, dO and the row statistics and writes dQ, dK, dV.
/// Timed from the accelerator's measured fused attention where the catalogue has it for the library the
/// request's kernels use (Megatron-LM's: TransformerEngine's cuDNN kernel; PyTorch's: the backend SDPA picks on
/// the part; `flash2`: FlashAttention-2 whatever the kernel set),
/// counting the mask's visible blocks (causal over s = t, or a sliding window; other masks at `visible`);
/// elsewhere as a batched GEMM of the QK^T shape.
void flash_attention(KernelBuilder& kb, Phase phase, const LayerStep& st, const AttentionCore& c, double e) {
  const double bh = c.b * c.heads, bkv = c.b * c.kv_heads;
  Kernel k = gemm_kernel(phase, c.s, c.t, c.dk, bh, e);
  k.cls = KernelClass::BatchedGemm;
  const bool forward = phase == Phase::Forward;
  k.unmasked_flops = 2.0 * bh * c.s * c.t * (forward ? c.dk + c.dv : 3 * c.dk + 2 * c.dv);
  k.flops = k.unmasked_flops * c.visible;
  k.fused_attention = st.context.attention == AttentionKernel::Flash2 ? FusedAttentionLibrary::Flash
                      : st.context.kernels == KernelSet::Megatron     ? FusedAttentionLibrary::Cudnn
                                                                      : FusedAttentionLibrary::PyTorchDefault;
  const LayerAttrs& a = st.a;
  const bool plain_mask = a.context <= 1 && a.chunk == 0 && c.s == c.t;
  k.causal = plain_mask && a.causal;
  k.window_positions = plain_mask && a.causal && a.window > 0 && d(a.window) < c.s ? d(a.window) : 0;
  const double q = bh * c.s * c.dk, o = bh * c.s * c.dv, kv = bkv * c.t * (c.dk + c.dv);
  k.bytes = forward ? e * (q + kv + o) + 4 * bh * c.s : e * 2 * (q + kv + o) + 8 * bh * c.s;
  kb.add(k);
}

/// Eager soft-capping as Hugging Face writes it (Gemma 2): scores / c, tanh, * c, three elementwise
/// kernels over the scores; backward the three gradients (tanh's reads its saved output).
void softcap_kernels(KernelBuilder& kb, Phase phase, double probs) {
  const bool forward = phase == Phase::Forward;
  kb.stream(KernelClass::Elementwise, phase, probs, 2, 1);
  kb.stream(KernelClass::Elementwise, phase, probs, forward ? 2 : 3, forward ? activation_flops("tanh") : 2);
  kb.stream(KernelClass::Elementwise, phase, probs, 2, 1);
}

/// Eager sinks as gpt-oss's eager_attention_forward writes them: the sink column concatenated to the
/// scores (a copy), the row maximum subtracted (a reduction and a pass); backward the subtraction's
/// gradient (with the maximum's) and the slice back to the scores (a copy). The extra column is ignored.
void sink_kernels(KernelBuilder& kb, Phase phase, double probs) {
  kb.stream(KernelClass::Elementwise, phase, probs, 2, 0);
  kb.stream(KernelClass::Elementwise, phase, probs, 3, 1);
}

/// Eager attention as Hugging Face writes it, op by op: the scores are scaled in a pass of their own
/// (`matmul(q, k^T) * scaling`, GPT-2's division), and a causal, windowed or chunked mask is applied in another
/// (`+ causal_mask`, GPT-2's `torch.where`) before the softmax; each reads and writes the s x t scores, the mask
/// itself is one [s, t] slice broadcast over heads. Backward: the scale's gradient is one more pass; an added
/// mask passes its gradient through. (Megatron-LM's FusedScaleMaskSoftmax and torch.compile fold both into the
/// softmax kernel.)
void op_by_op_scale_and_mask(KernelBuilder& kb, Phase phase, const LayerAttrs& a, double probs) {
  kb.stream(KernelClass::Elementwise, phase, probs, 2, 1);
  const bool masked = a.causal || a.window > 0 || a.chunk > 0;
  if (phase == Phase::Forward && masked) kb.stream(KernelClass::Elementwise, phase, probs, 2, 1);
}

/// Whether the scores are cast to FP32 in a pass of their own before an FP32 softmax: autocast op by op (a fused
/// or compiled softmax reads them in 16 bits).
bool casts_scores_up(const KernelContext& context, double e) {
  return fp32_probabilities(context, e) && !context.fuses_pointwise();
}

}  // namespace

double visible_share(const LayerAttrs& a, double s, double t) {
  // Context parallelism with causal load balancing: each GPU's 2 chunks see half of all keys on average
  // (1/context of the causal total over its s x context s scores); windows and chunks are refused there.
  if (a.context > 1) return a.causal ? 0.5 : 1.0;
  if (!a.causal || s != t) return 1.0;
  if (a.window > 0 && d(a.window) < s) {
    const double w = d(a.window);
    return (s * w - w * w / 2) / (s * s);
  }
  if (a.chunk > 0 && d(a.chunk) < s) {
    const double c = d(a.chunk), n = std::floor(s / c), r = s - n * c;
    return (n * c * c / 2 + r * r / 2) / (s * s);
  }
  return 0.5;
}

void attention_core_forward(const LayerStep& st, const AttentionCore& c, KernelBuilder& kb) {
  const LayerAttrs& a = st.a;
  const double e = st.e, bh = c.b * c.heads, probs = bh * c.s * c.t;
  if (fused_attention(st.context.attention)) {  // soft-capping and sinks are computed inside the fused kernel
    flash_attention(kb, Phase::Forward, st, c, e);
    return;
  }
  // Under autocast an eager softmax writes FP32 probabilities, cast to e for PV; backward casts the
  // gradient up, and the softmax backward reads it and the FP32 output. The eager path computes every
  // score and masks (causal, window, chunk) by adding a mask: nothing is skipped.
  const bool fp32_probs = fp32_probabilities(st.context, e);
  kb.gemm(Phase::Forward, c.s, c.t, c.dk, bh);  // scores Q K^T
  if (!st.context.fuses_pointwise()) op_by_op_scale_and_mask(kb, Phase::Forward, a, probs);
  if (a.softcap > 0) softcap_kernels(kb, Phase::Forward, probs);
  if (a.sinks) sink_kernels(kb, Phase::Forward, probs);
  // The softmax (with the scale and mask where a fused kernel folds them in). Autocast runs softmax in FP32:
  // op by op it first casts the scores up, a pass of its own (ATen fuses that cast only for a pure-FP16 input).
  const bool cast_up = casts_scores_up(st.context, e);
  if (cast_up) kb.stream(KernelClass::Elementwise, Phase::Forward, probs, (e + 4) / e, 0);
  kb.stream(KernelClass::Softmax, Phase::Forward, probs, cast_up ? 8 / e : fp32_probs ? (e + 4) / e : 2, 6);
  if (fp32_probs) kb.stream(KernelClass::Elementwise, Phase::Forward, probs, (4 + e) / e, 0);
  if (a.rate > 0) kb.stream(KernelClass::Elementwise, Phase::Forward, probs, 2 + 1 / e, 2);  // dropout + mask
  kb.gemm(Phase::Forward, c.s, c.dv, c.t, bh);                                               // P V
}

void attention_core_backward(const LayerStep& st, const AttentionCore& c, KernelBuilder& kb) {
  const LayerAttrs& a = st.a;
  const double e = st.e, bh = c.b * c.heads, probs = bh * c.s * c.t;
  if (fused_attention(st.context.attention)) {
    flash_attention(kb, Phase::Backward, st, c, e);
    return;
  }
  const bool fp32_probs = fp32_probabilities(st.context, e);
  kb.gemm(Phase::Backward, c.s, c.t, c.dv, bh);  // dP = dO V^T
  kb.gemm(Phase::Backward, c.t, c.dv, c.s, bh);  // dV = P^T dO
  if (a.rate > 0) kb.stream(KernelClass::Elementwise, Phase::Backward, probs, 2 + 1 / e, 1);
  if (fp32_probs) kb.stream(KernelClass::Elementwise, Phase::Backward, probs, (e + 4) / e, 0);
  const bool cast_up = casts_scores_up(st.context, e);
  kb.stream(KernelClass::Softmax, Phase::Backward, probs, cast_up ? 12 / e : fp32_probs ? (8 + e) / e : 3, 4);
  if (cast_up) kb.stream(KernelClass::Elementwise, Phase::Backward, probs, (4 + e) / e, 0);
  if (a.sinks) sink_kernels(kb, Phase::Backward, probs);
  if (a.softcap > 0) softcap_kernels(kb, Phase::Backward, probs);
  if (!st.context.fuses_pointwise()) op_by_op_scale_and_mask(kb, Phase::Backward, a, probs);
  kb.gemm(Phase::Backward, c.s, c.dk, c.t, bh);  // dQ = dS K
  kb.gemm(Phase::Backward, c.t, c.dk, c.s, bh);  // dK = dS^T Q
}

bool attention_recomputed_by_ops(const Kernel& k, const KernelContext& context) {
  if (k.cls == KernelClass::BatchedGemm) return !fused_attention(context.attention);
  return k.cls != KernelClass::Gemm;
}

double attention_ops_kept_bytes(const Kernel& k, double e, const KernelContext& context) {
  // The fused kernel writes O (s x dv per head; dv = dk, Hugging Face pads MLA's values) and the statistics.
  if (k.cls == KernelClass::BatchedGemm && fused_attention(context.attention)) return k.batch * k.m * (e * k.k + 4);
  return e * k.batch * k.m * k.n;
}

bool fp32_probabilities(const KernelContext& context, double e) {
  return !fused_attention(context.attention) && context.kernels != KernelSet::Megatron && e < 4;
}

double attention_score_bytes(const LayerAttrs& a, double probs, double e, const KernelContext& context) {
  if (fused_attention(context.attention)) return 0;
  // Korthikanti et al. (16-bit probabilities): the softmax output, and with dropout its mask and output.
  // Autocast's FP32 softmax: its output (saved by its backward), then the cast for PV, or the dropout's.
  // Eager soft-capping also keeps tanh's output for its backward. All at the dense s x t size: the eager
  // path materialises every score and masks by addition.
  const double dropout = a.rate > 0 ? probs * (1 + e) : 0;
  const double softcap = a.softcap > 0 ? e * probs : 0;
  if (fp32_probabilities(context, e)) return 4 * probs + (a.rate > 0 ? dropout : e * probs) + softcap;
  return e * probs + dropout + softcap;
}

}  // namespace prenet
