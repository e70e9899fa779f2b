// The table test over real Hugging Face config.json files (tests/fixtures/hf/*.json, sources in SOURCES.md):
// for every file, the parameter count the core reports equals a count written out here, per family, from the
// `__init__` of the transformers modules (embeddings, attention, MLP or experts, norms, head), independently of
// the core's code; for mixture-of-experts models the active parameters (a token's share: its top_k experts,
// everything else whole) too; and the training matrix FLOPs per token are within 2% of
// 6 (N_active - lookup) + 12 s A, the convention of tests/core/test_presets.cpp (Kaplan et al. 2020, C = 6N;
// the attention scores and P V add 2 x 2 s d_attn per layer forward, counted over the whole causal square).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "hf_fixtures.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/error.hpp"

using namespace prenet;

namespace {

/// What the formula of a family says about one config.
struct Expected {
  double total = 0;              // sum(p.numel() for p in model.parameters()), tied weights once
  double active = 0;             // a token's parameters: routed experts it does not visit left out
  double lookup = 0;             // parameters only indexed, never multiplied (untied input tables, position tables)
  double attention_width = 0;    // A: sum over attention layers of heads (d_qk + d_v) / 2
  bool flops_comparable = true;  // false where the standard FLOP formula does not describe the model
};

double num(const Json& c, const char* key, double fallback) {
  auto it = c.find(key);
  if (it == c.end() || it->is_null()) return fallback;
  if (it->is_boolean()) return it->get<bool>() ? 1 : 0;
  return it->get<double>();
}

bool flag(const Json& c, const char* key, bool fallback) {
  auto it = c.find(key);
  if (it == c.end() || it->is_null()) return fallback;
  return it->get<bool>();
}

double linear(double in, double out, bool bias) { return in * out + (bias ? out : 0); }

// ---------------------------------------------------------------------------------------------------------
// Decoder-only families built like LlamaForCausalLM: embed_tokens, per layer self_attn (q/k/v/o projections,
// optional QK norms and sinks), an MLP (SwiGLU gate/up/down, or routed experts with a router), RMSNorms, a final
// norm and lm_head (tied or not). What differs between families is the table of flags below.
struct DecoderFamily {
  bool qkv_bias = false;    // q/k/v projections carry a bias
  bool o_bias = false;      // o_proj carries a bias
  bool mlp_bias = false;    // gate/up/down carry biases (Llama's mlp_bias)
  int norms_per_layer = 2;  // input + post-attention (Gemma 2: + pre/post feed-forward)
  bool norm_weights = true;  // OLMo (v1): OlmoLayerNorm has neither weight nor bias
  int qk_norm = 0;          // 0 none; 1 one head_dim weight each for q and k (Qwen3); 2 over the whole q and k (OLMo 2)
  bool sinks = false;       // one learned logit per head (gpt-oss)
  bool tied_default = false;  // tie_word_embeddings when the config does not say
  bool gated_mlp = true;      // SwiGLU gate/up/down; false: Starcoder2's c_fc / c_proj
  int norm_params = 1;        // per hidden unit of each norm: 1 weight (RMSNorm, bias-free LayerNorm), 2 with a bias
  // Experts: none (dense), Mixtral/Qwen3-MoE style (no biases) or gpt-oss style (biases on experts and router).
  enum class Moe { none, plain, biased } moe = Moe::none;
  bool shared_expert =
      false;  // Qwen2-MoE: a shared SwiGLU expert and its sigmoid gate Linear(h, 1), in every token's path
};

DecoderFamily decoder_family(const std::string& type, const Json& c) {
  DecoderFamily f;
  if (type == "llama" || type == "granite") {  // LlamaAttention: every projection bias=config.attention_bias
    f.qkv_bias = f.o_bias = flag(c, "attention_bias", false);
    f.mlp_bias = flag(c, "mlp_bias", false);
  } else if (type == "qwen2") {  // Qwen2Attention: q/k/v bias=True, o_proj bias=False
    f.qkv_bias = true;
  } else if (type == "qwen3" || type == "qwen3_moe") {  // q_norm / k_norm = Qwen3RMSNorm(head_dim)
    f.qkv_bias = f.o_bias = flag(c, "attention_bias", false);
    f.qk_norm = 1;
    if (type == "qwen3_moe") f.moe = DecoderFamily::Moe::plain;
  } else if (type == "olmo2") {  // q_norm over heads*head_dim, k_norm over kv_heads*head_dim; no input norm
    f.qkv_bias = f.o_bias = flag(c, "attention_bias", false);
    f.qk_norm = 2;
  } else if (type == "gemma2" || type == "gemma3_text") {  // four RMSNorms per layer, tied head by default
    f.qkv_bias = f.o_bias = flag(c, "attention_bias", false);
    f.norms_per_layer = 4;
    f.tied_default = true;
    if (type == "gemma3_text") f.qk_norm = 1;  // Gemma3Attention: q_norm / k_norm over head_dim
  } else if (type == "olmo") {
    f.qkv_bias = f.o_bias = flag(c, "attention_bias", false);
    f.norm_weights = false;
  } else if (type == "mixtral") {
    f.moe = DecoderFamily::Moe::plain;
  } else if (type == "qwen2_moe") {  // Qwen2 attention; experts plus a gated shared expert (below)
    f.qkv_bias = true;
    f.moe = DecoderFamily::Moe::plain;
    f.shared_expert = true;
  } else if (type == "internlm2") {  // InternLM2Attention: wqkv and wo with bias=config.bias
    f.qkv_bias = f.o_bias = flag(c, "bias", true);
  } else if (type == "cohere") {  // one CohereLayerNorm (weight only) per layer feeds attention and MLP in parallel
    f.qkv_bias = f.o_bias = flag(c, "attention_bias", false);
    f.norms_per_layer = 1;
    f.tied_default = true;
    if (flag(c, "use_qk_norm", false)) f.qk_norm = 2;  // CohereLayerNorm((heads, head_dim)) and ((kv_heads, head_dim))
  } else if (type == "starcoder2") {  // q/k/v/o, c_fc, c_proj with bias=use_bias; LayerNorms with bias; tied head
    f.qkv_bias = f.o_bias = f.mlp_bias = flag(c, "use_bias", true);
    f.gated_mlp = false;
    f.norm_params = 2;
    f.tied_default = true;
  } else if (type == "gpt_oss") {
    f.qkv_bias = f.o_bias = flag(c, "attention_bias", true);
    f.sinks = true;
    f.moe = DecoderFamily::Moe::biased;
  }  // mistral, phi3: no biases, two norms (Phi-3's fused qkv_proj and gate_up_proj hold the same weights)
  return f;
}

/// Whether decoder layer `i` is a sparse (experts) layer: Qwen2/3-MoE's decoder_sparse_step and mlp_only_layers.
bool sparse_layer(const Json& c, int i) {
  if (c.contains("mlp_only_layers") && c["mlp_only_layers"].is_array()) {
    for (const auto& v : c["mlp_only_layers"]) {
      if (v.get<int>() == i) return false;
    }
  }
  const int step = static_cast<int>(num(c, "decoder_sparse_step", 1));
  return (i + 1) % step == 0;
}

Expected llama_like(const std::string& type, const Json& c) {
  const DecoderFamily f = decoder_family(type, c);
  const double V = num(c, "vocab_size", 0), h = num(c, "hidden_size", 0), I = num(c, "intermediate_size", 0);
  const int L = static_cast<int>(num(c, "num_hidden_layers", 0));
  const double H = num(c, "num_attention_heads", 0), kv = num(c, "num_key_value_heads", H);
  const double d = num(c, "head_dim", h / H);
  const bool tied = flag(c, "tie_word_embeddings", f.tied_default);

  const double attention = linear(h, H * d, f.qkv_bias) + 2 * linear(h, kv * d, f.qkv_bias) +
                           linear(H * d, h, f.o_bias) + (f.sinks ? H : 0) +
                           (f.qk_norm == 1   ? 2 * d
                            : f.qk_norm == 2 ? (H + kv) * d
                                             : 0);
  const double norms = f.norm_weights ? f.norms_per_layer * f.norm_params * h : 0;
  const double dense_mlp = (f.gated_mlp ? 2 : 1) * linear(h, I, f.mlp_bias) + linear(I, h, f.mlp_bias);

  double E = 0, k = 0, expert = 0, router = 0;
  if (f.moe == DecoderFamily::Moe::plain) {  // Mixtral: num_local_experts x (w1, w2, w3); Qwen3-MoE: num_experts
    E = num(c, "num_local_experts", num(c, "num_experts", 0));
    k = num(c, "num_experts_per_tok", 0);
    const double Ie = num(c, "moe_intermediate_size", I);
    expert = 3 * h * Ie;
    router = h * E;  // gate = nn.Linear(hidden, experts, bias=False)
    if (f.shared_expert) router += 3 * h * num(c, "shared_expert_intermediate_size", 0) + h;  // shared_expert + gate
  } else if (f.moe == DecoderFamily::Moe::biased) {  // GptOssExperts: gate_up_proj [E, h, 2I] + bias, down_proj + bias
    E = num(c, "num_local_experts", 0);
    k = num(c, "num_experts_per_tok", 0);
    expert = h * 2 * I + 2 * I + I * h + h;
    router = h * E + E;  // GptOssTopKRouter: weight [E, h] and bias [E]
  }

  Expected e;
  e.total = V * h + (tied ? 0 : V * h) + (f.norm_weights ? f.norm_params * h : 0);  // embed_tokens, lm_head, norm
  e.active = e.total;
  for (int i = 0; i < L; ++i) {
    const double shared = attention + norms;
    if (E > 0 && sparse_layer(c, i)) {
      e.total += shared + router + E * expert;
      e.active += shared + router + k * expert;
    } else {
      e.total += shared + dense_mlp;
      e.active += shared + dense_mlp;
    }
  }
  e.lookup = tied ? 0 : V * h;
  e.attention_width = L * H * d;
  return e;
}

// DeepseekV3ForCausalLM: multi-head latent attention (q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa,
// kv_a_layernorm, kv_b_proj, o_proj), first_k_dense_replace dense SwiGLU layers then MoE layers of
// n_routed_experts + one shared MLP of n_shared_experts x moe_intermediate_size, a router weight [E, h] (its
// e_score_correction_bias is a buffer, not a parameter). The num_nextn_predict_layers MTP module is not built.
Expected deepseek_v3(const Json& c) {
  const double V = num(c, "vocab_size", 0), h = num(c, "hidden_size", 0), I = num(c, "intermediate_size", 0);
  const int L = static_cast<int>(num(c, "num_hidden_layers", 0));
  const double H = num(c, "num_attention_heads", 0), qr = num(c, "q_lora_rank", 0), kvr = num(c, "kv_lora_rank", 0);
  const double nope = num(c, "qk_nope_head_dim", 0), rope = num(c, "qk_rope_head_dim", 0), dv = num(c, "v_head_dim", 0);
  const bool bias = flag(c, "attention_bias", false);
  const double E = num(c, "n_routed_experts", 0), k = num(c, "num_experts_per_tok", 0);
  const double Ie = num(c, "moe_intermediate_size", 0), shared = num(c, "n_shared_experts", 0);
  const int dense_layers = static_cast<int>(num(c, "first_k_dense_replace", 0));

  const double q = qr > 0 ? linear(h, qr, bias) + qr + qr * H * (nope + rope) : h * H * (nope + rope);
  const double attention = q + linear(h, kvr + rope, bias) + kvr + kvr * H * (nope + dv) + linear(H * dv, h, bias);
  const double common = attention + 2 * h;
  Expected e;
  e.total = 2 * V * h + h;
  e.total += dense_layers * (common + 3 * h * I);
  e.total += (L - dense_layers) * (common + E * h + E * 3 * h * Ie + 3 * h * Ie * shared);
  e.active = e.total - (L - dense_layers) * (E - k) * 3 * h * Ie;
  e.lookup = V * h;
  e.attention_width = L * H * (nope + rope + dv) / 2;
  return e;
}

// MambaForCausalLM: embeddings, per layer an RMSNorm and a MambaMixer (in_proj h -> 2 d_inner, depthwise conv1d
// with bias, x_proj d_inner -> dt_rank + 2 state, dt_proj dt_rank -> d_inner with bias, A_log and D), norm_f,
// lm_head tied by default.
Expected mamba(const Json& c) {
  const double V = num(c, "vocab_size", 0), h = num(c, "hidden_size", 0), N = num(c, "state_size", 16);
  const double inner = num(c, "intermediate_size", num(c, "expand", 2) * h);
  const double K = num(c, "conv_kernel", 4);
  const double R = num(c, "time_step_rank", std::ceil(h / 16));
  const bool bias = flag(c, "use_bias", false), conv_bias = flag(c, "use_conv_bias", true);
  const bool tied = flag(c, "tie_word_embeddings", true);
  const double mixer = linear(h, 2 * inner, bias) + inner * K + (conv_bias ? inner : 0) + inner * (R + 2 * N) +
                       linear(R, inner, true) + inner * N + inner + linear(inner, h, bias);
  Expected e;
  e.total = V * h + (tied ? 0 : V * h) + num(c, "num_hidden_layers", 0) * (h + mixer) + h;
  e.active = e.total;
  e.lookup = tied ? 0 : V * h;
  return e;
}

// Mamba2ForCausalLM: embeddings, per layer an RMSNorm and a Mamba2Mixer (in_proj h -> I + conv_dim + heads with
// conv_dim = I + 2 n_groups state, depthwise conv1d over conv_dim with bias, dt_bias, A_log and D per head, the gated
// RMSNorm over I, out_proj I -> h), norm_f, lm_head (Mamba2Config: not tied by default). I = expand x hidden_size.
Expected mamba2(const Json& c) {
  const double V = num(c, "vocab_size", 32768), h = num(c, "hidden_size", 4096), N = num(c, "state_size", 128);
  const double I = num(c, "expand", 2) * h, heads = num(c, "num_heads", 128), groups = num(c, "n_groups", 8);
  const double K = num(c, "conv_kernel", 4), conv_dim = I + 2 * groups * N;
  const bool bias = flag(c, "use_bias", false), conv_bias = flag(c, "use_conv_bias", true);
  const bool tied = flag(c, "tie_word_embeddings", false);
  const double mixer = linear(h, I + conv_dim + heads, bias) + conv_dim * K + (conv_bias ? conv_dim : 0) + 3 * heads +
                       I + linear(I, h, bias);
  Expected e;
  e.total = V * h + (tied ? 0 : V * h) + num(c, "num_hidden_layers", 24) * (h + mixer) + h;
  e.active = e.total;
  e.lookup = tied ? 0 : V * h;
  // The SSD scan runs in chunks of 256 as batched matmuls (within a chunk C B^T, like attention over a 256-token
  // window, then the states): real matrix work that 6N leaves out (Mamba-Codestral: +3.9% over 6N at s = 128).
  e.flops_comparable = false;
  return e;
}

// JambaForCausalLM: layer i is attention when i % attn_layer_period == attn_layer_offset (q/k/v/o without bias),
// else a JambaMambaMixer (in_proj h -> 2I, depthwise conv1d with bias=mamba_conv_bias, x_proj I -> R + 2N, dt_proj
// R -> I with bias, A_log [I, N], D, the dt/B/C RMSNorms, out_proj I -> h; projections with bias=mamba_proj_bias);
// its feed-forward is a sparse block (router h -> E, E SwiGLU experts) when i % expert_layer_period ==
// expert_layer_offset, else one SwiGLU MLP; two RMSNorms per layer, final_layernorm, untied lm_head by default.
Expected jamba(const Json& c) {
  const double V = num(c, "vocab_size", 65536), h = num(c, "hidden_size", 4096),
               Iff = num(c, "intermediate_size", 14336);
  const int L = static_cast<int>(num(c, "num_hidden_layers", 32));
  const double H = num(c, "num_attention_heads", 32), kv = num(c, "num_key_value_heads", 8), d = h / H;
  const double I = num(c, "mamba_expand", 2) * h, N = num(c, "mamba_d_state", 16), K = num(c, "mamba_d_conv", 4);
  const double R = num(c, "mamba_dt_rank", std::ceil(h / 16));
  const bool proj_bias = flag(c, "mamba_proj_bias", false), conv_bias = flag(c, "mamba_conv_bias", true);
  const double E = num(c, "num_experts", 16), k = num(c, "num_experts_per_tok", 2);
  const int attn_period = static_cast<int>(num(c, "attn_layer_period", 8));
  const int attn_offset = static_cast<int>(num(c, "attn_layer_offset", 4));
  const int expert_period = static_cast<int>(num(c, "expert_layer_period", 2));
  const int expert_offset = static_cast<int>(num(c, "expert_layer_offset", 1));
  const bool tied = flag(c, "tie_word_embeddings", false);
  const double attention = h * H * d + 2 * h * kv * d + H * d * h;
  const double mixer = linear(h, 2 * I, proj_bias) + I * K + (conv_bias ? I : 0) + I * (R + 2 * N) +
                       linear(R, I, true) + I * N + I + (R + 2 * N) + linear(I, h, proj_bias);
  const double mlp = 3 * h * Iff;
  Expected e;
  e.total = V * h + (tied ? 0 : V * h) + h;
  e.active = e.total;
  for (int i = 0; i < L; ++i) {
    const double mix = (i % attn_period == attn_offset) ? attention : mixer;
    if (i % attn_period == attn_offset) e.attention_width += H * d;
    const bool sparse = E > 1 && i % expert_period == expert_offset;
    e.total += 2 * h + mix + (sparse ? h * E + E * mlp : mlp);
    e.active += 2 * h + mix + (sparse ? h * E + k * mlp : mlp);
  }
  e.lookup = tied ? 0 : V * h;
  return e;
}

// NemotronHForCausalLM (modeling_nemotron_h.py): per layer one RMSNorm and one mixer by the
// hybrid_override_pattern character: M a NemotronHMamba2Mixer (I = mamba_num_heads x mamba_head_dim, in_proj
// h -> I + conv_dim + heads with conv_dim = I + 2 n_groups ssm_state_size, conv1d over conv_dim with bias, dt_bias,
// A_log, D, the gated RMSNorm over I, out_proj), * attention (q/k/v/o without bias, head_dim), - an MLP (up, down;
// no gate), E a router h -> E, E non-gated experts and a shared MLP (with moe_latent_size L, the LatentMoE: the
// experts L wide between fc1_latent_proj h -> L and fc2_latent_proj L -> h); norm_f; untied lm_head.
Expected nemotron_h(const Json& c) {
  const double V = num(c, "vocab_size", 131072), h = num(c, "hidden_size", 4096);
  const std::string pattern = c.value("hybrid_override_pattern", std::string());
  const double heads = num(c, "mamba_num_heads", 128), I = heads * num(c, "mamba_head_dim", 64);
  const double conv_dim = I + 2 * num(c, "n_groups", 8) * num(c, "ssm_state_size", 128);
  const bool bias = flag(c, "use_bias", false), conv_bias = flag(c, "use_conv_bias", true);
  const double mixer = linear(h, I + conv_dim + heads, bias) + conv_dim * num(c, "conv_kernel", 4) +
                       (conv_bias ? conv_dim : 0) + 3 * heads + I + linear(I, h, bias);
  const double H = num(c, "num_attention_heads", 32), kv = num(c, "num_key_value_heads", 8),
               d = num(c, "head_dim", 128);
  const double attention = 2 * h * H * d + 2 * h * kv * d;
  const bool mlp_bias = flag(c, "mlp_bias", false);
  const double mlp =
      linear(h, num(c, "intermediate_size", 21504), mlp_bias) + linear(num(c, "intermediate_size", 21504), h, mlp_bias);
  const double E = num(c, "n_routed_experts", 8), k = num(c, "num_experts_per_tok", 2);
  const double latent = num(c, "moe_latent_size", 0);
  const double expert = 2 * (latent > 0 ? latent : h) * num(c, "moe_intermediate_size", 7688);
  const double shared_width = num(c, "moe_shared_expert_intermediate_size", 7688);
  const double moe = h * E + E * expert + linear(h, shared_width, mlp_bias) + linear(shared_width, h, mlp_bias) +
                     (latent > 0 ? linear(h, latent, mlp_bias) + linear(latent, h, mlp_bias) : 0);
  const bool tied = flag(c, "tie_word_embeddings", false);
  Expected e;
  e.total = V * h + (tied ? 0 : V * h) + h;
  e.active = e.total;
  for (char kind : pattern) {
    const double block = kind == 'M' ? mixer : kind == '*' ? attention : kind == '-' ? mlp : moe;
    e.total += h + block;
    e.active += h + block - (kind == 'E' ? (E - k) * expert : 0);
    if (kind == '*') e.attention_width += H * d;
  }
  e.lookup = tied ? 0 : V * h;
  e.flops_comparable = false;  // the SSD scan's chunked matmuls, as for mamba2
  return e;
}

// BertForMaskedLM: word + position + token-type embeddings and their LayerNorm, encoder layers (q/k/v/o with
// biases, two LayerNorms, intermediate and output dense), the MLM transform (dense + LayerNorm) and a decoder
// tied to the word embeddings with its own bias. No pooler.
Expected bert(const Json& c) {
  const double V = num(c, "vocab_size", 0), h = num(c, "hidden_size", 0), I = num(c, "intermediate_size", 0);
  const double P = num(c, "max_position_embeddings", 512), T = num(c, "type_vocab_size", 2);
  const double layer = 4 * linear(h, h, true) + 2 * 2 * h + linear(h, I, true) + linear(I, h, true);
  Expected e;
  e.total = (V + P + T) * h + 2 * h + num(c, "num_hidden_layers", 0) * layer + linear(h, h, true) + 2 * h + V;
  e.active = e.total;
  e.lookup = (P + T) * h;
  e.attention_width = num(c, "num_hidden_layers", 0) * h;
  return e;
}

// T5ForConditionalGeneration (v1.0, ReLU feed-forward, tied head): a shared table, per encoder block self-attention
// (q/k/v/o of heads x d_kv, no biases) and DenseReluDense, each behind a T5LayerNorm (weight only); decoder blocks
// add cross-attention; the first block of each stack holds a relative_attention_bias table [buckets, heads].
Expected t5(const Json& c) {
  const double V = num(c, "vocab_size", 0), h = num(c, "d_model", 0), ff = num(c, "d_ff", 0);
  const double inner = num(c, "num_heads", 0) * num(c, "d_kv", 0),
               buckets = num(c, "relative_attention_num_buckets", 32);
  const double Le = num(c, "num_layers", 0), Ld = num(c, "num_decoder_layers", Le), heads = num(c, "num_heads", 0);
  const double attention = 2 * h * inner + 2 * inner * h, mlp = 2 * h * ff;
  Expected e;
  e.total = V * h + Le * (attention + mlp + 2 * h) + buckets * heads + h + Ld * (2 * attention + mlp + 3 * h) +
            buckets * heads + h + (flag(c, "tie_word_embeddings", true) ? 0 : V * h);
  e.active = e.total;
  e.lookup = 2 * buckets * heads;
  e.attention_width = (Le + 2 * Ld) * inner;
  return e;
}

// DebertaV2ForMaskedLM (legacy head): word embeddings (position embeddings only with position_biased_input,
// token types only when type_vocab_size > 0), LayerNorm, encoder layers (q/k/v projections with biases; with
// share_att_key the relative positions reuse them), the encoder's rel_embeddings [2 position_buckets, h] and its
// LayerNorm, the MLM transform and a tied decoder with a bias.
Expected deberta_v2(const Json& c) {
  const double V = num(c, "vocab_size", 0), h = num(c, "hidden_size", 0), I = num(c, "intermediate_size", 0);
  const double P = flag(c, "position_biased_input", true) ? num(c, "max_position_embeddings", 512) : 0;
  const double T = num(c, "type_vocab_size", 0);
  const double buckets =
      num(c, "position_buckets", -1) > 0 ? num(c, "position_buckets", 0) : num(c, "max_position_embeddings", 512);
  const double layer = 4 * linear(h, h, true) + 2 * 2 * h + linear(h, I, true) + linear(I, h, true);
  Expected e;
  e.total = (V + P + T) * h + 2 * h + num(c, "num_hidden_layers", 0) * layer + 2 * buckets * h + 2 * h +
            linear(h, h, true) + 2 * h + V;
  e.active = e.total;
  e.lookup = (P + T) * h;
  e.flops_comparable = false;  // disentangled attention adds c2p / p2c score products the formula leaves out
  return e;
}

// One CLIP/SigLIP encoder layer: q/k/v/out projections with biases, two LayerNorms, fc1/fc2 with biases.
double vit_layer(double h, double I) {
  return 4 * linear(h, h, true) + 2 * 2 * h + linear(h, I, true) + linear(I, h, true);
}

// SiglipModel (both towers): the vision tower's patch Conv2d (with bias) and (image_size / patch_size)^2 learned
// positions, encoder, post_layernorm and the attention-pooling head (probe, nn.MultiheadAttention, LayerNorm, MLP);
// the text tower's token and position tables, encoder, final_layer_norm and head Linear(h, projection_size);
// logit_scale and logit_bias. Defaults are SiglipTextConfig's / SiglipVisionConfig's.
Expected siglip(const Json& c) {
  const Json t = c.value("text_config", Json::object()), v = c.value("vision_config", Json::object());
  const double hv = num(v, "hidden_size", 768), Iv = num(v, "intermediate_size", 3072);
  const double p = num(v, "patch_size", 16), side = std::floor(num(v, "image_size", 224) / p);
  const double vision = linear(num(v, "num_channels", 3) * p * p, hv, true) + side * side * hv +
                        num(v, "num_hidden_layers", 12) * vit_layer(hv, Iv) + 2 * hv +
                        (flag(v, "vision_use_head", true)
                             ? hv + 4 * linear(hv, hv, true) + 2 * hv + linear(hv, Iv, true) + linear(Iv, hv, true)
                             : 0);
  const double ht = num(t, "hidden_size", 768), It = num(t, "intermediate_size", 3072);
  const double text = (num(t, "vocab_size", 32000) + num(t, "max_position_embeddings", 64)) * ht +
                      num(t, "num_hidden_layers", 12) * vit_layer(ht, It) + 2 * ht +
                      linear(ht, num(t, "projection_size", ht), true);
  Expected e;
  e.total = vision + text + 2;
  e.active = e.total;
  e.flops_comparable = false;  // two towers over different inputs (patches, tokens): not one token stream
  return e;
}

// CLIPModel: vision class_embedding, patch Conv2d without bias, (patches + 1) positions, pre_layrnorm, encoder,
// post_layernorm, visual_projection without bias; text token and position tables, encoder, final_layer_norm,
// text_projection without bias; logit_scale.
Expected clip(const Json& c) {
  const Json t = c.value("text_config", Json::object()), v = c.value("vision_config", Json::object());
  const double proj = num(c, "projection_dim", 512);
  const double hv = num(v, "hidden_size", 768), p = num(v, "patch_size", 32);
  const double side = std::floor(num(v, "image_size", 224) / p);
  const double vision = hv + num(v, "num_channels", 3) * p * p * hv + (side * side + 1) * hv + 2 * hv +
                        num(v, "num_hidden_layers", 12) * vit_layer(hv, num(v, "intermediate_size", 3072)) + 2 * hv +
                        hv * proj;
  const double ht = num(t, "hidden_size", 512);
  const double text = (num(t, "vocab_size", 49408) + num(t, "max_position_embeddings", 77)) * ht +
                      num(t, "num_hidden_layers", 12) * vit_layer(ht, num(t, "intermediate_size", 2048)) + 2 * ht +
                      ht * proj;
  Expected e;
  e.total = vision + text + 1;
  e.active = e.total;
  e.flops_comparable = false;
  return e;
}

// MptForCausalLM: wte, per block norm_1 / norm_2 (LayerNorm with the bias removed: weights only), Wqkv [h, 3h]
// and out_proj without biases, up_proj / down_proj of expansion_ratio x h without biases; norm_f (weights only);
// ALiBi, no position table; lm_head tied.
Expected mpt(const Json& c) {
  const double V = num(c, "vocab_size", 50368), h = num(c, "d_model", 2048), L = num(c, "n_layers", 24);
  const double I = num(c, "expansion_ratio", 4) * h;
  Expected e;
  e.total = V * h + L * (2 * h + 3 * h * h + h * h + 2 * h * I) + h;
  e.active = e.total;
  e.attention_width = L * h;
  return e;
}

// DbrxForCausalLM: wte; per block norm_1 and norm_2 (LayerNorm without bias), Wqkv [d + 2 kv_n_heads head_dim, d] and
// out_proj without biases, the router Linear(d, moe_num_experts) without bias and the experts' w1, v1, w2 (each
// [moe_num_experts x ffn_hidden_size, d]); norm_f; lm_head not tied.
Expected dbrx(const Json& c) {
  const Json attn = c.value("attn_config", Json::object()), ffn = c.value("ffn_config", Json::object());
  const double V = num(c, "vocab_size", 32000), d = num(c, "d_model", 2048), L = num(c, "n_layers", 24);
  const double H = num(c, "n_heads", 16), kv = num(attn, "kv_n_heads", 1), hd = d / H;
  const double E = num(ffn, "moe_num_experts", 4), k = num(ffn, "moe_top_k", 1), I = num(ffn, "ffn_hidden_size", 3584);
  const bool tied = flag(c, "tie_word_embeddings", false);
  const double shared = 2 * d + d * (d + 2 * kv * hd) + d * d + d * E;
  Expected e;
  e.total = V * d + (tied ? 0 : V * d) + d + L * (shared + E * 3 * I * d);
  e.active = V * d + (tied ? 0 : V * d) + d + L * (shared + k * 3 * I * d);
  e.lookup = tied ? 0 : V * d;
  e.attention_width = L * d;
  return e;
}

/// `c` with the class defaults filled in where the file leaves a field out.
Json with_defaults(Json c, const Json& defaults) {
  for (const auto& item : defaults.items()) {
    if (!c.contains(item.key()) || c[item.key()].is_null()) c[item.key()] = item.value();
  }
  return c;
}

// Gemma3ForConditionalGeneration: the gemma3_text decoder (Gemma3TextConfig defaults), the SigLIP image tower
// (vision_use_head false in Gemma 3's files: no pooling head) and Gemma3MultiModalProjector
// (mm_input_projection_weight [h_vision, h_text] and mm_soft_emb_norm over h_vision).
Expected gemma3(const Json& c) {
  const Json text = with_defaults(c.value("text_config", Json::object()), {{"vocab_size", 262208},
                                                                           {"hidden_size", 2304},
                                                                           {"intermediate_size", 9216},
                                                                           {"num_hidden_layers", 26},
                                                                           {"num_attention_heads", 8},
                                                                           {"num_key_value_heads", 4},
                                                                           {"head_dim", 256},
                                                                           {"tie_word_embeddings", true}});
  Expected e = llama_like("gemma3_text", text);
  Json tower = {{"vision_config", c.value("vision_config", Json::object())},
                {"text_config",
                 {{"hidden_size", 0},
                  {"num_hidden_layers", 0},
                  {"vocab_size", 0},
                  {"max_position_embeddings", 0},
                  {"projection_size", 0}}}};
  const double hv = num(tower["vision_config"], "hidden_size", 768);
  const double vision = siglip(tower).total - 2;  // one tower, no logit_scale / logit_bias
  e.total += vision + hv * num(text, "hidden_size", 0) + hv;
  e.active = e.total;
  e.flops_comparable = false;  // the image tower runs over patches, not over the text tokens
  return e;
}

// WhisperForConditionalGeneration: encoder conv1 (mel -> d, k 3) and conv2 (d -> d, k 3) with biases, the
// encoder's position table (frozen, still a parameter), layers with self-attention (k_proj without bias), two
// LayerNorms, fc1/fc2, a final LayerNorm; decoder token and position tables, layers adding cross-attention and a
// third LayerNorm, a final LayerNorm; proj_out tied to the token table.
Expected whisper(const Json& c) {
  const double d = num(c, "d_model", 0), V = num(c, "vocab_size", 0), mel = num(c, "num_mel_bins", 80);
  const double attention = 4 * d * d + 3 * d;
  const double enc_layer = attention + 2 * 2 * d + linear(d, num(c, "encoder_ffn_dim", 0), true) +
                           linear(num(c, "encoder_ffn_dim", 0), d, true);
  const double dec_layer = 2 * attention + 3 * 2 * d + linear(d, num(c, "decoder_ffn_dim", 0), true) +
                           linear(num(c, "decoder_ffn_dim", 0), d, true);
  Expected e;
  e.total = mel * d * 3 + d + d * d * 3 + d + num(c, "max_source_positions", 1500) * d +
            num(c, "encoder_layers", 0) * enc_layer + 2 * d + (V + num(c, "max_target_positions", 448)) * d +
            num(c, "decoder_layers", 0) * dec_layer + 2 * d;
  e.active = e.total;
  e.flops_comparable = false;  // audio frames and text tokens are different streams
  return e;
}

/// The family's formula for `c`; empty where this file has none yet.
std::optional<Expected> formula(const Json& c) {
  const std::string type = c.value("model_type", std::string());
  if (type == "deepseek_v3" || type == "deepseek_v2") return deepseek_v3(c);  // same module layout
  if (type == "gemma3") return gemma3(c);
  if (type == "whisper") return whisper(c);
  if (type == "mpt") return mpt(c);
  if (type == "dbrx") return dbrx(c);
  if (type == "mamba" || type == "falcon_mamba") return mamba(c);  // FalconMamba's extra RMS norms have no weights
  if (type == "mamba2") return mamba2(c);
  if (type == "jamba") return jamba(c);
  if (type == "nemotron_h") return nemotron_h(c);
  if (type == "siglip") return siglip(c);
  if (type == "clip") return clip(c);
  if (type == "bert") return bert(c);
  if (type == "t5") return t5(c);
  if (type == "deberta-v2") return deberta_v2(c);
  static const std::set<std::string> llama_like_types = {
      "llama",  "mistral",     "mixtral", "qwen2",   "qwen3",   "qwen3_moe", "qwen2_moe", "olmo2",
      "gemma2", "gemma3_text", "phi3",    "granite", "gpt_oss", "internlm2", "cohere",    "starcoder2"};
  if (llama_like_types.count(type)) return llama_like(type, c);
  FAIL("no formula for model_type \"" << type << "\": add one to tests/core/test_hf_real_configs.cpp");
  return {};
}

// Published totals (and active counts) to cross-check the formulas with, by fixture file, where a source states
// one: Hugging Face's exact counts as the model cards or earlier tests of this repository give them.
struct Published {
  const char* file;
  double total;
  double active;              // 0: dense, or not published
  double relative_tolerance;  // cards round to 2-3 digits
  const char* source;
  bool active_without_lookup = false;  // the source's active count leaves the (untied) input table out
};

const Published kPublished[] = {
    {"meta-llama--Llama-2-7b-hf.json", 6738415616, 0, 0, "HF meta-llama/Llama-2-7b-hf (preset llama-2-7b)"},
    {"meta-llama--Meta-Llama-3-8B.json", 8030261248, 0, 0, "HF meta-llama/Meta-Llama-3-8B (preset llama-3-8b)"},
    {"mistralai--Mixtral-8x7B-v0.1.json", 46702792704, 12.9e9, 0.005,
     "HF mistralai/Mixtral-8x7B-v0.1 (preset mixtral-8x7b); Jiang et al. 2024: 12.9B active"},
    {"google-bert--bert-base-uncased.json", 109514298, 0, 0, "HF bert-base-uncased (preset bert-base)"},
    {"google-t5--t5-base.json", 222903552, 0, 0, "HF t5-base (preset t5-base)"},
    {"Qwen--Qwen3-8B.json", 8.2e9, 0, 0.01, "Qwen/Qwen3-8B model card: Number of Parameters 8.2B"},
    {"Qwen--Qwen3-14B.json", 14.8e9, 0, 0.005, "Qwen/Qwen3-14B model card: 14.8B"},
    {"Qwen--Qwen3-32B.json", 32.8e9, 0, 0.005, "Qwen/Qwen3-32B model card: 32.8B"},
    {"Qwen--Qwen3-30B-A3B.json", 30.5e9, 3.3e9, 0.02, "Qwen/Qwen3-30B-A3B model card: 30.5B total, 3.3B activated"},
    {"Qwen--Qwen3-235B-A22B-Instruct-2507.json", 235e9, 22e9, 0.03,
     "Qwen3-235B-A22B model card: 235B total, 22B activated"},
    {"Qwen--Qwen2.5-7B.json", 7.616e9, 0, 0.001,
     "Open Arabic LLM Leaderboard request for Qwen/Qwen2.5-7B: params 7.616 (B)"},
    {"Qwen--Qwen2.5-72B-Instruct.json", 72.7e9, 0, 0.001, "Qwen/Qwen2.5-72B-Instruct model card: 72.7B"},
    {"meta-llama--Llama-3.2-3B.json", 3.21e9, 0, 0.002, "Meta Llama 3.2 model card: 3B (3.21B)"},
    {"allenai--OLMo-2-1124-13B.json", 13.72e9, 0, 0.001, "whatmodel.sh OLMo 2 13B Instruct (1124): 13.72B params"},
    {"deepseek-ai--DeepSeek-V3.json", 671e9, 37e9, 0.015,
     "DeepSeek-V3 technical report (arXiv 2412.19437): 671B total, 37B activated per token (MTP module not counted)"},
    {"openai--gpt-oss-120b.json", 116.8e9, 5.1e9, 0.01,
     "gpt-oss model card (arXiv 2508.10925): 116.8B total, 5.1B active (embedding table not counted)", true},
    {"SinclairSchneider--dbrx-instruct-quantization-fixed.json", 132e9, 36e9, 0.015,
     "DBRX model card (quoted in dranger003/dbrx-instruct-iMat.GGUF README): 132B total, 36B active"},
    {"MaziyarPanahi--Qwen1.5-MoE-A2.7B-Wikihow.json", 14.316e9, 2.7e9, 0.005,
     "Open LLM Leaderboard request for Qwen/Qwen1.5-MoE-A2.7B: params 14.316 (B); NVIDIA NeMo AutoModel model page: "
     "14.3B total / 2.7B active"},
    {"OpenVINO--starcoder2-3b-int8-ov.json", 3.03e9, 0, 0.005,
     "Open LLM Leaderboard request for bigcode/starcoder2-3b: params 3.03 (B)"},
    {"Aratako--c4ai-command-r-v01-japanese-instruct.json", 34.9e9, 0, 0.005,
     "FinancialSupport leaderboard request for CohereForAI/c4ai-command-r-v01 (float16): params 34.9 (B)"},
    {"ai21labs--Jamba-v0.1.json", 51.57e9, 12e9, 0.01,
     "Open LLM Leaderboard request for ai21labs/Jamba-v0.1: params 51.57 (B); transformers' Jamba model doc: 12B "
     "active of 52B"},
    {"nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json", 31.6e9, 3.2e9, 0.02,
     "NVIDIA's Nemotron 3 Nano figures as quoted in a public C++ port's nemotron3 header (code search): 3.2B active "
     "(31.6B total); the active count without the embedding table",
     true},
    {"nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4.json", 120668687360.0, 12e9, 0.03,
     "NVIDIA Megatron-Bridge's verification card for the BF16 release: 123,611,033,088 elements, less 20,992 FP32 "
     "router biases and the 2,942,324,736 of the MTP block transformers does not build; 12B active (the name's A12B, "
     "without the embedding table)",
     true},
    {"openai--gpt-oss-20b.json", 20.9e9, 3.6e9, 0.015,
     "gpt-oss model card (arXiv 2508.10925): 20.9B total, 3.6B active (embedding table not counted)", true},
    {"onnx-community--clip-vit-base-patch32_hidden-states.json", 151277313, 0, 0,
     "MTEB ModelMeta openai/clip-vit-base-patch32: n_parameters 151277313 (CLIPModel, both towers)"},
    {"google--siglip-so400m-patch14-384.json", 877960498, 0, 0,
     "MTEB ModelMeta google/siglip-so400m-patch14-384: n_parameters 877960498 (SiglipModel, both towers)"},
};

/// Two-tower contrastive models, built with both towers (the formula above); their vision tower is also read as its
/// own config.
const std::set<std::string> kTwoTowerTypes = {"clip", "siglip"};

/// The vision tower of a two-tower config `c`, by the same formula with an empty text tower.
double vision_tower_total(const std::string& type, const Json& c) {
  const Json empty_text = {{"hidden_size", 0},
                           {"num_hidden_layers", 0},
                           {"vocab_size", 0},
                           {"max_position_embeddings", 0},
                           {"projection_size", 0}};
  const Json vision = c.value("vision_config", Json::object());
  if (type == "clip") {  // CLIPVisionModel: the CLIPModel vision part without visual_projection
    const double proj = num(c, "projection_dim", 512);
    const Json text_only = {{"vision_config", {{"hidden_size", 0}, {"num_hidden_layers", 0}}},
                            {"text_config", c.value("text_config", Json::object())},
                            {"projection_dim", proj}};
    return clip(c).total - clip(text_only).total - num(vision, "hidden_size", 768) * proj;
  }
  if (type != "siglip") FAIL("no vision-tower formula for " << type);
  return siglip({{"vision_config", vision}, {"text_config", empty_text}}).total - 2;  // no logit_scale / logit_bias
}

/// Checks the vision tower of two-tower `cfg` read alone against the formula.
void check_vision_tower(const std::string& type, const Json& cfg) {
  Json tower = cfg.at("vision_config");
  tower["model_type"] = type + "_vision_model";
  Network net = resolve_model({{"hf_config", tower}}, TrainingConfig{});
  CHECK(testutil::d(net.parameters()) == vision_tower_total(type, cfg));
}

}  // namespace

