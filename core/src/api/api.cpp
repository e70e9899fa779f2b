#include "prenet/api.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
#include "prenet/learned.hpp"
#include "prenet/memory.hpp"
#include "prenet/parallel.hpp"
#include "prenet/request.hpp"
#include "prenet/roofline.hpp"
#include "prenet/version.hpp"

namespace prenet {
namespace {

/// Serialises without ever throwing: user text with invalid UTF-8 is replaced, not rejected.
std::string dump(const Json& doc) { return doc.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json error_document(const std::string& field, const std::string& message) {
  return {{"error", {{"field", field}, {"message", message}}}};
}

/// Rounds to 6 significant digits so responses are compact and identical across platforms' last bits.
double round6(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  double scale = std::pow(10.0, 5 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

Json phase_triplet(const std::array<double, 3>& v) {
  return {{"forward", round6(v[0])}, {"backward", round6(v[1])}, {"optimizer", round6(v[2])}};
}

double matmul_flops(const StepWork& work) {
  double total = 0;
  for (const Kernel& k : work.kernels) {
    if (is_matmul(k.cls)) total += k.flops;
  }
  return total;
}

/// What a result needs besides its timing: the baselines and, for learned predictions, the 80% band.
struct ResultExtras {
  Json baselines;
  const char* predictor = "roofline";                // what timed this accelerator
  std::optional<std::array<double, 2>> interval_ms;  // of the compute the timing covers (before calibration)
  double calibration_factor = 1.0;
  std::optional<double> calibration_share;  // with a calibration: the exponent of its factor used here
};

/// One result's step in the parts of docs/API.md, each already rounded, so the parts add up exactly.
struct StepParts {
  double forward_ms = 0, backward_ms = 0, optimizer_ms = 0;
  double data_ms = 0, tensor_ms = 0, pipeline_ms = 0, zero_ms = 0, bubble_ms = 0;
  double compute_ms() const { return forward_ms + backward_ms + optimizer_ms; }
  double communication_ms() const { return data_ms + tensor_ms + pipeline_ms + zero_ms; }
  // Summed left to right in the documented order, so a reader adding the fields gets the same double.
  double step_ms() const {
    return forward_ms + backward_ms + optimizer_ms + data_ms + tensor_ms + pipeline_ms + zero_ms + bubble_ms;
  }
};

/// The parts of a result beyond one GPU's step (all absent for single-GPU requests).
struct ParallelExtras {
  std::int64_t gpus = 1;
  double model_flops_scale = 1.0;  // MFU: model matmul FLOPs of the step / those of `work`
  Json parallel;                   // the response's `parallel` object
  Json advice;                     // memory_advice, when the model does not fit
};

Json memory_json(const MemoryEstimate& mem) {
  return {{"weights_gb", round6(mem.weights_gb)},     {"gradients_gb", round6(mem.gradients_gb)},
          {"optimizer_gb", round6(mem.optimizer_gb)}, {"activations_gb", round6(mem.activations_gb)},
          {"temporary_gb", round6(mem.temporary_gb)}, {"overhead_gb", round6(mem.overhead_gb)}};
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
  if (extras.interval_ms && t.step_ms > 0) {
    // The learned band covers the predicted compute; communication is added as predicted.
    double compute = parts.compute_ms() + parts.bubble_ms, rest = parts.communication_ms();
    double low = round6(compute * (*extras.interval_ms)[0] / t.step_ms + rest);
    double high = round6(compute * (*extras.interval_ms)[1] / t.step_ms + rest);
    r["step_ms_interval"] = {std::min(low, step_ms), std::max(high, step_ms)};
    double scale = static_cast<double>(training.steps_per_epoch()) * training.epochs / 1e3;
    r["total_s_interval"] = {std::min(low, step_ms) * scale, std::max(high, step_ms) * scale};
  }
  if (f != 1.0) r["calibration_factor"] = round6(f);
  if (extras.calibration_share) r["calibration_share"] = round6(*extras.calibration_share);
  if (par) {
    r["parallel"] = par->parallel;
    if (!par->advice.is_null()) r["memory_advice"] = par->advice;
  }
  return r;
}

Json input_summary(const InputSpec& in) {
  Json j = {{"kind", to_string(in.kind)}};
  if (in.kind == InputKind::Image) j.update({{"channels", in.channels}, {"image_size", in.image_size}});
  if (in.kind == InputKind::Tokens || in.kind == InputKind::Sequence) j["seq_len"] = in.seq_len;
  if (in.kind == InputKind::Sequence || in.kind == InputKind::Vector) j["features"] = in.features;
  return j;
}

/// Which form the request's model came in (docs/API.md).
const char* model_source(const Json& model) {
  for (const char* form : {"preset", "hf_config", "keras", "onnx_base64"}) {
    if (model.contains(form)) return form;
  }
  return "layers";
}

/// Everything about a request except the timing predictor's output.
struct Prepared {
  Request req;
  Network net;         // the whole model
  StepWork work;       // what one GPU runs: the whole batch, or with `parallel` one micro-batch of its shard
  MemoryEstimate mem;  // one GPU without `parallel`
  std::vector<Timing> roofline;
  // With `parallel` only:
  std::optional<ShardedNetwork> shard;
  std::vector<double> saved, saved_none;  // per layer, one micro-batch: under the recompute mode, and without
  std::array<double, 3> model_flops{};    // the whole model's step over the global batch, by phase
  double model_matmul_flops = 0;          // of which matrix kernels (MFU's numerator)
};

/// Warns once per dense layer whose misaligned GEMMs (Kernel::misaligned) cost at least 1% of the roofline
/// step on a requested GPU, naming the width, the slowdown and the padding that avoids it (five at most).
void warn_misaligned(Prepared& p) {
  const Network& net = p.shard ? p.shard->net : p.net;
  const Precision precision = p.req.training.precision;
  std::map<int, double> slowdown_of;  // layer -> the largest slowdown among GPUs where it costs >= 1%
  for (std::size_t h = 0; h < p.req.hardware.size(); ++h) {
    const Accelerator& acc = p.req.hardware[h];
    const double slowdown = misaligned_slowdown(acc, precision);
    if (slowdown <= 1) continue;
    std::map<int, double> extra_ms;
    for (const Kernel& k : p.work.kernels) {
      if (!k.misaligned || !is_matmul(k.cls)) continue;
      Kernel aligned = k;
      aligned.misaligned = false;
      extra_ms[k.layer] += kernel_time(k, acc, precision).total_ms() - kernel_time(aligned, acc, precision).total_ms();
    }
    for (const auto& [layer, ms] : extra_ms) {
      if (ms >= 0.01 * p.roofline[h].step_ms) slowdown_of[layer] = std::max(slowdown_of[layer], slowdown);
    }
  }
  const auto step = static_cast<std::int64_t>(16 / activation_bytes(precision));
  const auto padded = [step](std::int64_t v) { return v % step == 0 ? v : v + step - v % step; };
  std::size_t named = 0;
  for (const auto& [l, slowdown] : slowdown_of) {
    if (++named > 5) break;
    const Layer& layer = net.layers[static_cast<std::size_t>(l)];
    const std::int64_t in = layer.input_shapes.front().back(), out = layer.attrs.units;
    const std::int64_t odd = out % step != 0 ? out : in;
    std::ostringstream text;
    text << "layer \"" << layer.name << "\": a width of " << odd << " is not a multiple of " << step
         << " elements, so on NVIDIA GPUs its GEMMs cannot use the aligned tensor-core kernels in "
         << to_string(precision) << " and run about " << std::fixed << std::setprecision(1) << slowdown
         << "x slower (the median measured on an H200, docs/PREDICTION.md); a width of " << padded(odd)
         << " avoids that";
    p.net.warnings.push_back(text.str());
  }
  if (slowdown_of.size() > 5) {
    p.net.warnings.push_back(std::to_string(slowdown_of.size() - 5) + " more layers have misaligned widths");
  }
}

Prepared prepare(const Json& doc) {
  Prepared p{parse_request(doc), {}, {}, {}, {}, std::nullopt, {}, {}, {}, 0};
  const TrainingConfig& tr = p.req.training;
  p.net = resolve_model(p.req.model, tr);
  if (p.req.parallel) {
    const ParallelConfig& cfg = *p.req.parallel;
    p.shard = shard_network(p.net, cfg.tensor, cfg.sequence_parallel);
    p.work = step_work(p.shard->net, cfg.micro_batch_size, kernel_context(tr), tr.optimizer, tr.optimizer_impl);
    StepWork whole = step_work(p.net, tr.batch_size, kernel_context(tr), tr.optimizer, tr.optimizer_impl);
    p.model_flops = whole.flops;
    p.model_matmul_flops = matmul_flops(whole);
    p.saved = saved_activation_bytes(*p.shard, p.work, cfg.recompute, cfg.micro_batch_size, tr.precision);
    p.saved_none = saved_activation_bytes(*p.shard, p.work, Recompute::None, cfg.micro_batch_size, tr.precision);
    add_recompute_kernels(p.work, *p.shard, cfg.recompute);
    if (cfg.pipeline > static_cast<std::int64_t>(p.net.layers.size())) {
      throw InputError("parallel.pipeline", "the network has " + std::to_string(p.net.layers.size()) +
                                                " layers, fewer than " + std::to_string(cfg.pipeline) +
                                                " pipeline stages");
    }
  } else {
    p.work = step_work(p.net, tr.batch_size, kernel_context(tr), tr.optimizer, tr.optimizer_impl);
    p.model_flops = p.work.flops;
    p.model_matmul_flops = matmul_flops(p.work);
  }
  if (p.work.kernels.empty()) {
    throw InputError("model", "the network performs no computation (only reshapes or identities)");
  }
  p.mem = estimate_memory(p.net, p.work, tr.precision, tr.optimizer);
  p.roofline = roofline_times(p.work, p.req.hardware, tr.precision);
  warn_misaligned(p);
  return p;
}

/// Layers that the PreNeT baseline times alike: same family (conv or dense) and same CO, so the same CT
/// on every accelerator. Each layer's group, and each group's first layer.
struct CtGroups {
  std::vector<std::size_t> of_layer;
  std::vector<std::size_t> first;
};
CtGroups ct_groups(const Prepared& p) {
  CtGroups g;
  g.of_layer.resize(p.net.layers.size());
  std::map<std::pair<bool, std::uint64_t>, std::size_t> index;  // by the bits of CO: equal bits, equal CT
  for (std::size_t l = 0; l < p.net.layers.size(); ++l) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &p.work.layers[l].co, sizeof bits);
    auto [it, inserted] =
        index.emplace(std::make_pair(p.net.layers[l].type == LayerType::Conv2d, bits), g.first.size());
    if (inserted) g.first.push_back(l);
    g.of_layer[l] = it->second;
  }
  return g;
}

/// The three baselines of docs/ACCURACY.md, forward and whole step, for one accelerator.
Json baselines_for(const Prepared& p, std::size_t h, const CtGroups& groups) {
  const Accelerator& acc = p.req.hardware[h];
  const Timing& roof = p.roofline[h];
  const LearnedManifest& lm = learned_manifest();
  // PreNeT-faithful: each layer's time from its CT alone (log-log fit on whole-layer measurements).
  // The fits are evaluated once per group of equal layers (exp and log per layer dominated here),
  // then added layer by layer in order, as before.
  std::vector<std::array<double, 2>> group_ms(groups.first.size());
  for (std::size_t g = 0; g < groups.first.size(); ++g) {
    const std::size_t l = groups.first[g];
    double ct = roof.layers[l].ct_ms;
    if (!(ct > 0)) continue;
    bool conv = p.net.layers[l].type == LayerType::Conv2d;
    const auto& fwd = conv ? lm.prenet_conv_forward : lm.prenet_dense_forward;
    const auto& step = conv ? lm.prenet_conv_step : lm.prenet_dense_step;
    // The fits are log-log lines through small layers; never let them undercut the layer's CT (its time at peak).
    group_ms[g] = {std::max(ct, std::exp(fwd[0] + fwd[1] * std::log(ct))),
                   std::max(ct, std::exp(step[0] + step[1] * std::log(ct)))};
  }
  double prenet_forward = 0, prenet_step = 0;
  for (std::size_t l = 0; l < p.net.layers.size(); ++l) {
    if (!(roof.layers[l].ct_ms > 0)) continue;
    prenet_forward += group_ms[groups.of_layer[l]][0];
    prenet_step += group_ms[groups.of_layer[l]][1];
  }
  // FLOPs at 40% of the dense peak for the training precision.
  double peak = matmul_peak_tflops(acc, p.req.training.precision, KernelClass::Gemm) * 1e12 * 0.4;
  const auto& flops = p.work.flops;
  // With `parallel` the work is one micro-batch of one GPU's tensor shard: the baselines run it
  // micro_batches times (no communication, no pipeline split or bubble).
  const double m = p.req.parallel ? static_cast<double>(p.req.parallel->micro_batches) : 1.0;
  return {{"roofline", {{"forward_ms", round6(roof.ms[0] * m)}, {"step_ms", round6(roof.step_ms * m)}}},
          {"prenet", {{"forward_ms", round6(prenet_forward * m)}, {"step_ms", round6(prenet_step * m)}}},
          {"flops40",
           {{"forward_ms", round6(flops[0] / peak * 1e3 * m)},
            {"step_ms", round6((flops[0] + flops[1] + flops[2]) / peak * 1e3 * m)}}}};
}

/// Memory of the fullest GPU when the layers are split into the stages `bounds`.
MemoryEstimate worst_memory(const ShardedNetwork& shard, const std::vector<double>& saved,
                            const std::vector<double>& saved_none, const std::vector<std::size_t>& bounds,
                            const ParallelConfig& cfg, const TrainingConfig& tr) {
  MemoryEstimate worst;
  for (std::size_t s = 0; s + 1 < bounds.size(); ++s) {
    MemoryEstimate m =
        estimate_stage_memory(shard, saved, saved_none, bounds[s], bounds[s + 1], s, cfg, tr.precision, tr.optimizer);
    if (s == 0 || m.total_gb() > worst.total_gb()) worst = m;
  }
  return worst;
}

Json link_json(const Link& l) {
  return {{"kind", l.kind}, {"bandwidth_gbs", round6(l.bandwidth_gbs)}, {"latency_us", round6(l.latency_us)}};
}

Json parallel_json(const ParallelConfig& cfg, const Fabric& fabric, const StepParts& parts, const ParallelTiming& pt) {
  const GroupLinks g = group_links(cfg, fabric);
  auto which = [](bool used, bool inter) { return used ? Json(inter ? "inter_node" : "intra_node") : Json(); };
  Json stages = Json::array();
  for (std::size_t s = 0; s + 1 < pt.stage_bounds.size(); ++s)
    stages.push_back(pt.stage_bounds[s + 1] - pt.stage_bounds[s]);
  return {{"gpus", cfg.gpus},
          {"data", cfg.data},
          {"tensor", cfg.tensor},
          {"pipeline", cfg.pipeline},
          {"micro_batch_size", cfg.micro_batch_size},
          {"micro_batches", cfg.micro_batches},
          {"zero_stage", cfg.zero_stage},
          {"recompute", to_string(cfg.recompute)},
          {"sequence_parallel", cfg.sequence_parallel},
          {"compute_ms", parts.compute_ms()},
          {"communication_ms",
           {{"data", parts.data_ms},
            {"tensor", parts.tensor_ms},
            {"pipeline", parts.pipeline_ms},
            {"zero", parts.zero_ms}}},
          {"bubble_ms", parts.bubble_ms},
          {"stage_layers", stages},
          {"critical_stage", pt.critical_stage},
          {"links",
           {{"gpus_per_node", fabric.gpus_per_node},
            {"intra_node", link_json(fabric.intra)},
            {"inter_node", link_json(fabric.inter)},
            {"tensor", which(cfg.tensor > 1, g.tensor_inter)},
            {"data", which(cfg.data > 1, g.data_inter)},
            {"pipeline", which(cfg.pipeline > 1, g.pipeline_inter)}}}};
}

/// Single changes to `cfg` after which the fullest GPU fits `acc`, each with its memory (docs/API.md).
Json memory_advice(const Prepared& p, const Accelerator& acc, const ParallelConfig& cfg,
                   const std::vector<double>& layer_cost) {
  const TrainingConfig& tr = p.req.training;
  const std::size_t n = p.net.layers.size();
  // Memory of `c`; nullopt when the network cannot be laid out that way.
  auto memory_of = [&](const ParallelConfig& c) -> std::optional<MemoryEstimate> {
    try {
      std::optional<ShardedNetwork> own;
      if (c.tensor != cfg.tensor || c.sequence_parallel != cfg.sequence_parallel) {
        own = shard_network(p.net, c.tensor, c.sequence_parallel);
      }
      const ShardedNetwork& shard = own ? *own : *p.shard;
      const bool same_work = !own && c.micro_batch_size == cfg.micro_batch_size;
      StepWork work = same_work
                          ? StepWork{}
                          : step_work(shard.net, c.micro_batch_size, kernel_context(tr), tr.optimizer,
                                      tr.optimizer_impl);
      const StepWork& w = same_work ? p.work : work;
      std::vector<double> saved = saved_activation_bytes(shard, w, c.recompute, c.micro_batch_size, tr.precision);
      std::vector<double> none = saved_activation_bytes(shard, w, Recompute::None, c.micro_batch_size, tr.precision);
      std::vector<double> cost = layer_cost;
      if (!same_work) {
        const Timing t = roofline_times(w, {acc}, tr.precision).front();
        for (std::size_t l = 0; l < n; ++l) cost[l] = t.layers[l].ms[0] + t.layers[l].ms[1];
      }
      std::vector<std::size_t> bounds =
          c.pipeline > 1 ? split_stages(cost, shard, c.pipeline) : std::vector<std::size_t>{0, n};
      return worst_memory(shard, saved, none, bounds, c, tr);
    } catch (const InputError&) {
      return std::nullopt;
    }
  };
  Json advice = Json::array();
  auto consider = [&](const ParallelConfig& c, Json change) {
    auto m = memory_of(c);
    if (!m || m->total_gb() > acc.memory_gb) return false;
    advice.push_back({{"change", std::move(change)}, {"gpus", c.gpus}, {"memory_gb", round6(m->total_gb())}});
    return true;
  };
  if (cfg.tensor > 1 && !cfg.sequence_parallel) {
    ParallelConfig c = cfg;
    c.sequence_parallel = true;
    consider(c, {{"sequence_parallel", true}});
  }
  for (Recompute r : {Recompute::Selective, Recompute::Full}) {
    if (static_cast<int>(r) <= static_cast<int>(cfg.recompute)) continue;
    ParallelConfig c = cfg;
    c.recompute = r;
    if (consider(c, {{"recompute", to_string(r)}})) break;
  }
  if (cfg.data > 1) {
    for (int z = cfg.zero_stage + 1; z <= 3; ++z) {
      ParallelConfig c = cfg;
      c.zero_stage = z;
      if (consider(c, {{"zero_stage", z}})) break;
    }
  }
  for (std::int64_t mbs = cfg.micro_batch_size / 2; mbs >= 1 && cfg.micro_batch_size % mbs == 0; mbs /= 2) {
    ParallelConfig c = cfg;
    c.micro_batch_size = mbs;
    c.micro_batches = cfg.micro_batches * (cfg.micro_batch_size / mbs);
    if (consider(c, {{"micro_batch_size", mbs}, {"micro_batches", c.micro_batches}})) break;
    if (mbs == 1) break;
  }
  for (std::int64_t t = cfg.tensor * 2; t <= 64; t *= 2) {
    ParallelConfig c = cfg;
    c.tensor = t;
    c.gpus = c.data * c.tensor * c.pipeline;
    if (consider(c, {{"tensor", t}, {"gpus", c.gpus}})) break;
  }
  for (std::int64_t pp = cfg.pipeline * 2; pp <= static_cast<std::int64_t>(n) && pp <= 1024; pp *= 2) {
    ParallelConfig c = cfg;
    c.pipeline = pp;
    c.gpus = c.data * c.tensor * c.pipeline;
    if (consider(c, {{"pipeline", pp}, {"gpus", c.gpus}})) break;
  }
  return advice;
}

/// Appends a double as JSON text, as the rest of the response writes it.
void append_number(std::string& out, double v) { out += Json(v).dump(); }

/// Equal items among `hashes.size()` items: each item's group (numbered by first appearance) and each
/// group's first item. `equal(a, b)` decides; `hashes` must agree with it (equal items, equal hashes).
struct Groups {
  std::vector<std::size_t> of_item;
  std::vector<std::size_t> first;
};
template <typename Equal>
Groups group_equal(const std::vector<std::uint64_t>& hashes, Equal&& equal) {
  Groups g;
  g.of_item.resize(hashes.size());
  std::unordered_multimap<std::uint64_t, std::size_t> by_hash;  // hash -> group
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    std::size_t found = g.first.size();
    for (auto [it, end] = by_hash.equal_range(hashes[i]); it != end; ++it) {
      if (equal(i, g.first[it->second])) {
        found = it->second;
        break;
      }
    }
    if (found == g.first.size()) {
      g.first.push_back(i);
      by_hash.emplace(hashes[i], found);
    }
    g.of_item[i] = found;
  }
  return g;
}

/// One FNV-1a step over a double's bits; -0 hashes as 0, since the two compare equal.
std::uint64_t mix(std::uint64_t h, double v) {
  if (v == 0) v = 0;
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return (h ^ bits) * 1099511628211ull;
}
constexpr std::uint64_t kHashSeed = 1469598103934665603ull;

/// Per-layer timings in the columnar form of docs/API.md: layers whose (rounded) timings are equal on
/// every accelerator share one column, so a model's repeated blocks are written once per result and a
/// full-catalogue response stays small (docs/PERFORMANCE.md). The layer table names each layer's column.
class LayerColumns {
 public:
  static constexpr std::size_t kFields = 7;  // 3 phases, compute, memory, CT, bound

