#include "prenet/api.hpp"

#include <cmath>

#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
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

Json result_for(const Accelerator& acc, const Timing& t, const Network& net, const StepWork& work,
                const MemoryEstimate& mem, const TrainingConfig& training, bool per_layer) {
  // Round the measured parts once, then derive every total from the rounded values so the documented
  // identities (step = forward + backward + optimizer, epoch = steps x step, ...) hold exactly.
  double forward_ms = round6(t.ms[0]), backward_ms = round6(t.ms[1]), optimizer_ms = round6(t.ms[2]);
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
             {{"compute", round6(t.compute_ms)}, {"memory", round6(t.memory_ms)}, {"overhead", round6(t.overhead_ms)}}}};
  if (per_layer) {
    Json layers = Json::array();
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
      const LayerTiming& lt = t.layers[i];
      layers.push_back({{"name", net.layers[i].name},
                        {"forward_ms", round6(lt.ms[0])},
                        {"backward_ms", round6(lt.ms[1])},
                        {"optimizer_ms", round6(lt.ms[2])},
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

Json predict_document(const Json& doc) {
  Request req = parse_request(doc);
  const TrainingConfig& tr = req.training;
  Network net = resolve_model(req.model, tr);
  StepWork work = step_work(net, tr.batch_size, tr.precision, tr.optimizer);
  if (work.kernels.empty()) {
    throw InputError("model", "the network performs no computation (only reshapes or identities)");
  }
  MemoryEstimate mem = estimate_memory(net, work, tr.precision, tr.optimizer);
  std::vector<Timing> timings = roofline_times(work, req.hardware, tr.precision);

  Json results = Json::array();
  for (std::size_t i = 0; i < req.hardware.size(); ++i) {
    results.push_back(result_for(req.hardware[i], timings[i], net, work, mem, tr, req.per_layer));
  }
  std::int64_t dataset = tr.dataset_size > 0 ? tr.dataset_size : tr.batch_size * 100;
  Json training = {{"batch_size", tr.batch_size},   {"precision", to_string(tr.precision)},
                   {"optimizer", to_string(tr.optimizer)}, {"dataset_size", dataset},
                   {"epochs", tr.epochs},           {"steps_per_epoch", tr.steps_per_epoch()}};
  if (net.input.kind == InputKind::Tokens || net.input.kind == InputKind::Sequence) {
    training["seq_len"] = net.input.seq_len;
  }
  if (net.input.kind == InputKind::Image) training["image_size"] = net.input.image_size;
  std::array<double, 3> f = work.flops;
  Json response = {
      {"version", version()},
      {"predictor", "roofline"},
      {"model",
       {{"name", net.name},
        {"source", req.model.contains("preset") ? "preset" : req.model.contains("hf_config") ? "hf_config" : "layers"},
        {"parameters", net.parameters()},
        {"layer_count", net.layers.size()},
        {"input", input_summary(net.input)},
        {"flops_per_step",
         {{"forward", round6(f[0])}, {"backward", round6(f[1])}, {"optimizer", round6(f[2])},
          {"total", round6(f[0] + f[1] + f[2])}}}}},
      {"training", training},
      {"warnings", net.warnings},
      {"results", results}};
  if (req.per_layer) response["layers"] = layer_table(net, work);
  return response;
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

std::string catalog_json() {
  try {
    return dump(catalog_document());
  } catch (const std::exception& e) {
    return dump(error_document("catalog", std::string("catalog: internal error: ") + e.what()));
  }
}

}  // namespace prenet
