// The gated_deltanet layer kind (Qwen3-Next's and Qwen3.5's linear_attention mixers) and attention's output gate:
// parameters as transformers' Qwen3NextGatedDeltaNet / Qwen3NextAttention build them, the kernels' FLOPs against
// the counts written in layers/gated_deltanet.cpp, what is saved for backward, tensor parallelism, the timing note,
// and errors naming the attribute.
#include <catch2/catch.hpp>
#include <string>

#include "helpers.hpp"
#include "layers/layer_kind.hpp"
#include "prenet/features.hpp"
#include "prenet/hardware.hpp"
#include "prenet/kernel_features.hpp"
#include "prenet/parallel.hpp"
#include "prenet/training.hpp"

using namespace prenet;
using testutil::class_count;
using testutil::class_flops;
using testutil::layer;
using testutil::layer_index;
using testutil::matmul_flops;
using testutil::net_of;

namespace {

constexpr auto kF = Phase::Forward;
constexpr auto kB = Phase::Backward;

/// A one-layer sequence model of `features` wide around `layer_json`.
std::string seq_model(int seq_len, int features, const std::string& layer_json) {
  return R"({"input": {"kind": "sequence", "seq_len": )" + std::to_string(seq_len) + R"(, "features": )" +
         std::to_string(features) + R"(}, "layers": [{"type": "rmsnorm"}, )" + layer_json + "]}";
}

/// A mixer of D 64: 2 key heads of 16, 4 value heads of 32 (K 32, V 128, conv channels 192).
const char* const kSmall = R"({"type": "gated_deltanet", "name": "g", "key_heads": 2, "value_heads": 4,
  "key_head_dim": 16, "value_head_dim": 32)";

StepWork step_of(const Network& net, int batch) {
  TrainingConfig t;
  t.precision = Precision::BF16;
  return step_work(net, batch, kernel_context(t), Optimizer::Adam);
}

}  // namespace

TEST_CASE("gated_deltanet parameters as Qwen3NextGatedDeltaNet builds them", "[layers][deltanet]") {
  // Qwen3-Next-80B-A3B's mixer: hidden 2048, 16 key heads and 32 value heads of 128, conv 4.
  const std::int64_t D = 2048, K = 16 * 128, V = 32 * 128, Hv = 32;
  const std::int64_t expected = D * (2 * K + 2 * V)  // in_proj_qkvz
                                + D * 2 * Hv         // in_proj_ba
                                + (2 * K + V) * 4    // conv1d, depthwise, no bias
                                + 2 * Hv             // dt_bias, A_log
                                + 128                // the gated RMSNorm over head_v_dim
                                + V * D;             // out_proj
  CHECK(expected == 33718464);
  const std::string spec = R"({"type": "gated_deltanet", "name": "g", "key_heads": 16, "value_heads": 32,
    "key_head_dim": 128, "value_head_dim": 128, "conv_kernel": 4})";
  CHECK(layer(net_of(seq_model(8, 2048, spec)), "g").parameters == expected);
  // Qwen3.5's four projections hold the same weights.
  const std::string split = spec.substr(0, spec.size() - 1) + R"(, "split_projections": true})";
  CHECK(layer(net_of(seq_model(8, 2048, split)), "g").parameters == expected);
}

