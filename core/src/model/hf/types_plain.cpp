// Decoders read by renaming fields onto the classic parts alone: Phi-3/Phi-4, OLMo, Granite, InternLM2, MPT.
// One row per model_type; see model_types.cpp for how to add one. Each family's parameters are as its
// Hugging Face class builds them (the modeling file named at each part); the hooks below are its quirks.

#include "model/hf/decoder_hooks.hpp"
#include "model/hf/parts.hpp"
#include "model/hf/quirks.hpp"

namespace prenet::hf {
namespace {

// ---- hooks ----------------------------------------------------------------------------------------------

/// Phi-3's partial_rotary_factor (Phi-4-mini: 0.75) rotates part of each head (no parameters).
void phi3_rotary_fraction(const Cfg& c, Arch& a, std::vector<std::string>&) {
  rotary_share(c, a, "partial_rotary_factor", 1.0);
}

/// clip_qkv (OLMo-7B-0424: 8): a clamp of q, k and v, an elementwise pass that is not costed.
void note_clip_qkv(const Cfg& c, Arch&, std::vector<std::string>& warnings) {
  double clip = c.number("clip_qkv", 0.0, 0.0, 1e300);
  if (clip > 0) warnings.push_back("clip_qkv: the clamp of q, k and v is not costed (no parameters)");
}

/// Granite's multipliers scale the embeddings, both residual branches of every block and the logits
/// (attention_multiplier replaces the softmax scale): no parameters, elementwise passes that are not costed.
void granite_multipliers(const Cfg& c, Arch&, std::vector<std::string>& warnings) {
  c.number("attention_multiplier", 1.0, -1e300, 1e300);  // the softmax scale: no extra work
  bool scaled = false;
  for (const char* key : {"embedding_multiplier", "residual_multiplier"}) {
    scaled = c.number(key, 1.0, -1e300, 1e300) != 1.0 || scaled;
  }
  double logits = c.number("logits_scaling", 1.0, -1e300, 1e300);
  if (logits == 0) throw InputError(c.field("logits_scaling"), "must not be 0 (the logits are divided by it)");
  if (scaled || logits != 1.0) {
    warnings.push_back(
        "embedding_multiplier, residual_multiplier and logits_scaling: the scalar multiplications are not costed "
        "(no parameters)");
  }
}

/// MPT's MLP: transformers' MptMLP is always 4 x d_model wide, so another expansion_ratio is refused.
void mpt_expansion(const Cfg& c, Arch& a, std::vector<std::string>&) {
  if (c.opt({"expansion_ratio"}, 4, 1, 1 << 16) != 4) {
    throw InputError(c.field("expansion_ratio"), "only 4 is supported (transformers' MptMLP is 4 x d_model wide)");
  }
  a.inner = 4 * a.hidden;
}

/// MPT's switches that transformers' MptModel does not model: biases, other norms, other feed-forward types.
void mpt_fixed_parts(const Cfg& c, Arch&, std::vector<std::string>&) {
  if (!c.flag("no_bias", true)) {
    throw InputError(c.field("no_bias"), "false is not supported (transformers' MptModel has no biases)");
  }
  std::string norm = c.str("norm_type", "low_precision_layernorm");
  if (norm != "low_precision_layernorm" && norm != "layernorm") {
    throw InputError(c.field("norm_type"), "\"" + printable(norm) +
                                               "\" is not supported (low_precision_layernorm or layernorm: "
                                               "transformers' MptModel builds a LayerNorm without bias)");
  }
  if (c.has("ffn_config")) {
    Cfg ffn(require_object(c.json()["ffn_config"], c.field("ffn_config")), c.field("ffn_config"));
    std::string type = ffn.str("ffn_type", "mptmlp");
    if (type != "mptmlp") {
      throw InputError(ffn.field("ffn_type"), "\"" + printable(type) + "\" is not supported (mptmlp)");
    }
  }
}

/// MPT's attn_config: multi-head attention with ALiBi, no QK LayerNorm; attn_pdrop drops the attention
/// probabilities and both residual branches (as MptBlock and MptMLP apply it).
void mpt_attention(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  static const Json kDefaults = Json::object();
  const Json& json = c.has("attn_config") ? require_object(c.json()["attn_config"], c.field("attn_config")) : kDefaults;
  Cfg attn(json, c.field("attn_config"));
  std::string type = attn.str("attn_type", "multihead_attention");
  if (type != "multihead_attention") {
    throw InputError(attn.field("attn_type"), "\"" + printable(type) +
                                                  "\" is not supported (multihead_attention: transformers' "
                                                  "MptAttention projects full K and V heads)");
  }
  if (!attn.flag("alibi", true)) {
    throw InputError(attn.field("alibi"), "false is not supported (transformers' MptModel always uses ALiBi)");
  }
  if (attn.flag("qk_ln", false)) {
    throw InputError(attn.field("qk_ln"), "true is not supported (transformers' MptAttention has no QK LayerNorm)");
  }
  a.dropout = attn.rate({"attn_pdrop"}, 0.0);
  a.attn_dropout = a.dropout;
  a.rotary = 0;  // ALiBi
  if (attn.number("clip_qkv", 0.0, 0.0, 1e300) > 0) {
    warnings.push_back("attn_config.clip_qkv: the clamp of q, k and v is not costed (no parameters)");
  }
  warnings.push_back("ALiBi position biases add no parameters and are not costed");
}

// ---- parts ----------------------------------------------------------------------------------------------

/// Phi-3 and Phi-4 (modeling_phi3.py): the Llama block with fused qkv_proj and gate_up_proj (the same
/// parameters as separate projections), never a bias, resid_pdrop on both residual branches.
const Steps kPhi3 = {
    opt(&Arch::kv_heads, {"num_key_value_heads"}, of(&Arch::heads), 1, of(&Arch::heads)),
    opt(&Arch::head_dim, {"head_dim"}, 0, 1, kMaxWidth),
    need(&Arch::inner, {"intermediate_size"}, 1, kMaxInner),
    act({"hidden_act"}, "silu"),
    fix(&Arch::gated, true),
    fix(&Arch::rms, true),
    fix(&Arch::qkv_bias, false),
    fix(&Arch::out_bias, false),
    fix(&Arch::mlp_bias, false),
    flag(&Arch::tied, "tie_word_embeddings", false),
    rate(&Arch::dropout, {"resid_pdrop"}, 0.0),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 4096, 1, kMaxPositions),
    fix(&Arch::learned_positions, false),
    hook(phi3_rotary_fraction),
    hook(&Arch::window, optional_window),  // Phi3Attention passes sliding_window to the attention
};

/// OLMo (modeling_olmo.py): the Llama block with OlmoLayerNorm, a LayerNorm without any parameters, and an
/// MLP that never has biases.
const Steps kOlmo = {
    fix(&Arch::rms, false),      fix(&Arch::norm_bias, false), fix(&Arch::norm_scale, false),
    fix(&Arch::mlp_bias, false), hook(note_clip_qkv),
};

/// Granite (modeling_granite.py): the Llama block; its multipliers change no parameters.
const Steps kGranite = {hook(granite_multipliers)};

/// InternLM2 (remote code, modeling_internlm2.py / configuration_internlm2.py on the Hub): the Llama block with
/// a fused wqkv; `bias` (default true) on wqkv and wo, none in the MLP; head_dim is always hidden / heads.
const Steps kInternLM2 = {
    opt(&Arch::kv_heads, {"num_key_value_heads"}, of(&Arch::heads), 1, of(&Arch::heads)),
    need(&Arch::inner, {"intermediate_size"}, 1, kMaxInner),
    act({"hidden_act"}, "silu"),
    fix(&Arch::gated, true),
    fix(&Arch::rms, true),
    flag({&Arch::qkv_bias, &Arch::out_bias}, "bias", true),
    fix(&Arch::mlp_bias, false),
    flag(&Arch::tied, "tie_word_embeddings", false),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 2048, 1, kMaxPositions),
    fix(&Arch::learned_positions, false),
};

