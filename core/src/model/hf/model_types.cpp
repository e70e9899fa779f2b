// The Hugging Face model types this calculator reads, one row each.
//
// How to add a model_type:
//  1. Pick the family whose builder makes its layers (kDecoder, kEncoder, kT5, kSeq2Seq, kVit in parts.hpp; a new
//     kind of network is a new builder in builders.hpp and one Family here).
//  2. Add a row to the table of its group (this file for the classic families, types_*.cpp for the others;
//     model_types.hpp lists them): {"model_type", family, compose({parts...}, {overrides...})}, e.g.
//     {"qwen2", kDecoder, compose({kDecoderCore, kLlama, kQkvBias})}. Parts are step lists read in
//     order (steps.hpp: need/opt/rate/flag/act/fix, each naming the config's fields in order of preference,
//     with the Hugging Face class's default); reuse a sibling's parts where the config reads the same way.
//     An override replaces the part's step of the same kind that fills the same quantity (a different
//     default or spelling); a step the sibling lacks goes in a part of its own, where the class reads it.
//  3. What is not field renaming goes in a hook (quirks.hpp), one function per quirk.
//  4. A new spelling of the depth field joins kDepthFields (hf_config.cpp), which the layer-limit error names.
//  5. Test the parameter count against Hugging Face's (tests/core/test_formats_hf.cpp) and list the type in
//     docs/MODEL_FORMAT.md.
#include "model/hf/model_types.hpp"

#include <algorithm>

#include "model/hf/parts.hpp"
#include "model/hf/quirks.hpp"
#include "prenet/hf_config.hpp"

namespace prenet::hf {

// ---- decoders -------------------------------------------------------------------------------------------

/// The sizes every decoder has, under GPT-2's spellings too.
const Steps kDecoderCore = {
    need(&Arch::hidden, {"hidden_size", "n_embd", "d_model"}, 1, kMaxWidth),
    need(&Arch::layers, {"num_hidden_layers", "n_layer", "num_layers"}, 1, kMaxDepth),
    head_count({"num_attention_heads", "n_head"}),
    need(&Arch::vocab, {"vocab_size"}, 1, kMaxVocab),
};

/// GPT-2 (and the generic GPT-2-style reading, generic.cpp): pre-LN, learned positions, biases everywhere, tied head.
const Steps kGpt2 = {
    opt(&Arch::kv_heads, {"num_key_value_heads"}, of(&Arch::heads), 1, of(&Arch::heads)),
    opt(&Arch::inner, {"intermediate_size", "n_inner"}, of(&Arch::hidden, 4), 1, kMaxInner),
    act({"activation_function", "hidden_act"}, "gelu_new"),
    opt(&Arch::max_positions, {"max_position_embeddings", "n_positions", "n_ctx"}, 0, 1, kMaxPositions),
    rate(&Arch::dropout, {"hidden_dropout_prob", "resid_pdrop", "dropout"}, 0.1),
    rate(&Arch::attn_dropout, {"attention_probs_dropout_prob", "attn_pdrop", "attention_dropout"}, &Arch::dropout),
    rate(&Arch::embed_dropout, {"embd_pdrop"}, &Arch::dropout),
    flag(&Arch::tied, "tie_word_embeddings", true),
};

/// Pythia and GPT-NeoX-20B: rotary, parallel residual with two LayerNorms, untied embed_out.
const Steps kGptNeox = {
    fix(&Arch::kv_heads, of(&Arch::heads)),
    opt(&Arch::inner, {"intermediate_size"}, of(&Arch::hidden, 4), 1, kMaxInner),
    act({"hidden_act"}, "gelu"),
    flag(&Arch::parallel, "use_parallel_residual", true),
    fix(&Arch::parallel_norms, 2),
    flag({&Arch::qkv_bias, &Arch::out_bias}, "attention_bias", true),
    flag(&Arch::tied, "tie_word_embeddings", false),
    rate(&Arch::dropout, {"hidden_dropout"}, 0.0),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 2048, 1, kMaxPositions),
    fix(&Arch::learned_positions, false),
    hook([](const Cfg& c, Arch& a, std::vector<std::string>&) { rotary_share(c, a, "rotary_pct", 0.25); }),
};

