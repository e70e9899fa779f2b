// Hugging Face configs by model_type: parameter counts equal the published Hugging Face counts, written out
// from each architecture (GQA, SwiGLU/GeGLU, RMSNorm, tied or untied heads, rotary/ALiBi/learned positions).
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/api.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/layer_list.hpp"

using namespace prenet;
using testutil::layer;

namespace {

Network from_config(const Json& config, std::int64_t seq_len = 64, std::vector<std::string>* warnings = nullptr) {
  std::vector<std::string> local;
  Json model = hf_config_to_layers(config, "model.hf_config", seq_len, warnings ? *warnings : local);
  return parse_layer_list(model, "model.hf_config", {});
}

Json predict_config(const Json& config, const Json& training = Json::object()) {
  Json request = {{"model", {{"hf_config", config}}}, {"options", {{"per_layer", false}}}};
  if (!training.empty()) request["training"] = training;
  return Json::parse(predict_json(request.dump()));
}

}  // namespace

TEST_CASE("gpt_neox: EleutherAI/pythia-160m has 162,322,944 parameters", "[hf_config][models]") {
  Json cfg = {{"model_type", "gpt_neox"},        {"hidden_size", 768},
              {"num_hidden_layers", 12},         {"num_attention_heads", 12},
              {"intermediate_size", 3072},       {"vocab_size", 50304},
              {"max_position_embeddings", 2048}, {"rotary_pct", 0.25},
              {"use_parallel_residual", true},   {"hidden_act", "gelu"},
              {"tie_word_embeddings", false}};
  // Rotary: no position table. Two LayerNorms per block in parallel; untied embed_out.
  const std::int64_t h = 768, V = 50304;
  const std::int64_t block = 2 * 2 * h + 4 * (h * h + h) + (h * 4 * h + 4 * h) + (4 * h * h + h);
  CHECK(2 * V * h + 12 * block + 2 * h == 162322944);
  Network net = from_config(cfg);
  CHECK(net.parameters() == 162322944);
  CHECK(layer(net, "h.0.stream").input_shapes.size() == 3);  // x + attn(ln_1 x) + mlp(ln_2 x)
}

TEST_CASE("gptj: EleutherAI/gpt-j-6b has 6,050,882,784 parameters", "[hf_config][models]") {
  Json cfg = {{"model_type", "gptj"}, {"n_embd", 4096},   {"n_layer", 28},       {"n_head", 16},
              {"n_positions", 2048},  {"rotary_dim", 64}, {"vocab_size", 50400}, {"activation_function", "gelu_new"}};
  Network net = from_config(cfg);
  CHECK(net.parameters() == 6050882784);
  CHECK(layer(net, "lm_head").parameters == 50400 * 4096 + 50400);  // untied, with a bias
  CHECK(layer(net, "h.0.attn").parameters == 4 * 4096 * 4096);      // no attention biases
}

TEST_CASE("opt: facebook/opt-1.3b and opt-350m (post-LN, projected embeddings)", "[hf_config][models]") {
  Json cfg = {{"model_type", "opt"},
              {"hidden_size", 2048},
              {"ffn_dim", 8192},
              {"num_hidden_layers", 24},
              {"num_attention_heads", 32},
              {"vocab_size", 50272},
              {"max_position_embeddings", 2048},
              {"word_embed_proj_dim", 2048},
              {"do_layer_norm_before", true}};
  Network net = from_config(cfg);
  CHECK(net.parameters() == 1315758080);
  CHECK(layer(net, "wpe").attrs.vocab_size == 2050);  // OPT's learned positions are offset by 2
  cfg["hidden_size"] = 1024;
  cfg["ffn_dim"] = 4096;
  cfg["num_attention_heads"] = 16;
  cfg["word_embed_proj_dim"] = 512;
  cfg["do_layer_norm_before"] = false;
  CHECK(from_config(cfg).parameters() == 331196416);
  std::vector<std::string> w;
  testutil::require_input_error([&] { from_config(cfg, 4096, &w); }, "training.seq_len", "2048 learned positions");
}

