// The architecture form's ssm family (docs/MODEL_FORMAT.md, "Family `ssm`"): every real state-space config in
// tests/fixtures/hf and the preset built from one, echoed as model.architecture and sent back, give the same layers
// and response; editing one field changes the parameters by what the transformers classes hold (formulas written
// here from modeling_mamba.py, modeling_mamba2.py and modeling_jamba.py); Jamba's layer pattern is data (a
// per-layer list says the same); every bad field is named; the docs list every field.
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "arch_form_roundtrip.hpp"
#include "hf_fixtures.hpp"
#include "model/hf/arch_json.hpp"
#include "prenet/error.hpp"

using namespace prenet;
using testutil::check_error;
using testutil::with;
using I = std::int64_t;
using testutil::net_of_architecture;

namespace {

/// The state-space fixtures: every one must echo as family ssm.
const std::set<std::string> kSsmFixtures = {"state-spaces--mamba-130m-hf.json", "state-spaces--mamba-2.8b-hf.json",
                                            "tiiuae--falcon-mamba-7b.json", "ai21labs--Jamba-v0.1.json",
                                            "Molbap--code2.json"};

/// The echoed architecture of fixture `file`.
Json arch_of_fixture(const std::string& file) {
  std::optional<Json> arch = hf::hf_config_architecture(testutil::read_fixture(file));
  REQUIRE(arch);
  return *arch;
}

/// MambaBlock's parameters (modeling_mamba.py): the block's RMSNorm; MambaMixer's in_proj h -> 2i, depthwise conv1d
/// (i·k, + i with conv_bias), x_proj i -> r + 2n, dt_proj r -> i with bias, A_log i·n, D i, out_proj i -> h; in_proj
/// and out_proj with bias when `bias`.
I mamba1_block(I h, I i, I n, I k, I r, bool bias, bool conv_bias) {
  I in_proj = h * 2 * i + (bias ? 2 * i : 0), out_proj = i * h + (bias ? h : 0);
  I conv = i * k + (conv_bias ? i : 0);
  return h + in_proj + conv + i * (r + 2 * n) + (r * i + i) + i * n + i + out_proj;
}

/// JambaMambaMixer's parameters: MambaMixer's without the block norm, plus the dt, B and C RMSNorm weights.
I jamba_mixer(I h, I i, I n, I k, I r) { return mamba1_block(h, i, n, k, r, false, true) - h + (r + 2 * n); }

/// A small hybrid: 8 layers, attention at i % 4 == 2, 4 experts (top 2) at odd i, Mamba v1 mixers.
Json small_hybrid() {
  return {{"family", "ssm"},          {"hidden_size", 64},        {"num_hidden_layers", 8},
          {"vocab_size", 100},        {"intermediate_size", 128}, {"num_attention_heads", 4},
          {"num_key_value_heads", 2}, {"num_experts", 4},         {"num_experts_per_tok", 2},
          {"attn_layer_period", 4},   {"attn_layer_offset", 2},   {"expert_layer_period", 2},
          {"expert_layer_offset", 1}, {"inner_norms", "weighted"}};
}

}  // namespace

TEST_CASE("ssm form: every real state-space config and the preset round-trip to the same layers and response",
          "[arch_ssm]") {
  std::set<std::string> echoed;
  for (const std::string& file : testutil::fixture_files()) {
    const Json cfg = testutil::read_fixture(file);
    std::optional<Json> arch = hf::hf_config_architecture(cfg);
    if (!arch || (*arch)["family"] != "ssm") continue;
    INFO(file);
    echoed.insert(file);
    testutil::check_arch_round_trip({{"hf_config", cfg}}, "ssm");
  }
  CHECK(echoed == kSsmFixtures);
  // The preset's input length (2048) is the request's here, so both requests run the same sequence.
  Json preset = testutil::check_arch_round_trip({{"preset", "mamba-2.8b"}}, "ssm", 2048);
  CHECK(preset["d_inner"] == 5120);
  CHECK(preset["time_step_rank"] == 160);
}

