// The layer kinds of the 2024-2026 families: attention's sliding window, chunks, QK-norm, sinks and
// soft-capping; active parameters of mixtures of experts; multi-head latent attention; Mamba mixers.
// Expected numbers are written from the Hugging Face modules' __init__ and from hand formulas.
#include <catch2/catch.hpp>
#include <string>

#include "helpers.hpp"
#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
#include "prenet/parallel.hpp"
#include "prenet/training.hpp"

using namespace prenet;
using testutil::layer;
using testutil::layer_index;
using testutil::matmul_flops;
using testutil::net_of;

namespace {

constexpr auto kF = Phase::Forward;
constexpr auto kB = Phase::Backward;

/// A one-layer sequence model of width `features` around the layer spec `layer_json`.
std::string seq_model(int seq_len, int features, const std::string& layer_json) {
  return R"({"input": {"kind": "sequence", "seq_len": )" + std::to_string(seq_len) + R"(, "features": )" +
         std::to_string(features) + R"(}, "layers": [{"type": "layernorm"}, )" + layer_json + "]}";
}

/// FLOPs of a layer's kernels of class `cls` in one phase.
double class_flops(const StepWork& w, std::size_t layer_i, Phase phase, KernelClass cls) {
  double total = 0;
  for (const Kernel& k : w.kernels) {
    if (static_cast<std::size_t>(k.layer) == layer_i && k.phase == phase && k.cls == cls) total += k.flops;
  }
  return total;
}

/// Number of a layer's kernels of class `cls` in one phase.
int class_count(const StepWork& w, std::size_t layer_i, Phase phase, KernelClass cls) {
  int n = 0;
  for (const Kernel& k : w.kernels)
    n += static_cast<std::size_t>(k.layer) == layer_i && k.phase == phase && k.cls == cls;
  return n;
}

/// The step of `net` for `batch` samples under flash (fused) or eager attention at precision p.
StepWork step_of(const Network& net, int batch, bool fused, Precision p = Precision::BF16) {
  TrainingConfig t;
  t.precision = p;
  t.attention = fused ? AttentionKernel::Flash : AttentionKernel::Eager;
  return step_work(net, batch, kernel_context(t), Optimizer::Adam);
}

}  // namespace

TEST_CASE("attention parameters: QK-norm and sinks as the Hugging Face modules build them", "[layers][modern]") {
  const std::int64_t hidden = 256, heads = 8, kv = 2, hd = 32;
  // q_proj, k_proj, v_proj, o_proj without bias (Qwen3, OLMo 2 and Llama 4 with attention_bias false).
  const std::int64_t projections = hidden * heads * hd + 2 * hidden * kv * hd + heads * hd * hidden;
  auto params = [&](const std::string& extra) {
    const std::string spec = R"({"type": "attention", "name": "a", "num_heads": 8, "num_kv_heads": 2,
      "head_dim": 32, "bias": false, "causal": true)" +
                             extra + "}";
    return layer(net_of(seq_model(16, 256, spec)), "a").parameters;
  };
  CHECK(params("") == projections);
  // Qwen3Attention: q_norm = Qwen3RMSNorm(head_dim), k_norm = Qwen3RMSNorm(head_dim).
  CHECK(params(R"(, "qk_norm": "head")") == projections + 2 * hd);
  // Olmo2Attention: q_norm = Olmo2RMSNorm(num_heads * head_dim), k_norm = Olmo2RMSNorm(num_kv_heads * head_dim).
  CHECK(params(R"(, "qk_norm": "full")") == projections + heads * hd + kv * hd);
  // Llama4TextL2Norm has no weight.
  CHECK(params(R"(, "qk_norm": "head_weightless")") == projections);
  // GptOssAttention: sinks = nn.Parameter(torch.empty(num_attention_heads)); its projections have biases.
  const std::int64_t biased = projections + heads * hd + 2 * kv * hd + hidden;
  const std::string gpt_oss = R"({"type": "attention", "name": "a", "num_heads": 8, "num_kv_heads": 2,
    "head_dim": 32, "causal": true, "sinks": true, "window": 128})";
  CHECK(layer(net_of(seq_model(16, 256, gpt_oss)), "a").parameters == biased + heads);
  // Soft-capping, windows and chunks add no parameters.
  CHECK(params(R"(, "softcap": 50.0, "window": 4)") == projections);
  CHECK(params(R"(, "chunk": 8)") == projections);
}

