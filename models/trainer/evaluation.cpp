#include "trainer/evaluation.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>
#include <tuple>

#include "prenet/learned.hpp"

namespace trainer {
namespace {

using prenet::FeatureSet;

Matrix rows_of(const Matrix& m, const std::vector<std::size_t>& idx) {
  Matrix out(static_cast<Eigen::Index>(idx.size()), m.cols());
  for (std::size_t i = 0; i < idx.size(); ++i)
    out.row(static_cast<Eigen::Index>(i)) = m.row(static_cast<Eigen::Index>(idx[i]));
  return out;
}

Vector rows_of(const Vector& v, const std::vector<std::size_t>& idx) {
  Vector out(static_cast<Eigen::Index>(idx.size()));
  for (std::size_t i = 0; i < idx.size(); ++i) out(static_cast<Eigen::Index>(i)) = v(static_cast<Eigen::Index>(idx[i]));
  return out;
}

Design subset(const Design& d, const std::vector<std::size_t>& idx) {
  Design s;
  s.x = rows_of(d.x, idx);
  s.target = rows_of(d.target, idx);
  s.time_ms = rows_of(d.time_ms, idx);
  s.roofline_ms = rows_of(d.roofline_ms, idx);
  for (auto i : idx) s.gpu.push_back(d.gpu[i]);
  return s;
}

/// The outputs a model fitted on `train` gives rows `x` in the product: free inputs held to the training
/// range (prenet::fit_to_range).
Vector product_output(const Model& model, FeatureSet set, const Matrix& train, const Matrix& x) {
  return model.predict(fit_rows_to_range(set, train, x));
}

/// Fits on `train` (with `val` for early stopping) and returns test metrics in milliseconds; with
/// `log_ratio`, also each test row's log(measured / predicted).
Metrics fit_and_score(const std::string& kind, const ModelOptions& options, FeatureSet set, const Design& train,
                      const Design& val, const Design& test, Vector* log_ratio = nullptr) {
  ModelOptions mo = options;
  mo.monotone = prenet::size_monotone_features(set);
  auto model = make_model(kind, mo);
  model->fit(train.x, train.target, val.x, val.target);
  Vector predicted = to_time_ms(product_output(*model, set, train.x, test.x), test, set);
  if (log_ratio) *log_ratio = (test.time_ms.array() / predicted.array()).log().matrix();
  return compute_metrics(test.time_ms, predicted);
}

/// Per GPU, metrics of `output` (model outputs for rows `rows` of `d`) with each GPU's level added as
/// the product adds it (prenet::learned_level from `levels`).
std::map<std::string, Metrics> metrics_by_gpu(const Dataset& d, const std::vector<std::size_t>& rows,
                                              const Design& design, Vector output, FeatureSet set,
                                              const GpuLevels& levels) {
  prenet::LearnedClass cls;
  cls.levels = prenet::level_table(levels);
  std::map<std::string, std::vector<std::size_t>> by_gpu;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Sample& s = d.samples[rows[i]];
    output(static_cast<Eigen::Index>(i)) += prenet::learned_level(cls, *s.accelerator, s.precision);
    by_gpu[s.accelerator->id].push_back(i);
  }
  const Vector time_ms = to_time_ms(output, design, set);
  std::map<std::string, Metrics> out;
  for (const auto& [gpu, idx] : by_gpu) out[gpu] = compute_metrics(rows_of(design.time_ms, idx), rows_of(time_ms, idx));
  return out;
}

/// fit_and_score on the random split, also giving each GPU's test rows scored with its own level from
/// the training rows (`seen`): how well a model does on a GPU it was trained on, as the product uses it.
Metrics fit_and_score_seen(const std::string& kind, const ModelOptions& options, FeatureSet set, const Dataset& d,
                           const Design& all, const std::vector<std::size_t>& fit, const std::vector<std::size_t>& val,
                           const std::vector<std::size_t>& test, std::map<std::string, Metrics>& seen) {
  ModelOptions mo = options;
  mo.monotone = prenet::size_monotone_features(set);
  auto model = make_model(kind, mo);
  const Design fit_rows = subset(all, fit), val_rows = subset(all, val), test_rows = subset(all, test);
  model->fit(fit_rows.x, fit_rows.target, val_rows.x, val_rows.target);
  const Vector output = product_output(*model, set, fit_rows.x, test_rows.x);
  seen =
      metrics_by_gpu(d, test, test_rows, output, set, gpu_levels(d, fit, fit_rows.target, model->predict(fit_rows.x)));
  return compute_metrics(test_rows.time_ms, to_time_ms(output, test_rows, set));
}

/// fit_and_score for the product's rule on a GPU held out of the fold: the model's output plus the
/// level prenet::learned_level gives that GPU from the fold's own levels (its measured chip siblings).
Metrics fit_and_score_with_levels(const std::string& kind, const ModelOptions& options, FeatureSet set,
                                  const Dataset& d, const Design& all, const std::vector<std::size_t>& fit,
                                  const std::vector<std::size_t>& val, const std::vector<std::size_t>& held) {
  ModelOptions mo = options;
  mo.monotone = prenet::size_monotone_features(set);
  auto model = make_model(kind, mo);
  const Design fit_rows = subset(all, fit), val_rows = subset(all, val), held_rows = subset(all, held);
  model->fit(fit_rows.x, fit_rows.target, val_rows.x, val_rows.target);
  prenet::LearnedClass cls;
  cls.levels = prenet::level_table(gpu_levels(d, fit, fit_rows.target, model->predict(fit_rows.x)));
  Vector output = product_output(*model, set, fit_rows.x, held_rows.x);
  for (std::size_t i = 0; i < held.size(); ++i) {
    const Sample& s = d.samples[held[i]];
    output(static_cast<Eigen::Index>(i)) += prenet::learned_level(cls, *s.accelerator, s.precision);
  }
  return compute_metrics(held_rows.time_ms, to_time_ms(output, held_rows, set));
}

/// The other GPUs of `gpus` built on the same chip as `gpu` (catalogue field `chip`).
std::vector<std::string> chip_siblings(const std::string& gpu, const std::vector<std::string>& gpus) {
  std::vector<std::string> out;
  const prenet::Accelerator* acc = prenet::find_hardware(gpu);
  const std::string chip = acc ? acc->record.value("chip", "") : "";
  if (chip.empty()) return out;
  for (const auto& other : gpus) {
    const prenet::Accelerator* o = prenet::find_hardware(other);
    if (other != gpu && o && o->record.value("chip", "") == chip) out.push_back(other);
  }
  return out;
}

/// Metrics of held-out rows `rows` of `d` whose log(measured / predicted) is `log_ratio`, after removing
/// each precision's median of it: the error left if the GPU's own level were known.
Metrics with_own_level(const Dataset& d, const std::vector<std::size_t>& rows, const Vector& log_ratio) {
  const GpuLevels levels = gpu_levels(d, rows, log_ratio, Vector::Zero(log_ratio.size()));
  Vector measured(static_cast<Eigen::Index>(rows.size())), predicted(measured.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Sample& s = d.samples[rows[i]];
    const auto r = static_cast<Eigen::Index>(i);
    measured(r) = s.time_ms;
    predicted(r) = s.time_ms / std::exp(log_ratio(r) - levels.at(s.accelerator->id).at(prenet::to_string(s.precision)));
  }
  return compute_metrics(measured, predicted);
}

/// What a sample measured, without the accelerator: rows of different GPUs with equal keys timed the same work.
std::string shape_key(const Sample& s) {
  std::string key = s.source + '|' + std::to_string(static_cast<int>(s.precision));
  for (const auto& k : s.item) {
    for (double v : {static_cast<double>(k.cls), static_cast<double>(k.phase), k.flops, k.bytes, k.m, k.n, k.k, k.batch,
                     k.repeats, k.window, k.stride}) {
      key += '|' + std::to_string(v);
    }
  }
  return key;
}

/// Pearson correlation of held-out log errors of one shape on two different GPUs, over every such pair.
std::pair<double, std::size_t> cross_gpu_correlation(const Dataset& d, const std::vector<std::size_t>& rows,
                                                     const Vector& log_ratio) {
  std::map<std::string, std::vector<std::pair<std::string, double>>> by_shape;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Sample& s = d.samples[rows[i]];
    by_shape[shape_key(s)].emplace_back(s.accelerator->id, log_ratio(static_cast<Eigen::Index>(i)));
  }
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  std::size_t n = 0;
  for (const auto& [key, errors] : by_shape) {
    for (std::size_t a = 0; a < errors.size(); ++a) {
      for (std::size_t b = 0; b < errors.size(); ++b) {
        if (a == b || errors[a].first == errors[b].first) continue;
        double x = errors[a].second, y = errors[b].second;
        sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y;
        ++n;
      }
    }
  }
  if (n < 2) return {0.0, n};
  const double m = static_cast<double>(n);
  double cov = sxy / m - (sx / m) * (sy / m);
  double vx = sxx / m - (sx / m) * (sx / m), vy = syy / m - (sy / m) * (sy / m);
  if (vx <= 0 || vy <= 0) return {0.0, n};
  return {cov / std::sqrt(vx * vy), n};
}

