// Hugging Face minimax_m2 configs (MiniMaxM2ForCausalLM: MiniMax-M2, 230B total and 10B active by MiniMax's model
// card): the parameter count against a formula written here from the modules' __init__ in transformers'
// src/transformers/models/minimax_m2/modular_minimax_m2.py (MiniMaxM2Attention = FlexOlmo's attention with bias-free
// q/k/v/o and RMSNorms over the whole q and k projections; Mixtral's sparse block: a bias-free router and SwiGLU
// experts; two RMSNorms per layer; norm; an untied lm_head), the rotated share of each head, and errors naming the
// field.
//
// No whole config.json of the release was found for tests/fixtures/hf; the architecture fields below are as
// published and agree across independent copies quoted in public code (find_string ids 62596936354, a Go test's
// fixture, and 66857997877, a vLLM hook test's config, with rotary_dim 64, use_qk_norm and the 62-entry
// attn_type_list of ones).
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

/// MiniMaxAI/MiniMax-M2's architecture fields.
Json minimax_m2() {
  Json types = Json::array();
  for (int i = 0; i < 62; ++i) types.push_back(1);
  return {{"architectures", {"MiniMaxM2ForCausalLM"}},
          {"model_type", "minimax_m2"},
          {"vocab_size", 200064},
          {"hidden_size", 3072},
          {"intermediate_size", 1536},
          {"num_hidden_layers", 62},
          {"num_attention_heads", 48},
          {"num_key_value_heads", 8},
          {"head_dim", 128},
          {"max_position_embeddings", 196608},
          {"num_local_experts", 256},
          {"num_experts_per_tok", 8},
          {"scoring_func", "sigmoid"},
          {"use_routing_bias", true},
          {"use_mtp", true},
          {"num_mtp_modules", 3},
          {"mtp_transformer_layers", 1},
          {"use_qk_norm", true},
          {"qk_norm_type", "per_layer"},
          {"rotary_dim", 64},
          {"rope_theta", 5000000},
          {"attn_type_list", types},
          {"shared_intermediate_size", 0},
          {"tie_word_embeddings", false}};
}

/// What the formula says: all parameters, and a token's (the routed experts it does not visit left out).
struct Counts {
  I64 total = 0, active = 0;
};

Counts minimax_formula(const Json& c) {
  const I64 h = c["hidden_size"], V = c["vocab_size"], L = c["num_hidden_layers"], H = c["num_attention_heads"];
  const I64 kv = c["num_key_value_heads"], d = c["head_dim"], F = c["intermediate_size"];
  const I64 E = c["num_local_experts"], k = c["num_experts_per_tok"];
  // q, k, v, o without bias; q_norm over H d, k_norm over kv d (FlexOlmo's, over the whole projections).
  const I64 attention = 2 * h * H * d + 2 * h * kv * d + H * d + kv * d;
  const I64 expert = 3 * h * F;  // gate_up_proj (h -> 2 F) and down_proj (F -> h)
  const I64 layer = 2 * h + attention + h * E + E * expert;
  Counts n;
  n.total = 2 * V * h + h + L * layer;  // untied embed_tokens and lm_head, norm
  n.active = n.total - L * (E - k) * expert;
  return n;
}

/// The flat layer list of `config` (every repeat written out).
std::vector<Json> attention_layers(const Json& config) {
  std::vector<std::string> warnings;
  const Json model = hf_config_to_layers(config, "model.hf_config", 256, warnings);
  std::vector<Json> found;
  std::vector<const Json*> stack{&model["layers"]};
  while (!stack.empty()) {
    const Json* list = stack.back();
    stack.pop_back();
    for (const auto& l : *list) {
      if (l["type"] == "repeat") stack.push_back(&l["layers"]);
      if (l["type"] == "attention") found.push_back(l);
    }
  }
  return found;
}

}  // namespace

TEST_CASE("minimax_m2: MiniMax-M2 gives the formula's count, MiniMax's 230B total and 10B active",
          "[hf_config][minimax_m2]") {
  std::vector<std::string> warnings;
  const Json cfg = minimax_m2();
  const Network net = testutil::hf_network(cfg, warnings);
  const Counts expected = minimax_formula(cfg);
  CHECK(net.parameters() == expected.total);
  CHECK(net.active_parameters() == expected.active);
  CHECK(static_cast<double>(expected.total) == Approx(230e9).epsilon(0.01));
  // "10B active": without the two (untied) token tables, 9.8 B.
  CHECK(static_cast<double>(expected.active - 2 * 200064 * 3072) == Approx(10e9).epsilon(0.03));
  bool mtp_noted = false;
  for (const auto& w : warnings) mtp_noted = mtp_noted || w.find("num_mtp_modules 3") != std::string::npos;
  CHECK(mtp_noted);
}

TEST_CASE("minimax_m2: rotary_dim rotates half of each head; partial_rotary_factor, when given, wins",
          "[hf_config][minimax_m2]") {
  Json cfg = minimax_m2();
  for (const Json& at : attention_layers(cfg)) {
    CHECK(at["rotary_dim"] == 64);
    CHECK(at["qk_norm"] == "full");
    CHECK(at["head_dim"] == 128);
  }
  cfg["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 5000000}, {"partial_rotary_factor", 0.25}};
  for (const Json& at : attention_layers(cfg)) CHECK(at["rotary_dim"] == 32);
  cfg = minimax_m2();
  cfg.erase("rotary_dim");
  for (const Json& at : attention_layers(cfg)) CHECK(at["rotary_dim"] == 128);
}

TEST_CASE("minimax_m2: lightning-attention layers and bad sizes are errors naming the field",
          "[hf_config][minimax_m2]") {
  std::vector<std::string> warnings;
  Json cfg = minimax_m2();
  cfg["attn_type_list"][7] = 0;
  require_input_error([&] { testutil::hf_network(cfg, warnings); }, "model.hf_config.attn_type_list[7]",
                      "lightning attention");
  cfg = minimax_m2();
  cfg["attn_type_list"].erase(0);
  require_input_error([&] { testutil::hf_network(cfg, warnings); }, "model.hf_config.attn_type_list",
                      "one entry per layer");
  cfg = minimax_m2();
  cfg["rotary_dim"] = 256;
  require_input_error([&] { testutil::hf_network(cfg, warnings); }, "model.hf_config.rotary_dim", "");
  cfg = minimax_m2();
  cfg["num_experts_per_tok"] = 300;
  require_input_error([&] { testutil::hf_network(cfg, warnings); }, "model.hf_config.num_experts_per_tok", "");
}
