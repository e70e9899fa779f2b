// A config whose model_type is not in the table is read generically only where its own fields decide the
// architecture, and the response says which fields it relied on; everything else is an error that names the
// model_type, the field and the model_types that are supported. Conservative on purpose: a field that would
// change the parameters and that this reader does not read (experts, latent attention, layer patterns, nested
// configs, state-space mixers, ...) refuses the reading rather than being dropped.
#include "model/hf/generic.hpp"

#include <algorithm>
#include <utility>

#include "model/hf/parts.hpp"

namespace prenet::hf {
namespace {

/// Fields that change the architecture in ways the generic reader does not read, with what they mean.
/// Checked in this order, so the same field is named first whatever else the config holds.
const std::vector<std::pair<std::vector<std::string>, std::string>>& refusing_fields() {
  static const std::vector<std::pair<std::vector<std::string>, std::string>> table = {
      {{"num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts", "num_experts_per_tok",
        "moe_intermediate_size", "n_shared_experts", "num_shared_experts", "shared_expert_intermediate_size",
        "first_k_dense_replace", "decoder_sparse_step", "moe_layer_freq", "mlp_only_layers",
        "interleave_moe_layer_step"},
       "a mixture of experts"},
      {{"q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"},
       "multi-head latent attention"},
      {{"layer_types", "sliding_window_pattern", "attn_layer_period", "attn_layer_offset", "hybrid_override_pattern",
        "block_types", "no_rope_layers", "cross_attention_layers", "global_attn_every_n_layers",
        "full_attention_interval", "linear_num_key_heads", "linear_num_value_heads", "linear_conv_kernel_dim"},
       "a per-layer pattern"},
      {{"text_config", "vision_config", "audio_config", "encoder_config", "decoder_config", "encoder", "decoder"},
       "a nested config (a multimodal or composite model)"},
      {{"state_size", "ssm_state_size", "d_state", "ssm_cfg", "conv_kernel", "d_conv", "mamba_expand",
        "time_step_rank"},
       "a state-space mixer"},
      {{"encoder_layers", "decoder_layers", "num_decoder_layers", "encoder_attention_heads"}, "an encoder-decoder"},
      {{"qk_layernorm", "use_qk_norm", "qk_norm"}, "a normalisation of queries and keys (it has weights)"},
      {{"parallel_attn", "use_parallel_residual", "parallel_residual", "new_decoder_architecture"},
       "parallel attention and MLP blocks"},
      {{"num_kv_heads", "n_head_kv", "multi_query", "ffn_dim", "ffn_hidden_size", "d_ff", "expansion_ratio",
        "intermediate_size_mlp", "embedding_size", "word_embed_proj_dim"},
       "a size under a spelling the generic reader does not read"},
      {{"rotary_dim", "rotary_pct", "rotary_emb_base", "position_embedding_type", "alibi", "partial_rotary_factor"},
       "positions under a spelling the generic reader does not read (partial rotary: GLM- and StableLM-style "
       "blocks, whose other differences no field names)"},
      {{"attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar"},
       "logit soft-capping (Gemma 2-style blocks, whose extra norms no field names)"},
      {{"bias", "use_bias", "no_bias", "add_bias_linear", "qkv_bias", "attention_out_bias"},
       "biases under a spelling the generic reader does not read"},
  };
  return table;
}

/// Key prefixes that name a part the generic reader does not read whatever the rest of the key (Falcon-H1's
/// mamba_d_ssm, mamba_n_heads, ...; NemotronH's ssm_*), checked after refusing_fields().
const std::vector<std::pair<std::string, std::string>>& refusing_prefixes() {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"mamba_", "a state-space mixer"},
      {"ssm_", "a state-space mixer"},
  };
  return table;
}

/// Boolean switches that refuse the reading only when on (absent or false: the plain decoder).
const std::vector<std::pair<std::string, std::string>>& refusing_switches() {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"is_encoder_decoder", "an encoder-decoder"},
      {"add_cross_attention", "cross-attention"},
  };
  return table;
}

