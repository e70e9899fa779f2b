// The JSON contract (docs/API.md): predict_json and catalog_json never throw, errors are
// {"error": {field, message}} with the message starting with the field, and successful responses obey
// the documented identities.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/api.hpp"

using prenet::Json;
using prenet::predict_json;

namespace {

const char* kSmallModel = R"J({"input": {"kind": "vector", "features": 32},
  "layers": [{"type": "dense", "units": 64, "activation": "relu"}, {"type": "dense", "units": 10},
             {"type": "cross_entropy"}]})J";

Json call_text(const std::string& text) {
  std::string out;
  REQUIRE_NOTHROW(out = predict_json(text));
  Json doc;
  REQUIRE_NOTHROW(doc = Json::parse(out));
  REQUIRE(doc.is_object());
  return doc;
}

Json call(const Json& request) { return call_text(request.dump()); }

/// A request for the small model with `training` merged in.
Json small_request(const Json& training = Json::object()) {
  Json request = {{"model", Json::parse(kSmallModel)}, {"hardware", {"t4"}}};
  if (!training.empty()) request["training"] = training;
  return request;
}

void check_error(const Json& response, const std::string& field, const std::string& needle = "") {
  INFO("response: " << response.dump().substr(0, 600));
  REQUIRE(response.contains("error"));
  CHECK(response.size() == 1);
  const Json& error = response["error"];
  REQUIRE(error.is_object());
  CHECK(error.size() == 2);
  CHECK(error["field"] == field);
  REQUIRE(error["message"].is_string());
  std::string message = error["message"].get<std::string>();
  CHECK_THAT(message, Catch::StartsWith(field + ": "));
  CHECK(message.find('\n') == std::string::npos);  // one line
  if (!needle.empty()) CHECK_THAT(message, Catch::Contains(needle));
}

double num(const Json& v) {
  REQUIRE(v.is_number());
  return v.get<double>();
}

std::string nested(int depth) {
  return std::string(static_cast<std::size_t>(depth), '[') + std::string(static_cast<std::size_t>(depth), ']');
}

}  // namespace

TEST_CASE("whole-document errors: malformed, too deep, not an object, unknown keys", "[api][errors]") {
  check_error(call_text("{\"model\": "), "request", "malformed JSON");
  check_error(call_text(""), "request", "malformed JSON");
  check_error(call_text("{\"model\": {\"preset\": \"gpt2\"},}"), "request", "malformed JSON");
  check_error(call_text("{'model': 1}"), "request", "malformed JSON");
  check_error(call_text(nested(100)), "request", "nests deeper than 64 levels");
  check_error(call_text("{\"model\": " + nested(100) + "}"), "request", "deeper than 64");
  // Depth within the limit is parsed; the error is then the real one.
  check_error(call_text("{\"model\": {\"preset\": \"gpt2\"}, \"extra\": " + nested(60) + "}"), "extra",
              "unknown field");
  check_error(call_text("[1, 2]"), "request", "expected an object, got an array");
  check_error(call_text("\"gpt2\""), "request", "expected an object, got a string");
  check_error(call_text("42"), "request", "expected an object");
  check_error(call_text("null"), "request", "expected an object, got null");
  check_error(call(Json::object()), "model", "required");
  check_error(call({{"model", {{"preset", "gpt2"}}}, {"trainig", Json::object()}}), "trainig",
              "unknown field; expected one of model, training, hardware, options");
  check_error(call({{"model", "gpt2"}}), "model", "expected an object, got a string");
  check_error(call({{"model", {{"preset", "gpt2"}, {"hf_config", Json::object()}}}}), "model",
              "exactly one of preset, hf_config, architecture, keras, onnx_base64 or layers");
  check_error(call({{"model", {{"preset", "gpt-7"}}}}), "model.preset", "unknown preset \"gpt-7\"");
  check_error(call({{"model", {{"preset", 2}}}}), "model.preset", "got a number");
  check_error(call({{"model", {{"preset", "gpt2"}}}, {"options", {{"perlayer", false}}}}), "options.perlayer",
              "unknown field");
  check_error(call({{"model", {{"preset", "gpt2"}}}, {"options", {{"per_layer", "no"}}}}), "options.per_layer",
              "expected true or false");
}