/// Splits indices 0..n-1 into train / validation / test by a seeded permutation (80/10/10).
void random_split(std::size_t n, std::uint64_t seed, std::vector<std::size_t>& train, std::vector<std::size_t>& val,
                  std::vector<std::size_t>& test) {
  Rng rng(seed);
  auto p = rng.permutation(n);
  std::size_t n_test = n / 10, n_val = n / 10;
  test.assign(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(n_test));
  val.assign(p.begin() + static_cast<std::ptrdiff_t>(n_test), p.begin() + static_cast<std::ptrdiff_t>(n_test + n_val));
  train.assign(p.begin() + static_cast<std::ptrdiff_t>(n_test + n_val), p.end());
}

}  // namespace

FeatureSet feature_set_for(const std::string& kind) {
  return kind == "mono_mlp" ? FeatureSet::Monotone : FeatureSet::Roofline;
}

bool guarantees_monotone(const std::string& kind) { return kind == "mono_mlp"; }

Metrics compute_metrics(const Vector& measured_ms, const Vector& predicted_ms) {
  Metrics m;
  m.n = static_cast<std::size_t>(measured_ms.size());
  if (m.n == 0) return m;
  Vector ape = ((predicted_ms - measured_ms).array().abs() / measured_ms.array()) * 100.0;
  m.rmse_ms = std::sqrt((predicted_ms - measured_ms).squaredNorm() / static_cast<double>(m.n));
  m.mape = ape.mean();
  std::vector<double> sorted(ape.data(), ape.data() + ape.size());
  std::sort(sorted.begin(), sorted.end());
  m.mdape = m.n % 2 ? sorted[m.n / 2] : 0.5 * (sorted[m.n / 2 - 1] + sorted[m.n / 2]);
  std::vector<double> ratios(m.n);
  for (std::size_t i = 0; i < m.n; ++i) {
    ratios[i] = std::log(measured_ms(static_cast<Eigen::Index>(i)) / predicted_ms(static_cast<Eigen::Index>(i)));
  }
  std::sort(ratios.begin(), ratios.end());
  m.log_ratio_q10 = ratios[static_cast<std::size_t>(0.1 * static_cast<double>(m.n - 1))];
  m.log_ratio_q90 = ratios[static_cast<std::size_t>(0.9 * static_cast<double>(m.n - 1))];
  return m;
}

