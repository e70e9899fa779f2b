// The 2025 decoders of types_recent.cpp (GLM-4 / GLM-4.5, Seed-OSS, SmolLM3, EXAONE 4.0, Command R7B, OLMoE,
// StarCoder) against parameter counts written out here from the transformers modules' __init__ (embeddings,
// attention, MLP or experts, norms, head), independently of the core; active parameters for the mixtures of
// experts; training matrix FLOPs per token within 2% of 6 (N_active - lookup) + 12 s A (as
// test_hf_real_configs.cpp: C = 6N plus the causal scores and P V); published counts where a model card gives
// them; and bad input naming the field. Configs are the fixtures of tests/fixtures/hf/recent (SOURCES.md) or,
// where no faithful copy was found, written below from the sizes the model cards and transformers' configuration
// classes state (each says which).
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "arch_form_roundtrip.hpp"
#include "helpers.hpp"
#include "hf_fixtures.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/error.hpp"

using namespace prenet;

namespace {

double num(const Json& c, const char* key, double fallback) {
  auto it = c.find(key);
  if (it == c.end() || it->is_null()) return fallback;
  if (it->is_boolean()) return it->get<bool>() ? 1 : 0;
  return it->get<double>();
}

bool on(const Json& c, const char* key, bool fallback) {
  auto it = c.find(key);
  if (it == c.end() || it->is_null()) return fallback;
  return it->get<bool>();
}

double linear(double in, double out, bool bias) { return in * out + (bias ? out : 0); }

/// A formula's answer: all parameters, a token's share (routed experts it skips left out), the parameters only
/// indexed (untied input table, position table) and A = sum over layers of heads x head_dim.
struct Expected {
  double total = 0, active = 0, lookup = 0, attention_width = 0;
};

/// How one family's modules differ (each field names the transformers module it stands for).
struct Family {
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  int norms_per_layer = 2;  // RMSNorm / bias-free LayerNorm weights of hidden_size each
  int qk_norm = 0;          // 0 none; 1 RMSNorm(head_dim) for q and for k; 2 over the whole q and k projections
  bool tied = false;
};

/// A decoder built like LlamaForCausalLM from `f`, with routed experts where the config has them:
/// `first_dense` dense layers, then layers of `E` experts of width `Ie` (top `k`), a router [E, h] without bias and
/// `shared` x Ie of shared SwiGLU expert.
struct Experts {
  double E = 0, k = 0, Ie = 0, shared = 0;
  int first_dense = 0;
};

Expected decoder(const Json& c, const Family& f, double head_dim_default, const Experts& x = {}) {
  const double V = num(c, "vocab_size", 0), h = num(c, "hidden_size", 0), I = num(c, "intermediate_size", 0);
  const int L = static_cast<int>(num(c, "num_hidden_layers", 0));
  const double H = num(c, "num_attention_heads", 0), kv = num(c, "num_key_value_heads", H);
  const double d = num(c, "head_dim", head_dim_default > 0 ? head_dim_default : h / H);
  const double attention = linear(h, H * d, f.qkv_bias) + 2 * linear(h, kv * d, f.qkv_bias) +
                           linear(H * d, h, f.o_bias) +
                           (f.qk_norm == 1   ? 2 * d
                            : f.qk_norm == 2 ? (H + kv) * d
                                             : 0);
  const double common = attention + f.norms_per_layer * h;
  const double dense = 2 * linear(h, I, f.mlp_bias) + linear(I, h, f.mlp_bias);  // gate_proj, up_proj, down_proj
  Expected e;
  e.total = V * h + (f.tied ? 0 : V * h) + h;  // embed_tokens, lm_head, final norm
  e.active = e.total;
  for (int i = 0; i < L; ++i) {
    if (x.E > 0 && i >= x.first_dense) {
      const double moe = h * x.E + 3 * h * x.Ie * x.shared;
      e.total += common + moe + x.E * 3 * h * x.Ie;
      e.active += common + moe + x.k * 3 * h * x.Ie;
    } else {
      e.total += common + dense;
      e.active += common + dense;
    }
  }
  e.lookup = f.tied ? 0 : V * h;
  e.attention_width = L * H * d;
  return e;
}

// Glm4MoeForCausalLM: Glm4MoeAttention (q/k/v bias=attention_bias, o_proj without; q_norm/k_norm of head_dim when
// use_qk_norm), Glm4MoeMLP for layer < first_k_dense_replace, else Glm4MoeMoE (experts, Glm4MoeTopkRouter weight
// [E, h], shared_experts of moe_intermediate_size x n_shared_experts). The nextn (MTP) layer is not built.
Expected glm4_moe(const Json& c) {
  Family f;
  f.qkv_bias = on(c, "attention_bias", false);
  f.qk_norm = on(c, "use_qk_norm", false) ? 1 : 0;
  Experts x;
  x.E = num(c, "n_routed_experts", 128);
  x.k = num(c, "num_experts_per_tok", 8);
  x.Ie = num(c, "moe_intermediate_size", 1408);
  x.shared = num(c, "n_shared_experts", 1);
  x.first_dense = static_cast<int>(num(c, "first_k_dense_replace", 1));
  return decoder(c, f, 0, x);
}

// Glm4ForCausalLM / GlmForCausalLM: GlmAttention (q/k/v bias=attention_bias, default true; o_proj without),
// Phi3MLP's fused gate_up_proj; Glm4DecoderLayer has four RMSNorms (input, post_self_attn, post_attention,
// post_mlp), GlmDecoderLayer two.
Expected glm(const Json& c, bool four_norms) {
  Family f;
  f.qkv_bias = on(c, "attention_bias", true);
  f.norms_per_layer = four_norms ? 4 : 2;
  return decoder(c, f, 128);
}

// SeedOssForCausalLM: q/k/v bias=attention_bias (true), o_proj bias=attention_out_bias (false), MLP mlp_bias.
Expected seed_oss(const Json& c) {
  Family f;
  f.qkv_bias = on(c, "attention_bias", true);
  f.o_bias = on(c, "attention_out_bias", false);
  f.mlp_bias = on(c, "mlp_bias", false);
  return decoder(c, f, 128);
}

// SmolLM3ForCausalLM: LlamaAttention (all four bias=attention_bias), tied head by default; NoPE adds nothing.
Expected smollm3(const Json& c) {
  Family f;
  f.qkv_bias = f.o_bias = on(c, "attention_bias", false);
  f.mlp_bias = on(c, "mlp_bias", false);
  f.tied = on(c, "tie_word_embeddings", true);
  return decoder(c, f, 0);
}

// Exaone4ForCausalLM: Exaone4Attention (no biases, q_norm/k_norm of head_dim), Olmo2DecoderLayer (two norms,
// after the branches), untied unless tie_word_embeddings.
Expected exaone4(const Json& c) {
  Family f;
  f.qk_norm = 1;
  f.tied = on(c, "tie_word_embeddings", false);
  return decoder(c, f, 0);
}

// Olmo3ForCausalLM: Olmo2's layer (q_norm over heads x head_dim and k_norm over kv heads x head_dim, two norms
// after the branches), no biases, untied unless tie_word_embeddings; sliding layers add no parameters.
Expected olmo3(const Json& c) {
  Family f;
  f.qk_norm = 2;
  f.tied = on(c, "tie_word_embeddings", false);
  return decoder(c, f, 0);
}

// Cohere2ForCausalLM: one Cohere2LayerNorm (weight only) per layer, q/k/v/o bias=attention_bias, tied head.
Expected cohere2(const Json& c) {
  Family f;
  f.qkv_bias = f.o_bias = on(c, "attention_bias", false);
  f.norms_per_layer = 1;
  f.tied = on(c, "tie_word_embeddings", true);
  return decoder(c, f, 0);
}

// Ernie4_5ForCausalLM: q/k/v/o and gate/up/down biased by use_bias (false), head_dim 128, tied by default.
Expected ernie4_5(const Json& c) {
  Family f;
  f.qkv_bias = f.o_bias = f.mlp_bias = on(c, "use_bias", false);
  f.tied = on(c, "tie_word_embeddings", true);
  return decoder(c, f, 128);
}

// HunYuanDenseV1ForCausalLM: LlamaAttention (bias=attention_bias) with query_layernorm / key_layernorm of head_dim
// always, an unbiased MLP, untied unless tie_word_embeddings.
Expected hunyuan_dense(const Json& c) {
  Family f;
  f.qkv_bias = f.o_bias = on(c, "attention_bias", false);
  f.qk_norm = 1;
  f.tied = on(c, "tie_word_embeddings", false);
  return decoder(c, f, 0);
}

// OlmoeForCausalLM: q_norm RMSNorm(hidden), k_norm RMSNorm(kv_heads x head_dim), every layer OlmoeSparseMoeBlock
// (gate [E, h] without bias, num_experts OlmoeMLP of intermediate_size).
Expected olmoe(const Json& c) {
  Family f;
  f.qkv_bias = f.o_bias = on(c, "attention_bias", false);
  f.qk_norm = 2;
  Experts x;
  x.E = num(c, "num_experts", 64);
  x.k = num(c, "num_experts_per_tok", 8);
  x.Ie = num(c, "intermediate_size", 2048);
  return decoder(c, f, 0, x);
}

// GPTBigCodeForCausalLM: wte, wpe (n_positions), per block ln_1, c_attn h -> h + 2 head_dim (multi_query) with
// bias, c_proj with bias, ln_2, c_fc / c_proj (n_inner) with biases (LayerNorms with bias); ln_f; lm_head tied.
Expected gpt_bigcode(const Json& c) {
  const double V = num(c, "vocab_size", 0), h = num(c, "n_embd", 0), L = num(c, "n_layer", 0);
  const double H = num(c, "n_head", 0), P = num(c, "n_positions", 1024), I = num(c, "n_inner", 4 * h);
  const double kv_width = on(c, "multi_query", true) ? 2 * (h / H) : 2 * h;
  const double block =
      2 * h + linear(h, h + kv_width, true) + linear(h, h, true) + 2 * h + linear(h, I, true) + linear(I, h, true);
  Expected e;
  e.total = (V + P) * h + L * block + 2 * h;
  e.active = e.total;
  e.lookup = P * h;
  e.attention_width = L * h;
  return e;
}

/// One configuration to check: its formula, and a published total (and active count) where a source gives one.
struct Case {
  const char* name;
  Json config;
  Expected expected;
  double published_total = 0, published_active = 0, tolerance = 0;
  const char* source = "";
  int tables_left_out = 0;  // vocabulary x hidden tables the published active count leaves out (GLM-4.5: both)
};

/// GLM-4.5 (355B-A32B) as the Megatron-Bridge docs and the model card list it (no faithful config.json found).
Json glm45() {
  return {{"architectures", {"Glm4MoeForCausalLM"}},
          {"model_type", "glm4_moe"},
          {"attention_bias", true},
          {"first_k_dense_replace", 3},
          {"head_dim", 128},
          {"hidden_act", "silu"},
          {"hidden_size", 5120},
          {"intermediate_size", 12288},
          {"max_position_embeddings", 131072},
          {"moe_intermediate_size", 1536},
          {"n_group", 1},
          {"n_routed_experts", 160},
          {"n_shared_experts", 1},
          {"num_attention_heads", 96},
          {"num_experts_per_tok", 8},
          {"num_hidden_layers", 92},
          {"num_key_value_heads", 8},
          {"num_nextn_predict_layers", 1},
          {"partial_rotary_factor", 0.5},
          {"rms_norm_eps", 1e-5},
          {"rope_theta", 1000000},
          {"routed_scaling_factor", 2.5},
          {"tie_word_embeddings", false},
          {"topk_group", 1},
          {"use_qk_norm", true},
          {"vocab_size", 151552}};
}

std::vector<Case> cases() {
  const Json glm4 = testutil::read_fixture("recent/THUDM--GLM-4-9B-0414.json");
  const Json air = testutil::read_fixture("recent/zai-org--GLM-4.5-Air.json");
  // THUDM/glm-4-9b-chat-hf (model_type glm), sizes of its card and GlmConfig's defaults.
  const Json glm_chat = {{"model_type", "glm"},     {"hidden_size", 4096},         {"intermediate_size", 13696},
                         {"num_hidden_layers", 40}, {"num_attention_heads", 32},   {"num_key_value_heads", 2},
                         {"head_dim", 128},         {"attention_bias", true},      {"partial_rotary_factor", 0.5},
                         {"vocab_size", 151552},    {"hidden_act", "silu"},        {"rms_norm_eps", 1.5625e-07},
                         {"rope_theta", 10000.0},   {"tie_word_embeddings", false}};
  // ByteDance-Seed/Seed-OSS-36B-Instruct, sizes as listed by a port's test of its config.json and SeedOssConfig's
  // bias and dropout defaults.
  const Json seed = {{"model_type", "seed_oss"},
                     {"hidden_size", 5120},
                     {"num_hidden_layers", 64},
                     {"intermediate_size", 27648},
                     {"num_attention_heads", 80},
                     {"num_key_value_heads", 8},
                     {"head_dim", 128},
                     {"rms_norm_eps", 1e-6},
                     {"vocab_size", 155136},
                     {"rope_theta", 1e7},
                     {"max_position_embeddings", 524288},
                     {"tie_word_embeddings", false},
                     {"attention_bias", true},
                     {"attention_out_bias", false},
                     {"attention_dropout", 0.1},
                     {"residual_dropout", 0.1},
                     {"hidden_act", "silu"}};
  // HuggingFaceTB/SmolLM3-3B, sizes as its card and ports list them (NoPE every fourth layer).
  const Json smol = {{"model_type", "smollm3"},     {"hidden_size", 2048},
                     {"intermediate_size", 11008},  {"num_hidden_layers", 36},
                     {"num_attention_heads", 16},   {"num_key_value_heads", 4},
                     {"vocab_size", 128256},        {"rms_norm_eps", 1e-6},
                     {"rope_theta", 5e6},           {"max_position_embeddings", 65536},
                     {"tie_word_embeddings", true}, {"no_rope_layer_interval", 4},
                     {"use_sliding_window", false}, {"sliding_window", nullptr},
                     {"hidden_act", "silu"}};
  // LGAI-EXAONE/EXAONE-4.0-32B and 1.2B, sizes of their cards (30.95B and 1.07B without embeddings).
  const Json exa32 = {{"model_type", "exaone4"},
                      {"hidden_size", 5120},
                      {"intermediate_size", 27392},
                      {"num_hidden_layers", 64},
                      {"num_attention_heads", 40},
                      {"num_key_value_heads", 8},
                      {"head_dim", 128},
                      {"vocab_size", 102400},
                      {"rms_norm_eps", 1e-5},
                      {"rope_theta", 1e6},
                      {"sliding_window", 4096},
                      {"sliding_window_pattern", "LLLG"},
                      {"max_position_embeddings", 131072},
                      {"tie_word_embeddings", false},
                      {"hidden_act", "silu"}};
  const Json exa12 = {{"model_type", "exaone4"},
                      {"hidden_size", 2048},
                      {"intermediate_size", 4096},
                      {"num_hidden_layers", 30},
                      {"num_attention_heads", 32},
                      {"num_key_value_heads", 8},
                      {"head_dim", 64},
                      {"vocab_size", 102400},
                      {"rms_norm_eps", 1e-5},
                      {"rope_theta", 1e6},
                      {"sliding_window", nullptr},
                      {"max_position_embeddings", 65536},
                      {"tie_word_embeddings", true},
                      {"hidden_act", "silu"}};
  // CohereLabs/c4ai-command-r7b-12-2024, sizes of its card.
  const Json r7b = {{"model_type", "cohere2"}, {"hidden_size", 4096},         {"intermediate_size", 14336},
                    {"num_hidden_layers", 32}, {"num_attention_heads", 32},   {"num_key_value_heads", 8},
                    {"vocab_size", 256000},    {"layer_norm_eps", 1e-5},      {"rope_theta", 50000.0},
                    {"sliding_window", 4096},  {"sliding_window_pattern", 4}, {"max_position_embeddings", 8192},
                    {"hidden_act", "silu"}};
  // baidu/ERNIE-4.5-0.3B-PT: Ernie4_5Config's defaults are this model (its docstring says so).
  const Json ernie = {{"model_type", "ernie4_5"},
                      {"hidden_size", 1024},
                      {"intermediate_size", 3072},
                      {"num_hidden_layers", 18},
                      {"num_attention_heads", 16},
                      {"num_key_value_heads", 2},
                      {"head_dim", 128},
                      {"vocab_size", 103424},
                      {"rms_norm_eps", 1e-5},
                      {"rope_theta", 500000.0},
                      {"use_bias", false},
                      {"tie_word_embeddings", true},
                      {"max_position_embeddings", 131072},
                      {"hidden_act", "silu"}};
  Json with_bias = ernie;
  with_bias["use_bias"] = true;
  // tencent/Hunyuan-7B-Instruct, sizes as a TensorRT-LLM port's bundled config class gives them (tied, use_qk_norm).
  const Json hunyuan = {{"model_type", "hunyuan_v1_dense"},
                        {"hidden_size", 4096},
                        {"intermediate_size", 14336},
                        {"num_hidden_layers", 32},
                        {"num_attention_heads", 32},
                        {"num_key_value_heads", 8},
                        {"head_dim", 128},
                        {"vocab_size", 128167},
                        {"rms_norm_eps", 1e-5},
                        {"rope_theta", 10000.0},
                        {"use_qk_norm", true},
                        {"rope_scaling", {{"type", "dynamic"}, {"alpha", 1000.0}, {"factor", 1.0}}},
                        {"tie_word_embeddings", true},
                        {"attention_bias", false},
                        {"max_position_embeddings", 32768},
                        {"hidden_act", "silu"}};
  // allenai/OLMoE-1B-7B-0924, sizes as the ports quoting its config.json list them.
  const Json olmoe_cfg = {{"model_type", "olmoe"},
                          {"hidden_size", 2048},
                          {"intermediate_size", 1024},
                          {"num_hidden_layers", 16},
                          {"num_attention_heads", 16},
                          {"num_key_value_heads", 16},
                          {"num_experts", 64},
                          {"num_experts_per_tok", 8},
                          {"vocab_size", 50304},
                          {"rms_norm_eps", 1e-5},
                          {"rope_theta", 10000.0},
                          {"max_position_embeddings", 4096},
                          {"tie_word_embeddings", false},
                          {"clip_qkv", nullptr},
                          {"hidden_act", "silu"}};
  // bigcode/starcoder (StarCoder 15.5B), sizes of its card and GPTBigCodeConfig.
  const Json starcoder = {{"model_type", "gpt_bigcode"},
                          {"n_embd", 6144},
                          {"n_layer", 40},
                          {"n_head", 48},
                          {"n_positions", 8192},
                          {"n_inner", 24576},
                          {"vocab_size", 49152},
                          {"multi_query", true},
                          {"layer_norm_epsilon", 1e-5},
                          {"activation_function", "gelu_pytorch_tanh"}};
  // OLMo 3: the shape a public port's config test quotes for Olmo3ForCausalLM (hidden 4096, 32 heads and 32
  // key/value heads, sliding_window 4096, three sliding layers then one full, YaRN rope_scaling), 8 layers; the
  // MLP and vocabulary of the OLMo 2 7B fixture. No published count is claimed for it.
  const Json olmo3_cfg = {{"architectures", {"Olmo3ForCausalLM"}},
                          {"model_type", "olmo3"},
                          {"hidden_size", 4096},
                          {"intermediate_size", 11008},
                          {"num_hidden_layers", 8},
                          {"num_attention_heads", 32},
                          {"num_key_value_heads", 32},
                          {"vocab_size", 100352},
                          {"rms_norm_eps", 1e-6},
                          {"rope_theta", 500000},
                          {"sliding_window", 4096},
                          {"layer_types",
                           {"sliding_attention", "sliding_attention", "sliding_attention", "full_attention",
                            "sliding_attention", "sliding_attention", "sliding_attention", "full_attention"}},
                          {"rope_scaling",
                           {{"attention_factor", 1.2079441541679836},
                            {"beta_fast", 32.0},
                            {"beta_slow", 1.0},
                            {"factor", 8.0},
                            {"original_max_position_embeddings", 8192},
                            {"rope_type", "yarn"}}},
                          {"max_position_embeddings", 65536},
                          {"tie_word_embeddings", false},
                          {"hidden_act", "silu"}};
  return {
      {"OLMo 3 shape (olmo3)", olmo3_cfg, olmo3(olmo3_cfg)},
      {"GLM-4-9B-0414 (glm4)", glm4, glm(glm4, true), 9.4e9, 0, 0.005, "THUDM/GLM-4-9B-0414 card: 9B (Hub: 9.4B)"},
      {"glm-4-9b-chat-hf (glm)", glm_chat, glm(glm_chat, false), 9.4e9, 0, 0.005, "THUDM/glm-4-9b-chat-hf: 9.4B"},
      {"GLM-4.5-Air (glm4_moe)", air, glm4_moe(air), 106e9, 12e9, 0.02,
       "GLM-4.5 card: 106B total (with the MTP layer, not built here), 12B active (without the two vocabulary tables)",
       2},
      {"GLM-4.5 (glm4_moe)", glm45(), glm4_moe(glm45()), 355e9, 32e9, 0.03,
       "GLM-4.5 card: 355B total (with the MTP layer, ~2.5B, that transformers does not build), 32B active (without "
       "the two vocabulary tables)",
       2},
      {"Seed-OSS-36B (seed_oss)", seed, seed_oss(seed), 36e9, 0, 0.01, "Seed-OSS card: 36B"},
      {"SmolLM3-3B (smollm3)", smol, smollm3(smol), 3.08e9, 0, 0.005, "SmolLM3-3B Hub: 3.08B"},
      {"EXAONE-4.0-32B (exaone4)", exa32, exaone4(exa32), 0, 30.95e9, 0.001,
       "EXAONE-4.0-32B card: 30.95B without embeddings (both tables)", 2},
      {"EXAONE-4.0-1.2B (exaone4)", exa12, exaone4(exa12), 1.28e9, 1.07e9, 0.005,
       "EXAONE-4.0-1.2B card: 1.28B, 1.07B without embeddings (one, tied, table)", 1},
      {"Command R7B (cohere2)", r7b, cohere2(r7b), 8.03e9, 0, 0.005, "c4ai-command-r7b-12-2024 Hub: 8.03B"},
      {"ERNIE-4.5-0.3B (ernie4_5)", ernie, ernie4_5(ernie), 0.36e9, 0, 0.005, "ERNIE-4.5-0.3B card: 0.36B"},
      {"ERNIE-4.5-0.3B with use_bias (ernie4_5)", with_bias, ernie4_5(with_bias)},
      {"Hunyuan-7B (hunyuan_v1_dense)", hunyuan, hunyuan_dense(hunyuan)},
      {"OLMoE-1B-7B-0924 (olmoe)", olmoe_cfg, olmoe(olmoe_cfg), 6.92e9, 1.28e9, 0.01,
       "OLMoE paper (arXiv 2409.02060): 6.9B total, 1.3B active"},
      {"StarCoder (gpt_bigcode)", starcoder, gpt_bigcode(starcoder), 15.5e9, 0, 0.005, "bigcode/starcoder: 15.5B"},
  };
}

/// The error `cfg` is refused with ("" if it is read).
std::string refusal(const Json& cfg) {
  try {
    resolve_model({{"hf_config", cfg}}, TrainingConfig{});
  } catch (const InputError& err) {
    return err.what();
  }
  return "";
}

}  // namespace

