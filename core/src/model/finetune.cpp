#include "model/finetune.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "layers/layer_kind.hpp"
#include "prenet/error.hpp"

namespace prenet {
namespace {

const char* const kTargets = "training.finetune.targets";

/// A family's own module names, as PEFT users write them, and the Llama roles they stand for; `fused`: one
/// matrix holds them all (GPT-2's c_attn is Q, K and V in one Conv1D), so one adapter spans them.
struct Alias {
  const char* name;
  std::vector<std::string> roles;
  bool fused;
};

const std::vector<Alias>& aliases() {
  static const std::vector<Alias> table = {
      {"c_attn", {"q_proj", "k_proj", "v_proj"}, true},           // GPT-2, GPT-BigCode
      {"query_key_value", {"q_proj", "k_proj", "v_proj"}, true},  // Falcon, BLOOM, GPT-NeoX
      {"qkv_proj", {"q_proj", "k_proj", "v_proj"}, true},         // Phi-3
      {"Wqkv", {"q_proj", "k_proj", "v_proj"}, true},             // MPT, DBRX
      {"wqkv", {"q_proj", "k_proj", "v_proj"}, true},             // InternLM2
      {"gate_up_proj", {"gate_proj", "up_proj"}, true},           // Phi-3
      {"query", {"q_proj"}, false},                               // BERT, ViT
      {"key", {"k_proj"}, false},
      {"value", {"v_proj"}, false},
      {"q", {"q_proj"}, false},  // T5
      {"k", {"k_proj"}, false},
      {"v", {"v_proj"}, false},
      {"o", {"o_proj"}, false},
      {"dense", {"o_proj"}, false},                 // Phi, GPT-NeoX, Falcon: the attention output
      {"out_proj", {"o_proj", "out_proj"}, false},  // OPT, CLIP, Whisper; Mamba's out_proj
      {"c_proj", {"o_proj", "down_proj"}, false},   // GPT-2: both the attention output and the MLP's second
      {"c_fc", {"up_proj"}, false},
      {"fc1", {"up_proj"}, false},
      {"fc2", {"down_proj"}, false},
      {"dense_h_to_4h", {"up_proj"}, false},
      {"dense_4h_to_h", {"down_proj"}, false},
      {"w1", {"gate_proj"}, false},  // Mixtral's experts
      {"w3", {"up_proj"}, false},
      {"w2", {"down_proj"}, false},
      {"wo", {"o_proj"}, false},
  };
  return table;
}

/// Per layer, the consumers of its output.
std::vector<std::vector<std::size_t>> consumers_of(const Network& net) {
  std::vector<std::vector<std::size_t>> out(net.layers.size());
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    for (int p : net.layers[l].inputs) {
      if (p >= 0) out[static_cast<std::size_t>(p)].push_back(l);
    }
  }
  return out;
}

/// The role of an ungated dense layer from its place: before a loss the head, an MLP's first matrix (its
/// output reaches, through elementwise layers, a dense layer mapping back to its input width) up_proj and
/// that one down_proj; else the last part of its name.
std::vector<std::string> dense_roles(const Network& net) {
  const auto consumers = consumers_of(net);
  std::vector<std::string> roles(net.layers.size());
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const Layer& layer = net.layers[l];
    if (layer.type != LayerType::Dense) continue;
    if (!roles[l].empty()) continue;
    const auto& c = consumers[l];
    if (c.size() == 1 &&
        (net.layers[c[0]].type == LayerType::CrossEntropy || net.layers[c[0]].type == LayerType::AdaptiveSoftmax)) {
      roles[l] = "lm_head";
      continue;
    }
    std::size_t cur = l;
    while (consumers[cur].size() == 1) {
      const std::size_t next = consumers[cur][0];
      const Layer& nl = net.layers[next];
      if (nl.type == LayerType::Dense) {
        if (nl.attrs.units == layer.input_shapes.front().back()) {
          if (!layer.attrs.gated) roles[l] = "up_proj";
          roles[next] = "down_proj";
        }
        break;
      }
      if (!kind_of(nl.type).passthrough() || nl.inputs.size() != 1) break;
      cur = next;
    }
    if (roles[l].empty() && !layer.attrs.gated) {
      const auto dot = layer.name.rfind('.');
      roles[l] = dot == std::string::npos ? layer.name : layer.name.substr(dot + 1);
    }
  }
  return roles;
}

