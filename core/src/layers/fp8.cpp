// FP8 training recipes (training.fp8_recipe), as NVIDIA Transformer Engine (TE) runs them under fp8_autocast, the
// way Megatron-Core and NeMo train in FP8. Sources (read for this file):
// - TE transformer_engine/common/recipe/__init__.py: DelayedScaling (per-tensor scale from an amax history of
//   1024 steps), Float8CurrentScaling (per-tensor, this tensor's amax), MXFP8BlockScaling ("each group of 32
//   consecutive values is scaled together", E8M0 scales), Float8BlockScaling (x and grad 1-D blocks, weights 2-D
//   blocks, FP32 scales; "both versions are computed from the high precision input"), NVFP4BlockScaling.
// - TE transformer_engine/pytorch/module/linear.py: the input is quantized rowwise and columnwise when backward
//   needs it and only the column-wise copy is saved ("Discard row-wise data since it is not needed in backward
//   pass"); the weight is quantized rowwise + columnwise into a workspace that is cached while
//   is_first_microbatch is False; the output gradient rowwise (dgrad) and columnwise (wgrad).
// - TE transformer_engine/pytorch/utils.py: is_non_tn_fp8_gemm_supported() (compute capability 10.x or 13+:
//   FP8 GEMMs in any layout, so a per-tensor FP8 tensor needs no transposed copy); assert_dim_for_fp8_exec (the
//   last dimension a multiple of 16, the product of the others a multiple of 8).
// - TE transformer_engine/pytorch/quantization.py: MXFP8 needs compute capability 10.x ("not supported on 12.0+
//   architectures yet"), FP8 block scaling 9.0 or later.
// - Megatron-Core megatron/core/extensions/transformer_engine.py: TELinear / TEGroupedLinear pass
//   is_first_microbatch, so FP8 weights are cast once per step and cached across micro-batches.
// - DeepSeek-V3 technical report (arXiv 2412.19437) Sec. 3.3: 1x128 activation tiles, 128x128 weight blocks;
//   embedding, output head, MoE gating, normalization and attention operators stay in BF16/FP32.
#include "layers/fp8.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "prenet/error.hpp"
#include "prenet/json_util.hpp"