  /// Groups the layers of `times` (one Timing per accelerator, each over the same layers; phase times
  /// scaled by that accelerator's `factors` entry).
  LayerColumns(const std::vector<Timing>& times, const std::vector<double>& factors) : accelerators_(times.size()) {
    const std::size_t n = times.empty() ? 0 : times.front().layers.size();
    const std::size_t width = accelerators_ * kFields;
    // Unrounded first: hashed accelerator by accelerator (independent per layer, so it pipelines) and
    // compared in place; then the few distinct timings, rounded as written, grouped again.
    std::vector<std::uint64_t> hashes(n, kHashSeed);
    for (const Timing& t : times) {
      for (std::size_t i = 0; i < n; ++i) {
        double v[kFields];
        fill(v, t.layers[i], 1.0);
        for (double x : v) hashes[i] = mix(hashes[i], x);
      }
    }
    const Groups exact = group_equal(hashes, [&times](std::size_t a, std::size_t b) {
      for (const Timing& t : times) {
        const LayerTiming& x = t.layers[a];
        const LayerTiming& y = t.layers[b];
        if (x.ms != y.ms || x.compute_ms != y.compute_ms || x.memory_ms != y.memory_ms || x.ct_ms != y.ct_ms ||
            x.bound != y.bound) {
          return false;
        }
      }
      return true;
    });
    const std::size_t m = exact.first.size();
    std::vector<double> rounded(m * width);
    std::vector<std::uint64_t> rounded_hashes(m, kHashSeed);
    for (std::size_t c = 0; c < m; ++c) {
      double* v = &rounded[c * width];
      for (std::size_t h = 0; h < accelerators_; ++h) {
        fill(v + h * kFields, times[h].layers[exact.first[c]], factors[h]);
        for (std::size_t k = 0; k + 1 < kFields; ++k) v[h * kFields + k] = round6(v[h * kFields + k]);
      }
      for (std::size_t k = 0; k < width; ++k) rounded_hashes[c] = mix(rounded_hashes[c], v[k]);
    }
    const Groups shown = group_equal(rounded_hashes, [&rounded, width](std::size_t a, std::size_t b) {
      return std::equal(rounded.begin() + static_cast<std::ptrdiff_t>(a * width),
                        rounded.begin() + static_cast<std::ptrdiff_t>((a + 1) * width),
                        rounded.begin() + static_cast<std::ptrdiff_t>(b * width));
    });
    values_.reserve(shown.first.size() * width);
    for (std::size_t r : shown.first) {
      values_.insert(values_.end(), rounded.begin() + static_cast<std::ptrdiff_t>(r * width),
                     rounded.begin() + static_cast<std::ptrdiff_t>((r + 1) * width));
    }
    column_.resize(n);
    for (std::size_t i = 0; i < n; ++i) column_[i] = shown.of_item[exact.of_item[i]];
  }

