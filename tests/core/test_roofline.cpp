// The analytic roofline predictor: precision support, monotonicity in the hardware's peaks and in the
// batch, the compute-bound and overhead-bound limits, and internal consistency of the totals.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/hardware.hpp"
#include "prenet/roofline.hpp"

using namespace prenet;
using testutil::net_of;

namespace {

Accelerator custom(double fp32_tflops, double bandwidth_gbs, double compute_units = 0) {
  Accelerator a;
  a.id = "test-accel";
  a.name = "Test accelerator";
  a.vendor = "custom";
  a.custom = true;
  a.memory_gb = 80;
  a.memory_bandwidth_gbs = bandwidth_gbs;
  a.compute_units = compute_units;
  a.peak_tflops[static_cast<int>(Precision::FP32)] = fp32_tflops;
  return a;
}

const Accelerator& catalogue(const std::string& id) {
  const Accelerator* a = find_hardware(id);
  REQUIRE(a != nullptr);
  return *a;
}

/// A mixed bag of layer types: a small CNN, a transformer block and an LSTM.
std::vector<Network> sample_networks() {
  std::vector<Network> nets;
  nets.push_back(net_of(R"J({"input": {"kind": "image", "channels": 3, "image_size": 64},
    "layers": [{"type": "conv2d", "filters": 32, "kernel_size": 3, "padding": "same", "activation": "relu"},
               {"type": "batchnorm"}, {"type": "max_pool2d"},
               {"type": "conv2d", "filters": 64, "kernel_size": 3, "stride": 2, "groups": 2},
               {"type": "global_avg_pool"}, {"type": "dropout", "rate": 0.2}, {"type": "dense", "units": 10},
               {"type": "cross_entropy"}]})J"));
  nets.push_back(net_of(R"J({"input": {"kind": "tokens", "seq_len": 128},
    "layers": [{"type": "embedding", "name": "tok", "vocab_size": 5000, "dim": 256},
               {"type": "repeat", "name": "block", "count": 2, "layers": [
                 {"type": "layernorm", "name": "ln"}, {"type": "attention", "name": "attn", "num_heads": 8, "num_kv_heads": 2},
                 {"type": "add", "name": "res", "inputs": ["ln", "attn"]},
                 {"type": "dense", "units": 1024, "activation": "gelu"}, {"type": "dense", "units": 256}]},
               {"type": "rmsnorm"}, {"type": "dense", "units": 5000, "tied_to": "tok"}, {"type": "softmax"},
               {"type": "cross_entropy"}]})J"));
  nets.push_back(net_of(R"J({"input": {"kind": "sequence", "seq_len": 50, "features": 40},
    "layers": [{"type": "lstm", "hidden_size": 128, "num_layers": 2, "bidirectional": true},
               {"type": "gru", "hidden_size": 64, "return_sequences": false}, {"type": "dense", "units": 5}]})J"));
  return nets;
}

/// Times each kernel of `work` on its own.
std::vector<double> kernel_times(const StepWork& work, const Accelerator& acc, Precision precision) {
  std::vector<double> out;
  for (const Kernel& k : work.kernels) {
    StepWork single;
    single.layers.resize(1);
    Kernel copy = k;
    copy.layer = 0;
    single.kernels.push_back(copy);
    out.push_back(roofline_times(single, {acc}, precision).front().step_ms);
  }
  return out;
}

}  // namespace

