// Hugging Face qwen3_next, qwen3_5_text and qwen3_5_moe_text configs (Qwen3-Next-80B-A3B and the text models of
// Qwen3.5): the parameter count against a formula written here from the modules' __init__ in transformers'
// modular_qwen3_next.py and modular_qwen3_5.py (Qwen3NextGatedDeltaNet: in_proj_qkvz and in_proj_ba without bias, a
// bias-free depthwise conv1d over 2 K + V channels, dt_bias and A_log per value head, the gated RMSNorm's head_v_dim
// weights, out_proj; Qwen3NextAttention: q_proj twice the queries' width (the output gate), k/v/o, per-head q_norm
// and k_norm; Qwen2-MoE's sparse block: router, experts, a shared expert and its one-unit gate; two RMSNorms per
// layer, the final norm, untied embed_tokens and lm_head), the layer pattern, and errors naming the field.
// The Qwen3-Next fixture is tests/fixtures/hf/recent/Qwen--Qwen3-Next-80B-A3B-Instruct.json (SOURCES.md).
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "arch_form_roundtrip.hpp"
#include "helpers.hpp"
#include "hf_fixtures.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/layer_list.hpp"

using namespace prenet;
using testutil::require_input_error;

namespace {

using I64 = std::int64_t;

/// One Gated DeltaNet mixer's parameters, from the config's linear_* fields.
I64 deltanet_formula(const Json& c) {
  const I64 h = c["hidden_size"], hk = c["linear_num_key_heads"], hv = c["linear_num_value_heads"];
  const I64 K = hk * c["linear_key_head_dim"].get<I64>(), dv = c["linear_value_head_dim"], V = hv * dv;
  const I64 conv = c["linear_conv_kernel_dim"];
  return h * (2 * K + 2 * V) + h * 2 * hv + (2 * K + V) * conv + 2 * hv + dv + V * h;
}

/// One gated attention's parameters: q_proj (queries and gate), k_proj, v_proj, o_proj, q_norm and k_norm.
I64 attention_formula(const Json& c) {
  const I64 h = c["hidden_size"], H = c["num_attention_heads"], kv = c["num_key_value_heads"], d = c["head_dim"];
  return h * 2 * H * d + 2 * h * kv * d + H * d * h + 2 * d;
}

/// One sparse block's parameters: router, experts, the shared expert and its gate; and those a token skips.
struct Moe {
  I64 all = 0, skipped = 0;
};
Moe moe_formula(const Json& c) {
  const I64 h = c["hidden_size"], E = c["num_experts"], k = c["num_experts_per_tok"];
  const I64 expert = 3 * h * c["moe_intermediate_size"].get<I64>();
  return {h * E + E * expert + 3 * h * c["shared_expert_intermediate_size"].get<I64>() + h, (E - k) * expert};
}

/// The formula's totals: every layer two norms, its mixer (every full_attention_interval-th attention) and `mlp`.
struct Counts {
  I64 total = 0, active = 0;
};
Counts qwen_next_formula(const Json& c, I64 mlp, I64 mlp_skipped) {
  const I64 h = c["hidden_size"], L = c["num_hidden_layers"], V = c["vocab_size"];
  const I64 interval = c.value("full_attention_interval", 4);
  Counts n;
  n.total = (c.value("tie_word_embeddings", false) ? 1 : 2) * V * h + h;
  for (I64 i = 0; i < L; ++i) {
    n.total += 2 * h + ((i + 1) % interval ? deltanet_formula(c) : attention_formula(c)) + mlp;
    n.active -= mlp_skipped;
  }
  n.active += n.total;
  return n;
}

/// Every mixer of `config`'s network, in order.
std::vector<Json> mixers(const Json& config) {
  std::vector<std::string> warnings;
  std::vector<Json> flat, out;
  testutil::expand_repeats(hf_config_to_layers(config, "model.hf_config", 4096, warnings)["layers"], flat);
  for (const Json& l : flat) {
    if (l["type"] == "attention" || l["type"] == "gated_deltanet") out.push_back(l);
  }
  return out;
}

/// Qwen3-VL's vision encoder and merger as Qwen3_5VisionModel builds them: a biased Conv3d patch embedding, the
/// position table, `depth` blocks (two biased LayerNorms, biased qkv and proj, a biased fc1 / fc2 MLP), the merger
/// (LayerNorm, fc1 over 2 x 2 merged patches, fc2 to the text width).
I64 vision_formula(const Json& v) {
  const I64 h = v["hidden_size"], inner = v["intermediate_size"], merged = h * 4, out = v["out_hidden_size"];
  const I64 p = v["patch_size"], block = 4 * h + 3 * h * h + 3 * h + h * h + h + h * inner + inner + inner * h + h;
  return 3 * 2 * p * p * h + h + v["num_position_embeddings"].get<I64>() * h + v["depth"].get<I64>() * block + 2 * h +
         merged * merged + merged + merged * out + out;
}

/// The multi-token-prediction layer of the checkpoints, which transformers does not build (mtp.*): fc from 2 h to h,
/// two pre-fc RMSNorms, one full-attention layer with the model's MLP (`mlp` parameters), its final norm.
I64 mtp_formula(const Json& c, I64 mlp) {
  const I64 h = c["hidden_size"];
  return 2 * h * h + 2 * h + (2 * h + attention_formula(c) + mlp) + h;
}

/// Qwen3.5-35B-A3B's text_config (tests/fixtures/hf/recent/Qwen--Qwen3.5-35B-A3B.json).
Json qwen35_moe_text() { return testutil::read_fixture("recent/Qwen--Qwen3.5-35B-A3B.json")["text_config"]; }

}  // namespace