TEST_CASE("2025 decoders: parameters, active parameters and training FLOPs per token, by formula", "[hf_recent]") {
  const std::int64_t s = 128;  // a short context, under every sliding window here
  for (const Case& k : cases()) {
    INFO(k.name);
    TrainingConfig training;
    training.seq_len = s;
    Network net = resolve_model({{"hf_config", k.config}}, training);
    for (const auto& w : net.warnings) {
      INFO("warning: " << w);
      CHECK(w.find("not in the table") == std::string::npos);  // read by its row, not generically
    }
    const Expected& e = k.expected;
    const double params = testutil::d(net.parameters()), active = testutil::d(net.active_parameters());
    StepWork w = step_work(net, 2, KernelContext(Precision::FP32), Optimizer::Adam);
    const double per_token =
        (testutil::matmul_flops(w, Phase::Forward) + testutil::matmul_flops(w, Phase::Backward)) / (2.0 * s);
    const double expected_flops = 6 * (e.active - e.lookup) + 12 * testutil::d(s) * e.attention_width;
    INFO("formula " << std::fixed << e.total << " / active " << e.active << "; core " << params << " / active "
                    << active << "; FLOPs per token " << per_token << " vs " << expected_flops);
    CHECK(params == e.total);
    CHECK(active == e.active);
    CHECK(per_token == Approx(expected_flops).epsilon(0.02));
  }
}

