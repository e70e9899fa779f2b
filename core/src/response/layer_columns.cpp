#include "response/layer_columns.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "response/json_text.hpp"

namespace prenet {
namespace {

Json phase_triplet(const std::array<double, 3>& v) {
  return {{"forward", round6(v[0])}, {"backward", round6(v[1])}, {"optimizer", round6(v[2])}};
}

/// Appends a double as JSON text, as the rest of the response writes it.
void append_number(std::string& out, double v) { out += Json(v).dump(); }

/// Equal items among `hashes.size()` items: each item's group (numbered by first appearance) and each
/// group's first item. `equal(a, b)` decides; `hashes` must agree with it (equal items, equal hashes).
struct Groups {
  std::vector<std::size_t> of_item;
  std::vector<std::size_t> first;
};
template <typename Equal>
Groups group_equal(const std::vector<std::uint64_t>& hashes, Equal&& equal) {
  Groups g;
  g.of_item.resize(hashes.size());
  std::unordered_multimap<std::uint64_t, std::size_t> by_hash;  // hash -> group
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    std::size_t found = g.first.size();
    for (auto [it, end] = by_hash.equal_range(hashes[i]); it != end; ++it) {
      if (equal(i, g.first[it->second])) {
        found = it->second;
        break;
      }
    }
    if (found == g.first.size()) {
      g.first.push_back(i);
      by_hash.emplace(hashes[i], found);
    }
    g.of_item[i] = found;
  }
  return g;
}

/// One FNV-1a step over a double's bits; -0 hashes as 0, since the two compare equal.
std::uint64_t mix(std::uint64_t h, double v) {
  if (v == 0) v = 0;
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return (h ^ bits) * 1099511628211ull;
}
constexpr std::uint64_t kHashSeed = 1469598103934665603ull;

}  // namespace

LayerColumns::LayerColumns(const std::vector<Timing>& times, const std::vector<double>& factors)
    : accelerators_(times.size()) {
  const std::size_t n = times.empty() ? 0 : times.front().layers.size();
  const std::size_t width = accelerators_ * kFields;
  // Unrounded first: hashed accelerator by accelerator (independent per layer, so it pipelines) and
  // compared in place; then the few distinct timings, rounded as written, grouped again.
  std::vector<std::uint64_t> hashes(n, kHashSeed);
  for (const Timing& t : times) {
    for (std::size_t i = 0; i < n; ++i) {
      double v[kFields];
      fill(v, t.layers[i], 1.0);
      for (double x : v) hashes[i] = mix(hashes[i], x);
    }
  }
  const Groups exact = group_equal(hashes, [&times](std::size_t a, std::size_t b) {
    for (const Timing& t : times) {
      const LayerTiming& x = t.layers[a];
      const LayerTiming& y = t.layers[b];
      if (x.ms != y.ms || x.compute_ms != y.compute_ms || x.memory_ms != y.memory_ms || x.ct_ms != y.ct_ms ||
          x.bound != y.bound) {
        return false;
      }
    }
    return true;
  });
  const std::size_t m = exact.first.size();
  std::vector<double> rounded(m * width);
  std::vector<std::uint64_t> rounded_hashes(m, kHashSeed);
  for (std::size_t c = 0; c < m; ++c) {
    double* v = &rounded[c * width];
    for (std::size_t h = 0; h < accelerators_; ++h) {
      fill(v + h * kFields, times[h].layers[exact.first[c]], factors[h]);
      for (std::size_t k = 0; k + 1 < kFields; ++k) v[h * kFields + k] = round6(v[h * kFields + k]);
    }
    for (std::size_t k = 0; k < width; ++k) rounded_hashes[c] = mix(rounded_hashes[c], v[k]);
  }
  const Groups shown = group_equal(rounded_hashes, [&rounded, width](std::size_t a, std::size_t b) {
    return std::equal(rounded.begin() + static_cast<std::ptrdiff_t>(a * width),
                      rounded.begin() + static_cast<std::ptrdiff_t>((a + 1) * width),
                      rounded.begin() + static_cast<std::ptrdiff_t>(b * width));
  });
  values_.reserve(shown.first.size() * width);
  for (std::size_t r : shown.first) {
    values_.insert(values_.end(), rounded.begin() + static_cast<std::ptrdiff_t>(r * width),
                   rounded.begin() + static_cast<std::ptrdiff_t>((r + 1) * width));
  }
  column_.resize(n);
  for (std::size_t i = 0; i < n; ++i) column_[i] = shown.of_item[exact.of_item[i]];
}