TEST_CASE("a text known to be over the size limit is refused by its length alone", "[api][errors]") {
  const double limit = 16.0 * 1024 * 1024;
  CHECK(prenet::oversize_request_json(limit).empty());
  CHECK(prenet::oversize_request_json(12).empty());
  CHECK(prenet::oversize_request_json(std::nan("")).empty());
  check_error(Json::parse(prenet::oversize_request_json(limit + 1)), "request",
              "input is at least 16777217 bytes (one per character at the least); the limit is 16777216 bytes");
  // The same limit the core applies to a text it has: one byte over is refused either way.
  check_error(call_text(std::string(static_cast<std::size_t>(limit) + 1, ' ')), "request", "the limit is 16777216");
}

TEST_CASE("hardware list errors", "[api][errors]") {
  Json request = small_request();
  request["hardware"] = {"t4", "a100-sxm4-80gb", "h1000"};
  check_error(call(request), "hardware[2]", "unknown accelerator \"h1000\"");
  request["hardware"] = {"nope"};
  check_error(call(request), "hardware[0]", "unknown accelerator");
  request["hardware"] = "t4";
  check_error(call(request), "hardware", "expected an array, got a string");
  request["hardware"] = Json::array();
  check_error(call(request), "hardware", "at least one");
  request["hardware"] = Json::array({3});
  check_error(call(request), "hardware[0]", "got a number");

  Json many = Json::array();
  for (int i = 0; i < 65; ++i) many.push_back("t4");
  request["hardware"] = many;
  check_error(call(request), "hardware", "at most 64");
  many.erase(many.begin());
  request["hardware"] = many;
  Json ok = call(request);
  REQUIRE_FALSE(ok.contains("error"));
  CHECK(ok["results"].size() == 64);

  // Custom accelerators.
  Json custom = {{"name", "Mine"}, {"peak_tflops", {{"fp32", 50}}}, {"memory_bandwidth_gbs", 2000}, {"memory_gb", 48}};
  Json missing_memory = custom;
  missing_memory.erase("memory_gb");
  request["hardware"] = {"t4", missing_memory};
  check_error(call(request), "hardware[1].memory_gb", "required number is missing");
  Json no_fp32 = custom;
  no_fp32["peak_tflops"] = {{"fp16", 100}};
  request["hardware"] = Json::array({no_fp32});  // not {x}: clang reads a one-element brace as a copy
  check_error(call(request), "hardware[0].peak_tflops.fp32", "missing");
  Json negative = custom;
  negative["memory_bandwidth_gbs"] = -1;
  request["hardware"] = Json::array({negative});
  check_error(call(request), "hardware[0].memory_bandwidth_gbs", "got -1");
  Json typo = custom;
  typo["bandwidth"] = 100;
  request["hardware"] = Json::array({typo});
  check_error(call(request), "hardware[0].bandwidth", "unknown field");
  Json bad_precision = custom;
  bad_precision["peak_tflops"]["int8"] = 1000;
  request["hardware"] = Json::array({bad_precision});
  check_error(call(request), "hardware[0].peak_tflops.int8", "unknown field");
}

TEST_CASE("training.batch_size must be an integer from 1 to 2^20", "[api][errors]") {
  for (const Json& bad :
       {Json(-4), Json(0), Json(1.5), Json("32"), Json(1e12), Json(true), Json::array({32}), Json(1048577)}) {
    INFO("batch_size " << bad.dump());
    check_error(call(small_request({{"batch_size", bad}})), "training.batch_size",
                "expected an integer in [1, 1048576]");
  }
  check_error(call(small_request({{"batch_size", -4}})), "training.batch_size", "got -4");
  check_error(call(small_request({{"batch_size", "32"}})), "training.batch_size", "got a string");
  // 32.0 is an integer value; null means the default.
  CHECK(call(small_request({{"batch_size", 32.0}}))["training"]["batch_size"] == 32);
  CHECK(call(small_request({{"batch_size", nullptr}}))["training"]["batch_size"] == 32);
  CHECK(call(small_request({{"batch_size", 1048576}}))["training"]["batch_size"] == 1048576);
  // The same validation through the raw text path.
  check_error(call_text(R"J({"model": {"preset": "gpt2"}, "training": {"batch_size": 1e12}})J"), "training.batch_size",
              "expected an integer");
}

