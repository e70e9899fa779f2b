// Collectives over a two-level fabric (docs/PREDICTION.md, "Collectives"): which GPUs a group puts in one
// scale-up domain, the ring's bus bandwidth across domains, all-to-all, and the multi-node FSDP property.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "helpers.hpp"
#include "prenet/catalog.hpp"
#include "prenet/parallel.hpp"

using namespace prenet;
using testutil::d;

namespace {

/// An HGX-like fabric: 8 GPUs per domain on `intra` GB/s, each GPU with its own `nic` GB/s network card.
Fabric hgx(double intra = 450, double nic = 50) {
  Fabric f;
  f.intra = Link{"nvlink", intra, 3};
  f.inter = Link{"infiniband", nic, 5};
  f.gpus_per_node = 8;
  return f;
}

ParallelConfig layout(std::int64_t t, std::int64_t c, std::int64_t dp, std::int64_t p, std::int64_t ep = 1) {
  ParallelConfig cfg;
  cfg.tensor = t, cfg.context = c, cfg.data = dp, cfg.pipeline = p, cfg.expert = ep;
  cfg.gpus = t * c * dp * p;
  return cfg;
}

/// Ring all-gather time written out: (n-1)/n of the bytes at `gbs` x 80%, plus (n-1) hops... capped by the tree.
double ring_gather_ms(double bytes, double n, double gbs, double hop_us) {
  const double hops = std::min(2.0 * (n - 1), 2.0 * std::ceil(std::log2(n)));
  return (n - 1) / n * bytes / (gbs * 1e9 * 0.8) * 1e3 + 0.5 * hops * hop_us * 1e-3;
}

}  // namespace

TEST_CASE("groups follow Megatron's tp-cp-dp-pp rank order (experts etp-ep-edp) over scale-up domains",
          "[collectives]") {
  const Fabric f = hgx();
  // 2 nodes: tensor 2 x context 2 x data 4.
  const ParallelConfig cfg = layout(2, 2, 4, 1, 2);
  const Communicator tp = communicator(cfg, f, Group::Tensor);
  CHECK((tp.size == 2 && tp.per_domain == 2 && tp.domains == 1));
  const Communicator cp = communicator(cfg, f, Group::Context);
  CHECK((cp.size == 2 && cp.per_domain == 2 && cp.domains == 1));
  // Data ranks are 4 apart: two per node, over two nodes, four such groups per node.
  const Communicator dp = communicator(cfg, f, Group::Data);
  CHECK((dp.size == 4 && dp.per_domain == 2 && dp.domains == 2 && dp.sharing == 4));
  // Expert groups lay the stage's 16 ranks out again (etp-ep-edp, expert tensor parallel size 1): 2 consecutive
  // ranks (inside a node); the expert-data group the 8 ranks 2 apart, four per node.
  const Communicator ep = communicator(cfg, f, Group::Expert);
  CHECK((ep.size == 2 && ep.per_domain == 2 && ep.domains == 1));
  const Communicator edp = communicator(cfg, f, Group::ExpertData);
  CHECK((edp.size == 8 && edp.per_domain == 4 && edp.domains == 2));
  // Pipeline stages are the slowest dimension: each stage on its own node(s).
  const Communicator pp = communicator(layout(8, 1, 1, 4), f, Group::Pipeline);
  CHECK((pp.size == 4 && pp.per_domain == 1 && pp.domains == 4));
  // A group narrower than a domain on a machine smaller than one domain never leaves it.
  const Communicator small = communicator(layout(1, 1, 4, 1), f, Group::Data);
  CHECK((small.domains == 1 && small.sharing == 1));
}

