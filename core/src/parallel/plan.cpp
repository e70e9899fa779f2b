#include "parallel/plan.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "parallel/context.hpp"
#include "parallel/expert.hpp"
#include "parallel/layout.hpp"
#include "parallel/offload.hpp"
#include "prenet/catalog.hpp"
#include "prenet/host_issue.hpp"
#include "prenet/roofline.hpp"
#include "request/plan_limits.hpp"
#include "response/result.hpp"

namespace prenet {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

PlanOptions parse_plan(const Json& doc) {
  PlanOptions o;
  if (!doc.contains("plan") || doc["plan"].is_null()) return o;
  const std::string path = "plan";
  const Json& p = require_object(doc["plan"], path);
  reject_unknown_keys(p, path, {"max_gpus", "min_gpus", "tokens", "samples", "top", "time_scale"});
  o.max_gpus = get_int(p, "max_gpus", path, 1024, 1, 1 << 16);
  o.min_gpus = get_int(p, "min_gpus", path, 1, 1, o.max_gpus);
  o.top = get_int(p, "top", path, 10, 1, 100);
  if (p.contains("tokens") && !p["tokens"].is_null()) o.tokens = require_number(p, "tokens", path, 1, 1e18);
  if (p.contains("samples") && !p["samples"].is_null()) o.samples = require_number(p, "samples", path, 1, 1e18);
  if (o.tokens && o.samples) throw InputError("plan.samples", "give tokens or samples, not both");
  if (p.contains("time_scale") && !p["time_scale"].is_null()) {
    const Json& ts = require_object(p["time_scale"], "plan.time_scale");
    for (auto it = ts.begin(); it != ts.end(); ++it) {
      o.time_scale[it.key()] = require_number(ts, it.key(), "plan.time_scale", kMinTimeScale, kMaxTimeScale);
    }
  }
  return o;
}

/// The links of a plan request: its `parallel` section may set only those (the layouts are what the plan
/// searches). Removes the section from `base`.
ParallelConfig fabric_config(Json& base) {
  ParallelConfig fabric_cfg;
  if (base.contains("parallel") && !base["parallel"].is_null()) {
    const Json& par = require_object(base["parallel"], "parallel");
    reject_unknown_keys(par, "parallel", {"gpus_per_node", "intra_node", "inter_node"});
    fabric_cfg = parse_parallel(par, std::nullopt);
    base.erase("parallel");
  }
  return fabric_cfg;
}

/// Samples of the whole run: plan.tokens over the sequence, plan.samples, or the training's epochs.
double run_samples(const PlanOptions& opt, const Network& net, const TrainingConfig& tr) {
  const bool tokens_in = net.input.kind == InputKind::Tokens || net.input.kind == InputKind::Sequence;
  if (opt.tokens) {
    if (!tokens_in) throw InputError("plan.tokens", "the model does not read sequences; give plan.samples");
    return *opt.tokens / d(net.input.seq_len);
  }
  if (opt.samples) return *opt.samples;
  return d(tr.dataset_size > 0 ? tr.dataset_size : tr.batch_size * 100) * tr.epochs;
}

/// Powers of two from 1 up to `limit`.
std::vector<std::int64_t> powers(std::int64_t limit) {
  std::vector<std::int64_t> v;
  for (std::int64_t x = 1; x <= limit; x *= 2) v.push_back(x);
  return v;
}

/// Calls `visit` with each data degree and ZeRO stage of `cfg` (its tensor, pipeline and micro-batch size
/// set) that splits the global batch `batch` on min_gpus..max_gpus GPUs.
template <typename Visit>
void for_each_replication(ParallelConfig cfg, const PlanOptions& opt, std::int64_t batch, Visit&& visit) {
  const std::int64_t t = cfg.tensor * cfg.context, p = cfg.pipeline, mbs = cfg.micro_batch_size;
  for (std::int64_t dp : powers(opt.max_gpus / (t * p))) {
    const std::int64_t gpus = dp * t * p;
    if (gpus < opt.min_gpus || batch % (dp * mbs) != 0) continue;
    if ((t * dp) % cfg.expert != 0) continue;  // parallel.expert: carved out of tensor x context x data ranks
    cfg.data = dp;
    cfg.gpus = gpus;
    cfg.micro_batches = batch / (dp * mbs);
    for (int zero = 0; zero <= (dp > 1 ? 3 : 0); ++zero) {
      cfg.zero_stage = zero;
      visit(cfg);
    }
  }
}

/// The most model chunks per stage plan mode tries (powers of two up to it).
constexpr std::int64_t kMaxPlanVirtualStages = 4;

/// Context degrees plan mode tries at tensor degree `t`: 1, and for sequences of at least
/// kPlanContextMinSequence positions the powers of two up to 16 whose 2c chunks split the sequence.
std::vector<std::int64_t> context_degrees(std::int64_t sequence, std::int64_t t, const PlanOptions& opt) {
  std::vector<std::int64_t> out{1};
  if (sequence < kPlanContextMinSequence) return out;
  for (std::int64_t c = 2; c <= 16 && t * c <= opt.max_gpus && sequence % (2 * c) == 0; c *= 2) out.push_back(c);
  return out;
}

/// Calls `visit` with every layout plan mode considers, in search order: tensor degree, context degree,
/// expert degree, micro-batch size, recomputation, pipeline degree, virtual stages, then for_each_replication.
/// Sequence parallelism is on wherever the
/// sequence splits: in this model it divides the replicated layers' time and activations by the tensor
/// degree for the same tensor traffic, so it is never worse. Degrees the network does not split into are
/// skipped.
template <typename Visit>
void for_each_layout(LayoutEvaluator& layouts, const ParallelConfig& base, const PlanOptions& opt, std::int64_t batch,
                     std::size_t layers, std::int64_t gpus_per_node, std::int64_t fewest_experts, std::int64_t sequence,
                     Visit&& visit) {
  ParallelConfig cfg = base;
  for (std::int64_t t : powers(std::min<std::int64_t>({opt.max_gpus, gpus_per_node, 64}))) {
    // Context parallelism (parallel.context): only for long sequences, and only at micro-batch size 1 (the
    // long-context recipes' choice: a larger micro-batch multiplies the activations context parallelism cuts).
    for (std::int64_t c : context_degrees(sequence, t, opt)) {
      cfg.context = c;
      cfg.tensor = t;
      cfg.sequence_parallel = t > 1;
      cfg.expert = 1;
      if (!layouts.shard(cfg) && cfg.sequence_parallel) cfg.sequence_parallel = false;
      if (!layouts.shard(cfg)) continue;
      // parallel.expert (issue 18): expert degrees 1, 2, 4, ... only for networks with experts, up to the fewest
      // experts of a layer (whole experts, folded over tensor x context x data, with sequence parallelism at
      // tensor > 1); shard() skips the ones that do not divide every layer's experts or lack sequence parallelism,
      // for_each_replication the data degrees whose stage ranks they do not divide.
      const std::int64_t max_expert = std::min<std::int64_t>(fewest_experts, opt.max_gpus);
      for (std::int64_t ep : powers(std::max<std::int64_t>(max_expert, 1))) {
        cfg.expert = ep;
        if (!layouts.shard(cfg)) continue;
        const std::int64_t blocks = block_count(*layouts.shard(cfg));
        for (std::int64_t mbs : powers(std::min<std::int64_t>(c > 1 ? 1 : batch, 64))) {
          if (batch % mbs != 0) continue;
          cfg.micro_batch_size = mbs;
          // Recomputation: op-level too; recompute_every is not searched (every block checkpointed under full).
          cfg.recompute_every = 1;
          for (Recompute rc : {Recompute::None, Recompute::Selective, Recompute::Full, Recompute::Ops}) {
            cfg.recompute = rc;
            for (std::int64_t p : powers(std::min<std::int64_t>(opt.max_gpus / (t * c), 256))) {
              if (static_cast<std::size_t>(p) > layers) break;
              cfg.pipeline = p;
              // Interleaved 1F1B (parallel.virtual_stages): v chunks per stage where v divides the blocks per
              // stage, and only with micro-batches a multiple of the pipeline (check_virtual_stages).
              for (std::int64_t v :
                   powers(std::clamp<std::int64_t>(p > 1 ? blocks / p : 1, 1, kMaxPlanVirtualStages))) {
                if (v > 1 && blocks % (p * v) != 0) continue;
                cfg.virtual_stages = v;
                for_each_replication(cfg, opt, batch, [&visit](const ParallelConfig& l) {
                  if (l.virtual_stages == 1 || l.micro_batches % l.pipeline == 0) visit(l);
                });
              }
            }
          }
        }
      }
    }
  }
}

/// The layouts of one accelerator kind that fit, evaluated one by one: the per-layer times of a shard,
/// micro-batch size and recomputation, and the stage split of a pipeline degree, are kept for the layouts
/// after them that share them (for_each_layout varies the data degree and ZeRO stage fastest).
class AcceleratorSearch {
 public:
  AcceleratorSearch(const Network& net, const TrainingConfig& tr, const Accelerator& acc, const Fabric& fabric,
                    double scale, double steps, double matmul_per_sample)
      : layouts_(net, tr, acc),
        tr_(tr),
        acc_(acc),
        fabric_(fabric),
        scale_(scale),
        steps_(steps),
        matmul_per_sample_(matmul_per_sample),
        peak_(matmul_peak_tflops(acc, tr.precision, KernelClass::Gemm) * 1e12) {}