  /// `{"backward_ms": [...], "bound": [...], "compute_ms", "ct_ms", "forward_ms", "memory_ms", "optimizer_ms"}`,
  /// one entry per column, for accelerator `h`.
  void write(std::string& out, std::size_t h) const {
    const std::size_t width = accelerators_ * kFields, columns = column_.empty() ? 0 : values_.size() / width;
    // Field index in fill()'s order, by key in the order written (keys sorted, as in the rest of the response).
    static const std::pair<const char*, std::size_t> keys[] = {
        {"{\"backward_ms\":[", 1}, {",\"bound\":[", 6},     {",\"compute_ms\":[", 3},  {",\"ct_ms\":[", 5},
        {",\"forward_ms\":[", 0},  {",\"memory_ms\":[", 4}, {",\"optimizer_ms\":[", 2}};
    for (const auto& [key, k] : keys) {
      out += key;
      for (std::size_t c = 0; c < columns; ++c) {
        if (c > 0) out += ',';
        const double v = values_[c * width + h * kFields + k];
        if (k == 6) {
          out += '"';
          out += to_string(static_cast<Bound>(static_cast<int>(v)));
          out += '"';
        } else {
          append_number(out, v);
        }
      }
      out += ']';
    }
    out += '}';
  }

  /// Bytes write() appends, roughly (to reserve the output once).
  std::size_t estimate() const { return 120 + (accelerators_ == 0 ? 0 : values_.size() / accelerators_) * 12; }

