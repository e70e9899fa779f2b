// dense: a matrix over the last dimension, optionally gated (GLU), a mixture of experts, or tied to an
// embedding's matrix; an MLP's pair of dense layers and the vocabulary head shard over the tensor group.
#include <cmath>

#include "layers/kind_helpers.hpp"
#include "layers/moe.hpp"

namespace prenet {
namespace {

/// The dense layer that maps layer s.l's `units`-wide output back to its input width k through a chain of
/// passthrough layers (an MLP's second matrix), and that chain; nullopt when there is none.
std::optional<std::size_t> mlp_partner(const ShardStep& s, std::int64_t k, std::int64_t units,
                                       std::vector<std::size_t>& chain) {
  std::size_t cur = s.l;
  while (s.consumers[cur].size() == 1) {
    std::size_t next = s.consumers[cur][0];
    const Layer& nl = s.net.layers[next];
    if (nl.inputs.size() != 1) break;
    if (nl.type == LayerType::Dense) {
      if (nl.attrs.tied_to.empty() && nl.attrs.units == k && nl.input_shapes.front().back() == units) return next;
      break;
    }
    if (!kind_of(nl.type).passthrough()) break;
    chain.push_back(next);
    cur = next;
  }
  return std::nullopt;
}

class Dense : public LayerKind {
 public:
  Dense() : LayerKind(LayerType::Dense, "dense") {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    reject_unknown_keys(spec, path,
                        common_keys({"units", "bias", "activation", "tied_to", "gated", "experts", "top_k", "glu_limit",
                                     "glu_offset"}));
    LayerAttrs a;
    a.units = require_int(spec, "units", path, 1, Limits::kMaxDim);
    a.bias = get_bool(spec, "bias", path, true);
    a.activation = get_enum(spec, "activation", path, "none", activation_names());
    a.tied_to = get_string(spec, "tied_to", path, "");
    a.gated = get_bool(spec, "gated", path, false);
    a.experts = get_int(spec, "experts", path, 1, 1, 1 << 16);
    a.top_k = get_int(spec, "top_k", path, 1, 1, a.experts);
    a.glu_limit = get_number(spec, "glu_limit", path, 0.0, 0.0, 1e9);
    a.glu_offset = get_number(spec, "glu_offset", path, 0.0, -1e9, 1e9);
    for (const char* key : {"glu_limit", "glu_offset"}) {
      if (!a.gated && spec.contains(key) && !spec[key].is_null()) {
        throw InputError(join(path, key), "belongs to a gated (GLU) layer; set \"gated\": true");
      }
    }
    if (!a.tied_to.empty() && (a.gated || a.experts > 1)) {
      throw InputError(join(path, "tied_to"), "a gated or mixture-of-experts dense layer cannot be tied");
    }
    return a;
  }

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    const LayerAttrs& a = layer.attrs;
    std::int64_t width = last_dim(layer, path);
    layer.output_shape = layer.input_shapes.front();
    layer.output_shape.back() = a.units;
    std::int64_t mats = a.gated ? 2 : 1;
    layer.parameters = a.tied_to.empty() ? params_of({a.experts, mats, width + (a.bias ? 1 : 0), a.units}, path)
                                         : (a.bias ? a.units : 0);
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    const LayerAttrs& a = st.a;
    const double e = st.e, act = st.act;
    const std::optional<OpChain>& composed = st.composed;
    // Mixture of experts (layers/moe.cpp): every token runs through top_k of the experts; this GPU holds
    // experts / expert_shards of them, each a GEMM of a grouped GEMM (modelled as a batched GEMM over them, so
    // all their weights are read) at tokens_per_local_expert; gated (GLU) layers have two matrices.
    const double m = rows(st.in, st.b), n = d(a.units), k = d(st.in.back());
    const double routed = m * d(a.top_k), mats = a.gated ? 2 : 1;
    const bool moe = a.experts > 1;
    const double local_experts = moe ? d(a.experts) / d(a.expert_shards) : 1;
    const double per_expert = moe ? tokens_per_local_expert(routed, a.experts, a.expert_shards, st.context) : m;
    const double local_rows = per_expert * local_experts;  // == m for an ordinary dense layer
    const double hidden = local_rows * n;                  // == out_elems for an ordinary dense layer
    // The rows cuBLAS reads and writes in all three GEMMs are d_in and d_out long (PyTorch's row-major
    // weight and activations), never the token count. Grouped expert GEMMs were not measured: unmarked.
    kb.set_misaligned(!moe && (std::fmod(k * e, 16.0) != 0 || std::fmod(n * e, 16.0) != 0));
    kb.set_grouped(moe);
    if (st.moe.dispatches) {
      // The router's softmax, top-k and load-balancing loss, then the permutation gathering each token's
      // top_k copies (Megatron's permute: read and write tokens x top_k x hidden).
      router_kernels(kb, m, d(a.experts), d(a.top_k));
      kb.stream(KernelClass::Elementwise, Phase::Forward, routed * k, 2, 0);
    }
    // chunked_ce: the vocabulary head runs per chunk of the tokens (torchtune's recipes pass the model's
    // output chunks to CEWithChunkedOutputLoss): the same FLOPs in loss_chunks GEMMs, each reading the weight.
    const double chunks = st.feeds_loss ? st.context.loss_chunks : 1;
    for (double c = 0; c < chunks; ++c) kb.gemm(Phase::Forward, per_expert / chunks, mats * n, k, local_experts);
    // Biased experts. Hugging Face's GptOssExperts writes `x @ W + b`: the add is a kernel of its own (Inductor
    // fuses it into the next pointwise kernel). Megatron's grouped GEMM (TE GroupedLinear) adds fc1's in its
    // epilogue and reduces its gradient in the weight-gradient GEMM; fc2's is added expert by expert after it.
    const bool megatron = st.context.kernels == KernelSet::Megatron;
    if (moe && a.bias && !megatron && !st.context.compiled) {
      kb.stream(KernelClass::Elementwise, Phase::Forward, hidden * mats, 3, 1);
    }
    kb.set_part(KernelPart::Activation);
    activation_kernels(st, kb, hidden);
    kb.set_part(KernelPart::Other);
    if (moe && a.bias && megatron && st.moe.combines) megatron_expert_bias(kb, hidden, local_rows, local_experts, e);
    if (st.moe.combines) {  // un-permute: weighted sum of each token's top_k expert outputs, and its gradient
      const double out_elems = st.out_elems, routed_out = routed * n;
      kb.stream(KernelClass::Elementwise, Phase::Forward, routed_out + out_elems, 1,
                2 * routed_out / (routed_out + out_elems));
      kb.stream(KernelClass::Elementwise, Phase::Backward, routed_out + out_elems, 2,
                2 * routed_out / (routed_out + out_elems));
    }
    for (double c = 0; st.dx && c < chunks; ++c)
      kb.gemm(Phase::Backward, per_expert / chunks, k, mats * n, local_experts);
    if (st.dx && st.moe.dispatches)
      kb.stream(KernelClass::Elementwise, Phase::Backward, routed * k, 2, 1);  // scatter back
    // Weight gradient; tied layers accumulate into the embedding's.
    for (double c = 0; c < chunks; ++c) kb.weight_gradient(k, mats * n, per_expert / chunks, local_experts);
    if (a.bias && !(moe && megatron))
      kb.add_weight_gradient(stream_kernel(KernelClass::Elementwise, Phase::Backward, hidden * mats, 1, 1, e));
    // Per element of hidden: what the activation saves, and for a gated layer the product's two factors,
    // up and the activation's output (in the chain's type for a chain); Megatron's fused GLU keeps only
    // its input, gate and up.
    const double act_saved = composed ? composed->saved : act > 0 ? e : 0;
    const double gate_saved = !a.gated ? 0 : fused_glu(st.context) ? e : e + (composed ? composed->output : e);
    // The input is kept for the weight gradient only (autograd saves nothing for a frozen weight's).
    lw.saved_activation_bytes = (st.frozen ? 0 : e * local_rows * k) + hidden * (act_saved + gate_saved);
    // A routing layer keeps the permuted copy of its tokens, not the tensor it reads.
    lw.saved_input_bytes = st.frozen || st.moe.dispatches ? 0 : e * local_rows * k;
    // Clamped apart, gate and up are kept twice: the clamps save their input, the GLU its clamped copy.
    if (clamps_apart(st)) lw.saved_activation_bytes += 2 * e * hidden;
    if (st.moe.dispatches) lw.saved_activation_bytes += e * m * d(a.experts);  // the router's scores, for its backward
    kb.set_misaligned(false);
    kb.set_grouped(false);
  }

