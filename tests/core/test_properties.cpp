// Property tests over random valid requests through prenet::predict_json (the roofline path).
//
// A seeded generator builds small layer lists (dense, conv, attention and LSTM stacks of random sizes),
// picks presets, catalogue accelerators and random custom accelerators, and checks for every request:
// - every number in each result is finite, and the times, totals and memory are positive;
// - epoch_s == steps_per_epoch x step_ms / 1000 and total_s == epoch_s x epochs (relative 1e-9);
// - step time never decreases as batch size, sequence length, image size or depth (repeat count) grow;
// - step time never increases when a custom accelerator's peak FLOP/s (all precisions together) or its
//   memory bandwidth grow;
// - memory never decreases as the batch grows.
// A failure prints the request (INFO), so it can be replayed with build/native/core/prenet_native.
// The seed is fixed; PRENET_PROPERTY_SEED in the environment overrides it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/api.hpp"

namespace {

using prenet::Json;

std::uint32_t seed() {
  const char* env = std::getenv("PRENET_PROPERTY_SEED");
  if (env != nullptr && *env != '\0') return static_cast<std::uint32_t>(std::strtoul(env, nullptr, 10));
  return 20261129u;
}

struct Rng {
  std::mt19937 gen;
  explicit Rng(std::uint32_t s) : gen(s) {}
  int integer(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(gen); }
  bool coin() { return integer(0, 1) == 1; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(integer(0, static_cast<int>(v.size()) - 1))];
  }
};

const Json& catalog() {
  static const Json c = Json::parse(prenet::catalog_json());
  return c;
}

/// Catalogue accelerator ids that support `precision`.
std::vector<std::string> hardware_with(const std::string& precision) {
  std::vector<std::string> ids;
  for (const auto& h : catalog()["hardware"]) {
    if (h.contains("peak_tflops") && h["peak_tflops"].contains(precision)) ids.push_back(h["id"].get<std::string>());
  }
  return ids;
}

const std::vector<std::string> kPrecisions = {"fp32", "fp32", "tf32", "fp16", "bf16", "fp8"};
const std::vector<std::string> kOptimizers = {"none", "sgd", "momentum", "adam", "adamw", "adagrad", "adadelta",
                                              "rmsprop"};
const std::vector<std::string> kActivations = {"relu", "gelu", "tanh", "silu"};

/// A custom accelerator with every precision up to the one requested, each at a random peak.
Json custom_accelerator(Rng& rng, const std::string& precision, int index) {
  Json peaks = {{"fp32", rng.real(1, 100)}};
  for (const std::string p : {"tf32", "fp16", "bf16", "fp8"}) {
    if (p == precision || rng.coin()) peaks[p] = rng.real(5, 2000);
  }
  // fp8 training runs convolutions and recurrent cells in bf16 or fp16, so an fp8 part needs one of them.
  if (precision == "fp8" && !peaks.contains("bf16") && !peaks.contains("fp16")) peaks["bf16"] = rng.real(5, 1000);
  return {{"name", "custom-" + std::to_string(index)},
          {"peak_tflops", peaks},
          {"memory_bandwidth_gbs", rng.real(100, 8000)},
          {"memory_gb", rng.real(8, 192)},
          {"price_per_hour_usd", rng.real(0.1, 10)}};
}

/// The parameters of one random layer-list model; build() turns them into JSON, so each can be varied.
struct LayerModel {
  std::string kind;  // vector, sequence, tokens, image
  int features = 16, seq_len = 16, image_size = 16, channels = 3, vocab = 1000;
  int width = 32, heads = 2, hidden = 32, filters = 8, kernel = 3, depth = 1, classes = 10;
  std::string block;  // dense, attention, lstm, conv
  std::string activation = "relu";

