// Offload to host memory (docs/PREDICTION.md, Offload): training.offload (DeepSpeed ZeRO-Offload, FSDP CPU offload)
// and training.activation_offload (torchtune OffloadActivations). Expected numbers from the formulas written here.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "helpers.hpp"
#include "parallel/offload.hpp"
#include "prenet/api.hpp"
#include "prenet/hardware.hpp"

using prenet::Json;

namespace {

// An MLP of two dense layers on 1024 features: 1024 x 4096 + 4096 and 4096 x 1024 + 1024 parameters.
const char* kMlp = R"({"input": {"kind": "vector", "features": 1024},
  "layers": [{"type": "dense", "units": 4096, "activation": "relu"}, {"type": "dense", "units": 1024}]})";
constexpr double kLargest = 1024.0 * 4096 + 4096, kParams = kLargest + 4096.0 * 1024 + 1024;

/// A custom accelerator with a host of `host_gb` GB RAM, 100 GB/s memory, a 10 GB/s link, shared by `gpus`.
Json device(double host_gb, int gpus = 1) {
  return {{"name", "Test"},
          {"peak_tflops", {{"fp32", 20}, {"bf16", 100}}},
          {"memory_bandwidth_gbs", 1000},
          {"memory_gb", 40},
          {"host", {{"memory_gb", host_gb}, {"memory_bandwidth_gbs", 100}, {"link_gbs", 10}, {"gpus", gpus}}}};
}

Json request(const Json& training, const Json& hardware = device(512)) {
  Json t = {{"batch_size", 64}, {"precision", "bf16"}, {"optimizer", "adamw"}};
  if (training.is_object()) t.update(training);
  return {{"model", Json::parse(kMlp)}, {"hardware", Json::array({hardware})}, {"training", t}};
}

Json predict(const Json& req) { return Json::parse(prenet::predict_json(req.dump())); }

void check_error(const Json& req, const std::string& field, const std::string& needle) {
  const Json r = predict(req);
  REQUIRE(r.contains("error"));
  CHECK(r["error"]["field"] == field);
  CHECK_THAT(r["error"]["message"].get<std::string>(), Catch::Matchers::Contains(needle));
}

}  // namespace

TEST_CASE("offload none keeps the response without host fields", "[offload]") {
  const Json r = predict(request({}))["results"][0];
  CHECK_FALSE(r.contains("offload_ms"));
  CHECK_FALSE(r.contains("host_memory_gb"));
  CHECK_FALSE(r["memory"].contains("host_gb"));
  CHECK(predict(request({}))["training"].count("offload") == 0);
}

TEST_CASE("offload optimizer moves the FP32 weights, optimizer states and gradients to the host", "[offload]") {
  REQUIRE(predict(request({}))["model"]["parameters"] == kParams);
  const Json none = predict(request({}))["results"][0];
  const Json off = predict(request({{"offload", "optimizer"}}))["results"][0];
  // Host: FP32 weights 4 + AdamW's two FP32 states 8 + an FP32 gradient partition 4 bytes per parameter.
  CHECK(off["memory"]["host_gb"].get<double>() == Approx(kParams * 16 / 1e9).margin(1e-6));
  // Device: the 16-bit weights stay (2 bytes), master, states and gradients leave; two 25 MB buckets in flight.
  CHECK(off["memory"]["weights_gb"].get<double>() == Approx(kParams * 2 / 1e9).margin(1e-6));
  CHECK(off["memory"]["optimizer_gb"] == 0);
  CHECK(off["memory"]["gradients_gb"] == 0);
  CHECK(off["memory"]["temporary_gb"].get<double>() == Approx(2 * 25e6 / 1e9).margin(1e-6));
  CHECK(off["memory"]["activations_gb"] == none["memory"]["activations_gb"]);
  CHECK(off["host_memory_gb"] == 512);
  CHECK(off["fits"] == true);
  // Time: the device's optimizer step moves to the CPU; offload_ms holds at least the CPU step (fused AdamW's
  // 28 bytes + the 16-bit copy's 2 per parameter at 100 GB/s) and the weights' copy back (2 bytes at 10 GB/s),
  // and at most those plus all gradient copies (2 bytes at 10 GB/s).
  const double cpu = kParams * 30 / 100e6, back = kParams * 2 / 10e6, grads = kParams * 2 / 10e6;
  CHECK(off["optimizer_ms"] == 0);
  CHECK(off["offload_ms"].get<double>() >= Approx(cpu + back).margin(1e-6));
  CHECK(off["offload_ms"].get<double>() <= Approx(cpu + back + grads).margin(1e-6));
  CHECK(off["step_ms"].get<double>() ==
        Approx(off["forward_ms"].get<double>() + off["backward_ms"].get<double>() + off["offload_ms"].get<double>()));
  CHECK(off["forward_ms"] == none["forward_ms"]);
}

