#include "parallel/memory_advice.hpp"

#include <optional>
#include <utility>

#include "response/json_text.hpp"

namespace prenet {
namespace {

/// A changed layout and the change as the advice names it.
struct Candidate {
  ParallelConfig cfg;
  Json change;
};

/// The changes worth trying, in groups tried in order; within a group only the first that fits is advised.
std::vector<std::vector<Candidate>> candidate_groups(const ParallelConfig& cfg, std::size_t layers) {
  std::vector<std::vector<Candidate>> groups(6);
  auto with = [&cfg](auto&& set) {
    ParallelConfig c = cfg;
    set(c);
    return c;
  };
  if (cfg.tensor > 1 && !cfg.sequence_parallel) {
    groups[0].push_back({with([](ParallelConfig& c) { c.sequence_parallel = true; }), {{"sequence_parallel", true}}});
  }
  // Modes by what they keep, most first: none, selective, ops, torchtitan_op, full.
  auto keeps_less = [](Recompute r) {
    switch (r) {
      case Recompute::None: return 0;
      case Recompute::Selective: return 1;
      case Recompute::Ops: return 2;
      case Recompute::TorchtitanOp: return 3;
      case Recompute::Full: return 4;
    }
    return 0;
  };
  for (Recompute r : {Recompute::Selective, Recompute::Full}) {
    if (keeps_less(r) <= keeps_less(cfg.recompute)) continue;
    groups[1].push_back({with([r](ParallelConfig& c) { c.recompute = r; }), {{"recompute", to_string(r)}}});
  }
  for (int z = cfg.zero_stage + 1; cfg.data > 1 && z <= 3; ++z) {
    groups[2].push_back({with([z](ParallelConfig& c) { c.zero_stage = z; }), {{"zero_stage", z}}});
  }
  for (std::int64_t mbs = cfg.micro_batch_size / 2; mbs >= 1 && cfg.micro_batch_size % mbs == 0; mbs /= 2) {
    const std::int64_t m = cfg.micro_batches * (cfg.micro_batch_size / mbs);
    groups[3].push_back({with([mbs, m](ParallelConfig& c) {
                           c.micro_batch_size = mbs;
                           c.micro_batches = m;
                         }),
                         {{"micro_batch_size", mbs}, {"micro_batches", m}}});
    if (mbs == 1) break;
  }
  for (std::int64_t t = cfg.tensor * 2; t <= 64; t *= 2) {
    ParallelConfig c = with([t](ParallelConfig& x) {
      x.tensor = t;
      x.gpus = x.data * x.tensor * x.context * x.pipeline;
    });
    groups[4].push_back({c, {{"tensor", t}, {"gpus", c.gpus}}});
  }
  for (std::int64_t pp = cfg.pipeline * 2; pp <= static_cast<std::int64_t>(layers) && pp <= 1024; pp *= 2) {
    ParallelConfig c = with([pp](ParallelConfig& x) {
      x.pipeline = pp;
      x.gpus = x.data * x.tensor * x.context * x.pipeline;
    });
    groups[5].push_back({c, {{"pipeline", pp}, {"gpus", c.gpus}}});
  }
  return groups;
}

/// Memory of the fullest GPU of `c`; nullopt when the network cannot be laid out that way.
std::optional<MemoryEstimate> memory_of(LayoutEvaluator& layouts, const ParallelConfig& c,
                                        const std::vector<double>& layer_cost) {
  try {
    check_virtual_stages(c);  // a doubled pipeline must still divide an interleaved schedule's micro-batches
    const ShardedNetwork* shard = layouts.shard(c);
    if (!shard) return std::nullopt;
    const std::size_t n = shard->net.layers.size();
    std::vector<double> cost = layer_cost;
    if (!layouts.reused(c)) {
      const Timing& t = layouts.roofline(c);
      for (std::size_t l = 0; l < n; ++l) cost[l] = t.layers[l].ms[0] + t.layers[l].ms[1];
    }
    return layouts.fullest(c, chunk_bounds(cost, *shard, c));
  } catch (const InputError&) {
    return std::nullopt;
  }
}

}  // namespace

Json memory_advice(LayoutEvaluator& layouts, const ParallelConfig& cfg, double memory_gb,
                   const std::vector<double>& layer_cost) {
  Json advice = Json::array();
  for (const std::vector<Candidate>& group : candidate_groups(cfg, layer_cost.size())) {
    for (const Candidate& c : group) {
      std::optional<MemoryEstimate> m = memory_of(layouts, c.cfg, layer_cost);
      if (!m || m->total_gb() > memory_gb) continue;
      advice.push_back({{"change", c.change}, {"gpus", c.cfg.gpus}, {"memory_gb", round6(m->total_gb())}});
      break;
    }
  }
  return advice;
}

}  // namespace prenet
