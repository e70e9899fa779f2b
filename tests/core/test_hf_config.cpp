// Hugging Face config.json import: parameter counts equal the published Hugging Face numbers (with the
// formula written out), default and overridden sequence lengths, and errors naming config fields.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/api.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/layer_list.hpp"

using namespace prenet;
using testutil::layer;

namespace {

// bert-base-uncased/config.json as published (extra keys included on purpose: they must be ignored).
const char* kBertBase = R"J({
  "architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1, "gradient_checkpointing": false,
  "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02,
  "intermediate_size": 3072, "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "bert",
  "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 0, "position_embedding_type": "absolute",
  "transformers_version": "4.6.0.dev0", "type_vocab_size": 2, "use_cache": true, "vocab_size": 30522})J";

// gpt2/config.json as published.
const char* kGpt2 = R"J({
  "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
  "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256, "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024, "n_embd": 768, "n_head": 12,
  "n_layer": 12, "n_positions": 1024, "resid_pdrop": 0.1, "summary_activation": null,
  "summary_first_dropout": 0.1, "summary_proj_to_labels": true, "summary_type": "cls_index",
  "summary_use_proj": true, "task_specific_params": {"text-generation": {"do_sample": true, "max_length": 50}},
  "vocab_size": 50257})J";

Json gpt2_sized(std::int64_t embd, std::int64_t layers, std::int64_t heads) {
  Json cfg = Json::parse(kGpt2);
  cfg["n_embd"] = embd;
  cfg["n_layer"] = layers;
  cfg["n_head"] = heads;
  return cfg;
}

/// Expands a config and parses the layer list, as the API does.
Network from_config(const Json& config, std::int64_t seq_len, std::vector<std::string>* warnings = nullptr) {
  std::vector<std::string> local;
  Json model = hf_config_to_layers(config, "model.hf_config", seq_len, warnings ? *warnings : local);
  return parse_layer_list(model, "model.hf_config", {});
}

Json predict(const Json& request) { return Json::parse(predict_json(request.dump())); }

/// Sends {"model": {"hf_config": config}} with `training`; returns the response.
Json predict_config(const Json& config, const Json& training = Json::object()) {
  Json request = {
      {"model", {{"hf_config", config}}}, {"hardware", {"a100-sxm4-80gb"}}, {"options", {{"per_layer", false}}}};
  if (!training.empty()) request["training"] = training;
  return predict(request);
}

void require_error(const Json& response, const std::string& field, const std::string& needle) {
  INFO(response.dump().substr(0, 800));
  REQUIRE(response.contains("error"));
  CHECK(response["error"]["field"] == field);
  std::string message = response["error"]["message"].get<std::string>();
  CHECK_THAT(message, Catch::StartsWith(field + ": "));
  CHECK_THAT(message, Catch::Contains(needle));
}

// A GPT-2-style block: ln_1 2h, attention QKV h*3h + 3h and output h*h + h, ln_2 2h,
// MLP h*4h + 4h and 4h*h + h  =>  12 h^2 + 13 h.
std::int64_t gpt2_parameters(std::int64_t vocab, std::int64_t positions, std::int64_t h, std::int64_t layers) {
  std::int64_t block = 12 * h * h + 13 * h;
  return vocab * h                  // wte (the LM head is tied to it)
         + positions * h            // wpe
         + layers * block + 2 * h;  // final LayerNorm
}

}  // namespace