TEST_CASE("llama family: Llama 2, Llama 3 (GQA), Mistral, Qwen2 (QKV bias, tied), Gemma (GeGLU, head_dim)",
          "[hf_config][models]") {
  auto llama = [](std::int64_t h, std::int64_t inter, std::int64_t layers, std::int64_t heads, std::int64_t kv,
                  std::int64_t vocab) {
    return Json{{"model_type", "llama"},        {"hidden_size", h},
                {"intermediate_size", inter},   {"num_hidden_layers", layers},
                {"num_attention_heads", heads}, {"num_key_value_heads", kv},
                {"vocab_size", vocab},          {"max_position_embeddings", 4096},
                {"hidden_act", "silu"},         {"rms_norm_eps", 1e-5},
                {"tie_word_embeddings", false}};
  };
  CHECK(from_config(llama(4096, 11008, 32, 32, 32, 32000)).parameters() == 6738415616);
  CHECK(from_config(llama(8192, 28672, 80, 64, 8, 32000)).parameters() == 68976648192);
  Network l3 = from_config(llama(4096, 14336, 32, 32, 8, 128256));
  CHECK(l3.parameters() == 8030261248);
  CHECK(layer(l3, "h.0.attn").attrs.num_kv_heads == 8);
  CHECK(layer(l3, "h.0.mlp_up").attrs.gated);
  CHECK(layer(l3, "h.0.ln_1").type == LayerType::RmsNorm);
  // Rotary positions: no table, and a longer sequence is only a warning.
  std::vector<std::string> warnings;
  from_config(llama(256, 512, 1, 4, 4, 100), 8192, &warnings);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("beyond the model's 4096 trained positions"));

  Json mistral = llama(4096, 14336, 32, 32, 8, 32000);
  mistral["model_type"] = "mistral";
  mistral.erase("num_key_value_heads");  // Mistral's default is 8
  CHECK(from_config(mistral).parameters() == 7241732096);

  // Qwen/Qwen2-0.5B: 494,032,768 (Q, K, V biases; tied embeddings).
  Json qwen = llama(896, 4864, 24, 14, 2, 151936);
  qwen["model_type"] = "qwen2";
  qwen["tie_word_embeddings"] = true;
  CHECK(from_config(qwen).parameters() == 494032768);

  // google/gemma-2b: 2,506,172,416 (multi-query, head_dim 256, GeGLU, tied).
  Json gemma = {{"model_type", "gemma"},
                {"hidden_size", 2048},
                {"intermediate_size", 16384},
                {"num_hidden_layers", 18},
                {"num_attention_heads", 8},
                {"num_key_value_heads", 1},
                {"head_dim", 256},
                {"vocab_size", 256000},
                {"max_position_embeddings", 8192},
                {"hidden_activation", "gelu_pytorch_tanh"}};
  Network g = from_config(gemma);
  CHECK(g.parameters() == 2506172416);
  CHECK(layer(g, "h.0.mlp_up").attrs.activation == "gelu_pytorch_tanh");

  // Missing essentials name the field.
  Json broken = llama(64, 128, 1, 4, 4, 100);
  broken.erase("intermediate_size");
  Json r = predict_config(broken);
  CHECK(r["error"]["field"] == "model.hf_config.intermediate_size");
  broken = llama(64, 128, 1, 4, 3, 100);
  r = predict_config(broken);
  CHECK(r["error"]["field"] == "model.hf_config.num_key_value_heads");
}

TEST_CASE("mixtral: all experts held, top-k routed FLOPs", "[hf_config][models][moe]") {
  Json cfg = {{"model_type", "mixtral"},    {"hidden_size", 4096},
              {"intermediate_size", 14336}, {"num_hidden_layers", 32},
              {"num_attention_heads", 32},  {"num_key_value_heads", 8},
              {"vocab_size", 32000},        {"max_position_embeddings", 32768},
              {"num_local_experts", 8},     {"num_experts_per_tok", 2}};
  Network net = from_config(cfg, 128);
  CHECK(net.parameters() == 46702792704);
  CHECK(layer(net, "h.0.router").parameters == 4096 * 8);
  StepWork w = step_work(net, 1, KernelContext(Precision::BF16), Optimizer::Adam);
  const std::size_t down = testutil::layer_index(net, "h.0.experts_down");
  CHECK(testutil::matmul_flops(w, down, Phase::Forward) == Approx(2.0 * 128 * 2 * 14336 * 4096));
  cfg["num_experts_per_tok"] = 9;
  CHECK(predict_config(cfg)["error"]["field"] == "model.hf_config.num_experts_per_tok");
}

