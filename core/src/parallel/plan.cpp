// Plan mode (docs/API.md, "Plan"): every parallel layout of a model on 1..max_gpus accelerators of each
// requested kind that fits in memory, ranked by training time and by cost.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/memory.hpp"
#include "prenet/parallel.hpp"
#include "prenet/request.hpp"
#include "prenet/roofline.hpp"
#include "prenet/version.hpp"

namespace prenet {
namespace {

std::string dump(const Json& doc) { return doc.dump(-1, ' ', false, Json::error_handler_t::replace); }

double round6(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  double scale = std::pow(10.0, 5 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

double d(std::int64_t v) { return static_cast<double>(v); }

struct PlanOptions {
  std::int64_t max_gpus = 1024, min_gpus = 1, top = 10;
  std::optional<double> tokens, samples;
  std::map<std::string, double> time_scale;  // accelerator id -> learned / roofline step ratio
};

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
      o.time_scale[it.key()] = require_number(ts, it.key(), "plan.time_scale", 1e-3, 1e3);
    }
  }
  return o;
}

struct Layout {
  ParallelConfig cfg;
  double step_ms = 0, total_s = 0, memory_gb = 0, mfu = 0;
  std::optional<double> cost_usd;
};

Json layout_json(const Layout& l) {
  return {{"gpus", l.cfg.gpus},
          {"data", l.cfg.data},
          {"tensor", l.cfg.tensor},
          {"pipeline", l.cfg.pipeline},
          {"micro_batch_size", l.cfg.micro_batch_size},
          {"micro_batches", l.cfg.micro_batches},
          {"zero_stage", l.cfg.zero_stage},
          {"recompute", to_string(l.cfg.recompute)},
          {"sequence_parallel", l.cfg.sequence_parallel},
          {"step_ms", round6(l.step_ms)},
          {"total_s", round6(l.total_s)},
          {"cost_usd", l.cost_usd ? Json(round6(*l.cost_usd)) : Json()},
          {"memory_gb", round6(l.memory_gb)},
          {"mfu", round6(l.mfu)}};
}

/// The fastest and the cheapest `top` layouts of `all`.
Json ranked(std::vector<Layout>& all, std::int64_t top, bool by_cost) {
  auto key = [by_cost](const Layout& l) { return by_cost ? l.cost_usd.value_or(INFINITY) : l.total_s; };
  auto k = std::min<std::size_t>(all.size(), static_cast<std::size_t>(top));
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
                    [&](const Layout& a, const Layout& b) {
                      double ka = key(a), kb = key(b);
                      if (ka != kb) return ka < kb;
                      return a.total_s != b.total_s ? a.total_s < b.total_s : a.cfg.gpus < b.cfg.gpus;
                    });
  Json out = Json::array();
  for (std::size_t i = 0; i < k; ++i) out.push_back(layout_json(all[i]));
  return out;
}

/// Powers of two from 1 up to `limit`.
std::vector<std::int64_t> powers(std::int64_t limit) {
  std::vector<std::int64_t> v;
  for (std::int64_t x = 1; x <= limit; x *= 2) v.push_back(x);
  return v;
}

