// contrastive_loss: the loss of CLIP and SigLIP over the micro-batch's image-text pairs (modeling_clip.py
// CLIPModel.forward and clip_loss, modeling_siglip.py SiglipModel.forward). Both embeddings are L2-normalised,
// every text is scored against every image of the micro-batch (one B x B x P GEMM), the scores are scaled by
// exp(logit_scale) (SigLIP: plus logit_bias), and the loss is "softmax": a cross-entropy over each row and each
// column (CLIP's InfoNCE), or "sigmoid": a log-sigmoid of every pair, +1 on the diagonal and -1 elsewhere (SigLIP).
// Unlike every other kind its work is not the same for each sample: B^2 scores, read from LayerStep::b (the
// micro-batch one GPU runs); per sample that is 2 B P FLOPs forward and 4 B P backward.
#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

/// The loss functions and their learned scalars (logit_scale; SigLIP's logit_bias).
struct LossFunction {
  const char* name;
  std::int64_t parameters;
};
constexpr LossFunction kFunctions[] = {{"softmax", 1}, {"sigmoid", 2}};

const LossFunction& function_named(const std::string& name, const std::string& path) {
  for (const LossFunction& f : kFunctions) {
    if (name == f.name) return f;
  }
  throw InputError(join(path, "loss"),
                   "expected \"softmax\" (CLIP) or \"sigmoid\" (SigLIP), got \"" + printable(name) + "\"");
}

class ContrastiveLoss : public LayerKind {
 public:
  ContrastiveLoss() : LayerKind(LayerType::ContrastiveLoss, "contrastive_loss") {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    reject_unknown_keys(spec, path, common_keys({"loss"}));
    LayerAttrs a;
    a.loss = function_named(get_string(spec, "loss", path, "softmax"), path).name;
    return a;
  }

  /// Two inputs, the image and the text embedding: one vector of the same width per sample each.
  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    if (layer.input_shapes.size() != 2) {
      throw InputError(join(path, "inputs"), "contrastive_loss reads two inputs: the image and the text embedding");
    }
    const std::int64_t width = last_dim(layer, path);
    for (const Shape& in : layer.input_shapes) {
      if (in.empty() || elements(in) != in.back() || in.back() != width) {
        throw InputError(join(path, "inputs"),
                         "contrastive_loss needs one embedding of the same width per sample "
                         "from each input, got " +
                             to_string(layer.input_shapes[0]) + " and " + to_string(layer.input_shapes[1]));
      }
    }
    layer.output_shape = {};
    layer.parameters = function_named(layer.attrs.loss, path).parameters;
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    const double b = st.b, p = d(st.in.back()), e = st.e;
    const double embedding = b * p, scores = b * b;
    const bool softmax = st.a.loss == "softmax";
    // x / x.norm(p=2, dim=-1, keepdim=True) for the image and the text embeddings: the norm, then the division.
    for (int side = 0; side < 2; ++side) {
      kb.stream(KernelClass::Normalization, Phase::Forward, embedding, 1, 2);
      kb.stream(KernelClass::Elementwise, Phase::Forward, embedding, 2, 1);
    }
    kb.gemm(Phase::Forward, b, b, p);                                                 // text_embeds @ image_embeds.t()
    kb.stream(KernelClass::Elementwise, Phase::Forward, scores, 2, 1);                // * logit_scale.exp()
    if (!softmax) kb.stream(KernelClass::Elementwise, Phase::Forward, scores, 2, 1);  // + logit_bias
    if (softmax) {
      // F.cross_entropy over the rows and over the columns (logits_per_image is the transpose), in FP32 as
      // autocast runs it, each as layers/cross_entropy.cpp costs one: upcast, log-softmax.
      for (int direction = 0; direction < 2; ++direction) {
        if (e < 4) kb.stream(KernelClass::Elementwise, Phase::Forward, scores, 1, 0, e + 4);
        kb.stream(KernelClass::Softmax, Phase::Forward, scores, 2, 6, 4);
      }
    } else {
      // -sum(logsigmoid(labels * logits)) with labels 2 eye - 1: the product, the log-sigmoid, the row sums.
      kb.stream(KernelClass::Elementwise, Phase::Forward, scores, 3, 1);
      kb.stream(KernelClass::Elementwise, Phase::Forward, scores, 2, 4);
      kb.stream(KernelClass::Elementwise, Phase::Forward, scores, 1, 1);
    }
    backward(st, kb, softmax, embedding, scores);
    // Kept for backward: both embeddings before and after the normalisation, the scores before the scale (its
    // gradient reads them) and the loss's own input: FP32 log-probabilities each way, or the signed scores.
    lw.saved_activation_bytes = 4 * embedding * e + scores * e + (softmax ? 2 * 4 * scores : scores * e);
  }

  /// PreNeT's CO: the similarity GEMM's operations, 2 B^2 P.
  double prenet_co(const Layer& layer, double b) const override {
    return 2 * b * b * d(layer.input_shapes.front().back());
  }

 private:
  /// The backward kernels mirroring the forward ones, down to the two embeddings' gradients.
  static void backward(const LayerStep& st, KernelBuilder& kb, bool softmax, double embedding, double scores) {
    const double b = st.b, p = d(st.in.back()), e = st.e;
    if (softmax) {
      for (int direction = 0; direction < 2; ++direction) {
        kb.stream(KernelClass::Elementwise, Phase::Backward, scores, 1, 0, 4);
        kb.stream(KernelClass::Softmax, Phase::Backward, scores, 3, 2, 4);
        if (e < 4) kb.stream(KernelClass::Elementwise, Phase::Backward, scores, 1, 0, 4 + e);
      }
      kb.stream(KernelClass::Elementwise, Phase::Backward, scores, 3, 1);  // the two directions' gradients summed
    } else {
      kb.stream(KernelClass::Elementwise, Phase::Backward, scores, 3, 4);  // log-sigmoid
      kb.stream(KernelClass::Elementwise, Phase::Backward, scores, 3, 1);  // the product with the labels
    }
    kb.stream(KernelClass::Elementwise, Phase::Backward, scores, 2, 1);  // through the scale
    // logit_scale's (and logit_bias's) gradient: a reduction over the scores and their gradient.
    kb.add_weight_gradient(stream_kernel(KernelClass::Elementwise, Phase::Backward, scores, 2, 2, e));
    if (!st.dx) return;
    kb.gemm(Phase::Backward, b, p, b);  // the texts' gradient: dS @ image_embeds
    kb.gemm(Phase::Backward, b, p, b);  // the images' gradient: dS.t() @ text_embeds
    for (int side = 0; side < 2; ++side) kb.stream(KernelClass::Elementwise, Phase::Backward, embedding, 4, 4);
  }
};

}  // namespace

const LayerKind& contrastive_loss_kind() {
  static const ContrastiveLoss kind;
  return kind;
}

}  // namespace prenet
