// parallel.accumulate_unsharded (gradient accumulation inside FSDP's no_sync()) and
// training.finetune.frozen_gradients (FSDP1 units mixing trained and frozen weights under use_orig_params):
// exact gradient memory against the formulas of docs/PREDICTION.md, the weight-gradient GEMMs the frozen weights
// add, that neither option ever lowers memory, and bad input.
#include <catch2/catch.hpp>
#include <string>

#include "helpers.hpp"
#include "prenet/api.hpp"

using prenet::Json;

namespace {

// A small Llama: hidden 64, 4 heads of 16 with 2 KV heads (K and V 32 wide), MLP 128, 2 blocks, vocabulary 128,
// untied head.
const char* const kLlama =
    R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
        "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 128, "max_position_embeddings": 32,
        "hidden_act": "silu", "rms_norm_eps": 1e-5, "tie_word_embeddings": false})";

// Its weights, counted by hand: per block Q 64x64, K and V 64x32, O 64x64, gate and up 64x128, down 128x64 and
// two RMSNorm scales of 64; outside the blocks the embedding 128x64, the final norm and the head 64x128.
constexpr double kAttention = 64 * 64 + 2 * 64 * 32 + 64 * 64;
constexpr double kMlp = 2 * 64 * 128 + 128 * 64;
constexpr double kBlock = kAttention + kMlp + 2 * 64;
constexpr double kEmbedding = 128 * 64, kFinalNorm = 64, kHead = 64 * 128;
// LoRA r8 on q_proj and v_proj: A (in x 8) and B (8 x out) each, per block.
constexpr double kLoraPerBlock = 8 * (64 + 64) + 8 * (64 + 32);

Json predict(const std::string& finetune, const std::string& parallel, std::int64_t batch = 8) {
  std::string text = R"({"model": {"hf_config": )" + std::string(kLlama) +
                     R"(}, "hardware": ["h100-sxm"], "options": {"per_layer": true}, "training": {"batch_size": )" +
                     std::to_string(batch) + R"(, "seq_len": 32, "precision": "bf16", "finetune": )" + finetune + "}";
  if (!parallel.empty()) text += R"(, "parallel": )" + parallel;
  return Json::parse(prenet::predict_json(text + "}"));
}

const Json& memory(const Json& r) {
  INFO(r.dump().substr(0, 400));
  REQUIRE(r.contains("results"));
  return r.at("results").at(0).at("memory");
}
double gb(const Json& r, const char* part) { return memory(r).at(part).get<double>(); }
double total(const Json& r) { return r.at("results").at(0).at("memory_gb").get<double>(); }

/// Backward FLOPs of the layer named `name` (per micro-batch).
double backward_flops(const Json& r, const std::string& name) {
  for (const Json& layer : r.at("layers")) {
    if (layer.at("name") == name) return layer.at("flops").at("backward").get<double>();
  }
  FAIL("no layer " << name);
  return 0;
}

void check_error(const Json& r, const std::string& field) {
  INFO(r.dump().substr(0, 400));
  REQUIRE(r.contains("error"));
  CHECK(r["error"]["field"] == field);
}

const std::string kLora = R"({"method": "lora", "rank": 8, "dropout": 0})";
const std::string kLoraFrozenGrads = R"({"method": "lora", "rank": 8, "dropout": 0, "frozen_gradients": true})";

}  // namespace

TEST_CASE("frozen_gradients: every block with an adapter holds 2 bytes of gradient per weight, no states",
          "[nosync][finetune][memory]") {
  const Json plain = predict(kLora, "");
  const Json mixed = predict(kLoraFrozenGrads, "");
  const double lora = 2 * kLoraPerBlock;
  // bf16 mixed precision: 16-bit gradients (2 bytes) for the adapters and, with frozen_gradients, for both blocks'
  // frozen weights; the embedding, final norm and head form a unit with nothing trained and stay without.
  CHECK(gb(plain, "gradients_gb") == Approx(lora * 2 / 1e9).epsilon(1e-9));
  CHECK(gb(mixed, "gradients_gb") == Approx((lora + 2 * kBlock) * 2 / 1e9).epsilon(1e-9));
  // Optimizer states (two FP32 moments) and weights (frozen bf16, adapters bf16 + FP32 master) do not change.
  CHECK(gb(mixed, "optimizer_gb") == Approx(lora * 8 / 1e9).epsilon(1e-9));
  CHECK(gb(mixed, "optimizer_gb") == gb(plain, "optimizer_gb"));
  CHECK(gb(mixed, "weights_gb") == gb(plain, "weights_gb"));
  CHECK(mixed.at("model").at("trainable_parameters") == plain.at("model").at("trainable_parameters"));
}