TEST_CASE("phi and falcon: parallel attention and MLP", "[hf_config][models]") {
  Json phi = {
      {"model_type", "phi"},       {"hidden_size", 2560}, {"intermediate_size", 10240},     {"num_hidden_layers", 32},
      {"num_attention_heads", 32}, {"vocab_size", 51200}, {"max_position_embeddings", 2048}};
  CHECK(from_config(phi).parameters() == 2779683840);
  // tiiuae/falcon-7b: multi-query attention, one LayerNorm per block, tied head: 6,921,720,704.
  Json falcon = {{"model_type", "falcon"},
                 {"hidden_size", 4544},
                 {"num_hidden_layers", 32},
                 {"num_attention_heads", 71},
                 {"multi_query", true},
                 {"parallel_attn", true},
                 {"bias", false},
                 {"vocab_size", 65024},
                 {"new_decoder_architecture", false}};
  Network f = from_config(falcon);
  CHECK(f.parameters() == 6921720704);
  CHECK(layer(f, "h.0.attn").attrs.num_kv_heads == 1);
  falcon["alibi"] = true;
  std::vector<std::string> warnings;
  CHECK(from_config(falcon, 64, &warnings).parameters() == 6921720704);
  CHECK_THAT(warnings.at(0), Catch::Contains("ALiBi"));
}

TEST_CASE("t5 (encoder-decoder), distilbert and vit", "[hf_config][models]") {
  Json t5 = {{"model_type", "t5"},  {"d_model", 768},     {"d_kv", 64},
             {"d_ff", 3072},        {"num_layers", 12},   {"num_heads", 12},
             {"vocab_size", 32128}, {"n_positions", 512}, {"feed_forward_proj", "relu"}};
  Network net = from_config(t5, 128);
  CHECK(net.parameters() == 222903552);
  const Layer& cross = layer(net, "decoder.0.cross_attn");
  REQUIRE(cross.inputs.size() == 2);  // the decoder stream and the encoder output
  CHECK(net.layers[static_cast<std::size_t>(cross.inputs[1])].name == "encoder_out");
  // google/t5-v1_1-base: gated-GELU, untied head: 247,577,856.
  Json v11 = {{"model_type", "t5"},
              {"d_model", 768},
              {"d_kv", 64},
              {"d_ff", 2048},
              {"num_layers", 12},
              {"num_heads", 12},
              {"vocab_size", 32128},
              {"feed_forward_proj", "gated-gelu"},
              {"tie_word_embeddings", false}};
  CHECK(from_config(v11, 128).parameters() == 247577856);

  Json distil = {{"model_type", "distilbert"},
                 {"dim", 768},
                 {"n_layers", 6},
                 {"n_heads", 12},
                 {"hidden_dim", 3072},
                 {"vocab_size", 30522},
                 {"max_position_embeddings", 512}};
  CHECK(from_config(distil, 128).parameters() == 66985530);

  Json vit = {{"model_type", "vit"},       {"hidden_size", 768}, {"num_hidden_layers", 12}, {"num_attention_heads", 12},
              {"intermediate_size", 3072}, {"image_size", 224},  {"patch_size", 16},        {"num_labels", 1000}};
  Network v = from_config(vit, 0);
  CHECK(v.input.kind == InputKind::Image);
  CHECK(v.parameters() == 86567656);
  CHECK(layer(v, "tokens").output_shape == Shape{197, 768});
  Json r = predict_config(vit, {{"image_size", 160}, {"batch_size", 2}});
  INFO(r.dump().substr(0, 300));
  CHECK(r["model"]["parameters"] == 86567656);
  CHECK(r["training"]["image_size"] == 160);
  CHECK(predict_config(vit, {{"image_size", 320}})["error"]["field"] == "training.image_size");
}

TEST_CASE("configs too deep or impossible name the config, not the generated list", "[hf_config][errors]") {
  Json deep = {{"model_type", "gpt2"}, {"n_embd", 64}, {"n_layer", 2000}, {"n_head", 4}, {"vocab_size", 100}};
  Json r = predict_config(deep);
  CHECK(r["error"]["field"] == "model.hf_config.n_layer");
  CHECK_THAT(r["error"]["message"].get<std::string>(), Catch::Contains("the limit is 10000"));
  // Sizes each within range whose product is absurd: named at the config.
  Json huge = {{"model_type", "llama"},  {"hidden_size", 1048576},   {"intermediate_size", 16000000},
               {"num_hidden_layers", 2}, {"num_attention_heads", 1}, {"num_key_value_heads", 1},
               {"vocab_size", 16000000}};
  r = predict_config(huge);
  INFO(r.dump().substr(0, 300));
  if (r.contains("error")) CHECK(r["error"]["field"].get<std::string>().rfind("model.hf_config", 0) == 0);
}

