// adaptive_softmax: the clustered output layer and loss of Grave et al. 2017: a head over the frequent
// words plus one logit per tail cluster, each tail scored only for the tokens whose target lies in it.
#include <cmath>

#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

/// Reads `cutoffs`: 1 to 64 increasing cluster boundaries below the vocabulary size.
std::vector<std::int64_t> parse_cutoffs(const Json& spec, const std::string& path, std::int64_t units) {
  if (!spec.contains("cutoffs")) throw InputError(join(path, "cutoffs"), "required array is missing");
  const Json& cutoffs = require_array(spec["cutoffs"], join(path, "cutoffs"));
  if (cutoffs.empty() || cutoffs.size() > 64)
    throw InputError(join(path, "cutoffs"), "expected 1 to 64 cluster boundaries");
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < cutoffs.size(); ++i) {
    std::int64_t c = element_int(cutoffs, i, join(path, "cutoffs"), 1);
    if (c >= units || (!out.empty() && c <= out.back())) {
      throw InputError(index(join(path, "cutoffs"), i),
                       "cutoffs must increase and stay below vocab_size (" + std::to_string(units) + ")");
    }
    out.push_back(c);
  }
  return out;
}

/// Reads the optional `tail_shares`: one share in [0, 1] per tail cluster, adding up to at most 1.
std::vector<double> parse_tail_shares(const Json& spec, const std::string& path, std::size_t clusters) {
  std::vector<double> out;
  if (!spec.contains("tail_shares")) return out;
  const Json& shares = require_array(spec["tail_shares"], join(path, "tail_shares"));
  if (shares.size() != clusters) {
    throw InputError(join(path, "tail_shares"),
                     "expected one share per tail cluster (" + std::to_string(clusters) + ")");
  }
  double sum = 0;
  for (std::size_t i = 0; i < shares.size(); ++i) {
    Json holder = {{"v", shares[i]}};
    double v = 0;
    try {
      v = get_number(holder, "v", "", 0.0, 0.0, 1.0);
    } catch (const InputError& e) {
      std::string message = e.what();
      throw InputError(index(join(path, "tail_shares"), i), message.substr(message.find(": ") + 2));
    }
    out.push_back(v);
    sum += v;
  }
  if (sum > 1.0) throw InputError(join(path, "tail_shares"), "the shares add up to more than 1");
  return out;
}

class AdaptiveSoftmax : public LayerKind {
 public:
  AdaptiveSoftmax() : LayerKind(LayerType::AdaptiveSoftmax, "adaptive_softmax") {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    reject_unknown_keys(spec, path, common_keys({"vocab_size", "cutoffs", "tied_to", "bias", "tail_shares"}));
    LayerAttrs a;
    a.units = require_int(spec, "vocab_size", path, 2, Limits::kMaxDim);
    a.tied_to = get_string(spec, "tied_to", path, "");
    a.bias = get_bool(spec, "bias", path, true);
    a.cutoffs = parse_cutoffs(spec, path, a.units);
    a.tail_shares = parse_tail_shares(spec, path, a.cutoffs.size());
    return a;
  }

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    // Output weights (vocab x D, unless tied to the embedding), their biases, and one weight row and bias per
    // tail cluster in the head (as PyTorch's ProjectedAdaptiveLogSoftmax with div_val 1 holds them).
    const LayerAttrs& a = layer.attrs;
    std::int64_t width = last_dim(layer, path);
    auto clusters = static_cast<std::int64_t>(a.cutoffs.size());
    layer.parameters = (a.tied_to.empty() ? params_of({a.units, width}, path) : 0) + (a.bias ? a.units : 0) +
                       params_of({clusters, width + 1}, path);
    layer.output_shape = {};
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    // Every token scores the head (the shortlist plus one logit per tail cluster); a tail cluster's words are
    // scored only for the tokens whose target lies in it (gathered rows), so the work follows the tail shares.
    const LayerAttrs& a = st.a;
    const double rows_n = rows(st.in, st.b), dim = d(st.in.back());
    const std::vector<double> shares = adaptive_softmax_tail_shares(a);
    const double head = d(a.cutoffs.front()) + d(static_cast<std::int64_t>(a.cutoffs.size()));
    const double slices = d(static_cast<std::int64_t>(a.cutoffs.size())) + 1;
    double saved = rows_n * dim + rows_n * head;
    kb.gemm(Phase::Forward, rows_n, head, dim);
    kb.stream(KernelClass::Softmax, Phase::Forward, rows_n * head, 2, 6);
    kb.stream(KernelClass::Softmax, Phase::Backward, rows_n * head, 2, 2);
    if (st.dx) kb.gemm(Phase::Backward, rows_n, dim, head);
    kb.gemm(Phase::Backward, dim, head, rows_n);
    for (std::size_t i = 0; i < a.cutoffs.size(); ++i) {
      const double lo = d(a.cutoffs[i]), hi = i + 1 < a.cutoffs.size() ? d(a.cutoffs[i + 1]) : d(a.units);
      const double tokens = rows_n * shares[i], size = hi - lo;
      if (tokens <= 0) continue;
      kb.stream(KernelClass::Elementwise, Phase::Forward, tokens * dim, 2, 0);  // index_select of the rows
      kb.gemm(Phase::Forward, tokens, size, dim);
      kb.stream(KernelClass::Softmax, Phase::Forward, tokens * size, 2, 6);
      kb.stream(KernelClass::Softmax, Phase::Backward, tokens * size, 2, 2);
      if (st.dx) kb.gemm(Phase::Backward, tokens, dim, size);
      if (st.dx) kb.stream(KernelClass::Elementwise, Phase::Backward, tokens * dim, 2, 1);  // scatter back
      kb.gemm(Phase::Backward, dim, size, tokens);
      saved += tokens * (dim + size);
    }
    // The clusters slice one weight matrix; each slice's backward writes a full-size zero-padded gradient
    // that autograd accumulates (PyTorch's slice_backward).
    kb.stream(KernelClass::Elementwise, Phase::Backward, d(a.units) * dim * slices, 3, 1);
    if (a.bias) kb.stream(KernelClass::Elementwise, Phase::Backward, rows_n * head, 1, 1);
    lw.saved_activation_bytes = st.e * saved;
  }

  /// The multiply-adds of the head and of the tails' gathered rows.
  double prenet_co(const Layer& layer, double b) const override {
    const Shape& in = layer.input_shapes.front();
    const LayerAttrs& a = layer.attrs;
    std::vector<double> shares = adaptive_softmax_tail_shares(a);
    double logits = d(a.cutoffs.front()) + d(static_cast<std::int64_t>(a.cutoffs.size()));
    for (std::size_t i = 0; i < a.cutoffs.size(); ++i) {
      double hi = i + 1 < a.cutoffs.size() ? d(a.cutoffs[i + 1]) : d(a.units);
      logits += shares[i] * (hi - d(a.cutoffs[i]));
    }
    return rows(in, b) * d(in.back()) * logits;
  }
};

}  // namespace

const LayerKind& adaptive_softmax_kind() {
  static const AdaptiveSoftmax kind;
  return kind;
}

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

}  // namespace prenet