TEST_CASE("2025 decoders: the formulas agree with the published counts", "[hf_recent]") {
  for (const Case& k : cases()) {
    if (k.published_total <= 0 && k.published_active <= 0) continue;
    INFO(k.name << ": " << k.source << "; formula " << std::fixed << k.expected.total << " / active "
                << k.expected.active);
    if (k.published_total > 0) CHECK(k.expected.total == Approx(k.published_total).epsilon(k.tolerance));
    const double tables = k.tables_left_out * num(k.config, "vocab_size", 0) * num(k.config, "hidden_size", 0);
    if (k.published_active > 0) CHECK(k.expected.active - tables == Approx(k.published_active).epsilon(k.tolerance));
  }
}

TEST_CASE("2025 decoders: layer patterns as the configuration classes derive them", "[hf_recent]") {
  const Json small = {{"hidden_size", 64},
                      {"intermediate_size", 128},
                      {"num_hidden_layers", 8},
                      {"num_attention_heads", 4},
                      {"num_key_value_heads", 2},
                      {"vocab_size", 100},
                      {"max_position_embeddings", 256}};
  TrainingConfig training;
  training.seq_len = 64;
  // The attention layers sliding over `window` keys, and those attending to all.
  auto spans = [&](const Json& cfg, std::int64_t window) {
    std::pair<int, int> n{0, 0};
    for (const auto& l : resolve_model({{"hf_config", cfg}}, training).layers) {
      if (l.type != LayerType::Attention) continue;
      if (l.attrs.window == window) ++n.first;
      if (l.attrs.window == 0) ++n.second;
    }
    return n;
  };
  // Cohere2Config: sliding unless (i + 1) % sliding_window_pattern == 0 (4): 6 sliding, 2 full of 8.
  Json r7b = small;
  r7b["model_type"] = "cohere2";
  r7b["sliding_window"] = 32;
  CHECK(spans(r7b, 32) == std::pair<int, int>{6, 2});
  // EXAONE 4 "LLLG" repeated from layer 0, the last layer global: L L L G L L L G, and "LG": L G L G L G L G.
  Json exa = small;
  exa["model_type"] = "exaone4";
  exa["sliding_window"] = 32;
  exa["sliding_window_pattern"] = "LLLG";
  CHECK(spans(exa, 32) == std::pair<int, int>{6, 2});
  exa["sliding_window_pattern"] = "LLLLLLLL";  // every layer local but the last
  CHECK(spans(exa, 32) == std::pair<int, int>{7, 1});
  exa["sliding_window_pattern"] = 2;
  CHECK(spans(exa, 32) == std::pair<int, int>{4, 4});
  exa["sliding_window"] = nullptr;  // no sliding window: every layer full
  CHECK(spans(exa, 32) == std::pair<int, int>{0, 8});
  // OLMo 3 (Olmo3Config): three sliding layers of sliding_window (4096 when absent), then one full; or layer_types.
  Json olmo = small;
  olmo["model_type"] = "olmo3";
  CHECK(spans(olmo, 4096) == std::pair<int, int>{6, 2});
  olmo["sliding_window"] = 32;
  olmo["layer_types"] = {"full_attention",    "sliding_attention", "full_attention",    "sliding_attention",
                         "sliding_attention", "full_attention",    "sliding_attention", "full_attention"};
  CHECK(spans(olmo, 32) == std::pair<int, int>{4, 4});
  // SmolLM3: with use_sliding_window, the NoPE layers (every fourth) slide; without it, none does.
  Json smol = small;
  smol["model_type"] = "smollm3";
  smol["sliding_window"] = 32;
  CHECK(spans(smol, 32) == std::pair<int, int>{0, 8});
  smol["use_sliding_window"] = true;
  CHECK(spans(smol, 32) == std::pair<int, int>{2, 6});
}

