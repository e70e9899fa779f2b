#include "response/response.hpp"

#include <algorithm>
#include <cmath>

#include "model/hf/arch_json.hpp"
#include "parallel/context.hpp"
#include "parallel/layout.hpp"
#include "parallel/memory_advice.hpp"
#include "parallel/offload.hpp"
#include "prenet/catalog.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/host_issue.hpp"
#include "prenet/version.hpp"
#include "request/options.hpp"
#include "response/json_text.hpp"
#include "response/layer_columns.hpp"
#include "response/result.hpp"
#include "response/training_echo.hpp"
#include "timing/baselines.hpp"

namespace prenet {
namespace {

/// Each accelerator's calibration factor on its times, and the share (exponent) of the measured one's.
struct Calibrations {
  std::vector<double> factors, shares;
};

/// With `parallel`: accelerator h's per-layer times of one micro-batch (scaled by `f`) as the step of the
/// critical stage.
ParallelTiming compose(const Prepared& p, const std::vector<Timing>& main, std::size_t h, double f) {
  const ParallelConfig& cfg = *p.req.parallel;
  std::vector<std::array<double, 3>> layer_ms(main[h].layers.size());
  for (std::size_t l = 0; l < layer_ms.size(); ++l) {
    for (std::size_t k = 0; k < 3; ++k) layer_ms[l][k] = main[h].layers[l].ms[k] * f;
  }
  const Fabric fabric = resolve_fabric(p.req.hardware[h], cfg);
  const Precision precision = p.req.training.precision;
  const std::vector<double> ring = context_ring_ms(*p.shard, p.work, cfg, fabric, p.req.hardware[h], precision, f);
  const TrainingConfig& tr = p.req.training;
  ParallelTiming pt = compose_parallel(layer_ms, *p.shard, cfg, fabric, precision, ring, p.layer_host_ms);
  if (offloads(tr)) {
    // The critical stage's host traffic; the device's optimizer step moves to the CPU under training.offload.
    const HostSpec& host = p.req.hardware[h].host;
    pt.offload_ms = offload_time(stage_traffic(*p.shard, p.saved, layer_ms, pt, cfg, tr, host), tr, host).total_ms();
    if (tr.offload != Offload::None) pt.optimizer_ms = 0;
  }
  return pt;
}

Calibrations calibrations(const Prepared& p, const std::vector<Timing>& main) {
  const std::size_t H = p.req.hardware.size();
  Calibrations c{std::vector<double>(H, 1.0), std::vector<double>(H, 1.0)};
  if (!p.req.calibration) return c;
  // The measured accelerator takes the full correction; the others the share of it in log space that
  // errors of different GPUs have in common (docs/PREDICTION.md, Calibration).
  const std::size_t m = p.req.calibration->hardware_index;
  double predicted = p.req.parallel ? compose(p, main, m, 1.0).step_ms() : main[m].step_ms;
  double f = p.req.calibration->step_ms / predicted;
  for (std::size_t h = 0; h < H; ++h) {
    c.shares[h] = h == m ? 1.0 : main[h].calibration_share;
    c.factors[h] = std::pow(f, c.shares[h]);
  }
  return c;
}

/// Accelerator h's result with `parallel`: the critical stage's step, the fullest GPU, and advice when
/// that GPU does not fit.
Json parallel_result(const Prepared& p, const std::vector<Timing>& main, std::size_t h, const ResultExtras& extras) {
  const TrainingConfig& tr = p.req.training;
  const ParallelConfig& cfg = *p.req.parallel;
  const Accelerator& acc = p.req.hardware[h];
  const Fabric fabric = resolve_fabric(acc, cfg);
  ParallelTiming pt = compose(p, main, h, extras.calibration_factor);
  MemoryEstimate mem =
      fullest_memory(stage_inputs_of(*p.shard, p.saved, p.saved_none, pt.stage_bounds, pt.virtual_stages), cfg, tr);
  pt.offload_ms += page_out_states(mem, tr, acc.memory_gb, acc.host);
  StepParts parts = with_input(parallel_parts(pt), tr, cfg.data);
  ParallelExtras px;
  px.gpus = cfg.gpus;
  double work_matmul = matmul_flops(p.work);
  px.model_flops_scale = work_matmul > 0 ? p.model_matmul_flops / work_matmul : 0.0;
  px.parallel = parallel_json(cfg, fabric, parts, pt);
  if (cfg.recompute_every > 1) px.parallel["recompute_every"] = cfg.recompute_every;  // echoed off its default only
  if (cfg.accumulate_unsharded) px.parallel["accumulate_unsharded"] = true;           // echoed off its default only
  if (cfg.pipeline_embedding_loss) px.parallel["pipeline_embedding_loss"] = true;
  if (cfg.pipeline_layout) px.parallel["pipeline_layout"] = cfg.pipeline_layout->text;
  if (cfg.overlap_param_gather) px.parallel["overlap_param_gather"] = true;  // the overlaps, likewise
  if (cfg.expert_overlap) px.parallel["expert_overlap"] = true;
  if (cfg.expert_dispatch == ExpertDispatch::Hierarchical) px.parallel["expert_dispatch"] = "hierarchical";
  if (cfg.tensor_overlap) px.parallel["tensor_overlap"] = true;
  if (cfg.recompute == Recompute::Selective && cfg.recompute_modules != kDefaultRecomputeModules) {
    Json modules = Json::array();  // echoed off its default only, in the row's order
    const std::vector<std::string>& names = recompute_module_names();
    for (std::size_t m = 0; m < names.size(); ++m) {
      if (cfg.recompute_modules & module_bit(static_cast<RecomputeModule>(m))) modules.push_back(names[m]);
    }
    px.parallel["recompute_modules"] = modules;
  }
  if (mem.total_gb() > acc.memory_gb) {
    std::vector<double> cost(main[h].layers.size());
    for (std::size_t l = 0; l < cost.size(); ++l) cost[l] = main[h].layers[l].ms[0] + main[h].layers[l].ms[1];
    LayoutEvaluator layouts(p.net, tr, acc);
    layouts.reuse(cfg, *p.shard, p.work);
    px.advice = memory_advice(layouts, cfg, acc.memory_gb, cost);
  }
  return result_for(acc, main[h], p.work, mem, tr, extras, parts, &px);
}

/// Every accelerator's result object, in the request's order.
std::vector<Json> results(const Prepared& p, const std::vector<Timing>& main,
                          const std::vector<const char*>& predictors,
                          const std::vector<std::optional<std::array<double, 2>>>& intervals, const Calibrations& cal) {
  std::vector<Json> out;
  out.reserve(main.size());
  const CtGroups groups = ct_groups(p.net, p.work);
  const double repeats = p.req.parallel ? static_cast<double>(p.req.parallel->micro_batches) : 1.0;
  for (std::size_t h = 0; h < p.req.hardware.size(); ++h) {
    const Accelerator& acc = p.req.hardware[h];
    ResultExtras extras;
    extras.baselines = baselines_for(p.net, p.work, p.roofline[h], groups, acc, p.req.training.precision, repeats);
    extras.interval_ms = intervals[h];
    extras.predictor = predictors[h];
    extras.calibration_factor = cal.factors[h];
    if (p.req.calibration) extras.calibration_share = cal.shares[h];
    if (p.req.parallel) {
      out.push_back(parallel_result(p, main, h, extras));
    } else {
      const TrainingConfig& tr = p.req.training;
      StepParts parts = single_gpu_parts(main[h], cal.factors[h], step_host_ms(p.layer_host_ms));
      double offload_ms = 0;
      if (offloads(tr)) {
        const OffloadTraffic traffic = single_gpu_traffic(p.net, p.work, main[h], cal.factors[h], tr, acc.host);
        offload_ms = offload_time(traffic, tr, acc.host).total_ms();
      }
      MemoryEstimate mem = p.mem;
      offload_ms += page_out_states(mem, tr, acc.memory_gb, acc.host);
      if (offloads(tr) || mem.paged_gb > 0) parts = with_offload(parts, offload_ms, tr);
      parts = with_input(parts, tr, 1);
      out.push_back(result_for(acc, main[h], p.work, mem, p.req.training, extras, parts, nullptr));
    }
  }
  return out;
}

Json input_summary(const InputSpec& in) {
  Json j = {{"kind", to_string(in.kind)}};
  if (in.kind == InputKind::Image) j.update({{"channels", in.channels}, {"image_size", in.image_size}});
  if (in.kind == InputKind::Tokens || in.kind == InputKind::Sequence) j["seq_len"] = in.seq_len;
  if (in.kind == InputKind::Sequence || in.kind == InputKind::Vector) j["features"] = in.features;
  return j;
}

/// The response without its results (an empty `results` array, where they are spliced in).
Json response_head(const Prepared& p, bool any_learned) {
  const Network& net = p.net;
  const std::array<double, 3>& f = p.model_flops;
  Json head = {{"version", version()},
               {"predictor", any_learned ? "learned" : "roofline"},
               {"model",
                {{"name", net.name},
                 {"source", model_form_of(p.req.model)},
                 {"parameters", net.parameters()},
                 {"layer_count", net.layers.size()},
                 {"input", input_summary(net.input)},
                 {"flops_per_step",
                  {{"forward", round6(f[0])},
                   {"backward", round6(f[1])},
                   {"optimizer", round6(f[2])},
                   {"total", round6(f[0] + f[1] + f[2])}}}}},
               {"training", training_echo(p.req.training, net.input, EchoFor::Prediction)},
               {"warnings", net.warnings},
               {"results", Json::array()}};
  // A mixture of experts: the parameters a token runs through (top_k of each MoE layer's experts).
  const std::int64_t active = net.active_parameters();
  if (active != net.parameters()) head["model"]["active_parameters"] = active;
  const std::int64_t trained = net.trainable_parameters();
  if (trained != net.parameters()) head["model"]["trainable_parameters"] = trained;
  return head;
}

/// The architecture form (docs/MODEL_FORMAT.md) of `model` when it was read from a Hugging Face config of a
/// decoder family (given directly or as a preset) or given as an architecture, named `name`; null otherwise.
Json architecture_echo(const Json& model, const std::string& name) {
  std::optional<Json> arch;
  if (model.contains("hf_config")) arch = hf::hf_config_architecture(model["hf_config"]);
  if (model.contains("architecture")) {
    arch = hf::arch_to_json(hf::arch_from_json(model["architecture"], "model.architecture"));
  }
  if (model.contains("preset") && model["preset"].is_string()) {
    const Preset* preset = find_preset(model["preset"].get<std::string>());
    if (preset && preset->model.contains("hf_config")) arch = hf::hf_config_architecture(preset->model["hf_config"]);
  }
  if (!arch) return nullptr;
  (*arch)["name"] = name;
  return *arch;
}

/// `head` with, for a Hugging Face config, how it was read (model.reading: by its table row, or generically),
/// and for a decoder read from a config or given as an architecture, that architecture (model.architecture).
Json with_reading(Json head, const Prepared& p) {
  if (p.req.model.contains("hf_config")) head["model"]["reading"] = hf_config_reading(p.req.model["hf_config"]);
  Json arch = architecture_echo(p.req.model, p.net.name);
  if (!arch.is_null()) head["model"]["architecture"] = std::move(arch);
  return head;
}

/// `head` as text with `results` and, when `layers` is given, each result's columns and the layer
/// table (`table`) spliced in, into one buffer filled once: these responses run to megabytes.
std::string splice(const Json& head, const std::vector<Json>& results, const LayerColumns* layers,
                   const std::string& table) {
  // User text is escaped by dump(), so `"results":[]` occurs once, as the key.
  std::string text = dump(head);
  const std::string slot = "\"results\":[]";
  const std::size_t at = text.find(slot);
  std::vector<std::string> parts;
  parts.reserve(results.size());
  std::size_t size = text.size() + 2;
  for (std::size_t h = 0; h < results.size(); ++h) {
    parts.push_back(dump(results[h]));
    size += parts.back().size() + 1 + (layers ? layers->estimate() : 0);
  }
  std::string out;
  out.reserve(size);
  out.append(text, 0, at);
  out += "\"results\":[";
  for (std::size_t h = 0; h < parts.size(); ++h) {
    if (h > 0) out += ',';
    if (layers) {
      out.append(parts[h], 0, parts[h].size() - 1);  // all but the result's closing brace
      out += ",\"layers\":";
      layers->write(out, h);
      out += '}';
    } else {
      out += parts[h];
    }
  }
  out += ']';
  out.append(text, at + slot.size(), std::string::npos);
  if (layers) {
    out.pop_back();  // the response's closing brace
    out += ",\"layers\":";
    out += table;
    out += '}';
  }
  return out;
}

}  // namespace

std::string assemble(const Prepared& p, const std::vector<Timing>& main, const std::vector<const char*>& predictors,
                     const std::vector<std::optional<std::array<double, 2>>>& intervals) {
  const Calibrations cal = calibrations(p, main);
  // Per-layer results are written as text and spliced in (LayerColumns).
  std::optional<LayerColumns> layers;
  if (p.req.per_layer) layers.emplace(main, cal.factors);
  const std::vector<Json> per_accelerator = results(p, main, predictors, intervals, cal);
  const bool any_learned = std::any_of(predictors.begin(), predictors.end(),
                                       [](const char* name) { return std::string(name) == "learned"; });
  const std::string table = layers ? layers->table(p.shard ? p.shard->net : p.net, p.work) : std::string();
  return splice(with_reading(response_head(p, any_learned), p), per_accelerator, layers ? &*layers : nullptr, table);
}

}  // namespace prenet
