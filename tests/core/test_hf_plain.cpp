// The decoders of types_plain.cpp (phi3, olmo, granite, internlm2, mpt) and the Falcon variants: parameter
// counts against a formula written out here from each Hugging Face class's __init__, and bad input errors that
// name the field.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "onnx_writer.hpp"
#include "prenet/api.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/keras.hpp"
#include "prenet/layer_list.hpp"
#include "prenet/onnx_model.hpp"

using namespace prenet;
using testutil::layer;

namespace {

Json fixture(const std::string& name) {
  std::ifstream in(std::string(PRENET_SOURCE_DIR) + "/tests/fixtures/hf/" + name, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str());
}

Network from_config(const Json& config, std::int64_t seq_len = 64, std::vector<std::string>* warnings = nullptr) {
  std::vector<std::string> local;
  Json model = hf_config_to_layers(config, "model.hf_config", seq_len, warnings ? *warnings : local);
  return parse_layer_list(model, "model.hf_config", {});
}

/// The error a config gets through the API: its field, and that the message names it and says `needle`.
void require_error(const Json& config, const std::string& field, const std::string& needle) {
  Json request = {{"model", {{"hf_config", config}}}, {"options", {{"per_layer", false}}}};
  Json r = Json::parse(predict_json(request.dump()));
  INFO(r.dump().substr(0, 600));
  REQUIRE(r.contains("error"));
  CHECK(r["error"]["field"] == field);
  CHECK_THAT(r["error"]["message"].get<std::string>(), Catch::StartsWith(field + ": "));
  CHECK_THAT(r["error"]["message"].get<std::string>(), Catch::Contains(needle));
}

bool any_contains(const std::vector<std::string>& warnings, const std::string& needle) {
  for (const auto& w : warnings) {
    if (w.find(needle) != std::string::npos) return true;
  }
  return false;
}

/// A Llama-style decoder as LlamaForCausalLM and its relatives build it: vocab V, width h, L blocks of
/// q (h x H*d), k and v (h x K*d each), o (H*d x h), a SwiGLU MLP of three h x I matrices, `norm` parameters in
/// each of the block's two norms and the final one; embeddings, and a head of its own unless tied.
std::int64_t llama_like(std::int64_t V, std::int64_t h, std::int64_t L, std::int64_t H, std::int64_t K, std::int64_t d,
                        std::int64_t I, std::int64_t norm, bool tied, bool attn_bias = false) {
  std::int64_t attention = h * H * d + 2 * h * K * d + H * d * h;
  if (attn_bias) attention += H * d + 2 * K * d + h;
  std::int64_t block = attention + 3 * h * I + 2 * norm;
  return V * h * (tied ? 1 : 2) + L * block + norm;
}

/// Falcon as FalconForCausalLM builds it (no biases): query_key_value h x (H + 2K)d, dense h x h,
/// dense_h_to_4h and dense_4h_to_h h x F, `norms` LayerNorms (2h each) per block, ln_f, word_embeddings, lm_head
/// unless tied.
std::int64_t falcon(std::int64_t V, std::int64_t h, std::int64_t L, std::int64_t H, std::int64_t K, std::int64_t F,
                    std::int64_t norms, bool tied) {
  std::int64_t d = h / H;
  std::int64_t block = h * (H + 2 * K) * d + h * h + 2 * h * F + norms * 2 * h;
  return V * h * (tied ? 1 : 2) + L * block + 2 * h;
}

}  // namespace

// ---- phi3 -----------------------------------------------------------------------------------------------

TEST_CASE("phi3: Phi-3-mini-4k-instruct (fixture) counts its fused qkv_proj and gate_up_proj exactly",
          "[hf_config][hf_plain]") {
  Json cfg = fixture("microsoft--Phi-3-mini-4k-instruct.json");
  std::vector<std::string> warnings;
  Network net = from_config(cfg, 64, &warnings);
  // Phi3Attention.qkv_proj: h x (H + 2K)d, the same as q, k and v apart; Phi3MLP.gate_up_proj: h x 2I.
  std::int64_t expected = llama_like(32064, 3072, 32, 32, 32, 96, 8192, 3072, false);
  CHECK(expected == 3821079552);  // the published 3.8B
  CHECK(net.parameters() == expected);
  CHECK(layer(net, "h.0.sliding_attn").attrs.bias == false);
  CHECK(layer(net, "h.0.mlp_up").attrs.gated);
  CHECK(layer(net, "ln_f").type == LayerType::RmsNorm);
  // sliding_window 2047: each query sees the latest 2047 keys (Phi3Attention passes it to the attention).
  CHECK(layer(net, "h.0.sliding_attn").attrs.window == 2047);
  CHECK_FALSE(any_contains(warnings, "sliding_window"));
}

