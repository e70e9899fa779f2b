// A mixture of experts' grouped GEMMs (Kernel::grouped) are timed by the learned path as one expert's GEMM
// in the GEMM model times the local experts (docs/PREDICTION.md §6), not as a batched GEMM of attention's kind.
#include <catch2/catch.hpp>
#include <cstddef>

#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
#include "prenet/hardware.hpp"
#include "prenet/learned.hpp"

using namespace prenet;

namespace {

/// A two-layer Qwen3-MoE of 16 experts, top-4, widths 128/64.
Network tiny_qwen3_moe() {
  TrainingConfig tr;
  tr.seq_len = 128;
  const Json config = {{"model_type", "qwen3_moe"}, {"hidden_size", 128},
                       {"intermediate_size", 256},  {"moe_intermediate_size", 64},
                       {"num_hidden_layers", 2},    {"num_attention_heads", 4},
                       {"num_key_value_heads", 2},  {"head_dim", 32},
                       {"num_experts", 16},         {"num_experts_per_tok", 4},
                       {"vocab_size", 1000},        {"max_position_embeddings", 512},
                       {"decoder_sparse_step", 1},  {"mlp_only_layers", Json::array()}};
  return resolve_model({{"hf_config", config}}, tr);
}

}  // namespace

TEST_CASE("expert GEMMs are grouped, timed as one expert's GEMM times the local experts", "[learned][grouped]") {
  const Network net = tiny_qwen3_moe();
  const StepWork work = step_work(net, 4, KernelContext(Precision::BF16, AttentionKernel::Eager), Optimizer::AdamW);
  const int gemm = learned_class_for(KernelClass::Gemm);
  REQUIRE(gemm >= 0);
  const LearnedBatch batch =
      learned_batch(work, {*find_hardware("h100-sxm"), *find_hardware("tpu-v5p")}, Precision::BF16);
  std::size_t grouped = 0, batched = 0;
  for (std::size_t i = 0; i < work.kernels.size(); ++i) {
    const Kernel& k = work.kernels[i];
    if (k.cls == KernelClass::BatchedGemm && !k.grouped) {
      ++batched;  // attention's scores and P V stay batched GEMMs
      CHECK(batch.products[0][i] == 1.0);
      continue;
    }
    if (!k.grouped) {
      CHECK(batch.products[0][i] == 1.0);
      continue;
    }
    ++grouped;
    CHECK(k.cls == KernelClass::BatchedGemm);
    CHECK(k.batch == 16);  // every expert is local without expert parallelism
    CHECK(batch.kernel_rows[0][i].first == gemm);
    CHECK(batch.slice_rows[0][i].first == -1);
    CHECK(batch.products[0][i] == 16);
    // A TPU is timed by the roofline: the grouped kernel whole, counted once.
    CHECK(batch.kernel_rows[1][i].first == -1);
    CHECK(batch.products[1][i] == 1.0);
  }
  // Per MoE layer: up and down, forward, input gradient and weight gradient.
  CHECK(grouped == 2 * 2 * 3);
  CHECK(batched > 0);
}
