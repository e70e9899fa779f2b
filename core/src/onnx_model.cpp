#include "prenet/onnx_model.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace prenet {
namespace {

constexpr std::size_t kMaxNodes = 100000;
constexpr std::size_t kMaxDims = 16;
constexpr std::size_t kMaxValues = 64;  // integer tensor values kept (shapes, axes); larger ones are skipped
constexpr std::size_t kMaxIoPerNode = 4096;

// ------------------------------------------------------------------------------------------------ wire format

/// One protobuf field: its number, wire type and value (varint / fixed value, or a view of its bytes).
struct Field {
  std::uint64_t number = 0;
  int wire = 0;
  std::uint64_t value = 0;
  std::string_view bytes;
};

/// Reads the fields of one message. Every length is checked against the bytes left; nothing is copied.
class Wire {
 public:
  Wire(std::string_view data, const std::string& path, const char* what) : data_(data), path_(path), what_(what) {}

  bool next(Field& f) {
    if (pos_ >= data_.size()) return false;
    std::uint64_t tag = varint();
    f.number = tag >> 3;
    f.wire = static_cast<int>(tag & 7);
    if (f.number == 0) fail("field number 0");
    switch (f.wire) {
      case 0:
        f.value = varint();
        break;
      case 1:
        f.value = fixed(8);
        break;
      case 5:
        f.value = fixed(4);
        break;
      case 2: {
        std::uint64_t len = varint();
        if (len > data_.size() - pos_) fail("a length of " + std::to_string(len) + " runs past the end of the data");
        f.bytes = data_.substr(pos_, static_cast<std::size_t>(len));
        pos_ += static_cast<std::size_t>(len);
        break;
      }
      default:
        fail("unsupported wire type " + std::to_string(f.wire));
    }
    return true;
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw InputError(path_, "malformed ONNX file (" + std::string(what_) + "): " + why);
  }

 private:
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) fail("truncated varint");
      auto byte = static_cast<std::uint8_t>(data_[pos_++]);
      v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return v;
    }
    fail("varint longer than 10 bytes");
  }
  std::uint64_t fixed(std::size_t n) {
    if (n > data_.size() - pos_) fail("truncated fixed-size value");
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(data_[pos_ + i])) << (8 * i);
    pos_ += n;
    return v;
  }

  std::string_view data_;
  std::size_t pos_ = 0;
  const std::string& path_;
  const char* what_;
};

/// Appends the integers of a repeated int field, packed (wire 2) or not (wire 0), keeping at most `limit`.
bool read_ints(const Field& f, std::vector<std::int64_t>& out, std::size_t limit, const std::string& path,
               const char* what) {
  if (f.wire == 0) {
    if (out.size() >= limit) return false;
    out.push_back(static_cast<std::int64_t>(f.value));
    return true;
  }
  if (f.wire != 2) Wire(f.bytes, path, what).fail("integer list with wire type " + std::to_string(f.wire));
  std::size_t pos = 0;
  while (pos < f.bytes.size()) {
    std::uint64_t v = 0;
    int shift = 0;
    for (;; shift += 7) {
      if (shift >= 64 || pos >= f.bytes.size()) Wire(f.bytes, path, what).fail("bad packed varint");
      auto byte = static_cast<std::uint8_t>(f.bytes[pos++]);
      v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) break;
    }
    if (out.size() >= limit) return false;
    out.push_back(static_cast<std::int64_t>(v));
  }
  return true;
}

// ------------------------------------------------------------------------------------------------ ONNX messages

struct Tensor {
  std::string name;
  std::vector<std::int64_t> dims;
  std::int64_t data_type = 0;
  std::vector<std::int64_t> ints;  // integer values when small (shapes, axes, indices)
  bool has_ints = false;
};

struct Attribute {
  std::string name;
  std::int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<std::int64_t> ints;
  std::optional<Tensor> t;
  bool has_i = false, has_f = false;
};

struct Node {
  std::string name, op, domain;
  std::vector<std::string> inputs, outputs;
  std::vector<Attribute> attrs;

  const Attribute* attr(const std::string& n) const {
    for (const auto& a : attrs) {
      if (a.name == n) return &a;
    }
    return nullptr;
  }
  std::int64_t attr_i(const std::string& n, std::int64_t fallback) const {
    const Attribute* a = attr(n);
    return a && a->has_i ? a->i : fallback;
  }
  std::vector<std::int64_t> attr_ints(const std::string& n) const {
    const Attribute* a = attr(n);
    return a ? a->ints : std::vector<std::int64_t>{};
  }
  std::string attr_s(const std::string& n, const std::string& fallback) const {
    const Attribute* a = attr(n);
    return a && !a->s.empty() ? a->s : fallback;
  }
  /// Input `k`, or "" when absent (ONNX marks skipped optional inputs with an empty name).
  std::string in(std::size_t k) const { return k < inputs.size() ? inputs[k] : ""; }
};

struct ValueInfo {
  std::string name;
  std::vector<std::int64_t> dims;  // -1 for a symbolic or missing dimension
  std::int64_t elem_type = 0;
  bool has_shape = false;
};

struct Graph {
  std::vector<Node> nodes;
  std::vector<Tensor> initializers;
  std::vector<ValueInfo> inputs, outputs;
};

