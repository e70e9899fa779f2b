// The encoder-decoder families of the architecture form (docs/MODEL_FORMAT.md, "Family `t5`", "Family
// `seq2seq`", "Family `whisper`"): every real config and preset of theirs, read, echoed as model.architecture and
// sent back, gives the same layers and the same response; editing one field changes the parameters by the
// formula written here; every bad field is named; the docs list every field.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "arch_form_roundtrip.hpp"
#include "helpers.hpp"
#include "hf_fixtures.hpp"
#include "model/hf/arch_json.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/hf_config.hpp"

using namespace prenet;
using testutil::check_error;
using testutil::with;
using I = std::int64_t;

namespace {

/// A response to `request`; fails the test on an error document.
Json answer(const Json& request) {
  Json doc = Json::parse(predict_json(request.dump()));
  INFO("response: " << doc.dump().substr(0, 600));
  REQUIRE_FALSE(doc.contains("error"));
  return doc;
}

/// A request for `model` on one accelerator with precision (and, when > 0, sequence length) given.
Json request_of(const Json& model, I seq_len = 0) {
  Json training = {{"precision", "bf16"}, {"batch_size", 2}};
  if (seq_len > 0) training["seq_len"] = seq_len;
  return {{"model", model}, {"hardware", {"h100-sxm"}}, {"training", training}, {"options", {{"per_layer", false}}}};
}

/// The layer list of architecture `arch` at `seq_len` tokens (0: its default).
Json layers_of_arch(const Json& arch, I seq_len, std::vector<std::string>* warnings = nullptr) {
  std::vector<std::string> scratch;
  return hf::architecture_to_layers(arch, "model.architecture", seq_len, warnings ? *warnings : scratch);
}

Network net_of_arch(const Json& arch, I seq_len = 64) {
  return parse_layer_list(layers_of_arch(arch, seq_len), "model.architecture", {});
}

/// Checks that config `cfg`, read as family `family`, round-trips: the echo is a fixed point, builds the
/// config's layers at the default length and at `seq_len`, and answers the same request (`preset` instead of
/// the config when given).
void check_round_trip(const Json& cfg, const std::string& family, I seq_len, const std::string& preset = "") {
  std::optional<Json> arch = hf::hf_config_architecture(cfg);
  REQUIRE(arch);
  CHECK((*arch)["family"] == family);
  CHECK(hf::arch_to_json(hf::arch_from_json(*arch, "model.architecture"), family) == *arch);
  for (I seq : {I{0}, seq_len}) {
    INFO("seq_len " << seq);
    std::vector<std::string> w1, w2;
    Json from_cfg = hf_config_to_layers(cfg, "model.hf_config", seq, w1);
    Json from_arch = layers_of_arch(*arch, seq, &w2);
    CHECK(from_arch["input"] == from_cfg["input"]);
    CHECK(from_arch["layers"] == from_cfg["layers"]);
    CHECK(w2 == w1);
  }
  const Json given = preset.empty() ? Json{{"hf_config", cfg}} : Json{{"preset", preset}};
  const Json by_config = answer(request_of(given, seq_len));
  REQUIRE(by_config["model"].contains("architecture"));
  const Json echoed = by_config["model"]["architecture"];
  CHECK(echoed["family"] == family);
  const Json by_arch = answer(request_of({{"architecture", echoed}}, seq_len));
  CHECK(by_arch["model"]["source"] == "architecture");
  CHECK(by_arch["model"]["architecture"] == echoed);
  CHECK(by_arch["model"]["parameters"] == by_config["model"]["parameters"]);
  CHECK(by_arch["results"][0]["step_ms"] == by_config["results"][0]["step_ms"]);
  CHECK(testutil::without_reading(by_arch) == testutil::without_reading(by_config));
}

/// facebook/bart-base's config (BartConfig's defaults for the rest).
Json bart_base() {
  return {{"model_type", "bart"},          {"d_model", 768},
          {"encoder_layers", 6},           {"decoder_layers", 6},
          {"encoder_attention_heads", 12}, {"decoder_attention_heads", 12},
          {"encoder_ffn_dim", 3072},       {"decoder_ffn_dim", 3072},
          {"vocab_size", 50265},           {"max_position_embeddings", 1024},
          {"activation_function", "gelu"}, {"dropout", 0.1}};
}

/// A small Switch Transformers config: 4 + 4 blocks, experts in blocks 1 and 3 of each stack.
Json small_switch() {
  return {{"model_type", "switch_transformers"},
          {"d_model", 128},
          {"d_ff", 512},
          {"d_kv", 32},
          {"num_heads", 4},
          {"num_layers", 4},
          {"num_decoder_layers", 4},
          {"num_experts", 4},
          {"expert_capacity", 16},
          {"encoder_sparse_step", 2},
          {"decoder_sparse_step", 2},
          {"vocab_size", 1000}};
}

}  // namespace

