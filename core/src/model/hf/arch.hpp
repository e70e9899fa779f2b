#pragma once
// The normalised description of a Hugging Face model: what every family's builder reads, whatever the
// config's spelling (the steps of model_types.cpp fill it).
#include <cstdint>
#include <string>
#include <vector>

#include "model/hf/arch_encoder.hpp"
#include "model/hf/arch_seq2seq.hpp"
#include "model/hf/arch_ssm.hpp"
#include "model/hf/arch_vision.hpp"

namespace prenet::hf {

/// The task head on top of the network: Hugging Face builds the class named in `architectures`.
enum class Head { LanguageModel, SequenceClassification, TokenClassification, QuestionAnswering, None };

struct HeadChoice {
  Head head = Head::LanguageModel;
  std::int64_t labels = 2;  // classes of a classification head (Hugging Face's default num_labels)
  double dropout = -1;      // classifier_dropout when the config gives it (< 0: the family's default)
};

/// How a decoder layer's attention sees the keys: all earlier ones, a sliding window of the latest, or only
/// those of its own chunk.
enum class AttnSpan { Full, Sliding, Chunked };

/// What may differ between one decoder layer and the next (Arch::plan): the attention's span, rotary
/// positions or none, and a dense MLP of some width or the routed experts.
struct LayerPlan {
  AttnSpan span = AttnSpan::Full;
  std::int64_t window = 0;  // the sliding window or the chunk, in tokens (Full: 0)
  bool rope = true;         // rotary positions (NoPE layers: false); no parameters either way
  bool moe = false;         // routed experts (Arch::experts, moe_inner, shared_inner) instead of a dense MLP
  std::int64_t inner = 0;   // the dense MLP's width (moe: 0)
  bool linear = false;      // a Gated DeltaNet mixer (Arch::delta_*) instead of attention (Qwen3-Next)
  bool operator==(const LayerPlan& o) const {
    return span == o.span && window == o.window && rope == o.rope && moe == o.moe && inner == o.inner &&
           linear == o.linear;
  }
  bool operator!=(const LayerPlan& o) const { return !(*this == o); }
};

/// One model's architecture. Fields a family does not use keep their defaults; encoder-decoders keep the
/// encoder's sizes in the plain fields and the decoder's in `decoder_*`. What only some families read lives in
/// the bases, one header each.
struct Arch : SsmArch, EncoderArch, Seq2SeqArch, VisionArch {
  std::string name;  // the model's name in the response (the model_type unless a step renames it)
  // The architecture form's family this Arch was read as (arch_json.cpp), which its echo keeps; empty: none.
  std::string family;

  std::int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, inner = 0, vocab = 0;
  std::int64_t head_dim = 0;  // per-head width when the config sets it (0: hidden / heads)
  std::int64_t decoder_layers = 0, decoder_heads = 0, decoder_inner = 0;
  std::int64_t tgt_vocab = 0;           // > 0: separate source and target tables (FSMT)
  std::int64_t type_vocab = 0;          // token-type rows (BERT)
  std::int64_t embed_dim = 0;           // OPT's word_embed_proj_dim (0: hidden)
  std::int64_t max_positions = 0;       // the config's trained positions (0: none given)
  std::int64_t position_offset = 0;     // extra rows of a learned position table (OPT, BART: 2)
  std::int64_t buckets = 32;            // T5's relative position buckets
  std::int64_t parallel_norms = 1;      // LayerNorms feeding a parallel block (GPT-NeoX, new Falcon: 2)
  std::int64_t experts = 0, top_k = 1;  // mixture of experts (0: dense)
  std::int64_t encoder_sparse_step = 0, decoder_sparse_step = 0;  // Switch: every n-th block is sparse
  std::int64_t patch = 16, channels = 3;                          // ViT

  bool learned_positions = true;  // a position table; otherwise rotary, ALiBi, relative or sinusoidal
  double rotary = 1.0;            // without a position table: the share of each query/key head RoPE rotates (0: ALiBi)
  bool rms = false, norm_bias = true;
  bool qkv_bias = true, out_bias = true, mlp_bias = true, head_bias = false, router_bias = false;
  bool gated = false, parallel = false, tied = true;
  bool post_norm = false, pre_norm = false, final_norm = true, embed_norm = false;
  // The dense layer on the first token under a sequence classifier (BERT's pooler, RoBERTa's head.dense:
  // tanh; DistilBERT's pre_classifier: ReLU), and whether the bare model keeps it (DistilBERT has none).
  std::string pooler_act = "tanh";
  bool bare_pooler = true;

  // The 2024-2026 decoders (types_decoder.cpp). `plan` holds one entry per layer when layers differ (empty:
  // every layer alike, from the fields above: experts > 1 means routed experts everywhere).
  std::vector<LayerPlan> plan;
  std::int64_t window = 0;         // every layer's sliding window (Mistral; 0: full attention)
  std::int64_t moe_inner = 0;      // each routed expert's width (0: inner)
  std::int64_t shared_inner = 0;   // the shared expert's width beside the routed ones (0: none)
  std::int64_t moe_latent = 0;     // the width the routed experts read and write (LatentMoE; 0: the hidden size)
  bool shared_gate = false;        // the shared expert's output scaled by sigmoid(x·w) (Qwen2-MoE)
  bool expert_bias = false;        // biases in the routed experts (gpt-oss)
  double swiglu_limit = 0;         // gpt-oss's clamped GLU in the routed experts, (up + 1) * act(gate) (0: none)
  std::string qk_norm = "none";    // the attention kind's qk_norm: none | head | full | head_weightless
  bool qk_norm_rope_only = false;  // QK-norm only in the layers with rotary positions (Llama 4)
  bool sinks = false;              // a learned sink logit per head (gpt-oss)
  double softcap = 0;              // attention logit soft-capping (Gemma 2; 0: none)
  bool attn_output_gate = false;   // attention's output times sigmoid of a gate projected with q (Qwen3-Next)
  // Gated DeltaNet mixers (the layers planned `linear`): key and value heads and widths, the convolution's taps, and
  // whether the input projections are Qwen3.5's four (in_proj_qkv, _z, _b, _a) rather than Qwen3-Next's two.
  std::int64_t delta_key_heads = 0, delta_value_heads = 0, delta_key_dim = 0, delta_value_dim = 0, delta_conv = 4;
  bool delta_split = false;
  bool norm_after = false;         // a norm on each branch's output before its residual add (Gemma 2, OLMo 2)
  bool norm_before = true;         // a norm on each branch's input (OLMo 2: none)
  // Multi-head latent attention (DeepSeek-V2/V3): the `mla` layer kind when mla is set.
  bool mla = false;
  std::int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_dim = 0, qk_rope_dim = 0, v_head_dim = 0;

  std::string act = "gelu_new";
  double dropout = 0, attn_dropout = 0, embed_dropout = 0, act_dropout = 0;
  HeadChoice head;

  // The config fields that errors about head counts name.
  std::string heads_field = "num_attention_heads", kv_field = "num_key_value_heads";

  // types_plain.cpp
  bool norm_scale = true;  // false: the norms have no learned scale (OLMo's LayerNorm: no parameters at all)
};

}  // namespace prenet::hf
