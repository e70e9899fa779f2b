// Hugging Face configs whose model_type is not in the table (made-up types, so that no row added later can
// answer them): read generically only where their fields decide the architecture, with the fields named in a
// warning and in model.reading; refused, naming the model_type and the field, otherwise. Also the config's own
// dtype as the training precision and the config's positions as the default sequence length.
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/layer_list.hpp"

using namespace prenet;

namespace {

/// A Llama-style config under a made-up model_type: silu, intermediate_size, rms_norm_eps, rope_theta, GQA.
Json llama_style() {
  return {{"model_type", "zebra_lm"}, {"hidden_size", 256},
          {"num_hidden_layers", 2},   {"num_attention_heads", 8},
          {"num_key_value_heads", 2}, {"intermediate_size", 512},
          {"vocab_size", 1000},       {"max_position_embeddings", 128},
          {"hidden_act", "silu"},     {"rms_norm_eps", 1e-6},
          {"rope_theta", 10000.0},    {"tie_word_embeddings", false},
          {"use_cache", true},        {"bos_token_id", 1}};
}

/// A GPT-2-style config under a made-up model_type.
Json gpt2_style() {
  return {{"model_type", "otter_gpt"},
          {"n_embd", 64},
          {"n_head", 4},
          {"n_layer", 3},
          {"n_positions", 256},
          {"vocab_size", 500},
          {"layer_norm_epsilon", 1e-5},
          {"activation_function", "gelu_new"}};
}

// LlamaForCausalLM (modeling_llama.py): embed_tokens V*h; per layer input_layernorm h, q_proj h*(H*d),
// k_proj and v_proj h*(KV*d), o_proj (H*d)*h (biases when attention_bias: H*d + 2*KV*d + h), post_attention_layernorm
// h, gate_proj and up_proj h*I, down_proj I*h (biases when mlp_bias: 2I + h); final norm h; lm_head h*V unless tied.
std::int64_t llama_parameters(std::int64_t h, std::int64_t layers, std::int64_t heads, std::int64_t kv,
                              std::int64_t inner, std::int64_t vocab, bool tied, bool attention_bias) {
  const std::int64_t d = h / heads;
  std::int64_t attention = h * (heads * d) + 2 * h * (kv * d) + (heads * d) * h;
  if (attention_bias) attention += heads * d + 2 * kv * d + h;
  const std::int64_t block = h + attention + h + 3 * h * inner;
  return vocab * h + layers * block + h + (tied ? 0 : h * vocab);
}

/// Expands a config and parses the layer list, as the API does.
Network from_config(const Json& config, std::int64_t seq_len, std::vector<std::string>& warnings) {
  Json model = hf_config_to_layers(config, "model.hf_config", seq_len, warnings);
  return parse_layer_list(model, "model.hf_config", {});
}

/// Sends {"model": {"hf_config": config}} with `training`; returns the response.
Json predict_config(const Json& config, const Json& training = Json::object()) {
  Json request = {
      {"model", {{"hf_config", config}}}, {"hardware", {"a100-sxm4-80gb"}}, {"options", {{"per_layer", false}}}};
  if (!training.empty()) request["training"] = training;
  return Json::parse(predict_json(request.dump()));
}

/// Requires that `response` is an error on `field` whose message holds each of `needles`.
void require_error(const Json& response, const std::string& field, const std::vector<std::string>& needles) {
  INFO(response.dump().substr(0, 1200));
  REQUIRE(response.contains("error"));
  CHECK(response["error"]["field"] == field);
  std::string message = response["error"]["message"].get<std::string>();
  CHECK_THAT(message, Catch::StartsWith(field + ": "));
  for (const auto& needle : needles) CHECK_THAT(message, Catch::Contains(needle));
}

}  // namespace

TEST_CASE("an unknown Llama-style model_type is read generically, naming the fields it relied on", "[hf_generic]") {
  const std::int64_t expected = llama_parameters(256, 2, 8, 2, 512, 1000, false, false);
  CHECK(expected ==
        1000 * 256 + 2 * (256 + 256 * 256 + 2 * 256 * 64 + 256 * 256 + 256 + 3 * 256 * 512) + 256 + 256 * 1000);
  std::vector<std::string> warnings;
  Network net = from_config(llama_style(), 64, warnings);
  CHECK(net.parameters() == expected);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] ==
        "model_type \"zebra_lm\" is not in the table; read generically from hidden_act=silu, intermediate_size, "
        "rms_norm_eps, rope_theta, num_key_value_heads and tie_word_embeddings (a Llama-style decoder: gated MLP, "
        "RMSNorm, rotary positions; no attention_bias or mlp_bias: no biases)");
  CHECK(net.name == "zebra_lm");

  Json response = predict_config(llama_style(), {{"seq_len", 64}});
  INFO(response.dump().substr(0, 800));
  REQUIRE_FALSE(response.contains("error"));
  CHECK(response["model"]["parameters"] == expected);
  CHECK(response["model"]["reading"] == Json({{"kind", "generic"},
                                              {"model_type", "zebra_lm"},
                                              {"style", "llama"},
                                              {"relied_on",
                                               {"hidden_act", "intermediate_size", "rms_norm_eps", "rope_theta",
                                                "num_key_value_heads", "tie_word_embeddings"}}}));
  REQUIRE(response["warnings"].size() == 1);
  CHECK_THAT(response["warnings"][0].get<std::string>(), Catch::StartsWith("model_type \"zebra_lm\" is not in"));
}

