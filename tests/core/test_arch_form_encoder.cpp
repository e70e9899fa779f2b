// The encoder families of the architecture form ("encoder", "vit", "deberta"; docs/MODEL_FORMAT.md): every real
// config and preset of these families read, echoed as model.architecture and sent back gives the same layers
// and the same response but for the reading fields; every Hugging Face head and switch the rows read survives
// the echo; editing one field changes the parameters as the formula in the test says; bad fields are named.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "arch_form_roundtrip.hpp"
#include "hf_fixtures.hpp"
#include "model/hf/arch_json.hpp"
#include "prenet/hf_config.hpp"

using namespace prenet;
using testutil::check_error;
using testutil::with;
using I = std::int64_t;
using testutil::net_of_architecture;
using testutil::predict_err;
using testutil::predict_ok;
using testutil::request_for;
using testutil::without_reading;

namespace {

/// The form family each model type of these families is echoed in.
const std::map<std::string, std::string>& family_of_type() {
  static const std::map<std::string, std::string> m = {{"bert", "encoder"},
                                                       {"roberta", "encoder"},
                                                       {"distilbert", "encoder"},
                                                       {"vit", "vit"},
                                                       {"deberta-v2", "deberta"}};
  return m;
}

/// The config's layers and the layers of its echoed architecture, at `seq_len` tokens or `image` pixels.
void check_same_layers(const Json& cfg, I seq_len, I image) {
  INFO("config: " << cfg.dump());
  std::optional<Json> arch = hf::hf_config_architecture(cfg);
  REQUIRE(arch);
  CHECK((*arch)["family"] == family_of_type().at(cfg["model_type"].get<std::string>()));
  // A fixed point: read back and written again, the same text.
  CHECK(hf::arch_to_json(hf::arch_from_json(*arch, "model.architecture")) == *arch);
  std::vector<std::string> w1, w2;
  Json from_cfg = hf_config_to_layers(cfg, "model.hf_config", seq_len, w1, image);
  Json from_arch = hf::architecture_to_layers(*arch, "model.architecture", seq_len, w2, image);
  CHECK(from_arch["input"] == from_cfg["input"]);
  CHECK(from_arch["layers"] == from_cfg["layers"]);
}

/// A small BERT-style architecture: 2 blocks of width 64 (4 heads), MLP 128, 100 words, 64 positions.
Json small_encoder() {
  return {{"family", "encoder"},      {"hidden_size", 64}, {"num_hidden_layers", 2},       {"num_attention_heads", 4},
          {"intermediate_size", 128}, {"vocab_size", 100}, {"max_position_embeddings", 64}};
}

/// A small ViT: 2 blocks of width 64, 32-pixel images of 8-pixel patches, 10 classes.
Json small_vit() {
  return {{"family", "vit"},  {"hidden_size", 64}, {"num_hidden_layers", 2}, {"num_attention_heads", 4},
          {"image_size", 32}, {"patch_size", 8},   {"num_labels", 10}};
}

/// A small DeBERTa-v3: relative attention over 16 buckets, both terms, own position projections.
Json small_deberta() {
  return {{"family", "deberta"},           {"hidden_size", 64},        {"num_hidden_layers", 2},
          {"num_attention_heads", 4},      {"intermediate_size", 128}, {"vocab_size", 100},
          {"relative_attention", true},    {"position_buckets", 16},   {"pos_att_type", "c2p|p2c"},
          {"position_biased_input", false}};
}

}  // namespace

TEST_CASE("encoder forms: every real encoder config round-trips to the same layers and response", "[arch_encoder]") {
  int read = 0;
  for (const std::string& file : testutil::fixture_files()) {
    const Json cfg = testutil::read_fixture(file);
    if (!cfg.is_object() || !cfg.contains("model_type") || !family_of_type().count(cfg["model_type"])) continue;
    INFO(file);
    ++read;
    check_same_layers(cfg, 0, 0);
    const Json by_config = predict_ok(request_for({{"hf_config", cfg}}));
    REQUIRE(by_config["model"].contains("architecture"));
    const Json by_arch = predict_ok(request_for({{"architecture", by_config["model"]["architecture"]}}));
    CHECK(by_arch["model"]["source"] == "architecture");
    CHECK(by_arch["model"]["architecture"] == by_config["model"]["architecture"]);
    CHECK(by_arch["model"]["parameters"] == by_config["model"]["parameters"]);
    CHECK(by_arch["results"][0]["step_ms"] == by_config["results"][0]["step_ms"]);
    CHECK(without_reading(by_arch) == without_reading(by_config));
  }
  CHECK(read >= 2);  // bert-base-uncased, deberta-v3-base
}

