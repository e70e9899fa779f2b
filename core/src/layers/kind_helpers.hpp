#pragma once
// What the layer kinds' files share: attribute readers, shape arithmetic, activation costs and sharding
// arithmetic. Included by the kinds only (layer_kind.hpp is the interface the rest of the core uses).
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "layers/layer_kind.hpp"

namespace prenet {

/// The activation function names a layer list accepts.
const std::vector<std::string>& activation_names();
/// Arithmetic per element of an activation function's forward pass (tanh-based GELU and friends cost more).
double activation_flops(const std::string& fn);
/// The op chain of `fn` at activation size e; nullopt for activations that run as one fused kernel.
std::optional<OpChain> composed_activation(const std::string& fn, double e);

/// `v` / t, or an InputError naming parallel.tensor when t does not divide it ("the <v> <what> of layer").
std::int64_t split_evenly(std::int64_t v, std::int64_t t, const Layer& layer, const std::string& what);
/// A token mixer split over the tensor group as Megatron splits attention: its input gathered (column-parallel
/// projections), its output summed (a row-parallel projection): one all-reduce of the output in forward and, when
/// the input needs a gradient, one of that gradient in backward (attention, mla, mamba, gated_deltanet).
void shard_as_mixer(ShardStep& s);
/// ceil(a / b) for positive b.
std::int64_t ceil_div(std::int64_t a, std::int64_t b);

/// The keys every layer-list entry may carry, plus `extra`.
std::vector<std::string> common_keys(std::vector<std::string> extra);
/// Element `i` of an integer array in [min, 2^31]; errors name "path[i]".
std::int64_t element_int(const Json& array, std::size_t i, const std::string& path, std::int64_t min);
/// Reads an int or a pair [h, w] into (h, w).
std::pair<std::int64_t, std::int64_t> get_pair(const Json& obj, const std::string& key, const std::string& path,
                                               std::int64_t fallback, std::int64_t min);
/// Parses conv/pool padding: "valid", "same" or explicit integers. Returns (pad_h, pad_w, same).
std::tuple<std::int64_t, std::int64_t, bool> get_padding(const Json& obj, const std::string& path);
/// The entry's `shape` array of 1 to 8 dimensions (reshape, parameter); errors name path.shape.
const Json& shape_entry(const Json& spec, const std::string& path);
/// Output size of a convolution or pooling window along one axis; errors name `path`.
std::int64_t conv_out(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t pad, bool same,
                      const std::string& path, const Shape& in_shape);
/// a * b, rejected beyond 2^40 elements per sample.
std::int64_t checked_mul(std::int64_t a, std::int64_t b, const std::string& path);
/// Product of sizes for a parameter count, rejected beyond 2^50 so sums over 10,000 layers cannot overflow.
std::int64_t params_of(std::initializer_list<std::int64_t> factors, const std::string& path);
/// Throws `what` naming the input's shape unless it has `rank` dimensions.
void require_rank(const Shape& s, std::size_t rank, const std::string& path, const char* what);
/// The last dimension of the layer's first input ("<type> needs a non-scalar input" for a scalar).
std::int64_t last_dim(const Layer& layer, const std::string& path);
/// Rows of the GEMM a layer applies to its last dimension: batch x all leading dimensions.
double rows(const Shape& in, double batch);
/// The attention core of one step (attention, mla): b samples, `heads` query heads over `kv_heads`
/// key/value heads, s queries, t keys, query/key width dk, value width dv.
struct AttentionCore {
  double b, heads, kv_heads, s, t, dk, dv;
  double visible;  // share of the s x t scores a fused kernel computes (visible_share)
};
/// Share of the s x t score matrix that `a`'s mask leaves visible, as the area of the visible region: 1
/// without a causal mask (or with cached keys, t != s), 1/2 causal, (s w - w^2 / 2) / s^2 with a sliding
/// window w < s, (n c^2 / 2 + r^2 / 2) / s^2 for chunks of c (n whole chunks and r left over); under context
/// parallelism (a.context > 1) 1/2 causal (load-balanced), else 1.
double visible_share(const LayerAttrs& a, double s, double t);
/// The core's forward kernels (eager: scores, soft-capping, sinks, softmax, dropout, P V; or one fused
/// kernel), reading the layer's causal/window/chunk, softcap, sinks and dropout from st.a.
void attention_core_forward(const LayerStep& st, const AttentionCore& c, KernelBuilder& kb);
/// Op-level recomputation in an attention kind: the projections' GEMMs and the fused kernel are kept; eager
/// attention's batched products (scores, P V: aten.bmm, not on torchtitan's save list) run again with the
/// rest of the core.
bool attention_recomputed_by_ops(const Kernel& k, const KernelContext& context);
/// What op-level recomputation keeps of a kept attention kernel: a projection's output, or the fused
/// kernel's output (its GEMM view is the scores': batch x s x t, width k) and each row's FP32 log-sum-exp.
double attention_ops_kept_bytes(const Kernel& k, double e, const KernelContext& context);
/// The core's backward kernels, mirroring attention_core_forward.
void attention_core_backward(const LayerStep& st, const AttentionCore& c, KernelBuilder& kb);

/// The depthwise causal conv1d (causal_conv1d_fn) of `kernel` taps over `channels` channels of m tokens, with its
/// SiLU (layers/mamba.cpp; Gated DeltaNet runs the same kernel).
void causal_conv1d_kernels(KernelBuilder& kb, Phase phase, double m, double channels, double kernel);

/// int64 as double.
inline double d(std::int64_t v) { return static_cast<double>(v); }

}  // namespace prenet
