#include "prenet/api.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
#include "prenet/learned.hpp"
#include "prenet/memory.hpp"
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

Json layer_table(const Network& net, const StepWork& work) {
  Json layers = Json::array();
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const Layer& l = net.layers[i];
    const LayerWork& w = work.layers[i];
    double total_flops = w.flops[0] + w.flops[1] + w.flops[2];
    double total_bytes = w.bytes[0] + w.bytes[1] + w.bytes[2];
    layers.push_back({{"name", l.name},
                      {"type", to_string(l.type)},
                      {"output_shape", l.output_shape},
                      {"parameters", l.parameters},
                      {"flops", phase_triplet(w.flops)},
                      {"bytes", phase_triplet(w.bytes)},
                      {"kernels", w.kernels},
                      {"intensity", round6(total_bytes > 0 ? total_flops / total_bytes : 0.0)},
                      {"features", {{"co", round6(w.co)}, {"cm", round6(w.cm)}}}});
  }
  return layers;
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
  std::optional<std::array<double, 2>> interval_ms;
  double calibration_factor = 1.0;
};

Json result_for(const Accelerator& acc, const Timing& t, const Network& net, const StepWork& work,
                const MemoryEstimate& mem, const TrainingConfig& training, bool per_layer, const ResultExtras& extras) {
  // Round the measured parts once, then derive every total from the rounded values so the documented
  // identities (step = forward + backward + optimizer, epoch = steps x step, ...) hold exactly.
  const double f = extras.calibration_factor;
  double forward_ms = round6(t.ms[0] * f), backward_ms = round6(t.ms[1] * f), optimizer_ms = round6(t.ms[2] * f);
  double step_ms = forward_ms + backward_ms + optimizer_ms;
  double epoch_s = static_cast<double>(training.steps_per_epoch()) * step_ms / 1e3;
  double total_s = epoch_s * training.epochs;
  double peak = matmul_peak_tflops(acc, training.precision, KernelClass::Gemm) * 1e12;
  double mfu = matmul_flops(work) / (step_ms / 1e3 * peak);
  Json r = {{"hardware", acc.id},
            {"name", acc.name},
            {"custom", acc.custom},
            {"step_ms", step_ms},
            {"forward_ms", forward_ms},
            {"backward_ms", backward_ms},
            {"optimizer_ms", optimizer_ms},
            {"epoch_s", epoch_s},
            {"total_s", total_s},
            {"memory_gb", round6(mem.total_gb())},
            {"memory",
             {{"weights_gb", round6(mem.weights_gb)},
              {"gradients_gb", round6(mem.gradients_gb)},
              {"optimizer_gb", round6(mem.optimizer_gb)},
              {"activations_gb", round6(mem.activations_gb)},
              {"overhead_gb", round6(mem.overhead_gb)}}},
            {"device_memory_gb", acc.memory_gb},
            {"fits", mem.total_gb() <= acc.memory_gb},
            {"price_per_hour_usd", acc.price_per_hour_usd ? Json(*acc.price_per_hour_usd) : Json()},
            {"cost_usd", acc.price_per_hour_usd ? Json(total_s / 3600 * *acc.price_per_hour_usd) : Json()},
            {"mfu", round6(mfu)},
            {"bottleneck", to_string(t.bottleneck)},
            {"time_split_ms",
             {{"compute", round6(t.compute_ms)}, {"memory", round6(t.memory_ms)}, {"overhead", round6(t.overhead_ms)}}},
            {"baselines", extras.baselines}};
  if (extras.interval_ms) {
    double low = round6((*extras.interval_ms)[0] * f), high = round6((*extras.interval_ms)[1] * f);
    r["step_ms_interval"] = {std::min(low, step_ms), std::max(high, step_ms)};
    double scale = static_cast<double>(training.steps_per_epoch()) * training.epochs / 1e3;
    r["total_s_interval"] = {std::min(low, step_ms) * scale, std::max(high, step_ms) * scale};
  }
  if (f != 1.0) r["calibration_factor"] = round6(f);
  if (per_layer) {
    Json layers = Json::array();
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
      const LayerTiming& lt = t.layers[i];
      layers.push_back({{"name", net.layers[i].name},
                        {"forward_ms", round6(lt.ms[0] * f)},
                        {"backward_ms", round6(lt.ms[1] * f)},
                        {"optimizer_ms", round6(lt.ms[2] * f)},
                        {"compute_ms", round6(lt.compute_ms)},
                        {"memory_ms", round6(lt.memory_ms)},
                        {"ct_ms", round6(lt.ct_ms)},
                        {"bound", to_string(lt.bound)}});
    }
    r["layers"] = std::move(layers);
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
  Network net;
  StepWork work;
  MemoryEstimate mem;
  std::vector<Timing> roofline;
};

Prepared prepare(const Json& doc) {
  Prepared p{parse_request(doc), {}, {}, {}, {}};
  const TrainingConfig& tr = p.req.training;
  p.net = resolve_model(p.req.model, tr);
  p.work = step_work(p.net, tr.batch_size, tr.precision, tr.optimizer);
  if (p.work.kernels.empty()) {
    throw InputError("model", "the network performs no computation (only reshapes or identities)");
  }
  p.mem = estimate_memory(p.net, p.work, tr.precision, tr.optimizer);
  p.roofline = roofline_times(p.work, p.req.hardware, tr.precision);
  return p;
}

