#pragma once
// The reads of model_types.cpp that are more than field renaming: one hook per quirk, each with the
// signature of `Hook` (steps.hpp).
#include <string>
#include <vector>

#include "model/hf/arch.hpp"
#include "model/hf/config_reader.hpp"

namespace prenet::hf {

/// Falcon's KV heads: multi-query (7B) or grouped (new_decoder_architecture), and the LayerNorms of a parallel
/// block (num_ln_in_parallel_attn: 2 by default in the new architecture, 40B/180B; 1 in Falcon2-11B).
void falcon_kv_heads(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Falcon's parallel attention + MLP (parallel_attn, required in the new architecture); refuses
/// apply_residual_connection_post_layernorm.
void falcon_parallel(const Cfg& c, Arch& a, std::vector<std::string>& warnings);

/// Falcon's positions: rotary, or ALiBi biases (alibi: true) with nothing rotated.
void falcon_rotary(const Cfg& c, Arch& a, std::vector<std::string>& warnings);

/// The share of each head RoPE rotates from `key` (a fraction of the head, GPT-NeoX's rotary_pct and the
/// partial_rotary_factor of Phi, Phi-3 and GLM), `fallback` when absent; in (0, 1].
void rotary_share(const Cfg& c, Arch& a, const char* key, double fallback);

/// GPT-J's rotary_dim: the width of each head rotated (64 of 256 in GPT-J-6B); absent, the whole head.
void gptj_rotary(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// OPT's final LayerNorm: only in pre-norm models, unless _remove_final_layer_norm.
void opt_final_norm(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// T5's d_kv must be given when num_heads exceeds d_model (the default d_model / num_heads is then 0).
void t5_head_dim_given(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// T5's feed_forward_proj: "relu", "gelu" or a "gated-" variant.
void t5_feed_forward(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Switch Transformers' sparse steps: a stored step, else derived from the sparse layer counts.
void switch_sparse_steps(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// One vocabulary shared by encoder and decoder (BART, mBART, Marian).
void shared_vocab_table(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Separate source and target vocabularies (FSMT).
void separate_vocab_tables(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Encoder and decoder head counts must divide d_model.
void seq2seq_heads_divide(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// DistilBERT's sequence classifier drops out seq_classif_dropout unless classifier_dropout is given.
void distil_classifier_dropout(const Cfg& c, Arch& a, std::vector<std::string>& warnings);

}  // namespace prenet::hf