namespace prenet {
namespace {

/// True for a data-centre Blackwell part (compute capability 10.x: B200, B300, GB200, GB300); the GB20x chips of
/// the RTX 50 and RTX PRO cards are compute capability 12.0.
bool datacenter_blackwell(const Accelerator& acc) {
  if (!acc.record.is_object() || acc.record.value("vendor", "") != "nvidia") return false;
  const std::string chip = acc.record.value("chip", "");
  return acc.record.value("architecture", "") == "blackwell" && chip.rfind("GB2", 0) != 0;
}

/// True for NVIDIA Hopper or Blackwell (compute capability 9.0 or later).
bool hopper_or_later(const Accelerator& acc) {
  if (!acc.record.is_object() || acc.record.value("vendor", "") != "nvidia") return false;
  const std::string arch = acc.record.value("architecture", "");
  return arch == "hopper" || arch == "blackwell";
}

/// The last path component of a layer name ("router" of "model.layers.3.mlp.router").
std::string leaf_name(const std::string& name) {
  const auto dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

/// Whether TE's assert_dim_for_fp8_exec accepts every matrix of the layer (in % 16, out % 8).
bool fp8_widths(const Layer& layer) {
  const auto modules = kind_of(layer.type).linear_modules(layer);
  if (modules.empty()) return false;
  for (const LinearModule& m : modules) {
    if (std::fmod(m.in, 16.0) != 0 || std::fmod(m.out, 8.0) != 0) return false;
  }
  return true;
}

/// Whether the layer kind has linear projections TE would run as te.Linear / te.GroupedLinear. Megatron-Core's
/// Mamba-2 mixer (mamba_mixer.py) builds its in_proj and out_proj as TE linears; its SSD scan is no linear (a
/// batched GEMM here, left 16-bit), and Mamba-1's x_proj / dt_proj have no TE counterpart (Megatron has no Mamba-1).
/// Its GatedDeltaNet (gated_delta_net.py) likewise: in_proj and out_proj TE linears, the delta rule 16-bit.
bool linear_kind(const Layer& layer) {
  switch (layer.type) {
    case LayerType::Dense: return true;
    case LayerType::Attention: return !layer.attrs.relative && layer.attrs.disentangled == 0;
    case LayerType::Mla: return true;
    case LayerType::Mamba: return layer.attrs.ssm_version == 2;
    case LayerType::GatedDeltaNet: return true;
    default: return false;
  }
}

/// Whether kernel `k` of a layer of type `type` is one of its linear GEMMs: every GEMM of a dense layer (its
/// experts' grouped GEMMs too), only the unbatched ones of attention and MLA (QK^T and PV are batched over heads).
bool linear_gemm(LayerType type, const Kernel& k) {
  if (k.cls == KernelClass::Gemm) return true;
  return type == LayerType::Dense && k.cls == KernelClass::BatchedGemm;
}

/// Re-prices an FP8 GEMM: operands read in the recipe's format (`data` bytes per element; NVFP4's half a byte makes
/// it an FP4 GEMM), the result written in 16-bit (e).
void mark_fp8(Kernel& k, double data, double e, LayerWork& lw) {
  const double b = std::max(k.batch, 1.0);
  const double bytes = (data * (k.m * k.k + k.k * k.n) + e * k.m * k.n) * b;
  lw.bytes[static_cast<std::size_t>(k.phase)] += bytes - k.bytes;
  k.bytes = bytes;
  k.fp8 = true;
  k.fp4 = data < 1;
}

/// One quantizing pass over `elements` 16-bit values writing `copies` FP8 copies with `scale` bytes of scales per
/// element each; preceded by an amax pass (one more read) where the recipe has one.
void add_cast(KernelBuilder& kb, Phase phase, double elements, double copies, double scale, const Fp8Format& f,
              double e) {
  if (elements <= 0 || copies <= 0) return;
  if (f.amax_pass) kb.stream(KernelClass::Elementwise, phase, elements, e, 1, 1.0);  // amax: read once
  // Read the 16-bit tensor, write its copies; amax and scale multiply per element (fused into the cast).
  kb.stream(KernelClass::Elementwise, phase, elements, e + copies * (f.data + scale), 2, 1.0);
}

}  // namespace

Fp8Format fp8_format(Fp8Recipe recipe, bool any_layout) {
  Fp8Format f;
  switch (recipe) {
    case Fp8Recipe::Delayed:  // per-tensor FP32 scale: nothing per element; transposes only on TN-only parts
      f.columnwise = !any_layout;
      break;
    case Fp8Recipe::Current:  // per-tensor, from this tensor's amax: a pass of its own first
      f.columnwise = !any_layout;
      f.amax_pass = true;
      break;
    case Fp8Recipe::MXFP8:  // one E8M0 byte per 32 values, rowwise and columnwise blocks differ
      f.act_scale = f.weight_scale = 1.0 / 32.0;
      break;
    case Fp8Recipe::Blockwise:  // FP32 scales per 1x128 tile (activations, gradients) and 128x128 block (weights)
      f.act_scale = 4.0 / 128.0;
      f.weight_scale = 4.0 / (128.0 * 128.0);
      break;
    case Fp8Recipe::NVFP4:  // E2M1 with an E4M3 scale per 16 values (weights: per 16x16 block) and an FP32 tensor
      // scale from the tensor's amax; the random Hadamard transform of wgrad's inputs and the stochastic rounding of
      // gradients run inside the cast kernel (TE's fused Hadamard-cast): no pass of their own.
      f.data = 0.5;
      f.act_scale = 1.0 / 16.0;
      f.weight_scale = 1.0 / 256.0;
      f.amax_pass = true;
      break;
  }
  return f;
}

std::vector<bool> fp8_linear_layers(const Network& net) {
  const std::size_t n = net.layers.size();
  std::vector<bool> head(n, false);
  for (const Layer& layer : net.layers) {
    if (layer.type != LayerType::CrossEntropy) continue;
    for (int producer : layer.inputs) {
      if (producer >= 0 && static_cast<std::size_t>(producer) < n) head[static_cast<std::size_t>(producer)] = true;
    }
  }
  const std::vector<int> blocks = block_of_layers(net);
  bool any_block = false;
  for (int b : blocks) any_block = any_block || b >= 0;
  std::vector<bool> out(n, false);
  for (std::size_t l = 0; l < n; ++l) {
    const Layer& layer = net.layers[l];
    // Megatron's router is a plain torch linear in FP32 (moe_router_dtype), DeepSeek-V3 keeps its gating in BF16.
    out[l] = linear_kind(layer) && !head[l] && (blocks[l] >= 0 || !any_block) && leaf_name(layer.name) != "router" &&
             layer.attrs.tied_to.empty() && layer.adapter.rank == 0 && !layer.keeps_16bit && fp8_widths(layer);
  }
  return out;
}

void apply_bf16_layers(Network& net, const TrainingConfig& training) {
  const std::int64_t start = training.bf16_layers_at_start, end = training.bf16_layers_at_end;
  if (start == 0 && end == 0) return;
  const char* field = start > 0 ? "training.bf16_layers_at_start" : "training.bf16_layers_at_end";
  if (training.precision != Precision::FP8) {
    throw InputError(field, "keeps blocks out of FP8: it needs precision fp8");
  }
  // The main network's blocks, in order (multi-token prediction's modules are blocks of their own, not counted).
  const std::vector<int> blocks = block_of_layers(net);
  std::vector<int> order;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const int b = blocks[l];
    if (b >= 0 && net.layers[l].mtp_depth == 0 && (order.empty() || order.back() != b)) order.push_back(b);
  }
  const auto count = static_cast<std::int64_t>(order.size());
  if (start + end > count) {
    throw InputError(field, std::to_string(start) + " + " + std::to_string(end) +
                                " blocks kept 16-bit, but the model has " + std::to_string(count) + " decoder blocks");
  }
  const int first_kept_at_end = end > 0 ? order[static_cast<std::size_t>(count - end)] : -1;
  const int last_kept_at_start = start > 0 ? order[static_cast<std::size_t>(start - 1)] : -1;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const int b = blocks[l];
    if (b < 0 || net.layers[l].mtp_depth != 0) continue;
    if (b <= last_kept_at_start || (first_kept_at_end >= 0 && b >= first_kept_at_end)) net.layers[l].keeps_16bit = true;
  }
}

