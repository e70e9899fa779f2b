// FP8 recipes (training.fp8_recipe; docs/PREDICTION.md, "FP8 recipes"): which GEMMs run in FP8, the cast kernels
// and bytes each recipe adds per FP8 linear, the FP8 weight copies and saved inputs, and the recipe's checks.
// Expected numbers come from the formulas written here (Transformer Engine's recipes), not from the code.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "layers/fp8.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
#include "prenet/memory.hpp"
#include "prenet/roofline.hpp"

using namespace prenet;
using testutil::require_input_error;

namespace {

// One block of an MLP (blk.0.up: 128 -> 512, blk.0.down: 512 -> 128) under a vocabulary head and its loss.
constexpr double kSeq = 64, kIn = 128, kHidden = 512, kBatch = 2;  // the head has 1024 outputs
const char* const kModel = R"({"input": {"kind": "sequence", "seq_len": 64, "features": 128},
  "layers": [{"type": "dense", "name": "blk.0.up", "units": 512, "bias": false},
             {"type": "dense", "name": "blk.0.down", "units": 128, "bias": false},
             {"type": "dense", "name": "head", "units": 1024, "bias": false},
             {"type": "cross_entropy", "name": "loss"}]})";

KernelContext fp8_context(Fp8Recipe recipe, bool any_layout = false) {
  KernelContext c(Precision::FP8);
  c.fp8_recipe = recipe;
  c.fp8_any_layout = any_layout;
  return c;
}

/// Bytes of the layer's elementwise kernels in one phase (the casts, with nothing else in a bias-free linear).
double elementwise_bytes(const StepWork& w, std::size_t layer, Phase phase) {
  double total = 0;
  for (const Kernel& k : w.kernels) {
    if (static_cast<std::size_t>(k.layer) == layer && k.phase == phase && k.cls == KernelClass::Elementwise) {
      total += k.bytes;
    }
  }
  return total;
}

const Accelerator& hw(const std::string& id) {
  const Accelerator* acc = find_hardware(id);
  REQUIRE(acc != nullptr);
  return *acc;
}

/// Five repeated blocks ("blk.0" to "blk.4") of `block`'s layers under a 1024-output head and its loss, over 64
/// positions of 128 features.
Json five_blocks(const Json& block) {
  return {{"input", {{"kind", "sequence"}, {"seq_len", 64}, {"features", 128}}},
          {"layers",
           {{{"type", "repeat"}, {"name", "blk"}, {"count", 5}, {"layers", block}},
            {{"type", "dense"}, {"name", "head"}, {"units", 1024}, {"bias", false}},
            {{"type", "cross_entropy"}, {"name", "loss"}}}}};
}

/// Per block of five_blocks(...) resolved under `tr`: 'F' where its layer `leaf` is an FP8 linear, else 'b'.
std::string fp8_by_block(const Json& model, const TrainingConfig& tr, const std::string& leaf) {
  const Network net = resolve_model({{"layers", model["layers"]}, {"input", model["input"]}}, tr);
  const std::vector<bool> linear = fp8_linear_layers(net);
  std::string which;
  for (int b = 0; b < 5; ++b)
    which += linear[testutil::layer_index(net, "blk." + std::to_string(b) + "." + leaf)] ? 'F' : 'b';
  return which;
}

}  // namespace

TEST_CASE("fp8: only the blocks' linear GEMMs run in FP8; the head and everything else at the 16-bit peak", "[fp8]") {
  const Network net = testutil::net_of(kModel);
  const std::size_t up = testutil::layer_index(net, "blk.0.up"), down = testutil::layer_index(net, "blk.0.down"),
                    head = testutil::layer_index(net, "head");
  const std::vector<bool> linear = fp8_linear_layers(net);
  CHECK(linear[up]);
  CHECK(linear[down]);
  CHECK_FALSE(linear[head]);
  const StepWork w = step_work(net, 2, fp8_context(Fp8Recipe::Delayed), Optimizer::AdamW);
  const Accelerator& h100 = hw("h100-sxm");
  int fp8_gemms = 0;
  for (const Kernel& k : w.kernels) {
    if (!is_matmul(k.cls)) continue;
    const bool in_block = static_cast<std::size_t>(k.layer) != head;
    CHECK(k.fp8 == in_block);
    fp8_gemms += k.fp8 ? 1 : 0;
    // The catalogue's dense peaks: FP8 1978.9, BF16 989.4 TFLOP/s on the H100 SXM.
    CHECK(matmul_peak_tflops(h100, Precision::FP8, k) == Approx(in_block ? 1978.9 : 989.4));
  }
  // up: forward and weight gradient (its input is data: no input gradient); down: forward, dgrad, wgrad.
  CHECK(fp8_gemms == 5);
  // Under bf16 nothing is marked.
  for (const Kernel& k : step_work(net, 2, KernelContext(Precision::BF16), Optimizer::AdamW).kernels) {
    CHECK_FALSE(k.fp8);
  }
}

