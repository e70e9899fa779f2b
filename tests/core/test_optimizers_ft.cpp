// Fine-tuning's optimizers and switches (issue 19, docs/PREDICTION.md "Optimizers for fine-tuning"): state bytes
// per optimizer from the sources' allocation rules, written out here per tensor; Muon's Newton-Schulz GEMMs;
// pure bf16 (master_weights bf16); optimizer_in_backward's gradient memory; the refusals.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "helpers.hpp"
#include "prenet/api.hpp"
#include "prenet/features.hpp"
#include "prenet/memory.hpp"
#include "small_models.hpp"

using namespace prenet;
using testutil::d;

namespace {

// fc1: a 100 x 70 matrix (7,000 weights: at least bitsandbytes' min_8bit_size of 4,096, 28 blocks of 256 with
// the last one partial) and 70 biases; fc2: 70 x 10 (700 weights, under min_8bit_size) and 10 biases.
const char* kTwoDense = R"J({"input": {"kind": "vector", "features": 100},
  "layers": [{"type": "dense", "name": "fc1", "units": 70, "activation": "relu"},
             {"type": "dense", "name": "fc2", "units": 10}, {"type": "cross_entropy", "name": "loss"}]})J";

constexpr double kW1 = 100 * 70, kB1 = 70, kW2 = 70 * 10, kB2 = 10;

TrainingConfig with(Optimizer o, Precision p = Precision::BF16, MasterWeights m = MasterWeights::FP32) {
  TrainingConfig t = testutil::trained_with(p, o);
  t.master_weights = m;
  return t;
}

MemoryEstimate memory_of(const Network& net, const TrainingConfig& t) {
  StepWork work = step_work(net, 4, kernel_context(t), t.optimizer, t.optimizer_impl);
  return estimate_memory(net, work, t);
}

double optimizer_bytes(const Network& net, const TrainingConfig& t) { return memory_of(net, t).optimizer_gb * 1e9; }

Json predict(const Json& request) { return Json::parse(predict_json(request.dump())); }

Json request_with(const Json& training, const Json& parallel = nullptr) {
  Json r = {{"model", Json::parse(kTwoDense)}, {"hardware", {"h100-sxm"}}, {"training", training}};
  if (!parallel.is_null()) r["parallel"] = parallel;
  return r;
}

void check_error(const Json& response, const std::string& field, const std::string& needle) {
  INFO(response.dump());
  REQUIRE(response.contains("error"));
  CHECK(response["error"]["field"] == field);
  CHECK_THAT(response["error"]["message"].get<std::string>(), Catch::Contains(needle));
}

}  // namespace

TEST_CASE("8-bit AdamW: two 1-byte states and an FP32 absmax per 256-element block; small tensors 32-bit",
          "[optimizers]") {
  // bitsandbytes Optimizer2State.init_state: numel >= min_8bit_size (4096) gets uint8 state1/state2 and
  // absmax1/absmax2 of ceil(n / 256) floats; anything smaller two float32 states.
  Network net = testutil::net_of(kTwoDense);
  const double fc1 = 2 * (kW1 + 4 * std::ceil(kW1 / 256)) + 2 * 4 * kB1;
  const double fc2 = 2 * 4 * (kW2 + kB2);
  CHECK(std::ceil(kW1 / 256) == 28);
  for (Optimizer o : {Optimizer::AdamW8bit, Optimizer::PagedAdamW8bit}) {
    CHECK(optimizer_bytes(net, with(o)) == Approx(fc1 + fc2));
    // bitsandbytes' states do not follow the weights' dtype: the same under pure bf16.
    CHECK(optimizer_bytes(net, with(o, Precision::BF16, MasterWeights::BF16)) == Approx(fc1 + fc2));
  }
  // Paged AdamW (32-bit): two FP32 states per parameter, also beside bf16 weights (paging saves no bytes).
  const double all = kW1 + kB1 + kW2 + kB2;
  CHECK(optimizer_bytes(net, with(Optimizer::PagedAdamW)) == Approx(8 * all));
  CHECK(optimizer_bytes(net, with(Optimizer::PagedAdamW, Precision::BF16, MasterWeights::BF16)) == Approx(8 * all));
  CHECK(optimizer_bytes(net, with(Optimizer::AdamW)) == Approx(8 * all));
}