  Json build() const {
    Json layers = Json::array();
    Json input;
    Json body = Json::array();
    if (kind == "vector") {
      input = {{"kind", "vector"}, {"features", features}};
      body.push_back({{"type", "dense"}, {"units", width}, {"activation", activation}});
    } else if (kind == "image") {
      input = {{"kind", "image"}, {"channels", channels}, {"image_size", image_size}};
      body.push_back({{"type", "conv2d"}, {"filters", filters}, {"kernel_size", kernel}, {"padding", "same"},
                      {"activation", activation}});
      body.push_back({{"type", "batchnorm"}});
    } else {
      if (kind == "tokens") {
        input = {{"kind", "tokens"}, {"seq_len", seq_len}};
        layers.push_back({{"type", "embedding"}, {"vocab_size", vocab}, {"dim", width}});
      } else {
        input = {{"kind", "sequence"}, {"seq_len", seq_len}, {"features", features}};
        layers.push_back({{"type", "dense"}, {"units", width}});
      }
      if (block == "attention") {
        body.push_back({{"type", "layernorm"}, {"name", "ln"}});
        body.push_back({{"type", "attention"}, {"name", "att"}, {"num_heads", heads}});
        body.push_back({{"type", "dense"}, {"name", "ffn"}, {"units", width}, {"activation", activation}});
      } else if (block == "lstm") {
        body.push_back({{"type", "lstm"}, {"hidden_size", hidden}});
        body.push_back({{"type", "dense"}, {"units", width}});
      } else {
        body.push_back({{"type", "dense"}, {"units", width}, {"activation", activation}});
      }
    }
    layers.push_back({{"type", "repeat"}, {"count", depth}, {"name", "block"}, {"layers", body}});
    if (kind == "image") layers.push_back({{"type", "global_avg_pool"}});
    layers.push_back({{"type", "dense"}, {"units", classes}});
    layers.push_back({{"type", "cross_entropy"}});
    return {{"name", "random-" + kind + "-" + block}, {"input", input}, {"layers", layers}};
  }
};

LayerModel random_layer_model(Rng& rng) {
  LayerModel m;
  m.kind = rng.pick(std::vector<std::string>{"vector", "sequence", "tokens", "image"});
  m.features = rng.integer(1, 256);
  m.seq_len = rng.integer(1, 256);
  m.image_size = rng.integer(4, 64);
  m.channels = rng.integer(1, 4);
  m.vocab = rng.integer(2, 5000);
  m.heads = rng.integer(1, 8);
  m.width = m.heads * rng.integer(1, 32);
  m.hidden = rng.integer(1, 128);
  m.filters = rng.integer(1, 64);
  m.kernel = rng.pick(std::vector<int>{1, 3, 5});
  m.depth = rng.integer(1, 6);
  m.classes = rng.integer(2, 100);
  m.activation = rng.pick(kActivations);
  if (m.kind == "vector") m.block = "dense";
  else if (m.kind == "image") m.block = "conv";
  else m.block = rng.pick(std::vector<std::string>{"dense", "attention", "lstm"});
  return m;
}

struct Request {
  Json json;
  std::vector<std::size_t> custom;  // indices of custom accelerators in json["hardware"]
};

Json random_training(Rng& rng, const std::string& precision) {
  Json t = {{"batch_size", rng.integer(1, 256)},
            {"precision", precision},
            {"optimizer", rng.pick(kOptimizers)},
            {"dataset_size", rng.integer(1, 1000000)},
            {"epochs", rng.coin() ? static_cast<double>(rng.integer(1, 10)) : rng.real(0.01, 5)}};
  return t;
}

Request random_request(Rng& rng, const Json& model) {
  Request r;
  const std::string precision = rng.pick(kPrecisions);
  Json hardware = Json::array();
  const std::vector<std::string> ids = hardware_with(precision);
  const int catalog_count = rng.integer(0, 2);
  for (int i = 0; i < catalog_count; ++i) hardware.push_back(rng.pick(ids));
  const int custom_count = rng.integer(catalog_count == 0 ? 1 : 0, 2);
  for (int i = 0; i < custom_count; ++i) {
    r.custom.push_back(hardware.size());
    hardware.push_back(custom_accelerator(rng, precision, i));
  }
  r.json = {{"model", model},
            {"training", random_training(rng, precision)},
            {"hardware", hardware},
            {"options", {{"per_layer", rng.coin()}}}};
  return r;
}

Json predict(const Json& request) { return Json::parse(prenet::predict_json(request.dump())); }