TEST_CASE("fp8: routers and widths TE refuses stay 16-bit", "[fp8]") {
  const Network routed = testutil::net_of(R"({"input": {"kind": "sequence", "seq_len": 16, "features": 64},
    "layers": [{"type": "dense", "name": "blk.0.fc", "units": 64, "bias": false},
               {"type": "dense", "name": "blk.0.router", "units": 8, "bias": false}]})");
  const std::vector<bool> linear = fp8_linear_layers(routed);
  CHECK(linear[0]);
  CHECK_FALSE(linear[1]);  // Megatron's router is a torch linear in FP32, not a TE module
  const Network odd = testutil::net_of(R"({"input": {"kind": "sequence", "seq_len": 16, "features": 64},
    "layers": [{"type": "dense", "name": "blk.0.fc", "units": 100, "bias": false}]})");
  CHECK_FALSE(fp8_linear_layers(odd)[0]);  // 100 outputs: no multiple of 8 (TE assert_dim_for_fp8_exec)
}

TEST_CASE("fp8: an FP8 GEMM reads its operands in 1 byte and writes its result in 16-bit", "[fp8]") {
  const Network net = testutil::net_of(kModel);
  const std::size_t down = testutil::layer_index(net, "blk.0.down");
  const StepWork w = step_work(net, 2, fp8_context(Fp8Recipe::Delayed), Optimizer::AdamW);
  const double m = kBatch * kSeq, k = kHidden, n = kIn;
  bool found = false;
  for (const Kernel& kn : w.kernels) {
    if (static_cast<std::size_t>(kn.layer) != down || kn.phase != Phase::Forward || !is_matmul(kn.cls)) continue;
    CHECK(kn.bytes == Approx(1 * (m * k + k * n) + 2 * m * n));
    found = true;
  }
  CHECK(found);
}

TEST_CASE("fp8: each recipe's cast kernels per FP8 linear", "[fp8]") {
  const Network net = testutil::net_of(kModel);
  const std::size_t down = testutil::layer_index(net, "blk.0.down");
  const StepWork bf16 = step_work(net, 2, KernelContext(Precision::BF16), Optimizer::AdamW);
  // blk.0.down: input X (m x 512), weight W (512 x 128), output gradient dY (m x 128), m = batch x seq tokens; each
  // cast reads the 16-bit tensor (2 B) and writes `copies` FP8 copies of (1 + scale) B per element.
  const double m = kBatch * kSeq, x = m * kHidden, wt = kHidden * kIn, dy = m * kIn;
  struct Case {
    Fp8Recipe recipe;
    bool any_layout;
    double copies, act_scale, weight_scale, amax_reads;
  };
  const std::vector<Case> cases = {
      {Fp8Recipe::Delayed, false, 2, 0, 0, 0},             // Hopper: rowwise + transposed copy (TN-only FP8 GEMMs)
      {Fp8Recipe::Delayed, true, 1, 0, 0, 0},              // Blackwell B200: one copy serves every layout
      {Fp8Recipe::Current, false, 2, 0, 0, 2},             // an amax pass (read 2 B) before each cast
      {Fp8Recipe::MXFP8, true, 2, 1.0 / 32, 1.0 / 32, 0},  // E8M0 per 32, rowwise + columnwise
      {Fp8Recipe::Blockwise, false, 2, 4.0 / 128, 4.0 / 16384, 0},  // FP32 per 1x128 / 128x128
  };
  for (const Case& c : cases) {
    INFO("recipe " << static_cast<int>(c.recipe) << " any_layout " << c.any_layout);
    const StepWork w = step_work(net, 2, fp8_context(c.recipe, c.any_layout), Optimizer::AdamW);
    const double cast_x = x * (2 + c.copies * (1 + c.act_scale) + c.amax_reads);
    const double cast_dy = dy * (2 + c.copies * (1 + c.act_scale) + c.amax_reads);
    const double cast_w = wt * (2 + c.copies * (1 + c.weight_scale) + c.amax_reads);
    CHECK(elementwise_bytes(w, down, Phase::Forward) - elementwise_bytes(bf16, down, Phase::Forward) == Approx(cast_x));
    CHECK(elementwise_bytes(w, down, Phase::Backward) - elementwise_bytes(bf16, down, Phase::Backward) ==
          Approx(cast_dy));
    // The weight is cast once per step (TE caches it across micro-batches): an optimizer-phase kernel.
    CHECK(elementwise_bytes(w, down, Phase::Optimizer) == Approx(cast_w));
  }
  // No optimizer: the weight cast runs in the forward pass.
  const StepWork none = step_work(net, 2, fp8_context(Fp8Recipe::Delayed), Optimizer::None);
  CHECK(elementwise_bytes(none, down, Phase::Forward) == Approx(x * (2 + 2) + wt * (2 + 2)));
}

