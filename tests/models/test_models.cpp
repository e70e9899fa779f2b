#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "prenet/roofline.hpp"
#include "trainer/datasets.hpp"
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

/// `n` FP32 GEMM rows cycling through `gpus` and a few shapes, row i timed at factors[i % 3] x its roofline.
trainer::Dataset gemm_rows(const std::array<const char*, 3>& gpus, int n, const std::array<double, 3>& factors) {
  trainer::Dataset d{"gemm", "test", {}, {}};
  for (int i = 0; i < n; ++i) {
    trainer::Sample s;
    s.accelerator = &trainer::accelerator_for(gpus[static_cast<std::size_t>(i % 3)], "test");
    const double m = 64.0 * (1 + i % 7), nn = 128.0 * (1 + i % 5), k = 256.0 * (1 + i % 4);
    s.item = {prenet::gemm_kernel(prenet::Phase::Forward, m, nn, k, 1, 4)};
    s.time_ms = factors[static_cast<std::size_t>(i % 3)] * prenet::roofline_ms(s.item, *s.accelerator, s.precision);
    s.source = "test-" + std::to_string(i);
    d.samples.push_back(s);
  }
  return d;
}

double rms(const Vector& a, const Vector& b) {
  return std::sqrt((a - b).squaredNorm() / static_cast<double>(a.size()));
}

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

TEST_CASE("Validation GPUs are split off in order and scored as unseen: roofline, baseline and the shipped model",
          "[trainer][validation]") {
  // Every GPU at 2/3 of its roofline.
  const trainer::Dataset d = gemm_rows({"a100-pcie-40gb", "v100-pcie-32gb", "h200"}, 90, {1.5, 1.5, 1.5});
  const auto [held, train] = trainer::split_by_gpu(d, {"h200"});
  REQUIRE(held.samples.size() == 30);
  REQUIRE(train.samples.size() == 60);
  CHECK(held.samples.front().source == "test-2");
  CHECK(held.samples.back().source == "test-89");
  CHECK(train.gpus() == std::vector<std::string>{"a100-pcie-40gb", "v100-pcie-32gb"});

  trainer::ModelOptions options;
  options.quick = true;
  const trainer::Design all = trainer::build_design(train, prenet::FeatureSet::Roofline);
  std::vector<std::size_t> fit, val;
  for (std::size_t i = 0; i < train.samples.size(); ++i) (i % 10 == 0 ? val : fit).push_back(i);
  Matrix x_fit(static_cast<Eigen::Index>(fit.size()), all.x.cols());
  Vector y_fit(static_cast<Eigen::Index>(fit.size()));
  for (std::size_t i = 0; i < fit.size(); ++i) {
    x_fit.row(static_cast<Eigen::Index>(i)) = all.x.row(static_cast<Eigen::Index>(fit[i]));
    y_fit(static_cast<Eigen::Index>(i)) = all.target(static_cast<Eigen::Index>(fit[i]));
  }
  auto shipped = trainer::make_model("linear", options);
  shipped->fit(x_fit, y_fit, x_fit, y_fit);

  auto scores =
      trainer::score_validation(train, held, fit, val, *shipped, prenet::FeatureSet::Roofline, x_fit, options);
  REQUIRE(scores.size() == 1);
  const auto& h200 = scores.at("h200");
  CHECK(h200.at("shipped").n == 30);
  CHECK(h200.at("roofline alone").mdape == Approx(100.0 / 3.0).epsilon(1e-6));  // 1 - 1/1.5 of the time
  CHECK(h200.at("shipped").mdape < 0.5);  // a constant ratio to the roofline carries over exactly
  CHECK(h200.count("mlp baseline") == 1);
  CHECK(trainer::score_validation(train, trainer::Dataset{"gemm", "", {}, {}}, fit, val, *shipped,
                                  prenet::FeatureSet::Roofline, x_fit, options)
            .empty());
}

