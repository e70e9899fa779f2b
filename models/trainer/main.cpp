// prenet_train: trains and evaluates the per-class predictors, exports ONNX models, a manifest,
// parity samples and models/REPORT.md. Deterministic for a given data folder and mode.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "prenet/kernel_features.hpp"
#include "prenet/version.hpp"
#include "trainer/datasets.hpp"
#include "trainer/evaluation.hpp"
#include "trainer/onnx_export.hpp"
#include "trainer/report.hpp"
#include "trainer/table.hpp"

namespace {

using trainer::DataError;

struct Args {
  bool quick = false;
  std::string data = "models/data";
  std::string out = "models/artifacts";
  std::string report = "models/REPORT.md";
  std::vector<std::string> only;
  std::string dump_design;       // folder for per-dataset feature CSVs (inspection only)
  std::size_t rows_per_gpu = 0;  // 0: mode default
  bool monotone = true;          // kernel-class models must be monotone in size (mono_mlp); --unconstrained lifts it
  // GPUs whose rows only validate (no fit sees them); a missing file means none.
  std::string validation = "models/measured/validation.json";
};

const char* kUsage =
    "usage: prenet_train [--quick] [--unconstrained] [--data DIR] [--out DIR] [--report FILE] [--only a,b] "
    "[--rows-per-gpu N] [--validation FILE]\n";

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw DataError("option " + arg + " needs a value\n" + kUsage);
      return argv[++i];
    };
    if (arg == "--quick") {
      a.quick = true;
    } else if (arg == "--unconstrained") {
      a.monotone = false;
    } else if (arg == "--data") {
      a.data = value();
    } else if (arg == "--out") {
      a.out = value();
    } else if (arg == "--report") {
      a.report = value();
    } else if (arg == "--rows-per-gpu") {
      std::string v = value();
      a.rows_per_gpu = std::stoul(v);
    } else if (arg == "--validation") {
      a.validation = value();
    } else if (arg == "--dump-design") {
      a.dump_design = value();
    } else if (arg == "--only") {
      std::stringstream list(value());
      for (std::string item; std::getline(list, item, ',');) a.only.push_back(item);
    } else {
      throw DataError("unknown option " + arg + "\n" + kUsage);
    }
  }
  return a;
}

/// FNV-1a 64 over the bytes of the data tables: identifies the training data in the manifest.
std::string data_hash(const std::string& dir) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char* name : {"gemm.csv.gz", "conv.csv.gz", "elementwise.csv.gz", "normalization.csv.gz",
                           "recurrent.csv.gz", "layers_dense.csv.gz", "layers_conv.csv.gz", "llm_ops.csv.gz"}) {
    std::ifstream in(dir + "/" + name, std::ios::binary);
    char c;
    while (in.get(c)) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ull;
    }
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
  return buf;
}

nlohmann::json metrics_json(const trainer::Metrics& m) {
  auto r = [](double v) { return std::round(v * 1e4) / 1e4; };
  return {{"rmse_ms", r(m.rmse_ms)}, {"mape_pct", r(m.mape)}, {"mdape_pct", r(m.mdape)}, {"rows", m.n}};
}

/// Kernel classes of the product each exported dataset serves.
std::vector<std::string> serves(const std::string& dataset) {
  if (dataset == "gemm") return {"gemm"};
  if (dataset == "bmm") return {"bmm"};
  if (dataset == "conv") return {"conv"};
  if (dataset == "elementwise") return {"elementwise", "embedding", "optimizer"};
  if (dataset == "normalization") return {"normalization"};
  if (dataset == "softmax") return {"softmax"};
  if (dataset == "recurrent") return {"recurrent"};
  return {};
}

/// The manifest's gpu_levels: trainer::gpu_levels over every row, rounded like the other metrics.
nlohmann::json levels_json(const trainer::GpuLevels& levels) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [id, by_precision] : levels) {
    for (const auto& [precision, level] : by_precision) out[id][precision] = std::round(level * 1e4) / 1e4;
  }
  return out;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw DataError(path + ": cannot write");
}

/// The GPU ids under "gpus" in `path` (a JSON object); none when the file does not exist.
std::vector<std::string> validation_gpus(const std::string& path) {
  if (!std::filesystem::exists(path)) return {};
  std::ifstream in(path);
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("gpus") || !doc["gpus"].is_array()) {
    throw DataError(path + ": expected a JSON object with \"gpus\": [catalogue ids]");
  }
  std::vector<std::string> gpus;
  for (const auto& g : doc["gpus"]) {
    if (!g.is_string()) throw DataError(path + ": gpus: expected catalogue ids (strings)");
    trainer::accelerator_for(g.get<std::string>(), path + ": gpus");
    gpus.push_back(g.get<std::string>());
  }
  return gpus;
}