// Regression test (fixed): a number that overflows a double while parsing (1e400) makes nlohmann throw
// out_of_range.406, which parse_json_text does not catch (it catches only parse_error). predict_json's last-resort
// handler returns {"field": "request", "message": "internal error: [json.exception.out_of_range.406] number overflow
// parsing '1e400'"}: the message does not start with the field and calls the user's input an internal error.
TEST_CASE("a number too large for a double gives a clean error", "[api][errors]") {
  Json response = call_text(R"J({"model": {"preset": "gpt2"}, "training": {"batch_size": 1e400}})J");
  INFO(response.dump());
  REQUIRE(response.contains("error"));
  std::string field = response["error"]["field"].get<std::string>();
  std::string message = response["error"]["message"].get<std::string>();
  CHECK((field == "request" || field == "training.batch_size"));
  CHECK_THAT(message, Catch::StartsWith(field + ": "));
  CHECK(message.find("internal error") == std::string::npos);
  CHECK_THAT(message, Catch::Contains("1e400"));
}

TEST_CASE("precision, optimizer, sizes and epochs are validated", "[api][errors]") {
  check_error(call(small_request({{"precision", "fp4"}})), "training.precision",
              "expected one of fp32, tf32, fp16, bf16, fp8, got \"fp4\"");
  check_error(call(small_request({{"precision", "FP16"}})), "training.precision", "\"FP16\"");
  check_error(call(small_request({{"optimizer", "adamax"}})), "training.optimizer", "got \"adamax\"");
  check_error(call(small_request({{"optimizer", 1}})), "training.optimizer", "expected a string");
  check_error(call(small_request({{"optimizer_impl", "apex"}})), "training.optimizer_impl",
              "expected one of fused, foreach, got \"apex\"");
  for (const Json& bad : {Json(0), Json(-5), Json(2.5), Json("1000"), Json(1e18)}) {
    INFO("dataset_size " << bad.dump());
    check_error(call(small_request({{"dataset_size", bad}})), "training.dataset_size", "expected an integer");
  }
  for (const Json& bad : {Json(0), Json(-1), Json("2"), Json(1e7), Json(1e-9)}) {
    INFO("epochs " << bad.dump());
    check_error(call(small_request({{"epochs", bad}})), "training.epochs", "expected a number");
  }
  check_error(call(small_request({{"seq_len", 0}})), "training.seq_len", "got 0");
  check_error(call(small_request({{"image_size", 20000}})), "training.image_size", "got 20000");
  check_error(call(small_request({{"batchsize", 8}})), "training.batchsize", "unknown field");
  Json request = small_request();
  request["training"] = "fast";
  check_error(call(request), "training", "expected an object, got a string");
  // The request's layer list errors keep their paths.
  check_error(call_text(R"J({"model": {"input": {"kind": "vector", "features": 8}, "layers": [{"type": "dense"}]}})J"),
              "model.layers[0].units", "required integer is missing");
}