std::pair<double, double> fit_prenet_baseline(const Dataset& d, bool training_step) {
  std::vector<double> x, y;
  for (const Sample& s : d.samples) {
    bool has_step = false;
    double flops = 0;
    for (const auto& k : s.item) {
      has_step = has_step || k.phase == prenet::Phase::Optimizer;
      flops += k.flops;
    }
    if (has_step != training_step) continue;
    double ct_ms = flops / (*s.accelerator->peak(prenet::Precision::FP32) * 1e9);
    x.push_back(std::log(ct_ms));
    y.push_back(std::log(s.time_ms));
  }
  if (x.size() < 2) return {0.0, 1.0};
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
  mx /= static_cast<double>(x.size());
  my /= static_cast<double>(x.size());
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
  double b = sxx > 0 ? sxy / sxx : 1.0;
  return {my - b * mx, b};
}

GpuLevels gpu_levels(const Dataset& d, const std::vector<std::size_t>& rows, const Vector& target,
                     const Vector& predicted) {
  std::map<std::string, std::map<std::string, std::vector<double>>> residuals;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Sample& s = d.samples[rows[i]];
    auto r = static_cast<Eigen::Index>(i);
    residuals[s.accelerator->id][prenet::to_string(s.precision)].push_back(target(r) - predicted(r));
  }
  GpuLevels out;
  for (auto& [id, by_precision] : residuals) {
    for (auto& [precision, v] : by_precision) {
      std::sort(v.begin(), v.end());
      const std::size_t n = v.size();
      out[id][precision] = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    }
  }
  return out;
}