TEST_CASE("real HF configs: parameters, active parameters and training FLOPs per token, by formula",
          "[hf_config][real_configs]") {
  const std::vector<std::string> files = testutil::fixture_files();
  CHECK(files.size() >= 30);
  const std::int64_t s = 128;  // a short context, where 6N dominates (and under every sliding window here)
  int rows = 0;
  for (const std::string& file : files) {
    int non_finite = 0;
    const Json cfg = testutil::read_fixture(file, &non_finite);
    const std::string type = cfg.value("model_type", std::string());
    INFO(file << " (model_type " << type << "; Python non-finite words read as text: " << non_finite << ")");
    if (kTwoTowerTypes.count(type) > 0) check_vision_tower(type, cfg);
    const std::optional<Expected> found = formula(cfg);
    if (!found) FAIL("no formula for model_type \"" << type << "\": add one to tests/core/test_hf_real_configs.cpp");
    const Expected e = *found;

    TrainingConfig training;
    training.seq_len = s;
    Network net;
    try {
      net = resolve_model({{"hf_config", cfg}}, training);
    } catch (const InputError& err) {
      FAIL("refused: " << err.what());
    }
    for (const auto& w : net.warnings) INFO("warning: " << w);

    const double params = testutil::d(net.parameters());
    StepWork w = step_work(net, 2, KernelContext(Precision::FP32), Optimizer::Adam);
    const double per_token =
        (testutil::matmul_flops(w, Phase::Forward) + testutil::matmul_flops(w, Phase::Backward)) / (2.0 * s);
    const double expected_flops = 6 * (e.active - e.lookup) + 12 * testutil::d(s) * e.attention_width;
    const double active = testutil::d(net.active_parameters());
    INFO("formula " << std::fixed << e.total << " / active " << e.active << "; core " << params << " / active "
                    << active << "; FLOPs per token " << per_token << " vs " << expected_flops);
    ++rows;
    CHECK(params == e.total);
    if (e.flops_comparable) CHECK(per_token == Approx(expected_flops).epsilon(0.02));
    CHECK(active == e.active);
  }
  CHECK(rows == static_cast<int>(files.size()));
}

TEST_CASE("real HF configs: the formulas agree with the published counts", "[hf_config][real_configs]") {
  for (const Published& p : kPublished) {
    const std::optional<Expected> found = formula(testutil::read_fixture(p.file));
    REQUIRE(found);
    const Expected e = *found;
    INFO(p.file << ": " << p.source << "; formula " << std::fixed << e.total << " / active " << e.active);
    if (p.relative_tolerance == 0) {
      CHECK(e.total == p.total);
    } else {
      CHECK(e.total == Approx(p.total).epsilon(p.relative_tolerance));
    }
    const double active = p.active_without_lookup ? e.active - e.lookup : e.active;
    if (p.active > 0) CHECK(active == Approx(p.active).epsilon(p.relative_tolerance));
  }
}

TEST_CASE("real HF configs: every fixture file has its source in SOURCES.md", "[hf_config][real_configs]") {
  std::ifstream in(std::string(PRENET_SOURCE_DIR) + "/tests/fixtures/hf/SOURCES.md");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  for (const std::string& f : testutil::fixture_files()) {
    INFO(f);
    CHECK(text.str().find("| `" + f + "` |") != std::string::npos);
  }
}