TEST_CASE("offload optimizer_params also moves the 16-bit weights, streamed layer by layer", "[offload]") {
  const Json off = predict(request({{"offload", "optimizer_params"}}))["results"][0];
  CHECK(off["memory"]["host_gb"].get<double>() == Approx(kParams * 18 / 1e9).margin(1e-6));
  CHECK(off["memory"]["weights_gb"].get<double>() == Approx(0).margin(1e-6));
  // Two buckets and two layers' 16-bit weights (the current and the prefetched next) of the largest layer.
  CHECK(off["memory"]["temporary_gb"].get<double>() == Approx((2 * 25e6 + 2 * kLargest * 2) / 1e9).margin(1e-6));
  // The CPU step plus the first layer's load at least.
  CHECK(off["offload_ms"].get<double>() >= Approx(kParams * 30 / 100e6 + kLargest * 2 / 10e6).margin(1e-6));
}

TEST_CASE("fits is false when the host's RAM per GPU is short", "[offload]") {
  const double need = kParams * 16 / 1e9;
  const Json tight = predict(request({{"offload", "optimizer"}}, device(need * 0.5)))["results"][0];
  CHECK(tight["fits"] == false);
  CHECK(tight["host_memory_gb"].get<double>() == Approx(need * 0.5).margin(1e-6));
  // A host shared by 4 GPUs gives a one-GPU job all of it (the job's GPUs share it, not the catalogue's count).
  const Json shared = predict(request({{"offload", "optimizer"}}, device(need * 2, 4)))["results"][0];
  CHECK(shared["fits"] == true);
  CHECK(shared["host_memory_gb"].get<double>() == Approx(need * 2).margin(1e-6));
}

TEST_CASE("activation offload moves saved activations to the host", "[offload]") {
  const Json none = predict(request({}))["results"][0];
  const Json act = predict(request({{"activation_offload", true}}))["results"][0];
  const double saved = none["memory"]["activations_gb"].get<double>();
  REQUIRE(saved > 0);
  CHECK(act["memory"]["activations_gb"].get<double>() <= saved);
  CHECK(act["memory"]["host_gb"].get<double>() == Approx(saved).margin(1e-6));
  CHECK(act["offload_ms"].get<double>() >= 0);
  CHECK(act["optimizer_ms"] == none["optimizer_ms"]);
  CHECK(predict(request({{"activation_offload", true}}))["training"]["activation_offload"] == true);
  // A model with more than two layers keeps only the two largest layers' worth on the device.
  const Json deep = Json::parse(R"({"input": {"kind": "vector", "features": 512}, "layers": [
      {"type": "dense", "units": 512, "activation": "relu"}, {"type": "dense", "units": 512, "activation": "relu"},
      {"type": "dense", "units": 512, "activation": "relu"}, {"type": "dense", "units": 512, "activation": "relu"},
      {"type": "dense", "units": 512, "activation": "relu"}, {"type": "dense", "units": 10}]})");
  Json a = request({}), b = request({{"activation_offload", true}});
  a["model"] = deep;
  b["model"] = deep;
  const double full = predict(a)["results"][0]["memory"]["activations_gb"].get<double>();
  CHECK(predict(b)["results"][0]["memory"]["activations_gb"].get<double>() < full);
}