TEST_CASE("2025 decoders: bad input is refused naming the field", "[hf_recent]") {
  const Json air = testutil::read_fixture("recent/zai-org--GLM-4.5-Air.json");
  Json c = air;
  c["num_experts_per_tok"] = 129;  // above n_routed_experts
  CHECK(refusal(c).find("model.hf_config.num_experts_per_tok") != std::string::npos);
  c = air;
  c["first_k_dense_replace"] = 47;
  CHECK(refusal(c).find("model.hf_config.first_k_dense_replace") != std::string::npos);
  c = air;
  c["partial_rotary_factor"] = 0;
  CHECK(refusal(c).find("model.hf_config.partial_rotary_factor") != std::string::npos);

  const Json small = {{"hidden_size", 64},        {"intermediate_size", 128}, {"num_hidden_layers", 4},
                      {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"vocab_size", 100}};
  Json r7b = small;
  r7b["model_type"] = "cohere2";
  r7b["layer_types"] = {"sliding_attention", "full_attention"};  // 2 entries for 4 layers
  CHECK(refusal(r7b).find("model.hf_config.layer_types") != std::string::npos);
  r7b["layer_types"] = {"sliding_attention", "sliding_attention", "sliding_attention", "global"};
  CHECK(refusal(r7b).find("model.hf_config.layer_types[3]") != std::string::npos);

  Json smol = small;
  smol["model_type"] = "smollm3";
  smol["no_rope_layers"] = {1, 1, 0};  // 3 entries for 4 layers
  CHECK(refusal(smol).find("model.hf_config.no_rope_layers") != std::string::npos);
  smol["no_rope_layers"] = {1, 1, 2, 0};
  CHECK(refusal(smol).find("model.hf_config.no_rope_layers[2]") != std::string::npos);

  Json exa = small;
  exa["model_type"] = "exaone4";
  exa["sliding_window"] = 32;
  exa["sliding_window_pattern"] = "LXG";
  CHECK(refusal(exa).find("model.hf_config.sliding_window_pattern") != std::string::npos);

  Json moe = small;
  moe["model_type"] = "olmoe";
  moe["num_experts"] = 4;
  moe["num_experts_per_tok"] = 5;
  CHECK(refusal(moe).find("model.hf_config.num_experts_per_tok") != std::string::npos);
}

