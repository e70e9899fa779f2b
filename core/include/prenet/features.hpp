#pragma once
// The work of one training step, layer by layer and kernel by kernel, and PreNeT's features.
// One implementation serves the product and the trainer.
#include <array>
#include <cstdint>
#include <vector>

#include "prenet/hardware.hpp"
#include "prenet/network.hpp"
#include "prenet/training.hpp"

namespace prenet {

enum class KernelClass {
  Gemm,
  BatchedGemm,
  Conv,
  Recurrent,
  Elementwise,
  Normalization,
  Softmax,
  Embedding,
  Optimizer
};
enum class Phase { Forward = 0, Backward = 1, Optimizer = 2 };

const char* to_string(KernelClass c);
const char* to_string(Phase p);
/// True for the classes that run on matrix units (tensor cores) at the training precision.
bool is_matmul(KernelClass c);

/// Which part of its layer a kernel computes, where a recomputation policy reruns that part alone
/// (parallel.recompute_modules, core/src/parallel/recompute.cpp): a dense layer's activation function (and a
/// gated layer's product), MLA's up-projections of its latents with their norms. Other: the rest. DeltaRule marks a
/// Gated DeltaNet's chunk kernels, timed from measured delta-rule kernels where the catalogue has them; Ssd a
/// Mamba-2 chunk scan, timed from measured chunk scans where the catalogue has them.
enum class KernelPart : std::uint8_t { Other, Activation, LatentUp, Rotary, DeltaRule, Ssd };

/// One device kernel (or `repeats` identical dependent launches, as in a recurrent loop).
/// flops and bytes are totals over all repeats, for the whole batch.
struct Kernel {
  KernelClass cls = KernelClass::Elementwise;
  Phase phase = Phase::Forward;
  double flops = 0;
  double bytes = 0;
  // GEMM view (per repeat): batch x (m x k) * (k x n). Zero for non-matmul kernels.
  double m = 0, n = 0, k = 0, batch = 0;
  double repeats = 1;
  double window = 1;  // convolution / pooling window elements (kh x kw)
  double stride = 1;  // convolution stride
  // GEMM whose operands' rows are not a multiple of 16 bytes long (a vocabulary of 50257, say): cuBLAS
  // cannot use its aligned tensor-core kernels (RooflineParams::misaligned_*_slowdown).
  bool misaligned = false;
  int layer = 0;      // index into Network::layers
  // A GEMM of an FP8 linear layer under training.precision fp8 (layers/fp8.cpp): it runs at the FP8 peak; every
  // other matrix kernel of an FP8 step runs at the 16-bit peak (Transformer Engine's fp8_autocast).
  bool fp8 = false;
  // An FP8 linear's GEMM under training.fp8_recipe nvfp4: its operands are 4-bit NVFP4 and it runs at the FP4 peak.
  bool fp4 = false;
  // A fused attention pass (layers/attention_core.cpp), timed from the accelerator's measured efficiency where
  // the catalogue has one (docs/PREDICTION.md, "Fused attention"): the library running it, whether its mask is
  // causal over equal query and key lengths, its sliding window (0 = none), and its FLOPs with no mask.
  FusedAttentionLibrary fused_attention = FusedAttentionLibrary::None;
  // A grouped GEMM of `batch` independent products (a mixture of experts' local experts, each its own weight):
  // the learned path times one product with the GEMM model and multiplies (docs/PREDICTION.md §6).
  bool grouped = false;
  bool causal = false;
  double window_positions = 0;
  double unmasked_flops = 0;
  KernelPart part = KernelPart::Other;
  // A delta-rule chunk kernel (part DeltaRule): the value heads of one sample, whose recurrences run side by side.
  double heads = 0;
};

// Kernel constructors shared by the step decomposition and the trainer (one definition of work).
// `e` is the bytes of one element as the kernel reads and writes it.

/// batch x (m x k) . (k x n): 2mnk FLOPs per batch entry; reads both operands, writes the result once.
Kernel gemm_kernel(Phase phase, double m, double n, double k, double batch, double e);
/// Implicit-GEMM convolution with output rows m, output channels n and reduction k (= C/g x window).
Kernel conv_kernel(Phase phase, double m, double n, double k, double in_elements, double weight_elements,
                   double out_elements, double window, double stride, double e);
/// Which convolution a kernel computes: forward, gradient w.r.t. the input, or w.r.t. the filters.
enum class ConvPass { Forward, Data, Filter };

/// Shape of one 2-D convolution (per call, whole batch).
struct ConvShape {
  double batch = 1, c_in = 1, c_out = 1, kernel_h = 1, kernel_w = 1;
  double in_h = 1, in_w = 1, out_h = 1, out_w = 1, stride = 1, groups = 1;
};

/// The implicit-GEMM kernel of one convolution pass: forward (B·H'·W' x F x C·k²), data gradient
/// (B·H·W x C x F·k²) or filter gradient (F x C·k² x B·H'·W'), each 2·B·H'·W'·k²·C/g·F FLOPs.
Kernel conv_pass_kernel(ConvPass pass, const ConvShape& shape, double e);

/// A memory-bound kernel touching `elements` values `passes` times (reads + writes).
Kernel stream_kernel(KernelClass cls, Phase phase, double elements, double passes, double flops_per_element, double e);
/// How a request runs its kernels: training settings, never part of the model. A precision alone means
/// PyTorch's kernels and eager attention, so the request path builds it with kernel_context(training);
/// explicit, so a bare precision never stands in for a request's settings unnoticed.
struct KernelContext {
  KernelContext() : KernelContext(Precision::FP32) {}
  explicit KernelContext(Precision p, AttentionKernel a = AttentionKernel::Eager, KernelSet k = KernelSet::PyTorch)
      : precision(p), attention(a), kernels(k) {}
  Precision precision;
  AttentionKernel attention;  // Flash: one fused kernel per pass, scores never in memory (FlashAttention)
  KernelSet kernels;          // Megatron-LM's fused kernels: softmax, bias-GELU, SwiGLU
  bool nchw = false;          // training.memory_format nchw: convolutions keep NCHW tensors (layers/memory_format)
  // training.loss chunked_ce: the vocabulary head's GEMMs and the FP32 loss run over this many chunks of the
  // tokens (torchtune's CEWithChunkedOutputLoss), so only one chunk's FP32 gradients exist at once.
  int loss_chunks = 1;
  // training.compile: Inductor fuses elementwise chains (composed activations, a GLU's activation and product)
  // into one kernel each way that saves only the chain's input (docs/PREDICTION.md, "Loss, compile and packing").
  bool compiled = false;
  // training.compile_loss: the cross-entropy under torch.compile too, which then saves its 16-bit input instead
  // of FP32 log-probabilities (layers/cross_entropy.cpp). torchtune's compile compiles the loss; torchtitan's
  // compiles the blocks only (the loss with compile.components "loss").
  bool compiled_loss = false;
  MasterWeights master_weights = MasterWeights::FP32;  // training.master_weights: what the optimizer step reads
  // training.moe_imbalance and training.moe_capacity_factor (0: dropless): the routed tokens' spread over the
  // experts (layers/moe.cpp).
  double moe_imbalance = 1.0, moe_capacity_factor = 0.0;
  Fp8Recipe fp8_recipe = Fp8Recipe::Delayed;  // precision fp8: how the FP8 linears scale (layers/fp8.cpp)
  bool fp8_any_layout = false;                // FP8 GEMMs take any layout: no transposed FP8 copies

