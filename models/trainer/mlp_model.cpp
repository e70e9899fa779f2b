#include <cmath>
#include <limits>

#include <onnx/onnx_pb.h>

#include "trainer/model.hpp"
#include "trainer/onnx_export.hpp"

namespace trainer {
namespace {

/// A ReLU multilayer perceptron trained with Adam on the mean squared error of standardised targets,
/// keeping the weights of the epoch with the lowest validation loss.
///
/// Monotone mode ("mono_mlp", options.monotone non-empty): non-decreasing in every input marked 1 by
/// construction. First-layer weights on those inputs and every later layer's weights are kept >= 0
/// (projected after each Adam step), and every activation is non-decreasing: half the units of a hidden
/// layer are convex (relu(z)), half concave (-relu(-z)), so that the net can bend both ways, as
/// log time does against log size (flat under launch overhead, then slope 1; efficiency saturating). A
/// composition of non-decreasing maps with non-negative weights is non-decreasing; standardisation
/// divides by positive scales. Inputs marked 0 enter the first layer with free weights.
/// The concave units export as plain Relu: their sign folds into the Gemms around them.
class MlpModel : public Model {
 public:
  explicit MlpModel(const ModelOptions& o) : options_(o), monotone_(!o.monotone.empty()) {}
  std::string kind() const override { return monotone_ ? "mono_mlp" : "mlp"; }

  void fit(const Matrix& x, const Vector& y, const Matrix& x_val, const Vector& y_val) override {
    std_ = Standardizer::fit(x);
    y_mean_ = y.mean();
    y_scale_ = std::sqrt((y.array() - y_mean_).square().mean());
    if (!(y_scale_ > 1e-12)) y_scale_ = 1.0;
    Matrix z = std_.apply(x);
    Vector t = (y.array() - y_mean_) / y_scale_;
    bool has_val = x_val.rows() > 0;
    Matrix z_val = has_val ? std_.apply(x_val) : Matrix();
    Vector t_val = has_val ? Vector((y_val.array() - y_mean_) / y_scale_) : Vector();

    init(static_cast<int>(x.cols()));
    // A column constant in training (e.g. the element size when every row is FP32, has_optimizer on
    // kernel timings) gets no gradient, so its random initial weights would shift every prediction for
    // a request where it differs; with zero weights the net reads such a request as the training value.
    for (Eigen::Index c = 0; c < x.cols(); ++c) {
      if (x.rows() > 0 && x.col(c).maxCoeff() == x.col(c).minCoeff()) layers_[0].w.col(c).setZero();
    }
    const int epochs = options_.quick ? 8 : 40;
    const Eigen::Index batch = 256;
    Rng rng(options_.seed ^ 0x6d6c70ull);
    std::vector<Layer> best = layers_;
    double best_loss = std::numeric_limits<double>::infinity();
    for (int epoch = 0; epoch < epochs; ++epoch) {
      auto order = rng.permutation(static_cast<std::size_t>(z.rows()));
      for (Eigen::Index start = 0; start < z.rows(); start += batch) {
        Eigen::Index n = std::min(batch, z.rows() - start);
        Matrix xb(n, z.cols());
        Vector yb(n);
        for (Eigen::Index i = 0; i < n; ++i) {
          auto src = static_cast<Eigen::Index>(order[static_cast<std::size_t>(start + i)]);
          xb.row(i) = z.row(src);
          yb(i) = t(src);
        }
        step(xb, yb);
      }
      double loss = has_val ? (forward(z_val) - t_val).squaredNorm() / static_cast<double>(t_val.size()) : 0.0;
      if (!has_val || loss < best_loss) {
        best_loss = loss;
        best = layers_;
      }
    }
    layers_ = best;
  }

  Vector predict(const Matrix& x) const override {
    return forward(std_.apply(x)).array() * y_scale_ + y_mean_;
  }

  void to_onnx(onnx::GraphProto& graph, const std::string& input, const std::string& output) const override {
    // Standardisation folds into the first Gemm, de-standardisation into the last.
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      Eigen::MatrixXd w = layers_[l].w;  // [out, in]
      Eigen::VectorXd b = layers_[l].b;
      // A concave unit -relu(-z): negate its row here (Relu sees -z) and its column in the next layer.
      if (l + 1 < layers_.size()) {
        w = signs_[l].asDiagonal() * w;
        b = b.cwiseProduct(signs_[l]);
      }
      if (l > 0) w = w * signs_[l - 1].asDiagonal();
      if (l == 0) {
        for (Eigen::Index c = 0; c < w.cols(); ++c) w.col(c) /= std_.scale(c);
        b -= w * std_.mean;
      }
      if (l + 1 == layers_.size()) {
        w *= y_scale_;
        b = (b.array() * y_scale_ + y_mean_).matrix();
      }
      std::string in = l == 0 ? input : "h" + std::to_string(l) + "_relu";
      std::string out = l + 1 == layers_.size() ? output : "h" + std::to_string(l + 1);
      add_gemm(graph, in, out, w, b, "layer" + std::to_string(l + 1));
      if (l + 1 < layers_.size()) {
        onnx::NodeProto* relu = graph.add_node();
        relu->set_op_type("Relu");
        relu->set_name("relu" + std::to_string(l + 1));
        relu->add_input(out);
        relu->add_output(out + "_relu");
      }
    }
  }

 private:
  struct Layer {
    Eigen::MatrixXd w;  // [out, in]
    Eigen::VectorXd b;
    Eigen::MatrixXd mw, vw;
    Eigen::VectorXd mb, vb;
    Eigen::MatrixXd lower;  // monotone mode: per-weight lower bound (0, or -inf for a free input)
  };