TEST_CASE("a ring across domains runs at the slower of the domain link and its share of the domain's NICs",
          "[collectives]") {
  const Fabric f = hgx();
  const double bytes = 4e9;
  // Data parallel over 8 nodes with every GPU of a node in the group: the node's 8 NICs carry the ring,
  // 8 x 50 = 400 GB/s, slower than NVLink's 450.
  const Communicator wide = communicator(layout(1, 1, 64, 1), f, Group::Data);
  CHECK(allgather_ms(bytes, wide, f) == Approx(ring_gather_ms(bytes, 64, 400, 5)));
  CHECK(allreduce_ms(bytes, wide, f) == Approx(2 * ring_gather_ms(bytes, 64, 400, 5)));
  // Tensor 8 fills the node: each data group has one GPU per node and its own NIC, 50 GB/s.
  const Communicator thin = communicator(layout(8, 1, 8, 1), f, Group::Data);
  REQUIRE(thin.per_domain == 1);
  CHECK(allgather_ms(bytes, thin, f) == Approx(ring_gather_ms(bytes, 8, 50, 5)));
  // Tensor 2: four GPUs of each group per node, sharing four NICs' worth: 4 x 50 = 200 GB/s.
  const Communicator half = communicator(layout(2, 1, 32, 1), f, Group::Data);
  CHECK(allgather_ms(bytes, half, f) == Approx(ring_gather_ms(bytes, 32, 200, 5)));
  // Inside one node: NVLink.
  const Communicator node = communicator(layout(1, 1, 8, 1), f, Group::Data);
  CHECK(allgather_ms(bytes, node, f) == Approx(ring_gather_ms(bytes, 8, 450, 3)));
  // A wider domain (NVL72) keeps 64 GPUs on NVLink.
  Fabric rack = hgx(900, 50);
  rack.gpus_per_node = 72;
  const Communicator in_rack = communicator(layout(1, 1, 64, 1), rack, Group::Data);
  CHECK(in_rack.domains == 1);
  CHECK(allgather_ms(bytes, in_rack, rack) == Approx(ring_gather_ms(bytes, 64, 900, 3)));
  // One GPU per node (gpus_per_node 1): every hop is a NIC, as before the two-level model.
  Fabric flat = hgx();
  flat.gpus_per_node = 1;
  const Communicator each = communicator(layout(1, 1, 16, 1), flat, Group::Data);
  CHECK(allreduce_ms(bytes, each, flat) == Approx(allreduce_ms(bytes, 16, flat.inter)));
}

TEST_CASE("all-to-all sends the in-domain share over the domain link and the rest through each GPU's NIC",
          "[collectives]") {
  const Fabric f = hgx();
  const double bytes = 1e9;
  // 16 members over 2 nodes: 7/16 of the bytes over NVLink, 8/16 out of the node, concurrently.
  const Communicator c = communicator(layout(1, 1, 16, 1, 16), f, Group::Expert);
  REQUIRE((c.per_domain == 8 && c.domains == 2));
  const double intra = 7.0 / 16 * bytes / (450e9 * 0.8), inter = 8.0 / 16 * bytes / (50e9 * 0.8);
  CHECK(alltoall_ms(bytes, c, f) == Approx(std::max(intra, inter) * 1e3 + 2 * 5e-3));
  const Communicator one = communicator(layout(1, 1, 8, 1, 8), f, Group::Expert);
  CHECK(alltoall_ms(bytes, one, f) == Approx(7.0 / 8 * bytes / (450e9 * 0.8) * 1e3 + 2 * 3e-3));
  CHECK(alltoall_ms(bytes, communicator(layout(1, 1, 8, 1, 1), f, Group::Expert), f) == 0);
}

