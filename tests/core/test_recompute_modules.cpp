// Megatron-Core's selective recomputation of modules (parallel.recompute_modules; docs/PREDICTION.md,
// "Recomputation granularity"): per module, the bytes one micro-batch no longer keeps and the forward work that runs
// again in backward, written out here from the shapes of a small DeepSeek-V3 (multi-latent attention, a dense first
// block, mixture-of-experts blocks with a shared expert) and a small Llama, with Megatron's kernels in BF16.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "layers/kind_helpers.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
#include "prenet/parallel.hpp"

using namespace prenet;
using testutil::require_input_error;

namespace {

constexpr std::int64_t kSeq = 128, kVocab = 1000;
// DeepSeek-V3, small: hidden H, A heads, query latent rq, key/value latent rkv, head widths (nope + rope, value),
// a dense MLP of I, E experts of Im with top-K routing and one shared expert of Im.
constexpr std::int64_t kH = 256, kA = 4, kRq = 64, kRkv = 32, kNope = 32, kRope = 16, kDv = 32, kI = 512, kIm = 128,
                       kE = 8, kK = 2;
constexpr double kE16 = 2;  // BF16 bytes per activation element

using M = RecomputeModule;

RecomputeModules set_of(std::initializer_list<M> modules) {
  RecomputeModules s = 0;
  for (M m : modules) s |= module_bit(m);
  return s;
}

TrainingConfig megatron(AttentionKernel attention, Precision precision = Precision::BF16) {
  TrainingConfig tr;
  tr.seq_len = kSeq;
  tr.precision = precision;
  tr.attention = attention;
  tr.kernels = KernelSet::Megatron;
  return tr;
}

/// The small DeepSeek-V3: block 0 dense, blocks 1 and 2 mixtures of experts.
Network deepseek(AttentionKernel attention = AttentionKernel::Flash, const Json& extra = Json::object()) {
  Json config = {{"model_type", "deepseek_v3"},
                 {"hidden_size", kH},
                 {"intermediate_size", kI},
                 {"moe_intermediate_size", kIm},
                 {"num_hidden_layers", 3},
                 {"first_k_dense_replace", 1},
                 {"num_attention_heads", kA},
                 {"n_routed_experts", kE},
                 {"num_experts_per_tok", kK},
                 {"n_shared_experts", 1},
                 {"q_lora_rank", kRq},
                 {"kv_lora_rank", kRkv},
                 {"qk_nope_head_dim", kNope},
                 {"qk_rope_head_dim", kRope},
                 {"v_head_dim", kDv},
                 {"vocab_size", kVocab},
                 {"max_position_embeddings", kSeq}};
  config.update(extra);
  return resolve_model({{"hf_config", config}}, megatron(attention));
}

constexpr std::int64_t kLlamaH = 256, kLlamaI = 512;

/// A small Llama (grouped-query attention, SwiGLU MLP of kLlamaI).
Network llama(AttentionKernel attention = AttentionKernel::Flash, const Json& extra = Json::object()) {
  Json config = {{"model_type", "llama"},       {"hidden_size", kLlamaH},          {"intermediate_size", kLlamaI},
                 {"num_attention_heads", 8},    {"num_key_value_heads", 2},        {"num_hidden_layers", 3},
                 {"vocab_size", kVocab},        {"max_position_embeddings", kSeq}, {"hidden_act", "silu"},
                 {"tie_word_embeddings", false}};
  config.update(extra);
  return resolve_model({{"hf_config", config}}, megatron(attention));
}

KernelContext context_of(AttentionKernel attention) {
  return KernelContext(Precision::BF16, attention, KernelSet::Megatron);
}

/// One micro-batch of `shard` under selective recomputation of `modules` (None for nothing recomputed): per
/// layer, the bytes kept and the FLOPs and bytes of the kernels that run again in backward.
struct Outcome {
  std::vector<double> saved, again_flops, again_bytes;
  std::size_t again_kernels = 0;
};

Outcome run(const ShardedNetwork& shard, const StepWork& work, std::int64_t b,
            std::optional<RecomputeModules> modules) {
  const Recompute mode = modules ? Recompute::Selective : Recompute::None;
  const RecomputeModules set = modules.value_or(kDefaultRecomputeModules);
  Outcome o;
  o.saved = saved_activation_bytes(shard, work, mode, b, 1, set);
  StepWork again = work;
  add_recompute_kernels(again, shard, mode, 1, set);
  o.again_flops.assign(work.layers.size(), 0.0);
  o.again_bytes.assign(work.layers.size(), 0.0);
  for (std::size_t i = work.kernels.size(); i < again.kernels.size(); ++i) {
    const Kernel& k = again.kernels[i];
    CHECK(k.phase == Phase::Backward);
    o.again_flops[static_cast<std::size_t>(k.layer)] += k.flops;
    o.again_bytes[static_cast<std::size_t>(k.layer)] += k.bytes;
  }
  o.again_kernels = again.kernels.size() - work.kernels.size();
  return o;
}

/// The last part of a layer's name ("router" of "h1.0.router").
std::string leaf(const Layer& layer) { return layer.name.substr(layer.name.rfind('.') + 1); }

/// Sum of `v` over block instance `block`'s layers (or only those whose leaf name is among `leaves`).
double block_sum(const ShardedNetwork& shard, const std::vector<double>& v, int block,
                 const std::vector<std::string>& leaves = {}) {
  double total = 0;
  for (std::size_t l = 0; l < v.size(); ++l) {
    if (!shard.layers[l].in_block || shard.layers[l].block != block) continue;
    if (!leaves.empty() && std::find(leaves.begin(), leaves.end(), leaf(shard.net.layers[l])) == leaves.end()) continue;
    total += v[l];
  }
  return total;
}

/// Per layer, the FLOPs of its forward kernels.
std::vector<double> forward_flops(const StepWork& work) {
  std::vector<double> out(work.layers.size(), 0.0);
  for (const Kernel& k : work.kernels) {
    if (k.phase == Phase::Forward) out[static_cast<std::size_t>(k.layer)] += k.flops;
  }
  return out;
}

/// Whether block instance `block` of `shard` is a mixture of experts.
bool moe_block(const ShardedNetwork& shard, int block) {
  for (std::size_t l = 0; l < shard.layers.size(); ++l) {
    if (shard.layers[l].block == block && shard.net.layers[l].attrs.experts > 1) return true;
  }
  return false;
}

/// Outside the blocks nothing changes.
void check_outside_blocks(const ShardedNetwork& shard, const Outcome& with, const Outcome& without) {
  for (std::size_t l = 0; l < with.saved.size(); ++l) {
    if (shard.layers[l].in_block) continue;
    CHECK(with.saved[l] == without.saved[l]);
    CHECK(with.again_flops[l] == without.again_flops[l]);
  }
}

constexpr int kBlocks = 3;

}  // namespace