void LayerColumns::write(std::string& out, std::size_t h) const {
  const std::size_t width = accelerators_ * kFields, columns = column_.empty() ? 0 : values_.size() / width;
  // Field index in fill()'s order, by key in the order written (keys sorted, as in the rest of the response).
  static const std::pair<const char*, std::size_t> keys[] = {
      {"{\"backward_ms\":[", 1}, {",\"bound\":[", 6},     {",\"compute_ms\":[", 3},  {",\"ct_ms\":[", 5},
      {",\"forward_ms\":[", 0},  {",\"memory_ms\":[", 4}, {",\"optimizer_ms\":[", 2}};
  for (const auto& [key, k] : keys) {
    out += key;
    for (std::size_t c = 0; c < columns; ++c) {
      if (c > 0) out += ',';
      const double v = values_[c * width + h * kFields + k];
      if (k == 6) {
        out += '"';
        out += to_string(static_cast<Bound>(static_cast<int>(v)));
        out += '"';
      } else {
        append_number(out, v);
      }
    }
    out += ']';
  }
  out += '}';
}

std::string LayerColumns::table(const Network& net, const StepWork& work) const {
  std::unordered_map<std::string, std::pair<std::string, std::string>> cache;
  std::string out = "[";
  out.reserve(net.layers.size() * 300);
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const Layer& l = net.layers[i];
    const LayerWork& w = work.layers[i];
    std::string key = to_string(l.type);
    const double values[] = {static_cast<double>(l.parameters),
                             w.flops[0],
                             w.flops[1],
                             w.flops[2],
                             w.bytes[0],
                             w.bytes[1],
                             w.bytes[2],
                             static_cast<double>(w.kernels),
                             w.co,
                             w.cm,
                             static_cast<double>(column_[i])};
    key.append(reinterpret_cast<const char*>(values), sizeof values);
    key.append(reinterpret_cast<const char*>(l.output_shape.data()), l.output_shape.size() * sizeof(std::int64_t));
    auto it = cache.find(key);
    if (it == cache.end()) {
      double total_flops = w.flops[0] + w.flops[1] + w.flops[2];
      double total_bytes = w.bytes[0] + w.bytes[1] + w.bytes[2];
      std::string head = dump({{"flops", phase_triplet(w.flops)},
                               {"bytes", phase_triplet(w.bytes)},
                               {"kernels", w.kernels},
                               {"intensity", round6(total_bytes > 0 ? total_flops / total_bytes : 0.0)},
                               {"features", {{"co", round6(w.co)}, {"cm", round6(w.cm)}}}});
      head.back() = ',';  // keys sort: bytes, features, flops, intensity, kernels < name < the rest
      head += "\"name\":";
      std::string tail = dump({{"type", to_string(l.type)},
                               {"output_shape", l.output_shape},
                               {"parameters", l.parameters},
                               {"timing", column_[i]}});
      tail.front() = ',';
      it = cache.emplace(std::move(key), std::make_pair(std::move(head), std::move(tail))).first;
    }
    if (i > 0) out += ',';
    out += it->second.first;
    out += dump(l.name);
    out += it->second.second;
  }
  out += ']';
  return out;
}

void LayerColumns::fill(double* v, const LayerTiming& l, double factor) {
  v[0] = l.ms[0] * factor;
  v[1] = l.ms[1] * factor;
  v[2] = l.ms[2] * factor;
  v[3] = l.compute_ms;
  v[4] = l.memory_ms;
  v[5] = l.ct_ms;
  v[6] = static_cast<double>(static_cast<int>(l.bound));
}

}  // namespace prenet