  LayoutEvaluator& layouts() { return layouts_; }

  /// Counts layout `cfg` and keeps it if its fullest GPU fits.
  void consider(const ParallelConfig& cfg) {
    // FSDP's accounting is its own sharding (check_state_accounting): only its fully sharded layouts.
    if (tr_.state_accounting == StateAccounting::Fsdp && cfg.data > 1 && cfg.zero_stage != 3) return;
    ++considered;
    const StagePlan& sp = stages(cfg);
    const double memory = layouts_.fullest_gb(cfg, sp.bounds);
    if (memory > acc_.memory_gb) return;
    const ParallelTiming pt = finish_parallel(sp, cfg, fabric_, tr_.precision);
    Layout l;
    l.cfg = cfg;
    l.step_ms = std::max(pt.step_ms(), tr_.input_ms_per_step(cfg.data));  // training.input_rate's floor
    l.total_s = steps_ * l.step_ms / 1e3;
    l.memory_gb = memory;
    l.mfu = matmul_per_sample_ * d(tr_.batch_size) / (l.step_ms / 1e3 * peak_ * d(cfg.gpus));
    if (acc_.price_per_hour_usd) l.cost_usd = l.total_s / 3600 * *acc_.price_per_hour_usd * d(cfg.gpus);
    fitting.push_back(l);
  }