TEST_CASE("phi3: Phi-3-medium, Phi-4 and Phi-4-mini (GQA, partial rotary, tied head)", "[hf_config][hf_plain]") {
  // microsoft/Phi-3-medium-4k-instruct's config.json fields.
  Json medium = {{"architectures", {"Phi3ForCausalLM"}},
                 {"attention_dropout", 0.0},
                 {"hidden_act", "silu"},
                 {"hidden_size", 5120},
                 {"intermediate_size", 17920},
                 {"max_position_embeddings", 4096},
                 {"model_type", "phi3"},
                 {"num_attention_heads", 40},
                 {"num_hidden_layers", 40},
                 {"num_key_value_heads", 10},
                 {"resid_pdrop", 0.0},
                 {"rms_norm_eps", 1e-05},
                 {"rope_scaling", nullptr},
                 {"sliding_window", 2047},
                 {"tie_word_embeddings", false},
                 {"attention_bias", false},
                 {"vocab_size", 32064}};
  Network m = from_config(medium);
  CHECK(m.parameters() == llama_like(32064, 5120, 40, 40, 10, 128, 17920, 5120, false));
  CHECK(layer(m, "h.0.sliding_attn").attrs.num_kv_heads == 10);
  // microsoft/phi-4: the same shape with a 100,352-token vocabulary: 14.7B.
  Json phi4 = medium;
  phi4["vocab_size"] = 100352;
  phi4["max_position_embeddings"] = 16384;
  phi4["sliding_window"] = nullptr;
  std::vector<std::string> warnings;
  std::int64_t phi4_expected = llama_like(100352, 5120, 40, 40, 10, 128, 17920, 5120, false);
  CHECK(phi4_expected == 14659507200);
  CHECK(from_config(phi4, 64, &warnings).parameters() == phi4_expected);
  CHECK_FALSE(any_contains(warnings, "sliding_window"));
  // microsoft/Phi-4-mini-instruct: 24 heads over 8 KV heads, partial_rotary_factor 0.75 (no parameters), tied
  // head; its config's lm_head_bias and mlp_bias (false) are not read by Phi3ForCausalLM. 3,836,021,760.
  Json mini = {{"model_type", "phi3"},
               {"hidden_size", 3072},
               {"intermediate_size", 8192},
               {"num_hidden_layers", 32},
               {"num_attention_heads", 24},
               {"num_key_value_heads", 8},
               {"vocab_size", 200064},
               {"max_position_embeddings", 131072},
               {"original_max_position_embeddings", 4096},
               {"partial_rotary_factor", 0.75},
               {"sliding_window", 262144},
               {"lm_head_bias", false},
               {"mlp_bias", false},
               {"tie_word_embeddings", true}};
  std::int64_t mini_expected = llama_like(200064, 3072, 32, 24, 8, 128, 8192, 3072, true);
  CHECK(mini_expected == 3836021760);
  warnings.clear();
  CHECK(from_config(mini, 64, &warnings).parameters() == mini_expected);
  CHECK_FALSE(any_contains(warnings, "sliding_window"));  // the window spans every trained position

  Json bad = mini;
  bad["partial_rotary_factor"] = 1.5;
  require_error(bad, "model.hf_config.partial_rotary_factor", "got 1.5");
  bad["partial_rotary_factor"] = 0;
  require_error(bad, "model.hf_config.partial_rotary_factor", "must be in (0, 1]");
  bad = mini;
  bad["sliding_window"] = 0;
  require_error(bad, "model.hf_config.sliding_window", "expected an integer");
  bad = mini;
  bad["num_key_value_heads"] = 7;
  require_error(bad, "model.hf_config.num_key_value_heads", "divide");
}

// ---- olmo -----------------------------------------------------------------------------------------------

TEST_CASE("olmo: OlmoLayerNorm has no parameters at all", "[hf_config][hf_plain]") {
  // allenai/OLMo-7B-hf's config.json fields: 6,888,095,744.
  Json cfg = {{"architectures", {"OlmoForCausalLM"}},
              {"attention_bias", false},
              {"attention_dropout", 0.0},
              {"clip_qkv", nullptr},
              {"hidden_act", "silu"},
              {"hidden_size", 4096},
              {"intermediate_size", 11008},
              {"max_position_embeddings", 2048},
              {"model_type", "olmo"},
              {"num_attention_heads", 32},
              {"num_hidden_layers", 32},
              {"num_key_value_heads", 32},
              {"rope_theta", 10000.0},
              {"tie_word_embeddings", false},
              {"vocab_size", 50304}};
  std::vector<std::string> warnings;
  Network net = from_config(cfg, 64, &warnings);
  std::int64_t expected = llama_like(50304, 4096, 32, 32, 32, 128, 11008, 0, false);
  CHECK(expected == 6888095744);
  CHECK(net.parameters() == expected);
  const Layer& ln = layer(net, "h.0.ln_1");
  CHECK(ln.type == LayerType::LayerNorm);
  CHECK(ln.parameters == 0);
  CHECK(layer(net, "ln_f").parameters == 0);
  CHECK_FALSE(any_contains(warnings, "clip_qkv"));
  // allenai/OLMo-1B-hf: 2048 wide, 16 blocks, tied head: 1,176,764,416.
  Json one_b = cfg;
  one_b["hidden_size"] = 2048;
  one_b["intermediate_size"] = 8192;
  one_b["num_attention_heads"] = 16;
  one_b["num_key_value_heads"] = 16;
  one_b["num_hidden_layers"] = 16;
  one_b["tie_word_embeddings"] = true;
  CHECK(from_config(one_b).parameters() == llama_like(50304, 2048, 16, 16, 16, 128, 8192, 0, true));
  CHECK(from_config(one_b).parameters() == 1176764416);
  // OLMo-7B-0424-hf clips q, k and v at 8: said, not costed.
  cfg["clip_qkv"] = 8.0;
  warnings.clear();
  CHECK(from_config(cfg, 64, &warnings).parameters() == expected);
  CHECK(any_contains(warnings, "clip_qkv"));
  cfg["clip_qkv"] = "8";
  require_error(cfg, "model.hf_config.clip_qkv", "number");
}

// ---- granite --------------------------------------------------------------------------------------------

