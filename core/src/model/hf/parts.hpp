#pragma once
// The families and the shared step lists of the model-type tables: each table file (model_types.cpp for the
// classic families, types_*.cpp for the others) composes its rows from these parts and its own.
#include "model/hf/model_types.hpp"

namespace prenet::hf {

inline constexpr Family kDecoder{build_decoder, false};
inline constexpr Family kEncoder{build_encoder, false};
inline constexpr Family kT5{build_t5, false};
inline constexpr Family kSeq2Seq{build_seq2seq, false};
inline constexpr Family kVit{build_vit, true};

// Decoders (model_types.cpp).
extern const Steps kDecoderCore;  // hidden, layers, heads, vocab under GPT-2's spellings too
extern const Steps kGpt2, kGptNeox, kGptj, kOpt, kPhi, kFalcon;
extern const Steps kLlama;           // RMSNorm, rotary, SwiGLU, GQA, no biases, untied
extern const Steps kOlmo2;           // OLMo 2's block: QK-norm over the projections, norms after each branch
extern const Step kEightKvHeads;     // Mistral's default of 8 KV heads
extern const Steps kMixtralExperts;  // num_local_experts, num_experts_per_tok
extern const Steps kQkvBias;         // Qwen2's biased Q, K, V
extern const Steps kGemma;           // GeGLU, tied head
// Encoders.
extern const Steps kBert, kDistilBert, kEncoderTail, kDistilHead;
extern const Step kOneTokenType;
// Encoder-decoders.
extern const Steps kT5Shape, kT5Dense, kT5Positions, kSwitchExperts, kBart, kPreNorm;
extern const Step kUntiedHead, kFairseqAct, kSinusoidal, kSeparateVocabs;
// Vision.
extern const Steps kVitShape;

}  // namespace prenet::hf
