#pragma once
// One accelerator's result object of a prediction response (docs/API.md, `results[]`), without its
// per-layer columns (layer_columns.hpp), which are spliced in as text.
#include <array>
#include <cstdint>
#include <optional>

#include "prenet/features.hpp"
#include "prenet/hardware.hpp"
#include "prenet/json_util.hpp"
#include "prenet/memory.hpp"
#include "prenet/parallel.hpp"
#include "prenet/roofline.hpp"
#include "prenet/training.hpp"

namespace prenet {

/// FLOPs of the matrix kernels of `work` (MFU's numerator).
double matmul_flops(const StepWork& work);

/// What a result needs besides its timing: the baselines and, for learned predictions, the 80% band.
struct ResultExtras {
  Json baselines;
  const char* predictor = "roofline";                // what timed this accelerator
  std::optional<std::array<double, 2>> interval_ms;  // of the compute the timing covers (before calibration)
  double calibration_factor = 1.0;
  std::optional<double> calibration_share;  // with a calibration: the exponent of its factor used here
};

/// One result's step in the parts of docs/API.md, each already rounded, so the parts add up exactly.
struct StepParts {
  double forward_ms = 0, backward_ms = 0, optimizer_ms = 0;
  double data_ms = 0, tensor_ms = 0, pipeline_ms = 0, zero_ms = 0, bubble_ms = 0;
  double offload_ms = 0;  // training.offload / activation_offload: host traffic and the CPU step not hidden
  double expert_ms = 0;   // parallel.expert: the exposed all-to-all dispatch and combine
  double context_ms = 0;  // parallel.context: the ring's exposed time
  double input_ms = 0;    // training.input_rate: the wait for the input pipeline beyond everything else
  // Not a part of the step: the host's time to issue its forward and backward kernels (host_issue.hpp), and
  // whether it, not the device, set the forward or backward time of the critical stage.
  std::array<double, 2> host_issue_ms{};  // forward, backward
  bool host_bound = false;
  double compute_ms() const { return forward_ms + backward_ms + optimizer_ms; }
  double communication_ms() const { return data_ms + tensor_ms + pipeline_ms + zero_ms + expert_ms + context_ms; }
  // Summed left to right in the documented order, so a reader adding the fields gets the same double.
  double step_ms() const {
    return forward_ms + backward_ms + optimizer_ms + data_ms + tensor_ms + pipeline_ms + zero_ms + bubble_ms +
           offload_ms + expert_ms + context_ms + input_ms;
  }
};

/// `parts` with the wait for the input pipelines of `replicas` model replicas (training.input_rate): what their
/// delivery of the step's batch takes beyond the rest of the step (docs/PREDICTION.md, "Input pipeline").
StepParts with_input(StepParts parts, const TrainingConfig& training, std::int64_t replicas);

/// The rounded parts of a single-GPU step, each phase scaled by the calibration `factor`; the forward and backward
/// at least the host's time to issue them (`host_ms`, step_host_ms).
StepParts single_gpu_parts(const Timing& t, double factor, const std::array<double, 2>& host_ms);
/// `parts` with the offload time `offload_ms` (unrounded): the device's optimizer step moves to the CPU (inside
/// offload_ms) when training.offload moves the optimizer.
StepParts with_offload(StepParts parts, double offload_ms, const TrainingConfig& training);
/// The rounded parts of a parallel step.
StepParts parallel_parts(const ParallelTiming& pt);

/// The parts of a result beyond one GPU's step (all absent for single-GPU requests).
struct ParallelExtras {
  std::int64_t gpus = 1;
  double model_flops_scale = 1.0;  // MFU: model matmul FLOPs of the step / those of `work`
  Json parallel;                   // the response's `parallel` object
  Json advice;                     // memory_advice, when the model does not fit
};

/// The result object for accelerator `acc` timed by `t` (docs/API.md); `par` is null without `parallel`.
Json result_for(const Accelerator& acc, const Timing& t, const StepWork& work, const MemoryEstimate& mem,
                const TrainingConfig& training, const ResultExtras& extras, const StepParts& parts,
                const ParallelExtras* par);

/// The response's `parallel` object: the layout, the step's communication and bubble, the links used.
Json parallel_json(const ParallelConfig& cfg, const Fabric& fabric, const StepParts& parts, const ParallelTiming& pt);

}  // namespace prenet
