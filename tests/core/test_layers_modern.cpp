// The layer kinds of the 2024-2026 families: attention's sliding window, chunks, QK-norm, sinks and
// soft-capping; active parameters of mixtures of experts; multi-head latent attention; Mamba mixers.
// Expected numbers are written from the Hugging Face modules' __init__ and from hand formulas.
#include <catch2/catch.hpp>
#include <string>

#include "helpers.hpp"
#include "layers/layer_kind.hpp"
#include "prenet/catalog.hpp"
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

/// A one-layer sequence model of width `features` around the layer spec `layer_json`.
std::string seq_model(int seq_len, int features, const std::string& layer_json) {
  return R"({"input": {"kind": "sequence", "seq_len": )" + std::to_string(seq_len) + R"(, "features": )" +
         std::to_string(features) + R"(}, "layers": [{"type": "layernorm"}, )" + layer_json + "]}";
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

TEST_CASE("active parameters: a mixture of experts counts top_k of its experts", "[layers][modern][moe]") {
  const Network net = net_of(R"({"input": {"kind": "sequence", "seq_len": 8, "features": 64}, "layers": [
    {"type": "layernorm", "name": "ln"},
    {"type": "dense", "name": "router", "units": 8, "bias": false},
    {"type": "dense", "name": "up", "units": 128, "gated": true, "activation": "silu", "bias": false,
     "experts": 8, "top_k": 2, "inputs": ["ln"]},
    {"type": "dense", "name": "down", "units": 64, "experts": 8, "top_k": 2}]})");
  // Each expert: gate and up 64 x 128 without bias, down 128 x 64 with its 64 biases.
  const std::int64_t up_expert = 2 * 64 * 128, down_expert = 128 * 64 + 64;
  const std::int64_t whole = 2 * 64 + 64 * 8;  // layernorm and router
  CHECK(net.parameters() == whole + 8 * (up_expert + down_expert));
  CHECK(net.active_parameters() == whole + 2 * (up_expert + down_expert));
  const Network dense = net_of(seq_model(8, 64, R"({"type": "dense", "units": 32})"));
  CHECK(dense.active_parameters() == dense.parameters());
}

TEST_CASE("mla parameters as DeepseekV3Attention and DeepseekV2Attention build them", "[layers][modern][mla]") {
  // DeepSeek-V3: hidden 7168, 128 heads, q_lora_rank 1536, kv_lora_rank 512, nope 128, rope 64, v 128.
  const std::int64_t D = 7168, H = 128, rq = 1536, rkv = 512, nope = 128, rope = 64, v = 128;
  const std::int64_t v3 = D * rq + rq + rq * H * (nope + rope)  // q_a_proj, q_a_layernorm, q_b_proj
                          + D * (rkv + rope) + rkv              // kv_a_proj_with_mqa, kv_a_layernorm
                          + rkv * H * (nope + v)                // kv_b_proj
                          + H * v * D;                          // o_proj
  CHECK(v3 == 187107328);
  const std::string v3_spec = R"({"type": "mla", "name": "a", "num_heads": 128, "q_lora_rank": 1536,
    "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128})";
  CHECK(layer(net_of(seq_model(4, 7168, v3_spec)), "a").parameters == v3);
  // attention_bias: biases on q_a_proj, kv_a_proj_with_mqa and o_proj only.
  const std::string biased = R"({"type": "mla", "name": "a", "num_heads": 128, "q_lora_rank": 1536, "bias": true,
    "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128})";
  CHECK(layer(net_of(seq_model(4, 7168, biased)), "a").parameters == v3 + rq + (rkv + rope) + D);
  // DeepSeek-V2-Lite: q_lora_rank null, so one q_proj (no bias); hidden 2048, 16 heads.
  const std::int64_t lite = 2048 * 16 * 192 + 2048 * 576 + 512 + 512 * 16 * 256 + 16 * 128 * 2048;
  const std::string lite_spec = R"({"type": "mla", "name": "a", "num_heads": 16, "q_lora_rank": 0,
    "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128})";
  CHECK(layer(net_of(seq_model(4, 2048, lite_spec)), "a").parameters == lite);
  // Tensor parallelism splits the heads; the down-projections and their norms stay whole.
  const Network net = net_of(seq_model(4, 7168, v3_spec));
  const std::int64_t per_gpu =
      D * rq + rq + D * (rkv + rope) + rkv + (rq * (nope + rope) + rkv * (nope + v) + v * D) * H / 8;
  CHECK(layer(shard_network(net, 8).net, "a").parameters == per_gpu);
}
TEST_CASE("mla kernels: projections, a core of width nope + rope and v, eager or fused", "[layers][modern][mla]") {
  const double b = 2, s = 32, D = 256, H = 4, rq = 64, rkv = 32, nope = 16, rope = 8, v = 24, dk = nope + rope;
  const Network net = net_of(seq_model(32, 256, R"({"type": "mla", "name": "a", "num_heads": 4, "q_lora_rank": 64,
    "kv_lora_rank": 32, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 24})"));
  const std::size_t a = layer_index(net, "a");
  const double m = b * s;
  const double projections = 2 * m * (D * rq + rq * H * dk + D * (rkv + rope) + rkv * H * (nope + v) + H * v * D);
  const StepWork eager = step_of(net, 2, false), fused = step_of(net, 2, true);
  // Eager: Q K^T (width dk) and P V (width v) over every score.
  CHECK(matmul_flops(eager, a, kF) == Approx(projections + 2 * b * H * s * s * (dk + v)));
  CHECK(matmul_flops(eager, a, kB) == Approx(2 * projections + 2 * 2 * b * H * s * s * (dk + v)));
  // Fused: Hugging Face pads V to dk for FlashAttention-2; causal, half the scores.
  CHECK(matmul_flops(fused, a, kF) == Approx(projections + 2 * b * H * s * s * (2 * dk) * 0.5));
  CHECK(class_count(eager, a, kF, KernelClass::Normalization) == 2);  // q_a_layernorm, kv_a_layernorm
}