/// GPT-J: rotary, one LayerNorm feeding attention and MLP in parallel, no attention biases, LM head bias.
const Steps kGptj = {
    fix(&Arch::kv_heads, of(&Arch::heads)),
    opt(&Arch::inner, {"n_inner", "intermediate_size"}, of(&Arch::hidden, 4), 1, kMaxInner),
    act({"activation_function"}, "gelu_new"),
    fix(&Arch::parallel, true),
    fix(&Arch::qkv_bias, false),
    fix(&Arch::out_bias, false),
    fix(&Arch::head_bias, true),
    flag(&Arch::tied, "tie_word_embeddings", false),
    rate(&Arch::dropout, {"resid_pdrop"}, 0.0),
    rate(&Arch::attn_dropout, {"attn_pdrop"}, 0.0),
    rate(&Arch::embed_dropout, {"embd_pdrop"}, 0.0),
    opt(&Arch::max_positions, {"n_positions"}, 2048, 1, kMaxPositions),
    fix(&Arch::learned_positions, false),
    hook(gptj_rotary),
};

/// OPT: learned positions with 2 extra rows, ReLU MLP of ffn_dim, biases, tied head.
const Steps kOpt = {
    fix(&Arch::kv_heads, of(&Arch::heads)),
    opt(&Arch::inner, {"ffn_dim"}, of(&Arch::hidden, 4), 1, kMaxInner),
    act({"activation_function"}, "relu"),
    flag({&Arch::qkv_bias, &Arch::out_bias, &Arch::mlp_bias}, "enable_bias", true),
    flag(&Arch::norm_bias, "layer_norm_elementwise_affine", true),
    not_flag(&Arch::post_norm, "do_layer_norm_before"),
    hook(&Arch::final_norm, opt_final_norm),
    opt(&Arch::embed_dim, {"word_embed_proj_dim"}, of(&Arch::hidden), 1, kMaxWidth),
    flag(&Arch::tied, "tie_word_embeddings", true),
    rate(&Arch::dropout, {"dropout"}, 0.1),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
    fix(&Arch::embed_dropout, &Arch::dropout),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 2048, 1, kMaxPositions),
    fix(&Arch::position_offset, 2),
};

/// Phi-1/1.5/2: partial rotary, one LayerNorm feeding attention and MLP in parallel, biases, LM head bias.
const Steps kPhi = {
    opt(&Arch::kv_heads, {"num_key_value_heads"}, of(&Arch::heads), 1, of(&Arch::heads)),
    opt(&Arch::inner, {"intermediate_size"}, of(&Arch::hidden, 4), 1, kMaxInner),
    act({"hidden_act"}, "gelu_new"),
    fix(&Arch::parallel, true),
    fix(&Arch::head_bias, true),
    flag(&Arch::tied, "tie_word_embeddings", false),
    rate(&Arch::dropout, {"resid_pdrop"}, 0.0),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
    rate(&Arch::embed_dropout, {"embd_pdrop"}, 0.0),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 2048, 1, kMaxPositions),
    fix(&Arch::learned_positions, false),
    hook([](const Cfg& c, Arch& a, std::vector<std::string>&) { rotary_share(c, a, "partial_rotary_factor", 0.5); }),
};

/// Falcon: multi-query or grouped KV, parallel attention + MLP, no biases, rotary or ALiBi, tied head.
const Steps kFalcon = {
    hook(&Arch::kv_heads, falcon_kv_heads),
    opt(&Arch::inner, {"ffn_hidden_size"}, of(&Arch::hidden, 4), 1, kMaxInner),
    act({"activation"}, "gelu"),
    hook(&Arch::parallel, falcon_parallel),
    flag({&Arch::qkv_bias, &Arch::out_bias, &Arch::mlp_bias}, "bias", false),
    flag(&Arch::tied, "tie_word_embeddings", true),
    rate(&Arch::dropout, {"hidden_dropout"}, 0.0),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 2048, 1, kMaxPositions),
    fix(&Arch::learned_positions, false),
    hook(falcon_rotary),
    warn_if("alibi", "ALiBi position biases add no parameters and are not costed"),
};

/// Llama family: RMSNorm, rotary, SwiGLU MLP, grouped-query attention, no biases.
const Steps kLlama = {
    opt(&Arch::kv_heads, {"num_key_value_heads"}, of(&Arch::heads), 1, of(&Arch::heads)),
    opt(&Arch::head_dim, {"head_dim"}, 0, 1, kMaxWidth),
    need(&Arch::inner, {"intermediate_size"}, 1, kMaxInner),
    act({"hidden_act"}, "silu"),
    fix(&Arch::gated, true),
    fix(&Arch::rms, true),
    flag({&Arch::qkv_bias, &Arch::out_bias}, "attention_bias", false),
    flag(&Arch::mlp_bias, "mlp_bias", false),
    flag(&Arch::tied, "tie_word_embeddings", false),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 2048, 1, kMaxPositions),
    fix(&Arch::learned_positions, false),
};