TEST_CASE("bert-base-uncased counts as BertForMaskedLM: 109,514,298 parameters", "[hf_config]") {
  const std::int64_t V = 30522, P = 512, T = 2, h = 768, L = 12, I = 3072;
  // Embeddings: word, position and token-type tables and their LayerNorm.
  const std::int64_t embeddings = (V + P + T) * h + 2 * h;
  // Encoder layer: Q, K, V and output projections with biases, LayerNorm, FFN up and down, LayerNorm.
  const std::int64_t per_layer = 4 * (h * h + h) + 2 * h + (h * I + I) + (I * h + h) + 2 * h;
  // MLM head: transform dense + LayerNorm, decoder tied to the word embeddings but with its own bias.
  // (No pooler: BertForMaskedLM does not use it.)
  const std::int64_t head = (h * h + h) + 2 * h + V;
  const std::int64_t expected = embeddings + L * per_layer + head;
  CHECK(expected == 109514298);

  Network net = from_config(Json::parse(kBertBase), 128);
  CHECK(net.parameters() == expected);
  CHECK(net.input.seq_len == 128);
  CHECK(layer(net, "mlm_decoder").parameters == V);  // bias only
  CHECK(layer(net, "layer.11.stream").output_shape == Shape{128, 768});
  CHECK(layer(net, "mlm_decoder").output_shape == Shape{128, V});
  CHECK(layer(net, "layer.0.intermediate").output_shape == Shape{128, I});
  CHECK(net.layers.size() == 6 + 9 * 12 + 4);

  Json response = predict_config(Json::parse(kBertBase), {{"seq_len", 128}});
  INFO(response.dump().substr(0, 400));
  CHECK(response["model"]["parameters"] == expected);
  CHECK(response["model"]["source"] == "hf_config");
  CHECK(response["model"]["name"] == "bert");
  CHECK(response["training"]["seq_len"] == 128);
  CHECK(response["warnings"].empty());
}

TEST_CASE("bert defaults to the config's 512 positions, and roberta has one token type", "[hf_config]") {
  Network net = from_config(Json::parse(kBertBase), 0);
  CHECK(net.input.seq_len == 512);

  Json roberta = Json::parse(kBertBase);
  roberta["model_type"] = "roberta";
  roberta["vocab_size"] = 50265;
  roberta["max_position_embeddings"] = 514;
  roberta.erase("type_vocab_size");
  // RobertaForMaskedLM (roberta-base): 124,697,433.
  const std::int64_t V = 50265, P = 514, T = 1, h = 768;
  const std::int64_t expected = (V + P + T) * h + 2 * h + 12 * (12 * h * h + 13 * h) + (h * h + h) + 2 * h + V;
  CHECK(expected == 124697433);
  CHECK(from_config(roberta, 128).parameters() == expected);
  roberta["type_vocab_size"] = 1;
  CHECK(from_config(roberta, 128).parameters() == expected);
}

