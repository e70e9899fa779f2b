// The 2024-2026 Hugging Face decoders (types_decoder.cpp): each model_type's parameter count (and active count
// for MoE) written out from the modules its transformers class builds (modeling_<type>.py, tied weights once),
// on small configs and on the real configs in tests/fixtures/hf; the per-layer plans as repeats; the errors.
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/layer_list.hpp"

using namespace prenet;
using testutil::layer;
using I = std::int64_t;

namespace {

Json layers_of(const Json& config, std::vector<std::string>* warnings = nullptr, I seq_len = 64) {
  std::vector<std::string> local;
  return hf_config_to_layers(config, "model.hf_config", seq_len, warnings ? *warnings : local);
}

Network from_config(const Json& config, std::vector<std::string>* warnings = nullptr) {
  return parse_layer_list(layers_of(config, warnings), "model.hf_config", {});
}

Json fixture(const std::string& name) {
  std::ifstream in(std::string(PRENET_SOURCE_DIR) + "/tests/fixtures/hf/" + name);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str());
}

/// A token's parameters: each mixture-of-experts layer's top_k experts, every other layer whole.
I active(const Network& net) {
  I n = 0;
  for (const auto& l : net.layers) {
    n += l.type == LayerType::Dense && l.attrs.experts > 1 ? l.parameters / l.attrs.experts * l.attrs.top_k
                                                           : l.parameters;
  }
  return n;
}

// ---- the modules, as modeling_*.py builds them -----------------------------------------------------------

/// q_proj, k_proj, v_proj (h -> heads*hd, kv*hd) and o_proj (heads*hd -> h), with the given biases.
I attention(I h, I heads, I kv, I hd, bool qkv_bias = false, bool o_bias = false) {
  return h * heads * hd + 2 * h * kv * hd + heads * hd * h + (qkv_bias ? heads * hd + 2 * kv * hd : 0) +
         (o_bias ? h : 0);
}
/// gate_proj, up_proj, down_proj without bias.
I swiglu(I h, I inner) { return 3 * h * inner; }
/// The LM head when untied (tied: counted once, in the embedding).
I head(I h, I vocab, bool tied) { return tied ? 0 : h * vocab; }

I get(const Json& c, const char* key) { return c.at(key).get<I>(); }

/// Qwen3ForCausalLM: Qwen3Attention (+ q_norm, k_norm of head_dim), Qwen3MLP, two RMSNorms per layer.
I qwen3_count(const Json& c) {
  I h = get(c, "hidden_size"), hd = get(c, "head_dim"), v = get(c, "vocab_size");
  I layer = attention(h, get(c, "num_attention_heads"), get(c, "num_key_value_heads"), hd) + 2 * hd +
            swiglu(h, get(c, "intermediate_size")) + 2 * h;
  return v * h + get(c, "num_hidden_layers") * layer + h + head(h, v, c.value("tie_word_embeddings", false));
}

/// Qwen3MoeForCausalLM with every layer sparse: attention + QK-norm, gate (h x E), E experts; `top` experts
/// counted when `top` > 0 (the active count).
I qwen3_moe_count(const Json& c, I top = 0) {
  I h = get(c, "hidden_size"), hd = get(c, "head_dim"), v = get(c, "vocab_size"), e = get(c, "num_experts");
  I experts = (top > 0 ? top : e) * swiglu(h, get(c, "moe_intermediate_size"));
  I layer =
      attention(h, get(c, "num_attention_heads"), get(c, "num_key_value_heads"), hd) + 2 * hd + h * e + experts + 2 * h;
  return v * h + get(c, "num_hidden_layers") * layer + h + head(h, v, false);
}

Json qwen3_small() {
  return {{"model_type", "qwen3"},         {"hidden_size", 64},        {"num_hidden_layers", 3},
          {"num_attention_heads", 4},      {"num_key_value_heads", 2}, {"head_dim", 32},
          {"intermediate_size", 96},       {"vocab_size", 500},        {"tie_word_embeddings", false},
          {"max_position_embeddings", 256}};
}

}  // namespace

