#include "model/hf/heads.hpp"

#include <algorithm>
#include <utility>

namespace prenet::hf {
namespace {

/// Whether `text` ends with `suffix`.
bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The class-name endings Hugging Face uses for each head, in the order they are tried.
const std::vector<std::pair<std::string, Head>>& head_suffixes() {
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
  return suffixes;
}

}  // namespace

HeadChoice read_head(const Cfg& c, std::vector<std::string>& warnings) {
  HeadChoice h;
  if (!c.has("architectures")) return h;
  const Json& names = c.json()["architectures"];
  if (!names.is_array() || (!names.empty() && !names[0].is_string())) {
    throw InputError(c.field("architectures"), "expected an array of class names, e.g. [\"BertForMaskedLM\"]");
  }
  if (names.empty()) return h;
  const std::string name = names[0].get<std::string>();
  const auto& suffixes = head_suffixes();
  auto known = std::find_if(suffixes.begin(), suffixes.end(), [&](const auto& s) { return ends_with(name, s.first); });
  if (known == suffixes.end()) {
    warnings.push_back("architectures[0] \"" + printable(name) +
                       "\" names a head this calculator does not know; the language-model head is assumed");
    return h;
  }
  h.head = known->second;
  h.labels = label_count(c).value_or(h.labels);
  if (c.has("classifier_dropout")) h.dropout = c.rate({"classifier_dropout"}, 0.0);
  return h;
}

void token_head(Seq& s, const HeadChoice& h, double rate) {
  bool qa = h.head == Head::QuestionAnswering;
  if (!qa && rate > 0) s.push(dropout("classifier_dropout", rate));
  s.push({{"type", "dense"}, {"name", qa ? "qa_outputs" : "classifier"}, {"units", qa ? 2 : h.labels}});
  s.push({{"type", "cross_entropy"}, {"name", "loss"}});
}

}  // namespace prenet::hf
