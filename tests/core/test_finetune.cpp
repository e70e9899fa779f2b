// training.finetune: adapter parameter counts against PEFT's LoRA layers, the frozen base's bytes against
// bitsandbytes' formats, what freezing removes from a step, the properties LoRA must keep, and bad input.
#include <catch2/catch.hpp>
#include <string>

#include "helpers.hpp"
#include "model/finetune.hpp"
#include "prenet/api.hpp"

using prenet::Json;

namespace {

// A small Llama: hidden 64, 4 heads of 16 with 2 KV heads (K and V 32 wide), MLP 128, 2 layers, vocabulary 128.
const char* const kLlama =
    R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
        "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 128, "max_position_embeddings": 32,
        "hidden_act": "silu", "rms_norm_eps": 1e-5, "tie_word_embeddings": false})";
// A small GPT-2: n_embd 64, 4 heads, 2 layers, vocabulary 128, 32 positions, tied head.
const char* const kGpt2 =
    R"({"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2, "vocab_size": 128, "n_positions": 32})";

Json predict(const std::string& config, const std::string& training, const std::string& extra = "") {
  const std::string text =
      R"({"model": {"hf_config": )" + config + R"(}, "hardware": ["h100-sxm"], "training": )" + training + extra + "}";
  return Json::parse(prenet::predict_json(text));
}

std::int64_t trainable(const Json& response) { return response.at("model").at("trainable_parameters"); }

double memory_total(const Json& r) { return r.at("results").at(0).at("memory_gb").get<double>(); }
double step(const Json& r) { return r.at("results").at(0).at("step_ms").get<double>(); }

void check_error(const Json& r, const std::string& field) {
  INFO(r.dump());
  REQUIRE(r.contains("error"));
  CHECK(r["error"]["field"] == field);
}

}  // namespace

TEST_CASE("LoRA adapter parameters per target on a Llama-style model, as PEFT builds them", "[finetune]") {
  // PEFT's lora.Linear adds A (in x r) and B (r x out), no bias, on each targeted nn.Linear.
  const std::int64_t r = 8;
  const std::int64_t q = 64 + 64, k = 64 + 32, v = 64 + 32, o = 64 + 64, gate = 64 + 128, up = 64 + 128,
                     down = 128 + 64;
  auto count = [](const std::string& targets) {
    return trainable(predict(kLlama, R"({"batch_size": 1, "precision": "bf16", "finetune": {"method": "lora", "rank": 8,
        "targets": )" + targets + "}}"));
  };
  CHECK(count(R"(["q_proj", "v_proj"])") == 2 * r * (q + v));
  CHECK(count(R"(["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])") ==
        2 * r * (q + k + v + o + gate + up + down));
  CHECK(count(R"("all-linear")") == 2 * r * (q + k + v + o + gate + up + down));  // the head left out, as PEFT does
  CHECK(count(R"(["lm_head"])") == r * (64 + 128));
  CHECK(count(R"(["down_proj"])") == 2 * r * down);
}

TEST_CASE("LoRA on a GPT-2-style model: c_attn is one fused adapter, c_proj both projections", "[finetune]") {
  const std::int64_t r = 4;
  auto count = [](const std::string& targets) {
    return trainable(
        predict(kGpt2, R"({"batch_size": 1, "finetune": {"method": "lora", "rank": 4, "targets": )" + targets + "}}"));
  };
  CHECK(count(R"(["c_attn"])") == 2 * r * (64 + 3 * 64));             // Conv1D 64 -> 192
  CHECK(count(R"(["c_proj"])") == 2 * r * ((64 + 64) + (256 + 64)));  // attn.c_proj and mlp.c_proj
  CHECK(count(R"(["c_fc"])") == 2 * r * (64 + 256));
  // all-linear adapts Q, K and V apart (the core's attention does not know they share one matrix); PEFT on
  // GPT-2 would put one adapter on c_attn, which naming c_attn gives.
  CHECK(count(R"("all-linear")") == 2 * r * (3 * (64 + 64) + (64 + 64) + (64 + 256) + (256 + 64)));
}

TEST_CASE("NF4 and int8 bases weigh what bitsandbytes stores", "[finetune][memory]") {
  // NF4 (QLoRA, Dettmers et al. 2023): 4 bits, an 8-bit absmax per block of 64, an FP32 scale per 256 blocks.
  CHECK(prenet::quantized_weight_bytes(prenet::BasePrecision::NF4, 64) == Approx(0.5 + 8.0 / 8 / 64 + 4.0 / 64 / 256));
  // LLM.int8: one byte per weight and an FP32 scale per output row of `in` weights.
  CHECK(prenet::quantized_weight_bytes(prenet::BasePrecision::INT8, 4096) == Approx(1 + 4.0 / 4096));

  const Json r = predict(kLlama, R"({"batch_size": 1, "precision": "bf16", "finetune": {"method": "qlora", "rank": 8,
      "targets": "all-linear"}})");
  const double matrices = 2 * (64.0 * 64 + 64 * 32 + 64 * 32 + 64 * 64 + 64 * 128 * 2 + 128 * 64);
  const double plain = 128 * 64 * 2 + 64 * 5;  // embedding, head, 5 RMSNorm weights: bf16
  const std::int64_t adapter_count = 2 * 8 * (128 + 96 + 96 + 128 + 192 + 192 + 192);
  REQUIRE(trainable(r) == adapter_count);
  const double adapters = static_cast<double>(adapter_count);
  const Json& m = r["results"][0]["memory"];
  // Adapters train as mixed-precision Adam: 16-bit copy + FP32 master, 16-bit gradient, two FP32 states.
  const double nf4 = prenet::quantized_weight_bytes(prenet::BasePrecision::NF4, 64);
  CHECK(m["weights_gb"].get<double>() == Approx((matrices * nf4 + plain * 2 + adapters * 6) / 1e9).epsilon(1e-5));
  CHECK(m["gradients_gb"].get<double>() == Approx(adapters * 2 / 1e9).epsilon(1e-5));
  CHECK(m["optimizer_gb"].get<double>() == Approx(adapters * 8 / 1e9).epsilon(1e-5));
}