TEST_CASE("the class in architectures picks the head, with Hugging Face's parameter counts", "[hf_config][heads]") {
  const std::int64_t h = 768;
  const std::int64_t pooler = h * h + h;
  // BertModel (bert-base-uncased): embeddings, 12 layers and the pooler.
  const std::int64_t bert_model = 109482240;
  auto bert_as = [&](const std::string& cls) {
    Json config = Json::parse(kBertBase);
    config["architectures"] = {cls};
    return config;
  };
  SECTION("BertModel: the pooler, no head and no loss") {
    Network net = from_config(bert_as("BertModel"), 128);
    CHECK(net.parameters() == bert_model);
    CHECK(net.layers.back().name == "pooler");
    CHECK(layer(net, "pooler").output_shape == Shape{768});
  }
  SECTION("BertForSequenceClassification: pooler on [CLS], dropout, 2 labels by default (109,483,778)") {
    Network net = from_config(bert_as("BertForSequenceClassification"), 128);
    CHECK(net.parameters() == bert_model + (h * 2 + 2));
    CHECK(net.parameters() == 109483778);
    CHECK(layer(net, "classifier").output_shape == Shape{2});
    CHECK(layer(net, "classifier_dropout").type == LayerType::Dropout);
    CHECK(net.layers.back().type == LayerType::CrossEntropy);
    Json config = bert_as("BertForSequenceClassification");
    config["id2label"] = {{"0", "NEGATIVE"}, {"1", "NEUTRAL"}, {"2", "POSITIVE"}};
    CHECK(layer(from_config(config, 128), "classifier").output_shape == Shape{3});
    config["num_labels"] = 5;  // num_labels wins over id2label
    CHECK(layer(from_config(config, 128), "classifier").output_shape == Shape{5});
  }
  SECTION("BertForQuestionAnswering: start and end logits per token, no pooler (108,893,186)") {
    Network net = from_config(bert_as("BertForQuestionAnswering"), 384);
    CHECK(net.parameters() == bert_model - pooler + (h * 2 + 2));
    CHECK(net.parameters() == 108893186);
    CHECK(layer(net, "qa_outputs").output_shape == Shape{384, 2});
  }
  SECTION("BertForTokenClassification: a classifier per token") {
    Json config = bert_as("BertForTokenClassification");
    config["num_labels"] = 9;
    Network net = from_config(config, 128);
    CHECK(net.parameters() == bert_model - pooler + (h * 9 + 9));
    CHECK(layer(net, "classifier").output_shape == Shape{128, 9});
  }
  SECTION("masked-LM and pre-training classes keep the MLM head (BertForPreTraining's NSP pair is not costed)") {
    for (const char* cls : {"BertForMaskedLM", "BertForPreTraining", "BertLMHeadModel"}) {
      CHECK(from_config(bert_as(cls), 128).parameters() == 109514298);
    }
  }
  SECTION("GPT2ForSequenceClassification: an unbiased score layer, the last token's scores") {
    Json config = Json::parse(kGpt2);
    config["architectures"] = {"GPT2ForSequenceClassification"};
    Network net = from_config(config, 256);
    CHECK(net.parameters() == gpt2_parameters(50257, 1024, 768, 12) + h * 2);
    CHECK(layer(net, "score").output_shape == Shape{256, 2});
    CHECK(layer(net, "last_token").output_shape == Shape{2});
    config["architectures"] = {"GPT2Model"};
    CHECK(from_config(config, 256).layers.back().name == "ln_f");
  }
  SECTION("an unknown class keeps the language-model head and says so; a malformed list is an error") {
    std::vector<std::string> warnings;
    Network net = from_config(bert_as("BertForSomethingNew"), 128, &warnings);
    CHECK(net.parameters() == 109514298);
    REQUIRE(warnings.size() == 1);
    CHECK_THAT(warnings[0], Catch::Contains("BertForSomethingNew"));
    Json bad = Json::parse(kBertBase);
    bad["architectures"] = "BertModel";
    require_error(predict_config(bad), "model.hf_config.architectures", "expected an array of class names");
  }
}

TEST_CASE("GPT-2 family parameter counts equal Hugging Face's", "[hf_config]") {
  SECTION("gpt2: 124,439,808") {
    CHECK(gpt2_parameters(50257, 1024, 768, 12) == 124439808);
    Network net = from_config(Json::parse(kGpt2), 0);
    CHECK(net.parameters() == 124439808);
    CHECK(net.input.seq_len == 1024);  // the config's n_positions
    CHECK(layer(net, "lm_head").parameters == 0);
    CHECK(layer(net, "lm_head").output_shape == Shape{1024, 50257});
    CHECK(layer(net, "h.0.attn").attrs.causal);
    CHECK(layer(net, "h.0.mlp_up").output_shape == Shape{1024, 3072});
    CHECK(net.layers.size() == 4 + 9 * 12 + 3);
  }
  SECTION("gpt2-medium: 354,823,168") {
    CHECK(gpt2_parameters(50257, 1024, 1024, 24) == 354823168);
    CHECK(from_config(gpt2_sized(1024, 24, 16), 128).parameters() == 354823168);
  }
  SECTION("gpt2-large: 774,030,080") {
    CHECK(gpt2_parameters(50257, 1024, 1280, 36) == 774030080);
    CHECK(from_config(gpt2_sized(1280, 36, 20), 128).parameters() == 774030080);
    Json response = predict_config(gpt2_sized(1280, 36, 20), {{"seq_len", 256}});
    CHECK(response["model"]["parameters"] == 774030080);
    CHECK(response["training"]["seq_len"] == 256);
  }
  SECTION("n_inner null means 4 x n_embd; an explicit n_inner is used") {
    Json cfg = Json::parse(kGpt2);
    cfg["n_inner"] = nullptr;
    CHECK(from_config(cfg, 64).parameters() == 124439808);
    cfg["n_inner"] = 2048;
    // Each MLP loses (3072 - 2048) * (768 + 768 + 1) parameters.
    CHECK(from_config(cfg, 64).parameters() == 124439808 - 12 * (1024 * (768 + 768) + 1024));
  }
  SECTION("untied embeddings add the LM head matrix") {
    Json cfg = Json::parse(kGpt2);
    cfg["tie_word_embeddings"] = false;
    CHECK(from_config(cfg, 64).parameters() == 124439808 + 50257 * 768);
  }
  SECTION("parameters do not depend on the sequence length") {
    CHECK(from_config(Json::parse(kGpt2), 1).parameters() == 124439808);
    CHECK(from_config(Json::parse(kGpt2), 1024).parameters() == 124439808);
  }
}

