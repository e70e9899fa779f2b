#pragma once
// The normalised description of a Hugging Face model: what every family's builder reads, whatever the
// config's spelling (the steps of model_types.cpp fill it).
#include <cstdint>
#include <string>

namespace prenet::hf {

/// The task head on top of the network: Hugging Face builds the class named in `architectures`.
enum class Head { LanguageModel, SequenceClassification, TokenClassification, QuestionAnswering, None };

struct HeadChoice {
  Head head = Head::LanguageModel;
  std::int64_t labels = 2;  // classes of a classification head (Hugging Face's default num_labels)
  double dropout = -1;      // classifier_dropout when the config gives it (< 0: the family's default)
};

/// One model's architecture. Fields a family does not use keep their defaults; encoder-decoders keep the
/// encoder's sizes in the plain fields and the decoder's in `decoder_*`.
struct Arch {
  std::string name;  // the model's name in the response (the model_type unless a step renames it)

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
  bool rms = false, norm_bias = true;
  bool qkv_bias = true, out_bias = true, mlp_bias = true, head_bias = false, router_bias = false;
  bool gated = false, parallel = false, tied = true;
  bool post_norm = false, pre_norm = false, final_norm = true, embed_norm = false;
  // The dense layer on the first token under a sequence classifier (BERT's pooler, RoBERTa's head.dense:
  // tanh; DistilBERT's pre_classifier: ReLU), and whether the bare model keeps it (DistilBERT has none).
  std::string pooler_act = "tanh";
  bool bare_pooler = true;

  std::string act = "gelu_new";
  double dropout = 0, attn_dropout = 0, embed_dropout = 0, act_dropout = 0;
  HeadChoice head;

  // The config fields that errors about head counts name.
  std::string heads_field = "num_attention_heads", kv_field = "num_key_value_heads";

  // types_plain.cpp
  bool norm_scale = true;  // false: the norms have no learned scale (OLMo's LayerNorm: no parameters at all)
};

}  // namespace prenet::hf
