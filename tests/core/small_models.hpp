// Small models shared by the memory and fine-tuning tests, so each is written once.
#pragma once

#include <cstdint>

#include "prenet/catalog.hpp"
#include "prenet/json_util.hpp"
#include "prenet/network.hpp"
#include "prenet/training.hpp"

namespace testutil {

/// A small Llama config (text): hidden 64, 4 heads of 16 with 2 KV heads (K and V 64 x 32), MLP 128, 2 layers,
/// vocabulary 128, untied head. Per layer q, o 64 x 64 (4,096), k, v 64 x 32 (2,048), gate, up, down 64 x 128
/// (8,192); the embedding and lm_head 128 x 64 (8,192); five RMSNorm scales of 64.
inline const char* small_llama_config() {
  return R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
        "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 128, "max_position_embeddings": 32,
        "hidden_act": "silu", "rms_norm_eps": 1e-5, "tie_word_embeddings": false})";
}

/// A dropout-free GPT-2 of `layers` blocks of `heads` heads over `hidden`, vocabulary `vocab`, `seq` positions,
/// read for BF16 training at sequence length `seq`.
inline prenet::Network bf16_gpt2(std::int64_t hidden, std::int64_t heads, std::int64_t layers, std::int64_t vocab,
                                 std::int64_t seq) {
  prenet::TrainingConfig tr;
  tr.seq_len = seq;
  tr.precision = prenet::Precision::BF16;
  const prenet::Json config = {{"model_type", "gpt2"}, {"n_embd", hidden},    {"n_head", heads},
                               {"n_layer", layers},    {"vocab_size", vocab}, {"n_positions", seq},
                               {"attn_pdrop", 0.0},    {"resid_pdrop", 0.0},  {"embd_pdrop", 0.0}};
  return prenet::resolve_model({{"hf_config", config}}, tr);
}

}  // namespace testutil