TEST_CASE("granite: granite-3.3-8b-instruct (fixture), multipliers without parameters", "[hf_config][hf_plain]") {
  Json cfg = fixture("ibm-granite--granite-3.3-8b-instruct.json");
  std::vector<std::string> warnings;
  std::int64_t expected = llama_like(49159, 4096, 40, 32, 8, 128, 12800, 4096, true);
  CHECK(expected == 8170864640);  // the published 8.17B
  CHECK(from_config(cfg, 64, &warnings).parameters() == expected);
  CHECK(any_contains(warnings, "residual_multiplier"));
  cfg["logits_scaling"] = 0;
  require_error(cfg, "model.hf_config.logits_scaling", "not be 0");
  cfg["logits_scaling"] = 16.0;
  cfg["embedding_multiplier"] = "12";
  require_error(cfg, "model.hf_config.embedding_multiplier", "number");
}

// ---- internlm2 ------------------------------------------------------------------------------------------

TEST_CASE("internlm2: fused wqkv with the config's bias, head_dim from the width", "[hf_config][hf_plain]") {
  // internlm/internlm2_5-7b's config.json fields (remote code, InternLM2ForCausalLM): bias false; 7.74B.
  Json cfg = {{"architectures", {"InternLM2ForCausalLM"}},
              {"attn_implementation", "eager"},
              {"bias", false},
              {"hidden_act", "silu"},
              {"hidden_size", 4096},
              {"intermediate_size", 14336},
              {"max_position_embeddings", 32768},
              {"model_type", "internlm2"},
              {"num_attention_heads", 32},
              {"num_hidden_layers", 32},
              {"num_key_value_heads", 8},
              {"rms_norm_eps", 1e-05},
              {"rope_scaling", {{"factor", 2.0}, {"type", "dynamic"}}},
              {"rope_theta", 1000000},
              {"tie_word_embeddings", false},
              {"vocab_size", 92544}};
  std::int64_t expected = llama_like(92544, 4096, 32, 32, 8, 128, 14336, 4096, false);
  CHECK(expected == 7737708544);  // the published 7.74B
  CHECK(from_config(cfg).parameters() == expected);
  // InternLM2Config's default bias is true: wqkv and wo carry biases, the MLP never does.
  cfg.erase("bias");
  CHECK(from_config(cfg).parameters() == llama_like(92544, 4096, 32, 32, 8, 128, 14336, 4096, false, true));
  // InternLM2Attention takes head_dim = hidden_size // num_attention_heads whatever the config says.
  cfg["head_dim"] = 64;
  CHECK(from_config(cfg).parameters() == llama_like(92544, 4096, 32, 32, 8, 128, 14336, 4096, false, true));
  cfg["num_attention_heads"] = 30;
  require_error(cfg, "model.hf_config.num_attention_heads", "divide");
}

// ---- mpt ------------------------------------------------------------------------------------------------

Json mpt_7b() {
  // mosaicml/mpt-7b's config.json fields (transformers' MptConfig reads them).
  return {{"architectures", {"MPTForCausalLM"}},
          {"attn_config",
           {{"alibi", true},
            {"alibi_bias_max", 8},
            {"attn_impl", "torch"},
            {"attn_pdrop", 0},
            {"attn_type", "multihead_attention"},
            {"attn_uses_sequence_id", false},
            {"clip_qkv", nullptr},
            {"prefix_lm", false},
            {"qk_ln", false},
            {"softmax_scale", nullptr}}},
          {"d_model", 4096},
          {"emb_pdrop", 0},
          {"embedding_fraction", 1.0},
          {"expansion_ratio", 4},
          {"init_device", "cpu"},
          {"learned_pos_emb", true},
          {"logit_scale", nullptr},
          {"max_seq_len", 2048},
          {"model_type", "mpt"},
          {"n_heads", 32},
          {"n_layers", 32},
          {"no_bias", true},
          {"norm_type", "low_precision_layernorm"},
          {"resid_pdrop", 0},
          {"vocab_size", 50432}};
}

TEST_CASE("mpt: mpt-7b's d_model, n_layers, n_heads, ALiBi and tied head", "[hf_config][hf_plain]") {
  std::vector<std::string> warnings;
  Network net = from_config(mpt_7b(), 64, &warnings);
  // MptBlock: norm_1, norm_2 (weight only), Wqkv h x 3h, out_proj h x h, up_proj h x 4h, down_proj 4h x h; no
  // biases; norm_f; wte tied to lm_head. 6,649,286,656.
  std::int64_t h = 4096;
  std::int64_t expected = 50432 * h + 32 * (3 * h * h + h * h + 8 * h * h + 2 * h) + h;
  CHECK(expected == 6649286656);
  CHECK(net.parameters() == expected);
  CHECK(layer(net, "h.0.mlp_up").attrs.activation == "gelu");
  CHECK(any_contains(warnings, "ALiBi"));
  // The spellings transformers' attribute_map accepts read the same.
  Json renamed = mpt_7b();
  renamed.erase("d_model");
  renamed.erase("n_layers");
  renamed.erase("n_heads");
  renamed["hidden_size"] = 4096;
  renamed["num_hidden_layers"] = 32;
  renamed["num_attention_heads"] = 32;
  CHECK(from_config(renamed).parameters() == expected);
}

