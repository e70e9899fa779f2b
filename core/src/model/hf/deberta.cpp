// DeBERTa-v2/v3 (model_type "deberta-v2"): a post-LayerNorm encoder whose attention adds disentangled
// relative-position scores (content-to-position and position-to-content) against one shared table of
// relative embeddings, with the heads of DebertaV2For* (modeling_deberta_v2.py).
#include <algorithm>

#include "model/hf/builders.hpp"
#include "model/hf/heads.hpp"
#include "model/hf/layer_seq.hpp"

namespace prenet::hf {
namespace {

/// The position terms of pos_att_type ("p2c|c2p" or ["p2c", "c2p"]) as the form spells them ("none", "c2p",
/// "p2c", "c2p|p2c"); an error names the field for anything else.
std::string position_terms(const Cfg& c) {
  if (!c.has("pos_att_type")) return "none";
  const Json& v = c.json()["pos_att_type"];
  std::vector<std::string> names;
  if (v.is_string()) {
    std::string text = v.get<std::string>(), cur;
    for (char ch : text + "|") {
      if (ch == '|') {
        cur.erase(0, cur.find_first_not_of(' '));
        cur.erase(cur.find_last_not_of(' ') + 1);
        if (!cur.empty()) names.push_back(cur);
        cur.clear();
      } else {
        cur += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      }
    }
  } else if (v.is_array()) {
    for (const auto& n : v) {
      if (!n.is_string()) throw InputError(c.field("pos_att_type"), "expected \"c2p\", \"p2c\" or both");
      names.push_back(n.get<std::string>());
    }
  } else {
    throw InputError(c.field("pos_att_type"), "expected a string such as \"p2c|c2p\" or a list of them");
  }
  bool c2p = false, p2c = false;
  for (const auto& n : names) {
    if (n == "c2p") {
      c2p = true;
    } else if (n == "p2c") {
      p2c = true;
    } else {
      throw InputError(c.field("pos_att_type"), "unknown term \"" + printable(n) + "\"; expected c2p and/or p2c");
    }
  }
  return c2p && p2c ? "c2p|p2c" : c2p ? "c2p" : p2c ? "p2c" : "none";
}

/// The number of position terms (c2p, p2c) pos_att_type `terms` names.
std::int64_t term_count(const std::string& terms) {
  return static_cast<std::int64_t>(terms.find("c2p") != std::string::npos) +
         static_cast<std::int64_t>(terms.find("p2c") != std::string::npos);
}

/// The word table's width: embedding_size, else hidden_size.
std::int64_t embedding_width(const Arch& a) { return a.embedding_size > 0 ? a.embedding_size : a.hidden; }

/// The rows of the relative table: 2 x (position_buckets, else max_relative_positions, else the positions).
std::int64_t relative_span(const Arch& a) {
  if (a.position_buckets > 0) return 2 * a.position_buckets;
  return 2 * (a.max_relative_positions > 0 ? a.max_relative_positions : a.max_positions);
}

/// The sequence classifier's fields (ContextPooler, cls_dropout), read only under that head as the class does.
void read_pooler(const Cfg& c, Arch& a) {
  a.pooler_act = "gelu";  // ContextPooler's default, as the architecture form's
  if (a.head.head != Head::SequenceClassification) {
    a.head.dropout = -1;  // the per-token heads use hidden_dropout_prob
    return;
  }
  if (c.opt({"pooler_hidden_size"}, a.hidden, 1, kMaxWidth) != a.hidden) {
    throw InputError(c.field("pooler_hidden_size"), "only hidden_size is supported");
  }
  a.pooler_dropout = c.rate({"pooler_dropout"}, 0.0);
  a.pooler_act = c.act({"pooler_hidden_act"}, "gelu");
  a.head.dropout = c.has("cls_dropout") ? c.rate({"cls_dropout"}, a.dropout) : -1;
}

/// The disentangled self-attention of one block reading "stream".
Json deberta_attention(const Arch& a) {
  Json at = {{"type", "attention"}, {"name", "attention"}, {"num_heads", a.heads}, {"inputs", {"stream"}}};
  if (a.attn_dropout > 0) at["dropout"] = a.attn_dropout;
  if (a.relative_attention && term_count(a.pos_att_type) > 0) {
    at["disentangled"] = term_count(a.pos_att_type);
    at["position_span"] = relative_span(a);
    if (!a.share_att_key) at["position_projections"] = true;
  }
  return at;
}

/// One post-LayerNorm block reading and writing "stream".
Json deberta_block(const Arch& a) {
  Seq b;
  std::string at = b.maybe_dropout("attention_dropout", b.push(deberta_attention(a)), a.dropout);
  b.push({{"type", "add"}, {"name", "attention_residual"}, {"inputs", {"stream", at}}});
  b.push({{"type", "layernorm"}, {"name", "attention_norm"}});
  b.push({{"type", "dense"}, {"name", "intermediate"}, {"units", a.inner}, {"activation", a.act}});
  std::string out = b.maybe_dropout("output_dropout",
                                    b.push({{"type", "dense"}, {"name", "output"}, {"units", a.hidden}}), a.dropout);
  b.push({{"type", "add"}, {"name", "output_residual"}, {"inputs", {"attention_norm", out}}});
  b.push({{"type", "layernorm"}, {"name", "stream"}});
  return b.layers;
}

/// Appends the embeddings (word, absolute positions when position_biased_input, token types, embed_proj)
/// up to the "stream".
void deberta_embeddings(const Arch& a, Seq& s) {
  const std::int64_t width = embedding_width(a);
  s.push({{"type", "embedding"}, {"name", "word_embeddings"}, {"vocab_size", a.vocab}, {"dim", width}});
  Json sum = {"word_embeddings"};
  if (a.position_biased_input) {
    s.push({{"type", "embedding"},
            {"name", "position_embeddings"},
            {"vocab_size", a.max_positions},
            {"dim", width},
            {"positional", true},
            {"inputs", {"input"}}});
    sum.push_back("position_embeddings");
  }
  if (a.type_vocab > 0) {
    s.push({{"type", "embedding"},
            {"name", "token_type_embeddings"},
            {"vocab_size", a.type_vocab},
            {"dim", width},
            {"inputs", {"input"}}});
    sum.push_back("token_type_embeddings");
  }
  std::string cur =
      sum.size() > 1 ? s.push({{"type", "add"}, {"name", "embeddings"}, {"inputs", sum}}) : "word_embeddings";
  if (width != a.hidden) {
    cur = s.push({{"type", "dense"}, {"name", "embed_proj"}, {"units", a.hidden}, {"bias", false}, {"inputs", {cur}}});
  }
  s.push({{"type", "layernorm"}, {"name", "embeddings_norm"}, {"inputs", {cur}}});
  s.start_stream("stream", "embeddings_norm", a.dropout);
}

/// Appends the head of DebertaV2For* (a.head, from `architectures`), and its loss.
void deberta_head(const Arch& a, Seq& s) {
  const HeadChoice& h = a.head;
  switch (h.head) {
    case Head::None: break;  // DebertaV2Model has no pooler
    case Head::TokenClassification:
    case Head::QuestionAnswering: token_head(s, h, a.dropout); break;
    case Head::SequenceClassification: {
      // ContextPooler: dropout (pooler_dropout), dense of pooler_hidden_size, pooler_hidden_act.
      s.select_token("cls_view", "cls_select", a.hidden, "stream");
      std::string cur = s.maybe_dropout("pooler_dropout", "cls_select", a.pooler_dropout);
      s.push({{"type", "dense"},
              {"name", "pooler"},
              {"units", a.hidden},
              {"activation", a.pooler_act},
              {"inputs", {cur}}});
      cur = s.maybe_dropout("classifier_dropout", "pooler", h.dropout >= 0 ? h.dropout : a.dropout);
      s.push({{"type", "dense"}, {"name", "classifier"}, {"units", h.labels}, {"inputs", {cur}}});
      s.push({{"type", "cross_entropy"}, {"name", "loss"}});
      break;
    }
    case Head::LanguageModel:
      // DebertaV2OnlyMLMHead: dense to embedding_size, act, LayerNorm, decoder tied to the word table + bias.
      s.push({{"type", "dense"}, {"name", "mlm_transform"}, {"units", embedding_width(a)}, {"activation", a.act}});
      s.push({{"type", "layernorm"}, {"name", "mlm_norm"}});
      s.push({{"type", "dense"}, {"name", "mlm_decoder"}, {"units", a.vocab}, {"tied_to", "word_embeddings"}});
      s.push({{"type", "cross_entropy"}, {"name", "loss"}});
      break;
  }
}

}  // namespace

void read_deberta_config(const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  a.embedding_size = c.opt({"embedding_size"}, a.hidden, 1, kMaxWidth);
  a.relative_attention = c.flag("relative_attention", false);
  a.position_biased_input = c.flag("position_biased_input", true);
  a.share_att_key = c.flag("share_att_key", false);
  std::string norm = c.str("norm_rel_ebd", "none");
  std::transform(norm.begin(), norm.end(), norm.begin(), [](unsigned char ch) { return std::tolower(ch); });
  a.norm_rel_ebd = norm.find("layer_norm") != std::string::npos ? "layer_norm" : "none";
  a.pos_att_type = position_terms(c);
  if (c.has("conv_kernel_size") && c.opt({"conv_kernel_size"}, 0, 0, 4096) > 0) {
    throw InputError(c.field("conv_kernel_size"), "DeBERTa's convolution layer is not supported (0 or absent only)");
  }
  if (c.has("attention_head_size") && c.opt({"attention_head_size"}, 0, 1, kMaxWidth) * a.heads != a.hidden) {
    throw InputError(c.field("attention_head_size"), "only hidden_size / num_attention_heads is supported");
  }
  if (a.relative_attention) {
    a.position_buckets = std::max<std::int64_t>(c.opt({"position_buckets"}, -1, -1, kMaxPositions), 0);
    a.max_relative_positions = std::max<std::int64_t>(c.opt({"max_relative_positions"}, -1, -1, kMaxPositions), 0);
  }
  a.head = read_head(c, warnings);
  read_pooler(c, a);
}

Json build_deberta(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  check_heads(c, a.hidden, a.heads, a.heads, false, a.heads_field, "");
  Arch read = a;
  read_deberta_config(c, read, warnings);
  return build_deberta_arch(c, read, wanted, warnings);
}

Json build_deberta_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  check_heads(c, a.hidden, a.heads, a.heads, false, a.heads_field, "");
  std::int64_t seq = choose_seq(wanted.seq_len, a.max_positions, a.position_biased_input, warnings);
  Seq s;
  deberta_embeddings(a, s);
  // The encoder's rel_embeddings table and (norm_rel_ebd, built even without relative attention) its
  // LayerNorm's weight and bias: one tensor read by every block. Normalising it once per step does not
  // depend on the batch; the attention layers cost its projections and gradients.
  const bool rel_norm = a.norm_rel_ebd == "layer_norm";
  std::int64_t rows = (a.relative_attention ? relative_span(a) : 0) + (rel_norm ? 2 : 0);
  if (rows > 0) s.push({{"type", "parameter"}, {"name", "rel_embeddings"}, {"shape", {rows, a.hidden}}});
  s.push({{"type", "repeat"}, {"name", "layer"}, {"count", a.layers}, {"layers", deberta_block(a)}});
  deberta_head(a, s);
  return tokens_model(a.name, seq, s.layers);
}

}  // namespace prenet::hf