TEST_CASE("encoder forms: the presets read from encoder and ViT configs round-trip", "[arch_encoder]") {
  const std::vector<std::pair<std::string, std::string>> presets = {
      {"bert-base", "encoder"},    {"bert-large", "encoder"}, {"distilbert", "encoder"},
      {"roberta-base", "encoder"}, {"vit-b16", "vit"},        {"vit-l16", "vit"}};
  for (const auto& [id, family] : presets) {
    INFO(id);
    const Preset* preset = find_preset(id);
    REQUIRE(preset);
    REQUIRE(preset->model.contains("hf_config"));
    const Json by_preset = predict_ok(request_for({{"preset", id}}));
    const Json& arch = by_preset["model"]["architecture"];
    CHECK(arch["family"] == family);
    Json again = request_for({{"architecture", arch}});
    if (family != "vit") again["training"]["seq_len"] = preset->input["seq_len"];
    const Json by_arch = predict_ok(again);
    CHECK(by_arch["model"]["parameters"] == by_preset["model"]["parameters"]);
    CHECK(by_arch["results"][0]["step_ms"] == by_preset["results"][0]["step_ms"]);
    CHECK(by_arch["model"]["architecture"] == arch);
    CHECK(without_reading(by_arch) == without_reading(by_preset));
  }
}

TEST_CASE("encoder forms: every head and switch the rows read survives the echo", "[arch_encoder]") {
  const Json bert = {{"model_type", "bert"},          {"hidden_size", 64},          {"num_hidden_layers", 2},
                     {"num_attention_heads", 4},      {"intermediate_size", 128},   {"vocab_size", 100},
                     {"max_position_embeddings", 64}, {"hidden_dropout_prob", 0.05}};
  const std::vector<Json> heads = {
      Json::object(),
      {{"architectures", {"BertForMaskedLM"}}},
      {{"architectures", {"BertModel"}}},
      {{"architectures", {"BertForSequenceClassification"}}, {"num_labels", 3}, {"classifier_dropout", 0.2}},
      {{"architectures", {"BertForTokenClassification"}}, {"id2label", {{"0", "a"}, {"1", "b"}, {"2", "c"}}}},
      {{"architectures", {"BertForQuestionAnswering"}}}};
  for (const char* type : {"bert", "roberta"}) {
    for (const Json& head : heads) {
      Json cfg = bert;
      cfg["model_type"] = type;
      cfg.update(head);
      check_same_layers(cfg, 0, 0);
      check_same_layers(cfg, 32, 0);
    }
  }
  const Json distil = {{"model_type", "distilbert"},
                       {"dim", 64},
                       {"n_layers", 2},
                       {"n_heads", 4},
                       {"hidden_dim", 128},
                       {"vocab_size", 100},
                       {"max_position_embeddings", 64}};
  for (const Json& head :
       {Json::object(), Json{{"architectures", {"DistilBertModel"}}},
        Json{{"architectures", {"DistilBertForSequenceClassification"}}, {"seq_classif_dropout", 0.3}},
        Json{{"architectures", {"DistilBertForQuestionAnswering"}}}}) {
    Json cfg = distil;
    cfg.update(head);
    check_same_layers(cfg, 0, 0);
  }
  const Json vit = {{"model_type", "vit"},      {"hidden_size", 64}, {"num_hidden_layers", 2},
                    {"num_attention_heads", 4}, {"image_size", 32},  {"patch_size", 8}};
  for (const Json& extra : {Json::object(), Json{{"num_labels", 7}}, Json{{"qkv_bias", false}, {"num_channels", 1}},
                            Json{{"hidden_dropout_prob", 0.1}, {"attention_probs_dropout_prob", 0.1}}}) {
    Json cfg = vit;
    cfg.update(extra);
    check_same_layers(cfg, 0, 0);
    check_same_layers(cfg, 0, 16);  // smaller images than the position table's
  }
  const Json deberta = {{"model_type", "deberta-v2"},    {"hidden_size", 64},
                        {"num_hidden_layers", 2},        {"num_attention_heads", 4},
                        {"intermediate_size", 128},      {"vocab_size", 100},
                        {"max_position_embeddings", 64}, {"relative_attention", true},
                        {"position_buckets", 16},        {"pos_att_type", "p2c|c2p"},
                        {"norm_rel_ebd", "layer_norm"},  {"share_att_key", true},
                        {"position_biased_input", false}};
  const std::vector<Json> variants = {
      Json::object(),
      {{"architectures", {"DebertaV2ForMaskedLM"}}},
      {{"architectures", {"DebertaV2Model"}}},
      {{"architectures", {"DebertaV2ForSequenceClassification"}},
       {"num_labels", 3},
       {"pooler_dropout", 0.1},
       {"cls_dropout", 0.2},
       {"pooler_hidden_act", "tanh"}},
      {{"architectures", {"DebertaV2ForSequenceClassification"}}},
      {{"architectures", {"DebertaV2ForTokenClassification"}}, {"classifier_dropout", 0.3}},
      {{"position_buckets", -1}, {"max_relative_positions", 32}, {"share_att_key", false}, {"embedding_size", 32}},
      {{"position_buckets", -1}, {"pos_att_type", {"c2p"}}, {"position_biased_input", true}, {"type_vocab_size", 2}},
      {{"relative_attention", false}, {"norm_rel_ebd", "none"}}};
  for (const Json& v : variants) {
    Json cfg = deberta;
    cfg.update(v);
    check_same_layers(cfg, 0, 0);
    check_same_layers(cfg, 48, 0);
  }
}