/// Every number in `v` is finite (nlohmann writes a non-finite double as null, so null counts as bad
/// wherever a number is expected; we check numbers here and required fields below).
void check_all_finite(const Json& v, const std::string& path) {
  if (v.is_number()) {
    INFO("at " << path);
    CHECK(std::isfinite(v.get<double>()));
  } else if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) check_all_finite(it.value(), path + "." + it.key());
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) check_all_finite(v[i], path + "[" + std::to_string(i) + "]");
  }
}

double number(const Json& obj, const char* key) {
  INFO("field " << key << " in " << obj.dump().substr(0, 400));
  REQUIRE(obj.contains(key));
  REQUIRE(obj[key].is_number());
  return obj[key].get<double>();
}

bool close(double a, double b, double rel) { return std::fabs(a - b) <= rel * std::fabs(b); }

/// Runs `request`, requires success, and checks finiteness, positivity and the response identities.
Json checked(const Json& request) {
  INFO("request: " << request.dump());
  Json response = predict(request);
  INFO("response: " << response.dump().substr(0, 800));
  REQUIRE_FALSE(response.contains("error"));
  check_all_finite(response, "response");
  const Json& training = response["training"];
  const double steps = number(training, "steps_per_epoch");
  const double epochs = number(training, "epochs");
  CHECK(steps >= 1);
  CHECK(epochs > 0);
  REQUIRE(response["results"].size() == request["hardware"].size());
  for (const auto& r : response["results"]) {
    const double step = number(r, "step_ms");
    const double fwd = number(r, "forward_ms");
    const double bwd = number(r, "backward_ms");
    const double opt = number(r, "optimizer_ms");
    const double epoch = number(r, "epoch_s");
    const double total = number(r, "total_s");
    const double memory = number(r, "memory_gb");
    CHECK(step > 0);
    CHECK(fwd > 0);
    CHECK(bwd > 0);
    CHECK(opt >= 0);
    CHECK(epoch > 0);
    CHECK(total > 0);
    CHECK(memory > 0);
    CHECK(close(step, fwd + bwd + opt, 1e-9));
    CHECK(close(epoch, steps * step / 1000, 1e-9));
    CHECK(close(total, epoch * epochs, 1e-9));
    if (r.contains("cost_usd") && !r["cost_usd"].is_null()) {
      CHECK(r["cost_usd"].get<double>() > 0);
    }
  }
  return response;
}

std::vector<double> field_of_results(const Json& response, const char* key) {
  std::vector<double> out;
  for (const auto& r : response["results"]) out.push_back(r[key].get<double>());
  return out;
}

/// `larger` has, for every accelerator, a step time (and, when asked, memory) no smaller than `base`.
void check_not_decreasing(const Json& base_request, const Json& larger_request, const std::string& what,
                          bool memory_too) {
  INFO("property: step time does not decrease as " << what << " grows");
  INFO("base request: " << base_request.dump());
  INFO("larger request: " << larger_request.dump());
  const Json a = checked(base_request);
  const Json b = checked(larger_request);
  const auto sa = field_of_results(a, "step_ms");
  const auto sb = field_of_results(b, "step_ms");
  for (std::size_t i = 0; i < sa.size(); ++i) {
    INFO("hardware[" << i << "]: " << sa[i] << " ms -> " << sb[i] << " ms");
    CHECK(sb[i] >= sa[i]);
  }
  if (memory_too) {
    const auto ma = field_of_results(a, "memory_gb");
    const auto mb = field_of_results(b, "memory_gb");
    for (std::size_t i = 0; i < ma.size(); ++i) {
      INFO("memory hardware[" << i << "]: " << ma[i] << " GB -> " << mb[i] << " GB");
      CHECK(mb[i] >= ma[i]);
    }
  }
}

