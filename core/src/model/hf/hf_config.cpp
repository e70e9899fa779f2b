#include "prenet/hf_config.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "prenet/network.hpp"

namespace prenet {
namespace {

constexpr std::int64_t kMaxWidth = std::int64_t{1} << 20;
constexpr std::int64_t kMaxDepth = 10000;
constexpr std::int64_t kMaxVocab = kMaxWidth * 16;

std::string or_list(const std::vector<std::string>& keys) {
  std::string names;
  for (const auto& key : keys) names += (names.empty() ? "" : " or ") + key;
  return names;
}

/// Typed reads from a config object; every error names `path.key`.
class Cfg {
 public:
  Cfg(const Json& json, std::string path) : json_(json), path_(std::move(path)) {}

  const Json& json() const { return json_; }
  const std::string& path() const { return path_; }
  std::string field(const std::string& key) const { return join(path_, key); }

  bool has(const std::string& key) const {
    auto it = json_.find(key);
    return it != json_.end() && !it->is_null();
  }
  /// The first of `keys` that is present, or "" when none is.
  std::string present(const std::vector<std::string>& keys) const {
    for (const auto& key : keys) {
      if (has(key)) return key;
    }
    return "";
  }
  /// A required size: the first present of `keys`, else an error naming the first key and all spellings.
  std::int64_t req(const std::vector<std::string>& keys, std::int64_t min, std::int64_t max) const {
    std::string key = present(keys);
    if (key.empty()) throw InputError(field(keys.front()), "required field is missing (" + or_list(keys) + ")");
    return get_int(json_, key, path_, 0, min, max);
  }
  std::int64_t opt(const std::vector<std::string>& keys, std::int64_t fallback, std::int64_t min,
                   std::int64_t max) const {
    std::string key = present(keys);
    return key.empty() ? fallback : get_int(json_, key, path_, fallback, min, max);
  }
  double rate(const std::vector<std::string>& keys, double fallback) const {
    std::string key = present(keys);
    return key.empty() ? fallback : get_number(json_, key, path_, fallback, 0.0, 0.999999);
  }
  bool flag(const std::string& key, bool fallback) const { return get_bool(json_, key, path_, fallback); }
  std::string str(const std::string& key, const std::string& fallback) const {
    return get_string(json_, key, path_, fallback);
  }
  /// An activation name from the first present of `keys`, mapped onto the layer list's names.
  std::string act(const std::vector<std::string>& keys, const std::string& fallback) const {
    std::string key = present(keys);
    if (key.empty()) return fallback;
    std::string fn = get_string(json_, key, path_, fallback);
    return activation(fn, field(key));
  }

  static std::string activation(const std::string& fn, const std::string& where) {
    static const std::map<std::string, std::string> known = {{"gelu", "gelu"},
                                                             {"gelu_new", "gelu_new"},
                                                             {"gelu_fast", "gelu_fast"},
                                                             {"gelu_pytorch_tanh", "gelu_pytorch_tanh"},
                                                             {"quick_gelu", "quick_gelu"},
                                                             {"relu", "relu"},
                                                             {"silu", "silu"},
                                                             {"swish", "swish"},
                                                             {"tanh", "tanh"},
                                                             {"sigmoid", "sigmoid"},
                                                             {"gelu_accurate", "gelu_new"},
                                                             {"gelu_python", "gelu"},
                                                             {"gelu_10", "gelu"},
                                                             {"relu2", "relu"},
                                                             {"relu6", "relu6"},
                                                             {"leaky_relu", "leaky_relu"},
                                                             {"mish", "mish"},
                                                             {"linear", "linear"}};
    auto it = known.find(fn);
    if (it == known.end()) throw InputError(where, "unsupported activation \"" + printable(fn) + "\"");
    return it->second;
  }

