#include <cmath>
#include <limits>

#include <onnx/onnx_pb.h>

#include "trainer/model.hpp"
#include "trainer/onnx_export.hpp"

namespace trainer {
namespace {

/// A ReLU multilayer perceptron trained with Adam on the mean squared error of standardised targets,
/// keeping the weights of the epoch with the lowest validation loss.
class MlpModel : public Model {
 public:
  explicit MlpModel(const ModelOptions& o) : options_(o) {}
  std::string kind() const override { return "mlp"; }

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
  };

  void init(int inputs) {
    const std::vector<int> widths = {inputs, 64, 64, 32, 1};
    Rng rng(options_.seed);
    layers_.clear();
    for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
      Layer layer;
      double he = std::sqrt(2.0 / widths[l]);
      layer.w = Eigen::MatrixXd(widths[l + 1], widths[l]);
      for (Eigen::Index i = 0; i < layer.w.size(); ++i) layer.w.data()[i] = rng.normal() * he;
      layer.b = Eigen::VectorXd::Zero(widths[l + 1]);
      layer.mw = layer.vw = Eigen::MatrixXd::Zero(layer.w.rows(), layer.w.cols());
      layer.mb = layer.vb = Eigen::VectorXd::Zero(layer.b.size());
      layers_.push_back(layer);
    }
    steps_ = 0;
  }

  Vector forward(const Matrix& z) const {
    Eigen::MatrixXd a = z;
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      a = (a * layers_[l].w.transpose()).rowwise() + layers_[l].b.transpose();
      if (l + 1 < layers_.size()) a = a.cwiseMax(0.0);
    }
    return a.col(0);
  }

  void step(const Matrix& xb, const Vector& yb) {
    std::vector<Eigen::MatrixXd> acts = {xb};
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      Eigen::MatrixXd a = (acts.back() * layers_[l].w.transpose()).rowwise() + layers_[l].b.transpose();
      if (l + 1 < layers_.size()) a = a.cwiseMax(0.0);
      acts.push_back(a);
    }
    Eigen::MatrixXd grad = (acts.back().col(0) - yb) * (2.0 / static_cast<double>(yb.size()));
    ++steps_;
    const double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    double c1 = 1 - std::pow(beta1, steps_), c2 = 1 - std::pow(beta2, steps_);
    for (std::size_t l = layers_.size(); l-- > 0;) {
      Layer& layer = layers_[l];
      Eigen::MatrixXd gw = grad.transpose() * acts[l];
      Eigen::VectorXd gb = grad.colwise().sum().transpose();
      if (l > 0) {
        grad = (grad * layer.w).array() * (acts[l].array() > 0).cast<double>();
      }
      layer.mw = beta1 * layer.mw + (1 - beta1) * gw;
      layer.vw = beta2 * layer.vw + (1 - beta2) * gw.cwiseProduct(gw);
      layer.mb = beta1 * layer.mb + (1 - beta1) * gb;
      layer.vb = beta2 * layer.vb + (1 - beta2) * gb.cwiseProduct(gb);
      layer.w.array() -= lr * (layer.mw.array() / c1) / ((layer.vw.array() / c2).sqrt() + eps);
      layer.b.array() -= lr * (layer.mb.array() / c1) / ((layer.vb.array() / c2).sqrt() + eps);
    }
  }

  ModelOptions options_;
  Standardizer std_;
  double y_mean_ = 0, y_scale_ = 1;
  std::vector<Layer> layers_;
  int steps_ = 0;
};

}  // namespace

std::unique_ptr<Model> make_mlp_model(const ModelOptions& o) { return std::make_unique<MlpModel>(o); }

}  // namespace trainer