TEST_CASE("Adafactor keeps a row and a column FP32 second moment per matrix and a full one per vector",
          "[optimizers]") {
  // transformers' Adafactor, beta1 None: exp_avg_sq_row (out) and exp_avg_sq_col (in) for a 2-D weight,
  // exp_avg_sq of the bias's shape, all float32 (the states follow grad.float()).
  Network net = testutil::net_of(kTwoDense);
  const double expected = 4 * ((100 + 70) + kB1) + 4 * ((70 + 10) + kB2);
  CHECK(optimizer_bytes(net, with(Optimizer::Adafactor)) == Approx(expected));
  CHECK(optimizer_bytes(net, with(Optimizer::Adafactor, Precision::BF16, MasterWeights::BF16)) == Approx(expected));
}

TEST_CASE("Lion keeps one momentum like its parameter", "[optimizers]") {
  Network net = testutil::net_of(kTwoDense);
  const double all = kW1 + kB1 + kW2 + kB2;
  CHECK(optimizer_bytes(net, with(Optimizer::Lion)) == Approx(4 * all));
  CHECK(optimizer_bytes(net, with(Optimizer::Lion, Precision::BF16, MasterWeights::BF16)) == Approx(2 * all));
}

TEST_CASE("Muon: a momentum per hidden matrix, AdamW's two states for the rest, 5 Newton-Schulz iterations",
          "[optimizers]") {
  Network net = testutil::net_of(kTwoDense);
  const double vectors = kB1 + kB2;
  CHECK(optimizer_bytes(net, with(Optimizer::Muon)) == Approx(4 * (kW1 + kW2) + 8 * vectors));
  CHECK(optimizer_bytes(net, with(Optimizer::Muon, Precision::BF16, MasterWeights::BF16)) ==
        Approx(2 * (kW1 + kW2) + 4 * vectors));
  // KellerJordan/Muon zeropower_via_newtonschulz5 on fc1's 100 x 70 (X is 70 x 100 after the transpose):
  // A = X X^T (70 x 70 x 100), A A (70 x 70 x 70), B X (70 x 100 x 70), each 2 m n k FLOPs, five times.
  const TrainingConfig t = with(Optimizer::Muon);
  StepWork work = step_work(net, 4, kernel_context(t), t.optimizer);
  const double m = 70, n = 100;
  const double ns = 5 * (2 * m * m * n + 2 * m * m * m + 2 * m * n * m);
  CHECK(testutil::matmul_flops(work, testutil::layer_index(net, "fc1"), Phase::Optimizer) == Approx(ns));
  int gemms = 0;
  for (const Kernel& k : work.kernels) {
    if (k.layer == 0 && k.phase == Phase::Optimizer && k.cls == KernelClass::Gemm) {
      ++gemms;
      CHECK(k.bytes == Approx(2 * (k.m * k.k + k.k * k.n + k.m * k.n)));  // bf16 operands
    }
  }
  CHECK(gemms == 15);
  // AdamW steps the biases; the momentum update the matrices: both optimizer-class kernels.
  const double m2 = 10, n2 = 70;
  CHECK(testutil::matmul_flops(work, testutil::layer_index(net, "fc2"), Phase::Optimizer) ==
        Approx(5 * (4 * m2 * m2 * n2 + 2 * m2 * m2 * m2)));
}