TEST_CASE("freezing the bottom blocks removes their backward and their states", "[finetune]") {
  const std::string training = R"({"batch_size": 2, "precision": "bf16", "finetune": {"method": "freeze",
      "trainable_layers": 1}})";
  const Json frozen = predict(kLlama, training, R"(, "options": {"per_layer": true})");
  INFO(frozen.dump().substr(0, 400));
  REQUIRE(frozen.contains("layers"));
  // One of two blocks, the final norm and the head train: block 1's attention, MLP and norms.
  const std::int64_t block = (64 * 64 + 64 * 32 * 2 + 64 * 64) + (64 * 128 * 2 + 128 * 64) + 2 * 64;
  CHECK(trainable(frozen) == block + 64 + 64 * 128);
  for (const Json& layer : frozen["layers"]) {
    const std::string name = layer["name"];
    const double backward = layer["flops"]["backward"];
    if (name.rfind("h.0.", 0) == 0 || name == "wte" || name == "stream") {
      INFO(name);
      CHECK(backward == 0);
    }
  }
  const Json full = predict(kLlama, R"({"batch_size": 2, "precision": "bf16"})");
  CHECK(frozen["model"]["flops_per_step"]["backward"].get<double>() <
        full["model"]["flops_per_step"]["backward"].get<double>());
}

TEST_CASE("LoRA never predicts more memory or time than the full fine-tune; rank up never less",
          "[finetune][property]") {
  // Memory from a billion parameters on, time from seven billion: below that, at thousands of tokens a
  // step, LoRA's extra launches and memory-bound passes (dropout copies, the thin GEMMs re-reading each
  // input, the scaled add) can cost more than the weight gradients and optimizer step it saves: Qwen3-1.7B,
  // all-linear r16, 8 x 1024 tokens, H100, bf16: 191.8 ms against 188.7 (PREDICTION.md, "Fine-tuning").
  struct Case {
    const char* preset;
    bool time;
  };
  for (const Case c : {Case{"llama-3.2-1b", false}, Case{"qwen3-1.7b", false}, Case{"gpt2-xl", false},
                       Case{"qwen3-8b", true}, Case{"mistral-7b", true}}) {
    for (const char* precision : {"fp32", "bf16"}) {
      for (int batch : {1, 4, 8}) {
        const std::string base = std::string(R"({"batch_size": )") + std::to_string(batch) +
                                 R"(, "seq_len": 1024, "attention": "flash", "precision": ")" + precision + "\"";
        auto run = [&](const std::string& finetune) {
          const std::string text = std::string(R"({"model": {"preset": ")") + c.preset +
                                   R"("}, "hardware": ["h100-sxm"], "options": {"per_layer": false}, "training": )" +
                                   base + finetune + "}}";
          return Json::parse(prenet::predict_json(text));
        };
        const Json full = run("");
        REQUIRE_FALSE(full.contains("error"));
        double last_memory = 0, last_step = 0;
        // Ranks people use; at r 256 on GPT-2 XL (a quarter of its weights as adapters, each with its own
        // dropped-out input) LoRA's FP32 activations can outweigh the states it saves.
        for (int rank : {1, 8, 64}) {
          const Json lora =
              run(R"(, "finetune": {"method": "lora", "targets": "all-linear", "rank": )" + std::to_string(rank) + "}");
          INFO(c.preset << " " << precision << " batch " << batch << " rank " << rank);
          REQUIRE_FALSE(lora.contains("error"));
          CHECK(memory_total(lora) <= memory_total(full));
          if (c.time) CHECK(step(lora) <= step(full));
          CHECK(memory_total(lora) >= last_memory);
          CHECK(step(lora) >= last_step);
          last_memory = memory_total(lora);
          last_step = step(lora);
        }
      }
    }
  }
}

