#pragma once
// The ONNX messages the translator reads (ModelProto → GraphProto: nodes, initializers, inputs, outputs),
// parsed with the bounded wire reader. Only what shapes need is kept: weight bytes are never copied and
// subgraphs are skipped.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prenet::onnx {

constexpr std::size_t kMaxNodes = 100000;
constexpr std::size_t kMaxDims = 16;
constexpr std::size_t kMaxValues = 64;  // integer tensor values kept (shapes, axes); larger ones are skipped
constexpr std::size_t kMaxIoPerNode = 4096;

/// A TensorProto: its dims, element type and, when small, its integer values.
struct Tensor {
  std::string name;
  std::vector<std::int64_t> dims;
  std::int64_t data_type = 0;
  std::vector<std::int64_t> ints;  // integer values when small (shapes, axes, indices)
  bool has_ints = false;
};

/// An AttributeProto: the int, float, string, ints or tensor it carries.
struct Attribute {
  std::string name;
  std::int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<std::int64_t> ints;
  std::optional<Tensor> t;
  bool has_i = false, has_f = false;
};

/// A NodeProto with typed attribute look-ups.
struct Node {
  std::string name, op, domain;
  std::vector<std::string> inputs, outputs;
  std::vector<Attribute> attrs;

  /// The attribute named `n`, or nullptr.
  const Attribute* attr(const std::string& n) const {
    for (const auto& a : attrs) {
      if (a.name == n) return &a;
    }
    return nullptr;
  }
  /// The int attribute `n`, or `fallback` when absent.
  std::int64_t attr_i(const std::string& n, std::int64_t fallback) const {
    const Attribute* a = attr(n);
    return a && a->has_i ? a->i : fallback;
  }
  /// The ints attribute `n`, or an empty list.
  std::vector<std::int64_t> attr_ints(const std::string& n) const {
    const Attribute* a = attr(n);
    return a ? a->ints : std::vector<std::int64_t>{};
  }
  /// The non-empty string attribute `n`, or `fallback`.
  std::string attr_s(const std::string& n, const std::string& fallback) const {
    const Attribute* a = attr(n);
    return a && !a->s.empty() ? a->s : fallback;
  }
  /// Input `k`, or "" when absent (ONNX marks skipped optional inputs with an empty name).
  std::string in(std::size_t k) const { return k < inputs.size() ? inputs[k] : ""; }
};

/// A ValueInfoProto of a tensor type: name, element type and shape.
struct ValueInfo {
  std::string name;
  std::vector<std::int64_t> dims;  // -1 for a symbolic or missing dimension
  std::int64_t elem_type = 0;
  bool has_shape = false;
};

/// The main graph of a model.
struct Graph {
  std::vector<Node> nodes;
  std::vector<Tensor> initializers;
  std::vector<ValueInfo> inputs, outputs;
};

/// Parses a ModelProto's main graph. Errors name `path`.
Graph parse_model(std::string_view bytes, const std::string& path);

}  // namespace prenet::onnx
