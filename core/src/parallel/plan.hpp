#pragma once
// Plan mode (docs/API.md, "Plan"): every parallel layout of a model on 1..max_gpus accelerators of each
// requested kind that fits in memory, ranked by training time and by cost.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "prenet/hardware.hpp"
#include "prenet/json_util.hpp"
#include "prenet/network.hpp"
#include "prenet/parallel.hpp"
#include "prenet/request.hpp"

namespace prenet {

/// The request's `plan` section.
struct PlanOptions {
  std::int64_t max_gpus = 1024, min_gpus = 1, top = 10;
  std::optional<double> tokens, samples;
  std::map<std::string, double> time_scale;  // accelerator id -> learned / roofline step ratio
};

/// One layout that fits, with its step, whole run, memory of the fullest GPU, MFU and cost.
struct Layout {
  ParallelConfig cfg;
  double step_ms = 0, total_s = 0, memory_gb = 0, mfu = 0;
  std::optional<double> cost_usd;
};

/// The search on one accelerator kind: how many layouts it considered, the fastest and the cheapest.
struct AcceleratorPlan {
  Accelerator acc;
  Fabric fabric;
  double time_scale = 1.0;
  std::size_t considered = 0, fitting = 0;
  std::vector<Layout> by_time, by_cost;  // the top `plan.top` of each ranking; by_cost empty without a price
};

/// A plan request searched.
struct Plan {
  PlanOptions options;
  Request request;  // without `plan` and `parallel`
  Network net;
  double samples = 0, steps = 0;  // of the whole run
  std::vector<AcceleratorPlan> accelerators;
};

/// Validates a plan request and searches its layouts; throws InputError.
Plan search_plan(const Json& doc);

}  // namespace prenet
