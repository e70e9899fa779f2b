// Requests and responses for the architecture form's round-trip tests: a model sent as a request, its response
// with the fields that say how the model was read left out, and an architecture's network.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "model/hf/arch_json.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
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

}  // namespace testutil