/// Writes `d`'s roofline design matrix as CSV under `dir` (--dump-design: inspection only).
void dump_design(const trainer::Dataset& d, const std::string& dir) {
  std::filesystem::create_directories(dir);
  trainer::Design design = trainer::build_design(d, prenet::FeatureSet::Roofline);
  std::ofstream out(dir + "/" + d.name + ".csv");
  out << "gpu,source,time_ms,roofline_ms";
  for (const auto& n : prenet::feature_names(prenet::FeatureSet::Roofline)) out << "," << n;
  out << "\n";
  for (Eigen::Index r = 0; r < design.x.rows(); ++r) {
    out << design.gpu[static_cast<std::size_t>(r)] << "," << d.samples[static_cast<std::size_t>(r)].source << ","
        << design.time_ms(r) << "," << design.roofline_ms(r);
    for (Eigen::Index c = 0; c < design.x.cols(); ++c) out << "," << design.x(r, c);
    out << "\n";
  }
}

/// The model shipped for one dataset, fitted on every row, and what it was fitted on.
struct Shipped {
  prenet::FeatureSet set;
  trainer::Design all;                          // every row, in the chosen feature set
  std::vector<std::size_t> fit_rows, val_rows;  // val_rows: the seeded tenth that guides early stopping
  trainer::ModelOptions options;
  std::unique_ptr<trainer::Model> model;
};

/// The rows `idx` of a design: features and target.
std::pair<trainer::Matrix, trainer::Vector> design_rows(const trainer::Design& all,
                                                        const std::vector<std::size_t>& idx) {
  trainer::Matrix x(static_cast<Eigen::Index>(idx.size()), all.x.cols());
  trainer::Vector y(static_cast<Eigen::Index>(idx.size()));
  for (std::size_t i = 0; i < idx.size(); ++i) {
    x.row(static_cast<Eigen::Index>(i)) = all.x.row(static_cast<Eigen::Index>(idx[i]));
    y(static_cast<Eigen::Index>(i)) = all.target(static_cast<Eigen::Index>(idx[i]));
  }
  return std::make_pair(x, y);
}

/// Fits the chosen kind on every row of `d`; draws its early-stopping tenth from `rng`.
Shipped fit_shipped(const trainer::Dataset& d, const std::string& kind, const trainer::ModelOptions& model_options,
                    trainer::Rng& rng) {
  Shipped s{trainer::feature_set_for(kind), {}, {}, {}, model_options, nullptr};
  s.all = trainer::build_design(d, s.set);
  auto p = rng.permutation(d.samples.size());
  for (std::size_t i = 0; i < p.size(); ++i) (i < p.size() / 10 ? s.val_rows : s.fit_rows).push_back(p[i]);
  auto [x_fit, y_fit] = design_rows(s.all, s.fit_rows);
  auto [x_val, y_val] = design_rows(s.all, s.val_rows);
  s.options.monotone = prenet::size_monotone_features(s.set);
  s.model = trainer::make_model(kind, s.options);
  s.model->fit(x_fit, y_fit, x_val, y_val);
  return s;
}

/// Parity rows: up to 32 rows drawn from `rng`, their features as the float32 the ONNX model sees,
/// and this trainer's own output for them.
nlohmann::json parity_rows(const trainer::Dataset& d, const Shipped& s, trainer::Rng& rng) {
  const trainer::Design& all = s.all;
  auto sample = rng.permutation(d.samples.size());
  nlohmann::json rows = nlohmann::json::array();
  std::size_t n_parity = std::min<std::size_t>(32, sample.size());
  trainer::Matrix xp(static_cast<Eigen::Index>(n_parity), all.x.cols());
  for (std::size_t i = 0; i < n_parity; ++i) {
    for (Eigen::Index c = 0; c < all.x.cols(); ++c) {
      xp(static_cast<Eigen::Index>(i), c) =
          static_cast<double>(static_cast<float>(all.x(static_cast<Eigen::Index>(sample[i]), c)));
    }
  }
  trainer::Vector yp = s.model->predict(xp);
  for (std::size_t i = 0; i < n_parity; ++i) {
    std::vector<double> f(xp.row(static_cast<Eigen::Index>(i)).data(),
                          xp.row(static_cast<Eigen::Index>(i)).data() + xp.cols());
    rows.push_back({{"features", f}, {"y", yp(static_cast<Eigen::Index>(i))}});
  }
  return rows;
}

