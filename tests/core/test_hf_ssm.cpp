// Hugging Face state-space configs (mamba, falcon_mamba, mamba2, jamba): the layer lists their builder writes
// (mixer sizes as the transformers classes read them, Jamba's layer pattern), the default sequence length and
// errors naming the field. These need no `mamba` layer kind; the parameter counts are in
// test_hf_ssm_counts.cpp.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/catalog.hpp"
#include "prenet/hf_config.hpp"

using namespace prenet;
using testutil::require_input_error;

namespace {

Json fixture(const std::string& name) {
  std::ifstream in(std::string(PRENET_SOURCE_DIR) + "/tests/fixtures/hf/" + name, std::ios::binary);
  REQUIRE(in.good());
  return Json::parse(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
}

Json layers_of(const Json& config, std::vector<std::string>* warnings = nullptr, std::int64_t seq_len = 0) {
  std::vector<std::string> local;
  return hf_config_to_layers(config, "model.hf_config", seq_len, warnings ? *warnings : local);
}

/// The first layer named `name` in `layers`, looking inside repeats; null when none is.
Json find_layer(const Json& layers, const std::string& name) {
  for (const auto& l : layers) {
    if (l.value("name", "") == name) return l;
    if (l["type"] == "repeat") {
      Json inner = find_layer(l["layers"], name);
      if (!inner.is_null()) return inner;
    }
  }
  return nullptr;
}

bool mentions(const std::vector<std::string>& warnings, const std::string& needle) {
  for (const auto& w : warnings) {
    if (w.find(needle) != std::string::npos) return true;
  }
  return false;
}

/// A small Jamba config (JambaConfig defaults for what it leaves out).
Json small_jamba() {
  return {{"model_type", "jamba"},    {"hidden_size", 64},        {"num_hidden_layers", 8},
          {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"intermediate_size", 128},
          {"vocab_size", 100},        {"attn_layer_period", 4},   {"attn_layer_offset", 2},
          {"expert_layer_period", 2}, {"expert_layer_offset", 1}, {"num_experts", 4},
          {"num_experts_per_tok", 2}, {"mamba_d_state", 8},       {"mamba_d_conv", 4},
          {"mamba_expand", 2},        {"mamba_dt_rank", "auto"}};
}

}  // namespace

TEST_CASE("mamba: state-spaces/mamba-2.8b-hf reads as 64 RMSNorm + MambaMixer blocks, tied head", "[hf_config][ssm]") {
  std::vector<std::string> w;
  Json model = layers_of(fixture("state-spaces--mamba-2.8b-hf.json"), &w);
  const Json& layers = model["layers"];
  Json stack = find_layer(layers, "layers");
  CHECK(stack["count"] == 64);
  Json mixer = find_layer(layers, "mixer");
  CHECK(mixer["type"] == "mamba");
  CHECK(mixer["version"] == 1);
  CHECK(mixer["inner"] == 5120);  // intermediate_size = expand 2 × 2560
  CHECK(mixer["state_size"] == 16);
  CHECK(mixer["conv_kernel"] == 4);
  CHECK(mixer["dt_rank"] == 160);  // time_step_rank as stored (= ceil(2560 / 16))
  CHECK(mixer["bias"] == false);   // use_bias
  CHECK(mixer["conv_bias"] == true);
  CHECK(find_layer(layers, "lm_head")["tied_to"] == "embeddings");  // tie_word_embeddings defaults to true
  CHECK(find_layer(layers, "embeddings")["vocab_size"] == 50280);   // already a multiple of 8
  // No max_position_embeddings: the default length of other decoders, said in a warning.
  CHECK(model["input"]["seq_len"] == 1024);
  CHECK(mentions(w, "no max_position_embeddings"));
}

TEST_CASE("mamba: time_step_rank \"auto\" is ceil(hidden / 16); intermediate_size overrides expand",
          "[hf_config][ssm]") {
  Json cfg = {{"model_type", "mamba"},
              {"hidden_size", 100},
              {"num_hidden_layers", 2},
              {"vocab_size", 10},
              {"time_step_rank", "auto"}};
  Json mixer = find_layer(layers_of(cfg)["layers"], "mixer");
  CHECK(mixer["dt_rank"] == 7);  // ceil(100 / 16)
  CHECK(mixer["inner"] == 200);  // MambaConfig's expand 2
  CHECK(mixer["bias"] == true);  // MambaConfig's use_bias default
  cfg.erase("time_step_rank");
  CHECK(find_layer(layers_of(cfg)["layers"], "mixer")["dt_rank"] == 7);
  cfg["intermediate_size"] = 300;
  std::vector<std::string> w;
  CHECK(find_layer(layers_of(cfg, &w)["layers"], "mixer")["inner"] == 300);
  CHECK(mentions(w, "intermediate_size 300"));
  cfg["time_step_rank"] = "big";
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.time_step_rank", "\"auto\"");
}