TEST_CASE("a sequence longer than the learned positions is an error on training.seq_len", "[hf_config][errors]") {
  std::vector<std::string> warnings;
  testutil::require_input_error([&] { from_config(Json::parse(kGpt2), 2048, &warnings); }, "training.seq_len",
                                "is 2048 but the model has only 1024 learned positions");
  require_error(predict_config(Json::parse(kGpt2), {{"seq_len", 1025}}), "training.seq_len", "1024");
  require_error(predict_config(Json::parse(kBertBase), {{"seq_len", 513}}), "training.seq_len", "512");
  // Exactly the maximum is fine.
  Json ok = predict_config(Json::parse(kBertBase), {{"seq_len", 512}});
  CHECK_FALSE(ok.contains("error"));
  CHECK(ok["training"]["seq_len"] == 512);
}

TEST_CASE("missing sizes and heads that do not divide the hidden size are errors naming the field",
          "[hf_config][errors]") {
  Json no_hidden = Json::parse(kBertBase);
  no_hidden.erase("hidden_size");
  require_error(predict_config(no_hidden), "model.hf_config.hidden_size", "required field is missing (hidden_size)");

  Json no_embd = Json::parse(kGpt2);
  no_embd.erase("n_embd");
  require_error(predict_config(no_embd), "model.hf_config.hidden_size", "n_embd");

  Json no_layers = Json::parse(kGpt2);
  no_layers.erase("n_layer");
  require_error(predict_config(no_layers), "model.hf_config.num_hidden_layers", "n_layer");

  Json no_vocab = Json::parse(kBertBase);
  no_vocab.erase("vocab_size");
  require_error(predict_config(no_vocab), "model.hf_config.vocab_size", "required field is missing");

  Json bad_heads = Json::parse(kGpt2);
  bad_heads["n_head"] = 10;
  require_error(predict_config(bad_heads), "model.hf_config.n_head", "must divide the hidden size 768");

  Json bad_bert_heads = Json::parse(kBertBase);
  bad_bert_heads["num_attention_heads"] = 7;
  require_error(predict_config(bad_bert_heads), "model.hf_config.num_attention_heads",
                "must divide the hidden size 768");

  Json string_size = Json::parse(kBertBase);
  string_size["hidden_size"] = "768";
  require_error(predict_config(string_size), "model.hf_config.hidden_size", "got a string");

  Json bad_act = Json::parse(kBertBase);
  bad_act["hidden_act"] = "swiglu-ish";
  require_error(predict_config(bad_act), "model.hf_config.hidden_act", "unsupported activation \"swiglu-ish\"");

  require_error(predict({{"model", {{"hf_config", "gpt2"}}}}), "model.hf_config", "expected an object, got a string");
}