TEST_CASE("Seen GPUs are scored with their own level that a held-out GPU cannot have", "[trainer][experiment]") {
  // Two GPUs at 2/3 of their roofline, the T4 at 1/3: a factor only its own rows reveal.
  const trainer::Dataset d = gemm_rows({"a100-pcie-40gb", "v100-pcie-32gb", "t4"}, 180, {1.5, 1.5, 3.0});
  trainer::ExperimentOptions options;
  options.model.quick = true;
  options.min_rows_to_hold_out = 30;
  const trainer::Experiment e = trainer::run_experiment(d, options);
  for (const auto& kind : trainer::model_kinds()) REQUIRE(e.seen_by_gpu.at(kind).size() == 3);
  const trainer::Metrics& seen = e.seen_by_gpu.at("linear").at("t4");
  CHECK(seen.n > 0);
  CHECK(seen.n < 60);  // only the random split's test rows
  CHECK(seen.mdape < 1.0);
  CHECK(e.logo.at("linear").at("roofline").at("t4").mdape > 30.0);
  // Held out, the chosen model misses the T4 by its factor alone: removing the T4's own offset leaves ~0.
  CHECK(e.logo.at(e.chosen_model).at("roofline").at("t4").mdape > 30.0);
  CHECK(e.logo_own_level.at("t4").mdape < 1.0);
}

TEST_CASE("Calibration-only rows set the levels their GPU and precision lack, and nothing else", "[trainer][levels]") {
  // Fitted: FP32 GEMMs at their roofline on two GPUs, so the model (Roofline set: log measured/roofline) predicts 0.
  trainer::Dataset d = gemm_rows({"a100-pcie-40gb", "v100-pcie-32gb", "a100-pcie-40gb"}, 60, {1.0, 1.0, 1.0});
  // Calibration: the H100's TF32 GEMMs at half their roofline, those under kCalibrationMinMs at a tenth (left out),
  // and an A100 FP32 row at half (its level comes from the fitted rows).
  const prenet::Accelerator& h100 = trainer::accelerator_for("h100-sxm", "test");
  const prenet::Accelerator& a100 = trainer::accelerator_for("a100-pcie-40gb", "test");
  auto calibration_row = [&](const prenet::Accelerator& acc, prenet::Precision precision, double size, double factor) {
    trainer::Sample s;
    s.accelerator = &acc;
    s.precision = precision;
    s.item = {prenet::gemm_kernel(prenet::Phase::Forward, size, size, size, 1, 4)};
    s.time_ms = factor * prenet::roofline_ms(s.item, acc, precision);
    s.source = "xla-ptable-tf32";
    return s;
  };
  for (double size : {4096.0, 6144.0, 8192.0})
    d.calibration.push_back(calibration_row(h100, prenet::Precision::TF32, size, 0.5));
  for (double size : {256.0, 512.0}) d.calibration.push_back(calibration_row(h100, prenet::Precision::TF32, size, 0.1));
  d.calibration.push_back(calibration_row(a100, prenet::Precision::FP32, 4096, 0.5));
  CHECK(d.calibration[3].time_ms < trainer::kCalibrationMinMs);
  CHECK(d.calibration[0].time_ms >= trainer::kCalibrationMinMs);

  const trainer::Design fit = trainer::build_design(d, prenet::FeatureSet::Roofline);
  auto model = trainer::make_model("linear", {});
  model->fit(fit.x, fit.target, Matrix(), Vector());
  const trainer::GpuLevels levels = trainer::shipped_levels(d, fit, prenet::FeatureSet::Roofline, *model);
  CHECK(levels.at("h100-sxm").at("tf32") == Approx(std::log(0.5)).margin(1e-6));
  CHECK(levels.at("a100-pcie-40gb").at("fp32") == Approx(0.0).margin(1e-6));
  CHECK(levels.at("v100-pcie-32gb").at("fp32") == Approx(0.0).margin(1e-6));
  CHECK(levels.size() == 3);
  // Only the calibration sources are routed there.
  CHECK(trainer::calibration_only("xla-ptable-tf32"));
  CHECK_FALSE(trainer::calibration_only("xla-ptable"));
  CHECK_FALSE(trainer::calibration_only("neusight-linear"));
}