TEST_CASE("offload under data parallelism with ZeRO shares the host per GPU", "[offload]") {
  Json req = request({{"offload", "optimizer"}}, device(512, 8));
  req["parallel"] = {{"data", 2}, {"zero_stage", 2}};
  const Json r = predict(req)["results"][0];
  REQUIRE_FALSE(r.contains("error"));
  CHECK(r["memory"]["host_gb"].get<double>() == Approx(kParams / 2 * 16 / 1e9).margin(1e-6));
  CHECK(r["host_memory_gb"].get<double>() == Approx(256).margin(1e-6));
  CHECK(r["offload_ms"].get<double>() >= Approx(kParams / 2 * 30 / 50e6).margin(1e-6));
  CHECK(r["optimizer_ms"] == 0);
  Json plain = req;
  plain["training"].erase("offload");
  const Json p = predict(plain)["results"][0];
  CHECK_FALSE(p.contains("offload_ms"));
  CHECK(r["memory_gb"].get<double>() < p["memory_gb"].get<double>());
}

TEST_CASE("offload's bad input gets errors naming the field", "[offload][errors]") {
  check_error(request({{"offload", "optimizer"}, {"optimizer", "none"}}), "training.offload", "optimizer is none");
  check_error(request({{"offload", "gpu"}}), "training.offload", "optimizer_params");
  check_error(request({{"offload", "optimizer"}, {"optimizer", "adamw_8bit"}}), "training.offload", "GPU kernels");
  check_error(request({{"activation_offload", "yes"}}), "training.activation_offload", "");
  Json bad = device(512);
  bad["host"]["link_gbs"] = 0;
  check_error(request({}, bad), "hardware[0].host.link_gbs", "");
  bad = device(512);
  bad["host"]["pcie"] = 4;
  check_error(request({}, bad), "hardware[0].host.pcie", "unknown field");
}

TEST_CASE("every catalogue accelerator has a host", "[offload][hardware]") {
  for (const auto& acc : prenet::hardware_catalogue()) {
    INFO(acc.id);
    CHECK(acc.host.memory_gb > 0);
    CHECK(acc.host.memory_bandwidth_gbs > 0);
    CHECK(acc.host.link_gbs > 0);
    CHECK(acc.host.gpus >= 1);
    CHECK(acc.record["host"]["source"].is_string());
  }
  // A custom accelerator without a host gets the stated default.
  Json custom = device(1);
  custom.erase("host");
  const Json r = predict(request({{"offload", "optimizer"}}, custom))["results"][0];
  CHECK(r["host_memory_gb"].get<double>() == prenet::default_host().memory_gb);
}

TEST_CASE("activation offload: a saved tensor's copy hides behind the compute up to the next saved tensor",
          "[offload]") {
  prenet::HostSpec host;
  host.link_gbs = 10;  // 1e7 bytes per ms
  // A checkpointed block: its input (4e7 bytes, 4 ms each way) is saved by its first layer; the block's other
  // layers save nothing and run 1 + 2 ms forward, 2 + 3 ms backward behind the copy.
  const std::vector<std::array<double, 3>> block = {{4e7, 0.5, 0.5}, {0, 1, 2}, {0, 2, 3}};
  CHECK(prenet::exposed_activation_copies_ms(block, host) == Approx((4 - 3.5) + 0.0));
  // Two saving layers each hide only behind their own window.
  const std::vector<std::array<double, 3>> two = {{2e7, 1, 1}, {0, 0.5, 0.5}, {1e7, 0.2, 3}};
  CHECK(prenet::exposed_activation_copies_ms(two, host) == Approx((2 - 1.5) + (2 - 1.5) + (1 - 0.2) + 0.0));
  // Layers before the first saved tensor hide nothing; no saved tensor, nothing exposed.
  CHECK(prenet::exposed_activation_copies_ms({{0, 5, 5}, {1e7, 0.1, 0.1}}, host) == Approx(2 * (1 - 0.1)));
  CHECK(prenet::exposed_activation_copies_ms({{0, 1, 1}}, host) == 0);
}