TEST_CASE("success responses obey the documented identities", "[api]") {
  Json request = {{"model", {{"preset", "bert-base"}}},
                  {"training",
                   {{"batch_size", 16},
                    {"seq_len", 128},
                    {"dataset_size", 1000},
                    {"epochs", 2.5},
                    {"precision", "fp32"},
                    {"optimizer", "adamw"}}},
                  {"hardware",
                   {"h100-sxm",
                    "t4",
                    "k80",
                    {{"name", "Mine"},
                     {"id", "mine"},
                     {"peak_tflops", {{"fp32", 40}}},
                     {"memory_bandwidth_gbs", 1500},
                     {"memory_gb", 32},
                     {"price_per_hour_usd", 1.25}}}}};
  Json r = call(request);
  INFO(r.dump().substr(0, 1000));
  REQUIRE_FALSE(r.contains("error"));
  CHECK_FALSE(r["version"].get<std::string>().empty());
  CHECK(r["predictor"] == "roofline");
  CHECK(r["model"]["name"] == "bert-base");
  CHECK(r["model"]["parameters"] == 109514298);
  CHECK(r["model"]["input"]["kind"] == "tokens");
  CHECK(r["model"]["input"]["seq_len"] == 128);
  CHECK(r["training"]["batch_size"] == 16);
  CHECK(r["training"]["dataset_size"] == 1000);
  CHECK(r["training"]["steps_per_epoch"] == 63);  // ceil(1000 / 16)
  CHECK(r["training"]["epochs"] == 2.5);
  CHECK(r["training"]["optimizer"] == "adamw");
  CHECK(r["warnings"].is_array());

  const Json& f = r["model"]["flops_per_step"];
  CHECK(num(f["total"]) == Approx(num(f["forward"]) + num(f["backward"]) + num(f["optimizer"])).epsilon(1e-5));
  CHECK(num(f["backward"]) == Approx(2 * num(f["forward"])).epsilon(0.05));

  REQUIRE(r["layers"].size() == r["model"]["layer_count"].get<std::size_t>());
  std::int64_t layer_params = 0;
  for (const auto& l : r["layers"]) layer_params += l["parameters"].get<std::int64_t>();
  CHECK(layer_params == 109514298);

  REQUIRE(r["results"].size() == 4);
  const std::vector<std::string> ids = {"h100-sxm", "t4", "k80", "mine"};
  for (std::size_t i = 0; i < 4; ++i) {
    const Json& res = r["results"][i];
    INFO(ids[i]);
    CHECK(res["hardware"] == ids[i]);
    CHECK(res["custom"] == (i == 3));
    double step = num(res["step_ms"]);
    CHECK(std::isfinite(step));
    CHECK(step > 0);
    CHECK(step == Approx(num(res["forward_ms"]) + num(res["backward_ms"]) + num(res["optimizer_ms"])).epsilon(1e-5));
    CHECK(num(res["epoch_s"]) == Approx(63 * step / 1000).epsilon(1e-5));
    CHECK(num(res["total_s"]) == Approx(num(res["epoch_s"]) * 2.5).epsilon(1e-5));
    if (res["price_per_hour_usd"].is_null()) {
      CHECK(res["cost_usd"].is_null());
    } else {
      CHECK(num(res["cost_usd"]) == Approx(num(res["total_s"]) / 3600 * num(res["price_per_hour_usd"])).epsilon(1e-5));
    }
    double mfu = num(res["mfu"]);
    CHECK(mfu > 0);
    CHECK(mfu <= 1);
    const Json& m = res["memory"];
    CHECK(num(res["memory_gb"]) == Approx(num(m["weights_gb"]) + num(m["gradients_gb"]) + num(m["optimizer_gb"]) +
                                          num(m["activations_gb"]) + num(m["overhead_gb"]))
                                       .epsilon(1e-5));
    CHECK(res["fits"] == (num(res["memory_gb"]) <= num(res["device_memory_gb"])));
    const std::set<std::string> bounds = {"compute", "memory", "overhead"};
    CHECK(bounds.count(res["bottleneck"].get<std::string>()) == 1);
    const Json& split = res["time_split_ms"];
    CHECK(num(split["compute"]) + num(split["memory"]) + num(split["overhead"]) == Approx(step).epsilon(1e-4));
    // Per-layer breakdown: one column per distinct timing, named by the layer table; sums to the phase totals.
    const Json& cols = res["layers"];
    REQUIRE(cols.is_object());
    CHECK(cols.size() == 7);
    const std::size_t n = cols["forward_ms"].size();
    for (const char* key : {"forward_ms", "backward_ms", "optimizer_ms", "compute_ms", "memory_ms", "ct_ms", "bound"}) {
      INFO(key);
      REQUIRE(cols[key].size() == n);
    }
    for (const auto& b : cols["bound"]) CHECK(bounds.count(b.get<std::string>()) == 1);
    double fwd = 0, bwd = 0, opt = 0;
    for (const auto& l : r["layers"]) {
      const auto c = l["timing"].get<std::size_t>();
      REQUIRE(c < n);
      fwd += num(cols["forward_ms"][c]);
      bwd += num(cols["backward_ms"][c]);
      opt += num(cols["optimizer_ms"][c]);
    }
    CHECK(fwd == Approx(num(res["forward_ms"])).epsilon(1e-4));
    CHECK(bwd == Approx(num(res["backward_ms"])).epsilon(1e-4));
    CHECK(opt == Approx(num(res["optimizer_ms"])).epsilon(1e-4).margin(1e-9));
  }
  CHECK(r["results"][2]["price_per_hour_usd"].is_null());  // k80 is not rented
  CHECK(r["results"][3]["price_per_hour_usd"] == 1.25);
  CHECK(r["results"][3]["name"] == "Mine");
  // Faster hardware is faster.
  CHECK(num(r["results"][0]["step_ms"]) < num(r["results"][1]["step_ms"]));
}

/// Layer `i`'s seven per-layer values in result `res` of response `r` (docs/API.md, per-layer columns).
Json layer_row(const Json& r, const Json& res, std::size_t i) {
  const auto c = r["layers"][i]["timing"].get<std::size_t>();
  Json row = Json::object();
  for (auto it = res["layers"].begin(); it != res["layers"].end(); ++it) row[it.key()] = it.value()[c];
  return row;
}