TEST_CASE("encoder-decoder forms: real configs and presets round-trip to the same layers and response",
          "[arch_seq2seq][arch_t5][arch_whisper]") {
  SECTION("the real fixtures") {
    check_round_trip(testutil::read_fixture("google-t5--t5-base.json"), "t5", 256);
    check_round_trip(testutil::read_fixture("steja--whisper-small-telugu.json"), "whisper", 448);
  }
  SECTION("the presets read from configs") {
    for (auto [id, family] : {std::pair{"t5-base", "t5"},
                              {"t5-large", "t5"},
                              {"whisper-large-v3", "whisper"},
                              {"transformer-big-wmt", "seq2seq"}}) {
      INFO(id);
      const Preset* p = find_preset(id);
      REQUIRE(p);
      REQUIRE(p->model.contains("hf_config"));
      check_round_trip(p->model["hf_config"], family, p->input["seq_len"].get<I>(), id);
    }
  }
  SECTION("every row of the families, written out") {
    Json mbart = bart_base();
    mbart["model_type"] = "mbart";
    Json marian = with(with(bart_base(), "model_type", "marian"), "max_position_embeddings", 512);
    marian["activation_function"] = "swish";
    Json fsmt = with(with(marian, "model_type", "fsmt"), "src_vocab_size", 1000);
    fsmt.erase("vocab_size");
    fsmt["tgt_vocab_size"] = 2000;
    Json mt5 = {{"model_type", "mt5"}, {"d_model", 512}, {"d_kv", 64},           {"d_ff", 1024},
                {"num_layers", 8},     {"num_heads", 6}, {"vocab_size", 250112}, {"feed_forward_proj", "gated-gelu"}};
    for (const Json& cfg : {bart_base(), mbart, marian, fsmt}) check_round_trip(cfg, "seq2seq", 128);
    check_round_trip(mt5, "t5", 128);
    check_round_trip(small_switch(), "t5", 128);  // 128 tokens: beyond 4 experts x 16, warned about
  }
}

TEST_CASE("encoder-decoder forms: published counts through the form", "[arch_seq2seq][arch_t5][arch_whisper]") {
  // google/t5-v1_1-base (gated-GELU, untied head): 247,577,856 in Hugging Face.
  Json v11 = {{"family", "t5"},       {"d_model", 768},
              {"d_kv", 64},           {"d_ff", 2048},
              {"num_layers", 12},     {"num_heads", 12},
              {"vocab_size", 32128},  {"dense_act_fn", "gelu_new"},
              {"is_gated_act", true}, {"tie_word_embeddings", false}};
  CHECK(net_of_arch(v11).parameters() == 247577856);
  // facebook/bart-base: 139,420,416 (the form's defaults are BartConfig's: post-norm, layernorm_embedding).
  Json bart = {{"family", "seq2seq"},           {"d_model", 768},          {"encoder_layers", 6},
               {"encoder_attention_heads", 12}, {"encoder_ffn_dim", 3072}, {"vocab_size", 50265}};
  CHECK(net_of_arch(bart).parameters() == 139420416);
  // openai/whisper-tiny: 37,760,640, WhisperConfig's defaults all through.
  const Network tiny = net_of_arch({{"family", "whisper"}});
  CHECK(tiny.parameters() == 37760640);
  CHECK(tiny.input.shape() == Shape{3000, 80});
}

