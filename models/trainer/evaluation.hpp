#pragma once
// Experiments: random 80/10/10 split and leave-one-GPU-out, per dataset, feature set and model.
#include <array>
#include <map>
#include <string>
#include <vector>

#include "prenet/kernel_features.hpp"
#include "prenet/learned.hpp"
#include "trainer/datasets.hpp"
#include "trainer/model.hpp"

namespace trainer {

struct Metrics {
  double rmse_ms = 0;
  double mape = 0;                              // mean absolute percentage error, %
  double mdape = 0;                             // median absolute percentage error, %
  double log_ratio_q10 = 0, log_ratio_q90 = 0;  // quantiles of log(measured / predicted): the 80% band
  std::size_t n = 0;
};

/// Errors of predicted against measured times.
Metrics compute_metrics(const Vector& measured_ms, const Vector& predicted_ms);

/// A dataset turned into a design matrix for one feature set.
struct Design {
  Matrix x;
  Vector target;  // log(time) or log(time / roofline)
  Vector time_ms;
  Vector roofline_ms;
  std::vector<std::string> gpu;
};

Design build_design(const Dataset& d, prenet::FeatureSet set);
/// Converts model outputs back to milliseconds for the rows of `d`.
Vector to_time_ms(const Vector& output, const Design& d, prenet::FeatureSet set);

/// GPU id -> precision -> median log(measured / predicted): a model's level on each measured GPU.
using GpuLevels = prenet::Levels;

/// The level of each GPU and precision among rows `rows` of `d` (`target` and `predicted` in log space,
/// indexed like `rows`): the median of target - predicted. The manifest ships it as `gpu_levels`.
GpuLevels gpu_levels(const Dataset& d, const std::vector<std::size_t>& rows, const Vector& target,
                     const Vector& predicted);

/// Calibration rows shorter than this are left out of the levels: XLA's tracer times the kernel alone, every
/// fitted row between CUDA events with PyTorch's dispatch inside (a floor of 19-27 us, models/README.md), so
/// below it a residual measures the timing method. From 0.1 ms on it is flat: the H100's TF32 rows run at 0.38,
/// 0.39 and 0.38 of the GEMM model's time at 0.05-0.1, 0.1-0.25 and over 0.25 ms (0.21 under 20 us).
constexpr double kCalibrationMinMs = 0.1;

/// The levels a shipped model carries (the manifest's gpu_levels): gpu_levels over the rows it was fitted on
/// (`fit`, d's samples in feature set `set`), then, for the GPU and precision pairs those rows lack, over
/// d.calibration's rows of at least kCalibrationMinMs, their features clamped into the fitted range as the
/// product clamps them (prenet::fit_to_range).
GpuLevels shipped_levels(const Dataset& d, const Design& fit, prenet::FeatureSet set, const Model& model);

struct Experiment {
  std::string dataset;
  std::vector<std::string> gpus;
  std::size_t rows = 0;
  // random split: model -> feature set -> test metrics
  std::map<std::string, std::map<std::string, Metrics>> random_split;
  // leave-one-GPU-out: model -> feature set -> held-out gpu -> metrics
  std::map<std::string, std::map<std::string, std::map<std::string, Metrics>>> logo;
  // The random split's test rows per GPU, each model (roofline column) with that GPU's own level from
  // the training rows, as the product times a measured GPU: model -> gpu -> metrics.
  std::map<std::string, std::map<std::string, Metrics>> seen_by_gpu;
  // The chosen model on each held-out GPU with that GPU's own median offset removed (per precision): the
  // error no per-GPU factor could fix, whatever specification predicted it.
  std::map<std::string, Metrics> logo_own_level;
  Metrics roofline_only_random;                       // the analytic predictor on the random test rows
  std::map<std::string, Metrics> roofline_only_logo;  // ... and per GPU
  std::vector<std::string> held_out_gpus;             // GPUs with enough rows to be held out
  // Held-out GPUs built on a chip another training GPU shares: the chosen model plus those siblings'
  // levels from the fold (what the product does for such a GPU), and the siblings' ids.
  std::map<std::string, Metrics> logo_sibling_level;
  std::map<std::string, std::vector<std::string>> siblings;
  // Correlation of the chosen model's held-out log(measured / predicted) between two held-out GPUs on the
  // same shape: the part of an error one GPU shares with another (what a calibration may transfer).
  double cross_gpu_correlation = 0;
  std::size_t cross_gpu_pairs = 0;
  std::string chosen_model;
  std::string chosen_feature_set = "roofline";
  // The kind run with PreNeT's feature sets beside the chosen one (mono_mlp needs its own set: mlp).
  std::string comparison_model;
  std::string selection_rule;
  bool require_monotone = false;  // the export must be monotone in kernel size (see choose)
  // "gpu precision" -> decade of a row's FLOPs -> median measured fraction of that GPU's dense peak.
  std::map<std::string, std::map<int, double>> peak_fraction;
  // Validation GPUs (rows no fit ever sees): gpu -> "roofline alone" / "mlp baseline" / "shipped" -> metrics.
  std::map<std::string, std::map<std::string, Metrics>> validation;
};

/// The samples of `d` on the GPUs in `gpus` (first) and on every other GPU (second), each in `d`'s order.
std::pair<Dataset, Dataset> split_by_gpu(const Dataset& d, const std::vector<std::string>& gpus);

/// Scores `validation`'s rows, per GPU, three ways: the roofline alone, an mlp on PreNeT's Baseline
/// features fitted on `fit`/`val`, and the shipped `model` (feature set `set`) as the product applies it:
/// inputs held to the range of `range_x`, the rows the manifest's feature_range is taken from, and no level
/// (no fit saw these GPUs).
std::map<std::string, std::map<std::string, Metrics>> score_validation(const Dataset& train, const Dataset& validation,
                                                                       const std::vector<std::size_t>& fit,
                                                                       const std::vector<std::size_t>& val,
                                                                       const Model& model, prenet::FeatureSet set,
                                                                       const Matrix& range_x,
                                                                       const ModelOptions& options);

/// Per column of `x`, its [min, max]: the training range the product holds a model's inputs to.
std::vector<std::array<double, 2>> column_bounds(const Matrix& x);

/// `x` as the product feeds it to a model of feature set `set` trained on rows `train`
/// (prenet::fit_to_range per row). Sets without growing features pass unchanged.
Matrix fit_rows_to_range(prenet::FeatureSet set, const Matrix& train, const Matrix& x);

/// Median achieved fraction of the accelerator's dense peak (nominal FLOPs / time / peak) over the rows
/// of `d`, per "gpu precision" and per decade of a row's FLOPs (floor of log10); rows without FLOPs skip.
std::map<std::string, std::map<int, double>> peak_fraction_by_decade(const Dataset& d);

/// The feature set a model kind is trained on in the "roofline" column: the Monotone set for mono_mlp
/// (log(time) target), else Roofline (log(time / roofline) target).
prenet::FeatureSet feature_set_for(const std::string& kind);
/// True for the kinds whose fitted function never decreases as a kernel grows.
bool guarantees_monotone(const std::string& kind);

struct ExperimentOptions {
  ModelOptions model;
  bool logo_all_feature_sets = false;  // LOGO for every feature set (slow) or baseline/co_cm_ct/roofline
  std::size_t min_rows_to_hold_out = 300;
  bool require_monotone = false;  // choose only among monotone kinds
};

/// Fits log(time_ms) = a + b * log(ct_ms) over rows whose item has (or lacks) an optimizer step, where
/// ct is PreNeT's CT (FLOPs / FP32 peak): the "PreNeT-faithful" per-layer baseline. Returns {a, b}.
std::pair<double, double> fit_prenet_baseline(const Dataset& d, bool training_step);

/// Picks the model to export from the experiment's results (see the rule in evaluation.cpp).
void choose(Experiment& e);

/// Runs both protocols on one dataset and picks the model to export.
Experiment run_experiment(const Dataset& d, const ExperimentOptions& options);

}  // namespace trainer
