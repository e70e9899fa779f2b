// Hugging Face granitemoehybrid configs (GraniteMoeHybridForCausalLM: IBM's Granite 4.0 models, the hybrids
// H-Small, H-Tiny, H-1B, H-350M and the attention-only Micro): the parameter count against a formula written here
// from the modules' __init__ in transformers' src/transformers/models/granitemoehybrid/modular_granitemoehybrid.py
// (GraniteMoeHybridMambaLayer = BambaMixer, GraniteMoeSharedAttention, GraniteMoeSharedMoE with its router and
// ParallelExperts, GraniteMoeSharedMLP as shared_mlp, two RMSNorms per layer, norm, lm_head), each layer's mixer as
// layer_types says, rotary positions only with position_embedding_type "rope", and errors naming the field.
//
// No whole config.json of a Granite 4.0 release was found for tests/fixtures/hf; the architecture fields below are
// as published and agree across independent copies: the GGUF metadata of IBM's own Ollama builds (ibm/granite4
// small-h, tiny-h, 350m-h: hidden sizes, heads, expert counts and widths, SSM inner width, state and groups) and the
// field lists quoted from the Hub's config.json in third-party code (find_string ids 65865534003 for H-Tiny and
// H-1B with their layer_types, 57624389648 for H-Small, 54665629904 for H-350M with its layer_types).
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

/// What the formula says: all parameters, and a token's (the routed experts it does not visit left out).
struct Counts {
  I64 total = 0, active = 0;
};

/// GraniteMoeHybridForCausalLM's parameters from the config's numbers (GraniteMoeHybridConfig's defaults where absent).
Counts granite_formula(const Json& c) {
  const I64 h = config_int(c, "hidden_size", 4096), V = config_int(c, "vocab_size", 32000),
            L = config_int(c, "num_hidden_layers", 32);
  // BambaMixer: I = mamba_expand x hidden; conv over I + 2 G N channels; in_proj h -> I + conv + heads.
  const I64 I = config_int(c, "mamba_expand", 2) * h, heads = config_int(c, "mamba_n_heads", 128);
  const I64 conv = I + 2 * config_int(c, "mamba_n_groups", 1) * config_int(c, "mamba_d_state", 256),
            K = config_int(c, "mamba_d_conv", 4);
  const bool conv_bias = c.value("mamba_conv_bias", true), proj_bias = c.value("mamba_proj_bias", false);
  const I64 mamba = h * (I + conv + heads) + (proj_bias ? I + conv + heads : 0) + conv * K + (conv_bias ? conv : 0) +
                    3 * heads /* dt_bias, A_log, D */ + I /* gated RMSNorm */ + I * h + (proj_bias ? h : 0);
  // GraniteMoeSharedAttention: q, k, v, o, head_dim hidden / heads, biases per attention_bias.
  const I64 H = config_int(c, "num_attention_heads", 32), kv = config_int(c, "num_key_value_heads", H), d = h / H;
  const bool bias = c.value("attention_bias", false);
  const I64 attention = 2 * h * H * d + 2 * h * kv * d + (bias ? H * d + 2 * kv * d + h : 0);
  // The feed-forward part: a bias-free router (hidden -> E) and E SwiGLU experts (input_linear h -> 2 F,
  // output_linear F -> h), beside shared_mlp, the same SwiGLU of the shared width.
  const I64 E = config_int(c, "num_local_experts", 8), k = E > 0 ? config_int(c, "num_experts_per_tok", 2) : 0;
  auto swiglu = [&](I64 width) { return 3 * h * width; };
  const I64 expert = swiglu(config_int(c, "intermediate_size", 11008));
  const I64 ffn = (E > 0 ? h * E + E * expert : 0) + swiglu(config_int(c, "shared_intermediate_size", 1024));
  Counts n;
  const bool tied = c.value("tie_word_embeddings", false);
  n.total = V * h + (tied ? 0 : V * h) + h;  // embed_tokens, lm_head, norm
  n.active = n.total;
  for (I64 i = 0; i < L; ++i) {
    const bool attends = c.contains("layer_types") && c["layer_types"][static_cast<std::size_t>(i)] == "attention";
    const I64 layer = 2 * h /* input_layernorm, post_attention_layernorm */ + (attends ? attention : mamba) + ffn;
    n.total += layer;
    n.active += layer - (E - k) * expert;
  }
  return n;
}

/// Five Mamba layers, one attention layer, then (nine Mamba, one attention) three times and four Mamba: H-Tiny's,
/// H-1B's and H-Small's layer_types.
Json forty_layer_types() {
  Json list = Json::array();
  for (int i = 0; i < 40; ++i) list.push_back(i == 5 || i == 15 || i == 25 || i == 35 ? "attention" : "mamba");
  return list;
}

