#include "prenet/learned.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "prenet/embedded_data.hpp"
#include "prenet/error.hpp"
#include "prenet/json_util.hpp"
#include "prenet/kernel_features.hpp"

namespace prenet {
namespace {

/// One product of a batched GEMM as the GEMM model times it: its FLOPs and bytes over the batch, batch 1.
Kernel one_product(const Kernel& k) {
  Kernel product = k;
  product.cls = KernelClass::Gemm;
  product.flops /= k.batch;
  product.bytes /= k.batch;
  product.batch = 1;
  return product;
}

bool is_16bit(Precision p) { return p == Precision::BF16 || p == Precision::FP16; }

/// A batched GEMM as one GEMM of its stacked products (m x batch rows; FLOPs and bytes unchanged): the tiles
/// cuBLAS's batched kernels launch, timed by the GEMM model where the batched-GEMM model has no rows.
Kernel stacked_products(const Kernel& k) {
  Kernel stacked = k;
  stacked.cls = KernelClass::Gemm;
  stacked.m = k.m * k.batch;
  stacked.batch = 1;
  return stacked;
}

/// Each kernel's value from its distinct kernel's (`of_kernel[i]`: kernel i's index into `distinct`).
template <typename T>
std::vector<T> per_kernel(const std::vector<T>& distinct, const std::vector<std::size_t>& of_kernel) {
  std::vector<T> out;
  out.reserve(of_kernel.size());
  for (std::size_t d : of_kernel) out.push_back(distinct[d]);
  return out;
}

/// The step's optimizer kernels as the one multi-tensor update that runs them: their FLOPs and bytes summed.
Kernel step_update(const StepWork& work) {
  Kernel update;
  update.cls = KernelClass::Optimizer;
  update.phase = Phase::Optimizer;
  for (const Kernel& k : work.kernels) {
    if (k.cls != KernelClass::Optimizer) continue;
    update.flops += k.flops;
    update.bytes += k.bytes;
    update.layer = k.layer;
  }
  return update;
}

std::array<double, 2> pair_of(const Json& fits, const char* family, const char* phase) {
  if (!fits.contains(family)) return {0.0, 1.0};
  const Json& p = fits[family].at(phase);
  return {p.at(0).get<double>(), p.at(1).get<double>()};
}

}  // namespace

double learned_model_ms(const LearnedClass& cls, float output, double roofline_ms) {
  return std::exp(static_cast<double>(output)) * (cls.predicts_ratio ? roofline_ms : 1.0);
}

double bounded_kernel_ms(double model_ms, double floor_ms, double ceiling_ms) {
  return std::max(std::min(model_ms, ceiling_ms), floor_ms);
}

double harness_floor_ms(const std::string& dataset) {
  // `node models/data-tools/harness-floor.mjs`: per class, the median over the training GPUs of each GPU's 5th
  // percentile time (the sweep's smallest ops sit on the floor). GEMM, convolution and batched-GEMM rows also
  // come from DeepBench's C++ loop and other harnesses, with floors of their own: none is taken out there.
  static const std::map<std::string, double> floors = {
      {"elementwise", 0.0261}, {"normalization", 0.0477}, {"softmax", 0.0337}};
  auto it = floors.find(dataset);
  return it == floors.end() ? 0.0 : it->second;
}

double in_step_ms(double harness_ms, double floor_ms, double least_ms) {
  const double device_ms = std::sqrt(std::max(0.0, harness_ms * harness_ms - floor_ms * floor_ms));
  return std::min(harness_ms, std::max(least_ms, device_ms));
}

double learned_kernel_ms(const LearnedClass& cls, float output, double roofline_ms, double floor_ms) {
  return bounded_kernel_ms(learned_model_ms(cls, output, roofline_ms), floor_ms, cls.ceiling_ratio * roofline_ms);
}

FeatureRange make_feature_range(FeatureSet set, std::vector<std::array<double, 2>> bounds) {
  FeatureRange r;
  r.grows = size_monotone_features(set);
  if (r.grows.empty()) throw std::invalid_argument("feature range: the feature set has no growing features");
  if (bounds.size() != r.grows.size()) throw std::invalid_argument("feature range: one [min, max] per feature");
  r.bounds = std::move(bounds);
  return r;
}

void fit_to_range(const FeatureRange& range, std::vector<double>& features) {
  if (range.bounds.size() != features.size()) return;
  for (std::size_t i = 0; i < features.size(); ++i) {
    if (!range.grows[i]) features[i] = std::clamp(features[i], range.bounds[i][0], range.bounds[i][1]);
  }
}

bool learned_covers(const Accelerator& acc) { return acc.custom || acc.record.value("kind", "gpu") == "gpu"; }

LevelTable level_table(Levels by_gpu) {
  std::map<std::string, std::map<std::string, std::pair<double, int>>> sums;  // chip -> precision -> (sum, count)
  for (const auto& [id, by_precision] : by_gpu) {
    const Accelerator* measured = find_hardware(id);
    const std::string chip = measured != nullptr ? measured->record.value("chip", "") : "";
    if (chip.empty()) continue;
    for (const auto& [precision, level] : by_precision) {
      auto& [sum, count] = sums[chip][precision];
      sum += level;
      ++count;
    }
  }
  LevelTable table{std::move(by_gpu), {}};
  for (const auto& [chip, by_precision] : sums) {
    for (const auto& [precision, total] : by_precision) table.by_chip[chip][precision] = total.first / total.second;
  }
  return table;
}

double learned_level(const LearnedClass& cls, const Accelerator& acc, Precision precision) {
  // A custom accelerator's figures are the user's: nothing measured stands behind them.
  if (acc.custom) return 0.0;
  // FP16 and BF16 run on the same tensor cores at the same peak: a level measured in one stands for the other.
  std::vector<std::string> names = {to_string(precision)};
  if (precision == Precision::BF16) names.push_back(to_string(Precision::FP16));
  if (precision == Precision::FP16) names.push_back(to_string(Precision::BF16));
  auto level_in = [&](const Levels& levels, const std::string& key) -> std::optional<double> {
    auto outer = levels.find(key);
    if (outer == levels.end()) return std::nullopt;
    for (const std::string& name : names) {
      auto level = outer->second.find(name);
      if (level != outer->second.end()) return level->second;
    }
    return std::nullopt;
  };
  if (auto own = level_in(cls.levels.by_gpu, acc.id)) return *own;
  if (auto sibling = level_in(cls.levels.by_chip, acc.record.value("chip", ""))) return *sibling;
  return 0.0;
}

const LearnedManifest& learned_manifest() {
  static const LearnedManifest manifest = [] {
    LearnedManifest m;
    Json doc = Json::parse(embedded_manifest_json());
    if (!doc.is_object() || !doc.contains("classes")) return m;
    m.version = doc.value("version", "");
    m.data_hash = doc.value("data_hash", "");
    for (const Json& c : doc.at("classes")) {
      if (c.at("serves").empty()) continue;  // whole-layer models (PreNeT reproduction) time no kernel
      LearnedClass lc;
      lc.dataset = c.at("dataset").get<std::string>();
      lc.model = c.at("model").get<std::string>();
      lc.serves = c.at("serves").get<std::vector<std::string>>();
      lc.features = c.at("features").get<std::vector<std::string>>();
      lc.q10 = c.at("interval_log_ratio").at(0).get<double>();
      lc.q90 = c.at("interval_log_ratio").at(1).get<double>();
      lc.calibration_share = std::clamp(c.value("calibration_share", 0.5), 0.0, 1.0);
      lc.feature_set = feature_set_from_string(c.at("feature_set").get<std::string>());
      const std::string target = c.at("target").get<std::string>();
      if (target != "log(time_ms)" && target != "log(time_ms / roofline_ms)") {
        throw std::runtime_error("models/artifacts/manifest.json: unknown target \"" + target + "\" of " + lc.dataset);
      }
      lc.predicts_ratio = target == "log(time_ms / roofline_ms)";
      lc.monotone = c.value("monotone_in_size", false);
      if (c.contains("gpu_levels")) lc.levels = level_table(c.at("gpu_levels").get<Levels>());
      if (c.contains("feature_range") && !c.at("feature_range").is_null()) {
        try {
          lc.range =
              make_feature_range(lc.feature_set, c.at("feature_range").get<std::vector<std::array<double, 2>>>());
        } catch (const std::exception& e) {
          throw std::runtime_error("models/artifacts/manifest.json: feature_range of " + lc.dataset + ": " + e.what() +
                                   "; retrain with npm run train");
        }
      }
      if (c.contains("max_log_roofline_ratio")) {
        lc.ceiling_ratio = std::max(1.0, std::exp(c.at("max_log_roofline_ratio").get<double>()));
      }
      if (lc.features != feature_names(lc.feature_set)) {
        throw std::runtime_error("models/artifacts/manifest.json: features of " + lc.dataset +
                                 " differ from the core's; retrain with npm run train");
      }
      m.classes.push_back(std::move(lc));
    }
    const Json fits = doc.contains("prenet_baseline") ? doc["prenet_baseline"].at("fits") : Json::object();
    m.prenet_dense_forward = pair_of(fits, "layer_dense", "forward");
    m.prenet_dense_step = pair_of(fits, "layer_dense", "step");
    m.prenet_conv_forward = pair_of(fits, "layer_conv", "forward");
    m.prenet_conv_step = pair_of(fits, "layer_conv", "step");
    return m;
  }();
  return manifest;
}

Kernel sixteen_bit_twin(const Kernel& low, Precision precision) {
  Kernel twin = low;
  twin.bytes = activation_bytes(precision) * (low.m * low.k + low.k * low.n + low.m * low.n) * std::max(low.batch, 1.0);
  twin.fp8 = false;
  twin.fp4 = false;
  return twin;
}

double low_precision_scale(const Kernel& low, const Accelerator& acc, Precision precision) {
  const Kernel twin = sixteen_bit_twin(low, precision);
  const bool measured = acc.achievable_tflops[static_cast<int>(Precision::FP8)].has_value() &&
                        acc.achievable_tflops[static_cast<int>(kernel_precision(twin, acc, precision))].has_value();
  auto ideal_ms = [&](const Kernel& k) {
    RooflineParams ideal;
    ideal.matmul_efficiency = measured ? achievable_matmul_fraction(acc, precision, k) : 1.0;
    ideal.memory_efficiency = 1.0;
    return kernel_time(k, acc, precision, ideal).total_ms();
  };
  const double twin_ms = ideal_ms(twin);
  return twin_ms > 0 ? ideal_ms(low) / twin_ms : 1.0;
}

int learned_class_for(KernelClass c) {
  const auto& classes = learned_manifest().classes;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    for (const auto& s : classes[i].serves) {
      if (s == to_string(c)) return static_cast<int>(i);
    }
  }
  return -1;
}