TEST_CASE("ssm form: the echo holds the mixers' readings", "[arch_ssm]") {
  const Json falcon = arch_of_fixture("tiiuae--falcon-mamba-7b.json");
  CHECK(falcon["d_inner"] == 8192);  // intermediate_size, not expand 16 × 4096
  CHECK(falcon["inner_norms"] == "weightless");
  CHECK(falcon["tie_word_embeddings"] == false);
  const Json codestral = arch_of_fixture("Molbap--code2.json");
  CHECK(codestral["ssm_version"] == 2);
  CHECK(codestral["num_heads"] == 128);
  CHECK(codestral["head_dim"] == 64);
  CHECK(codestral["n_groups"] == 8);
  CHECK(codestral["state_size"] == 128);
  const Json jamba = arch_of_fixture("ai21labs--Jamba-v0.1.json");
  CHECK(jamba["d_inner"] == 8192);  // mamba_expand 2 × 4096
  CHECK(jamba["intermediate_size"] == 14336);
  CHECK(jamba["attn_layer_period"] == 8);
  CHECK(jamba["attn_layer_offset"] == 4);
  CHECK(jamba["expert_layer_period"] == 2);
  CHECK(jamba["expert_layer_offset"] == 1);
  CHECK(jamba["inner_norms"] == "weighted");
  CHECK_FALSE(jamba.contains("layers"));  // the pattern, not a list
  const Json mamba = arch_of_fixture("state-spaces--mamba-130m-hf.json");
  CHECK(mamba["intermediate_size"] == 0);  // no MLP
  CHECK(mamba["num_attention_heads"] == 0);
  CHECK(mamba["attn_layer_period"] == 0);
}

TEST_CASE("ssm form: a hand-written architecture takes the documented defaults", "[arch_ssm]") {
  const Json minimal = {{"family", "ssm"}, {"hidden_size", 256}, {"num_hidden_layers", 2}, {"vocab_size", 500}};
  // Mamba v1: d_inner 2 × 256, state 16, kernel 4, rank ceil(256 / 16), no projection biases, a conv bias, tied.
  const Network net = net_of_architecture(minimal, 128);
  CHECK(net.parameters() == 500 * 256 + 2 * mamba1_block(256, 512, 16, 4, 16, false, true) + 256);
  CHECK(net.input.seq_len == 128);
  CHECK(hf::arch_from_json(minimal, "model.architecture").act == "silu");
  const Json echoed = hf::arch_to_json(hf::arch_from_json(minimal, "model.architecture"), "ssm");
  for (const auto& doc : hf::arch_field_docs("ssm")) {
    if (doc.key != "layers") CHECK(echoed.contains(doc.key));
  }
  CHECK(net_of_architecture(minimal).input.seq_len == 1024);  // no positions given
  // Mamba-2: heads d_inner / head_dim = 512 / 64 = 8, one group. Mamba2Mixer: in_proj h -> 2i + 2gn + H, conv1d
  // over i + 2gn channels with bias, dt_bias, A_log and D per head, a gated RMSNorm over i, out_proj i -> h.
  const Json v2 = with(minimal, "ssm_version", 2);
  const I h = 256, i = 512, n = 16, g = 1, H = 8, k = 4, conv = i + 2 * g * n;
  const I block = h + h * (2 * i + 2 * g * n + H) + conv * k + conv + 3 * H + i + i * h;
  CHECK(net_of_architecture(v2, 128).parameters() == 500 * 256 + 2 * block + 256);
}

