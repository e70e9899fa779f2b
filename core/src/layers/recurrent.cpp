// Recurrent layers over [seq_len, features]: rnn (one gate), lstm (four) and gru (three), stacked and
// optionally bidirectional, run as cuDNN does (one input GEMM, then a dependent loop over steps).
#include "layers/kind_helpers.hpp"

namespace prenet {
namespace {

class Recurrent : public LayerKind {
 public:
  /// `gates` weight blocks per cell for the shapes and kernels; `co_gates` in PreNeT's CO formula.
  Recurrent(LayerType type, const char* name, std::int64_t gates, double co_gates)
      : LayerKind(type, name), gates_(gates), co_gates_(co_gates) {}

  LayerAttrs parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const override {
    reject_unknown_keys(spec, path,
                        common_keys({"hidden_size", "num_layers", "bidirectional", "return_sequences", "bias"}));
    LayerAttrs a;
    a.hidden_size = require_int(spec, "hidden_size", path, 1, 1 << 20);
    a.num_layers = get_int(spec, "num_layers", path, 1, 1, 1024);
    a.bidirectional = get_bool(spec, "bidirectional", path, false);
    a.return_sequences = get_bool(spec, "return_sequences", path, true);
    a.bias = get_bool(spec, "bias", path, true);
    return a;
  }

  void infer(Layer& layer, bool /*same_padding*/, const std::string& path) const override {
    const Shape& in = layer.input_shapes.front();
    const LayerAttrs& a = layer.attrs;
    require_rank(
        in, 2, path,
        type() == LayerType::Rnn ? "rnn expects [seq_len, features]" : "recurrent layers expect [seq_len, features]");
    std::int64_t dirs = a.bidirectional ? 2 : 1;
    std::int64_t h = a.hidden_size;
    std::int64_t params = 0;
    for (std::int64_t l = 0; l < a.num_layers; ++l) {
      std::int64_t width = l == 0 ? in[1] : h * dirs;
      params += params_of({dirs, gates_ * h, width + h + (a.bias ? 2 : 0)}, path);
    }
    layer.parameters = params;
    layer.output_shape = a.return_sequences ? Shape{in[0], h * dirs} : Shape{h * dirs};
  }

  void kernels(const LayerStep& st, KernelBuilder& kb, LayerWork& lw) const override {
    const LayerAttrs& a = st.a;
    const double b = st.b, e = st.e;
    double gates = d(gates_);
    double dirs = a.bidirectional ? 2 : 1;
    double s = d(st.in[0]), h = d(a.hidden_size);
    for (std::int64_t l = 0; l < a.num_layers; ++l) {
      double din = l == 0 ? d(st.in[1]) : h * dirs;
      for (int dir = 0; dir < static_cast<int>(dirs); ++dir) {
        // cuDNN: one large GEMM for the input projection of all steps, then a dependent loop over steps.
        kb.gemm(Phase::Forward, b * s, gates * h, din, 1, KernelClass::Gemm);
        kb.recurrent(Phase::Forward, s, b, gates * h, h, b * gates * h);
        kb.recurrent(Phase::Backward, s, b, h, gates * h, b * gates * h);     // hidden-state gradient
        kb.gemm(Phase::Backward, gates * h, h, b * s, 1, KernelClass::Gemm);  // recurrent weight gradient
        if (st.dx || l > 0) kb.gemm(Phase::Backward, b * s, din, gates * h, 1, KernelClass::Gemm);
        kb.gemm(Phase::Backward, din, gates * h, b * s, 1, KernelClass::Gemm);  // input weight gradient
      }
      lw.saved_activation_bytes += e * b * s * dirs * h * (gates + 2);
    }
  }

  double prenet_co(const Layer& layer, double b) const override {
    const Shape& in = layer.input_shapes.front();
    const LayerAttrs& a = layer.attrs;
    double g = co_gates_;
    double dirs = a.bidirectional ? 2 : 1, h = d(a.hidden_size), s = d(in[0]);
    double co = 0;
    for (std::int64_t l = 0; l < a.num_layers; ++l) co += g * b * s * h * (h + (l == 0 ? d(in[1]) : h * dirs));
    return co * dirs;
  }

 private:
  std::int64_t gates_;
  double co_gates_;
};

}  // namespace

const LayerKind& rnn_kind() {
  // PreNeT's CO formula takes g = 2 for a plain cell.
  static const Recurrent kind(LayerType::Rnn, "rnn", 1, 2);
  return kind;
}

const LayerKind& lstm_kind() {
  static const Recurrent kind(LayerType::Lstm, "lstm", 4, 4);
  return kind;
}

const LayerKind& gru_kind() {
  static const Recurrent kind(LayerType::Gru, "gru", 3, 3);
  return kind;
}

}  // namespace prenet
