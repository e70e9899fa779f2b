// Constants, shape arithmetic, views (Reshape, Flatten, Transpose, Squeeze, Unsqueeze), Concat and Gather.
// Views change the ONNX shape without a layer; materialize() adds the reshape when a layer reads one.
#include <algorithm>

#include "model/onnx/translator.hpp"

namespace prenet::onnx {

/// Constant: its integer values and shape when it holds a tensor, value_ints or value_int.
void Translator::constant(const Node& n) {
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
}

/// Shape of an activation: the constant [1, ...per-sample shape] (the batch counted as 1).
void Translator::shape(const Node& n) {
  Value a = activation(n, n.in(0));
  Value v;
  v.kind = Value::Constant;
  v.ints = {1};  // the batch, per sample
  v.ints.insert(v.ints.end(), a.shape.begin(), a.shape.end());
  v.has_ints = true;
  v.shape = {static_cast<std::int64_t>(v.ints.size())};
  set(n, 0, v);
}

/// Nodes with no activation input: shape arithmetic on constants, or weight preprocessing.
void Translator::fold(const Node& n) {
  const Value* a = find(n.in(0));
  if (!a) {
    not_modelled(n, "reads a tensor that is not produced earlier");
    return;
  }
  if (a->kind == Value::Unknown) {
    set(n, 0, *a);
    return;
  }
  if (fold_positions(n, *a)) return;
  Value out = folded(n, *a);
  for (std::size_t k = 0; k < n.outputs.size(); ++k) set(n, k, out);
}

/// A table read by ids that are not activations (position ids from a Range or a constant, token-type ids from
/// a second input): a positional embedding over the input's positions, as the layer list and the Hugging Face
/// translation write it. A single row (a scalar index) is weight preprocessing. True when emitted.
bool Translator::fold_positions(const Node& n, const Value& table) {
  if (n.op != "Gather" || table.kind != Value::Weight || table.shape.size() != 2 || n.attr_i("axis", 0) != 0) {
    return false;
  }
  const Value* idx = find(n.in(1));
  bool scalar = idx && idx->has_ints && idx->ints.size() == 1 && idx->shape.empty();
  InputKind kind = builder_->network().input.kind;
  if (scalar || (kind != InputKind::Tokens && kind != InputKind::Sequence)) return false;
  Json spec = {{"type", "embedding"}, {"vocab_size", table.shape[0]}, {"dim", table.shape[1]}, {"positional", true}};
  set(n, 0, emit(spec, unique_name(n), {values_.at(input_name_)}));
  return true;
}

/// What a node computes from its constant first input `a`: integer values folded (views, Concat, Gather),
/// the same weight after preprocessing, or a constant of unknown value.
Value Translator::folded(const Node& n, const Value& a) {
  const std::string& op = n.op;
  Value out;
  out.kind = Value::Constant;
  if ((op == "Unsqueeze" || op == "Squeeze" || op == "Cast" || op == "Identity") && a.has_ints) {
    out = a;
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
  } else if (op == "Gather" && a.has_ints) {
    const Value* idx = find(n.in(1));
    if (idx && idx->has_ints) {
      out.has_ints = true;
      for (auto k : idx->ints) {
        auto size = static_cast<std::int64_t>(a.ints.size());
        std::int64_t j = k < 0 ? k + size : k;
        if (j < 0 || j >= size) {
          out.has_ints = false;
          break;
        }
        out.ints.push_back(a.ints[static_cast<std::size_t>(j)]);
      }
    }
  } else if (a.kind == Value::Weight && op == "Transpose") {
    out = a;  // a transposed weight (a head tied to the token table reads it so): the same weights
    auto perm = n.attr_ints("perm");
    if (perm.empty()) {
      std::reverse(out.shape.begin(), out.shape.end());
    } else if (perm.size() == a.shape.size()) {
      for (std::size_t k = 0; k < perm.size(); ++k) {
        if (perm[k] < 0 || perm[k] >= static_cast<std::int64_t>(a.shape.size())) fail(n, "bad perm");
        out.shape[k] = a.shape[static_cast<std::size_t>(perm[k])];
      }
    }
  } else if (a.kind == Value::Weight &&
             (op == "Expand" || op == "Identity" || op == "Cast" || op == "Reshape" || op == "Unsqueeze")) {
    out = a;  // weight preprocessing (a class token broadcast to the batch, ...): still that weight
  }
  if (out.has_ints) out.shape = {static_cast<std::int64_t>(out.ints.size())};
  return out;
}

/// Reshape to a constant target (0 copies, one -1 inferred, the batch read as the batch): a view.
void Translator::reshape(const Node& n) {
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
    note(n, "a fixed batch of " + std::to_string(target[0]) + " in the target shape is read as the batch");
  }
  if (target[0] == -1 && infer < 0) infer = -2;  // batch inferred: the rest must match exactly
  if (infer >= 0) {
    if (known <= 0 || total % known != 0) fail(n, "cannot reshape " + to_string(x.shape) + " to the target");
    out[static_cast<std::size_t>(infer)] = total / known;
  } else if (known != total) {
    fail(n, "cannot reshape " + to_string(x.shape) + " (" + std::to_string(total) + " elements) to " + to_string(out));
  }
  x.shape = out;
  x.view = unique_name(n);
  set(n, 0, x);
}

