#include "model/onnx/translator.hpp"

namespace prenet::onnx {

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

Network Translator::run() {
  for (;;) {
    try {
      return translate_all();
    } catch (const AttentionMismatch& m) {
      disabled_.insert(m.pattern);  // at most one restart per recognised block
    }
  }
}

// ------------------------------------------------------------------------------------------------ one attempt

/// Clears what one attempt built.
void Translator::reset() {
  builder_.reset();
  values_.clear();
  uses_.clear();
  skipped_.clear();
  unsupported_.clear();
  notes_.clear();
  embedding_of_.clear();
  current_ = 0;
}

/// One pass over the nodes; throws AttentionMismatch when a recognised block turns out not to be one layer.
Network Translator::translate_all() {
  reset();
  load_initializers();
  setup_input();
  for (const auto& n : g_.nodes) {
    for (const auto& in : n.inputs) uses_[in] += 1;
  }
  if (!index_) {
    index_.emplace(g_, input_name_);
    matches_ = find_attention(*index_);
  }
  mark_patterns();
  for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
    if (skipped_.count(i)) continue;
    node_path_ = index(join(path_, "graph.node"), i);
    current_ = i;
    if (auto it = in_pattern_.find(i); it != in_pattern_.end()) {
      attention_node(g_.nodes[i], i, it->second);
      continue;
    }
    translate(g_.nodes[i]);
  }
  return finish();
}

/// Initializers become constants (small integer tensors: shapes, axes) or weights.
void Translator::load_initializers() {
  for (const auto& t : g_.initializers) {
    Value v;
    v.kind = t.has_ints && product(t.dims) <= 1 ? Value::Constant : Value::Weight;
    if (t.has_ints) {
      v.kind = product(t.dims) <= static_cast<std::int64_t>(kMaxValues) && t.data_type != 1 ? Value::Constant : v.kind;
      v.ints = t.ints;
      v.has_ints = true;
    }
    v.shape = t.dims;
    v.initializer = t.name;
    values_[t.name] = v;
  }
}

/// Which node belongs to which attention block still enabled.
void Translator::mark_patterns() {
  in_pattern_.clear();
  for (std::size_t m = 0; m < matches_.size(); ++m) {
    if (disabled_.count(static_cast<int>(m))) continue;
    for (auto i : matches_[m].nodes) in_pattern_[i] = static_cast<int>(m);
  }
}

/// The built network with the unsupported-operator warnings and the notes.
Network Translator::finish() {
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

// ------------------------------------------------------------------------------------------------ helpers

/// Throws the InputError naming the node being translated.
void Translator::fail(const Node& n, const std::string& why) const {
  throw InputError(node_path_, printable(n.op) + " node \"" + printable(n.name) + "\": " + why);
}

/// What `name` stands for, or nullptr when nothing produced it.
const Value* Translator::find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

/// The activation named `name`; errors when it is missing or came from something not modelled.
Value Translator::activation(const Node& n, const std::string& name) {
  const Value* v = find(name);
  if (!v) fail(n, "input \"" + printable(name) + "\" is not produced by any earlier node");
  if (v->kind == Value::Unknown) {
    fail(n, "input \"" + printable(name) + "\" comes from " + v->origin + ", whose output shape is unknown");
  }
  if (v->kind != Value::Activation) fail(n, "input \"" + printable(name) + "\" is a constant, expected an activation");
  return *v;
}

/// Whether `name` is an activation.
bool Translator::is_activation(const std::string& name) const {
  const Value* v = find(name);
  return v && v->kind == Value::Activation;
}

/// Input `k` of `n` as an initializer of rank in [rank_min, rank_max]; errors otherwise.
const Value& Translator::weight(const Node& n, std::size_t k, std::size_t rank_min, std::size_t rank_max) {
  const Value* v = find(n.in(k));
  if (!v || (v->kind != Value::Weight && v->kind != Value::Constant) || v->shape.size() < rank_min ||
      v->shape.size() > rank_max) {
    fail(n, "input " + std::to_string(k) + " must be an initializer of rank " + std::to_string(rank_min) +
                (rank_max != rank_min ? " to " + std::to_string(rank_max) : ""));
  }
  return *v;
}

/// The integer values of input `k`; errors when they are not known before run time.
std::vector<std::int64_t> Translator::const_ints(const Node& n, std::size_t k, const char* what) {
  const Value* v = find(n.in(k));
  if (!v || v->kind != Value::Constant || !v->has_ints) {
    fail(n, std::string(what) + " must be a constant known before run time");
  }
  return v->ints;
}

/// A layer name for `n` not taken yet (the node's name, else op_index; "input" is reserved).
std::string Translator::unique_name(const Node& n) {
  std::string base = n.name.empty() ? n.op + "_" + std::to_string(builder_->network().layers.size()) : n.name;
  base = printable(base);
  if (base == "input") base = "input_node";
  std::string name = base;
  for (int k = 1; builder_->find(name) != -2; ++k) name = base + "_" + std::to_string(k);
  return name;
}

/// Makes the layer-list shape of `v` equal its ONNX shape (a reshape view when only the layout differs).
Value Translator::materialize(const Value& v, const std::string& base) {
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

/// Adds the layer `spec` named `name` reading `inputs` (materialised first); returns its output.
Value Translator::emit(Json spec, const std::string& name, const std::vector<Value>& inputs) {
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

/// Binds output `k` of `n` (when present and named) to `v`.
void Translator::set(const Node& n, std::size_t k, Value v) {
  if (k < n.outputs.size() && !n.outputs[k].empty()) values_[n.outputs[k]] = std::move(v);
}

/// A weight used as an activation (a class token, a learned position table): a parameter layer.
Value Translator::parameter(const Node& n, const Value& w, std::size_t act_rank) {
  Shape s = w.shape;
  while (s.size() > act_rank && !s.empty() && s.front() == 1) s.erase(s.begin());
  if (s.empty()) s = {1};
  return emit({{"type", "parameter"}, {"shape", s}}, unique_name(n) + ".weight", {});
}

/// Marks every output of `n` unknown, remembering why for the error of whoever reads it.
void Translator::not_modelled(const Node& n, const std::string& why) {
  Value u;
  u.kind = Value::Unknown;
  u.origin = printable(n.op) + " node \"" + printable(n.name) + "\" (" + why + ")";
  for (std::size_t k = 0; k < n.outputs.size(); ++k) set(n, k, u);
}

/// An operator with no layer: one elementwise pass over its first activation input, shape unchanged.
void Translator::elementwise_estimate(const Node& n) {
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

/// The per-sample axis of the ONNX `axis` over a tensor of `full_rank` (batch included); errors on the batch.
std::int64_t Translator::axis_of(const Node& n, std::int64_t axis, std::size_t full_rank) {
  auto r = static_cast<std::int64_t>(full_rank);
  if (axis < -r || axis >= r) fail(n, "axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += r;
  if (axis == 0) fail(n, "operating on the batch axis is not supported");
  return axis - 1;  // per-sample
}

/// Adds the warning "<op> node "<name>": what".
void Translator::note(const Node& n, const std::string& what) {
  notes_.push_back(printable(n.op) + " node \"" + printable(n.name) + "\": " + what);
}

}  // namespace prenet::onnx
