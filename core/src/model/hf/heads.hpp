#pragma once
// Task heads: the class named in `architectures` decides what sits on top of the network.
#include <string>
#include <vector>

#include "model/hf/arch.hpp"
#include "model/hf/config_reader.hpp"
#include "model/hf/layer_seq.hpp"

namespace prenet::hf {

/// The head named by `architectures[0]` (e.g. "BertForSequenceClassification"); the language-model head
/// when the config names none, with a warning when it names a head this parser does not know.
HeadChoice read_head(const Cfg& c, std::vector<std::string>& warnings);

/// Appends a per-token head (token classification: `labels` classes after a dropout of `rate`; question
/// answering: start and end logits) reading the previous layer, and its loss.
void token_head(Seq& s, const HeadChoice& h, double rate);

}  // namespace prenet::hf