TEST_CASE("recompute_modules core_attn is today's selective recomputation", "[recompute_modules]") {
  for (AttentionKernel attention : {AttentionKernel::Flash, AttentionKernel::Eager}) {
    for (const Network& net : {llama(attention), deepseek(attention)}) {
      const ShardedNetwork shard = shard_network(net, 1);
      const StepWork work = step_work(shard.net, 2, context_of(attention), Optimizer::Adam);
      const auto plain = saved_activation_bytes(shard, work, Recompute::Selective, 2);
      const auto listed = saved_activation_bytes(shard, work, Recompute::Selective, 2, 1, set_of({M::CoreAttn}));
      CHECK(plain == listed);
      StepWork a = work, b = work;
      add_recompute_kernels(a, shard, Recompute::Selective);
      add_recompute_kernels(b, shard, Recompute::Selective, 1, set_of({M::CoreAttn}));
      REQUIRE(a.kernels.size() == b.kernels.size());
      for (std::size_t i = 0; i < a.kernels.size(); ++i) CHECK(a.kernels[i].flops == b.kernels[i].flops);
    }
  }
  CHECK(parse_parallel({{"recompute", "selective"}}, 32).recompute_modules == kDefaultRecomputeModules);
}

TEST_CASE("layernorm drops the norms' outputs before MLA and experts, and reruns those norms", "[recompute_modules]") {
  // Megatron-Core keeps the input norm of MLA and the pre-MLP norm of a mixture of experts as modules of their own
  // (Transformer Engine's layer spec; the norm before a dense MLP is fused into its first linear layer).
  // CheckpointWithoutOutput runs them without autograd and discards their output: per norm its FP32 row statistics
  // (8 bytes a token) and every consumer's copy of its output go: MLA's input (e·m·H), the router's and the shared
  // expert's (e·m·H each; the routed experts keep their permuted copy). The norm forward reruns: 8 FLOPs per
  // element, input read and output written. With sequence parallelism over t all of these are 1/t.
  for (std::int64_t t : {1, 2}) {
    const Network net = deepseek();
    const ShardedNetwork shard = shard_network(net, t, t > 1);
    for (std::int64_t b : {1, 3}) {
      const StepWork work = step_work(shard.net, b, context_of(AttentionKernel::Flash), Optimizer::Adam);
      const Outcome none = run(shard, work, b, std::nullopt);
      const Outcome norm = run(shard, work, b, set_of({M::LayerNorm}));
      const double m = d(kSeq * b), td = d(t), H = kH;
      for (int block = 0; block < kBlocks; ++block) {
        const bool moe = moe_block(shard, block);
        INFO("tensor " << t << ", micro-batch " << b << ", block " << block << (moe ? " (experts)" : " (dense)"));
        const double dropped = moe ? 16 * m + 3 * kE16 * m * H : 8 * m + kE16 * m * H;
        CHECK(block_sum(shard, none.saved, block) - block_sum(shard, norm.saved, block) == Approx(dropped / td));
        const double norms = moe ? 2 : 1;
        CHECK(block_sum(shard, norm.again_flops, block) == Approx(norms * 8 * m * H / td));
        CHECK(block_sum(shard, norm.again_bytes, block) == Approx(norms * 2 * kE16 * m * H / td));
        // The dense block's pre-MLP norm is fused into the MLP's first linear layer: not rerun.
        CHECK(block_sum(shard, norm.again_flops, block, {"ln_2"}) == Approx(moe ? 8 * m * H / td : 0.0));
      }
      check_outside_blocks(shard, norm, none);
    }
  }
}