TEST_CASE("2025 decoders: DeepSeek-V3.2's and GLM-5's sparse attention is refused, not read as DeepSeek-V3",
          "[hf_recent]") {
  // deepseek-ai/DeepSeek-V3.2-Exp's config.json as transformers ships it (src/transformers/models/deepseek_v32/
  // deepseek_files/config.json): DeepSeek-V3's fields plus the indexer's.
  Json v32 = {{"model_type", "deepseek_v32"},
              {"hidden_size", 7168},
              {"num_hidden_layers", 61},
              {"num_attention_heads", 128},
              {"vocab_size", 129280},
              {"intermediate_size", 18432},
              {"q_lora_rank", 1536},
              {"kv_lora_rank", 512},
              {"qk_nope_head_dim", 128},
              {"qk_rope_head_dim", 64},
              {"v_head_dim", 128},
              {"n_routed_experts", 256},
              {"num_experts_per_tok", 8},
              {"moe_intermediate_size", 2048},
              {"index_n_heads", 64},
              {"index_head_dim", 128},
              {"index_topk", 2048}};
  const std::string v32_error = refusal(v32);
  CHECK(v32_error.find("model.hf_config.model_type") == 0);
  CHECK(v32_error.find("DeepSeek Sparse Attention") != std::string::npos);
  v32["model_type"] = "glm_moe_dsa";
  CHECK(refusal(v32).find("\"glm_moe_dsa\" is not supported") != std::string::npos);
}

