// parallel.expert_dispatch (docs/PREDICTION.md, "Mixture of experts"): DeepEP's and HybridEP's hierarchical
// dispatch sends one copy of a token per remote domain it reaches and fans it out inside the domain, where NCCL's
// flat all-to-all sends every routed copy through the sender's network card.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "helpers.hpp"
#include "parallel/expert.hpp"
#include "prenet/api.hpp"
#include "prenet/parallel.hpp"

using namespace prenet;
using testutil::d;
using testutil::eight_per_node;

namespace {

/// C(n, k) as a double (small k).
double choose(double n, int k) {
  double c = 1;
  for (int i = 0; i < k; ++i) c *= (n - i) / (i + 1);
  return c;
}

/// A small DeepSeek-style MoE (64 experts, top 8) trained on `gpus` GPUs with expert parallelism over all of them.
Json moe_request(int gpus, const char* dispatch) {
  const Json config = {{"model_type", "mixtral"},        {"hidden_size", 512},       {"intermediate_size", 256},
                       {"num_hidden_layers", 2},         {"num_attention_heads", 8}, {"num_key_value_heads", 8},
                       {"num_local_experts", 64},        {"num_experts_per_tok", 8}, {"vocab_size", 1000},
                       {"max_position_embeddings", 4096}};
  Json parallel = {{"data", gpus}, {"expert", gpus}};
  if (dispatch != nullptr) parallel["expert_dispatch"] = dispatch;
  return {{"model", {{"hf_config", config}}},
          {"training", {{"batch_size", gpus}, {"seq_len", 4096}, {"precision", "bf16"}, {"optimizer", "adamw"}}},
          {"hardware", {"h100-sxm"}},
          {"options", {{"per_layer", false}}},
          {"parallel", parallel}};
}

}  // namespace

TEST_CASE("expert dispatch: remote domains a token reaches, exact against the hypergeometric miss",
          "[expert_dispatch]") {
  // 256 experts over 4 domains of 64, top 8: each of the 3 remote domains is missed with C(192, 8) / C(256, 8).
  const double miss = choose(192, 8) / choose(256, 8);
  CHECK(remote_domains_per_token(8, 256, 4) == Approx(3 * (1 - miss)).epsilon(1e-12));
  CHECK(remote_domains_per_token(8, 256, 1) == 0);
  // One expert per token: it lands outside the sender's domain with probability (N - 1) / N.
  CHECK(remote_domains_per_token(1, 64, 8) == Approx(7.0 / 8.0));
  // Never more remote domains than remote copies (k (N - 1) / N), never more than N - 1.
  for (int k : {1, 2, 4, 8, 16}) {
    for (std::int64_t n : {2, 4, 8, 32}) {
      const double r = remote_domains_per_token(k, 256, n);
      INFO("k " << k << " domains " << n);
      CHECK(r <= k * d(n - 1) / d(n) + 1e-12);
      CHECK(r <= d(n - 1) + 1e-12);
    }
  }
}

TEST_CASE("expert dispatch: hierarchical all-to-all, exact against its formula", "[expert_dispatch]") {
  const Fabric f = eight_per_node();
  ParallelConfig cfg;
  cfg.data = cfg.gpus = cfg.expert = 32;
  const Communicator ep = communicator(cfg, f, Group::Expert);
  REQUIRE(ep.size == 32);
  REQUIRE(ep.per_domain == 8);
  REQUIRE(ep.domains == 4);
  const double bytes = 1e9, k = 8, experts = 256;
  const double inter = bytes / k * remote_domains_per_token(k, experts, 4);
  const double intra = bytes * (7.0 / 32.0 + 24.0 / 32.0 * 7.0 / 8.0);
  const double hops = hierarchical_alltoall_ms(1e-30, k, experts, ep, f);  // the latency alone
  CHECK(hierarchical_alltoall_ms(bytes, k, experts, ep, f) ==
        Approx(std::max(intra / (450e9 * kLinkEfficiency), inter / (50e9 * kLinkEfficiency)) * 1e3 + hops));
  // The network card carries 2.7 copies of a token instead of 6: the step's bottleneck, so less than half the time.
  CHECK(hierarchical_alltoall_ms(bytes, k, experts, ep, f) < 0.5 * alltoall_ms(bytes, ep, f));
  // Inside one domain nothing crosses the network: the same as the flat all-to-all.
  cfg.data = cfg.gpus = cfg.expert = 8;
  const Communicator node = communicator(cfg, f, Group::Expert);
  REQUIRE(node.domains == 1);
  CHECK(hierarchical_alltoall_ms(bytes, k, experts, node, f) == Approx(alltoall_ms(bytes, node, f)));
}

TEST_CASE("expert dispatch: parsed, refused without experts, echoed, and it only moves the expert all-to-alls",
          "[expert_dispatch]") {
  CHECK(parse_parallel({{"data", 8}, {"expert", 8}}, 64).expert_dispatch == ExpertDispatch::AllToAll);
  CHECK(parse_parallel({{"data", 8}, {"expert", 8}, {"expert_dispatch", "hierarchical"}}, 64).expert_dispatch ==
        ExpertDispatch::Hierarchical);
  CHECK(parse_parallel({{"data", 8}, {"expert_dispatch", "alltoall"}}, 64).expert_dispatch == ExpertDispatch::AllToAll);
  for (const Json& bad : {Json{{"data", 8}, {"expert_dispatch", "hierarchical"}},
                          Json{{"data", 8}, {"expert", 8}, {"expert_dispatch", "deep"}},
                          Json{{"data", 8}, {"expert", 8}, {"expert_dispatch", true}}}) {
    try {
      parse_parallel(bad, 64);
      FAIL("accepted " << bad.dump());
    } catch (const InputError& e) {
      INFO(e.what());
      CHECK(e.field() == "parallel.expert_dispatch");
    }
  }
  // 32 GPUs over 4 nodes: the expert communication falls, nothing else moves; on one node nothing changes.
  const Json flat = Json::parse(predict_json(moe_request(32, nullptr).dump()));
  const Json hier = Json::parse(predict_json(moe_request(32, "hierarchical").dump()));
  REQUIRE_FALSE(flat.contains("error"));
  REQUIRE_FALSE(hier.contains("error"));
  const Json &pf = flat["results"][0]["parallel"], &ph = hier["results"][0]["parallel"];
  CHECK_FALSE(pf.contains("expert_dispatch"));
  CHECK(ph["expert_dispatch"] == "hierarchical");
  CHECK(ph["communication_ms"]["expert"].get<double>() < 0.7 * pf["communication_ms"]["expert"].get<double>());
  CHECK(ph["communication_ms"]["data"].get<double>() == Approx(pf["communication_ms"]["data"].get<double>()));
  CHECK(ph["compute_ms"].get<double>() == Approx(pf["compute_ms"].get<double>()));
  const Json one_flat = Json::parse(predict_json(moe_request(8, nullptr).dump()));
  const Json one_hier = Json::parse(predict_json(moe_request(8, "hierarchical").dump()));
  CHECK(one_hier["results"][0]["step_ms"].get<double>() ==
        Approx(one_flat["results"][0]["step_ms"].get<double>()).epsilon(1e-9));
}