TEST_CASE("master_weights bf16: bf16 weights, gradients and states, no FP32 copy", "[optimizers]") {
  Network net = testutil::net_of(kTwoDense);
  const double all = kW1 + kB1 + kW2 + kB2;
  const MemoryEstimate mixed = memory_of(net, with(Optimizer::AdamW));
  CHECK(mixed.weights_gb * 1e9 == Approx((2 + 4) * all));
  CHECK(mixed.gradients_gb * 1e9 == Approx(2 * all));
  CHECK(mixed.optimizer_gb * 1e9 == Approx(8 * all));
  const MemoryEstimate pure = memory_of(net, with(Optimizer::AdamW, Precision::BF16, MasterWeights::BF16));
  CHECK(pure.weights_gb * 1e9 == Approx(2 * all));
  CHECK(pure.gradients_gb * 1e9 == Approx(2 * all));
  CHECK(pure.optimizer_gb * 1e9 == Approx(4 * all));
  // The step reads and writes 2-byte weights, gradients and states: AdamW's fused 28 bytes become 14, and no
  // 16-bit copy is written (mixed: 28 + 4).
  auto step_bytes = [&](const TrainingConfig& t) {
    return testutil::phase_bytes(step_work(net, 4, kernel_context(t), t.optimizer), Phase::Optimizer);
  };
  CHECK(step_bytes(with(Optimizer::AdamW)) == Approx(32 * all));
  CHECK(step_bytes(with(Optimizer::AdamW, Precision::BF16, MasterWeights::BF16)) == Approx(14 * all));
  // 8-bit: 8 bytes of weight, 4 of FP32 gradient, 1 + 1 read and written per state (bitsandbytes' kernel).
  CHECK(step_bytes(with(Optimizer::AdamW8bit)) == Approx((16 + 4) * all));
}

TEST_CASE("optimizer_in_backward holds only the largest layer's gradients", "[optimizers]") {
  Network net = testutil::net_of(kTwoDense);
  TrainingConfig t = with(Optimizer::AdamW);
  t.optimizer_in_backward = true;
  const MemoryEstimate m = memory_of(net, t);
  CHECK(m.gradients_gb * 1e9 == Approx(2 * (kW1 + kB1)));  // fc1's bf16 gradients
  CHECK(m.optimizer_gb * 1e9 == Approx(8 * (kW1 + kB1 + kW2 + kB2)));
  // Same kernels, so the same optimizer work.
  TrainingConfig plain = with(Optimizer::AdamW);
  CHECK(testutil::phase_bytes(step_work(net, 4, kernel_context(t), t.optimizer), Phase::Optimizer) ==
        Approx(testutil::phase_bytes(step_work(net, 4, kernel_context(plain), plain.optimizer), Phase::Optimizer)));
}

TEST_CASE("the new optimizers and switches are read, echoed and refused where they cannot apply",
          "[optimizers][errors]") {
  for (const char* name : {"adamw_8bit", "paged_adamw_8bit", "paged_adamw", "adafactor", "lion", "muon"}) {
    Json r = predict(request_with({{"optimizer", name}, {"precision", "bf16"}}));
    INFO(name << ": " << r.dump().substr(0, 300));
    REQUIRE_FALSE(r.contains("error"));
    CHECK(r["training"]["optimizer"] == name);
  }
  Json pure =
      predict(request_with({{"precision", "bf16"}, {"master_weights", "bf16"}, {"optimizer_in_backward", true}}));
  REQUIRE_FALSE(pure.contains("error"));
  CHECK(pure["training"]["master_weights"] == "bf16");
  CHECK(pure["training"]["optimizer_in_backward"] == true);
  Json plain = predict(request_with({{"precision", "bf16"}}));
  CHECK_FALSE(plain["training"].contains("master_weights"));
  CHECK_FALSE(plain["training"].contains("optimizer_in_backward"));

  check_error(predict(request_with({{"master_weights", "bf16"}})), "training.master_weights", "precision fp32");
  check_error(predict(request_with({{"master_weights", "fp16"}})), "training.master_weights", "expected one of");
  check_error(predict(request_with({{"optimizer_in_backward", "yes"}})), "training.optimizer_in_backward",
              "expected true or false");
  check_error(predict(request_with({{"optimizer_in_backward", true}, {"optimizer", "none"}})),
              "training.optimizer_in_backward", "optimizer is none");
  check_error(predict(request_with({{"optimizer_in_backward", true}, {"batch_size", 8}},
                                   {{"data", 1}, {"micro_batch_size", 4}, {"micro_batches", 2}})),
              "training.optimizer_in_backward", "micro_batches");
}