TEST_CASE("per-layer columns: repeated blocks share a column, and each layer reads as alone", "[api]") {
  // BERT-base repeats one encoder block 12 times: its layers are written once per result.
  Json both = call({{"model", {{"preset", "bert-base"}}}, {"hardware", {"h100-sxm", "t4"}}});
  REQUIRE_FALSE(both.contains("error"));
  const std::size_t layers = both["layers"].size();
  std::set<std::size_t> used;
  for (const auto& l : both["layers"]) used.insert(l["timing"].get<std::size_t>());
  const std::size_t columns = both["results"][0]["layers"]["forward_ms"].size();
  CHECK(used.size() == columns);  // every column is some layer's
  CHECK(columns * 5 < layers);
  // Grouping over two accelerators gives each layer the same numbers as a request for one alone.
  Json alone = call({{"model", {{"preset", "bert-base"}}}, {"hardware", {"t4"}}});
  REQUIRE_FALSE(alone.contains("error"));
  REQUIRE(alone["layers"].size() == layers);
  for (std::size_t i = 0; i < layers; ++i) {
    INFO("layer " << i);
    CHECK(layer_row(both, both["results"][1], i) == layer_row(alone, alone["results"][0], i));
  }
  // Columns are distinct: no two hold the same values on both accelerators.
  std::set<std::string> seen;
  for (std::size_t c = 0; c < columns; ++c) {
    std::string key;
    for (const auto& res : both["results"]) {
      for (auto it = res["layers"].begin(); it != res["layers"].end(); ++it) key += it.value()[c].dump() + ";";
    }
    CHECK(seen.insert(key).second);
  }
}

TEST_CASE("defaults: a100, batch 32, 100 steps, adam, fp32, per-layer on", "[api]") {
  Json r = call({{"model", {{"preset", "resnet50"}}}});
  REQUIRE_FALSE(r.contains("error"));
  CHECK(r["results"].size() == 1);
  CHECK(r["results"][0]["hardware"] == "a100-sxm4-80gb");
  CHECK(r["training"]["batch_size"] == 32);
  CHECK(r["training"]["dataset_size"] == 3200);
  CHECK(r["training"]["steps_per_epoch"] == 100);
  CHECK(r["training"]["precision"] == "fp32");
  CHECK(r["training"]["optimizer"] == "adam");
  CHECK(r["training"]["image_size"] == 224);
  CHECK(r["training"]["epochs"] == 1);
  CHECK(r.contains("layers"));
  CHECK(r["results"][0].contains("layers"));

  Json quiet = call({{"model", {{"preset", "resnet50"}}}, {"options", {{"per_layer", false}}}});
  CHECK_FALSE(quiet.contains("layers"));
  CHECK_FALSE(quiet["results"][0].contains("layers"));
  CHECK(quiet["results"][0]["step_ms"] == r["results"][0]["step_ms"]);
}

TEST_CASE("fits: gpt2-large at batch 64 does not fit a 16 GB T4, and a small model does", "[api]") {
  Json big = call({{"model", {{"preset", "gpt2-large"}}},
                   {"training", {{"batch_size", 64}}},
                   {"hardware", {"t4", "b200"}},
                   {"options", {{"per_layer", false}}}});
  REQUIRE_FALSE(big.contains("error"));
  CHECK(big["results"][0]["fits"] == false);
  CHECK(num(big["results"][0]["memory_gb"]) > 16);
  // The weights alone with Adam: 774M x 16 bytes = 12.4 GB; activations add far more at batch 64 x 1024.
  const Json& m = big["results"][0]["memory"];
  CHECK(num(m["weights_gb"]) + num(m["gradients_gb"]) + num(m["optimizer_gb"]) ==
        Approx(774030080.0 * 16 / 1e9).epsilon(1e-4));
  // Memory does not depend on the accelerator.
  CHECK(big["results"][1]["memory_gb"] == big["results"][0]["memory_gb"]);

  Json small = call(small_request());
  REQUIRE_FALSE(small.contains("error"));
  CHECK(small["results"][0]["fits"] == true);
}