  /// The response's layer table (docs/API.md, `layers`), as text; identical entries are built once.
  std::string table(const Network& net, const StepWork& work) const {
    std::unordered_map<std::string, std::pair<std::string, std::string>> cache;
    std::string out = "[";
    out.reserve(net.layers.size() * 300);
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
      const Layer& l = net.layers[i];
      const LayerWork& w = work.layers[i];
      std::string key = to_string(l.type);
      const double values[] = {static_cast<double>(l.parameters),
                               w.flops[0],
                               w.flops[1],
                               w.flops[2],
                               w.bytes[0],
                               w.bytes[1],
                               w.bytes[2],
                               static_cast<double>(w.kernels),
                               w.co,
                               w.cm,
                               static_cast<double>(column_[i])};
      key.append(reinterpret_cast<const char*>(values), sizeof values);
      key.append(reinterpret_cast<const char*>(l.output_shape.data()), l.output_shape.size() * sizeof(std::int64_t));
      auto it = cache.find(key);
      if (it == cache.end()) {
        double total_flops = w.flops[0] + w.flops[1] + w.flops[2];
        double total_bytes = w.bytes[0] + w.bytes[1] + w.bytes[2];
        std::string head = dump({{"flops", phase_triplet(w.flops)},
                                 {"bytes", phase_triplet(w.bytes)},
                                 {"kernels", w.kernels},
                                 {"intensity", round6(total_bytes > 0 ? total_flops / total_bytes : 0.0)},
                                 {"features", {{"co", round6(w.co)}, {"cm", round6(w.cm)}}}});
        head.back() = ',';  // keys sort: bytes, features, flops, intensity, kernels < name < the rest
        head += "\"name\":";
        std::string tail = dump({{"type", to_string(l.type)},
                                 {"output_shape", l.output_shape},
                                 {"parameters", l.parameters},
                                 {"timing", column_[i]}});
        tail.front() = ',';
        it = cache.emplace(std::move(key), std::make_pair(std::move(head), std::move(tail))).first;
      }
      if (i > 0) out += ',';
      out += it->second.first;
      out += dump(l.name);
      out += it->second.second;
    }
    out += ']';
    return out;
  }

