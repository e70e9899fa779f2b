#pragma once
// The kernels LoRA adapters and a quantized frozen base add to a layer's step (docs/PREDICTION.md
// "Fine-tuning"), beside the layer kind's own.
#include "layers/layer_kind.hpp"

namespace prenet {

/// Appends the adapters' kernels of layer st.layer (PEFT's LoRA Linear: dropout, A, B, scaling, added to the
/// base output; backward the same in reverse) and returns the bytes they save for backward.
double lora_kernels(const LayerStep& st, KernelBuilder& kb);

/// Appends the dequantization of a frozen quantized layer's matrices (bitsandbytes dequantizes each weight to
/// the compute type before its GEMM, in forward and again for the input gradient in backward).
void dequantize_kernels(const LayerStep& st, KernelBuilder& kb);

/// Bytes a frozen quantized base saves for backward: bitsandbytes' MatMul4Bit (and 8-bit matmul) keeps each
/// matmul's input whenever that input needs a gradient (`ctx.tensors = (A, B)`), once per input group and
/// not again where an adapter without dropout already saves the same tensor.
double quantized_base_saved(const LayerStep& st);

}  // namespace prenet
