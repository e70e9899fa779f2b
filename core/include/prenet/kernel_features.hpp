#pragma once
// Feature vectors for the learned predictors: one definition used by the trainer and the product.
// A "work item" is what one measurement timed: a single kernel, or the kernels of one layer's step.
#include <optional>
#include <string>
#include <vector>

#include "prenet/features.hpp"
#include "prenet/hardware.hpp"
#include "prenet/roofline.hpp"

namespace prenet {

/// Cumulative feature sets of PreNeT's ablation, plus this project's roofline-relative set, plus the
/// monotone set: features that either never decrease as a kernel grows or do not depend on its size.
enum class FeatureSet { Baseline, CO, CO_CM, CO_CM_CT, Roofline, Monotone };

const char* to_string(FeatureSet set);
/// The set named `name` (to_string's inverse); throws std::invalid_argument for an unknown name.
FeatureSet feature_set_from_string(const std::string& name);
/// The ablation's sets (Baseline .. Roofline); Monotone is separate (its models are monotone MLPs).
const std::vector<FeatureSet>& all_feature_sets();
/// Per feature of `set`: 1 when it never decreases as one kernel grows in any dimension (m, n, k, batch,
/// elements, recurrent steps), 0 when it does not depend on the kernel's size. Only the Monotone set is
/// split this way; other sets return an empty vector. A model non-decreasing in the 1-features is
/// non-decreasing in kernel size (tests/core/test_kernel_features.cpp checks the split).
std::vector<int> size_monotone_features(FeatureSet set);
/// Names of the features of `set`, in order.
std::vector<std::string> feature_names(FeatureSet set);
/// True when the model of `set` predicts log(time / roofline time) instead of log(time) (Roofline only).
bool predicts_roofline_ratio(FeatureSet set);

/// The analytic time of a work item on `acc` at `precision` (ms): the roofline of docs/PREDICTION.md.
double roofline_ms(const std::vector<Kernel>& item, const Accelerator& acc, Precision precision,
                   const RooflineParams& params = {});

/// The measured time of a fused attention pass on `acc` (ms; docs/PREDICTION.md, "Fused attention"): its
/// FLOPs over the mask's visible blocks of the catalogue's block size / (efficiency x 16-bit peak) + the
/// pass's overhead; nullopt when `k` is no fused attention kernel, the catalogue has no timing for its
/// library on `acc`, or `precision` keeps attention in 32 bits.
std::optional<double> fused_attention_ms(const Kernel& k, const Accelerator& acc, Precision precision);

/// The measured time of a Gated DeltaNet chunk kernel on `acc` (ms; docs/MODEL_FORMAT.md, "Gated DeltaNet"): its
/// FLOPs / (the catalogue's `delta_rule` rate x heads / (heads + half_heads)) for its direction; nullopt when `k` is
/// no delta-rule kernel, the catalogue has no such timing for `acc`, or `precision` keeps it in 32 bits.
std::optional<double> delta_rule_ms(const Kernel& k, const Accelerator& acc, Precision precision);

/// The measured time of a Mamba-2 chunk scan on `acc` (ms; docs/MODEL_FORMAT.md, "Mamba mixers"): the catalogue's
/// `ssd` overhead + FLOPs / its rate, the forward's rate also for the backward (only the forward was measured);
/// nullopt when `k` is no chunk scan, the catalogue has no such timing for `acc`, or `precision` keeps it in 32 bits.
std::optional<double> ssd_ms(const Kernel& k, const Accelerator& acc, Precision precision);

/// The feature vector of a work item for `set` (length feature_names(set).size()). All values finite.
std::vector<double> item_features(const std::vector<Kernel>& item, const Accelerator& acc, Precision precision,
                                  FeatureSet set);

}  // namespace prenet
