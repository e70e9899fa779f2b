// The architecture form's field machinery (arch_form.hpp): the rows' constructors, reading and writing one
// field, and the docs' rows.
#include "model/hf/arch_form.hpp"

#include <algorithm>
#include <sstream>

#include "model/hf/config_reader.hpp"

namespace prenet::hf::form {
namespace {

/// A row of `kind`, its accessor and bounds still unset.
Field make(const char* key, Kind kind, const char* unit, const char* doc) {
  Field f;
  f.key = key;
  f.kind = kind;
  f.unit = unit;
  f.doc = doc;
  return f;
}

std::int64_t& head_labels(Arch& a) { return a.head.labels; }
double& head_dropout(Arch& a) { return a.head.dropout; }

/// The task heads by name, in the Head enum's order.
const std::vector<std::string>& head_names() {
  static const std::vector<std::string> names = {"language_model", "sequence_classification", "token_classification",
                                                 "question_answering", "none"};
  return names;
}

/// `f`'s default in words for the docs.
std::string fallback_words(const Field& f, void (*family_defaults)(Arch&)) {
  if (f.fallback_doc) return f.fallback_doc;
  Arch defaults;
  defaults.name = "architecture";
  if (family_defaults) family_defaults(defaults);
  Json v = value_of(f, defaults);
  if (f.kind == Kind::Size) v = f.fallback.in(defaults);
  std::ostringstream out;
  out << (v.is_string() ? v.get<std::string>() : v.dump());
  return out.str();
}

const char* type_word(Kind k) {
  switch (k) {
    case Kind::Size: return "integer";
    case Kind::Flag: return "boolean";
    case Kind::Rate:
    case Kind::Number: return "number";
    case Kind::LabelDropout: return "number or null";
    case Kind::Text:
    case Kind::Activation:
    case Kind::TaskHead: break;
  }
  return "string";
}

}  // namespace

Field size_field(const char* key, SizeRef ref, Amount fallback, Amount min, Amount max, const char* unit,
                 const char* doc, const char* fallback_doc) {
  Field f = make(key, Kind::Size, unit, doc);
  f.size = ref;
  f.fallback = fallback;
  f.min = min;
  f.max = max;
  f.fallback_doc = fallback_doc;
  return f;
}

Field required_size(const char* key, SizeRef ref, Amount max, const char* unit, const char* doc) {
  Field f = size_field(key, ref, 0, 1, max, unit, doc, "required");
  f.required = true;
  return f;
}

Field flag_field(const char* key, FlagRef ref, const char* doc) {
  Field f = make(key, Kind::Flag, "", doc);
  f.flag = ref;
  return f;
}

Field real_field(const char* key, Kind kind, RealRef ref, double lo, double hi, const char* unit, const char* doc) {
  Field f = make(key, kind, unit, doc);
  f.real = ref;
  f.lo = lo;
  f.hi = hi;
  return f;
}

Field text_field(const char* key, Kind kind, TextRef ref, std::vector<std::string> choices, const char* doc) {
  Field f = make(key, kind, "", doc);
  f.text = ref;
  f.choices = std::move(choices);
  return f;
}

std::vector<Field> task_head_fields() {
  return {
      text_field("task_head", Kind::TaskHead, nullptr, head_names(),
                 "what sits on the last block, as Hugging Face's class suffix names it"),
      size_field("num_labels", head_labels, 2, 1, kMaxVocab, "classes", "the classes of a classification head"),
      real_field("classifier_dropout", Kind::LabelDropout, head_dropout, 0, 0.999999, "probability",
                 "dropout before a token-classification head; null: hidden_dropout"),
  };
}

Json value_of(const Field& f, Arch& a) {
  switch (f.kind) {
    case Kind::Size: return f.size(a);
    case Kind::Flag: return f.flag(a);
    case Kind::Rate:
    case Kind::Number: return f.real(a);
    case Kind::LabelDropout: return f.real(a) < 0 ? Json(nullptr) : Json(f.real(a));
    case Kind::Text:
    case Kind::Activation: return f.text(a);
    case Kind::TaskHead: return head_names()[static_cast<std::size_t>(a.head.head)];
  }
  return nullptr;
}

void read_field(const Field& f, const Json& j, const std::string& path, Arch& a) {
  const bool given = j.contains(f.key) && !j[f.key].is_null();
  switch (f.kind) {
    case Kind::Size:
      if (f.required && !given) throw InputError(join(path, f.key), "required field is missing");
      f.size(a) = get_int(j, f.key, path, f.fallback.in(a), f.min.in(a), f.max.in(a));
      break;
    case Kind::Flag: f.flag(a) = get_bool(j, f.key, path, f.flag(a)); break;
    case Kind::Rate:
    case Kind::Number: f.real(a) = get_number(j, f.key, path, f.real(a), f.lo, f.hi); break;
    case Kind::LabelDropout: f.real(a) = given ? get_number(j, f.key, path, 0, f.lo, f.hi) : -1.0; break;
    case Kind::Text:
      f.text(a) =
          f.choices.empty() ? get_string(j, f.key, path, f.text(a)) : get_enum(j, f.key, path, f.text(a), f.choices);
      break;
    case Kind::Activation:
      if (given) f.text(a) = activation(get_string(j, f.key, path, f.text(a)), join(path, f.key));
      break;
    case Kind::TaskHead: {
      std::string name = get_enum(j, f.key, path, head_names().front(), f.choices);
      a.head.head = static_cast<Head>(std::find(f.choices.begin(), f.choices.end(), name) - f.choices.begin());
      break;
    }
  }
}

std::vector<ArchFieldDoc> docs_of(const std::vector<Field>& fields, void (*defaults)(Arch&)) {
  std::vector<ArchFieldDoc> out;
  for (const Field& f : fields) {
    std::string doc = f.doc;
    if (!f.choices.empty()) {
      std::string list;
      for (const auto& c : f.choices) list += (list.empty() ? "" : ", ") + c;
      doc += " (" + list + ")";
    }
    out.push_back({f.key, type_word(f.kind), f.unit, fallback_words(f, defaults), doc});
  }
  return out;
}

}  // namespace prenet::hf::form