 private:
  const Json& json_;
  std::string path_;
};

Json dropout(const std::string& name, double rate) { return {{"type", "dropout"}, {"name", name}, {"rate", rate}}; }

/// A layer list under construction; remembers the name of the last layer appended.
struct Seq {
  Json layers = Json::array();
  std::string push(Json layer) {
    std::string name = layer["name"].get<std::string>();
    layers.push_back(std::move(layer));
    return name;
  }
  /// Appends the selection of one token (a class token, the last token) of a [S, width] stream read from
  /// `input` ("": the previous layer), costed as a pooling over the tokens (one read of the sequence).
  void select_token(const std::string& view, const std::string& name, std::int64_t width,
                    const std::string& input = "") {
    Json reshape = {{"type", "reshape"}, {"name", view}, {"shape", {width, -1}}};
    if (!input.empty()) reshape["inputs"] = {input};
    push(reshape);
    push({{"type", "global_avg_pool"}, {"name", name}});
  }
  /// Appends a dropout after the previous layer when the rate is positive; returns the stream's name.
  std::string maybe_dropout(const std::string& name, const std::string& current, double rate) {
    if (rate <= 0) return current;
    Json d = dropout(name, rate);
    d["inputs"] = {current};
    return push(d);
  }
};

/// The task head on top of the network: Hugging Face builds the class named in `architectures`.
enum class Head { LanguageModel, SequenceClassification, TokenClassification, QuestionAnswering, None };

struct HeadChoice {
  Head head = Head::LanguageModel;
  std::int64_t labels = 2;  // classes of a classification head (Hugging Face's default num_labels)
  double dropout = -1;      // classifier_dropout when the config gives it (< 0: the family's default)
};

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The head named by `architectures[0]` (e.g. "BertForSequenceClassification"); the language-model head
/// when the config names none, with a warning when it names a head this parser does not know.
HeadChoice read_head(const Cfg& c, std::vector<std::string>& warnings) {
  HeadChoice h;
  if (!c.has("architectures")) return h;
  const Json& names = c.json()["architectures"];
  if (!names.is_array() || (!names.empty() && !names[0].is_string())) {
    throw InputError(c.field("architectures"), "expected an array of class names, e.g. [\"BertForMaskedLM\"]");
  }
  if (names.empty()) return h;
  const std::string name = names[0].get<std::string>();
  static const std::vector<std::pair<std::string, Head>> suffixes = {
      {"ForSequenceClassification", Head::SequenceClassification},
      {"ForTokenClassification", Head::TokenClassification},
      {"ForQuestionAnswering", Head::QuestionAnswering},
      {"ForMaskedLM", Head::LanguageModel},
      {"ForPreTraining", Head::LanguageModel},
      {"ForCausalLM", Head::LanguageModel},
      {"LMHeadModel", Head::LanguageModel},
      {"WithLMHead", Head::LanguageModel},
      {"ForConditionalGeneration", Head::LanguageModel},
      {"Model", Head::None}};
  auto known = std::find_if(suffixes.begin(), suffixes.end(), [&](const auto& s) { return ends_with(name, s.first); });
  if (known == suffixes.end()) {
    warnings.push_back("architectures[0] \"" + printable(name) +
                       "\" names a head this calculator does not know; the language-model head is assumed");
    return h;
  }
  h.head = known->second;
  if (c.has("num_labels")) {
    h.labels = c.opt({"num_labels"}, 2, 1, kMaxVocab);
  } else if (c.has("id2label") && c.json()["id2label"].is_object() && !c.json()["id2label"].empty()) {
    h.labels = static_cast<std::int64_t>(c.json()["id2label"].size());
  }
  if (c.has("classifier_dropout")) h.dropout = c.rate({"classifier_dropout"}, 0.0);
  return h;
}

/// Appends a per-token head (token classification: `labels` classes after a dropout; question answering:
/// start and end logits) reading the previous layer, and its loss.
void token_head(Seq& s, const HeadChoice& h, double rate) {
  bool qa = h.head == Head::QuestionAnswering;
  if (!qa && rate > 0) s.push(dropout("classifier_dropout", rate));
  s.push({{"type", "dense"}, {"name", qa ? "qa_outputs" : "classifier"}, {"units", qa ? 2 : h.labels}});
  s.push({{"type", "cross_entropy"}, {"name", "loss"}});
}

/// The shape of a decoder-only transformer, covering GPT-2, GPT-NeoX, GPT-J, OPT, Llama and relatives.
struct Decoder {
  std::int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, inner = 0, vocab = 0;
  std::int64_t positions = 0;        // learned position rows (0: rotary, ALiBi or none)
  std::int64_t position_offset = 0;  // OPT keeps two extra position rows
  std::int64_t embed_dim = 0;        // OPT's word_embed_proj_dim (0: hidden)
  bool rms = false, norm_bias = true;
  bool qkv_bias = true, out_bias = true, mlp_bias = true, head_bias = false;
  bool gated = false, parallel = false, post_norm = false, final_norm = true, tied = true;
  int parallel_norms = 1;
  std::string act = "gelu_new";
  std::int64_t experts = 1, top_k = 1;
  double dropout = 0, attn_dropout = 0, embed_dropout = 0;
};

Json norm(const Decoder& dm, const std::string& name, const std::string& input) {
  Json n = {{"type", dm.rms ? "rmsnorm" : "layernorm"}, {"name", name}, {"inputs", {input}}};
  if (!dm.rms && !dm.norm_bias) n["bias"] = false;
  return n;
}

/// Appends the feed-forward part reading `input`; returns the name of its output.
std::string mlp(const Decoder& dm, Seq& s, const std::string& input) {
  if (dm.experts > 1) {
    // Mixtral: a router picks top_k of the experts for every token; each expert is a SwiGLU MLP.
    s.push({{"type", "dense"}, {"name", "router"}, {"units", dm.experts}, {"bias", false}, {"inputs", {input}}});
    s.push({{"type", "dense"},
            {"name", "experts_up"},
            {"units", dm.inner},
            {"activation", dm.act},
            {"gated", dm.gated},
            {"bias", dm.mlp_bias},
            {"experts", dm.experts},
            {"top_k", dm.top_k},
            {"inputs", {input}}});
    return s.push({{"type", "dense"},
                   {"name", "experts_down"},
                   {"units", dm.hidden},
                   {"bias", dm.mlp_bias},
                   {"experts", dm.experts},
                   {"top_k", dm.top_k}});
  }
  Json up = {{"type", "dense"},      {"name", "mlp_up"},    {"units", dm.inner},
             {"activation", dm.act}, {"bias", dm.mlp_bias}, {"inputs", {input}}};
  if (dm.gated) up["gated"] = true;
  s.push(up);
  return s.push({{"type", "dense"}, {"name", "mlp_down"}, {"units", dm.hidden}, {"bias", dm.mlp_bias}});
}

Json attention(const Decoder& dm, const std::string& name, const std::string& input) {
  Json a = {{"type", "attention"}, {"name", name},        {"num_heads", dm.heads},   {"num_kv_heads", dm.kv_heads},
            {"causal", true},      {"bias", dm.qkv_bias}, {"out_bias", dm.out_bias}, {"inputs", {input}}};
  if (dm.head_dim > 0) a["head_dim"] = dm.head_dim;
  if (dm.attn_dropout > 0) a["dropout"] = dm.attn_dropout;
  return a;
}

Json decoder_layers(const Decoder& dm, const HeadChoice& h) {
  Seq block;
  const std::string x = "stream";
  if (dm.post_norm) {
    std::string a = block.push(attention(dm, "attn", x));
    a = block.maybe_dropout("attn_dropout", a, dm.dropout);
    block.push({{"type", "add"}, {"name", "attn_residual"}, {"inputs", {x, a}}});
    std::string n1 = block.push(norm(dm, "ln_1", "attn_residual"));
    std::string out = block.maybe_dropout("mlp_dropout", mlp(dm, block, n1), dm.dropout);
    block.push({{"type", "add"}, {"name", "mlp_residual"}, {"inputs", {n1, out}}});
    block.push(norm(dm, "stream", "mlp_residual"));
  } else {
    std::string ln1 = block.push(norm(dm, "ln_1", x));
    std::string a = block.maybe_dropout("attn_dropout", block.push(attention(dm, "attn", ln1)), dm.dropout);
    if (dm.parallel) {
      // GPT-J, GPT-NeoX, Phi, Falcon: attention and MLP both read the block input; one residual sum.
      std::string mlp_in = dm.parallel_norms == 2 ? block.push(norm(dm, "ln_2", x)) : ln1;
      std::string out = block.maybe_dropout("mlp_dropout", mlp(dm, block, mlp_in), dm.dropout);
      block.push({{"type", "add"}, {"name", "stream"}, {"inputs", {x, a, out}}});
    } else {
      std::string r = block.push({{"type", "add"}, {"name", "attn_residual"}, {"inputs", {x, a}}});
      std::string ln2 = block.push(norm(dm, "ln_2", r));
      std::string out = block.maybe_dropout("mlp_dropout", mlp(dm, block, ln2), dm.dropout);
      block.push({{"type", "add"}, {"name", "stream"}, {"inputs", {r, out}}});
    }
  }

  Seq s;
  std::int64_t embed_dim = dm.embed_dim > 0 ? dm.embed_dim : dm.hidden;
  std::string cur = s.push({{"type", "embedding"}, {"name", "wte"}, {"vocab_size", dm.vocab}, {"dim", embed_dim}});
  if (embed_dim != dm.hidden) {
    cur = s.push({{"type", "dense"}, {"name", "project_in"}, {"units", dm.hidden}, {"bias", false}});
  }
  if (dm.positions > 0) {
    s.push({{"type", "embedding"},
            {"name", "wpe"},
            {"vocab_size", dm.positions + dm.position_offset},
            {"dim", dm.hidden},
            {"positional", true},
            {"inputs", {"input"}}});
    cur = s.push({{"type", "add"}, {"name", "embed"}, {"inputs", {cur, "wpe"}}});
  }
  if (dm.embed_dropout > 0) {
    s.push({{"type", "dropout"}, {"name", "stream"}, {"rate", dm.embed_dropout}, {"inputs", {cur}}});
  } else {
    s.push({{"type", "identity"}, {"name", "stream"}, {"inputs", {cur}}});
  }
  s.push({{"type", "repeat"}, {"name", "h"}, {"count", dm.layers}, {"layers", block.layers}});
  if (dm.final_norm) s.push(norm(dm, "ln_f", "stream"));
  if (embed_dim != dm.hidden)
    s.push({{"type", "dense"}, {"name", "project_out"}, {"units", embed_dim}, {"bias", false}});
  switch (h.head) {
    case Head::None: break;
    case Head::TokenClassification:
    case Head::QuestionAnswering: token_head(s, h, h.dropout >= 0 ? h.dropout : dm.dropout); break;
    case Head::SequenceClassification:
      // Scores every token, then keeps the last one's (the sequence is taken as unpadded).
      s.push({{"type", "dense"}, {"name", "score"}, {"units", h.labels}, {"bias", false}});
      s.select_token("by_label", "last_token", h.labels);
      s.push({{"type", "cross_entropy"}, {"name", "loss"}});
      break;
    case Head::LanguageModel: {
      Json head = {{"type", "dense"}, {"name", "lm_head"}, {"units", dm.vocab}, {"bias", dm.head_bias}};
      if (dm.tied) head["tied_to"] = "wte";
      s.push(head);
      s.push({{"type", "cross_entropy"}, {"name", "loss"}});
      break;
    }
  }
  return s.layers;
}

/// Post-LayerNorm encoder with word, position and token-type embeddings and a task head (masked LM unless
/// `architectures` names another) (BERT, RoBERTa, DistilBERT).
struct Encoder {
  std::int64_t hidden = 0, layers = 0, heads = 0, inner = 0, vocab = 0, positions = 0, type_vocab = 0;
  std::string act = "gelu";
  double dropout = 0.1, attn_dropout = 0.1;
  // The dense layer on the first token under a sequence classifier (BERT's pooler, RoBERTa's head.dense:
  // tanh; DistilBERT's pre_classifier: ReLU), and whether the bare model keeps it (DistilBERT has none).
  std::string pooler_act = "tanh";
  bool bare_pooler = true;
  HeadChoice head;
};

/// Appends the dense layer that reads the first ([CLS]) token.
void pooler(const Encoder& dm, Seq& s, const std::string& input) {
  s.select_token("by_feature", "cls_select", dm.hidden, input);
  s.push({{"type", "dense"}, {"name", "pooler"}, {"units", dm.hidden}, {"activation", dm.pooler_act}});
}

Json encoder_layers(const Encoder& dm) {
  Json block = Json::array({
      {{"type", "attention"},
       {"name", "attention"},
       {"num_heads", dm.heads},
       {"dropout", dm.attn_dropout},
       {"inputs", {"stream"}}},
      dropout("attention_dropout", dm.dropout),
      {{"type", "add"}, {"name", "attention_residual"}, {"inputs", {"stream", "attention_dropout"}}},
      {{"type", "layernorm"}, {"name", "attention_norm"}},
      {{"type", "dense"}, {"name", "intermediate"}, {"units", dm.inner}, {"activation", dm.act}},
      {{"type", "dense"}, {"name", "output"}, {"units", dm.hidden}},
      dropout("output_dropout", dm.dropout),
      {{"type", "add"}, {"name", "output_residual"}, {"inputs", {"attention_norm", "output_dropout"}}},
      {{"type", "layernorm"}, {"name", "stream"}},
  });
  Json layers = Json::array({
      {{"type", "embedding"}, {"name", "word_embeddings"}, {"vocab_size", dm.vocab}, {"dim", dm.hidden}},
      {{"type", "embedding"},
       {"name", "position_embeddings"},
       {"vocab_size", dm.positions},
       {"dim", dm.hidden},
       {"positional", true},
       {"inputs", {"input"}}},
  });
  Json sum_inputs = {"word_embeddings", "position_embeddings"};
  if (dm.type_vocab > 0) {
    layers.push_back({{"type", "embedding"},
                      {"name", "token_type_embeddings"},
                      {"vocab_size", dm.type_vocab},
                      {"dim", dm.hidden},
                      {"inputs", {"input"}}});
    sum_inputs.push_back("token_type_embeddings");
  }
  layers.push_back({{"type", "add"}, {"name", "embeddings"}, {"inputs", sum_inputs}});
  layers.push_back({{"type", "layernorm"}, {"name", "embeddings_norm"}});
  layers.push_back(dropout("stream", dm.dropout));
  layers.push_back({{"type", "repeat"}, {"name", "layer"}, {"count", dm.layers}, {"layers", block}});
  Seq s;
  s.layers = std::move(layers);
  const HeadChoice& h = dm.head;
  double classifier_dropout = h.dropout >= 0 ? h.dropout : dm.dropout;
  switch (h.head) {
    case Head::None:
      if (dm.bare_pooler) pooler(dm, s, "stream");
      break;
    case Head::TokenClassification:
    case Head::QuestionAnswering: token_head(s, h, classifier_dropout); break;
    case Head::SequenceClassification: {
      pooler(dm, s, "stream");
      std::string cur = s.maybe_dropout("classifier_dropout", "pooler", classifier_dropout);
      s.push({{"type", "dense"}, {"name", "classifier"}, {"units", h.labels}, {"inputs", {cur}}});
      s.push({{"type", "cross_entropy"}, {"name", "loss"}});
      break;
    }
    case Head::LanguageModel:
      s.push({{"type", "dense"}, {"name", "mlm_transform"}, {"units", dm.hidden}, {"activation", dm.act}});
      s.push({{"type", "layernorm"}, {"name", "mlm_norm"}});
      s.push({{"type", "dense"}, {"name", "mlm_decoder"}, {"units", dm.vocab}, {"tied_to", "word_embeddings"}});
      s.push({{"type", "cross_entropy"}, {"name", "loss"}});
      break;
  }
  return s.layers;
}

/// T5: encoder and decoder stacks of RMS-normalised pre-norm blocks without biases, relative position
/// buckets (one small table per stack), a shared embedding and an LM head tied to it by default.
struct T5 {
  std::int64_t d_model = 0, d_kv = 0, d_ff = 0, layers = 0, decoder_layers = 0, heads = 0, vocab = 0, buckets = 32;
  bool gated = false, tied = true;
  std::string act = "relu";
  double dropout = 0.1;
  // Switch Transformers: every `*_sparse_step`-th block's MLP is a top-1 mixture of `experts` (0: none).
  std::int64_t experts = 0, encoder_sparse_step = 0, decoder_sparse_step = 0;
  bool router_bias = false;
};

/// Whether block `i` of a Switch stack is sparse, as Hugging Face decides it (i % step == 1, or every block).
bool switch_sparse(std::int64_t i, std::int64_t step) { return step > 0 && (step == 1 || i % step == 1); }

Json t5_layers(const T5& t) {
  auto attn = [&](const std::string& name, bool causal, Json inputs) {
    return Json{{"type", "attention"}, {"name", name},  {"num_heads", t.heads},       {"head_dim", t.d_kv},
                {"causal", causal},    {"bias", false}, {"inputs", std::move(inputs)}};
  };
  auto ff = [&](Seq& s, const std::string& input, bool sparse) {
    if (sparse) {
      // Switch: a router sends every token to one expert (top-1); each expert is a dense ReLU MLP.
      s.push(
          {{"type", "dense"}, {"name", "router"}, {"units", t.experts}, {"bias", t.router_bias}, {"inputs", {input}}});
      s.push({{"type", "dense"},
              {"name", "experts_wi"},
              {"units", t.d_ff},
              {"activation", t.act},
              {"bias", false},
              {"experts", t.experts},
              {"top_k", 1},
              {"inputs", {input}}});
      std::string wo = s.push({{"type", "dense"},
                               {"name", "experts_wo"},
                               {"units", t.d_model},
                               {"bias", false},
                               {"experts", t.experts},
                               {"top_k", 1}});
      return s.maybe_dropout("ff_dropout", wo, t.dropout);
    }
    Json wi = {{"type", "dense"},     {"name", "wi"},  {"units", t.d_ff},
               {"activation", t.act}, {"bias", false}, {"inputs", {input}}};
    if (t.gated) wi["gated"] = true;
    s.push(wi);
    std::string wo = s.push({{"type", "dense"}, {"name", "wo"}, {"units", t.d_model}, {"bias", false}});
    return s.maybe_dropout("ff_dropout", wo, t.dropout);
  };
  auto rms = [](const std::string& name, const std::string& input) {
    return Json{{"type", "rmsnorm"}, {"name", name}, {"inputs", {input}}};
  };

  auto encoder_block = [&](bool sparse) {
    Seq enc;
    enc.push(rms("ln_1", "stream"));
    std::string a = enc.maybe_dropout("attn_dropout", enc.push(attn("self_attn", false, {"ln_1"})), t.dropout);
    enc.push({{"type", "add"}, {"name", "attn_residual"}, {"inputs", {"stream", a}}});
    enc.push(rms("ln_2", "attn_residual"));
    enc.push({{"type", "add"}, {"name", "stream"}, {"inputs", {"attn_residual", ff(enc, "ln_2", sparse)}}});
    return enc.layers;
  };
  auto decoder_block = [&](bool sparse) {
    Seq dec;
    dec.push(rms("ln_1", "dstream"));
    std::string a = dec.maybe_dropout("self_attn_dropout", dec.push(attn("self_attn", true, {"ln_1"})), t.dropout);
    dec.push({{"type", "add"}, {"name", "self_residual"}, {"inputs", {"dstream", a}}});
    dec.push(rms("ln_2", "self_residual"));
    a = dec.maybe_dropout("cross_attn_dropout", dec.push(attn("cross_attn", false, {"ln_2", "encoder_out"})),
                          t.dropout);
    dec.push({{"type", "add"}, {"name", "cross_residual"}, {"inputs", {"self_residual", a}}});
    dec.push(rms("ln_3", "cross_residual"));
    dec.push({{"type", "add"}, {"name", "dstream"}, {"inputs", {"cross_residual", ff(dec, "ln_3", sparse)}}});
    return dec.layers;
  };
  // A stack of identical blocks is one repeat; a Switch stack mixes dense and sparse blocks, so its blocks are
  // written out one by one under the names a repeat would give them (local names resolve to the latest block).
  auto stack = [&](Seq& s, const std::string& name, std::int64_t count, std::int64_t step, auto block) {
    bool any_sparse = false;
    for (std::int64_t i = 0; i < count; ++i) any_sparse = any_sparse || switch_sparse(i, step);
    if (!any_sparse) {
      s.push({{"type", "repeat"}, {"name", name}, {"count", count}, {"layers", block(false)}});
      return;
    }
    Json dense = block(false), sparse = block(true);
    for (std::int64_t i = 0; i < count; ++i) {
      for (Json layer : switch_sparse(i, step) ? sparse : dense) {
        layer["name"] = name + "." + std::to_string(i) + "." + layer["name"].get<std::string>();
        s.push(std::move(layer));
      }
    }
  };

  auto stream_start = [&](Seq& s, const std::string& name, const std::string& input) {
    if (t.dropout > 0) return s.push({{"type", "dropout"}, {"name", name}, {"rate", t.dropout}, {"inputs", {input}}});
    return s.push({{"type", "identity"}, {"name", name}, {"inputs", {input}}});
  };

  Seq s;
  s.push({{"type", "embedding"}, {"name", "shared"}, {"vocab_size", t.vocab}, {"dim", t.d_model}});
  // Relative position buckets: a (buckets x heads) table in the first block of each stack.
  s.push({{"type", "embedding"},
          {"name", "encoder_relative_bias"},
          {"vocab_size", t.buckets},
          {"dim", t.heads},
          {"inputs", {"input"}}});
  stream_start(s, "stream", "shared");
  stack(s, "encoder", t.layers, t.experts > 0 ? t.encoder_sparse_step : 0, encoder_block);
  s.push(rms("encoder_final_norm", "stream"));
  stream_start(s, "encoder_out", "encoder_final_norm");
  // The decoder reads the target tokens through the shared embedding (target length = seq_len).
  s.push({{"type", "embedding"},
          {"name", "decoder_relative_bias"},
          {"vocab_size", t.buckets},
          {"dim", t.heads},
          {"inputs", {"input"}}});
  stream_start(s, "dstream", "shared");
  stack(s, "decoder", t.decoder_layers, t.experts > 0 ? t.decoder_sparse_step : 0, decoder_block);
  s.push(rms("decoder_final_norm", "dstream"));
  s.maybe_dropout("decoder_out", "decoder_final_norm", t.dropout);
  Json head = {{"type", "dense"}, {"name", "lm_head"}, {"units", t.vocab}, {"bias", false}};
  if (t.tied) head["tied_to"] = "shared";
  s.push(head);
  s.push({{"type", "cross_entropy"}, {"name", "loss"}});
  return s.layers;
}

/// The fairseq / BART family of encoder-decoders (bart, mbart, marian, fsmt): biased attention and ReLU or GELU
/// MLPs, learned or sinusoidal positions, post- or pre-LayerNorm blocks, shared or separate embeddings.
struct Seq2Seq {
  std::int64_t d_model = 0, layers = 0, decoder_layers = 0, heads = 0, decoder_heads = 0, ffn = 0, decoder_ffn = 0;
  std::int64_t vocab = 0, tgt_vocab = 0;  // tgt_vocab > 0: separate source and target tables (FSMT)
  std::int64_t positions = 0;             // learned position rows per stack, offset included (0: sinusoidal)
  bool pre_norm = false, final_norm = false, embed_norm = false;
  std::string act = "gelu";
  double dropout = 0.1, attn_dropout = 0.0, act_dropout = 0.0;
};

Json seq2seq_layers(const Seq2Seq& t) {
  auto attn = [&](const std::string& name, std::int64_t heads, bool causal, Json inputs) {
    Json a = {{"type", "attention"}, {"name", name}, {"num_heads", heads}, {"causal", causal}, {"inputs", inputs}};
    if (t.attn_dropout > 0) a["dropout"] = t.attn_dropout;
    return a;
  };
  auto ln = [](const std::string& name, const std::string& input) {
    return Json{{"type", "layernorm"}, {"name", name}, {"inputs", {input}}};
  };
  auto ff = [&](Seq& s, const std::string& input, std::int64_t inner) {
    s.push({{"type", "dense"}, {"name", "fc1"}, {"units", inner}, {"activation", t.act}, {"inputs", {input}}});
    s.maybe_dropout("activation_dropout", "fc1", t.act_dropout);
    return s.maybe_dropout("ff_dropout", s.push({{"type", "dense"}, {"name", "fc2"}, {"units", t.d_model}}), t.dropout);
  };
  // One block: sublayers read `x`; post-norm normalises each residual sum, pre-norm each sublayer's input.
  auto block = [&](const std::string& x, bool decoder) {
    Seq b;
    std::int64_t heads = decoder ? t.decoder_heads : t.heads, inner = decoder ? t.decoder_ffn : t.ffn;
    std::string cur = x;
    auto residual = [&](const std::string& name, const std::string& in, const std::string& out) {
      return b.push({{"type", "add"}, {"name", name}, {"inputs", {in, out}}});
    };
    // self-attention
    std::string in = t.pre_norm ? b.push(ln("self_attn_norm", cur)) : cur;
    std::string a = b.maybe_dropout("self_attn_dropout", b.push(attn("self_attn", heads, decoder, {in})), t.dropout);
    cur = residual("self_residual", cur, a);
    if (!t.pre_norm) cur = b.push(ln("self_attn_norm", cur));
    if (decoder) {  // cross-attention over the encoder output
      in = t.pre_norm ? b.push(ln("cross_attn_norm", cur)) : cur;
      a = b.maybe_dropout("cross_attn_dropout", b.push(attn("cross_attn", heads, false, {in, "encoder_out"})),
                          t.dropout);
      cur = residual("cross_residual", cur, a);
      if (!t.pre_norm) cur = b.push(ln("cross_attn_norm", cur));
    }
    in = t.pre_norm ? b.push(ln("final_norm", cur)) : cur;
    std::string out = ff(b, in, inner);
    if (t.pre_norm) {
      b.push({{"type", "add"}, {"name", x}, {"inputs", {cur, out}}});
    } else {
      residual("ff_residual", cur, out);
      b.push({{"type", "layernorm"}, {"name", x}});
    }
    return b.layers;
  };
  auto embed = [&](Seq& s, const std::string& prefix, const std::string& table, const std::string& stream) {
    std::string cur = table;
    if (t.positions > 0) {
      s.push({{"type", "embedding"},
              {"name", prefix + "_positions"},
              {"vocab_size", t.positions},
              {"dim", t.d_model},
              {"positional", true},
              {"inputs", {"input"}}});
      cur = s.push({{"type", "add"}, {"name", prefix + "_embed"}, {"inputs", {table, prefix + "_positions"}}});
    }
    if (t.embed_norm) cur = s.push(ln(prefix + "_layernorm_embedding", cur));
    if (t.dropout > 0) return s.push({{"type", "dropout"}, {"name", stream}, {"rate", t.dropout}, {"inputs", {cur}}});
    return s.push({{"type", "identity"}, {"name", stream}, {"inputs", {cur}}});
  };

  Seq s;
  bool separate = t.tgt_vocab > 0;
  std::string src_table = s.push({{"type", "embedding"},
                                  {"name", separate ? "encoder_embed_tokens" : "shared"},
                                  {"vocab_size", t.vocab},
                                  {"dim", t.d_model}});
  embed(s, "encoder", src_table, "stream");
  s.push({{"type", "repeat"}, {"name", "encoder"}, {"count", t.layers}, {"layers", block("stream", false)}});
  if (t.final_norm) {
    s.push(ln("encoder_out", "stream"));
  } else {
    s.push({{"type", "identity"}, {"name", "encoder_out"}, {"inputs", {"stream"}}});
  }
  // The decoder reads the target tokens (as long as the source) through its table.
  std::string tgt_table = src_table;
  if (separate) {
    tgt_table = s.push({{"type", "embedding"},
                        {"name", "decoder_embed_tokens"},
                        {"vocab_size", t.tgt_vocab},
                        {"dim", t.d_model},
                        {"inputs", {"input"}}});
  } else {
    s.push({{"type", "identity"}, {"name", "decoder_tokens"}, {"inputs", {src_table}}});
    tgt_table = "decoder_tokens";
  }
  embed(s, "decoder", tgt_table, "dstream");
  s.push({{"type", "repeat"}, {"name", "decoder"}, {"count", t.decoder_layers}, {"layers", block("dstream", true)}});
  if (t.final_norm) s.push(ln("decoder_out", "dstream"));
  s.push({{"type", "dense"},
          {"name", "lm_head"},
          {"units", separate ? t.tgt_vocab : t.vocab},
          {"bias", false},
          {"tied_to", separate ? "decoder_embed_tokens" : "shared"}});
  s.push({{"type", "cross_entropy"}, {"name", "loss"}});
  return s.layers;
}

/// ViT for image classification: patch convolution, class token, learned positions, pre-LN encoder.
struct Vit {
  std::int64_t hidden = 0, layers = 0, heads = 0, inner = 0, patch = 16, channels = 3, labels = 1000;
  std::int64_t positions = 0;  // learned position rows: patches at the config's image size + 1
  bool qkv_bias = true;
  std::string act = "gelu";
  double dropout = 0, attn_dropout = 0;
};

Json vit_layers(const Vit& v) {
  Seq block;
  block.push({{"type", "layernorm"}, {"name", "layernorm_before"}, {"inputs", {"stream"}}});
  Json at = {
      {"type", "attention"}, {"name", "attention"}, {"num_heads", v.heads}, {"bias", v.qkv_bias}, {"out_bias", true}};
  if (v.attn_dropout > 0) at["dropout"] = v.attn_dropout;
  std::string a = block.maybe_dropout("attention_dropout", block.push(at), v.dropout);
  block.push({{"type", "add"}, {"name", "attention_residual"}, {"inputs", {"stream", a}}});
  block.push({{"type", "layernorm"}, {"name", "layernorm_after"}});
  block.push({{"type", "dense"}, {"name", "intermediate"}, {"units", v.inner}, {"activation", v.act}});
  std::string out = block.maybe_dropout(
      "output_dropout", block.push({{"type", "dense"}, {"name", "output"}, {"units", v.hidden}}), v.dropout);
  block.push({{"type", "add"}, {"name", "stream"}, {"inputs", {"attention_residual", out}}});

  Seq s;
  s.push({{"type", "conv2d"},
          {"name", "patch_embeddings"},
          {"filters", v.hidden},
          {"kernel_size", v.patch},
          {"stride", v.patch}});
  // [hidden, H/p, W/p] viewed as [patches, hidden] (flatten + transpose; a view, no kernel).
  s.push({{"type", "reshape"}, {"name", "patches"}, {"shape", {-1, v.hidden}}});
  s.push({{"type", "parameter"}, {"name", "cls_token"}, {"shape", {1, v.hidden}}});
  s.push({{"type", "concat"}, {"name", "tokens"}, {"axis", 0}, {"inputs", {"cls_token", "patches"}}});
  s.push({{"type", "embedding"},
          {"name", "position_embeddings"},
          {"vocab_size", v.positions},
          {"dim", v.hidden},
          {"positional", true},
          {"inputs", {"tokens"}}});
  std::string cur = s.push({{"type", "add"}, {"name", "embeddings"}, {"inputs", {"tokens", "position_embeddings"}}});
  if (v.dropout > 0) {
    s.push({{"type", "dropout"}, {"name", "stream"}, {"rate", v.dropout}, {"inputs", {cur}}});
  } else {
    s.push({{"type", "identity"}, {"name", "stream"}, {"inputs", {cur}}});
  }
  s.push({{"type", "repeat"}, {"name", "layer"}, {"count", v.layers}, {"layers", block.layers}});
  s.push({{"type", "layernorm"}, {"name", "layernorm"}, {"inputs", {"stream"}}});
  // The classifier reads the class token.
  s.select_token("by_feature", "cls_select", v.hidden);
  s.push({{"type", "dense"}, {"name", "classifier"}, {"units", v.labels}});
  s.push({{"type", "cross_entropy"}, {"name", "loss"}});
  return s.layers;
}

/// Sequence length for token models: the request's, else the config's positions capped at 1024.
/// `learned`: positions are a table, so a longer sequence is an error; otherwise only a warning.
std::int64_t choose_seq(std::int64_t seq_len, std::int64_t positions, bool learned,
                        std::vector<std::string>& warnings) {
  if (seq_len <= 0) return positions > 0 ? std::min<std::int64_t>(positions, 1024) : 1024;
  if (positions > 0 && seq_len > positions) {
    if (learned) {
      throw InputError("training.seq_len", "is " + std::to_string(seq_len) + " but the model has only " +
                                               std::to_string(positions) + " learned positions");
    }
    warnings.push_back("training.seq_len " + std::to_string(seq_len) + " is beyond the model's " +
                       std::to_string(positions) + " trained positions");
  }
  return seq_len;
}

void check_heads(const Cfg& c, std::int64_t hidden, std::int64_t heads, std::int64_t kv_heads, bool has_head_dim,
                 const std::vector<std::string>& head_keys, const std::string& kv_key) {
  if (!has_head_dim && hidden % heads != 0) {
    std::string key = c.present(head_keys);
    throw InputError(c.field(key.empty() ? head_keys.front() : key),
                     "must divide the hidden size " + std::to_string(hidden));
  }
  if (heads % kv_heads != 0) {
    throw InputError(c.field(kv_key), "must divide num_attention_heads (" + std::to_string(heads) + "), got " +
                                          std::to_string(kv_heads));
  }
}

Json tokens_model(const std::string& name, std::int64_t seq, Json layers) {
  return {{"name", name}, {"input", {{"kind", "tokens"}, {"seq_len", seq}}}, {"layers", std::move(layers)}};
}

Json build_encoder(const Cfg& c, const std::string& type, std::int64_t seq_len, std::vector<std::string>& warnings) {
  Encoder e;
  bool distil = type == "distilbert";
  if (distil) {
    e.hidden = c.req({"dim", "hidden_size"}, 1, kMaxWidth);
    e.layers = c.req({"n_layers", "num_hidden_layers"}, 1, kMaxDepth);
    e.heads = c.req({"n_heads", "num_attention_heads"}, 1, kMaxWidth);
    e.inner = c.opt({"hidden_dim", "intermediate_size"}, 4 * e.hidden, 1, kMaxWidth * 16);
    e.act = c.act({"activation", "hidden_act"}, "gelu");
    e.dropout = c.rate({"dropout", "hidden_dropout_prob"}, 0.1);
    e.attn_dropout = c.rate({"attention_dropout", "attention_probs_dropout_prob"}, 0.1);
    e.type_vocab = 0;
    if (c.flag("sinusoidal_pos_embds", false))
      warnings.push_back("sinusoidal position embeddings are counted as learned");
  } else {
    e.hidden = c.req({"hidden_size"}, 1, kMaxWidth);
    e.layers = c.req({"num_hidden_layers"}, 1, kMaxDepth);
    e.heads = c.req({"num_attention_heads"}, 1, kMaxWidth);
    e.inner = c.opt({"intermediate_size"}, 4 * e.hidden, 1, kMaxWidth * 16);
    e.act = c.act({"hidden_act"}, "gelu");
    e.dropout = c.rate({"hidden_dropout_prob"}, 0.1);
    e.attn_dropout = c.rate({"attention_probs_dropout_prob"}, e.dropout);
    e.type_vocab = c.opt({"type_vocab_size"}, type == "roberta" ? 1 : 2, 0, 1 << 20);
  }
  e.vocab = c.req({"vocab_size"}, 1, kMaxVocab);
  e.positions = c.opt({"max_position_embeddings"}, 512, 1, 1 << 24);
  e.head = read_head(c, warnings);
  if (distil) {
    e.pooler_act = "relu";
    e.bare_pooler = false;
    if (e.head.dropout < 0 && e.head.head == Head::SequenceClassification) {
      e.head.dropout = c.rate({"seq_classif_dropout"}, 0.2);
    }
  }
  check_heads(c, e.hidden, e.heads, e.heads, false, {distil ? "n_heads" : "num_attention_heads"}, "");
  std::int64_t seq = choose_seq(seq_len, e.positions, true, warnings);
  return tokens_model(type, seq, encoder_layers(e));
}

Json build_t5(const Cfg& c, const std::string& type, std::int64_t seq_len, std::vector<std::string>& warnings) {
  T5 t;
  t.d_model = c.req({"d_model"}, 1, kMaxWidth);
  t.heads = c.req({"num_heads"}, 1, kMaxWidth);
  t.d_kv = c.opt({"d_kv"}, t.d_model / t.heads, 1, kMaxWidth);
  if (t.d_kv == 0) throw InputError(c.field("d_kv"), "required when num_heads exceeds d_model");
  t.d_ff = c.req({"d_ff"}, 1, kMaxWidth * 16);
  t.layers = c.req({"num_layers"}, 1, kMaxDepth);
  t.decoder_layers = c.opt({"num_decoder_layers"}, t.layers, 1, kMaxDepth);
  t.vocab = c.req({"vocab_size"}, 1, kMaxVocab);
  t.buckets = c.opt({"relative_attention_num_buckets"}, 32, 1, 1 << 16);
  t.dropout = c.rate({"dropout_rate"}, 0.1);
  t.tied = c.flag("tie_word_embeddings", type != "mt5");
  if (type == "switch_transformers") {
    // Hugging Face's SwitchTransformersDenseActDense: one ungated activation (dense_act_fn), in every expert too.
    t.act = c.act({"dense_act_fn"}, "relu");
    t.experts = c.opt({"num_experts"}, 8, 1, 1 << 16);
    t.router_bias = c.flag("router_bias", false);
    // Hugging Face derives the steps from the sparse layer counts (defaults 3 of 12); a stored step wins, as
    // from_pretrained sets the config's own keys last.
    auto step = [&](const char* step_key, const char* count_key, std::int64_t layers) {
      if (c.has(step_key)) return c.opt({step_key}, 0, 0, kMaxDepth);
      std::int64_t sparse = c.opt({count_key}, 3, 0, kMaxDepth);
      return sparse > 0 ? layers / sparse : std::int64_t{0};
    };
    t.encoder_sparse_step = step("encoder_sparse_step", "num_sparse_encoder_layers", t.layers);
    t.decoder_sparse_step = step("decoder_sparse_step", "num_sparse_decoder_layers", t.decoder_layers);
  } else {
    std::string proj = c.str("feed_forward_proj", "relu");
    std::string fn = proj;
    if (proj.rfind("gated-", 0) == 0) {
      t.gated = true;
      fn = proj.substr(6);
    }
    t.act = Cfg::activation(fn == "gelu" ? "gelu_new" : fn, c.field("feed_forward_proj"));
  }
  std::int64_t positions = c.opt({"n_positions"}, 512, 1, 1 << 24);
  // The target sequence is taken as long as the input (docs/MODEL_FORMAT.md).
  std::int64_t seq = choose_seq(seq_len, positions, false, warnings);
  if (t.experts > 0 && c.has("expert_capacity")) {
    std::int64_t capacity = c.opt({"expert_capacity"}, 64, 1, kMaxWidth * 16);
    if (seq > t.experts * capacity) {
      warnings.push_back(
          "Switch routing: " + std::to_string(seq) +
          " tokens per sequence exceed num_experts x "
          "expert_capacity = " +
          std::to_string(t.experts * capacity) +
          "; Hugging Face skips the overflow tokens' experts, the estimate runs every token through one");
    }
  }
  return tokens_model(type, seq, t5_layers(t));
}

Json build_seq2seq(const Cfg& c, const std::string& type, std::int64_t seq_len, std::vector<std::string>& warnings) {
  Seq2Seq t;
  t.d_model = c.req({"d_model"}, 1, kMaxWidth);
  t.layers = c.req({"encoder_layers", "num_hidden_layers"}, 1, kMaxDepth);
  t.decoder_layers = c.opt({"decoder_layers"}, t.layers, 1, kMaxDepth);
  t.heads = c.req({"encoder_attention_heads", "num_attention_heads"}, 1, kMaxWidth);
  t.decoder_heads = c.opt({"decoder_attention_heads"}, t.heads, 1, kMaxWidth);
  t.ffn = c.opt({"encoder_ffn_dim"}, 4 * t.d_model, 1, kMaxWidth * 16);
  t.decoder_ffn = c.opt({"decoder_ffn_dim"}, t.ffn, 1, kMaxWidth * 16);
  bool fsmt = type == "fsmt";
  if (fsmt) {
    t.vocab = c.req({"src_vocab_size"}, 1, kMaxVocab);
    t.tgt_vocab = c.req({"tgt_vocab_size"}, 1, kMaxVocab);
  } else {
    t.vocab = c.req({"vocab_size"}, 1, kMaxVocab);
    if (!c.flag("share_encoder_decoder_embeddings", true)) {
      throw InputError(c.field("share_encoder_decoder_embeddings"), "separate Marian tables are not supported");
    }
  }
  t.act = c.act({"activation_function"}, fsmt || type == "marian" ? "relu" : "gelu");
  t.dropout = c.rate({"dropout"}, 0.1);
  t.attn_dropout = c.rate({"attention_dropout"}, 0.0);
  t.act_dropout = c.rate({"activation_dropout"}, 0.0);
  for (const auto& [key, heads] : {std::make_pair("encoder_attention_heads", t.heads),
                                   std::make_pair("decoder_attention_heads", t.decoder_heads)}) {
    if (t.d_model % heads != 0) {
      throw InputError(c.field(c.has(key) ? key : "num_attention_heads"),
                       "must divide d_model " + std::to_string(t.d_model));
    }
  }
  // Defaults of each class; the Transformers v3 BartConfig switches (which Marian and mBART configs of that
  // time carried) override them, so a fairseq pre-norm Transformer with sinusoidal positions is expressible.
  bool learned = type == "bart" || type == "mbart";
  t.pre_norm = c.flag("normalize_before", type == "mbart");
  t.final_norm = c.flag("add_final_layer_norm", type == "mbart");
  t.embed_norm = c.flag("normalize_embedding", learned);
  learned = !c.flag("static_position_embeddings", !learned);
  std::int64_t positions = c.opt({"max_position_embeddings"}, 1024, 1, 1 << 24);
  if (learned) t.positions = positions + 2;  // BART's learned table keeps two extra rows
  std::int64_t seq = choose_seq(seq_len, positions, learned, warnings);
  return tokens_model(type, seq, seq2seq_layers(t));
}

Json build_vit(const Cfg& c, std::int64_t image_size, std::vector<std::string>& warnings) {
  Vit v;
  v.hidden = c.req({"hidden_size"}, 1, kMaxWidth);
  v.layers = c.req({"num_hidden_layers"}, 1, kMaxDepth);
  v.heads = c.req({"num_attention_heads"}, 1, kMaxWidth);
  v.inner = c.opt({"intermediate_size"}, 4 * v.hidden, 1, kMaxWidth * 16);
  v.act = c.act({"hidden_act"}, "gelu");
  v.patch = c.opt({"patch_size"}, 16, 1, 4096);
  v.channels = c.opt({"num_channels"}, 3, 1, 1 << 16);
  v.qkv_bias = c.flag("qkv_bias", true);
  v.dropout = c.rate({"hidden_dropout_prob"}, 0.0);
  v.attn_dropout = c.rate({"attention_probs_dropout_prob"}, 0.0);
  check_heads(c, v.hidden, v.heads, v.heads, false, {"num_attention_heads"}, "");
  std::int64_t config_image = c.opt({"image_size"}, 224, 1, 16384);
  if (config_image < v.patch) throw InputError(c.field("patch_size"), "is larger than the image_size");
  if (c.has("num_labels")) {
    v.labels = c.opt({"num_labels"}, 1000, 1, kMaxVocab);
  } else if (c.has("id2label") && c.json()["id2label"].is_object() && !c.json()["id2label"].empty()) {
    v.labels = static_cast<std::int64_t>(c.json()["id2label"].size());
  } else {
    warnings.push_back("the config gives neither num_labels nor id2label; a 1000-class head is assumed");
  }
  auto patches = [&](std::int64_t side) { return (side / v.patch) * (side / v.patch); };
  v.positions = patches(config_image) + 1;
  std::int64_t image = image_size > 0 ? image_size : config_image;
  if (image < v.patch) {
    throw InputError("training.image_size",
                     "is " + std::to_string(image) + ", smaller than one " + std::to_string(v.patch) + "-pixel patch");
  }
  if (patches(image) + 1 > v.positions) {
    throw InputError("training.image_size", "is " + std::to_string(image) +
                                                " but the model has position embeddings for " +
                                                std::to_string(config_image) + "-pixel images only");
  }
  return {{"name", "vit"},
          {"input", {{"kind", "image"}, {"channels", v.channels}, {"image_size", image}}},
          {"layers", vit_layers(v)}};
}

/// Reads the sizes every decoder has; `keys` spellings cover GPT-2's n_embd and friends.
void read_core(const Cfg& c, Decoder& dm) {
  dm.hidden = c.req({"hidden_size", "n_embd", "d_model"}, 1, kMaxWidth);
  dm.layers = c.req({"num_hidden_layers", "n_layer", "num_layers"}, 1, kMaxDepth);
  dm.heads = c.req({"num_attention_heads", "n_head"}, 1, kMaxWidth);
  dm.vocab = c.req({"vocab_size"}, 1, kMaxVocab);
}

Json build_decoder(const Cfg& c, const std::string& type, std::int64_t seq_len, std::vector<std::string>& warnings) {
  Decoder dm;
  read_core(c, dm);
  std::string kv_key = "num_key_value_heads";
  bool learned_positions = true;
  std::int64_t max_positions = 0;
  std::string family = type;

  if (type == "gpt2" || type.empty() ||
      (type != "gpt_neox" && type != "gptj" && type != "opt" && type != "llama" && type != "mistral" &&
       type != "qwen2" && type != "mixtral" && type != "gemma" && type != "phi" && type != "falcon")) {
    // GPT-2 (and the generic fallback): pre-LN, learned positions, biases everywhere, tied head.
    if (type != "gpt2" && !(type.empty() && c.has("n_embd"))) {
      warnings.push_back("model_type \"" + printable(type) + "\" is not recognised; treated as a GPT-2-style decoder " +
                         "(pre-LayerNorm, learned positions, tied embeddings)");
      family = type.empty() ? "hf-model" : type;
    } else {
      family = "gpt2";
    }
    dm.kv_heads = c.opt({"num_key_value_heads"}, dm.heads, 1, dm.heads);
    dm.inner = c.opt({"intermediate_size", "n_inner"}, 4 * dm.hidden, 1, kMaxWidth * 16);
    dm.act = c.act({"activation_function", "hidden_act"}, "gelu_new");
    max_positions = c.opt({"max_position_embeddings", "n_positions", "n_ctx"}, 0, 1, 1 << 24);
    dm.dropout = c.rate({"hidden_dropout_prob", "resid_pdrop", "dropout"}, 0.1);
    dm.attn_dropout = c.rate({"attention_probs_dropout_prob", "attn_pdrop", "attention_dropout"}, dm.dropout);
    dm.embed_dropout = c.rate({"embd_pdrop"}, dm.dropout);
    dm.tied = c.flag("tie_word_embeddings", true);
  } else if (type == "gpt_neox") {
    // Pythia and GPT-NeoX-20B: rotary, parallel residual with two LayerNorms, untied embed_out.
    dm.kv_heads = dm.heads;
    dm.inner = c.opt({"intermediate_size"}, 4 * dm.hidden, 1, kMaxWidth * 16);
    dm.act = c.act({"hidden_act"}, "gelu");
    dm.parallel = c.flag("use_parallel_residual", true);
    dm.parallel_norms = 2;
    dm.qkv_bias = dm.out_bias = c.flag("attention_bias", true);
    dm.tied = c.flag("tie_word_embeddings", false);
    dm.dropout = c.rate({"hidden_dropout"}, 0.0);
    dm.attn_dropout = c.rate({"attention_dropout"}, 0.0);
    max_positions = c.opt({"max_position_embeddings"}, 2048, 1, 1 << 24);
    learned_positions = false;
  } else if (type == "gptj") {
    // GPT-J: rotary, one LayerNorm feeding attention and MLP in parallel, no attention biases, LM head bias.
    dm.kv_heads = dm.heads;
    dm.inner = c.opt({"n_inner", "intermediate_size"}, 4 * dm.hidden, 1, kMaxWidth * 16);
    dm.act = c.act({"activation_function"}, "gelu_new");
    dm.parallel = true;
    dm.qkv_bias = dm.out_bias = false;
    dm.head_bias = true;
    dm.tied = c.flag("tie_word_embeddings", false);
    dm.dropout = c.rate({"resid_pdrop"}, 0.0);
    dm.attn_dropout = c.rate({"attn_pdrop"}, 0.0);
    dm.embed_dropout = c.rate({"embd_pdrop"}, 0.0);
    max_positions = c.opt({"n_positions"}, 2048, 1, 1 << 24);
    learned_positions = false;
  } else if (type == "opt") {
    // OPT: learned positions with 2 extra rows, ReLU MLP of ffn_dim, biases, tied head.
    dm.kv_heads = dm.heads;
    dm.inner = c.opt({"ffn_dim"}, 4 * dm.hidden, 1, kMaxWidth * 16);
    dm.act = c.act({"activation_function"}, "relu");
    dm.qkv_bias = dm.out_bias = dm.mlp_bias = c.flag("enable_bias", true);
    dm.norm_bias = c.flag("layer_norm_elementwise_affine", true);
    dm.post_norm = !c.flag("do_layer_norm_before", true);
    dm.final_norm = !dm.post_norm && !c.flag("_remove_final_layer_norm", false);
    dm.embed_dim = c.opt({"word_embed_proj_dim"}, dm.hidden, 1, kMaxWidth);
    dm.tied = c.flag("tie_word_embeddings", true);
    dm.dropout = c.rate({"dropout"}, 0.1);
    dm.attn_dropout = c.rate({"attention_dropout"}, 0.0);
    dm.embed_dropout = dm.dropout;
    max_positions = c.opt({"max_position_embeddings"}, 2048, 1, 1 << 24);
    dm.position_offset = 2;
  } else if (type == "phi") {
    // Phi-1/1.5/2: partial rotary, one LayerNorm feeding attention and MLP in parallel, biases, LM head bias.
    dm.kv_heads = c.opt({"num_key_value_heads"}, dm.heads, 1, dm.heads);
    dm.inner = c.opt({"intermediate_size"}, 4 * dm.hidden, 1, kMaxWidth * 16);
    dm.act = c.act({"hidden_act"}, "gelu_new");
    dm.parallel = true;
    dm.head_bias = true;
    dm.tied = c.flag("tie_word_embeddings", false);
    dm.dropout = c.rate({"resid_pdrop"}, 0.0);
    dm.attn_dropout = c.rate({"attention_dropout"}, 0.0);
    dm.embed_dropout = c.rate({"embd_pdrop"}, 0.0);
    max_positions = c.opt({"max_position_embeddings"}, 2048, 1, 1 << 24);
    learned_positions = false;
  } else if (type == "falcon") {
    // Falcon: multi-query (7B) or grouped KV with two LayerNorms (new_decoder_architecture, 40B/180B),
    // parallel attention + MLP, no biases, rotary or ALiBi, tied head.
    bool new_arch = c.flag("new_decoder_architecture", false);
    kv_key = c.has("num_kv_heads") ? "num_kv_heads" : c.has("n_head_kv") ? "n_head_kv" : "multi_query";
    if (new_arch) {
      dm.kv_heads = c.opt({"num_kv_heads", "n_head_kv"}, dm.heads, 1, dm.heads);
    } else {
      dm.kv_heads = c.flag("multi_query", true) ? 1 : dm.heads;
    }
    dm.inner = c.opt({"ffn_hidden_size"}, 4 * dm.hidden, 1, kMaxWidth * 16);
    dm.act = c.act({"activation"}, "gelu");
    dm.parallel = new_arch || c.flag("parallel_attn", true);
    dm.parallel_norms = new_arch ? 2 : 1;
    dm.qkv_bias = dm.out_bias = dm.mlp_bias = c.flag("bias", false);
    dm.tied = c.flag("tie_word_embeddings", true);
    dm.dropout = c.rate({"hidden_dropout"}, 0.0);
    dm.attn_dropout = c.rate({"attention_dropout"}, 0.0);
    max_positions = c.opt({"max_position_embeddings"}, 2048, 1, 1 << 24);
    learned_positions = false;
    if (c.flag("alibi", false)) warnings.push_back("ALiBi position biases add no parameters and are not costed");
  } else {
    // Llama family: RMSNorm, rotary, SwiGLU (GeGLU for Gemma) MLP, grouped-query attention, no biases.
    bool gemma = type == "gemma";
    std::int64_t default_kv = type == "mistral" || type == "mixtral" ? std::min<std::int64_t>(8, dm.heads) : dm.heads;
    dm.kv_heads = c.opt({"num_key_value_heads"}, default_kv, 1, dm.heads);
    dm.head_dim = c.opt({"head_dim"}, 0, 1, kMaxWidth);
    dm.inner = c.req({"intermediate_size"}, 1, kMaxWidth * 16);
    dm.act = gemma ? c.act({"hidden_activation", "hidden_act"}, "gelu_pytorch_tanh") : c.act({"hidden_act"}, "silu");
    dm.gated = true;
    dm.rms = true;
    bool attention_bias = c.flag("attention_bias", false);
    dm.qkv_bias = type == "qwen2" ? true : attention_bias;
    dm.out_bias = attention_bias;
    dm.mlp_bias = c.flag("mlp_bias", false);
    dm.tied = c.flag("tie_word_embeddings", gemma);
    dm.attn_dropout = c.rate({"attention_dropout"}, 0.0);
    max_positions = c.opt({"max_position_embeddings"}, 2048, 1, 1 << 24);
    learned_positions = false;
    if (type == "mixtral") {
      dm.experts = c.opt({"num_local_experts"}, 8, 1, 1 << 16);
      dm.top_k = c.opt({"num_experts_per_tok"}, 2, 1, dm.experts);
    }
  }
  check_heads(c, dm.hidden, dm.heads, dm.kv_heads, dm.head_dim > 0, {"num_attention_heads", "n_head"}, kv_key);

  std::int64_t seq = choose_seq(seq_len, max_positions, learned_positions, warnings);
  if (learned_positions) dm.positions = max_positions > 0 ? max_positions : seq;
  return tokens_model(family, seq, decoder_layers(dm, read_head(c, warnings)));
}

}  // namespace

bool hf_config_is_vision(const Json& config) {
  return config.is_object() && config.contains("model_type") && config["model_type"] == "vit";
}

Json hf_config_to_layers(const Json& config, const std::string& path, std::int64_t seq_len,
                         std::vector<std::string>& warnings, std::int64_t image_size) {
  require_object(config, path);
  Cfg c(config, path);
  std::string type = c.str("model_type", "");
  if (type == "RefinedWebModel" || type == "RefinedWeb") type = "falcon";
  Json model;
  if (type == "bert" || type == "roberta" || type == "distilbert") {
    model = build_encoder(c, type, seq_len, warnings);
  } else if (type == "t5" || type == "mt5" || type == "switch_transformers") {
    model = build_t5(c, type, seq_len, warnings);
  } else if (type == "bart" || type == "mbart" || type == "marian" || type == "fsmt") {
    model = build_seq2seq(c, type, seq_len, warnings);
  } else if (type == "vit") {
    model = build_vit(c, image_size, warnings);
  } else {
    model = build_decoder(c, type, seq_len, warnings);
  }
  // Name the config's depth, not the generated list, when the expansion would exceed the layer limit.
  std::int64_t expanded = 0;
  for (const auto& layer : model["layers"]) {
    expanded += layer["type"] == "repeat"
                    ? layer["count"].get<std::int64_t>() * static_cast<std::int64_t>(layer["layers"].size())
                    : 1;
  }
  if (expanded > Limits::kMaxLayers) {
    std::string key =
        c.present({"num_hidden_layers", "n_layer", "num_layers", "n_layers", "num_decoder_layers", "encoder_layers"});
    throw InputError(c.field(key.empty() ? "num_hidden_layers" : key),
                     "the model expands to " + std::to_string(expanded) + " layers; the limit is " +
                         std::to_string(Limits::kMaxLayers));
  }
  return model;
}

}  // namespace prenet
