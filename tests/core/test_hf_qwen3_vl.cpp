// Hugging Face qwen3_vl and qwen3_vl_moe configs (Qwen3VLForConditionalGeneration, Qwen3VLMoeForConditionalGeneration:
// Qwen3-VL, 2B to 235B): the text model as Qwen3's (or Qwen3-MoE's) layers under Qwen3VLTextConfig's and
// Qwen3VLMoeTextConfig's defaults, the vision encoder with its merger and deepstack mergers held as parameters, and
// the counts against the published safetensors total and a formula from the modules (modeling_qwen3_vl.py,
// modeling_qwen3_vl_moe.py). The 8B fixture is tests/fixtures/hf/recent/Qwen--Qwen3-VL-8B-Instruct.json
// (SOURCES.md).
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "hf_fixtures.hpp"
#include "prenet/hf_config.hpp"

using namespace prenet;
using testutil::require_input_error;

namespace {

using I64 = std::int64_t;

Json qwen3_vl_8b() { return testutil::read_fixture("recent/Qwen--Qwen3-VL-8B-Instruct.json"); }

/// Qwen3VLVisionModel's parameters for the released vision config (depth 27, width 1152, MLP 4304, 16 heads,
/// Conv3d 3 x 2 x 16 x 16 with bias, 2304 positions, merge 2, three deepstack mergers) feeding a text model `out`
/// wide: the encoder with its deepstack mergers, and the merger.
I64 released_vision(I64 out) {
  const I64 h = 1152, inner = 4304, merged = h * 4;
  const I64 block = 4 * h + 3 * h * h + 3 * h + h * h + h + h * inner + inner + inner * h + h;
  const I64 merger_body = merged * merged + merged + merged * out + out;
  return 3 * 2 * 16 * 16 * h + h + 2304 * h + 27 * block + 3 * (2 * merged + merger_body) + 2 * h + merger_body;
}

/// Qwen3-VL-30B-A3B's text_config as a port quotes it from the release (find_string file id 62478544309: the fields
/// it reads, not the whole file), and the vision config the 8B release states with out_hidden_size 2048.
Json qwen3_vl_30b_a3b() {
  Json c = qwen3_vl_8b();
  c["model_type"] = "qwen3_vl_moe";
  c["architectures"] = {"Qwen3VLMoeForConditionalGeneration"};
  c["text_config"] = {{"attention_bias", false},
                      {"decoder_sparse_step", 1},
                      {"head_dim", 128},
                      {"hidden_size", 2048},
                      {"intermediate_size", 6144},
                      {"max_position_embeddings", 262144},
                      {"mlp_only_layers", Json::array()},
                      {"model_type", "qwen3_vl_moe_text"},
                      {"moe_intermediate_size", 768},
                      {"norm_topk_prob", true},
                      {"num_attention_heads", 32},
                      {"num_experts", 128},
                      {"num_experts_per_tok", 8},
                      {"num_hidden_layers", 48},
                      {"num_key_value_heads", 4},
                      {"rms_norm_eps", 1e-06},
                      {"rope_theta", 5000000},
                      {"vocab_size", 151936}};
  c["vision_config"]["out_hidden_size"] = 2048;
  c["vision_config"]["model_type"] = "qwen3_vl_moe";
  return c;
}

}  // namespace

TEST_CASE("qwen3_vl: Qwen3-VL-8B-Instruct's count is the published safetensors total", "[hf_config][qwen3_vl]") {
  // 750 tensors, 8,767,123,696 parameters (SOURCES.md): the text model, its untied head and the vision encoder.
  CHECK(testutil::hf_network(qwen3_vl_8b()).parameters() == 8767123696);
  // The same from the modules: Qwen3's layers (q/k/v/o without bias, per-head q_norm and k_norm, SwiGLU, two
  // RMSNorms), embeddings, norm, lm_head, and the vision parts.
  const I64 h = 4096, kv = 8 * 128, inner = 12288, V = 151936;
  const I64 layer = 2 * h * h + 2 * h * kv + 2 * 128 + 3 * h * inner + 2 * h;
  CHECK(2 * V * h + h + 36 * layer + released_vision(h) == 8767123696);
}

TEST_CASE("qwen3_vl: the text model is Qwen3's, the vision parts held with a warning", "[hf_config][qwen3_vl]") {
  std::vector<std::string> warnings;
  const Json model = hf_config_to_layers(qwen3_vl_8b(), "model.hf_config", 256, warnings);
  std::vector<Json> flat;
  testutil::expand_repeats(model["layers"], flat);
  int attention = 0;
  for (const Json& l : flat) {
    if (l["type"] != "attention") continue;
    ++attention;
    CHECK(l["qk_norm"] == "head");
    CHECK(l["num_kv_heads"] == 8);
    CHECK(l["head_dim"] == 128);
  }
  CHECK(attention == 36);
  bool held = false;
  for (const auto& w : warnings) held = held || w.find("Qwen3-VL's vision encoder") != std::string::npos;
  CHECK(held);
}

TEST_CASE("qwen3_vl_moe: Qwen3-VL-30B-A3B's text model is Qwen3-MoE's, every layer routed", "[hf_config][qwen3_vl]") {
  const Network net = testutil::hf_network(qwen3_vl_30b_a3b());
  const I64 h = 2048, V = 151936, E = 128, k = 8, moe = 768;
  const I64 attention = h * 32 * 128 * 2 + h * 4 * 128 * 2 + 2 * 128;
  const I64 experts = h * E + E * 3 * h * moe;  // the router (no bias) and every expert's gate, up and down
  const I64 total = 2 * V * h + h + 48 * (attention + experts + 2 * h) + released_vision(h);
  CHECK(net.parameters() == total);
  CHECK(net.active_parameters() == total - 48 * (E - k) * 3 * h * moe);
}

TEST_CASE("qwen3_vl: Qwen3VLVisionConfig's defaults, and errors naming the field", "[hf_config][qwen3_vl]") {
  // Without deepstack_visual_indexes the class's default [8, 16, 24] still builds three deepstack mergers.
  Json cfg = qwen3_vl_8b();
  cfg["vision_config"].erase("deepstack_visual_indexes");
  CHECK(testutil::hf_network(cfg).parameters() == 8767123696);
  cfg["vision_config"]["deepstack_visual_indexes"] = Json::array();  // none listed: none built
  const I64 merged = 1152 * 4, merger = 2 * merged + merged * merged + merged + merged * 4096 + 4096;
  CHECK(testutil::hf_network(cfg).parameters() == 8767123696 - 3 * merger);
  // Without out_hidden_size the merger writes the class's 3584 wide rows, which the 4096-wide text model cannot take.
  cfg = qwen3_vl_8b();
  cfg["vision_config"].erase("out_hidden_size");
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.vision_config.out_hidden_size", "is 3584");
  cfg = qwen3_vl_8b();
  cfg["text_config"]["tie_word_embeddings"] = true;  // the release says false at the top
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.tie_word_embeddings", "not both");
  cfg = qwen3_vl_8b();
  cfg["text_config"]["num_key_value_heads"] = 5;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.text_config.num_key_value_heads", "");
}
