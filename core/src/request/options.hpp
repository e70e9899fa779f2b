#pragma once
// The training options as data: one row per field of the request's "training" object, with its allowed
// values or limits, default, doc and the link parameter / element attribute / CLI flag that carry it.
// Parsing, the response's training echo and the catalogue (which the page, links, the element and the CLI
// read) all come from this table (docs/API.md "Options"); the model forms and request limits beside it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "prenet/json_util.hpp"
#include "prenet/training.hpp"

namespace prenet {

/// Names: a list of strings (given as one string or an array of them), e.g. training.finetune.targets. Text: one
/// string of at most kMaxOptionText characters, checked by whoever reads it (parallel.pipeline_layout).
enum class OptionKind { Integer, Number, Choice, Boolean, Names, Text };

/// The longest Text option value.
constexpr std::size_t kMaxOptionText = 4096;

/// A parsed option value: `integer` for Integer, `number` for Number, `choice` (an index into values) for Choice,
/// `boolean` for Boolean, `names` for Names, `text` for Text.
struct OptionValue {
  std::int64_t integer = 0;
  double number = 0;
  std::size_t choice = 0;
  bool boolean = false;
  std::vector<std::string> names;
  std::string text;
};

/// Which options the training echo (options_echo) carries.
enum class Echo { Never, Always, WhenGiven };

/// One row of an options table: the training table's (every field) or the parallel table's (no echo, store or read:
/// parse_parallel reads each field by key, since its derivations need the values as given).
struct TrainingOption {
  const char* key;  // member of the request's "training" (or "parallel") object; "a.b": member b of object a
  OptionKind kind;
  std::vector<std::string> values;  // Choice: the names, in the C++ enum's order; Names: those accepted (empty: any)
  std::vector<std::string> labels;  // Choice: how each value reads in the page's select
  double min = 0, max = 0;          // Integer and Number: the accepted range
  Json fallback;                    // the default when absent; null: none (derived, or the model's own)
  const char* label;                // the page's name for it
  const char* doc;                  // one line
  std::vector<std::string> link;    // link parameters, which are also the element's attributes; first written
  const char* flag;                 // the CLI flag, without its dashes; nullptr: none
  const char* flag_value;           // the flag's placeholder in --help; nullptr: a switch (bare means true)
  Echo echo;
  void (*store)(TrainingConfig&, const OptionValue&);
  std::optional<OptionValue> (*read)(const TrainingConfig&);  // nullopt: not set
};

/// Every training option, in the order the request is validated.
const std::vector<TrainingOption>& training_options();
/// The row of `key`; throws std::out_of_range for a key not in the table.
const TrainingOption& training_option(const std::string& key);
/// The name of value `index` of choice option `key` (the C++ enum's value).
const char* choice_name(const std::string& key, std::size_t index);
/// The index of `name` among choice option `key`'s values; values.size() when it is not one.
std::size_t choice_index(const std::string& key, const std::string& name);

/// Validates the request's "training" object at `path` against the table; every error names its field.
TrainingConfig parse_training_options(const Json& training, const std::string& path);
/// The options a response echoes under "training" (batch size and the named choices); the caller adds the
/// derived fields (dataset size, epochs, steps, the model's sequence length or image size).
Json options_echo(const TrainingConfig& training);
/// The table as the catalogue publishes it ("options").
Json options_catalogue();

/// Every field of the request's "parallel" object that a row can express, in the order the section lists them
/// (docs/API.md "parallel"); the links' "kind" strings are no rows (no link parameter, flag or range).
const std::vector<TrainingOption>& parallel_options();
/// The row of parallel field `key` ("tensor", "intra_node.bandwidth_gbs"); throws std::out_of_range for others.
const TrainingOption& parallel_option(const std::string& key);
/// The field of row `row_key` in `section` (its member: the key's last part), validated against the row; `path`
/// names `section` in errors ("parallel", "parallel.intra_node"). nullopt when absent or null.
std::optional<OptionValue> read_parallel_field(const Json& section, const std::string& row_key,
                                               const std::string& path);
/// The parallel table as the catalogue publishes it ("parallel_options").
Json parallel_options_catalogue();

/// One form of the request's "model" (docs/API.md "Model"): its key and a one-line doc.
struct ModelForm {
  const char* key;
  const char* doc;
};
/// The model forms in the order they are named in messages; the last, "layers", is the fallback.
const std::vector<ModelForm>& model_forms();
/// The form `model` came in: the first form key it holds, else "layers" (the model is validated elsewhere).
const char* model_form_of(const Json& model);
/// "preset, hf_config, keras, onnx_base64 or layers", for messages.
std::string model_form_list();
/// The model forms as the catalogue publishes them ("model_forms").
Json model_forms_catalogue();

/// The request limits as the catalogue publishes them ("limits").
Json limits_catalogue();

}  // namespace prenet
