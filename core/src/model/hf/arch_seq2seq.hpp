#pragma once
// The part of hf::Arch (arch.hpp) that only the seq2seq families read: encoder-decoders (T5, Switch, BART/FSMT,
// Whisper's audio stem): what their builders read beyond the shared fields.
#include <cstdint>
#include <string>

namespace prenet::hf {

/// A base of Arch, so that the steps (steps.hpp) and the form's fields (arch_form.hpp) reach these members as
/// `&Arch::member`, as they reach the shared ones.
struct Seq2SeqArch {};

}  // namespace prenet::hf
