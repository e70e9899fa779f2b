#include <cmath>
#include <stdexcept>

#include <Eigen/Dense>
#include <onnx/onnx_pb.h>

#include "trainer/model.hpp"
#include "trainer/onnx_export.hpp"

namespace trainer {

std::uint64_t Rng::next() {
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

double Rng::normal() {
  double u1 = uniform(), u2 = uniform();
  return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * M_PI * u2);
}

std::vector<std::size_t> Rng::permutation(std::size_t n) {
  std::vector<std::size_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = i;
  for (std::size_t i = n; i > 1; --i) std::swap(p[i - 1], p[next() % i]);
  return p;
}

Standardizer Standardizer::fit(const Matrix& x) {
  Standardizer s;
  s.mean = x.colwise().mean().transpose();
  s.scale = ((x.rowwise() - s.mean.transpose()).array().square().colwise().mean()).sqrt().transpose();
  for (Eigen::Index i = 0; i < s.scale.size(); ++i) {
    if (!(s.scale(i) > 1e-12)) s.scale(i) = 1.0;  // constant columns pass through unscaled
  }
  return s;
}

Matrix Standardizer::apply(const Matrix& x) const {
  return (x.rowwise() - mean.transpose()).array().rowwise() / scale.transpose().array();
}

namespace {

/// Ridge regression on standardised features: w = (ZᵀZ + λI)⁻¹ Zᵀ(y - ȳ).
class LinearModel : public Model {
 public:
  std::string kind() const override { return "linear"; }

  void fit(const Matrix& x, const Vector& y, const Matrix&, const Vector&) override {
    std_ = Standardizer::fit(x);
    Matrix z = std_.apply(x);
    intercept_ = y.mean();
    Eigen::MatrixXd gram = z.transpose() * z;
    gram.diagonal().array() += 1e-6 * static_cast<double>(x.rows());
    weights_ = gram.ldlt().solve(z.transpose() * (y.array() - intercept_).matrix());
  }

  Vector predict(const Matrix& x) const override {
    return (std_.apply(x) * weights_).array() + intercept_;
  }

  void to_onnx(onnx::GraphProto& graph, const std::string& input, const std::string& output) const override {
    // Fold standardisation into one Gemm: y = x·(w/σ) + (b − μ·(w/σ)).
    Eigen::MatrixXd w = (weights_.array() / std_.scale.array()).matrix().transpose();  // [1, F]
    double bias = intercept_ - (std_.mean.array() * w.row(0).transpose().array()).sum();
    add_gemm(graph, input, output, w, Eigen::VectorXd::Constant(1, bias), "linear");
  }

 private:
  Standardizer std_;
  Vector weights_;
  double intercept_ = 0;
};

}  // namespace

std::unique_ptr<Model> make_linear_model() { return std::make_unique<LinearModel>(); }

}  // namespace trainer
