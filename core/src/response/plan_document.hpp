#pragma once
// The plan response (docs/API.md, "Plan").
#include "parallel/plan.hpp"
#include "prenet/json_util.hpp"

namespace prenet {

/// The response document of a searched plan.
Json plan_document(const Plan& plan);

}  // namespace prenet