TEST_CASE("qwen3: the real Qwen3 configs (QK-norm per head, head_dim, tied 0.6B)", "[hf_config][hf_modern]") {
  // Qwen3-8B's published total is 8,190,735,360; the formula reproduces it from the module shapes.
  CHECK(qwen3_count(fixture("Qwen--Qwen3-8B.json")) == 8190735360);
  for (const char* name :
       {"Qwen--Qwen3-0.6B.json", "Qwen--Qwen3-8B.json", "Qwen--Qwen3-14B.json", "Qwen--Qwen3-32B.json"}) {
    INFO(name);
    Json c = fixture(name);
    Network net = from_config(c);
    CHECK(net.parameters() == qwen3_count(c));
    CHECK(layer(net, "h.0.attn").attrs.head_dim == 128);
  }
  // 0.6B: tied (the head adds nothing), 16 heads x 128 wider than hidden 1024.
  CHECK(qwen3_count(fixture("Qwen--Qwen3-0.6B.json")) == 596049920);
  Json small = qwen3_small();
  CHECK(from_config(small).parameters() == qwen3_count(small));
  small["tie_word_embeddings"] = true;
  CHECK(from_config(small).parameters() == qwen3_count(small));
  // Sliding windows only with use_sliding_window, from max_window_layers on.
  small["use_sliding_window"] = true;
  small["sliding_window"] = 16;
  small["max_window_layers"] = 2;
  Network windowed = from_config(small);
  CHECK(windowed.parameters() == qwen3_count(small));
  CHECK(layer(windowed, "h0.1.attn").type == LayerType::Attention);
  CHECK(layer(windowed, "h2.0.sliding_attn").type == LayerType::Attention);
}

TEST_CASE("qwen3_moe: Qwen3-30B-A3B and 235B-A22B, mlp_only_layers and decoder_sparse_step", "[hf_config][hf_modern]") {
  Json a3b = fixture("Qwen--Qwen3-30B-A3B.json");
  // Published: 30.5B total, 3.3B active.
  CHECK(qwen3_moe_count(a3b) == 30532122624);
  CHECK(qwen3_moe_count(a3b, 8) == 3353032704);
  Network net = from_config(a3b);
  CHECK(net.parameters() == 30532122624);
  CHECK(active(net) == 3353032704);
  CHECK(net.active_parameters() == active(net));  // Network's own count
  Json big = fixture("Qwen--Qwen3-235B-A22B-Instruct-2507.json");
  Network n235 = from_config(big);
  CHECK(n235.parameters() == qwen3_moe_count(big));  // published 235B total, 22B active
  CHECK(n235.parameters() == 235093634560);
  CHECK(active(n235) == qwen3_moe_count(big, 8));
  CHECK(n235.active_parameters() == active(n235));  // Network's own count
  CHECK(active(n235) == 22190763520);  // published: 22B activated
  // 94 alike layers: one repeat, not 94 blocks.
  Json model = layers_of(big);
  int repeats = 0;
  for (const auto& l : model["layers"]) repeats += l["type"] == "repeat";
  CHECK(repeats == 1);

  // Layer 0 dense (mlp_only_layers), then every second layer sparse (decoder_sparse_step 2).
  Json c = {{"model_type", "qwen3_moe"}, {"hidden_size", 64},           {"num_hidden_layers", 5},
            {"num_attention_heads", 4},  {"num_key_value_heads", 2},    {"head_dim", 16},
            {"intermediate_size", 128},  {"moe_intermediate_size", 32}, {"num_experts", 4},
            {"num_experts_per_tok", 2},  {"vocab_size", 300},           {"decoder_sparse_step", 2},
            {"mlp_only_layers", {3}}};
  const I h = 64, attn = attention(h, 4, 2, 16) + 2 * 16 + 2 * h;
  const I dense = attn + swiglu(h, 128), sparse = attn + h * 4 + 4 * swiglu(h, 32);
  // Layers 1 sparse ((1+1) % 2 == 0), 3 dense (mlp_only), others dense.
  Network mixed = from_config(c);
  CHECK(mixed.parameters() == 300 * h * 2 + h + 4 * dense + sparse);
  CHECK(active(mixed) == 300 * h * 2 + h + 4 * dense + attn + h * 4 + 2 * swiglu(h, 32));
  CHECK(mixed.active_parameters() == active(mixed));  // Network's own count
  CHECK(layer(mixed, "h1.0.experts_up").attrs.experts == 4);
  CHECK(layer(mixed, "h0.0.mlp_up").attrs.units == 128);
}

