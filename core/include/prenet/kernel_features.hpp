#pragma once
// Feature vectors for the learned predictors: one definition used by the trainer and the product.
// A "work item" is what one measurement timed: a single kernel, or the kernels of one layer's step.
#include <string>
#include <vector>

#include "prenet/features.hpp"
#include "prenet/hardware.hpp"
#include "prenet/roofline.hpp"

namespace prenet {

/// Cumulative feature sets of PreNeT's ablation, plus this project's roofline-relative set.
enum class FeatureSet { Baseline, CO, CO_CM, CO_CM_CT, Roofline };

const char* to_string(FeatureSet set);
const std::vector<FeatureSet>& all_feature_sets();
/// Names of the features of `set`, in order.
std::vector<std::string> feature_names(FeatureSet set);
/// True when the model of `set` predicts log(time / roofline time) instead of log(time).
bool predicts_roofline_ratio(FeatureSet set);

/// The analytic time of a work item on `acc` at `precision` (ms): the roofline of docs/PREDICTION.md.
double roofline_ms(const std::vector<Kernel>& item, const Accelerator& acc, Precision precision,
                   const RooflineParams& params = {});

/// The feature vector of a work item for `set` (length feature_names(set).size()). All values finite.
std::vector<double> item_features(const std::vector<Kernel>& item, const Accelerator& acc, Precision precision,
                                  FeatureSet set);

}  // namespace prenet