namespace {

Json predict_llama(const std::string& training) {
  return predict(Json::parse(R"({"model": {"hf_config": )" + std::string(testutil::small_llama_config()) +
                             R"(}, "hardware": ["h100-sxm"], "training": )" + training + "}"));
}

double optimizer_bytes_of(const Json& r) {
  INFO(r.dump().substr(0, 400));
  REQUIRE_FALSE(r.contains("error"));
  return r.at("results").at(0).at("memory").at("optimizer_gb").get<double>() * 1e9;
}

}  // namespace

TEST_CASE("the optimizers' state rules on a Llama's matrices (linear_modules)", "[optimizers]") {
  const double q = 64 * 64, kv = 64 * 32, mlp = 64 * 128, table = 128 * 64, norms = 5 * 64;
  const double hidden = 2 * (2 * q + 2 * kv + 3 * mlp), others = 2 * table + norms;
  const Json adamw = predict_llama(R"({"batch_size": 1, "precision": "bf16", "optimizer": "adamw"})");
  REQUIRE(adamw.at("model").at("parameters").get<double>() == hidden + others);
  const auto bytes = [](const char* optimizer) {
    return optimizer_bytes_of(
        predict_llama(std::string(R"({"batch_size": 1, "precision": "bf16", "optimizer": ")") + optimizer + "\"}"));
  };
  // Muon: a momentum per hidden matrix; the embedding, lm_head and the norms to AdamW.
  CHECK(bytes("muon") == Approx(4 * hidden + 8 * others).epsilon(1e-5));
  // 8-bit: q, o, the MLP, the embedding and the head are >= 4096 (1 byte x 2 states + absmax per 256); k, v and
  // the norms keep FP32 states.
  const double large = 2 * (2 * q + 3 * mlp) + 2 * table;
  const double blocks = 2 * (2 * q / 256 + 3 * mlp / 256) + 2 * table / 256;
  CHECK(bytes("adamw_8bit") == Approx(2 * (large + 4 * blocks) + 8 * (hidden + others - large)).epsilon(1e-5));
  // Adafactor: rows + columns of every matrix (the embedding's too), the full shape of each norm scale.
  const double factored = 2 * (2 * (64 + 64) + 2 * (64 + 32) + 3 * (64 + 128)) + 2 * (128 + 64);
  CHECK(bytes("adafactor") == Approx(4 * (factored + norms)).epsilon(1e-5));
}

TEST_CASE("with LoRA the optimizer keeps states for the adapters only, each by its own shape", "[optimizers]") {
  // q_proj and v_proj adapters of rank 8: A 64 x 8, B 8 x 64 (q) and 8 x 32 (v), all under min_8bit_size.
  const double adapters = 2 * 8 * ((64 + 64) + (64 + 32));
  const auto bytes = [](const char* optimizer) {
    return optimizer_bytes_of(predict_llama(std::string(R"({"batch_size": 1, "precision": "bf16", "optimizer": ")") +
                                            optimizer + R"(", "finetune": {"method": "lora", "rank": 8}})"));
  };
  CHECK(bytes("adamw_8bit") == Approx(8 * adapters).epsilon(1e-5));  // every adapter tensor below 4096: FP32
  CHECK(bytes("muon") == Approx(4 * adapters).epsilon(1e-5));        // adapters are 2-D hidden matrices
  CHECK(bytes("adafactor") == Approx(4 * 2 * ((64 + 8) + (8 + 64) + (64 + 8) + (8 + 32))).epsilon(1e-5));
}