TEST_CASE("ssm form: editing one field changes what it should", "[arch_ssm]") {
  SECTION("Mamba: one more layer adds one MambaBlock; a larger state adds x_proj's and A_log's columns") {
    const Json arch = arch_of_fixture("state-spaces--mamba-130m-hf.json");
    const I base = net_of_architecture(arch).parameters();
    const I h = 768, i = 1536, n = 16, k = 4, r = 48;
    CHECK(base == 50280 * h + 24 * mamba1_block(h, i, n, k, r, false, true) + h);
    CHECK(net_of_architecture(with(arch, "num_hidden_layers", 25)).parameters() - base ==
          mamba1_block(h, i, n, k, r, false, true));
    CHECK(net_of_architecture(with(arch, "state_size", 32)).parameters() - base == 24 * (i * 2 * 16 + i * 16));
    CHECK(net_of_architecture(with(arch, "tie_word_embeddings", false)).parameters() - base == 50280 * h);
    CHECK(net_of_architecture(with(arch, "use_bias", true)).parameters() - base == 24 * (2 * i + h));
  }
  SECTION("Mamba-2: more groups widen in_proj and the convolution by 2 n per group") {
    const Json arch = arch_of_fixture("Molbap--code2.json");
    const I base = net_of_architecture(arch).parameters();
    const I h = 4096, n = 128, k = 4, more = 8;
    CHECK(net_of_architecture(with(arch, "n_groups", 16)).parameters() - base == 64 * more * 2 * n * (h + k + 1));
  }
  SECTION("Jamba: a layer's MLP made dense drops its experts; a Mamba layer made attention swaps the mixer") {
    const Json arch = arch_of_fixture("ai21labs--Jamba-v0.1.json");
    const Network base_net = net_of_architecture(arch);
    const I base = base_net.parameters();
    const I h = 4096, inner = 14336, E = 16;
    // The pattern written out as data gives the same layers.
    Json listed = arch;
    listed["layers"] = Json::array();
    for (I layer = 0; layer < 32; ++layer) {
      Json e = Json::object();
      if (layer % 8 == 4) e["mixer"] = "attention";
      if (layer % 2 == 1) e["mlp"] = "moe";
      listed["layers"].push_back(e);
    }
    std::vector<std::string> w1, w2;
    CHECK(hf::architecture_to_layers(listed, "model.architecture", 0, w1)["layers"] ==
          hf::architecture_to_layers(arch, "model.architecture", 0, w2)["layers"]);
    CHECK(hf::arch_to_json(hf::arch_from_json(listed, "model.architecture"), "ssm") == listed);
    Json dense = listed;
    dense["layers"][1] = Json::object();  // layer 1: a dense MLP
    CHECK(base - net_of_architecture(dense).parameters() == E * 3 * h * inner + h * E - 3 * h * inner);
    Json attends = listed;
    attends["layers"][0] = {{"mixer", "attention"}};
    const I attention = 2 * h * h + 2 * h * 8 * 128;  // q, o; k, v of 8 KV heads of 4096 / 32
    CHECK(net_of_architecture(attends).parameters() - base == attention - jamba_mixer(h, 8192, 16, 4, 256));
    CHECK(net_of_architecture(with(arch, "num_experts", 17)).parameters() - base == 16 * (3 * h * inner + h));
  }
  SECTION("a hybrid layer without an MLP is a mixer and its residual") {
    Json hybrid = small_hybrid();
    const I base = net_of_architecture(hybrid, 64).parameters();
    const Json dense = Json::object(), moe = {{"mlp", "moe"}}, attends = {{"mixer", "attention"}};
    hybrid["layers"] = Json::array({dense, moe, attends, moe, dense, moe, attends, {{"mlp", "none"}}});
    // Layer 7 loses its 4 experts, router and pre-MLP norm.
    CHECK(base - net_of_architecture(hybrid, 64).parameters() == 4 * 3 * 64 * 128 + 64 * 4 + 64);
  }
}