std::string str(std::string_view v) { return std::string(v); }

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
      case 2:
        t.data_type = static_cast<std::int64_t>(f.value);
        break;
      case 5:
      case 7:
        if (!read_ints(f, t.ints, kMaxValues, path, "tensor data")) ints_overflow = true;
        break;
      case 8:
        t.name = str(f.bytes);
        break;
      case 9:
        raw = f.bytes;  // a view: weights are never copied
        break;
      default:
        break;  // float_data, external_data, doc strings...: not needed for shapes
    }
  }
  for (auto d : t.dims) {
    if (d < 0 || d > Limits::kMaxDim) w.fail("tensor dimension " + std::to_string(d) + " out of range");
  }
  t.has_ints = !t.ints.empty() && !ints_overflow;
  // INT64 (7) or INT32 (6) values in raw_data, when small enough to be a shape or an axis list.
  if (t.ints.empty() && !raw.empty() && (t.data_type == 7 || t.data_type == 6)) {
    std::size_t width = t.data_type == 7 ? 8 : 4;
    if (raw.size() % width == 0 && raw.size() / width <= kMaxValues) {
      for (std::size_t i = 0; i < raw.size(); i += width) {
        std::uint64_t v = 0;
        for (std::size_t b = 0; b < width; ++b) v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(raw[i + b])) << (8 * b);
        if (width == 4) v = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(v)));
        t.ints.push_back(static_cast<std::int64_t>(v));
      }
      t.has_ints = true;
    }
  }
  if (t.dims.empty() && t.ints.size() == 1) t.has_ints = true;  // a scalar
  return t;
}

Attribute parse_attribute(std::string_view data, const std::string& path) {
  Attribute a;
  Wire w(data, path, "attribute");
  Field f;
  while (w.next(f)) {
    switch (f.number) {
      case 1:
        a.name = str(f.bytes);
        break;
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
      case 4:
        a.s = str(f.bytes.substr(0, 256));
        break;
      case 5:
        if (f.wire == 2) a.t = parse_tensor(f.bytes, path);
        break;
      case 8:
        if (!read_ints(f, a.ints, kMaxValues, path, "attribute ints")) w.fail("more than 64 integers in an attribute");
        break;
      default:
        break;  // subgraphs (g, graphs), floats, strings: skipped
    }
  }
  return a;
}

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
      case 3:
        n.name = str(f.bytes);
        break;
      case 4:
        n.op = str(f.bytes);
        break;
      case 5:
        if (f.wire == 2) n.attrs.push_back(parse_attribute(f.bytes, path));
        break;
      case 7:
        n.domain = str(f.bytes);
        break;
      default:
        break;
    }
  }
  return n;
}

ValueInfo parse_value_info(std::string_view data, const std::string& path) {
  ValueInfo v;
  Wire w(data, path, "value info");
  Field f;
  while (w.next(f)) {
    if (f.number == 1) v.name = str(f.bytes);
    if (f.number != 2 || f.wire != 2) continue;
    Wire type(f.bytes, path, "type");
    Field tf;
    while (type.next(tf)) {
      if (tf.number != 1 || tf.wire != 2) continue;  // tensor_type only
      Wire tensor(tf.bytes, path, "tensor type");
      Field xf;
      while (tensor.next(xf)) {
        if (xf.number == 1 && xf.wire == 0) v.elem_type = static_cast<std::int64_t>(xf.value);
        if (xf.number != 2 || xf.wire != 2) continue;
        v.has_shape = true;
        Wire shape(xf.bytes, path, "shape");
        Field sf;
        while (shape.next(sf)) {
          if (sf.number != 1 || sf.wire != 2) continue;
          if (v.dims.size() >= kMaxDims) shape.fail("more than 16 dimensions");
          std::int64_t dim = -1;
          Wire d(sf.bytes, path, "dimension");
          Field df;
          while (d.next(df)) {
            if (df.number == 1 && df.wire == 0) dim = static_cast<std::int64_t>(df.value);
          }
          if (dim < -1 || dim > Limits::kMaxDim) shape.fail("dimension " + std::to_string(dim) + " out of range");
          v.dims.push_back(dim == 0 ? -1 : dim);
        }
      }
    }
  }
  return v;
}

Graph parse_model(std::string_view bytes, const std::string& path) {
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
  Graph g;
  Wire w(graph_bytes, path, "graph");
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
      default:
        break;
    }
  }
  return g;
}

// ------------------------------------------------------------------------------------------------ translation

/// What a tensor name stands for while translating.
struct Value {
  enum Kind { Activation, Constant, Weight, Unknown } kind = Unknown;
  std::string layer;                 // Activation: the producing layer ("input" for the network input)
  Shape shape;                       // Activation: per-sample ONNX shape; Constant/Weight: full dims
  std::vector<std::int64_t> ints;    // Constant: values when known
  bool has_ints = false;
  bool shape_known = true;           // Constant: false when only values matter
  std::string origin;                // Unknown: the operator that produced it
  std::string view;                  // Activation: the node that last changed the shape without a layer
};

std::int64_t product(const std::vector<std::int64_t>& dims) {
  std::int64_t n = 1;
  for (auto d : dims) {
    if (d <= 0) return -1;
    if (n > Limits::kMaxElementsPerSample / d) return -1;
    n *= d;
  }
  return n;
}

class Translator {
 public:
  Translator(const Graph& g, const std::string& path, const InputOverrides& overrides)
      : g_(g), path_(path), overrides_(overrides) {}