TEST_CASE("qwen3_next: Qwen3-Next-80B-A3B gives the formula's count, 80B total and 3B active",
          "[hf_config][qwen_next]") {
  const Json cfg = testutil::read_fixture("recent/Qwen--Qwen3-Next-80B-A3B-Instruct.json");
  const Network net = testutil::hf_network(cfg);
  const Moe moe = moe_formula(cfg);
  const Counts expected = qwen_next_formula(cfg, moe.all, moe.skipped);
  CHECK(net.parameters() == expected.total);
  CHECK(net.active_parameters() == expected.active);
  // "80 billion parameters but activates only 3 billion" (transformers' model page): 79.7 B, and 3.25 B without the
  // two (untied) token tables.
  CHECK(static_cast<double>(expected.total) == Approx(80e9).epsilon(0.01));
  CHECK(static_cast<double>(expected.active - 2 * 151936 * 2048) == Approx(3e9).margin(0.5e9));
  // The checkpoint's safetensors hold 81,324,862,720 parameters (two model tables quoted in public code, find_string
  // ids 70911651117 and 69468411049): the formula's count plus the one multi-token-prediction layer.
  CHECK(expected.total + mtp_formula(cfg, moe.all) == 81324862720);
}

TEST_CASE("qwen3_next: three Gated DeltaNet layers, then a gated attention rotating a quarter of each head",
          "[hf_config][qwen_next]") {
  const Json cfg = testutil::read_fixture("recent/Qwen--Qwen3-Next-80B-A3B-Instruct.json");
  const std::vector<Json> layers = mixers(cfg);
  REQUIRE(layers.size() == 48);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const Json& l = layers[i];
    if ((i + 1) % 4 == 0) {
      REQUIRE(l["type"] == "attention");
      CHECK(l["output_gate"] == true);
      CHECK(l["rotary_dim"] == 64);
      CHECK(l["qk_norm"] == "head");
      CHECK(l["head_dim"] == 256);
      CHECK(l["num_kv_heads"] == 2);
    } else {
      REQUIRE(l["type"] == "gated_deltanet");
      CHECK(l["key_heads"] == 16);
      CHECK(l["value_heads"] == 32);
      CHECK(l["key_head_dim"] == 128);
      CHECK(l["value_head_dim"] == 128);
      CHECK(l["conv_kernel"] == 4);
      CHECK_FALSE(l.contains("split_projections"));
    }
  }
  Json listed = cfg;
  listed["layer_types"] = Json::array();
  for (int i = 0; i < 48; ++i) listed["layer_types"].push_back(i < 2 ? "full_attention" : "linear_attention");
  const std::vector<Json> by_list = mixers(listed);
  CHECK(by_list[0]["type"] == "attention");
  CHECK(by_list[1]["type"] == "attention");
  CHECK(by_list[3]["type"] == "gated_deltanet");
}