  void init(int inputs) {
    const std::vector<int> widths = {inputs, 64, 64, 32, 1};
    Rng rng(options_.seed);
    layers_.clear();
    signs_.clear();
    for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
      Layer layer;
      double he = std::sqrt(2.0 / widths[l]);
      layer.w = Eigen::MatrixXd(widths[l + 1], widths[l]);
      for (Eigen::Index i = 0; i < layer.w.size(); ++i) layer.w.data()[i] = rng.normal() * he;
      layer.b = Eigen::VectorXd::Zero(widths[l + 1]);
      layer.mw = layer.vw = Eigen::MatrixXd::Zero(layer.w.rows(), layer.w.cols());
      layer.mb = layer.vb = Eigen::VectorXd::Zero(layer.b.size());
      // Activation signs: +1 relu, -1 -relu(-z); all +1 outside monotone mode (the plain MLP).
      Eigen::VectorXd sign = Eigen::VectorXd::Ones(widths[l + 1]);
      if (monotone_) {
        layer.lower = Eigen::MatrixXd::Zero(layer.w.rows(), layer.w.cols());
        for (Eigen::Index c = 0; c < layer.w.cols(); ++c) {
          if (l == 0 && options_.monotone[static_cast<std::size_t>(c)] == 0) {
            layer.lower.col(c).setConstant(-std::numeric_limits<double>::infinity());
          }
        }
        // Constrained weights start positive with mean 1/fan-in: inputs that grow together (all size
        // features do) add up instead of cancelling, so a plain init would blow up layer by layer.
        for (Eigen::Index c = 0; c < layer.w.cols(); ++c) {
          if (l == 0 && options_.monotone[static_cast<std::size_t>(c)] == 0) continue;
          layer.w.col(c) = layer.w.col(c).cwiseAbs() * (1.0 / (he * 0.8 * widths[l]));
        }
        layer.w = layer.w.cwiseMax(layer.lower);
        for (Eigen::Index i = 1; i < sign.size(); i += 2) sign(i) = -1;
      }
      signs_.push_back(sign);
      layers_.push_back(layer);
    }
    steps_ = 0;
  }

  /// relu for sign +1 units, -relu(-z) for sign -1 units (column-wise signs).
  Eigen::MatrixXd activate(const Eigen::MatrixXd& z, const Eigen::VectorXd& sign) const {
    if (!monotone_) return z.cwiseMax(0.0);
    Eigen::MatrixXd a = z;
    for (Eigen::Index c = 0; c < a.cols(); ++c) {
      a.col(c) = sign(c) > 0 ? Eigen::VectorXd(z.col(c).cwiseMax(0.0)) : Eigen::VectorXd(z.col(c).cwiseMin(0.0));
    }
    return a;
  }

  Vector forward(const Matrix& z) const {
    Eigen::MatrixXd a = z;
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      a = (a * layers_[l].w.transpose()).rowwise() + layers_[l].b.transpose();
      if (l + 1 < layers_.size()) a = activate(a, signs_[l]);
    }
    return a.col(0);
  }

  void step(const Matrix& xb, const Vector& yb) {
    std::vector<Eigen::MatrixXd> acts = {xb};
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      Eigen::MatrixXd a = (acts.back() * layers_[l].w.transpose()).rowwise() + layers_[l].b.transpose();
      if (l + 1 < layers_.size()) a = activate(a, signs_[l]);
      acts.push_back(a);
    }
    Eigen::MatrixXd grad = (acts.back().col(0) - yb) * (2.0 / static_cast<double>(yb.size()));
    ++steps_;
    // The monotone net's projected steps learn more slowly; 3e-3 was picked on the mean leave-one-GPU-out
    // error of gemm and conv (1e-3 with 3x the epochs did as well, at 3x the time).
    const double lr = monotone_ ? 3e-3 : 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    double c1 = 1 - std::pow(beta1, steps_), c2 = 1 - std::pow(beta2, steps_);
    for (std::size_t l = layers_.size(); l-- > 0;) {
      Layer& layer = layers_[l];
      Eigen::MatrixXd gw = grad.transpose() * acts[l];
      Eigen::VectorXd gb = grad.colwise().sum().transpose();
      if (l > 0) {
        // The unit passed its input (slope 1) where its activation is non-zero, for either sign.
        grad = monotone_ ? Eigen::MatrixXd((grad * layer.w).array() * (acts[l].array() != 0).cast<double>())
                         : Eigen::MatrixXd((grad * layer.w).array() * (acts[l].array() > 0).cast<double>());
      }
      layer.mw = beta1 * layer.mw + (1 - beta1) * gw;
      layer.vw = beta2 * layer.vw + (1 - beta2) * gw.cwiseProduct(gw);
      layer.mb = beta1 * layer.mb + (1 - beta1) * gb;
      layer.vb = beta2 * layer.vb + (1 - beta2) * gb.cwiseProduct(gb);
      layer.w.array() -= lr * (layer.mw.array() / c1) / ((layer.vw.array() / c2).sqrt() + eps);
      layer.b.array() -= lr * (layer.mb.array() / c1) / ((layer.vb.array() / c2).sqrt() + eps);
      if (monotone_) layer.w = layer.w.cwiseMax(layer.lower);  // projection onto the monotone weights
    }
  }

  ModelOptions options_;
  bool monotone_ = false;
  std::vector<Eigen::VectorXd> signs_;  // per hidden layer: +1 convex unit, -1 concave unit
  Standardizer std_;
  double y_mean_ = 0, y_scale_ = 1;
  std::vector<Layer> layers_;
  int steps_ = 0;
};

}  // namespace

std::unique_ptr<Model> make_mlp_model(const ModelOptions& o) { return std::make_unique<MlpModel>(o); }

}  // namespace trainer