TEST_CASE("ssm form: every bad field is named with what was expected", "[arch_ssm]") {
  const std::string p = "model.architecture";
  const Json ok = small_hybrid();
  REQUIRE_NOTHROW(hf::arch_from_json(ok, p));
  check_error(with(ok, "d_state", 16), p + ".d_state", "expected one of family, name, hidden_size");
  check_error(with(ok, "state_size", 0), p + ".state_size", "[1,");
  check_error(with(ok, "ssm_version", 3), p + ".ssm_version", "[1, 2]");
  check_error(with(ok, "d_inner", 0), p + ".d_inner", "[1,");
  check_error(with(ok, "inner_norms", "rms"), p + ".inner_norms", "weightless");
  check_error(with(ok, "hidden_act", "gelu"), p + ".hidden_act", "SiLU only");
  check_error(with(ok, "task_head", "sequence_classification"), p + ".task_head", "language_model or none");
  // Mamba-2's heads and groups.
  const Json v2 = {{"family", "ssm"},  {"ssm_version", 2}, {"hidden_size", 256}, {"num_hidden_layers", 2},
                   {"vocab_size", 10}, {"num_heads", 8},   {"head_dim", 64},     {"n_groups", 2}};
  REQUIRE_NOTHROW(hf::arch_from_json(v2, p));
  check_error(with(v2, "head_dim", 32), p + ".num_heads", "num_heads (8) × head_dim (32) must equal d_inner (512)");
  check_error(with(v2, "n_groups", 3), p + ".n_groups", "must divide the mixer's heads (8)");
  Json derived = v2;
  derived.erase("num_heads");
  check_error(with(derived, "head_dim", 48), p + ".head_dim", "must divide d_inner (512)");
  check_error(with(v2, "inner_norms", "weighted"), p + ".inner_norms", "ssm_version 1");
  // The hybrid's attention, experts and pattern.
  check_error(with(ok, "num_attention_heads", 5), p + ".num_attention_heads", "must divide the hidden size 64");
  check_error(with(ok, "num_key_value_heads", 3), p + ".num_key_value_heads", "must divide num_attention_heads (4)");
  // Zero KV heads beside attention heads (found by the fuzzer: it divided by zero).
  check_error(with(ok, "num_key_value_heads", 0), p + ".num_key_value_heads", "at least 1 where there are attention");
  check_error(with(ok, "num_experts_per_tok", 5), p + ".num_experts_per_tok", "above num_experts (4)");
  check_error(with(ok, "attn_layer_offset", 4), p + ".attn_layer_offset", "smaller than attn_layer_period (4)");
  check_error(with(ok, "expert_layer_offset", 2), p + ".expert_layer_offset", "smaller than expert_layer_period (2)");
  check_error(with(with(ok, "attn_layer_period", 0), "attn_layer_offset", 1), p + ".attn_layer_offset",
              "must be 0 when attn_layer_period is 0");
  Json headless = with(ok, "num_attention_heads", 0);
  headless.erase("num_key_value_heads");
  check_error(headless, p + ".num_attention_heads", "at least 1 head");
  // The per-layer list.
  check_error(with(ok, "layers", Json::array({Json::object()})), p + ".layers",
              "has 1 entries; expected one per layer, 8 (num_hidden_layers)");
  check_error(with(ok, "layers", Json::object()), p + ".layers", "array");
  auto entry = [&](const Json& base, const Json& e) {
    Json j = base;
    j["layers"] = Json::array();
    for (I i = 0; i < base["num_hidden_layers"].get<I>() - 1; ++i) j["layers"].push_back(Json::object());
    j["layers"].push_back(e);
    return j;
  };
  check_error(entry(ok, {{"mixer", "rnn"}}), p + ".layers[7].mixer", "mamba, attention");
  check_error(entry(ok, {{"mlp", "sparse"}}), p + ".layers[7].mlp", "none, dense, moe");
  check_error(entry(ok, {{"window", 4}}), p + ".layers[7].window", "mixer, mlp");
  check_error(entry(ok, 7), p + ".layers[7]", "object");
  check_error(entry(with(ok, "num_experts", 1), {{"mlp", "moe"}}), p + ".layers[7].mlp", "num_experts of at least 2");
  Json no_attention = headless;
  no_attention["attn_layer_period"] = 0;
  no_attention["attn_layer_offset"] = 0;
  check_error(entry(no_attention, {{"mixer", "attention"}}), p + ".layers[7].mixer", "num_attention_heads");
  Json v2_plain = with(v2, "num_hidden_layers", 1);
  check_error(entry(v2_plain, {{"mlp", "dense"}}), p + ".layers[0].mlp", "intermediate_size of at least 1");
}

TEST_CASE("ssm form: errors reach the response naming the field", "[arch_ssm]") {
  Json bad = small_hybrid();
  bad["layers"] = Json::array();
  for (int i = 0; i < 8; ++i) bad["layers"].push_back(Json::object());
  bad["layers"][3] = {{"mlp", "moe"}, {"mixer", "lstm"}};
  const Json error = testutil::predict_err(testutil::request_for({{"architecture", bad}}));
  CHECK(error["field"] == "model.architecture.layers[3].mixer");
}