TEST_CASE("switch_transformers: sparse top-1 experts every other block; Switch-C has 1571B parameters",
          "[hf_config][models][moe]") {
  // The accuracy bench's config (shared data: validation/models/switchxl4.json), written out here so the test
  // stands alone: d_model 1024, 4 experts, experts in every second block (i % 2 == 1) of both stacks.
  Json cfg = {{"model_type", "switch_transformers"},
              {"d_model", 1024},
              {"d_ff", 16384},
              {"d_kv", 128},
              {"num_heads", 32},
              {"num_layers", 24},
              {"num_decoder_layers", 24},
              {"num_experts", 4},
              {"expert_capacity", 64},
              {"encoder_sparse_step", 2},
              {"decoder_sparse_step", 2},
              {"num_sparse_encoder_layers", 12},
              {"num_sparse_decoder_layers", 12},
              {"router_bias", false},
              {"dense_act_fn", "relu"},
              {"feed_forward_proj", "relu"},
              {"vocab_size", 32128},
              {"relative_attention_num_buckets", 32},
              {"dropout_rate", 0.1}};
  const std::int64_t D = 1024, F = 16384, inner = 32 * 128, E = 4, V = 32128;
  const std::int64_t attn = 4 * D * inner, mlp = 2 * D * F, moe = E * mlp + D * E;  // router: D x E, no bias
  const std::int64_t encoder = 12 * (2 * D + attn + mlp) + 12 * (2 * D + attn + moe) + D;
  const std::int64_t decoder = 12 * (3 * D + 2 * attn + mlp) + 12 * (3 * D + 2 * attn + moe) + D;
  const std::int64_t expected = V * D + 2 * 32 * 32 + encoder + decoder;  // LM head tied to the shared embedding
  Network net = from_config(cfg, 128);
  CHECK(net.parameters() == expected);
  CHECK(layer(net, "encoder.0.wi").parameters == D * F);
  CHECK(layer(net, "encoder.1.experts_wi").attrs.experts == 4);
  CHECK(layer(net, "encoder.1.experts_wi").attrs.top_k == 1);
  CHECK(layer(net, "encoder.1.router").parameters == D * E);
  CHECK(layer(net, "decoder.23.experts_wo").attrs.experts == 4);
  CHECK(layer(net, "decoder.22.wo").attrs.experts == 1);
  // Top-1 routing: each token runs through one expert, so the expert GEMMs do a dense MLP's work.
  StepWork w = step_work(net, 1, KernelContext(Precision::BF16), Optimizer::Adam);
  CHECK(testutil::matmul_flops(w, testutil::layer_index(net, "encoder.1.experts_wi"), Phase::Forward) ==
        Approx(2.0 * 128 * D * F));

  // The file the accuracy bench predicts gives the same network.
  std::ifstream file(std::string(PRENET_SHARED_DATA) + "/validation/models/switchxl4.json");
  if (file.good()) {
    Json shared = Json::parse(file);
    CHECK(from_config(shared, 128).parameters() == expected);
  }

  // Overflowing the experts' capacity is said, not hidden.
  std::vector<std::string> warnings;
  from_config(cfg, 512, &warnings);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("exceed num_experts x expert_capacity = 256"));

  // Published count: Switch-C, Fedus, Zoph and Shazeer, "Switch Transformers", arXiv:2101.03961, Table 9:
  // 1571B parameters with d_model 2080, d_ff 6144, d_kv 64, 32 heads, 15 layers, 2048 experts in every layer.
  Json switch_c = {{"model_type", "switch_transformers"},
                   {"d_model", 2080},
                   {"d_ff", 6144},
                   {"d_kv", 64},
                   {"num_heads", 32},
                   {"num_layers", 15},
                   {"num_decoder_layers", 15},
                   {"num_experts", 2048},
                   {"num_sparse_encoder_layers", 15},
                   {"num_sparse_decoder_layers", 15},
                   {"vocab_size", 32128}};
  Network c = from_config(switch_c, 128);
  CHECK(std::llround(static_cast<double>(c.parameters()) / 1e9) == 1571);
  CHECK(layer(c, "encoder.0.experts_wi").attrs.experts == 2048);  // step 1: every block is sparse

  // Hugging Face's defaults: 3 sparse layers of 12 (step 4: blocks 1, 5, 9).
  Json defaults = {{"model_type", "switch_transformers"},
                   {"d_model", 64},
                   {"d_ff", 128},
                   {"num_heads", 4},
                   {"num_layers", 12},
                   {"vocab_size", 100}};
  Network d = from_config(defaults, 16);
  CHECK(layer(d, "encoder.5.experts_wi").attrs.experts == 8);
  CHECK(layer(d, "encoder.4.wi").attrs.experts == 1);
  CHECK(predict_config({{"model_type", "switch_transformers"},
                        {"d_model", 64},
                        {"d_ff", 128},
                        {"num_heads", 4},
                        {"num_layers", 2},
                        {"vocab_size", 100},
                        {"num_experts", 0}})["error"]["field"] == "model.hf_config.num_experts");
}