/// Scaling a custom accelerator's peaks or bandwidth up never makes its step slower; other results unchanged.
void check_faster_hardware(const Request& r, Rng& rng) {
  const Json base = checked(r.json);
  for (const std::size_t i : r.custom) {
    for (const bool peaks : {true, false}) {
      Json faster = r.json;
      const double factor = rng.real(1.01, 8);
      Json& h = faster["hardware"][i];
      if (peaks) {
        for (auto it = h["peak_tflops"].begin(); it != h["peak_tflops"].end(); ++it) {
          it.value() = it.value().get<double>() * factor;
        }
      } else {
        h["memory_bandwidth_gbs"] = h["memory_bandwidth_gbs"].get<double>() * factor;
      }
      INFO("property: step time does not increase as " << (peaks ? "peak FLOP/s" : "bandwidth") << " of hardware["
                                                        << i << "] grows x" << factor);
      INFO("base request: " << r.json.dump());
      INFO("faster request: " << faster.dump());
      const Json f = checked(faster);
      const double before = base["results"][i]["step_ms"].get<double>();
      const double after = f["results"][i]["step_ms"].get<double>();
      INFO(before << " ms -> " << after << " ms");
      CHECK(after <= before);
    }
  }
}

Json with_training(Json request, const std::string& key, const Json& value) {
  request["training"][key] = value;
  return request;
}

int grown(Rng& rng, int value, int limit) { return std::min(limit, value + rng.integer(1, std::max(1, value))); }

}  // namespace

TEST_CASE("properties of random layer-list requests", "[properties][roofline]") {
  Rng rng(seed());
  INFO("seed " << seed());
  constexpr int kRequests = 200;
  for (int n = 0; n < kRequests; ++n) {
    LayerModel m = random_layer_model(rng);
    Request r = random_request(rng, m.build());
    INFO("random request #" << n);

    const int batch = r.json["training"]["batch_size"].get<int>();
    check_not_decreasing(r.json, with_training(r.json, "batch_size", grown(rng, batch, 1 << 20)), "batch size", true);

    if (m.kind == "tokens" || m.kind == "sequence") {
      const int seq = m.seq_len;
      Json base = with_training(r.json, "seq_len", seq);
      check_not_decreasing(base, with_training(r.json, "seq_len", grown(rng, seq, 4096)), "sequence length", true);
    }
    if (m.kind == "image") {
      const int side = m.image_size;
      Json base = with_training(r.json, "image_size", side);
      check_not_decreasing(base, with_training(r.json, "image_size", grown(rng, side, 256)), "image size", true);
    }
    {
      LayerModel deeper = m;
      deeper.depth = m.depth + rng.integer(1, 4);
      Json larger = r.json;
      larger["model"] = deeper.build();
      check_not_decreasing(r.json, larger, "depth (repeat count)", true);
    }
    check_faster_hardware(r, rng);
  }
}

TEST_CASE("properties of random preset requests", "[properties][roofline]") {
  Rng rng(seed() + 1);
  INFO("seed " << seed() + 1);
  std::vector<Json> presets;
  for (const auto& p : catalog()["presets"]) presets.push_back(p);
  REQUIRE_FALSE(presets.empty());
  constexpr int kRequests = 100;
  for (int n = 0; n < kRequests; ++n) {
    const Json& preset = rng.pick(presets);
    Request r = random_request(rng, {{"preset", preset["id"]}});
    const std::string kind = preset["input"]["kind"].get<std::string>();
    INFO("random preset request #" << n << ": " << preset["id"]);
    const int batch = r.json["training"]["batch_size"].get<int>();
    check_not_decreasing(r.json, with_training(r.json, "batch_size", grown(rng, batch, 1 << 20)), "batch size", true);
    if (kind == "tokens") {
      const int seq = rng.integer(8, 256);
      check_not_decreasing(with_training(r.json, "seq_len", seq),
                           with_training(r.json, "seq_len", grown(rng, seq, 512)), "sequence length", true);
    } else if (kind == "image" && preset["id"] != "inception_v3" && preset["id"] != "ssd300") {
      // Inception v3's auxiliary classifier (5x5 valid conv after a 5/3 pool of the 17x17 grid) only fits
      // sides near 299 (275 is rejected, with an error naming training.image_size), and SSD300's last extra
      // layers (3x3 valid convs on a 3x3 grid) likewise sides near 300 (244 is rejected), so both are left out.
      // ViT presets accept at most their configured side; deep CNNs need a side not far below it.
      const int full = preset["input"]["image_size"].get<int>();
      const int side = rng.integer(full * 3 / 4, full - 1);
      check_not_decreasing(with_training(r.json, "image_size", side),
                           with_training(r.json, "image_size", grown(rng, side, full)), "image size", true);
    }
    check_faster_hardware(r, rng);
  }
}