  double prenet_co(const Layer& layer, double b) const override {
    const Shape& in = layer.input_shapes.front();
    return 2 * rows(in, b) * d(in.back()) * d(layer.attrs.units);  // the reference code's 2*b*d_in*d_out
  }
  /// Its matrix (a gated layer's gate and up), per expert; an ungated one's role is decided by its place. A
  /// tied head's is the embedding's matrix, which LoRA may adapt like any other.
  std::vector<LinearModule> linear_modules(const Layer& layer) const override {
    const LayerAttrs& a = layer.attrs;
    const Shape& in = layer.input_shapes.front();
    const double routed = rows(in, 1) * d(a.top_k), k = d(in.back()), n = d(a.units);
    const double copies = d(a.experts / a.expert_shards);
    if (a.gated) return {{"gate_proj", k, n, copies, routed, 0}, {"up_proj", k, n, copies, routed, 0}};
    return {{"", k, n, copies, routed, 0}};
  }
  /// A mixture of experts: a token runs through top_k of the `experts` copies of the matrices and biases.
  std::int64_t active_parameters(const Layer& layer) const override {
    const LayerAttrs& a = layer.attrs;
    return a.experts > 1 ? layer.parameters / (a.experts / a.expert_shards) * a.top_k : layer.parameters;
  }
  bool saves_input() const override { return true; }
  bool saves_output_only_for_relu(const Layer& layer) const override {
    return layer.attrs.activation == "relu" && !layer.attrs.gated && layer.attrs.experts <= 1;
  }