 private:
  /// One layer's values on one accelerator in the order 3 phases (scaled by `factor`), compute,
  /// memory, CT, bound.
  static void fill(double* v, const LayerTiming& l, double factor) {
    v[0] = l.ms[0] * factor;
    v[1] = l.ms[1] * factor;
    v[2] = l.ms[2] * factor;
    v[3] = l.compute_ms;
    v[4] = l.memory_ms;
    v[5] = l.ct_ms;
    v[6] = static_cast<double>(static_cast<int>(l.bound));
  }

  std::size_t accelerators_;
  std::vector<std::size_t> column_;  // by layer
  std::vector<double> values_;       // by column, then accelerator, then field (fill()'s order), rounded
};

/// The response for `p` timed by `main`, accelerator h by `predictors[h]` ("roofline" or "learned"), with
/// the 80% band of those that have one. The response's own `predictor` is "learned" if any result is.
std::string assemble(const Prepared& p, const std::vector<Timing>& main, const std::vector<const char*>& predictors,
                     const std::vector<std::optional<std::array<double, 2>>>& intervals) {
  const TrainingConfig& tr = p.req.training;
  const std::size_t H = p.req.hardware.size();
  std::vector<double> factors(H, 1.0), shares(H, 1.0);
  // With `parallel`, per-layer times of one micro-batch become the step of the critical stage.
  auto compose = [&](std::size_t h, double f) {
    const ParallelConfig& cfg = *p.req.parallel;
    std::vector<std::array<double, 3>> layer_ms(main[h].layers.size());
    for (std::size_t l = 0; l < layer_ms.size(); ++l) {
      for (std::size_t k = 0; k < 3; ++k) layer_ms[l][k] = main[h].layers[l].ms[k] * f;
    }
    return compose_parallel(layer_ms, *p.shard, cfg, resolve_fabric(p.req.hardware[h], cfg), tr.precision);
  };
  if (p.req.calibration) {
    // The measured accelerator takes the full correction; the others the share of it in log space that
    // errors of different GPUs have in common (docs/PREDICTION.md, Calibration).
    const std::size_t c = p.req.calibration->hardware_index;
    double predicted = p.req.parallel ? compose(c, 1.0).step_ms() : main[c].step_ms;
    double f = p.req.calibration->step_ms / predicted;
    for (std::size_t h = 0; h < H; ++h) {
      shares[h] = h == c ? 1.0 : main[h].calibration_share;
      factors[h] = std::pow(f, shares[h]);
    }
  }
  std::vector<Json> results;
  results.reserve(H);
  // Per-layer results are written as text and spliced in (LayerColumns).
  std::optional<LayerColumns> layer_writer;
  if (p.req.per_layer) layer_writer.emplace(main, factors);
  const CtGroups groups = ct_groups(p);
  for (std::size_t h = 0; h < H; ++h) {
    ResultExtras extras;
    extras.baselines = baselines_for(p, h, groups);
    extras.interval_ms = intervals[h];
    extras.predictor = predictors[h];
    extras.calibration_factor = factors[h];
    if (p.req.calibration) extras.calibration_share = shares[h];
    const Accelerator& acc = p.req.hardware[h];
    if (!p.req.parallel) {
      const double f = factors[h];
      StepParts parts;
      parts.forward_ms = round6(main[h].ms[0] * f);
      parts.backward_ms = round6(main[h].ms[1] * f);
      parts.optimizer_ms = round6(main[h].ms[2] * f);
      results.push_back(result_for(acc, main[h], p.work, p.mem, tr, extras, parts, nullptr));
      continue;
    }
    const ParallelConfig& cfg = *p.req.parallel;
    const Fabric fabric = resolve_fabric(acc, cfg);
    ParallelTiming pt = compose(h, factors[h]);
    StepParts parts;
    parts.forward_ms = round6(pt.forward_ms);
    parts.backward_ms = round6(pt.backward_ms);
    parts.optimizer_ms = round6(pt.optimizer_ms);
    parts.data_ms = round6(pt.data_ms);
    parts.tensor_ms = round6(pt.tensor_ms);
    parts.pipeline_ms = round6(pt.pipeline_ms);
    parts.zero_ms = round6(pt.zero_ms);
    parts.bubble_ms = round6(pt.bubble_ms);
    MemoryEstimate mem = worst_memory(*p.shard, p.saved, p.saved_none, pt.stage_bounds, cfg, tr);
    ParallelExtras px;
    px.gpus = cfg.gpus;
    double work_matmul = matmul_flops(p.work);
    px.model_flops_scale = work_matmul > 0 ? p.model_matmul_flops / work_matmul : 0.0;
    px.parallel = parallel_json(cfg, fabric, parts, pt);
    if (mem.total_gb() > acc.memory_gb) {
      std::vector<double> cost(main[h].layers.size());
      for (std::size_t l = 0; l < cost.size(); ++l) cost[l] = main[h].layers[l].ms[0] + main[h].layers[l].ms[1];
      px.advice = memory_advice(p, acc, cfg, cost);
    }
    results.push_back(result_for(acc, main[h], p.work, mem, tr, extras, parts, &px));
  }
  std::int64_t dataset = tr.dataset_size > 0 ? tr.dataset_size : tr.batch_size * 100;
  Json training = {{"batch_size", tr.batch_size},
                   {"precision", to_string(tr.precision)},
                   {"optimizer", to_string(tr.optimizer)},
                   {"optimizer_impl", to_string(tr.optimizer_impl)},
                   {"attention", to_string(tr.attention)},
                   {"kernels", to_string(tr.kernels)},
                   {"dataset_size", dataset},
                   {"epochs", tr.epochs},
                   {"steps_per_epoch", tr.steps_per_epoch()}};
  const Network& net = p.net;
  if (net.input.kind == InputKind::Tokens || net.input.kind == InputKind::Sequence) {
    training["seq_len"] = net.input.seq_len;
  }
  if (net.input.kind == InputKind::Image) training["image_size"] = net.input.image_size;
  std::array<double, 3> f = p.model_flops;
  const Json& model = p.req.model;
  const bool any_learned = std::any_of(predictors.begin(), predictors.end(),
                                       [](const char* name) { return std::string(name) == "learned"; });
  Json response = {{"version", version()},
                   {"predictor", any_learned ? "learned" : "roofline"},
                   {"model",
                    {{"name", net.name},
                     {"source", model_source(model)},
                     {"parameters", net.parameters()},
                     {"layer_count", net.layers.size()},
                     {"input", input_summary(net.input)},
                     {"flops_per_step",
                      {{"forward", round6(f[0])},
                       {"backward", round6(f[1])},
                       {"optimizer", round6(f[2])},
                       {"total", round6(f[0] + f[1] + f[2])}}}}},
                   {"training", training},
                   {"warnings", net.warnings},
                   {"results", Json::array()}};
  // Splice the results in: user text is escaped by dump(), so `"results":[]` occurs once, as the key.
  std::string text = dump(response);
  const std::string slot = "\"results\":[]";
  const std::size_t at = text.find(slot);
  std::vector<std::string> parts;
  parts.reserve(results.size());
  std::size_t size = text.size() + 2;
  for (std::size_t h = 0; h < results.size(); ++h) {
    parts.push_back(dump(results[h]));
    size += parts.back().size() + 1 + (layer_writer ? layer_writer->estimate() : 0);
  }
  // One output buffer, filled once: these responses run to megabytes with per-layer results.
  std::string out;
  out.reserve(size);
  out.append(text, 0, at);
  out += "\"results\":[";
  for (std::size_t h = 0; h < parts.size(); ++h) {
    if (h > 0) out += ',';
    if (layer_writer) {
      out.append(parts[h], 0, parts[h].size() - 1);  // all but the result's closing brace
      out += ",\"layers\":";
      layer_writer->write(out, h);
      out += '}';
    } else {
      out += parts[h];
    }
  }
  out += ']';
  out.append(text, at + slot.size(), std::string::npos);
  if (layer_writer) {
    out.pop_back();  // the response's closing brace
    out += ",\"layers\":";
    out += layer_writer->table(p.shard ? p.shard->net : net, p.work);
    out += '}';
  }
  return out;
}

std::string predict_document(const Json& doc) {
  Prepared p = prepare(doc);
  return assemble(p, p.roofline, std::vector<const char*>(p.roofline.size(), "roofline"),
                  std::vector<std::optional<std::array<double, 2>>>(p.roofline.size()));
}

/// The request between learned_prepare and learned_finish (wasm runs one request at a time).
struct LearnedSession {
  Prepared prepared;
  LearnedBatch batch;
};
std::optional<LearnedSession>& session() {
  static std::optional<LearnedSession> s;
  return s;
}

}  // namespace