/// Per layer, its matrices with every role decided.
std::vector<std::vector<LinearModule>> modules_of(const Network& net) {
  const std::vector<std::string> dense = dense_roles(net);
  std::vector<std::vector<LinearModule>> out(net.layers.size());
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    out[l] = kind_of(net.layers[l].type).linear_modules(net.layers[l]);
    for (LinearModule& m : out[l]) {
      if (m.role.empty()) m.role = dense[l];
    }
  }
  return out;
}

/// "a, b or c" of the roles present.
std::string role_list(const std::set<std::string>& roles) {
  std::string list;
  std::size_t i = 0;
  for (const std::string& r : roles) {
    list += (i == 0 ? "" : i + 1 == roles.size() ? " or " : ", ") + r;
    ++i;
  }
  return list;
}

/// One requested target: the roles it adapts and whether one adapter spans them.
struct Target {
  std::set<std::string> roles;
  bool fused = false;
};

/// The requested targets as roles; errors name the entry that matches no module of the model.
std::vector<Target> resolve_targets(const std::vector<std::string>& names, const std::set<std::string>& present) {
  std::vector<Target> targets;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    const std::string field = names.size() == 1 ? kTargets : std::string(kTargets) + "[" + std::to_string(i) + "]";
    Target t;
    if (name == "all-linear") {
      if (names.size() > 1) throw InputError(field, "all-linear stands alone, not in a list of modules");
      for (const std::string& r : present) {
        if (r != "lm_head") t.roles.insert(r);
      }
    } else if (present.count(name) > 0) {
      t.roles.insert(name);
    } else {
      for (const Alias& a : aliases()) {
        if (name != a.name) continue;
        for (const std::string& r : a.roles) {
          if (present.count(r) > 0) t.roles.insert(r);
        }
        t.fused = a.fused;
      }
    }
    if (t.roles.empty()) {
      throw InputError(field, "\"" + name + "\" matches no module of this model; its modules are " +
                                  role_list(present) + " (or all-linear)");
    }
    targets.push_back(t);
  }
  return targets;
}

/// The adapters a layer's matrices get: the targeted ones, a fused target's matrices that read the same input
/// in one module.
std::vector<LinearModule> adapted_modules(const std::vector<LinearModule>& modules,
                                          const std::vector<Target>& targets) {
  std::vector<LinearModule> adapted;
  std::vector<bool> taken(modules.size(), false);
  for (const Target& t : targets) {
    LinearModule merged;
    for (std::size_t i = 0; i < modules.size(); ++i) {
      if (taken[i] || t.roles.count(modules[i].role) == 0) continue;
      const LinearModule& m = modules[i];
      const bool joins = t.fused && merged.out > 0 && merged.in == m.in && merged.input_group == m.input_group &&
                         merged.rows_per_sample == m.rows_per_sample && merged.copies == m.copies;
      taken[i] = true;
      if (joins) {
        merged.out += m.out;
        merged.role += "+" + m.role;
        continue;
      }
      if (merged.out > 0) adapted.push_back(merged);
      merged = m;
    }
    if (merged.out > 0) adapted.push_back(merged);
  }
  return adapted;
}

/// Bytes a frozen weight takes outside the quantized matrices: the base's floats, or for a quantized base the
/// training precision's (norms, embeddings, biases and the head stay unquantized, as bitsandbytes leaves them).
double unquantized_bytes(BasePrecision base, Precision precision) {
  switch (base) {
    case BasePrecision::FP32: return 4;
    case BasePrecision::BF16:
    case BasePrecision::FP16: return 2;
    case BasePrecision::INT8:
    case BasePrecision::NF4: return is_mixed(precision) ? 2 : 4;
  }
  return 4;
}

/// The base the request stores frozen weights in; errors name base_precision where it does not fit.
BasePrecision base_of(const TrainingConfig& training) {
  const Finetune& ft = training.finetune;
  const std::string field = "training.finetune.base_precision";
  if (ft.method == FinetuneMethod::Qlora) {
    if (ft.base_precision && *ft.base_precision != BasePrecision::NF4) {
      throw InputError(field, "qlora trains over a 4-bit nf4 base; use method lora for another base");
    }
    return BasePrecision::NF4;
  }
  if (!ft.base_precision) return is_mixed(training.precision) ? BasePrecision::BF16 : BasePrecision::FP32;
  const BasePrecision b = *ft.base_precision;
  if ((b == BasePrecision::BF16 || b == BasePrecision::FP16) && !is_mixed(training.precision)) {
    throw InputError(field, "16-bit frozen weights need 16-bit training (training.precision bf16 or fp16)");
  }
  return b;
}