/// OLMo 2's block (OLMo 3's too): RMSNorm over the whole q and k projections; norms after attention and MLP, none
/// before.
const Steps kOlmo2 = {fix(&Arch::qk_norm, "full"), fix(&Arch::norm_before, false), fix(&Arch::norm_after, true)};

/// Mistral's and Mixtral's default of 8 KV heads.
const Step kEightKvHeads = opt(&Arch::kv_heads, {"num_key_value_heads"}, capped(8, &Arch::heads), 1, of(&Arch::heads));

/// Mixtral: a router picks top_k of the experts for every token; each expert is a SwiGLU MLP.
const Steps kMixtralExperts = {
    opt(&Arch::experts, {"num_local_experts"}, 8, 1, 1 << 16),
    opt(&Arch::top_k, {"num_experts_per_tok"}, 2, 1, of(&Arch::experts)),
};

/// Qwen2: biased Q, K and V projections (the output projection follows attention_bias).
const Steps kQkvBias = {fix(&Arch::qkv_bias, true)};

/// Gemma: GeGLU (hidden_activation) and a tied head.
const Steps kGemma = {act({"hidden_activation", "hidden_act"}, "gelu_pytorch_tanh"),
                      flag(&Arch::tied, "tie_word_embeddings", true)};

// ---- encoders -------------------------------------------------------------------------------------------

/// BERT and RoBERTa.
const Steps kBert = {
    need(&Arch::hidden, {"hidden_size"}, 1, kMaxWidth),
    need(&Arch::layers, {"num_hidden_layers"}, 1, kMaxDepth),
    head_count({"num_attention_heads"}),
    opt(&Arch::inner, {"intermediate_size"}, of(&Arch::hidden, 4), 1, kMaxInner),
    act({"hidden_act"}, "gelu"),
    rate(&Arch::dropout, {"hidden_dropout_prob"}, 0.1),
    rate(&Arch::attn_dropout, {"attention_probs_dropout_prob"}, &Arch::dropout),
    opt(&Arch::type_vocab, {"type_vocab_size"}, 2, 0, 1 << 20),
};

/// DistilBERT's own spellings; no token types.
const Steps kDistilBert = {
    need(&Arch::hidden, {"dim", "hidden_size"}, 1, kMaxWidth),
    need(&Arch::layers, {"n_layers", "num_hidden_layers"}, 1, kMaxDepth),
    head_count({"n_heads", "num_attention_heads"}),
    fix(&Arch::heads_field, "n_heads"),
    opt(&Arch::inner, {"hidden_dim", "intermediate_size"}, of(&Arch::hidden, 4), 1, kMaxInner),
    act({"activation", "hidden_act"}, "gelu"),
    rate(&Arch::dropout, {"dropout", "hidden_dropout_prob"}, 0.1),
    rate(&Arch::attn_dropout, {"attention_dropout", "attention_probs_dropout_prob"}, 0.1),
    fix(&Arch::type_vocab, 0),
    warn_if("sinusoidal_pos_embds", "sinusoidal position embeddings are counted as learned"),
};

/// RoBERTa: one token type.
const Step kOneTokenType = opt(&Arch::type_vocab, {"type_vocab_size"}, 1, 0, 1 << 20);

/// What every encoder reads after its shape: vocabulary, positions, the task head.
const Steps kEncoderTail = {
    need(&Arch::vocab, {"vocab_size"}, 1, kMaxVocab),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 512, 1, kMaxPositions),
    task_head(),
};

/// DistilBERT's classifier: a ReLU pre_classifier, none in the bare model.
const Steps kDistilHead = {
    fix(&Arch::pooler_act, "relu"),
    fix(&Arch::bare_pooler, false),
    hook(distil_classifier_dropout),
};

// ---- encoder-decoders -----------------------------------------------------------------------------------

