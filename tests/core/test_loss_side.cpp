// The loss side of a language model's memory (docs/PREDICTION.md, Memory; docs/FINETUNE.md, "Core changes"):
// what a compiled cross-entropy saves, that the loss's and the head's saved tensors are freed before a
// recomputed block is rebuilt, and that torchtune's activation offload leaves them on the GPU. Expected numbers
// from the formulas written here.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
#include "prenet/memory.hpp"
#include "prenet/parallel.hpp"
#include "prenet/request.hpp"
#include "small_models.hpp"

using namespace prenet;
using testutil::d;
using testutil::trained_with;

namespace {

constexpr std::int64_t kHidden = 256, kHeads = 8, kSeq = 128, kLayers = 2, kVocab = 5000, kBatch = 2;

Network gpt() { return testutil::bf16_gpt2(kHidden, kHeads, kLayers, kVocab, kSeq); }

std::size_t cross_entropy_index(const Network& net) {
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    if (net.layers[l].type == LayerType::CrossEntropy) return l;
  }
  FAIL("no cross_entropy layer");
  return 0;
}

double ce_saved(const Network& net, bool compiled_loss, int chunks, bool compiled_blocks = false) {
  KernelContext context(Precision::BF16);
  context.compiled = compiled_blocks;
  context.compiled_loss = compiled_loss;
  context.loss_chunks = chunks;
  const StepWork work = step_work(net, kBatch, context, Optimizer::Adam);
  return work.layers[cross_entropy_index(net)].saved_activation_bytes;
}

}  // namespace

TEST_CASE("a compiled cross-entropy saves its 16-bit logits and one chunk's gradient", "[memory][loss]") {
  const Network net = gpt();
  const double logits = d(kBatch * kSeq * kVocab);
  // Eager (PyTorch's log_softmax + nll_loss in FP32): 4 bytes of log-probabilities per logit saved, and the
  // first backward kernels' two FP32 gradients, 8 bytes, for one of the chunks.
  CHECK(ce_saved(net, false, 1) == Approx(12.0 * logits));
  CHECK(ce_saved(net, false, 8) == Approx(5.0 * logits));
  // Compiled (Inductor's min-cut partition): the bf16 logits (2 bytes) and the fused backward's bf16 gradient
  // of one chunk.
  CHECK(ce_saved(net, true, 1) == Approx(4.0 * logits));
  CHECK(ce_saved(net, true, 8) == Approx(2.0 * (1.0 + 1.0 / 8.0) * logits));
  // Compiling the blocks alone (torchtitan's compile) leaves the loss eager: its FP32 log-probabilities stay.
  CHECK(ce_saved(net, false, 1, true) == Approx(12.0 * logits));
}

TEST_CASE("the loss side is the cross-entropy and the layer whose output it reads", "[memory][loss]") {
  const Network net = gpt();
  const std::vector<bool> side = loss_side_layers(net);
  const std::size_t ce = cross_entropy_index(net);
  int count = 0;
  for (std::size_t l = 0; l < side.size(); ++l) count += side[l] ? 1 : 0;
  CHECK(count == 2);
  CHECK(side[ce]);
  REQUIRE(net.layers[ce].inputs.size() == 1);
  CHECK(side[static_cast<std::size_t>(net.layers[ce].inputs[0])]);
}

TEST_CASE("a recomputed block is rebuilt after the loss side has freed what it saved", "[memory][loss][recompute]") {
  ParallelConfig cfg;
  cfg.recompute = Recompute::Full;
  const TrainingConfig tr = trained_with(Precision::BF16, Optimizer::Adam);
  StageInputs in;
  in.activations = 3e9;  // block checkpoints 1 GB + the loss side's 2 GB
  in.loss_saved = 2e9;
  // A block smaller than the loss side: the peak is at the loss's backward, everything kept.
  in.largest_block = 0.5e9;
  CHECK(stage_memory(in, 0, cfg, tr).activations_gb == Approx(3.0));
  // A larger block: checkpoints + the rebuilt block, the loss side gone.
  in.largest_block = 2.5e9;
  CHECK(stage_memory(in, 0, cfg, tr).activations_gb == Approx(1.0 + 2.5));
  // Without recomputation nothing is rebuilt.
  cfg.recompute = Recompute::None;
  CHECK(stage_memory(in, 0, cfg, tr).activations_gb == Approx(3.0));
}

TEST_CASE("activation offload leaves the loss side on the GPU", "[memory][loss][offload]") {
  TrainingConfig tr = trained_with(Precision::BF16, Optimizer::Adam);
  tr.activation_offload = true;
  MemoryEstimate m;
  m.activations_gb = 10.0;
  OffloadShare share;
  share.activations = 10e9;
  share.loss_saved = 4e9;
  share.largest_saved = 1e9;  // the largest of the offloaded layers
  move_to_host(m, share, tr);
  // 6 GB leave; two of the largest offloaded layers stay in flight beside the loss side's 4 GB.
  CHECK(m.host_gb == Approx(6.0));
  CHECK(m.activations_gb == Approx(4.0 + 2.0));
  // Under recomputation the rebuilt block adds to what stays once the loss side is freed.
  ParallelConfig cfg;
  cfg.recompute = Recompute::Full;
  StageInputs in;
  in.activations = 10e9;
  in.loss_saved = 4e9;
  in.largest_saved = 1e9;
  in.largest_block = 5e9;
  const MemoryEstimate s = stage_memory(in, 0, cfg, tr);
  CHECK(s.activations_gb == Approx(std::max(6.0, 6.0 - 4.0 + 5.0)));
  CHECK(s.host_gb == Approx(6.0));
}

namespace {

double activations_gb(const std::string& base) {
  const std::string text = R"({"model": {"hf_config": )" + std::string(testutil::small_llama_config()) +
                           R"(}, "hardware": ["h100-sxm"], "training": {"batch_size": 64, "seq_len": 32,
      "precision": "bf16", "finetune": {"method": "lora", "rank": 8, "dropout": 0.05, "targets": "all-linear",
      "base_precision": ")" +
                           base + R"("}}})";
  const Json r = Json::parse(prenet::predict_json(text));
  INFO(r.dump().substr(0, 400));
  return r.at("results").at(0).at("memory").at("activations_gb").get<double>();
}

}  // namespace

TEST_CASE("a bitsandbytes-quantized base saves each matmul's input when it needs a gradient", "[finetune][memory]") {
  // Beside the same LoRA over a bf16 base (whose frozen matmuls save nothing), each quantized matmul keeps its
  // input once per input group (q/k/v share one; gate/up share one) where a gradient flows through it. Per
  // token: block 0's attention passes none (nothing below it trains); its MLP's gate/up input 64 and down input
  // 128; block 1's attention q/k/v input 64 and o input 64, its MLP 64 + 128. 512 elements x 2 bytes x 32 tokens x 64
  // samples.
  const double extra = 512.0 * 2 * 32 * 64;  // batch 64
  CHECK((activations_gb("nf4") - activations_gb("bf16")) * 1e9 == Approx(extra).epsilon(2e-3));
  CHECK((activations_gb("int8") - activations_gb("bf16")) * 1e9 == Approx(extra).epsilon(2e-3));
}
