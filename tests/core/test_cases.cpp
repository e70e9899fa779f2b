// Replays the shared case manifest tests/cases/requests.json through predict_json. The same manifest
// is replayed by the Node tests against the wasm build, so every expectation is something visible in
// the JSON response (see tests/cases/README.md for the format).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "prenet/api.hpp"
#include "prenet/json_util.hpp"

using prenet::Json;

namespace {

Json load_manifest() {
  std::ifstream in(PRENET_TEST_CASES);
  INFO("manifest " << PRENET_TEST_CASES);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  Json cases = Json::parse(text.str());
  REQUIRE(cases.is_array());
  return cases;
}

/// Per-layer results, when present, follow docs/API.md: one table entry per layer, per result seven
/// columns of one length, every column some layer's, and (one GPU) the layers adding up to the phases.
void check_layer_columns(const Json& r) {
  const Json& table = r["layers"];
  REQUIRE(table.size() == r["model"]["layer_count"].get<std::size_t>());
  std::set<std::size_t> used;
  for (const auto& layer : table) used.insert(layer["timing"].get<std::size_t>());
  const std::set<std::string> bounds = {"compute", "memory", "overhead"};
  for (const auto& res : r["results"]) {
    INFO("result " << res["hardware"]);
    REQUIRE(res.contains("layers"));
    const Json& cols = res["layers"];
    CHECK(cols.size() == 7);
    const std::size_t n = cols["forward_ms"].size();
    for (const char* key : {"backward_ms", "optimizer_ms", "compute_ms", "memory_ms", "ct_ms", "bound"}) {
      INFO(key);
      REQUIRE(cols[key].size() == n);
    }
    CHECK(used.size() == n);
    CHECK((n == 0 || *used.rbegin() == n - 1));  // with the size: exactly 0..n-1
    for (const auto& b : cols["bound"]) CHECK(bounds.count(b.get<std::string>()) == 1);
    if (res.contains("parallel")) continue;
    // The layers are device times; a forward or backward pass takes at least the host's time to issue it.
    for (const char* phase : {"forward_ms", "backward_ms", "optimizer_ms"}) {
      double sum = 0;
      for (const auto& layer : table) sum += cols[phase][layer["timing"].get<std::size_t>()].get<double>();
      const std::string host_key = std::string(phase) == "forward_ms" ? "forward" : "backward";
      const double host = std::string(phase) == "optimizer_ms" ? 0.0 : res["host_issue_ms"][host_key].get<double>();
      const double want = res[phase].get<double>();
      INFO(phase << ": layers add up to " << sum << ", the host issues them in " << host << ", result says " << want);
      CHECK(std::fabs(std::max(sum, host) - want) <= 1e-4 * std::max(want, 1e-6));
    }
  }
}

/// Checks one case's response against its expectations.
void check_case(const Json& c) {
  const std::string name = c.at("name").get<std::string>();
  INFO("case: " << name);
  const std::string text = c.contains("request_text") ? c["request_text"].get<std::string>() : c.at("request").dump();
  std::string out;
  REQUIRE_NOTHROW(out = prenet::predict_json(text));
  const Json r = Json::parse(out);
  INFO("response: " << out.substr(0, 800));
  const Json& e = c.at("expect");

  if (e.contains("error_field")) {
    REQUIRE(r.contains("error"));
    const std::string field = e["error_field"].get<std::string>();
    CHECK(r["error"]["field"] == field);
    const std::string message = r["error"]["message"].get<std::string>();
    CHECK_THAT(message, Catch::StartsWith(field + ": "));
    if (e.contains("message_contains")) CHECK_THAT(message, Catch::Contains(e["message_contains"].get<std::string>()));
    return;
  }

  REQUIRE_FALSE(r.contains("error"));
  REQUIRE(r["results"].is_array());
  REQUIRE_FALSE(r["results"].empty());
  for (const auto& res : r["results"]) {
    double step = res["step_ms"].get<double>();
    CHECK(std::isfinite(step));
    CHECK(step > 0);
  }
  if (r.contains("layers")) check_layer_columns(r);
  if (e.contains("parameters")) CHECK(r["model"]["parameters"] == e["parameters"]);
  if (e.contains("results")) CHECK(r["results"].size() == e["results"].get<std::size_t>());
  if (e.contains("layer_count")) CHECK(r["model"]["layer_count"] == e["layer_count"]);
  if (e.contains("warnings")) CHECK(r["warnings"].size() == e["warnings"].get<std::size_t>());
  if (e.contains("warning_contains")) {
    bool found = false;
    for (const auto& w : r["warnings"])
      found = found || w.get<std::string>().find(e["warning_contains"].get<std::string>()) != std::string::npos;
    CHECK(found);
  }
  if (e.contains("hardware")) {
    REQUIRE(r["results"].size() == e["hardware"].size());
    for (std::size_t i = 0; i < e["hardware"].size(); ++i) CHECK(r["results"][i]["hardware"] == e["hardware"][i]);
  }
  if (e.contains("fits")) {
    REQUIRE(r["results"].size() == e["fits"].size());
    for (std::size_t i = 0; i < e["fits"].size(); ++i) CHECK(r["results"][i]["fits"] == e["fits"][i]);
  }
}

}  // namespace

TEST_CASE("the case manifest is well formed", "[cases]") {
  Json cases = load_manifest();
  CHECK(cases.size() >= 20);
  const std::set<std::string> known = {"error_field", "message_contains", "parameters", "results", "layer_count",
                                       "warnings",    "warning_contains", "hardware",   "fits"};
  std::set<std::string> names;
  int errors = 0;
  for (const auto& c : cases) {
    REQUIRE(c.contains("name"));
    INFO("case: " << c["name"].get<std::string>());
    CHECK(names.insert(c["name"].get<std::string>()).second);  // unique names
    CHECK((c.contains("request") != c.contains("request_text")));
    REQUIRE(c.contains("expect"));
    REQUIRE(c["expect"].is_object());
    for (auto it = c["expect"].begin(); it != c["expect"].end(); ++it) CHECK(known.count(it.key()) == 1);
    errors += c["expect"].contains("error_field") ? 1 : 0;
  }
  CHECK(errors * 3 >= static_cast<int>(cases.size()));  // a good share of error cases
}

TEST_CASE("every case in the manifest gives the expected response", "[cases]") {
  for (const auto& c : load_manifest()) {
    if (c.contains("known_bug")) continue;
    check_case(c);
  }
}

// Cases marked "known_bug" document open bugs in the core; they pass once the bug is fixed.
TEST_CASE("manifest cases for known bugs", "[cases]") {
  for (const auto& c : load_manifest()) {
    if (c.contains("known_bug")) check_case(c);
  }
}