/// The chosen model's held-out metrics per GPU, and the 80% band users see: log(measured / predicted)
/// quantiles on GPUs the model never saw, averaged over held-out GPUs (random-split test rows when
/// there are too few GPUs).
std::pair<nlohmann::json, std::array<double, 2>> held_out_metrics(const trainer::Experiment& e) {
  nlohmann::json logo = nlohmann::json::object();
  double q10 = 0, q90 = 0;
  if (!e.logo.empty()) {
    const auto& by_gpu = e.logo.at(e.chosen_model).at("roofline");
    for (const auto& [gpu, m] : by_gpu) {
      logo[gpu] = metrics_json(m);
      q10 += m.log_ratio_q10 / static_cast<double>(by_gpu.size());
      q90 += m.log_ratio_q90 / static_cast<double>(by_gpu.size());
    }
  } else {
    const auto& m = e.random_split.at(e.chosen_model).at("roofline");
    q10 = m.log_ratio_q10;
    q90 = m.log_ratio_q90;
  }
  return {logo, {q10, q90}};
}

/// One dataset's entry in the manifest's "classes": its ONNX file, features, ranges, metrics and levels.
nlohmann::json class_entry(const trainer::Dataset& d, const trainer::Experiment& e, const Shipped& s,
                           const trainer::ExportedModel& x) {
  const nlohmann::json levels = serves(d.name).empty()
                                    ? nlohmann::json::object()
                                    : levels_json(trainer::shipped_levels(d, s.all, s.set, *s.model));

  // What the product needs to stay inside what was measured: the training range of every input (it
  // clamps the free ones, layer constants such as the stride, into it) and the largest measured /
  // roofline ratio, which caps a kernel's time (docs/PREDICTION.md, "Outside the training data"). Only
  // the monotone set separates growing from free inputs; the others get no range.
  const std::vector<int> monotone_flags = prenet::size_monotone_features(s.set);
  nlohmann::json feature_range = nullptr;
  if (!monotone_flags.empty()) feature_range = trainer::column_bounds(s.all.x);
  const double max_log_ratio = (s.all.time_ms.array() / s.all.roofline_ms.array()).log().maxCoeff();

  const auto [logo, band] = held_out_metrics(e);
  return {{"dataset", d.name},
          {"description", d.description},
          {"serves", serves(d.name)},
          {"file", x.file},
          {"model", e.chosen_model},
          {"feature_set", prenet::to_string(s.set)},
          {"features", prenet::feature_names(s.set)},
          {"input", "features"},
          {"output", "y"},
          {"target", prenet::predicts_roofline_ratio(s.set) ? "log(time_ms / roofline_ms)" : "log(time_ms)"},
          {"monotone_in_size", trainer::guarantees_monotone(e.chosen_model)},
          {"monotone_features", monotone_flags},
          {"feature_range", feature_range},
          {"max_log_roofline_ratio", std::ceil(max_log_ratio * 1e4) / 1e4},
          {"normalization", e.chosen_model != "gbdt" && e.chosen_model != "random_forest"
                                ? "standardisation folded into the first Gemm; feed raw features"
                                : "none (trees)"},
          {"training_rows", d.samples.size()},
          {"gpus", e.gpus},
          {"metrics",
           {{"random_split_test", metrics_json(e.random_split.at(e.chosen_model).at("roofline"))},
            {"leave_one_gpu_out", logo}}},
          {"interval_log_ratio", {std::round(band[0] * 1e4) / 1e4, std::round(band[1] * 1e4) / 1e4}},
          // Without held-out GPUs nothing says how errors carry over: half, the analytic path's judgement.
          {"calibration_share",
           e.cross_gpu_pairs > 0 ? std::round(std::clamp(e.cross_gpu_correlation, 0.0, 1.0) * 1e4) / 1e4 : 0.5},
          {"gpu_levels", levels},
          {"size_bytes", x.bytes}};
}

/// PreNeT's per-layer baseline fits [a, b] for the forward pass and the training step.
nlohmann::json prenet_baseline_fits(const trainer::Dataset& d) {
  auto fwd = trainer::fit_prenet_baseline(d, false);
  auto step = trainer::fit_prenet_baseline(d, true);
  auto r4 = [](double v) { return std::round(v * 1e6) / 1e6; };
  return {{"forward", {r4(fwd.first), r4(fwd.second)}}, {"step", {r4(step.first), r4(step.second)}}};
}

/// Everything one run writes: the report's inputs and the manifest's and parity file's parts.
struct Outputs {
  std::vector<trainer::Experiment> experiments;
  std::vector<trainer::ExportedModel> exported;
  nlohmann::json manifest_classes = nlohmann::json::array();
  nlohmann::json parity = nlohmann::json::object();
  nlohmann::json prenet_baseline = nlohmann::json::object();
};