TEST_CASE("falcon_mamba: tiiuae/falcon-mamba-7b's intermediate_size wins over its expand 16", "[hf_config][ssm]") {
  std::vector<std::string> w;
  Json layers = layers_of(fixture("tiiuae--falcon-mamba-7b.json"), &w)["layers"];
  Json mixer = find_layer(layers, "mixer");
  CHECK(mixer["inner"] == 8192);
  CHECK(mixer["dt_rank"] == 256);
  CHECK(mixer["bias"] == false);
  CHECK(find_layer(layers, "lm_head").count("tied_to") == 0);  // tie_word_embeddings false
  CHECK(mentions(w, "intermediate_size 8192"));
  CHECK(mentions(w, "weightless RMS norms"));
}

TEST_CASE("mamba2: heads and groups; num_heads × head_dim must be expand × hidden", "[hf_config][ssm]") {
  Json cfg = {{"model_type", "mamba2"}, {"hidden_size", 256}, {"num_hidden_layers", 3}, {"vocab_size", 1000},
              {"num_heads", 8},         {"head_dim", 64},     {"n_groups", 2},          {"state_size", 32}};
  Json layers = layers_of(cfg)["layers"];
  Json mixer = find_layer(layers, "mixer");
  CHECK(mixer["version"] == 2);
  CHECK(mixer["inner"] == 512);
  CHECK(mixer["num_heads"] == 8);
  CHECK(mixer["n_groups"] == 2);
  CHECK(mixer.count("dt_rank") == 0);
  CHECK(find_layer(layers, "lm_head").count("tied_to") == 0);  // Mamba2Config: tie_word_embeddings false
  CHECK(mixer.count("chunk_size") == 0);                        // Mamba2Config: chunk_size 256, the kind's default
  cfg["chunk_size"] = 128;
  CHECK(find_layer(layers_of(cfg)["layers"], "mixer")["chunk_size"] == 128);
  cfg["head_dim"] = 32;
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.num_heads", "must equal expand × hidden_size (512)");
  cfg["head_dim"] = 64;
  cfg["n_groups"] = 3;
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.n_groups", "must divide num_heads (8)");
}

TEST_CASE("ssm configs: bad mixer fields are errors naming the field", "[hf_config][ssm]") {
  Json cfg = {{"model_type", "mamba"}, {"hidden_size", 64}, {"num_hidden_layers", 2}, {"vocab_size", 10}};
  cfg["state_size"] = 0;
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.state_size", "");
  cfg.erase("state_size");
  cfg["conv_kernel"] = 0;
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.conv_kernel", "");
  cfg.erase("conv_kernel");
  cfg["expand"] = 0;
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.expand", "");
  cfg.erase("expand");
  cfg["hidden_act"] = "gelu";
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.hidden_act", "SiLU");
  cfg.erase("hidden_act");
  cfg.erase("hidden_size");
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.hidden_size", "missing");
}