TEST_CASE("an unknown model_type is read generically only where its fields decide it", "[hf_config]") {
  // A Llama-like config: grouped-query attention, untied head. Until issue 17 this was read as GPT-2 (learned
  // positions, ungated MLP) with a warning: silu and intermediate_size alone decide nothing, so it is refused.
  Json cfg = {{"model_type", "mystery"},  {"hidden_size", 256},
              {"num_hidden_layers", 2},   {"num_attention_heads", 8},
              {"num_key_value_heads", 2}, {"intermediate_size", 512},
              {"vocab_size", 1000},       {"max_position_embeddings", 128},
              {"hidden_act", "silu"},     {"tie_word_embeddings", false}};
  require_error(predict_config(cfg, {{"seq_len", 64}}), "model.hf_config.model_type",
                "model_type \"mystery\" is not in the table, and its fields do not decide the architecture");

  // With RMSNorm and rotary positions named it is a Llama-style decoder: RMSNorm h, q and o h*h, k and v h*kv,
  // RMSNorm h, gated MLP 3*h*I per block; final RMSNorm h; untied head h*V (test_hf_generic.cpp has the rest).
  cfg["rms_norm_eps"] = 1e-6;
  cfg["rope_theta"] = 10000.0;
  const std::int64_t h = 256, V = 1000, I = 512, kv = 2 * (256 / 8);
  const std::int64_t block = h + 2 * h * h + 2 * h * kv + h + 3 * h * I;
  const std::int64_t expected = V * h + 2 * block + h + h * V;
  std::vector<std::string> warnings;
  Network net = from_config(cfg, 64, &warnings);
  CHECK(net.parameters() == expected);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("\"mystery\" is not in the table; read generically from"));
  CHECK(layer(net, "h.1.attn").attrs.num_kv_heads == 2);

  // No model_type at all but GPT-2 field names: GPT-2, said to be a generic reading.
  Json bare = Json::parse(kGpt2);
  bare.erase("model_type");
  warnings.clear();
  CHECK(from_config(bare, 64, &warnings).parameters() == 124439808);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("(a GPT-2-style decoder"));
}

// Regression test (fixed): num_key_value_heads that does not divide num_attention_heads is accepted by the config
// reader and only fails inside the generated layer list, so the error names a path that does not exist in the request
// ("model.hf_config.layers[4].layers[1].num_kv_heads") instead of the config field.
TEST_CASE("num_key_value_heads not dividing the heads names the config field", "[hf_config][errors]") {
  // (A table model_type: an unknown one with these fields is refused before any head check; test_hf_generic.cpp.)
  Json cfg = {
      {"model_type", "llama"},    {"hidden_size", 256}, {"num_hidden_layers", 2},   {"num_attention_heads", 8},
      {"num_key_value_heads", 3}, {"vocab_size", 1000}, {"intermediate_size", 512}, {"max_position_embeddings", 128}};
  require_error(predict_config(cfg), "model.hf_config.num_key_value_heads", "must divide");
}

// facebook/bart-base/config.json (the sizes that matter; extra keys are ignored).
const char* kBartBase = R"J({
  "model_type": "bart", "d_model": 768, "encoder_layers": 6, "decoder_layers": 6, "encoder_attention_heads": 12,
  "decoder_attention_heads": 12, "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072, "vocab_size": 50265,
  "max_position_embeddings": 1024, "activation_function": "gelu", "dropout": 0.1, "attention_dropout": 0.1,
  "activation_dropout": 0.1, "scale_embedding": false, "add_bias_logits": false, "normalize_before": false,
  "add_final_layer_norm": false, "is_encoder_decoder": true})J";

/// An encoder-decoder of the BART family: biased attention 4 (d^2 + d), MLP 2 d f + f + d, 2 or 3 LayerNorms per
/// block, one shared table (the head is tied to it).
std::int64_t seq2seq_parameters(std::int64_t vocab, std::int64_t position_rows, std::int64_t d, std::int64_t f,
                                std::int64_t layers, std::int64_t extra_norms) {
  std::int64_t attn = 4 * (d * d + d), mlp = 2 * d * f + f + d;
  return vocab * d + 2 * position_rows * d + layers * (attn + mlp + 4 * d) + layers * (2 * attn + mlp + 6 * d) +
         extra_norms * 2 * d;
}