GpuLevels shipped_levels(const Dataset& d, const Design& fit, FeatureSet set, const Model& model) {
  std::vector<std::size_t> every_row(d.samples.size());
  std::iota(every_row.begin(), every_row.end(), std::size_t{0});
  GpuLevels levels = gpu_levels(d, every_row, fit.target, model.predict(fit.x));
  Dataset calibration{d.name, d.description, {}, {}};
  for (const Sample& s : d.calibration) {
    if (s.time_ms >= kCalibrationMinMs) calibration.samples.push_back(s);
  }
  if (calibration.samples.empty()) return levels;
  const Design c = build_design(calibration, set);
  std::vector<std::size_t> rows(calibration.samples.size());
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  const Vector predicted = model.predict(fit_rows_to_range(set, fit.x, c.x));
  for (const auto& [gpu, by_precision] : gpu_levels(calibration, rows, c.target, predicted)) {
    for (const auto& [precision, level] : by_precision) levels[gpu].emplace(precision, level);
  }
  return levels;
}

Design build_design(const Dataset& d, FeatureSet set) {
  Design out;
  auto cols = static_cast<Eigen::Index>(prenet::feature_names(set).size());
  out.x.resize(static_cast<Eigen::Index>(d.samples.size()), cols);
  out.target.resize(out.x.rows());
  out.time_ms.resize(out.x.rows());
  out.roofline_ms.resize(out.x.rows());
  for (std::size_t i = 0; i < d.samples.size(); ++i) {
    const Sample& s = d.samples[i];
    auto r = static_cast<Eigen::Index>(i);
    auto f = prenet::item_features(s.item, *s.accelerator, s.precision, set);
    for (Eigen::Index c = 0; c < cols; ++c) out.x(r, c) = f[static_cast<std::size_t>(c)];
    out.time_ms(r) = s.time_ms;
    out.roofline_ms(r) = prenet::roofline_ms(s.item, *s.accelerator, s.precision);
    out.target(r) =
        prenet::predicts_roofline_ratio(set) ? std::log(s.time_ms / out.roofline_ms(r)) : std::log(s.time_ms);
    out.gpu.push_back(s.accelerator->id);
  }
  return out;
}

Vector to_time_ms(const Vector& output, const Design& d, FeatureSet set) {
  Vector t = output.array().exp();
  return prenet::predicts_roofline_ratio(set) ? Vector(t.array() * d.roofline_ms.array()) : t;
}

namespace {

/// Runs independent jobs on `threads` workers; results land by index, so the outcome is deterministic.
std::vector<Metrics> run_parallel(const std::vector<std::function<Metrics()>>& jobs, int threads) {
  std::vector<Metrics> results(jobs.size());
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      try {
        results[i] = jobs[i]();
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return results;
}

}  // namespace

std::vector<std::array<double, 2>> column_bounds(const Matrix& x) {
  std::vector<std::array<double, 2>> out;
  for (Eigen::Index c = 0; c < x.cols(); ++c) out.push_back({x.col(c).minCoeff(), x.col(c).maxCoeff()});
  return out;
}

Matrix fit_rows_to_range(FeatureSet set, const Matrix& train, const Matrix& x) {
  if (prenet::size_monotone_features(set).empty() || train.rows() == 0) return x;
  const prenet::FeatureRange range = prenet::make_feature_range(set, column_bounds(train));
  Matrix out = x;
  std::vector<double> row(static_cast<std::size_t>(x.cols()));
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    for (Eigen::Index c = 0; c < x.cols(); ++c) row[static_cast<std::size_t>(c)] = x(r, c);
    prenet::fit_to_range(range, row);
    for (Eigen::Index c = 0; c < x.cols(); ++c) out(r, c) = row[static_cast<std::size_t>(c)];
  }
  return out;
}

