// Training switches of issue 19 (docs/PREDICTION.md, "Loss, compile and packing"): torchtune's chunked
// cross-entropy, torch.compile's fused elementwise chains, and sequence packing vs padding with real tokens per
// second. Expected numbers come from the formulas written here, not from the core's output.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>

#include "helpers.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/features.hpp"

using namespace prenet;
using testutil::d;

namespace {

constexpr std::int64_t kHidden = 256, kHeads = 8, kSeq = 128, kLayers = 2, kVocab = 5000, kBatch = 4;

/// A GPT-2 config whose MLP runs gelu_new, which Hugging Face writes as a chain of PyTorch ops.
Json gpt2_config() {
  return {{"model_type", "gpt2"}, {"n_embd", kHidden},
          {"n_head", kHeads},     {"n_layer", kLayers},
          {"vocab_size", kVocab}, {"n_positions", kSeq},
          {"attn_pdrop", 0.1},    {"resid_pdrop", 0.1},
          {"embd_pdrop", 0.1},    {"activation_function", "gelu_new"}};
}

Network gpt2() {
  TrainingConfig tr;
  tr.seq_len = kSeq;
  tr.precision = Precision::BF16;
  return resolve_model({{"hf_config", gpt2_config()}}, tr);
}

StepWork work_of(const Network& net, int loss_chunks, bool compiled) {
  KernelContext context(Precision::BF16, AttentionKernel::Flash);
  context.loss_chunks = loss_chunks;
  context.compiled = compiled;
  return step_work(net, kBatch, context, Optimizer::AdamW);
}

double saved_bytes(const StepWork& w) {
  double total = 0;
  for (const LayerWork& lw : w.layers) total += lw.saved_activation_bytes;
  return total;
}

struct Totals {
  double flops = 0, bytes = 0, kernels = 0;
};
Totals totals(const StepWork& w) {
  Totals t;
  for (const Kernel& k : w.kernels) {
    t.flops += k.flops;
    t.bytes += k.bytes;
    t.kernels += k.cls == KernelClass::Optimizer ? 0 : 1;
  }
  return t;
}

/// The layer whose output the cross-entropy reads (the vocabulary head).
std::size_t head_of(const Network& net) {
  for (const Layer& layer : net.layers) {
    if (layer.type == LayerType::CrossEntropy) return static_cast<std::size_t>(layer.inputs.front());
  }
  FAIL("no cross_entropy layer");
  return 0;
}

Json predict(const Json& training, const Json& model = {{"hf_config", gpt2_config()}}) {
  Json request = {{"model", model}, {"hardware", {"h100-sxm"}}, {"training", training}};
  return Json::parse(predict_json(request.dump()));
}

void check_error(const Json& response, const std::string& field) {
  INFO(response.dump().substr(0, 400));
  REQUIRE(response.contains("error"));
  CHECK(response["error"]["field"] == field);
}

}  // namespace

TEST_CASE("chunked cross-entropy drops all but one chunk of the FP32 loss gradients", "[tricks][memory]") {
  const Network net = gpt2();
  const StepWork standard = work_of(net, 1, false), chunked = work_of(net, kLossChunks, false);
  // Logits: batch x seq x vocab. The standard loss holds 4 (log-probabilities) + 4 + 4 (their and the logits'
  // FP32 gradients) bytes per logit at the backward peak; chunked, the two gradients exist for one chunk only.
  const double logits = d(kBatch) * d(kSeq) * d(kVocab);
  const double expected_drop = 8.0 * logits * (1.0 - 1.0 / d(kLossChunks));
  CHECK(saved_bytes(standard) - saved_bytes(chunked) == Approx(expected_drop).epsilon(1e-12));
  // The head's GEMMs: the same FLOPs in kLossChunks pieces per pass (forward, input and weight gradients).
  const std::size_t head = head_of(net);
  for (Phase phase : {Phase::Forward, Phase::Backward}) {
    CHECK(testutil::matmul_flops(chunked, head, phase) ==
          Approx(testutil::matmul_flops(standard, head, phase)).epsilon(1e-12));
  }
  auto head_gemms = [head](const StepWork& w) {
    int n = 0;
    for (const Kernel& k : w.kernels) n += static_cast<std::size_t>(k.layer) == head && is_matmul(k.cls) ? 1 : 0;
    return n;
  };
  CHECK(head_gemms(chunked) == kLossChunks * head_gemms(standard));
  // Nothing else changes: every other layer's kernels are the same.
  CHECK(totals(chunked).flops == Approx(totals(standard).flops).epsilon(1e-12));
}