TEST_CASE("qwen2_moe: Qwen1.5-MoE-A2.7B (QKV bias, shared expert behind a sigmoid gate)", "[hf_config][hf_modern]") {
  Json c = {{"model_type", "qwen2_moe"},
            {"hidden_size", 2048},
            {"num_hidden_layers", 24},
            {"num_attention_heads", 16},
            {"num_key_value_heads", 16},
            {"intermediate_size", 5632},
            {"moe_intermediate_size", 1408},
            {"shared_expert_intermediate_size", 5632},
            {"num_experts", 60},
            {"num_experts_per_tok", 4},
            {"vocab_size", 151936},
            {"tie_word_embeddings", false}};
  const I h = 2048;
  // Qwen2MoeAttention: q, k, v with bias, o without; router h x 60; 60 experts; shared expert and its gate.
  const I layer_params =
      attention(h, 16, 16, 128, true, false) + h * 60 + 60 * swiglu(h, 1408) + swiglu(h, 5632) + h + 2 * h;
  const I total = 2 * 151936 * h + 24 * layer_params + h;
  CHECK(total == 14315784192);  // published: 14.3B
  Network net = from_config(c);
  CHECK(net.parameters() == total);
  CHECK(active(net) == total - 24 * 56 * swiglu(h, 1408));
  CHECK(net.active_parameters() == active(net));  // Network's own count
  CHECK(layer(net, "h.0.shared_gate").parameters == h);
  CHECK(layer(net, "h.0.shared_gated").type == LayerType::Multiply);
}

TEST_CASE("deepseek_v3: DeepSeek-V3 671B total, 37B active (MLA, 3 dense then 58 MoE layers, no MTP layer)",
          "[hf_config][hf_modern]") {
  Json c = fixture("deepseek-ai--DeepSeek-V3.json");
  const I h = 7168, heads = 128, q_lora = 1536, kv_lora = 512, nope = 128, rope = 64, vd = 128;
  // DeepseekV3Attention: q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj.
  const I mla = h * q_lora + q_lora + q_lora * heads * (nope + rope) + h * (kv_lora + rope) + kv_lora +
                kv_lora * heads * (nope + vd) + heads * vd * h;
  CHECK(mla == 187107328);
  const I dense = mla + 2 * h + swiglu(h, 18432);
  // DeepseekV3MoE: the router's weight (its e_score_correction_bias is a buffer), 256 experts, 1 shared.
  const I moe = mla + 2 * h + 256 * h + 256 * swiglu(h, 2048) + swiglu(h, 2048);
  const I total = 3 * dense + 58 * moe + 2 * 129280 * h + h;
  CHECK(total == 671026404352);
  const I active_total = total - 58 * 248 * swiglu(h, 2048);
  CHECK(active_total == 37552282624);
  std::vector<std::string> warnings;
  Network net = from_config(c, &warnings);
  CHECK(net.parameters() == total);
  CHECK(active(net) == active_total);
  CHECK(net.active_parameters() == active(net));  // Network's own count
  CHECK(layer(net, "h0.2.attn").parameters == mla);
  CHECK(layer(net, "h0.2.mlp_up").attrs.units == 18432);
  CHECK(layer(net, "h3.57.experts_up").attrs.experts == 256);
  Json model = layers_of(c);
  int repeats = 0;
  for (const auto& l : model["layers"]) repeats += l["type"] == "repeat";
  CHECK(repeats == 2);  // 3 dense layers, then 58 MoE layers
  bool mtp_noted = false;
  for (const auto& w : warnings) mtp_noted = mtp_noted || w.find("num_nextn_predict_layers 1") != std::string::npos;
  CHECK(mtp_noted);
}

