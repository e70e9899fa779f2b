#pragma once
// Memory advice (docs/API.md, `memory_advice`): when a parallel layout does not fit, the single changes
// to it after which the fullest GPU does.
#include <vector>

#include "parallel/layout.hpp"
#include "prenet/json_util.hpp"

namespace prenet {

/// Single changes to `cfg` after which the fullest GPU fits the evaluator's accelerator of `memory_gb`,
/// each with its memory; `layer_cost` (forward + backward ms per layer of the request's own timing) splits
/// the stages of the layouts that run the evaluator's reused work, the roofline those of the others.
Json memory_advice(LayoutEvaluator& layouts, const ParallelConfig& cfg, double memory_gb,
                   const std::vector<double>& layer_cost);

}  // namespace prenet