TEST_CASE("mla_up_proj drops Q, K, V and the latents' norm outputs, and reruns the up-projections",
          "[recompute_modules]") {
  // Megatron-Core's qkv_up_proj_and_rope_apply under CheckpointWithoutOutput, norms fused into the up-projections:
  // per MLA layer (A/t heads of query/key width dk = nope + rope and value width dv, m = s·b tokens) the discarded
  // outputs Q, K, V, e·m·(A/t)·(2·dk + dv), and what the no-grad checkpoint never saves: each norm's output (the
  // up-projection's input) and its statistics, e·m·(rq + rkv) + 16·m. Rerun: both norms (8 FLOPs an element) and
  // both up-projections, 2·m·rq·(A/t)·dk and 2·m·rkv·(A/t)·(nope + dv).
  const double dk = kNope + kRope;
  for (std::int64_t t : {1, 2}) {
    const ShardedNetwork shard = shard_network(deepseek(), t);
    const std::int64_t b = 2;
    const StepWork work = step_work(shard.net, b, context_of(AttentionKernel::Flash), Optimizer::Adam);
    const Outcome none = run(shard, work, b, std::nullopt);
    const Outcome up = run(shard, work, b, set_of({M::MlaUpProj}));
    const double m = d(kSeq * b), heads = d(kA / t);
    const double dropped = kE16 * m * heads * (2 * dk + kDv) + kE16 * m * (kRq + kRkv) + 16 * m;
    const double again = 8 * m * (kRq + kRkv) + 2 * m * kRq * heads * dk + 2 * m * kRkv * heads * (kNope + kDv);
    for (int block = 0; block < kBlocks; ++block) {
      INFO("tensor " << t << ", block " << block);
      CHECK(block_sum(shard, none.saved, block) - block_sum(shard, up.saved, block) == Approx(dropped));
      CHECK(block_sum(shard, up.again_flops, block) == Approx(again));
      CHECK(block_sum(shard, up.again_flops, block, {"attn"}) == Approx(again));
    }
    check_outside_blocks(shard, up, none);
  }
}

