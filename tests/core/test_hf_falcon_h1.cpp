// Hugging Face falcon_h1 configs (FalconH1ForCausalLM: TII's Falcon-H1, 0.5B to 34B): the parameter count against a
// formula written here from the modules' __init__ in transformers' src/transformers/models/falcon_h1/
// modular_falcon_h1.py (FalconH1Mixer, FalconH1Attention = LlamaAttention, FalconH1MLP = LlamaMLP, the two RMSNorms of
// FalconH1DecoderLayer, final_layernorm, lm_head), the layer's parallel mixer and attention, and errors naming the
// field.
//
// No whole config.json of a Falcon-H1 release was found for tests/fixtures/hf. The architecture fields below are
// those NVIDIA's Megatron-Bridge states it took from each release's config.json (src/megatron/bridge/models/
// falcon_h1/falconh1_provider.py, FalconH1ModelProvider500M / 1P5BDeep / 7B / 34B, find_string file id 19593126496;
// the 0.5B's also as a config dict in tests/unit_tests/models/falcon_h1/test_falcon_h1_bridge.py, which leaves out
// mamba_d_ssm: 24 heads × 64 = 1536 here), written in the Hugging Face spelling.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "hf_fixtures.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/layer_list.hpp"

using namespace prenet;
using testutil::require_input_error;

namespace {

using I64 = std::int64_t;
using testutil::config_int;

/// FalconH1ForCausalLM's parameters from the config's numbers (FalconH1Config's defaults where absent).
I64 falcon_h1_formula(const Json& c) {
  const I64 h = config_int(c, "hidden_size", 4096), V = config_int(c, "vocab_size", 128000),
            L = config_int(c, "num_hidden_layers", 32);
  // FalconH1Mixer: I = mamba_d_ssm; conv over I + 2 G N channels; in_proj h -> I + conv + heads (mamba_proj_bias);
  // dt_bias, A_log, D per head; the gated RMSNorm over I only with mamba_rms_norm; out_proj I -> h (projectors_bias).
  const I64 I = config_int(c, "mamba_d_ssm", 1024), heads = config_int(c, "mamba_n_heads", 128);
  const I64 conv = I + 2 * config_int(c, "mamba_n_groups", 1) * config_int(c, "mamba_d_state", 256),
            K = config_int(c, "mamba_d_conv", 4);
  const bool proj_bias = c.value("mamba_proj_bias", false), out_bias = c.value("projectors_bias", false);
  const I64 mamba = (h + (proj_bias ? 1 : 0)) * (I + conv + heads) + conv * K +
                    (c.value("mamba_conv_bias", true) ? conv : 0) + 3 * heads +
                    (c.value("mamba_rms_norm", false) ? I : 0) + I * h + (out_bias ? h : 0);
  // LlamaAttention: q, k, v, o of head_dim (getattr(config, "head_dim") or hidden / heads), biases per
  // attention_bias.
  const I64 H = config_int(c, "num_attention_heads", 32), kv = config_int(c, "num_key_value_heads", 8),
            d = config_int(c, "head_dim", h / H);
  const I64 attention =
      2 * h * H * d + 2 * h * kv * d + (c.value("attention_bias", false) ? H * d + 2 * kv * d + h : 0);
  // LlamaMLP: gate, up (h -> F) and down (F -> h), biases per mlp_bias.
  const I64 F = config_int(c, "intermediate_size", 14336);
  const I64 mlp = 3 * h * F + (c.value("mlp_bias", false) ? 2 * F + h : 0);
  const bool tied = c.value("tie_word_embeddings", false);
  return V * h + (tied ? 0 : V * h) + h + L * (2 * h + mamba + attention + mlp);
}

/// tiiuae/Falcon-H1-7B-Instruct's architecture fields (see the header).
Json falcon_h1_7b() {
  return {{"architectures", {"FalconH1ForCausalLM"}},
          {"model_type", "falcon_h1"},
          {"hidden_size", 3072},
          {"num_hidden_layers", 44},
          {"num_attention_heads", 12},
          {"num_key_value_heads", 2},
          {"head_dim", 128},
          {"intermediate_size", 12288},
          {"vocab_size", 130049},
          {"tie_word_embeddings", false},
          {"mamba_d_ssm", 3072},
          {"mamba_n_heads", 24},
          {"mamba_d_head", 128},
          {"mamba_n_groups", 1},
          {"mamba_d_state", 256},
          {"mamba_d_conv", 4},
          {"mamba_chunk_size", 256},
          {"mamba_rms_norm", true},
          {"max_position_embeddings", 262144},
          {"embedding_multiplier", 5.656854249492381},
          {"ssm_multipliers", {0.3535533905932738, 0.25, 0.1767766952966369, 0.5, 0.3535533905932738}},
          {"mlp_multipliers", {0.2946278254943948, 0.032552083333333336}}};
}

/// tiiuae/Falcon-H1-0.5B-Instruct's: no gated RMSNorm in the mixer, its own head width.
Json falcon_h1_05b() {
  Json c = falcon_h1_7b();
  c.update({{"hidden_size", 1024},
            {"num_hidden_layers", 36},
            {"num_attention_heads", 8},
            {"num_key_value_heads", 2},
            {"head_dim", 64},
            {"intermediate_size", 2048},
            {"vocab_size", 32784},
            {"mamba_d_ssm", 1536},
            {"mamba_d_head", 64},
            {"mamba_d_state", 128},
            {"mamba_chunk_size", 128},
            {"mamba_rms_norm", false},
            {"mamba_conv_bias", true},
            {"mamba_proj_bias", false},
            {"projectors_bias", false},
            {"max_position_embeddings", 16384}});
  return c;
}

/// tiiuae/Falcon-H1-34B-Instruct's: two SSM groups, a mixer narrower than the model (mamba_d_ssm 4096 < 5120).
Json falcon_h1_34b() {
  Json c = falcon_h1_7b();
  c.update({{"hidden_size", 5120},
            {"num_hidden_layers", 72},
            {"num_attention_heads", 20},
            {"num_key_value_heads", 4},
            {"intermediate_size", 21504},
            {"vocab_size", 261120},
            {"mamba_d_ssm", 4096},
            {"mamba_n_heads", 32},
            {"mamba_n_groups", 2},
            {"mamba_chunk_size", 128}});
  return c;
}

}  // namespace