TEST_CASE("deepseek_v2: DeepSeek-V2-Lite (q_lora_rank null, 2 shared experts, first layer dense)",
          "[hf_config][hf_modern]") {
  Json c = {{"model_type", "deepseek_v2"}, {"hidden_size", 2048},        {"num_hidden_layers", 27},
            {"num_attention_heads", 16},   {"num_key_value_heads", 16},  {"q_lora_rank", nullptr},
            {"kv_lora_rank", 512},         {"qk_nope_head_dim", 128},    {"qk_rope_head_dim", 64},
            {"v_head_dim", 128},           {"intermediate_size", 10944}, {"moe_intermediate_size", 1408},
            {"n_routed_experts", 64},      {"n_shared_experts", 2},      {"num_experts_per_tok", 6},
            {"first_k_dense_replace", 1},  {"moe_layer_freq", 1},        {"topk_method", "greedy"},
            {"vocab_size", 102400}};
  const I h = 2048;
  const I mla = h * 16 * 192 + h * (512 + 64) + 512 + 512 * 16 * 256 + 16 * 128 * h;  // q_proj, no q_lora
  const I dense = mla + 2 * h + swiglu(h, 10944);
  const I moe = mla + 2 * h + 64 * h + 64 * swiglu(h, 1408) + swiglu(h, 2 * 1408);
  const I total = dense + 26 * moe + 2 * 102400 * h + h;
  CHECK(total == 15706484224);  // published: 15.7B total, 2.4B active
  Network net = from_config(c);
  CHECK(net.parameters() == total);
  CHECK(active(net) == total - 26 * 58 * swiglu(h, 1408));
  CHECK(net.active_parameters() == active(net));  // Network's own count
  // transformers ignores moe_layer_freq; a config relying on it is built as transformers builds it.
  c["moe_layer_freq"] = 2;
  std::vector<std::string> warnings;
  CHECK(from_config(c, &warnings).parameters() == total);
  REQUIRE(!warnings.empty());
  CHECK_THAT(warnings[0], Catch::Contains("moe_layer_freq"));
}

TEST_CASE("gpt_oss: gpt-oss-20b and 120b (biased experts and router, sinks, alternating sliding layers)",
          "[hf_config][hf_modern]") {
  // GptOssAttention with biases and a sink per head; GptOssTopKRouter (weight, bias); GptOssExperts'
  // gate_up_proj (E, h, 2I) + bias (E, 2I), down_proj (E, I, h) + bias (E, h).
  auto count = [](I layers, I experts, I top) {
    const I h = 2880, inner = 2880;
    const I expert = h * 2 * inner + 2 * inner + inner * h + h;
    const I layer_params =
        attention(h, 64, 8, 64, true, true) + 64 + h * experts + experts + (top > 0 ? top : experts) * expert + 2 * h;
    return 2 * 201088 * h + layers * layer_params + h;
  };
  CHECK(count(24, 32, 0) == 20914757184);    // published 20.9B
  CHECK(count(36, 128, 0) == 116829156672);  // published 116.8B
  // Active: the published 3.6B and 5.1B leave out the embedding table (201088 x 2880 = 0.58B); counted here.
  CHECK(count(24, 32, 4) == 4187440704);
  CHECK(count(36, 128, 4) == 5711982912);
  Network n20 = from_config(fixture("openai--gpt-oss-20b.json"));
  CHECK(n20.parameters() == count(24, 32, 0));
  CHECK(active(n20) == count(24, 32, 4));
  CHECK(n20.active_parameters() == active(n20));  // Network's own count
  CHECK(layer(n20, "h.0.l0.0.sliding_attn").attrs.num_heads == 64);
  CHECK(layer(n20, "h.11.l1.0.attn").attrs.num_heads == 64);
  Network n120 = from_config(fixture("openai--gpt-oss-120b.json"));
  CHECK(n120.parameters() == count(36, 128, 0));
  CHECK(active(n120) == count(36, 128, 4));
  CHECK(n120.active_parameters() == active(n120));  // Network's own count
}