  Network run() {
    for (const auto& t : g_.initializers) {
      Value v;
      v.kind = t.has_ints && product(t.dims) <= 1 ? Value::Constant : Value::Weight;
      if (t.has_ints) {
        v.kind = product(t.dims) <= static_cast<std::int64_t>(kMaxValues) && t.data_type != 1 ? Value::Constant : v.kind;
        v.ints = t.ints;
        v.has_ints = true;
      }
      v.shape = t.dims;
      values_[t.name] = v;
    }
    setup_input();
    for (const auto& n : g_.nodes) {
      for (const auto& in : n.inputs) uses_[in] += 1;
    }
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      if (skipped_.count(i)) continue;
      node_path_ = index(join(path_, "graph.node"), i);
      current_ = i;
      translate(g_.nodes[i], i);
    }
    if (builder_->network().layers.empty()) {
      throw InputError(join(path_, "graph"), "the graph has no operator that maps to a layer");
    }
    Network net = builder_->take();
    for (const auto& [op, stat] : unsupported_) {
      net.warnings.push_back("ONNX operator " + op + " (" + std::to_string(stat.first) +
                             " node" + (stat.first > 1 ? "s" : "") + ") is not modelled; costed as one elementwise pass "
                             "over its input (" + std::to_string(stat.second) + " elements per sample in all)");
    }
    net.warnings.insert(net.warnings.end(), notes_.begin(), notes_.end());
    return net;
  }

 private:
  // ---- input
  void setup_input() {
    const ValueInfo* input = nullptr;
    std::size_t input_index = 0;
    for (std::size_t i = 0; i < g_.inputs.size(); ++i) {
      const ValueInfo& v = g_.inputs[i];
      if (values_.count(v.name)) continue;  // an initializer listed as an input (IR < 4)
      if (!input) {
        input = &v;
        input_index = i;
        continue;
      }
      Value side;  // further inputs (attention masks, ...) are constants of known shape
      side.kind = Value::Constant;
      side.shape = v.dims;
      values_[v.name] = side;
      notes_.push_back("graph input \"" + printable(v.name) + "\" is treated as a constant; only the first input is modelled");
    }
    if (!input) throw InputError(join(path_, "graph.input"), "the graph has no input");
    std::string field = index(join(path_, "graph.input"), input_index);
    if (!input->has_shape || input->dims.size() < 2) {
      throw InputError(field, "the input \"" + printable(input->name) + "\" needs a shape [batch, ...] of rank 2 to 4");
    }
    std::vector<std::int64_t> d(input->dims.begin() + 1, input->dims.end());
    auto fill = [&](std::int64_t v, const std::optional<std::int64_t>& over, const char* what) {
      if (over) return *over;
      if (v < 0) throw InputError(field, std::string("has a symbolic dimension; give training.") + what);
      return v;
    };
    InputSpec spec;
    bool integer = input->elem_type == 6 || input->elem_type == 7;
    if (d.size() == 1 && integer) {
      spec.kind = InputKind::Tokens;
      spec.seq_len = fill(d[0], overrides_.seq_len, "seq_len");
    } else if (d.size() == 1) {
      spec.kind = InputKind::Vector;
      spec.features = fill(d[0], std::nullopt, "features");
    } else if (d.size() == 2) {
      spec.kind = InputKind::Sequence;
      spec.seq_len = fill(d[0], overrides_.seq_len, "seq_len");
      spec.features = fill(d[1], std::nullopt, "features");
    } else if (d.size() == 3) {
      spec.kind = InputKind::Image;
      spec.channels = fill(d[0], std::nullopt, "channels");
      std::int64_t h = fill(d[1], overrides_.image_size, "image_size");
      std::int64_t w = fill(d[2], overrides_.image_size, "image_size");
      if (h != w) {
        throw InputError(field, "non-square images (" + std::to_string(h) + " x " + std::to_string(w) +
                                    ") are not supported; the layer list takes a square image_size");
      }
      spec.image_size = h;
    } else {
      throw InputError(field, "inputs of rank " + std::to_string(input->dims.size()) + " are not supported");
    }
    if (spec.seq_len > (1 << 20) || spec.image_size > 16384 || spec.channels > (1 << 20)) {
      throw InputError(field, "input dimensions beyond the limits (sequence 2^20, image side 16384)");
    }
    Network net;
    net.name = "onnx-model";
    net.input = spec;
    builder_.emplace(std::move(net));
    Value v;
    v.kind = Value::Activation;
    v.layer = "input";
    v.shape = builder_->shape(kNetworkInput);
    values_[input->name] = v;
  }

  // ---- helpers
  [[noreturn]] void fail(const Node& n, const std::string& why) const {
    throw InputError(node_path_, n.op + " node \"" + printable(n.name) + "\": " + why);
  }

  const Value* find(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }

  /// The activation named `name`; errors when it is missing or came from something not modelled.
  Value activation(const Node& n, const std::string& name) {
    const Value* v = find(name);
    if (!v) fail(n, "input \"" + printable(name) + "\" is not produced by any earlier node");
    if (v->kind == Value::Unknown) {
      fail(n, "input \"" + printable(name) + "\" comes from " + v->origin + ", whose output shape is unknown");
    }
    if (v->kind != Value::Activation) fail(n, "input \"" + printable(name) + "\" is a constant, expected an activation");
    return *v;
  }

  bool is_activation(const std::string& name) const {
    const Value* v = find(name);
    return v && v->kind == Value::Activation;
  }

  const Value& weight(const Node& n, std::size_t k, std::size_t rank_min, std::size_t rank_max) {
    const Value* v = find(n.in(k));
    if (!v || (v->kind != Value::Weight && v->kind != Value::Constant) || v->shape.size() < rank_min ||
        v->shape.size() > rank_max) {
      fail(n, "input " + std::to_string(k) + " must be an initializer of rank " + std::to_string(rank_min) +
                  (rank_max != rank_min ? " to " + std::to_string(rank_max) : ""));
    }
    return *v;
  }

  std::vector<std::int64_t> const_ints(const Node& n, std::size_t k, const char* what) {
    const Value* v = find(n.in(k));
    if (!v || v->kind != Value::Constant || !v->has_ints) {
      fail(n, std::string(what) + " must be a constant known before run time");
    }
    return v->ints;
  }

  std::string unique_name(const Node& n) {
    std::string base = n.name.empty() ? n.op + "_" + std::to_string(builder_->network().layers.size()) : n.name;
    base = printable(base);
    if (base == "input") base = "input_node";
    std::string name = base;
    for (int k = 1; builder_->find(name) != -2; ++k) name = base + "_" + std::to_string(k);
    return name;
  }

  /// Makes the layer-list shape of `v` equal its ONNX shape (a reshape view when only the layout differs).
  Value materialize(const Value& v, const std::string& base) {
    const Shape& have = builder_->shape(builder_->find(v.layer));
    if (have == v.shape) return v;
    Json spec = {{"type", "reshape"}, {"shape", v.shape}, {"inputs", {v.layer}}};
    if (v.shape.size() == 1) spec = {{"type", "flatten"}, {"inputs", {v.layer}}};
    std::string stem = v.view.empty() ? base + ".view" : v.view;
    std::string name = stem;
    for (int k = 1; builder_->find(name) != -2; ++k) name = stem + "_" + std::to_string(k);
    builder_->add(spec, node_path_, name);
    Value out = v;
    out.layer = name;
    return out;
  }

  Value emit(Json spec, const std::string& name, const std::vector<Value>& inputs) {
    Json names = Json::array();
    for (const auto& in : inputs) names.push_back(materialize(in, name).layer);
    if (!names.empty()) spec["inputs"] = names;  // a parameter reads nothing
    int i = builder_->add(spec, node_path_, name);
    Value out;
    out.kind = Value::Activation;
    out.layer = name;
    out.shape = builder_->shape(i);
    return out;
  }

  void set(const Node& n, std::size_t k, Value v) {
    if (k < n.outputs.size() && !n.outputs[k].empty()) values_[n.outputs[k]] = std::move(v);
  }

  /// A weight used as an activation (a class token, a learned position table): a parameter layer.
  Value parameter(const Node& n, const Value& w, std::size_t act_rank) {
    Shape s = w.shape;
    while (s.size() > act_rank && !s.empty() && s.front() == 1) s.erase(s.begin());
    if (s.empty()) s = {1};
    return emit({{"type", "parameter"}, {"shape", s}}, unique_name(n) + ".weight", {});
  }

  void not_modelled(const Node& n, const std::string& why) {
    Value u;
    u.kind = Value::Unknown;
    u.origin = n.op + " node \"" + printable(n.name) + "\" (" + why + ")";
    for (std::size_t k = 0; k < n.outputs.size(); ++k) set(n, k, u);
  }

  /// An operator with no layer: one elementwise pass over its first activation input, shape unchanged.
  void elementwise_estimate(const Node& n) {
    for (const auto& in : n.inputs) {
      if (!is_activation(in)) continue;
      Value a = activation(n, in);
      auto& stat = unsupported_[n.op];
      stat.first += 1;
      stat.second += product(a.shape);
      set(n, 0, emit({{"type", "activation"}, {"function", "linear"}}, unique_name(n), {a}));
      return;
    }
    not_modelled(n, "no activation input");
  }

  std::int64_t axis_of(const Node& n, std::int64_t axis, std::size_t full_rank) {
    auto r = static_cast<std::int64_t>(full_rank);
    if (axis < -r || axis >= r) fail(n, "axis " + std::to_string(axis) + " out of range");
    if (axis < 0) axis += r;
    if (axis == 0) fail(n, "operating on the batch axis is not supported");
    return axis - 1;  // per-sample
  }

  // Padding for conv and pooling: explicit symmetric pads, or "same" / "valid" from auto_pad.
  Json padding(const Node& n, std::size_t spatial) {
    std::string autopad = n.attr_s("auto_pad", "NOTSET");
    if (autopad == "SAME_UPPER" || autopad == "SAME_LOWER") return "same";
    if (autopad == "VALID") return "valid";
    auto pads = n.attr_ints("pads");
    if (pads.empty()) return 0;
    if (pads.size() != 2 * spatial) fail(n, "pads must have " + std::to_string(2 * spatial) + " entries");
    for (auto p : pads) {
      if (p < 0 || p > Limits::kMaxDim) fail(n, "negative or huge padding");
    }
    bool asymmetric = false;
    for (std::size_t i = 0; i < spatial; ++i) asymmetric = asymmetric || pads[i] != pads[i + spatial];
    if (asymmetric) notes_.push_back(n.op + " node \"" + printable(n.name) + "\": asymmetric padding taken as its leading side");
    if (spatial == 1) return Json::array({0, pads[0]});
    return Json::array({pads[0], pads[1]});
  }

  std::vector<std::int64_t> pair_attr(const Node& n, const std::string& key, std::size_t spatial, std::int64_t fallback) {
    auto v = n.attr_ints(key);
    if (v.empty()) v.assign(spatial, fallback);
    if (v.size() != spatial) fail(n, key + " must have " + std::to_string(spatial) + " entries");
    for (auto x : v) {
      if (x < 1 || x > Limits::kMaxDim) fail(n, key + " entries must be positive");
    }
    if (spatial == 1) return {1, v[0]};
    return v;
  }

  /// 1-D conv and pooling run as 2-D with height 1: [C, L] is viewed as [C, 1, L].
  Value as_2d(const Value& x, const Node& n) {
    if (x.shape.size() == 3) return x;
    if (x.shape.size() != 2) fail(n, "expects [channels, length] or [channels, height, width], got " + to_string(x.shape));
    Value v = x;
    v.shape = {x.shape[0], 1, x.shape[1]};
    return v;
  }
  Value back_to_1d(Value v, bool was_1d) {
    if (was_1d) v.shape = {v.shape[0], v.shape[2]};
    return v;
  }

  // ---- operators
  void translate(const Node& n, std::size_t i) {
    const std::string& op = n.op;
    if (!n.domain.empty() && n.domain != "ai.onnx") {
      elementwise_estimate(n);
      return;
    }
    if (n.outputs.empty()) fail(n, "has no outputs");
    if (op == "Constant") {
      const Attribute* a = n.attr("value");
      Value v;
      v.kind = Value::Constant;
      if (a && a->t) {
        v.shape = a->t->dims;
        v.ints = a->t->ints;
        v.has_ints = a->t->has_ints;
      } else if (const Attribute* vi = n.attr("value_ints")) {
        v.ints = vi->ints;
        v.has_ints = true;
        v.shape = {static_cast<std::int64_t>(vi->ints.size())};
      } else if (const Attribute* s = n.attr("value_int")) {
        v.ints = {s->i};
        v.has_ints = true;
      }
      set(n, 0, v);
      return;
    }
    // Constant folding of shape arithmetic (Shape -> Gather -> Unsqueeze -> Concat -> Reshape).
    bool any_activation = false;
    for (const auto& in : n.inputs) any_activation = any_activation || is_activation(in);
    if (op == "Shape") {
      Value a = activation(n, n.in(0));
      Value v;
      v.kind = Value::Constant;
      v.ints = {1};  // the batch, per sample
      v.ints.insert(v.ints.end(), a.shape.begin(), a.shape.end());
      v.has_ints = true;
      v.shape = {static_cast<std::int64_t>(v.ints.size())};
      set(n, 0, v);
      return;
    }
    if (!any_activation) {
      fold(n);
      return;
    }
    if (op == "Gemm") return gemm(n);
    if (op == "MatMul") return matmul(n, i);
    if (op == "Conv") return conv(n);
    if (op == "MaxPool" || op == "AveragePool") return pool(n);
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
      Value x = activation(n, n.in(0));
      if (x.shape.size() < 2) fail(n, "expects [channels, ...spatial], got " + to_string(x.shape));
      Value out = emit({{"type", op == "GlobalAveragePool" ? "global_avg_pool" : "global_max_pool"}}, unique_name(n), {x});
      out.shape = x.shape;  // ONNX keeps the spatial axes as 1s: a view of the pooled [C]
      std::fill(out.shape.begin() + 1, out.shape.end(), 1);
      return set(n, 0, out);
    }
    if (op == "BatchNormalization") {
      Value x = activation(n, n.in(0));
      return set(n, 0, emit({{"type", "batchnorm"}}, unique_name(n), {x}));
    }
    if (op == "LayerNormalization" || op == "SimplifiedLayerNormalization" || op == "RMSNormalization") {
      Value x = activation(n, n.in(0));
      std::int64_t axis = n.attr_i("axis", -1);
      auto rank = static_cast<std::int64_t>(x.shape.size()) + 1;
      if (axis != -1 && axis != rank - 1) notes_.push_back(op + " node \"" + printable(n.name) + "\": normalisation over several axes costed as over the last");
      Json spec = op == "LayerNormalization" ? Json{{"type", "layernorm"}, {"bias", !n.in(2).empty()}} : Json{{"type", "rmsnorm"}};
      return set(n, 0, emit(spec, unique_name(n), {x}));
    }
    static const std::map<std::string, std::string> activations = {
        {"Relu", "relu"},         {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"},           {"LeakyRelu", "leaky_relu"},
        {"Elu", "elu"},           {"Selu", "selu"},       {"Softplus", "softplus"},   {"HardSigmoid", "hard_sigmoid"},
        {"HardSwish", "hard_swish"}, {"Mish", "mish"},     {"Gelu", "gelu"},           {"Clip", "relu6"},
        {"Erf", "gelu"},          {"Silu", "silu"}};
    if (auto it = activations.find(op); it != activations.end()) {
      Value x = activation(n, n.in(0));
      return set(n, 0, emit({{"type", "activation"}, {"function", it->second}}, unique_name(n), {x}));
    }
    if (op == "Softmax" || op == "LogSoftmax") {
      Value x = activation(n, n.in(0));
      return set(n, 0, emit({{"type", "softmax"}}, unique_name(n), {x}));
    }
    if (op == "Dropout") {
      Value x = activation(n, n.in(0));
      double rate = 0.5;
      if (const Attribute* a = n.attr("ratio"); a && a->has_f) rate = a->f;
      rate = std::min(std::max(rate, 0.0), 0.999999);
      return set(n, 0, emit({{"type", "dropout"}, {"rate", rate}}, unique_name(n), {x}));
    }
    if (op == "Identity" || op == "Cast") {
      set(n, 0, activation(n, n.in(0)));
      return;
    }
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Sum") return binary(n);
    if (op == "Reshape") return reshape(n);
    if (op == "Flatten") {
      Value x = activation(n, n.in(0));
      std::int64_t axis = n.attr_i("axis", 1);
      if (axis != 1) fail(n, "only axis 1 (keep the batch) is supported");
      x.shape = {product(x.shape)};
      x.view = unique_name(n);
      return set(n, 0, x);
    }
    if (op == "Transpose") {
      Value x = activation(n, n.in(0));
      auto perm = n.attr_ints("perm");
      if (perm.empty()) fail(n, "needs an explicit perm");
      if (perm.size() != x.shape.size() + 1 || perm[0] != 0) fail(n, "must keep the batch axis first");
      Shape s;
      for (std::size_t k = 1; k < perm.size(); ++k) {
        if (perm[k] < 1 || perm[k] > static_cast<std::int64_t>(x.shape.size())) fail(n, "bad perm");
        s.push_back(x.shape[static_cast<std::size_t>(perm[k] - 1)]);
      }
      x.shape = s;  // a permuted view; its copy is not costed
      x.view = unique_name(n);
      return set(n, 0, x);
    }
    if (op == "Squeeze" || op == "Unsqueeze") {
      Value x = activation(n, n.in(0));
      auto axes = n.attr_ints("axes");
      if (axes.empty() && !n.in(1).empty()) axes = const_ints(n, 1, "axes");
      Shape full = x.shape;
      full.insert(full.begin(), 1);
      if (op == "Squeeze") {
        Shape s;
        for (std::size_t k = 0; k < full.size(); ++k) {
          bool drop = false;
          for (auto a : axes) drop = drop || (a < 0 ? a + static_cast<std::int64_t>(full.size()) : a) == static_cast<std::int64_t>(k);
          if (axes.empty()) drop = full[k] == 1 && k > 0;
          if (drop && k == 0) fail(n, "cannot squeeze the batch axis");
          if (!drop) s.push_back(full[k]);
        }
        full = s;
      } else {
        auto out_rank = static_cast<std::int64_t>(full.size() + axes.size());
        std::vector<std::int64_t> sorted;
        for (auto a : axes) sorted.push_back(a < 0 ? a + out_rank : a);
        std::sort(sorted.begin(), sorted.end());
        for (auto a : sorted) {
          if (a <= 0 || a > static_cast<std::int64_t>(full.size())) fail(n, "axis out of range");
          full.insert(full.begin() + static_cast<std::ptrdiff_t>(a), 1);
        }
      }
      if (full.size() < 2 || full.size() > kMaxDims) fail(n, "result rank out of range");
      x.shape.assign(full.begin() + 1, full.end());
      x.view = unique_name(n);
      return set(n, 0, x);
    }
    if (op == "Concat") return concat(n);
    if (op == "Gather") return gather(n);
    elementwise_estimate(n);
  }

  /// Nodes with no activation input: shape arithmetic on constants, or weight preprocessing.
  void fold(const Node& n) {
    const std::string& op = n.op;
    Value out;
    out.kind = Value::Constant;
    const Value* a = find(n.in(0));
    if (!a) {
      not_modelled(n, "reads a tensor that is not produced earlier");
      return;
    }
    if (a->kind == Value::Unknown) {
      set(n, 0, *a);
      return;
    }
    if ((op == "Unsqueeze" || op == "Squeeze" || op == "Cast" || op == "Identity") && a->has_ints) {
      out = *a;
    } else if (op == "Concat") {
      out.has_ints = true;
      for (const auto& in : n.inputs) {
        const Value* v = find(in);
        if (!v || !v->has_ints || out.ints.size() + v->ints.size() > kMaxValues) {
          out.has_ints = false;
          break;
        }
        out.ints.insert(out.ints.end(), v->ints.begin(), v->ints.end());
      }
    } else if (op == "Gather" && a->has_ints) {
      const Value* idx = find(n.in(1));
      if (idx && idx->has_ints) {
        out.has_ints = true;
        for (auto k : idx->ints) {
          auto size = static_cast<std::int64_t>(a->ints.size());
          std::int64_t j = k < 0 ? k + size : k;
          if (j < 0 || j >= size) {
            out.has_ints = false;
            break;
          }
          out.ints.push_back(a->ints[static_cast<std::size_t>(j)]);
        }
      }
    } else if (a->kind == Value::Weight && (op == "Expand" || op == "Identity" || op == "Cast" || op == "Reshape" ||
                                             op == "Unsqueeze" || op == "Transpose")) {
      out = *a;  // weight preprocessing (a class token broadcast to the batch, ...): still that weight
    }
    if (out.has_ints) out.shape = {static_cast<std::int64_t>(out.ints.size())};
    for (std::size_t k = 0; k < n.outputs.size(); ++k) set(n, k, out);
  }

  /// When the only consumer of `output` is an activation node, fuses it into the layer being emitted (as the
  /// layer list and Keras write it) and returns the activation's name and the consumer's output; else "none".
  std::string fuse_activation(const std::string& output, std::size_t after, std::string* fused_output) {
    static const std::map<std::string, std::string> fusable = {
        {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"}, {"Gelu", "gelu"}, {"Silu", "silu"},
        {"Elu", "elu"},   {"Selu", "selu"},       {"Softplus", "softplus"}, {"HardSwish", "hard_swish"}};
    if (uses_[output] != 1) return "none";
    for (std::size_t j = after + 1; j < g_.nodes.size(); ++j) {
      const Node& m = g_.nodes[j];
      if (std::find(m.inputs.begin(), m.inputs.end(), output) == m.inputs.end()) continue;
      auto it = fusable.find(m.op);
      if (it == fusable.end() || m.inputs.size() != 1 || m.outputs.empty() || !m.domain.empty()) return "none";
      skipped_.insert(j);
      *fused_output = m.outputs[0];
      return it->second;
    }
    return "none";
  }

  void set_fused(const Node& n, const Value& out, const std::string& fused_output) {
    set(n, 0, out);
    if (!fused_output.empty()) values_[fused_output] = out;
  }

  void gemm(const Node& n) {
    Value x = activation(n, n.in(0));
    if (n.attr_i("transA", 0) != 0) fail(n, "transA is not supported");
    const Value& w = weight(n, 1, 2, 2);
    bool trans_b = n.attr_i("transB", 0) != 0;
    std::int64_t k = trans_b ? w.shape[1] : w.shape[0], units = trans_b ? w.shape[0] : w.shape[1];
    if (x.shape.empty() || product(x.shape) != k) {
      fail(n, "input " + to_string(x.shape) + " does not match the weight " + to_string(w.shape));
    }
    x.shape = {k};
    std::string fused;
    std::string act = fuse_activation(n.outputs[0], current_, &fused);
    set_fused(n, emit({{"type", "dense"}, {"units", units}, {"bias", !n.in(2).empty()}, {"activation", act}},
                      unique_name(n), {x}),
              fused);
  }

  void matmul(const Node& n, std::size_t i) {
    Value x = activation(n, n.in(0));
    const Value* b = find(n.in(1));
    if (!b || (b->kind != Value::Weight && b->kind != Value::Constant) || b->shape.size() != 2) {
      elementwise_estimate(n);  // activation x activation (attention scores): not a layer of its own
      return;
    }
    if (x.shape.empty() || x.shape.back() != b->shape[0]) {
      fail(n, "input " + to_string(x.shape) + " does not match the weight " + to_string(b->shape));
    }
    std::int64_t units = b->shape[1];
    // A following Add of a [units] initializer is this layer's bias (PyTorch exports Linear so).
    bool bias = false;
    std::size_t add_node = 0;
    if (uses_[n.outputs[0]] == 1) {
      for (std::size_t j = i + 1; j < g_.nodes.size(); ++j) {
        const Node& m = g_.nodes[j];
        if (m.op != "Add" || m.inputs.size() != 2) continue;
        int side = m.inputs[0] == n.outputs[0] ? 1 : m.inputs[1] == n.outputs[0] ? 0 : -1;
        if (side < 0) continue;
        const Value* c = find(m.inputs[static_cast<std::size_t>(side)]);
        if (c && c->kind == Value::Weight && product(c->shape) == units && !m.outputs.empty()) {
          bias = true;
          add_node = j;
        }
        break;
      }
    }
    if (bias) skipped_.insert(add_node);
    std::string fused;
    std::string act = fuse_activation(bias ? g_.nodes[add_node].outputs[0] : n.outputs[0], bias ? add_node : i, &fused);
    Value out = emit({{"type", "dense"}, {"units", units}, {"bias", bias}, {"activation", act}}, unique_name(n), {x});
    set_fused(n, out, fused);
    if (bias) values_[g_.nodes[add_node].outputs[0]] = out;
  }

  void conv(const Node& n) {
    Value x0 = activation(n, n.in(0));
    bool one_d = x0.shape.size() == 2;
    Value x = as_2d(x0, n);
    const Value& w = weight(n, 1, 3, 4);
    std::size_t spatial = w.shape.size() - 2;
    if ((spatial == 1) != one_d) fail(n, "weight " + to_string(w.shape) + " does not match input " + to_string(x0.shape));
    for (auto d : n.attr_ints("dilations")) {
      if (d != 1) fail(n, "dilated convolutions are not supported");
    }
    std::int64_t group = n.attr_i("group", 1);
    if (group < 1) fail(n, "group must be positive");
    std::vector<std::int64_t> kernel = spatial == 1 ? std::vector<std::int64_t>{1, w.shape[2]}
                                                    : std::vector<std::int64_t>{w.shape[2], w.shape[3]};
    if (w.shape[1] * group != x.shape[0]) {
      fail(n, "weight " + to_string(w.shape) + " with group " + std::to_string(group) + " does not match " +
                  std::to_string(x.shape[0]) + " input channels");
    }
    auto strides = pair_attr(n, "strides", spatial, 1);
    std::string fused;
    std::string act = fuse_activation(n.outputs[0], current_, &fused);
    Json spec = {{"type", "conv2d"},      {"filters", w.shape[0]}, {"kernel_size", kernel}, {"stride", strides},
                 {"padding", padding(n, spatial)}, {"groups", group},     {"bias", !n.in(2).empty()},
                 {"activation", act}};
    set_fused(n, back_to_1d(emit(spec, unique_name(n), {x}), one_d), fused);
  }

  void pool(const Node& n) {
    Value x0 = activation(n, n.in(0));
    bool one_d = x0.shape.size() == 2;
    Value x = as_2d(x0, n);
    std::size_t spatial = one_d ? 1 : 2;
    auto kernel = pair_attr(n, "kernel_shape", spatial, 0);
    auto strides = pair_attr(n, "strides", spatial, 1);
    if (n.attr_i("ceil_mode", 0) != 0) notes_.push_back(n.op + " node \"" + printable(n.name) + "\": ceil_mode costed as floor");
    Json spec = {{"type", n.op == "MaxPool" ? "max_pool2d" : "avg_pool2d"}, {"pool_size", kernel}, {"stride", strides},
                 {"padding", padding(n, spatial)}};
    set(n, 0, back_to_1d(emit(spec, unique_name(n), {x}), one_d));
  }

  void binary(const Node& n) {
    std::vector<Value> acts;
    std::vector<const Value*> others;
    for (const auto& in : n.inputs) {
      if (is_activation(in)) {
        acts.push_back(activation(n, in));
      } else if (const Value* v = find(in)) {
        if (v->kind == Value::Unknown) activation(n, in);  // raises the error naming the origin
        others.push_back(v);
      } else {
        fail(n, "input \"" + printable(in) + "\" is not produced by any earlier node");
      }
    }
    bool mul = n.op == "Mul" || n.op == "Div";
    std::string name = unique_name(n);
    // A trainable tensor (more than one element) added or multiplied in: a parameter layer (positions, scales).
    for (const Value* o : others) {
      if (o->kind == Value::Weight && product(o->shape) > 1) acts.push_back(parameter(n, *o, acts.front().shape.size()));
    }
    if (acts.size() == 1) {
      // An activation and a constant: one elementwise pass.
      set(n, 0, emit({{"type", "activation"}, {"function", "linear"}}, name, acts));
      return;
    }
    set(n, 0, emit({{"type", mul ? "multiply" : "add"}}, name, acts));
  }

  void reshape(const Node& n) {
    Value x = activation(n, n.in(0));
    auto target = n.attr_ints("shape");
    if (target.empty()) target = const_ints(n, 1, "the target shape");
    if (target.size() < 2 || target.size() > kMaxDims) fail(n, "target rank must be 2 to 16 (batch included)");
    Shape out;
    std::int64_t known = 1;
    int infer = -1;
    for (std::size_t k = 1; k < target.size(); ++k) {
      std::int64_t d = target[k];
      if (d == 0) {
        if (k - 1 >= x.shape.size()) fail(n, "0 copies a dimension the input does not have");
        d = x.shape[k - 1];
      }
      if (d == -1) {
        if (infer >= 0) fail(n, "more than one -1");
        infer = static_cast<int>(out.size());
        out.push_back(-1);
        continue;
      }
      if (d < 1 || d > Limits::kMaxDim) fail(n, "bad target dimension " + std::to_string(d));
      if (known > Limits::kMaxElementsPerSample / d) fail(n, "target too large");
      known *= d;
      out.push_back(d);
    }
    std::int64_t total = product(x.shape);
    if (target[0] != 1 && target[0] != -1 && target[0] != 0) {
      notes_.push_back("Reshape node \"" + printable(n.name) + "\": a fixed batch of " + std::to_string(target[0]) +
                       " in the target shape is read as the batch");
    }
    if (target[0] == -1 && infer < 0) infer = -2;  // batch inferred: the rest must match exactly
    if (infer >= 0) {
      if (known <= 0 || total % known != 0) fail(n, "cannot reshape " + to_string(x.shape) + " to the target");
      out[static_cast<std::size_t>(infer)] = total / known;
    } else if (known != total) {
      fail(n, "cannot reshape " + to_string(x.shape) + " (" + std::to_string(total) + " elements) to " + to_string(out));
    }
    x.shape = out;
    x.view = unique_name(n);
    set(n, 0, x);
  }

  void concat(const Node& n) {
    std::vector<Value> parts;
    std::size_t rank = 0;
    for (const auto& in : n.inputs) {
      if (is_activation(in)) rank = activation(n, in).shape.size();
    }
    std::int64_t axis = axis_of(n, n.attr_i("axis", 0), rank + 1);
    for (const auto& in : n.inputs) {
      const Value* v = find(in);
      if (!v) fail(n, "input \"" + printable(in) + "\" is not produced by any earlier node");
      if (v->kind == Value::Activation) {
        parts.push_back(*v);
      } else if (v->kind == Value::Weight) {
        parts.push_back(parameter(n, *v, rank));
      } else {
        activation(n, in);  // error: constant or unknown
      }
    }
    set(n, 0, emit({{"type", "concat"}, {"axis", axis}}, unique_name(n), parts));
  }

  void gather(const Node& n) {
    const Value* data = find(n.in(0));
    if (data && data->kind == Value::Weight && data->shape.size() == 2 && is_activation(n.in(1))) {
      Value idx = activation(n, n.in(1));
      if (n.attr_i("axis", 0) != 0) fail(n, "an embedding lookup gathers rows (axis 0)");
      set(n, 0, emit({{"type", "embedding"}, {"vocab_size", data->shape[0]}, {"dim", data->shape[1]}}, unique_name(n),
                     {idx}));
      return;
    }
    const Value* idx = find(n.in(1));
    if (is_activation(n.in(0)) && idx && idx->kind == Value::Constant && idx->has_ints && idx->ints.size() == 1 &&
        idx->shape.empty()) {
      // Selecting one position of a sequence (a class token): costed as a pooling over the positions.
      Value x = activation(n, n.in(0));
      std::int64_t axis = axis_of(n, n.attr_i("axis", 0), x.shape.size() + 1);
      if (x.shape.size() == 2 && axis == 0) {
        Value t = x;
        t.shape = {x.shape[1], x.shape[0]};
        set(n, 0, emit({{"type", "global_avg_pool"}}, unique_name(n), {t}));
        return;
      }
    }
    elementwise_estimate(n);
  }

  const Graph& g_;
  std::string path_, node_path_;
  InputOverrides overrides_;
  std::optional<LayerListBuilder> builder_;
  std::map<std::string, Value> values_;
  std::map<std::string, int> uses_;
  std::set<std::size_t> skipped_;
  std::size_t current_ = 0;
  std::map<std::string, std::pair<int, std::int64_t>> unsupported_;  // op -> (nodes, elements)
  std::vector<std::string> notes_;
};

}  // namespace