TEST_CASE("the generic Llama-style reading follows the config's own switches and says what it assumed",
          "[hf_generic]") {
  std::vector<std::string> warnings;
  // tie_word_embeddings absent: save_pretrained omits it when it equals PretrainedConfig's default (true).
  Json tied = llama_style();
  tied.erase("tie_word_embeddings");
  CHECK(from_config(tied, 64, warnings).parameters() == llama_parameters(256, 2, 8, 2, 512, 1000, true, false));
  CHECK_THAT(warnings.at(0), Catch::Contains("no tie_word_embeddings: tied (PretrainedConfig's default)"));

  Json biased = llama_style();
  biased["attention_bias"] = true;
  warnings.clear();
  CHECK(from_config(biased, 64, warnings).parameters() == llama_parameters(256, 2, 8, 2, 512, 1000, false, true));
  CHECK_THAT(warnings.at(0), Catch::Contains("attention_bias"));

  // MHA when num_key_value_heads is absent; head_dim decides the projections' width.
  Json mha = llama_style();
  mha.erase("num_key_value_heads");
  warnings.clear();
  CHECK(from_config(mha, 64, warnings).parameters() == llama_parameters(256, 2, 8, 8, 512, 1000, false, false));
  CHECK_THAT(warnings.at(0), Catch::Contains("no num_key_value_heads: one KV head per head"));

  // gelu with intermediate_size and rms_norm_eps: a gated MLP too (GeGLU).
  Json geglu = llama_style();
  geglu["hidden_act"] = "gelu_pytorch_tanh";
  warnings.clear();
  CHECK(from_config(geglu, 64, warnings).parameters() == llama_parameters(256, 2, 8, 2, 512, 1000, false, false));
  CHECK_THAT(warnings.at(0), Catch::Contains("hidden_act=gelu_pytorch_tanh"));
}

TEST_CASE("an unknown GPT-2-style model_type is read generically", "[hf_generic]") {
  // GPT2LMHeadModel: wte V*h, wpe P*h; per block ln_1 2h, c_attn h*3h + 3h, c_proj h*h + h, ln_2 2h,
  // mlp h*4h + 4h and 4h*h + h; ln_f 2h; lm_head tied.
  const std::int64_t h = 64, V = 500, P = 256, L = 3;
  const std::int64_t expected =
      V * h + P * h + L * (2 * h + 3 * h * h + 3 * h + h * h + h + 2 * h + 8 * h * h + 4 * h + h) + 2 * h;
  std::vector<std::string> warnings;
  CHECK(from_config(gpt2_style(), 64, warnings).parameters() == expected);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::StartsWith("model_type \"otter_gpt\" is not in the table; read generically from "
                                            "n_embd, n_head, n_layer, layer_norm_epsilon, n_positions and "
                                            "activation_function (a GPT-2-style decoder"));
  Json response = predict_config(gpt2_style());
  REQUIRE_FALSE(response.contains("error"));
  CHECK(response["model"]["reading"]["style"] == "gpt2");
  CHECK(response["model"]["reading"]["kind"] == "generic");

  // GPT-2's spellings without any model_type: still a generic reading, said so, and named gpt2.
  Json bare = gpt2_style();
  bare.erase("model_type");
  warnings.clear();
  Network net = from_config(bare, 64, warnings);
  CHECK(net.parameters() == expected);
  CHECK(net.name == "gpt2");
  CHECK_THAT(warnings.at(0), Catch::StartsWith("model_type (none) is not in the table; read generically"));
}