TEST_CASE("gemma2: gemma-2-2b and 9b (sandwich norms, soft-capping, alternating windows)", "[hf_config][hf_modern]") {
  // Gemma2DecoderLayer: input, post_attention, pre_feedforward and post_feedforward RMSNorms; tied head.
  auto count = [](const Json& c) {
    I h = get(c, "hidden_size"), hd = get(c, "head_dim");
    I layer_params = attention(h, get(c, "num_attention_heads"), get(c, "num_key_value_heads"), hd) +
                     swiglu(h, get(c, "intermediate_size")) + 4 * h;
    return get(c, "vocab_size") * h + get(c, "num_hidden_layers") * layer_params + h;
  };
  Json two = fixture("google--gemma-2-2b.json");
  CHECK(count(two) == 2614341888);  // published 2.61B
  std::vector<std::string> warnings;
  Network net = from_config(two, &warnings);
  CHECK(net.parameters() == count(two));
  CHECK(layer(net, "h.0.l0.0.post_attn_norm").type == LayerType::RmsNorm);
  CHECK(layer(net, "h.0.l1.0.post_mlp_norm").type == LayerType::RmsNorm);
  bool capped = false;
  for (const auto& w : warnings) capped = capped || w.find("final_logit_softcapping") != std::string::npos;
  CHECK(capped);
  Json nine = fixture("google--gemma-2-9b.json");
  CHECK(from_config(nine).parameters() == count(nine));
  CHECK(count(nine) == 9241705984);  // published 9.24B
}

TEST_CASE("gemma3_text: Gemma 3 1B (QK-norm, five sliding layers to one full)", "[hf_config][hf_modern]") {
  Json c = {{"model_type", "gemma3_text"},     {"hidden_size", 1152},
            {"num_hidden_layers", 26},         {"num_attention_heads", 4},
            {"num_key_value_heads", 1},        {"head_dim", 256},
            {"intermediate_size", 6912},       {"vocab_size", 262144},
            {"sliding_window", 512},           {"sliding_window_pattern", 6},
            {"rope_local_base_freq", 10000.0}, {"query_pre_attn_scalar", 256}};
  const I h = 1152;
  const I layer_params = attention(h, 4, 1, 256) + 2 * 256 + swiglu(h, 6912) + 4 * h;
  const I total = 262144 * h + 26 * layer_params + h;
  CHECK(total == 999885952);  // published: google/gemma-3-1b-pt
  Network net = from_config(c);
  CHECK(net.parameters() == total);
  // 26 = 4 x (5 sliding + 1 full) + 2 sliding: a period-6 repeat and a remainder.
  Json model = layers_of(c);
  CHECK(layer(net, "h0.3.l5.0.attn").type == LayerType::Attention);
  CHECK(layer(net, "h24.1.sliding_attn").type == LayerType::Attention);
  c["layer_types"] = Json::array();
  for (int i = 0; i < 26; ++i) c["layer_types"].push_back(i % 2 ? "full_attention" : "sliding_attention");
  CHECK(from_config(c).parameters() == total);
}

