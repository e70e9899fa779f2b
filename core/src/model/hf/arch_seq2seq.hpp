#pragma once
// The part of hf::Arch (arch.hpp) that only the seq2seq families read: encoder-decoders (T5, Switch, BART/FSMT,
// Whisper's audio stem): what their builders read beyond the shared fields.
#include <cstdint>
#include <string>

namespace prenet::hf {

/// A base of Arch, so that the steps (steps.hpp) and the form's fields (arch_form.hpp) reach these members as
/// `&Arch::member`, as they reach the shared ones.
struct Seq2SeqArch {
  // Switch Transformers (t5.cpp): the tokens each expert takes per sequence; 0 when the config gives none. Only
  // warned about (Hugging Face drops the overflow tokens' expert work; the estimate routes every token).
  std::int64_t expert_capacity = 0;
  // Whisper's audio front-end (whisper.cpp), WhisperConfig's defaults: the log-mel bins of each input frame,
  // the encoder's positions (the convolution stem halves 2 x max_source_positions frames to that many) and the
  // decoder's positions (the tokens it is costed over).
  std::int64_t mel_bins = 80;
  std::int64_t source_positions = 1500;
  std::int64_t target_positions = 448;
};

}  // namespace prenet::hf