TEST_CASE("mla over the tensor group: the latents' gradient summed while anything below the up-projections trains",
          "[layers][modern][mla][tensor]") {
  Network net = net_of(seq_model(32, 256, R"({"type": "mla", "name": "a", "num_heads": 4, "q_lora_rank": 64,
    "kv_lora_rank": 32, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 24})"));
  const std::size_t a = layer_index(net, "a");
  CHECK(shard_network(net, 2).layers[a].backward_allreduces == 1);
  net.layers[a].needs_input_grad = false;  // its input frozen: its own weights still need the summed gradient
  CHECK(shard_network(net, 2).layers[a].backward_allreduces == 1);
  net.layers[a].trainable = false;  // nothing below the up-projections trains
  CHECK(shard_network(net, 2).layers[a].backward_allreduces == 0);
  CHECK(shard_network(net, 2).layers[a].forward_allreduces == 1);
}

TEST_CASE("mla rejects bad input naming the attribute", "[layers][modern][errors]") {
  using testutil::require_model_error;
  const std::string mla = R"({"type": "mla", "num_heads": 4, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8,
    "v_head_dim": 16)";
  require_model_error(seq_model(8, 64, mla + R"(, "kv_lora_rank": 0})"), "model.layers[1].kv_lora_rank",
                      "expected an integer in [1");
  require_model_error(seq_model(8, 64, mla + "}"), "model.layers[1].kv_lora_rank", "required integer is missing");
  require_model_error(seq_model(8, 64, mla + R"(, "kv_lora_rank": 8, "q_lora_rank": -1})"),
                      "model.layers[1].q_lora_rank", "expected an integer");
  require_model_error(seq_model(8, 64, R"({"type": "mla", "num_heads": 4, "kv_lora_rank": 8, "qk_nope_head_dim": 0,
    "qk_rope_head_dim": 0, "v_head_dim": 16})"),
                      "model.layers[1].qk_rope_head_dim", "at least 1");
}