/// Whether `c` turns sliding-window attention on: a window given, and use_sliding_window (Qwen's switch) not false.
/// Which layers use it is the class's choice, so the generic reader refuses it rather than time full attention.
bool sliding_window_on(const Cfg& c) {
  if (!c.has("sliding_window")) return false;
  const Json& window = c.json()["sliding_window"];
  if (window.is_boolean() && !window.get<bool>()) return false;
  return !(c.has("use_sliding_window") && !c.flag("use_sliding_window", true));
}

/// `"foo"` as the messages quote a model_type; "(none)" for a config without one.
std::string quoted_type(const Cfg& c) {
  std::string type = c.str("model_type", "");
  return type.empty() ? "(none)" : "\"" + printable(type) + "\"";
}

/// The opening of every refusal: which model_type, and that it has no row.
std::string not_in_table(const Cfg& c) { return "model_type " + quoted_type(c) + " is not in the table"; }

/// The closing of every refusal: what is supported.
std::string supported_tail() {
  return "; supported model_types: " + supported_model_types() + " (docs/MODEL_FORMAT.md)";
}

/// Errors when `c` holds a field from refusing_fields(), a key with a prefix from refusing_prefixes() or an on
/// switch from refusing_switches().
void refuse_unread_fields(const Cfg& c) {
  for (const auto& [keys, meaning] : refusing_fields()) {
    std::string key = c.present(keys);
    if (key.empty()) continue;
    throw InputError(c.field(key), not_in_table(c) + ", and the generic reader does not read " + key + " (" + meaning +
                                       ")" + supported_tail());
  }
  for (const auto& [prefix, meaning] : refusing_prefixes()) {
    for (const auto& item : c.json().items()) {
      if (item.key().rfind(prefix, 0) != 0) continue;
      throw InputError(c.field(item.key()), not_in_table(c) + ", and the generic reader does not read " +
                                                printable(item.key()) + " (" + meaning + ")" + supported_tail());
    }
  }
  if (sliding_window_on(c)) {
    throw InputError(c.field("sliding_window"),
                     not_in_table(c) + ", and the generic reader does not read sliding_window (sliding-window " +
                         "attention, on layers the class chooses)" + supported_tail());
  }
  for (const auto& [key, meaning] : refusing_switches()) {
    if (c.has(key) && c.flag(key, false)) {
      throw InputError(c.field(key), not_in_table(c) + ", and the generic reader does not read " + key + " (" +
                                         meaning + ")" + supported_tail());
    }
  }
}

/// The config's hidden_act when it names a gated-MLP activation (silu, swish, gelu*), else "".
std::string gated_activation(const Cfg& c) {
  if (!c.has("hidden_act") || !c.json()["hidden_act"].is_string()) return "";
  std::string act = c.str("hidden_act", "");
  bool gated = act == "silu" || act == "swish" || act.rfind("gelu", 0) == 0;
  return gated ? act : "";
}

/// The fields a Llama-style reading needs that `c` lacks (empty: it is one).
std::vector<std::string> missing_for_llama(const Cfg& c) {
  std::vector<std::string> missing;
  if (gated_activation(c).empty()) missing.emplace_back("hidden_act (silu, swish or gelu*)");
  for (const char* key :
       {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "rms_norm_eps"}) {
    if (!c.has(key)) missing.emplace_back(key);
  }
  if (!c.has("rope_theta") && !c.has("rope_parameters")) missing.emplace_back("rope_theta");
  return missing;
}

/// The fields a GPT-2-style reading needs that `c` lacks, and those it has that contradict one (both empty: it is one).
std::pair<std::vector<std::string>, std::vector<std::string>> unmet_for_gpt2(const Cfg& c) {
  std::vector<std::string> missing, contradicting;
  for (const char* key : {"n_embd", "n_head", "n_layer", "layer_norm_epsilon", "n_positions"}) {
    if (!c.has(key)) missing.emplace_back(key);
  }
  for (const char* key : {"rms_norm_eps", "rope_theta", "rope_parameters"}) {
    if (c.has(key)) contradicting.emplace_back(key);
  }
  return {missing, contradicting};
}

/// "a, b and c".
std::string and_list(const std::vector<std::string>& items) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  }
  return text;
}

