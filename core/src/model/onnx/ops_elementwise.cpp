// Elementwise operators and activations.
#include <algorithm>

#include "model/onnx/translator.hpp"

namespace prenet::onnx {

const std::vector<ActivationOp>& activation_ops() {
  static const std::vector<ActivationOp> table = {
      {"Relu", "relu", true},
      {"Sigmoid", "sigmoid", true},
      {"Tanh", "tanh", true},
      {"LeakyRelu", "leaky_relu", false},
      {"Elu", "elu", true},
      {"Selu", "selu", true},
      {"Softplus", "softplus", true},
      {"HardSigmoid", "hard_sigmoid", false},
      {"HardSwish", "hard_swish", true},
      {"Mish", "mish", false},
      {"Gelu", "gelu", true},
      {"Clip", "relu6", false},
      {"Erf", "gelu", false},
      {"Silu", "silu", true},
  };
  return table;
}

const ActivationOp* find_activation_op(const std::string& op) {
  for (const auto& a : activation_ops()) {
    if (op == a.op) return &a;
  }
  return nullptr;
}

/// An activation operator not fused into the layer before it: an activation layer.
void Translator::activation_op(const Node& n) {
  Value x = activation(n, n.in(0));
  set(n, 0, emit({{"type", "activation"}, {"function", find_activation_op(n.op)->function}}, unique_name(n), {x}));
}

/// Softmax / LogSoftmax: a softmax layer.
void Translator::softmax(const Node& n) {
  Value x = activation(n, n.in(0));
  set(n, 0, emit({{"type", "softmax"}}, unique_name(n), {x}));
}

/// Dropout: a dropout layer of its ratio (0.5 when absent), clamped to [0, 1).
void Translator::dropout(const Node& n) {
  Value x = activation(n, n.in(0));
  double rate = 0.5;
  if (const Attribute* a = n.attr("ratio"); a && a->has_f) rate = a->f;
  rate = std::min(std::max(rate, 0.0), 0.999999);
  set(n, 0, emit({{"type", "dropout"}, {"rate", rate}}, unique_name(n), {x}));
}

/// Identity / Cast: the input itself, no layer.
void Translator::identity(const Node& n) { set(n, 0, activation(n, n.in(0))); }

/// Add, Sub, Mul, Div, Sum: an add or multiply layer of the activations (trainable tensors become parameter
/// layers); an activation and constants is one elementwise pass.
void Translator::binary(const Node& n) {
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
      note(n, "initializer " + to_string(o->shape) + " does not broadcast to " + to_string(acts.front().shape) +
                  "; costed as a constant operand");
    }
  }
  if (acts.size() == 1) {
    // An activation and a constant: one elementwise pass.
    set(n, 0, emit({{"type", "activation"}, {"function", "linear"}}, name, acts));
    return;
  }
  set(n, 0, emit({{"type", mul ? "multiply" : "add"}}, name, acts));
}

}  // namespace prenet::onnx
