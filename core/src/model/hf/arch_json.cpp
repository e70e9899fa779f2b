// The architecture form: the families (one Form each, arch_form_*.cpp) and what the rest of the core calls.
#include "model/hf/arch_json.hpp"

#include "model/hf/arch_form.hpp"
#include "model/hf/config_reader.hpp"
#include "prenet/network.hpp"

namespace prenet::hf {
namespace {

using form::Form;

/// Every family of the form, the default first. A new family is one file and one line here.
const std::vector<const Form*>& forms() {
  static const std::vector<const Form*> list = {
      &form::decoder_form(), &form::ssm_form(), &form::encoder_form(), &form::vit_form(), &form::deberta_form(),
      &form::t5_form(), &form::seq2seq_form(), &form::whisper_form(), &form::vision_tower_form(),
      &form::two_towers_form(), &form::multimodal_form(), &form::llama4_multimodal_form()};
  return list;
}

/// The family names, in the list's order.
std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const Form* f : forms()) names.emplace_back(f->family);
  return names;
}

/// The form named `family`; an error naming `path`.family otherwise.
const Form& form_named(const std::string& family, const std::string& path) {
  for (const Form* f : forms()) {
    if (family == f->family) return *f;
  }
  std::string list;
  for (const auto& n : family_names()) list += (list.empty() ? "" : ", ") + n;
  throw InputError(join(path, "family"), "\"" + printable(family) +
                                             "\" is not a family of the architecture form; supported: " + list +
                                             " (docs/MODEL_FORMAT.md, \"Architecture form\")");
}

/// Every key of form `f`: the family, the table's fields, the extra keys.
std::vector<std::string> known_keys(const Form& f) {
  std::vector<std::string> keys = {"family"};
  for (const form::Field& field : f.fields()) keys.emplace_back(field.key);
  keys.insert(keys.end(), f.extra_keys.begin(), f.extra_keys.end());
  return keys;
}

/// The form `j` names (absent: the decoder), after the checks every form shares.
const Form& form_of(const Json& j, const std::string& path) {
  require_object(j, path);
  if (j.contains("model_type")) {
    throw InputError(join(path, "model_type"),
                     "a Hugging Face config.json is given as model.hf_config; an architecture names its fields as "
                     "the response's model.architecture does (docs/MODEL_FORMAT.md, \"Architecture form\")");
  }
  return form_named(get_string(j, "family", path, forms().front()->family), path);
}

/// The layers `layers` expands to, nested repeats included.
std::int64_t expanded_size(const Json& layers) {
  std::int64_t n = 0;
  for (const auto& layer : layers) {
    n += layer["type"] == "repeat" ? layer["count"].get<std::int64_t>() * expanded_size(layer["layers"]) : 1;
  }
  return n;
}

/// The key of form `f` holding the depth (Arch::layers: num_hidden_layers, T5's num_layers, encoder_layers),
/// which a model too deep to expand names.
std::string depth_key(const Form& f) {
  for (const form::Field& field : f.fields()) {
    if (field.size == &form::at<&Arch::layers>) return field.key;
  }
  return "num_hidden_layers";
}

}  // namespace

std::vector<std::string> arch_families() { return family_names(); }

std::vector<ArchFieldDoc> arch_field_docs(const std::string& family) {
  const Form& f = form_named(family, "family");
  std::string list;
  for (const auto& n : family_names()) list += (list.empty() ? "" : ", ") + n;
  std::vector<ArchFieldDoc> out = {
      {"family", "string", "", forms().front()->family, std::string(f.doc) + " (one of " + list + ")"}};
  for (auto& row : form::docs_of(f.fields(), f.defaults)) out.push_back(std::move(row));
  if (f.extra_key_docs) {
    for (auto& row : f.extra_key_docs()) out.push_back(std::move(row));
  } else {
    for (const auto& key : f.extra_keys) out.push_back({key, "array", "", "absent", "one entry per layer (below)"});
  }
  return out;
}

std::vector<ArchFieldDoc> arch_layer_field_docs(const std::string& family) {
  return form_named(family, "family").extra_docs();
}

Json arch_to_json(const Arch& a, const std::string& family) {
  const std::string& named = family.empty() ? a.family : family;
  const Form& f = named.empty() ? *forms().front() : form_named(named, "family");
  Arch copy = a;  // the accessors reach members through a mutable Arch; this one is only read
  Json j = {{"family", f.family}};
  for (const form::Field& field : f.fields()) j[field.key] = form::value_of(field, copy);
  f.write_extra(a, j);
  return j;
}

Arch arch_from_json(const Json& j, const std::string& path) {
  const Form& f = form_of(j, path);
  reject_unknown_keys(j, path, known_keys(f));
  Arch a;
  a.name = "architecture";
  a.family = f.family;
  if (f.defaults) f.defaults(a);
  for (const form::Field& field : f.fields()) form::read_field(field, j, path, a);
  f.read_extra(j, path, a);
  return a;
}

std::optional<std::string> arch_family_of_builder(Builder config_builder) {
  for (const Form* f : forms()) {
    if (f->config_builder == config_builder) return std::string(f->family);
  }
  return std::nullopt;
}

void arch_complete_from_config(const std::string& family, const Cfg& c, Arch& a, std::vector<std::string>& warnings) {
  form_named(family, "family").from_config(c, a, warnings);
}

bool architecture_is_image(const Json& j, const std::string& path) { return form_of(j, path).image_input; }

Json architecture_to_layers(const Json& j, const std::string& path, std::int64_t seq_len,
                            std::vector<std::string>& warnings, std::int64_t image_size) {
  const Form& f = form_of(j, path);
  Arch a = arch_from_json(j, path);
  if (seq_len <= 0) seq_len = rotary_default_seq(a, f.image_input);
  Json model = f.arch_builder(Cfg(j, path), a, {seq_len, image_size}, warnings);
  // As a config's reading does (hf_config.cpp): name the depth, not the generated list, when it is too long.
  const std::int64_t expanded = expanded_size(model["layers"]);
  if (expanded > Limits::kMaxLayers) {
    throw InputError(join(path, depth_key(f)), "the model expands to " + std::to_string(expanded) +
                                                   " layers; the limit is " + std::to_string(Limits::kMaxLayers));
  }
  return model;
}

std::string architecture_seq_source(const Json& j, std::int64_t seq_len) {
  return trained_positions_source("architecture", "model.architecture.max_position_embeddings",
                                  arch_from_json(j, "model.architecture").max_positions, seq_len);
}

}  // namespace prenet::hf