TEST_CASE("an unknown model_type with a field the generic reader does not read is refused", "[hf_generic]") {
  const std::vector<std::pair<std::string, Json>> cases = {
      {"num_local_experts", 8},
      {"num_experts", 64},
      {"n_routed_experts", 256},
      {"num_experts_per_tok", 2},
      {"q_lora_rank", 1536},
      {"kv_lora_rank", 512},
      {"layer_types", Json::array({"full_attention", "sliding_attention"})},
      {"sliding_window_pattern", 6},
      {"text_config", {{"hidden_size", 64}}},
      {"vision_config", {{"hidden_size", 64}}},
      {"state_size", 16},
      {"rotary_dim", 64},
      {"num_kv_heads", 2},
      {"qk_layernorm", true},
      {"attn_logit_softcapping", 50.0},
      {"sliding_window", 4096},
      // Prefixed families of fields: Falcon-H1's Mamba-2 mixers beside attention, NemotronH's SSM sizes.
      {"mamba_d_ssm", 3072},
      {"mamba_n_heads", 24},
      {"ssm_state_size", 128},
  };
  for (const auto& [field, value] : cases) {
    INFO(field);
    Json cfg = llama_style();
    cfg[field] = value;
    require_error(predict_config(cfg), "model.hf_config." + field,
                  {"model_type \"zebra_lm\" is not in the table", "the generic reader does not read " + field,
                   "supported model_types: ", "gpt2", "llama", "mixtral"});
    Json gpt = gpt2_style();
    gpt[field] = value;
    require_error(predict_config(gpt), "model.hf_config." + field, {"\"otter_gpt\"", field});
  }
  // A sliding window switched off (Qwen's use_sliding_window) or absent changes nothing.
  Json window = llama_style();
  window["sliding_window"] = 4096;
  window["use_sliding_window"] = false;
  CHECK_FALSE(predict_config(window).contains("error"));
  window["sliding_window"] = nullptr;
  window.erase("use_sliding_window");
  CHECK_FALSE(predict_config(window).contains("error"));
  // A switch refuses only when on.
  Json encdec = llama_style();
  encdec["is_encoder_decoder"] = false;
  CHECK_FALSE(predict_config(encdec).contains("error"));
  encdec["is_encoder_decoder"] = true;
  require_error(predict_config(encdec), "model.hf_config.is_encoder_decoder", {"an encoder-decoder"});
}

TEST_CASE("an unknown model_type whose fields decide no architecture is refused, naming what is missing",
          "[hf_generic]") {
  // The old fallback read this as GPT-2 (learned positions, ungated MLP): silu alone decides nothing.
  Json cfg = {{"model_type", "mystery"},  {"hidden_size", 256},       {"num_hidden_layers", 2},
              {"num_attention_heads", 8}, {"num_key_value_heads", 2}, {"intermediate_size", 512},
              {"vocab_size", 1000},       {"hidden_act", "silu"}};
  require_error(predict_config(cfg), "model.hf_config.model_type",
                {"model_type \"mystery\" is not in the table, and its fields do not decide the architecture",
                 "lacking rms_norm_eps and rope_theta",
                 "lacking n_embd, n_head, n_layer, layer_norm_epsilon and "
                 "n_positions",
                 "supported model_types: ", "bert"});
  // GPT-2 spellings with RMSNorm contradict a GPT-2-style reading.
  Json mixed = gpt2_style();
  mixed["rms_norm_eps"] = 1e-6;
  require_error(predict_config(mixed), "model.hf_config.model_type",
                {"(a GPT-2-style decoder; it has rms_norm_eps, which GPT-2 has not)"});
  // Every refusal of a made-up type lists only types that exist, sorted.
  Json response = predict_config(cfg);
  std::string message = response["error"]["message"].get<std::string>();
  const std::string lead = "supported model_types: ";
  REQUIRE(message.find(lead) != std::string::npos);
  std::vector<std::string> listed;
  std::string list = message.substr(message.find(lead) + lead.size());
  std::istringstream items(list.substr(0, list.find(" (")));
  for (std::string item; std::getline(items, item, ',');) listed.push_back(item.substr(item.front() == ' ' ? 1 : 0));
  CHECK(std::is_sorted(listed.begin(), listed.end()));
  std::set<std::string> catalogued;
  std::size_t rows = 0;
  const Json catalogue = Json::parse(prenet::catalog_json());
  for (const auto& t : catalogue["hf_model_types"]) {
    catalogued.insert(t["model_type"].get<std::string>());
    for (const auto& alias : t["aliases"]) catalogued.insert(alias.get<std::string>());
    ++rows;
  }
  for (const auto& type : listed) {
    INFO(type);
    CHECK(catalogued.count(type) == 1);
  }
  CHECK(listed.size() >= rows);
}

