#pragma once
// What a prediction response is built from: the validated request, its network, one GPU's step work
// and the roofline's timing of it (api/prepare.cpp fills it; the learned path keeps it in a session).
#include <array>
#include <optional>
#include <vector>

#include "prenet/features.hpp"
#include "prenet/memory.hpp"
#include "prenet/network.hpp"
#include "prenet/parallel.hpp"
#include "prenet/request.hpp"
#include "prenet/roofline.hpp"

namespace prenet {

/// Everything about a request except the timing predictor's output.
struct Prepared {
  Request req;
  Network net;         // the whole model
  StepWork work;       // what one GPU runs: the whole batch, or with `parallel` one micro-batch of its shard
  MemoryEstimate mem;  // one GPU without `parallel`
  std::vector<Timing> roofline;
  // With `parallel` only:
  std::optional<ShardedNetwork> shard;
  std::vector<double> saved, saved_none;  // per layer, one micro-batch: under the recompute mode, and without
  std::array<double, 3> model_flops{};    // the whole model's step over the global batch, by phase
  double model_matmul_flops = 0;          // of which matrix kernels (MFU's numerator)
  // Per layer of `work`, the host's time to issue its forward and backward kernels (layer_host_ms).
  std::vector<std::array<double, 2>> layer_host_ms;
};

}  // namespace prenet
