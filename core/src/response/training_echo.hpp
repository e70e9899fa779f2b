#pragma once
// The `training` object a response echoes (docs/API.md): the settings the prediction or the plan used.
#include "prenet/json_util.hpp"
#include "prenet/network.hpp"
#include "prenet/training.hpp"

namespace prenet {

/// Which response echoes the settings: a prediction also echoes the run's length and the image size; a
/// plan sets its own length (plan.samples / plan.tokens) and leaves both out.
enum class EchoFor { Prediction, Plan };

/// The resolved training settings of `training` for a network reading `input`.
Json training_echo(const TrainingConfig& training, const InputSpec& input, EchoFor response);

}  // namespace prenet