bool glob_matches(const std::string& pattern, const std::string& name) {
  std::size_t p = 0, n = 0, star = std::string::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (star != std::string::npos) {
      // The last star absorbs one more character; earlier stars never need to (greedy matching of globs).
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

/// A layer name to show in an error: the first with a dot (a block's, as "layers.0.norm"), else the first.
std::string example_layer_name(const Network& net) {
  for (const Layer& layer : net.layers) {
    if (layer.name.find('.') != std::string::npos) return layer.name;
  }
  return net.layers.empty() ? std::string() : net.layers.front().name;
}

}  // namespace

void apply_bf16_modules(Network& net, const TrainingConfig& training) {
  const std::vector<std::string>& patterns = training.bf16_modules;
  if (patterns.empty()) return;
  if (training.precision != Precision::FP8) {
    throw InputError("training.bf16_modules", "keeps layers out of FP8: it needs precision fp8");
  }
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    bool matched = false;
    for (Layer& layer : net.layers) {
      if (!glob_matches(patterns[i], layer.name)) continue;
      layer.keeps_16bit = true;
      matched = true;
    }
    if (!matched) {
      const std::string field =
          patterns.size() == 1 ? "training.bf16_modules" : "training.bf16_modules[" + std::to_string(i) + "]";
      throw InputError(field, "\"" + printable(patterns[i]) +
                                  "\" matches no layer of the model; the names are those of the per-layer table "
                                  "(for example \"" +
                                  printable(example_layer_name(net)) +
                                  "\"), '*' matching any run of characters and '?' one");
    }
  }
}

void add_fp8_kernels(const Layer& layer, const KernelContext& context, bool optimizer, std::size_t first,
                     StepWork& work, LayerWork& lw, KernelBuilder& kb) {
  const Fp8Format f = fp8_format(context.fp8_recipe, context.fp8_any_layout);
  const double e = activation_bytes(context.precision);
  const bool wgrad = own_weight_gradients(layer), backward = wgrad || layer.needs_input_grad;
  // Copies per tensor: the input rowwise (fprop) and columnwise (wgrad); the weight rowwise and columnwise (dgrad);
  // the output gradient rowwise (dgrad) and columnwise (wgrad). One copy serves both where no columnwise is kept.
  const double x_copies = f.columnwise && wgrad ? 2 : 1, w_copies = f.columnwise ? 2 : 1;
  const double dy_copies = !backward ? 0 : f.columnwise && wgrad ? 2 : 1;
  const double saved_fp8 = f.data + f.act_scale;  // the column-wise input copy TE saves for wgrad
  const bool flash = fused_attention(context.attention);
  const std::size_t last = work.kernels.size();
  std::vector<Kernel> forward;
  for (std::size_t i = first; i < last; ++i) {
    Kernel& k = work.kernels[i];
    if (!linear_gemm(layer.type, k)) continue;
    mark_fp8(k, f.data, e, lw);
    if (k.phase == Phase::Forward) forward.push_back(k);
  }
  const Phase weight_phase = optimizer ? Phase::Optimizer : Phase::Forward;
  for (std::size_t g = 0; g < forward.size(); ++g) {
    const Kernel& k = forward[g];
    const double b = std::max(k.batch, 1.0);
    const double x = k.m * k.k * b, w = k.k * k.n * b, y = k.m * k.n * b;
    kb.set_part(k.part);  // the input's cast belongs to the part of the layer its GEMM does
    add_cast(kb, Phase::Forward, x, x_copies, f.act_scale, f, e);
    kb.set_part(KernelPart::Other);
    add_cast(kb, weight_phase, w, w_copies, f.weight_scale, f, e);
    add_cast(kb, Phase::Backward, y, dy_copies, f.act_scale, f, e);
    if (!wgrad || layer.type == LayerType::Mla) continue;
    // The input saved for the weight gradient is TE's FP8 column-wise copy instead of the 16-bit tensor. Under a
    // fused attention kernel the output projection's input is the core's output, which its backward reads in
    // 16-bit anyway: the FP8 copy comes beside it. (MLA's inputs are shared by its projections and its norms:
    // left as the kind counts them.)
    const bool out_proj = layer.type == LayerType::Attention && g + 1 == forward.size();
    const double change = out_proj && flash ? saved_fp8 * x : (saved_fp8 - e) * x;
    lw.saved_activation_bytes += change;
    // The layer's first input (every GEMM of a dense layer, attention's first projection) is kept in FP8 too.
    const bool reads_input = layer.type == LayerType::Dense || g == 0;
    if (reads_input && lw.saved_input_bytes > 0) lw.saved_input_bytes += change;
  }
}

