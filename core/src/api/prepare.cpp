#include "api/prepare.hpp"

#include <string>

#include "layers/layer_kind.hpp"
#include "model/hf/arch_json.hpp"
#include "parallel/context.hpp"
#include "parallel/expert.hpp"
#include "parallel/offload.hpp"
#include "prenet/catalog.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/host_issue.hpp"
#include "response/result.hpp"
#include "response/warnings.hpp"

namespace prenet {
namespace {

/// With `parallel`: one GPU's shard, one micro-batch of its work (with what recomputation repeats) and
/// what it keeps for backward, beside the whole model's step over the global batch.
void prepare_parallel(Prepared& p) {
  const TrainingConfig& tr = p.req.training;
  const ParallelConfig& cfg = *p.req.parallel;
  p.shard = shard_with_context(p.net, cfg, kernel_context(tr));
  if (cfg.expert > 1 && offloads(tr)) {
    throw InputError("parallel.expert",
                     "expert parallelism with training.offload or activation_offload is not "
                     "modelled; use expert 1 or no offload");
  }
  shard_experts(*p.shard, cfg.expert, kernel_context(tr));
  if (cfg.expert > 1 && cfg.tensor > 1) {
    p.net.warnings.push_back(
        "expert parallelism beside tensor " + std::to_string(cfg.tensor) +
        ": the experts are whole on each GPU (expert tensor parallel size 1, Megatron-Bridge's setting with expert "
        "parallelism) and route the GPU's 1/tensor of the sequence; Megatron-LM's own default also splits each "
        "expert over the tensor group, which is not modelled");
  }
  p.work = step_work(p.shard->net, cfg.micro_batch_size, kernel_context(tr), tr.optimizer, tr.optimizer_impl);
  StepWork whole = step_work(p.net, tr.batch_size, kernel_context(tr), tr.optimizer, tr.optimizer_impl);
  p.model_flops = whole.flops;
  p.model_matmul_flops = matmul_flops(whole);
  p.saved = saved_activation_bytes(*p.shard, p.work, cfg.recompute, cfg.micro_batch_size, cfg.recompute_every,
                                   cfg.recompute_modules);
  p.saved_none = saved_activation_bytes(*p.shard, p.work, Recompute::None, cfg.micro_batch_size);
  add_recompute_kernels(p.work, *p.shard, cfg.recompute, cfg.recompute_every, cfg.recompute_modules);
  if (cfg.pipeline > static_cast<std::int64_t>(p.net.layers.size())) {
    throw InputError("parallel.pipeline", "the network has " + std::to_string(p.net.layers.size()) +
                                              " layers, fewer than " + std::to_string(cfg.pipeline) +
                                              " pipeline stages");
  }
}

/// Says where the sequence length came from when a Hugging Face config or an architecture decided it (the
/// request set none).
void note_config_length(Prepared& p) {
  const Json& model = p.req.model;
  if (p.req.training.seq_len || p.net.input.kind != InputKind::Tokens) return;
  if (model.contains("hf_config")) {
    p.req.training.seq_len_from = hf_config_seq_source(model["hf_config"], p.net.input.seq_len);
  } else if (model.contains("architecture")) {
    p.req.training.seq_len_from = hf::architecture_seq_source(model["architecture"], p.net.input.seq_len);
  }
}

/// The roofline's timing; when the config's dtype chose a precision an accelerator lacks, the error says so
/// (the user never wrote training.precision).
std::vector<Timing> timed_at_precision(const Prepared& p) {
  const TrainingConfig& tr = p.req.training;
  try {
    return roofline_times(p.work, p.req.hardware, tr.precision);
  } catch (const InputError& e) {
    if (tr.precision_from.empty() || e.field() != "training.precision") throw;
    std::string detail = e.what();
    throw InputError(e.field(), detail.substr(detail.find(": ") + 2) + " (the precision is " + tr.precision_from +
                                    "'s; set training.precision to choose another)");
  }
}

}  // namespace

Prepared prepare(const Json& doc) {
  Prepared p{parse_request(doc), {}, {}, {}, {}, std::nullopt, {}, {}, {}, 0, {}};
  const TrainingConfig& tr = p.req.training;
  p.net = resolve_model(p.req.model, tr);
  resolve_packing(p.req.training, p.net.input.kind == InputKind::Tokens, p.net.input.seq_len);
  check_offload(tr);
  note_config_length(p);
  const std::string routing = moe_routing_note(p.net, tr);
  if (!routing.empty()) p.net.warnings.push_back(routing);
  for (std::string& note : kind_timing_notes(p.net)) p.net.warnings.push_back(std::move(note));
  if (p.req.parallel) {
    prepare_parallel(p);
  } else {
    p.work = step_work(p.net, tr.batch_size, kernel_context(tr), tr.optimizer, tr.optimizer_impl);
    p.model_flops = p.work.flops;
    p.model_matmul_flops = matmul_flops(p.work);
  }
  if (p.work.kernels.empty()) {
    throw InputError("model", "the network performs no computation (only reshapes or identities)");
  }
  p.layer_host_ms = layer_host_ms(p.work, tr);
  p.mem = estimate_memory(p.net, p.work, tr);
  p.roofline = timed_at_precision(p);
  for (std::string& w :
       misaligned_warnings(p.shard ? p.shard->net : p.net, p.work, p.req.hardware, p.roofline, tr.precision)) {
    p.net.warnings.push_back(std::move(w));
  }
  return p;
}

}  // namespace prenet