TEST_CASE("falcon_h1: the releases give the formula's counts, near TII's names", "[hf_config][falcon_h1]") {
  const I64 seven = falcon_h1_formula(falcon_h1_7b());
  CHECK(testutil::hf_network(falcon_h1_7b()).parameters() == seven);
  CHECK(seven == 7585654880);  // the formula's own number for these fields, written out so a change to it shows
  CHECK(testutil::hf_network(falcon_h1_05b()).parameters() == falcon_h1_formula(falcon_h1_05b()));
  CHECK(static_cast<double>(falcon_h1_formula(falcon_h1_05b())) == Approx(0.52e9).epsilon(0.03));
  const I64 big = falcon_h1_formula(falcon_h1_34b());
  CHECK(testutil::hf_network(falcon_h1_34b()).parameters() == big);
  CHECK(static_cast<double>(big) == Approx(34e9).epsilon(0.03));
}

TEST_CASE("falcon_h1: every layer runs the Mamba-2 mixer and attention on one normed input, then a SwiGLU",
          "[hf_config][falcon_h1]") {
  std::string kinds;
  for (const Json& l : testutil::hf_flat_layers(falcon_h1_05b())) {
    const std::string type = l["type"];
    if (type == "mamba") {
      kinds += 'M';
      CHECK(l["version"] == 2);
      CHECK(l["inner"] == 1536);
      CHECK(l["num_heads"] == 24);
      CHECK(l["gated_norm"] == false);  // mamba_rms_norm false
      CHECK_FALSE(l.contains("out_bias"));
    }
    if (type == "attention") {
      kinds += '*';
      CHECK(l["head_dim"] == 64);
      CHECK(l["rotary_dim"] == 64);
      CHECK(l["num_kv_heads"] == 2);
      CHECK(l["inputs"][0] == "input_layernorm");  // the mixer's input, not its output
    }
    if (l.value("name", "") == "mixers_sum") CHECK(l["inputs"] == Json({"mamba", "self_attn"}));
    if (l.value("name", "") == "feed_forward_up") kinds += 'F';
  }
  std::string layer = "M*F", expected;
  for (int i = 0; i < 36; ++i) expected += layer;
  CHECK(kinds == expected);
  for (const Json& l : testutil::hf_flat_layers(falcon_h1_7b())) {
    if (l["type"] == "mamba") CHECK_FALSE(l.contains("gated_norm"));  // mamba_rms_norm true: the default
  }
}

TEST_CASE("falcon_h1: projectors_bias is out_proj's bias apart from mamba_proj_bias", "[hf_config][falcon_h1]") {
  Json cfg = falcon_h1_05b();
  cfg["projectors_bias"] = true;
  CHECK(testutil::hf_network(cfg).parameters() == falcon_h1_formula(falcon_h1_05b()) + 36 * 1024);
  for (const Json& l : testutil::hf_flat_layers(cfg)) {
    if (l["type"] == "mamba") CHECK(l["out_bias"] == true);
  }
  cfg = falcon_h1_05b();
  cfg["mamba_proj_bias"] = true;  // in_proj and, unless projectors_bias says otherwise, not out_proj
  CHECK(testutil::hf_network(cfg).parameters() == falcon_h1_formula(cfg));
  cfg["attention_bias"] = true;
  cfg["mlp_bias"] = true;
  CHECK(testutil::hf_network(cfg).parameters() == falcon_h1_formula(cfg));
}