TEST_CASE("mpt: what transformers' MptModel does not build is refused, naming the field", "[hf_config][hf_plain]") {
  Json cfg = mpt_7b();
  cfg["expansion_ratio"] = 8;
  require_error(cfg, "model.hf_config.expansion_ratio", "only 4");
  cfg = mpt_7b();
  cfg["attn_config"]["alibi"] = false;
  require_error(cfg, "model.hf_config.attn_config.alibi", "ALiBi");
  cfg = mpt_7b();
  cfg["attn_config"]["attn_type"] = "grouped_query_attention";
  require_error(cfg, "model.hf_config.attn_config.attn_type", "multihead_attention");
  cfg = mpt_7b();
  cfg["attn_config"]["qk_ln"] = true;
  require_error(cfg, "model.hf_config.attn_config.qk_ln", "QK LayerNorm");
  cfg = mpt_7b();
  cfg["attn_config"] = "torch";
  require_error(cfg, "model.hf_config.attn_config", "object");
  cfg = mpt_7b();
  cfg["no_bias"] = false;
  require_error(cfg, "model.hf_config.no_bias", "no biases");
  cfg = mpt_7b();
  cfg["norm_type"] = "rmsnorm";
  require_error(cfg, "model.hf_config.norm_type", "rmsnorm");
  cfg = mpt_7b();
  cfg["ffn_config"] = {{"ffn_type", "mptglu"}};
  require_error(cfg, "model.hf_config.ffn_config.ffn_type", "mptglu");
  cfg = mpt_7b();
  cfg["n_heads"] = 30;
  require_error(cfg, "model.hf_config.n_heads", "divide");
  cfg = mpt_7b();
  cfg.erase("n_layers");
  require_error(cfg, "model.hf_config.n_layers", "missing");
}

// ---- falcon ---------------------------------------------------------------------------------------------

TEST_CASE("falcon: 11B's one LayerNorm in the new architecture, 40B's two, RW's sequential block",
          "[hf_config][hf_plain]") {
  // tiiuae/falcon-11B (Falcon2): new_decoder_architecture with num_ln_in_parallel_attn 1, 8 KV heads.
  Json f11 = {{"model_type", "falcon"},
              {"alibi", false},
              {"bias", false},
              {"ffn_hidden_size", 16384},
              {"hidden_size", 4096},
              {"max_position_embeddings", 8192},
              {"new_decoder_architecture", true},
              {"num_attention_heads", 32},
              {"num_hidden_layers", 60},
              {"num_kv_heads", 8},
              {"num_ln_in_parallel_attn", 1},
              {"parallel_attn", true},
              {"tie_word_embeddings", false},
              {"vocab_size", 65024}};
  Network n11 = from_config(f11);
  CHECK(n11.parameters() == falcon(65024, 4096, 60, 32, 8, 16384, 1, false));
  CHECK(n11.parameters() == 11102822400);  // the published 11.1B
  CHECK(layer(n11, "h.0.attn").attrs.num_kv_heads == 8);
  // tiiuae/falcon-40b: num_ln_in_parallel_attn absent, so two (ln_attn, ln_mlp): 41,303,293,952.
  Json f40 = {{"model_type", "falcon"},
              {"alibi", false},
              {"bias", false},
              {"hidden_size", 8192},
              {"new_decoder_architecture", true},
              {"num_attention_heads", 128},
              {"num_hidden_layers", 60},
              {"num_kv_heads", 8},
              {"parallel_attn", true},
              {"vocab_size", 65024}};
  CHECK(from_config(f40).parameters() == falcon(65024, 8192, 60, 128, 8, 4 * 8192, 2, true));
  CHECK(from_config(f40).parameters() == 41303293952);
  // tiiuae/falcon-180B: 232 heads over 8 KV heads, two LayerNorms.
  Json f180 = f40;
  f180["hidden_size"] = 14848;
  f180["num_attention_heads"] = 232;
  f180["num_hidden_layers"] = 80;
  CHECK(from_config(f180).parameters() == falcon(65024, 14848, 80, 232, 8, 4 * 14848, 2, true));
  // tiiuae/falcon-rw-1b: sequential blocks (parallel_attn false) with biases and ALiBi, full heads.
  Json rw = {{"model_type", "falcon"},  {"alibi", true},          {"bias", true},
             {"hidden_size", 2048},     {"multi_query", false},   {"num_attention_heads", 32},
             {"num_hidden_layers", 24}, {"parallel_attn", false}, {"vocab_size", 50304}};
  std::int64_t h = 2048;
  std::int64_t rw_block = (3 * h * h + 3 * h) + (h * h + h) + (4 * h * h + 4 * h) + (4 * h * h + h) + 2 * 2 * h;
  CHECK(from_config(rw).parameters() == 50304 * h + 24 * rw_block + 2 * h);
  CHECK(from_config(rw).parameters() == 1311625216);

  Json bad = f11;
  bad["num_ln_in_parallel_attn"] = 3;
  require_error(bad, "model.hf_config.num_ln_in_parallel_attn", "[1, 2]");
  bad = f11;
  bad["parallel_attn"] = false;
  require_error(bad, "model.hf_config.parallel_attn", "new_decoder_architecture");
  bad = rw;
  bad["num_ln_in_parallel_attn"] = 2;
  require_error(bad, "model.hf_config.num_ln_in_parallel_attn", "new_decoder_architecture");
  bad = f40;
  bad["apply_residual_connection_post_layernorm"] = true;
  require_error(bad, "model.hf_config.apply_residual_connection_post_layernorm", "not supported");
  bad = f40;
  bad["num_kv_heads"] = 7;
  require_error(bad, "model.hf_config.num_kv_heads", "divide");
}

// ---- the layer kinds these rows need -------------------------------------------------------------------

TEST_CASE("layernorm and rmsnorm: scale false drops the learned scale", "[layers][hf_plain]") {
  auto params = [](const std::string& norm) {
    Network net = testutil::net_of(R"({"input": {"kind": "sequence", "seq_len": 4, "features": 8},
                                        "layers": [)" +
                                   norm + "]}");
    return net.parameters();
  };
  CHECK(params(R"({"type": "layernorm"})") == 16);
  CHECK(params(R"({"type": "layernorm", "bias": false})") == 8);
  CHECK(params(R"({"type": "layernorm", "scale": false})") == 8);
  CHECK(params(R"({"type": "layernorm", "scale": false, "bias": false})") == 0);
  CHECK(params(R"({"type": "rmsnorm"})") == 8);
  CHECK(params(R"({"type": "rmsnorm", "scale": false})") == 0);
  CHECK_THROWS_WITH(params(R"({"type": "rmsnorm", "scale": 1})"), Catch::Contains("model.layers[0].scale"));
}

