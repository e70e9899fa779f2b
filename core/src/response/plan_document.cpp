#include "response/plan_document.hpp"

#include "prenet/version.hpp"
#include "response/json_text.hpp"
#include "response/training_echo.hpp"

namespace prenet {
namespace {

Json layout_json(const Layout& l) {
  return {{"gpus", l.cfg.gpus},
          {"data", l.cfg.data},
          {"tensor", l.cfg.tensor},
          {"context", l.cfg.context},
          {"pipeline", l.cfg.pipeline},
          {"virtual_stages", l.cfg.virtual_stages},
          {"micro_batch_size", l.cfg.micro_batch_size},
          {"micro_batches", l.cfg.micro_batches},
          {"zero_stage", l.cfg.zero_stage},
          {"recompute", to_string(l.cfg.recompute)},
          {"sequence_parallel", l.cfg.sequence_parallel},
          {"expert", l.cfg.expert},
          {"step_ms", round6(l.step_ms)},
          {"total_s", round6(l.total_s)},
          {"cost_usd", l.cost_usd ? Json(round6(*l.cost_usd)) : Json()},
          {"memory_gb", round6(l.memory_gb)},
          {"mfu", round6(l.mfu)}};
}

Json layouts_json(const std::vector<Layout>& layouts) {
  Json out = Json::array();
  for (const Layout& l : layouts) out.push_back(layout_json(l));
  return out;
}

/// One accelerator kind's entry of `results`.
Json accelerator_json(const AcceleratorPlan& a) {
  const Accelerator& acc = a.acc;
  const Fabric& fabric = a.fabric;
  return {{"hardware", acc.id},
          {"name", acc.name},
          {"device_memory_gb", acc.memory_gb},
          {"price_per_hour_usd", acc.price_per_hour_usd ? Json(*acc.price_per_hour_usd) : Json()},
          {"time_scale", a.time_scale},
          {"links",
           {{"gpus_per_node", fabric.gpus_per_node},
            {"intra_node", {{"kind", fabric.intra.kind}, {"bandwidth_gbs", fabric.intra.bandwidth_gbs}}},
            {"inter_node", {{"kind", fabric.inter.kind}, {"bandwidth_gbs", fabric.inter.bandwidth_gbs}}}}},
          {"layouts_considered", a.considered},
          {"layouts_fitting", a.fitting},
          {"by_time", layouts_json(a.by_time)},
          {"by_cost", layouts_json(a.by_cost)}};
}

}  // namespace

Json plan_document(const Plan& plan) {
  const PlanOptions& opt = plan.options;
  Json results = Json::array();
  for (const AcceleratorPlan& a : plan.accelerators) results.push_back(accelerator_json(a));
  Json summary = {
      {"samples", plan.samples}, {"steps", plan.steps}, {"max_gpus", opt.max_gpus}, {"min_gpus", opt.min_gpus}};
  if (opt.tokens) summary["tokens"] = *opt.tokens;
  const Network& net = plan.net;
  return {{"version", version()},
          {"predictor", opt.time_scale.empty() ? "roofline" : "roofline-scaled"},
          {"model", {{"name", net.name}, {"parameters", net.parameters()}, {"layer_count", net.layers.size()}}},
          {"training", training_echo(plan.request.training, net.input, EchoFor::Plan)},
          {"plan", summary},
          {"results", results}};
}

}  // namespace prenet