TEST_CASE("llama4_text: Llama 4 Scout and Maverick text stacks (shared expert, NoPE, chunked attention)",
          "[hf_config][hf_modern]") {
  auto config = [](I experts, I step) {
    return Json{{"model_type", "llama4_text"},       {"hidden_size", 5120},
                {"num_hidden_layers", 48},           {"num_attention_heads", 40},
                {"num_key_value_heads", 8},          {"head_dim", 128},
                {"intermediate_size", 8192},         {"intermediate_size_mlp", 16384},
                {"num_local_experts", experts},      {"num_experts_per_tok", 1},
                {"interleave_moe_layer_step", step}, {"vocab_size", 202048},
                {"attention_chunk_size", 8192},      {"use_qk_norm", true},
                {"tie_word_embeddings", false}};
  };
  const I h = 5120, attn = attention(h, 40, 8, 128) + 2 * h;
  auto moe = [&](I experts, I top) { return h * experts + top * swiglu(h, 8192) + swiglu(h, 8192); };
  const I outer = 2 * 202048 * h + h;
  // Scout: 16 experts in every layer: 107.8B in the text model (109B with vision), 17B active.
  const I scout = outer + 48 * (attn + moe(16, 16));
  CHECK(scout == 107769861120);
  Network s = from_config(config(16, 1));
  CHECK(s.parameters() == scout);
  CHECK(active(s) == outer + 48 * (attn + moe(16, 1)));
  CHECK(s.active_parameters() == active(s));  // Network's own count
  CHECK(active(s) == 17172894720);
  CHECK(layer(s, "h.0.l0.0.chunked_attn").type == LayerType::Attention);
  CHECK(layer(s, "h.0.l3.0.attn").type == LayerType::Attention);  // every fourth layer: NoPE, full attention
  // Maverick: 128 experts in every second layer, dense layers of intermediate_size_mlp.
  const I maverick = outer + 24 * (attn + swiglu(h, 16384)) + 24 * (attn + moe(128, 128));
  Network m = from_config(config(128, 2));
  CHECK(m.parameters() == maverick);
  CHECK(active(m) == outer + 24 * (attn + swiglu(h, 16384)) + 24 * (attn + moe(128, 1)));
  CHECK(m.active_parameters() == active(m));  // Network's own count
}

TEST_CASE("olmo2: OLMo-2-1124-7B (QK-norm over the projections, norms after each branch)", "[hf_config][hf_modern]") {
  Json c = fixture("allenai--OLMo-2-1124-7B-Instruct.json");
  const I h = 4096;
  const I layer_params = attention(h, 32, 32, 128) + (32 + 32) * 128 + swiglu(h, 11008) + 2 * h;
  const I total = 2 * 100352 * h + 32 * layer_params + h;
  CHECK(total == 7298617344);  // published 7.30B
  Network net = from_config(c);
  CHECK(net.parameters() == total);
  CHECK(layer(net, "h.0.post_attn_norm").type == LayerType::RmsNorm);
}

TEST_CASE("cohere: Command R (LayerNorm without bias, parallel block, tied, use_qk_norm)", "[hf_config][hf_modern]") {
  Json c = {{"model_type", "cohere"},    {"hidden_size", 8192},       {"num_hidden_layers", 40},
            {"num_attention_heads", 64}, {"num_key_value_heads", 64}, {"intermediate_size", 22528},
            {"vocab_size", 256000},      {"logit_scale", 0.0625},     {"use_qk_norm", false}};
  const I h = 8192;
  const I total = 256000 * h + 40 * (attention(h, 64, 64, 128) + swiglu(h, 22528) + h) + h;
  CHECK(total == 34980831232);  // published 35B
  Network net = from_config(c);
  CHECK(net.parameters() == total);
  CHECK(layer(net, "h.0.stream").inputs.size() == 3);
  // use_qk_norm: CohereLayerNorm weights of (heads, head_dim) for q and (kv heads, head_dim) for k.
  c["use_qk_norm"] = true;
  c["num_key_value_heads"] = 8;
  CHECK(from_config(c).parameters() ==
        256000 * h + 40 * (attention(h, 64, 8, 128) + (64 + 8) * 128 + swiglu(h, 22528) + h) + h);
}