TEST_CASE("gated_deltanet kernels: projections, the chunked delta rule's FLOPs, what backward keeps",
          "[layers][deltanet]") {
  const double b = 2, s = 512, m = b * s, D = 64, Hv = 4, dk = 16, dv = 32, K = 32, V = 128, C = 64;
  const Network net = net_of(seq_model(512, 64, std::string(kSmall) + "}"));
  const std::size_t g = layer_index(net, "g");
  const StepWork w = step_of(net, 2);
  // in_proj_qkvz (2K + 2V), in_proj_ba (2 Hv) and out_proj: 2 m D (2K + 2V + 2 Hv + V) forward.
  CHECK(class_flops(w, g, kF, KernelClass::Gemm) == Approx(2 * m * D * (2 * K + 2 * V + 2 * Hv + V)));
  CHECK(class_count(w, g, kF, KernelClass::Gemm) == 3);
  // The delta rule per token and value head: 6 C dk + 4 C dv + 6 dk dv + 2 C^2 / 3 forward, and backward
  // 14 C dk + 10 C dv + 16 dk dv + 4 C^2 / 3 (three and six kernels).
  const double forward = m * Hv * (6 * C * dk + 4 * C * dv + 6 * dk * dv + 2 * C * C / 3);
  const double backward = m * Hv * (14 * C * dk + 10 * C * dv + 16 * dk * dv + 4 * C * C / 3);
  CHECK(class_flops(w, g, kF, KernelClass::BatchedGemm) == Approx(forward));
  CHECK(class_flops(w, g, kB, KernelClass::BatchedGemm) == Approx(backward));
  CHECK(class_count(w, g, kF, KernelClass::BatchedGemm) == 3);
  CHECK(class_count(w, g, kB, KernelClass::BatchedGemm) == 6);
  // Saved (BF16): the projections' input and outputs, q and k at the value heads, v, beta and the C x C block
  // (2 bytes), g and the two inverse norms (FP32), the norm's input and statistics, out_proj's input.
  const double e = 2, Cc = 2 * K + V;
  const double saved = e * m * (D + V) + e * m * (Cc + V + 2 * Hv) + e * m * Hv * (2 * dk + dv + 1 + C) +
                       4 * m * Hv * 3 + e * m * V + 4 * m * Hv;
  CHECK(w.layers[g].saved_activation_bytes == Approx(saved));
  // Qwen3.5's split projections: four input GEMMs, the same FLOPs.
  const Network split = net_of(seq_model(512, 64, std::string(kSmall) + R"(, "split_projections": true})"));
  const StepWork ws = step_of(split, 2);
  CHECK(class_count(ws, g, kF, KernelClass::Gemm) == 5);
  CHECK(matmul_flops(ws, g, kF) == Approx(matmul_flops(w, g, kF)));
  // Key heads equal to value heads: no repeat of q and k (one elementwise kernel fewer).
  const Network even = net_of(seq_model(512, 64, R"({"type": "gated_deltanet", "name": "g", "key_heads": 4,
    "value_heads": 4, "key_head_dim": 16, "value_head_dim": 32})"));
  CHECK(class_count(step_of(even, 2), g, kF, KernelClass::Elementwise) ==
        class_count(w, g, kF, KernelClass::Elementwise) - 1);
}