// ---- the same Llama-style block as ONNX and Keras (issue 17, point 6) ------------------------------------

namespace {

/// A one-block Llama: vocab 64, width 32, 4 query heads over 2 KV heads of 8, SwiGLU of 48, untied head.
constexpr std::int64_t kV = 64, kD = 32, kH = 4, kK = 2, kHd = 8, kI = 48, kS = 16;

Json tiny_llama_config() {
  return {{"model_type", "llama"},
          {"hidden_size", kD},
          {"num_hidden_layers", 1},
          {"num_attention_heads", kH},
          {"num_key_value_heads", kK},
          {"intermediate_size", kI},
          {"vocab_size", kV},
          {"max_position_embeddings", kS},
          {"tie_word_embeddings", false}};
}

/// The block as torch.onnx.export writes LlamaForCausalLM without its rotary arithmetic: RMSNorm as
/// SimplifiedLayerNormalization (`fused_norm`) or as Pow/ReduceMean/Add/Sqrt/Reciprocal/Mul/Mul, GQA's repeat_kv
/// as Unsqueeze/Expand/Reshape, SiLU as Sigmoid * x times the up projection.
std::string tiny_llama_onnx(bool fused_norm) {
  using namespace onnxw;
  Graph g;
  g.inputs.push_back(value_info("input_ids", {-1, kS}, kInt64));
  g.outputs.push_back(value_info("logits", {-1, kS, kV}));
  auto w = [&](const std::string& name, std::vector<std::int64_t> dims) {
    g.initializers.push_back(tensor(name, dims, kFloat, false));
    return name;
  };
  g.initializers.push_back(int64s("q_shape", {0, 0, kH, kHd}));
  g.initializers.push_back(int64s("kv_shape", {0, 0, kK, kHd}));
  g.initializers.push_back(int64s("unsqueeze_axes", {2}));
  g.initializers.push_back(int64s("expand_shape", {1, kK, kH / kK, kS, kHd}));
  g.initializers.push_back(int64s("repeat_shape", {0, kH, kS, kHd}));
  g.initializers.push_back(int64s("merge_shape", {0, 0, kH * kHd}));
  g.initializers.push_back(int64s("mean_axes", {-1}));
  g.initializers.push_back(tensor("scale", {}, kFloat));
  g.initializers.push_back(tensor("two", {}, kFloat));
  g.initializers.push_back(tensor("eps", {}, kFloat));
  g.initializers.push_back(tensor("causal_mask", {1, 1, kS, kS}, kFloat, false));
  g.nodes.push_back(node("Gather", {w("embed_tokens", {kV, kD}), "input_ids"}, {"x0"}, "embed"));
  auto rmsnorm = [&](const std::string& x, const std::string& name) {
    if (fused_norm) {
      g.nodes.push_back(
          node("SimplifiedLayerNormalization", {x, w(name + ".weight", {kD})}, {name}, name, {attr_i("axis", -1)}));
      return name;
    }
    g.nodes.push_back(node("Pow", {x, "two"}, {name + ".sq"}, name + "_pow"));
    g.nodes.push_back(
        node("ReduceMean", {name + ".sq", "mean_axes"}, {name + ".var"}, name + "_mean", {attr_i("keepdims", 1)}));
    g.nodes.push_back(node("Add", {name + ".var", "eps"}, {name + ".vare"}, name + "_eps"));
    g.nodes.push_back(node("Sqrt", {name + ".vare"}, {name + ".std"}, name + "_sqrt"));
    g.nodes.push_back(node("Reciprocal", {name + ".std"}, {name + ".inv"}, name + "_rsqrt"));
    g.nodes.push_back(node("Mul", {x, name + ".inv"}, {name + ".n"}, name + "_normed"));
    g.nodes.push_back(node("Mul", {w(name + ".weight", {kD}), name + ".n"}, {name}, name + "_scale"));
    return name;
  };
  std::string a = rmsnorm("x0", "input_layernorm");
  g.nodes.push_back(node("MatMul", {a, w("q_proj", {kD, kH * kHd})}, {"q"}, "q_proj"));
  g.nodes.push_back(node("MatMul", {a, w("k_proj", {kD, kK * kHd})}, {"k"}, "k_proj"));
  g.nodes.push_back(node("MatMul", {a, w("v_proj", {kD, kK * kHd})}, {"v"}, "v_proj"));
  g.nodes.push_back(node("Reshape", {"q", "q_shape"}, {"q4"}, "q_heads"));
  g.nodes.push_back(node("Transpose", {"q4"}, {"qh"}, "q_t", {attr_ints("perm", {0, 2, 1, 3})}));
  for (const std::string t : {"k", "v"}) {
    g.nodes.push_back(node("Reshape", {t, "kv_shape"}, {t + "4"}, t + "_heads"));
    g.nodes.push_back(node("Transpose", {t + "4"}, {t + "h"}, t + "_t", {attr_ints("perm", {0, 2, 1, 3})}));
    g.nodes.push_back(node("Unsqueeze", {t + "h", "unsqueeze_axes"}, {t + "5"}, t + "_unsqueeze"));
    g.nodes.push_back(node("Expand", {t + "5", "expand_shape"}, {t + "x"}, t + "_expand"));
    g.nodes.push_back(node("Reshape", {t + "x", "repeat_shape"}, {t + "r"}, t + "_repeat"));
  }
  g.nodes.push_back(node("Transpose", {"kr"}, {"kt"}, "k_tt", {attr_ints("perm", {0, 1, 3, 2})}));
  g.nodes.push_back(node("MatMul", {"qh", "kt"}, {"scores"}, "qk"));
  g.nodes.push_back(node("Div", {"scores", "scale"}, {"scaled"}, "scale"));
  g.nodes.push_back(node("Add", {"scaled", "causal_mask"}, {"masked"}, "mask"));
  g.nodes.push_back(node("Softmax", {"masked"}, {"probs"}, "softmax", {attr_i("axis", -1)}));
  g.nodes.push_back(node("MatMul", {"probs", "vr"}, {"ctx"}, "pv"));
  g.nodes.push_back(node("Transpose", {"ctx"}, {"ctx_t"}, "ctx_t", {attr_ints("perm", {0, 2, 1, 3})}));
  g.nodes.push_back(node("Reshape", {"ctx_t", "merge_shape"}, {"merged"}, "merge"));
  g.nodes.push_back(node("MatMul", {"merged", w("o_proj", {kH * kHd, kD})}, {"attn_out"}, "o_proj"));
  g.nodes.push_back(node("Add", {"x0", "attn_out"}, {"r"}, "attn_residual"));
  std::string b = rmsnorm("r", "post_attention_layernorm");
  g.nodes.push_back(node("MatMul", {b, w("gate_proj", {kD, kI})}, {"gate"}, "gate_proj"));
  g.nodes.push_back(node("Sigmoid", {"gate"}, {"gate_sig"}, "silu_sigmoid"));
  g.nodes.push_back(node("Mul", {"gate", "gate_sig"}, {"gate_act"}, "silu"));
  g.nodes.push_back(node("MatMul", {b, w("up_proj", {kD, kI})}, {"up"}, "up_proj"));
  g.nodes.push_back(node("Mul", {"gate_act", "up"}, {"glu"}, "glu"));
  g.nodes.push_back(node("MatMul", {"glu", w("down_proj", {kI, kD})}, {"mlp_out"}, "down_proj"));
  g.nodes.push_back(node("Add", {"r", "mlp_out"}, {"x1"}, "stream"));
  std::string f = rmsnorm("x1", "norm");
  g.nodes.push_back(node("MatMul", {f, w("lm_head", {kD, kV})}, {"logits"}, "lm_head"));
  return g.model();
}

std::int64_t count_type(const Network& net, LayerType type) {
  std::int64_t n = 0;
  for (const auto& l : net.layers) n += l.type == type ? 1 : 0;
  return n;
}

Json keras_tensor(const std::string& layer, Json shape) {
  return {{"class_name", "__keras_tensor__"},
          {"config", {{"shape", std::move(shape)}, {"dtype", "float32"}, {"keras_history", {layer, 0, 0}}}}};
}

Json keras_layer(const std::string& cls, const std::string& name, Json config, Json args) {
  config["name"] = name;
  Json inbound = Json::array();
  if (!args.is_null()) inbound.push_back({{"args", std::move(args)}, {"kwargs", Json::object()}});
  return {{"module", "keras.layers"},
          {"class_name", cls},
          {"config", std::move(config)},
          {"name", name},
          {"inbound_nodes", std::move(inbound)}};
}

/// The block in Keras 3: RMSNormalization, GroupQueryAttention, a SiLU Dense times a linear Dense (Multiply).
Json tiny_llama_keras(Json attention_config) {
  auto t = [](const std::string& n, std::int64_t width = kD) { return keras_tensor(n, {nullptr, kS, width}); };
  Json ls = Json::array();
  ls.push_back(keras_layer("InputLayer", "input_ids", {{"batch_shape", {nullptr, kS}}, {"dtype", "int32"}}, nullptr));
  ls.push_back(keras_layer("Embedding", "embed", {{"input_dim", kV}, {"output_dim", kD}},
                           Json::array({keras_tensor("input_ids", {nullptr, kS})})));
  ls.push_back(keras_layer("RMSNormalization", "ln_1", {{"axis", -1}}, Json::array({t("embed")})));
  ls.push_back(
      keras_layer("GroupQueryAttention", "attn", std::move(attention_config), Json::array({t("ln_1"), t("ln_1")})));
  ls.push_back(keras_layer("Add", "r", Json::object(), Json::array({Json::array({t("embed"), t("attn")})})));
  ls.push_back(keras_layer("RMSNormalization", "ln_2", {{"axis", -1}}, Json::array({t("r")})));
  ls.push_back(keras_layer("Dense", "gate", {{"units", kI}, {"activation", "silu"}, {"use_bias", false}},
                           Json::array({t("ln_2")})));
  ls.push_back(keras_layer("Dense", "up", {{"units", kI}, {"activation", "linear"}, {"use_bias", false}},
                           Json::array({t("ln_2")})));
  ls.push_back(
      keras_layer("Multiply", "glu", Json::object(), Json::array({Json::array({t("gate", kI), t("up", kI)})})));
  ls.push_back(keras_layer("Dense", "down", {{"units", kD}, {"activation", "linear"}, {"use_bias", false}},
                           Json::array({t("glu", kI)})));
  ls.push_back(keras_layer("Add", "x1", Json::object(), Json::array({Json::array({t("r"), t("down")})})));
  ls.push_back(keras_layer("RMSNormalization", "norm", {{"axis", -1}}, Json::array({t("x1")})));
  ls.push_back(keras_layer("Dense", "lm_head", {{"units", kV}, {"activation", "linear"}, {"use_bias", false}},
                           Json::array({t("norm")})));
  return {{"module", "keras.src.models.functional"},
          {"class_name", "Functional"},
          {"config",
           {{"name", "llama"},
            {"layers", ls},
            {"input_layers", {{"input_ids", 0, 0}}},
            {"output_layers", {{"lm_head", 0, 0}}}}}};
}

Json gqa_config() {
  return {{"head_dim", kHd}, {"num_query_heads", kH}, {"num_key_value_heads", kK}, {"use_bias", false}};
}

}  // namespace