TEST_CASE("bad fine-tune settings get errors naming the field", "[finetune][errors]") {
  auto with = [](const std::string& finetune, const std::string& precision = "bf16") {
    return predict(kLlama, R"({"precision": ")" + precision + R"(", "finetune": )" + finetune + "}");
  };
  check_error(with(R"({"method": "lora", "rank": 0})"), "training.finetune.rank");
  check_error(with(R"({"method": "lora", "rank": 100})"), "training.finetune.rank");  // wider than k_proj's 32
  check_error(with(R"({"method": "lora", "alpha": 0})"), "training.finetune.alpha");
  check_error(with(R"({"method": "lora", "alpha": -1})"), "training.finetune.alpha");
  check_error(with(R"({"method": "qlora", "base_precision": "bf16"})"), "training.finetune.base_precision");
  check_error(with(R"({"method": "lora", "targets": ["query_key"]})"), "training.finetune.targets");
  check_error(with(R"({"method": "lora", "targets": ["q_proj", "nope"]})"), "training.finetune.targets[1]");
  check_error(with(R"({"method": "lora", "targets": []})"), "training.finetune.targets");
  check_error(with(R"({"method": "freeze", "trainable_layers": 3})"), "training.finetune.trainable_layers");
  check_error(with(R"({"method": "freeze"})"), "training.finetune.trainable_layers");
  check_error(with(R"({"method": "lora", "trainable_layers": 1})"), "training.finetune.trainable_layers");
  check_error(with(R"({"method": "full", "base_precision": "nf4"})"), "training.finetune.base_precision");
  check_error(with(R"({"method": "lora", "base_precision": "bf16"})", "fp32"), "training.finetune.base_precision");
  check_error(with(R"({"method": "dora"})"), "training.finetune.method");
  check_error(with(R"({"method": "lora", "dropout": 1})"), "training.finetune.dropout");
  check_error(with(R"("lora")"), "training.finetune");
  const Json tp = predict(kLlama, R"({"batch_size": 4, "precision": "bf16", "finetune": {"method": "lora"}})",
                          R"(, "parallel": {"tensor": 2})");
  check_error(tp, "parallel.tensor");
}

TEST_CASE("LoRA under torch.compile: the scaling fuses into the add, two passes over the output fewer",
          "[finetune][compile]") {
  // LoRA on down_proj (128 -> 64) only; 2 samples of 32 positions in bf16: y = 64 rows x 64 outputs per layer.
  auto forward_bytes = [](bool compiled) {
    const std::string training = std::string(R"({"batch_size": 2, "seq_len": 32, "precision": "bf16", "compile": )") +
                                 (compiled ? "true" : "false") +
                                 R"(, "finetune": {"method": "lora", "rank": 8, "targets": ["down_proj"]}})";
    const Json r = predict(kLlama, training);
    INFO(r.dump().substr(0, 400));
    double total = 0;
    int layers = 0;
    for (const Json& layer : r.at("layers")) {
      const std::string name = layer.at("name");
      if (name.size() < 8 || name.compare(name.size() - 8, 8, "mlp_down") != 0) continue;  // down_proj's layer
      total += layer.at("bytes").at("forward").get<double>();
      ++layers;
    }
    CHECK(layers == 2);
    return total;
  };
  const double y = 2.0 * 32 * 64, e = 2;
  CHECK(forward_bytes(false) - forward_bytes(true) == Approx(2 * (2 * y * e)));
}

TEST_CASE("LoRA on a Mamba mixer's matrices that transformers' fused kernels read directly is said in a warning",
          "[finetune][mamba]") {
  // A small Falcon-H1 (Mamba-2 beside attention): mamba_split_conv1d_scan_combined takes out_proj.weight itself.
  const std::string falcon =
      R"({"model_type": "falcon_h1", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
          "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 128,
          "max_position_embeddings": 32, "mamba_d_ssm": 128, "mamba_n_heads": 8, "mamba_d_state": 16})";
  auto warned_about = [&](const std::string& targets, const std::string& role) {
    const Json r = predict(falcon, R"({"batch_size": 1, "seq_len": 32, "precision": "bf16",
        "finetune": {"method": "lora", "rank": 4, "targets": )" +
                                       targets + "}}");
    INFO(r.dump());
    int hits = 0;
    for (const auto& w : r.at("warnings")) {
      const std::string text = w.get<std::string>();
      if (text.find("adapters on " + role + " ") != std::string::npos) ++hits;
    }
    return hits;
  };
  CHECK(warned_about(R"("all-linear")", "out_proj") == 1);  // once, not once per layer
  CHECK(warned_about(R"(["out_proj"])", "out_proj") == 1);
  CHECK(warned_about(R"(["in_proj", "q_proj"])", "out_proj") == 0);
  CHECK(warned_about(R"(["in_proj", "q_proj"])", "in_proj") == 0);  // in_proj is called as a module
  // Mamba-1: the scan takes dt_proj.weight (MambaMixer's mamba_inner_fn, Jamba's selective_scan_fn).
  const Json mamba = predict(R"({"model_type": "mamba", "hidden_size": 64, "num_hidden_layers": 2,
      "vocab_size": 128, "state_size": 16})",
                             R"({"batch_size": 1, "seq_len": 32, "precision": "bf16",
      "finetune": {"method": "lora", "rank": 4, "targets": "all-linear"}})");
  CHECK(mamba.at("warnings").dump().find("adapters on dt_proj ") != std::string::npos);
}
