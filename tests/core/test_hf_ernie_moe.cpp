// Hugging Face ernie4_5_moe configs (Ernie4_5_MoeForCausalLM: Baidu's ERNIE-4.5-21B-A3B and 300B-A47B): the parameter
// count against a formula written here from the modules' __init__ in transformers'
// src/transformers/models/ernie4_5_moe/modular_ernie4_5_moe.py (Ernie4_5_MoeAttention: q/k/v/o biased by use_bias;
// Ernie4_5_MoeDecoderLayer: experts where (i + 1) % moe_layer_interval == 0 between moe_layer_start_index and
// moe_layer_end_index, a dense Ernie4_5_MoeMLP elsewhere; Ernie4_5_MoeSparseMoeBlock: a bias-free gate,
// moe_num_experts SwiGLU experts, shared experts of moe_num_shared_experts × moe_intermediate_size; norm; lm_head).
//
// No whole config.json of the release was found for tests/fixtures/hf; ERNIE-4.5-21B-A3B's architecture fields below
// agree across independent copies quoted in public code (find_string ids 70957858900, with moe_layer_end_index 27,
// and 55221413519, an MLX port's copy with moe_layer_end_index null and head_dim null: the same network).
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

Json ernie_21b_a3b() {
  return {{"architectures", {"Ernie4_5_MoeForCausalLM"}},
          {"model_type", "ernie4_5_moe"},
          {"hidden_size", 2560},
          {"intermediate_size", 12288},
          {"moe_intermediate_size", 1536},
          {"num_hidden_layers", 28},
          {"num_attention_heads", 20},
          {"num_key_value_heads", 4},
          {"head_dim", 128},
          {"moe_num_experts", 64},
          {"moe_num_shared_experts", 2},
          {"moe_k", 6},
          {"moe_layer_start_index", 1},
          {"moe_layer_end_index", 27},
          {"moe_layer_interval", 1},
          {"vocab_size", 103424},
          {"max_position_embeddings", 131072},
          {"rope_theta", 500000},
          {"use_bias", false},
          {"tie_word_embeddings", true},
          {"hidden_act", "silu"}};
}

struct Counts {
  I64 total = 0, active = 0;
};

/// The formula; `moe_layer` says which layers hold experts.
Counts ernie_formula(const Json& c, const std::vector<bool>& moe_layer) {
  const I64 h = c["hidden_size"], V = c["vocab_size"], H = c["num_attention_heads"], kv = c["num_key_value_heads"];
  const I64 d = h / H, F = c["intermediate_size"], Fe = c["moe_intermediate_size"];
  const I64 E = c["moe_num_experts"], k = c["moe_k"], shared = c["moe_num_shared_experts"];
  const I64 attention = 2 * h * H * d + 2 * h * kv * d;
  const I64 expert = 3 * h * Fe;
  Counts n;
  n.total = V * h + h;  // tied embed_tokens and lm_head, norm
  n.active = n.total;
  for (bool moe : moe_layer) {
    const I64 ffn = moe ? h * E + E * expert + 3 * h * Fe * shared : 3 * h * F;
    n.total += 2 * h + attention + ffn;
    n.active += 2 * h + attention + ffn - (moe ? (E - k) * expert : 0);
  }
  return n;
}

}  // namespace

TEST_CASE("ernie4_5_moe: ERNIE-4.5-21B-A3B gives the formula's count, Baidu's 21B total and 3B active",
          "[hf_config][ernie4_5_moe]") {
  std::vector<bool> moe(28, true);
  moe[0] = false;  // moe_layer_start_index 1
  const Counts expected = ernie_formula(ernie_21b_a3b(), moe);
  const Network net = testutil::hf_network(ernie_21b_a3b());
  CHECK(net.parameters() == expected.total);
  CHECK(net.active_parameters() == expected.active);
  CHECK(static_cast<double>(expected.total) == Approx(21.8e9).epsilon(0.005));
  CHECK(static_cast<double>(expected.active) == Approx(3e9).epsilon(0.15));  // "A3B": 3.35 B with the token table
  // The MLX port's copy (moe_layer_end_index and head_dim null) is the same network.
  Json nulls = ernie_21b_a3b();
  nulls["moe_layer_end_index"] = nullptr;
  nulls["head_dim"] = nullptr;
  CHECK(testutil::hf_network(nulls).parameters() == expected.total);
}

TEST_CASE("ernie4_5_moe: the expert layers follow start, end and interval", "[hf_config][ernie4_5_moe]") {
  Json cfg = ernie_21b_a3b();
  cfg["moe_layer_start_index"] = 3;
  cfg["moe_layer_end_index"] = 20;
  cfg["moe_layer_interval"] = 2;
  std::vector<bool> moe(28, false);
  for (int i = 0; i < 28; ++i) moe[static_cast<std::size_t>(i)] = (i + 1) % 2 == 0 && i >= 3 && i <= 20;
  const Counts expected = ernie_formula(cfg, moe);
  const Network net = testutil::hf_network(cfg);
  CHECK(net.parameters() == expected.total);
  CHECK(net.active_parameters() == expected.active);
  cfg["moe_num_shared_experts"] = 0;
  CHECK(testutil::hf_network(cfg).parameters() == expected.total - 9 * 3 * 2560 * 1536 * 2);
}

TEST_CASE("ernie4_5_moe: bad expert fields are errors naming the field", "[hf_config][ernie4_5_moe]") {
  Json cfg = ernie_21b_a3b();
  cfg["moe_k"] = 65;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.moe_k", "");
  cfg = ernie_21b_a3b();
  cfg["moe_layer_interval"] = 0;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.moe_layer_interval", "");
  cfg = ernie_21b_a3b();
  cfg["moe_layer_end_index"] = -2;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.moe_layer_end_index", "");
}