/// MPT (modeling_mpt.py): d_model, n_layers, n_heads; pre-LN blocks with LayerNorms without bias, a fused Wqkv
/// and a 4 x d_model GELU MLP, no biases anywhere, ALiBi, the head tied to wte.
const Steps kMpt = {
    need(&Arch::hidden, {"d_model", "hidden_size"}, 1, kMaxWidth),
    need(&Arch::layers, {"n_layers", "num_hidden_layers"}, 1, kMaxDepth),
    head_count({"n_heads", "num_attention_heads"}),
    need(&Arch::vocab, {"vocab_size"}, 1, kMaxVocab),
    fix(&Arch::kv_heads, of(&Arch::heads)),
    hook(&Arch::inner, mpt_expansion),
    fix(&Arch::act, "gelu"),
    fix(&Arch::qkv_bias, false),
    fix(&Arch::out_bias, false),
    fix(&Arch::mlp_bias, false),
    fix(&Arch::norm_bias, false),
    hook(mpt_fixed_parts),
    flag(&Arch::tied, "tie_word_embeddings", true),
    opt(&Arch::max_positions, {"max_seq_len"}, 2048, 1, kMaxPositions),
    fix(&Arch::learned_positions, false),
    hook(mpt_attention),
};

/// BLOOM always adds ALiBi biases and keeps the residual before each LayerNorm; the other residual
/// (apply_residual_connection_post_layernorm) is refused rather than read wrongly.
void bloom_fixed_parts(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  a.rotary = 0;  // ALiBi
  if (c.flag("apply_residual_connection_post_layernorm", false)) {
    throw InputError(c.field("apply_residual_connection_post_layernorm"),
                     "true is not supported (the residual is taken before each LayerNorm, as BLOOM's published "
                     "models do)");
  }
  warnings.push_back("ALiBi position biases add no parameters and are not costed");
}

