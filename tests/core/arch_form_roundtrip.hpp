// The architecture form's round trip for any family (docs/MODEL_FORMAT.md, "Architecture form"): requests and
// responses with the fields that say how the model was read left out, an architecture's network, and the check
// that a config's echoed architecture, read back, is the same text, builds the same layers and, sent as the model,
// gives the same response. Shared by the families' tests (test_arch_form_*.cpp).
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "model/hf/arch_json.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/error.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/layer_list.hpp"

namespace testutil {

/// A response to `request`; fails the test on an error document.
inline prenet::Json predict_ok(const prenet::Json& request) {
  prenet::Json doc = prenet::Json::parse(prenet::predict_json(request.dump()));
  INFO("response: " << doc.dump().substr(0, 600));
  REQUIRE_FALSE(doc.contains("error"));
  return doc;
}

/// The error document of `request`: its field and message.
inline prenet::Json predict_err(const prenet::Json& request) {
  prenet::Json doc = prenet::Json::parse(prenet::predict_json(request.dump()));
  REQUIRE(doc.contains("error"));
  return doc["error"];
}

/// `response` without the fields that say how the model was read (docs/API.md): the form, the config's reading,
/// where the sequence length and precision came from, and the notes.
inline prenet::Json without_reading(prenet::Json response) {
  response["model"].erase("source");
  response["model"].erase("reading");
  response["training"].erase("seq_len_from");
  response["training"].erase("precision_from");
  response.erase("warnings");
  return response;
}

/// A request for `model` on one accelerator, precision given (a config's dtype is a reading field).
inline prenet::Json request_for(const prenet::Json& model) {
  return {{"model", model},
          {"hardware", {"h100-sxm"}},
          {"training", {{"precision", "bf16"}, {"batch_size", 1}}},
          {"options", {{"per_layer", false}}}};
}

/// The network of architecture `arch` at `seq_len` tokens or `image_size` pixels (0: its defaults).
inline prenet::Network net_of_architecture(const prenet::Json& arch, std::int64_t seq_len = 0,
                                           std::int64_t image_size = 0) {
  std::vector<std::string> warnings;
  return prenet::parse_layer_list(
      prenet::hf::architecture_to_layers(arch, "model.architecture", seq_len, warnings, image_size),
      "model.architecture", {});
}

/// Checks the round trip of `model` ({"hf_config": ...} or {"preset": ...}), whose echo must be of `family`, at
/// `seq_len` tokens in both requests (0: each its default); returns the echoed architecture.
inline prenet::Json check_arch_round_trip(const prenet::Json& model, const std::string& family,
                                          std::int64_t seq_len = 0) {
  auto request = [&](const prenet::Json& m) {
    prenet::Json r = request_for(m);
    if (seq_len > 0) r["training"]["seq_len"] = seq_len;
    return r;
  };
  const prenet::Json by_config = predict_ok(request(model));
  REQUIRE(by_config["model"].contains("architecture"));
  const prenet::Json arch = by_config["model"]["architecture"];
  CHECK(arch["family"] == family);
  // A fixed point: read back and written again, the same text.
  CHECK(prenet::hf::arch_to_json(prenet::hf::arch_from_json(arch, "model.architecture"), family) == arch);
  if (model.contains("hf_config")) {
    // The same layer list as the config's reading, at the default sequence length.
    std::vector<std::string> w1, w2;
    const prenet::Json from_cfg = prenet::hf_config_to_layers(model["hf_config"], "model.hf_config", 0, w1);
    const prenet::Json from_arch = prenet::hf::architecture_to_layers(arch, "model.architecture", 0, w2);
    CHECK(from_arch["input"] == from_cfg["input"]);
    CHECK(from_arch["layers"] == from_cfg["layers"]);
  }
  const prenet::Json by_arch = predict_ok(request({{"architecture", arch}}));
  CHECK(by_arch["model"]["source"] == "architecture");
  CHECK(by_arch["model"]["architecture"] == arch);
  CHECK(by_arch["model"]["parameters"] == by_config["model"]["parameters"]);
  CHECK(by_arch["results"][0]["step_ms"] == by_config["results"][0]["step_ms"]);
  CHECK(without_reading(by_arch) == without_reading(by_config));
  return arch;
}

/// Expects arch_from_json(`arch`) to fail naming `field`, its message containing `needle`.
inline void check_error(const prenet::Json& arch, const std::string& field, const std::string& needle) {
  INFO("architecture: " << arch.dump());
  try {
    prenet::hf::arch_from_json(arch, "model.architecture");
    FAIL("no error; expected one at " << field);
  } catch (const prenet::InputError& e) {
    CHECK(e.field() == field);
    CHECK_THAT(std::string(e.what()), Catch::Contains(needle));
  }
}

/// `base` with `key` set to `value`.
inline prenet::Json with(prenet::Json base, const std::string& key, const prenet::Json& value) {
  base[key] = value;
  return base;
}

}  // namespace testutil
