#pragma once
// A layer list under construction, as the Hugging Face builders write it.
#include <cstdint>
#include <string>
#include <utility>

#include "prenet/json_util.hpp"

namespace prenet::hf {

/// A dropout layer named `name`.
inline Json dropout(const std::string& name, double rate) {
  return {{"type", "dropout"}, {"name", name}, {"rate", rate}};
}

/// A layer list under construction; `push` returns the name of the layer appended.
struct Seq {
  Json layers = Json::array();
  std::string push(Json layer) {
    std::string name = layer["name"].get<std::string>();
    layers.push_back(std::move(layer));
    return name;
  }
  /// Appends the selection of one token (a class token, the last token) of a [S, width] stream read from
  /// `input` ("": the previous layer), costed as a pooling over the tokens (one read of the sequence).
  void select_token(const std::string& view, const std::string& name, std::int64_t width,
                    const std::string& input = "") {
    Json reshape = {{"type", "reshape"}, {"name", view}, {"shape", {width, -1}}};
    if (!input.empty()) reshape["inputs"] = {input};
    push(reshape);
    push({{"type", "global_avg_pool"}, {"name", name}});
  }
  /// Appends a dropout after `current` when the rate is positive; returns the stream's name.
  std::string maybe_dropout(const std::string& name, const std::string& current, double rate) {
    if (rate <= 0) return current;
    Json d = dropout(name, rate);
    d["inputs"] = {current};
    return push(d);
  }
  /// Appends the start of a stream named `name` reading `input`: a dropout when the rate is positive, else
  /// an identity.
  std::string start_stream(const std::string& name, const std::string& input, double rate) {
    if (rate > 0) return push({{"type", "dropout"}, {"name", name}, {"rate", rate}, {"inputs", {input}}});
    return push({{"type", "identity"}, {"name", name}, {"inputs", {input}}});
  }
};

}  // namespace prenet::hf