/// BLOOM (modeling_bloom.py): word embeddings with a LayerNorm, pre-LN blocks with a biased fused
/// query_key_value and dense, a biased 4 x hidden GELU (tanh) MLP, ALiBi, the head tied to the embeddings.
const Steps kBloom = {
    need(&Arch::hidden, {"hidden_size", "n_embed"}, 1, kMaxWidth),
    need(&Arch::layers, {"n_layer", "num_hidden_layers"}, 1, kMaxDepth),
    head_count({"n_head", "num_attention_heads"}),
    opt(&Arch::vocab, {"vocab_size"}, 250880, 1, kMaxVocab),
    fix(&Arch::kv_heads, of(&Arch::heads)),
    fix(&Arch::inner, of(&Arch::hidden, 4)),
    fix(&Arch::act, "gelu_new"),
    fix(&Arch::embed_norm, true),
    rate(&Arch::dropout, {"hidden_dropout"}, 0.0),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
    flag(&Arch::tied, "tie_word_embeddings", true),
    opt(&Arch::max_positions, {"seq_length"}, 2048, 1, kMaxPositions),
    fix(&Arch::learned_positions, false),
    hook(bloom_fixed_parts),
};

}  // namespace

const std::vector<ModelType>& plain_model_types() {
  static const std::vector<ModelType> rows = {
      {"phi3", kDecoder, compose({kDecoderCore, kPhi3})},
      {"olmo", kDecoder, compose({kDecoderCore, kLlama, kOlmo})},
      {"granite", kDecoder, compose({kDecoderCore, kLlama, kGranite})},
      {"internlm2", kDecoder, compose({kDecoderCore, kInternLM2})},
      {"mpt", kDecoder, compose({kMpt})},
      {"bloom", kDecoder, compose({kBloom})},
  };
  return rows;
}

}  // namespace prenet::hf