TEST_CASE("qwen3_5_moe_text: Qwen3.5-35B-A3B's text model, its four input projections and every layer routed",
          "[hf_config][qwen_next]") {
  std::vector<std::string> warnings;
  const Json cfg = qwen35_moe_text();
  const Network net = testutil::hf_network(cfg, warnings);
  const Moe moe = moe_formula(cfg);
  const Counts expected = qwen_next_formula(cfg, moe.all, moe.skipped);
  CHECK(net.parameters() == expected.total);
  CHECK(net.active_parameters() == expected.active);
  // 34.7 B in the text model (35B with the vision tower and the MTP layer); "A3B": 2.4 B active without the two
  // (untied) token tables, 3.5 B with them.
  CHECK(static_cast<double>(expected.total) == Approx(34.7e9).epsilon(0.01));
  CHECK(static_cast<double>(expected.active - 2 * 248320 * 2048) == Approx(3e9).margin(0.7e9));
  for (const Json& l : mixers(cfg)) {
    if (l["type"] == "gated_deltanet") CHECK(l["split_projections"] == true);
    if (l["type"] == "attention") CHECK(l["rotary_dim"] == 64);  // rope_parameters.partial_rotary_factor
  }
  bool mtp_noted = false;
  for (const auto& w : warnings) {
    mtp_noted = mtp_noted || w.find(
                                 "mtp_num_hidden_layers 1: transformers builds no multi-token-prediction layer, so "
                                 "it is counted only when training.mtp_layers asks") != std::string::npos;
  }
  CHECK(mtp_noted);
}

TEST_CASE("qwen3_5_text: a dense Qwen3.5 (SwiGLU of intermediate_size in every layer, tied or not)",
          "[hf_config][qwen_next]") {
  Json cfg = qwen35_moe_text();
  for (const char* key : {"num_experts", "num_experts_per_tok", "moe_intermediate_size",
                          "shared_expert_intermediate_size", "mlp_only_layers", "router_aux_loss_coef"}) {
    cfg.erase(key);
  }
  cfg["model_type"] = "qwen3_5_text";
  cfg["intermediate_size"] = 6144;
  cfg["num_hidden_layers"] = 24;
  cfg["num_attention_heads"] = 8;
  cfg["linear_num_value_heads"] = 16;
  cfg["tie_word_embeddings"] = true;
  cfg["layer_types"] = Json::array();
  for (int i = 0; i < 24; ++i) cfg["layer_types"].push_back((i + 1) % 4 ? "linear_attention" : "full_attention");
  const I64 h = 2048, mlp = 3 * h * 6144;
  const Counts expected = qwen_next_formula(cfg, mlp, 0);
  const Network net = testutil::hf_network(cfg);
  CHECK(net.parameters() == expected.total);
  CHECK(net.active_parameters() == expected.total);
}