TEST_CASE("fp8: saved inputs of FP8 linears are their FP8 copies", "[fp8]") {
  const Network net = testutil::net_of(kModel);
  const std::size_t up = testutil::layer_index(net, "blk.0.up"), down = testutil::layer_index(net, "blk.0.down"),
                    head = testutil::layer_index(net, "head");
  const StepWork bf16 = step_work(net, 2, KernelContext(Precision::BF16), Optimizer::AdamW);
  const double m = kBatch * kSeq;
  // Delayed: 1 byte instead of 2 per saved input element; MXFP8: 1 + 1/32.
  for (const auto& [recipe, per_element] :
       std::vector<std::pair<Fp8Recipe, double>>{{Fp8Recipe::Delayed, 1.0}, {Fp8Recipe::MXFP8, 1 + 1.0 / 32}}) {
    const StepWork w = step_work(net, 2, fp8_context(recipe, true), Optimizer::AdamW);
    CHECK(w.layers[up].saved_activation_bytes ==
          Approx(bf16.layers[up].saved_activation_bytes - (2 - per_element) * m * kIn));
    CHECK(w.layers[down].saved_activation_bytes ==
          Approx(bf16.layers[down].saved_activation_bytes - (2 - per_element) * m * kHidden));
    CHECK(w.layers[head].saved_activation_bytes == Approx(bf16.layers[head].saved_activation_bytes));
  }
}

TEST_CASE("fp8: the FP8 weight copies sit beside the 16-bit and FP32 weights", "[fp8]") {
  const Network net = testutil::net_of(kModel);
  TrainingConfig bf16 = testutil::trained_with(Precision::BF16, Optimizer::AdamW);
  const MemoryEstimate base = estimate_memory(net, step_work(net, 2, kernel_context(bf16), Optimizer::AdamW), bf16);
  // The blocks' matrices (128 x 512 and 512 x 128); the head's 128 x 1024 has none.
  const double fp8_weights = kIn * kHidden + kHidden * kIn;
  struct Case {
    Fp8Recipe recipe;
    bool any_layout;
    double per_element;  // copies x (1 + weight scale)
  };
  for (const Case& c : std::vector<Case>{{Fp8Recipe::Delayed, false, 2.0},
                                         {Fp8Recipe::Delayed, true, 1.0},
                                         {Fp8Recipe::Current, false, 2.0},
                                         {Fp8Recipe::MXFP8, true, 2 * (1 + 1.0 / 32)},
                                         {Fp8Recipe::Blockwise, false, 2 * (1 + 4.0 / 16384)}}) {
    TrainingConfig tr = testutil::trained_with(Precision::FP8, Optimizer::AdamW);
    tr.fp8_recipe = c.recipe;
    tr.fp8_any_layout = c.any_layout;
    const MemoryEstimate m = estimate_memory(net, step_work(net, 2, kernel_context(tr), Optimizer::AdamW), tr);
    CHECK((m.weights_gb - base.weights_gb) * 1e9 == Approx(fp8_weights * c.per_element));
    CHECK(m.gradients_gb == Approx(base.gradients_gb));
    CHECK(m.optimizer_gb == Approx(base.optimizer_gb));
  }
}