TEST_CASE("a Llama block as ONNX: RMSNorm, GQA and SwiGLU count as the HF config does", "[onnx][hf_plain]") {
  std::vector<std::string> warnings;
  Network hf = from_config(tiny_llama_config(), kS, &warnings);
  const std::int64_t expected = llama_like(kV, kD, 1, kH, kK, kHd, kI, kD, false);
  REQUIRE(hf.parameters() == expected);
  for (bool fused : {true, false}) {
    INFO((fused ? "SimplifiedLayerNormalization" : "decomposed RMSNorm"));
    Network onnx = onnx_bytes_to_network(tiny_llama_onnx(fused), "model.onnx_base64", {});
    CHECK(onnx.parameters() == expected);
    // GQA's Unsqueeze/Expand/Reshape repeat of K and V: one attention layer of 4 heads over 2 KV heads.
    REQUIRE(count_type(onnx, LayerType::Attention) == 1);
    for (const auto& l : onnx.layers) {
      if (l.type != LayerType::Attention) continue;
      CHECK(l.attrs.num_heads == kH);
      CHECK(l.attrs.num_kv_heads == kK);
      CHECK(l.attrs.head_dim == kHd);
      CHECK(l.attrs.causal);
      CHECK(l.parameters == kD * kH * kHd + 2 * kD * kK * kHd + kH * kHd * kD);
    }
    // SimplifiedLayerNormalization, and LlamaRMSNorm written out (Pow, ReduceMean, Add, Sqrt, Reciprocal, Mul by
    // x, Mul by the weight): an rmsnorm each, with its weight.
    CHECK(count_type(onnx, LayerType::RmsNorm) == 3);
    CHECK(layer(onnx, onnx.layers[1].name).type == LayerType::RmsNorm);
    CHECK(onnx.layers[1].parameters == kD);
    CHECK(onnx.warnings.empty());
    // SiLU written as Sigmoid(g) * g, times the up projection: one gated dense layer, as the config's.
    CHECK(count_type(onnx, LayerType::Multiply) == 0);
    const Layer& gate = layer(onnx, "gate_proj");
    CHECK(gate.attrs.gated);
    CHECK(gate.attrs.activation == "silu");
    CHECK(gate.attrs.units == kI);
    CHECK(gate.parameters == 2 * kD * kI);
  }
}