TEST_CASE("jamba: attention and expert layers by period and offset, repeated every smallest period",
          "[hf_config][ssm]") {
  Json model = layers_of(small_jamba());
  const Json& layers = model["layers"];
  Json stack = find_layer(layers, "layers");
  REQUIRE(stack["type"] == "repeat");
  CHECK(stack["count"] == 2);  // lcm(4, 2) = 4 layers per period, 8 layers
  CHECK(find_layer(layers, "last_layers").is_null());
  // Layer 2 of each period attends (2 % 4 == 2), the others are Mamba; odd layers have experts.
  CHECK(find_layer(stack["layers"], "self_attn_2")["num_kv_heads"] == 2);
  CHECK(find_layer(stack["layers"], "self_attn_0").is_null());
  Json mamba = find_layer(stack["layers"], "mamba_0");
  CHECK(mamba["dt_rank"] == 4);  // ceil(64 / 16)
  CHECK(mamba["inner"] == 128);  // mamba_expand × hidden; intermediate_size is the MLP's
  CHECK(mamba["bias"] == false);
  CHECK(find_layer(stack["layers"], "mamba_0_dt_b_c_norms")["shape"] == Json::array({4 + 2 * 8}));
  CHECK(find_layer(stack["layers"], "experts_up_1")["experts"] == 4);
  CHECK(find_layer(stack["layers"], "experts_up_0").is_null());
  CHECK(find_layer(stack["layers"], "mlp_up_0")["gated"] == true);
  CHECK(find_layer(layers, "lm_head").count("tied_to") == 0);
  CHECK(model["input"]["seq_len"] == 1024);  // JambaConfig's 262144 positions capped
  Json cfg = small_jamba();
  cfg["num_key_value_heads"] = nullptr;  // JambaConfig: None means as many as the attention heads
  CHECK(find_layer(layers_of(cfg)["layers"], "self_attn_2")["num_kv_heads"] == 4);
}

TEST_CASE("jamba: layers left over after the last whole period, and a dense model", "[hf_config][ssm]") {
  Json cfg = small_jamba();
  cfg["num_hidden_layers"] = 10;
  Json layers = layers_of(cfg)["layers"];
  CHECK(find_layer(layers, "layers")["count"] == 2);
  Json tail = find_layer(layers, "last_layers");
  REQUIRE(tail.is_object());
  CHECK(tail["count"] == 1);
  CHECK(find_layer(tail["layers"], "mamba_0").is_object());       // layer 8: 8 % 4 = 0
  CHECK(find_layer(tail["layers"], "experts_up_1").is_object());  // layer 9: odd
  cfg["num_experts"] = 1;                                         // every MLP dense; top-k unused
  cfg["attn_layer_period"] = 1;
  cfg["attn_layer_offset"] = 0;
  Json dense = layers_of(cfg)["layers"];
  CHECK(find_layer(dense, "layers")["count"] == 10);
  CHECK(find_layer(dense, "self_attn").is_object());
  CHECK(find_layer(dense, "router").is_null());
}

TEST_CASE("jamba: bad pattern fields are errors naming the field", "[hf_config][ssm]") {
  Json cfg = small_jamba();
  cfg["attn_layer_offset"] = 4;
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.attn_layer_offset",
                      "must be smaller than attn_layer_period (4)");
  cfg = small_jamba();
  cfg["expert_layer_offset"] = 2;
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.expert_layer_offset", "expert_layer_period (2)");
  cfg = small_jamba();
  cfg["attn_layer_period"] = 0;
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.attn_layer_period", "");
  cfg = small_jamba();
  cfg["num_experts_per_tok"] = 5;
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.num_experts_per_tok", "at most num_experts (4)");
  cfg = small_jamba();
  cfg["num_key_value_heads"] = 3;
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.num_key_value_heads", "");
  cfg = small_jamba();
  cfg.erase("num_key_value_heads");  // JambaConfig's default of 8 exceeds the 4 heads
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.num_key_value_heads", "");
  cfg = small_jamba();
  cfg["sliding_window"] = 4096;
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.sliding_window", "not modelled");
  cfg = small_jamba();
  cfg["architectures"] = {"JambaForSequenceClassification"};
  require_input_error([&] { layers_of(cfg); }, "model.hf_config.architectures", "causal-LM head");
}

TEST_CASE("jamba: multi-token prediction is refused, not a copy of the last period of layers",
          "[hf_config][ssm][mtp]") {
  TrainingConfig tr;
  tr.seq_len = 64;
  tr.mtp_layers = 1;
  require_input_error(
      [&] {
        resolve_model({{"hf_config", small_jamba()}}, tr);
      },
      "training.mtp_layers", "repeats a period of 4 layers");
}
