// embedding: a table of vocab_size rows of width dim, indexed by token id or (positional) by position, or
// (tied_to) another embedding's table; token tables shard by vocabulary rows over the tensor group.
#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

class Embedding : public LayerKind {
 public:
  Embedding() : LayerKind(LayerType::Embedding, "embedding") {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    reject_unknown_keys(spec, path, common_keys({"vocab_size", "dim", "positional"}));
    LayerAttrs a;
    a.vocab_size = require_int(spec, "vocab_size", path, 1, Limits::kMaxDim);
    a.dim = require_int(spec, "dim", path, 1, Limits::kMaxDim);
    a.positional = get_bool(spec, "positional", path, false);
    return a;
  }

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    const Shape& in = layer.input_shapes.front();
    const LayerAttrs& a = layer.attrs;
    // A positional table only needs the sequence length, so it may read a [seq_len, features] stream too.
    if (!(a.positional && in.size() == 2)) {
      require_rank(in, 1, path, "embedding expects token ids of shape [seq_len]");
    }
    if (a.positional && in[0] > a.vocab_size) {
      throw InputError(path, "sequence length " + std::to_string(in[0]) + " exceeds the " +
                                 std::to_string(a.vocab_size) + " positions this embedding holds");
    }
    layer.output_shape = {in[0], a.dim};
    // A tied table (multi-token prediction's lookup, model/mtp.cpp) is its embedding's: no parameters of its own.
    layer.parameters = a.tied_to.empty() ? params_of({a.vocab_size, a.dim}, path) : 0;
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    double tokens = st.b * d(st.in[0]);
    double table = d(st.a.vocab_size * st.a.dim);
    kb.stream(KernelClass::Embedding, Phase::Forward, st.out_elems, 2, 0);
    // Dense gradients (PyTorch's default): zero the whole table gradient (FP32), then scatter-add.
    kb.stream(KernelClass::Elementwise, Phase::Backward, table, 1, 0, 4.0);
    kb.stream(KernelClass::Embedding, Phase::Backward, st.out_elems, 2, 1);
    lw.saved_activation_bytes = 8 * tokens;
  }

  double prenet_co(const Layer& layer, double b) const override {
    return b * d(layer.input_shapes.front()[0]) * d(layer.attrs.dim);
  }

  /// Token embeddings are split by vocabulary rows; small tables (positions, buckets) stay whole.
  void shard(ShardStep& s) const override {
    Layer& L = s.shard.net.layers[s.l];
    LayerAttrs& a = L.attrs;
    if (a.positional || a.vocab_size < 1000) return;
    a.vocab_size = ceil_div(a.vocab_size, s.t);
    L.parameters = a.tied_to.empty() ? a.vocab_size * a.dim : 0;
    ShardLayer& sl = s.shard.layers[s.l];
    sl.forward_allreduces = 1;
    sl.allreduce_bytes_per_sample = d(elements(L.output_shape));
    s.roles[s.l] = kScattersOutput;
  }
};

}  // namespace

const LayerKind& embedding_kind() {
  static const Embedding kind;
  return kind;
}

}  // namespace prenet