TEST_CASE("torch.compile fuses GPT-2's gelu_new chain: fewer kernels and bytes, never more FLOPs", "[tricks]") {
  const Network net = gpt2();
  const StepWork eager = work_of(net, 1, false), compiled = work_of(net, 1, true);
  const Totals e = totals(eager), c = totals(compiled);
  CHECK(c.kernels < e.kernels);
  CHECK(c.bytes < e.bytes);
  CHECK(c.flops <= e.flops);
  CHECK(saved_bytes(compiled) < saved_bytes(eager));
  // Per MLP, Hugging Face's gelu_new chain runs as one kernel each way once compiled: the step loses
  // (chain length - 1) launches per pass per layer.
  // The chain the eager path runs for gelu_new, counted on a one-layer probe (a dense layer without bias, so
  // its only elementwise kernels are the chain's); compiled, it is one kernel each way.
  const Network probe = testutil::net_of(R"({"input": {"kind": "vector", "features": 64},
    "layers": [{"type": "dense", "units": 64, "activation": "gelu_new", "bias": false}]})");
  const StepWork probe_work = step_work(probe, 1, KernelContext(Precision::BF16), Optimizer::None);
  double chain_kernels = 0;
  for (const Kernel& k : probe_work.kernels) chain_kernels += k.cls == KernelClass::Elementwise ? 1 : 0;
  REQUIRE(chain_kernels > 2);
  const double per_mlp = chain_kernels - 2;
  CHECK(e.kernels - c.kernels == Approx(per_mlp * d(kLayers)));
}

TEST_CASE("torch.compile runs a GLU's activation and product as one kernel each way", "[tricks]") {
  const Network net = testutil::net_of(R"({"input": {"kind": "sequence", "seq_len": 64, "features": 128},
    "layers": [{"type": "dense", "units": 512, "gated": true, "activation": "silu", "bias": false},
               {"type": "dense", "units": 128, "bias": false}]})");
  KernelContext eager_context(Precision::BF16), compiled_context(Precision::BF16);
  compiled_context.compiled = true;
  const StepWork eager = step_work(net, 2, eager_context, Optimizer::None);
  const StepWork compiled = step_work(net, 2, compiled_context, Optimizer::None);
  // Eager: activation, product forward; two product terms and the activation backward (5); fused: 2.
  CHECK(totals(eager).kernels - totals(compiled).kernels == 3);
  CHECK(totals(compiled).flops <= totals(eager).flops);
  // Saved per hidden element: gate, activation output and up eagerly (3e), gate and up fused (2e); hidden =
  // batch x seq x units, e = 2 bytes.
  const double hidden = 2.0 * 64 * 512;
  CHECK(saved_bytes(eager) - saved_bytes(compiled) == Approx(2.0 * hidden));
}