TEST_CASE("starcoder2: StarCoder2-3B (LayerNorm with bias, ungated biased MLP, sliding window)",
          "[hf_config][hf_modern]") {
  Json c = {{"model_type", "starcoder2"},
            {"hidden_size", 3072},
            {"num_hidden_layers", 30},
            {"num_attention_heads", 24},
            {"num_key_value_heads", 2},
            {"intermediate_size", 12288},
            {"vocab_size", 49152},
            {"use_bias", true},
            {"sliding_window", 4096},
            {"hidden_act", "gelu_pytorch_tanh"},
            {"max_position_embeddings", 16384}};
  const I h = 3072, inner = 12288;
  const I layer_params = attention(h, 24, 2, 128, true, true) + (h * inner + inner) + (inner * h + h) + 4 * h;
  const I total = 49152 * h + 30 * layer_params + 2 * h;
  CHECK(total == 3030371328);  // published 3.03B
  Network net = from_config(c);
  CHECK(net.parameters() == total);
  CHECK(layer(net, "h.0.sliding_attn").attrs.num_kv_heads == 2);
}

TEST_CASE("granitemoe: granite-3.0-1b-a400m (experts, no shared expert, multipliers scale only)",
          "[hf_config][hf_modern]") {
  Json c = {{"model_type", "granitemoe"},  {"hidden_size", 1024},          {"num_hidden_layers", 24},
            {"num_attention_heads", 16},   {"num_key_value_heads", 8},     {"intermediate_size", 512},
            {"num_local_experts", 32},     {"num_experts_per_tok", 8},     {"vocab_size", 49155},
            {"tie_word_embeddings", true}, {"embedding_multiplier", 12.0}, {"attention_multiplier", 0.015625},
            {"residual_multiplier", 0.22}, {"logits_scaling", 6.0}};
  const I h = 1024;
  const I layer_params = attention(h, 16, 8, 64) + h * 32 + 32 * swiglu(h, 512) + 2 * h;
  const I total = 49155 * h + 24 * layer_params + h;
  Network net = from_config(c);
  CHECK(net.parameters() == total);
  CHECK(active(net) == total - 24 * 24 * swiglu(h, 512));
  CHECK(net.active_parameters() == active(net));  // Network's own count
}

TEST_CASE("dbrx: DBRX (nested attn_config / ffn_config, 16 GLU experts, top 4)", "[hf_config][hf_modern]") {
  Json c = {{"model_type", "dbrx"},
            {"d_model", 6144},
            {"n_layers", 40},
            {"n_heads", 48},
            {"vocab_size", 100352},
            {"max_seq_len", 32768},
            {"attn_config", {{"kv_n_heads", 8}, {"clip_qkv", 8}, {"rope_theta", 500000}}},
            {"ffn_config", {{"ffn_hidden_size", 10752}, {"moe_num_experts", 16}, {"moe_top_k", 4}}}};
  const I h = 6144;
  // DbrxAttention's Wqkv (h -> h + 2 kv hd) and out_proj; two LayerNorms without bias; router; w1, v1, w2.
  const I layer_params = h * (h + 2 * 8 * 128) + h * h + 2 * h + h * 16 + 16 * swiglu(h, 10752);
  const I total = 2 * 100352 * h + 40 * layer_params + h;
  CHECK(total == 131596523520);  // published 132B total, 36B active
  Network net = from_config(c);
  CHECK(net.parameters() == total);
  CHECK(active(net) == total - 40 * 12 * swiglu(h, 10752));
  CHECK(net.active_parameters() == active(net));  // Network's own count
  CHECK(active(net) == 36469708800);
}