std::size_t LearnedBatch::rows(std::size_t cls) const {
  std::size_t width = learned_manifest().classes.at(cls).features.size();
  return width ? features.at(cls).size() / width : 0;
}

LearnedBatch learned_batch(const StepWork& work, const std::vector<Accelerator>& accelerators, Precision precision) {
  const auto& classes = learned_manifest().classes;
  LearnedBatch b;
  b.features.resize(classes.size());
  b.roofline_ms.resize(classes.size());
  b.floor_ms.resize(classes.size());
  std::vector<std::unordered_map<std::string, std::size_t>> seen(classes.size());  // feature bytes -> row
  // Repeated layers repeat their kernels: compute each distinct kernel's features once per accelerator.
  // Kernels are keyed by the bits of their fields (equal bits, equal features) without a string each.
  std::map<std::array<std::uint64_t, 19>, std::size_t> distinct;
  std::vector<std::size_t> kernel_to_distinct;
  kernel_to_distinct.reserve(work.kernels.size());
  std::vector<const Kernel*> distinct_kernels;
  std::vector<int> distinct_class;
  // The step's optimizer kernels are one multi-tensor update (step_work): timed once, shared by bytes.
  const Kernel update = step_update(work);
  b.kernel_share.reserve(work.kernels.size());
  for (const Kernel& k : work.kernels) {
    b.kernel_share.push_back(k.cls == KernelClass::Optimizer && update.bytes > 0 ? k.bytes / update.bytes : 1.0);
  }
  for (const Kernel& kernel : work.kernels) {
    const Kernel& k = kernel.cls == KernelClass::Optimizer ? update : kernel;
    const double fields[] = {static_cast<double>(k.cls),
                             static_cast<double>(k.phase),
                             k.flops,
                             k.bytes,
                             k.m,
                             k.n,
                             k.k,
                             k.batch,
                             k.repeats,
                             k.window,
                             k.stride,
                             k.misaligned ? 1.0 : 0.0,
                             k.fp8 ? (k.fp4 ? 2.0 : 1.0) : 0.0,
                             static_cast<double>(k.fused_attention),
                             k.causal ? 1.0 : 0.0,
                             k.window_positions,
                             k.grouped ? 1.0 : 0.0,
                             static_cast<double>(k.part),
                             k.heads};
    std::array<std::uint64_t, 19> key{};
    std::memcpy(key.data(), fields, sizeof fields);
    auto [it, inserted] = distinct.emplace(key, distinct_kernels.size());
    if (inserted) {
      distinct_kernels.push_back(&k);
      distinct_class.push_back(learned_class_for(k.cls));
    }
    kernel_to_distinct.push_back(it->second);
  }
  // The row of kernel `k` on `acc` in class `c`'s model input (added once per distinct feature row).
  auto row_of = [&](const Kernel& k, const Accelerator& acc, std::size_t c) {
    std::vector<double> f = item_features({k}, acc, precision, classes[c].feature_set);
    // Keyed before the clamp: kernels that differ only in a clamped input still differ in roofline time.
    std::vector<float> as_computed(f.begin(), f.end());
    // The floor below also depends on the accelerator's measured achievable peak, which no feature carries.
    const double achievable = achievable_matmul_fraction(acc, precision, k);
    as_computed.push_back(static_cast<float>(achievable));
    std::string key(reinterpret_cast<const char*>(as_computed.data()), as_computed.size() * sizeof(float));
    auto [it, inserted] = seen[c].emplace(std::move(key), b.roofline_ms[c].size());
    if (inserted) {
      fit_to_range(classes[c].range, f);
      b.features[c].insert(b.features[c].end(), f.begin(), f.end());
      // Rows are aligned GEMMs' (what the models saw); a misaligned kernel's slowdown is applied per kernel.
      Kernel aligned = k;
      aligned.misaligned = false;
      b.roofline_ms[c].push_back(roofline_ms({aligned}, acc, precision));
      // No kernel beats its nominal FLOPs at the accelerator's measured achievable matrix peak (the dense peak where
      // none is measured) or its bytes at full bandwidth. (cuDNN's Winograd convolutions can, by doing fewer
      // multiplications; predictions stay at the nominal bound.)
      RooflineParams ideal;
      ideal.matmul_efficiency = achievable;
      ideal.memory_efficiency = 1.0;
      ideal.launch_overhead_ms = 0.0;
      Kernel untiled = aligned;
      untiled.m = untiled.n = 0;  // no tiling loss in the bound
      b.floor_ms[c].push_back(kernel_time(untiled, acc, precision, ideal).total_ms());
    }
    return it->second;
  };
  const int gemm_class = learned_class_for(KernelClass::Gemm);
  const std::pair<int, std::size_t> none{-1, 0};
  for (const Accelerator& acc : accelerators) {
    const bool covered = learned_covers(acc);
    std::vector<double> levels(classes.size());
    for (std::size_t c = 0; c < classes.size(); ++c) levels[c] = std::exp(learned_level(classes[c], acc, precision));
    b.level_factor.push_back(std::move(levels));
    // A misaligned GEMM is never an FP8 linear's (layers/fp8.cpp): under fp8 it runs in bf16.
    b.misaligned_factor.push_back(misaligned_slowdown(acc, precision == Precision::FP8 ? Precision::BF16 : precision));
    std::vector<std::pair<int, std::size_t>> distinct_refs, distinct_slices;
    std::vector<double> distinct_products(distinct_kernels.size(), 1.0);
    std::vector<double> distinct_scales(distinct_kernels.size(), 1.0);
    distinct_refs.reserve(distinct_kernels.size());
    distinct_slices.reserve(distinct_kernels.size());
    for (std::size_t d = 0; d < distinct_kernels.size(); ++d) {
      const Kernel* k = distinct_kernels[d];
      // Measured fused attention, delta-rule and chunk-scan kernels (kernels the learned classes never saw) are timed
      // from their own tables.
      std::optional<double> fused = fused_attention_ms(*k, acc, precision);
      if (!fused) fused = delta_rule_ms(*k, acc, precision);
      if (!fused) fused = ssd_ms(*k, acc, precision);
      int cls = covered && !fused ? distinct_class[d] : -1;
      // No model saw an FP8 or FP4 kernel, and through the peak features alone they put a large FP8 linear at about
      // 1.35x its 16-bit speed where the parts' measured matmuls reach 1.8-2x (docs/PREDICTION.md §6): such a GEMM is
      // its 16-bit twin's learned time scaled by the two precisions' roofline ratio.
      Kernel twin;
      if (cls >= 0 && k->fp8 && is_matmul(k->cls)) {
        twin = sixteen_bit_twin(*k, precision);
        distinct_scales[d] = low_precision_scale(*k, acc, precision);
        k = &twin;
      }
      if (cls >= 0 && k->grouped && k->cls == KernelClass::BatchedGemm && gemm_class >= 0 && k->batch > 1) {
        // A grouped GEMM's products are separate GEMMs of separate weights (Megatron's grouped expert GEMMs):
        // the GEMM model times one, which the batched-GEMM model's shapes (heads of attention) never were.
        distinct_refs.emplace_back(gemm_class, row_of(one_product(*k), acc, static_cast<std::size_t>(gemm_class)));
        distinct_slices.push_back(none);
        distinct_products[d] = k->batch;
        continue;
      }
      // The batched-GEMM model has no 16-bit row (NeuSight's products are FP32) and puts aligned attention
      // products at 7-10x their roofline, which the H200's eager-attention timings refute (docs/PREDICTION.md §6).
      if (cls >= 0 && k->cls == KernelClass::BatchedGemm && gemm_class >= 0 && k->batch > 1 &&
          k->fused_attention == FusedAttentionLibrary::None && is_16bit(kernel_precision(*k, acc, precision))) {
        distinct_refs.emplace_back(gemm_class, row_of(stacked_products(*k), acc, static_cast<std::size_t>(gemm_class)));
        distinct_slices.push_back(none);
        continue;
      }
      if (cls < 0) {
        distinct_refs.emplace_back(-1, b.fallback_ms.size());
        distinct_slices.push_back(none);
        b.fallback_ms.push_back(fused ? *fused : roofline_ms({*k}, acc, precision));
        continue;
      }
      distinct_refs.emplace_back(cls, row_of(*k, acc, static_cast<std::size_t>(cls)));
      // Only where both models promise monotonicity does the bound matter (and cost rows).
      if (k->cls == KernelClass::BatchedGemm && gemm_class >= 0 && gemm_class != cls && k->batch > 1 &&
          classes[static_cast<std::size_t>(cls)].monotone && classes[static_cast<std::size_t>(gemm_class)].monotone) {
        distinct_slices.emplace_back(gemm_class, row_of(one_product(*k), acc, static_cast<std::size_t>(gemm_class)));
      } else {
        distinct_slices.push_back(none);
      }
    }
    b.kernel_rows.push_back(per_kernel(distinct_refs, kernel_to_distinct));
    b.slice_rows.push_back(per_kernel(distinct_slices, kernel_to_distinct));
    b.products.push_back(per_kernel(distinct_products, kernel_to_distinct));
    b.precision_scale.push_back(per_kernel(distinct_scales, kernel_to_distinct));
  }
  return b;
}

