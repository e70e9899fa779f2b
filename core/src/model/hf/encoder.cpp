// Post-LayerNorm encoders with word, position and token-type embeddings and a task head (masked LM unless
// `architectures` names another): BERT, RoBERTa, DistilBERT.
#include "model/hf/builders.hpp"
#include "model/hf/heads.hpp"
#include "model/hf/layer_seq.hpp"

namespace prenet::hf {
namespace {

/// Appends the dense layer that reads the first ([CLS]) token of `input`.
void pooler(const Arch& a, Seq& s, const std::string& input) {
  s.select_token("by_feature", "cls_select", a.hidden, input);
  s.push({{"type", "dense"}, {"name", "pooler"}, {"units", a.hidden}, {"activation", a.pooler_act}});
}

/// One post-LayerNorm block reading and writing "stream".
Json encoder_block(const Arch& a) {
  return Json::array({
      {{"type", "attention"},
       {"name", "attention"},
       {"num_heads", a.heads},
       {"dropout", a.attn_dropout},
       {"inputs", {"stream"}}},
      dropout("attention_dropout", a.dropout),
      {{"type", "add"}, {"name", "attention_residual"}, {"inputs", {"stream", "attention_dropout"}}},
      {{"type", "layernorm"}, {"name", "attention_norm"}},
      {{"type", "dense"}, {"name", "intermediate"}, {"units", a.inner}, {"activation", a.act}},
      {{"type", "dense"}, {"name", "output"}, {"units", a.hidden}},
      dropout("output_dropout", a.dropout),
      {{"type", "add"}, {"name", "output_residual"}, {"inputs", {"attention_norm", "output_dropout"}}},
      {{"type", "layernorm"}, {"name", "stream"}},
  });
}

/// Appends the word, position and (when the model has them) token-type embeddings up to the "stream".
void encoder_embeddings(const Arch& a, Seq& s) {
  s.push({{"type", "embedding"}, {"name", "word_embeddings"}, {"vocab_size", a.vocab}, {"dim", a.hidden}});
  s.push({{"type", "embedding"},
          {"name", "position_embeddings"},
          {"vocab_size", a.max_positions},
          {"dim", a.hidden},
          {"positional", true},
          {"inputs", {"input"}}});
  Json sum_inputs = {"word_embeddings", "position_embeddings"};
  if (a.type_vocab > 0) {
    s.push({{"type", "embedding"},
            {"name", "token_type_embeddings"},
            {"vocab_size", a.type_vocab},
            {"dim", a.hidden},
            {"inputs", {"input"}}});
    sum_inputs.push_back("token_type_embeddings");
  }
  s.push({{"type", "add"}, {"name", "embeddings"}, {"inputs", sum_inputs}});
  s.push({{"type", "layernorm"}, {"name", "embeddings_norm"}});
  s.push(dropout("stream", a.dropout));
}

/// Appends the task head of `a` on the final stream, and its loss.
void encoder_head(const Arch& a, Seq& s) {
  const HeadChoice& h = a.head;
  double classifier_dropout = h.dropout >= 0 ? h.dropout : a.dropout;
  switch (h.head) {
    case Head::None:
      if (a.bare_pooler) pooler(a, s, "stream");
      break;
    case Head::TokenClassification:
    case Head::QuestionAnswering: token_head(s, h, classifier_dropout); break;
    case Head::SequenceClassification: {
      pooler(a, s, "stream");
      std::string cur = s.maybe_dropout("classifier_dropout", "pooler", classifier_dropout);
      s.push({{"type", "dense"}, {"name", "classifier"}, {"units", h.labels}, {"inputs", {cur}}});
      s.push({{"type", "cross_entropy"}, {"name", "loss"}});
      break;
    }
    case Head::LanguageModel:
      s.push({{"type", "dense"}, {"name", "mlm_transform"}, {"units", a.hidden}, {"activation", a.act}});
      s.push({{"type", "layernorm"}, {"name", "mlm_norm"}});
      s.push({{"type", "dense"}, {"name", "mlm_decoder"}, {"units", a.vocab}, {"tied_to", "word_embeddings"}});
      s.push({{"type", "cross_entropy"}, {"name", "loss"}});
      break;
  }
}

}  // namespace

Json build_encoder(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings) {
  check_heads(c, a.hidden, a.heads, a.heads, false, a.heads_field, "");
  std::int64_t seq = choose_seq(wanted.seq_len, a.max_positions, true, warnings);
  Seq s;
  encoder_embeddings(a, s);
  s.push({{"type", "repeat"}, {"name", "layer"}, {"count", a.layers}, {"layers", encoder_block(a)}});
  encoder_head(a, s);
  return tokens_model(a.name, seq, s.layers);
}

}  // namespace prenet::hf
