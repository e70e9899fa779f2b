#pragma once
// One home per layer kind: its layer-list name and attributes, its shape rule, its kernels per phase,
// PreNeT's features, its tensor-parallel sharding and what it saves for backward, behind one interface.
// Adding a kind: a LayerType value, one file defining a LayerKind subclass and its `<name>_kind()`
// accessor, and its registration in layer_kind.cpp (the accessor's declaration and an entry in the list).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "prenet/features.hpp"
#include "prenet/json_util.hpp"
#include "prenet/network.hpp"
#include "prenet/parallel.hpp"

namespace prenet {

/// Appends kernels for one layer to a step, keeping the layer's and the step's totals; `e` is bytes per
/// activation element.
class KernelBuilder {
 public:
  KernelBuilder(StepWork& work, int layer, double e) : work_(work), layer_(layer), e_(e) {}

  /// batch x (m x k) . (k x n), marked misaligned per set_misaligned.
  void gemm(Phase phase, double m, double n, double k, double batch = 1, KernelClass cls = KernelClass::Gemm);
  /// Marks the GEMMs added from now on as misaligned (or not): see Kernel::misaligned.
  void set_misaligned(bool misaligned) { misaligned_ = misaligned; }
  /// Marks the batched GEMMs added from now on as grouped (or not): see Kernel::grouped.
  void set_grouped(bool grouped) { grouped_ = grouped; }
  /// Marks the kernels added from now on as computing `part` of the layer: see Kernel::part.
  void set_part(KernelPart part) { part_ = part; }
  /// A backward GEMM computing a weight's gradient: none for a frozen layer (set_frozen).
  void weight_gradient(double m, double n, double k, double batch = 1);
  /// A weight-gradient kernel built elsewhere (a convolution's filter gradient, a bias's reduction).
  void add_weight_gradient(const Kernel& kn) {
    if (!frozen_) push(kn);
  }
  /// Whether the layer's own weights are frozen: their gradient kernels are left out.
  void set_frozen(bool frozen) { frozen_ = frozen; }
  /// A kernel built elsewhere.
  void add(const Kernel& kn) { push(kn); }
  /// A memory-bound kernel (skipped when `elements` is not positive); element_bytes 0 means `e`.
  void stream(KernelClass cls, Phase phase, double elements, double passes, double flops_per_element,
              double element_bytes = 0);
  /// One elementwise kernel per entry of `bytes_per_element`, each over `elements`.
  void chain(Phase phase, double elements, const std::vector<double>& bytes_per_element);
  /// `steps` dependent launches of a recurrent cell.
  void recurrent(Phase phase, double steps, double m, double n, double k, double gate_elements);

 private:
  void push(Kernel kn);

  StepWork& work_;
  int layer_;
  double e_;
  bool misaligned_ = false;
  bool grouped_ = false;
  bool frozen_ = false;
  KernelPart part_ = KernelPart::Other;
};

/// An activation that Hugging Face writes as a chain of PyTorch operations instead of one fused kernel:
/// per element of its input, the bytes each forward and each backward kernel moves (one launch each,
/// in order) and the bytes autograd saves for backward.
struct OpChain {
  std::vector<double> forward, backward;
  double saved = 0;
  double output = 0;  // bytes per element of the result before any cast for the next GEMM
};

/// What a kind's kernels see of one layer in one step.
/// A mixture-of-experts dense layer's place in its expert MLP (layers/moe.cpp, moe_roles): the first routes and
/// permutes the tokens it reads, the last un-permutes and combines its output (a lone one does both).
struct MoeRole {
  bool dispatches = false, combines = false;
};

struct LayerStep {
  const Layer& layer;
  const Shape& in;  // the first input's shape
  const LayerAttrs& a;
  double b;  // samples in the batch
  double e;  // bytes per activation element
  double in_elems, out_elems;
  bool dx;                          // whether backward produces the input's gradient
  double act;                       // activation_flops of the layer's activation
  std::optional<OpChain> composed;  // its op chain, when it runs as one (PyTorch's kernels)
  const KernelContext& context;     // how the request runs its kernels
  bool frozen = false;              // its own weights do not train: it saves nothing only their gradient reads
  bool feeds_loss = false;          // its output is a cross-entropy loss's input (the vocabulary head)
  MoeRole moe{};                    // a mixture-of-experts layer's place (nothing for other layers)
};

/// What the tensor-parallel layout makes of a layer (shard_network): its input is gathered over the group
/// (QKV, an MLP's first matrix, the vocabulary head), its output is summed over the group (attention's
/// output projection, an MLP's second matrix, the token embedding), or it lies between an MLP's matrices.
enum TensorRole : unsigned { kGathersInput = 1, kScattersOutput = 2, kInner = 4 };

/// What a kind's sharding rule sees: the whole network before and during sharding over `t` GPUs.
struct ShardStep {
  const Network& net;  // before sharding
  ShardedNetwork& shard;
  std::size_t l;  // the layer being sharded
  std::int64_t t;
  const std::vector<std::vector<std::size_t>>& consumers;  // per layer, the layers reading its output
  std::vector<bool>& row;        // dense layers that are an MLP's second (row-parallel) matrix
  std::vector<unsigned>& roles;  // TensorRole bits per layer
  // Expert parallelism beside tensor parallelism: the experts keep their full width (expert tensor parallel size
  // 1, Megatron-Bridge's setting with expert parallelism) and run on this GPU's share of the sequence.
  bool whole_experts = false;
};

/// One layer kind. Defaults suit a kind without weights that passes its input through unchanged.
class LayerKind {
 public:
  LayerKind(LayerType type, const char* name) : type_(type), name_(name) {}
  virtual ~LayerKind() = default;
  LayerType type() const { return type_; }
  /// Its name in the layer-list format ("dense", "conv2d", ...).
  const char* name() const { return name_; }