TEST_CASE("t5 form: editing one field changes the parameters by its formula", "[arch_t5]") {
  const Json arch = *hf::hf_config_architecture(testutil::read_fixture("google-t5--t5-base.json"));
  const I D = 768, H = 12, K = 64, F = 3072, V = 32128, L = 12;
  const Network base = net_of_arch(arch);
  const I attention = 4 * D * H * K;  // q, k, v, o without biases
  auto delta = [&](const std::string& key, const Json& value) {
    return net_of_arch(with(arch, key, value)).parameters() - base.parameters();
  };
  CHECK(delta("num_layers", L + 1) == 2 * D + attention + 2 * D * F);              // 2 RMSNorms, attention, wi + wo
  CHECK(delta("num_decoder_layers", L + 1) == 3 * D + 2 * attention + 2 * D * F);  // and cross-attention
  CHECK(delta("is_gated_act", true) == 2 * L * D * F);                             // wi_0 beside wi_1 in every block
  CHECK(delta("tie_word_embeddings", false) == V * D);                             // lm_head's own matrix
  CHECK(delta("relative_attention_num_buckets", 64) == 2 * 32 * H);                // one table per stack
  CHECK(delta("d_kv", 2 * K) == (L * 4 + L * 8) * D * H * K);                      // d_kv independent of d_model
  CHECK(delta("vocab_size", V + 100) == 100 * D);
  // The trained length only sets the default sequence.
  CHECK(net_of_arch(with(arch, "max_position_embeddings", 128), 0).input.seq_len == 128);
  CHECK(net_of_arch(arch, 0).input.seq_len == 512);
}

TEST_CASE("t5 form: Switch's experts, sparse steps and capacity", "[arch_t5]") {
  const Json arch = *hf::hf_config_architecture(small_switch());
  CHECK(arch["num_experts"] == 4);
  CHECK(arch["expert_capacity"] == 16);
  const I D = 128, F = 512;
  const Network base = net_of_arch(arch);
  // One more expert in each of the 4 sparse blocks (1 and 3 of each stack): wi and wo, one router column.
  CHECK(net_of_arch(with(arch, "num_experts", 5)).parameters() - base.parameters() == 4 * (2 * D * F + D));
  // Step 1: every block sparse, 8 instead of 4, each holding 4 experts instead of one MLP (+ the router).
  Json every = with(with(arch, "encoder_sparse_step", 1), "decoder_sparse_step", 1);
  CHECK(net_of_arch(every).parameters() - base.parameters() == 4 * (3 * 2 * D * F + 4 * D));
  // Dense T5: no experts at all.
  Json dense = arch;
  for (const char* key : {"num_experts", "encoder_sparse_step", "decoder_sparse_step", "expert_capacity"})
    dense[key] = 0;
  CHECK(base.parameters() - net_of_arch(dense).parameters() == 4 * (3 * 2 * D * F + 4 * D));
  // The capacity is only warned about, when the tokens exceed experts x capacity.
  std::vector<std::string> warnings;
  layers_of_arch(arch, 64, &warnings);
  CHECK(warnings.empty());
  layers_of_arch(arch, 65, &warnings);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("exceed num_experts x expert_capacity = 64"));
}

TEST_CASE("seq2seq form: editing one field changes the parameters by its formula", "[arch_seq2seq]") {
  const Json arch = *hf::hf_config_architecture(bart_base());
  const I D = 768, F = 3072, P = 1024 + 2;
  const Network base = net_of_arch(arch);
  const I attention = 4 * (D * D + D), mlp = 2 * D * F + F + D;
  auto delta = [&](const Json& edited) { return net_of_arch(edited).parameters() - base.parameters(); };
  CHECK(delta(with(arch, "encoder_layers", 7)) == attention + mlp + 2 * 2 * D);
  CHECK(delta(with(arch, "decoder_layers", 7)) == 2 * attention + mlp + 3 * 2 * D);
  CHECK(delta(with(arch, "decoder_ffn_dim", F + 8)) == 6 * (2 * D * 8 + 8));
  CHECK(delta(with(arch, "add_final_layer_norm", true)) == 2 * 2 * D);
  CHECK(delta(with(arch, "normalize_embedding", false)) == -2 * 2 * D);
  CHECK(delta(with(arch, "max_position_embeddings", 512)) == -2 * 512 * D);
  CHECK(delta(with(arch, "position_offset", 0)) == -2 * 2 * D);
  CHECK(delta(with(arch, "learned_positions", false)) == -2 * P * D);
  CHECK(delta(with(arch, "tgt_vocab_size", 2000)) == 2000 * D);  // a decoder table of its own, tied to the head
  CHECK(delta(with(arch, "normalize_before", true)) == 0);       // the same norms, before each sublayer
  // Without normalize_embedding, it follows learned_positions (BartConfig's default).
  Json sinusoidal = with(arch, "learned_positions", false);
  sinusoidal.erase("normalize_embedding");
  CHECK(delta(sinusoidal) == -2 * P * D - 2 * 2 * D);
}

