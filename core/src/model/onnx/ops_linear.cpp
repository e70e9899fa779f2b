// Matmul, Gemm and linear layers: a product by a rank-2 initializer is a dense layer, with the bias Add and the
// activation that follow it fused in (as the layer list and Keras write it).
#include <algorithm>

#include "model/onnx/translator.hpp"

namespace prenet::onnx {

/// When the only consumer of `output` is an activation node, fuses it into the layer being emitted (as the
/// layer list and Keras write it) and returns the activation's name and the consumer's output; else "none".
std::string Translator::fuse_activation(const std::string& output, std::size_t after, std::string* fused_output) {
  if (uses_[output] != 1) return "none";
  for (std::size_t j = after + 1; j < g_.nodes.size(); ++j) {
    const Node& m = g_.nodes[j];
    if (std::find(m.inputs.begin(), m.inputs.end(), output) == m.inputs.end()) continue;
    const ActivationOp* a = find_activation_op(m.op);
    if (!a || !a->fuses || m.inputs.size() != 1 || m.outputs.empty() || !m.domain.empty()) return "none";
    skipped_.insert(j);
    *fused_output = m.outputs[0];
    return a->function;
  }
  return "none";
}

/// Binds `n`'s output, and the fused activation's output when there is one, to `out`.
void Translator::set_fused(const Node& n, const Value& out, const std::string& fused_output) {
  set(n, 0, out);
  if (!fused_output.empty()) values_[fused_output] = out;
}

/// A dense layer whose weight is the table an embedding looks up (GPT-2's tied LM head, exported as
/// MatMul by Transpose(wte) or Gemm with transB) reuses that embedding's matrix instead of its own.
void Translator::tie_to_embedding(Json& spec, const Value& weight) const {
  auto it = weight.initializer.empty() ? embedding_of_.end() : embedding_of_.find(weight.initializer);
  if (it != embedding_of_.end()) spec["tied_to"] = it->second;
}

/// Gemm by a rank-2 initializer (transB allowed): a dense layer on the flattened input.
void Translator::gemm(const Node& n) {
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

/// The node after `i` that adds a [units] initializer to `n`'s only-read output: its bias (PyTorch exports
/// Linear so), or nothing.
std::optional<std::size_t> Translator::bias_add_after(const Node& n, std::size_t i, std::int64_t units) {
  if (uses_[n.outputs[0]] != 1) return std::nullopt;
  for (std::size_t j = i + 1; j < g_.nodes.size(); ++j) {
    const Node& m = g_.nodes[j];
    if (m.op != "Add" || m.inputs.size() != 2) continue;
    int side = m.inputs[0] == n.outputs[0] ? 1 : m.inputs[1] == n.outputs[0] ? 0 : -1;
    if (side < 0) continue;
    const Value* c = find(m.inputs[static_cast<std::size_t>(side)]);
    if (c && c->kind == Value::Weight && product(c->shape) == units && !m.outputs.empty()) return j;
    return std::nullopt;
  }
  return std::nullopt;
}

/// A gated MLP's first half from the gate MatMul `n` (bias-free, as Llama-style exports write it):
///   act(x Wg) * (x Wu)  with act a fusable activation operator or SiLU as Sigmoid(g) * g,
/// and Wu of Wg's shape read from the same x. Returns the activation and the product node (its nodes after `n`
/// in `chain`), or nullopt.
std::optional<std::pair<std::string, const Node*>> Translator::gated_mlp(const Node& n,
                                                                         std::vector<std::size_t>& chain) const {
  const std::string& g = n.outputs[0];
  const auto& readers = index_->consumers(g);
  std::string fn, act_out;
  if (readers.size() == 2) {  // Sigmoid(g) and Mul(g, Sigmoid(g))
    std::size_t sig_at = g_.nodes[readers[0]].op == "Sigmoid" ? readers[0] : readers[1];
    std::size_t mul_at = sig_at == readers[0] ? readers[1] : readers[0];
    const Node* sig = &g_.nodes[sig_at];
    const Node* mul = &g_.nodes[mul_at];
    if (sig->op != "Sigmoid" || sig->outputs.empty() || mul->op != "Mul" || mul->inputs.size() != 2 ||
        mul->outputs.empty() || (mul->in(0) != sig->outputs[0] && mul->in(1) != sig->outputs[0]) ||
        index_->consumers(sig->outputs[0]).size() != 1) {
      return std::nullopt;
    }
    chain = {sig_at, mul_at};
    fn = "silu";
    act_out = mul->outputs[0];
  } else if (readers.size() == 1) {
    const Node& a = g_.nodes[readers[0]];
    const ActivationOp* op = find_activation_op(a.op);
    if (!op || !op->fuses || a.inputs.size() != 1 || a.outputs.empty() || !a.domain.empty()) return std::nullopt;
    chain = {readers[0]};
    fn = op->function;
    act_out = a.outputs[0];
  } else {
    return std::nullopt;
  }
  std::size_t prod_at = 0;
  const Node* prod = index_->sole_consumer(act_out, &prod_at);
  if (!prod || prod->op != "Mul" || prod->inputs.size() != 2 || prod->outputs.empty()) return std::nullopt;
  const std::string& up_out = prod->in(0) == act_out ? prod->in(1) : prod->in(0);
  std::size_t up_at = 0;
  const Node* up = index_->producer(up_out, &up_at);
  std::size_t sole = 0;
  if (!up || up_at <= current_ || up->op != "MatMul" || up->in(0) != n.in(0) || !index_->sole_consumer(up_out, &sole)) {
    return std::nullopt;
  }
  const Value* wg = find(n.in(1));
  const Value* wu = find(up->in(1));
  if (!wu || wu->kind != Value::Weight || wu->shape != wg->shape) return std::nullopt;
  chain.push_back(up_at);
  chain.push_back(prod_at);
  return std::make_pair(fn, prod);
}

/// MatMul by a rank-2 initializer: a dense layer (its bias Add and activation fused; with an up projection
/// multiplying its activation, one gated dense layer); activation x activation (attention scores outside a
/// recognised block) is costed as an elementwise pass.
void Translator::matmul(const Node& n) {
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
  std::vector<std::size_t> chain;
  if (b->kind == Value::Weight && x.pattern < 0) {
    if (auto glu = gated_mlp(n, chain)) {
      Value out =
          emit({{"type", "dense"}, {"units", units}, {"bias", false}, {"activation", glu->first}, {"gated", true}},
               unique_name(n), {x});
      skipped_.insert(chain.begin(), chain.end());
      values_[glu->second->outputs[0]] = out;
      return;
    }
  }
  std::optional<std::size_t> add_node = bias_add_after(n, current_, units);
  bool bias = add_node.has_value();
  if (bias) skipped_.insert(*add_node);
  std::string fused;
  const std::string& last = bias ? g_.nodes[*add_node].outputs[0] : n.outputs[0];
  std::string act = fuse_activation(last, bias ? *add_node : current_, &fused);
  Json spec = {{"type", "dense"}, {"units", units}, {"bias", bias}, {"activation", act}};
  tie_to_embedding(spec, *b);
  Value out = emit(spec, unique_name(n), {x});
  set_fused(n, out, fused);
  if (bias) values_[g_.nodes[*add_node].outputs[0]] = out;
}

}  // namespace prenet::onnx