TEST_CASE("falcon_h1, granitemoehybrid, nemotron_h: the SSD chunk length from each class's spelling and default",
          "[hf_config][falcon_h1][granitemoehybrid][nemotron_h]") {
  // The chunk_size of the mamba layers a config builds (absent: the layer kind's 256).
  auto chunks = [](const Json& cfg) {
    std::vector<std::int64_t> seen;
    for (const Json& l : testutil::hf_flat_layers(cfg)) {
      if (l["type"] == "mamba") seen.push_back(l.value("chunk_size", std::int64_t{256}));
    }
    REQUIRE(!seen.empty());
    for (std::int64_t c : seen) CHECK(c == seen.front());
    return seen.front();
  };
  Json cfg = falcon_h1_05b();  // FalconH1Config: mamba_chunk_size 256
  cfg.erase("mamba_chunk_size");
  CHECK(chunks(cfg) == 256);
  cfg["mamba_chunk_size"] = 128;
  CHECK(chunks(cfg) == 128);
  Json granite = {{"model_type", "granitemoehybrid"},
                  {"hidden_size", 256},
                  {"num_hidden_layers", 2},
                  {"vocab_size", 1000},
                  {"num_attention_heads", 4},
                  {"mamba_n_heads", 8},
                  {"mamba_d_state", 16},
                  {"intermediate_size", 512},
                  {"num_local_experts", 0},
                  {"shared_intermediate_size", 512}};
  CHECK(chunks(granite) == 256);  // GraniteMoeHybridConfig: mamba_chunk_size 256
  granite["mamba_chunk_size"] = 64;
  CHECK(chunks(granite) == 64);
  Json nemotron = {
      {"model_type", "nemotron_h"},      {"hidden_size", 256},   {"num_hidden_layers", 2}, {"vocab_size", 1000},
      {"hybrid_override_pattern", "M-"}, {"mamba_num_heads", 8}, {"mamba_head_dim", 32},   {"ssm_state_size", 16},
      {"intermediate_size", 512}};
  CHECK(chunks(nemotron) == 128);     // NemotronHConfig: chunk_size 128
  nemotron["mamba_chunk_size"] = 64;  // __post_init__'s older spelling
  CHECK(chunks(nemotron) == 64);
  granite["mamba_chunk_size"] = 0;
  testutil::require_input_error([&] { testutil::hf_network(granite); }, "model.hf_config.mamba_chunk_size",
                                "expected an integer");
}

TEST_CASE("falcon_h1: mamba_d_ssm null is mamba_expand × hidden_size; mamba_d_head \"auto\" divides it",
          "[hf_config][falcon_h1]") {
  Json cfg = falcon_h1_7b();
  cfg["mamba_d_ssm"] = nullptr;  // 2 × 3072 = 6144 in 24 heads of 256
  cfg["mamba_d_head"] = "auto";
  Json expected = cfg;
  expected["mamba_d_ssm"] = 6144;
  CHECK(testutil::hf_network(cfg).parameters() == falcon_h1_formula(expected));
}

TEST_CASE("falcon_h1: bad mixer sizes, multipliers and heads are errors naming the field", "[hf_config][falcon_h1]") {
  Json cfg = falcon_h1_7b();
  cfg["mamba_n_heads"] = 25;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.mamba_n_heads",
                      "must divide mamba_d_ssm (3072)");
  cfg = falcon_h1_7b();
  cfg["mamba_d_head"] = 64;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.mamba_d_head", "must equal mamba_d_ssm");
  cfg = falcon_h1_7b();
  cfg.erase("mamba_d_ssm");  // FalconH1Config's default, 1024, in 24 heads
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.mamba_n_heads",
                      "must divide mamba_d_ssm (1024)");
  cfg = falcon_h1_7b();
  cfg["mamba_n_groups"] = 5;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.mamba_n_groups",
                      "must divide mamba_n_heads");
  cfg = falcon_h1_7b();
  cfg["ssm_multipliers"] = {1.0, 1.0};
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.ssm_multipliers", "a list of 5 numbers");
  cfg = falcon_h1_7b();
  cfg["key_multiplier"] = "large";
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.key_multiplier", "");
  cfg = falcon_h1_7b();
  cfg["num_key_value_heads"] = 5;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.num_key_value_heads", "");
  cfg = falcon_h1_7b();
  cfg["hidden_act"] = "gelu";
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.hidden_act", "SiLU only");
  cfg = falcon_h1_7b();
  cfg["architectures"] = {"FalconH1ForSequenceClassification"};
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.architectures", "FalconH1ForCausalLM");
}

TEST_CASE("falcon_h1: the multipliers are named in a warning as not costed", "[hf_config][falcon_h1]") {
  std::vector<std::string> warnings;
  testutil::hf_network(falcon_h1_7b(), warnings);
  bool named = false;
  for (const auto& w : warnings) named = named || w.find("µP multipliers") != std::string::npos;
  CHECK(named);
}