  /// Whether chains of pointwise operations run fused, one kernel a pass (Megatron-LM's kernels, or
  /// torch.compile's Inductor), rather than op by op as Hugging Face writes them (PyTorch eager).
  bool fuses_pointwise() const { return kernels == KernelSet::Megatron || compiled; }
};
/// The kernel context of a request's training section.
KernelContext kernel_context(const TrainingConfig& training);

/// True when attention with activations of e bytes keeps its probabilities in FP32 (PyTorch's eager
/// attention under 16-bit training: the softmax is on autocast's FP32 list) before a cast to the
/// activation type for the PV GEMM.
bool fp32_probabilities(const KernelContext& context, double e);
/// Bytes attention `a` saves for backward per step that scale with its `probs` score elements at activation
/// size e: the probabilities (FP32 and their 16-bit copy under fp32_probabilities), and with dropout its
/// mask (1 byte) and output; 0 for a fused (flash) kernel. What selective recomputation drops.
double attention_score_bytes(const LayerAttrs& a, double probs, double e, const KernelContext& context);
/// `steps` dependent launches of an (m x k) . (k x n) cell GEMM plus gate arithmetic on `gate_elements`.
Kernel recurrent_kernel(Phase phase, double steps, double m, double n, double k, double gate_elements, double e);

/// Totals of one layer, plus PreNeT's computational features.
struct LayerWork {
  std::array<double, 3> flops{};      // by Phase
  std::array<double, 3> bytes{};      // by Phase
  double co = 0;                      // PreNeT computational operations
  double cm = 0;                      // PreNeT computational memory (elements)
  double saved_activation_bytes = 0;  // kept from forward for backward, whole batch
  // Of saved_activation_bytes, the layer's copy of its first input as its producer wrote it (a weight gradient's
  // input; 0 when it keeps a tensor of its own instead, as a mixture of experts keeps its permuted tokens).
  double saved_input_bytes = 0;
  int kernels = 0;
};

struct StepWork {
  KernelContext context;  // how its kernels run
  std::vector<Kernel> kernels;
  std::vector<LayerWork> layers;
  std::array<double, 3> flops{};  // by Phase, whole step
};

/// Everything one optimizer step of `net` does for `batch` samples with `context`'s kernels and `optimizer`.
StepWork step_work(const Network& net, std::int64_t batch, const KernelContext& context, Optimizer optimizer,
                   OptimizerImpl impl = OptimizerImpl::Fused);

/// Share of an adaptive_softmax layer's tokens whose target falls in each tail cluster: the layer's
/// `tail_shares` when given, else Zipf's law (exponent 1) over the vocabulary ranks.
std::vector<double> adaptive_softmax_tail_shares(const LayerAttrs& a);

/// PreNeT's CO for one layer and batch (operations, following the paper's per-type formulas).
double prenet_co(const Layer& layer, std::int64_t batch);
/// PreNeT's CM for one layer and batch (elements: weights + input + output, doubled when training).
double prenet_cm(const Layer& layer, std::int64_t batch, bool training);

}  // namespace prenet
