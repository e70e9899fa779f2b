#include "model/onnx/attention_match.hpp"

#include <algorithm>
#include <utility>

namespace prenet::onnx {

GraphIndex::GraphIndex(const Graph& g, const std::string& input_name) : g_(g) {
  for (const auto& t : g.initializers) initializer_rank_[t.name] = t.dims.size();
  live_.insert(input_name);
  for (const auto& v : g.inputs) {
    if (v.name != input_name && !initializer_rank_.count(v.name)) from_graph_input_.insert(v.name);
  }
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    bool is_live = false, input = false;
    for (const auto& in : n.inputs) {
      consumers_[in].push_back(i);
      is_live = is_live || live_.count(in);
      input = input || from_graph_input_.count(in);
    }
    for (const auto& out : n.outputs) {
      producer_.emplace(out, i);
      if (is_live && n.op != "Shape") live_.insert(out);
      if (input) from_graph_input_.insert(out);
    }
  }
}

const Node* GraphIndex::producer(const std::string& name, std::size_t* at) const {
  auto it = producer_.find(name);
  if (it == producer_.end()) return nullptr;
  if (at) *at = it->second;
  return &g_.nodes[it->second];
}

const Node* GraphIndex::sole_consumer(const std::string& name, std::size_t* at) const {
  auto it = consumers_.find(name);
  if (it == consumers_.end() || it->second.size() != 1) return nullptr;
  *at = it->second.front();
  return &g_.nodes[*at];
}

const std::vector<std::size_t>& GraphIndex::consumers(const std::string& name) const {
  static const std::vector<std::size_t> none;
  auto it = consumers_.find(name);
  return it == consumers_.end() ? none : it->second;
}

bool GraphIndex::is_initializer(const std::string& name, std::size_t rank) const {
  auto it = initializer_rank_.find(name);
  return it != initializer_rank_.end() && it->second == rank;
}