std::string decode_base64(std::string_view text, const std::string& path) {
  static const auto table = [] {
    std::array<int, 256> t{};
    t.fill(-1);
    const char* chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) t[static_cast<std::uint8_t>(chars[i])] = i;
    t[static_cast<std::uint8_t>('-')] = 62;  // URL-safe alphabet too
    t[static_cast<std::uint8_t>('_')] = 63;
    return t;
  }();
  if (text.size() / 4 * 3 > kMaxOnnxBytes + 3) {
    throw InputError(path, "the file is larger than " + std::to_string(kMaxOnnxBytes >> 20) +
                               " MiB; export it without weights (only the graph structure is needed)");
  }
  std::string out;
  out.reserve(text.size() / 4 * 3 + 3);
  std::uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    int v = table[static_cast<std::uint8_t>(c)];
    if (v < 0 || padding) {
      throw InputError(path, "not base64: unexpected character at offset " + std::to_string(i));
    }
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

Network onnx_bytes_to_network(std::string_view bytes, const std::string& path, const InputOverrides& overrides) {
  if (bytes.empty()) throw InputError(path, "the ONNX file is empty");
  if (bytes.size() > kMaxOnnxBytes) {
    throw InputError(path, "the file is larger than " + std::to_string(kMaxOnnxBytes >> 20) + " MiB");
  }
  Graph g = parse_model(bytes, path);
  Translator t(g, path, overrides);
  return t.run();
}

Network onnx_to_network(const Json& value, const std::string& path, const InputOverrides& overrides) {
  if (!value.is_string()) throw InputError(path, "expected the .onnx file as a base64 string, got " + describe_type(value));
  std::string bytes = decode_base64(value.get_ref<const std::string&>(), path);
  return onnx_bytes_to_network(bytes, path, overrides);
}

}  // namespace prenet