TEST_CASE("mfu stays above 0 and at most 1 across models, precisions and hardware", "[api]") {
  for (const char* preset : {"gpt2", "resnet50", "vgg16"}) {
    for (const char* precision : {"fp32", "bf16", "fp8"}) {
      Json r = call({{"model", {{"preset", preset}}},
                     {"training", {{"batch_size", 8}, {"precision", precision}, {"seq_len", 256}}},
                     {"hardware", {"h100-sxm", "l4", "mi300x"}},
                     {"options", {{"per_layer", false}}}});
      INFO(preset << " " << precision);
      if (std::string(preset) != "gpt2") {
        // seq_len does not apply to image models: a warning, not an error.
        REQUIRE(r["warnings"].size() == 1);
      }
      REQUIRE_FALSE(r.contains("error"));
      for (const auto& res : r["results"]) {
        INFO(res["hardware"].get<std::string>());
        CHECK(num(res["mfu"]) > 0);
        CHECK(num(res["mfu"]) <= 1);
      }
    }
  }
}

TEST_CASE("predict_json never throws on truncated or mutated requests", "[api]") {
  const std::string valid = small_request({{"batch_size", 8}, {"precision", "fp16"}}).dump();
  REQUIRE_FALSE(call_text(valid).contains("error"));
  for (std::size_t cut = 0; cut < valid.size(); cut += 3) {
    INFO("prefix " << cut);
    Json r = call_text(valid.substr(0, cut));
    CHECK((r.contains("error") || r.contains("results")));
  }
  // Printable-ASCII mutations with a fixed linear congruential generator.
  std::uint32_t state = 12345;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  const std::string alphabet = "{}[]\":,0123456789-.eE tfnul\\abcxyz";
  for (int round = 0; round < 300; ++round) {
    std::string text = valid;
    int edits = 1 + static_cast<int>(next() % 4);
    for (int e = 0; e < edits; ++e) {
      std::size_t pos = next() % text.size();
      text[pos] = alphabet[next() % alphabet.size()];
    }
    INFO("request " << text);
    Json r = call_text(text);
    bool shaped = r.contains("error") ? r["error"]["field"].is_string() && r["error"]["message"].is_string()
                                      : r.contains("results");
    CHECK(shaped);
  }
}

// Regression test (fixed): predict_json throws nlohmann::type_error 316 on request text that is not valid UTF-8. The
// parse error's message quotes the offending bytes ("last read: ..."), and api.cpp's catch block serialises it with
// Json::dump(), whose default strict UTF-8 handler throws from inside the handler, so the exception escapes
// predict_json (and the wasm boundary) despite the "never throws" contract.
TEST_CASE("predict_json never throws on invalid UTF-8", "[api][errors]") {
  for (const std::string& text : {std::string("{\"model\": {\"preset\": \"\xff\"}}"), std::string("\xff\xfe"),
                                  std::string("{\"model\": {\"preset\": \"gpt2\"}, \"\xc3\x28\": 1}")}) {
    std::string out;
    CHECK_NOTHROW(out = predict_json(text));
    if (!out.empty()) {
      Json r = Json::parse(out);
      CHECK(r["error"]["field"] == "request");
    }
  }
}