  std::size_t considered = 0;
  std::vector<Layout> fitting;

 private:
  /// Per layer, one micro-batch's forward, backward (with what cfg.recompute repeats) and optimizer time,
  /// scaled by the plan's time scale.
  const std::vector<std::array<double, 3>>& layer_ms(const ParallelConfig& cfg) {
    const std::array<std::int64_t, 6> key = {cfg.tensor,           cfg.sequence_parallel,
                                             cfg.expert,           cfg.context,
                                             cfg.micro_batch_size, static_cast<std::int64_t>(cfg.recompute)};
    if (layer_key_ == key) return layer_ms_;
    const Timing& timing = layouts_.roofline(cfg);
    const ShardedNetwork& shard = *layouts_.shard(cfg);
    const std::vector<double> extra =
        recompute_ms(shard, layouts_.work(cfg), timing, cfg.recompute, acc_, tr_.precision, 1, cfg.recompute_modules);
    layer_ms_.resize(timing.layers.size());
    for (std::size_t l = 0; l < layer_ms_.size(); ++l) {
      const auto& ms = timing.layers[l].ms;
      layer_ms_[l] = {ms[0] * scale_, (ms[1] + extra[l]) * scale_, ms[2] * scale_};
    }
    layer_key_ = key;
    return layer_ms_;
  }

  /// The stage split and sums of cfg's pipeline (independent of the data degree and ZeRO stage).
  const StagePlan& stages(const ParallelConfig& cfg) {
    const std::array<std::int64_t, 8> key = {cfg.tensor,           cfg.sequence_parallel,
                                             cfg.expert,           cfg.context,
                                             cfg.micro_batch_size, static_cast<std::int64_t>(cfg.recompute),
                                             cfg.pipeline,         cfg.virtual_stages};
    if (stage_key_ != key) {
      const ShardedNetwork& shard = *layouts_.shard(cfg);
      const std::vector<double> ring =
          context_ring_ms(shard, layouts_.work(cfg), cfg, fabric_, acc_, tr_.precision, scale_);
      stage_plan_ = plan_stages(layer_ms(cfg), shard, cfg, fabric_, tr_.precision, ring);
      floor_at_host(stage_plan_, layer_host_ms(layouts_.work(cfg), tr_));
      stage_key_ = key;
    }
    return stage_plan_;
  }