TEST_CASE("whisper form: the audio front-end and the stacks by their formulas", "[arch_whisper]") {
  const Json arch = *hf::hf_config_architecture(testutil::read_fixture("steja--whisper-small-telugu.json"));
  const I D = 768, F = 3072;
  CHECK(arch["num_mel_bins"] == 80);
  CHECK(arch["max_source_positions"] == 1500);
  CHECK(arch["max_target_positions"] == 448);
  const Network base = net_of_arch(arch);
  auto delta = [&](const std::string& key, const Json& value) {
    return net_of_arch(with(arch, key, value)).parameters() - base.parameters();
  };
  CHECK(delta("num_mel_bins", 128) == 48 * D * 3);        // conv1: a kernel of 3 per mel bin
  CHECK(delta("max_source_positions", 750) == -750 * D);  // the encoder's position table
  CHECK(delta("max_target_positions", 224) == -224 * D);  // the decoder's
  const I attention = 4 * D * D + 3 * D;                  // K without a bias
  CHECK(delta("encoder_layers", 13) == attention + 2 * 2 * D + 2 * D * F + F + D);
  CHECK(delta("decoder_layers", 13) == 2 * attention + 3 * 2 * D + 2 * D * F + F + D);
  CHECK(delta("tie_word_embeddings", false) == 51865 * D);
  const Network shorter = net_of_arch(with(with(arch, "max_source_positions", 750), "num_mel_bins", 128));
  CHECK(shorter.input.shape() == Shape{1500, 128});  // one window of 2 x max_source_positions frames
  // A config of another Whisper class is refused by its reading, so it has no architecture either.
  Json classifier = testutil::read_fixture("steja--whisper-small-telugu.json");
  classifier["architectures"] = {"WhisperForAudioClassification"};
  CHECK_FALSE(hf::hf_config_architecture(classifier));
  CHECK(testutil::layer(net_of_arch(with(arch, "max_target_positions", 224)), "decoder_layer_norm").output_shape ==
        Shape{224, D});
}

TEST_CASE("encoder-decoder forms: every bad field is named with what was expected",
          "[arch_seq2seq][arch_t5][arch_whisper]") {
  const std::string p = "model.architecture";
  const Json t5 = *hf::hf_config_architecture(testutil::read_fixture("google-t5--t5-base.json"));
  const Json bart = *hf::hf_config_architecture(bart_base());
  const Json whisper = *hf::hf_config_architecture(testutil::read_fixture("steja--whisper-small-telugu.json"));
  REQUIRE_NOTHROW(hf::arch_from_json(t5, p));
  REQUIRE_NOTHROW(hf::arch_from_json(bart, p));
  REQUIRE_NOTHROW(hf::arch_from_json(whisper, p));
  // A key of another family is unknown here, and the error lists this family's.
  check_error(with(t5, "hidden_size", 768), p + ".hidden_size", "expected one of family, name, d_model");
  check_error(with(bart, "num_heads", 8), p + ".num_heads", "encoder_attention_heads");
  check_error(with(t5, "family", "bart"), p + ".family", "supported: decoder");
  for (const char* family : {"t5", "seq2seq", "whisper"}) {
    const auto names = hf::arch_families();
    CHECK(std::find(names.begin(), names.end(), family) != names.end());
  }
  Json missing = t5;
  missing.erase("d_ff");
  check_error(missing, p + ".d_ff", "required field is missing");
  check_error(with(t5, "d_model", "768"), p + ".d_model", "expected an integer");
  check_error(with(t5, "dense_act_fn", "swiglu9"), p + ".dense_act_fn", "unsupported activation");
  check_error(with(t5, "dropout_rate", 1.0), p + ".dropout_rate", "expected a number");
  // T5: d_kv must be given when the heads outnumber d_model's features.
  Json narrow = with(with(t5, "d_model", 8), "num_heads", 12);
  narrow.erase("d_kv");
  check_error(narrow, p + ".d_kv", "required when num_heads exceeds d_model");
  CHECK_NOTHROW(hf::arch_from_json(with(narrow, "d_kv", 64), p));
  // Switch-only fields need experts; Switch's blocks are not gated.
  check_error(with(t5, "encoder_sparse_step", 2), p + ".encoder_sparse_step", "needs num_experts of at least 1");
  check_error(with(t5, "expert_capacity", 64), p + ".expert_capacity", "needs num_experts");
  check_error(with(t5, "router_bias", true), p + ".router_bias", "needs num_experts");
  check_error(with(with(t5, "num_experts", 4), "is_gated_act", true), p + ".is_gated_act", "not gated");
  // BART and Whisper: the heads divide d_model.
  check_error(with(bart, "decoder_attention_heads", 7), p + ".decoder_attention_heads", "must divide d_model 768");
  check_error(with(whisper, "encoder_attention_heads", 7), p + ".encoder_attention_heads", "must divide d_model (768)");
  check_error(with(bart, "tgt_vocab_size", -1), p + ".tgt_vocab_size", "expected an integer in [0,");
  check_error(with(whisper, "num_mel_bins", 0), p + ".num_mel_bins", "expected an integer in [1,");
  check_error(with(whisper, "max_target_positions", 0), p + ".max_target_positions", "expected an integer in [1,");
  check_error(with(whisper, "normalize_before", true), p + ".normalize_before", "expected one of family");
  // Too deep to expand: the family's own depth field is named, as a config's reading names its depth field.
  for (auto [arch, key] : {std::pair{t5, "num_layers"}, {bart, "encoder_layers"}, {whisper, "encoder_layers"}}) {
    Json deep = Json::parse(predict_json(request_of({{"architecture", with(arch, key, 5000)}}).dump()))["error"];
    CHECK(deep["field"] == p + "." + key);
    CHECK_THAT(deep["message"].get<std::string>(), Catch::Contains("the limit is 10000"));
  }
  // Through the request: the field of the architecture is named, and a learned table bounds the length.
  Json error = Json::parse(predict_json(request_of({{"architecture", with(bart, "d_model", 0)}}).dump()))["error"];
  CHECK(error["field"] == p + ".d_model");
  error = Json::parse(predict_json(request_of({{"architecture", bart}}, 2048).dump()))["error"];
  CHECK(error["field"] == "training.seq_len");
  CHECK_THAT(error["message"].get<std::string>(), Catch::Contains("1024 learned positions"));
}