TEST_CASE("2025 decoders: under another model_type the generic reader refuses them rather than misread them",
          "[hf_recent]") {
  // Before their rows, glm4 and glm were read as Llamas with a biased o_proj (and glm4 without its two extra norms
  // per layer), seed_oss with a biased o_proj: wrong counts, no error. A fine-tune under a new model_type now stops
  // at the field that gives the family away.
  Json glm4 = testutil::read_fixture("recent/THUDM--GLM-4-9B-0414.json");
  glm4["model_type"] = "glm4_finetune";
  CHECK(refusal(glm4).find("model.hf_config.partial_rotary_factor") != std::string::npos);
  Json seed = {{"model_type", "seed_oss_finetune"},
               {"hidden_act", "silu"},
               {"hidden_size", 512},
               {"intermediate_size", 1024},
               {"num_hidden_layers", 2},
               {"num_attention_heads", 8},
               {"num_key_value_heads", 2},
               {"head_dim", 64},
               {"rms_norm_eps", 1e-6},
               {"rope_theta", 1e7},
               {"vocab_size", 1000},
               {"attention_bias", true},
               {"attention_out_bias", false}};
  CHECK(refusal(seed).find("model.hf_config.attention_out_bias") != std::string::npos);
  Json hybrid = seed;
  hybrid.erase("attention_out_bias");
  hybrid["model_type"] = "some_gated_deltanet_hybrid";
  hybrid["full_attention_interval"] = 4;
  CHECK(refusal(hybrid).find("model.hf_config.full_attention_interval") != std::string::npos);
}

TEST_CASE("2025 decoders: each echoes its architecture, which builds the same model", "[hf_recent][arch_json]") {
  // Their rows fill only the decoder Arch's fields, so the architecture form must carry every one of them: a
  // pattern or switch the form lost would change the layers or the response here.
  for (const Case& k : cases()) {
    INFO(k.name);
    testutil::check_arch_round_trip({{"hf_config", k.config}}, "decoder", 128);
  }
}