/// Evaluates one dataset, fits and exports its shipped model, and adds its parts to `out`.
void train_dataset(const trainer::Dataset& full, const std::vector<std::string>& validation, const Args& args,
                   const trainer::ExperimentOptions& options, Outputs& out) {
  // Everything below trains and evaluates on `d`; the validation GPUs' rows are scored at the end only.
  const std::pair<trainer::Dataset, trainer::Dataset> parts = trainer::split_by_gpu(full, validation);
  const trainer::Dataset& held_back = parts.first;
  const trainer::Dataset& d = parts.second;
  auto t = std::chrono::steady_clock::now();
  // Kernel-class models time kernels in the product, whose step must not fall as the problem grows;
  // whole-layer models time nothing there.
  trainer::ExperimentOptions experiment_options = options;
  experiment_options.require_monotone = args.monotone && !serves(d.name).empty();
  trainer::Experiment e = trainer::run_experiment(d, experiment_options);

  trainer::Rng rng(options.model.seed + 11);
  const Shipped shipped = fit_shipped(d, e.chosen_model, options.model, rng);
  const std::string file = d.name + ".onnx";
  const std::size_t bytes =
      trainer::export_onnx(*shipped.model, static_cast<int>(prenet::feature_names(shipped.set).size()),
                           args.out + "/" + file, "prenet " + d.name + " predictor: " + e.chosen_model);
  out.exported.push_back({d.name, file, e.chosen_model, bytes});
  out.parity[d.name] = parity_rows(d, shipped, rng);
  out.manifest_classes.push_back(class_entry(d, e, shipped, out.exported.back()));
  if (d.name == "layer_dense" || d.name == "layer_conv") out.prenet_baseline[d.name] = prenet_baseline_fits(d);
  e.validation = trainer::score_validation(d, held_back, shipped.fit_rows, shipped.val_rows, *shipped.model,
                                           shipped.set, shipped.all.x, shipped.options);
  std::cerr << d.name << ": " << d.samples.size() << " rows, chosen " << e.chosen_model << " in "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count() << " s\n";
  out.experiments.push_back(std::move(e));
}

/// manifest.json: the version, the data, the roofline constants, PreNeT's baseline and the classes.
nlohmann::json manifest_json(const Args& args, const std::string& hash, const Outputs& out) {
  const prenet::RooflineParams rp;
  return {{"schema_version", 1},
          {"version", prenet::version()},
          {"quick", args.quick},
          {"data_hash", hash},
          {"roofline",
           {{"matmul_efficiency", rp.matmul_efficiency},
            {"memory_efficiency", rp.memory_efficiency},
            {"launch_overhead_ms", rp.launch_overhead_ms},
            {"tile", rp.tile},
            {"misaligned_tf32_slowdown", rp.misaligned_tf32_slowdown},
            {"misaligned_16bit_slowdown", rp.misaligned_16bit_slowdown}}},
          {"prenet_baseline",
           {{"description",
             "log(time_ms) = a + b log(CT_ms) per layer, CT = FLOPs / FP32 peak; fitted on whole-layer "
             "forward and training-step measurements (Justus et al.); [a, b]"},
            {"fits", out.prenet_baseline}}},
          {"classes", out.manifest_classes}};
}

/// The command the report names as its source.
std::string report_command(const Args& args) {
  return std::string("npm run train") + (args.quick || !args.monotone ? " --" : "") + (args.quick ? " --quick" : "") +
         (!args.monotone ? " --unconstrained" : "");
}

/// Whether --only leaves `name` in.
bool selected(const Args& args, const std::string& name) {
  return args.only.empty() || std::find(args.only.begin(), args.only.end(), name) != args.only.end();
}

int run(const Args& args) {
  auto t0 = std::chrono::steady_clock::now();
  trainer::LoadOptions load;
  load.data_dir = args.data;
  load.max_rows_per_gpu = args.rows_per_gpu ? args.rows_per_gpu : (args.quick ? 40 : 1000);
  auto datasets = trainer::load_datasets(load);
  std::cerr << "loaded " << datasets.size() << " datasets in "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s\n";
  std::filesystem::create_directories(args.out);
  std::filesystem::path report_dir = std::filesystem::path(args.report).parent_path();
  if (!report_dir.empty()) std::filesystem::create_directories(report_dir);

  trainer::ExperimentOptions options;
  options.model.quick = args.quick;
  options.min_rows_to_hold_out = args.quick ? 30 : 300;
  const std::string hash = data_hash(args.data);
  const std::vector<std::string> validation = validation_gpus(args.validation);

  if (!args.dump_design.empty()) {
    for (const auto& full : datasets) {
      if (selected(args, full.name)) dump_design(trainer::split_by_gpu(full, validation).second, args.dump_design);
    }
    return 0;
  }
  Outputs out;
  for (const auto& full : datasets) {
    if (selected(args, full.name)) train_dataset(full, validation, args, options, out);
  }
  write_text(args.out + "/manifest.json", manifest_json(args, hash, out).dump(2) + "\n");
  write_text(args.out + "/parity.json", out.parity.dump() + "\n");
  write_text(args.report,
             trainer::render_report(out.experiments, out.exported, report_command(args), hash, args.quick));
  std::cerr << "done in " << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_args(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "prenet_train: " << e.what() << "\n";
    return 1;
  }
}
