#pragma once
// Exported multi-head attention, recognised in the graph before translation.
//
// Exporters write multi-head attention as projections, views and two activation x activation MatMuls:
//   q = x Wq (+ bq), k = m Wk (+ bk), v = m Wv (+ bv)       (or one fused projection and a Split)
//   Reshape/Transpose to heads;  s = MatMul(q, k^T) (Div/Mul scale) (Add mask | Where mask);  p = Softmax(s)
//   (Dropout);  c = MatMul(p, v);  Transpose/Reshape back;  y = c Wo (+ bo)
// find_attention matches that structure; translating it tracks shapes only, and its last node emits one
// `attention` layer (the layer list's, with the same parameters and kernels). A block whose shapes do not
// fit (grouped K/V heads, rotary arithmetic between projection and scores, ...) is translated node by node.
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "model/onnx/graph.hpp"
#include "prenet/network.hpp"

namespace prenet::onnx {

/// Who produces and who reads each tensor, and which tensors are computed from which graph inputs.
class GraphIndex {
 public:
  /// Indexes `g`, whose modelled input is `input_name` (the graph must outlive the index).
  GraphIndex(const Graph& g, const std::string& input_name);

  /// The node producing `name`, or nullptr (graph inputs, initializers).
  const Node* producer(const std::string& name, std::size_t* at = nullptr) const;
  /// The only reader of `name`, or nullptr.
  const Node* sole_consumer(const std::string& name, std::size_t* at) const;
  /// The nodes reading `name` (empty when none).
  const std::vector<std::size_t>& consumers(const std::string& name) const;
  /// Whether `name` is an initializer of rank `rank`.
  bool is_initializer(const std::string& name, std::size_t rank) const;
  /// Whether `name` is computed from the network input (not only from its shape).
  bool live(const std::string& name) const { return live_.count(name) > 0; }
  /// Whether `name` is computed from another graph input (a mask, ids).
  bool from_graph_input(const std::string& name) const { return from_graph_input_.count(name) > 0; }
  const Graph& graph() const { return g_; }

 private:
  const Graph& g_;
  std::map<std::string, std::size_t> producer_, initializer_rank_;
  std::map<std::string, std::vector<std::size_t>> consumers_;
  std::set<std::string> live_;              // tensors computed from the network input (not only its shape)
  std::set<std::string> from_graph_input_;  // tensors computed from the other graph inputs (masks, ids)
};

/// An exported attention block recognised in the graph (see find_attention): translated as one layer.
struct AttentionMatch {
  std::set<std::size_t> nodes;          // every node of the block; all but `anchor` only track shapes
  std::size_t anchor = 0;               // the last node (output projection or its bias): emits the layer
  std::size_t scores = 0, context = 0;  // the MatMuls Q.K^T and P.V
  std::string query, memory;            // the tensors the Q and the K/V projections read
  std::string k_weight;                 // the K projection's kernel [D, kv_heads x head_dim]
  int qkv_biases = 0;                   // how many of Q, K, V have a bias Add (0 or 3 to be one layer)
  bool out_bias = false, causal = false;
  double dropout = 0;
  Shape q_shape, k_shape, v_shape;  // per-sample shapes met at the two MatMuls while translating
};

/// The attention blocks of the graph, around each standard-domain Softmax, none sharing a node.
std::vector<AttentionMatch> find_attention(const GraphIndex& index);

}  // namespace prenet::onnx
