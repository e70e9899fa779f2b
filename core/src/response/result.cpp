#include "response/result.hpp"

#include <algorithm>

#include "parallel/offload.hpp"
#include "response/json_text.hpp"

namespace prenet {
namespace {

Json memory_json(const MemoryEstimate& mem) {
  return {{"weights_gb", round6(mem.weights_gb)},     {"gradients_gb", round6(mem.gradients_gb)},
          {"optimizer_gb", round6(mem.optimizer_gb)}, {"activations_gb", round6(mem.activations_gb)},
          {"temporary_gb", round6(mem.temporary_gb)}, {"overhead_gb", round6(mem.overhead_gb)}};
}

Json link_json(const Link& l) {
  return {{"kind", l.kind}, {"bandwidth_gbs", round6(l.bandwidth_gbs)}, {"latency_us", round6(l.latency_us)}};
}

/// Adds the learned 80% band of the step and of the whole run to result `r` (step `step_ms`).
void add_interval(Json& r, const std::array<double, 2>& interval_ms, const Timing& t, const StepParts& parts,
                  double step_ms, const TrainingConfig& training) {
  // The learned band covers the predicted compute; communication is added as predicted.
  // An input-bound step waits for the pipeline whatever the compute takes: the band is floored at its delivery;
  // a launch-bound one at the host's time to issue both passes.
  double compute = parts.compute_ms() + parts.bubble_ms, rest = parts.communication_ms() + parts.offload_ms;
  const double host_floor = parts.host_bound ? parts.host_issue_ms[0] + parts.host_issue_ms[1] : 0.0;
  const double floor = parts.input_ms > 0 ? step_ms : host_floor;
  double low = round6(std::max(compute * interval_ms[0] / t.step_ms + rest, floor));
  double high = round6(std::max(compute * interval_ms[1] / t.step_ms + rest, floor));
  r["step_ms_interval"] = {std::min(low, step_ms), std::max(high, step_ms)};
  double scale = static_cast<double>(training.steps_per_epoch()) * training.epochs / 1e3;
  r["total_s_interval"] = {std::min(low, step_ms) * scale, std::max(high, step_ms) * scale};
}

}  // namespace

double matmul_flops(const StepWork& work) {
  double total = 0;
  for (const Kernel& k : work.kernels) {
    if (is_matmul(k.cls)) total += k.flops;
  }
  return total;
}

StepParts single_gpu_parts(const Timing& t, double factor, const std::array<double, 2>& host_ms) {
  // Each phase is max(device, host) before rounding: both are non-decreasing in the work, and so is the sum.
  StepParts parts;
  parts.forward_ms = round6(std::max(t.ms[0] * factor, host_ms[0]));
  parts.backward_ms = round6(std::max(t.ms[1] * factor, host_ms[1]));
  parts.optimizer_ms = round6(t.ms[2] * factor);
  parts.host_issue_ms = {round6(host_ms[0]), round6(host_ms[1])};
  parts.host_bound = host_ms[0] > t.ms[0] * factor || host_ms[1] > t.ms[1] * factor;
  return parts;
}

StepParts with_offload(StepParts parts, double offload_ms, const TrainingConfig& training) {
  if (training.offload != Offload::None) parts.optimizer_ms = 0;
  parts.offload_ms = round6(offload_ms);
  return parts;
}

StepParts with_input(StepParts parts, const TrainingConfig& training, std::int64_t replicas) {
  parts.input_ms = round6(std::max(0.0, training.input_ms_per_step(replicas) - parts.step_ms()));
  return parts;
}

StepParts parallel_parts(const ParallelTiming& pt) {
  StepParts parts;
  parts.forward_ms = round6(pt.forward_ms);
  parts.backward_ms = round6(pt.backward_ms);
  parts.optimizer_ms = round6(pt.optimizer_ms);
  parts.data_ms = round6(pt.data_ms);
  parts.tensor_ms = round6(pt.tensor_ms);
  parts.pipeline_ms = round6(pt.pipeline_ms);
  parts.zero_ms = round6(pt.zero_ms);
  parts.bubble_ms = round6(pt.bubble_ms);
  parts.offload_ms = round6(pt.offload_ms);
  parts.expert_ms = round6(pt.expert_ms);
  parts.context_ms = round6(pt.context_ms);
  parts.host_issue_ms = {round6(pt.host_issue_ms[0]), round6(pt.host_issue_ms[1])};
  parts.host_bound = pt.host_bound;
  return parts;
}

Json result_for(const Accelerator& acc, const Timing& t, const StepWork& work, const MemoryEstimate& mem,
                const TrainingConfig& training, const ResultExtras& extras, const StepParts& parts,
                const ParallelExtras* par) {
  // The parts are rounded once; every total derives from them so the documented identities
  // (step = forward + backward + optimizer [+ communication + bubble], epoch = steps x step) hold exactly.
  const double f = extras.calibration_factor;
  const double step_ms = parts.step_ms();
  const double gpus = par ? static_cast<double>(par->gpus) : 1.0;
  double epoch_s = static_cast<double>(training.steps_per_epoch()) * step_ms / 1e3;
  double total_s = epoch_s * training.epochs;
  double peak = matmul_peak_tflops(acc, training.precision, KernelClass::Gemm) * 1e12;
  double model_flops = par ? matmul_flops(work) * par->model_flops_scale : matmul_flops(work);
  double mfu = model_flops / (step_ms / 1e3 * peak * gpus);
  Json r = {{"hardware", acc.id},
            {"name", acc.name},
            {"custom", acc.custom},
            {"predictor", extras.predictor},
            {"step_ms", step_ms},
            {"forward_ms", parts.forward_ms},
            {"backward_ms", parts.backward_ms},
            {"optimizer_ms", parts.optimizer_ms},
            {"epoch_s", epoch_s},
            {"total_s", total_s},
            {"memory_gb", round6(mem.total_gb())},
            {"memory", memory_json(mem)},
            {"device_memory_gb", acc.memory_gb},
            {"fits", mem.total_gb() <= acc.memory_gb},
            {"price_per_hour_usd", acc.price_per_hour_usd ? Json(*acc.price_per_hour_usd) : Json()},
            {"cost_usd", acc.price_per_hour_usd ? Json(total_s / 3600 * *acc.price_per_hour_usd * gpus) : Json()},
            {"mfu", round6(mfu)},
            {"bottleneck", to_string(t.bottleneck)},
            {"time_split_ms",
             {{"compute", round6(t.compute_ms)}, {"memory", round6(t.memory_ms)}, {"overhead", round6(t.overhead_ms)}}},
            {"baselines", extras.baselines}};
  // Real tokens per second (token models): what fine-tuning reports; padding positions are work but no tokens.
  const double real_tokens = training.real_tokens_per_step();
  if (real_tokens > 0 && step_ms > 0) r["tokens_per_s"] = round6(real_tokens / (step_ms / 1e3));
  if (offloads(training) || mem.paged_gb > 0) {
    // Host memory: what this GPU's share needs, beside the host's RAM per GPU of the job on it.
    const double host_per_gpu = acc.host.memory_gb / static_cast<double>(gpus_on_host(acc.host, par ? par->gpus : 1));
    r["offload_ms"] = parts.offload_ms;
    r["memory"]["host_gb"] = round6(mem.host_gb);
    if (mem.paged_gb > 0) r["memory"]["paged_gb"] = round6(mem.paged_gb);
    r["host_memory_gb"] = round6(host_per_gpu);
    r["fits"] = mem.total_gb() <= acc.memory_gb && mem.host_gb + mem.paged_gb <= host_per_gpu;
  }
  r["host_issue_ms"] = {{"forward", parts.host_issue_ms[0]}, {"backward", parts.host_issue_ms[1]}};
  if (parts.host_bound) r["bottleneck"] = "overhead";
  if (training.input_rate) {
    r["input_ms"] = parts.input_ms;
    if (parts.input_ms > 0) r["bottleneck"] = "input";
  }
  if (extras.interval_ms && t.step_ms > 0) add_interval(r, *extras.interval_ms, t, parts, step_ms, training);
  if (f != 1.0) r["calibration_factor"] = round6(f);
  if (extras.calibration_share) r["calibration_share"] = round6(*extras.calibration_share);
  if (par) {
    r["parallel"] = par->parallel;
    if (!par->advice.is_null()) r["memory_advice"] = par->advice;
  }
  return r;
}

Json parallel_json(const ParallelConfig& cfg, const Fabric& fabric, const StepParts& parts, const ParallelTiming& pt) {
  const GroupLinks g = group_links(cfg, fabric);
  auto which = [](bool used, bool inter) { return used ? Json(inter ? "inter_node" : "intra_node") : Json(); };
  // Layers per stage: the sum of its chunks (chunk j on stage j mod stages under interleaving).
  const std::size_t chunks = pt.stage_bounds.empty() ? 0 : pt.stage_bounds.size() - 1;
  const std::size_t per_stage = static_cast<std::size_t>(std::max<std::int64_t>(pt.virtual_stages, 1));
  std::vector<std::size_t> layers(chunks / per_stage, 0);
  for (std::size_t j = 0; j < chunks; ++j) layers[j % layers.size()] += pt.stage_bounds[j + 1] - pt.stage_bounds[j];
  Json stages = Json::array();
  for (std::size_t n : layers) stages.push_back(n);
  return {{"gpus", cfg.gpus},
          {"data", cfg.data},
          {"tensor", cfg.tensor},
          {"context", cfg.context},
          {"pipeline", cfg.pipeline},
          {"virtual_stages", cfg.virtual_stages},
          {"micro_batch_size", cfg.micro_batch_size},
          {"micro_batches", cfg.micro_batches},
          {"zero_stage", cfg.zero_stage},
          {"recompute", to_string(cfg.recompute)},
          {"sequence_parallel", cfg.sequence_parallel},
          {"expert", cfg.expert},
          {"compute_ms", parts.compute_ms()},
          {"communication_ms",
           {{"data", parts.data_ms},
            {"tensor", parts.tensor_ms},
            {"pipeline", parts.pipeline_ms},
            {"zero", parts.zero_ms},
            {"expert", parts.expert_ms},
            {"context", parts.context_ms}}},
          {"bubble_ms", parts.bubble_ms},
          {"stage_layers", stages},
          {"critical_stage", pt.critical_stage},
          {"links",
           {{"gpus_per_node", fabric.gpus_per_node},
            {"intra_node", link_json(fabric.intra)},
            {"inter_node", link_json(fabric.inter)},
            {"tensor", which(cfg.tensor > 1, g.tensor_inter)},
            {"data", which(cfg.data > 1, g.data_inter)},
            {"pipeline", which(cfg.pipeline > 1, g.pipeline_inter)},
            {"context", which(cfg.context > 1, communicator(cfg, fabric, Group::Context).domains > 1)}}}};
}

}  // namespace prenet