/// The rows a generic reading uses: function-local, so the parts (other files' globals) exist when they are built.
const ModelType& llama_style_row() {
  // save_pretrained drops a field equal to PretrainedConfig's default (to_diff_dict), and that default of
  // tie_word_embeddings is true: absent, the head is tied.
  static const ModelType row = {"", kDecoder,
                                compose({kDecoderCore, kLlama}, {flag(&Arch::tied, "tie_word_embeddings", true)})};
  return row;
}

const ModelType& gpt2_style_row() {
  static const ModelType row = {"", kDecoder, compose({kDecoderCore, kGpt2})};
  return row;
}

/// The Llama-style reading of `c` (missing_for_llama is empty).
GenericReading llama_style(const Cfg& c) {
  GenericReading r{&llama_style_row(), "llama", {"hidden_act", "intermediate_size", "rms_norm_eps"}, ""};
  r.relied_on.emplace_back(c.has("rope_theta") ? "rope_theta" : "rope_parameters");
  for (const char* key : {"num_key_value_heads", "head_dim", "attention_bias", "mlp_bias", "tie_word_embeddings"}) {
    if (c.has(key)) r.relied_on.emplace_back(key);
  }
  std::vector<std::string> named = r.relied_on;
  named.front() = "hidden_act=" + printable(gated_activation(c));
  std::string assumed;
  if (!c.has("num_key_value_heads")) assumed += "; no num_key_value_heads: one KV head per head";
  if (!c.has("attention_bias") && !c.has("mlp_bias")) assumed += "; no attention_bias or mlp_bias: no biases";
  if (!c.has("tie_word_embeddings")) assumed += "; no tie_word_embeddings: tied (PretrainedConfig's default)";
  r.warning = not_in_table(c) + "; read generically from " + and_list(named) +
              " (a Llama-style decoder: gated MLP, RMSNorm, rotary positions" + assumed + ")";
  return r;
}

/// The GPT-2-style reading of `c` (missing_for_gpt2 is empty).
GenericReading gpt2_style(const Cfg& c) {
  GenericReading r{&gpt2_style_row(), "gpt2", {"n_embd", "n_head", "n_layer", "layer_norm_epsilon", "n_positions"}, ""};
  for (const char* key : {"n_inner", "activation_function", "tie_word_embeddings"}) {
    if (c.has(key)) r.relied_on.emplace_back(key);
  }
  r.warning = not_in_table(c) + "; read generically from " + and_list(r.relied_on) +
              " (a GPT-2-style decoder: LayerNorm, learned positions, biases, tied embeddings unless "
              "tie_word_embeddings says otherwise)";
  return r;
}

}  // namespace

GenericReading read_generically(const Cfg& c) {
  refuse_unread_fields(c);
  std::vector<std::string> llama = missing_for_llama(c);
  if (llama.empty()) return llama_style(c);
  auto [missing, contradicting] = unmet_for_gpt2(c);
  if (missing.empty() && contradicting.empty()) return gpt2_style(c);
  std::string gpt2_unmet;
  if (!missing.empty()) gpt2_unmet = "lacking " + and_list(missing);
  if (!contradicting.empty()) {
    gpt2_unmet +=
        (gpt2_unmet.empty() ? "" : "; ") + std::string("it has ") + and_list(contradicting) + ", which GPT-2 has not";
  }
  throw InputError(c.field("model_type"),
                   not_in_table(c) + ", and its fields do not decide the architecture: a generic reading needs " +
                       "hidden_act (silu, swish or gelu*), hidden_size, num_hidden_layers, num_attention_heads, " +
                       "intermediate_size, rms_norm_eps and rope_theta (a Llama-style decoder; lacking " +
                       and_list(llama) + ") or n_embd, n_head, n_layer, layer_norm_epsilon and n_positions " +
                       "(a GPT-2-style decoder; " + gpt2_unmet + ")" + supported_tail());
}

std::string supported_model_types() {
  std::vector<std::string> names;
  for (const auto* table : model_type_tables()) {
    for (const ModelType& row : *table) names.push_back(row.name);
  }
  std::sort(names.begin(), names.end());
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace prenet::hf