TEST_CASE("catalog_json lists every documented accelerator (at least 37), the presets, precisions and optimizers",
          "[api][catalog]") {
  std::string text;
  REQUIRE_NOTHROW(text = prenet::catalog_json());
  Json c = Json::parse(text);
  REQUIRE_FALSE(c.contains("error"));
  CHECK_FALSE(c["version"].get<std::string>().empty());
  CHECK(c["version"] == call(small_request())["version"]);

  // The ids listed in the catalogue table of docs/HARDWARE.md.
  std::ifstream doc(std::string(PRENET_SOURCE_DIR) + "/docs/HARDWARE.md");
  REQUIRE(doc.good());
  std::vector<std::string> documented;
  std::string line;
  bool in_table = false;
  while (std::getline(doc, line)) {
    if (line.rfind("## ", 0) == 0) in_table = line == "## Catalogue";
    if (in_table && line.rfind("| `", 0) == 0) {
      auto end = line.find('`', 3);
      documented.push_back(line.substr(3, end - 3));
    }
  }
  CHECK(documented.size() >= 37);

  REQUIRE(c["hardware"].is_array());
  CHECK(c["hardware"].size() >= 37);
  std::vector<std::string> ids;
  for (const auto& h : c["hardware"]) {
    ids.push_back(h["id"].get<std::string>());
    INFO(ids.back());
    CHECK(num(h["peak_tflops"]["fp32"]) > 0);
    CHECK(num(h["memory_gb"]) > 0);
    CHECK(num(h["memory_bandwidth_gbs"]) > 0);
    CHECK_FALSE(h["name"].get<std::string>().empty());
  }
  CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == ids.size());
  // Every documented id is in the catalogue, in the documented order.
  std::size_t at = 0;
  for (const auto& id : documented) {
    INFO("documented id " << id);
    auto found = std::find(ids.begin() + static_cast<std::ptrdiff_t>(at), ids.end(), id);
    CHECK(found != ids.end());
    if (found != ids.end()) at = static_cast<std::size_t>(found - ids.begin()) + 1;
  }
  // Catalogue entries missing from the documentation table are reported (the table is edited by hand).
  for (const auto& id : ids) {
    if (std::find(documented.begin(), documented.end(), id) == documented.end()) {
      WARN("catalogue id " << id << " is not in the docs/HARDWARE.md table");
    }
  }

  REQUIRE(c["presets"].size() >= 36);  // the zoo of issue 5 (tests/core/test_presets.cpp checks each one)
  std::set<std::string> preset_ids;
  for (const auto& p : c["presets"]) {
    preset_ids.insert(p["id"].get<std::string>());
    CHECK(p["parameters"].get<std::int64_t>() > 0);
    CHECK(p["input"].is_object());
    CHECK(p["name"].is_string());
    CHECK(p["family"].is_string());
  }
  for (const char* id : {"bert-base", "bert-large", "gpt2", "gpt2-large", "resnet50", "vgg16"})
    CHECK(preset_ids.count(id) == 1);
  CHECK(c["precisions"] == Json({"fp32", "tf32", "fp16", "bf16", "fp8"}));
  CHECK(c["optimizers"] == Json({"none", "sgd", "momentum", "adam", "adamw", "adagrad", "adadelta", "rmsprop",
                                 "adamw_8bit", "paged_adamw_8bit", "paged_adamw", "adafactor", "lion", "muon"}));
  // Every catalogue id is accepted by predict.
  Json request = small_request();
  if (ids.size() > 64) ids.resize(64);  // the request limit
  request["hardware"] = ids;
  request["options"] = {{"per_layer", false}};
  Json r = call(request);
  REQUIRE_FALSE(r.contains("error"));
  CHECK(r["results"].size() == ids.size());
}

// The core remembers built presets per process (core/src/catalog/catalog.cpp, resolve_preset). A response must not
// depend on what was asked before it: same request, same bytes; other sizes or names, their own networks.
TEST_CASE("remembered presets never change a response", "[api][presets]") {
  auto request = [](int seq_len, const std::string& name) {
    Json model = {{"preset", "gpt2"}};
    if (!name.empty()) model["name"] = name;
    return Json{{"model", model}, {"training", {{"seq_len", seq_len}}}, {"hardware", Json::array({"a100-sxm4-80gb"})}}
        .dump();
  };
  const std::string first = predict_json(request(128, ""));
  const Json first_doc = Json::parse(first);
  REQUIRE_FALSE(first_doc.contains("error"));
  const std::string longer = predict_json(request(256, ""));
  CHECK(longer != first);
  CHECK(Json::parse(longer)["model"]["input"]["seq_len"] == 256);
  const Json named = Json::parse(predict_json(request(128, "mine")));
  CHECK(named["model"]["name"] == "mine");
  CHECK(named["results"] == first_doc["results"]);
  // More distinct requests than the cache holds, then the first again.
  for (int seq = 64; seq <= 64 * 12; seq += 64)
    CHECK_FALSE(Json::parse(predict_json(request(seq, ""))).contains("error"));
  CHECK(predict_json(request(128, "")) == first);
  CHECK(predict_json(request(256, "")) == longer);
}

TEST_CASE("a dense layer with a misaligned width is named, with its slowdown and the padded width", "[api]") {
  auto warnings = [](const char* precision, const char* gpu) {
    const std::string request = std::string(R"J({"model": {"preset": "gpt2"}, "training": {"batch_size": 2,
      "seq_len": 128, "precision": ")J") +
                                precision + R"J("}, "hardware": [")J" + gpu + R"J("]})J";
    Json r = Json::parse(prenet::predict_json(request));
    REQUIRE_FALSE(r.contains("error"));
    return r["warnings"].get<std::vector<std::string>>();
  };
  const auto bf16 = warnings("bf16", "h100-sxm");
  REQUIRE(bf16.size() == 1);
  CHECK(bf16[0].find("layer \"lm_head\": a width of 50257 is not a multiple of 8") == 0);
  CHECK(bf16[0].find("5.2x slower") != std::string::npos);
  CHECK(bf16[0].find("a width of 50264 avoids that") != std::string::npos);
  const auto tf32 = warnings("tf32", "a100-sxm4-80gb");
  REQUIRE(tf32.size() == 1);
  CHECK(tf32[0].find("multiple of 4") != std::string::npos);
  CHECK(tf32[0].find("a width of 50260 avoids that") != std::string::npos);
  CHECK(warnings("fp32", "h100-sxm").empty());  // no tensor cores in FP32
  CHECK(warnings("bf16", "mi300x").empty());    // not measured on other vendors' libraries
}