std::string predict_json(const std::string& request_text) {
  try {
    Json doc = parse_json_text(request_text, "request");
    return predict_document(doc);
  } catch (const InputError& e) {
    return dump(error_document(e.field(), e.what()));
  } catch (const std::exception& e) {
    return dump(error_document("request", std::string("request: internal error: ") + e.what()));
  }
}

std::string learned_prepare(const std::string& request_text) {
  session().reset();
  try {
    if (learned_manifest().classes.empty()) throw InputError("request", "no learned models are compiled in");
    Json doc = parse_json_text(request_text, "request");
    Prepared p = prepare(doc);
    LearnedBatch batch = learned_batch(p.work, p.req.hardware, p.req.training.precision);
    Json classes = Json::array();
    const auto& lm = learned_manifest().classes;
    for (std::size_t c = 0; c < lm.size(); ++c) {
      classes.push_back({{"dataset", lm[c].dataset}, {"rows", batch.rows(c)}, {"width", lm[c].features.size()}});
    }
    session() = LearnedSession{std::move(p), std::move(batch)};
    return dump({{"classes", classes}});
  } catch (const InputError& e) {
    return dump(error_document(e.field(), e.what()));
  } catch (const std::exception& e) {
    return dump(error_document("request", std::string("request: internal error: ") + e.what()));
  }
}