TEST_CASE("frozen_gradients: the frozen matrices' weight-gradient GEMMs, 2 x tokens x in x out each",
          "[nosync][finetune]") {
  const Json plain = predict(kLora, "");
  const Json mixed = predict(kLoraFrozenGrads, "");
  const double tokens = 8 * 32;
  // Block 1's layers pass their input's gradient down in both runs (block 0 trains below them): the difference is
  // the weight gradients alone. mlp_up is the GLU's gate and up matrices, mlp_down the down matrix.
  CHECK(backward_flops(mixed, "h.1.attn") - backward_flops(plain, "h.1.attn") == Approx(2 * tokens * kAttention));
  CHECK(backward_flops(mixed, "h.1.mlp_up") - backward_flops(plain, "h.1.mlp_up") == Approx(2 * tokens * 2 * 64 * 128));
  CHECK(backward_flops(mixed, "h.1.mlp_down") - backward_flops(plain, "h.1.mlp_down") == Approx(2 * tokens * 128 * 64));
  // The unit outside the blocks trains nothing: the embedding still has no backward, the head no weight gradient.
  CHECK(backward_flops(mixed, "wte") == 0);
  CHECK(backward_flops(mixed, "lm_head") == backward_flops(plain, "lm_head"));
  CHECK(mixed.at("results").at(0).at("step_ms").get<double>() > plain.at("results").at(0).at("step_ms").get<double>());
}

TEST_CASE("frozen_gradients under freeze: the unit outside the blocks mixes the frozen embedding with the head",
          "[nosync][finetune][memory]") {
  const std::string freeze = R"({"method": "freeze", "trainable_layers": 1)";
  const Json plain = predict(freeze + "}", "");
  const Json mixed = predict(freeze + R"(, "frozen_gradients": true})", "");
  // Block 1, the final norm and the head train; block 0 is a unit with nothing trained and stays frozen; the
  // embedding shares the root unit with the final norm and head and gets a gradient.
  const double trained = kBlock + kFinalNorm + kHead;
  CHECK(gb(plain, "gradients_gb") == Approx(trained * 2 / 1e9).epsilon(1e-9));
  CHECK(gb(mixed, "gradients_gb") == Approx((trained + kEmbedding) * 2 / 1e9).epsilon(1e-9));
  CHECK(gb(mixed, "optimizer_gb") == gb(plain, "optimizer_gb"));
  CHECK(backward_flops(plain, "wte") == 0);
  CHECK(backward_flops(mixed, "wte") > 0);  // the embedding's table gradient (zero-fill and scatter-add)
}

TEST_CASE("accumulate_unsharded: ZeRO-3 gradients held whole over the micro-batches", "[nosync][parallel][memory]") {
  // 2 data ranks, 4 micro-batches of 1 (batch 8), FSDP.
  const std::string sharded = R"({"data": 2, "zero_stage": 3, "micro_batches": 4})";
  const std::string unsharded = R"({"data": 2, "zero_stage": 3, "micro_batches": 4, "accumulate_unsharded": true})";
  const double lora = 2 * kLoraPerBlock;
  const Json a = predict(kLora, sharded);
  const Json b = predict(kLora, unsharded);
  CHECK(gb(a, "gradients_gb") == Approx(lora * 2 / 2 / 1e9).epsilon(1e-9));  // ZeRO-3: 1/data of them
  CHECK(gb(b, "gradients_gb") == Approx(lora * 2 / 1e9).epsilon(1e-9));      // no_sync(): all of them
  for (const char* part : {"weights_gb", "optimizer_gb", "activations_gb", "temporary_gb"}) {
    INFO(part);
    CHECK(gb(b, part) == gb(a, part));
  }
  CHECK(b.at("results").at(0).at("parallel").at("accumulate_unsharded") == true);
  // Both options: the 1/data weight shard plus 2 bytes per weight of every adapted block, unsharded (lit-gpt's
  // FSDP LoRA runs, docs/FINETUNE.md).
  const Json both = predict(kLoraFrozenGrads, unsharded);
  CHECK(gb(both, "gradients_gb") == Approx((lora + 2 * kBlock) * 2 / 1e9).epsilon(1e-9));
  const double frozen = 2 * kBlock + kEmbedding + kFinalNorm + kHead;
  CHECK(gb(both, "weights_gb") == Approx((frozen * 2 + lora * (2 + 4)) / 2 / 1e9).epsilon(1e-9));
  // The step reduces the gradients once either way; with frozen gradients they include the frozen weights'.
  const auto data_ms = [](const Json& r) {
    return r.at("results").at(0).at("parallel").at("communication_ms").at("data").get<double>();
  };
  CHECK(data_ms(b) == data_ms(a));
  CHECK(data_ms(both) > data_ms(b));
}

