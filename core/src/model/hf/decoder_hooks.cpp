#include "model/hf/decoder_hooks.hpp"

#include <algorithm>

namespace prenet::hf {

void ensure_plan(Arch& a) {
  if (!a.plan.empty()) return;
  LayerPlan p;
  p.inner = a.inner;
  a.plan.assign(static_cast<std::size_t>(a.layers), p);
}

namespace {

/// Layer i routes to the experts instead of its dense MLP.
void route(Arch& a, std::size_t i) {
  a.plan[i].moe = true;
  a.plan[i].inner = 0;
}

/// The array `key` of `c`, which must hold one entry per layer; nullptr when absent or null.
const Json* per_layer_array(const Cfg& c, const std::string& key, std::int64_t layers) {
  if (!c.has(key)) return nullptr;
  const Json& list = c.json()[key];
  if (!list.is_array()) throw InputError(c.field(key), "expected an array, got " + describe_type(list));
  if (static_cast<std::int64_t>(list.size()) != layers) {
    throw InputError(c.field(key),
                     "has " + std::to_string(list.size()) + " entries; num_hidden_layers is " + std::to_string(layers));
  }
  return &list;
}

/// Sets each layer's span from `layer_types` when the config gives it, else from `fallback` (one attention
/// type per layer): "full_attention", "sliding_attention" (a window of `window`, which must be set) and, where
/// `chunk` > 0, "chunked_attention".
void apply_layer_types(const Cfg& c, Arch& a, const std::vector<std::string>& fallback, std::int64_t window,
                       std::int64_t chunk = 0) {
  ensure_plan(a);
  const Json* given = per_layer_array(c, "layer_types", a.layers);
  for (std::size_t i = 0; i < a.plan.size(); ++i) {
    std::string type = fallback[i];
    const std::string where = index(c.field("layer_types"), i);
    if (given) {
      if (!(*given)[i].is_string()) throw InputError(where, "expected a string, got " + describe_type((*given)[i]));
      type = (*given)[i].get<std::string>();
    }
    LayerPlan& p = a.plan[i];
    if (type == "full_attention") {
      p.span = AttnSpan::Full;
      p.window = 0;
    } else if (type == "sliding_attention") {
      if (window <= 0) throw InputError(c.field("sliding_window"), "required by the sliding_attention layers");
      p.span = AttnSpan::Sliding;
      p.window = window;
    } else if (type == "chunked_attention" && chunk > 0) {
      p.span = AttnSpan::Chunked;
      p.window = chunk;
    } else {
      std::string known =
          chunk > 0 ? "full_attention, sliding_attention or chunked_attention" : "full_attention or sliding_attention";
      throw InputError(where, "unknown layer type \"" + printable(type) + "\"; expected " + known);
    }
  }
}

/// The sliding window `key` (null or absent: 0, none).
std::int64_t window_of(const Cfg& c, const char* key = "sliding_window") { return c.opt({key}, 0, 1, kMaxPositions); }

/// The list `key` of layer indices, each in [0, layers); empty when absent.
std::vector<std::int64_t> layer_indices(const Cfg& c, const std::string& key, std::int64_t layers) {
  std::vector<std::int64_t> out;
  if (!c.has(key)) return out;
  const Json& list = c.json()[key];
  if (!list.is_array()) throw InputError(c.field(key), "expected an array of layer indices");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = index(c.field(key), i);
    if (!list[i].is_number_integer() || list[i].get<std::int64_t>() < 0 || list[i].get<std::int64_t>() >= layers) {
      throw InputError(where, "must be a layer index in [0, " + std::to_string(layers) + ")");
    }
    out.push_back(list[i].get<std::int64_t>());
  }
  return out;
}

/// Whether `list` holds `i`.
bool holds(const std::vector<std::int64_t>& list, std::size_t i) {
  return std::find(list.begin(), list.end(), static_cast<std::int64_t>(i)) != list.end();
}

/// The number `key` in [min, max]: `fallback` when absent, `if_null` when explicitly null (a softcap of None).
double number(const Cfg& c, const std::string& key, double fallback, double min, double max, double if_null) {
  if (!c.json().contains(key)) return fallback;
  const Json& v = c.json()[key];
  if (v.is_null()) return if_null;
  if (!v.is_number() || !(v.get<double>() >= min && v.get<double>() <= max)) {
    throw InputError(c.field(key), "must be a number in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return v.get<double>();
}

/// A size field of a nested config object (DBRX's attn_config, ffn_config).
Cfg nested(const Cfg& c, const std::string& key) {
  static const Json kEmpty = Json::object();
  if (!c.has(key)) return Cfg(kEmpty, c.field(key));
  return Cfg(require_object(c.json()[key], c.field(key)), c.field(key));
}

/// Gemma's soft-capping: of the attention logits (a layer attribute) and of the LM head's output (a warning:
/// not costed); query_pre_attn_scalar only scales the scores. Defaults are the class's.
void read_softcaps(const Cfg& c, Arch& a, std::vector<std::string>& warnings, double attn_default,
                   double final_default) {
  a.softcap = number(c, "attn_logit_softcapping", attn_default, 0.0, 1e6, 0.0);
  double final_cap = number(c, "final_logit_softcapping", final_default, 0.0, 1e6, 0.0);
  number(c, "query_pre_attn_scalar", 256.0, 1e-6, 1e9, 256.0);
  if (final_cap > 0) {
    warnings.push_back("final_logit_softcapping (c * tanh(logits / c) on the LM head's output) is not costed");
  }
}

/// DeepSeek's MoE reading with the class's defaults: `first_dense` layers dense, `shared` shared experts.
void deepseek_moe(const Cfg& c, Arch& a, std::vector<std::string>& warnings, std::int64_t first_dense_default,
                  std::int64_t shared_default);

}  // namespace

void check_rope_scaling(const Cfg& c, Arch&, std::vector<std::string>&) {
  if (!c.has("rope_scaling")) return;
  const Json& rs = require_object(c.json()["rope_scaling"], c.field("rope_scaling"));
  Cfg r(rs, c.field("rope_scaling"));
  const std::string type_key = r.has("rope_type") ? "rope_type" : "type";
  std::string type = r.str(type_key, "default");
  static const std::vector<std::string> known = {"default", "linear", "dynamic", "yarn", "longrope", "llama3", "mrope"};
  if (std::find(known.begin(), known.end(), type) == known.end()) {
    throw InputError(r.field(type_key), "unknown rotary scaling \"" + printable(type) +
                                            "\"; expected default, linear, dynamic, yarn, longrope, llama3 or mrope");
  }
  if (r.has("factor")) get_number(rs, "factor", c.field("rope_scaling"), 1.0, 1e-6, 1e6);
}

void qwen_layer_windows(const Cfg& c, Arch& a, std::vector<std::string>&) {
  std::int64_t window = c.flag("use_sliding_window", false) ? c.opt({"sliding_window"}, 4096, 1, kMaxPositions) : 0;
  std::int64_t first = c.opt({"max_window_layers"}, 28, 0, kMaxDepth);
  std::vector<std::string> types;
  for (std::int64_t i = 0; i < a.layers; ++i) {
    types.push_back(window > 0 && i >= first ? "sliding_attention" : "full_attention");
  }
  apply_layer_types(c, a, types, window);
}

void qwen_all_windows(const Cfg& c, Arch& a, std::vector<std::string>&) {
  std::int64_t window = c.flag("use_sliding_window", false) ? c.opt({"sliding_window"}, 4096, 1, kMaxPositions) : 0;
  apply_layer_types(
      c, a,
      std::vector<std::string>(static_cast<std::size_t>(a.layers), window > 0 ? "sliding_attention" : "full_attention"),
      window);
}

void cohere_qk_norm(const Cfg& c, Arch& a, std::vector<std::string>&) {
  if (c.flag("use_qk_norm", false)) a.qk_norm = "full";
}

void llama4_qk_norm(const Cfg& c, Arch& a, std::vector<std::string>&) {
  if (c.flag("use_qk_norm", true)) a.qk_norm = "head_weightless";
  a.qk_norm_rope_only = true;
}

void qwen_moe_layers(const Cfg& c, Arch& a, std::vector<std::string>&) {
  ensure_plan(a);
  std::int64_t step = c.opt({"decoder_sparse_step"}, 1, 1, kMaxDepth);
  std::vector<std::int64_t> dense = layer_indices(c, "mlp_only_layers", a.layers);
  for (std::size_t i = 0; i < a.plan.size(); ++i) {
    if (a.experts > 0 && !holds(dense, i) && (static_cast<std::int64_t>(i) + 1) % step == 0) route(a, i);
  }
}

void alternating_windows(const Cfg& c, Arch& a, std::vector<std::string>&) {
  std::vector<std::string> types;
  for (std::int64_t i = 0; i < a.layers; ++i) types.push_back((i + 1) % 2 ? "sliding_attention" : "full_attention");
  apply_layer_types(c, a, types, window_of(c));
}

void gemma3_windows(const Cfg& c, Arch& a, std::vector<std::string>&) {
  std::int64_t pattern = c.opt({"sliding_window_pattern"}, 6, 1, kMaxDepth);
  std::vector<std::string> types;
  for (std::int64_t i = 0; i < a.layers; ++i) {
    types.push_back((i + 1) % pattern ? "sliding_attention" : "full_attention");
  }
  apply_layer_types(c, a, types, c.opt({"sliding_window"}, 4096, 1, kMaxPositions));
}

void all_moe_layers(const Cfg&, Arch& a, std::vector<std::string>&) {
  ensure_plan(a);
  for (std::size_t i = 0; i < a.plan.size(); ++i) route(a, i);
}

void gpt_oss_activation(const Cfg& c, Arch& a, std::vector<std::string>&) {
  // GptOssExperts (modeling_gpt_oss.py) computes (clamp(up, -limit, limit) + 1) * gate * sigmoid(1.702 * gate),
  // gate clamped at most limit, whatever hidden_act says: quick_gelu's 1.702 (Megatron-Bridge's GPTOSSProvider
  // likewise: activation_func quick_gelu, glu_linear_offset 1, activation_func_clamp_value 7).
  a.act = "quick_gelu";
  a.swiglu_limit = number(c, "swiglu_limit", 7.0, 0.0, 1e6, 7.0);
  if (!(a.swiglu_limit > 0)) throw InputError(c.field("swiglu_limit"), "must be above 0 (the experts clamp at it)");
}

void gemma2_softcaps(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  read_softcaps(c, a, warnings, 50.0, 30.0);
}

void gemma3_softcaps(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  read_softcaps(c, a, warnings, 0.0, 0.0);
}

void deepseek_latent_attention(const Cfg& c, Arch& a, std::vector<std::string>&) {
  a.mla = true;
  // q_lora_rank null: one q_proj matrix instead of the low-rank pair (DeepSeek-V2-Lite).
  const bool direct_q = c.json().contains("q_lora_rank") && c.json()["q_lora_rank"].is_null();
  a.q_lora_rank = direct_q ? 0 : c.opt({"q_lora_rank"}, 1536, 1, kMaxWidth);
  a.kv_lora_rank = c.opt({"kv_lora_rank"}, 512, 1, kMaxWidth);
  a.qk_nope_dim = c.opt({"qk_nope_head_dim"}, 128, 0, kMaxWidth);
  a.qk_rope_dim = c.opt({"qk_rope_head_dim"}, 64, 0, kMaxWidth);
  a.v_head_dim = c.opt({"v_head_dim"}, 128, 1, kMaxWidth);
  if (a.qk_nope_dim + a.qk_rope_dim <= 0) {
    throw InputError(c.field("qk_nope_head_dim"), "qk_nope_head_dim + qk_rope_head_dim must be positive");
  }
}

void deepseek_v2_moe_layers(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  deepseek_moe(c, a, warnings, 0, 0);
}

void deepseek_v3_moe_layers(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  deepseek_moe(c, a, warnings, 3, 1);
}

namespace {

void deepseek_moe(const Cfg& c, Arch& a, std::vector<std::string>& warnings, std::int64_t first_dense_default,
                  std::int64_t shared_default) {
  ensure_plan(a);
  std::int64_t first_dense = c.opt({"first_k_dense_replace"}, first_dense_default, 0, kMaxDepth);
  if (first_dense > a.layers) {
    throw InputError(c.field("first_k_dense_replace"),
                     "is " + std::to_string(first_dense) + ", above num_hidden_layers " + std::to_string(a.layers));
  }
  a.shared_inner = a.moe_inner * c.opt({"n_shared_experts"}, shared_default, 0, 1 << 16);
  // transformers routes every layer from first_k_dense_replace on; the original code's moe_layer_freq is
  // not read by it, so a config that relies on it is built as transformers builds it, with a warning.
  if (c.opt({"moe_layer_freq"}, 1, 1, kMaxDepth) != 1) {
    warnings.push_back(
        "moe_layer_freq is not read by transformers' DeepSeek classes: every layer from "
        "first_k_dense_replace on is built with experts");
  }
  // Group-limited routing (topk_method, n_group, topk_group) chooses which experts run, not how many: no
  // parameters, the same FLOPs. Checked for consistency only.
  if (c.has("n_group") && c.has("topk_group")) {
    std::int64_t groups = c.opt({"n_group"}, 1, 1, 1 << 16);
    c.opt({"topk_group"}, 1, 1, groups);
    if (a.experts % groups != 0) {
      throw InputError(c.field("n_group"), "must divide n_routed_experts (" + std::to_string(a.experts) + ")");
    }
  }
  std::int64_t mtp = c.opt({"num_nextn_predict_layers"}, 0, 0, kMaxDepth);
  if (mtp > 0) {
    warnings.push_back("num_nextn_predict_layers " + std::to_string(mtp) +
                       ": transformers builds no multi-token-prediction layer, so neither its parameters nor its "
                       "training work are counted");
  }
  for (std::size_t i = static_cast<std::size_t>(first_dense); i < a.plan.size(); ++i) route(a, i);
}

}  // namespace

void llama4_layers(const Cfg& c, Arch& a, std::vector<std::string>&) {
  ensure_plan(a);
  std::int64_t dense_inner = c.opt({"intermediate_size_mlp"}, 16384, 1, kMaxInner);
  std::int64_t chunk = c.opt({"attention_chunk_size"}, 8192, 1, kMaxPositions);
  // An empty no_rope_layers means the default, as Llama4TextConfig reads it.
  const bool listed =
      c.has("no_rope_layers") && !(c.json()["no_rope_layers"].is_array() && c.json()["no_rope_layers"].empty());
  const Json* rope = listed ? per_layer_array(c, "no_rope_layers", a.layers) : nullptr;
  std::int64_t interval = c.opt({"no_rope_layer_interval"}, 4, 1, kMaxDepth);
  std::vector<std::string> types;
  for (std::size_t i = 0; i < a.plan.size(); ++i) {
    bool uses_rope = (static_cast<std::int64_t>(i) + 1) % interval != 0;
    if (rope) {
      const Json& v = (*rope)[i];
      if (!v.is_number_integer() && !v.is_boolean())
        throw InputError(index(c.field("no_rope_layers"), i), "expected 0 or 1");
      uses_rope = v.is_boolean() ? v.get<bool>() : v.get<std::int64_t>() != 0;
    }
    a.plan[i].rope = uses_rope;
    // attention_chunk_size null: no chunking (its default is 8192).
    const bool chunked = !(c.json().contains("attention_chunk_size") && c.json()["attention_chunk_size"].is_null());
    types.push_back(uses_rope && chunked ? "chunked_attention" : "full_attention");
  }
  apply_layer_types(c, a, types, 0, chunk);
  std::int64_t step = c.opt({"interleave_moe_layer_step"}, 1, 1, kMaxDepth);
  std::vector<std::int64_t> moe = layer_indices(c, "moe_layers", a.layers);
  for (std::size_t i = 0; i < a.plan.size(); ++i) {
    bool routed = c.has("moe_layers") ? holds(moe, i) : (static_cast<std::int64_t>(i) + 1) % step == 0;
    if (routed) {
      route(a, i);
    } else {
      a.plan[i].inner = dense_inner;
    }
  }
}

void mistral_window(const Cfg& c, Arch& a, std::vector<std::string>&) {
  // MistralConfig's default is 4096; an explicit null means full attention.
  a.window = c.json().contains("sliding_window") ? window_of(c) : 4096;
}

void optional_window(const Cfg& c, Arch& a, std::vector<std::string>&) { a.window = window_of(c); }

void dbrx_nested(const Cfg& c, Arch& a, std::vector<std::string>&) {
  Cfg attn = nested(c, "attn_config");
  Cfg ffn = nested(c, "ffn_config");
  a.kv_heads = attn.opt({"kv_n_heads"}, 1, 1, a.heads);
  a.kv_field = "attn_config.kv_n_heads";
  a.inner = ffn.opt({"ffn_hidden_size"}, 3584, 1, kMaxInner);
  a.experts = ffn.opt({"moe_num_experts"}, 4, 1, 1 << 16);
  a.top_k = ffn.opt({"moe_top_k"}, 1, 1, a.experts);
  a.act = "silu";
  if (ffn.has("ffn_act_fn")) {
    const Json& fn = require_object(ffn.json()["ffn_act_fn"], ffn.field("ffn_act_fn"));
    a.act = activation(get_string(fn, "name", ffn.field("ffn_act_fn"), "silu"), join(ffn.field("ffn_act_fn"), "name"));
  }
}

// ---- shared with types_recent.cpp -----------------------------------------------------------------------

void read_layer_types(const Cfg& c, Arch& a, const std::vector<std::string>& fallback, std::int64_t window) {
  apply_layer_types(c, a, fallback, window);
}

void glm4_moe_layers(const Cfg& c, Arch& a, std::vector<std::string>& warnings) { deepseek_moe(c, a, warnings, 1, 1); }

void ernie_moe_layers(const Cfg& c, Arch& a, std::vector<std::string>&) {
  ensure_plan(a);
  const std::int64_t start = c.opt({"moe_layer_start_index"}, 1, 0, kMaxDepth);
  std::int64_t end = c.opt({"moe_layer_end_index"}, -1, -1, kMaxDepth);
  if (end == -1) end = a.layers - 1;  // Ernie4_5_MoeConfig: -1 (and absent) is the last layer
  const std::int64_t interval = c.opt({"moe_layer_interval"}, 1, 1, kMaxDepth);
  a.shared_inner = a.moe_inner * c.opt({"moe_num_shared_experts"}, 2, 0, 1 << 16);
  for (std::int64_t i = 0; i < a.layers; ++i) {
    if ((i + 1) % interval == 0 && i >= start && i <= end) route(a, static_cast<std::size_t>(i));
  }
}

}  // namespace prenet::hf
