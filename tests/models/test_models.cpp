#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "trainer/evaluation.hpp"
#include "trainer/model.hpp"

using trainer::Matrix;
using trainer::Vector;

namespace {

/// n rows of 3 features in [0, 1) from a fixed generator.
Matrix features(std::size_t n, std::uint64_t seed) {
  trainer::Rng rng(seed);
  Matrix x(static_cast<Eigen::Index>(n), 3);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = rng.uniform();
  return x;
}

double rms(const Vector& a, const Vector& b) { return std::sqrt((a - b).squaredNorm() / static_cast<double>(a.size())); }

}  // namespace

TEST_CASE("Linear regression recovers an exact linear relation", "[trainer][models]") {
  Matrix x = features(400, 1);
  Vector y = (2.0 * x.col(0).array() - 3.0 * x.col(1).array() + 0.5).matrix();
  auto model = trainer::make_model("linear", {});
  model->fit(x, y, Matrix(), Vector());
  CHECK(rms(model->predict(x), y) < 1e-3);
}

TEST_CASE("Trees and the MLP learn a nonlinear function well beyond the mean predictor", "[trainer][models]") {
  Matrix x = features(3000, 2);
  Vector y = (x.col(0).array() * 6.0).sin() + x.col(1).array().square();
  Matrix x_test = features(500, 3);
  Vector y_test = (x_test.col(0).array() * 6.0).sin() + x_test.col(1).array().square();
  double baseline = rms(Vector::Constant(y_test.size(), y.mean()), y_test);
  for (const char* kind : {"gbdt", "random_forest", "mlp"}) {
    trainer::ModelOptions options;
    options.quick = std::string(kind) != "mlp";  // the MLP needs its full epoch budget even here
    auto model = trainer::make_model(kind, options);
    model->fit(x, y, x_test, y_test);
    INFO(kind);
    CHECK(rms(model->predict(x_test), y_test) < 0.25 * baseline);
  }
}

TEST_CASE("Unknown model kinds are rejected", "[trainer][models]") {
  CHECK_THROWS_AS(trainer::make_model("svm", {}), std::invalid_argument);
  CHECK_THROWS_AS(trainer::make_model("mono_mlp", {}), std::invalid_argument);  // needs the per-feature flags
}

TEST_CASE("The monotone MLP fits a monotone function and never decreases in its flagged inputs", "[trainer][models]") {
  // Convex in x0 (a launch floor then slope 1, like log time vs log size), concave in x1, and an
  // arbitrary effect of the free input x2.
  auto f = [](const Matrix& x) {
    return Vector((x.col(0).array() * 4.0 - 2.0).exp().log1p() + (x.col(1).array() * 3.0).sqrt() +
                  (x.col(2).array() * 6.0).sin());
  };
  Matrix x = features(3000, 4), x_test = features(500, 5);
  Vector y = f(x), y_test = f(x_test);
  trainer::ModelOptions options;
  options.monotone = {1, 1, 0};
  auto model = trainer::make_model("mono_mlp", options);
  CHECK(model->kind() == "mono_mlp");
  model->fit(x, y, x_test, y_test);
  double baseline = rms(Vector::Constant(y_test.size(), y.mean()), y_test);
  CHECK(rms(model->predict(x_test), y_test) < 0.25 * baseline);
  // Raise x0 or x1 of every test row step by step, far past the training range too.
  for (Eigen::Index feature : {0, 1}) {
    Vector previous = model->predict(x_test);
    for (double step : {1e-6, 0.01, 0.3, 1.0, 10.0}) {
      Matrix grown = x_test;
      grown.col(feature).array() += step;
      Vector now = model->predict(grown);
      INFO("feature " << feature << " +" << step);
      CHECK((now.array() >= previous.array()).all());
      previous = now;
    }
  }
}

TEST_CASE("Metrics: RMSE in ms, mean and median absolute percentage error", "[trainer][metrics]") {
  Vector measured(4), predicted(4);
  measured << 1, 2, 4, 10;
  predicted << 1.1, 1.8, 4, 15;
  auto m = trainer::compute_metrics(measured, predicted);
  CHECK(m.n == 4);
  CHECK(m.rmse_ms == Approx(std::sqrt((0.01 + 0.04 + 0 + 25) / 4.0)));
  CHECK(m.mape == Approx((10.0 + 10.0 + 0.0 + 50.0) / 4.0));
  CHECK(m.mdape == Approx(10.0));
}

TEST_CASE("The seeded generator is portable: fixed first values and a true permutation", "[trainer][rng]") {
  trainer::Rng rng(42);
  CHECK(rng.next() == 13679457532755275413ull);
  auto p = trainer::Rng(7).permutation(100);
  std::vector<bool> seen(100, false);
  for (auto i : p) seen[i] = true;
  CHECK(std::all_of(seen.begin(), seen.end(), [](bool b) { return b; }));
}
