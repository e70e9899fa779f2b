// cross_entropy: the loss over logits in the last dimension, in FP32 whatever the training precision.
#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

class CrossEntropy : public LayerKind {
 public:
  CrossEntropy() : LayerKind(LayerType::CrossEntropy, "cross_entropy") {}

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    last_dim(layer, path);
    layer.output_shape = {};
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    const double e = st.e, in_elems = st.in_elems;
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
    // logits: 12 bytes per logit (docs/PREDICTION.md, Memory). Chunked (torchtune's
    // CEWithChunkedOutputLoss), autograd still keeps every chunk's FP32 log-probabilities, but each chunk's
    // backward runs alone: only one chunk's two FP32 gradients exist at the peak. The kernels above keep
    // their passes (the same elements in loss_chunks pieces).
    const double chunks = st.context.loss_chunks;
    lw.saved_activation_bytes = (4.0 + 8.0 / chunks) * in_elems;
    // Under torch.compile (training.compile_loss; torchtune's compile_loss compiles the upcast and cross-entropy of
    // each chunk): Inductor's min-cut partitioner (torch/_functorch/partitioners.py) saves the graph's input, the
    // 16-bit logits, and the per-row max and log-sum-exp, and recomputes the pointwise upcast and log-probabilities in
    // the fused backward, which writes the logits' gradient in their own type: per logit e saved, e for one chunk.
    if (st.context.compiled_loss) lw.saved_activation_bytes = e * (1.0 + 1.0 / chunks) * in_elems;
  }
};

}  // namespace

const LayerKind& cross_entropy_kind() {
  static const CrossEntropy kind;
  return kind;
}

}  // namespace prenet
