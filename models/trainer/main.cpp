// prenet_train: trains and evaluates the per-class predictors, exports ONNX models, a manifest,
// parity samples and models/REPORT.md. Deterministic for a given data folder and mode.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
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

  std::vector<trainer::Experiment> experiments;
  std::vector<trainer::ExportedModel> exported;
  nlohmann::json manifest_classes = nlohmann::json::array();
  nlohmann::json parity = nlohmann::json::object();
  nlohmann::json prenet_baseline = nlohmann::json::object();
  for (const auto& full : datasets) {
    if (!args.only.empty() && std::find(args.only.begin(), args.only.end(), full.name) == args.only.end()) continue;
    // Everything below trains and evaluates on `d`; the validation GPUs' rows are scored at the end only.
    const std::pair<trainer::Dataset, trainer::Dataset> parts = trainer::split_by_gpu(full, validation);
    const trainer::Dataset& held_back = parts.first;
    const trainer::Dataset& d = parts.second;
    auto t = std::chrono::steady_clock::now();
    if (!args.dump_design.empty()) {
      std::filesystem::create_directories(args.dump_design);
      trainer::Design design = trainer::build_design(d, prenet::FeatureSet::Roofline);
      std::ofstream out(args.dump_design + "/" + d.name + ".csv");
      out << "gpu,source,time_ms,roofline_ms";
      for (const auto& n : prenet::feature_names(prenet::FeatureSet::Roofline)) out << "," << n;
      out << "\n";
      for (Eigen::Index r = 0; r < design.x.rows(); ++r) {
        out << design.gpu[static_cast<std::size_t>(r)] << "," << d.samples[static_cast<std::size_t>(r)].source << ","
            << design.time_ms(r) << "," << design.roofline_ms(r);
        for (Eigen::Index c = 0; c < design.x.cols(); ++c) out << "," << design.x(r, c);
        out << "\n";
      }
      continue;
    }
    // Kernel-class models time kernels in the product, whose step must not fall as the problem grows;
    // whole-layer models time nothing there.
    trainer::ExperimentOptions experiment_options = options;
    experiment_options.require_monotone = args.monotone && !serves(d.name).empty();
    trainer::Experiment e = trainer::run_experiment(d, experiment_options);

    // The shipped model: the chosen kind, fitted on every row (a seeded tenth guides early stopping).
    const prenet::FeatureSet chosen_set = trainer::feature_set_for(e.chosen_model);
    trainer::Design all = trainer::build_design(d, chosen_set);
    trainer::Rng rng(options.model.seed + 11);
    auto p = rng.permutation(d.samples.size());
    std::vector<std::size_t> fit_rows, val_rows;
    for (std::size_t i = 0; i < p.size(); ++i) (i < p.size() / 10 ? val_rows : fit_rows).push_back(p[i]);
    auto pick = [&](const std::vector<std::size_t>& idx) {
      trainer::Matrix x(static_cast<Eigen::Index>(idx.size()), all.x.cols());
      trainer::Vector y(static_cast<Eigen::Index>(idx.size()));
      for (std::size_t i = 0; i < idx.size(); ++i) {
        x.row(static_cast<Eigen::Index>(i)) = all.x.row(static_cast<Eigen::Index>(idx[i]));
        y(static_cast<Eigen::Index>(i)) = all.target(static_cast<Eigen::Index>(idx[i]));
      }
      return std::make_pair(x, y);
    };
    auto [x_fit, y_fit] = pick(fit_rows);
    auto [x_val, y_val] = pick(val_rows);
    trainer::ModelOptions final_options = options.model;
    final_options.monotone = prenet::size_monotone_features(chosen_set);
    auto model = trainer::make_model(e.chosen_model, final_options);
    model->fit(x_fit, y_fit, x_val, y_val);

    std::string file = d.name + ".onnx";
    auto names = prenet::feature_names(chosen_set);
    std::size_t bytes = trainer::export_onnx(*model, static_cast<int>(names.size()), args.out + "/" + file,
                                             "prenet " + d.name + " predictor: " + e.chosen_model);
    exported.push_back({d.name, file, e.chosen_model, bytes});

    // Parity rows: features (as float32 the ONNX model sees) and this trainer's own output.
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
    trainer::Vector yp = model->predict(xp);
    for (std::size_t i = 0; i < n_parity; ++i) {
      std::vector<double> f(xp.row(static_cast<Eigen::Index>(i)).data(),
                            xp.row(static_cast<Eigen::Index>(i)).data() + xp.cols());
      rows.push_back({{"features", f}, {"y", yp(static_cast<Eigen::Index>(i))}});
    }
    parity[d.name] = rows;
    std::vector<std::size_t> every_row(d.samples.size());
    std::iota(every_row.begin(), every_row.end(), std::size_t{0});
    const nlohmann::json levels =
        serves(d.name).empty() ? nlohmann::json::object()
                               : levels_json(trainer::gpu_levels(d, every_row, all.target, model->predict(all.x)));

    // What the product needs to stay inside what was measured: the training range of every input (it
    // clamps the free ones, layer constants such as the stride, into it) and the largest measured /
    // roofline ratio, which caps a kernel's time (docs/PREDICTION.md, "Outside the training data"). Only
    // the monotone set separates growing from free inputs; the others get no range.
    const std::vector<int> monotone_flags = prenet::size_monotone_features(chosen_set);
    nlohmann::json feature_range = nullptr;
    if (!monotone_flags.empty()) feature_range = trainer::column_bounds(all.x);
    const double max_log_ratio = (all.time_ms.array() / all.roofline_ms.array()).log().maxCoeff();

    nlohmann::json logo = nlohmann::json::object();
    // The 80% band users see: log(measured / predicted) quantiles on GPUs the model never saw, averaged
    // over held-out GPUs (random-split test rows when there are too few GPUs).
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
    manifest_classes.push_back(
        {{"dataset", d.name},
         {"description", d.description},
         {"serves", serves(d.name)},
         {"file", file},
         {"model", e.chosen_model},
         {"feature_set", prenet::to_string(chosen_set)},
         {"features", names},
         {"input", "features"},
         {"output", "y"},
         {"target", prenet::predicts_roofline_ratio(chosen_set) ? "log(time_ms / roofline_ms)" : "log(time_ms)"},
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
         {"interval_log_ratio", {std::round(q10 * 1e4) / 1e4, std::round(q90 * 1e4) / 1e4}},
         // Without held-out GPUs nothing says how errors carry over: half, the analytic path's judgement.
         {"calibration_share",
          e.cross_gpu_pairs > 0 ? std::round(std::clamp(e.cross_gpu_correlation, 0.0, 1.0) * 1e4) / 1e4 : 0.5},
         {"gpu_levels", levels},
         {"size_bytes", bytes}});
    if (d.name == "layer_dense" || d.name == "layer_conv") {
      auto fwd = trainer::fit_prenet_baseline(d, false);
      auto step = trainer::fit_prenet_baseline(d, true);
      auto r4 = [](double v) { return std::round(v * 1e6) / 1e6; };
      prenet_baseline[d.name] = {{"forward", {r4(fwd.first), r4(fwd.second)}},
                                 {"step", {r4(step.first), r4(step.second)}}};
    }
    e.validation =
        trainer::score_validation(d, held_back, fit_rows, val_rows, *model, chosen_set, all.x, final_options);
    std::cerr << d.name << ": " << d.samples.size() << " rows, chosen " << e.chosen_model << " in "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count() << " s\n";
    experiments.push_back(std::move(e));
  }

  const prenet::RooflineParams rp;
  nlohmann::json manifest = {
      {"schema_version", 1},
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
        {"fits", prenet_baseline}}},
      {"classes", manifest_classes}};
  if (!args.dump_design.empty()) return 0;
  write_text(args.out + "/manifest.json", manifest.dump(2) + "\n");
  write_text(args.out + "/parity.json", parity.dump() + "\n");
  std::string command = std::string("npm run train") + (args.quick || !args.monotone ? " --" : "") +
                        (args.quick ? " --quick" : "") + (!args.monotone ? " --unconstrained" : "");
  write_text(args.report, trainer::render_report(experiments, exported, command, hash, args.quick));
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