std::map<std::string, std::map<int, double>> peak_fraction_by_decade(const Dataset& d) {
  std::map<std::string, std::map<int, std::vector<double>>> fractions;
  for (const Sample& s : d.samples) {
    double flops = 0;
    for (const auto& k : s.item) flops += k.flops;
    auto peak = s.accelerator->peak(s.precision);
    if (flops <= 0 || !peak) continue;
    double fraction = flops / (s.time_ms * 1e-3) / (*peak * 1e12);
    fractions[s.accelerator->id + " " + prenet::to_string(s.precision)][static_cast<int>(std::floor(std::log10(flops)))]
        .push_back(fraction);
  }
  std::map<std::string, std::map<int, double>> out;
  for (auto& [key, by_decade] : fractions) {
    for (auto& [decade, v] : by_decade) {
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      out[key][decade] = v[v.size() / 2];
    }
  }
  return out;
}

std::pair<Dataset, Dataset> split_by_gpu(const Dataset& d, const std::vector<std::string>& gpus) {
  Dataset in{d.name, d.description, {}, {}}, out{d.name, d.description, {}, {}};
  auto listed = [&](const Sample& s) { return std::find(gpus.begin(), gpus.end(), s.accelerator->id) != gpus.end(); };
  for (const Sample& s : d.samples) (listed(s) ? in : out).samples.push_back(s);
  for (const Sample& s : d.calibration) (listed(s) ? in : out).calibration.push_back(s);
  return {in, out};
}

std::map<std::string, std::map<std::string, Metrics>> score_validation(const Dataset& train, const Dataset& validation,
                                                                       const std::vector<std::size_t>& fit,
                                                                       const std::vector<std::size_t>& val,
                                                                       const Model& model, FeatureSet set,
                                                                       const Matrix& range_x,
                                                                       const ModelOptions& options) {
  std::map<std::string, std::map<std::string, Metrics>> out;
  if (validation.samples.empty()) return out;
  const Design shipped = build_design(validation, set);
  const Design baseline_train = build_design(train, FeatureSet::Baseline);
  const Design baseline_held = build_design(validation, FeatureSet::Baseline);
  ModelOptions mo = options;
  mo.monotone = prenet::size_monotone_features(FeatureSet::Baseline);
  auto baseline = make_model("mlp", mo);
  const Design baseline_fit = subset(baseline_train, fit), baseline_val = subset(baseline_train, val);
  baseline->fit(baseline_fit.x, baseline_fit.target, baseline_val.x, baseline_val.target);
  for (const std::string& gpu : validation.gpus()) {
    std::vector<std::size_t> rows;
    for (std::size_t i = 0; i < shipped.gpu.size(); ++i) {
      if (shipped.gpu[i] == gpu) rows.push_back(i);
    }
    const Design held = subset(shipped, rows), held_baseline = subset(baseline_held, rows);
    out[gpu]["roofline alone"] = compute_metrics(held.time_ms, held.roofline_ms);
    out[gpu]["mlp baseline"] =
        compute_metrics(held_baseline.time_ms,
                        to_time_ms(product_output(*baseline, FeatureSet::Baseline, baseline_fit.x, held_baseline.x),
                                   held_baseline, FeatureSet::Baseline));
    out[gpu]["shipped"] =
        compute_metrics(held.time_ms, to_time_ms(product_output(model, set, range_x, held.x), held, set));
  }
  return out;
}