/// T5's shape: RMS-normalised pre-norm blocks without biases, relative position buckets.
const Steps kT5Shape = {
    need(&Arch::hidden, {"d_model"}, 1, kMaxWidth),
    need(&Arch::heads, {"num_heads"}, 1, kMaxWidth),
    opt(&Arch::head_dim, {"d_kv"}, per(&Arch::hidden, &Arch::heads), 1, kMaxWidth),
    hook(t5_head_dim_given),
    need(&Arch::inner, {"d_ff"}, 1, kMaxInner),
    need(&Arch::layers, {"num_layers"}, 1, kMaxDepth),
    opt(&Arch::decoder_layers, {"num_decoder_layers"}, of(&Arch::layers), 1, kMaxDepth),
    need(&Arch::vocab, {"vocab_size"}, 1, kMaxVocab),
    opt(&Arch::buckets, {"relative_attention_num_buckets"}, 32, 1, 1 << 16),
    rate(&Arch::dropout, {"dropout_rate"}, 0.1),
    flag(&Arch::tied, "tie_word_embeddings", true),
};

/// T5's MLP: feed_forward_proj.
const Steps kT5Dense = {hook(&Arch::act, t5_feed_forward)};

/// T5's trained length (relative buckets run longer, with a warning).
const Steps kT5Positions = {opt(&Arch::max_positions, {"n_positions"}, 512, 1, kMaxPositions)};

/// mT5: an untied LM head.
const Step kUntiedHead = flag(&Arch::tied, "tie_word_embeddings", false);

/// Switch Transformers: one ungated activation (dense_act_fn), in every expert too; top-1 routing.
const Steps kSwitchExperts = {
    act({"dense_act_fn"}, "relu"),
    opt(&Arch::experts, {"num_experts"}, 8, 1, 1 << 16),
    flag(&Arch::router_bias, "router_bias", false),
    hook(switch_sparse_steps),
};

/// Switch's expert capacity, only warned about (0: not given); read after the trained length, as the builder
/// read it.
const Steps kSwitchCapacity = {opt(&Arch::expert_capacity, {"expert_capacity"}, 0, 1, kMaxWidth * 16)};

/// The fairseq / BART family: biased attention, learned (BART) or sinusoidal positions, post- or pre-norm.
/// Each class's defaults can be overridden by the Transformers v3 BartConfig switches (which Marian and mBART
/// configs of that time carried), so a fairseq pre-norm Transformer with sinusoidal positions is expressible.
const Steps kBart = {
    need(&Arch::hidden, {"d_model"}, 1, kMaxWidth),
    need(&Arch::layers, {"encoder_layers", "num_hidden_layers"}, 1, kMaxDepth),
    opt(&Arch::decoder_layers, {"decoder_layers"}, of(&Arch::layers), 1, kMaxDepth),
    need(&Arch::heads, {"encoder_attention_heads", "num_attention_heads"}, 1, kMaxWidth),
    opt(&Arch::decoder_heads, {"decoder_attention_heads"}, of(&Arch::heads), 1, kMaxWidth),
    opt(&Arch::inner, {"encoder_ffn_dim"}, of(&Arch::hidden, 4), 1, kMaxInner),
    opt(&Arch::decoder_inner, {"decoder_ffn_dim"}, of(&Arch::inner), 1, kMaxInner),
    hook(&Arch::vocab, shared_vocab_table),
    act({"activation_function"}, "gelu"),
    rate(&Arch::dropout, {"dropout"}, 0.1),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
    rate(&Arch::act_dropout, {"activation_dropout"}, 0.0),
    hook(seq2seq_heads_divide),
    fix(&Arch::learned_positions, true),
    flag(&Arch::pre_norm, "normalize_before", false),
    flag(&Arch::final_norm, "add_final_layer_norm", false),
    flag(&Arch::embed_norm, "normalize_embedding", &Arch::learned_positions),
    not_flag(&Arch::learned_positions, "static_position_embeddings"),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 1024, 1, kMaxPositions),
    fix(&Arch::position_offset, 2),  // BART's learned table keeps two extra rows
};

/// Marian's and FSMT's defaults: ReLU, sinusoidal positions.
const Step kFairseqAct = act({"activation_function"}, "relu");
const Step kSinusoidal = fix(&Arch::learned_positions, false);

/// mBART: pre-norm blocks with a final LayerNorm per stack.
const Steps kPreNorm = {flag(&Arch::pre_norm, "normalize_before", true),
                        flag(&Arch::final_norm, "add_final_layer_norm", true)};