TEST_CASE("moe_act drops the experts' activation output and reruns the activation", "[recompute_modules]") {
  // TEGroupedMLP's activation under CheckpointWithoutOutput: the second expert matrix's input, the activation's
  // output over the m·K routed tokens (balanced routing, no expert parallelism) of Im each, e·m·K·Im, is discarded;
  // the fused SwiGLU (activation and product: act + 1 FLOPs an element) reruns. Dense blocks have no experts.
  const ShardedNetwork shard = shard_network(deepseek(), 1);
  for (std::int64_t b : {1, 2}) {
    const StepWork work = step_work(shard.net, b, context_of(AttentionKernel::Flash), Optimizer::Adam);
    const Outcome none = run(shard, work, b, std::nullopt);
    const Outcome act = run(shard, work, b, set_of({M::MoeAct}));
    const double routed = d(kSeq * b * kK);
    for (int block = 0; block < kBlocks; ++block) {
      const bool moe = moe_block(shard, block);
      INFO("micro-batch " << b << ", block " << block);
      CHECK(block_sum(shard, none.saved, block) - block_sum(shard, act.saved, block) ==
            Approx(moe ? kE16 * routed * kIm : 0.0));
      CHECK(block_sum(shard, act.again_flops, block) ==
            Approx(moe ? routed * kIm * (activation_flops("silu") + 1) : 0.0));
      CHECK(block_sum(shard, act.again_flops, block, {"experts_up"}) == block_sum(shard, act.again_flops, block));
    }
    check_outside_blocks(shard, act, none);
  }
}

TEST_CASE("mlp checkpoints a dense MLP with its fused norm: only its input is kept", "[recompute_modules]") {
  // Megatron-Core's recompute_mlp wraps the dense MLP (its norm fused into linear_fc1) in tensor_parallel.checkpoint:
  // kept is its input (e·m·H, what the norm kept of it); dropped are the norm's statistics 8·m, the first matrix's
  // input copy e·m·H, the fused SwiGLU's gate and up 2·e·m·I/t and the second matrix's input e·m·I/t. The norm,
  // both matrices and the activation rerun. Mixture-of-experts blocks are left alone (that is moe).
  for (const bool ds : {false, true}) {
    for (std::int64_t t : {1, 2}) {
      const ShardedNetwork shard = shard_network(ds ? deepseek() : llama(), t);
      const std::int64_t b = 2;
      const StepWork work = step_work(shard.net, b, context_of(AttentionKernel::Flash), Optimizer::Adam);
      const Outcome none = run(shard, work, b, std::nullopt);
      const Outcome mlp = run(shard, work, b, set_of({M::Mlp}));
      const double m = d(kSeq * b), H = ds ? kH : kLlamaH, I = d((ds ? kI : kLlamaI) / t);
      const double act = activation_flops("silu");
      for (int block = 0; block < kBlocks; ++block) {
        const bool dense = !moe_block(shard, block);
        INFO((ds ? "deepseek" : "llama") << ", tensor " << t << ", block " << block);
        CHECK(block_sum(shard, none.saved, block) - block_sum(shard, mlp.saved, block) ==
              Approx(dense ? 8 * m + kE16 * m * H + 3 * kE16 * m * I : 0.0));
        const double again = 8 * m * H + 2 * m * 2 * I * H + m * I * (act + 1) + 2 * m * I * H;
        CHECK(block_sum(shard, mlp.again_flops, block) == Approx(dense ? again : 0.0));
      }
      check_outside_blocks(shard, mlp, none);
    }
  }
}