/// ibm-granite/granite-4.0-h-tiny's architecture fields: 7 B total, 1 B active (IBM's model card).
Json h_tiny() {
  return {{"architectures", {"GraniteMoeHybridForCausalLM"}},
          {"model_type", "granitemoehybrid"},
          {"hidden_size", 1536},
          {"num_hidden_layers", 40},
          {"num_attention_heads", 12},
          {"num_key_value_heads", 4},
          {"intermediate_size", 512},
          {"shared_intermediate_size", 1024},
          {"num_local_experts", 64},
          {"num_experts_per_tok", 6},
          {"vocab_size", 100352},
          {"tie_word_embeddings", true},
          {"mamba_d_state", 128},
          {"mamba_n_groups", 1},
          {"mamba_n_heads", 48},
          {"mamba_d_head", 64},
          {"mamba_expand", 2},
          {"mamba_d_conv", 4},
          {"mamba_chunk_size", 256},
          {"max_position_embeddings", 131072},
          {"position_embedding_type", "nope"},
          {"layer_types", forty_layer_types()}};
}

/// ibm-granite/granite-4.0-h-small's: 32 B total, 9 B active (IBM's model card). Its layer_types were found only as
/// a tally (36 Mamba, 4 attention); H-Tiny's positions are assumed, which moves no count.
Json h_small() {
  Json c = h_tiny();
  c["hidden_size"] = 4096;
  c["num_attention_heads"] = 32;
  c["num_key_value_heads"] = 8;
  c["intermediate_size"] = 768;
  c["shared_intermediate_size"] = 1536;
  c["num_local_experts"] = 72;
  c["num_experts_per_tok"] = 10;
  c["mamba_n_heads"] = 128;
  return c;
}

/// ibm-granite/granite-4.0-h-350m's (a dense hybrid: num_local_experts 0, shared_mlp alone).
Json h_350m() {
  Json layer_types = Json::array();
  for (int i = 0; i < 32; ++i) layer_types.push_back(i == 10 || i == 13 || i == 17 || i == 27 ? "attention" : "mamba");
  return {{"architectures", {"GraniteMoeHybridForCausalLM"}},
          {"model_type", "granitemoehybrid"},
          {"attention_bias", false},
          {"hidden_size", 768},
          {"intermediate_size", 2048},
          {"layer_types", layer_types},
          {"mamba_conv_bias", true},
          {"mamba_d_conv", 4},
          {"mamba_d_head", 32},
          {"mamba_d_state", 128},
          {"mamba_n_groups", 1},
          {"mamba_n_heads", 48},
          {"mamba_proj_bias", false},
          {"max_position_embeddings", 32768},
          {"num_attention_heads", 12},
          {"num_experts_per_tok", 0},
          {"num_hidden_layers", 32},
          {"num_key_value_heads", 4},
          {"num_local_experts", 0},
          {"position_embedding_type", "nope"},
          {"shared_intermediate_size", 2048},
          {"tie_word_embeddings", true},
          {"vocab_size", 100352}};
}

/// ibm-granite/granite-4.0-micro's: every layer attention, with rotary positions (the Mamba fields unused).
Json micro() {
  Json c = h_350m();
  c["hidden_size"] = 2560;
  c["num_hidden_layers"] = 40;
  c["num_attention_heads"] = 40;
  c["num_key_value_heads"] = 8;
  c["intermediate_size"] = 8192;
  c["shared_intermediate_size"] = 8192;
  c["mamba_n_heads"] = 128;
  c["mamba_d_head"] = 40;
  c["mamba_d_state"] = 256;
  c["max_position_embeddings"] = 131072;
  c["position_embedding_type"] = "rope";
  c["layer_types"] = Json::array();
  for (int i = 0; i < 40; ++i) c["layer_types"].push_back("attention");
  return c;
}

/// Checks that the network of `config` has the formula's total and active counts; returns the formula's.
Counts checked_counts(const Json& config) {
  const Counts expected = granite_formula(config);
  const Network net = testutil::hf_network(config);
  CHECK(net.parameters() == expected.total);
  CHECK(net.active_parameters() == expected.active);
  return expected;
}

}  // namespace

TEST_CASE("granitemoehybrid: H-Tiny and H-Small give the formula's counts, IBM's 7B-A1B and 32B-A9B",
          "[hf_config][granite_hybrid]") {
  const Counts tiny = checked_counts(h_tiny());
  CHECK(static_cast<double>(tiny.total) == Approx(7e9).epsilon(0.02));
  // "1B active" rounds down: 1.47 B with the (tied) embeddings, 1.31 B without.
  CHECK(static_cast<double>(tiny.active) == Approx(1.47e9).epsilon(0.01));
  const Counts small = checked_counts(h_small());
  CHECK(static_cast<double>(small.total) == Approx(32e9).epsilon(0.01));
  CHECK(static_cast<double>(small.active) == Approx(9e9).epsilon(0.03));
}