TEST_CASE("encoder forms: a hand-written architecture takes the documented defaults", "[arch_encoder]") {
  Json minimal = {{"family", "encoder"},
                  {"hidden_size", 64},
                  {"num_hidden_layers", 2},
                  {"num_attention_heads", 4},
                  {"vocab_size", 100}};
  hf::Arch a = hf::arch_from_json(minimal, "model.architecture");
  CHECK(a.family == "encoder");
  CHECK(a.inner == 4 * 64);
  CHECK(a.max_positions == 512);
  CHECK(a.type_vocab == 2);
  CHECK(a.act == "gelu");
  CHECK(a.dropout == 0.1);
  CHECK(a.attn_dropout == 0.1);
  CHECK(a.pooler_act == "tanh");
  CHECK(a.head.head == hf::Head::LanguageModel);
  // The echo says every documented field, and each default as the docs say it.
  const std::map<std::string, Json> small = {{"encoder", minimal}, {"vit", small_vit()}, {"deberta", small_deberta()}};
  for (const auto& [family, given] : small) {
    Json echoed = hf::arch_to_json(hf::arch_from_json(given, "model.architecture"));
    CHECK(echoed["family"] == family);
    for (const auto& doc : hf::arch_field_docs(family)) {
      INFO(family << "." << doc.key);
      REQUIRE(echoed.contains(doc.key));
      // A field the small architecture leaves out shows the documented default.
      if (given.contains(doc.key) || doc.fallback == "required" || doc.key == "name") continue;
      const Json& v = echoed[doc.key];
      if (doc.type == "integer" && doc.fallback.find_first_not_of("0123456789") == std::string::npos) {
        CHECK(v.get<I>() == std::stoll(doc.fallback));
      } else if (doc.type == "boolean" || doc.type == "number") {
        CHECK(v.dump() == doc.fallback);
      } else if (doc.type == "string") {
        CHECK(v.get<std::string>() == doc.fallback);
      }
    }
  }
  hf::Arch v =
      hf::arch_from_json({{"family", "vit"}, {"hidden_size", 64}, {"num_hidden_layers", 2}, {"num_attention_heads", 4}},
                         "model.architecture");
  CHECK(v.image_size == 224);
  CHECK(v.patch == 16);
  CHECK(v.channels == 3);
  CHECK(v.head.labels == 1000);
  CHECK(v.act == "gelu");
  CHECK(v.dropout == 0);
  // A learned position table: the positions bound the length; the default is capped at 1024 (here 512).
  CHECK(net_of_architecture(minimal).input.seq_len == 512);
  CHECK(net_of_architecture(minimal, 100).input.seq_len == 100);
}