TEST_CASE("qwen3_next: bad Gated DeltaNet fields and layer patterns are errors naming the field",
          "[hf_config][qwen_next]") {
  std::vector<std::string> warnings;
  Json cfg = testutil::read_fixture("recent/Qwen--Qwen3-Next-80B-A3B-Instruct.json");
  cfg["linear_num_value_heads"] = 24;
  cfg["linear_num_key_heads"] = 16;
  require_input_error([&] { testutil::hf_network(cfg, warnings); }, "model.hf_config.linear_num_value_heads",
                      "multiple of linear_num_key_heads");
  cfg = qwen35_moe_text();
  cfg["layer_types"][5] = "sliding_attention";
  require_input_error([&] { testutil::hf_network(cfg, warnings); }, "model.hf_config.layer_types[5]",
                      "linear_attention");
  cfg = qwen35_moe_text();
  cfg["layer_types"].erase(0);
  require_input_error([&] { testutil::hf_network(cfg, warnings); }, "model.hf_config.layer_types",
                      "one entry per layer");
  cfg = qwen35_moe_text();
  cfg["linear_key_head_dim"] = 0;
  require_input_error([&] { testutil::hf_network(cfg, warnings); }, "model.hf_config.linear_key_head_dim", "");
  cfg = qwen35_moe_text();
  cfg["full_attention_interval"] = 0;
  cfg.erase("layer_types");
  require_input_error([&] { testutil::hf_network(cfg, warnings); }, "model.hf_config.full_attention_interval", "");
}

TEST_CASE("qwen3_next, qwen3_5_moe_text: each echoes its decoder architecture, which builds the same model",
          "[hf_config][qwen_next][arch_json]") {
  // The Gated DeltaNet fields, the output gate and the "linear" layers must all survive the architecture form: a
  // lost one would build attention where the config has a delta rule.
  testutil::check_arch_round_trip(
      {{"hf_config", testutil::read_fixture("recent/Qwen--Qwen3-Next-80B-A3B-Instruct.json")}}, "decoder", 128);
  testutil::check_arch_round_trip({{"hf_config", qwen35_moe_text()}}, "decoder", 128);
}

TEST_CASE(
    "qwen3_5, qwen3_5_moe: the releases' wrappers hold the vision encoder; with the MTP layer, the checkpoints' "
    "safetensors counts",
    "[hf_config][qwen_next]") {
  // Published totals of the safetensors (the vision encoder and the MTP layer included): Qwen/Qwen3.5-35B-A3B
  // 35,951,822,704 (find_string ids 52555998385, 55778153074), Qwen/Qwen3.6-27B and Qwen/Qwen3.5-27B 27,781,427,952
  // (ids 71142266638, 55778153074).
  struct Release {
    const char* file;
    I64 safetensors;
  };
  for (const Release& r : {Release{"recent/Qwen--Qwen3.5-35B-A3B.json", 35951822704},
                           Release{"recent/Qwen--Qwen3.6-27B.json", 27781427952}}) {
    INFO(r.file);
    std::vector<std::string> warnings;
    const Json cfg = testutil::read_fixture(r.file);
    const Json& text = cfg["text_config"];
    const Network net = testutil::hf_network(cfg, warnings);
    const bool moe = text.contains("num_experts");
    const Moe sparse = moe ? moe_formula(text) : Moe{};
    const I64 mlp = moe ? sparse.all : 3 * text["hidden_size"].get<I64>() * text["intermediate_size"].get<I64>();
    const I64 vision = vision_formula(cfg["vision_config"]);
    const Counts expected = qwen_next_formula(text, mlp, sparse.skipped);
    CHECK(net.parameters() == expected.total + vision);
    CHECK(net.active_parameters() == expected.active + vision);
    CHECK(net.parameters() + mtp_formula(text, mlp) == r.safetensors);
    bool vision_noted = false;
    for (const auto& w : warnings)
      vision_noted = vision_noted || w.find("Qwen3.5's vision encoder") != std::string::npos;
    CHECK(vision_noted);
  }
  // Qwen3.5-122B-A10B (its FP8 release's config): 122.6 B with the vision encoder, 10.2 B active.
  const Network big = testutil::hf_network(testutil::read_fixture("recent/Qwen--Qwen3.5-122B-A10B-FP8.json"));
  CHECK(static_cast<double>(big.parameters()) == Approx(122e9).epsilon(0.01));
  CHECK(static_cast<double>(big.active_parameters()) == Approx(10e9).epsilon(0.05));
  // The small releases tie the head at the top level (the MLX conversion of Qwen3.5-2B says so in both places).
  const Json small = testutil::read_fixture("recent/mlx-community--Qwen3.5-2B-mxfp4.json");
  Json untied = small;
  untied["tie_word_embeddings"] = false;
  untied["text_config"].erase("tie_word_embeddings");
  const I64 table = small["text_config"]["vocab_size"].get<I64>() * small["text_config"]["hidden_size"].get<I64>();
  CHECK(testutil::hf_network(untied).parameters() == testutil::hf_network(small).parameters() + table);
}

