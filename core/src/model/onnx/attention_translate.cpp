// Translating a recognised attention block (attention_match.hpp): its nodes only track shapes, and its anchor
// emits one attention layer. Any shape that does not fit throws AttentionMismatch, and the translation
// restarts with the block left to the operator-by-operator path.
#include "model/onnx/translator.hpp"

namespace prenet::onnx {

/// A value inside attention block `p`: an activation with a shape and no layer.
Value Translator::pattern_value(Shape shape, int p) const {
  Value v;
  v.kind = Value::Activation;
  v.shape = std::move(shape);
  v.pattern = p;
  return v;
}

/// The activation `name` read inside block `p`; a mismatch when it is not one.
Value Translator::pattern_input(const std::string& name, int p) const {
  const Value* v = find(name);
  if (!v || v->kind != Value::Activation) throw AttentionMismatch{p};
  return *v;
}

/// Translates node `i` of attention block `p`: shapes only, and the attention layer at the anchor.
void Translator::attention_node(const Node& n, std::size_t i, int p) {
  AttentionMatch& m = matches_[static_cast<std::size_t>(p)];
  const std::string& op = n.op;
  if (i == m.anchor) return emit_attention(n, m, p);
  if (op == "MatMul" && index_->is_initializer(n.in(1), 2)) return pattern_projection(n, p);
  if (op == "MatMul") return pattern_product(n, i, p);
  if (op == "Split") return pattern_split(n, p);
  if (op == "Reshape" || op == "Transpose" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten" ||
      op == "Expand") {
    return translate(n);  // views: the same shape rules as outside the block
  }
  pattern_passthrough(n, p);
}

/// A projection inside the block (Q, K, V, or the output before its bias): [..., d] x [d, e].
void Translator::pattern_projection(const Node& n, int p) {
  Value x = pattern_input(n.in(0), p);
  const Value* w = find(n.in(1));
  if (!w || w->shape.size() != 2 || x.shape.empty() || x.shape.back() != w->shape[0]) throw AttentionMismatch{p};
  Shape out = x.shape;
  out.back() = w->shape[1];
  set(n, 0, pattern_value(out, p));
}

/// Q.K^T or P.V: [..., a, b] x [..., b, c]; records the shapes the attention layer is checked against.
void Translator::pattern_product(const Node& n, std::size_t i, int p) {
  AttentionMatch& m = matches_[static_cast<std::size_t>(p)];
  Value a = pattern_input(n.in(0), p), b = pattern_input(n.in(1), p);
  if (a.shape.size() < 2 || a.shape.size() != b.shape.size() || a.shape.back() != b.shape[b.shape.size() - 2]) {
    throw AttentionMismatch{p};
  }
  if (i == m.scores) {
    m.q_shape = a.shape;
    m.k_shape = b.shape;
  } else {
    m.v_shape = b.shape;
  }
  Shape out = a.shape;
  out.back() = b.shape.back();
  set(n, 0, pattern_value(out, p));
}

/// A fused projection split into q, k, v along a per-sample axis.
void Translator::pattern_split(const Node& n, int p) {
  Value x = pattern_input(n.in(0), p);
  std::int64_t axis = n.attr_i("axis", 0);
  auto rank = static_cast<std::int64_t>(x.shape.size()) + 1;
  if (axis < 0) axis += rank;
  if (axis < 1 || axis >= rank) throw AttentionMismatch{p};
  auto k = static_cast<std::size_t>(axis - 1);
  std::vector<std::int64_t> sizes = n.attr_ints("split");
  if (sizes.empty() && !n.in(1).empty()) {
    const Value* c = find(n.in(1));
    if (!c || !c->has_ints) throw AttentionMismatch{p};
    sizes = c->ints;
  }
  if (sizes.empty()) sizes.assign(n.outputs.size(), x.shape[k] / static_cast<std::int64_t>(n.outputs.size()));
  // Each part non-negative and within what is left of the axis: the sum cannot overflow.
  std::int64_t total = 0;
  for (auto v : sizes) {
    if (v < 0 || v > x.shape[k] - total) throw AttentionMismatch{p};
    total += v;
  }
  if (sizes.size() != n.outputs.size() || total != x.shape[k]) throw AttentionMismatch{p};
  for (std::size_t o = 0; o < n.outputs.size(); ++o) {
    Shape s = x.shape;
    s[k] = sizes[o];
    set(n, o, pattern_value(s, p));
  }
}

/// Scale, mask, softmax, dropout, casts: the shape of the one input from the block.
void Translator::pattern_passthrough(const Node& n, int p) {
  for (const auto& in : n.inputs) {
    const Value* v = find(in);
    if (v && v->pattern == p) return set(n, 0, *v);
  }
  for (const auto& in : n.inputs) {
    const Value* v = find(in);
    if (v && v->kind == Value::Activation) return set(n, 0, pattern_value(v->shape, p));  // scale on q
  }
  throw AttentionMismatch{p};
}

/// The ONNX weights the block holds (projection kernels and biases), to check the layer counts the same.
std::int64_t Translator::block_weights(const AttentionMatch& m) const {
  std::int64_t weights = 0;
  for (auto i : m.nodes) {
    const Node& node = g_.nodes[i];
    for (std::size_t j = 0; j < node.inputs.size(); ++j) {
      const std::string& in = node.inputs[j];
      bool kernel = node.op == "MatMul" && j == 1 && index_->is_initializer(in, 2);
      bool bias = node.op == "Add" && index_->is_initializer(in, 1);
      if (kernel || bias) weights += product(find(in)->shape);
    }
  }
  return weights;
}

/// The block's last node: one attention layer when the shapes are those of multi-head attention.
void Translator::emit_attention(const Node& n, AttentionMatch& m, int p) {
  const Value* x = find(m.query);
  const Value* mem = find(m.memory);
  if (!x || !mem || x->kind != Value::Activation || mem->kind != Value::Activation || x->pattern >= 0 ||
      mem->pattern >= 0 || x->shape.size() != 2 || mem->shape.size() != 2 || mem->shape[1] != x->shape[1]) {
    throw AttentionMismatch{p};
  }
  // q [H, S, d], k^T [H, d, T], v [H, T, d].
  const Shape &q = m.q_shape, &k = m.k_shape, &v = m.v_shape;
  if (q.size() != 3 || k.size() != 3 || v.size() != 3 || k[0] != q[0] || v[0] != q[0] || k[1] != q[2] || v[2] != q[2] ||
      q[1] != x->shape[0] || k[2] != mem->shape[0] || v[1] != mem->shape[0]) {
    throw AttentionMismatch{p};
  }
  if (m.qkv_biases != 0 && m.qkv_biases != 3) throw AttentionMismatch{p};
  std::int64_t weights = block_weights(m);
  Json spec = {{"type", "attention"}, {"num_heads", q[0]},         {"head_dim", q[2]},
               {"causal", m.causal},  {"bias", m.qkv_biases == 3}, {"out_bias", m.out_bias}};
  // Grouped-query attention: K (and V) projected to fewer heads, repeated (Expand) up to q's before the scores.
  const Value* kw = find(m.k_weight);
  if (kw && kw->shape.size() == 2 && kw->shape[1] != q[0] * q[2]) {
    if (kw->shape[1] % q[2] != 0 || q[0] % (kw->shape[1] / q[2]) != 0) throw AttentionMismatch{p};
    spec["num_kv_heads"] = kw->shape[1] / q[2];
  }
  if (m.dropout > 0) spec["dropout"] = m.dropout;
  std::vector<Value> inputs = {*x};
  if (m.memory != m.query) inputs.push_back(*mem);
  Value out = emit(spec, unique_name(n), inputs);
  if (builder_->network().layers.back().parameters != weights || out.shape != x->shape) throw AttentionMismatch{p};
  set(n, 0, out);
}

}  // namespace prenet::onnx