TEST_CASE("llama, mistral, mixtral: rope_scaling read, sliding_window honoured", "[hf_config][hf_modern]") {
  Json l31 = fixture("meta-llama--Llama-3.1-8B.json");
  CHECK(from_config(l31).parameters() == 8030261248);
  l31["rope_scaling"]["rope_type"] = "stretchy";
  testutil::require_input_error([&] { from_config(l31); }, "model.hf_config.rope_scaling.rope_type",
                                "unknown rotary scaling");
  Json mixtral = fixture("mistralai--Mixtral-8x7B-v0.1.json");
  Network mx = from_config(mixtral);
  CHECK(mx.parameters() == 46702792704);                      // published 46.7B
  CHECK(layer(mx, "h.0.attn").type == LayerType::Attention);  // sliding_window null: full attention
  mixtral["sliding_window"] = 4096;
  CHECK(layer(from_config(mixtral), "h.0.sliding_attn").type == LayerType::Attention);
  Json mistral = {{"model_type", "mistral"},  {"hidden_size", 256},       {"num_hidden_layers", 2},
                  {"num_attention_heads", 8}, {"intermediate_size", 512}, {"vocab_size", 1000}};
  CHECK(layer(from_config(mistral), "h.0.sliding_attn").type == LayerType::Attention);  // MistralConfig: 4096
  mistral["sliding_window"] = nullptr;
  CHECK(layer(from_config(mistral), "h.0.attn").type == LayerType::Attention);
}

TEST_CASE("modern decoders: bad input names the field", "[hf_config][hf_modern]") {
  using testutil::require_input_error;
  Json olmo = {{"model_type", "olmo2"},    {"hidden_size", 100},      {"num_hidden_layers", 2},
               {"num_attention_heads", 3}, {"intermediate_size", 64}, {"vocab_size", 50}};
  require_input_error([&] { from_config(olmo); }, "model.hf_config.num_attention_heads", "must divide");
  Json q = qwen3_small();
  q["num_key_value_heads"] = 3;
  require_input_error([&] { from_config(q); }, "model.hf_config.num_key_value_heads", "must divide");
  Json moe = {{"model_type", "qwen3_moe"}, {"hidden_size", 64}, {"num_hidden_layers", 2}, {"num_attention_heads", 4},
              {"intermediate_size", 64},   {"vocab_size", 50},  {"num_experts", 4},       {"num_experts_per_tok", 8}};
  require_input_error([&] { from_config(moe); }, "model.hf_config.num_experts_per_tok", "");
  moe["num_experts_per_tok"] = 2;
  moe["mlp_only_layers"] = {0, 2};
  require_input_error([&] { from_config(moe); }, "model.hf_config.mlp_only_layers[1]", "layer index in [0, 2)");
  Json oss = fixture("openai--gpt-oss-20b.json");
  oss["layer_types"] = {"full_attention", "sliding_attention"};
  require_input_error([&] { from_config(oss); }, "model.hf_config.layer_types",
                      "has 2 entries; num_hidden_layers is 24");
  oss["layer_types"] = Json::array();
  for (int i = 0; i < 24; ++i) oss["layer_types"].push_back(i == 5 ? "linear_attention" : "full_attention");
  require_input_error([&] { from_config(oss); }, "model.hf_config.layer_types[5]", "unknown layer type");
  Json ds = fixture("deepseek-ai--DeepSeek-V3.json");
  ds["first_k_dense_replace"] = 62;
  require_input_error([&] { from_config(ds); }, "model.hf_config.first_k_dense_replace", "above num_hidden_layers 61");
  Json gemma = fixture("google--gemma-2-2b.json");
  gemma["sliding_window"] = nullptr;
  require_input_error([&] { from_config(gemma); }, "model.hf_config.sliding_window", "sliding_attention");
}