TEST_CASE("gated_deltanet's LoRA targets are the projections transformers names", "[layers][deltanet]") {
  const Network fused = net_of(seq_model(8, 64, std::string(kSmall) + "}"));
  std::vector<std::string> roles;
  for (const LinearModule& m : kind_of(LayerType::GatedDeltaNet).linear_modules(layer(fused, "g"))) {
    roles.push_back(m.role);
  }
  CHECK(roles == std::vector<std::string>{"in_proj_qkvz", "in_proj_ba", "out_proj"});
  const Network split = net_of(seq_model(8, 64, std::string(kSmall) + R"(, "split_projections": true})"));
  roles.clear();
  double widths = 0;
  for (const LinearModule& m : kind_of(LayerType::GatedDeltaNet).linear_modules(layer(split, "g"))) {
    roles.push_back(m.role);
    if (m.role != "out_proj") widths += m.out;
  }
  CHECK(roles == std::vector<std::string>{"in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "out_proj"});
  CHECK(widths == 2 * 32 + 2 * 128 + 2 * 4);
}

TEST_CASE("gated_deltanet over the tensor group: key and value heads split, out_proj summed, as Megatron-Core",
          "[layers][deltanet][tensor]") {
  const Network net = net_of(seq_model(512, 64, std::string(kSmall) + "}"));
  const std::size_t g = layer_index(net, "g");
  const ShardedNetwork two = shard_network(net, 2);
  const Layer& half = two.net.layers[g];
  CHECK(half.attrs.num_kv_heads == 1);
  CHECK(half.attrs.num_heads == 2);
  // Local: K 16, V 64: in 64 x (32 + 128 + 4), conv over 96 x 4, 2 x 2, the norm's 32 (whole), out_proj 64 x 64.
  CHECK(half.parameters == 64 * 164 + 96 * 4 + 4 + 32 + 64 * 64);
  CHECK(two.layers[g].forward_allreduces == 1);
  CHECK(two.layers[g].allreduce_bytes_per_sample == 512 * 64);
  CHECK(matmul_flops(step_of(two.net, 2), g, kF) == Approx(matmul_flops(step_of(net, 2), g, kF) / 2));
  testutil::require_input_error([&] { shard_network(net, 4); }, "parallel.tensor", "Gated DeltaNet key heads");
}

TEST_CASE("gated_deltanet: the response says its kernels are unmeasured; context parallelism refuses it",
          "[layers][deltanet]") {
  const Json model = Json::parse(seq_model(4096, 64, std::string(kSmall) + R"(}, {"type": "attention",
    "num_heads": 4, "causal": true, "bias": false})"));
  Json request = {
      {"model", model}, {"training", {{"batch_size", 8}, {"precision", "bf16"}}}, {"hardware", {"h100-sxm"}}};
  const Json out = testutil::call(request);
  REQUIRE(out.contains("warnings"));
  int notes = 0;
  for (const Json& w : out["warnings"])
    notes += w.get<std::string>().find("chunk_gated_delta_rule") != std::string::npos;
  CHECK(notes == 1);
  request["parallel"] = {{"data", 4}, {"context", 2}};
  request["hardware"] = {"h100-sxm"};
  request["training"]["batch_size"] = 8;
  testutil::require_error(request, "parallel.context", "does not run position by position");
}

TEST_CASE("gated_deltanet rejects bad input naming the attribute", "[layers][deltanet][errors]") {
  using testutil::require_model_error;
  require_model_error(seq_model(8, 64, R"({"type": "gated_deltanet", "key_heads": 3, "value_heads": 4,
    "key_head_dim": 16, "value_head_dim": 32})"),
                      "model.layers[1].value_heads", "multiple of key_heads");
  require_model_error(seq_model(8, 64, R"({"type": "gated_deltanet", "value_heads": 4, "key_head_dim": 16,
    "value_head_dim": 32})"),
                      "model.layers[1].key_heads", "required integer is missing");
  require_model_error(seq_model(8, 64, std::string(kSmall) + R"(, "conv_kernel": 0})"), "model.layers[1].conv_kernel",
                      "");
  require_model_error(seq_model(8, 64, std::string(kSmall) + R"(, "state_size": 16})"), "model.layers[1].state_size",
                      "");
}

TEST_CASE("attention output_gate: q_proj twice as wide, the gate's kernels and what it keeps", "[layers][deltanet]") {
  const std::string plain = R"({"type": "attention", "name": "a", "num_heads": 4, "num_kv_heads": 2, "head_dim": 32,
    "causal": true, "bias": false)";
  const Network without = net_of(seq_model(256, 64, plain + "}"));
  const Network with = net_of(seq_model(256, 64, plain + R"(, "output_gate": true})"));
  const std::size_t a = layer_index(with, "a");
  const double q = 4 * 32, D = 64, m = 2 * 256;
  CHECK(with.layers[a].parameters == without.layers[a].parameters + 64 * 128);
  const StepWork w0 = step_of(without, 2), w1 = step_of(with, 2);
  // The gate's projection rides in the QKV GEMM (forward), and in both backward GEMMs.
  CHECK(class_flops(w1, a, kF, KernelClass::Gemm) == Approx(class_flops(w0, a, kF, KernelClass::Gemm) + 2 * m * D * q));
  CHECK(class_flops(w1, a, kB, KernelClass::Gemm) == Approx(class_flops(w0, a, kB, KernelClass::Gemm) + 4 * m * D * q));
  // sigmoid(gate) and the ungated output kept: two more query-wide tensors (BF16).
  CHECK(w1.layers[a].saved_activation_bytes == Approx(w0.layers[a].saved_activation_bytes + 2 * 2 * m * q));
  const auto modules = kind_of(LayerType::Attention).linear_modules(with.layers[a]);
  CHECK(modules.front().role == "q_proj");
  CHECK(modules.front().out == 2 * q);
  const ShardedNetwork two = shard_network(with, 2);
  CHECK(two.net.layers[a].parameters == with.layers[a].parameters / 2);
}

