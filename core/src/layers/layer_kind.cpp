#include "layers/layer_kind.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "layers/kind_helpers.hpp"

namespace prenet {

// The registered kinds, each defined in its own file under core/src/layers (related kinds may share one).
const LayerKind& dense_kind();
const LayerKind& conv2d_kind();
const LayerKind& max_pool2d_kind();
const LayerKind& avg_pool2d_kind();
const LayerKind& global_avg_pool_kind();
const LayerKind& global_max_pool_kind();
const LayerKind& batchnorm_kind();
const LayerKind& layernorm_kind();
const LayerKind& rmsnorm_kind();
const LayerKind& activation_kind();
const LayerKind& dropout_kind();
const LayerKind& flatten_kind();
const LayerKind& reshape_kind();
const LayerKind& softmax_kind();
const LayerKind& embedding_kind();
const LayerKind& rnn_kind();
const LayerKind& lstm_kind();
const LayerKind& gru_kind();
const LayerKind& attention_kind();
const LayerKind& add_kind();
const LayerKind& concat_kind();
const LayerKind& identity_kind();
const LayerKind& cross_entropy_kind();
const LayerKind& multiply_kind();
const LayerKind& parameter_kind();
const LayerKind& adaptive_softmax_kind();
const LayerKind& mla_kind();
const LayerKind& mamba_kind();
const LayerKind& gated_deltanet_kind();
const LayerKind& contrastive_loss_kind();

namespace {

/// Every kind, indexed by its LayerType. To add a kind, declare its accessor above and list it here.
const std::vector<const LayerKind*>& kind_registry() {
  static const std::vector<const LayerKind*> by_type = [] {
    const std::vector<const LayerKind*> kinds = {
        &dense_kind(),
        &conv2d_kind(),
        &max_pool2d_kind(),
        &avg_pool2d_kind(),
        &global_avg_pool_kind(),
        &global_max_pool_kind(),
        &batchnorm_kind(),
        &layernorm_kind(),
        &rmsnorm_kind(),
        &activation_kind(),
        &dropout_kind(),
        &flatten_kind(),
        &reshape_kind(),
        &softmax_kind(),
        &embedding_kind(),
        &rnn_kind(),
        &lstm_kind(),
        &gru_kind(),
        &attention_kind(),
        &add_kind(),
        &concat_kind(),
        &identity_kind(),
        &cross_entropy_kind(),
        &multiply_kind(),
        &parameter_kind(),
        &adaptive_softmax_kind(),
        &mla_kind(),
        &mamba_kind(),
        &gated_deltanet_kind(),
        &contrastive_loss_kind(),
    };
    std::vector<const LayerKind*> table(kinds.size(), nullptr);
    for (const LayerKind* kind : kinds) table.at(static_cast<std::size_t>(kind->type())) = kind;
    for (const LayerKind* kind : table) {
      if (kind == nullptr) throw std::logic_error("a layer type has no registered kind");
    }
    return table;
  }();
  return by_type;
}

/// Kinds by layer-list name, in name order.
const std::map<std::string, const LayerKind*>& kinds_by_name() {
  static const std::map<std::string, const LayerKind*> names = [] {
    std::map<std::string, const LayerKind*> m;
    for (const LayerKind* kind : kind_registry()) m.emplace(kind->name(), kind);
    return m;
  }();
  return names;
}

}  // namespace

const LayerKind& kind_of(LayerType type) {
  const auto i = static_cast<std::size_t>(type);
  const auto& table = kind_registry();
  return i < table.size() ? *table[i] : identity_kind();
}

const LayerKind* kind_named(const std::string& name) {
  auto it = kinds_by_name().find(name);
  return it == kinds_by_name().end() ? nullptr : it->second;
}

std::vector<std::string> kind_timing_notes(const Network& net) {
  std::vector<std::string> notes;
  for (const Layer& layer : net.layers) {
    std::string note = kind_of(layer.type).timing_note(layer);
    if (!note.empty() && std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(std::move(note));
  }
  return notes;
}

std::string kind_name_list() {
  std::string list;
  for (const auto& entry : kinds_by_name()) list += (list.empty() ? "" : ", ") + entry.first;
  return list;
}

LayerAttrs LayerKind::parse(const Json& spec, const std::string& path, bool* /*same_padding*/) const {
  reject_unknown_keys(spec, path, common_keys({}));
  return LayerAttrs{};
}

void LayerKind::infer(Layer& layer, bool /*same_padding*/, const std::string& /*path*/) const {
  layer.output_shape = layer.input_shapes.front();
}

void LayerKind::kernels(const LayerStep& /*step*/, KernelBuilder& /*kb*/, LayerWork& /*lw*/) const {}

double LayerKind::prenet_co(const Layer& layer, double b) const { return b * d(elements(layer.output_shape)); }

void KernelBuilder::gemm(Phase phase, double m, double n, double k, double batch, KernelClass cls) {
  Kernel kn = gemm_kernel(phase, m, n, k, batch, e_);
  if (cls != KernelClass::Gemm) kn.cls = cls;
  kn.misaligned = misaligned_;
  kn.grouped = grouped_ && batch > 1;
  push(kn);
}

void KernelBuilder::weight_gradient(double m, double n, double k, double batch) {
  if (!frozen_) gemm(Phase::Backward, m, n, k, batch);
}

void KernelBuilder::stream(KernelClass cls, Phase phase, double elements, double passes, double flops_per_element,
                           double element_bytes) {
  if (elements <= 0) return;
  push(stream_kernel(cls, phase, elements, passes, flops_per_element, element_bytes > 0 ? element_bytes : e_));
}

void KernelBuilder::chain(Phase phase, double elements, const std::vector<double>& bytes_per_element) {
  for (double bytes : bytes_per_element) stream(KernelClass::Elementwise, phase, elements, bytes / e_, 1);
}

void KernelBuilder::recurrent(Phase phase, double steps, double m, double n, double k, double gate_elements) {
  push(recurrent_kernel(phase, steps, m, n, k, gate_elements, e_));
}

void KernelBuilder::push(Kernel kn) {
  kn.layer = layer_;
  kn.part = part_;
  LayerWork& lw = work_.layers[static_cast<std::size_t>(layer_)];
  auto p = static_cast<std::size_t>(kn.phase);
  lw.flops[p] += kn.flops;
  lw.bytes[p] += kn.bytes;
  lw.kernels += 1;
  work_.flops[p] += kn.flops;
  work_.kernels.push_back(kn);
}

std::int64_t split_evenly(std::int64_t v, std::int64_t t, const Layer& layer, const std::string& what) {
  if (v % t != 0) {
    throw InputError("parallel.tensor", "tensor degree " + std::to_string(t) + " does not divide the " +
                                            std::to_string(v) + " " + what + " of layer \"" + printable(layer.name) +
                                            "\"");
  }
  return v / t;
}

void shard_as_mixer(ShardStep& s) {
  const Layer& L = s.shard.net.layers[s.l];
  ShardLayer& sl = s.shard.layers[s.l];
  sl.forward_allreduces = 1;
  sl.backward_allreduces = L.needs_input_grad ? 1 : 0;
  sl.allreduce_bytes_per_sample = static_cast<double>(elements(L.output_shape));
  s.roles[s.l] = kGathersInput | kScattersOutput;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::vector<std::string> common_keys(std::vector<std::string> extra) {
  extra.insert(extra.end(), {"type", "name", "inputs", "comment"});
  return extra;
}

std::int64_t element_int(const Json& array, std::size_t i, const std::string& path, std::int64_t min) {
  Json holder = {{"v", array[i]}};
  try {
    return require_int(holder, "v", "", min, Limits::kMaxDim);
  } catch (const InputError& e) {
    std::string message = e.what();
    throw InputError(index(path, i), message.substr(message.find(": ") + 2));
  }
}

std::pair<std::int64_t, std::int64_t> get_pair(const Json& obj, const std::string& key, const std::string& path,
                                               std::int64_t fallback, std::int64_t min) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {fallback, fallback};
  if (it->is_array()) {
    if (it->size() != 2) throw InputError(join(path, key), "expected an integer or a pair [height, width]");
    return {element_int(*it, 0, join(path, key), min), element_int(*it, 1, join(path, key), min)};
  }
  std::int64_t v = get_int(obj, key, path, fallback, min, Limits::kMaxDim);
  return {v, v};
}

std::tuple<std::int64_t, std::int64_t, bool> get_padding(const Json& obj, const std::string& path) {
  auto it = obj.find("padding");
  if (it == obj.end() || it->is_null()) return {0, 0, false};
  if (it->is_string()) {
    std::string p = it->get<std::string>();
    if (p == "valid") return {0, 0, false};
    if (p == "same") return {0, 0, true};
    throw InputError(join(path, "padding"), "expected \"valid\", \"same\" or an integer, got \"" + p + "\"");
  }
  auto [h, w] = get_pair(obj, "padding", path, 0, 0);
  return {h, w, false};
}

std::int64_t conv_out(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t pad, bool same,
                      const std::string& path, const Shape& in_shape) {
  if (same) return (in + stride - 1) / stride;
  std::int64_t span = in + 2 * pad - kernel;
  if (span < 0) {
    throw InputError(path,
                     "kernel " + std::to_string(kernel) + " is larger than the padded input " + to_string(in_shape));
  }
  return span / stride + 1;
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const std::string& path) {
  if (a != 0 && b > Limits::kMaxElementsPerSample / a) {
    throw InputError(path, "tensor is too large (more than 2^40 elements per sample)");
  }
  return a * b;
}

std::int64_t params_of(std::initializer_list<std::int64_t> factors, const std::string& path) {
  constexpr std::int64_t kMaxParameters = std::int64_t{1} << 50;
  std::int64_t p = 1;
  for (auto f : factors) {
    if (f != 0 && p > kMaxParameters / f) {
      throw InputError(path, "has more than 2^50 parameters; check the layer's sizes");
    }
    p *= f;
  }
  return p;
}

const Json& shape_entry(const Json& spec, const std::string& path) {
  if (!spec.contains("shape")) throw InputError(join(path, "shape"), "required array is missing");
  const Json& shape = require_array(spec["shape"], join(path, "shape"));
  if (shape.empty() || shape.size() > 8) throw InputError(join(path, "shape"), "expected 1 to 8 dimensions");
  return shape;
}

void require_rank(const Shape& s, std::size_t rank, const std::string& path, const char* what) {
  if (s.size() != rank) throw InputError(path, std::string(what) + ", got an input of shape " + to_string(s));
}

std::int64_t last_dim(const Layer& layer, const std::string& path) {
  const Shape& in = layer.input_shapes.front();
  if (in.empty()) throw InputError(path, std::string(to_string(layer.type)) + " needs a non-scalar input");
  return in.back();
}

double rows(const Shape& in, double batch) {
  double r = batch;
  for (std::size_t i = 0; i + 1 < in.size(); ++i) r *= d(in[i]);
  return r;
}

}  // namespace prenet
