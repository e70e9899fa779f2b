#pragma once
// The machinery of the architecture form (arch_json.hpp), shared by its families: a field table row (key, the
// Arch member it holds, bounds, default, unit, doc) from which a family's echo, its reading and the docs' field
// list are made, so the three cannot drift; and the Form, one family's table, checks and builder. One file per
// family (arch_form_decoder.cpp, ...), one row per family in arch_json.cpp's list.
#include <cstdint>
#include <string>
#include <vector>

#include "model/hf/arch.hpp"
#include "model/hf/arch_json.hpp"
#include "model/hf/builders.hpp"
#include "model/hf/steps.hpp"

namespace prenet::hf::form {

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

/// One row of a table. The accessor of the row's kind is set; sizes use the Amounts (a constant, or a
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

Field size_field(const char* key, SizeRef ref, Amount fallback, Amount min, Amount max, const char* unit,
                 const char* doc, const char* fallback_doc = nullptr);
Field required_size(const char* key, SizeRef ref, Amount max, const char* unit, const char* doc);
Field flag_field(const char* key, FlagRef ref, const char* doc);
Field real_field(const char* key, Kind kind, RealRef ref, double lo, double hi, const char* unit, const char* doc);
Field text_field(const char* key, Kind kind, TextRef ref, std::vector<std::string> choices, const char* doc);
/// The task head rows every family with a head ends with: task_head, num_labels, classifier_dropout.
std::vector<Field> task_head_fields();

/// `f`'s value in `a` as JSON.
Json value_of(const Field& f, Arch& a);
/// Reads `f` from `j` into `a` (absent or null: its default), checking its type and bounds.
void read_field(const Field& f, const Json& j, const std::string& path, Arch& a);
/// The docs' rows of `fields`, in order; `defaults` (when set) gives the family's own defaults (Form::defaults).
std::vector<ArchFieldDoc> docs_of(const std::vector<Field>& fields, void (*defaults)(Arch&) = nullptr);

/// One family of the architecture form.
struct Form {
  const char* family = "";
  const char* doc = "";                   // what the family builds, for the docs' `family` row
  const std::vector<Field>& (*fields)();  // the table, in reading order (a bound may name a field read before)
  std::vector<std::string> extra_keys;    // keys the family reads itself (the per-layer plan: "layers")
  /// Reads the extra keys and checks what spans fields, each error naming the field at fault.
  void (*read_extra)(const Json& j, const std::string& path, Arch& a);
  /// Writes the extra keys of `a` into `j` (the echo).
  void (*write_extra)(const Arch& a, Json& j);
  /// The docs' rows of the extra keys' entries (the plan's), empty when none.
  std::vector<ArchFieldDoc> (*extra_docs)();
  Builder config_builder;  // the builder of the model-type rows this family echoes (hf::Family::build)
  /// Completes an Arch the model-type row's steps read from config `c` with what config_builder reads itself
  /// (the decoder's task head from `architectures`), so that arch_builder builds the same model.
  void (*from_config)(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
  Builder arch_builder;  // builds the family from an Arch alone; `c` only names fields in errors
  bool image_input;      // the model reads an image, not tokens
  /// Sets the family's own defaults of the fields whose default is the Arch's value (flags, rates, texts)
  /// before they are read; null: the Arch's (the decoder's) defaults.
  void (*defaults)(Arch& a) = nullptr;
  /// The docs' rows of the extra keys themselves when they are not per-layer lists (two_towers' nested "vision"
  /// and "text" objects); null: each an array, one entry per layer.
  std::vector<ArchFieldDoc> (*extra_key_docs)() = nullptr;
};

/// The decoder family: arch_form_decoder.cpp.
const Form& decoder_form();
/// The encoder families: arch_form_encoder.cpp.
const Form& encoder_form();
const Form& vit_form();
const Form& deberta_form();
/// State-space models and hybrids: arch_form_ssm.cpp.
const Form& ssm_form();
/// The t5 family (T5, mT5, Switch Transformers): arch_form_t5.cpp.
const Form& t5_form();
/// The seq2seq family (BART, mBART, Marian, FSMT): arch_form_seq2seq.cpp.
const Form& seq2seq_form();
/// The whisper family: arch_form_whisper.cpp.
const Form& whisper_form();
/// The CLIP and SigLIP vision towers and the two-tower models: arch_form_vision.cpp.
const Form& vision_tower_form();
const Form& two_towers_form();
const Form& multimodal_form();
const Form& llama4_multimodal_form();

}  // namespace prenet::hf::form