TEST_CASE("granitemoehybrid: the dense hybrids and the attention-only Micro give the formula's counts",
          "[hf_config][granite_hybrid]") {
  const Counts small = checked_counts(h_350m());
  CHECK(small.active == small.total);                                      // no routed experts: shared_mlp alone
  CHECK(static_cast<double>(small.total) == Approx(340e6).epsilon(0.03));  // IBM: 340M
  Json h_1b = h_tiny();
  h_1b["intermediate_size"] = 4096;
  h_1b["shared_intermediate_size"] = 4096;
  h_1b["num_local_experts"] = 0;
  h_1b["num_experts_per_tok"] = 0;
  CHECK(static_cast<double>(checked_counts(h_1b).total) == Approx(1.5e9).epsilon(0.03));  // IBM: 1.5B
  CHECK(static_cast<double>(checked_counts(micro()).total) == Approx(3.4e9).epsilon(0.01));
}

TEST_CASE("granitemoehybrid: each layer's mixer is what layer_types says; rotary positions only with \"rope\"",
          "[hf_config][granite_hybrid]") {
  std::string mixers;
  std::string experts;
  for (const Json& l : testutil::hf_flat_layers(h_tiny())) {
    if (l["type"] == "mamba") mixers += 'M';
    if (l["type"] == "attention") {
      mixers += '*';
      CHECK_FALSE(l.contains("rotary_dim"));  // "nope"
      CHECK(l["num_kv_heads"] == 4);
    }
    if (l.value("name", "") == "experts_up") {
      experts += 'E';
      CHECK(l["experts"] == 64);
      CHECK(l["top_k"] == 6);
    }
  }
  CHECK(mixers == "MMMMM*MMMMMMMMM*MMMMMMMMM*MMMMMMMMM*MMMM");
  CHECK(experts == std::string(40, 'E'));  // every layer, the attention ones too
  for (const Json& l : testutil::hf_flat_layers(micro())) {
    if (l["type"] == "attention") CHECK(l["rotary_dim"] == 64);
    CHECK(l["type"] != "mamba");
    CHECK(l.value("name", "") != "experts_up");
  }
}

TEST_CASE("granitemoehybrid: bad layer types, experts and mixer sizes are errors naming the field",
          "[hf_config][granite_hybrid]") {
  Json cfg = h_tiny();
  cfg["layer_types"].erase(cfg["layer_types"].size() - 1);
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.layer_types",
                      "has 39 entries, but num_hidden_layers is 40");
  cfg = h_tiny();
  cfg["layer_types"][7] = "mlp";
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.layer_types[7]",
                      "\"mamba\" or \"attention\"");
  cfg = h_tiny();
  cfg["num_experts_per_tok"] = 65;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.num_experts_per_tok",
                      "at most num_local_experts (64)");
  cfg = h_tiny();
  cfg["num_local_experts"] = 1;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.num_local_experts",
                      "a single routed expert");
  cfg = h_tiny();
  cfg["position_embedding_type"] = "alibi";
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.position_embedding_type",
                      "\"rope\", \"nope\"");
  cfg = h_tiny();
  cfg["mamba_d_head"] = 32;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.mamba_d_head", "must equal mamba_expand");
  cfg = h_tiny();
  cfg["mamba_n_heads"] = 50;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.mamba_n_heads", "must divide mamba_expand");
  cfg = h_tiny();
  cfg["mamba_n_groups"] = 5;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.mamba_n_groups",
                      "must divide mamba_n_heads (48)");
  cfg = h_tiny();
  cfg["hidden_act"] = "gelu";
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.hidden_act", "SiLU only");
  cfg = h_tiny();
  cfg["num_key_value_heads"] = 5;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.num_key_value_heads", "");
}

TEST_CASE("granitemoehybrid: mamba_d_head \"auto\" and absent layer_types follow GraniteMoeHybridConfig",
          "[hf_config][granite_hybrid]") {
  Json cfg = h_tiny();
  cfg["mamba_d_head"] = "auto";  // expand x hidden / heads = 3072 / 48 = 64, as given
  CHECK(testutil::hf_network(cfg).parameters() == granite_formula(h_tiny()).total);
  cfg.erase("layer_types");  // layers_block_type: every layer Mamba
  std::string mixers;
  for (const Json& l : testutil::hf_flat_layers(cfg)) {
    if (l["type"] == "mamba") mixers += 'M';
    if (l["type"] == "attention") mixers += '*';
  }
  CHECK(mixers == std::string(40, 'M'));
}