TEST_CASE("moe checkpoints the whole mixture of experts; shared_experts only the shared expert",
          "[recompute_modules]") {
  // moe (MoELayer under tensor_parallel.checkpoint, its standalone norm outside): kept is its input once, e·m·H;
  // dropped are the router's input copy e·m·H and the shared expert's e·m·H less that one, the routed experts'
  // permuted tokens e·m·K·H, their gate and up 2·e·m·K·Im and activation output e·m·K·Im, the router's scores e·m·E,
  // the shared expert's gate, up and activation 3·e·m·Im. Its whole forward (router to the sum) reruns.
  // shared_experts: the shared expert's 3·e·m·Im (its input stays as the checkpoint's); its two layers rerun.
  const ShardedNetwork shard = shard_network(deepseek(), 1);
  const std::int64_t b = 2;
  const StepWork work = step_work(shard.net, b, context_of(AttentionKernel::Flash), Optimizer::Adam);
  const std::vector<double> forward = forward_flops(work);
  const Outcome none = run(shard, work, b, std::nullopt);
  const Outcome moe = run(shard, work, b, set_of({M::Moe}));
  const Outcome shared = run(shard, work, b, set_of({M::SharedExperts}));
  const Outcome moe_norm = run(shard, work, b, set_of({M::Moe, M::LayerNorm}));
  const Outcome nested = run(shard, work, b, set_of({M::Moe, M::SharedExperts, M::MoeAct}));
  const double m = d(kSeq * b), H = kH, e = kE16;
  const std::vector<std::string> layer = {"router",    "experts_up",  "experts_down",
                                          "shared_up", "shared_down", "experts_sum"};
  for (int block = 0; block < kBlocks; ++block) {
    const bool experts = moe_block(shard, block);
    INFO("block " << block);
    const double moe_dropped = e * m * H + e * m * kK * H + 3 * e * m * kK * kIm + e * m * kE + 3 * e * m * kIm;
    CHECK(block_sum(shard, none.saved, block) - block_sum(shard, moe.saved, block) ==
          Approx(experts ? moe_dropped : 0.0));
    CHECK(block_sum(shard, moe.again_flops, block) == Approx(experts ? block_sum(shard, forward, block, layer) : 0.0));
    CHECK(block_sum(shard, none.saved, block) - block_sum(shard, shared.saved, block) ==
          Approx(experts ? 3 * e * m * kIm : 0.0));
    CHECK(block_sum(shard, shared.again_flops, block) ==
          Approx(experts ? block_sum(shard, forward, block, {"shared_up", "shared_down"}) : 0.0));
    // With layernorm the checkpoint's input is the discarded norm output: the mixture keeps nothing; the norm its
    // input only (its statistics go; so do MLA's input copy and the first norm's statistics).
    CHECK(block_sum(shard, moe_norm.saved, block, layer) == 0.0);
    CHECK(block_sum(shard, none.saved, block) - block_sum(shard, moe_norm.saved, block) ==
          Approx(experts ? moe_dropped + e * m * H + 16 * m + e * m * H : 8 * m + e * m * H));
    // Nested checkpoints run again inside the outer one's recomputation: the shared expert and the activation
    // twice, the rest of the mixture once.
    const double act = m * kK * kIm * (activation_flops("silu") + 1);
    CHECK(block_sum(shard, nested.again_flops, block) ==
          Approx(experts ? block_sum(shard, forward, block, layer) +
                               block_sum(shard, forward, block, {"shared_up", "shared_down"}) + act
                         : 0.0));
  }
  check_outside_blocks(shard, moe, none);
}

TEST_CASE("adding a module never keeps more and never reruns less", "[recompute_modules]") {
  // Every set of the seven modules (the DeepSeek-V3 has each), eager attention so core_attn acts too: adding one
  // module keeps at most as many bytes per block and reruns every kernel it reran, and more.
  const ShardedNetwork shard = shard_network(deepseek(AttentionKernel::Eager), 1);
  const std::int64_t b = 1;
  const StepWork work = step_work(shard.net, b, context_of(AttentionKernel::Eager), Optimizer::Adam);
  constexpr unsigned kAll = 7;
  std::vector<Outcome> outcomes;
  for (RecomputeModules s = 0; s < (1u << kAll); ++s) outcomes.push_back(run(shard, work, b, s));
  for (RecomputeModules s = 0; s < (1u << kAll); ++s) {
    for (unsigned m = 0; m < kAll; ++m) {
      const RecomputeModules more = s | (1u << m);
      if (more == s) continue;
      INFO("modules " << s << " + " << m);
      const Outcome &a = outcomes[s], &c = outcomes[more];
      CHECK(c.again_kernels > a.again_kernels);
      for (int block = 0; block < kBlocks; ++block) {
        CHECK(block_sum(shard, c.saved, block) <= block_sum(shard, a.saved, block) + 1e-6);
        CHECK(block_sum(shard, c.again_flops, block) >= block_sum(shard, a.again_flops, block));
        CHECK(block_sum(shard, c.again_bytes, block) >= block_sum(shard, a.again_bytes, block));
      }
    }
  }
}