TEST_CASE("qwen3_5 wrappers: a merger not feeding the text width, or a tie that contradicts itself, is an error",
          "[hf_config][qwen_next]") {
  std::vector<std::string> warnings;
  Json cfg = testutil::read_fixture("recent/Qwen--Qwen3.5-35B-A3B.json");
  cfg["vision_config"]["out_hidden_size"] = 4096;
  require_input_error([&] { testutil::hf_network(cfg, warnings); }, "model.hf_config.vision_config.out_hidden_size",
                      "hidden_size is 2048");
  cfg = testutil::read_fixture("recent/mlx-community--Qwen3.5-2B-mxfp4.json");
  cfg["tie_word_embeddings"] = false;
  require_input_error([&] { testutil::hf_network(cfg, warnings); }, "model.hf_config.tie_word_embeddings",
                      "text_config's is true");
  cfg = testutil::read_fixture("recent/Qwen--Qwen3.5-35B-A3B.json");
  cfg["text_config"]["model_type"] = "qwen3_5_text";
  testutil::hf_network(cfg, warnings);
  bool noted = false;
  for (const auto& w : warnings) noted = noted || w.find("read as model_type \"qwen3_5_text\"") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("qwen3_5 wrappers: the text model's dtype and trained positions decide precision and length",
          "[hf_config][qwen_next]") {
  // transformers 5 writes Qwen3.5's dtype and max_position_embeddings in text_config only; read there, the
  // release trains in BF16 at the 4096-token default of a rotary decoder trained on more.
  const Json request = {{"model", {{"hf_config", testutil::read_fixture("recent/Qwen--Qwen3.5-35B-A3B.json")}}},
                        {"training", {{"batch_size", 1}}},
                        {"hardware", {"h100-sxm"}}};
  const Json out = testutil::call(request);
  REQUIRE_FALSE(out.contains("error"));
  CHECK(out["training"]["precision"] == "bf16");
  CHECK(out["training"]["precision_from"] == "model.hf_config.text_config.dtype");
  CHECK(out["training"]["seq_len"] == 4096);
  CHECK_THAT(out["training"]["seq_len_from"].get<std::string>(),
             Catch::StartsWith("model.hf_config.text_config.max_position_embeddings (262144), capped at 4096"));
}

TEST_CASE("qwen3_next, qwen3_5: training.mtp_layers 1 adds the checkpoints' MTP layer, to their safetensors counts",
          "[hf_config][qwen_next][mtp]") {
  // The multi-token-prediction layer the generic builder adds (model/mtp.cpp: the embedding's and the hidden state's
  // norms, their projection, the last block repeated, its norm) is the one the releases hold: with it, the counts
  // are the published safetensors totals exactly (SOURCES in the cases above).
  for (const auto& [preset, total] : std::vector<std::pair<std::string, std::int64_t>>{
           {"qwen3-next-80b-a3b", 81324862720}, {"qwen3.5-35b-a3b", 35951822704}, {"qwen3.6-27b", 27781427952}}) {
    INFO(preset);
    const Json out = testutil::call({{"model", {{"preset", preset}}},
                                     {"training", {{"batch_size", 1}, {"seq_len", 512}, {"mtp_layers", 1}}},
                                     {"hardware", {"h100-sxm"}},
                                     {"options", {{"per_layer", false}}}});
    REQUIRE_FALSE(out.contains("error"));
    CHECK(out["model"]["parameters"] == total);
  }
}
