// Normalisation: batch, layer and RMS norms.
#include "model/onnx/translator.hpp"

namespace prenet::onnx {

/// BatchNormalization: a batchnorm layer.
void Translator::batchnorm(const Node& n) {
  Value x = activation(n, n.in(0));
  set(n, 0, emit({{"type", "batchnorm"}}, unique_name(n), {x}));
}

/// LayerNormalization (a layernorm, biased when it has a B input) or its RMS forms (an rmsnorm), over the
/// last axis.
void Translator::layernorm(const Node& n) {
  Value x = activation(n, n.in(0));
  std::int64_t axis = n.attr_i("axis", -1);
  auto rank = static_cast<std::int64_t>(x.shape.size()) + 1;
  if (axis != -1 && axis != rank - 1) note(n, "normalisation over several axes costed as over the last");
  Json spec = n.op == "LayerNormalization" ? Json{{"type", "layernorm"}, {"bias", !n.in(2).empty()}}
                                           : Json{{"type", "rmsnorm"}};
  set(n, 0, emit(spec, unique_name(n), {x}));
}

/// Whether `name` is a scalar that is not computed from the network input (an exponent, an epsilon, a 1).
bool Translator::is_scalar_constant(const std::string& name) const {
  const Value* v = find(name);
  return v && v->kind != Value::Activation && v->kind != Value::Unknown && product(v->shape) == 1;
}

/// The node that alone reads `name`, past any Casts (every node passed is added to `chain`), or nullptr.
const Node* Translator::sole_reader(std::string name, std::vector<std::size_t>& chain) const {
  for (int step = 0; step < 4; ++step) {
    std::size_t at = 0;
    const Node* n = index_->sole_consumer(name, &at);
    if (!n || n->outputs.empty()) return nullptr;
    chain.push_back(at);
    if (n->op != "Cast") return n;
    name = n->outputs[0];
  }
  return nullptr;
}

/// The end of an RMSNorm written out from Pow node `n` (x^2 -> ReduceMean over the last axis -> Add eps -> Sqrt
/// -> Reciprocal or Div(1, .) -> Mul by x, or Sqrt -> Div(x, .)): the normalising node, or nullptr. The nodes
/// after `n` are added to `chain`.
const Node* Translator::rms_chain(const Node& n, const Value& x, std::vector<std::size_t>& chain) const {
  const std::string& xs = n.in(0);
  auto other = [](const Node* m, const std::string& mine) { return m->in(0) == mine ? m->in(1) : m->in(0); };
  const Node* mean = sole_reader(n.outputs[0], chain);
  if (!mean || mean->op != "ReduceMean" || mean->attr_i("keepdims", 1) != 1) return nullptr;
  std::vector<std::int64_t> axes = mean->attr_ints("axes");
  if (axes.empty() && mean->inputs.size() > 1) {
    const Value* a = find(mean->in(1));
    if (a && a->has_ints) axes = a->ints;
  }
  auto last = static_cast<std::int64_t>(x.shape.size());  // the last axis, counting the batch
  if (axes.size() != 1 || (axes[0] != -1 && axes[0] != last)) return nullptr;
  const Node* eps = sole_reader(mean->outputs[0], chain);
  if (!eps || eps->op != "Add" || eps->inputs.size() != 2 || !is_scalar_constant(other(eps, mean->outputs[0]))) {
    return nullptr;
  }
  const Node* root = sole_reader(eps->outputs[0], chain);
  if (!root || root->op != "Sqrt") return nullptr;
  const Node* inv = sole_reader(root->outputs[0], chain);
  if (!inv || inv->inputs.empty()) return nullptr;
  if (inv->op == "Div" && inv->inputs.size() == 2 && inv->in(1) == root->outputs[0] && inv->in(0) == xs) return inv;
  bool reciprocal = inv->op == "Reciprocal" || (inv->op == "Div" && inv->inputs.size() == 2 &&
                                                inv->in(1) == root->outputs[0] && is_scalar_constant(inv->in(0)));
  if (!reciprocal) return nullptr;
  const Node* scale = sole_reader(inv->outputs[0], chain);
  if (!scale || scale->op != "Mul" || scale->inputs.size() != 2 || other(scale, inv->outputs[0]) != xs) return nullptr;
  return scale;
}

/// Pow: x^c opening an RMSNorm written out, as torch.onnx.export writes LlamaRMSNorm (rms_chain), then
/// optionally a Mul by a weight of x's width: one rmsnorm layer (scale false without the weight). Any other Pow
/// is one elementwise pass.
void Translator::pow(const Node& n) {
  const Value* x = find(n.in(0));
  std::vector<std::size_t> chain;
  const Node* end = nullptr;
  if (x && x->kind == Value::Activation && x->pattern < 0 && !x->shape.empty() && is_scalar_constant(n.in(1))) {
    end = rms_chain(n, *x, chain);
  }
  if (!end) return elementwise_estimate(n);
  bool scaled = false;
  std::vector<std::size_t> tail;
  if (const Node* w = sole_reader(end->outputs[0], tail); w && w->op == "Mul" && w->inputs.size() == 2) {
    const Value* a = find(w->in(0));
    const Value* v = a && a->kind == Value::Weight ? a : find(w->in(1));
    if (v && v->kind == Value::Weight && v->shape.size() == 1 && v->shape[0] == x->shape.back()) {
      scaled = true;
      chain.insert(chain.end(), tail.begin(), tail.end());
      end = w;
    }
  }
  Json spec = {{"type", "rmsnorm"}};
  if (!scaled) spec["scale"] = false;
  Value out = emit(spec, unique_name(n), {activation(n, n.in(0))});
  skipped_.insert(chain.begin(), chain.end());
  values_[end->outputs[0]] = out;
}

}  // namespace prenet::onnx