TEST_CASE("a precision the accelerator lacks fails on training.precision", "[roofline][errors]") {
  Accelerator fp32_only = custom(20, 1000);
  testutil::require_input_error([&] { matmul_peak_tflops(fp32_only, Precision::FP16, KernelClass::Gemm); },
                                "training.precision", "fp16 is not supported by Test accelerator (test-accel)");
  CHECK(matmul_peak_tflops(fp32_only, Precision::FP32, KernelClass::Gemm) == 20);
  StepWork work = step_work(sample_networks()[0], 4, KernelContext(Precision::FP16), Optimizer::Adam);
  testutil::require_input_error([&] { roofline_times(work, {fp32_only}, Precision::FP16); }, "training.precision",
                                "fp16");

  // Through the API, with a custom accelerator that has only fp32.
  Json response = Json::parse(predict_json(R"J({"model": {"preset": "resnet50"},
    "training": {"precision": "fp16", "batch_size": 8},
    "hardware": [{"name": "Only FP32", "id": "only-fp32", "peak_tflops": {"fp32": 30},
                  "memory_bandwidth_gbs": 900, "memory_gb": 24}]})J"));
  INFO(response.dump());
  REQUIRE(response.contains("error"));
  CHECK(response["error"]["field"] == "training.precision");
  CHECK_THAT(response["error"]["message"].get<std::string>(), Catch::StartsWith("training.precision: fp16"));
  CHECK_THAT(response["error"]["message"].get<std::string>(), Catch::Contains("only-fp32"));

  // A catalogue part without TF32 (Volta).
  Json volta = Json::parse(predict_json(
      R"J({"model": {"preset": "resnet50"}, "training": {"precision": "tf32"}, "hardware": ["v100-sxm2-16gb"]})J"));
  CHECK(volta["error"]["field"] == "training.precision");
  CHECK_THAT(volta["error"]["message"].get<std::string>(), Catch::Contains("v100-sxm2-16gb"));

  // FP8 training runs convolutions at 16 bits.
  const Accelerator& h100 = catalogue("h100-sxm");
  CHECK(matmul_peak_tflops(h100, Precision::FP8, KernelClass::Gemm) == *h100.peak(Precision::FP8));
  CHECK(matmul_peak_tflops(h100, Precision::FP8, KernelClass::Conv) == *h100.peak(Precision::BF16));
}

TEST_CASE("doubling bandwidth never slows a kernel, and doubling the FP32 peak never slows a step", "[roofline]") {
  for (double units : {0.0, 46.0}) {
    Accelerator base = custom(12, 500, units);
    Accelerator fast_memory = base;
    fast_memory.memory_bandwidth_gbs *= 2;
    Accelerator fast_compute = base;
    fast_compute.peak_tflops[static_cast<int>(Precision::FP32)] = 24.0;
    for (const Network& net : sample_networks()) {
      for (std::int64_t batch : {1, 7, 64}) {
        INFO("network " << net.layers.front().name << ", batch " << batch << ", units " << units);
        StepWork work = step_work(net, batch, KernelContext(Precision::FP32), Optimizer::Adam);
        std::vector<double> slow = kernel_times(work, base, Precision::FP32);
        std::vector<double> fast = kernel_times(work, fast_memory, Precision::FP32);
        REQUIRE(slow.size() == fast.size());
        int faster = 0;
        for (std::size_t i = 0; i < slow.size(); ++i) {
          CHECK(fast[i] <= slow[i]);
          faster += fast[i] < slow[i] ? 1 : 0;
        }
        CHECK(faster > 0);  // something was memory-bound

        auto t = roofline_times(work, {base, fast_memory, fast_compute}, Precision::FP32);
        CHECK(t[1].step_ms <= t[0].step_ms);
        CHECK(t[2].step_ms <= t[0].step_ms);
        for (std::size_t l = 0; l < net.layers.size(); ++l) {
          for (std::size_t p = 0; p < 3; ++p) {
            CHECK(t[1].layers[l].ms[p] <= t[0].layers[l].ms[p]);
            CHECK(t[2].layers[l].ms[p] <= t[0].layers[l].ms[p]);
          }
          // PreNeT's CT is CO / FP32 peak: it halves when the peak doubles.
          CHECK(t[2].layers[l].ct_ms == Approx(t[0].layers[l].ct_ms / 2));
          CHECK(t[0].layers[l].ct_ms == Approx(work.layers[l].co / 12e9));
        }
      }
    }
  }
}