namespace {

/// What every fit of one experiment shares: the data, its design per feature set, and how fits run.
struct FitContext {
  const Dataset& d;
  std::map<std::string, Design> designs;  // by feature set name
  ModelOptions mo;                        // each fit on one thread
  int workers;                            // fits run at once

  const Design& design(FeatureSet set) const { return designs.at(prenet::to_string(set)); }
  /// The design of the first feature set by name: rows, GPUs, times and roofline are the same in every one.
  const Design& any() const { return designs.begin()->second; }
};

/// The designs of every feature set. Fits run two at a time, each tree model on one thread, so results
/// do not depend on scheduling.
FitContext fit_context(const Dataset& d, const ModelOptions& model) {
  FitContext c{d, {}, model, std::max(1, model.threads)};
  c.mo.threads = 1;
  for (FeatureSet set : prenet::all_feature_sets()) c.designs[prenet::to_string(set)] = build_design(d, set);
  c.designs[prenet::to_string(FeatureSet::Monotone)] = build_design(d, FeatureSet::Monotone);
  return c;
}

/// The random 80/10/10 split: every model on every feature set, and each model's seen-GPU scores.
void score_random_split(Experiment& e, const FitContext& c) {
  const Dataset& d = c.d;
  const ModelOptions mo = c.mo;
  std::vector<std::size_t> train, val, test;
  random_split(d.samples.size(), mo.seed, train, val, test);
  Design test_any = subset(c.any(), test);
  e.roofline_only_random = compute_metrics(test_any.time_ms, test_any.roofline_ms);
  std::vector<std::function<Metrics()>> jobs;
  std::vector<std::pair<std::string, std::string>> keys;
  // Each roofline-column job also scores every GPU's test rows with its own level (its own slot here).
  std::map<std::string, std::map<std::string, Metrics>> seen;
  for (const auto& kind : model_kinds()) seen[kind];
  for (const auto& kind : model_kinds()) {
    for (FeatureSet set : prenet::all_feature_sets()) {
      // mono_mlp has one column: its own set, reported as the roofline column (it is the roofline terms
      // that never fall with size, plus hardware constants).
      if (kind == "mono_mlp" && set != FeatureSet::Roofline) continue;
      FeatureSet actual = set == FeatureSet::Roofline ? feature_set_for(kind) : set;
      const Design* all = &c.design(actual);
      if (set == FeatureSet::Roofline) {
        std::map<std::string, Metrics>* slot = &seen[kind];
        jobs.push_back([=, &d, &train, &val, &test] {
          return fit_and_score_seen(kind, mo, actual, d, *all, train, val, test, *slot);
        });
      } else {
        jobs.push_back([=, &train, &val, &test] {
          return fit_and_score(kind, mo, actual, subset(*all, train), subset(*all, val), subset(*all, test));
        });
      }
      keys.emplace_back(kind, prenet::to_string(set));
    }
  }
  auto results = run_parallel(jobs, c.workers);
  for (std::size_t i = 0; i < keys.size(); ++i) e.random_split[keys[i].first][keys[i].second] = results[i];
  e.seen_by_gpu = std::move(seen);
}

/// One held-out GPU's rows, and the other GPUs' rows split into fit and early-stopping tenth.
struct Fold {
  std::vector<std::size_t> fit, val, held;
};

/// The folds of the held-out GPUs; also scores the roofline alone on each held-out GPU.
std::map<std::string, Fold> make_folds(Experiment& e, const FitContext& c) {
  const Design& any = c.any();
  std::map<std::string, Fold> folds;
  for (const auto& gpu : e.held_out_gpus) {
    Fold& f = folds[gpu];
    std::vector<std::size_t> rest;
    for (std::size_t i = 0; i < any.gpu.size(); ++i) (any.gpu[i] == gpu ? f.held : rest).push_back(i);
    // A seeded tenth of the remaining rows guides early stopping; the held-out GPU is never seen.
    Rng rng(c.mo.seed + 7);
    auto p = rng.permutation(rest.size());
    for (std::size_t i = 0; i < p.size(); ++i) (i < p.size() / 10 ? f.val : f.fit).push_back(rest[p[i]]);
    Design held_any = subset(any, f.held);
    e.roofline_only_logo[gpu] = compute_metrics(held_any.time_ms, held_any.roofline_ms);
  }
  return folds;
}

/// Held-out log errors of every roofline-feature fit, by (model, GPU): how GPUs share errors.
using Residuals = std::map<std::pair<std::string, std::string>, Vector>;

/// Leave-one-GPU-out fits of `kinds` × `sets` on every fold; results land in e.logo under `as` (the
/// chosen kind's name for the comparison runs; empty: each kind's own).
void score_held_out(Experiment& e, const FitContext& c, const std::map<std::string, Fold>& folds,
                    const std::vector<std::string>& kinds, const std::vector<FeatureSet>& sets, const std::string& as,
                    Residuals& residuals) {
  const ModelOptions mo = c.mo;
  const std::vector<std::string>& held_out = e.held_out_gpus;
  std::vector<std::function<Metrics()>> js;
  std::vector<std::tuple<std::string, std::string, std::string>> ks;
  std::vector<Vector> rv(kinds.size() * sets.size() * held_out.size());
  for (const auto& kind : kinds) {
    for (FeatureSet set : sets) {
      FeatureSet actual = set == FeatureSet::Roofline ? feature_set_for(kind) : set;
      const Design* all = &c.design(actual);
      for (const auto& gpu : held_out) {
        const Fold* f = &folds.at(gpu);
        Vector* out = set == FeatureSet::Roofline ? &rv[js.size()] : nullptr;
        js.push_back([=] {
          return fit_and_score(kind, mo, actual, subset(*all, f->fit), subset(*all, f->val), subset(*all, f->held),
                               out);
        });
        ks.emplace_back(as.empty() ? kind : as, prenet::to_string(set), gpu);
      }
    }
  }
  auto rs = run_parallel(js, c.workers);
  for (std::size_t i = 0; i < ks.size(); ++i) {
    e.logo[std::get<0>(ks[i])][std::get<1>(ks[i])][std::get<2>(ks[i])] = rs[i];
    if (rv[i].size() > 0) residuals[{std::get<0>(ks[i]), std::get<2>(ks[i])}] = std::move(rv[i]);
  }
}

/// The chosen model's held-out errors: each GPU with its own level, and their cross-GPU correlation.
void score_shared_errors(Experiment& e, const FitContext& c, const std::map<std::string, Fold>& folds,
                         const Residuals& residuals) {
  std::vector<std::size_t> rows;
  std::vector<double> errors;
  for (const auto& gpu : e.held_out_gpus) {
    const Vector& r = residuals.at({e.chosen_model, gpu});
    const Fold& f = folds.at(gpu);
    rows.insert(rows.end(), f.held.begin(), f.held.end());
    errors.insert(errors.end(), r.data(), r.data() + r.size());
    e.logo_own_level[gpu] = with_own_level(c.d, f.held, r);
  }
  Vector all_errors = Eigen::Map<const Vector>(errors.data(), static_cast<Eigen::Index>(errors.size()));
  std::tie(e.cross_gpu_correlation, e.cross_gpu_pairs) = cross_gpu_correlation(c.d, rows, all_errors);
}

/// A GPU never measured whose chip was (v100-pcie-32gb held out, v100-sxm2-16gb trained) gets its
/// siblings' level in the product; this is that case, measured.
void score_sibling_levels(Experiment& e, const FitContext& c, const std::map<std::string, Fold>& folds) {
  const Dataset& d = c.d;
  const ModelOptions mo = c.mo;
  const FeatureSet set = feature_set_for(e.chosen_model);
  const Design* all = &c.design(set);
  std::vector<std::function<Metrics()>> js;
  std::vector<std::string> ks;
  for (const auto& gpu : e.held_out_gpus) {
    std::vector<std::string> siblings = chip_siblings(gpu, e.gpus);
    if (siblings.empty()) continue;
    e.siblings[gpu] = siblings;
    const Fold* f = &folds.at(gpu);
    const std::string kind = e.chosen_model;
    js.push_back([=, &d] { return fit_and_score_with_levels(kind, mo, set, d, *all, f->fit, f->val, f->held); });
    ks.push_back(gpu);
  }
  auto rs = run_parallel(js, c.workers);
  for (std::size_t i = 0; i < ks.size(); ++i) e.logo_sibling_level[ks[i]] = rs[i];
}

/// The GPUs with enough rows to judge a model on (others still train every fold).
std::vector<std::string> gpus_to_hold_out(const Design& any, std::size_t min_rows, std::size_t& gpu_count) {
  std::map<std::string, std::size_t> rows_per_gpu;
  for (const auto& g : any.gpu) rows_per_gpu[g]++;
  std::vector<std::string> held_out;
  for (const auto& [gpu, n] : rows_per_gpu) {
    if (n >= min_rows) held_out.push_back(gpu);
  }
  gpu_count = rows_per_gpu.size();
  return held_out;
}

/// Leave one GPU out: every model with the roofline features decides the export; the chosen one is then
/// also run with PreNeT's feature sets, so the report shows what the roofline features add on unseen
/// hardware.
void score_leave_one_gpu_out(Experiment& e, const FitContext& c, const ExperimentOptions& options) {
  const std::map<std::string, Fold> folds = make_folds(e, c);
  Residuals residuals;
  score_held_out(e, c, folds, model_kinds(), {FeatureSet::Roofline}, "", residuals);
  choose(e);
  score_shared_errors(e, c, folds, residuals);
  score_sibling_levels(e, c, folds);
  std::vector<FeatureSet> comparison = {FeatureSet::Baseline, FeatureSet::CO_CM_CT};
  if (options.logo_all_feature_sets)
    comparison = {FeatureSet::Baseline, FeatureSet::CO, FeatureSet::CO_CM, FeatureSet::CO_CM_CT};
  score_held_out(e, c, folds, {e.comparison_model}, comparison, e.chosen_model, residuals);
}

}  // namespace