TEST_CASE("BART family: bart-base and bart-large count as BartForConditionalGeneration", "[hf_config][seq2seq]") {
  // Hugging Face facebook/bart-base: 139,420,416; facebook/bart-large: 406,291,456 (final_logits_bias is a buffer).
  Network base = from_config(Json::parse(kBartBase), 128);
  CHECK(base.parameters() == seq2seq_parameters(50265, 1026, 768, 3072, 6, 2));
  CHECK(base.parameters() == 139420416);
  Json large = Json::parse(kBartBase);
  large["d_model"] = 1024;
  large["encoder_layers"] = large["decoder_layers"] = 12;
  large["encoder_attention_heads"] = large["decoder_attention_heads"] = 16;
  large["encoder_ffn_dim"] = large["decoder_ffn_dim"] = 4096;
  CHECK(from_config(large, 128).parameters() == 406291456);
  // Learned positions: a longer sequence than the table is an error.
  require_error(predict_config(Json::parse(kBartBase), {{"seq_len", 2048}}), "training.seq_len", "1024");
  // Post-norm: each block ends in a LayerNorm; the decoder cross-attends to the encoder output.
  const Layer& cross = layer(base, "decoder.0.cross_attn");
  REQUIRE(cross.input_shapes.size() == 2);
  CHECK(cross.input_shapes[1] == Shape{128, 768});
  CHECK(layer(base, "encoder.5.stream").type == LayerType::LayerNorm);
}

TEST_CASE("Marian and FSMT: sinusoidal positions add no parameters; v3 switches make a pre-norm model",
          "[hf_config][seq2seq]") {
  // Helsinki-NLP/opus-mt-en-de: d 512, 6 + 6 layers, FFN 2048, 58,101 tokens. Hugging Face's num_parameters()
  // also counts the two frozen 512 x 512 sinusoidal tables (73,886,208 + 524,288 = 74,410,496); they do not train.
  Json marian = {{"model_type", "marian"},        {"d_model", 512},
                 {"encoder_layers", 6},           {"decoder_layers", 6},
                 {"encoder_attention_heads", 8},  {"decoder_attention_heads", 8},
                 {"encoder_ffn_dim", 2048},       {"decoder_ffn_dim", 2048},
                 {"vocab_size", 58101},           {"max_position_embeddings", 512},
                 {"activation_function", "swish"}};
  Network m = from_config(marian, 64);
  CHECK(m.parameters() == seq2seq_parameters(58101, 0, 512, 2048, 6, 0));
  CHECK(m.parameters() == 73886208);
  // Sinusoidal positions extrapolate: a longer sequence only warns.
  std::vector<std::string> warnings;
  from_config(marian, 1024, &warnings);
  CHECK(warnings.size() == 1);
  // normalize_before + add_final_layer_norm: LayerNorms before each sublayer and one after each stack.
  marian["normalize_before"] = true;
  marian["add_final_layer_norm"] = true;
  Network pre = from_config(marian, 64);
  CHECK(pre.parameters() == seq2seq_parameters(58101, 0, 512, 2048, 6, 2));
  CHECK(layer(pre, "encoder.0.self_attn").inputs.size() == 1);
  CHECK(pre.layers[static_cast<std::size_t>(layer(pre, "encoder.0.self_attn").inputs[0])].type == LayerType::LayerNorm);
  CHECK(layer(pre, "encoder_out").type == LayerType::LayerNorm);
  // FSMT: separate source and target tables, the output projection tied to the target one.
  Json fsmt = marian;
  fsmt["model_type"] = "fsmt";
  fsmt.erase("vocab_size");
  fsmt["src_vocab_size"] = 1000;
  fsmt["tgt_vocab_size"] = 2000;
  fsmt.erase("normalize_before");
  fsmt.erase("add_final_layer_norm");
  CHECK(from_config(fsmt, 64).parameters() == seq2seq_parameters(1000, 0, 512, 2048, 6, 0) + 2000 * 512);
  require_error(predict_config([&] {
                  Json j = fsmt;
                  j.erase("tgt_vocab_size");
                  return j;
                }()),
                "model.hf_config.tgt_vocab_size", "required field is missing");
  Json bad = marian;
  bad["decoder_attention_heads"] = 7;
  require_error(predict_config(bad), "model.hf_config.decoder_attention_heads", "must divide d_model");
}
