#pragma once
// ONNX graph → layer list: the translator walks the nodes in order, keeps what each tensor stands for (an
// activation with its per-sample shape, a constant, a weight) and emits layer-list layers through a
// LayerListBuilder. Each operator family's handlers live in their own file (ops_*.cpp); op_table.cpp maps
// op_type to its handler, so adding an operator is one row there and one handler.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/onnx/attention_match.hpp"
#include "model/onnx/graph.hpp"
#include "prenet/json_util.hpp"
#include "prenet/layer_list.hpp"
#include "prenet/network.hpp"

namespace prenet::onnx {

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

/// Thrown while translating a recognised attention block whose shapes do not fit the attention layer; the
/// translation restarts with that block left to the operator-by-operator path.
struct AttentionMismatch {
  int pattern;
};

/// An ONNX activation operator: its layer-list function, and whether it fuses into the layer it follows.
struct ActivationOp {
  const char* op;
  const char* function;
  bool fuses;
};

/// The activation operator named `op`, or nullptr (ops_elementwise.cpp holds the table).
const ActivationOp* find_activation_op(const std::string& op);
/// Every activation operator modelled, in table order.
const std::vector<ActivationOp>& activation_ops();

/// Whether an initializer of full shape `w` (maybe with a leading batch 1) broadcasts to the per-sample `a`.
bool broadcasts(const std::vector<std::int64_t>& w, const std::vector<std::int64_t>& a);
/// The element count of `dims`; -1 when a dimension is unknown or the count exceeds the per-sample limit.
std::int64_t product(const std::vector<std::int64_t>& dims);

/// Translates one parsed graph into a network (see onnx_bytes_to_network).
class Translator {
 public:
  Translator(const Graph& g, const std::string& path, const InputOverrides& overrides)
      : g_(g), path_(path), overrides_(overrides) {}

  /// The network; restarts once per recognised attention block whose shapes do not fit one layer.
  Network run();

 private:
  using OpHandler = void (Translator::*)(const Node&);
  /// How one ONNX operator is translated: its handler, and whether it runs when no input is an activation
  /// (otherwise such a node is folded as constant arithmetic or weight preprocessing).
  struct OpRow {
    OpHandler handler;
    bool on_constants;
  };
  /// op_type → its row (op_table.cpp).
  static const std::map<std::string, OpRow>& op_table();

  // ---- one attempt (translator.cpp)
  void reset();
  Network translate_all();
  void load_initializers();
  void mark_patterns();
  Network finish();

  // ---- the network input (input.cpp)
  void setup_input();
  const ValueInfo* first_input(std::size_t* input_index);
  InputSpec input_spec(const ValueInfo& input, const std::string& field) const;

  // ---- shared helpers (translator.cpp)
  [[noreturn]] void fail(const Node& n, const std::string& why) const;
  const Value* find(const std::string& name) const;
  Value activation(const Node& n, const std::string& name);
  bool is_activation(const std::string& name) const;
  const Value& weight(const Node& n, std::size_t k, std::size_t rank_min, std::size_t rank_max);
  std::vector<std::int64_t> const_ints(const Node& n, std::size_t k, const char* what);
  std::string unique_name(const Node& n);
  Value materialize(const Value& v, const std::string& base);
  Value emit(Json spec, const std::string& name, const std::vector<Value>& inputs);
  void set(const Node& n, std::size_t k, Value v);
  Value parameter(const Node& n, const Value& w, std::size_t act_rank);
  void not_modelled(const Node& n, const std::string& why);
  void elementwise_estimate(const Node& n);
  std::int64_t axis_of(const Node& n, std::int64_t axis, std::size_t full_rank);
  void note(const Node& n, const std::string& what);

  // ---- dispatch (op_table.cpp)
  void translate(const Node& n);

  // ---- attention blocks (attention_translate.cpp)
  Value pattern_value(Shape shape, int p) const;
  Value pattern_input(const std::string& name, int p) const;
  void attention_node(const Node& n, std::size_t i, int p);
  void pattern_projection(const Node& n, int p);
  void pattern_product(const Node& n, std::size_t i, int p);
  void pattern_split(const Node& n, int p);
  void pattern_passthrough(const Node& n, int p);
  std::int64_t block_weights(const AttentionMatch& m) const;
  void emit_attention(const Node& n, AttentionMatch& m, int p);

  // ---- matmul, gemm, linear (ops_linear.cpp)
  std::string fuse_activation(const std::string& output, std::size_t after, std::string* fused_output);
  void set_fused(const Node& n, const Value& out, const std::string& fused_output);
  void tie_to_embedding(Json& spec, const Value& weight) const;
  std::optional<std::size_t> bias_add_after(const Node& n, std::size_t i, std::int64_t units);
  void gemm(const Node& n);
  std::optional<std::pair<std::string, const Node*>> gated_mlp(const Node& n, std::vector<std::size_t>& chain) const;
  void matmul(const Node& n);

  // ---- convolution and pooling (ops_conv.cpp)
  Json padding(const Node& n, std::size_t spatial);
  std::vector<std::int64_t> pair_attr(const Node& n, const std::string& key, std::size_t spatial,
                                      std::int64_t fallback);
  Value as_2d(const Value& x, const Node& n);
  Value back_to_1d(Value v, bool was_1d);
  void conv(const Node& n);
  void pool(const Node& n);
  void global_pool(const Node& n);

  // ---- normalisation (ops_norm.cpp)
  void batchnorm(const Node& n);
  void layernorm(const Node& n);
  bool is_scalar_constant(const std::string& name) const;
  const Node* sole_reader(std::string name, std::vector<std::size_t>& chain) const;
  const Node* rms_chain(const Node& n, const Value& x, std::vector<std::size_t>& chain) const;
  void pow(const Node& n);

  // ---- elementwise and activations (ops_elementwise.cpp)
  void activation_op(const Node& n);
  void softmax(const Node& n);
  void dropout(const Node& n);
  void identity(const Node& n);
  void binary(const Node& n);

  // ---- constants, shapes and views (ops_shape.cpp)
  void constant(const Node& n);
  void shape(const Node& n);
  void fold(const Node& n);
  bool fold_positions(const Node& n, const Value& table);
  Value folded(const Node& n, const Value& a);
  void reshape(const Node& n);
  void flatten(const Node& n);
  void transpose(const Node& n);
  void squeeze(const Node& n);
  void expand(const Node& n);
  void concat(const Node& n);
  void gather(const Node& n);

  const Graph& g_;
  std::string path_, node_path_;
  InputOverrides overrides_;
  // One attempt's state (reset on each restart).
  std::optional<LayerListBuilder> builder_;
  std::map<std::string, Value> values_;
  std::map<std::string, int> uses_;
  std::set<std::size_t> skipped_;
  std::map<std::string, std::string> embedding_of_;  // initializer -> the embedding layer that looks rows up in it
  std::size_t current_ = 0;
  std::map<std::string, std::pair<int, std::int64_t>> unsupported_;  // op -> (nodes, elements)
  std::vector<std::string> notes_;
  std::map<std::size_t, int> in_pattern_;  // node -> recognised attention block
  // Kept across attempts.
  std::string input_name_;
  std::optional<GraphIndex> index_;  // built on the first attempt, with the attention blocks
  std::vector<AttentionMatch> matches_;
  std::set<int> disabled_;
};

}  // namespace prenet::onnx