TEST_CASE("tokens_per_s counts real tokens: padding vs packing, and the packed epoch", "[tricks][api]") {
  const std::int64_t average = 50, dataset = 1000;
  const Json padded = predict({{"batch_size", kBatch},
                               {"seq_len", kSeq},
                               {"precision", "bf16"},
                               {"average_tokens", average},
                               {"dataset_size", dataset}});
  const Json packed = predict({{"batch_size", kBatch},
                               {"seq_len", kSeq},
                               {"precision", "bf16"},
                               {"average_tokens", average},
                               {"dataset_size", dataset},
                               {"packing", true}});
  const Json full = predict({{"batch_size", kBatch}, {"seq_len", kSeq}, {"precision", "bf16"}});
  INFO(padded.dump().substr(0, 300));
  REQUIRE(padded.contains("results"));
  REQUIRE(packed.contains("results"));
  const Json& rp = padded["results"][0];
  const Json& rk = packed["results"][0];
  // A step does batch x seq_len positions of work either way.
  CHECK(rp["step_ms"].get<double>() == rk["step_ms"].get<double>());
  const double step_s = rp["step_ms"].get<double>() / 1e3;
  // tokens_per_s is written to 6 significant digits (round6): within half a unit of the sixth.
  CHECK(rp["tokens_per_s"].get<double>() == Approx(d(kBatch * average) / step_s).epsilon(5e-6));
  CHECK(rk["tokens_per_s"].get<double>() == Approx(d(kBatch * kSeq) / step_s).epsilon(5e-6));
  CHECK(full["results"][0]["tokens_per_s"].get<double>() ==
        Approx(d(kBatch * kSeq) / (full["results"][0]["step_ms"].get<double>() / 1e3)).epsilon(5e-6));
  // Padded: one sample per row, ceil(1000 / 4) = 250 steps. Packed: 1000 x 50 tokens fill
  // ceil(50000 / 128) = 391 rows, ceil(391 / 4) = 98 steps.
  CHECK(padded["training"]["steps_per_epoch"] == 250);
  CHECK(packed["training"]["steps_per_epoch"] == 98);
  CHECK(packed["training"]["packing"] == true);
  CHECK(packed["training"]["average_tokens"] == average);
  // Not a token model: no tokens_per_s.
  const Json vector_model = Json::parse(R"({"input": {"kind": "vector", "features": 32},
    "layers": [{"type": "dense", "units": 10}, {"type": "cross_entropy"}]})");
  const Json plain = predict({{"batch_size", 8}}, vector_model);
  REQUIRE(plain.contains("results"));
  CHECK_FALSE(plain["results"][0].contains("tokens_per_s"));
}

TEST_CASE("the switches' bad input gets errors naming the field", "[tricks][errors]") {
  check_error(predict({{"seq_len", kSeq}, {"average_tokens", kSeq + 1}}), "training.average_tokens");
  check_error(predict({{"average_tokens", 0}}), "training.average_tokens");
  check_error(predict({{"loss", "chunked"}}), "training.loss");
  check_error(predict({{"compile", "yes"}}), "training.compile");
  check_error(predict({{"packing", 1}}), "training.packing");
  const Json vector_model = Json::parse(R"({"input": {"kind": "vector", "features": 32},
    "layers": [{"type": "dense", "units": 10}, {"type": "cross_entropy"}]})");
  check_error(predict({{"packing", true}}, vector_model), "training.packing");
  check_error(predict({{"average_tokens", 8}}, vector_model), "training.average_tokens");
}

TEST_CASE("chunked loss and compile are echoed and lower a token model's memory", "[tricks][api]") {
  const Json standard = predict({{"batch_size", kBatch}, {"seq_len", kSeq}, {"precision", "bf16"}});
  const Json tricks = predict(
      {{"batch_size", kBatch}, {"seq_len", kSeq}, {"precision", "bf16"}, {"loss", "chunked_ce"}, {"compile", true}});
  REQUIRE(tricks.contains("results"));
  CHECK(tricks["training"]["loss"] == "chunked_ce");
  CHECK(tricks["training"]["compile"] == true);
  CHECK_FALSE(standard["training"].contains("loss"));
  CHECK_FALSE(standard["training"].contains("compile"));
  CHECK(tricks["results"][0]["memory_gb"].get<double>() < standard["results"][0]["memory_gb"].get<double>());
}