TEST_CASE("mamba parameters as MambaMixer and Mamba2Mixer build them", "[layers][modern][mamba]") {
  // mamba-130m: hidden 768, intermediate 1536, state 16, conv 4, time_step_rank 48, use_bias false.
  const std::int64_t D = 768, I = 1536, N = 16, K = 4, R = 48;
  const std::int64_t v1 = D * 2 * I          // in_proj
                          + I * K + I        // conv1d (depthwise) with bias
                          + I * (R + 2 * N)  // x_proj
                          + R * I + I        // dt_proj with bias
                          + I * N + I        // A_log, D
                          + I * D;           // out_proj
  CHECK(v1 == 3770880);
  const std::string v1_spec = R"({"type": "mamba", "name": "m", "version": 1, "inner": 1536, "state_size": 16,
    "conv_kernel": 4, "dt_rank": 48})";
  CHECK(layer(net_of(seq_model(8, 768, v1_spec)), "m").parameters == v1);
  // mamba2-2.7b: hidden 2560, expand 2, state 128, n_groups 1, head_dim 64 (80 heads), conv 4.
  const std::int64_t D2 = 2560, I2 = 5120, N2 = 128, G = 1, H2 = 80, C = I2 + 2 * G * N2;
  const std::int64_t v2 = D2 * (2 * I2 + 2 * G * N2 + H2)  // in_proj: z, x, B, C, dt
                          + C * K + C                      // conv1d over x, B, C with bias
                          + 3 * H2                         // dt_bias, A_log, D
                          + I2                             // MambaRMSNormGated
                          + I2 * D2;                       // out_proj
  CHECK(v2 == 40214000);
  const std::string v2_spec = R"({"type": "mamba", "name": "m", "version": 2, "inner": 5120, "state_size": 128,
    "conv_kernel": 4, "num_heads": 80, "n_groups": 1})";
  CHECK(layer(net_of(seq_model(8, 2560, v2_spec)), "m").parameters == v2);
  // use_bias and use_conv_bias false.
  const std::string bare = R"({"type": "mamba", "name": "m", "version": 1, "inner": 1536, "state_size": 16,
    "dt_rank": 48, "bias": true, "conv_bias": false})";
  CHECK(layer(net_of(seq_model(8, 768, bare)), "m").parameters == v1 - I + 2 * I + D);
}
TEST_CASE("mamba kernels: projections, the scan or SSD, and what tensor parallelism refuses",
          "[layers][modern][mamba]") {
  const double b = 2, s = 512, D = 64, I = 128, N = 16, R = 4;
  const Network v1 = net_of(seq_model(512, 64, R"({"type": "mamba", "name": "m", "version": 1, "inner": 128,
    "state_size": 16, "dt_rank": 4})"));
  const std::size_t m1 = layer_index(v1, "m");
  const StepWork w1 = step_of(v1, 2, false);
  const double m = b * s;
  CHECK(matmul_flops(w1, m1, kF) == Approx(2 * m * (D * 2 * I + I * (R + 2 * N) + R * I + I * D)));
  // The selective scan: 9 I N + 2 I FLOPs per token forward (state-spaces/mamba issue 110), twice backward.
  double scan_f = 0, scan_b = 0;
  for (const Kernel& k : w1.kernels) {
    if (static_cast<std::size_t>(k.layer) != m1 || k.cls != KernelClass::Elementwise) continue;
    if (k.flops == Approx(m * I * (9 * N + 2))) scan_f += 1;
    if (k.flops == Approx(2 * m * I * (9 * N + 2))) scan_b += 1;
  }
  CHECK(scan_f == 1);
  CHECK(scan_b == 1);
  // Mamba-2's SSD over chunks of 256: 2 (G Q N + H (Q P + 2 N P)) per token forward.
  const Network v2 = net_of(seq_model(512, 64, R"({"type": "mamba", "name": "m", "version": 2, "inner": 128,
    "state_size": 16, "num_heads": 4, "n_groups": 2})"));
  const StepWork w2 = step_of(v2, 2, false);
  const double Q = 256, P = 32, H = 4, G = 2;
  const double ssd = 2 * m * (G * Q * N + H * (Q * P + 2 * N * P));
  CHECK(class_flops(w2, layer_index(v2, "m"), kF, KernelClass::BatchedGemm) == Approx(ssd));
  CHECK(class_flops(w2, layer_index(v2, "m"), kB, KernelClass::BatchedGemm) == Approx(2 * ssd));
  testutil::require_input_error([&] { shard_network(v1, 2); }, "parallel.tensor",
                                "tensor parallelism of Mamba-1 mixers");
}