Experiment run_experiment(const Dataset& d, const ExperimentOptions& options) {
  Experiment e;
  e.dataset = d.name;
  e.peak_fraction = peak_fraction_by_decade(d);
  e.gpus = d.gpus();
  e.rows = d.samples.size();
  const FitContext c = fit_context(d, options.model);
  e.require_monotone = options.require_monotone;
  score_random_split(e, c);
  std::size_t gpu_count = 0;
  e.held_out_gpus = gpus_to_hold_out(c.any(), options.min_rows_to_hold_out, gpu_count);
  if (e.held_out_gpus.size() >= 2 && gpu_count >= 2) {
    score_leave_one_gpu_out(e, c, options);
  } else {
    choose(e);
  }
  return e;
}

void choose(Experiment& e) {
  // The exported model: lowest mean held-out-GPU MdAPE with the roofline features (the unseen-hardware
  // case users care about); with too few GPUs, lowest random-split MdAPE.
  // Where the product needs monotonicity in size, only the kinds that guarantee it compete.
  double best = std::numeric_limits<double>::infinity();
  for (const auto& kind : model_kinds()) {
    if (e.require_monotone && !guarantees_monotone(kind)) continue;
    // Without the requirement, the earlier rule among the earlier kinds: mono_mlp is reported, not shipped.
    if (!e.require_monotone && guarantees_monotone(kind)) continue;
    double score = 0;
    if (!e.logo.empty()) {
      const auto& by_gpu = e.logo.at(kind).at("roofline");
      for (const auto& [gpu, m] : by_gpu) score += m.mdape;
      score /= static_cast<double>(by_gpu.size());
    } else {
      score = e.random_split.at(kind).at("roofline").mdape;
    }
    if (score < best) {
      best = score;
      e.chosen_model = kind;
    }
  }
  e.selection_rule = e.logo.empty() ? "lowest random-split median APE (too few GPUs to hold out)"
                                    : "lowest mean leave-one-GPU-out median APE";
  if (e.require_monotone) e.selection_rule += ", among the models monotone in size";
  e.chosen_feature_set = prenet::to_string(feature_set_for(e.chosen_model));
  e.comparison_model = e.chosen_model == "mono_mlp" ? "mlp" : e.chosen_model;
}

}  // namespace trainer