Json plan_document(const Json& doc) {
  require_object(doc, "request");
  PlanOptions opt = parse_plan(doc);
  Json base = doc;
  base.erase("plan");
  // `parallel` in a plan request only sets the fabric; the layouts are what the plan searches.
  ParallelConfig fabric_cfg;
  if (base.contains("parallel") && !base["parallel"].is_null()) {
    const Json& par = require_object(base["parallel"], "parallel");
    reject_unknown_keys(par, "parallel", {"gpus_per_node", "intra_node", "inter_node"});
    fabric_cfg = parse_parallel(par, std::nullopt);
    base.erase("parallel");
  }
  Request req = parse_request(base);
  const TrainingConfig& tr = req.training;
  Network net = resolve_model(req.model, tr);
  const std::int64_t B = tr.batch_size;
  const bool tokens_in = net.input.kind == InputKind::Tokens || net.input.kind == InputKind::Sequence;
  double samples = 0;
  if (opt.tokens) {
    if (!tokens_in) throw InputError("plan.tokens", "the model does not read sequences; give plan.samples");
    samples = *opt.tokens / d(net.input.seq_len);
  } else if (opt.samples) {
    samples = *opt.samples;
  } else {
    samples = d(tr.dataset_size > 0 ? tr.dataset_size : B * 100) * tr.epochs;
  }
  const double steps = std::ceil(samples / d(B));
  const StepWork one = step_work(net, 1, kernel_context(tr), tr.optimizer, tr.optimizer_impl);
  double matmul_per_sample = 0;
  for (const Kernel& k : one.kernels) {
    if (is_matmul(k.cls)) matmul_per_sample += k.flops;
  }
  const std::size_t n = net.layers.size();

  Json results = Json::array();
  for (const Accelerator& acc : req.hardware) {
    const Fabric fabric = resolve_fabric(acc, fabric_cfg);
    const double scale = opt.time_scale.count(acc.id) ? opt.time_scale.at(acc.id) : 1.0;
    const double peak = matmul_peak_tflops(acc, tr.precision, KernelClass::Gemm) * 1e12;
    std::vector<Layout> fitting;
    std::size_t considered = 0;
    const std::int64_t max_tensor = std::min<std::int64_t>({opt.max_gpus, fabric.gpus_per_node, 64});
    for (std::int64_t t : powers(max_tensor)) {
      // Sequence parallelism is always on where the sequence splits: in this model it divides the
      // replicated layers' time and activations by t for the same tensor traffic, so it is never worse.
      std::optional<ShardedNetwork> shard;
      bool sequence_parallel = t > 1;
      try {
        try {
          shard = shard_network(net, t, sequence_parallel);
        } catch (const InputError& e) {
          if (!sequence_parallel || e.field() != "parallel.sequence_parallel") throw;
          sequence_parallel = false;
          shard = shard_network(net, t);
        }
      } catch (const InputError&) {
        continue;  // the model does not split that way
      }
      for (std::int64_t mbs : powers(std::min<std::int64_t>(B, 64))) {
        if (B % mbs != 0) continue;
        StepWork work = step_work(shard->net, mbs, kernel_context(tr), tr.optimizer, tr.optimizer_impl);
        const Timing timing = roofline_times(work, {acc}, tr.precision).front();
        // Recomputed forward per layer: attention's core (selective) or whole blocks (full).
        std::vector<double> selective(n, 0.0);
        for (const Kernel& k : work.kernels) {
          const auto l = static_cast<std::size_t>(k.layer);
          const Layer& L = shard->net.layers[l];
          if (k.phase == Phase::Forward && recomputed_selectively(L, k, work.context)) {
            selective[l] += kernel_time(k, acc, tr.precision).total_ms();
          }
        }
        for (Recompute rc : {Recompute::None, Recompute::Selective, Recompute::Full}) {
          std::vector<std::array<double, 3>> layer_ms(n);
          for (std::size_t l = 0; l < n; ++l) {
            const auto& ms = timing.layers[l].ms;
            double extra = rc == Recompute::Selective                           ? selective[l]
                           : rc == Recompute::Full && shard->layers[l].in_block ? ms[0]
                                                                                : 0.0;
            layer_ms[l] = {ms[0] * scale, (ms[1] + extra) * scale, ms[2] * scale};
          }
          std::vector<double> saved = saved_activation_bytes(*shard, work, rc, mbs, tr.precision);
          std::vector<double> none = saved_activation_bytes(*shard, work, Recompute::None, mbs, tr.precision);
          for (std::int64_t p : powers(std::min<std::int64_t>(opt.max_gpus / t, 256))) {
            if (static_cast<std::size_t>(p) > n) break;
            ParallelConfig cfg = fabric_cfg;
            cfg.tensor = t;
            cfg.pipeline = p;
            cfg.micro_batch_size = mbs;
            cfg.recompute = rc;
            cfg.sequence_parallel = sequence_parallel;
            const StagePlan sp = plan_stages(layer_ms, *shard, cfg, fabric, tr.precision);
            std::vector<StageInputs> inputs;
            for (std::size_t s = 0; s + 1 < sp.bounds.size(); ++s) {
              inputs.push_back(stage_inputs(*shard, saved, none, sp.bounds[s], sp.bounds[s + 1]));
            }
            for (std::int64_t dp : powers(opt.max_gpus / (t * p))) {
              const std::int64_t gpus = dp * t * p;
              if (gpus < opt.min_gpus || B % (dp * mbs) != 0) continue;
              cfg.data = dp;
              cfg.gpus = gpus;
              cfg.micro_batches = B / (dp * mbs);
              for (int zero = 0; zero <= (dp > 1 ? 3 : 0); ++zero) {
                cfg.zero_stage = zero;
                ++considered;
                double memory = 0;
                for (std::size_t s = 0; s < inputs.size(); ++s) {
                  memory = std::max(memory, stage_memory(inputs[s], s, cfg, tr.precision, tr.optimizer).total_gb());
                }
                if (memory > acc.memory_gb) continue;
                const ParallelTiming pt = finish_parallel(sp, cfg, fabric, tr.precision);
                Layout l;
                l.cfg = cfg;
                l.step_ms = pt.step_ms();
                l.total_s = steps * l.step_ms / 1e3;
                l.memory_gb = memory;
                l.mfu = matmul_per_sample * d(B) / (l.step_ms / 1e3 * peak * d(gpus));
                if (acc.price_per_hour_usd) l.cost_usd = l.total_s / 3600 * *acc.price_per_hour_usd * d(gpus);
                fitting.push_back(l);
              }
            }
          }
        }
      }
    }
    std::size_t fit_count = fitting.size();
    Json by_time = ranked(fitting, opt.top, false);
    Json by_cost = acc.price_per_hour_usd ? ranked(fitting, opt.top, true) : Json::array();
    results.push_back({{"hardware", acc.id},
                       {"name", acc.name},
                       {"device_memory_gb", acc.memory_gb},
                       {"price_per_hour_usd", acc.price_per_hour_usd ? Json(*acc.price_per_hour_usd) : Json()},
                       {"time_scale", scale},
                       {"links",
                        {{"gpus_per_node", fabric.gpus_per_node},
                         {"intra_node", {{"kind", fabric.intra.kind}, {"bandwidth_gbs", fabric.intra.bandwidth_gbs}}},
                         {"inter_node", {{"kind", fabric.inter.kind}, {"bandwidth_gbs", fabric.inter.bandwidth_gbs}}}}},
                       {"layouts_considered", considered},
                       {"layouts_fitting", fit_count},
                       {"by_time", by_time},
                       {"by_cost", by_cost}});
  }
  Json plan = {{"samples", samples}, {"steps", steps}, {"max_gpus", opt.max_gpus}, {"min_gpus", opt.min_gpus}};
  if (opt.tokens) plan["tokens"] = *opt.tokens;
  Json training = {{"batch_size", B},
                   {"precision", to_string(tr.precision)},
                   {"optimizer", to_string(tr.optimizer)},
                   {"optimizer_impl", to_string(tr.optimizer_impl)},
                   {"attention", to_string(tr.attention)},
                   {"kernels", to_string(tr.kernels)}};
  if (tokens_in) training["seq_len"] = net.input.seq_len;
  return {{"version", version()},
          {"predictor", opt.time_scale.empty() ? "roofline" : "roofline-scaled"},
          {"model", {{"name", net.name}, {"parameters", net.parameters()}, {"layer_count", n}}},
          {"training", training},
          {"plan", plan},
          {"results", results}};
}

}  // namespace

std::string plan_json(const std::string& request_text) {
  try {
    return dump(plan_document(parse_json_text(request_text, "request")));
  } catch (const InputError& e) {
    return dump({{"error", {{"field", e.field()}, {"message", e.what()}}}});
  } catch (const std::exception& e) {
    return dump({{"error", {{"field", "request"}, {"message", std::string("request: internal error: ") + e.what()}}}});
  }
}

}  // namespace prenet