const std::vector<float>& learned_features(std::size_t class_index) {
  static const std::vector<float> empty;
  if (!session() || class_index >= session()->batch.features.size()) return empty;
  return session()->batch.features[class_index];
}

const std::vector<double>& learned_roofline_ms(std::size_t class_index) {
  static const std::vector<double> empty;
  if (!session() || class_index >= session()->batch.roofline_ms.size()) return empty;
  return session()->batch.roofline_ms[class_index];
}

std::string learned_finish(const std::vector<std::vector<float>>& outputs) {
  try {
    if (!session()) throw InputError("request", "learned_finish called without learned_prepare");
    const LearnedSession& s = *session();
    std::vector<std::array<double, 2>> intervals;
    std::vector<Timing> learned = learned_times(s.prepared.work, s.batch, outputs, intervals);
    // Times come from the models; what limits each kernel (compute, memory, launches) from the roofline.
    // Accelerators the models do not cover keep the roofline's times and have no band.
    std::vector<Timing> merged = s.prepared.roofline;
    std::vector<const char*> predictors(merged.size(), "roofline");
    std::vector<std::optional<std::array<double, 2>>> bands(merged.size());
    for (std::size_t h = 0; h < merged.size(); ++h) {
      if (!learned_covers(s.prepared.req.hardware[h])) continue;
      predictors[h] = "learned";
      bands[h] = intervals[h];
      merged[h].ms = learned[h].ms;
      merged[h].step_ms = learned[h].step_ms;
      merged[h].calibration_share = learned[h].calibration_share;
      for (std::size_t l = 0; l < merged[h].layers.size(); ++l) merged[h].layers[l].ms = learned[h].layers[l].ms;
    }
    std::string out = assemble(s.prepared, merged, predictors, bands);
    session().reset();
    return out;
  } catch (const InputError& e) {
    session().reset();
    return dump(error_document(e.field(), e.what()));
  } catch (const std::exception& e) {
    session().reset();
    return dump(error_document("request", std::string("request: internal error: ") + e.what()));
  }
}

std::string catalog_json() {
  try {
    return dump(catalog_document());
  } catch (const std::exception& e) {
    return dump(error_document("catalog", std::string("catalog: internal error: ") + e.what()));
  }
}

}  // namespace prenet