TEST_CASE("a huge dense layer is GEMM-bound: step = FLOPs / (peak x efficiency)", "[roofline]") {
  Network net = net_of(R"J({"input": {"kind": "vector", "features": 8192},
    "layers": [{"type": "dense", "units": 8192, "bias": false}]})J");
  const double n = 8192;
  StepWork work = step_work(net, 8192, KernelContext(Precision::FP32), Optimizer::None);
  // Forward Y = X W and the weight gradient (no input gradient for the first layer): 2 x 2 n^3.
  const double flops = 2 * (2 * n * n * n);
  CHECK(work.flops[0] + work.flops[1] == Approx(flops));

  RooflineParams params;
  params.matmul_efficiency = 0.5;
  params.memory_efficiency = 0.8;
  params.launch_overhead_ms = 0.01;
  Accelerator acc = custom(10, 2000);
  auto t = roofline_times(work, {acc}, Precision::FP32, params).front();
  const double expected_ms = flops / (10e12 * 0.5) * 1e3;  // 439.8 ms
  CHECK(t.step_ms == Approx(expected_ms).epsilon(0.02));
  CHECK(t.bottleneck == Bound::Compute);
  CHECK(t.layers[0].bound == Bound::Compute);
  CHECK(t.compute_ms == Approx(expected_ms).epsilon(0.02));

  // Default efficiency and a 128-unit part: 64 x 64 tiles of 128 fill exactly 32 waves, no loss.
  Accelerator units = custom(10, 2000, 128);
  auto t_units = roofline_times(work, {units}, Precision::FP32).front();
  CHECK(t_units.step_ms == Approx(flops / (10e12 * RooflineParams{}.matmul_efficiency) * 1e3).epsilon(0.02));
  // 132 units: 4096 tiles need 32 waves of 132 slots, 97% busy.
  Accelerator odd = custom(10, 2000, 132);
  auto t_odd = roofline_times(work, {odd}, Precision::FP32).front();
  CHECK(t_odd.step_ms == Approx(t_units.step_ms * (32.0 * 132) / 4096).epsilon(0.02));

  // At BF16 the GEMMs run at the BF16 peak.
  Accelerator mixed = acc;
  mixed.peak_tflops[static_cast<int>(Precision::BF16)] = 100;
  StepWork bf16 = step_work(net, 8192, KernelContext(Precision::BF16), Optimizer::None);
  auto t_bf16 = roofline_times(bf16, {mixed}, Precision::BF16, params).front();
  CHECK(t_bf16.step_ms == Approx(flops / (100e12 * 0.5) * 1e3).epsilon(0.03));
}

TEST_CASE("a tiny network is overhead-bound", "[roofline]") {
  Network net = net_of(R"J({"input": {"kind": "vector", "features": 4},
    "layers": [{"type": "dense", "units": 2}, {"type": "activation", "function": "relu"}]})J");
  StepWork work = step_work(net, 1, KernelContext(Precision::FP32), Optimizer::SGD);
  RooflineParams params;
  auto t = roofline_times(work, {catalogue("a100-sxm4-80gb")}, Precision::FP32, params).front();
  CHECK(t.bottleneck == Bound::Overhead);
  CHECK(t.overhead_ms > t.compute_ms + t.memory_ms);
  // Every kernel costs one launch; the work itself is negligible.
  CHECK(t.step_ms == Approx(static_cast<double>(work.kernels.size()) * params.launch_overhead_ms).epsilon(0.01));
  for (const auto& l : t.layers) CHECK(l.bound == Bound::Overhead);

  Json response = Json::parse(predict_json(R"J({"model": {"input": {"kind": "vector", "features": 4},
    "layers": [{"type": "dense", "units": 2}]}, "training": {"batch_size": 1}})J"));
  CHECK(response["results"][0]["bottleneck"] == "overhead");
}