/// FSMT: separate source and target vocabularies.
const Step kSeparateVocabs = hook(&Arch::vocab, separate_vocab_tables);

// ---- vision ---------------------------------------------------------------------------------------------

/// ViT: patch convolution, class token, learned positions, pre-LN encoder.
const Steps kVitShape = {
    need(&Arch::hidden, {"hidden_size"}, 1, kMaxWidth),
    need(&Arch::layers, {"num_hidden_layers"}, 1, kMaxDepth),
    head_count({"num_attention_heads"}),
    opt(&Arch::inner, {"intermediate_size"}, of(&Arch::hidden, 4), 1, kMaxInner),
    act({"hidden_act"}, "gelu"),
    opt(&Arch::patch, {"patch_size"}, 16, 1, 4096),
    opt(&Arch::channels, {"num_channels"}, 3, 1, 1 << 16),
    flag(&Arch::qkv_bias, "qkv_bias", true),
    rate(&Arch::dropout, {"hidden_dropout_prob"}, 0.0),
    rate(&Arch::attn_dropout, {"attention_probs_dropout_prob"}, 0.0),
    opt(&Arch::image_size, {"image_size"}, 224, 1, 16384),
};

// ---- the table ------------------------------------------------------------------------------------------

namespace {

const std::vector<ModelType> kModelTypes = {
    {"gpt2", kDecoder, compose({kDecoderCore, kGpt2})},
    {"gpt_neox", kDecoder, compose({kDecoderCore, kGptNeox})},
    {"gptj", kDecoder, compose({kDecoderCore, kGptj})},
    {"opt", kDecoder, compose({kDecoderCore, kOpt})},
    {"phi", kDecoder, compose({kDecoderCore, kPhi})},
    {"falcon", kDecoder, compose({kDecoderCore, kFalcon}), {"RefinedWebModel", "RefinedWeb"}},
    // llama, mistral and mixtral are in types_decoder.cpp (rope_scaling, sliding windows).
    {"qwen2", kDecoder, compose({kDecoderCore, kLlama, kQkvBias})},
    {"gemma", kDecoder, compose({kDecoderCore, kLlama}, kGemma)},
    {"bert", kEncoder, compose({kBert, kEncoderTail})},
    {"roberta", kEncoder, compose({kBert, kEncoderTail}, {kOneTokenType})},
    {"distilbert", kEncoder, compose({kDistilBert, kEncoderTail, kDistilHead})},
    {"t5", kT5, compose({kT5Shape, kT5Dense, kT5Positions})},
    {"mt5", kT5, compose({kT5Shape, kT5Dense, kT5Positions}, {kUntiedHead})},
    {"switch_transformers", kT5, compose({kT5Shape, kSwitchExperts, kT5Positions, kSwitchCapacity})},
    {"bart", kSeq2Seq, compose({kBart})},
    {"mbart", kSeq2Seq, compose({kBart}, kPreNorm)},
    {"marian", kSeq2Seq, compose({kBart}, {kFairseqAct, kSinusoidal})},
    {"fsmt", kSeq2Seq, compose({kBart}, {kFairseqAct, kSinusoidal, kSeparateVocabs})},
    {"vit", kVit, compose({kVitShape})},
};

}  // namespace

const std::vector<ModelType>& classic_model_types() { return kModelTypes; }

const std::vector<const std::vector<ModelType>*>& model_type_tables() {
  static const std::vector<const std::vector<ModelType>*> tables = {
      &classic_model_types(),    &decoder_model_types(), &plain_model_types(),    &ssm_model_types(),
      &multimodal_model_types(), &recent_model_types(),  &qwen_next_model_types()};
  return tables;
}

const ModelType* find_model_type(const std::string& model_type) {
  for (const auto* table : model_type_tables()) {
    auto it = std::find_if(table->begin(), table->end(), [&](const ModelType& t) {
      return t.name == model_type || std::find(t.aliases.begin(), t.aliases.end(), model_type) != t.aliases.end();
    });
    if (it != table->end()) return &*it;
  }
  return nullptr;
}

}  // namespace prenet::hf

namespace prenet {

Json hf_model_types_catalogue() {
  Json out = Json::array();
  for (const auto* table : hf::model_type_tables()) {
    for (const auto& t : *table) {
      out.push_back(
          {{"model_type", t.name}, {"aliases", t.aliases}, {"input", t.family.image_input ? "image" : "tokens"}});
    }
  }
  return out;
}

}  // namespace prenet

