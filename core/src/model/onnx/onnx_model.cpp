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
      case 0: f.value = varint(); break;
      case 1: f.value = fixed(8); break;
      case 5: f.value = fixed(4); break;
      case 2: {
        std::uint64_t len = varint();
        if (len > data_.size() - pos_) fail("a length of " + std::to_string(len) + " runs past the end of the data");
        f.bytes = data_.substr(pos_, static_cast<std::size_t>(len));
        pos_ += static_cast<std::size_t>(len);
        break;
      }
      default: fail("unsupported wire type " + std::to_string(f.wire));
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
    for (std::size_t i = 0; i < n; ++i)
      v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(data_[pos_ + i])) << (8 * i);
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
  // INT64 (7) or INT32 (6) values in raw_data, when small enough to be a shape or an axis list.
  if (t.ints.empty() && !raw.empty() && (t.data_type == 7 || t.data_type == 6)) {
    std::size_t width = t.data_type == 7 ? 8 : 4;
    if (raw.size() % width == 0 && raw.size() / width <= kMaxValues) {
      for (std::size_t i = 0; i < raw.size(); i += width) {
        std::uint64_t v = 0;
        for (std::size_t b = 0; b < width; ++b)
          v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(raw[i + b])) << (8 * b);
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
      default: break;
    }
  }
  return g;
}

// ------------------------------------------------------------------------------------------------ translation

/// What a tensor name stands for while translating.
struct Value {
  enum Kind { Activation, Constant, Weight, Unknown } kind = Unknown;
  std::string layer;               // Activation: the producing layer ("input" for the network input)
  Shape shape;                     // Activation: per-sample ONNX shape; Constant/Weight: full dims
  std::vector<std::int64_t> ints;  // Constant: values when known
  bool has_ints = false;
  bool shape_known = true;  // Constant: false when only values matter
  std::string origin;       // Unknown: the operator that produced it
  std::string view;         // Activation: the node that last changed the shape without a layer
  int pattern = -1;         // Activation inside a recognised attention pattern: its index (no layer)
  std::string initializer;  // Weight: the initializer it is (a view of), to find weights shared by two layers
};

/// An exported attention block recognised in the graph (see find_attention): translated as one layer.
struct AttentionMatch {
  std::set<std::size_t> nodes;          // every node of the block; all but `anchor` only track shapes
  std::size_t anchor = 0;               // the last node (output projection or its bias): emits the layer
  std::size_t scores = 0, context = 0;  // the MatMuls Q.K^T and P.V
  std::string query, memory;            // the tensors the Q and the K/V projections read
  int qkv_biases = 0;                   // how many of Q, K, V have a bias Add (0 or 3 to be one layer)
  bool out_bias = false, causal = false;
  double dropout = 0;
  Shape q_shape, k_shape, v_shape;  // per-sample shapes met at the two MatMuls while translating
};

/// Thrown while translating a recognised attention block whose shapes do not fit the attention layer; the
/// translation restarts with that block left to the operator-by-operator path.
struct AttentionMismatch {
  int pattern;
};