  /// Reads the kind's attributes from a layer-list entry, rejecting keys it does not know; sets
  /// *same_padding for "padding": "same". Default: no attributes.
  virtual LayerAttrs parse(const Json& spec, const std::string& path, bool* same_padding) const;
  /// Fills output_shape and parameters (and attributes derived from shapes) from input_shapes.
  /// Default: the output is the first input.
  virtual void infer(Layer& layer, bool same_padding, const std::string& path) const;
  /// Appends the layer's forward and backward kernels and sets lw.saved_activation_bytes. Default: none.
  virtual void kernels(const LayerStep& step, KernelBuilder& kb, LayerWork& lw) const;
  /// Its weight matrices (LoRA's targets, Adafactor's and Muon's shapes); default: none. A role "" is
  /// decided by the layer's place in the network (finetune: an MLP's up or down matrix, the head).
  virtual std::vector<LinearModule> linear_modules(const Layer&) const { return {}; }
  /// Why a LoRA adapter on its matrix `role` would not run in Hugging Face's training path (a fused kernel that
  /// reads the weight itself, so PEFT's wrapped module is never called); "" where it runs (the default).
  virtual std::string adapter_bypass(const Layer&, const std::string& /*role*/) const { return ""; }
  /// Parameters one token runs through (a mixture of experts: its top_k experts). Default: all of them.
  virtual std::int64_t active_parameters(const Layer& layer) const { return layer.parameters; }
  /// PreNeT's CO for one layer and batch. Default (not defined by PreNeT): one operation per output element.
  virtual double prenet_co(const Layer& layer, double b) const;
  /// Whether its weight gradient reads its whole input (so it saves that tensor).
  virtual bool saves_input() const { return false; }
  /// Whether it keeps its output only for a ReLU's backward (a consumer saving that tensor makes it free).
  virtual bool saves_output_only_for_relu(const Layer&) const { return false; }

  /// What the response says of how `layer`'s kernels are timed when no measurement covers them (each distinct
  /// note once per network); default: nothing to say.
  virtual std::string timing_note(const Layer& /*layer*/) const { return ""; }

  /// Splits the layer over the tensor group (ShardStep); default: replicated.
  virtual void shard(ShardStep&) const {}
  /// Whether its work is the same for every token (sequence parallelism may split its sequence).
  virtual bool token_wise() const { return false; }
  /// Whether it only passes its input through elementwise (a chain between an MLP's two matrices).
  virtual bool passthrough() const { return false; }
  /// Copies of its input it saves for the weight gradient (sequence parallelism keeps a slice of each).
  virtual double saved_input_copies(const Layer&) const { return 1.0; }
  /// Whether selective recomputation of `module` (parallel.recompute_modules) runs forward kernel `k` of the layer
  /// again in backward, for the modules that act inside a layer (core_attn, mla_up_proj, moe_act); the modules of
  /// whole layers are decided by the layer's place in its block (parallel/recompute.cpp).
  virtual bool recomputed_selectively(const Layer&, const Kernel&, const KernelContext&, RecomputeModule) const {
    return false;
  }
  /// Bytes of its own saved activations that selective recomputation of `module` drops for a micro-batch of `b`
  /// samples at activation size e (what other layers keep of its output is theirs).
  virtual double selective_dropped_bytes(const Layer&, double /*b*/, double /*e*/, const KernelContext&,
                                         RecomputeModule) const {
    return 0.0;
  }
  /// Whether op-level recomputation (parallel.recompute "ops") runs forward kernel `k` again in backward: all
  /// but the matrix products whose outputs it keeps (torchtitan's op save list: aten.mm, and the grouped or
  /// batched products of a layer's own weights; a convolution counts as its implicit GEMM).
  virtual bool recomputed_by_ops(const Layer&, const Kernel& k, const KernelContext&) const {
    return k.cls != KernelClass::Gemm && k.cls != KernelClass::BatchedGemm && k.cls != KernelClass::Conv;
  }
  /// Bytes op-level recomputation keeps of a forward kernel it does not recompute: its output, batch x m x n
  /// elements of size e in the GEMM view.
  virtual double ops_kept_bytes(const Layer&, const Kernel& k, double e, const KernelContext&) const {
    return e * k.batch * k.m * k.n;
  }

 private:
  LayerType type_;
  const char* name_;
};

/// The kind of layer type `type`.
const LayerKind& kind_of(LayerType type);
/// The kind whose layer-list name is `name`, or nullptr.
const LayerKind* kind_named(const std::string& name);
/// Every kind's layer-list name, sorted, comma-separated.
std::string kind_name_list();
/// The timing notes of `net`'s layers, each distinct note once, in layer order.
std::vector<std::string> kind_timing_notes(const Network& net);

}  // namespace prenet