/// Flatten keeping the batch: a view as [elements].
void Translator::flatten(const Node& n) {
  Value x = activation(n, n.in(0));
  std::int64_t axis = n.attr_i("axis", 1);
  if (axis != 1) fail(n, "only axis 1 (keep the batch) is supported");
  x.shape = {product(x.shape)};
  x.view = unique_name(n);
  set(n, 0, x);
}

/// Transpose keeping the batch first: a permuted view; its copy is not costed.
void Translator::transpose(const Node& n) {
  Value x = activation(n, n.in(0));
  auto perm = n.attr_ints("perm");
  if (perm.empty()) fail(n, "needs an explicit perm");
  if (perm.size() != x.shape.size() + 1 || perm[0] != 0) fail(n, "must keep the batch axis first");
  Shape s;
  for (std::size_t k = 1; k < perm.size(); ++k) {
    if (perm[k] < 1 || perm[k] > static_cast<std::int64_t>(x.shape.size())) fail(n, "bad perm");
    s.push_back(x.shape[static_cast<std::size_t>(perm[k] - 1)]);
  }
  x.shape = s;
  x.view = unique_name(n);
  set(n, 0, x);
}

/// Squeeze / Unsqueeze by attribute or constant axes (never the batch): a view.
void Translator::squeeze(const Node& n) {
  Value x = activation(n, n.in(0));
  auto axes = n.attr_ints("axes");
  if (axes.empty() && !n.in(1).empty()) axes = const_ints(n, 1, "axes");
  Shape full = x.shape;
  full.insert(full.begin(), 1);
  if (n.op == "Squeeze") {
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
  set(n, 0, x);
}

/// Expand to a constant shape (NumPy broadcasting; GQA's repeat of K/V heads): a view of the broadcast shape.
/// The copy a following Reshape makes of it is not costed.
void Translator::expand(const Node& n) {
  Value x = activation(n, n.in(0));
  std::vector<std::int64_t> target = const_ints(n, 1, "shape");
  Shape full = x.shape;
  full.insert(full.begin(), 1);
  if (target.size() != full.size()) fail(n, "an Expand that changes the rank is not supported");
  for (std::size_t k = 1; k < full.size(); ++k) {
    if (target[k] < 1 || target[k] > Limits::kMaxDim) fail(n, "bad target dimension " + std::to_string(target[k]));
    if (full[k] != target[k] && full[k] != 1 && target[k] != 1) {
      fail(n, "shape " + to_string(x.shape) + " does not broadcast to the target");
    }
    if (full[k] == 1 && target[k] > 1) full[k] = target[k];
  }
  x.shape.assign(full.begin() + 1, full.end());
  if (product(x.shape) < 0) fail(n, "the expanded tensor is too large");
  x.view = unique_name(n);
  set(n, 0, x);
}

/// Concat of activations (weights become parameter layers): a concat layer.
void Translator::concat(const Node& n) {
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

/// Gather: rows of a rank-2 weight by activation ids (an embedding), one position of a sequence (a class
/// token, costed as a pooling), else an elementwise pass.
void Translator::gather(const Node& n) {
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

}  // namespace prenet::onnx