namespace {

/// Follows `name` back through views and scalar scales to a projection (MatMul by a rank-2 initializer,
/// optionally plus a bias Add); records the nodes passed. False when the chain is anything else.
/// `weight`, when given, receives the projection's kernel unless it is a fused one (split). Expand is GQA's
/// repeat of the K/V heads.
bool trace_projection(const GraphIndex& ix, std::string name, AttentionMatch& m, std::string* input, bool* bias,
                      std::string* weight = nullptr) {
  static const std::set<std::string> views = {"Transpose", "Reshape", "Squeeze", "Unsqueeze",
                                              "Identity",  "Cast",    "Expand"};
  bool split_seen = false;
  for (int step = 0; step < 16; ++step) {
    std::size_t at = 0;
    const Node* n = ix.producer(name, &at);
    if (!n) return false;
    if (views.count(n->op)) {
      m.nodes.insert(at);
      name = n->in(0);
    } else if ((n->op == "Mul" || n->op == "Div") && n->inputs.size() == 2 && !ix.live(n->in(1))) {
      m.nodes.insert(at);  // a scale on q or k before the product
      name = n->in(0);
    } else if (n->op == "Split" && !split_seen) {
      m.nodes.insert(at);  // one fused projection split into q, k, v
      split_seen = true;
      name = n->in(0);
    } else if (n->op == "Add" && n->inputs.size() == 2) {
      int side = ix.is_initializer(n->in(1), 1) ? 0 : ix.is_initializer(n->in(0), 1) ? 1 : -1;
      if (side < 0) return false;
      const Node* mm = ix.producer(n->inputs[static_cast<std::size_t>(side)]);
      if (!mm || mm->op != "MatMul") return false;
      m.nodes.insert(at);
      *bias = true;
      name = n->inputs[static_cast<std::size_t>(side)];
    } else if (n->op == "MatMul" && ix.is_initializer(n->in(1), 2) && ix.live(n->in(0))) {
      m.nodes.insert(at);
      *input = n->in(0);
      if (weight && !split_seen) *weight = n->in(1);  // a fused Wqkv holds more than K
      return true;
    } else {
      return false;
    }
  }
  return false;
}

/// Back from the softmax through mask and scale to the scores MatMul of two activations (m.scores), or nullptr.
const Node* scores_product(const GraphIndex& ix, const Node& soft, AttentionMatch& m) {
  std::string name = soft.in(0);
  const Node* n = nullptr;
  std::size_t at = 0;
  for (int step = 0;; ++step) {
    n = ix.producer(name, &at);
    if (!n || step > 8) return nullptr;
    if (n->op == "MatMul") break;
    std::vector<std::string> live;
    for (const auto& in : n->inputs) {
      if (ix.live(in)) live.push_back(in);
    }
    if (live.size() != 1 || n->outputs.size() != 1) return nullptr;
    if (n->op == "Where") {
      m.causal = true;  // a boolean mask selecting scores: the causal triangle in exported decoders
    } else if (n->op == "Add" || n->op == "Sub") {
      const std::string& mask = n->in(0) == live[0] ? n->in(1) : n->in(0);
      if (!ix.from_graph_input(mask)) m.causal = true;  // a fixed additive mask; from an input: padding
    } else if (n->op != "Div" && n->op != "Mul" && n->op != "Cast") {
      return nullptr;
    }
    m.nodes.insert(at);
    name = live[0];
  }
  if (n->inputs.size() != 2 || !ix.live(n->in(0)) || !ix.live(n->in(1))) return nullptr;
  m.scores = at;
  m.nodes.insert(at);
  return n;
}

/// Forward from the softmax through an optional Dropout to the MatMul with v (m.context), or nullptr.
const Node* context_product(const GraphIndex& ix, const Node& soft, AttentionMatch& m) {
  std::string name = soft.outputs[0];
  std::size_t at = 0;
  const Node* n = ix.sole_consumer(name, &at);
  if (n && n->op == "Dropout") {
    m.dropout = 0.5;
    if (const Attribute* a = n->attr("ratio"); a && a->has_f) m.dropout = std::min(std::max(a->f, 0.0), 0.999999);
    m.nodes.insert(at);
    name = n->outputs.empty() ? "" : n->outputs[0];
    n = ix.sole_consumer(name, &at);
  }
  if (!n || n->op != "MatMul" || n->in(0) != name) return nullptr;
  m.context = at;
  m.nodes.insert(at);
  return n;
}

/// From the context back to [S, heads x head_dim] through views, then the output projection and its optional
/// bias (m.anchor, m.out_bias). False when the block does not end so.
bool output_projection(const GraphIndex& ix, const Node& context, AttentionMatch& m) {
  std::string name = context.outputs.empty() ? "" : context.outputs[0];
  const Node* n = nullptr;
  std::size_t at = 0;
  for (int step = 0; step < 8; ++step) {
    n = ix.sole_consumer(name, &at);
    if (!n || n->outputs.empty()) return false;
    if (n->op == "Transpose" || n->op == "Reshape" || n->op == "Flatten" || n->op == "Identity") {
      m.nodes.insert(at);
      name = n->outputs[0];
      continue;
    }
    break;
  }
  if (!n || n->op != "MatMul" || n->in(0) != name || !ix.is_initializer(n->in(1), 2)) return false;
  m.nodes.insert(at);
  m.anchor = at;
  name = n->outputs[0];
  if (n = ix.sole_consumer(name, &at); n && n->op == "Add" && n->inputs.size() == 2 && !n->outputs.empty()) {
    const std::string& other = n->in(0) == name ? n->in(1) : n->in(0);
    if (ix.is_initializer(other, 1)) {
      m.nodes.insert(at);
      m.anchor = at;
      m.out_bias = true;
    }
  }
  return true;
}

/// Whether everything the block computes, but its anchor's output, is read only inside it (Shape nodes only
/// read shapes, which are tracked).
bool reads_only_inside(const GraphIndex& ix, const AttentionMatch& m) {
  const Graph& g = ix.graph();
  for (auto i : m.nodes) {
    if (i == m.anchor) continue;
    for (const auto& out : g.nodes[i].outputs) {
      for (auto c : ix.consumers(out)) {
        if (!m.nodes.count(c) && g.nodes[c].op != "Shape") return false;
      }
    }
  }
  return true;
}

/// Tries to read an attention block around the Softmax node `s`.
bool match_attention(const GraphIndex& ix, std::size_t s, AttentionMatch& m) {
  const Node& soft = ix.graph().nodes[s];
  if (soft.inputs.empty() || soft.outputs.empty()) return false;
  m.nodes.insert(s);
  const Node* scores = scores_product(ix, soft, m);
  if (!scores) return false;
  std::string q_in, k_in, v_in;
  bool q_bias = false, k_bias = false, v_bias = false;
  if (!trace_projection(ix, scores->in(0), m, &q_in, &q_bias)) return false;
  if (!trace_projection(ix, scores->in(1), m, &k_in, &k_bias, &m.k_weight)) return false;
  const Node* context = context_product(ix, soft, m);
  if (!context) return false;
  if (!trace_projection(ix, context->in(1), m, &v_in, &v_bias)) return false;
  if (!output_projection(ix, *context, m)) return false;
  if (k_in != v_in) return false;
  m.query = q_in;
  m.memory = k_in;
  m.qkv_biases = int{q_bias} + int{k_bias} + int{v_bias};
  return reads_only_inside(ix, m);
}

}  // namespace

std::vector<AttentionMatch> find_attention(const GraphIndex& index) {
  const Graph& g = index.graph();
  std::vector<AttentionMatch> matches;
  std::set<std::size_t> taken;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op != "Softmax" || !g.nodes[i].domain.empty()) continue;
    AttentionMatch m;
    if (!match_attention(index, i, m)) continue;
    bool overlaps = false;
    for (auto k : m.nodes) overlaps = overlaps || taken.count(k);
    if (overlaps) continue;
    taken.insert(m.nodes.begin(), m.nodes.end());
    matches.push_back(std::move(m));
  }
  return matches;
}

}  // namespace prenet::onnx
