#include "prenet/request.hpp"

#include "layers/fp8.hpp"
#include "prenet/embedded_data.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/memory.hpp"
#include "request/options.hpp"

namespace prenet {
namespace {

TrainingConfig parse_training(const Json& doc) {
  if (!doc.contains("training") || doc["training"].is_null()) return {};
  return parse_training_options(require_object(doc["training"], "training"), "training");
}

std::vector<Accelerator> parse_hardware(const Json& doc) {
  if (!doc.contains("hardware") || doc["hardware"].is_null()) return {*find_hardware("a100-sxm4-80gb")};
  const Json& list = require_array(doc["hardware"], "hardware");
  if (list.empty()) throw InputError("hardware", "expected at least one accelerator id or custom accelerator");
  if (list.size() > kMaxAccelerators) {
    throw InputError("hardware", "at most " + std::to_string(kMaxAccelerators) + " accelerators per request");
  }
  std::vector<Accelerator> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::string path = index("hardware", i);
    if (list[i].is_string()) {
      const Accelerator* acc = find_hardware(list[i].get<std::string>());
      if (!acc) {
        throw InputError(path, "unknown accelerator \"" + list[i].get<std::string>() +
                                   "\"; see the catalogue (npx prenet hardware) or give a custom accelerator");
      }
      out.push_back(*acc);
    } else if (list[i].is_object()) {
      out.push_back(parse_accelerator(list[i], path, true));
    } else {
      throw InputError(path,
                       "expected an accelerator id or a custom accelerator object, got " + describe_type(list[i]));
    }
  }
  return out;
}

/// The Hugging Face config the request's model is read from, its own or its preset's (null: neither), and
/// that config's path as training.precision_from names it. The preset is read from the embedded file, since the
/// catalogue (which parses them) sits above the request.
Json config_of_model(const Json& model, std::string& path) {
  if (model.contains("hf_config")) {
    path = "model.hf_config";
    return model["hf_config"];
  }
  if (!model.contains("preset") || !model["preset"].is_string()) return nullptr;
  const std::string id = model["preset"].get<std::string>();
  for (const EmbeddedPreset& p : embedded_presets()) {
    if (p.id != id) continue;
    Json preset = Json::parse(p.json);
    if (!preset.contains("model") || !preset["model"].contains("hf_config")) return nullptr;
    path = "presets." + id + ".hf_config";
    return preset["model"]["hf_config"];
  }
  return nullptr;  // an unknown preset is reported where the model is resolved
}

/// The config's own dtype as the training precision when the request's model is a Hugging Face config (given,
/// or a preset's) and its training sets no precision (docs/API.md "precision").
void precision_from_config(const Json& doc, const Json& model, TrainingConfig& training) {
  const Json* tr = doc.contains("training") && doc["training"].is_object() ? &doc["training"] : nullptr;
  if (tr && tr->contains("precision") && !(*tr)["precision"].is_null()) return;
  std::string path;
  const Json config = config_of_model(model, path);
  if (config.is_null()) return;
  std::optional<HfPrecision> dtype = hf_config_precision(config);
  if (!dtype) return;
  training.precision = precision_from_string(dtype->precision);
  training.precision_from = path + "." + dtype->field;
}

}  // namespace

Request parse_request(const Json& doc) {
  require_object(doc, "request");
  reject_unknown_keys(doc, "", {"model", "training", "hardware", "options", "calibration", "parallel"});
  Request r;
  if (!doc.contains("model")) throw InputError("model", "required: a preset, hf_config or layer list");
  r.model = require_object(doc["model"], "model");
  r.training = parse_training(doc);
  precision_from_config(doc, r.model, r.training);
  r.hardware = parse_hardware(doc);
  if (doc.contains("parallel") && !doc["parallel"].is_null()) {
    std::optional<std::int64_t> batch;
    const Json* tr = doc.contains("training") && doc["training"].is_object() ? &doc["training"] : nullptr;
    if (tr && tr->contains("batch_size") && !(*tr)["batch_size"].is_null()) batch = r.training.batch_size;
    ParallelConfig p = parse_parallel(doc["parallel"], batch);
    r.training.batch_size = p.data * p.micro_batch_size * p.micro_batches;
    r.parallel = p;
  }
  check_optimizer_switches(r.training, r.parallel ? r.parallel->micro_batches : 1);
  check_state_accounting(r.training, r.parallel ? &*r.parallel : nullptr);
  resolve_fp8_recipe(r.training, r.hardware);  // issue 18, fp8: the recipe against the precision and hardware
  if (doc.contains("calibration") && !doc["calibration"].is_null()) {
    const Json& cal = require_object(doc["calibration"], "calibration");
    reject_unknown_keys(cal, "calibration", {"hardware", "step_ms"});
    std::string id = require_string(cal, "hardware", "calibration");
    Calibration c;
    c.step_ms = require_number(cal, "step_ms", "calibration", 1e-6, 1e12);
    bool found = false;
    for (std::size_t i = 0; i < r.hardware.size() && !found; ++i) {
      if (r.hardware[i].id == id) {
        c.hardware_index = i;
        found = true;
      }
    }
    if (!found)
      throw InputError("calibration.hardware", "\"" + printable(id) + "\" is not one of the requested accelerators");
    r.calibration = c;
  }
  if (doc.contains("options") && !doc["options"].is_null()) {
    const Json& opt = require_object(doc["options"], "options");
    reject_unknown_keys(opt, "options", {"per_layer"});
    r.per_layer = get_bool(opt, "per_layer", "options", true);
  }
  return r;
}

}  // namespace prenet