std::vector<Timing> learned_times(const StepWork& work, const LearnedBatch& batch,
                                  const std::vector<std::vector<float>>& outputs,
                                  std::vector<std::array<double, 2>>& step_interval_ms) {
  const auto& classes = learned_manifest().classes;
  if (outputs.size() != classes.size()) {
    throw InputError("outputs", "expected " + std::to_string(classes.size()) + " model outputs, got " +
                                    std::to_string(outputs.size()));
  }
  for (std::size_t c = 0; c < classes.size(); ++c) {
    if (outputs[c].size() != batch.roofline_ms[c].size()) {
      throw InputError("outputs", classes[c].dataset + ": expected " + std::to_string(batch.roofline_ms[c].size()) +
                                      " values, got " + std::to_string(outputs[c].size()));
    }
    for (float y : outputs[c]) {
      if (!std::isfinite(y)) throw InputError("outputs", classes[c].dataset + ": a model returned a non-finite value");
    }
  }
  // Each row's model time and each class's band factors once: rows are shared by the kernels of repeated
  // layers and by every accelerator, and exp dominated this function when taken per kernel. The
  // accelerator's level and the physical floor are applied per kernel (rows are shared across GPUs).
  std::vector<std::vector<double>> row_ms(classes.size());
  std::vector<double> low_factor(classes.size()), high_factor(classes.size()), harness_floor(classes.size());
  for (std::size_t c = 0; c < classes.size(); ++c) {
    row_ms[c].resize(outputs[c].size());
    for (std::size_t r = 0; r < row_ms[c].size(); ++r) {
      row_ms[c][r] = learned_model_ms(classes[c], outputs[c][r], batch.roofline_ms[c][r]);
    }
    low_factor[c] = std::exp(classes[c].q10);
    high_factor[c] = std::exp(classes[c].q90);
    harness_floor[c] = harness_floor_ms(classes[c].dataset);
  }
  std::vector<Timing> out;
  step_interval_ms.clear();
  for (std::size_t h = 0; h < batch.kernel_rows.size(); ++h) {
    Timing t;
    t.layers.resize(work.layers.size());
    double low = 0, high = 0, shared = 0;
    for (std::size_t i = 0; i < work.kernels.size(); ++i) {
      const Kernel& k = work.kernels[i];
      auto [cls, row] = batch.kernel_rows[h][i];
      auto phase = static_cast<std::size_t>(k.phase);
      double ms = 0, to_low = 1, to_high = 1, share = 0.5;  // a fallback kernel has no band: exp(0)
      if (cls < 0) {
        ms = batch.fallback_ms[row];
      } else {
        auto c = static_cast<std::size_t>(cls);
        ms = bounded_kernel_ms(row_ms[c][row] * batch.level_factor[h][c], batch.floor_ms[c][row],
                               classes[c].ceiling_ratio * batch.roofline_ms[c][row]);
        auto [slice_cls, slice_row] = batch.slice_rows[h][i];
        if (slice_cls >= 0) {
          auto s = static_cast<std::size_t>(slice_cls);
          ms = std::max(ms,
                        bounded_kernel_ms(row_ms[s][slice_row] * batch.level_factor[h][s], batch.floor_ms[s][slice_row],
                                          classes[s].ceiling_ratio * batch.roofline_ms[s][slice_row]));
        }
        // A misaligned GEMM's fallback kernels reach 1/factor of the aligned throughput: it takes at least
        // its aligned roofline time times the factor; one too small to be throughput-bound keeps its time.
        if (k.misaligned && batch.misaligned_factor[h] > 1) {
          ms = std::max(ms, batch.misaligned_factor[h] * batch.roofline_ms[c][row]);
        }
        ms = in_step_ms(ms, harness_floor[c], batch.floor_ms[c][row] + kStepLaunchGapMs);
        to_low = low_factor[c];
        to_high = high_factor[c];
        share = classes[c].calibration_share;
      }
      ms *= batch.kernel_share[i] * batch.products[h][i] * batch.precision_scale[h][i];
      shared += ms * share;
      t.ms[phase] += ms;
      t.layers[static_cast<std::size_t>(k.layer)].ms[phase] += ms;
      // Errors of one class are correlated within a step (same shapes, same hardware), so bands add up.
      low += ms * to_low;
      high += ms * to_high;
    }
    t.step_ms = t.ms[0] + t.ms[1] + t.ms[2];
    if (t.step_ms > 0) t.calibration_share = shared / t.step_ms;
    step_interval_ms.push_back({low, high});
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace prenet