TEST_CASE("fp8: a pipeline stage counts the FP8 copies of its own layers, sharded like the weights", "[fp8]") {
  const Network net = testutil::net_of(kModel);
  const ShardedNetwork shard = shard_network(net, 1, false);
  const std::vector<double> saved(net.layers.size(), 0.0);
  TrainingConfig tr = testutil::trained_with(Precision::FP8, Optimizer::AdamW);
  const StageInputs in = stage_inputs(shard, saved, saved, 0, net.layers.size());
  CHECK(in.fp8_weights == Approx(2 * kIn * kHidden));
  ParallelConfig one, zero3;
  zero3.data = 4;
  zero3.zero_stage = 3;
  TrainingConfig bf16 = testutil::trained_with(Precision::BF16, Optimizer::AdamW);
  const double extra = (stage_memory(in, 0, one, tr).weights_gb - stage_memory(in, 0, one, bf16).weights_gb) * 1e9;
  CHECK(extra == Approx(2 * kIn * kHidden * 2));  // delayed on a TN-only part: 2 copies of 1 byte
  const double sharded =
      (stage_memory(in, 0, zero3, tr).weights_gb - stage_memory(in, 0, zero3, bf16).weights_gb) * 1e9;
  CHECK(sharded == Approx(extra / 4));
}

TEST_CASE("fp8: the recipe is checked against the precision and every accelerator", "[fp8]") {
  TrainingConfig bf16 = testutil::trained_with(Precision::BF16, Optimizer::AdamW);
  bf16.fp8_recipe = Fp8Recipe::Current;
  require_input_error([&] { resolve_fp8_recipe(bf16, {hw("h100-sxm")}); }, "training.fp8_recipe",
                      "precision fp8 only; the precision is bf16");
  TrainingConfig tr = testutil::trained_with(Precision::FP8, Optimizer::AdamW);
  tr.fp8_recipe = Fp8Recipe::MXFP8;
  require_input_error(
      [&] {
        resolve_fp8_recipe(tr, {hw("b200"), hw("h100-sxm")});
      },
      "training.fp8_recipe", "(h100-sxm) is not one");
  tr.fp8_recipe = Fp8Recipe::Blockwise;
  require_input_error([&] { resolve_fp8_recipe(tr, {hw("l40s")}); }, "training.fp8_recipe", "Hopper or Blackwell");
  tr.fp8_recipe = Fp8Recipe::NVFP4;
  require_input_error(
      [&] {
        resolve_fp8_recipe(tr, {hw("b200"), hw("h100-sxm")});
      },
      "training.fp8_recipe", "(h100-sxm) is not one");
  // An RTX 50 card has FP4 tensor cores but is compute capability 12.0, which TE's NVFP4 recipe does not take.
  require_input_error([&] { resolve_fp8_recipe(tr, {hw("rtx-5090")}); }, "training.fp8_recipe",
                      "data-centre Blackwell");
  resolve_fp8_recipe(tr, {hw("b200"), hw("gb300")});
  // Transposed copies are dropped only when every accelerator takes FP8 operands in any layout.
  tr.fp8_recipe.reset();
  resolve_fp8_recipe(tr, {hw("b200")});
  CHECK(tr.fp8_any_layout);
  resolve_fp8_recipe(tr, {hw("b200"), hw("h100-sxm")});
  CHECK_FALSE(tr.fp8_any_layout);
  tr.fp8_recipe = Fp8Recipe::MXFP8;
  resolve_fp8_recipe(tr, {hw("b200")});
  CHECK(tr.fp8_any_layout);
}