TEST_CASE("step time grows with batch size (powers of two)", "[roofline]") {
  std::vector<Network> nets = sample_networks();
  nets.push_back(resolve_model({{"preset", "resnet50"}}, TrainingConfig{}));
  for (const char* hw : {"a100-sxm4-80gb", "t4", "h100-sxm", "tpu-v4"}) {
    const Accelerator& acc = catalogue(hw);
    for (const Network& net : nets) {
      double previous = 0;
      for (std::int64_t batch = 1; batch <= 256; batch *= 2) {
        INFO(hw << ", " << net.layers.front().name << ", batch " << batch);
        StepWork work = step_work(net, batch, KernelContext(Precision::FP32), Optimizer::Adam);
        double step = roofline_times(work, {acc}, Precision::FP32).front().step_ms;
        CHECK(step > 0);
        CHECK(step >= previous);
        previous = step;
      }
      // Large batches cost more than small ones.
      double small =
          roofline_times(step_work(net, 1, KernelContext(Precision::FP32), Optimizer::Adam), {acc}, Precision::FP32)[0]
              .step_ms;
      double large = roofline_times(step_work(net, 256, KernelContext(Precision::FP32), Optimizer::Adam), {acc},
                                    Precision::FP32)[0]
                         .step_ms;
      CHECK(large > small);
    }
  }
}

// Regression test (fixed): wave quantisation divides the real (unpadded) FLOPs by the fraction of units busy, so crossing a
// tile boundary makes a GEMM *faster*: with M = 128 rows a 1024-wide GEMM has 8 tiles, with M = 129 it
// has 16 tiles on a 108-SM A100, and the predicted time halves although the work grew. For a
// 1024-1024-1024 MLP on a100-sxm4-80gb at FP32 the step drops from 0.887 ms at batch 128 to 0.519 ms at
// batch 129 (and again at 257, 385, ...). roofline.cpp wave_efficiency() should charge whole tiles
// (padded M and N), so time is non-decreasing in M.
TEST_CASE("step time never decreases when the batch grows by one", "[roofline]") {
  Network net = net_of(R"J({"input": {"kind": "vector", "features": 1024},
    "layers": [{"type": "dense", "units": 1024}, {"type": "dense", "units": 1024}]})J");
  const Accelerator& acc = catalogue("a100-sxm4-80gb");
  double previous = 0;
  int decreases = 0;
  for (std::int64_t batch = 100; batch <= 300; ++batch) {
    double step = roofline_times(step_work(net, batch, KernelContext(Precision::FP32), Optimizer::Adam), {acc},
                                 Precision::FP32)[0]
                      .step_ms;
    if (step < previous) {
      ++decreases;
      UNSCOPED_INFO("batch " << batch << ": " << step << " ms < " << previous << " ms at batch " << batch - 1);
    }
    previous = step;
  }
  CHECK(decreases == 0);
}

TEST_CASE("per-layer times sum to the phase totals, and the split sums to the step", "[roofline]") {
  std::vector<Network> nets = sample_networks();
  nets.push_back(resolve_model({{"preset", "gpt2"}}, [] {
    TrainingConfig t;
    t.seq_len = 128;
    return t;
  }()));
  std::vector<Accelerator> accs = {catalogue("a100-sxm4-80gb"), catalogue("t4"), catalogue("mi300x"), custom(5, 100, 10)};
  for (const Network& net : nets) {
    for (Precision precision : {Precision::FP32, Precision::FP16}) {
      StepWork work = step_work(net, 16, KernelContext(precision), Optimizer::AdamW);
      std::vector<Accelerator> usable;
      for (const auto& a : accs) {
        if (a.peak(precision)) usable.push_back(a);
      }
      auto timings = roofline_times(work, usable, precision);
      REQUIRE(timings.size() == usable.size());
      for (std::size_t i = 0; i < usable.size(); ++i) {
        INFO(usable[i].id << " " << to_string(precision) << " " << net.layers.front().name);
        const Timing& t = timings[i];
        REQUIRE(t.layers.size() == net.layers.size());
        for (std::size_t p = 0; p < 3; ++p) {
          double sum = 0;
          for (const auto& l : t.layers) sum += l.ms[p];
          CHECK(sum == Approx(t.ms[p]).epsilon(1e-9));
          CHECK(t.ms[p] >= 0);
        }
        CHECK(t.step_ms == Approx(t.ms[0] + t.ms[1] + t.ms[2]).epsilon(1e-12));
        CHECK(t.compute_ms + t.memory_ms + t.overhead_ms == Approx(t.step_ms).epsilon(1e-9));
        CHECK(t.ms[1] > t.ms[0] * 0.5);  // backward is not free
        CHECK(t.ms[2] > 0);              // AdamW updates every parameter
        // Each kernel costs its launches (a recurrent cell one per step); the per-layer optimizer updates, one
        // multi-tensor launch together.
        double launches = 1;
        for (const Kernel& k : work.kernels) launches += k.cls == KernelClass::Optimizer ? 0 : k.repeats;
        CHECK(t.overhead_ms == Approx(launches * RooflineParams{}.launch_overhead_ms).epsilon(1e-9));
      }
    }
  }
}