TEST_CASE("accumulate_unsharded under CPU offload: no_sync keeps the gradients on the GPU", "[nosync][offload]") {
  // FSDP's no_sync docstring: "the gradients will not be offloaded to CPU when inside the context manager".
  const auto offloaded = [](const std::string& extra) {
    const std::string text = R"({"model": {"hf_config": )" + std::string(kLlama) +
                             R"(}, "hardware": ["h100-sxm"], "training": {"batch_size": 8, "seq_len": 32,
        "precision": "bf16", "offload": "optimizer_params", "finetune": {"method": "lora", "rank": 8}},
        "parallel": {"data": 2, "fsdp": true, "micro_batches": 4)" +
                             extra + "}}";
    return Json::parse(prenet::predict_json(text));
  };
  CHECK(gb(offloaded(""), "gradients_gb") == 0);
  CHECK(gb(offloaded(R"(, "accumulate_unsharded": true)"), "gradients_gb") ==
        Approx(2 * kLoraPerBlock * 2 / 1e9).epsilon(1e-9));
}

TEST_CASE("accumulate_unsharded and frozen_gradients never lower memory", "[nosync][property]") {
  for (const char* finetune :
       {R"({"method": "lora", "rank": 8})", R"({"method": "lora", "targets": "all-linear"})",
        R"({"method": "freeze", "trainable_layers": 1})", R"({"method": "freeze", "trainable_layers": 0})"}) {
    std::string with = finetune;
    with.insert(with.size() - 1, R"(, "frozen_gradients": true)");
    for (int zero : {2, 3}) {
      for (int data : {1, 2, 4}) {
        for (int micro : {2, 4}) {
          const std::string par = R"({"data": )" + std::to_string(data) + R"(, "zero_stage": )" + std::to_string(zero) +
                                  R"(, "micro_batches": )" + std::to_string(micro);
          const std::int64_t batch = 2 * data * micro;
          INFO(finetune << " zero " << zero << " data " << data << " micro " << micro);
          const Json base = predict(finetune, par + "}", batch);
          const Json acc = predict(finetune, par + R"(, "accumulate_unsharded": true})", batch);
          const Json grads = predict(with, par + "}", batch);
          const Json both = predict(with, par + R"(, "accumulate_unsharded": true})", batch);
          CHECK(total(acc) >= total(base));
          CHECK(total(grads) >= total(base));
          CHECK(total(both) >= total(acc));
          CHECK(total(both) >= total(grads));
        }
      }
    }
    INFO(finetune << " on one GPU");
    CHECK(total(predict(with, "")) >= total(predict(finetune, "")));
  }
}

TEST_CASE("accumulate_unsharded and frozen_gradients: bad settings name the field", "[nosync][errors]") {
  const std::string field = "parallel.accumulate_unsharded";
  check_error(predict(kLora, R"({"data": 2, "zero_stage": 1, "micro_batches": 4, "accumulate_unsharded": true})"),
              field);
  check_error(predict(kLora, R"({"data": 2, "micro_batches": 4, "accumulate_unsharded": true})"), field);
  check_error(predict(kLora, R"({"data": 2, "fsdp": true, "micro_batches": 1, "accumulate_unsharded": true})", 2),
              field);
  check_error(predict(kLora, R"({"data": 2, "fsdp": true, "micro_batches": 4, "accumulate_unsharded": 1})"), field);
  const std::string ft = "training.finetune.frozen_gradients";
  check_error(predict(R"({"method": "full", "frozen_gradients": true})", ""), ft);
  check_error(predict(R"({"method": "qlora", "frozen_gradients": true})", ""), ft);
  check_error(predict(R"({"method": "lora", "base_precision": "int8", "frozen_gradients": true})", ""), ft);
  check_error(predict(R"({"method": "lora", "frozen_gradients": "yes"})", ""), ft);
  // Off, both are accepted anywhere.
  CHECK(predict(R"({"method": "full", "frozen_gradients": false})", "").contains("results"));
  CHECK(predict(kLora, R"({"data": 2, "micro_batches": 4, "accumulate_unsharded": false})").contains("results"));
}
