// The architecture form: one table of fields (key, the Arch member it holds, bounds, default, unit, doc) from
// which arch_to_json writes, arch_from_json reads and the docs' field list is made, so the three cannot drift.
#include "model/hf/arch_json.hpp"

#include <algorithm>
#include <sstream>

#include "model/hf/builders.hpp"
#include "model/hf/config_reader.hpp"
#include "model/hf/steps.hpp"

namespace prenet::hf {
namespace {

using SizeRef = std::int64_t& (*)(Arch&);
using FlagRef = bool& (*)(Arch&);
using RealRef = double& (*)(Arch&);
using TextRef = std::string& (*)(Arch&);

/// The member `M` of an Arch, as the table's accessors reach it.
template <auto M>
auto& at(Arch& a) {
  return a.*M;
}

enum class Kind { Size, Flag, Rate, Number, Text, Activation, TaskHead, LabelDropout };

/// One row of the table. The accessor of the row's kind is set; sizes use the Amounts (a constant, or a
/// quantity read before, as the HF steps do), numbers `lo`/`hi`, texts `choices`.
struct Field {
  const char* key = "";
  Kind kind = Kind::Size;
  const char* unit = "";
  const char* doc = "";
  SizeRef size = nullptr;
  FlagRef flag = nullptr;
  RealRef real = nullptr;
  TextRef text = nullptr;
  bool required = false;
  Amount fallback, min, max;
  double lo = 0, hi = 0;
  std::vector<std::string> choices = {};
  const char* fallback_doc = nullptr;  // the default in words where it is not the Arch's own
};

/// A row of `kind`, its accessor and bounds still unset.
Field make(const char* key, Kind kind, const char* unit, const char* doc) {
  Field f;
  f.key = key;
  f.kind = kind;
  f.unit = unit;
  f.doc = doc;
  return f;
}

Field size_field(const char* key, SizeRef ref, Amount fallback, Amount min, Amount max, const char* unit,
                 const char* doc, const char* fallback_doc = nullptr) {
  Field f = make(key, Kind::Size, unit, doc);
  f.size = ref;
  f.fallback = fallback;
  f.min = min;
  f.max = max;
  f.fallback_doc = fallback_doc;
  return f;
}

Field required_size(const char* key, SizeRef ref, Amount max, const char* unit, const char* doc) {
  Field f = size_field(key, ref, 0, 1, max, unit, doc, "required");
  f.required = true;
  return f;
}

Field flag_field(const char* key, FlagRef ref, const char* doc) {
  Field f = make(key, Kind::Flag, "", doc);
  f.flag = ref;
  return f;
}

Field real_field(const char* key, Kind kind, RealRef ref, double lo, double hi, const char* unit, const char* doc) {
  Field f = make(key, kind, unit, doc);
  f.real = ref;
  f.lo = lo;
  f.hi = hi;
  return f;
}

Field text_field(const char* key, Kind kind, TextRef ref, std::vector<std::string> choices, const char* doc) {
  Field f = make(key, kind, "", doc);
  f.text = ref;
  f.choices = std::move(choices);
  return f;
}

std::int64_t& head_labels(Arch& a) { return a.head.labels; }
double& head_dropout(Arch& a) { return a.head.dropout; }

/// The task heads by name, in the Head enum's order.
const std::vector<std::string>& head_names() {
  static const std::vector<std::string> names = {"language_model", "sequence_classification", "token_classification",
                                                 "question_answering", "none"};
  return names;
}

/// The fields, in reading order (a default or bound may name a field read before it).
const std::vector<Field>& fields() {
  static const std::vector<Field> table = {
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
      flag_field("qk_norm_rope_only", at<&Arch::qk_norm_rope_only>, "QK-norm only in the layers with rotary positions"),
      flag_field("attention_sinks", at<&Arch::sinks>, "a learned sink logit per head (gpt-oss)"),
      real_field("attn_logit_softcapping", Kind::Number, at<&Arch::softcap>, 0, 1e6, "",
                 "attention logits soft-capped at c · tanh(x / c); 0: none"),
      flag_field("learned_positions", at<&Arch::learned_positions>,
                 "a learned position table; false: rotary, ALiBi or none (no parameters)"),
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
      text_field("task_head", Kind::TaskHead, nullptr, head_names(),
                 "what sits on the last block, as Hugging Face's class suffix names it"),
      size_field("num_labels", head_labels, 2, 1, kMaxVocab, "classes", "the classes of a classification head"),
      real_field("classifier_dropout", Kind::LabelDropout, head_dropout, 0, 0.999999, "probability",
                 "dropout before a token-classification head; null: hidden_dropout"),
  };
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

/// `f`'s value in `a` as JSON.
Json value_of(const Field& f, Arch& a) {
  switch (f.kind) {
    case Kind::Size: return f.size(a);
    case Kind::Flag: return f.flag(a);
    case Kind::Rate:
    case Kind::Number: return f.real(a);
    case Kind::LabelDropout: return f.real(a) < 0 ? Json(nullptr) : Json(f.real(a));
    case Kind::Text:
    case Kind::Activation: return f.text(a);
    case Kind::TaskHead: return head_names()[static_cast<std::size_t>(a.head.head)];
  }
  return nullptr;
}

/// Reads `f` from `j` into `a` (absent or null: its default), checking its type and bounds.
void read_field(const Field& f, const Json& j, const std::string& path, Arch& a) {
  const bool given = j.contains(f.key) && !j[f.key].is_null();
  switch (f.kind) {
    case Kind::Size:
      if (f.required && !given) throw InputError(join(path, f.key), "required field is missing");
      f.size(a) = get_int(j, f.key, path, f.fallback.in(a), f.min.in(a), f.max.in(a));
      break;
    case Kind::Flag: f.flag(a) = get_bool(j, f.key, path, f.flag(a)); break;
    case Kind::Rate:
    case Kind::Number: f.real(a) = get_number(j, f.key, path, f.real(a), f.lo, f.hi); break;
    case Kind::LabelDropout: f.real(a) = given ? get_number(j, f.key, path, 0, f.lo, f.hi) : -1.0; break;
    case Kind::Text:
      f.text(a) =
          f.choices.empty() ? get_string(j, f.key, path, f.text(a)) : get_enum(j, f.key, path, f.text(a), f.choices);
      break;
    case Kind::Activation:
      if (given) f.text(a) = activation(get_string(j, f.key, path, f.text(a)), join(path, f.key));
      break;
    case Kind::TaskHead: {
      std::string name = get_enum(j, f.key, path, head_names().front(), f.choices);
      a.head.head = static_cast<Head>(std::find(f.choices.begin(), f.choices.end(), name) - f.choices.begin());
      break;
    }
  }
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
  if (p.span != AttnSpan::Full) {
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
  std::string span = get_enum(e, "attention", where, "full", {"full", "sliding", "chunked"});
  p.span = span == "sliding" ? AttnSpan::Sliding : span == "chunked" ? AttnSpan::Chunked : AttnSpan::Full;
  const bool windowed = p.span != AttnSpan::Full;
  if (windowed) {
    p.window = require_int(e, "window", where, 1, kMaxPositions);
  } else if (e.contains("window") && !e["window"].is_null()) {
    throw InputError(join(where, "window"), "only for \"sliding\" or \"chunked\" attention; this layer is \"full\"");
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
  if (a.mla) {
    if (a.kv_lora_rank < 1) throw InputError(join(path, "kv_lora_rank"), "latent attention needs at least 1");
    if (a.v_head_dim < 1) throw InputError(join(path, "v_head_dim"), "latent attention needs at least 1");
    if (a.qk_nope_dim + a.qk_rope_dim <= 0) {
      throw InputError(join(path, "qk_nope_head_dim"), "qk_nope_head_dim + qk_rope_head_dim must be positive");
    }
  }
}

/// Every key of the form: the family, the table's fields, the plan.
std::vector<std::string> known_keys() {
  std::vector<std::string> keys = {"family"};
  for (const Field& f : fields()) keys.emplace_back(f.key);
  keys.emplace_back("layers");
  return keys;
}

/// `f`'s default in words for the docs.
std::string fallback_words(const Field& f) {
  if (f.fallback_doc) return f.fallback_doc;
  Arch defaults;
  defaults.name = "architecture";
  Json v = value_of(f, defaults);
  if (f.kind == Kind::Size) v = f.fallback.in(defaults);
  std::ostringstream out;
  out << (v.is_string() ? v.get<std::string>() : v.dump());
  return out.str();
}

const char* type_word(Kind k) {
  switch (k) {
    case Kind::Size: return "integer";
    case Kind::Flag: return "boolean";
    case Kind::Rate:
    case Kind::Number: return "number";
    case Kind::LabelDropout: return "number or null";
    case Kind::Text:
    case Kind::Activation:
    case Kind::TaskHead: break;
  }
  return "string";
}

}  // namespace

std::vector<ArchFieldDoc> arch_field_docs() {
  std::vector<ArchFieldDoc> out = {{"family", "string", "", "decoder", "the builder; only \"decoder\" is built"}};
  for (const Field& f : fields()) {
    std::string doc = f.doc;
    if (!f.choices.empty()) {
      std::string list;
      for (const auto& c : f.choices) list += (list.empty() ? "" : ", ") + c;
      doc += " (" + list + ")";
    }
    out.push_back({f.key, type_word(f.kind), f.unit, fallback_words(f), doc});
  }
  out.push_back({"layers", "array", "", "absent", "the per-layer plan, one entry per layer (below)"});
  return out;
}

std::vector<ArchFieldDoc> arch_layer_field_docs() {
  return {{"attention", "string", "", "full", "full, sliding or chunked"},
          {"window", "integer", "tokens", "required when sliding or chunked", "the window or the chunk"},
          {"rope", "boolean", "", "true", "rotary positions in this layer (false: NoPE)"},
          {"moe", "boolean", "", "false", "routed experts instead of the dense MLP"},
          {"intermediate_size", "integer", "features", "intermediate_size", "the dense MLP's width (not with moe)"}};
}

Json arch_to_json(const Arch& a) {
  Arch copy = a;  // the accessors reach members through a mutable Arch; this one is only read
  Json j = {{"family", "decoder"}};
  for (const Field& f : fields()) j[f.key] = value_of(f, copy);
  if (!a.plan.empty()) {
    Json plan = Json::array();
    for (const LayerPlan& p : a.plan) plan.push_back(entry_to_json(a, p));
    j["layers"] = plan;
  }
  return j;
}

Arch arch_from_json(const Json& j, const std::string& path) {
  require_object(j, path);
  if (j.contains("model_type")) {
    throw InputError(join(path, "model_type"),
                     "a Hugging Face config.json is given as model.hf_config; an architecture names its fields as "
                     "the response's model.architecture does (docs/MODEL_FORMAT.md, \"Architecture form\")");
  }
  reject_unknown_keys(j, path, known_keys());
  std::string family = get_string(j, "family", path, "decoder");
  if (family != "decoder") {
    throw InputError(join(path, "family"),
                     "\"" + printable(family) +
                         "\" cannot be built from an architecture (its builder reads the Hugging Face config "
                         "itself); supported: decoder. Give encoder, encoder-decoder, vision, state-space and "
                         "multimodal models as model.hf_config");
  }
  Arch a;
  a.name = "architecture";
  for (const Field& f : fields()) read_field(f, j, path, a);
  check_consistency(j, path, a);
  read_plan(j, path, a);
  return a;
}

Json architecture_to_layers(const Json& j, const std::string& path, std::int64_t seq_len,
                            std::vector<std::string>& warnings) {
  Arch a = arch_from_json(j, path);
  if (seq_len <= 0) seq_len = rotary_default_seq(a, false);
  return build_decoder_arch(Cfg(j, path), a, {seq_len, 0}, warnings);
}

std::string architecture_seq_source(const Json& j, std::int64_t seq_len) {
  return trained_positions_source("architecture", "model.architecture.max_position_embeddings",
                                  arch_from_json(j, "model.architecture").max_positions, seq_len);
}

}  // namespace prenet::hf