TEST_CASE("encoder forms: ViT reads an image of the architecture's or the request's size", "[arch_encoder]") {
  const Json vit = small_vit();
  Network net = net_of_architecture(vit);
  CHECK(net.input.kind == InputKind::Image);
  CHECK(net.input.image_size == 32);
  CHECK(net_of_architecture(vit, 0, 16).input.image_size == 16);
  // Through the request: training.image_size sets the side; a seq_len is said to be ignored.
  Json request = request_for({{"architecture", vit}});
  request["training"]["image_size"] = 24;
  request["training"]["seq_len"] = 128;
  const Json r = predict_ok(request);
  CHECK(r["training"]["image_size"] == 24);
  bool noted = false;
  for (const auto& w : r["warnings"]) noted = noted || w.get<std::string>().find("training.seq_len ignored") == 0;
  CHECK(noted);
  // Larger than the position table: the request's field is named.
  request["training"]["image_size"] = 64;
  CHECK(predict_err(request)["field"] == "training.image_size");
  // A token family says the image size is ignored, as a config does.
  Json tokens = request_for({{"architecture", small_encoder()}});
  tokens["training"]["image_size"] = 24;
  const Json t = predict_ok(tokens);
  noted = false;
  for (const auto& w : t["warnings"]) noted = noted || w.get<std::string>().find("training.image_size ignored") == 0;
  CHECK(noted);
}

TEST_CASE("encoder forms: editing one field changes the parameters by its formula", "[arch_encoder]") {
  SECTION("encoder: one block more, token types, labels") {
    const Json base = small_encoder();
    const I h = 64, i = 128;
    const I p = net_of_architecture(base).parameters();
    // q, k, v, o with biases; the MLP's two matrices and biases; two LayerNorms' scale and bias.
    const I block = 4 * (h * h + h) + (h * i + i) + (i * h + h) + 2 * 2 * h;
    CHECK(net_of_architecture(with(base, "num_hidden_layers", 3)).parameters() - p == block);
    CHECK(p - net_of_architecture(with(base, "type_vocab_size", 0)).parameters() == 2 * h);
    CHECK(net_of_architecture(with(base, "max_position_embeddings", 96)).parameters() - p == 32 * h);
    const Json classifier = with(base, "task_head", "sequence_classification");
    CHECK(net_of_architecture(with(classifier, "num_labels", 5)).parameters() -
              net_of_architecture(classifier).parameters() ==
          3 * (h + 1));
    // The bare model: the pooler (dense h x h with bias), or nothing without it.
    const Json bare = with(base, "task_head", "none");
    CHECK(net_of_architecture(bare).parameters() -
              net_of_architecture(with(bare, "add_pooling_layer", false)).parameters() ==
          h * h + h);
  }
  SECTION("vit: labels, image size, patch size") {
    const Json base = small_vit();
    const I h = 64;
    const I p = net_of_architecture(base).parameters();
    CHECK(net_of_architecture(with(base, "num_labels", 12)).parameters() - p == 2 * (h + 1));
    // 64-pixel images of 8-pixel patches: 64 patches + the class token, against 16 + 1.
    CHECK(net_of_architecture(with(base, "image_size", 64)).parameters() - p == (65 - 17) * h);
    // 16-pixel patches: the convolution's 3 x 16 x 16 kernels per filter, 4 + 1 positions.
    CHECK(net_of_architecture(with(base, "patch_size", 16)).parameters() - p ==
          3 * (16 * 16 - 8 * 8) * h - (17 - 5) * h);
    // No Q, K, V biases: 3 x h per block, 2 blocks.
    CHECK(p - net_of_architecture(with(base, "qkv_bias", false)).parameters() == 2 * 3 * h);
  }
  SECTION("deberta: buckets, shared position keys, the relative table's norm, embedding width") {
    const Json base = small_deberta();
    const I h = 64, layers = 2, terms = 2;
    const I p = net_of_architecture(base).parameters();
    CHECK(net_of_architecture(with(base, "position_buckets", 32)).parameters() - p == 2 * 16 * h);
    // share_att_key: no position projections of their own (one h x h with bias per term and layer).
    CHECK(p - net_of_architecture(with(base, "share_att_key", true)).parameters() == layers * terms * (h * h + h));
    CHECK(p - net_of_architecture(with(base, "pos_att_type", "c2p")).parameters() == layers * (h * h + h));
    CHECK(net_of_architecture(with(base, "norm_rel_ebd", "layer_norm")).parameters() - p == 2 * h);
    // A 512-row absolute table added to the words.
    CHECK(net_of_architecture(with(base, "position_biased_input", true)).parameters() - p == 512 * h);
    // Without buckets the relative table spans 2 x max_relative_positions rows.
    Json unbucketed = with(with(base, "position_buckets", 0), "max_relative_positions", 40);
    CHECK(net_of_architecture(unbucketed).parameters() - p == 2 * (40 - 16) * h);
    // A 32-wide word table projected to 64 (no bias); the MLM head's transform then ends at 32 wide.
    const I e = 32, vocab = 100;
    const I narrow = net_of_architecture(with(base, "embedding_size", e)).parameters();
    const I embed_change = vocab * (h - e) - e * h;                     // words, embed_proj
    const I head_change = (h * h + h) + 2 * h - ((h * e + e) + 2 * e);  // transform and its LayerNorm
    CHECK(p - narrow == embed_change + head_change);
  }
}

