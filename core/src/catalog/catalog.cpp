#include "prenet/catalog.hpp"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "layers/fp8.hpp"
#include "model/finetune.hpp"
#include "model/hf/arch_json.hpp"
#include "model/mtp.hpp"
#include "prenet/embedded_data.hpp"
#include "prenet/hardware.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/keras.hpp"
#include "prenet/layer_list.hpp"
#include "prenet/onnx_model.hpp"
#include "prenet/version.hpp"
#include "request/options.hpp"
#include "request/plan_limits.hpp"

namespace prenet {
namespace {

Preset parse_preset(std::string_view id, std::string_view text) {
  std::string path = "presets/" + std::string(id) + ".json";
  Json doc = Json::parse(text);
  Preset p;
  p.id = require_string(doc, "id", path);
  if (p.id != id) throw InputError(path, "id \"" + p.id + "\" does not match the file name");
  p.name = require_string(doc, "name", path);
  p.family = require_string(doc, "family", path);
  p.source = require_string(doc, "source", path);
  p.published_parameters = get_number(doc, "published_parameters", path, 0, 0, 1e15);
  p.input = require_object(doc.at("input"), join(path, "input"));
  p.model = require_object(doc.at("model"), join(path, "model"));
  return p;
}

InputOverrides overrides_of(const TrainingConfig& t) { return {t.seq_len, t.image_size}; }

/// The network of a layer list the core generated from `path` (a config or an architecture), named `name` when
/// it is not empty; `warnings` come first in its notes.
Network network_of_generated(Json expanded, const std::string& path, const std::string& name,
                             const std::vector<std::string>& warnings) {
  if (!name.empty()) expanded["name"] = name;
  Network net;
  try {
    net = parse_layer_list(expanded, path, {});
  } catch (const InputError& e) {
    // The generated list is not in the request: name the config instead.
    if (e.field().rfind(path + ".layers", 0) != 0 && e.field() != path + ".input") throw;
    std::string detail = e.what();
    throw InputError(path, "the configuration describes an impossible network (" + detail.substr(detail.find(": ") + 2) + ")");
  }
  net.warnings.insert(net.warnings.begin(), warnings.begin(), warnings.end());
  return net;
}

Network from_hf_config(const Json& config, const std::string& path, const TrainingConfig& training,
                       std::int64_t seq_len, const std::string& name) {
  std::vector<std::string> warnings;
  bool vision = hf_config_is_vision(config);
  if (training.image_size && !vision) warnings.push_back("training.image_size ignored: the model takes tokens input");
  if (training.seq_len && vision) warnings.push_back("training.seq_len ignored: the model takes image input");
  Json expanded = hf_config_to_layers(config, path, vision ? 0 : seq_len, warnings, training.image_size.value_or(0));
  return network_of_generated(std::move(expanded), path, name, warnings);
}

/// The network of the architecture form (docs/MODEL_FORMAT.md), through its family's builder (the one its configs use);
/// an image family (ViT) takes training.image_size and ignores a seq_len, as a vision config does.
Network from_architecture(const Json& arch, const std::string& path, const TrainingConfig& training,
                          const std::string& name) {
  std::vector<std::string> warnings;
  bool vision = hf::architecture_is_image(arch, path);
  if (training.image_size && !vision) warnings.push_back("training.image_size ignored: the model takes tokens input");
  if (training.seq_len && vision) warnings.push_back("training.seq_len ignored: the model takes image input");
  Json expanded = hf::architecture_to_layers(arch, path, vision ? 0 : training.seq_len.value_or(0), warnings,
                                             training.image_size.value_or(0));
  return network_of_generated(std::move(expanded), path, name, warnings);
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> list = [] {
    std::vector<Preset> out;
    for (const auto& embedded : embedded_presets()) out.push_back(parse_preset(embedded.id, embedded.json));
    return out;
  }();
  return list;
}

const Preset* find_preset(const std::string& id) {
  for (const auto& p : presets()) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

namespace {

/// The network of preset `id` under the request's name and size overrides (the only inputs it depends on).
Network build_preset(const std::string& id, const std::string& name, const TrainingConfig& training,
                     const std::string& path) {
  const Preset* preset = find_preset(id);
  if (!preset) {
    std::string ids;
    for (const auto& p : presets()) ids += (ids.empty() ? "" : ", ") + p.id;
    throw InputError(join(path, "preset"), "unknown preset \"" + id + "\"; expected one of " + ids);
  }
  if (preset->model.contains("hf_config")) {
    std::int64_t seq = training.seq_len.value_or(preset->input.value("seq_len", std::int64_t{0}));
    return from_hf_config(preset->model["hf_config"], "presets." + id, training, seq, name.empty() ? id : name);
  }
  Json layered = preset->model;
  layered["input"] = preset->input;
  layered["name"] = name.empty() ? id : name;
  try {
    return parse_layer_list(layered, "presets." + id, overrides_of(training));
  } catch (const InputError& e) {
    // A built-in preset only fails through the user's size override; name that field, not the preset's insides.
    const char* field = training.image_size ? "training.image_size" : training.seq_len ? "training.seq_len" : nullptr;
    if (!field) throw;
    std::string detail = e.what();
    throw InputError(field, "does not fit preset " + id + ": " + detail.substr(detail.find(": ") + 2));
  }
}

/// build_preset, remembered: building a large preset from its configuration (Llama-2-70B: 565 layers)
/// cost as much as the rest of a prediction's core work, and the page asks for the same few models
/// again and again. Successes only, a few entries; thread_local because the trainer runs jobs on threads.
Network resolve_preset(const std::string& id, const std::string& name, const TrainingConfig& training,
                       const std::string& path) {
  constexpr std::size_t kEntries = 8;
  thread_local std::vector<std::pair<std::string, Network>> cache;
  auto part = [](const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : std::string("-"); };
  // Lengths first, so no id or name (any text) can make two different requests share a key.
  const std::string key = std::to_string(id.size()) + ':' + id + std::to_string(name.size()) + ':' + name +
                          part(training.seq_len) + ',' + part(training.image_size);
  for (const auto& [k, net] : cache) {
    if (k == key) return net;
  }
  Network net = build_preset(id, name, training, path);
  if (cache.size() == kEntries) cache.erase(cache.begin());
  cache.emplace_back(key, net);
  return net;
}

/// The network of the model form `form` (one of model_forms()) that `model` holds.
Network network_of_form(const std::string& form, const Json& model, const TrainingConfig& training) {
  const std::string path = "model";
  std::string name = get_string(model, "name", path, "");
  if (form == "preset") return resolve_preset(require_string(model, "preset", path), name, training, path);
  if (form == "hf_config") {
    return from_hf_config(model["hf_config"], join(path, "hf_config"), training, training.seq_len.value_or(0), name);
  }
  if (form == "architecture") {
    return from_architecture(model["architecture"], join(path, "architecture"), training, name);
  }
  if (form == "keras" || form == "onnx_base64") {
    Network net = form == "keras"
                      ? keras_to_network(model["keras"], join(path, "keras"), overrides_of(training))
                      : onnx_to_network(model["onnx_base64"], join(path, "onnx_base64"), overrides_of(training));
    if (!name.empty()) net.name = name;
    return net;
  }
  return parse_layer_list(model, path, overrides_of(training));
}

/// Warns when the request sets a memory format for a network without convolutions, where it changes nothing.
void warn_unused_memory_format(Network& net, const TrainingConfig& training) {
  if (!training.memory_format) return;
  const bool any = std::any_of(net.layers.begin(), net.layers.end(),
                               [](const Layer& layer) { return layer.type == LayerType::Conv2d; });
  if (!any) net.warnings.push_back("training.memory_format ignored: the model has no convolutions");
}

/// The network the request's model describes, in whichever form it came.
Network resolve_model_form(const Json& model, const TrainingConfig& training) {
  const std::string path = "model";
  require_object(model, path);
  std::vector<std::string> keys;
  for (const ModelForm& form : model_forms()) keys.emplace_back(form.key);
  int forms = 0;
  for (const auto& key : keys) forms += static_cast<int>(model.contains(key));
  keys.insert(keys.end(), {"input", "name"});
  if (model.contains("layers")) keys.emplace_back("mtp_block");  // the project's own format states it
  reject_unknown_keys(model, path, keys);
  if (forms != 1) throw InputError(path, "expected exactly one of " + model_form_list());
  Network net = network_of_form(model_form_of(model), model, training);
  warn_unused_memory_format(net, training);
  for (std::string& warning : fp8_recipe_warnings(training)) net.warnings.push_back(std::move(warning));
  return net;
}

}  // namespace

Network resolve_model(const Json& model, const TrainingConfig& training) {
  Network net = resolve_model_form(model, training);
  if (fused_attention(training.attention)) {
    for (const Layer& layer : net.layers) {
      if (layer.type != LayerType::Attention) continue;
      if (layer.attrs.relative) {
        const char* value = training.attention == AttentionKernel::Flash2 ? "\"flash2\"" : "\"flash\"";
        throw InputError("training.attention", std::string(value) + " cannot time layer \"" + printable(layer.name) +
                                                   "\": relative-position attention (Transformer-XL) adds a second "
                                                   "score matrix no fused kernel computes; use \"eager\"");
      }
    }
  }
  apply_mtp(net, training);
  apply_bf16_layers(net, training);
  apply_bf16_modules(net, training);
  apply_finetune(net, training);
  return net;
}

Json catalog_document() {
  Json hardware = Json::array();
  for (const auto& acc : hardware_catalogue()) hardware.push_back(acc.record);
  Json preset_list = Json::array();
  for (const auto& p : presets()) {
    Network net = resolve_model({{"preset", p.id}}, TrainingConfig{});
    preset_list.push_back({{"id", p.id},
                           {"name", p.name},
                           {"family", p.family},
                           {"source", p.source},
                           {"input", p.input},
                           {"parameters", net.parameters()},
                           {"published_parameters", p.published_parameters}});
  }
  return {{"version", version()},
          {"hardware", hardware},
          {"presets", preset_list},
          {"precisions", precision_names()},
          {"optimizers", optimizer_names()},
          {"options", options_catalogue()},
          {"parallel_options", parallel_options_catalogue()},
          {"model_forms", model_forms_catalogue()},
          {"hf_model_types", hf_model_types_catalogue()},
          {"limits", limits_catalogue()},
          {"plan_limits", {{"time_scale", {{"min", kMinTimeScale}, {"max", kMaxTimeScale}}}}}};
}

}  // namespace prenet