/// Sets a frozen layer's weight bytes for `base` from its matrices (`modules`).
void freeze(Layer& layer, const std::vector<LinearModule>& modules, BasePrecision base, Precision precision) {
  layer.trainable = false;
  if (layer.parameters <= 0) return;
  const double params = static_cast<double>(layer.parameters);
  const double plain = unquantized_bytes(base, precision);
  double quantized = 0, quantized_bytes = 0;
  const bool tied = !layer.attrs.tied_to.empty();
  if ((base == BasePrecision::NF4 || base == BasePrecision::INT8) && !tied) {
    for (const LinearModule& m : modules) {
      if (m.role == "lm_head") continue;  // transformers keeps the output layer unquantized
      const double w = m.in * m.out * m.copies;
      quantized += w;
      quantized_bytes += w * quantized_weight_bytes(base, m.in);
    }
  }
  quantized = std::min(quantized, params);
  layer.quantized_bytes = quantized > 0 ? quantized_bytes / quantized : 0;
  layer.frozen_bytes_per_parameter = (quantized * layer.quantized_bytes + (params - quantized) * plain) / params;
}

/// Warns, once per layer kind and matrix, of adapters that would not run in Hugging Face's training path (their
/// kind's adapter_bypass): they are costed as if they ran, and PEFT trains nothing there.
void note_bypassed_adapters(Network& net) {
  std::set<std::string> said;
  for (const Layer& layer : net.layers) {
    for (const LinearModule& m : layer.adapter.modules) {
      const std::string why = kind_of(layer.type).adapter_bypass(layer, m.role);
      if (why.empty() || !said.insert(m.role).second) continue;
      net.warnings.push_back("training.finetune.targets: the adapters on " + m.role + " (layer \"" +
                             printable(layer.name) + "\" and its like) would not run: " + why +
                             ", so PEFT's adapter is never called and trains nothing; they are costed as if they ran. "
                             "Leave " +
                             m.role + " out of the targets (TII's Falcon-H1 fine-tuning guide does)");
    }
  }
}

/// Adds LoRA adapters of `ft` to every layer's targeted matrices and freezes every layer's own weights.
void add_adapters(Network& net, const Finetune& ft, BasePrecision base, Precision precision) {
  const auto modules = modules_of(net);
  std::set<std::string> present;
  for (const auto& list : modules) {
    for (const LinearModule& m : list) present.insert(m.role);
  }
  const std::vector<Target> targets = resolve_targets(ft.targets, present);
  const bool all_linear = ft.targets.size() == 1 && ft.targets[0] == "all-linear";
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    Layer& layer = net.layers[l];
    freeze(layer, modules[l], base, precision);
    std::vector<LinearModule> adapted = adapted_modules(modules[l], targets);
    if (adapted.empty()) continue;
    LoraAdapter& a = layer.adapter;
    a.rank = ft.rank;
    a.dropout = ft.dropout;
    for (const LinearModule& m : adapted) {
      if (static_cast<double>(ft.rank) > std::min(m.in, m.out)) {
        throw InputError("training.finetune.rank",
                         std::to_string(ft.rank) + " exceeds the width of " + layer.name + "'s " + m.role + " (" +
                             std::to_string(static_cast<std::int64_t>(m.in)) + " x " +
                             std::to_string(static_cast<std::int64_t>(m.out)) + ")" +
                             (all_linear ? "; all-linear adapts it: list the targets to leave it out" : ""));
      }
      a.parameters += ft.rank * static_cast<std::int64_t>(m.in + m.out) * static_cast<std::int64_t>(m.copies);
    }
    a.modules = std::move(adapted);
  }
  note_bypassed_adapters(net);
}

/// Freezes every layer before the top `n` blocks (the blocks themselves and what follows them train; with n 0
/// only what follows the last block, as a linear probe).
void freeze_below(Network& net, std::int64_t n, BasePrecision base, Precision precision) {
  const std::vector<int> blocks = block_of_layers(net);
  const int count = blocks.empty() ? 0 : *std::max_element(blocks.begin(), blocks.end()) + 1;
  const std::string field = "training.finetune.trainable_layers";
  if (count == 0) throw InputError(field, "the model has no repeated blocks to count from");
  if (n > count) {
    throw InputError(field, std::to_string(n) + " is more than the model's " + std::to_string(count) + " blocks");
  }
  const int first = count - static_cast<int>(n);
  std::size_t first_trained = 0;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    if (n > 0 && blocks[l] == first) {
      first_trained = l;
      break;
    }
    if (n == 0 && blocks[l] >= 0) first_trained = l + 1;
  }
  const auto modules = modules_of(net);
  for (std::size_t l = 0; l < first_trained; ++l) freeze(net.layers[l], modules[l], base, precision);
}