TEST_CASE("a Llama block as Keras 3: RMSNormalization and GroupQueryAttention", "[keras][hf_plain]") {
  Network keras = keras_to_network(tiny_llama_keras(gqa_config()), "model.keras", {});
  CHECK(keras.parameters() == llama_like(kV, kD, 1, kH, kK, kHd, kI, kD, false));
  CHECK(count_type(keras, LayerType::RmsNorm) == 3);
  const Layer& attn = layer(keras, "attn");
  CHECK(attn.attrs.num_heads == kH);
  CHECK(attn.attrs.num_kv_heads == kK);
  CHECK(attn.attrs.head_dim == kHd);
  // use_bias (Keras' default true) biases q, k, v and the output, as EinsumDense builds them.
  Json biased = gqa_config();
  biased.erase("use_bias");
  CHECK(keras_to_network(tiny_llama_keras(biased), "model.keras", {}).parameters() ==
        llama_like(kV, kD, 1, kH, kK, kHd, kI, kD, false, true));
  auto keras_error = [](const Json& attention_config, const std::string& field) {
    CHECK_THROWS_WITH(keras_to_network(tiny_llama_keras(attention_config), "model.keras", {}),
                      Catch::StartsWith(field));
  };
  Json bad = gqa_config();
  bad["num_key_value_heads"] = 3;
  keras_error(bad, "model.keras.config.layers[3].config.num_key_value_heads");
  bad = gqa_config();
  bad["use_gate"] = true;
  keras_error(bad, "model.keras.config.layers[3].config.use_gate");
  bad = gqa_config();
  bad["sliding_window"] = 8;
  keras_error(bad, "model.keras.config.layers[3].config.sliding_window");
  // LayerNormalization(scale=False, center=False): no parameters.
  Json doc = tiny_llama_keras(gqa_config());
  doc["config"]["layers"][2]["class_name"] = "LayerNormalization";
  doc["config"]["layers"][2]["config"]["scale"] = false;
  doc["config"]["layers"][2]["config"]["center"] = false;
  CHECK(keras_to_network(doc, "model.keras", {}).parameters() ==
        llama_like(kV, kD, 1, kH, kK, kHd, kI, kD, false) - kD);
}

