// gpt-oss's expert MLP (docs/PREDICTION.md, "Mixture of experts"): the clamped GLU (glu_limit, glu_offset) as
// Megatron-Core runs it (clamps and a cat outside its fused weighted quick-GEGLU) and as Hugging Face's
// GptOssExperts writes it (each op a kernel, the interleaved gate/up slices' backward); the experts' biases
// (Megatron: fc1's in TE's grouped GEMM, fc2's added expert by expert in TEGroupedMLP._apply_bias, one launch
// per local expert; Hugging Face: `x @ W + b`, an add of its own); a plain SwiGLU MoE unchanged. Each expected
// kernel is written from the library's code, in bytes per element of the tensor it walks.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "helpers.hpp"
#include "layers/layer_kind.hpp"
#include "prenet/api.hpp"
#include "prenet/hardware.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/layer_list.hpp"
#include "prenet/parallel.hpp"
#include "prenet/roofline.hpp"

using namespace prenet;
using testutil::layer_index;
using testutil::net_of;

namespace {

// B samples of S positions of width H; E experts of width N, top-K; bf16 activations (e = 2 bytes).
constexpr double B = 2, S = 8, H = 64, N = 128, E = 8, K = 2, e = 2;
constexpr double kTokens = B * S, kRouted = kTokens * K;

/// The expert MLP as a layer list: biased or not, the GLU clamped (gpt-oss: limit 7, offset 1) or not.
Network expert_mlp(bool bias, bool clamped, const char* activation = "quick_gelu") {
  const std::string b = bias ? "true" : "false";
  const std::string clamp = clamped ? R"(, "glu_limit": 7, "glu_offset": 1)" : "";
  return net_of(R"({"input": {"kind": "sequence", "seq_len": 8, "features": 64}, "layers": [
      {"type": "layernorm", "name": "ln"},
      {"type": "dense", "name": "router", "units": 8, "bias": )" +
                b + R"(},
      {"type": "dense", "name": "up", "units": 128, "gated": true, "activation": ")" +
                activation + R"(", "bias": )" + b + R"(, "experts": 8, "top_k": 2, "inputs": ["ln"])" + clamp + R"(},
      {"type": "dense", "name": "down", "units": 64, "bias": )" +
                b + R"(, "experts": 8, "top_k": 2}]})");
}

KernelContext megatron() { return KernelContext(Precision::BF16, AttentionKernel::Flash, KernelSet::Megatron); }
KernelContext pytorch(bool compiled = false) {
  KernelContext c(Precision::BF16, AttentionKernel::Flash, KernelSet::PyTorch);
  c.compiled = compiled;
  return c;
}

StepWork work_of(const Network& net, const KernelContext& context) {
  return step_work(net, static_cast<std::int64_t>(B), context, Optimizer::None, OptimizerImpl::Fused);
}

/// One kernel as the comparisons see it.
using Row = std::tuple<int, int, double, double>;  // phase, class, repeats, bytes
Row row(Phase phase, double bytes, double repeats = 1, KernelClass cls = KernelClass::Elementwise) {
  return {static_cast<int>(phase), static_cast<int>(cls), repeats, bytes};
}

/// Layer `name`'s kernels, sorted.
std::vector<Row> rows_of(const Network& net, const StepWork& w, const std::string& name) {
  const auto l = static_cast<int>(layer_index(net, name));
  std::vector<Row> out;
  for (const Kernel& k : w.kernels) {
    if (k.layer == l) out.push_back({static_cast<int>(k.phase), static_cast<int>(k.cls), k.repeats, k.bytes});
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// `base` with `added` joined and `removed` taken out (each removed row must be there), sorted.
std::vector<Row> edited(std::vector<Row> base, const std::vector<Row>& added, const std::vector<Row>& removed = {}) {
  for (const Row& r : removed) {
    const auto at = std::find(base.begin(), base.end(), r);
    REQUIRE(at != base.end());
    base.erase(at);
  }
  base.insert(base.end(), added.begin(), added.end());
  std::sort(base.begin(), base.end());
  return base;
}

double saved(const Network& net, const StepWork& w, const std::string& name) {
  return w.layers[layer_index(net, name)].saved_activation_bytes;
}

/// PyTorch's clamp_backward (torch/csrc/autograd/FunctionsManual.cpp): the gate's `self <= max` (a 1-byte
/// mask) and where(mask, grad, 0); up's `self >= min`, `self <= max`, the masks' in-place logical_and_ and the
/// where, per element of each half.
std::vector<Row> clamp_backward(double hidden) {
  return {row(Phase::Backward, (e + 1) * hidden), row(Phase::Backward, (2 * e + 1) * hidden),
          row(Phase::Backward, (e + 1) * hidden), row(Phase::Backward, (e + 1) * hidden),
          row(Phase::Backward, 3 * hidden),       row(Phase::Backward, (2 * e + 1) * hidden)};
}

}  // namespace

TEST_CASE("gpt-oss clamped GLU under Megatron: clamps and a cat outside the fused quick-GEGLU", "[gptoss]") {
  // fused_bias_geglu.py weighted_bias_quick_geglu_impl: chunk (a view), x_glu.clamp(max), x_linear.clamp(min, max),
  // torch.cat; the fused WeightedQuickGeGLUFunction on the cat. Backward: the fused kernel, clamp_backward on
  // each half (the cat's backward is two views), the chunk's backward a cat of the two gradients.
  const double hidden = kRouted * N;  // gate (and up) elements on this GPU: every expert local
  const Network plain = expert_mlp(true, false), clamped = expert_mlp(true, true);
  const StepWork wp = work_of(plain, megatron()), wc = work_of(clamped, megatron());
  std::vector<Row> added = {row(Phase::Forward, 2 * e * hidden), row(Phase::Forward, 2 * e * hidden),
                            row(Phase::Forward, 2 * e * 2 * hidden), row(Phase::Backward, 2 * e * 2 * hidden)};
  for (const Row& r : clamp_backward(hidden)) added.push_back(r);
  CHECK(rows_of(clamped, wc, "up") == edited(rows_of(plain, wp, "up"), added));
  // The fused kernel itself is the plain layer's: reads gate and up, writes the product; backward reads both
  // and the output's gradient, writes both gradients.
  const std::vector<Row> up = rows_of(plain, wp, "up");
  CHECK(std::count(up.begin(), up.end(), row(Phase::Forward, 3 * e * hidden)) == 1);
  CHECK(std::count(up.begin(), up.end(), row(Phase::Backward, 5 * e * hidden)) == 1);
  // Saved: the input, the router's scores, gate and up (the fused kernel's input), and now both the fc1 output
  // (held by the clamps' saved views) and the cat (the fused kernel's input).
  const double input = e * kRouted * H, scores = e * kTokens * E;
  CHECK(saved(plain, wp, "up") == Approx(input + scores + 2 * e * hidden));
  CHECK(saved(clamped, wc, "up") == Approx(input + scores + 4 * e * hidden));
  // The down layer and the router are untouched by the clamp.
  CHECK(rows_of(clamped, wc, "down") == rows_of(plain, wp, "down"));
  CHECK(rows_of(clamped, wc, "router") == rows_of(plain, wp, "router"));
}

TEST_CASE("gpt-oss clamped GLU under PyTorch eager: GptOssExperts' ops one kernel each", "[gptoss]") {
  // modeling_gpt_oss.py GptOssExperts (training): gate, up = gate_up[..., ::2], gate_up[..., 1::2] (views);
  // gate.clamp(max), up.clamp(min, max), glu = gate * sigmoid(gate * 1.702) (quick_gelu's chain), (up + 1) * glu.
  const double hidden = kRouted * N;
  const Network plain = expert_mlp(true, false), clamped = expert_mlp(true, true);
  const StepWork wp = work_of(plain, pytorch()), wc = work_of(clamped, pytorch());
  std::vector<Row> added = {row(Phase::Forward, 2 * e * hidden), row(Phase::Forward, 2 * e * hidden),  // clamps
                            row(Phase::Forward, 2 * e * hidden)};                                      // up + 1
  for (const Row& r : clamp_backward(hidden)) added.push_back(r);
  // Each strided slice's backward (slice_backward): zeros over gate_up, the gradient copied into its half; then
  // the two gate_up-sized gradients summed.
  for (int half = 0; half < 2; ++half) {
    added.push_back(row(Phase::Backward, e * 2 * hidden));
    added.push_back(row(Phase::Backward, 2 * e * hidden));
  }
  added.push_back(row(Phase::Backward, 3 * e * 2 * hidden));
  CHECK(rows_of(clamped, wc, "up") == edited(rows_of(plain, wp, "up"), added));
  // The plain layer's quick_gelu chain and product, exactly (activation.cpp composed_activation): forward
  // gate·1.702, sigmoid, gate·σ, then ·up; backward the product's two terms and the chain's five kernels.
  const std::vector<Row> up = rows_of(plain, wp, "up");
  CHECK(std::count(up.begin(), up.end(), row(Phase::Forward, 2 * e * hidden)) == 2);
  CHECK(std::count(up.begin(), up.end(), row(Phase::Forward, 3 * e * hidden)) == 2);
  CHECK(std::count(up.begin(), up.end(), row(Phase::Backward, 3 * e * hidden)) == 6);
  // Saved: quick_gelu's gate and sigmoid, the product's two factors, and the clamps' input (gate_up).
  const double input = e * kRouted * H, scores = e * kTokens * E;
  CHECK(saved(plain, wp, "up") == Approx(input + scores + 4 * e * hidden));
  CHECK(saved(clamped, wc, "up") == Approx(input + scores + 6 * e * hidden));
}

TEST_CASE("gpt-oss clamped GLU under torch.compile fuses like any GLU", "[gptoss]") {
  // Inductor fuses the clamps with the rest of the pointwise chain; its partitioner saves the chain's input.
  const Network plain = expert_mlp(true, false), clamped = expert_mlp(true, true);
  const StepWork wp = work_of(plain, pytorch(true)), wc = work_of(clamped, pytorch(true));
  CHECK(rows_of(clamped, wc, "up") == rows_of(plain, wp, "up"));
  CHECK(saved(clamped, wc, "up") == saved(plain, wp, "up"));
}

TEST_CASE("expert biases under Megatron: fc1's fused, fc2's added one local expert at a time", "[gptoss]") {
  // experts.py TEGroupedMLP: linear_fc1 with skip_bias_add=False (TE's grouped GEMM adds the bias in its
  // epilogue and reduces its gradient in the wgrad GEMM: grouped_linear.py), linear_fc2 with skip_bias_add=True and
  // _apply_bias: per local expert t + b * p, then torch.cat.
  for (const double shards : {1.0, 2.0, 8.0}) {
    INFO("expert shards " << shards);
    Network biased = expert_mlp(true, true), unbiased = expert_mlp(false, true);
    for (Network* net : {&biased, &unbiased}) {
      for (const char* name : {"up", "down"}) {
        net->layers[layer_index(*net, name)].attrs.expert_shards = static_cast<std::int64_t>(shards);
      }
    }
    const StepWork wb = work_of(biased, megatron()), wu = work_of(unbiased, megatron());
    const double r = E / shards;  // local experts: kernels per layer per op
    // The busiest GPU's rows: with balanced routing each GPU runs the routed rows of its own tokens.
    const double rows = kRouted, out = rows * H, each = out / r;  // each expert's share of the output
    CHECK(rows_of(biased, wb, "up") == rows_of(unbiased, wu, "up"));
    // The split's backward: a cat of the experts' output gradients, and of the probabilities' gradients, which
    // are then added to the fused activation's gradient of the same probabilities.
    std::vector<Row> added = {row(Phase::Forward, 2 * e * out), row(Phase::Backward, 2 * e * out),
                              row(Phase::Backward, 2 * e * rows), row(Phase::Backward, 3 * e * rows)};
    for (double x = 0; x < r; ++x) {
      // Forward, one kernel each per local expert: b * p (writes the expert's rows), t + b * p (reads two,
      // writes one). Backward of b * p: grad * p and its sum into b's gradient, grad * b and its sum into p's.
      for (const Row& k : {row(Phase::Forward, e * each * 1), row(Phase::Forward, e * each * 3),
                           row(Phase::Backward, e * each * 2), row(Phase::Backward, e * each * 1),
                           row(Phase::Backward, e * each * 2), row(Phase::Backward, e * each * 1)}) {
        added.push_back(k);
      }
    }
    CHECK(rows_of(biased, wb, "down") == edited(rows_of(unbiased, wu, "down"), added));
    CHECK(saved(biased, wb, "down") == saved(unbiased, wu, "down"));
    // So the launches grow with the local experts: 6 per expert and 4 more, each paying the launch overhead.
    const std::size_t down = layer_index(biased, "down");
    CHECK(wb.layers[down].kernels - wu.layers[down].kernels == static_cast<int>(6 * r + 4));
    const Accelerator* h100 = find_hardware("h100-sxm");
    REQUIRE(h100 != nullptr);
    const Timing tb = roofline_times(wb, {*h100}, Precision::BF16).front();
    const Timing tu = roofline_times(wu, {*h100}, Precision::BF16).front();
    double bytes = 2 * e * out + 2 * e * out + 2 * e * rows + 3 * e * rows + r * e * each * (1 + 3 + 2 + 1 + 2 + 1);
    const RooflineParams params;
    const double ms = bytes / (h100->memory_bandwidth_gbs * 1e9 * params.memory_efficiency) * 1e3;
    CHECK(tb.layers[down].ms[0] + tb.layers[down].ms[1] - tu.layers[down].ms[0] - tu.layers[down].ms[1] ==
          Approx(ms + (6 * r + 4) * params.launch_overhead_ms));
  }
}

TEST_CASE("expert biases under PyTorch eager: x @ W + b adds the bias in a kernel of its own", "[gptoss]") {
  const Network biased = expert_mlp(true, true), unbiased = expert_mlp(false, true);
  const StepWork wb = work_of(biased, pytorch()), wu = work_of(unbiased, pytorch());
  const double hidden = kRouted * N, out = kRouted * H;
  // Forward the add (reads the product and the broadcast bias, writes); backward the bias's gradient, a sum
  // over the rows (reads the gradient once).
  CHECK(rows_of(biased, wb, "up") == edited(rows_of(unbiased, wu, "up"), {row(Phase::Forward, 3 * e * 2 * hidden),
                                                                          row(Phase::Backward, e * 2 * hidden)}));
  CHECK(rows_of(biased, wb, "down") ==
        edited(rows_of(unbiased, wu, "down"), {row(Phase::Forward, 3 * e * out), row(Phase::Backward, e * out)}));
  // Under torch.compile the add fuses with the next pointwise ops: only the bias's gradient remains.
  const StepWork cb = work_of(biased, pytorch(true)), cu = work_of(unbiased, pytorch(true));
  CHECK(rows_of(biased, cb, "down") == edited(rows_of(unbiased, cu, "down"), {row(Phase::Backward, e * out)}));
}

TEST_CASE("a plain SwiGLU MoE (Qwen3-style) keeps its kernels", "[gptoss]") {
  // No bias, no clamp: Megatron's fused weighted SwiGLU one kernel each way, the permutation, router and
  // un-permute as before; no kernel with more than one launch. Written out from dense.cpp's and moe.cpp's rules.
  const double hidden = kRouted * N, out = kRouted * H, scores = kTokens * E;
  const Network net = expert_mlp(false, false, "silu");
  const StepWork w = work_of(net, megatron());
  const std::vector<Row> up = {row(Phase::Forward, 2 * e * scores, 1, KernelClass::Softmax),   // router softmax
                               row(Phase::Forward, (1 + 2 * K / E) * e * scores),              // top-k
                               row(Phase::Forward, e * scores),                                // load-balancing loss
                               row(Phase::Forward, 2 * e * kRouted * H),                       // permute
                               row(Phase::Forward, 3 * e * hidden),                            // fused SwiGLU
                               row(Phase::Backward, 2 * e * scores),                           // loss gradient
                               row(Phase::Backward, 3 * e * scores, 1, KernelClass::Softmax),  // softmax backward
                               row(Phase::Backward, 5 * e * hidden),                           // fused SwiGLU backward
                               row(Phase::Backward, 2 * e * kRouted * H)};                     // scatter back
  std::vector<Row> up_stream;
  for (const Row& r : rows_of(net, w, "up")) {
    if (!is_matmul(static_cast<KernelClass>(std::get<1>(r)))) up_stream.push_back(r);
  }
  CHECK(up_stream == edited(up, {}));
  std::vector<Row> down_stream;
  for (const Row& r : rows_of(net, w, "down")) {
    if (!is_matmul(static_cast<KernelClass>(std::get<1>(r)))) down_stream.push_back(r);
  }
  // Un-permute: reads the routed rows, writes the tokens; backward reads the gradient and writes the rows' twice.
  CHECK(down_stream ==
        edited({}, {row(Phase::Forward, e * (out + kTokens * H)), row(Phase::Backward, 2 * e * (out + kTokens * H))}));
  // PyTorch eager: SiLU fused (F.silu), then the product; backward the product's two terms and SiLU's.
  const StepWork wp = work_of(net, pytorch());
  std::vector<Row> up_eager;
  for (const Row& r : rows_of(net, wp, "up")) {
    if (!is_matmul(static_cast<KernelClass>(std::get<1>(r))) && std::get<3>(r) >= hidden) up_eager.push_back(r);
  }
  CHECK(up_eager == edited({}, {row(Phase::Forward, 2 * e * hidden), row(Phase::Forward, 3 * e * hidden),
                                row(Phase::Backward, 3 * e * hidden), row(Phase::Backward, 3 * e * hidden),
                                row(Phase::Backward, 3 * e * hidden), row(Phase::Forward, 2 * e * kRouted * H),
                                row(Phase::Backward, 2 * e * kRouted * H)}));
}

TEST_CASE("gpt_oss configs carry the clamp: quick_gelu, glu_limit = swiglu_limit, glu_offset 1", "[gptoss]") {
  Json cfg = {
      {"model_type", "gpt_oss"},      {"hidden_size", 64}, {"num_hidden_layers", 2},   {"num_attention_heads", 4},
      {"num_key_value_heads", 2},     {"head_dim", 16},    {"intermediate_size", 128}, {"num_local_experts", 8},
      {"experts_per_token", 2},       {"vocab_size", 100}, {"sliding_window", 8},      {"swiglu_limit", 5.5},
      {"max_position_embeddings", 64}};
  std::vector<std::string> warnings;
  const Network net =
      parse_layer_list(hf_config_to_layers(cfg, "model.hf_config", 16, warnings), "model.hf_config", {});
  int experts_up = 0;
  for (const Layer& l : net.layers) {
    if (l.type != LayerType::Dense || l.attrs.experts <= 1 || !l.attrs.gated) continue;
    ++experts_up;
    CHECK(l.attrs.activation == "quick_gelu");
    CHECK(l.attrs.glu_limit == 5.5);
    CHECK(l.attrs.glu_offset == 1.0);
  }
  CHECK(experts_up == 2);
  for (const std::string& w : warnings) CHECK(w.find("swiglu_limit") == std::string::npos);
  // The architecture form carries the limit, and reads it back.
  const Json r = Json::parse(
      predict_json(Json({{"model", {{"hf_config", cfg}}}, {"training", {{"batch_size", 2}, {"seq_len", 16}}}}).dump()));
  REQUIRE(r.contains("model"));
  const Json& arch = r["model"]["architecture"];
  CHECK(arch["swiglu_limit"] == 5.5);
  CHECK(arch["hidden_act"] == "quick_gelu");
  const Json again = Json::parse(predict_json(
      Json({{"model", {{"architecture", arch}}}, {"training", {{"batch_size", 2}, {"seq_len", 16}}}}).dump()));
  REQUIRE(again.contains("model"));
  CHECK(again["model"]["architecture"] == arch);
  CHECK(again["results"][0]["step_ms"] == r["results"][0]["step_ms"]);
  // Without swiglu_limit Hugging Face's GptOssExperts still clamps at 7.
  cfg.erase("swiglu_limit");
  const Network seven =
      parse_layer_list(hf_config_to_layers(cfg, "model.hf_config", 16, warnings), "model.hf_config", {});
  for (const Layer& l : seven.layers) {
    if (l.type == LayerType::Dense && l.attrs.experts > 1 && l.attrs.gated) CHECK(l.attrs.glu_limit == 7.0);
  }
}

TEST_CASE("glu_limit and glu_offset: a gated dense layer's, checked", "[gptoss]") {
  const std::string head = R"({"input": {"kind": "sequence", "seq_len": 8, "features": 64}, "layers": [)";
  testutil::require_model_error(head + R"({"type": "dense", "units": 8, "glu_limit": 7}]})",
                                "model.layers[0].glu_limit", "gated");
  testutil::require_model_error(head + R"({"type": "dense", "units": 8, "glu_offset": 1}]})",
                                "model.layers[0].glu_offset", "gated");
  testutil::require_model_error(head + R"({"type": "dense", "units": 8, "gated": true, "glu_limit": -1}]})",
                                "model.layers[0].glu_limit", "");
  const Network ok =
      net_of(head + R"({"type": "dense", "units": 8, "gated": true, "glu_limit": 7, "glu_offset": 1}]})");
  CHECK(ok.layers[0].attrs.glu_limit == 7.0);
  CHECK(ok.layers[0].attrs.glu_offset == 1.0);
  // Parameters do not change.
  CHECK(ok.parameters() == net_of(head + R"({"type": "dense", "units": 8, "gated": true}]})").parameters());
}

TEST_CASE("gpt-oss under moe_act: the clamps' saved copies are recomputed with the activation", "[gptoss]") {
  // recompute_modules moe_act keeps the activation's input (fc1's output); the separate clamps' 2e per hidden
  // element is what it drops on the expert layer itself (the consumer's copy of the output is dropped there).
  const Network clamped = expert_mlp(true, true), plain = expert_mlp(true, false);
  const Layer& up = clamped.layers[layer_index(clamped, "up")];
  const LayerKind& dense = kind_of(LayerType::Dense);
  // One GPU holds all 8 experts: their hidden rows are the routed tokens, N wide.
  CHECK(dense.selective_dropped_bytes(up, B, e, megatron(), RecomputeModule::MoeAct) == Approx(2 * e * kRouted * N));
  CHECK(dense.selective_dropped_bytes(up, B, e, megatron(), RecomputeModule::CoreAttn) == 0);
  CHECK(dense.selective_dropped_bytes(plain.layers[layer_index(plain, "up")], B, e, megatron(),
                                      RecomputeModule::MoeAct) == 0);
  CHECK(dense.selective_dropped_bytes(up, B, e, pytorch(true), RecomputeModule::MoeAct) == 0);  // compiled: fused
}
