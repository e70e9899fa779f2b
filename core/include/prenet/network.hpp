#pragma once
// A network as a typed list of layers with shapes inferred from the input specification.
#include <cstdint>
#include <string>
#include <vector>

namespace prenet {

/// Per-sample tensor shape (the batch dimension is implicit and never stored).
using Shape = std::vector<std::int64_t>;

/// Elements in one sample of `shape` (1 for a scalar).
std::int64_t elements(const Shape& shape);
/// "[3, 224, 224]".
std::string to_string(const Shape& shape);

enum class InputKind { Image, Tokens, Sequence, Vector };

/// What one training sample looks like before the first layer.
struct InputSpec {
  InputKind kind = InputKind::Vector;
  std::int64_t channels = 0;    // image
  std::int64_t image_size = 0;  // image: square side
  std::int64_t seq_len = 0;     // tokens, sequence
  std::int64_t features = 0;    // sequence, vector
  /// The per-sample shape the first layer sees: [C,H,W], [S], [S,F] or [F].
  Shape shape() const;
};

const char* to_string(InputKind kind);

enum class LayerType {
  Dense,
  Conv2d,
  MaxPool2d,
  AvgPool2d,
  GlobalAvgPool,
  GlobalMaxPool,
  BatchNorm,
  LayerNorm,
  RmsNorm,
  Activation,
  Dropout,
  Flatten,
  Reshape,
  Softmax,
  Embedding,
  Rnn,
  Lstm,
  Gru,
  Attention,
  Add,
  Concat,
  Identity,
  CrossEntropy,
  Multiply,         // elementwise product of inputs with NumPy broadcasting (gates, squeeze-excitation)
  Parameter,        // a learned tensor used as an activation (ViT's class token); reads no input
  AdaptiveSoftmax,  // clustered output layer + loss (Grave et al. 2017): a head over frequent words, tails by share
  Mla,              // multi-head latent attention (DeepSeek-V2/V3): low-rank queries and a shared key/value latent
  Mamba,            // selective state-space mixer (Mamba 1 and Mamba-2)
  GatedDeltaNet,    // gated delta-rule linear attention (Qwen3-Next, Qwen3.5): a chunked recurrence per head
  ContrastiveLoss,  // CLIP's / SigLIP's loss over the micro-batch's image-text pairs (B x B similarities)
};

/// The layer type's name in the layer-list format ("dense", "conv2d", ...).
const char* to_string(LayerType type);

/// Attention's normalisation of queries and keys before the scores (attention `qk_norm`).
enum class QkNorm {
  None,
  Head,            // RMSNorm over each head's width, one weight of head_dim for q and one for k (Qwen3, Gemma 3)
  Full,            // RMSNorm over the whole q and the whole k projection (OLMo 2)
  HeadWeightless,  // L2 norm over each head's width, no weight (Llama 4)
};

/// Attributes of a layer; each type reads the ones that apply to it (see docs/MODEL_FORMAT.md).
struct LayerAttrs {
  std::int64_t units = 0;    // dense: output features
  std::int64_t filters = 0;  // conv2d: output channels
  std::int64_t kernel_h = 1, kernel_w = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;
  std::int64_t groups = 1;
  std::int64_t vocab_size = 0;    // embedding rows
  std::int64_t dim = 0;           // embedding width
  std::int64_t hidden_size = 0;   // recurrent
  std::int64_t num_layers = 1;    // recurrent: stacked layers
  std::int64_t num_heads = 0;     // attention
  std::int64_t num_kv_heads = 0;  // attention: grouped-query heads (== num_heads for classic MHA)
  std::int64_t head_dim = 0;      // attention
  std::int64_t axis = -1;         // concat
  std::int64_t experts = 1;       // dense: mixture of experts, each with its own weights
  std::int64_t top_k = 1;         // dense: experts each token is routed to
  std::int64_t expert_shards = 1;  // dense: GPUs the experts are sharded over (parallel.expert; experts / this local)
  std::int64_t memory_len = 0;    // attention: cached positions before the segment (Transformer-XL), no gradient
  bool relative = false;          // attention: Transformer-XL relative positions (r_net projection, second score)
  // attention, DeBERTa's disentangled scores: terms (c2p and/or p2c), rows of the relative table, own projections.
  std::int64_t disentangled = 0, position_span = 0;
  bool position_projections = false;
  bool key_bias = true;               // attention: K projection bias (Whisper has none), when `bias`
  std::int64_t window = 0;        // attention: sliding window, keys each query sees (itself included); 0 = all
  std::int64_t rotary_dim = 0;    // attention: width of each query/key head rotated by RoPE; 0 = no rotary positions
  std::int64_t chunk = 0;         // attention: chunked local attention, positions per chunk; 0 = none
  QkNorm qk_norm = QkNorm::None;  // attention: normalisation of queries and keys
  bool sinks = false;             // attention: a learned sink logit per head (gpt-oss)
  bool output_gate = false;       // attention: the core's output times sigmoid(x W_gate) before o_proj (Qwen3-Next)
  double softcap = 0.0;           // attention: logit soft-capping c * tanh(x / c); 0 = none (Gemma 2)
  // attention, mla: GPUs of the context-parallel ring (parallel.context); this layer holds 1/context of the
  // sequence and its core reads the keys and values of all context blocks
  std::int64_t context = 1;
  // mla: DeepSeek's ranks and widths (num_heads, causal, bias, rate as for attention); q_lora_rank 0 = q_proj
  std::int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  // mamba: version 1 (selective scan) or 2 (SSD); inner = d_inner; dt_rank (v1); num_heads and n_groups (v2)
  std::int64_t ssm_version = 0, inner = 0, state_size = 0, conv_kernel = 0, dt_rank = 0, n_groups = 1;
  bool conv_bias = true;              // mamba: conv1d bias
  bool gated_norm = true;             // mamba v2: the gated RMSNorm before out_proj (false: y · silu(z) only)
  std::int64_t ssd_chunk = 256;       // mamba v2: positions per chunk of the chunked SSD scan (chunk_size)
  // gated_deltanet: key heads (num_kv_heads) of head_dim, value heads (num_heads) of v_head_dim, conv_kernel; its
  // input projections as Qwen3.5 names them (in_proj_qkv, _z, _b, _a) rather than Qwen3-Next's (in_proj_qkvz, _ba)
  bool split_projections = false;
  std::vector<std::int64_t> cutoffs;  // adaptive_softmax: cluster boundaries (ranks), increasing, < units
  std::vector<double> tail_shares;    // adaptive_softmax: share of tokens whose target is in each tail cluster
  Shape target_shape;             // reshape (may hold one -1), parameter
  bool bias = true;
  bool out_bias = true;  // attention, mamba: bias of the output projection (Qwen2 has QKV bias only)
  bool gated = false;    // dense: GLU-style, act(x W_gate) * (x W_up), two matrices
  // dense, gated: gpt-oss's GLU, act(min(gate, glu_limit)) * (clamp(up, -glu_limit, glu_limit) + glu_offset);
  // glu_limit 0 = no clamp
  double glu_limit = 0.0, glu_offset = 0.0;
  bool bidirectional = false;
  bool return_sequences = true;
  bool causal = false;
  bool positional = false;  // embedding indexed by position, not by token id
  // dense: name of the embedding whose matrix it reuses (multi-token prediction's heads: of the head they share);
  // embedding (multi-token prediction's, model/mtp.cpp): of the embedding it shares
  std::string tied_to;
  std::string activation;   // fused activation (dense, conv2d) or the function of an activation layer
  double rate = 0.0;        // dropout probability
  bool scale = true;        // layernorm, rmsnorm: a learned scale (false with bias false: no parameters, OLMo)
  std::string loss;         // contrastive_loss: "softmax" (CLIP) or "sigmoid" (SigLIP)
};

/// One weight matrix of a layer as LoRA and shape-aware optimizers see it (LayerKind::linear_modules): `in` x
/// `out`, `copies` of it (a mixture's experts), multiplying `rows_per_sample` rows per sample (its routed rows
/// for experts), `input_group` equal for matrices reading the same tensor (q, k, v; gate, up).
struct LinearModule {
  std::string role;  // Llama's module name (q_proj ... down_proj, lm_head), else the kind's or layer's own
  double in = 0, out = 0, copies = 1, rows_per_sample = 0;
  int input_group = 0;
};

/// LoRA adapters on some of a layer's matrices (Hu et al. 2021): each adapted matrix W (in x out) gains
/// A (in x rank) and B (rank x out), run beside it on the same input.
struct LoraAdapter {
  std::int64_t rank = 0;  // 0: no adapters
  double dropout = 0;
  std::vector<LinearModule> modules;  // the adapted matrices (a fused q/k/v adapter is one module)
  std::int64_t parameters = 0;        // rank x (in + out) x copies, summed over the modules
};

struct Layer {
  std::string name;
  LayerType type = LayerType::Identity;
  LayerAttrs attrs;
  /// Producers of this layer's inputs: indices into Network::layers, or kNetworkInput.
  std::vector<int> inputs;
  std::vector<Shape> input_shapes;
  Shape output_shape;
  /// Trainable parameters owned by this layer (a tied dense reuses its embedding's matrix).
  std::int64_t parameters = 0;
  /// Whether backward must produce a gradient for this layer's input (false when nothing upstream trains).
  bool needs_input_grad = false;
  /// Whether its own weights train (gradients, optimizer states); false: frozen (training.finetune).
  bool trainable = true;
  /// Bytes each of its weights takes while frozen (training.finetune.base_precision; quantized matrices
  /// with their scales, the rest at 16 or 32 bits), averaged over its weights. Read only when !trainable.
  double frozen_bytes_per_parameter = 0;
  /// Bytes per weight of its quantized matrices while frozen (int8, nf4 with their scales); 0: not quantized.
  double quantized_bytes = 0;
  /// LoRA adapters on its matrices (training.finetune): rank 0 for none; their weights always train.
  LoraAdapter adapter;
  /// Frozen, yet its weights get gradients (training.finetune.frozen_gradients: an FSDP1 unit mixing trained and
  /// frozen weights under use_orig_params): their weight-gradient kernels and gradient memory, no optimizer states.
  bool frozen_gradient = false;
  /// Multi-token prediction (training.mtp_layers, model/mtp.cpp): the depth, from 1, whose module this layer is
  /// (what Megatron's pipeline layout places as 'm'); 0: the main network, the shared head and the losses included.
  int mtp_depth = 0;
  /// Its linears stay 16-bit under precision fp8 (training.bf16_layers_at_start / _at_end: Megatron's
  /// first_last_layers_bf16; layers/fp8.cpp apply_bf16_layers).
  bool keeps_16bit = false;
};

/// Parameters the optimizer updates in `layer`: its own when trainable, plus its adapters'.
std::int64_t trainable_parameters(const Layer& layer);
/// Whether backward computes the gradient of `layer`'s own weights: trainable, or frozen with frozen_gradient.
inline bool own_weight_gradients(const Layer& layer) { return layer.trainable || layer.frozen_gradient; }
/// Parameters whose gradients `layer` holds: the trainable ones plus, with frozen_gradient, its frozen weights.
std::int64_t gradient_parameters(const Layer& layer);

constexpr int kNetworkInput = -1;

struct Network {
  std::string name;
  InputSpec input;
  std::vector<Layer> layers;
  std::vector<std::string> warnings;
  /// The block each multi-token-prediction depth runs (training.mtp_layers), its inputs within itself and
  /// kNetworkInput for the depth's input stream; empty: a copy of the last decoder block (model format "mtp_block").
  std::vector<Layer> mtp_block;
  /// Why the model has no block for multi-token prediction to copy (model format "mtp_block" as a string); empty: it
  /// has one.
  std::string mtp_unavailable;

  std::int64_t parameters() const;
  /// Parameters the optimizer updates (trainable_parameters summed over the layers).
  std::int64_t trainable_parameters() const;
  /// Parameters one token runs through: each mixture-of-experts layer's top_k of its experts, all else whole.
  std::int64_t active_parameters() const;
};

/// Per layer, the repeat instance (block) it was expanded from ("h.3." of "h.3.attn"), numbered from 0 in
/// order; -1 for layers outside blocks (a name without a dot).
std::vector<int> block_of_layers(const Network& net);

/// Limits enforced while building networks, so absurd inputs fail fast with a clear message.
struct Limits {
  static constexpr std::int64_t kMaxLayers = 10000;
  static constexpr std::int64_t kMaxDim = std::int64_t{1} << 31;
  static constexpr std::int64_t kMaxElementsPerSample = std::int64_t{1} << 40;
};

}  // namespace prenet
