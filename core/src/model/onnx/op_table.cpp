// op_type → handler: adding an operator is one row here and its handler in the family's ops_*.cpp.
// Operators without a row are costed by elementwise_estimate (one pass over their input) and listed in
// the network's warnings; control flow (If, Loop, Scan) has no row: its subgraphs are not read.
#include "model/onnx/translator.hpp"

namespace prenet::onnx {

const std::map<std::string, Translator::OpRow>& Translator::op_table() {
  static const std::map<std::string, OpRow> table = [] {
    std::map<std::string, OpRow> t = {
        // Constants and shape arithmetic: run even when no input is an activation.
        {"Constant", {&Translator::constant, true}},
        {"Shape", {&Translator::shape, true}},
        // Matmul, gemm, linear.
        {"Gemm", {&Translator::gemm, false}},
        {"MatMul", {&Translator::matmul, false}},
        // Convolution and pooling.
        {"Conv", {&Translator::conv, false}},
        {"MaxPool", {&Translator::pool, false}},
        {"AveragePool", {&Translator::pool, false}},
        {"GlobalAveragePool", {&Translator::global_pool, false}},
        {"GlobalMaxPool", {&Translator::global_pool, false}},
        // Normalisation.
        {"BatchNormalization", {&Translator::batchnorm, false}},
        {"LayerNormalization", {&Translator::layernorm, false}},
        {"SimplifiedLayerNormalization", {&Translator::layernorm, false}},
        {"RMSNormalization", {&Translator::layernorm, false}},
        {"Pow", {&Translator::pow, false}},  // an RMSNorm written out, else one elementwise pass
        // Elementwise (activations come from their own table below).
        {"Softmax", {&Translator::softmax, false}},
        {"LogSoftmax", {&Translator::softmax, false}},
        {"Dropout", {&Translator::dropout, false}},
        {"Identity", {&Translator::identity, false}},
        {"Cast", {&Translator::identity, false}},
        {"Add", {&Translator::binary, false}},
        {"Sub", {&Translator::binary, false}},
        {"Mul", {&Translator::binary, false}},
        {"Div", {&Translator::binary, false}},
        {"Sum", {&Translator::binary, false}},
        // Shapes, views, concat and gather.
        {"Reshape", {&Translator::reshape, false}},
        {"Flatten", {&Translator::flatten, false}},
        {"Transpose", {&Translator::transpose, false}},
        {"Squeeze", {&Translator::squeeze, false}},
        {"Unsqueeze", {&Translator::squeeze, false}},
        {"Expand", {&Translator::expand, false}},
        {"Concat", {&Translator::concat, false}},
        {"Gather", {&Translator::gather, false}},
    };
    for (const auto& a : activation_ops()) t.emplace(a.op, OpRow{&Translator::activation_op, false});
    return t;
  }();
  return table;
}

/// Translates one node outside any recognised attention block.
void Translator::translate(const Node& n) {
  if (!n.domain.empty() && n.domain != "ai.onnx") {
    elementwise_estimate(n);
    return;
  }
  if (n.outputs.empty()) fail(n, "has no outputs");
  const auto& table = op_table();
  auto row = table.find(n.op);
  if (row != table.end() && row->second.on_constants) return (this->*row->second.handler)(n);
  // Constant folding of shape arithmetic (Shape -> Gather -> Unsqueeze -> Concat -> Reshape).
  bool any_activation = false;
  for (const auto& in : n.inputs) any_activation = any_activation || is_activation(in);
  if (!any_activation) return fold(n);
  if (row != table.end()) return (this->*row->second.handler)(n);
  elementwise_estimate(n);
}

}  // namespace prenet::onnx