TEST_CASE("fp8: a Mamba-2 mixer's in_proj and out_proj run in FP8 (Megatron's TE linears), its SSD scan in 16-bit",
          "[fp8]") {
  auto mixer = [](int version) {
    const std::string sizes =
        version == 2 ? R"("num_heads": 8, "n_groups": 1)" : R"("dt_rank": 16)";  // in_proj: 552 wide
    return R"({"input": {"kind": "sequence", "seq_len": 64, "features": 128},
      "layers": [{"type": "repeat", "name": "blk", "count": 2, "layers": [
                   {"type": "mamba", "name": "mixer", "version": )" +
           std::to_string(version) + R"(, "inner": 256, "state_size": 16, )" + sizes + R"(}]},
                 {"type": "dense", "name": "head", "units": 1024, "bias": false},
                 {"type": "cross_entropy", "name": "loss"}]})";
  };
  const Network v2 = testutil::net_of(mixer(2));
  const std::vector<bool> linear = fp8_linear_layers(v2);
  const StepWork w = step_work(v2, 2, fp8_context(Fp8Recipe::Delayed), Optimizer::AdamW);
  std::size_t fp8_gemms = 0, scans = 0;
  for (const Kernel& k : w.kernels) {
    const Layer& layer = v2.layers[static_cast<std::size_t>(k.layer)];
    if (layer.type != LayerType::Mamba || !is_matmul(k.cls)) continue;
    CHECK(linear[static_cast<std::size_t>(k.layer)]);
    CHECK(k.fp8 == (k.cls == KernelClass::Gemm));
    if (k.fp8) ++fp8_gemms;
    if (k.cls == KernelClass::BatchedGemm) ++scans;
  }
  // Per mixer: in_proj and out_proj forward, both input gradients and both weight gradients; the first mixer reads
  // the network's input, which needs no gradient (no in_proj input gradient there).
  CHECK(fp8_gemms == 2 * 6 - 1);
  CHECK(scans > 0);
  // Mamba-1 (x_proj, dt_proj: no Megatron-Core / TE counterpart) stays 16-bit.
  const Network v1 = testutil::net_of(mixer(1));
  const std::vector<bool> v1_linear = fp8_linear_layers(v1);
  for (std::size_t l = 0; l < v1.layers.size(); ++l) {
    if (v1.layers[l].type == LayerType::Mamba) CHECK_FALSE(v1_linear[l]);
  }
}

TEST_CASE("fp8: a Gated DeltaNet's input projections and out_proj run in FP8, its delta rule in 16-bit", "[fp8]") {
  const Network net = testutil::net_of(R"({"input": {"kind": "sequence", "seq_len": 128, "features": 128},
    "layers": [{"type": "rmsnorm"}, {"type": "gated_deltanet", "name": "g", "key_heads": 2, "value_heads": 4,
                "key_head_dim": 32, "value_head_dim": 32}, {"type": "dense", "name": "head", "units": 1024}]})");
  const std::size_t g = testutil::layer_index(net, "g");
  CHECK(fp8_linear_layers(net)[g]);
  const StepWork w = step_work(net, 2, fp8_context(Fp8Recipe::Delayed), Optimizer::AdamW);
  std::size_t fp8_gemms = 0, chunks = 0;
  for (const Kernel& k : w.kernels) {
    if (static_cast<std::size_t>(k.layer) != g || !is_matmul(k.cls)) continue;
    CHECK(k.fp8 == (k.cls == KernelClass::Gemm));
    fp8_gemms += k.fp8 ? 1 : 0;
    chunks += k.cls == KernelClass::BatchedGemm ? 1 : 0;
  }
  // in_proj_qkvz, in_proj_ba and out_proj: forward, input gradients and weight gradients.
  CHECK(fp8_gemms == 3 * 3);
  CHECK(chunks == 3 + 6);
}