TEST_CASE("multi-node FSDP: per-GPU throughput falls by no more than the exposed gathers the formula gives",
          "[collectives][property]") {
  // Public FSDP runs keep per-GPU throughput nearly flat from 8 to 512 GPUs. The step of a fixed per-GPU
  // batch under ZeRO-3 is compute + exposed communication, where (docs/PREDICTION.md, "Collectives"):
  //   exposed gathers = max(0, 2m * AG_n(2P) - (F + B)) + AG_n(2 * largest layer)
  //   exposed reduce  = max(RS_n(2P) - B, RS_n(min(2P, bucket)))
  // and AG_n, RS_n are rings at min(domain link, 8 NICs) once the group spans nodes.
  const Fabric f = hgx();
  const double P = 13e9, forward = 300, backward = 600;  // ms per micro-batch, one micro-batch
  auto gather = [&](double bytes, double n) {
    return n <= 8 ? ring_gather_ms(bytes, n, 450, 3) : ring_gather_ms(bytes, n, 400, 5);
  };
  TrainingConfig tr;
  tr.seq_len = 256;
  const Json gpt = {{"model_type", "gpt2"}, {"n_embd", 256},      {"n_head", 4},
                    {"n_layer", 4},         {"vocab_size", 1000}, {"n_positions", 256}};
  ShardedNetwork shard = shard_network(resolve_model({{"hf_config", gpt}}, tr), 1);
  // A 13B-parameter stack of equal layers with compute-heavy timings, so the formula's terms are all visible.
  const std::size_t n_layers = shard.net.layers.size();
  const double per_layer = std::floor(P / d(n_layers));
  for (Layer& layer : shard.net.layers) layer.parameters = static_cast<std::int64_t>(per_layer);
  const double params = per_layer * d(n_layers);
  std::vector<std::array<double, 3>> ms(n_layers, {forward / d(n_layers), backward / d(n_layers), 0.0});
  double previous = 0;
  for (std::int64_t n : {8, 16, 64, 512}) {
    ParallelConfig cfg = layout(1, 1, n, 1);
    cfg.zero_stage = 3;
    const ParallelTiming t = compose_parallel(ms, shard, cfg, f, Precision::BF16);
    const double comm = t.data_ms + t.zero_ms;
    const double gathers =
        std::max(0.0, 2 * gather(2 * params, d(n)) - (forward + backward)) + gather(2 * per_layer, d(n));
    const double reduce =
        std::max(gather(2 * params, d(n)) - backward, gather(std::min(2 * params, kGradientBucketBytes), d(n)));
    INFO("gpus " << n << ": exposed " << comm << " ms, formula " << gathers + reduce << " ms");
    CHECK(comm == Approx(gathers + reduce));
    // Per-GPU throughput of the fixed batch falls by no more than the formula's exposed time.
    const double step = t.step_ms();
    if (previous > 0) CHECK(step - previous <= gathers + reduce);
    previous = step;
  }
  // And the whole step stays within 1% between one node and 64 nodes for this compute-heavy layer set.
  ParallelConfig one = layout(1, 1, 8, 1), many = layout(1, 1, 512, 1);
  one.zero_stage = many.zero_stage = 3;
  const double s8 = compose_parallel(ms, shard, one, f, Precision::BF16).step_ms();
  const double s512 = compose_parallel(ms, shard, many, f, Precision::BF16).step_ms();
  CHECK(s512 <= s8 * 1.01);
}

TEST_CASE("in-network reduction speeds an all-reduce inside one domain only", "[collectives]") {
  Fabric f = hgx();
  f.in_network_reduction = true;
  const double bytes = 4e9;
  const Communicator node = communicator(layout(1, 1, 8, 1), f, Group::Data);
  // NVLS: the ring's bus bandwidth times 480/370 (nccl-tests#212); latency unchanged.
  CHECK(allreduce_ms(bytes, node, f) ==
        Approx(2 * 7.0 / 8 * bytes / (450e9 * 1.30 * 0.8) * 1e3 + std::min(14.0, 6.0) * 3e-3));
  // All-gathers and collectives leaving the domain do not use it.
  CHECK(allgather_ms(bytes, node, f) == Approx(ring_gather_ms(bytes, 8, 450, 3)));
  const Communicator wide = communicator(layout(1, 1, 64, 1), f, Group::Data);
  CHECK(allreduce_ms(bytes, wide, f) == Approx(2 * ring_gather_ms(bytes, 64, 400, 5)));
}

TEST_CASE("expert parallelism folds over context ranks as over data ranks", "[collectives]") {
  const ParallelConfig c = parse_parallel({{"data", 2}, {"expert", 4}, {"context", 2}}, 4);
  CHECK((c.expert == 4 && c.data == 2 && c.context == 2));
  try {
    parse_parallel({{"data", 2}, {"expert", 8}, {"context", 2}}, 4);
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(e.field() == "parallel.expert");
    CHECK(std::string(e.what()).find("tensor x context x data = 1 x 2 x 2 = 4") != std::string::npos);
  }
}
