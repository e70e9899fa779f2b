#pragma once
// training.mtp_layers applied to a network: DeepSeek-V3's multi-token prediction as Megatron-Core builds it
// (docs/PREDICTION.md "Multi-token prediction").
#include "prenet/network.hpp"
#include "prenet/training.hpp"

namespace prenet {

/// Appends training.mtp_layers multi-token prediction depths to a language model, each what Megatron-Core's
/// MultiTokenPredictionLayer runs: the shared embedding's lookup of the tokens one further ahead, RMS/LayerNorms of it
/// (enorm) and of the hidden state (hnorm), their concatenation projected 2h -> h (eh_proj), a copy of the last
/// decoder block, a final norm, then the shared head and a cross-entropy loss. The modules (Layer::mtp_depth) go
/// right after the last decoder block, the heads and losses after the main loss. Throws InputError naming
/// training.mtp_layers for a network without a token embedding, a decoder block to copy or a normed head.
void apply_mtp(Network& net, const TrainingConfig& training);

}  // namespace prenet
