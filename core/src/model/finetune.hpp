#pragma once
// training.finetune applied to a network: which layers train, LoRA adapters on which matrices, and what the
// frozen weights weigh (docs/PREDICTION.md "Fine-tuning").
#include "prenet/network.hpp"
#include "prenet/training.hpp"

namespace prenet {

/// Bytes per weight of a quantized base (bitsandbytes): nf4 (4-bit codes, one 8-bit scale per block of 64,
/// double-quantized with an FP32 scale per 256 blocks) or int8 (LLM.int8: a byte per weight and an FP32 scale
/// per output row of `in` weights); 0 for an unquantized base.
double quantized_weight_bytes(BasePrecision base, double in);

/// Marks what trains under training.finetune (all of it for "full"), gives adapted matrices their LoRA
/// adapters, sets frozen layers' weight bytes and which layers need their input's gradient. Throws InputError
/// naming the training.finetune field that does not fit the model or the training precision.
void apply_finetune(Network& net, const TrainingConfig& training);

}  // namespace prenet
