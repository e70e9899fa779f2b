// The real Hugging Face configs of tests/fixtures/hf, read as the page and the CLI read them: shared by the
// real-config table test and the architecture form's round trip.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "prenet/hf_config.hpp"
#include "prenet/json_util.hpp"
#include "prenet/layer_list.hpp"

namespace testutil {

/// Every tests/fixtures/hf/*.json, sorted.
inline std::vector<std::string> fixture_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(PRENET_SOURCE_DIR) + "/tests/fixtures/hf")) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// `text` with Python's bare Infinity, -Infinity and NaN (json.dumps writes them; strict JSON has no such literal)
/// outside strings written as the strings "Infinity", "-Infinity", "NaN": the rule web/src/config-json.js applies
/// before a pasted or loaded config reaches the core, so a fixture is read here as the page and the CLI read it.
inline std::string quote_non_finite(const std::string& text, int& replaced) {
  static const char* const kWords[] = {"-Infinity", "Infinity", "NaN"};
  auto word_char = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '"') {  // copy a whole string literal, escapes included
      std::size_t end = i + 1;
      while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
      end = std::min(end + 1, text.size());
      out.append(text, i, end - i);
      i = end;
      continue;
    }
    bool matched = false;
    for (const char* w : kWords) {
      const std::size_t n = std::string(w).size();
      if (text.compare(i, n, w) == 0 && (i == 0 || !word_char(text[i - 1])) &&
          (i + n >= text.size() || !word_char(text[i + n]))) {
        out += std::string("\"") + w + "\"";
        i += n;
        ++replaced;
        matched = true;
        break;
      }
    }
    if (!matched) out += text[i++];
  }
  return out;
}

/// The fixture parsed; `non_finite` counts the Python words read as text (0 for plain JSON).
inline prenet::Json read_fixture(const std::string& file, int* non_finite = nullptr) {
  std::ifstream in(std::string(PRENET_SOURCE_DIR) + "/tests/fixtures/hf/" + file);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  prenet::Json parsed = prenet::Json::parse(text.str(), nullptr, false);
  int replaced = 0;
  if (parsed.is_discarded()) parsed = prenet::Json::parse(quote_non_finite(text.str(), replaced));
  if (non_finite != nullptr) *non_finite = replaced;
  return parsed;
}

/// The network a Hugging Face config builds, as the core reads `model.hf_config` (its notes into `warnings`).
inline prenet::Network hf_network(const prenet::Json& config, std::vector<std::string>& warnings) {
  return prenet::parse_layer_list(prenet::hf_config_to_layers(config, "model.hf_config", 256, warnings),
                                  "model.hf_config", {});
}
inline prenet::Network hf_network(const prenet::Json& config) {
  std::vector<std::string> warnings;
  return hf_network(config, warnings);
}

/// The layers of `list` with every repeat written out `count` times, appended to `out`.
inline void expand_repeats(const prenet::Json& list, std::vector<prenet::Json>& out) {
  for (const auto& l : list) {
    if (l["type"] != "repeat") {
      out.push_back(l);
      continue;
    }
    for (std::int64_t i = 0; i < l["count"].get<std::int64_t>(); ++i) expand_repeats(l["layers"], out);
  }
}

/// The layers a Hugging Face config builds, every repeat written out.
inline std::vector<prenet::Json> hf_flat_layers(const prenet::Json& config) {
  std::vector<std::string> warnings;
  std::vector<prenet::Json> flat;
  expand_repeats(prenet::hf_config_to_layers(config, "model.hf_config", 256, warnings)["layers"], flat);
  return flat;
}

/// Integer field `key` of a config, or `fallback` when absent or null (a configuration class's default).
inline std::int64_t config_int(const prenet::Json& c, const char* key, std::int64_t fallback) {
  return c.contains(key) && !c[key].is_null() ? c[key].get<std::int64_t>() : fallback;
}

}  // namespace testutil
