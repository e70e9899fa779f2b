#pragma once

namespace prenet {

/// The accepted range of a plan request's `plan.time_scale` (one accelerator's learned / roofline step
/// ratio): plan parsing refuses values outside it, the catalogue publishes it (`plan_limits.time_scale`)
/// and engine.js clamps the ratios it measures to it.
constexpr double kMinTimeScale = 1e-3;
constexpr double kMaxTimeScale = 1e3;

}  // namespace prenet