/// Whether an initializer of full shape `w` (maybe with a leading batch 1) broadcasts to the per-sample `a`.
bool broadcasts(const std::vector<std::int64_t>& w, const std::vector<std::int64_t>& a) {
  std::vector<std::int64_t> s = w;
  while (s.size() > a.size() && !s.empty() && s.front() == 1) s.erase(s.begin());
  if (s.size() > a.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    std::int64_t x = s[s.size() - 1 - i], y = a[a.size() - 1 - i];
    if (x != y && x != 1) return false;
  }
  return true;
}

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
    for (;;) {
      try {
        return translate_all();
      } catch (const AttentionMismatch& m) {
        disabled_.insert(m.pattern);  // at most one restart per recognised block
      }
    }
  }

 private:
  void reset() {
    builder_.reset();
    values_.clear();
    uses_.clear();
    skipped_.clear();
    unsupported_.clear();
    notes_.clear();
    embedding_of_.clear();
    current_ = 0;
  }

  Network translate_all() {
    reset();
    for (const auto& t : g_.initializers) {
      Value v;
      v.kind = t.has_ints && product(t.dims) <= 1 ? Value::Constant : Value::Weight;
      if (t.has_ints) {
        v.kind =
            product(t.dims) <= static_cast<std::int64_t>(kMaxValues) && t.data_type != 1 ? Value::Constant : v.kind;
        v.ints = t.ints;
        v.has_ints = true;
      }
      v.shape = t.dims;
      v.initializer = t.name;
      values_[t.name] = v;
    }
    setup_input();
    for (const auto& n : g_.nodes) {
      for (const auto& in : n.inputs) uses_[in] += 1;
    }
    if (!matched_) find_attention();
    in_pattern_.clear();
    for (std::size_t m = 0; m < matches_.size(); ++m) {
      if (disabled_.count(static_cast<int>(m))) continue;
      for (auto i : matches_[m].nodes) in_pattern_[i] = static_cast<int>(m);
    }
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      if (skipped_.count(i)) continue;
      node_path_ = index(join(path_, "graph.node"), i);
      current_ = i;
      if (auto it = in_pattern_.find(i); it != in_pattern_.end()) {
        attention_node(g_.nodes[i], i, it->second);
        continue;
      }
      translate(g_.nodes[i], i);
    }
    if (builder_->network().layers.empty()) {
      throw InputError(join(path_, "graph"), "the graph has no operator that maps to a layer");
    }
    Network net = builder_->take();
    for (const auto& [op, stat] : unsupported_) {
      net.warnings.push_back("ONNX operator " + printable(op) + " (" + std::to_string(stat.first) + " node" +
                             (stat.first > 1 ? "s" : "") +
                             ") is not modelled; costed as one elementwise pass "
                             "over its input (" +
                             std::to_string(stat.second) + " elements per sample in all)");
    }
    net.warnings.insert(net.warnings.end(), notes_.begin(), notes_.end());
    return net;
  }

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
      notes_.push_back("graph input \"" + printable(v.name) +
                       "\" is treated as a constant; only the first input is modelled");
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
    input_name_ = input->name;
  }

  // ---- helpers
  [[noreturn]] void fail(const Node& n, const std::string& why) const {
    throw InputError(node_path_, printable(n.op) + " node \"" + printable(n.name) + "\": " + why);
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
    if (v->kind != Value::Activation)
      fail(n, "input \"" + printable(name) + "\" is a constant, expected an activation");
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
    if (v.pattern >= 0) throw AttentionMismatch{v.pattern};  // read from outside its block: not one layer
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
    u.origin = printable(n.op) + " node \"" + printable(n.name) + "\" (" + why + ")";
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
    if (asymmetric)
      notes_.push_back(printable(n.op) + " node \"" + printable(n.name) +
                       "\": asymmetric padding taken as its leading side");
    if (spatial == 1) return Json::array({0, pads[0]});
    return Json::array({pads[0], pads[1]});
  }

  std::vector<std::int64_t> pair_attr(const Node& n, const std::string& key, std::size_t spatial,
                                      std::int64_t fallback) {
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
    if (x.shape.size() != 2)
      fail(n, "expects [channels, length] or [channels, height, width], got " + to_string(x.shape));
    Value v = x;
    v.shape = {x.shape[0], 1, x.shape[1]};
    return v;
  }
  Value back_to_1d(Value v, bool was_1d) {
    if (was_1d) v.shape = {v.shape[0], v.shape[2]};
    return v;
  }

  // ---- attention blocks
  //
  // Exporters write multi-head attention as projections, views and two activation x activation MatMuls:
  //   q = x Wq (+ bq), k = m Wk (+ bk), v = m Wv (+ bv)       (or one fused projection and a Split)
  //   Reshape/Transpose to heads;  s = MatMul(q, k^T) (Div/Mul scale) (Add mask | Where mask);  p = Softmax(s)
  //   (Dropout);  c = MatMul(p, v);  Transpose/Reshape back;  y = c Wo (+ bo)
  // find_attention matches that structure; translating it tracks shapes only, and its last node emits one
  // `attention` layer (the layer list's, with the same parameters and kernels). A block whose shapes do not
  // fit (grouped K/V heads, rotary arithmetic between projection and scores, ...) is translated node by node.

  /// The node producing `name`, or nullptr (graph inputs, initializers).
  const Node* producer(const std::string& name, std::size_t* at = nullptr) const {
    auto it = producer_.find(name);
    if (it == producer_.end()) return nullptr;
    if (at) *at = it->second;
    return &g_.nodes[it->second];
  }

  bool is_initializer(const std::string& name, std::size_t rank) const {
    auto it = initializer_rank_.find(name);
    return it != initializer_rank_.end() && it->second == rank;
  }

  /// Follows `name` back through views and scalar scales to a projection (MatMul by a rank-2 initializer,
  /// optionally plus a bias Add); records the nodes passed. False when the chain is anything else.
  bool trace_projection(std::string name, AttentionMatch& m, std::string* input, bool* bias) const {
    static const std::set<std::string> views = {"Transpose", "Reshape", "Squeeze", "Unsqueeze", "Identity", "Cast"};
    bool split_seen = false;
    for (int step = 0; step < 16; ++step) {
      std::size_t at = 0;
      const Node* n = producer(name, &at);
      if (!n) return false;
      if (views.count(n->op)) {
        m.nodes.insert(at);
        name = n->in(0);
      } else if ((n->op == "Mul" || n->op == "Div") && n->inputs.size() == 2 && !live_.count(n->in(1))) {
        m.nodes.insert(at);  // a scale on q or k before the product
        name = n->in(0);
      } else if (n->op == "Split" && !split_seen) {
        m.nodes.insert(at);  // one fused projection split into q, k, v
        split_seen = true;
        name = n->in(0);
      } else if (n->op == "Add" && n->inputs.size() == 2) {
        int side = is_initializer(n->in(1), 1) ? 0 : is_initializer(n->in(0), 1) ? 1 : -1;
        if (side < 0) return false;
        const Node* mm = producer(n->inputs[static_cast<std::size_t>(side)]);
        if (!mm || mm->op != "MatMul") return false;
        m.nodes.insert(at);
        *bias = true;
        name = n->inputs[static_cast<std::size_t>(side)];
      } else if (n->op == "MatMul" && is_initializer(n->in(1), 2) && live_.count(n->in(0))) {
        m.nodes.insert(at);
        *input = n->in(0);
        return true;
      } else {
        return false;
      }
    }
    return false;
  }

  /// The only reader of `name`, or nullptr.
  const Node* sole_consumer(const std::string& name, std::size_t* at) const {
    auto it = consumers_.find(name);
    if (it == consumers_.end() || it->second.size() != 1) return nullptr;
    *at = it->second.front();
    return &g_.nodes[*at];
  }

  /// Tries to read an attention block around the Softmax node `s`.
  bool match_attention(std::size_t s, AttentionMatch& m) const {
    const Node& soft = g_.nodes[s];
    if (soft.inputs.empty() || soft.outputs.empty()) return false;
    m.nodes.insert(s);
    // Back from the softmax: mask and scale, then the scores MatMul of two activations.
    std::string name = soft.in(0);
    const Node* n = nullptr;
    std::size_t at = 0;
    for (int step = 0;; ++step) {
      n = producer(name, &at);
      if (!n || step > 8) return false;
      if (n->op == "MatMul") break;
      std::vector<std::string> live;
      for (const auto& in : n->inputs) {
        if (live_.count(in)) live.push_back(in);
      }
      if (live.size() != 1 || n->outputs.size() != 1) return false;
      if (n->op == "Where") {
        m.causal = true;  // a boolean mask selecting scores: the causal triangle in exported decoders
      } else if (n->op == "Add" || n->op == "Sub") {
        const std::string& mask = n->in(0) == live[0] ? n->in(1) : n->in(0);
        if (!from_graph_input_.count(mask)) m.causal = true;  // a fixed additive mask; from an input: padding
      } else if (n->op != "Div" && n->op != "Mul" && n->op != "Cast") {
        return false;
      }
      m.nodes.insert(at);
      name = live[0];
    }
    if (n->inputs.size() != 2 || !live_.count(n->in(0)) || !live_.count(n->in(1))) return false;
    m.scores = at;
    m.nodes.insert(at);
    std::string q_in, k_in, v_in;
    bool q_bias = false, k_bias = false, v_bias = false;
    if (!trace_projection(n->in(0), m, &q_in, &q_bias)) return false;
    if (!trace_projection(n->in(1), m, &k_in, &k_bias)) return false;
    // Forward from the softmax: dropout, then the product with v.
    name = soft.outputs[0];
    n = sole_consumer(name, &at);
    if (n && n->op == "Dropout") {
      m.dropout = 0.5;
      if (const Attribute* a = n->attr("ratio"); a && a->has_f) m.dropout = std::min(std::max(a->f, 0.0), 0.999999);
      m.nodes.insert(at);
      name = n->outputs.empty() ? "" : n->outputs[0];
      n = sole_consumer(name, &at);
    }
    if (!n || n->op != "MatMul" || n->in(0) != name) return false;
    m.context = at;
    m.nodes.insert(at);
    if (!trace_projection(n->in(1), m, &v_in, &v_bias)) return false;
    // Back to [S, heads x head_dim] through views, then the output projection.
    name = n->outputs.empty() ? "" : n->outputs[0];
    for (int step = 0; step < 8; ++step) {
      n = sole_consumer(name, &at);
      if (!n || n->outputs.empty()) return false;
      if (n->op == "Transpose" || n->op == "Reshape" || n->op == "Flatten" || n->op == "Identity") {
        m.nodes.insert(at);
        name = n->outputs[0];
        continue;
      }
      break;
    }
    if (!n || n->op != "MatMul" || n->in(0) != name || !is_initializer(n->in(1), 2)) return false;
    m.nodes.insert(at);
    m.anchor = at;
    name = n->outputs[0];
    if (n = sole_consumer(name, &at); n && n->op == "Add" && n->inputs.size() == 2 && !n->outputs.empty()) {
      const std::string& other = n->in(0) == name ? n->in(1) : n->in(0);
      if (is_initializer(other, 1)) {
        m.nodes.insert(at);
        m.anchor = at;
        m.out_bias = true;
      }
    }
    if (k_in != v_in) return false;
    m.query = q_in;
    m.memory = k_in;
    m.qkv_biases = int{q_bias} + int{k_bias} + int{v_bias};
    // Everything inside is read only inside (Shape nodes only read shapes, which are tracked).
    for (auto i : m.nodes) {
      if (i == m.anchor) continue;
      for (const auto& out : g_.nodes[i].outputs) {
        auto it = consumers_.find(out);
        if (it == consumers_.end()) continue;
        for (auto c : it->second) {
          if (!m.nodes.count(c) && g_.nodes[c].op != "Shape") return false;
        }
      }
    }
    return true;
  }

  /// Finds the attention blocks once: indexes producers, readers and which tensors depend on the input.
  void find_attention() {
    matched_ = true;
    for (const auto& t : g_.initializers) initializer_rank_[t.name] = t.dims.size();
    live_.insert(input_name_);
    for (const auto& v : g_.inputs) {
      if (v.name != input_name_ && !initializer_rank_.count(v.name)) from_graph_input_.insert(v.name);
    }
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      bool live = false, input = false;
      for (const auto& in : n.inputs) {
        consumers_[in].push_back(i);
        live = live || live_.count(in);
        input = input || from_graph_input_.count(in);
      }
      for (const auto& out : n.outputs) {
        producer_.emplace(out, i);
        if (live && n.op != "Shape") live_.insert(out);
        if (input) from_graph_input_.insert(out);
      }
    }
    std::set<std::size_t> taken;
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      if (g_.nodes[i].op != "Softmax" || !g_.nodes[i].domain.empty()) continue;
      AttentionMatch m;
      if (!match_attention(i, m)) continue;
      bool overlaps = false;
      for (auto k : m.nodes) overlaps = overlaps || taken.count(k);
      if (overlaps) continue;
      taken.insert(m.nodes.begin(), m.nodes.end());
      matches_.push_back(std::move(m));
    }
  }

  /// A value inside attention block `p`: an activation with a shape and no layer.
  Value pattern_value(Shape shape, int p) const {
    Value v;
    v.kind = Value::Activation;
    v.shape = std::move(shape);
    v.pattern = p;
    return v;
  }

  /// Translates node `i` of attention block `p`: shapes only, and the attention layer at the anchor.
  void attention_node(const Node& n, std::size_t i, int p) {
    AttentionMatch& m = matches_[static_cast<std::size_t>(p)];
    const std::string& op = n.op;
    auto mismatch = [&] { throw AttentionMismatch{p}; };
    auto value = [&](const std::string& name) {
      const Value* v = find(name);
      if (!v || v->kind != Value::Activation) mismatch();
      return *v;
    };
    if (i == m.anchor) return emit_attention(n, m, p);
    if (op == "MatMul" && is_initializer(n.in(1), 2)) {  // a projection (Q, K, V, or the output before its bias)
      Value x = value(n.in(0));
      const Value* w = find(n.in(1));
      if (!w || w->shape.size() != 2 || x.shape.empty() || x.shape.back() != w->shape[0]) mismatch();
      Shape out = x.shape;
      out.back() = w->shape[1];
      return set(n, 0, pattern_value(out, p));
    }
    if (op == "MatMul") {  // Q.K^T or P.V: [..., a, b] x [..., b, c]
      Value a = value(n.in(0)), b = value(n.in(1));
      if (a.shape.size() < 2 || a.shape.size() != b.shape.size() || a.shape.back() != b.shape[b.shape.size() - 2]) {
        mismatch();
      }
      if (i == m.scores) {
        m.q_shape = a.shape;
        m.k_shape = b.shape;
      } else {
        m.v_shape = b.shape;
      }
      Shape out = a.shape;
      out.back() = b.shape.back();
      return set(n, 0, pattern_value(out, p));
    }
    if (op == "Split") {
      Value x = value(n.in(0));
      std::int64_t axis = n.attr_i("axis", 0);
      auto rank = static_cast<std::int64_t>(x.shape.size()) + 1;
      if (axis < 0) axis += rank;
      if (axis < 1 || axis >= rank) mismatch();
      auto k = static_cast<std::size_t>(axis - 1);
      std::vector<std::int64_t> sizes = n.attr_ints("split");
      if (sizes.empty() && !n.in(1).empty()) {
        const Value* c = find(n.in(1));
        if (!c || !c->has_ints) mismatch();
        sizes = c->ints;
      }
      if (sizes.empty()) sizes.assign(n.outputs.size(), x.shape[k] / static_cast<std::int64_t>(n.outputs.size()));
      // Each part non-negative and within what is left of the axis: the sum cannot overflow.
      std::int64_t total = 0;
      for (auto v : sizes) {
        if (v < 0 || v > x.shape[k] - total) mismatch();
        total += v;
      }
      if (sizes.size() != n.outputs.size() || total != x.shape[k]) mismatch();
      for (std::size_t o = 0; o < n.outputs.size(); ++o) {
        Shape s = x.shape;
        s[k] = sizes[o];
        set(n, o, pattern_value(s, p));
      }
      return;
    }
    if (op == "Reshape" || op == "Transpose" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten") {
      return translate(n, i);  // views: the same shape rules as outside the block
    }
    // Scale, mask, softmax, dropout, casts: the shape of the one input from the block.
    for (const auto& in : n.inputs) {
      const Value* v = find(in);
      if (v && v->pattern == p) return set(n, 0, *v);
    }
    for (const auto& in : n.inputs) {
      const Value* v = find(in);
      if (v && v->kind == Value::Activation) return set(n, 0, pattern_value(v->shape, p));  // scale on q
    }
    mismatch();
  }

  /// The block's last node: one attention layer when the shapes are those of multi-head attention.
  void emit_attention(const Node& n, AttentionMatch& m, int p) {
    auto mismatch = [&] { throw AttentionMismatch{p}; };
    const Value* x = find(m.query);
    const Value* mem = find(m.memory);
    if (!x || !mem || x->kind != Value::Activation || mem->kind != Value::Activation || x->pattern >= 0 ||
        mem->pattern >= 0 || x->shape.size() != 2 || mem->shape.size() != 2 || mem->shape[1] != x->shape[1]) {
      mismatch();
    }
    // q [H, S, d], k^T [H, d, T], v [H, T, d].
    const Shape &q = m.q_shape, &k = m.k_shape, &v = m.v_shape;
    if (q.size() != 3 || k.size() != 3 || v.size() != 3 || k[0] != q[0] || v[0] != q[0] || k[1] != q[2] ||
        v[2] != q[2] || q[1] != x->shape[0] || k[2] != mem->shape[0] || v[1] != mem->shape[0]) {
      mismatch();
    }
    if (m.qkv_biases != 0 && m.qkv_biases != 3) mismatch();
    // The ONNX weights the block holds, to check the layer counts the same.
    std::int64_t weights = 0;
    for (auto i : m.nodes) {
      const Node& node = g_.nodes[i];
      for (std::size_t j = 0; j < node.inputs.size(); ++j) {
        const std::string& in = node.inputs[j];
        bool kernel = node.op == "MatMul" && j == 1 && is_initializer(in, 2);
        bool bias = node.op == "Add" && is_initializer(in, 1);
        if (kernel || bias) weights += product(find(in)->shape);
      }
    }
    Json spec = {{"type", "attention"}, {"num_heads", q[0]},         {"head_dim", q[2]},
                 {"causal", m.causal},  {"bias", m.qkv_biases == 3}, {"out_bias", m.out_bias}};
    if (m.dropout > 0) spec["dropout"] = m.dropout;
    std::vector<Value> inputs = {*x};
    if (m.memory != m.query) inputs.push_back(*mem);
    Value out = emit(spec, unique_name(n), inputs);
    if (builder_->network().layers.back().parameters != weights || out.shape != x->shape) mismatch();
    set(n, 0, out);
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
      Value out =
          emit({{"type", op == "GlobalAveragePool" ? "global_avg_pool" : "global_max_pool"}}, unique_name(n), {x});
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
      if (axis != -1 && axis != rank - 1)
        notes_.push_back(printable(op) + " node \"" + printable(n.name) +
                         "\": normalisation over several axes costed as over the last");
      Json spec = op == "LayerNormalization" ? Json{{"type", "layernorm"}, {"bias", !n.in(2).empty()}}
                                             : Json{{"type", "rmsnorm"}};
      return set(n, 0, emit(spec, unique_name(n), {x}));
    }
    static const std::map<std::string, std::string> activations = {{"Relu", "relu"},
                                                                   {"Sigmoid", "sigmoid"},
                                                                   {"Tanh", "tanh"},
                                                                   {"LeakyRelu", "leaky_relu"},
                                                                   {"Elu", "elu"},
                                                                   {"Selu", "selu"},
                                                                   {"Softplus", "softplus"},
                                                                   {"HardSigmoid", "hard_sigmoid"},
                                                                   {"HardSwish", "hard_swish"},
                                                                   {"Mish", "mish"},
                                                                   {"Gelu", "gelu"},
                                                                   {"Clip", "relu6"},
                                                                   {"Erf", "gelu"},
                                                                   {"Silu", "silu"}};
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
          for (auto a : axes)
            drop = drop || (a < 0 ? a + static_cast<std::int64_t>(full.size()) : a) == static_cast<std::int64_t>(k);
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
    if (op == "Gather" && a->kind == Value::Weight && a->shape.size() == 2 && n.attr_i("axis", 0) == 0) {
      // A table read by ids that are not activations (position ids from a Range or a constant, token-type
      // ids from a second input): a positional embedding over the input's positions, as the layer list and
      // the Hugging Face translation write it. A single row (a scalar index) is weight preprocessing.
      const Value* idx = find(n.in(1));
      bool scalar = idx && idx->has_ints && idx->ints.size() == 1 && idx->shape.empty();
      InputKind kind = builder_->network().input.kind;
      if (!scalar && (kind == InputKind::Tokens || kind == InputKind::Sequence)) {
        Json spec = {{"type", "embedding"}, {"vocab_size", a->shape[0]}, {"dim", a->shape[1]}, {"positional", true}};
        set(n, 0, emit(spec, unique_name(n), {values_.at(input_name_)}));
        return;
      }
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
    } else if (a->kind == Value::Weight && op == "Transpose") {
      out = *a;  // a transposed weight (a head tied to the token table reads it so): the same weights
      auto perm = n.attr_ints("perm");
      if (perm.empty()) {
        std::reverse(out.shape.begin(), out.shape.end());
      } else if (perm.size() == a->shape.size()) {
        for (std::size_t k = 0; k < perm.size(); ++k) {
          if (perm[k] < 0 || perm[k] >= static_cast<std::int64_t>(a->shape.size())) fail(n, "bad perm");
          out.shape[k] = a->shape[static_cast<std::size_t>(perm[k])];
        }
      }
    } else if (a->kind == Value::Weight &&
               (op == "Expand" || op == "Identity" || op == "Cast" || op == "Reshape" || op == "Unsqueeze")) {
      out = *a;  // weight preprocessing (a class token broadcast to the batch, ...): still that weight
    }
    if (out.has_ints) out.shape = {static_cast<std::int64_t>(out.ints.size())};
    for (std::size_t k = 0; k < n.outputs.size(); ++k) set(n, k, out);
  }

  /// When the only consumer of `output` is an activation node, fuses it into the layer being emitted (as the
  /// layer list and Keras write it) and returns the activation's name and the consumer's output; else "none".
  std::string fuse_activation(const std::string& output, std::size_t after, std::string* fused_output) {
    static const std::map<std::string, std::string> fusable = {
        {"Relu", "relu"}, {"Sigmoid", "sigmoid"},   {"Tanh", "tanh"},
        {"Gelu", "gelu"}, {"Silu", "silu"},         {"Elu", "elu"},
        {"Selu", "selu"}, {"Softplus", "softplus"}, {"HardSwish", "hard_swish"}};
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
    Json spec = {{"type", "dense"}, {"units", units}, {"bias", !n.in(2).empty()}, {"activation", act}};
    tie_to_embedding(spec, w);
    set_fused(n, emit(spec, unique_name(n), {x}), fused);
  }

  /// A dense layer whose weight is the table an embedding looks up (GPT-2's tied LM head, exported as
  /// MatMul by Transpose(wte) or Gemm with transB) reuses that embedding's matrix instead of its own.
  void tie_to_embedding(Json& spec, const Value& weight) const {
    auto it = weight.initializer.empty() ? embedding_of_.end() : embedding_of_.find(weight.initializer);
    if (it != embedding_of_.end()) spec["tied_to"] = it->second;
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
    Json spec = {{"type", "dense"}, {"units", units}, {"bias", bias}, {"activation", act}};
    tie_to_embedding(spec, *b);
    Value out = emit(spec, unique_name(n), {x});
    set_fused(n, out, fused);
    if (bias) values_[g_.nodes[add_node].outputs[0]] = out;
  }

  void conv(const Node& n) {
    Value x0 = activation(n, n.in(0));
    bool one_d = x0.shape.size() == 2;
    Value x = as_2d(x0, n);
    const Value& w = weight(n, 1, 3, 4);
    std::size_t spatial = w.shape.size() - 2;
    if ((spatial == 1) != one_d)
      fail(n, "weight " + to_string(w.shape) + " does not match input " + to_string(x0.shape));
    for (auto d : n.attr_ints("dilations")) {
      if (d != 1) fail(n, "dilated convolutions are not supported");
    }
    std::int64_t group = n.attr_i("group", 1);
    if (group < 1) fail(n, "group must be positive");
    std::vector<std::int64_t> kernel =
        spatial == 1 ? std::vector<std::int64_t>{1, w.shape[2]} : std::vector<std::int64_t>{w.shape[2], w.shape[3]};
    if (w.shape[1] * group != x.shape[0]) {
      fail(n, "weight " + to_string(w.shape) + " with group " + std::to_string(group) + " does not match " +
                  std::to_string(x.shape[0]) + " input channels");
    }
    auto strides = pair_attr(n, "strides", spatial, 1);
    std::string fused;
    std::string act = fuse_activation(n.outputs[0], current_, &fused);
    Json spec = {{"type", "conv2d"},
                 {"filters", w.shape[0]},
                 {"kernel_size", kernel},
                 {"stride", strides},
                 {"padding", padding(n, spatial)},
                 {"groups", group},
                 {"bias", !n.in(2).empty()},
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
    if (n.attr_i("ceil_mode", 0) != 0)
      notes_.push_back(printable(n.op) + " node \"" + printable(n.name) + "\": ceil_mode costed as floor");
    Json spec = {{"type", n.op == "MaxPool" ? "max_pool2d" : "avg_pool2d"},
                 {"pool_size", kernel},
                 {"stride", strides},
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
    // One whose shape cannot broadcast to the activation's (an attention mask meeting scores that the
    // node-by-node path keeps in q's shape) is costed as a constant operand instead.
    for (const Value* o : others) {
      if (o->kind != Value::Weight || product(o->shape) <= 1) continue;
      if (broadcasts(o->shape, acts.front().shape)) {
        acts.push_back(parameter(n, *o, acts.front().shape.size()));
      } else {
        notes_.push_back(printable(n.op) + " node \"" + printable(n.name) + "\": initializer " + to_string(o->shape) +
                         " does not broadcast to " + to_string(acts.front().shape) + "; costed as a constant operand");
      }
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
      fail(n,
           "cannot reshape " + to_string(x.shape) + " (" + std::to_string(total) + " elements) to " + to_string(out));
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
      std::string table = data->initializer;
      Value out =
          emit({{"type", "embedding"}, {"vocab_size", data->shape[0]}, {"dim", data->shape[1]}}, unique_name(n), {idx});
      if (!table.empty()) embedding_of_.emplace(table, out.layer);
      set(n, 0, out);
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
  std::map<std::string, std::string> embedding_of_;  // initializer -> the embedding layer that looks rows up in it
  std::size_t current_ = 0;
  std::map<std::string, std::pair<int, std::int64_t>> unsupported_;  // op -> (nodes, elements)
  std::vector<std::string> notes_;
  std::string input_name_;
  bool matched_ = false;
  std::vector<AttentionMatch> matches_;
  std::set<int> disabled_;
  std::map<std::size_t, int> in_pattern_;  // node -> recognised attention block
  std::map<std::string, std::size_t> producer_, initializer_rank_;
  std::map<std::string, std::vector<std::size_t>> consumers_;
  std::set<std::string> live_;              // tensors computed from the network input (not only its shape)
  std::set<std::string> from_graph_input_;  // tensors computed from the other graph inputs (masks, ids)
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
  if (!value.is_string())
    throw InputError(path, "expected the .onnx file as a base64 string, got " + describe_type(value));
  std::string bytes = decode_base64(value.get_ref<const std::string&>(), path);
  return onnx_bytes_to_network(bytes, path, overrides);
}

}  // namespace prenet
