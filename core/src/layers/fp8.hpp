#pragma once
// FP8 training as Transformer Engine runs it (training.precision fp8 with training.fp8_recipe): which GEMMs run in
// FP8, the cast / amax / transpose kernels each FP8 linear adds, and the FP8 weight copies it keeps. One home for
// the recipes; docs/PREDICTION.md, "FP8 recipes", gives the formulas and their sources.
#include <cstddef>
#include <string>
#include <vector>

#include "layers/layer_kind.hpp"
#include "prenet/features.hpp"
#include "prenet/hardware.hpp"
#include "prenet/network.hpp"
#include "prenet/training.hpp"

namespace prenet {

/// What a recipe writes per element of a 16-bit tensor it quantizes (TE transformer_engine/common/recipe).
struct Fp8Format {
  double data = 1;          // bytes per quantized element (E4M3/E5M2: 1)
  double act_scale = 0;     // scale bytes per element of an activation or gradient copy
  double weight_scale = 0;  // scale bytes per element of a weight copy
  bool columnwise = true;   // backward GEMMs read a second, column-wise (transposed or re-scaled) copy
  bool amax_pass = false;   // the tensor's amax is read in a pass of its own before the cast
};

/// The format of `recipe`; any_layout: the GEMMs take FP8 operands in any layout (TE is_non_tn_fp8_gemm_supported,
/// compute capability 10.x), so per-tensor recipes keep no transposed copy.
Fp8Format fp8_format(Fp8Recipe recipe, bool any_layout);

/// Per layer of `net`, whether it is an FP8 linear under precision fp8: a dense, attention or MLA layer inside a
/// repeated block (or any such layer of a network without blocks), not the vocabulary head (the input of a
/// cross-entropy loss), not an MoE router, not Transformer-XL/DeBERTa relative attention, with widths TE accepts.
std::vector<bool> fp8_linear_layers(const Network& net);

/// training.bf16_layers_at_start / _at_end: marks the layers of the first and last decoder blocks of the main
/// network (not multi-token prediction's) as keeping 16-bit linears (Layer::keeps_16bit), as Megatron-Core builds
/// them outside the FP8 autocast under first_last_layers_bf16. Throws InputError naming the field without precision
/// fp8, for a network without blocks, or for more blocks than it has.
void apply_bf16_layers(Network& net, const TrainingConfig& training);

/// Whether `name` matches the glob `pattern` ('*' any run of characters, '?' one character, everything else
/// itself), against the whole name; at most pattern length × name length steps (no exponential backtracking).
bool glob_matches(const std::string& pattern, const std::string& name);

/// training.bf16_modules: marks every layer whose name matches one of the patterns as keeping 16-bit linears
/// (Layer::keeps_16bit), as Transformer Engine's quantization-recipe matchers keep modules in BF16. Throws
/// InputError naming the field without precision fp8, or naming the element whose pattern matches no layer.
void apply_bf16_modules(Network& net, const TrainingConfig& training);

/// Marks the FP8 GEMMs among `layer`'s kernels (work.kernels from `first` on), gives them FP8 operand bytes,
/// appends the recipe's cast/amax kernels through kb (the layer's builder) and keeps the saved inputs of its
/// linears in FP8 (lw, the layer's totals). `optimizer`: the step updates weights (their casts then run once
/// per step, in the optimizer phase; TE caches them across micro-batches).
void add_fp8_kernels(const Layer& layer, const KernelContext& context, bool optimizer, std::size_t first,
                     StepWork& work, LayerWork& lw, KernelBuilder& kb);

/// Elements of `layer`'s weight matrices (its linear_modules): what an FP8 linear keeps FP8 copies of.
double fp8_weight_elements(const Layer& layer);
/// Bytes of FP8 weight copies (data and scales) per weight element that training keeps across micro-batches
/// (TE's weight workspace while is_first_microbatch is False): 0 unless the precision is fp8.
double fp8_weight_bytes_per_element(const TrainingConfig& training);

/// Checks training.fp8_recipe against the precision and every accelerator of the request (mxfp8: data-centre
/// Blackwell; blockwise: Hopper or later; nvfp4: data-centre Blackwell with an FP4 peak) and resolves
/// fp8_any_layout. Errors name the field.
void resolve_fp8_recipe(TrainingConfig& training, const std::vector<Accelerator>& hardware);

/// The response's warnings about the recipe: nvfp4 is experimental (its FP4 rate is the datasheet's, unmeasured).
std::vector<std::string> fp8_recipe_warnings(const TrainingConfig& training);

}  // namespace prenet