TEST_CASE("gated_deltanet chunk kernels timed from the catalogue's measured delta-rule rates",
          "[layers][deltanet][timing]") {
  // FlashQLA's benchmark (models/data/found/fla-gated-delta-rule.csv): flash-linear-attention's forward and backward
  // over one sequence of 32768 tokens, 16 key and 32 value heads of 128. The fit's error over its rows is about 4%
  // forward and 9-14% backward (models/fit-delta-rule.mjs), so these bounds can fail.
  const Network net = net_of(seq_model(32768, 64, R"({"type": "gated_deltanet", "name": "g", "key_heads": 16,
    "value_heads": 32, "key_head_dim": 128, "value_head_dim": 128})"));
  const StepWork w = step_of(net, 1);
  auto summed = [&](const char* id, Phase phase, Precision precision) {
    const Accelerator* acc = find_hardware(id);
    REQUIRE(acc != nullptr);
    double ms = 0;
    int kernels = 0;
    for (const Kernel& k : w.kernels) {
      if (k.phase != phase || k.part != KernelPart::DeltaRule) continue;
      const auto t = delta_rule_ms(k, *acc, precision);
      if (!t) return -1.0;
      ms += *t;
      ++kernels;
    }
    CHECK(kernels == (phase == kF ? 3 : 6));
    return ms;
  };
  CHECK(summed("h200", kF, Precision::BF16) == Approx(1.890).epsilon(0.10));
  CHECK(summed("h200", kB, Precision::BF16) == Approx(5.697).epsilon(0.25));
  CHECK(summed("gb200", kF, Precision::BF16) == Approx(1.770).epsilon(0.10));
  CHECK(summed("gb200", kB, Precision::BF16) == Approx(5.714).epsilon(0.25));
  // H100 SXM takes H200's fit (same die and clocks); parts without a measurement and FP32 keep the learned path.
  CHECK(summed("h100-sxm", kF, Precision::BF16) == summed("h200", kF, Precision::BF16));
  CHECK(summed("a100-sxm4-80gb", kF, Precision::BF16) == -1.0);
  CHECK(summed("h200", kF, Precision::FP32) == -1.0);
  // Fewer value heads reach less of the rate: half the heads take more than half the time.
  const Network narrow = net_of(seq_model(32768, 64, R"({"type": "gated_deltanet", "name": "g", "key_heads": 16,
    "value_heads": 16, "key_head_dim": 128, "value_head_dim": 128})"));
  const StepWork wn = step_of(narrow, 1);
  double narrow_ms = 0;
  for (const Kernel& k : wn.kernels) {
    if (k.phase == kF && k.part == KernelPart::DeltaRule)
      narrow_ms += *delta_rule_ms(k, *find_hardware("h200"), Precision::BF16);
  }
  CHECK(narrow_ms > 0.5 * summed("h200", kF, Precision::BF16));
  CHECK(narrow_ms == Approx(1.275).epsilon(0.10));  // FlashQLA: 16 key and 16 value heads, 32768 tokens
}