  LayoutEvaluator layouts_;
  const TrainingConfig& tr_;
  const Accelerator& acc_;
  const Fabric& fabric_;
  const double scale_, steps_, matmul_per_sample_, peak_;
  std::optional<std::array<std::int64_t, 6>> layer_key_;
  std::vector<std::array<double, 3>> layer_ms_;
  std::optional<std::array<std::int64_t, 8>> stage_key_;
  StagePlan stage_plan_;
};

/// The `top` fastest (or, `by_cost`, cheapest) of `all`; reorders `all`.
std::vector<Layout> ranked(std::vector<Layout>& all, std::int64_t top, bool by_cost) {
  auto key = [by_cost](const Layout& l) { return by_cost ? l.cost_usd.value_or(INFINITY) : l.total_s; };
  auto k = std::min<std::size_t>(all.size(), static_cast<std::size_t>(top));
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
                    [&](const Layout& a, const Layout& b) {
                      double ka = key(a), kb = key(b);
                      if (ka != kb) return ka < kb;
                      return a.total_s != b.total_s ? a.total_s < b.total_s : a.cfg.gpus < b.cfg.gpus;
                    });
  return std::vector<Layout>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k));
}

/// The search on accelerator `acc` of the plan so far (`plan.net`, `plan.steps`).
AcceleratorPlan search_accelerator(const Plan& plan, const Accelerator& acc, const ParallelConfig& fabric_cfg,
                                   double matmul_per_sample) {
  const TrainingConfig& tr = plan.request.training;
  const PlanOptions& opt = plan.options;
  AcceleratorPlan out{acc, resolve_fabric(acc, fabric_cfg), 1.0, 0, 0, {}, {}};
  if (opt.time_scale.count(acc.id)) out.time_scale = opt.time_scale.at(acc.id);
  AcceleratorSearch search(plan.net, tr, out.acc, out.fabric, out.time_scale, plan.steps, matmul_per_sample);
  // The search's first work (one sample, one GPU) is timed before any layout is: a precision the
  // accelerator lacks is refused even when no layout is in range.
  ParallelConfig first = fabric_cfg;
  first.tensor = first.micro_batch_size = 1;
  first.sequence_parallel = false;
  if (search.layouts().shard(first)) search.layouts().roofline(first);
  for_each_layout(search.layouts(), fabric_cfg, opt, tr.batch_size, plan.net.layers.size(), out.fabric.gpus_per_node,
                  fewest_experts(plan.net), plan.net.input.seq_len,
                  [&search](const ParallelConfig& cfg) { search.consider(cfg); });
  out.considered = search.considered;
  out.fitting = search.fitting.size();
  out.by_time = ranked(search.fitting, opt.top, false);
  if (acc.price_per_hour_usd) out.by_cost = ranked(search.fitting, opt.top, true);
  return out;
}

}  // namespace

Plan search_plan(const Json& doc) {
  require_object(doc, "request");
  Plan plan;
  plan.options = parse_plan(doc);
  Json base = doc;
  base.erase("plan");
  const ParallelConfig fabric_cfg = fabric_config(base);
  plan.request = parse_request(base);
  const TrainingConfig& tr = plan.request.training;
  if (offloads(tr)) {
    throw InputError(tr.offload != Offload::None ? "training.offload" : "training.activation_offload",
                     "the layout search does not time offload; predict a layout with parallel instead");
  }
  plan.net = resolve_model(plan.request.model, tr);
  plan.samples = run_samples(plan.options, plan.net, tr);
  plan.steps = std::ceil(plan.samples / d(tr.batch_size));
  const double matmul_per_sample =
      matmul_flops(step_work(plan.net, 1, kernel_context(tr), tr.optimizer, tr.optimizer_impl));
  for (const Accelerator& acc : plan.request.hardware) {
    plan.accelerators.push_back(search_accelerator(plan, acc, fabric_cfg, matmul_per_sample));
  }
  return plan;
}

}  // namespace prenet