double fp8_weight_elements(const Layer& layer) {
  double elements = 0;
  for (const LinearModule& m : kind_of(layer.type).linear_modules(layer)) elements += m.in * m.out * m.copies;
  return elements;
}

double fp8_weight_bytes_per_element(const TrainingConfig& training) {
  if (training.precision != Precision::FP8) return 0;
  const Fp8Format f = fp8_format(training.fp8_recipe.value_or(Fp8Recipe::Delayed), training.fp8_any_layout);
  return (f.columnwise ? 2 : 1) * (f.data + f.weight_scale);
}

void resolve_fp8_recipe(TrainingConfig& training, const std::vector<Accelerator>& hardware) {
  const char* field = "training.fp8_recipe";
  if (training.fp8_recipe && training.precision != Precision::FP8) {
    throw InputError(field,
                     std::string("applies to precision fp8 only; the precision is ") + to_string(training.precision));
  }
  if (training.precision != Precision::FP8) return;
  const Fp8Recipe recipe = training.fp8_recipe.value_or(Fp8Recipe::Delayed);
  bool any_layout = !hardware.empty();
  for (const Accelerator& acc : hardware) {
    const std::string who = acc.name + " (" + acc.id + ")";
    if (recipe == Fp8Recipe::NVFP4 && (!datacenter_blackwell(acc) || !acc.fp4_peak_tflops)) {
      throw InputError(field,
                       "nvfp4 needs a data-centre Blackwell GPU with an FP4 tensor-core peak in the catalogue (B200, "
                       "B300, GB200, GB300: compute capability 10.x, Transformer Engine's NVFP4BlockScaling); " +
                           who + " is not one; choose delayed, current, mxfp8 or blockwise");
    }
    if (recipe == Fp8Recipe::MXFP8 && !datacenter_blackwell(acc)) {
      throw InputError(field,
                       "mxfp8 needs a data-centre Blackwell GPU (B200, B300, GB200, GB300: compute "
                       "capability 10.x, Transformer Engine's check_mxfp8_support); " +
                           who + " is not one");
    }
    if (recipe == Fp8Recipe::Blockwise && !hopper_or_later(acc)) {
      throw InputError(field,
                       "blockwise needs an NVIDIA Hopper or Blackwell GPU (compute capability 9.0 or later, "
                       "Transformer Engine's FP8 block scaling); " +
                           who + " is not one");
    }
    any_layout = any_layout && datacenter_blackwell(acc);
  }
  training.fp8_any_layout = any_layout;
}

std::vector<std::string> fp8_recipe_warnings(const TrainingConfig& training) {
  if (training.precision != Precision::FP8 || training.fp8_recipe != Fp8Recipe::NVFP4) return {};
  return {
      "training.fp8_recipe nvfp4 is experimental: its FP4 GEMMs are timed at the catalogue's dense FP4 peak, "
      "assumed reachable in the same share as the part's FP8 matmuls (no FP4 kernel has been measured); its casts "
      "and FP4 weight copies as docs/PREDICTION.md, \"FP8 recipes\", counts them"};
}

}  // namespace prenet
