#pragma once
// Learned per-kernel-class predictors: which ONNX model times which kernel, the feature rows they need,
// and turning their outputs back into kernel times. The models run outside the core (ONNX Runtime in
// the engine); the core builds their inputs and assembles the result, so page, CLI and tests agree.
#include <array>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "prenet/features.hpp"
#include "prenet/hardware.hpp"
#include "prenet/kernel_features.hpp"
#include "prenet/roofline.hpp"

namespace prenet {

/// Accelerator id (or chip) -> precision -> a model's log(time) level there.
using Levels = std::map<std::string, std::map<std::string, double>>;

/// The levels of the measured GPUs, and derived from them once the mean level of each chip's measured GPUs.
struct LevelTable {
  Levels by_gpu;
  Levels by_chip;
};

/// The table of measured levels `by_gpu` (catalogue ids; an id not in the catalogue joins no chip).
LevelTable level_table(Levels by_gpu);

/// What a model saw in training, per input: [min, max] (`bounds`) and whether the input grows with the
/// kernel (`grows`, from size_monotone_features).
struct FeatureRange {
  std::vector<std::array<double, 2>> bounds;
  std::vector<int> grows;
};

/// The range of feature set `set` from per-feature training [min, max]; throws std::invalid_argument when
/// `bounds` does not match the set's features or the set has no growing features (only the monotone
/// set separates growing from free inputs).
FeatureRange make_feature_range(FeatureSet set, std::vector<std::array<double, 2>> bounds);

/// Clamps the free inputs of `features` (layer constants: window, stride, phase, element size) into
/// `range`; growing inputs pass unchanged, so a larger kernel keeps growing through them.
void fit_to_range(const FeatureRange& range, std::vector<double>& features);

struct LearnedClass {
  std::string dataset;                            // "gemm", "conv", ... (the ONNX file is <dataset>.onnx)
  std::string model;                              // "gbdt", "mlp", ...
  std::vector<std::string> serves;                // kernel classes it times
  std::vector<std::string> features;              // names, in input order
  double q10 = 0, q90 = 0;                        // 80% band of log(measured / predicted) on unseen GPUs
  double calibration_share = 0.5;                 // share of one GPU's log error another GPU has (held-out correlation)
  FeatureSet feature_set = FeatureSet::Roofline;  // which item_features the model reads
  bool predicts_ratio = true;                     // output is log(time / roofline) (else log(time), in ms)
  bool monotone = false;  // the model never decreases as a kernel grows (manifest monotone_in_size)
  // Per measured GPU and precision, the model's median log(measured / predicted) on those training rows.
  LevelTable levels;
  // The training range of the model's inputs (empty: no range known, inputs pass unchanged).
  FeatureRange range;
  // Largest measured / roofline time ratio in training (>= 1): no kernel is predicted slower than that.
  double ceiling_ratio = std::numeric_limits<double>::infinity();
};

/// log(time) offset of class `cls` on `acc` at `precision`: its own measured level, else the mean level
/// of the measured GPUs built on the same chip, else 0 (always 0 for a custom accelerator); for FP16 or BF16,
/// a level of the other 16-bit type where that one is missing. Independent of kernel size.
double learned_level(const LearnedClass& cls, const Accelerator& acc, Precision precision);

/// One kernel's time (ms) from its model output: the model's time, never below the physical bound
/// `floor_ms` nor above the class's ceiling_ratio x `roofline_ms`. Non-decreasing in kernel size when the
/// model's time is (docs/PREDICTION.md).
double learned_kernel_ms(const LearnedClass& cls, float output, double roofline_ms, double floor_ms);

/// `model_ms` held between `floor_ms` and `ceiling_ms` (the floor wins if they cross).
double bounded_kernel_ms(double model_ms, double floor_ms, double ceiling_ms);

/// The model's time (ms) from its output, before the level and the floor: exp(output) x (roofline if a ratio).
double learned_model_ms(const LearnedClass& cls, float output, double roofline_ms);

/// Per-call timing floor (ms) of the harness that measured `dataset`'s training rows, for the classes whose
/// rows all come from one per-op harness (NeuSight's PyTorch sweep); 0 for classes whose rows mix harnesses.
double harness_floor_ms(const std::string& dataset);

/// A kernel's time inside a training step (ms) from its time as a per-op harness measured it (`harness_ms`,
/// one op between two events): that harness's floor taken out in quadrature, since a small op there waits for
/// the host's dispatch while inside a step the host runs ahead; at least `least_ms`, at most `harness_ms`.
/// Non-decreasing in `harness_ms` and `least_ms`.
double in_step_ms(double harness_ms, double floor_ms, double least_ms);

/// The GPU's time between consecutive kernels of a training step (ms per launch), measured on the project's own
/// profiled steps (`node models/data-tools/harness-floor.mjs`).
constexpr double kStepLaunchGapMs = 0.001;

struct LearnedManifest {
  std::string version;
  std::string data_hash;
  std::vector<LearnedClass> classes;
  // PreNeT-faithful baseline: log(ms) = a + b log(CT ms), per layer family and phase set.
  std::array<double, 2> prenet_dense_forward{}, prenet_dense_step{}, prenet_conv_forward{}, prenet_conv_step{};
};

/// The manifest compiled into the core (models/artifacts/manifest.json); empty classes if none shipped.
const LearnedManifest& learned_manifest();

/// Index into learned_manifest().classes of the model timing kernel class `c`; -1 when none does.
int learned_class_for(KernelClass c);

/// Every kernel of `work` on every accelerator as model input rows, deduplicated per class.
struct LearnedBatch {
  std::vector<std::vector<float>> features;      // per class: row-major [rows x width]
  std::vector<std::vector<double>> roofline_ms;  // per class: the roofline time of each row's kernel
  std::vector<std::vector<double>> floor_ms;     // per class: the physical bound (100% of peak and bandwidth)
  // [accelerator][kernel] -> (class, row); class -1: no model times this kernel class, and row indexes
  // fallback_ms (its roofline time) instead.
  std::vector<std::vector<std::pair<int, std::size_t>>> kernel_rows;
  // [accelerator][kernel] -> (class, row) of one product of a batched GEMM in the GEMM model, whose time
  // bounds the batch's from below (class -1 for every other kernel): a batch of 2 is never faster than
  // the plain GEMM a batch of 1 is timed as.
  std::vector<std::vector<std::pair<int, std::size_t>>> slice_rows;
  std::vector<double> fallback_ms;
  std::vector<std::vector<double>> level_factor;  // [accelerator][class] exp(learned_level)
  std::vector<double> misaligned_factor;          // [accelerator] misaligned_slowdown of a flagged GEMM
  // [kernel] the share of its row's time a kernel takes: optimizer kernels share the one row of the step's
  // multi-tensor update (by bytes); 1 for every other kernel.
  std::vector<double> kernel_share;
  // [accelerator][kernel] how many products the row's time counts: a grouped GEMM's (Kernel::grouped), timed
  // as one product's GEMM row, when the models cover the accelerator; 1 for every other kernel.
  std::vector<std::vector<double>> products;
  // [accelerator][kernel] the factor from a 16-bit GEMM's time to its FP8/FP4 twin's (low_precision_scale), for
  // the low-precision GEMMs the models time as 16-bit ones; 1 for every other kernel.
  std::vector<std::vector<double>> precision_scale;
  std::size_t rows(std::size_t cls) const;
};

/// An FP8 or FP4 GEMM as the learned models can time it: the same product with the 16-bit operands of `precision`'s
/// activations, the precision their GEMM rows were measured in (none of them is an FP8 or FP4 kernel).
Kernel sixteen_bit_twin(const Kernel& low, Precision precision);

/// The factor from the learned time of `low`'s 16-bit twin to `low`'s own on `acc`: the ratio of their roofline times
/// at the part's measured achievable matrix peaks (both dense peaks where either precision's is unmeasured), full
/// bandwidth and one launch each; about achievable 16-bit / achievable FP8 for a large product, near 1 for a tiny one.
double low_precision_scale(const Kernel& low, const Accelerator& acc, Precision precision);

/// Whether the learned models may time `acc`: GPUs (the kind every training measurement was taken on,
/// NVIDIA and AMD) and custom accelerators; TPUs and Gaudi parts are timed by the roofline, since their
/// units are not a GPU's and nothing of their kind was measured (docs/PREDICTION.md §6).
bool learned_covers(const Accelerator& acc);

/// Feature rows of the distinct kernels of `work` on each accelerator the models cover; every kernel of
/// an accelerator they do not cover is a fallback (its roofline time).
LearnedBatch learned_batch(const StepWork& work, const std::vector<Accelerator>& accelerators, Precision precision);

/// Per-accelerator timings from model outputs (`outputs[class][row]` = log(time / roofline) or log(time ms),
/// as the class's manifest entry says), plus the
/// 80% interval of each step as [low, high] ms. Throws InputError naming `outputs` on a size mismatch.
std::vector<Timing> learned_times(const StepWork& work, const LearnedBatch& batch,
                                  const std::vector<std::vector<float>>& outputs,
                                  std::vector<std::array<double, 2>>& step_interval_ms);

}  // namespace prenet