TEST_CASE("a table model_type's reading is said as such", "[hf_generic]") {
  Json llama = llama_style();
  llama["model_type"] = "llama";
  Json response = predict_config(llama, {{"seq_len", 64}});
  REQUIRE_FALSE(response.contains("error"));
  CHECK(response["model"]["reading"] == Json({{"kind", "table"}, {"model_type", "llama"}}));
  CHECK(response["warnings"].empty());
  CHECK(response["model"]["parameters"] == llama_parameters(256, 2, 8, 2, 512, 1000, false, false));
  // Presets and layer lists carry no reading.
  Json preset = Json::parse(predict_json(R"({"model": {"preset": "gpt2"}, "options": {"per_layer": false}})"));
  CHECK_FALSE(preset["model"].contains("reading"));
}

TEST_CASE("the config's dtype is the training precision unless the request sets one", "[hf_generic]") {
  Json llama = llama_style();
  llama["model_type"] = "llama";
  llama["torch_dtype"] = "bfloat16";
  Json response = predict_config(llama, {{"seq_len", 64}});
  CHECK(response["training"]["precision"] == "bf16");
  CHECK(response["training"]["precision_from"] == "model.hf_config.torch_dtype");

  response = predict_config(llama, {{"seq_len", 64}, {"precision", "fp32"}});
  CHECK(response["training"]["precision"] == "fp32");
  CHECK_FALSE(response["training"].contains("precision_from"));

  // transformers 5 spells it dtype, and wins over a leftover torch_dtype.
  llama["dtype"] = "float16";
  response = predict_config(llama, {{"seq_len", 64}});
  CHECK(response["training"]["precision"] == "fp16");
  CHECK(response["training"]["precision_from"] == "model.hf_config.dtype");
  llama.erase("dtype");

  // An accelerator without the config's precision: the error says where the precision came from.
  Json v100 = {{"model", {{"hf_config", llama}}}, {"hardware", {"v100-sxm2-32gb"}}, {"training", {{"seq_len", 64}}}};
  response = Json::parse(predict_json(v100.dump()));
  require_error(
      response, "training.precision",
      {"bf16 is not supported by", "(the precision is model.hf_config.torch_dtype's; set training.precision"});

  llama["torch_dtype"] = "float32";
  CHECK(predict_config(llama, {{"seq_len", 64}})["training"]["precision"] == "fp32");

  // A dtype that is no training precision leaves the request's (fp32 by default), with a note.
  llama["torch_dtype"] = "float64";
  response = predict_config(llama, {{"seq_len", 64}});
  CHECK(response["training"]["precision"] == "fp32");
  CHECK_FALSE(response["training"].contains("precision_from"));
  REQUIRE(response["warnings"].size() == 1);
  CHECK_THAT(response["warnings"][0].get<std::string>(),
             Catch::StartsWith("model.hf_config.torch_dtype \"float64\" names no training precision"));
  llama["torch_dtype"] = "auto";
  CHECK(predict_config(llama, {{"seq_len", 64}})["warnings"].empty());
}

TEST_CASE("the default sequence length comes from the config's positions, capped, and says so", "[hf_generic]") {
  Json llama = llama_style();
  llama["model_type"] = "llama";
  llama["max_position_embeddings"] = 131072;
  Json response = predict_config(llama);
  CHECK(response["training"]["seq_len"] == 4096);
  CHECK(response["training"]["seq_len_from"] ==
        "model.hf_config.max_position_embeddings (131072), capped at 4096 (the default: 4096 for rotary decoders "
        "trained on 4096 positions or more, else 1024)");

  llama["max_position_embeddings"] = 4096;
  response = predict_config(llama);
  CHECK(response["training"]["seq_len"] == 4096);
  CHECK(response["training"]["seq_len_from"] == "model.hf_config.max_position_embeddings (4096)");

  llama["max_position_embeddings"] = 2048;  // below 4096: the cap of 1024
  response = predict_config(llama);
  CHECK(response["training"]["seq_len"] == 1024);
  CHECK_THAT(response["training"]["seq_len_from"].get<std::string>(), Catch::Contains("capped at 1024"));

  // Learned positions (GPT-2 style) stay capped at 1024.
  Json gpt = gpt2_style();
  gpt["n_positions"] = 8192;
  response = predict_config(gpt);
  CHECK(response["training"]["seq_len"] == 1024);
  CHECK_THAT(response["training"]["seq_len_from"].get<std::string>(),
             Catch::StartsWith("model.hf_config.n_positions (8192), capped at 1024"));

  // The request's length wins and needs no explanation.
  response = predict_config(llama, {{"seq_len", 300}});
  CHECK(response["training"]["seq_len"] == 300);
  CHECK_FALSE(response["training"].contains("seq_len_from"));
}
