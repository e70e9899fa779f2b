// The decoder family of the architecture form (arch_form.hpp): the fields the Hugging Face decoder families are
// read into, the per-layer plan, and the checks between fields; built by build_decoder_arch (decoder.cpp).
#include <string>
#include <vector>

#include "model/hf/arch_form.hpp"
#include "model/hf/config_reader.hpp"
#include "model/hf/heads.hpp"

namespace prenet::hf::form {
namespace {

/// The fields, in reading order (a default or bound may name a field read before it).
const std::vector<Field>& decoder_fields() {
  static const std::vector<Field> table = [] {
    std::vector<Field> rows = {
        text_field("name", Kind::Text, at<&Arch::name>, {}, "the model's name in the response"),
        required_size("hidden_size", at<&Arch::hidden>, kMaxWidth, "features", "the width of the residual stream"),
        required_size("num_hidden_layers", at<&Arch::layers>, kMaxDepth, "layers", "the decoder blocks"),
        required_size("num_attention_heads", at<&Arch::heads>, kMaxWidth, "heads", "the query heads of each attention"),
        size_field("num_key_value_heads", at<&Arch::kv_heads>, of(&Arch::heads), 1, of(&Arch::heads), "heads",
                   "the key/value heads (GQA; 1: MQA); must divide num_attention_heads", "num_attention_heads"),
        size_field("head_dim", at<&Arch::head_dim>, 0, 0, kMaxWidth, "features",
                   "the width of one head; 0: hidden_size / num_attention_heads (which must then divide it)"),
        size_field("intermediate_size", at<&Arch::inner>, of(&Arch::hidden, 4), 1, kMaxInner, "features",
                   "the dense MLP's width", "4 × hidden_size"),
        required_size("vocab_size", at<&Arch::vocab>, kMaxVocab, "tokens", "the rows of the token embedding"),
        size_field("max_position_embeddings", at<&Arch::max_positions>, 0, 0, kMaxPositions, "tokens",
                   "the trained positions: the learned table's rows and the default sequence length; 0: none given"),
        size_field("position_offset", at<&Arch::position_offset>, 0, 0, 1 << 16, "rows",
                   "extra rows of a learned position table (OPT: 2)"),
        size_field("word_embed_proj_dim", at<&Arch::embed_dim>, 0, 0, kMaxWidth, "features",
                   "the embedding's width when it differs from hidden_size, projected in and out (OPT-350m); 0: "
                   "hidden_size"),
        size_field("parallel_norms", at<&Arch::parallel_norms>, 1, 1, 2, "norms",
                   "the norms feeding a parallel block: 1 shared, 2 (GPT-NeoX, new Falcon)"),
        size_field("sliding_window", at<&Arch::window>, 0, 0, kMaxPositions, "tokens",
                   "every layer's sliding window when `layers` is absent; 0: full attention"),
        size_field("num_experts", at<&Arch::experts>, 0, 0, 1 << 16, "experts",
                   "the routed experts; 0: dense. When `layers` is absent, more than 1 routes every layer"),
        size_field("num_experts_per_tok", at<&Arch::top_k>, 1, 1, 1 << 16, "experts",
                   "the experts each token runs through (top-k); at most num_experts"),
        size_field("moe_intermediate_size", at<&Arch::moe_inner>, 0, 0, kMaxInner, "features",
                   "each routed expert's width; 0: intermediate_size"),
        size_field("shared_expert_intermediate_size", at<&Arch::shared_inner>, 0, 0, kMaxInner, "features",
                   "the shared expert beside the routed ones (DeepSeek: n_shared_experts × moe_intermediate_size); 0: "
                   "none"),
        flag_field("shared_expert_gate", at<&Arch::shared_gate>, "the shared expert's output scaled by sigmoid(x·w)"),
        flag_field("expert_bias", at<&Arch::expert_bias>, "biases in the routed experts (gpt-oss)"),
        real_field("swiglu_limit", Kind::Number, at<&Arch::swiglu_limit>, 0, 1e6, "",
                   "gpt-oss's clamped GLU in the routed experts: gate clamped at most this, up to ±this, then "
                   "(up + 1) · act(gate); 0: a plain GLU"),
        flag_field("router_bias", at<&Arch::router_bias>, "a bias in the router"),
        flag_field("latent_attention", at<&Arch::mla>, "multi-head latent attention (DeepSeek-V2/V3) in every layer"),
        size_field("q_lora_rank", at<&Arch::q_lora_rank>, 0, 0, kMaxWidth, "features",
                   "latent attention: the query's low rank; 0: one query projection"),
        size_field("kv_lora_rank", at<&Arch::kv_lora_rank>, 0, 0, kMaxWidth, "features",
                   "latent attention: the compressed key/value width (at least 1 with latent_attention)"),
        size_field("qk_nope_head_dim", at<&Arch::qk_nope_dim>, 0, 0, kMaxWidth, "features",
                   "latent attention: each head's query/key width without positions"),
        size_field("qk_rope_head_dim", at<&Arch::qk_rope_dim>, 0, 0, kMaxWidth, "features",
                   "latent attention: each head's rotary query/key width"),
        size_field("v_head_dim", at<&Arch::v_head_dim>, 0, 0, kMaxWidth, "features",
                   "latent attention: each head's value width (at least 1 with latent_attention)"),
        text_field("qk_norm", Kind::Text, at<&Arch::qk_norm>, {"none", "head", "full", "head_weightless"},
                   "a norm on queries and keys: per head, over the full width, or per head without weights"),
        flag_field("qk_norm_rope_only", at<&Arch::qk_norm_rope_only>,
                   "QK-norm only in the layers with rotary positions"),
        flag_field("attention_sinks", at<&Arch::sinks>, "a learned sink logit per head (gpt-oss)"),
        real_field("attn_logit_softcapping", Kind::Number, at<&Arch::softcap>, 0, 1e6, "",
                   "attention logits soft-capped at c · tanh(x / c); 0: none"),
        flag_field("attention_output_gate", at<&Arch::attn_output_gate>,
                   "the attention's output times sigmoid of a gate projected with the queries (Qwen3-Next, Qwen3.5)"),
        size_field("linear_num_key_heads", at<&Arch::delta_key_heads>, 0, 0, kMaxWidth, "heads",
                   "Gated DeltaNet layers (a layer's attention \"linear\"): the heads of q and k"),
        size_field("linear_num_value_heads", at<&Arch::delta_value_heads>, 0, 0, kMaxWidth, "heads",
                   "Gated DeltaNet layers: the heads of v and of the recurrence, a multiple of linear_num_key_heads"),
        size_field("linear_key_head_dim", at<&Arch::delta_key_dim>, 0, 0, kMaxWidth, "features",
                   "Gated DeltaNet layers: each key head's width"),
        size_field("linear_value_head_dim", at<&Arch::delta_value_dim>, 0, 0, kMaxWidth, "features",
                   "Gated DeltaNet layers: each value head's width"),
        size_field("linear_conv_kernel_dim", at<&Arch::delta_conv>, 4, 1, 1 << 10, "taps",
                   "Gated DeltaNet layers: the depthwise causal convolution's kernel"),
        flag_field("linear_split_projections", at<&Arch::delta_split>,
                   "Gated DeltaNet layers: Qwen3.5's four input projections (in_proj_qkv, _z, _b, _a) rather than "
                   "Qwen3-Next's two (in_proj_qkvz, _ba)"),
        flag_field("learned_positions", at<&Arch::learned_positions>,
                   "a learned position table; false: rotary, ALiBi or none (no parameters)"),
        real_field("rotary_fraction", Kind::Number, at<&Arch::rotary>, 0, 1, "",
                   "without learned_positions: the share of each query/key head rotary positions (RoPE) rotate; 0: "
                   "ALiBi or none"),
        flag_field("rms_norm", at<&Arch::rms>, "RMSNorm instead of LayerNorm"),
        flag_field("norm_bias", at<&Arch::norm_bias>, "LayerNorm with a bias"),
        flag_field("norm_scale", at<&Arch::norm_scale>, "norms with a learned scale (OLMo: none)"),
        flag_field("norm_before", at<&Arch::norm_before>, "a norm on each branch's input (pre-norm)"),
        flag_field("norm_after", at<&Arch::norm_after>, "a norm on each branch's output (Gemma 2, OLMo 2)"),
        flag_field("post_norm", at<&Arch::post_norm>, "post-norm blocks: the norm after each residual add (OPT-350m)"),
        flag_field("final_norm", at<&Arch::final_norm>, "a norm after the last block"),
        flag_field("embed_norm", at<&Arch::embed_norm>, "a norm on the embeddings (BLOOM)"),
        flag_field("parallel_block", at<&Arch::parallel>,
                   "attention and MLP side by side in one residual sum (GPT-J, GPT-NeoX, Falcon)"),
        flag_field("qkv_bias", at<&Arch::qkv_bias>, "biases in the query, key and value projections"),
        flag_field("out_bias", at<&Arch::out_bias>, "a bias in the attention's output projection"),
        flag_field("mlp_bias", at<&Arch::mlp_bias>, "biases in the MLP"),
        flag_field("lm_head_bias", at<&Arch::head_bias>, "a bias in the language-model head"),
        flag_field("gated_mlp", at<&Arch::gated>, "a gated MLP (GLU: SwiGLU with silu, GeGLU with a GELU)"),
        flag_field("tie_word_embeddings", at<&Arch::tied>, "the LM head shares the token embedding's matrix"),
        text_field("hidden_act", Kind::Activation, at<&Arch::act>, {}, "the MLP's activation (Hugging Face names)"),
        real_field("hidden_dropout", Kind::Rate, at<&Arch::dropout>, 0, 0.999999, "probability",
                   "dropout on each branch's output"),
        real_field("attention_dropout", Kind::Rate, at<&Arch::attn_dropout>, 0, 0.999999, "probability",
                   "dropout on the attention probabilities"),
        real_field("embedding_dropout", Kind::Rate, at<&Arch::embed_dropout>, 0, 0.999999, "probability",
                   "dropout on the embeddings"),
    };
    for (Field& f : task_head_fields()) rows.push_back(std::move(f));
    return rows;
  }();
  return table;
}

/// The key of one plan entry's span.
const char* span_name(AttnSpan s) {
  switch (s) {
    case AttnSpan::Sliding: return "sliding";
    case AttnSpan::Chunked: return "chunked";
    case AttnSpan::Full: break;
  }
  return "full";
}

/// The default an absent plan entry key takes: a full-attention rotary dense layer of intermediate_size.
LayerPlan default_entry(const Arch& a) {
  LayerPlan p;
  p.inner = a.inner;
  return p;
}

/// One plan entry, only the keys that differ from default_entry.
Json entry_to_json(const Arch& a, const LayerPlan& p) {
  Json e = Json::object();
  if (p.linear) {
    e["attention"] = "linear";
  } else if (p.span != AttnSpan::Full) {
    e["attention"] = span_name(p.span);
    e["window"] = p.window;
  }
  if (!p.rope) e["rope"] = false;
  if (p.moe) e["moe"] = true;
  if (!p.moe && p.inner != a.inner) e["intermediate_size"] = p.inner;
  return e;
}

/// The keys of one plan entry.
const std::vector<std::string>& entry_keys() {
  static const std::vector<std::string> keys = {"attention", "window", "rope", "moe", "intermediate_size"};
  return keys;
}

/// Plan entry `where` of `j`.
LayerPlan entry_from_json(const Arch& a, const Json& e, const std::string& where) {
  require_object(e, where);
  reject_unknown_keys(e, where, entry_keys());
  LayerPlan p = default_entry(a);
  std::string span = get_enum(e, "attention", where, "full", {"full", "sliding", "chunked", "linear"});
  p.span = span == "sliding" ? AttnSpan::Sliding : span == "chunked" ? AttnSpan::Chunked : AttnSpan::Full;
  p.linear = span == "linear";
  if (p.linear && a.delta_key_heads < 1) {
    throw InputError(join(where, "attention"),
                     "a \"linear\" (Gated DeltaNet) layer needs linear_num_key_heads, linear_num_value_heads, "
                     "linear_key_head_dim and linear_value_head_dim of at least 1");
  }
  const bool windowed = p.span != AttnSpan::Full;
  if (windowed) {
    p.window = require_int(e, "window", where, 1, kMaxPositions);
  } else if (e.contains("window") && !e["window"].is_null()) {
    throw InputError(join(where, "window"),
                     "only for \"sliding\" or \"chunked\" attention; this layer is \"" + span + "\"");
  }
  p.rope = get_bool(e, "rope", where, true);
  p.moe = get_bool(e, "moe", where, false);
  if (p.moe && a.experts < 1) {
    throw InputError(join(where, "moe"),
                     "a routed layer needs num_experts of at least 1, got " + std::to_string(a.experts));
  }
  if (p.moe && e.contains("intermediate_size") && !e["intermediate_size"].is_null()) {
    throw InputError(join(where, "intermediate_size"),
                     "a routed layer (moe) has no dense MLP; its experts' width is moe_intermediate_size");
  }
  p.inner = p.moe ? 0 : get_int(e, "intermediate_size", where, a.inner, 1, kMaxInner);
  return p;
}

/// The per-layer plan `layers` of `j` into `a.plan` (absent or null: every layer alike, from the fields).
void read_plan(const Json& j, const std::string& path, Arch& a) {
  if (!j.contains("layers") || j["layers"].is_null()) return;
  const std::string where = join(path, "layers");
  const Json& list = require_array(j["layers"], where);
  if (static_cast<std::int64_t>(list.size()) != a.layers) {
    throw InputError(where, "has " + std::to_string(list.size()) + " entries; expected one per layer, " +
                                std::to_string(a.layers) + " (num_hidden_layers)");
  }
  for (std::size_t i = 0; i < list.size(); ++i) a.plan.push_back(entry_from_json(a, list[i], index(where, i)));
}

/// The checks between fields, each naming the field at fault.
void check_consistency(const Json& j, const std::string& path, const Arch& a) {
  check_heads(Cfg(j, path), a.hidden, a.heads, a.kv_heads, a.head_dim > 0, a.heads_field, a.kv_field);
  if (a.experts > 0 && a.top_k > a.experts) {
    throw InputError(join(path, "num_experts_per_tok"),
                     "is " + std::to_string(a.top_k) + ", above num_experts (" + std::to_string(a.experts) + ")");
  }
  if (a.swiglu_limit > 0 && !a.gated) {
    throw InputError(join(path, "swiglu_limit"), "clamps a gated MLP's gate and up; set gated_mlp: true");
  }
  if (a.delta_key_heads > 0 || a.delta_value_heads > 0) {
    if (a.delta_key_heads < 1 || a.delta_value_heads % a.delta_key_heads != 0) {
      throw InputError(join(path, "linear_num_value_heads"),
                       "must be a multiple of linear_num_key_heads (" + std::to_string(a.delta_key_heads) + ")");
    }
    for (const char* key : {"linear_key_head_dim", "linear_value_head_dim"}) {
      const std::int64_t v = std::string(key) == "linear_key_head_dim" ? a.delta_key_dim : a.delta_value_dim;
      if (v < 1) throw InputError(join(path, key), "Gated DeltaNet layers need at least 1");
    }
  }
  if (a.mla) {
    if (a.kv_lora_rank < 1) throw InputError(join(path, "kv_lora_rank"), "latent attention needs at least 1");
    if (a.v_head_dim < 1) throw InputError(join(path, "v_head_dim"), "latent attention needs at least 1");
    if (a.qk_nope_dim + a.qk_rope_dim <= 0) {
      throw InputError(join(path, "qk_nope_head_dim"), "qk_nope_head_dim + qk_rope_head_dim must be positive");
    }
  }
}

/// The decoder's extra keys: the plan, after the checks between fields.
void read_decoder_extra(const Json& j, const std::string& path, Arch& a) {
  check_consistency(j, path, a);
  read_plan(j, path, a);
}

/// The plan, only when layers differ.
void write_decoder_extra(const Arch& a, Json& j) {
  if (a.plan.empty()) return;
  Json plan = Json::array();
  for (const LayerPlan& p : a.plan) plan.push_back(entry_to_json(a, p));
  j["layers"] = plan;
}

std::vector<ArchFieldDoc> decoder_plan_docs() {
  return {{"attention", "string", "", "full", "full, sliding, chunked or linear (a Gated DeltaNet mixer)"},
          {"window", "integer", "tokens", "required when sliding or chunked", "the window or the chunk"},
          {"rope", "boolean", "", "true", "rotary positions in this layer (false: NoPE)"},
          {"moe", "boolean", "", "false", "routed experts instead of the dense MLP"},
          {"intermediate_size", "integer", "features", "intermediate_size", "the dense MLP's width (not with moe)"}};
}

/// build_decoder reads the task head from `architectures` before it runs build_decoder_arch.
void decoder_from_config(const Cfg& c, Arch& a, std::vector<std::string>& warnings) { a.head = read_head(c, warnings); }

}  // namespace

const Form& decoder_form() {
  static const Form form{"decoder",
                         "decoder-only transformers (GPT-2 to Qwen3, DeepSeek-V3, gpt-oss, Gemma 3's text model, "
                         "Qwen3-Next and Qwen3.5)",
                         decoder_fields,
                         {"layers"},
                         read_decoder_extra,
                         write_decoder_extra,
                         decoder_plan_docs,
                         build_decoder,
                         decoder_from_config,
                         build_decoder_arch,
                         false};
  return form;
}

}  // namespace prenet::hf::form