TEST_CASE("encoder-decoder forms: a hand-written architecture takes the documented defaults",
          "[arch_seq2seq][arch_t5][arch_whisper]") {
  hf::Arch t5 = hf::arch_from_json(
      {{"family", "t5"}, {"d_model", 512}, {"num_heads", 8}, {"d_ff", 2048}, {"num_layers", 6}, {"vocab_size", 1000}},
      "model.architecture");
  CHECK(t5.head_dim == 64);  // d_model / num_heads
  CHECK(t5.decoder_layers == 6);
  CHECK(t5.act == "relu");
  CHECK_FALSE(t5.gated);
  CHECK(t5.buckets == 32);
  CHECK(t5.max_positions == 512);
  CHECK(t5.experts == 0);
  hf::Arch bart = hf::arch_from_json({{"family", "seq2seq"},
                                      {"d_model", 512},
                                      {"encoder_layers", 3},
                                      {"encoder_attention_heads", 8},
                                      {"vocab_size", 1000}},
                                     "model.architecture");
  CHECK(bart.decoder_layers == 3);
  CHECK(bart.decoder_heads == 8);
  CHECK(bart.inner == 2048);
  CHECK(bart.decoder_inner == 2048);
  CHECK(bart.act == "gelu");
  CHECK(bart.learned_positions);
  CHECK(bart.max_positions == 1024);
  CHECK(bart.position_offset == 2);
  CHECK_FALSE(bart.pre_norm);
  CHECK_FALSE(bart.final_norm);
  CHECK(bart.embed_norm);
  CHECK(bart.tgt_vocab == 0);
  hf::Arch whisper = hf::arch_from_json({{"family", "whisper"}}, "model.architecture");
  CHECK(whisper.hidden == 384);
  CHECK(whisper.mel_bins == 80);
  CHECK(whisper.source_positions == 1500);
  CHECK(whisper.target_positions == 448);
  CHECK(whisper.act == "gelu");
  // Every documented key is echoed.
  for (const std::string family : {"t5", "seq2seq", "whisper"}) {
    INFO(family);
    const Json echoed = hf::arch_to_json(family == "t5" ? t5 : family == "seq2seq" ? bart : whisper, family);
    const auto docs = hf::arch_field_docs(family);
    CHECK(echoed.size() == docs.size());
    for (const auto& doc : docs) CHECK(echoed.contains(doc.key));
    CHECK(hf::arch_layer_field_docs(family).empty());
  }
}