TEST_CASE("fp8: nvfp4 runs the FP8 linears' GEMMs in 4 bits at the FP4 peak, with its casts and copies", "[fp8]") {
  const Network net = testutil::net_of(kModel);
  const std::size_t down = testutil::layer_index(net, "blk.0.down"), head = testutil::layer_index(net, "head");
  const StepWork bf16 = step_work(net, 2, KernelContext(Precision::BF16), Optimizer::AdamW);
  const StepWork w = step_work(net, 2, fp8_context(Fp8Recipe::NVFP4, true), Optimizer::AdamW);
  const double m = kBatch * kSeq, k = kHidden, n = kIn;
  const Accelerator& b200 = hw("b200");
  for (const Kernel& kn : w.kernels) {
    if (!is_matmul(kn.cls)) continue;
    const auto layer = static_cast<std::size_t>(kn.layer);
    CHECK(kn.fp4 == (layer != head));
    if (layer == down && kn.phase == Phase::Forward) CHECK(kn.bytes == Approx(0.5 * (m * k + k * n) + 2 * m * n));
    if (layer == head) continue;
    // Everything but the peak is the same for the GEMM as an FP8 one: B200's FP4 peak (9000) is twice its FP8.
    Kernel as_fp8 = kn;
    as_fp8.fp4 = false;
    CHECK(matmul_peak_tflops(b200, Precision::FP8, kn) == Approx(9000));
    CHECK(kernel_time(kn, b200, Precision::FP8).compute_ms ==
          Approx(kernel_time(as_fp8, b200, Precision::FP8).compute_ms / 2));
    // No FP4 sweep is published: the FP8 share of the peak (B200: 3432.5 of 4500).
    CHECK(achievable_matmul_fraction(b200, Precision::FP8, kn) == Approx(3432.5 / 4500));
  }
  // Casts: an amax read (2 B), then the 16-bit read and two copies (rowwise, columnwise) of half a byte with an E4M3
  // scale per 16 values (activations, gradients) or per 16x16 block (weights).
  const double x = m * kHidden, wt = kHidden * kIn, dy = m * kIn;
  const double act = 2 + 2 + 2 * (0.5 + 1.0 / 16), weight = 2 + 2 + 2 * (0.5 + 1.0 / 256);
  CHECK(elementwise_bytes(w, down, Phase::Forward) - elementwise_bytes(bf16, down, Phase::Forward) == Approx(x * act));
  CHECK(elementwise_bytes(w, down, Phase::Backward) - elementwise_bytes(bf16, down, Phase::Backward) ==
        Approx(dy * act));
  CHECK(elementwise_bytes(w, down, Phase::Optimizer) == Approx(wt * weight));
  // The weight copies kept across micro-batches: two of (0.5 + 1/256) bytes per element of the blocks' matrices.
  TrainingConfig tr = testutil::trained_with(Precision::FP8, Optimizer::AdamW);
  tr.fp8_recipe = Fp8Recipe::NVFP4;
  TrainingConfig base = testutil::trained_with(Precision::BF16, Optimizer::AdamW);
  const MemoryEstimate m4 = estimate_memory(net, w, tr);
  const MemoryEstimate m16 = estimate_memory(net, step_work(net, 2, kernel_context(base), Optimizer::AdamW), base);
  CHECK((m4.weights_gb - m16.weights_gb) * 1e9 == Approx(2 * kIn * kHidden * 2 * (0.5 + 1.0 / 256)));
}

TEST_CASE("fp8: an nvfp4 request runs on data-centre Blackwell, faster than FP8, and says it is experimental",
          "[fp8]") {
  auto request = [](const std::string& recipe) {
    return R"({"model": {"layers": [{"type": "dense", "name": "blk.0.up", "units": 8192, "bias": false},
                                     {"type": "dense", "name": "blk.0.down", "units": 2048, "bias": false}],
               "input": {"kind": "sequence", "seq_len": 4096, "features": 2048}},
              "training": {"batch_size": 8, "precision": "fp8", "fp8_recipe": ")" +
           recipe + R"("}, "hardware": ["b200"], "options": {"per_layer": false}})";
  };
  const Json fp4 = Json::parse(predict_json(request("nvfp4")));
  const Json fp8 = Json::parse(predict_json(request("mxfp8")));
  REQUIRE(fp4.contains("results"));
  REQUIRE(fp8.contains("results"));
  CHECK(fp4["training"]["fp8_recipe"] == "nvfp4");
  CHECK(fp4["results"][0]["step_ms"].get<double>() < fp8["results"][0]["step_ms"].get<double>());
  bool experimental = false;
  for (const Json& warning : fp4["warnings"])
    experimental = experimental || warning.get<std::string>().find("nvfp4 is experimental") != std::string::npos;
  CHECK(experimental);
  const Json h100 =
      Json::parse(predict_json(std::string(request("nvfp4")).replace(request("nvfp4").find("b200"), 4, "h100-sxm")));
  CHECK(h100["error"]["field"] == "training.fp8_recipe");
}

TEST_CASE("fp8: a request names training.fp8_recipe, echoes it when given, and defaults to delayed", "[fp8]") {
  auto request = [](const std::string& training) {
    return R"({"model": {"layers": [{"type": "dense", "name": "blk.0.fc", "units": 128}],
               "input": {"kind": "sequence", "seq_len": 64, "features": 128}},
              "training": )" +
           training + R"(, "hardware": ["h100-sxm"]})";
  };
  const Json given = Json::parse(predict_json(request(R"({"precision": "fp8", "fp8_recipe": "current"})")));
  REQUIRE(given.contains("results"));
  CHECK(given["training"]["fp8_recipe"] == "current");
  const Json plain = Json::parse(predict_json(request(R"({"precision": "fp8"})")));
  CHECK_FALSE(plain["training"].contains("fp8_recipe"));
  const Json delayed = Json::parse(predict_json(request(R"({"precision": "fp8", "fp8_recipe": "delayed"})")));
  CHECK(plain["results"][0]["step_ms"] == delayed["results"][0]["step_ms"]);
  const Json bad = Json::parse(predict_json(request(R"({"precision": "bf16", "fp8_recipe": "delayed"})")));
  CHECK(bad["error"]["field"] == "training.fp8_recipe");
}