TEST_CASE("ONNX: an RMSNorm written out is one rmsnorm; another Pow stays an elementwise pass", "[onnx][hf_plain]") {
  using namespace onnxw;
  // x [N, S, D] -> Pow -> ReduceMean -> Add eps -> Sqrt -> (Reciprocal, Mul by x | Div x by it) -> (Mul by w).
  auto norm_graph = [](bool divide, bool weight, bool mean_over_last) {
    Graph g;
    g.inputs.push_back(value_info("x", {-1, kS, kD}));
    g.outputs.push_back(value_info("y", {-1, kS, kD}));
    g.initializers = {tensor("two", {}, kFloat), tensor("eps", {}, kFloat), tensor("w", {kD}, kFloat, false),
                      int64s("axes", {mean_over_last ? -1 : 1})};
    g.nodes = {node("Pow", {"x", "two"}, {"sq"}, "pow"),
               node("ReduceMean", {"sq", "axes"}, {"var"}, "mean", {attr_i("keepdims", 1)}),
               node("Add", {"var", "eps"}, {"vare"}, "eps"), node("Sqrt", {"vare"}, {"std"}, "sqrt")};
    std::string normed = weight ? "n" : "y";
    if (divide) {
      g.nodes.push_back(node("Div", {"x", "std"}, {normed}, "div"));
    } else {
      g.nodes.push_back(node("Reciprocal", {"std"}, {"inv"}, "rsqrt"));
      g.nodes.push_back(node("Mul", {"inv", "x"}, {normed}, "normed"));
    }
    if (weight) g.nodes.push_back(node("Mul", {"n", "w"}, {"y"}, "scale"));
    return g.model();
  };
  for (bool divide : {false, true}) {
    for (bool weight : {false, true}) {
      INFO("divide " << divide << ", weight " << weight);
      Network net = onnx_bytes_to_network(norm_graph(divide, weight, true), "model.onnx_base64", {});
      REQUIRE(net.layers.size() == 1);
      CHECK(net.layers[0].type == LayerType::RmsNorm);
      CHECK(net.parameters() == (weight ? kD : 0));
      CHECK(net.warnings.empty());
    }
  }
  // A mean over the sequence is no RMSNorm: the nodes are translated one by one (the unmodelled ones named).
  Network other = onnx_bytes_to_network(norm_graph(false, true, false), "model.onnx_base64", {});
  CHECK(count_type(other, LayerType::RmsNorm) == 0);
  CHECK(other.parameters() == kD);  // the weight, as a parameter layer
  REQUIRE_FALSE(other.warnings.empty());
  CHECK_THAT(other.warnings.front(), Catch::Contains("Pow"));
}

TEST_CASE("ONNX: a gated MLP is one gated dense layer only when it is exactly act(x Wg) * (x Wu)", "[onnx][hf_plain]") {
  using namespace onnxw;
  // x [N, S, D] -> gate MatMul -> Gelu -> Mul by the up MatMul -> down MatMul; `up_first` writes up before gate.
  auto mlp_graph = [](bool up_first, std::int64_t up_width) {
    Graph g;
    g.inputs.push_back(value_info("x", {-1, kS, kD}));
    g.outputs.push_back(value_info("y", {-1, kS, kD}));
    g.initializers = {tensor("wg", {kD, kI}, kFloat, false), tensor("wu", {kD, up_width}, kFloat, false),
                      tensor("wd", {kI, kD}, kFloat, false)};
    Msg gate = node("MatMul", {"x", "wg"}, {"g"}, "gate_proj"), up = node("MatMul", {"x", "wu"}, {"u"}, "up_proj");
    g.nodes = up_first ? std::vector<Msg>{up, gate} : std::vector<Msg>{gate, up};
    g.nodes.push_back(node("Gelu", {"g"}, {"a"}, "act"));
    g.nodes.push_back(node("Mul", {"a", "u"}, {"h"}, "glu"));
    g.nodes.push_back(node("MatMul", {"h", "wd"}, {"y"}, "down_proj"));
    return g.model();
  };
  Network glu = onnx_bytes_to_network(mlp_graph(false, kI), "model.onnx_base64", {});
  REQUIRE(glu.layers.size() == 2);
  CHECK(glu.layers[0].attrs.gated);
  CHECK(glu.layers[0].attrs.activation == "gelu");
  CHECK(glu.parameters() == 3 * kD * kI);
  // Up projection first: the layers of the graph as written (the same parameters, no gated layer).
  Network written = onnx_bytes_to_network(mlp_graph(true, kI), "model.onnx_base64", {});
  CHECK(written.parameters() == 3 * kD * kI);
  CHECK(count_type(written, LayerType::Multiply) == 1);
  for (const auto& l : written.layers) CHECK_FALSE(l.attrs.gated);
}

TEST_CASE("bloom: BLOOM-560m counts its embedding LayerNorm, fused biased QKV and tied head exactly",
          "[hf_config][hf_plain]") {
  // bigscience/bloom-560m's architecture fields (BloomConfig spells the width n_embed in older files).
  Json cfg = {{"architectures", {"BloomForCausalLM"}},
              {"model_type", "bloom"},
              {"n_embed", 1024},
              {"n_layer", 24},
              {"num_attention_heads", 16},
              {"layer_norm_epsilon", 1e-5},
              {"apply_residual_connection_post_layernorm", false},
              {"hidden_dropout", 0.0},
              {"attention_dropout", 0.0},
              {"vocab_size", 250880}};
  std::vector<std::string> warnings;
  Network net = from_config(cfg, 64, &warnings);
  // BloomModel: word_embeddings and word_embeddings_layernorm; per BloomBlock two LayerNorms, query_key_value
  // h x 3h with bias, dense h x h with bias, dense_h_to_4h and dense_4h_to_h with biases; ln_f; lm_head tied.
  const std::int64_t V = 250880, h = 1024, L = 24;
  const std::int64_t block = 2 * 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * 4 * h + 4 * h) + (4 * h * h + h);
  const std::int64_t expected = V * h + 2 * h + L * block + 2 * h;
  CHECK(expected == 559214592);  // the published count of bigscience/bloom-560m
  CHECK(net.parameters() == expected);
  CHECK(layer(net, "word_embeddings_layernorm").type == LayerType::LayerNorm);
  CHECK(any_contains(warnings, "ALiBi"));
  Json bad = cfg;
  bad["apply_residual_connection_post_layernorm"] = true;
  require_error(bad, "model.hf_config.apply_residual_connection_post_layernorm", "not supported");
  bad = cfg;
  bad.erase("n_embed");
  require_error(bad, "model.hf_config.hidden_size", "required");
}