TEST_CASE("checkpointed MLPs and mixtures repeat their forward collectives", "[recompute_modules][parallel]") {
  // A Llama at tensor 2: full recomputation repeats two forward all-reduces per block (attention's and the MLP's, of
  // equal size), mlp the MLP's only: half the extra.
  const ShardedNetwork shard = shard_network(llama(), 2);
  std::vector<std::array<double, 3>> layer_ms(shard.net.layers.size(), {1.0, 2.0, 0.0});
  const Accelerator& acc = *find_hardware("h100-sxm");
  auto tensor_ms = [&](Recompute mode, RecomputeModules modules) {
    ParallelConfig cfg;
    cfg.tensor = 2;
    cfg.gpus = 2;
    cfg.recompute = mode;
    cfg.recompute_modules = modules;
    return plan_stages(layer_ms, shard, cfg, resolve_fabric(acc, cfg), Precision::BF16).tensor[0];
  };
  const double none = tensor_ms(Recompute::None, kDefaultRecomputeModules);
  const double full = tensor_ms(Recompute::Full, kDefaultRecomputeModules);
  CHECK(tensor_ms(Recompute::Selective, set_of({M::Mlp})) == Approx(none + (full - none) / 2));
  CHECK(tensor_ms(Recompute::Selective, set_of({M::CoreAttn})) == Approx(none));
  // Which layers run whole again: the MoE's under moe (once), its shared expert's twice beside shared_experts, the
  // standalone norms under layernorm; nothing outside the blocks.
  const ShardedNetwork ds = shard_network(deepseek(), 1);
  const auto reruns = whole_layer_reruns(ds, Recompute::Selective, 1, set_of({M::Moe, M::SharedExperts, M::LayerNorm}));
  for (std::size_t l = 0; l < reruns.size(); ++l) {
    const std::string name = leaf(ds.net.layers[l]);
    const bool experts = ds.layers[l].in_block && moe_block(ds, ds.layers[l].block);
    int expected = 0;
    if (experts && (name == "router" || name == "experts_up" || name == "experts_down" || name == "experts_sum"))
      expected = 1;
    if (experts && (name == "shared_up" || name == "shared_down")) expected = 2;
    if (ds.layers[l].in_block && (name == "ln_1" || (experts && name == "ln_2"))) expected = 1;
    INFO(ds.net.layers[l].name);
    CHECK(reruns[l] == expected);
  }
}

TEST_CASE("parallel.recompute_modules: names, selective only, and modules the model lacks", "[recompute_modules]") {
  const ParallelConfig c =
      parse_parallel({{"recompute", "selective"}, {"recompute_modules", {"moe_act", "layernorm"}}}, 32);
  CHECK(c.recompute_modules == set_of({M::MoeAct, M::LayerNorm}));
  CHECK(parse_parallel({{"recompute", "selective"}, {"recompute_modules", "mlp"}}, 32).recompute_modules ==
        set_of({M::Mlp}));
  require_input_error(
      [] {
        parse_parallel({{"recompute", "selective"}, {"recompute_modules", {"moe", "mhc"}}}, 32);
      },
      "parallel.recompute_modules[1]",
      "\"mhc\" is not one of core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, "
      "shared_experts");
  for (const char* mode : {"none", "full", "ops"}) {
    INFO(mode);
    require_input_error(
        [&] {
          parse_parallel({{"recompute", mode}, {"recompute_modules", {"core_attn"}}}, 32);
        },
        "parallel.recompute_modules", "recompute \"selective\"");
  }
  require_input_error(
      [] {
        parse_parallel({{"recompute", "selective"}, {"recompute_modules", Json::array()}}, 32);
      },
      "parallel.recompute_modules", "list of 1 to");
  // Megatron-Core: "disable moe in recompute_modules when enabling overlap_moe_expert_parallel_comm".
  const Json overlap = {{"gpus", 2}, {"expert", 2}, {"recompute", "selective"}, {"expert_overlap", true}};
  CHECK(parse_parallel(overlap, 32).expert_overlap);
  Json with_moe = overlap;
  with_moe["recompute_modules"] = {"moe_act", "moe"};
  require_input_error([&] { parse_parallel(with_moe, 32); }, "parallel.expert_overlap", "recompute_modules moe");

  auto refuse = [](const Network& net, RecomputeModules modules, const std::string& needle,
                   Precision precision = Precision::BF16, std::optional<Fp8Recipe> recipe = std::nullopt) {
    const ShardedNetwork shard = shard_network(net, 1);
    TrainingConfig tr = megatron(AttentionKernel::Flash, precision);
    tr.fp8_recipe = recipe;
    const StepWork work = step_work(shard.net, 1, kernel_context(tr), Optimizer::Adam);
    require_input_error([&] { saved_activation_bytes(shard, work, Recompute::Selective, 1, 1, modules); },
                        "parallel.recompute_modules", needle);
  };
  const Network dense = llama();
  refuse(dense, set_of({M::MlaUpProj}), "mla_up_proj: the model has no multi-latent attention");
  refuse(dense, set_of({M::MoeAct}), "moe_act: the model has no mixture-of-experts layer");
  refuse(dense, set_of({M::Moe}), "moe: the model has no mixture-of-experts layer");
  refuse(dense, set_of({M::SharedExperts}), "shared_experts: the model's mixture-of-experts layers have no shared");
  refuse(dense, set_of({M::LayerNorm}), "layernorm: the model has no norm before a multi-latent attention");
  const Network mixtral = resolve_model({{"hf_config",
                                          {{"model_type", "mixtral"},
                                           {"hidden_size", 256},
                                           {"intermediate_size", 512},
                                           {"num_attention_heads", 8},
                                           {"num_key_value_heads", 2},
                                           {"num_hidden_layers", 2},
                                           {"num_local_experts", 4},
                                           {"num_experts_per_tok", 2},
                                           {"vocab_size", kVocab},
                                           {"max_position_embeddings", kSeq}}}},
                                        megatron(AttentionKernel::Flash));
  refuse(mixtral, set_of({M::Mlp}), "mlp: the model has no dense MLP");
  refuse(mixtral, set_of({M::SharedExperts}), "no shared experts");
  // Megatron-Core refuses layernorm and moe_act under FP8 with delayed scaling; current scaling is accepted.
  refuse(deepseek(), set_of({M::LayerNorm}), "other than delayed", Precision::FP8, Fp8Recipe::Delayed);
  refuse(deepseek(), set_of({M::MoeAct}), "other than delayed", Precision::FP8);
  const ShardedNetwork shard = shard_network(deepseek(), 1);
  TrainingConfig tr = megatron(AttentionKernel::Flash, Precision::FP8);
  tr.fp8_recipe = Fp8Recipe::Current;
  const StepWork work = step_work(shard.net, 1, kernel_context(tr), Optimizer::Adam);
  const RecomputeModules both = set_of({M::LayerNorm, M::MoeAct});
  const auto fp8 = saved_activation_bytes(shard, work, Recompute::Selective, 1, 1, both);
  const auto fp8_none = saved_activation_bytes(shard, work, Recompute::None, 1);
  CHECK(block_sum(shard, fp8, 1) < block_sum(shard, fp8_none, 1));
}