TEST_CASE("fp8: attention's projections run in FP8, its QK^T and PV in 16-bit", "[fp8]") {
  // Self-attention, 256 wide, 4 heads, 64 positions, 2 samples, fused (flash) core.
  const Network net = testutil::net_of(R"({"input": {"kind": "sequence", "seq_len": 64, "features": 256},
    "layers": [{"type": "attention", "name": "blk.0.attn", "num_heads": 4, "causal": true}]})");
  KernelContext bf16(Precision::BF16, AttentionKernel::Flash), fp8(Precision::FP8, AttentionKernel::Flash);
  const StepWork w16 = step_work(net, 2, bf16, Optimizer::AdamW), w8 = step_work(net, 2, fp8, Optimizer::AdamW);
  int projections = 0;
  for (const Kernel& k : w8.kernels) {
    if (!is_matmul(k.cls)) continue;
    CHECK(k.fp8 == (k.cls == KernelClass::Gemm));
    projections += k.fp8 ? 1 : 0;
  }
  // QKV and the output projection: forward and weight gradient each, and the output projection's input gradient
  // (the layer's input is data: no input gradient for QKV).
  CHECK(projections == 5);
  // Saved: the QKV input in FP8 (1 byte instead of 2), and the output projection's FP8 input copy beside the
  // 16-bit core output the fused backward reads: m x 256 elements each, m = 2 x 64 tokens.
  const double m = 2 * 64, width = 256;
  CHECK(w8.layers[0].saved_activation_bytes ==
        Approx(w16.layers[0].saved_activation_bytes - (2 - 1) * m * width + 1 * m * width));
  // Eager: the output projection's input is its own saved tensor, kept in FP8 too.
  KernelContext eager16(Precision::BF16), eager8(Precision::FP8);
  const StepWork e16 = step_work(net, 2, eager16, Optimizer::AdamW), e8 = step_work(net, 2, eager8, Optimizer::AdamW);
  CHECK(e8.layers[0].saved_activation_bytes ==
        Approx(e16.layers[0].saved_activation_bytes - (2 - 1) * m * width - (2 - 1) * m * width));
}

TEST_CASE(
    "fp8: bf16_layers_at_start / _at_end keep the first and last blocks' linears 16-bit (Megatron's "
    "first_last_layers_bf16)",
    "[fp8]") {
  // Five blocks of one 128 -> 128 linear each, under a head.
  const Json model = five_blocks({{{"type", "dense"}, {"name", "fc"}, {"units", 128}, {"bias", false}}});
  auto fp8_blocks = [&](std::int64_t start, std::int64_t end) {
    TrainingConfig tr;
    tr.precision = Precision::FP8;
    tr.bf16_layers_at_start = start;
    tr.bf16_layers_at_end = end;
    return fp8_by_block(model, tr, "fc");
  };
  CHECK(fp8_blocks(0, 0) == "FFFFF");
  CHECK(fp8_blocks(1, 0) == "bFFFF");
  CHECK(fp8_blocks(0, 2) == "FFFbb");
  CHECK(fp8_blocks(1, 1) == "bFFFb");
  CHECK(fp8_blocks(2, 3) == "bbbbb");
  // At sizes where FP4 pays for its casts (4096-wide, 2048 positions), the kept blocks make the step slower; echoed
  // when given.
  Json large = model;
  large["input"] = {{"kind", "sequence"}, {"seq_len", 2048}, {"features", 4096}};
  large["layers"][0]["layers"][0]["units"] = 4096;
  auto request = [&](const Json& training) {
    return Json(
        {{"model", large}, {"training", training}, {"hardware", {"b200"}}, {"options", {{"per_layer", false}}}});
  };
  const Json all = testutil::call(request({{"batch_size", 8}, {"precision", "fp8"}, {"fp8_recipe", "nvfp4"}}));
  const Json kept = testutil::call(
      request({{"batch_size", 8}, {"precision", "fp8"}, {"fp8_recipe", "nvfp4"}, {"bf16_layers_at_end", 2}}));
  REQUIRE(kept.contains("results"));
  CHECK(kept["results"][0]["step_ms"].get<double>() > all["results"][0]["step_ms"].get<double>());
  CHECK(kept["training"]["bf16_layers_at_end"] == 2);
  CHECK_FALSE(all["training"].contains("bf16_layers_at_end"));
  // Errors name the field: more blocks than the model has, or no FP8 to keep them out of.
  testutil::require_input_error([&] { fp8_blocks(3, 3); }, "training.bf16_layers_at_start",
                                "the model has 5 decoder blocks");
  const Json bf16 = testutil::call(request({{"batch_size", 8}, {"precision", "bf16"}, {"bf16_layers_at_end", 1}}));
  CHECK(bf16["error"]["field"] == "training.bf16_layers_at_end");
}