  /// Megatron's MLP: the first matrix column-parallel, the second (found from the first) row-parallel;
  /// the layer before a cross-entropy loss vocabulary-parallel.
  void shard(ShardStep& s) const override {
    Layer& L = s.shard.net.layers[s.l];
    ShardLayer& sl = s.shard.layers[s.l];
    LayerAttrs& a = L.attrs;
    if (a.experts > 1 && s.whole_experts) return;  // replicated over the tensor group, sequence-split by SP
    const std::int64_t k = L.input_shapes.front().back();
    const std::int64_t mats = a.gated ? 2 : 1;
    if (s.row[s.l]) {  // second matrix of an MLP: input split, output summed over the group
      L.parameters = a.experts * mats * k * a.units + (a.bias ? a.experts * mats * a.units : 0);
      sl.forward_allreduces = 1;
      sl.allreduce_bytes_per_sample = d(elements(L.output_shape));
      s.roles[s.l] = kScattersOutput;
      return;
    }
    std::vector<std::size_t> chain;
    const std::optional<std::size_t> partner = mlp_partner(s, k, a.units, chain);
    const auto& consumers = s.consumers[s.l];
    const bool head = consumers.size() == 1 && s.net.layers[consumers[0]].type == LayerType::CrossEntropy;
    if (partner && a.tied_to.empty()) {
      std::int64_t units = split_evenly(a.units, s.t, L, "units");
      a.units = units;
      L.output_shape.back() = units;
      L.parameters = a.experts * mats * (k + (a.bias ? 1 : 0)) * units;
      for (std::size_t c : chain) {
        Layer& cl = s.shard.net.layers[c];
        cl.input_shapes.front().back() = units;
        cl.output_shape.back() = units;
        s.roles[c] = kInner;
      }
      s.shard.net.layers[*partner].input_shapes.front().back() = units;
      s.row[*partner] = true;
    } else if (head) {
      // Vocabulary-parallel output layer; Megatron pads the vocabulary to a multiple of the group.
      std::int64_t units = ceil_div(a.units, s.t);
      a.units = units;
      L.output_shape.back() = units;
      L.parameters = a.tied_to.empty() ? a.experts * mats * (k + (a.bias ? 1 : 0)) * units : (a.bias ? units : 0);
      s.shard.net.layers[consumers[0]].input_shapes.front().back() = units;
    } else {
      return;
    }
    sl.backward_allreduces = L.needs_input_grad ? 1 : 0;
    sl.allreduce_bytes_per_sample = d(elements(L.input_shapes.front()));
    s.roles[s.l] = kGathersInput;
  }
  bool token_wise() const override { return true; }
  double saved_input_copies(const Layer& layer) const override { return d(layer.attrs.top_k); }
  /// moe_act: an expert layer's activation (Megatron-Core's TEGroupedMLP under CheckpointWithoutOutput).
  bool recomputed_selectively(const Layer& layer, const Kernel& k, const KernelContext&,
                              RecomputeModule module) const override {
    return module == RecomputeModule::MoeAct && layer.attrs.experts > 1 && k.part == KernelPart::Activation;
  }
  /// moe_act keeps the activation's input (fc1's output, counted as gate and up); what gpt-oss's separate clamps
  /// save beside it, 2e per hidden element, is recomputed instead.
  double selective_dropped_bytes(const Layer& layer, double b, double e, const KernelContext& context,
                                 RecomputeModule module) const override {
    const LayerAttrs& a = layer.attrs;
    if (module != RecomputeModule::MoeAct || a.experts <= 1 || !clamps_apart(a, context)) return 0.0;
    const double routed = rows(layer.input_shapes.front(), b) * d(a.top_k);
    const double per_expert = tokens_per_local_expert(routed, a.experts, a.expert_shards, context);
    return 2 * e * per_expert * d(a.experts) / d(a.expert_shards) * d(a.units);
  }