TEST_CASE("attention window and chunk: the fused kernel skips masked tiles, eager computes every score",
          "[layers][modern][flash]") {
  const int s = 8192, w = 4096, c = 3000;
  const double b = 1, h = 4, hd = 16, S = s;
  auto core_flops = [&](const std::string& extra, bool fused, Phase phase) {
    Network net =
        net_of(seq_model(s, 64, R"({"type": "attention", "name": "a", "num_heads": 4, "causal": true)" + extra + "}"));
    const StepWork step = step_of(net, 1, fused);
    return class_flops(step, layer_index(net, "a"), phase, KernelClass::BatchedGemm);
  };
  // Pairs (query, key) a causal query i sees: min(i + 1, w); as the area of the visible band, s w - w^2 / 2.
  const double band = S * w - 0.5 * w * w;
  const double causal_half = S * S / 2;
  CHECK(core_flops("", true, kF) == Approx(4 * b * h * hd * causal_half));
  CHECK(core_flops(R"(, "window": 4096)", true, kF) == Approx(4 * b * h * hd * band));
  CHECK(core_flops(R"(, "window": 4096)", true, kB) == Approx(10 * b * h * hd * band));
  CHECK(band / causal_half == Approx(0.75));
  // Chunks of 3000: two whole chunks and 2192 left over, each a causal triangle.
  const double chunks = 2 * 0.5 * c * c + 0.5 * 2192.0 * 2192.0;
  CHECK(core_flops(R"(, "chunk": 3000)", true, kF) == Approx(4 * b * h * hd * chunks));
  // A window at least the sequence is plain causal attention.
  CHECK(core_flops(R"(, "window": 8192)", true, kF) == Approx(4 * b * h * hd * causal_half));
  // Eager (Hugging Face's eager_attention_forward) adds a mask to the full s x s scores: QK^T and PV dense.
  CHECK(core_flops(R"(, "window": 4096)", false, kF) == Approx(4 * b * h * hd * S * S));
  CHECK(core_flops(R"(, "window": 4096)", false, kF) == Approx(core_flops("", false, kF)));
}

TEST_CASE("attention soft-capping, sinks and QK-norm kernels and saved bytes", "[layers][modern]") {
  const double b = 2, s = 64, h = 4, kvh = 2, hd = 16, e = 2;  // BF16 activations
  const double probs = b * h * s * s;
  auto build = [&](const std::string& extra) {
    return net_of(seq_model(64, 64, R"({"type": "attention", "name": "a", "num_heads": 4, "num_kv_heads": 2,
      "causal": true)" + extra + "}"));
  };
  const Network plain = build(""), capped = build(R"(, "softcap": 50)"), sunk = build(R"(, "sinks": true)");
  const Network normed = build(R"(, "qk_norm": "head")"), full = build(R"(, "qk_norm": "full")");
  const std::size_t a = layer_index(plain, "a");
  const StepWork p = step_of(plain, 2, false), sc = step_of(capped, 2, false), sk = step_of(sunk, 2, false);
  // Soft-capping: / c, tanh, * c forward and their three gradients, each over the scores; tanh's output kept.
  CHECK(class_count(sc, a, kF, KernelClass::Elementwise) == class_count(p, a, kF, KernelClass::Elementwise) + 3);
  CHECK(class_count(sc, a, kB, KernelClass::Elementwise) == class_count(p, a, kB, KernelClass::Elementwise) + 3);
  CHECK(sc.layers[a].saved_activation_bytes == Approx(p.layers[a].saved_activation_bytes + e * probs));
  // Sinks: the concatenated column and the row maximum, forward and backward; no saved change.
  CHECK(class_count(sk, a, kF, KernelClass::Elementwise) == class_count(p, a, kF, KernelClass::Elementwise) + 2);
  CHECK(sk.layers[a].saved_activation_bytes == Approx(p.layers[a].saved_activation_bytes));
  // Fused: both inside the kernel, nothing extra.
  const StepWork pf = step_of(plain, 2, true), scf = step_of(capped, 2, true), skf = step_of(sunk, 2, true);
  CHECK(scf.layers[a].flops[0] == Approx(pf.layers[a].flops[0]));
  CHECK(skf.layers[a].flops[1] == Approx(pf.layers[a].flops[1]));
  CHECK(scf.layers[a].saved_activation_bytes == Approx(pf.layers[a].saved_activation_bytes));
  // QK-norm: one normalisation kernel each for q and k per pass, in both kernel modes; saves the inputs
  // and per-row statistics (rows: heads of each token for "head", tokens for "full").
  for (bool fused : {false, true}) {
    const StepWork n = step_of(normed, 2, fused), f = step_of(full, 2, fused), base = step_of(plain, 2, fused);
    CHECK(class_count(n, a, kF, KernelClass::Normalization) == 2);
    CHECK(class_count(n, a, kB, KernelClass::Normalization) == 2);
    const double qk = b * s * (h + kvh) * hd;
    CHECK(class_flops(n, a, kF, KernelClass::Normalization) == Approx(8 * qk));
    CHECK(n.layers[a].saved_activation_bytes ==
          Approx(base.layers[a].saved_activation_bytes + e * qk + 8 * b * s * (h + kvh)));
    CHECK(f.layers[a].saved_activation_bytes == Approx(base.layers[a].saved_activation_bytes + e * qk + 8 * 2 * b * s));
  }
}