TEST_CASE("fp8: glob patterns match whole names, '*' any run and '?' one character", "[fp8]") {
  CHECK(glob_matches("mtp.*", "mtp.0.self_attn_0"));
  CHECK_FALSE(glob_matches("mtp.*", "mtp0_head"));  // the dot is literal
  CHECK(glob_matches("*self_attn*", "layers.12.self_attn"));
  CHECK(glob_matches("*latent_proj*", "mtp.1.fc2_latent_proj_1"));
  CHECK(glob_matches("layers.1.*", "layers.1.norm"));
  CHECK_FALSE(glob_matches("layers.1.*", "layers.10.norm"));
  CHECK(glob_matches("layers.?.norm", "layers.3.norm"));
  CHECK_FALSE(glob_matches("layers.?.norm", "layers.13.norm"));
  CHECK(glob_matches("*", ""));
  CHECK_FALSE(glob_matches("", "x"));
  CHECK(glob_matches("a*b*c", "aXbYbZc"));
  CHECK_FALSE(glob_matches("a*b*c", "aXbYbZ"));
  // No backtracking blow-up: a long run of stars against a long near-miss answers at once.
  CHECK_FALSE(glob_matches(std::string(60, '*') + "b", std::string(128, 'a')));
}

TEST_CASE("fp8: bf16_modules keeps the linears of the layers it names 16-bit (Transformer Engine's recipe matchers)",
          "[fp8]") {
  // Five blocks of an up and a down linear under a head.
  const Json model = five_blocks({{{"type", "dense"}, {"name", "up"}, {"units", 512}, {"bias", false}},
                                  {{"type", "dense"}, {"name", "down"}, {"units", 128}, {"bias", false}}});
  auto fp8_of = [&](const std::vector<std::string>& patterns, const std::string& leaf) {
    TrainingConfig tr;
    tr.precision = Precision::FP8;
    tr.bf16_modules = patterns;
    return fp8_by_block(model, tr, leaf);
  };
  CHECK(fp8_of({}, "up") == "FFFFF");
  CHECK(fp8_of({"*.up"}, "up") == "bbbbb");
  CHECK(fp8_of({"*.up"}, "down") == "FFFFF");
  CHECK(fp8_of({"blk.0.*", "blk.4.down"}, "up") == "bFFFF");
  CHECK(fp8_of({"blk.0.*", "blk.4.down"}, "down") == "bFFFb");
  // Errors name the field, or the element whose pattern names nothing; echoed when given.
  testutil::require_input_error(
      [&] {
        fp8_of({"*.up", "blk.9.*"}, "up");
      },
      "training.bf16_modules[1]", "\"blk.9.*\" matches no layer");
  auto request = [&](const Json& training) {
    return Json(
        {{"model", model}, {"training", training}, {"hardware", {"h100-sxm"}}, {"options", {{"per_layer", false}}}});
  };
  const Json bf16 = testutil::call(request({{"batch_size", 8}, {"precision", "bf16"}, {"bf16_modules", "*.up"}}));
  CHECK(bf16["error"]["field"] == "training.bf16_modules");
  const Json kept = testutil::call(request({{"batch_size", 8}, {"precision", "fp8"}, {"bf16_modules", {"*.up"}}}));
  REQUIRE(kept.contains("results"));
  CHECK(kept["training"]["bf16_modules"] == Json::array({"*.up"}));
  const Json none = testutil::call(request({{"batch_size", 8}, {"precision", "fp8"}}));
  CHECK_FALSE(none["training"].contains("bf16_modules"));
}