TEST_CASE("a request with recompute_modules echoes them and trades memory for time", "[recompute_modules][api]") {
  auto run_request = [](const Json& parallel) {
    const Json config = {{"model_type", "deepseek_v3"},
                         {"hidden_size", kH},
                         {"intermediate_size", kI},
                         {"moe_intermediate_size", kIm},
                         {"num_hidden_layers", 3},
                         {"first_k_dense_replace", 1},
                         {"num_attention_heads", kA},
                         {"n_routed_experts", kE},
                         {"num_experts_per_tok", kK},
                         {"n_shared_experts", 1},
                         {"q_lora_rank", kRq},
                         {"kv_lora_rank", kRkv},
                         {"qk_nope_head_dim", kNope},
                         {"qk_rope_head_dim", kRope},
                         {"v_head_dim", kDv},
                         {"vocab_size", kVocab},
                         {"max_position_embeddings", kSeq}};
    const Json r = {{"model", {{"hf_config", config}}},
                    {"training", {{"batch_size", 8}, {"precision", "bf16"}, {"kernels", "megatron"}}},
                    {"hardware", {"h100-sxm"}},
                    {"options", {{"per_layer", false}}},
                    {"parallel", parallel}};
    const Json out = Json::parse(predict_json(r.dump()));
    INFO(out.dump().substr(0, 400));
    REQUIRE(out.contains("results"));
    return out["results"][0];
  };
  const Json plain = run_request({{"gpus", 1}, {"recompute", "selective"}});
  const Json listed = run_request({{"gpus", 1}, {"recompute", "selective"}, {"recompute_modules", {"core_attn"}}});
  const Json modules = run_request(
      {{"gpus", 1}, {"recompute", "selective"}, {"recompute_modules", {"moe", "layernorm", "mla_up_proj"}}});
  CHECK(plain == listed);
  CHECK_FALSE(plain["parallel"].contains("recompute_modules"));
  CHECK(modules["parallel"]["recompute_modules"] == Json({"layernorm", "mla_up_proj", "moe"}));
  CHECK(double(modules["memory"]["activations_gb"]) < double(plain["memory"]["activations_gb"]));
  CHECK(double(modules["step_ms"]) > double(plain["step_ms"]));
}