TEST_CASE("encoder forms: every bad field is named with what was expected", "[arch_encoder]") {
  const std::string p = "model.architecture";
  const Json enc = small_encoder(), vit = small_vit(), deb = small_deberta();
  REQUIRE_NOTHROW(hf::arch_from_json(enc, p));
  REQUIRE_NOTHROW(hf::arch_from_json(vit, p));
  REQUIRE_NOTHROW(hf::arch_from_json(deb, p));
  check_error(with(enc, "num_attention_heads", 5), p + ".num_attention_heads", "must divide the hidden size 64");
  check_error(with(enc, "dim", 64), p + ".dim", "expected one of family, name, hidden_size");
  check_error(with(enc, "num_key_value_heads", 2), p + ".num_key_value_heads", "expected one of");
  check_error(with(enc, "max_position_embeddings", 0), p + ".max_position_embeddings", "[1,");
  check_error(with(enc, "type_vocab_size", -1), p + ".type_vocab_size", "[0,");
  check_error(with(enc, "pooler_act", "swoosh"), p + ".pooler_act", "unsupported activation");
  check_error(with(enc, "add_pooling_layer", "yes"), p + ".add_pooling_layer", "true or false");
  check_error(with(enc, "task_head", "masked_lm"), p + ".task_head", "language_model");
  check_error(with(enc, "classifier_dropout", 1.0), p + ".classifier_dropout", "expected a number");
  check_error(with(enc, "patch_size", 16), p + ".patch_size", "expected one of");
  Json missing = enc;
  missing.erase("vocab_size");
  check_error(missing, p + ".vocab_size", "required field is missing");
  check_error(with(enc, "family", "bert"), p + ".family", "supported: decoder, ssm, encoder, vit, deberta");
  check_error(with(vit, "patch_size", 48), p + ".patch_size", "larger than the image_size (32)");
  check_error(with(vit, "image_size", 0), p + ".image_size", "[1,");
  check_error(with(vit, "num_labels", 0), p + ".num_labels", "[1,");
  check_error(with(vit, "num_channels", 0), p + ".num_channels", "[1,");
  check_error(with(vit, "vocab_size", 100), p + ".vocab_size", "expected one of");
  check_error(with(vit, "num_attention_heads", 6), p + ".num_attention_heads", "must divide");
  check_error(with(deb, "pos_att_type", "c2p|x"), p + ".pos_att_type", "none, c2p, p2c, c2p|p2c");
  check_error(with(deb, "norm_rel_ebd", "layer"), p + ".norm_rel_ebd", "none, layer_norm");
  check_error(with(deb, "relative_attention", false), p + ".position_buckets", "relative_attention is false");
  check_error(with(with(with(deb, "relative_attention", false), "position_buckets", 0), "max_relative_positions", 8),
              p + ".max_relative_positions", "relative_attention is false");
  check_error(with(deb, "embedding_size", -1), p + ".embedding_size", "[0,");
  check_error(with(deb, "pooler_hidden_act", "nope"), p + ".pooler_hidden_act", "unsupported activation");
  check_error(with(deb, "pooler_dropout", 2), p + ".pooler_dropout", "expected a number");
  // Through the request: a length beyond the learned table names the request's field.
  Json request = request_for({{"architecture", enc}});
  request["training"]["seq_len"] = 100;
  CHECK(predict_err(request)["field"] == "training.seq_len");
  request["model"]["architecture"]["num_attention_heads"] = 5;
  CHECK(predict_err(request)["field"] == "model.architecture.num_attention_heads");
  // Too deep to expand: the depth is named, as for a config.
  for (const Json& arch : {enc, vit, deb}) {
    Json deep = request_for({{"architecture", with(arch, "num_hidden_layers", 5000)}});
    Json error = predict_err(deep);
    CHECK(error["field"] == "model.architecture.num_hidden_layers");
    CHECK_THAT(error["message"].get<std::string>(), Catch::Contains("the limit is 10000"));
  }
}