TEST_CASE("attention QK-norm and sinks shard with the heads", "[layers][modern][parallel]") {
  const Network net = net_of(seq_model(16, 256, R"({"type": "attention", "name": "a", "num_heads": 8,
    "num_kv_heads": 4, "head_dim": 32, "bias": false, "qk_norm": "full", "sinks": true, "causal": true})"));
  const ShardedNetwork shard = shard_network(net, 2);
  const std::int64_t heads = 4, kv = 2, hd = 32, hidden = 256;  // per GPU
  CHECK(layer(shard.net, "a").parameters ==
        hidden * (heads + 2 * kv) * hd + heads * hd * hidden + (heads + kv) * hd + heads);
  const Network head = net_of(seq_model(16, 256, R"({"type": "attention", "name": "a", "num_heads": 8,
    "head_dim": 32, "bias": false, "qk_norm": "head"})"));
  CHECK(layer(shard_network(head, 4).net, "a").parameters == 256 * (2 + 4) * 32 + 2 * 32 * 256 + 2 * 32);
}

TEST_CASE("attention's new attributes reject bad input naming the attribute", "[layers][modern][errors]") {
  using testutil::require_model_error;
  auto model = [](const std::string& extra) {
    return seq_model(16, 64, R"({"type": "attention", "num_heads": 4)" + extra + "}");
  };
  require_model_error(model(R"(, "window": 4)"), "model.layers[1].window", "causal self-attention only");
  require_model_error(model(R"(, "chunk": 4)"), "model.layers[1].chunk", "causal self-attention only");
  require_model_error(model(R"(, "causal": true, "memory_len": 4, "window": 4)"), "model.layers[1].window",
                      "no memory_len");
  require_model_error(model(R"(, "causal": true, "window": 0)"), "model.layers[1].window", "expected an integer");
  require_model_error(model(R"(, "causal": true, "window": 4, "chunk": 8)"), "model.layers[1].chunk",
                      "cannot be combined with window");
  require_model_error(model(R"(, "qk_norm": "x")"), "model.layers[1].qk_norm",
                      "expected one of none, head, full, head_weightless");
  require_model_error(model(R"(, "softcap": 0)"), "model.layers[1].softcap", "must be a number > 0");
  require_model_error(model(R"(, "sinks": 1)"), "model.layers[1].sinks", "");
  const std::string cross = R"({"input": {"kind": "sequence", "seq_len": 8, "features": 64}, "layers": [
    {"type": "layernorm", "name": "mem"},
    {"type": "attention", "num_heads": 4, "causal": true, "window": 2, "inputs": ["mem", "mem"]}]})";
  require_model_error(cross, "model.layers[1].window", "causal self-attention only");
}
