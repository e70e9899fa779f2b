// The architecture form (docs/MODEL_FORMAT.md, "Architecture form"): every real decoder config in
// tests/fixtures/hf read, echoed as model.architecture and sent back gives the same layers and the same response
// but for the reading fields; every error names its field; editing one field changes what it should.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
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

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Every tests/fixtures/hf/*.json, sorted.
/// A response to `request`; fails the test on an error document.
Json predict(const Json& request) {
  Json doc = Json::parse(predict_json(request.dump()));
  INFO("response: " << doc.dump().substr(0, 600));
  REQUIRE_FALSE(doc.contains("error"));
  return doc;
}

/// The error document of `request`: its field and message.
Json predict_error(const Json& request) {
  Json doc = Json::parse(predict_json(request.dump()));
  REQUIRE(doc.contains("error"));
  return doc["error"];
}

/// `response` without the fields that say how the model was read (docs/API.md): the form, the config's reading,
/// where the sequence length and precision came from, and the notes.
Json without_reading(Json response) {
  response["model"].erase("source");
  response["model"].erase("reading");
  response["training"].erase("seq_len_from");
  response["training"].erase("precision_from");
  response.erase("warnings");
  return response;
}

/// A request for `model` on one accelerator, precision given (the config's dtype is a reading field).
Json request_for(const Json& model) {
  return {{"model", model},
          {"hardware", {"h100-sxm"}},
          {"training", {{"precision", "bf16"}, {"batch_size", 1}}},
          {"options", {{"per_layer", false}}}};
}

/// A small Llama-style architecture: 4 layers of 8 heads of 64, GQA 2, SwiGLU 1024, vocabulary 1000.
Json small_arch() {
  return {{"hidden_size", 512},
          {"num_hidden_layers", 4},
          {"num_attention_heads", 8},
          {"num_key_value_heads", 2},
          {"intermediate_size", 1024},
          {"vocab_size", 1000},
          {"max_position_embeddings", 2048},
          {"learned_positions", false},
          {"rms_norm", true},
          {"gated_mlp", true},
          {"hidden_act", "silu"},
          {"qkv_bias", false},
          {"out_bias", false},
          {"mlp_bias", false},
          {"tie_word_embeddings", false}};
}

Network net_of_arch(const Json& arch, I seq_len = 256) {
  std::vector<std::string> warnings;
  return parse_layer_list(hf::architecture_to_layers(arch, "model.architecture", seq_len, warnings),
                          "model.architecture", {});
}

}  // namespace

TEST_CASE("architecture form: every real decoder config round-trips to the same layers and response", "[arch_json]") {
  int decoders = 0, others = 0;
  for (const std::string& file : testutil::fixture_files()) {
    const Json cfg = testutil::read_fixture(file);
    INFO(file);
    std::optional<Json> arch = hf::hf_config_architecture(cfg);
    if (arch && (*arch)["family"] != "decoder") {  // the other families' round trips: test_arch_form_*.cpp
      ++others;
      continue;
    }
    if (!arch) {
      ++others;
      // Read (or refused, as the two-tower configs are) without an architecture.
      const Json response = Json::parse(predict_json(request_for({{"hf_config", cfg}}).dump()));
      if (!response.contains("error")) CHECK_FALSE(response["model"].contains("architecture"));
      continue;
    }
    ++decoders;
    // The JSON form is a fixed point: read back and written again, it is the same text.
    CHECK(hf::arch_to_json(hf::arch_from_json(*arch, "model.architecture")) == *arch);
    // The same layer list as the config's reading, at the default sequence length.
    std::vector<std::string> w1, w2;
    Json from_cfg = hf_config_to_layers(cfg, "model.hf_config", 0, w1);
    Json from_arch = hf::architecture_to_layers(*arch, "model.architecture", 0, w2);
    CHECK(from_arch["input"] == from_cfg["input"]);
    CHECK(from_arch["layers"] == from_cfg["layers"]);
    // Through the whole request path: the echoed architecture, sent back, gives the same response.
    const Json by_config = predict(request_for({{"hf_config", cfg}}));
    REQUIRE(by_config["model"].contains("architecture"));
    const Json by_arch = predict(request_for({{"architecture", by_config["model"]["architecture"]}}));
    CHECK(by_arch["model"]["source"] == "architecture");
    CHECK(by_arch["model"]["architecture"] == by_config["model"]["architecture"]);
    CHECK(by_arch["model"]["parameters"] == by_config["model"]["parameters"]);
    CHECK(by_arch["results"][0]["step_ms"] == by_config["results"][0]["step_ms"]);
    CHECK(without_reading(by_arch) == without_reading(by_config));
    // Neither set training.seq_len: both say where the length came from, the architecture its own field.
    if (by_config["training"].contains("seq_len_from")) {
      const std::string from = by_arch["training"].value("seq_len_from", "");
      CHECK_THAT(from, Catch::StartsWith("model.architecture.max_position_embeddings") ||
                           Catch::StartsWith("no trained positions in the architecture"));
      const std::string config_from = by_config["training"]["seq_len_from"].get<std::string>();
      // The same length and cap, only the field named differently.
      CHECK(from.substr(from.find(' ')) == config_from.substr(config_from.find(' ')));
    }
  }
  // 35 of the 43 fixtures are decoders; a change that stops echoing them fails here.
  CHECK(decoders >= 30);
  CHECK(others >= 5);
}

TEST_CASE("architecture form: presets read from a config carry it, other forms do not", "[arch_json]") {
  const Json preset = predict(request_for({{"preset", "llama-3.1-8b"}}));
  REQUIRE(preset["model"].contains("architecture"));
  CHECK(preset["model"]["architecture"]["name"] == preset["model"]["name"]);
  CHECK(preset["model"]["architecture"]["num_key_value_heads"] == 8);
  Json layers = Json::parse(R"J({"input": {"kind": "vector", "features": 8},
    "layers": [{"type": "dense", "units": 4}, {"type": "cross_entropy"}]})J");
  CHECK_FALSE(predict(request_for(layers))["model"].contains("architecture"));
  // A renamed model keeps its name through the echo.
  Json named = {{"architecture", small_arch()}, {"name", "mine"}};
  CHECK(predict(request_for(named))["model"]["architecture"]["name"] == "mine");
}

TEST_CASE("architecture form: a hand-written architecture takes the documented defaults", "[arch_json]") {
  Json minimal = {{"hidden_size", 256}, {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"vocab_size", 500}};
  hf::Arch a = hf::arch_from_json(minimal, "model.architecture");
  CHECK(a.kv_heads == 4);     // num_attention_heads
  CHECK(a.inner == 4 * 256);  // 4 × hidden_size
  CHECK(a.name == "architecture");
  CHECK(a.plan.empty());
  CHECK(a.head.head == hf::Head::LanguageModel);
  Json echoed = hf::arch_to_json(a);
  for (const auto& doc : hf::arch_field_docs()) {
    if (doc.key != "layers") CHECK(echoed.contains(doc.key));
  }
  // GPT-2 style by default: learned positions, so the positions default to the sequence length.
  Network net = net_of_arch(minimal, 128);
  CHECK(net.input.seq_len == 128);
}

TEST_CASE("architecture form: every bad field is named with what was expected", "[arch_json]") {
  const std::string p = "model.architecture";
  auto with = [](Json base, const std::string& key, const Json& value) {
    base[key] = value;
    return base;
  };
  const Json ok = small_arch();
  REQUIRE_NOTHROW(hf::arch_from_json(ok, p));
  check_error(with(ok, "hidden", 4096), p + ".hidden", "expected one of family, name, hidden_size");
  check_error(with(ok, "hidden_size", "4096"), p + ".hidden_size", "expected an integer");
  check_error(with(ok, "hidden_size", 0), p + ".hidden_size", "expected an integer in [1,");
  check_error(with(ok, "num_hidden_layers", -2), p + ".num_hidden_layers", "expected an integer in [1,");
  Json missing = ok;
  missing.erase("vocab_size");
  check_error(missing, p + ".vocab_size", "required field is missing");
  check_error(with(ok, "rms_norm", 1), p + ".rms_norm", "expected true or false");
  check_error(with(ok, "hidden_dropout", 1.5), p + ".hidden_dropout", "expected a number");
  check_error(with(ok, "hidden_act", "swiglu9"), p + ".hidden_act", "unsupported activation");
  check_error(with(ok, "qk_norm", "rms"), p + ".qk_norm", "head_weightless");
  check_error(with(ok, "task_head", "lm"), p + ".task_head", "language_model");
  check_error(with(ok, "family", "rnn"), p + ".family", "supported: decoder");
  check_error(with(ok, "family", 3), p + ".family", "string");
  check_error(Json::array(), p, "object");
  check_error(with(ok, "model_type", "llama"), p + ".model_type", "model.hf_config");
  // Heads: dividing the hidden size unless head_dim is given; KV heads dividing the heads.
  check_error(with(ok, "num_attention_heads", 7), p + ".num_attention_heads", "must divide the hidden size 512");
  Json explicit_width = with(with(ok, "num_attention_heads", 7), "head_dim", 64);
  explicit_width["num_key_value_heads"] = 7;
  CHECK_NOTHROW(hf::arch_from_json(explicit_width, p));
  check_error(with(ok, "num_key_value_heads", 3), p + ".num_key_value_heads", "must divide num_attention_heads (8)");
  check_error(with(ok, "num_key_value_heads", 16), p + ".num_key_value_heads", "[1, 8]");
  // Experts.
  Json moe = with(with(ok, "num_experts", 4), "num_experts_per_tok", 5);
  check_error(moe, p + ".num_experts_per_tok", "above num_experts (4)");
  // Latent attention.
  check_error(with(ok, "latent_attention", true), p + ".kv_lora_rank", "at least 1");
  // The per-layer plan.
  Json plan = ok;
  plan["layers"] = Json::array({Json::object(), Json::object(), Json::object()});
  check_error(plan, p + ".layers", "has 3 entries; expected one per layer, 4 (num_hidden_layers)");
  check_error(with(ok, "layers", Json::object()), p + ".layers", "array");
  auto entry = [&](const Json& e) {
    Json j = ok;
    j["layers"] = Json::array({Json::object(), Json::object(), Json::object(), e});
    return j;
  };
  check_error(entry({{"attention", "sliding"}}), p + ".layers[3].window", "required");
  check_error(entry({{"attention", "sliding"}, {"window", 0}}), p + ".layers[3].window", "[1,");
  check_error(entry({{"window", 512}}), p + ".layers[3].window", "only for \"sliding\" or \"chunked\"");
  check_error(entry({{"attention", "local"}}), p + ".layers[3].attention", "full, sliding, chunked");
  check_error(entry({{"moe", true}}), p + ".layers[3].moe", "num_experts of at least 1");
  Json routed = entry({{"moe", true}, {"intermediate_size", 64}});
  routed["num_experts"] = 4;
  check_error(routed, p + ".layers[3].intermediate_size", "moe_intermediate_size");
  check_error(entry({{"slide", 3}}), p + ".layers[3].slide", "attention, window, rope, moe, intermediate_size");
  check_error(entry(7), p + ".layers[3]", "object");
  check_error(entry({{"intermediate_size", 0}}), p + ".layers[3].intermediate_size", "[1,");
}

TEST_CASE("architecture form: errors reach the response naming the field", "[arch_json]") {
  Json bad = small_arch();
  bad["layers"] = Json::array({Json::object(), {{"attention", "sliding"}}, Json::object(), Json::object()});
  Json error = predict_error(request_for({{"architecture", bad}}));
  CHECK(error["field"] == "model.architecture.layers[1].window");
  error = predict_error(request_for({{"architecture", small_arch()}, {"hf_config", Json::object()}}));
  CHECK(error["field"] == "model");
  CHECK_THAT(error["message"].get<std::string>(), Catch::Contains("architecture"));
  error = predict_error(request_for({{"architecture", "llama"}}));
  CHECK(error["field"] == "model.architecture");
}

TEST_CASE("architecture form: editing one field changes what it should", "[arch_json]") {
  const Json cfg = testutil::read_fixture("mistralai--Mixtral-8x7B-v0.1.json");
  const Json arch = *hf::hf_config_architecture(cfg);
  const Network base = net_of_arch(arch);
  const I hidden = arch["hidden_size"], layers = arch["num_hidden_layers"], inner = arch["intermediate_size"];
  SECTION("more experts: their up/down matrices per layer, the router's row, the same active parameters") {
    Json more = arch;
    more["num_experts"] = arch["num_experts"].get<I>() + 4;
    const Network net = net_of_arch(more);
    const I per_expert = 3 * hidden * inner;  // gated: gate, up, down
    CHECK(net.parameters() - base.parameters() == layers * 4 * (per_expert + hidden));
    CHECK(net.active_parameters() - base.active_parameters() == layers * 4 * hidden);  // the router grows only
  }
  SECTION("a sliding window on one layer: no parameters, less attention work") {
    Json windowed = arch;
    windowed["layers"] = Json::array();
    for (I i = 0; i < layers; ++i) windowed["layers"].push_back({{"moe", true}});
    windowed["layers"][3] = {{"moe", true}, {"attention", "sliding"}, {"window", 64}};
    const Network net = net_of_arch(windowed);
    CHECK(net.parameters() == base.parameters());
    // A fused kernel skips the keys outside the window (eager attention computes the whole masked matrix).
    Json flash_window = request_for({{"architecture", windowed}}), flash_base = request_for({{"architecture", arch}});
    flash_window["training"]["attention"] = "flash";
    flash_base["training"]["attention"] = "flash";
    const Json by_window = predict(flash_window);
    const Json by_base = predict(flash_base);
    CHECK(by_window["results"][0]["forward_ms"].get<double>() < by_base["results"][0]["forward_ms"].get<double>());
    CHECK(by_window["model"]["architecture"]["layers"][3]["window"] == 64);
  }
  SECTION("untied embeddings add the head's matrix; one layer fewer removes one layer's parameters") {
    Json small = small_arch();
    const Network tied_off = net_of_arch(small);
    small["tie_word_embeddings"] = true;
    CHECK(tied_off.parameters() - net_of_arch(small).parameters() == 1000 * 512);
    Json shallow = small_arch();
    shallow["num_hidden_layers"] = 3;
    const I per_layer = tied_off.parameters() - net_of_arch(shallow).parameters();
    // q, k, v, o with GQA 2 of 8 heads of 64; gate, up, down; two RMSNorm scales.
    CHECK(per_layer == 512 * 512 * 2 + 2 * 512 * 128 + 3 * 512 * 1024 + 2 * 512);
  }
}

/// The docs' section of `family`: the decoder's is "## Architecture form" up to the first family subsection, each
/// other family's its "### Family `name`" subsection.
std::string family_docs(const std::string& doc, const std::string& family) {
  const std::size_t form = doc.find("## Architecture form");
  REQUIRE(form != std::string::npos);
  const std::size_t at = family == "decoder" ? form : doc.find("### Family `" + family + "`", form);
  REQUIRE(at != std::string::npos);
  const std::size_t end = std::min(doc.find("\n### ", at + 1), doc.find("\n## ", at + 1));
  return doc.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

/// `family`'s rows and its per-layer (or nested) entries' rows, as the docs list them.
std::vector<hf::ArchFieldDoc> docs_rows(const std::string& family) {
  std::vector<hf::ArchFieldDoc> rows = hf::arch_field_docs(family);
  for (auto& row : hf::arch_layer_field_docs(family)) rows.push_back(row);
  return rows;
}

TEST_CASE("architecture form: the docs list every field of every family's table", "[arch_json]") {
  // Every family, so that a family added to the form without its docs fails here.
  const std::string doc = read_text(std::string(PRENET_SOURCE_DIR) + "/docs/MODEL_FORMAT.md");
  REQUIRE(hf::arch_families().size() >= 12);
  for (const std::string& family : hf::arch_families()) {
    INFO(family);
    const std::string text = family_docs(doc, family);
    for (const auto& field : docs_rows(family)) {
      INFO(field.key);
      CHECK(text.find("| `" + field.key + "` | " + field.type + " | " + field.unit + " | " + field.fallback + " | ") !=
            std::string::npos);
    }
  }
}

// Hidden: prints every family's field tables from the same rows (`prenet_core_tests "[arch_doc]"`), which the test
// above checks docs/MODEL_FORMAT.md against.
TEST_CASE("architecture form: print the docs' field tables", "[.][arch_doc]") {
  for (const std::string& family : hf::arch_families()) {
    std::cout << "### Family `" << family << "`\n\n| key | type | unit | default | meaning |\n|---|---|---|---|---|\n";
    for (const auto& f : docs_rows(family)) {
      std::string meaning;  // a '|' in a cell (pos_att_type's c2p|p2c) is written \| in Markdown
      for (char ch : f.doc) meaning += ch == '|' ? std::string("\\|") : std::string(1, ch);
      std::cout << "| `" << f.key << "` | " << f.type << " | " << f.unit << " | " << f.fallback << " | " << meaning
                << " |\n";
    }
    std::cout << "\n";
  }
}
