// parallel.pipeline_layout: Megatron-Core's pipeline_model_parallel_layout string, parsed and checked as
// megatron/core/transformer/pipeline_parallel_layer_layout.py does (parse_str_to_list, __init__ and the parts of
// validate_layer_layout that need no network); the chunk bounds it gives are chunk_bounds' (schedule.cpp).
#include <algorithm>
#include <cctype>
#include <string>

#include "prenet/error.hpp"
#include "prenet/parallel.hpp"

namespace prenet {
namespace {

const char* const kField = "parallel.pipeline_layout";

/// The most symbols a layout may unroll to (a network has at most Limits::kMaxLayers layers; 'E', 'L' and the
/// chunk separators come on top).
constexpr std::size_t kMaxUnrolled = 4 * static_cast<std::size_t>(Limits::kMaxLayers);

std::string str(std::size_t v) { return std::to_string(v); }

/// The repeat count of digits at s[at...] (at least one digit), its end in `end`; refuses one that would unroll
/// past kMaxUnrolled.
std::size_t repeat_count(const std::string& s, std::size_t at, std::size_t& end) {
  std::size_t n = 0;
  end = at;
  while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) {
    n = n * 10 + static_cast<std::size_t>(s[end] - '0');
    if (n > kMaxUnrolled) throw InputError(kField, "a repetition count exceeds " + str(kMaxUnrolled));
    ++end;
  }
  return n;
}

/// Appends `part` `n` times to `out`, refusing an unrolled layout longer than kMaxUnrolled.
void append_repeated(std::string& out, const std::string& part, std::size_t n) {
  if (!part.empty() && n > (kMaxUnrolled - std::min(out.size(), kMaxUnrolled)) / part.size()) {
    throw InputError(kField, "unrolls to more than " + str(kMaxUnrolled) + " symbols");
  }
  for (std::size_t i = 0; i < n; ++i) out += part;
}

/// Megatron's first pass, re.sub(r'\((...)\)\*(\d+)'): each "(group)*N" (a non-empty group holding no ')'),
/// leftmost first and without rescanning, becomes the group N times.
std::string unroll_groups(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '(') {
      const std::size_t close = s.find(')', i + 1);
      std::size_t end = 0;
      if (close != std::string::npos && close > i + 1 && close + 2 < s.size() && s[close + 1] == '*' &&
          std::isdigit(static_cast<unsigned char>(s[close + 2]))) {
        const std::size_t n = repeat_count(s, close + 2, end);
        append_repeated(out, s.substr(i + 1, close - i - 1), n);
        i = end;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

/// Megatron's second pass, re.sub(r'(.)\*(\d+)'): each character followed by "*N" becomes N of it.
std::string unroll_symbols(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t end = 0;
    if (s[i] != '\n' && i + 2 < s.size() && s[i + 1] == '*' && std::isdigit(static_cast<unsigned char>(s[i + 2]))) {
      const std::size_t n = repeat_count(s, i + 2, end);
      append_repeated(out, std::string(1, s[i]), n);
      i = end;
      continue;
    }
    out += s[i++];
  }
  return out;
}

/// How many of `symbol` all chunks hold.
std::size_t count_of(const std::vector<std::string>& chunks, char symbol) {
  std::size_t n = 0;
  for (const std::string& c : chunks) n += static_cast<std::size_t>(std::count(c.begin(), c.end(), symbol));
  return n;
}

/// validate_layer_layout's checks that need no network, over the chunks of `pipeline` stages.
void check_structure(const std::vector<std::string>& chunks, std::size_t pipeline) {
  std::string flat;
  for (const std::string& c : chunks) flat += c;
  if (flat.empty() || flat.front() != 'E') throw InputError(kField, "the first layer must be the embedding 'E'");
  if (flat.back() != 'L') throw InputError(kField, "the last layer must be the loss 'L'");
  if (count_of(chunks, 'E') != 1) throw InputError(kField, "the embedding 'E' must appear exactly once");
  if (count_of(chunks, 'L') != 1) throw InputError(kField, "the loss 'L' must appear exactly once");
  const std::size_t first_m = flat.find('m');
  if (first_m != std::string::npos && flat.find('t', first_m) != std::string::npos) {
    throw InputError(kField, "decoder blocks 't' must come before the multi-token prediction layers 'm'");
  }
  // Megatron-Core keeps all MTP layers in one model chunk of a stage's last virtual stage.
  const std::size_t mtp = count_of(chunks, 'm'), last_virtual = chunks.size() / pipeline - 1;
  for (std::size_t j = 0; j < chunks.size(); ++j) {
    const auto here = static_cast<std::size_t>(std::count(chunks[j].begin(), chunks[j].end(), 'm'));
    if (here == 0) continue;
    if (j / pipeline != last_virtual) {
      throw InputError(kField, "chunk " + str(j) +
                                   " holds multi-token prediction layers 'm' outside the last virtual "
                                   "stage of its pipeline stage (Megatron-Core places them there)");
    }
    if (here != mtp) {
      throw InputError(kField, "all multi-token prediction layers 'm' must be in one chunk (Megatron-Core)");
    }
  }
}

}  // namespace

PipelineLayout parse_pipeline_layout(const std::string& text, std::int64_t pipeline) {
  PipelineLayout layout;
  layout.text = text;
  std::string s;
  for (char c : text) {
    if (c != ',') s += c;  // purely cosmetic commas
  }
  s = unroll_symbols(unroll_groups(s));
  layout.chunks.emplace_back();
  for (char c : s) {
    if (c == '|') {
      layout.chunks.emplace_back();
    } else if (c == 'E' || c == 't' || c == 'm' || c == 'L') {
      layout.chunks.back() += c;
    } else {
      throw InputError(kField, "'" + printable(std::string(1, c)) +
                                   "' is no layer: E (embedding), t (decoder block), m (multi-token prediction "
                                   "layer), L (loss), '|' between chunks, x*N and (...)*N to repeat");
    }
  }
  const auto p = static_cast<std::size_t>(std::max<std::int64_t>(pipeline, 1));
  if (layout.chunks.size() % p != 0) {
    throw InputError(kField, "its " + str(layout.chunks.size()) + " chunks do not split over pipeline " + str(p) +
                                 " (pipeline x virtual_stages chunks)");
  }
  check_structure(layout.chunks, p);
  return layout;
}

}  // namespace prenet
