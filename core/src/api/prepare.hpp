#pragma once
// The first half of every prediction: a request document validated and turned into its network, one
// GPU's step work and the roofline's timing of it.
#include "prenet/json_util.hpp"
#include "response/prepared.hpp"

namespace prenet {

/// Validates `doc` and computes everything the response needs but the predictor's timing; throws InputError.
Prepared prepare(const Json& doc);

}  // namespace prenet