/// training.finetune.frozen_gradients: FSDP1 flattens each wrapped unit's weights into one flat parameter, which
/// requires a gradient when any of them trains (use_orig_params=True allows the mix; FSDP's docstring: the gradient
/// memory is then "equivalent to not freezing those parameters"). Units are the repeated blocks (the usual
/// auto-wrap policy, one per transformer block) and the layers outside blocks together (the root unit): every
/// frozen layer with weights in a unit that trains something gets gradients.
void mark_frozen_gradients(Network& net) {
  const std::vector<int> blocks = block_of_layers(net);
  std::set<int> training_units;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    if (trainable_parameters(net.layers[l]) > 0) training_units.insert(blocks[l]);
  }
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    Layer& layer = net.layers[l];
    // A tied head's matrix is its embedding's: it computes that weight's gradient when the embedding gets one.
    const bool weights = layer.parameters > 0 || !layer.attrs.tied_to.empty();
    if (!layer.trainable && weights && training_units.count(blocks[l]) > 0) layer.frozen_gradient = true;
  }
}

/// Which layers need their input's gradient: those with something trained upstream of them.
void mark_input_gradients(Network& net) {
  std::vector<bool> trains_upstream(net.layers.size(), false);
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    Layer& layer = net.layers[l];
    bool upstream = false;
    for (int p : layer.inputs) {
      if (p >= 0) upstream = upstream || trains_upstream[static_cast<std::size_t>(p)];
    }
    layer.needs_input_grad = upstream;
    const bool own = own_weight_gradients(layer) && (layer.parameters > 0 || !layer.attrs.tied_to.empty());
    trains_upstream[l] = upstream || own || layer.adapter.rank > 0;
  }
}

/// Rejects fields the method does not read.
void check_fields(const Finetune& ft) {
  if (ft.method != FinetuneMethod::Freeze && ft.trainable_layers) {
    throw InputError("training.finetune.trainable_layers", "only for method freeze (the top N blocks train)");
  }
  if (ft.method == FinetuneMethod::Freeze && !ft.trainable_layers) {
    throw InputError("training.finetune.trainable_layers", "required with method freeze (how many top blocks train)");
  }
  if (ft.method == FinetuneMethod::Full && ft.base_precision) {
    throw InputError("training.finetune.base_precision", "only for frozen weights (methods lora, qlora, freeze)");
  }
  if (ft.method == FinetuneMethod::Full && ft.frozen_gradients) {
    throw InputError("training.finetune.frozen_gradients", "only for frozen weights (methods lora, freeze)");
  }
}

/// Refuses frozen_gradients over a quantized base: bitsandbytes' packed weights take no gradient (MatMul4Bit and
/// the 8-bit matmul return none for them), and what a flat parameter of packed storage would hold is not modelled.
void check_frozen_gradients(const Finetune& ft, BasePrecision base) {
  if (!ft.frozen_gradients || (base != BasePrecision::NF4 && base != BasePrecision::INT8)) return;
  throw InputError("training.finetune.frozen_gradients",
                   std::string("gradients of a quantized base (") + (base == BasePrecision::NF4 ? "nf4" : "int8") +
                       ") are not modelled; use an unquantized base_precision or leave frozen_gradients out");
}

}  // namespace

double quantized_weight_bytes(BasePrecision base, double in) {
  if (base == BasePrecision::NF4) return 0.5 + 1.0 / 64 + 4.0 / (64 * 256);
  if (base == BasePrecision::INT8) return 1.0 + 4.0 / in;
  return 0;
}

void apply_finetune(Network& net, const TrainingConfig& training) {
  const Finetune& ft = training.finetune;
  check_fields(ft);
  if (ft.method == FinetuneMethod::Full) return;
  const BasePrecision base = base_of(training);
  check_frozen_gradients(ft, base);
  if (ft.adapters()) {
    add_adapters(net, ft, base, training.precision);
  } else {
    freeze_below(net, *ft.trainable_layers, base, training.precision);
  }
  if (ft.frozen_gradients) mark_frozen_gradients(net);
  mark_input_gradients(net);
  if (base == BasePrecision::INT8) {
    net.warnings.push_back(
        "training.finetune.base_precision int8: timed as dequantizing each frozen matrix to 16 bits before its "
        "GEMM; LLM.int8's int8 matrix multiply and outlier decomposition are not modelled");
  }
}

}  // namespace prenet