TEST_CASE("Mamba-2's chunk scan: chunk_size sets its diagonal blocks; timed from the catalogue's measured scans",
          "[layers][modern][mamba][timing]") {
  // FlashInfer's B200 benchmark of the Triton reference mamba_chunk_scan_combined (models/data/found/mamba2-ssd.csv):
  // 8 heads of 64, 8 groups, state 128, chunks of 128; 64 x 2048 tokens forward in 0.952 ms, 256 x 2048 in 3.736 ms.
  // The fit's error over its B200 rows is 7% (models/fit-ssd.mjs), so these bounds can fail.
  const std::string mixer = R"({"type": "mamba", "name": "m", "version": 2, "inner": 512, "state_size": 128,
    "num_heads": 8, "n_groups": 8, "chunk_size": 128})";
  auto scan = [&](int batch, Phase phase) {
    const Network net = net_of(seq_model(2048, 64, mixer));
    const StepWork w = step_of(net, batch, false);
    const Kernel* found = nullptr;
    for (const Kernel& k : w.kernels) {
      if (k.phase != phase || k.part != KernelPart::Ssd) continue;
      CHECK(found == nullptr);  // one chunk scan per direction
      found = &k;
    }
    REQUIRE(found != nullptr);
    return *found;
  };
  const double m = 64 * 2048, Q = 128, N = 128, P = 64, H = 8, G = 8;
  const Kernel forward = scan(64, kF);
  CHECK(forward.flops == Approx(2 * m * (G * Q * N + H * (Q * P + 2 * N * P))));
  const Accelerator* b200 = find_hardware("b200");
  REQUIRE(b200 != nullptr);
  CHECK(*ssd_ms(forward, *b200, Precision::BF16) == Approx(0.952).epsilon(0.10));
  CHECK(*ssd_ms(scan(256, kF), *b200, Precision::BF16) == Approx(3.736).epsilon(0.10));
  // The backward (twice the FLOPs) runs at the forward's measured rate after the same overhead.
  const double overhead = b200->ssd.forward_overhead_ms;
  CHECK(*ssd_ms(scan(64, kB), *b200, Precision::BF16) - overhead ==
        Approx(2 * (*ssd_ms(forward, *b200, Precision::BF16) - overhead)));
  // H100 SXM takes H200's fit, B300 B200's; other unmeasured parts and 32-bit training keep the learned batched-GEMM
  // path.
  CHECK(*ssd_ms(forward, *find_hardware("h100-sxm"), Precision::BF16) ==
        *ssd_ms(forward, *find_hardware("h200"), Precision::BF16));
  CHECK(*ssd_ms(forward, *find_hardware("b300"), Precision::BF16) == *ssd_ms(forward, *b200, Precision::BF16));
  CHECK_FALSE(ssd_ms(forward, *find_hardware("a100-sxm4-80gb"), Precision::BF16).has_value());
  CHECK_FALSE(ssd_ms(forward, *b200, Precision::FP32).has_value());
  // The parts the response's note names are exactly those with a measured scan.
  std::vector<std::string> measured;
  for (const Accelerator& acc : hardware_catalogue()) {
    if (acc.ssd.forward_tflops > 0) measured.push_back(acc.name);
  }
  CHECK(measured.size() == 7);
  const Network net = net_of(seq_model(2048, 64, mixer));
  const std::vector<std::string> notes = kind_timing_notes(net);
  REQUIRE(notes.size() == 1);
  for (const char* part : {"H100 SXM", "H200", "GH200", "B200", "GB200", "B300", "GB300"}) {
    CHECK(notes[0].find(part) != std::string::npos);
    bool in_catalogue = false;
    for (const std::string& name : measured) in_catalogue = in_catalogue || name.find(part) != std::string::npos;
    CHECK(in_catalogue);
  }
  // The default chunk is 256; chunk_size is Mamba-2's alone, and Mamba-1 layers have no note.
  const Network default_chunk = net_of(seq_model(2048, 64, R"({"type": "mamba", "name": "m", "version": 2,
    "inner": 512, "state_size": 128, "num_heads": 8, "n_groups": 8})"));
  CHECK(class_flops(step_of(default_chunk, 1, false), layer_index(default_chunk, "m"), kF, KernelClass::BatchedGemm) ==
        Approx(2 * 2048 * (G * 256 * N + H * (256 * P + 2 * N * P))));
  testutil::require_model_error(seq_model(8, 64, R"({"type": "mamba", "version": 1, "inner": 128, "state_size": 16,
    "dt_rank": 4, "chunk_size": 64})"),
                                "model.layers[1].chunk_size", "applies to mamba version 2 only");
  CHECK(kind_timing_notes(net_of(seq_model(8, 64, R"({"type": "mamba", "version": 1, "inner": 128,
    "state_size": 16, "dt_rank": 4})")))
            .empty());
}

