// DeBERTa-v2/v3 (model_type "deberta-v2"): a post-LayerNorm encoder whose attention adds disentangled
// relative-position scores (content-to-position and position-to-content) against one shared table of
// relative embeddings, with the heads of DebertaV2For* (modeling_deberta_v2.py).
#include <algorithm>

#include "model/hf/builders.hpp"
#include "model/hf/heads.hpp"
#include "model/hf/layer_seq.hpp"

namespace prenet::hf {
namespace {

/// What DeBERTa reads beyond BERT's fields (DebertaV2Config and the getattr defaults of its modules).
struct Deberta {
  std::int64_t embedding = 0;  // embedding_size (hidden_size)
  bool relative = false;       // relative_attention
  std::int64_t span = 0;       // rows of the relative table: 2 x (position_buckets, else max_relative_positions)
  std::int64_t terms = 0;      // c2p and/or p2c in pos_att_type
  bool share_key = false;      // share_att_key: the position keys/queries reuse key_proj/query_proj
  bool rel_norm = false;       // norm_rel_ebd contains layer_norm
  bool absolute = true;        // position_biased_input: a learned absolute position table
};

/// The terms of pos_att_type ("p2c|c2p" or ["p2c", "c2p"]); an error names the field for anything else.
std::int64_t position_terms(const Cfg& c) {
  if (!c.has("pos_att_type")) return 0;
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
  std::int64_t c2p = 0, p2c = 0;
  for (const auto& n : names) {
    if (n == "c2p") {
      c2p = 1;
    } else if (n == "p2c") {
      p2c = 1;
    } else {
      throw InputError(c.field("pos_att_type"), "unknown term \"" + printable(n) + "\"; expected c2p and/or p2c");
    }
  }
  return c2p + p2c;
}

/// Reads DeBERTa's own fields; refuses the ones that change the network and are not modelled.
Deberta read_deberta(const Cfg& c, const Arch& a) {
  Deberta d;
  d.embedding = c.opt({"embedding_size"}, a.hidden, 1, kMaxWidth);
  d.relative = c.flag("relative_attention", false);
  d.absolute = c.flag("position_biased_input", true);
  d.share_key = c.flag("share_att_key", false);
  std::string norm = c.str("norm_rel_ebd", "none");
  std::transform(norm.begin(), norm.end(), norm.begin(), [](unsigned char ch) { return std::tolower(ch); });
  d.rel_norm = norm.find("layer_norm") != std::string::npos;
  d.terms = position_terms(c);
  if (c.has("conv_kernel_size") && c.opt({"conv_kernel_size"}, 0, 0, 4096) > 0) {
    throw InputError(c.field("conv_kernel_size"), "DeBERTa's convolution layer is not supported (0 or absent only)");
  }
  if (c.has("attention_head_size") && c.opt({"attention_head_size"}, 0, 1, kMaxWidth) * a.heads != a.hidden) {
    throw InputError(c.field("attention_head_size"), "only hidden_size / num_attention_heads is supported");
  }
  if (d.relative) {
    std::int64_t buckets = c.opt({"position_buckets"}, -1, -1, kMaxPositions);
    std::int64_t max_rel = c.opt({"max_relative_positions"}, -1, -1, kMaxPositions);
    if (max_rel < 1) max_rel = a.max_positions;
    d.span = 2 * (buckets > 0 ? buckets : max_rel);
  }
  return d;
}

/// The disentangled self-attention of one block reading "stream".
Json deberta_attention(const Arch& a, const Deberta& d) {
  Json at = {{"type", "attention"}, {"name", "attention"}, {"num_heads", a.heads}, {"inputs", {"stream"}}};
  if (a.attn_dropout > 0) at["dropout"] = a.attn_dropout;
  if (d.relative && d.terms > 0) {
    at["disentangled"] = d.terms;
    at["position_span"] = d.span;
    if (!d.share_key) at["position_projections"] = true;
  }
  return at;
}

/// One post-LayerNorm block reading and writing "stream".
Json deberta_block(const Arch& a, const Deberta& d) {
  Seq b;
  std::string at = b.maybe_dropout("attention_dropout", b.push(deberta_attention(a, d)), a.dropout);
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
void deberta_embeddings(const Arch& a, const Deberta& d, Seq& s) {
  s.push({{"type", "embedding"}, {"name", "word_embeddings"}, {"vocab_size", a.vocab}, {"dim", d.embedding}});
  Json sum = {"word_embeddings"};
  if (d.absolute) {
    s.push({{"type", "embedding"},
            {"name", "position_embeddings"},
            {"vocab_size", a.max_positions},
            {"dim", d.embedding},
            {"positional", true},
            {"inputs", {"input"}}});
    sum.push_back("position_embeddings");
  }
  if (a.type_vocab > 0) {
    s.push({{"type", "embedding"},
            {"name", "token_type_embeddings"},
            {"vocab_size", a.type_vocab},
            {"dim", d.embedding},
            {"inputs", {"input"}}});
    sum.push_back("token_type_embeddings");
  }
  std::string cur =
      sum.size() > 1 ? s.push({{"type", "add"}, {"name", "embeddings"}, {"inputs", sum}}) : "word_embeddings";
  if (d.embedding != a.hidden) {
    cur = s.push({{"type", "dense"}, {"name", "embed_proj"}, {"units", a.hidden}, {"bias", false}, {"inputs", {cur}}});
  }
  s.push({{"type", "layernorm"}, {"name", "embeddings_norm"}, {"inputs", {cur}}});
  s.start_stream("stream", "embeddings_norm", a.dropout);
}

/// Appends the head of DebertaV2For* named by `architectures`, and its loss.
void deberta_head(const Cfg& c, const Arch& a, const Deberta& d, Seq& s, std::vector<std::string>& warnings) {
  HeadChoice h = read_head(c, warnings);
  switch (h.head) {
    case Head::None: break;  // DebertaV2Model has no pooler
    case Head::TokenClassification:
    case Head::QuestionAnswering: token_head(s, h, a.dropout); break;
    case Head::SequenceClassification: {
      // ContextPooler: dropout (pooler_dropout), dense of pooler_hidden_size, pooler_hidden_act.
      if (c.opt({"pooler_hidden_size"}, a.hidden, 1, kMaxWidth) != a.hidden) {
        throw InputError(c.field("pooler_hidden_size"), "only hidden_size is supported");
      }
      s.select_token("cls_view", "cls_select", a.hidden, "stream");
      std::string cur = s.maybe_dropout("pooler_dropout", "cls_select", c.rate({"pooler_dropout"}, 0.0));
      s.push({{"type", "dense"},
              {"name", "pooler"},
              {"units", a.hidden},
              {"activation", c.act({"pooler_hidden_act"}, "gelu")},
              {"inputs", {cur}}});
      cur = s.maybe_dropout("classifier_dropout", "pooler", c.rate({"cls_dropout"}, a.dropout));
      s.push({{"type", "dense"}, {"name", "classifier"}, {"units", h.labels}, {"inputs", {cur}}});
      s.push({{"type", "cross_entropy"}, {"name", "loss"}});
      break;
    }
    case Head::LanguageModel:
      // DebertaV2OnlyMLMHead: dense to embedding_size, act, LayerNorm, decoder tied to the word table + bias.
      s.push({{"type", "dense"}, {"name", "mlm_transform"}, {"units", d.embedding}, {"activation", a.act}});
      s.push({{"type", "layernorm"}, {"name", "mlm_norm"}});
      s.push({{"type", "dense"}, {"name", "mlm_decoder"}, {"units", a.vocab}, {"tied_to", "word_embeddings"}});
      s.push({{"type", "cross_entropy"}, {"name", "loss"}});
      break;
  }
}

}  // namespace

Json build_deberta(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  check_heads(c, a.hidden, a.heads, a.heads, false, a.heads_field, "");
  Deberta d = read_deberta(c, a);
  std::int64_t seq = choose_seq(wanted.seq_len, a.max_positions, d.absolute, warnings);
  Seq s;
  deberta_embeddings(a, d, s);
  // The encoder's rel_embeddings table and (norm_rel_ebd, built even without relative attention) its
  // LayerNorm's weight and bias: one tensor read by every block. Normalising it once per step does not
  // depend on the batch; the attention layers cost its projections and gradients.
  std::int64_t rows = (d.relative ? d.span : 0) + (d.rel_norm ? 2 : 0);
  if (rows > 0) s.push({{"type", "parameter"}, {"name", "rel_embeddings"}, {"shape", {rows, a.hidden}}});
  s.push({{"type", "repeat"}, {"name", "layer"}, {"count", a.layers}, {"layers", deberta_block(a, d)}});
  deberta_head(c, a, d, s, warnings);
  return tokens_model(a.name, seq, s.layers);
}

}  // namespace prenet::hf
