#include "model/onnx/graph.hpp"

#include <cstring>

#include "model/onnx/wire.hpp"
#include "prenet/error.hpp"
#include "prenet/network.hpp"

namespace prenet::onnx {
namespace {

std::string str(std::string_view v) { return std::string(v); }

/// INT64 (7) or INT32 (6) values in raw_data, when small enough to be a shape or an axis list.
void read_raw_ints(Tensor& t, std::string_view raw) {
  if (!t.ints.empty() || raw.empty() || (t.data_type != 7 && t.data_type != 6)) return;
  std::size_t width = t.data_type == 7 ? 8 : 4;
  if (raw.size() % width != 0 || raw.size() / width > kMaxValues) return;
  for (std::size_t i = 0; i < raw.size(); i += width) {
    std::uint64_t v = 0;
    for (std::size_t b = 0; b < width; ++b)
      v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(raw[i + b])) << (8 * b);
    if (width == 4) v = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(v)));
    t.ints.push_back(static_cast<std::int64_t>(v));
  }
  t.has_ints = true;
}

/// A TensorProto: dims checked, integer values kept when small.
Tensor parse_tensor(std::string_view data, const std::string& path) {
  Tensor t;
  Wire w(data, path, "tensor");
  Field f;
  std::string_view raw;
  bool ints_overflow = false;
  while (w.next(f)) {
    switch (f.number) {
      case 1:
        if (!read_ints(f, t.dims, kMaxDims, path, "tensor dims")) w.fail("more than 16 dimensions");
        break;
      case 2: t.data_type = static_cast<std::int64_t>(f.value); break;
      case 5:
      case 7:
        if (!read_ints(f, t.ints, kMaxValues, path, "tensor data")) ints_overflow = true;
        break;
      case 8: t.name = str(f.bytes); break;
      case 9:
        raw = f.bytes;  // a view: weights are never copied
        break;
      default: break;  // float_data, external_data, doc strings...: not needed for shapes
    }
  }
  for (auto d : t.dims) {
    if (d < 0 || d > Limits::kMaxDim) w.fail("tensor dimension " + std::to_string(d) + " out of range");
  }
  t.has_ints = !t.ints.empty() && !ints_overflow;
  read_raw_ints(t, raw);
  if (t.dims.empty() && t.ints.size() == 1) t.has_ints = true;  // a scalar
  return t;
}

/// An AttributeProto; subgraphs, floats lists and strings lists are skipped.
Attribute parse_attribute(std::string_view data, const std::string& path) {
  Attribute a;
  Wire w(data, path, "attribute");
  Field f;
  while (w.next(f)) {
    switch (f.number) {
      case 1: a.name = str(f.bytes); break;
      case 2: {
        auto bits = static_cast<std::uint32_t>(f.value);
        float v = 0;
        static_assert(sizeof v == sizeof bits, "float is 32 bits");
        std::memcpy(&v, &bits, sizeof v);
        a.f = static_cast<double>(v);
        a.has_f = true;
        break;
      }
      case 3:
        a.i = static_cast<std::int64_t>(f.value);
        a.has_i = true;
        break;
      case 4: a.s = str(f.bytes.substr(0, 256)); break;
      case 5:
        if (f.wire == 2) a.t = parse_tensor(f.bytes, path);
        break;
      case 8:
        if (!read_ints(f, a.ints, kMaxValues, path, "attribute ints")) w.fail("more than 64 integers in an attribute");
        break;
      default: break;  // subgraphs (g, graphs), floats, strings: skipped
    }
  }
  return a;
}

/// A NodeProto, its inputs and outputs bounded.
Node parse_node(std::string_view data, const std::string& path) {
  Node n;
  Wire w(data, path, "node");
  Field f;
  while (w.next(f)) {
    switch (f.number) {
      case 1:
      case 2:
        if (f.wire != 2) w.fail("node input/output is not a string");
        if (n.inputs.size() + n.outputs.size() >= kMaxIoPerNode) w.fail("too many node inputs or outputs");
        (f.number == 1 ? n.inputs : n.outputs).push_back(str(f.bytes));
        break;
      case 3: n.name = str(f.bytes); break;
      case 4: n.op = str(f.bytes); break;
      case 5:
        if (f.wire == 2) n.attrs.push_back(parse_attribute(f.bytes, path));
        break;
      case 7: n.domain = str(f.bytes); break;
      default: break;
    }
  }
  return n;
}