TEST_CASE("mamba gated_norm false and out_bias: Falcon-H1's mixer without the norm, out_proj's bias apart",
          "[layers][modern][mamba]") {
  const double b = 2, s = 512, I = 128, G = 2;
  auto build = [](const std::string& extra) {
    return net_of(seq_model(512, 64,
                            R"({"type": "mamba", "name": "m", "version": 2, "inner": 128,
      "state_size": 16, "num_heads": 4, "n_groups": 2)" +
                                extra + "}"));
  };
  const Network normed = build(""), bare = build(R"(, "gated_norm": false)");
  const std::size_t m = layer_index(normed, "m");
  CHECK(layer(bare, "m").parameters == layer(normed, "m").parameters - static_cast<std::int64_t>(I));
  const StepWork wn = step_of(normed, 2, false), wb = step_of(bare, 2, false);
  // The norm's forward, its recomputation and its backward are gone; the gate is one elementwise pass each way.
  CHECK(class_count(wb, m, kF, KernelClass::Normalization) == 0);
  CHECK(class_count(wb, m, kB, KernelClass::Normalization) == 0);
  CHECK(class_count(wn, m, kF, KernelClass::Normalization) == 1);
  CHECK(class_count(wn, m, kB, KernelClass::Normalization) == 2);  // its recomputation and its gradients
  CHECK(class_count(wb, m, kF, KernelClass::Elementwise) == class_count(wn, m, kF, KernelClass::Elementwise) + 1);
  CHECK(class_count(wb, m, kB, KernelClass::Elementwise) == class_count(wn, m, kB, KernelClass::Elementwise) + 1);
  // No FP32 norm statistics (one per token and group) are saved.
  CHECK(wb.layers[m].saved_activation_bytes == Approx(wn.layers[m].saved_activation_bytes - 4 * b * s * G));
  // out_bias follows bias unless given: out_proj's 64 biases.
  const auto params = [&](const std::string& extra) { return layer(build(extra), "m").parameters; };
  CHECK(params(R"(, "out_bias": true)") == params("") + 64);
  CHECK(params(R"(, "bias": true, "out_bias": false)") == params("") + 324);  // in_proj's 2 I + 2 G N + H
  CHECK(params(R"(, "bias": true)") == params("") + 324 + 64);
  testutil::require_input_error(
      [&] {
        net_of(seq_model(512, 64, R"({"type": "mamba", "name": "m", "version": 1, "inner": 128, "state_size": 16,
          "dt_rank": 4, "gated_norm": false})"));
      },
      "model.layers[1].gated_norm", "applies to mamba version 2 only");
}

TEST_CASE("Mamba-2 over the tensor group: heads, groups and channels split, out_proj summed, as Megatron-Core",
          "[layers][modern][tensor]") {
  // D 64, I 128, N 16, K 4, H 4, G 2: in_proj 64 x (2 I + 2 G N + H) = 64 x 324, conv over I + 2 G N = 192.
  const Network v2 = net_of(seq_model(512, 64, R"({"type": "mamba", "name": "m", "version": 2, "inner": 128,
    "state_size": 16, "num_heads": 4, "n_groups": 2, "bias": true})"));
  const std::size_t m = layer_index(v2, "m");
  CHECK(v2.layers[m].parameters == 65 * 324 + 192 * 5 + 3 * 4 + 128 + 128 * 64 + 64);
  const ShardedNetwork two = shard_network(v2, 2);
  const Layer& half = two.net.layers[m];
  CHECK(half.attrs.num_heads == 2);
  CHECK(half.attrs.n_groups == 1);
  CHECK(half.attrs.inner == 64);
  // Local: in_proj 65 x (128 + 32 + 2), conv over 64 + 32 = 96, 3 x 2, norm 64, out_proj 64 x 64; its bias whole.
  CHECK(half.parameters == 65 * 162 + 96 * 5 + 3 * 2 + 64 + 64 * 64 + 64);
  CHECK(two.layers[m].forward_allreduces == 1);
  CHECK(two.layers[m].allreduce_bytes_per_sample == 512 * 64);
  // The work per GPU: the projections' and the scan's FLOPs halve.
  const StepWork whole = step_of(v2, 2, false), local = step_of(two.net, 2, false);
  CHECK(matmul_flops(local, m, kF) == Approx(matmul_flops(whole, m, kF) / 2));
  // The group must divide the Mamba groups (Megatron-Core asserts ngroups % tp == 0).
  testutil::require_input_error([&] { shard_network(v2, 4); }, "parallel.tensor", "Mamba groups");
}

TEST_CASE("mamba rejects bad input naming the attribute", "[layers][modern][errors]") {
  using testutil::require_model_error;
  const std::string v2 = R"({"type": "mamba", "version": 2, "inner": 128, "state_size": 16)";
  require_model_error(seq_model(8, 64, v2 + R"(, "num_heads": 3})"), "model.layers[1].num_heads", "must divide inner");
  require_model_error(seq_model(8, 64, v2 + R"(, "num_heads": 4, "n_groups": 3})"), "model.layers[1].n_groups",
                      "must divide num_heads");
  require_model_error(seq_model(8, 64, v2 + R"(, "num_heads": 4, "dt_rank": 8})"), "model.layers[1].dt_rank",
                      "applies to mamba version 1 only");
  require_model_error(seq_model(8, 64, R"({"type": "mamba", "version": 1, "inner": 128, "state_size": 16})"),
                      "model.layers[1].dt_rank", "required integer is missing");
  require_model_error(seq_model(8, 64, R"({"type": "mamba", "version": 3, "inner": 128, "state_size": 16})"),
                      "model.layers[1].version", "expected an integer in [1, 2]");
}