/// The three baselines of docs/ACCURACY.md, forward and whole step, for one accelerator.
Json baselines_for(const Prepared& p, std::size_t h) {
  const Accelerator& acc = p.req.hardware[h];
  const Timing& roof = p.roofline[h];
  const LearnedManifest& lm = learned_manifest();
  // PreNeT-faithful: each layer's time from its CT alone (log-log fit on whole-layer measurements).
  double prenet_forward = 0, prenet_step = 0;
  for (std::size_t l = 0; l < p.net.layers.size(); ++l) {
    double ct = roof.layers[l].ct_ms;
    if (!(ct > 0)) continue;
    bool conv = p.net.layers[l].type == LayerType::Conv2d;
    const auto& fwd = conv ? lm.prenet_conv_forward : lm.prenet_dense_forward;
    const auto& step = conv ? lm.prenet_conv_step : lm.prenet_dense_step;
    // The fits are log-log lines through small layers; never let them undercut the layer's CT (its time at peak).
    prenet_forward += std::max(ct, std::exp(fwd[0] + fwd[1] * std::log(ct)));
    prenet_step += std::max(ct, std::exp(step[0] + step[1] * std::log(ct)));
  }
  // FLOPs at 40% of the dense peak for the training precision.
  double peak = matmul_peak_tflops(acc, p.req.training.precision, KernelClass::Gemm) * 1e12 * 0.4;
  const auto& flops = p.work.flops;
  return {{"roofline", {{"forward_ms", round6(roof.ms[0])}, {"step_ms", round6(roof.step_ms)}}},
          {"prenet", {{"forward_ms", round6(prenet_forward)}, {"step_ms", round6(prenet_step)}}},
          {"flops40",
           {{"forward_ms", round6(flops[0] / peak * 1e3)}, {"step_ms", round6((flops[0] + flops[1] + flops[2]) / peak * 1e3)}}}};
}

/// The response for `p` timed by `main` (roofline or learned), with optional 80% bands.
Json assemble(const Prepared& p, const std::vector<Timing>& main, const char* predictor,
              const std::vector<std::array<double, 2>>* intervals) {
  const TrainingConfig& tr = p.req.training;
  std::vector<double> factors(p.req.hardware.size(), 1.0);
  if (p.req.calibration) {
    // The measured accelerator takes the full correction; the others half of it in log space, since part of
    // the error is the model's (shared) and part the accelerator's own (docs/PREDICTION.md, Calibration).
    double f = p.req.calibration->step_ms / main[p.req.calibration->hardware_index].step_ms;
    for (std::size_t h = 0; h < factors.size(); ++h) {
      factors[h] = h == p.req.calibration->hardware_index ? f : std::sqrt(f);
    }
  }
  Json results = Json::array();
  for (std::size_t h = 0; h < p.req.hardware.size(); ++h) {
    ResultExtras extras;
    extras.baselines = baselines_for(p, h);
    if (intervals) extras.interval_ms = (*intervals)[h];
    extras.calibration_factor = factors[h];
    results.push_back(result_for(p.req.hardware[h], main[h], p.net, p.work, p.mem, tr, p.req.per_layer, extras));
  }
  std::int64_t dataset = tr.dataset_size > 0 ? tr.dataset_size : tr.batch_size * 100;
  Json training = {{"batch_size", tr.batch_size},   {"precision", to_string(tr.precision)},
                   {"optimizer", to_string(tr.optimizer)}, {"dataset_size", dataset},
                   {"epochs", tr.epochs},           {"steps_per_epoch", tr.steps_per_epoch()}};
  const Network& net = p.net;
  if (net.input.kind == InputKind::Tokens || net.input.kind == InputKind::Sequence) {
    training["seq_len"] = net.input.seq_len;
  }
  if (net.input.kind == InputKind::Image) training["image_size"] = net.input.image_size;
  std::array<double, 3> f = p.work.flops;
  const Json& model = p.req.model;
  Json response = {
      {"version", version()},
      {"predictor", predictor},
      {"model",
       {{"name", net.name},
        {"source", model_source(model)},
        {"parameters", net.parameters()},
        {"layer_count", net.layers.size()},
        {"input", input_summary(net.input)},
        {"flops_per_step",
         {{"forward", round6(f[0])}, {"backward", round6(f[1])}, {"optimizer", round6(f[2])},
          {"total", round6(f[0] + f[1] + f[2])}}}}},
      {"training", training},
      {"warnings", net.warnings},
      {"results", results}};
  if (p.req.per_layer) response["layers"] = layer_table(net, p.work);
  return response;
}

Json predict_document(const Json& doc) {
  Prepared p = prepare(doc);
  return assemble(p, p.roofline, "roofline", nullptr);
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
    return dump(predict_document(doc));
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

std::string learned_finish(const std::vector<std::vector<float>>& outputs) {
  try {
    if (!session()) throw InputError("request", "learned_finish called without learned_prepare");
    const LearnedSession& s = *session();
    std::vector<std::array<double, 2>> intervals;
    std::vector<Timing> learned = learned_times(s.prepared.work, s.batch, outputs, intervals);
    // Times come from the models; what limits each kernel (compute, memory, launches) from the roofline.
    std::vector<Timing> merged = s.prepared.roofline;
    for (std::size_t h = 0; h < merged.size(); ++h) {
      merged[h].ms = learned[h].ms;
      merged[h].step_ms = learned[h].step_ms;
      for (std::size_t l = 0; l < merged[h].layers.size(); ++l) merged[h].layers[l].ms = learned[h].layers[l].ms;
    }
    std::string out = dump(assemble(s.prepared, merged, "learned", &intervals));
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
