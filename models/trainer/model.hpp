#pragma once
// Regressors compared per class: ridge linear regression and an MLP (Eigen), gradient-boosted trees and
// a random forest (XGBoost). Each exports itself as ONNX nodes.
#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace onnx {
class GraphProto;
}

namespace trainer {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXd;

/// Training effort; quick mode trades accuracy for a test-sized run.
struct ModelOptions {
  bool quick = false;
  std::uint64_t seed = 42;
  int threads = 2;
  // Per input feature: 1 = the fitted function must never decrease in it, 0 = free. Only "mono_mlp"
  // reads it (and needs it); empty for every other kind.
  std::vector<int> monotone;
};

class Model {
 public:
  virtual ~Model() = default;
  /// "linear", "gbdt", "random_forest", "mlp" or "mono_mlp".
  virtual std::string kind() const = 0;
  /// Fits y ~ X; (x_val, y_val) may be empty and is used only for early stopping.
  virtual void fit(const Matrix& x, const Vector& y, const Matrix& x_val, const Vector& y_val) = 0;
  virtual Vector predict(const Matrix& x) const = 0;
  /// Appends nodes (and initializers) computing `output` [N, 1] from `input` [N, features] as float32.
  virtual void to_onnx(onnx::GraphProto& graph, const std::string& input, const std::string& output) const = 0;
  /// The ONNX opsets the nodes need: 0 = default domain only, 1 = also ai.onnx.ml.
  virtual bool needs_ml_domain() const { return false; }
};

const std::vector<std::string>& model_kinds();
/// A fresh, unfitted model of `kind`; throws std::invalid_argument for an unknown kind.
std::unique_ptr<Model> make_model(const std::string& kind, const ModelOptions& options);

/// Per-column mean and standard deviation, for models that need standardised inputs.
struct Standardizer {
  Vector mean, scale;
  static Standardizer fit(const Matrix& x);
  Matrix apply(const Matrix& x) const;
};

/// A small portable pseudo-random generator (SplitMix64) so runs are identical on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  double uniform();  // [0, 1)
  double normal();   // N(0, 1), Box-Muller
  /// A permutation of 0..n-1 (Fisher-Yates with this generator).
  std::vector<std::size_t> permutation(std::size_t n);

 private:
  std::uint64_t state_;
};

}  // namespace trainer
