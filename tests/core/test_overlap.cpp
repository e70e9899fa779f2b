// Communication hidden behind compute as Megatron-Core runs it (docs/PREDICTION.md, "Overlapped communication"):
// parallel.overlap_param_gather (ZeRO 1/2's weight gather behind the first forward), parallel.expert_overlap (the
// expert all-to-alls of merged micro-batches), parallel.tensor_overlap (userbuffers), and Megatron's 16-bit
// gradient accounting (training.state_accounting "megatron_bf16").
#include <catch2/catch.hpp>
#include <string>

#include "helpers.hpp"
#include "parallel/expert.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/memory.hpp"
#include "prenet/parallel.hpp"
#include "small_models.hpp"

using namespace prenet;
using testutil::d;
using testutil::eight_per_node;

namespace {

/// One stage doing `forward` and `backward` ms per micro-batch over 1e9 trained parameters.
StagePlan one_stage(double forward, double backward) {
  StagePlan sp;
  sp.bounds = {0, 1};
  sp.forward = {forward};
  sp.backward = {backward};
  sp.tensor = {0};
  sp.optimizer = {1};
  sp.params = sp.trainable = {1e9};
  sp.largest_param = {1e8};
  sp.busy_total = forward + backward;
  return sp;
}

void require_parse_error(const Json& section, const std::string& field, const std::string& part) {
  try {
    parse_parallel(section, 64);
    FAIL("accepted " << section.dump());
  } catch (const InputError& e) {
    INFO(e.what());
    CHECK(e.field() == field);
    CHECK(std::string(e.what()).find(part) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("overlap: ZeRO 1/2's weight gather runs behind the first micro-batch's forward", "[overlap]") {
  const Fabric f = eight_per_node();
  ParallelConfig cfg;
  cfg.data = cfg.gpus = 16;
  cfg.micro_batches = 4;
  cfg.zero_stage = 1;
  const Communicator dp = communicator(cfg, f, Group::Data);
  const double gather = allgather_ms(1e9 * 2, dp, f), first = allgather_ms(kGradientBucketBytes, dp, f);
  REQUIRE(gather > first);
  const ParallelTiming plain = finish_parallel(one_stage(gather / 2, 1), cfg, f, Precision::BF16);
  CHECK(plain.zero_ms == Approx(gather));
  cfg.overlap_param_gather = true;
  // A forward half as long as the gather hides half of it; one longer than it leaves the first bucket.
  CHECK(finish_parallel(one_stage(gather / 2, 1), cfg, f, Precision::BF16).zero_ms == Approx(gather / 2));
  CHECK(finish_parallel(one_stage(10 * gather, 1), cfg, f, Precision::BF16).zero_ms == Approx(first));
  // Nothing else moves.
  const ParallelTiming hidden = finish_parallel(one_stage(gather / 2, 1), cfg, f, Precision::BF16);
  CHECK(hidden.data_ms == Approx(plain.data_ms));
  CHECK(hidden.forward_ms == Approx(plain.forward_ms));
}

TEST_CASE("overlap: merged micro-batches hide each other's expert all-to-alls", "[overlap]") {
  const Fabric f = eight_per_node();
  ParallelConfig cfg;
  cfg.data = cfg.gpus = 8;
  cfg.expert = 8;
  cfg.micro_batches = 8;
  StagePlan sp = one_stage(2, 4);
  sp.expert = {5};
  sp.expert_params = sp.expert_trainable = {5e8};
  sp.expert_optimizer = {0.5};
  CHECK(finish_parallel(sp, cfg, f, Precision::BF16).expert_ms == Approx(8 * 5.0));
  cfg.expert_overlap = true;
  // Without a pipeline one forward and one backward run alone; the other 7 pairs hide all of it (5 < 2 + 4).
  CHECK(finish_parallel(sp, cfg, f, Precision::BF16).expert_ms == Approx(5.0));
  sp.expert = {10};  // longer than a micro-batch's compute: 10 - 6 sticks out of each pair
  CHECK(finish_parallel(sp, cfg, f, Precision::BF16).expert_ms == Approx(10.0 + 7 * (10.0 - 6.0)));
  // Interleaved pipeline of 4 stages, 2 chunks each, on the first stage: 2(p - 1) + (v - 1)p + 1 = 11 chunk
  // forwards in flight, 5.5 micro-batches, run alone.
  cfg.pipeline = 4;
  cfg.virtual_stages = 2;
  cfg.gpus = 32;
  sp.expert = {5};
  const double alone = (2.0 * 3 + 1 * 4 + 1) / 2;
  CHECK(micro_batches_in_flight(cfg, 0) == Approx(alone));
  CHECK(overlapped_expert_ms(sp, cfg) == Approx(alone * 5.0 + (8 - alone) * 0.0));
  // Never more than without the overlap.
  for (double a2a : {0.5, 3.0, 6.0, 20.0}) {
    sp.expert = {a2a};
    CHECK(overlapped_expert_ms(sp, cfg) <= 8 * a2a + 1e-12);
  }
}

TEST_CASE("overlap: tensor-parallel collectives hide behind their layers' GEMMs", "[overlap]") {
  const Network net = testutil::bf16_gpt2(256, 4, 2, 1000, 128);
  const ShardedNetwork shard = shard_network(net, 2, true);
  const Fabric f = eight_per_node();
  ParallelConfig cfg;
  cfg.tensor = cfg.gpus = 2;
  cfg.sequence_parallel = true;
  cfg.micro_batch_size = 4;
  const std::size_t n = net.layers.size();
  // The collectives each layer runs per micro-batch, written out: count x all-reduce of mbs x bytes x 2.
  const Communicator tp = communicator(cfg, f, Group::Tensor);
  std::vector<double> collective(n, 0.0);
  double all = 0;
  for (std::size_t l = 0; l < n; ++l) {
    const ShardLayer& sl = shard.layers[l];
    const int count = sl.forward_allreduces + sl.backward_allreduces;
    if (count > 0) collective[l] = count * allreduce_ms(4 * sl.allreduce_bytes_per_sample * 2, tp, f);
    all += collective[l];
  }
  REQUIRE(all > 0);
  // Each layer computes as long as a third of its collectives in forward and a third in backward.
  std::vector<std::array<double, 3>> ms(n);
  for (std::size_t l = 0; l < n; ++l) ms[l] = {collective[l] / 3, collective[l] / 3, 0.0};
  CHECK(plan_stages(ms, shard, cfg, f, Precision::BF16).tensor[0] == Approx(all));
  cfg.tensor_overlap = true;
  CHECK(plan_stages(ms, shard, cfg, f, Precision::BF16).tensor[0] == Approx(all / 3));
  for (auto& m : ms) m = {1e3, 1e3, 0.0};  // long GEMMs hide everything
  CHECK(plan_stages(ms, shard, cfg, f, Precision::BF16).tensor[0] == 0);
}

TEST_CASE("overlap: the switches are refused where Megatron-Core cannot run them", "[overlap][errors]") {
  require_parse_error({{"data", 8}, {"overlap_param_gather", true}}, "parallel.overlap_param_gather",
                      "zero_stage is 0");
  require_parse_error({{"data", 8}, {"zero_stage", 3}, {"overlap_param_gather", true}}, "parallel.overlap_param_gather",
                      "prefetched already");
  require_parse_error({{"data", 8}, {"expert_overlap", true}}, "parallel.expert_overlap", "needs expert > 1");
  require_parse_error({{"data", 8}, {"expert", 4}, {"recompute", "full"}, {"expert_overlap", true}},
                      "parallel.expert_overlap", "full recomputation");
  require_parse_error({{"data", 4}, {"pipeline", 2}, {"expert", 4}, {"expert_overlap", true}},
                      "parallel.expert_overlap", "virtual_stages > 1");
  require_parse_error({{"data", 8}, {"tensor_overlap", true}}, "parallel.tensor_overlap", "tensor > 1");
  require_parse_error({{"data", 4}, {"tensor", 2}, {"tensor_overlap", true}}, "parallel.tensor_overlap",
                      "sequence_parallel");
  const ParallelConfig ok = parse_parallel({{"data", 4},
                                            {"tensor", 2},
                                            {"sequence_parallel", true},
                                            {"zero_stage", 1},
                                            {"overlap_param_gather", true},
                                            {"tensor_overlap", true}},
                                           64);
  CHECK((ok.overlap_param_gather && ok.tensor_overlap && !ok.expert_overlap));
}

TEST_CASE("overlap: the switches are echoed only when on, and never slow a step", "[overlap]") {
  Json request = {{"model", {{"hf_config", testutil::gpt_config()}}},
                  {"training", {{"batch_size", 32}, {"seq_len", 256}, {"precision", "bf16"}, {"optimizer", "adamw"}}},
                  {"hardware", {"h100-sxm"}},
                  {"options", {{"per_layer", false}}},
                  {"parallel", {{"data", 8}, {"tensor", 2}, {"sequence_parallel", true}, {"zero_stage", 1}}}};
  const Json plain = Json::parse(predict_json(request.dump()));
  REQUIRE_FALSE(plain.contains("error"));
  CHECK_FALSE(plain["results"][0]["parallel"].contains("tensor_overlap"));
  request["parallel"]["overlap_param_gather"] = true;
  request["parallel"]["tensor_overlap"] = true;
  const Json overlapped = Json::parse(predict_json(request.dump()));
  REQUIRE_FALSE(overlapped.contains("error"));
  const Json& p = overlapped["results"][0]["parallel"];
  CHECK(p["tensor_overlap"] == true);
  CHECK(p["overlap_param_gather"] == true);
  CHECK(p["communication_ms"]["tensor"].get<double>() <=
        plain["results"][0]["parallel"]["communication_ms"]["tensor"].get<double>());
  CHECK(p["communication_ms"]["zero"].get<double>() <=
        plain["results"][0]["parallel"]["communication_ms"]["zero"].get<double>());
  CHECK(overlapped["results"][0]["step_ms"].get<double>() <= plain["results"][0]["step_ms"].get<double>());
}

TEST_CASE("state accounting megatron_bf16: Megatron with 16-bit gradient reduction, 2 + 4 + 2 bytes",
          "[overlap][memory]") {
  TrainingConfig t = testutil::trained_with(Precision::BF16, Optimizer::AdamW);
  t.state_accounting = StateAccounting::MegatronBf16;
  const StateBytes b = state_bytes(t);
  CHECK(b.weights16 == 2.0);
  CHECK(b.master == 4.0);
  CHECK(b.gradients == 2.0);
  t.state_accounting = StateAccounting::Megatron;
  CHECK(state_bytes(t).gradients == 4.0);
  t.state_accounting = StateAccounting::MegatronBf16;
  t.master_weights = MasterWeights::BF16;
  try {
    check_state_accounting(t, nullptr);
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(e.field() == "training.state_accounting");
    CHECK(std::string(e.what()).find("main weights") != std::string::npos);
  }
}

TEST_CASE("overlap: a merged pair hides each all-to-all behind its own slot of the other micro-batch", "[overlap]") {
  // Tiny Mixtral (2 blocks of attention and 8 experts top-2), experts over 4 GPUs.
  TrainingConfig tr = testutil::trained_with(Precision::BF16, Optimizer::AdamW);
  tr.seq_len = 64;
  const Json config = {{"model_type", "mixtral"},       {"hidden_size", 256},       {"intermediate_size", 512},
                       {"num_hidden_layers", 2},        {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                       {"num_local_experts", 8},        {"num_experts_per_tok", 2}, {"vocab_size", 1000},
                       {"max_position_embeddings", 512}};
  const Network net = resolve_model({{"hf_config", config}}, tr);
  ShardedNetwork shard = shard_network(net, 1);
  shard_experts(shard, 4, kernel_context(tr));
  ParallelConfig cfg;
  cfg.data = cfg.gpus = cfg.expert = 4;
  const Fabric f = eight_per_node();
  const Communicator ep = communicator(cfg, f, Group::Expert);
  const std::size_t n = net.layers.size();
  // Per block, written out: the attention side and the MLP side (expert layers) at 1 ms forward, 2 backward per
  // layer, scaled by `k`; the block's dispatch and combine at 2 bytes per element for one sample.
  auto expected = [&](double k) {
    double total = 0;
    for (int b = 0; b < 2; ++b) {
      double attn_f = 0, attn_b = 0, mlp_f = 0, mlp_b = 0, dispatch = 0, combine = 0;
      for (std::size_t l = 0; l < n; ++l) {
        const ShardLayer& sl = shard.layers[l];
        if (!sl.in_block || sl.block != b) continue;
        (sl.expert_parameters ? mlp_f : attn_f) += k;
        (sl.expert_parameters ? mlp_b : attn_b) += 2 * k;
        dispatch += alltoall_ms(2 * sl.dispatch_elements_per_sample, ep, f);
        combine += alltoall_ms(2 * sl.combine_elements_per_sample, ep, f);
      }
      REQUIRE(dispatch > 0);
      total += std::max(0.0, combine - attn_f) + std::max(0.0, 2 * dispatch - (mlp_b + mlp_f)) +
               std::max(0.0, combine - attn_b);
    }
    return total;
  };
  for (double k : {0.0, 1e-4, 1e-3, 1.0}) {
    std::vector<std::array<double, 3>> ms(n, {k, 2 * k, 0.0});
    INFO("k " << k);
    CHECK(paired_expert_exposure(shard, ms, 2, ep, f, ExpertDispatch::AllToAll, 0, n) ==
          Approx(expected(k)).margin(1e-12));
  }
  // Through plan_stages: the stage's pairs as the function gives them, only with the overlap.
  std::vector<std::array<double, 3>> ms(n, {1e-4, 2e-4, 0.0});
  cfg.micro_batch_size = 1;
  CHECK(plan_stages(ms, shard, cfg, f, Precision::BF16).expert_paired.empty());
  cfg.expert_overlap = true;
  const StagePlan sp = plan_stages(ms, shard, cfg, f, Precision::BF16);
  REQUIRE(sp.expert_paired.size() == 1);
  CHECK(sp.expert_paired[0] == Approx(paired_expert_exposure(shard, ms, 2, ep, f, ExpertDispatch::AllToAll, 0, n)));
  // Never more than the pair's all-to-alls, never less than the bulk bound.
  CHECK(sp.expert_paired[0] <= sp.expert[0] + 1e-12);
  CHECK(sp.expert_paired[0] >= std::max(0.0, sp.expert[0] - (sp.forward[0] + sp.backward[0])) - 1e-12);
}