/// One TensorShapeProto.Dimension: its value, or -1 when symbolic or missing.
std::int64_t parse_dimension(std::string_view data, const std::string& path) {
  std::int64_t dim = -1;
  Wire d(data, path, "dimension");
  Field df;
  while (d.next(df)) {
    if (df.number == 1 && df.wire == 0) dim = static_cast<std::int64_t>(df.value);
  }
  return dim;
}

/// A TensorShapeProto into `v.dims` (0 read as unknown).
void parse_shape(std::string_view data, const std::string& path, ValueInfo& v) {
  v.has_shape = true;
  Wire shape(data, path, "shape");
  Field sf;
  while (shape.next(sf)) {
    if (sf.number != 1 || sf.wire != 2) continue;
    if (v.dims.size() >= kMaxDims) shape.fail("more than 16 dimensions");
    std::int64_t dim = parse_dimension(sf.bytes, path);
    if (dim < -1 || dim > Limits::kMaxDim) shape.fail("dimension " + std::to_string(dim) + " out of range");
    v.dims.push_back(dim == 0 ? -1 : dim);
  }
}

/// A TypeProto: its tensor_type's element type and shape (other types are skipped).
void parse_type(std::string_view data, const std::string& path, ValueInfo& v) {
  Wire type(data, path, "type");
  Field tf;
  while (type.next(tf)) {
    if (tf.number != 1 || tf.wire != 2) continue;  // tensor_type only
    Wire tensor(tf.bytes, path, "tensor type");
    Field xf;
    while (tensor.next(xf)) {
      if (xf.number == 1 && xf.wire == 0) v.elem_type = static_cast<std::int64_t>(xf.value);
      if (xf.number == 2 && xf.wire == 2) parse_shape(xf.bytes, path, v);
    }
  }
}

/// A ValueInfoProto (a graph input or output).
ValueInfo parse_value_info(std::string_view data, const std::string& path) {
  ValueInfo v;
  Wire w(data, path, "value info");
  Field f;
  while (w.next(f)) {
    if (f.number == 1) v.name = str(f.bytes);
    if (f.number == 2 && f.wire == 2) parse_type(f.bytes, path, v);
  }
  return v;
}

/// The bytes of the ModelProto's graph field (7).
std::string_view graph_bytes_of(std::string_view bytes, const std::string& path) {
  Wire model(bytes, path, "model");
  Field f;
  std::string_view graph_bytes;
  bool found = false;
  while (model.next(f)) {
    if (f.number == 7 && f.wire == 2) {
      graph_bytes = f.bytes;
      found = true;
    }
  }
  if (!found) throw InputError(path, "not an ONNX model: no graph found (is this an .onnx file?)");
  return graph_bytes;
}

}  // namespace

Graph parse_model(std::string_view bytes, const std::string& path) {
  std::string_view graph_bytes = graph_bytes_of(bytes, path);
  Graph g;
  Wire w(graph_bytes, path, "graph");
  Field f;
  while (w.next(f)) {
    if (f.wire != 2) continue;
    switch (f.number) {
      case 1:
        if (g.nodes.size() >= kMaxNodes) w.fail("more than 100,000 nodes");
        g.nodes.push_back(parse_node(f.bytes, path));
        break;
      case 5:
        if (g.initializers.size() >= kMaxNodes) w.fail("more than 100,000 initializers");
        g.initializers.push_back(parse_tensor(f.bytes, path));
        break;
      case 11:
      case 12:
        if (g.inputs.size() + g.outputs.size() >= kMaxNodes) w.fail("too many graph inputs or outputs");
        (f.number == 11 ? g.inputs : g.outputs).push_back(parse_value_info(f.bytes, path));
        break;
      default: break;
    }
  }
  return g;
}

}  // namespace prenet::onnx