TEST_CASE("a GEMM with rows not 16 bytes long takes the measured tensor-core slowdown, on NVIDIA GPUs only",
          "[roofline][alignment]") {
  // GPT-2's head: 768 -> 50257 (misaligned at every precision) beside the padded 50264.
  auto head = [](int vocab) {
    return net_of(R"J({"input": {"kind": "sequence", "seq_len": 128, "features": 768},
      "layers": [{"type": "dense", "name": "head", "units": )J" +
                  std::to_string(vocab) + "}]}");
  };
  const Network odd = head(50257), padded = head(50264);
  const RooflineParams params;
  auto gemm_ms = [&](const Network& net, const char* gpu, Precision p) {
    StepWork w = step_work(net, 8, KernelContext(p), Optimizer::None);
    double ms = 0;
    for (const Kernel& k : w.kernels) {
      if (k.cls == KernelClass::Gemm) ms += kernel_time(k, catalogue(gpu), p).compute_ms;
    }
    return ms;
  };
  const double work = 50257.0 / 50264.0;  // the odd head's FLOPs relative to the padded one's
  for (const Kernel& k : step_work(odd, 8, KernelContext(Precision::BF16), Optimizer::None).kernels) {
    if (k.cls == KernelClass::Gemm) CHECK(k.misaligned);
  }
  for (const Kernel& k : step_work(padded, 8, KernelContext(Precision::BF16), Optimizer::None).kernels)
    CHECK_FALSE(k.misaligned);
  CHECK(gemm_ms(odd, "h100-sxm", Precision::BF16) / gemm_ms(padded, "h100-sxm", Precision::BF16) ==
        Approx(params.misaligned_16bit_slowdown * work).epsilon(0.02));
  CHECK(gemm_ms(odd, "a100-sxm4-80gb", Precision::TF32) / gemm_ms(padded, "a100-sxm4-80gb", Precision::TF32) ==
        Approx(params.misaligned_tf32_slowdown * work).epsilon(0.02));
  // No tensor cores in FP32; another vendor's libraries were not measured.
  CHECK(gemm_ms(odd, "a100-sxm4-80gb", Precision::FP32) / gemm_ms(padded, "a100-sxm4-80gb", Precision::FP32) ==
        Approx(work).epsilon(0.02));
  CHECK(gemm_ms(odd, "mi300x", Precision::BF16) / gemm_ms(padded, "mi300x", Precision::BF16) ==
        Approx(work).epsilon(0.02));
  // The same rule in the vectorised step timing.
  const auto step = [&](const Network& net) {
    return roofline_times(step_work(net, 8, KernelContext(Precision::BF16), Optimizer::None), {catalogue("h100-sxm")},
                          Precision::BF16)
        .front()
        .layers.front()
        .compute_ms;
  };
  CHECK(step(odd) / step(padded) == Approx(params.misaligned_16bit_slowdown * work).epsilon(0.05));
}