 private:
  /// Whether a GLU's activation and product run as one kernel each way saving only gate and up: Megatron's
  /// fused SwiGLU, or torch.compile (Inductor fuses the pointwise ops; its min-cut partitioner recomputes
  /// the activation in backward rather than saving it).
  static bool fused_glu(const KernelContext& context) { return context.fuses_pointwise(); }
  /// Whether gpt-oss's clamps (glu_limit) run as kernels of their own: before Megatron's fused quick-GEGLU
  /// (fused_bias_geglu.py weighted_bias_quick_geglu_impl) and in PyTorch eager; torch.compile fuses them.
  static bool clamps_apart(const LayerStep& st) { return clamps_apart(st.a, st.context); }
  static bool clamps_apart(const LayerAttrs& a, const KernelContext& context) {
    return a.gated && a.glu_limit > 0 && (context.kernels == KernelSet::Megatron || !context.compiled);
  }
  /// The two clamps over the `hidden` elements of gate and of up (the gate's from above, up's both sides).
  static void clamp_forward(KernelBuilder& kb, double hidden) {
    kb.stream(KernelClass::Elementwise, Phase::Forward, hidden, 2, 1);
    kb.stream(KernelClass::Elementwise, Phase::Forward, hidden, 2, 2);
  }
  /// PyTorch's clamp_backward (torch/csrc/autograd/FunctionsManual.cpp) on each half: a 1-byte mask per bound
  /// (`self <= max`; up's `self >= min` and `self <= max` joined by an in-place logical_and_), then
  /// where(mask, grad, 0).
  static void clamp_backward(KernelBuilder& kb, double hidden, double e) {
    kb.chain(Phase::Backward, hidden, {e + 1, 2 * e + 1, e + 1, e + 1, 3, 2 * e + 1});
  }
  /// gpt-oss's GLU as Hugging Face's GptOssExperts writes it in training: gate and up strided views of the one
  /// gate_up product (`[..., ::2]`, `[..., 1::2]`), each clamped, glu = the activation's chain on gate,
  /// (up + offset) * glu; backward, the product's two terms, the chain's, the clamps' and each slice's
  /// (slice_backward: zeros over gate_up and the gradient copied into its half), the two summed.
  static void eager_clamped_glu(const LayerStep& st, KernelBuilder& kb, double hidden) {
    const LayerAttrs& a = st.a;
    const double e = st.e, act = st.act;
    const std::optional<OpChain>& composed = st.composed;
    const double product = composed ? 2 * composed->output + e : 3 * e;
    if (a.glu_limit > 0) clamp_forward(kb, hidden);
    if (composed) kb.chain(Phase::Forward, hidden, composed->forward);
    if (!composed) kb.stream(KernelClass::Elementwise, Phase::Forward, hidden, 2, act);
    if (a.glu_offset != 0) kb.stream(KernelClass::Elementwise, Phase::Forward, hidden, 2, 1);
    kb.chain(Phase::Forward, hidden, {product});
    kb.chain(Phase::Backward, hidden, {product, product});
    if (composed) kb.chain(Phase::Backward, hidden, composed->backward);
    if (!composed) kb.stream(KernelClass::Elementwise, Phase::Backward, hidden, 3, 2 * act);
    if (a.glu_limit > 0) clamp_backward(kb, hidden, e);
    for (int half = 0; half < 2; ++half) {
      kb.stream(KernelClass::Elementwise, Phase::Backward, 2 * hidden, 1, 0);
      kb.stream(KernelClass::Elementwise, Phase::Backward, hidden, 2, 0);
    }
    kb.stream(KernelClass::Elementwise, Phase::Backward, 2 * hidden, 3, 1);
  }
  /// Megatron's fc2 bias (experts.py TEGroupedMLP._apply_bias; linear_fc2 has skip_bias_add): for each local
  /// expert, `t + b * p` on its rows (p its routing probabilities), then torch.cat. Each per-expert op is a kernel
  /// per local expert over its share of the `out` elements (so launches grow with the local experts, and the
  /// learned path times each as the small kernel it is); `rows` routed rows in all.
  static void megatron_expert_bias(KernelBuilder& kb, double out, double rows, double local_experts, double e) {
    const double each = out / local_experts;
    for (double x = 0; x < local_experts; ++x) {
      kb.stream(KernelClass::Elementwise, Phase::Forward, each, 1, 1);  // b * p, written
      kb.stream(KernelClass::Elementwise, Phase::Forward, each, 3, 1);  // t + b * p
    }
    kb.stream(KernelClass::Elementwise, Phase::Forward, out, 2, 0);  // cat
    // Backward of b * p: grad * p and its sum over the rows (b's gradient), grad * b and its sum over the width
    // (p's); the split's backward, a cat of the experts' gradients and one of p's, which autograd then adds to
    // the fused activation's gradient of the same probabilities.
    for (double x = 0; x < local_experts; ++x) {
      kb.add_weight_gradient(stream_kernel(KernelClass::Elementwise, Phase::Backward, each, 2, 1, e));
      kb.add_weight_gradient(stream_kernel(KernelClass::Elementwise, Phase::Backward, each, 1, 1, e));
      kb.stream(KernelClass::Elementwise, Phase::Backward, each, 2, 1);
      kb.stream(KernelClass::Elementwise, Phase::Backward, each, 1, 1);
    }
    kb.stream(KernelClass::Elementwise, Phase::Backward, out, 2, 0);
    kb.stream(KernelClass::Elementwise, Phase::Backward, rows, 2, 0);
    kb.stream(KernelClass::Elementwise, Phase::Backward, rows, 3, 1);
  }
  /// The fused activation over the `hidden` outputs (and a gated layer's product with up), both passes.
  static void activation_kernels(const LayerStep& st, KernelBuilder& kb, double hidden) {
    const LayerAttrs& a = st.a;
    const double e = st.e, act = st.act;
    const std::optional<OpChain>& composed = st.composed;
    if (a.gated && a.glu_limit > 0 && st.context.kernels == KernelSet::Megatron) {
      // chunk (a view), the clamps, torch.cat, the fused kernel on the cat; backward the fused kernel, the clamps'
      // (the cat's backward is two views) and the chunk's: a cat of the two gradients.
      clamp_forward(kb, hidden);
      kb.stream(KernelClass::Elementwise, Phase::Forward, 2 * hidden, 2, 0);
      kb.stream(KernelClass::Elementwise, Phase::Forward, hidden, 3, act + 1);
      kb.stream(KernelClass::Elementwise, Phase::Backward, hidden, 5, 2 * act + 2);
      clamp_backward(kb, hidden, e);
      kb.stream(KernelClass::Elementwise, Phase::Backward, 2 * hidden, 2, 0);
    } else if (a.gated && (a.glu_limit > 0 || a.glu_offset != 0) && !fused_glu(st.context)) {
      eager_clamped_glu(st, kb, hidden);
    } else if (a.gated && composed) {
      // The chain on the gate, then its product with up (both saved), in the chain's output type;
      // backward, the product's two terms, then the chain.
      const double product = 2 * composed->output + e;
      kb.chain(Phase::Forward, hidden, composed->forward);
      kb.chain(Phase::Forward, hidden, {product});
      kb.chain(Phase::Backward, hidden, {product, product});
      kb.chain(Phase::Backward, hidden, composed->backward);
    } else if (a.gated && fused_glu(st.context)) {  // one fused kernel each way, saving only its input (gate and up)
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
  }
};

}  // namespace

const LayerKind& dense_kind() {
  static const Dense kind;
  return kind;
}

}  // namespace prenet