TEST_CASE("memory advice and plan mode give the memory a prediction of their layout gives", "[api][parallel]") {
  // Both evaluate layouts with the one layout evaluator; without a pipeline the stage split cannot differ,
  // so their fullest GPU is the prediction's to the last rounded digit.
  Json req = {{"model", {{"preset", "gpt2-large"}}},
              {"training", {{"batch_size", 16}, {"precision", "bf16"}}},
              {"hardware", {"a100-sxm4-40gb"}},
              {"options", {{"per_layer", false}}}};
  auto predicted_memory = [&req](Json parallel) {
    Json r = req;
    r["parallel"] = std::move(parallel);
    Json out = Json::parse(predict_json(r.dump()));
    REQUIRE_FALSE(out.contains("error"));
    return out["results"][0]["memory_gb"].get<double>();
  };
  Json layout = {{"data", 2}, {"tensor", 1}, {"pipeline", 1}, {"micro_batch_size", 8}};
  Json base = req;
  base["parallel"] = layout;
  Json out = Json::parse(predict_json(base.dump()));
  REQUIRE_FALSE(out.contains("error"));
  const Json& advice = out["results"][0]["memory_advice"];
  std::size_t checked = 0;
  for (const Json& a : advice) {
    Json changed = layout;
    for (auto it = a["change"].begin(); it != a["change"].end(); ++it) changed[it.key()] = it.value();
    if (changed["pipeline"] != 1) continue;
    changed.erase("micro_batches");
    changed.erase("gpus");
    INFO(a.dump());
    CHECK(predicted_memory(changed) == a["memory_gb"].get<double>());
    ++checked;
  }
  CHECK(checked >= 2);

  Json plan_req = req;
  plan_req["plan"] = {{"max_gpus", 8}, {"top", 5}};
  Json plan = Json::parse(prenet::plan_json(plan_req.dump()));
  REQUIRE_FALSE(plan.contains("error"));
  checked = 0;
  for (const Json& l : plan["results"][0]["by_time"]) {
    if (l["pipeline"] != 1) continue;
    INFO(l.dump());
    CHECK(predicted_memory({{"data", l["data"]},
                            {"tensor", l["tensor"]},
                            {"pipeline", 1},
                            {"micro_batch_size", l["micro_batch_size"]},
                            {"zero_stage", l["zero_stage"]},
                            {"recompute", l["recompute"]},
                            {"sequence_parallel", l["sequence_parallel"]}}) == l["memory_gb"].get<double>());
    ++checked;
  }
  CHECK(checked >= 2);
}

TEST_CASE("catalog_json lists each Hugging Face model_type once, and docs/MODEL_FORMAT.md documents every one",
          "[api][catalog][hf]") {
  Json c = Json::parse(prenet::catalog_json());
  REQUIRE(c["hf_model_types"].is_array());
  std::ifstream doc(std::string(PRENET_SOURCE_DIR) + "/docs/MODEL_FORMAT.md");
  REQUIRE(doc.good());
  std::string text((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  // The documented types: backquoted names in the first cell of the Hugging Face table's rows.
  std::set<std::string> documented;
  std::istringstream lines(text.substr(text.find("## Hugging Face")));
  std::string line;
  while (std::getline(lines, line) && line.rfind("## Keras", 0) != 0) {
    if (line.rfind("| `", 0) != 0) continue;
    std::string cell = line.substr(1, line.find('|', 1) - 1);
    for (std::size_t at = cell.find('`'); at != std::string::npos; at = cell.find('`', cell.find('`', at + 1) + 1)) {
      documented.insert(cell.substr(at + 1, cell.find('`', at + 1) - at - 1));
    }
  }
  std::set<std::string> seen;
  for (const auto& t : c["hf_model_types"]) {
    std::string type = t["model_type"].get<std::string>();
    INFO(type);
    CHECK(seen.insert(type).second);
    CHECK(documented.count(type) == 1);
    CHECK((t["input"] == "tokens" || t["input"] == "image"));
  }
  CHECK(seen.count("llama") == 1);
}
