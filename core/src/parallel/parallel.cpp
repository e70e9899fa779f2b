#include "prenet/parallel.hpp"

#include <algorithm>
#include <cmath>

#include "layers/layer_kind.hpp"
#include "parallel/context.hpp"
#include "request/options.hpp"

namespace prenet {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

/// Integer parallel field `key` as its row validates it; nullopt when absent.
std::optional<std::int64_t> opt_int(const Json& obj, const char* key) {
  std::optional<OptionValue> v = read_parallel_field(obj, key, "parallel");
  return v ? std::optional<std::int64_t>(v->integer) : std::nullopt;
}

/// Link override `key` ("intra_node"): its numbers as their rows validate them; "kind" is a free string.
LinkOverride parse_link(const Json& obj, const char* key) {
  LinkOverride l;
  if (!obj.contains(key) || obj[key].is_null()) return l;
  const std::string path = join("parallel", key);
  const Json& o = require_object(obj[key], path);
  reject_unknown_keys(o, path, {"kind", "bandwidth_gbs", "latency_us"});
  if (o.contains("kind") && !o["kind"].is_null()) l.kind = require_string(o, "kind", path);
  if (auto v = read_parallel_field(o, std::string(key) + ".bandwidth_gbs", path)) l.bandwidth_gbs = v->number;
  if (auto v = read_parallel_field(o, std::string(key) + ".latency_us", path)) l.latency_us = v->number;
  return l;
}

/// The members the section accepts: the rows' top-level keys in table order ("intra_node" once for its fields).
std::vector<std::string> parallel_keys() {
  std::vector<std::string> keys;
  for (const auto& o : parallel_options()) {
    std::string key = std::string(o.key).substr(0, std::string(o.key).find('.'));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  return keys;
}

std::string str(std::int64_t v) { return std::to_string(v); }

/// Link from the catalogue record `rec[key]` ({kind, bandwidth_gbs, latency_us}); `halve` turns the
/// catalogue's bidirectional intra-node figure into one direction.
Link catalogue_link(const Json& rec, const char* key, bool halve, const Link& fallback) {
  if (!rec.is_object() || !rec.contains(key) || !rec[key].is_object()) return fallback;
  const Json& o = rec[key];
  Link l = fallback;
  if (o.contains("kind") && o["kind"].is_string()) l.kind = o["kind"].get<std::string>();
  if (o.contains("bandwidth_gbs") && o["bandwidth_gbs"].is_number()) {
    l.bandwidth_gbs = o["bandwidth_gbs"].get<double>() * (halve ? 0.5 : 1.0);
  }
  if (o.contains("latency_us") && o["latency_us"].is_number()) l.latency_us = o["latency_us"].get<double>();
  return l;
}

void apply(Link& l, const LinkOverride& o) {
  if (o.kind) l.kind = *o.kind;
  if (o.bandwidth_gbs) l.bandwidth_gbs = *o.bandwidth_gbs;
  if (o.latency_us) l.latency_us = *o.latency_us;
}

/// Hops of latency a collective pays over n members: a ring's 2(n-1), or a tree's 2 log2 n once NCCL
/// switches to trees for large groups (whichever is fewer).
double latency_hops(std::int64_t n) {
  double ring = 2.0 * d(n - 1);
  double tree = 2.0 * std::ceil(std::log2(d(n)));
  return std::min(ring, tree);
}

/// Sequence parallelism over `t` GPUs (Korthikanti et al. 2022): the replicated token-wise layers whose
/// leading dimension is a sequence that the tensor-parallel layers read get 1/t of it; the tensor-
/// parallel layers keep their shapes (all-gather before, reduce-scatter after, the same traffic as the
/// all-reduce they replace) but save and hand on only 1/t of the sequence. Sequences are the leading
/// dimensions of the tensor-parallel layers' inputs of rank >= 2.
void split_sequence(ShardedNetwork& s, std::int64_t t, const std::vector<unsigned>& roles) {
  const std::size_t n = s.net.layers.size();
  std::vector<std::int64_t> sequences;
  for (std::size_t l = 0; l < n; ++l) {
    const Shape& in = s.net.layers[l].input_shapes.front();
    if ((roles[l] & (kGathersInput | kScattersOutput)) && in.size() >= 2) sequences.push_back(in[0]);
  }
  auto is_sequence = [&](const Shape& shape) {
    return shape.size() >= 2 && std::find(sequences.begin(), sequences.end(), shape[0]) != sequences.end();
  };
  for (std::size_t l = 0; l < n; ++l) {
    Layer& L = s.net.layers[l];
    ShardLayer& sl = s.layers[l];
    if (roles[l] & kGathersInput && is_sequence(L.input_shapes.front())) sl.saved_input_split = t;
    if (roles[l] & kScattersOutput && is_sequence(L.output_shape)) sl.output_split = t;
    if (roles[l] != 0 || !kind_of(L.type).token_wise() || !is_sequence(L.output_shape)) continue;
    const std::int64_t seq = L.output_shape[0];
    if (seq % t != 0) {
      throw InputError("parallel.sequence_parallel",
                       "tensor degree " + str(t) + " does not divide the sequence of " + str(seq) +
                           " positions of layer \"" + printable(L.name) +
                           "\"; turn sequence_parallel off or pick a tensor degree that divides it");
    }
    for (Shape& in : L.input_shapes) {
      if (!in.empty() && in[0] == seq) in[0] /= t;
    }
    L.output_shape[0] /= t;
    sl.sequence_split = true;
  }
}

}  // namespace

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
  }
  return "none";
}

ParallelConfig parse_parallel(const Json& section, std::optional<std::int64_t> batch) {
  const std::string path = "parallel";
  const Json& p = require_object(section, path);
  static const std::vector<std::string> accepted = parallel_keys();
  reject_unknown_keys(p, path, accepted);
  ParallelConfig c;
  auto gpus = opt_int(p, "gpus");
  auto data = opt_int(p, "data");
  auto mbs = opt_int(p, "micro_batch_size");
  auto mb = opt_int(p, "micro_batches");
  c.tensor = opt_int(p, "tensor").value_or(1);
  c.pipeline = opt_int(p, "pipeline").value_or(1);
  c.context = opt_int(p, "context").value_or(1);
  // One model replica: tensor x context x pipeline GPUs (context parallelism splits each sequence, not the batch).
  const std::int64_t tp = c.tensor * c.context * c.pipeline;
  if (data) {
    c.data = *data;
  } else if (gpus) {
    if (*gpus % tp != 0) {
      throw InputError("parallel.gpus", str(*gpus) + " GPUs do not split into tensor x context x pipeline = " +
                                            str(tp) + "-GPU model replicas; give a multiple of " + str(tp));
    }
    c.data = *gpus / tp;
  } else if (batch && mbs && mb) {
    if (*batch % (*mbs * *mb) != 0) {
      throw InputError("parallel.micro_batch_size",
                       "training.batch_size " + str(*batch) +
                           " is not a multiple of micro_batch_size x micro_batches = " + str(*mbs * *mb));
    }
    c.data = *batch / (*mbs * *mb);
  }
  if (c.data * tp > kMaxGpus) throw InputError("parallel.data", "at most " + str(kMaxGpus) + " GPUs in all");
  c.gpus = c.data * tp;
  if (gpus && *gpus != c.gpus) {
    throw InputError("parallel.gpus", str(*gpus) + " GPUs but data x tensor x context x pipeline = " + str(c.data) +
                                          " x " + str(c.tensor) + " x " + str(c.context) + " x " + str(c.pipeline) +
                                          " = " + str(c.gpus));
  }
  // The global batch: data x micro_batch_size x micro_batches, whichever part is missing is derived.
  if (mbs && mb) {
    std::int64_t global = c.data * *mbs * *mb;
    if (batch && *batch != global) {
      throw InputError("parallel.micro_batch_size", "data x micro_batch_size x micro_batches = " + str(c.data) + " x " +
                                                        str(*mbs) + " x " + str(*mb) + " = " + str(global) +
                                                        " but training.batch_size is " + str(*batch));
    }
    c.micro_batch_size = *mbs;
    c.micro_batches = *mb;
  } else {
    std::int64_t global = batch.value_or(32);
    if (mbs) {
      if (global % (c.data * *mbs) != 0) {
        throw InputError("parallel.micro_batch_size",
                         "training.batch_size " + str(global) +
                             " is not a multiple of data x micro_batch_size = " + str(c.data * *mbs));
      }
      c.micro_batch_size = *mbs;
      c.micro_batches = global / (c.data * *mbs);
    } else {
      std::int64_t m = mb.value_or(1);
      if (global % (c.data * m) != 0) {
        throw InputError(mb ? "parallel.micro_batches" : "parallel.data",
                         "training.batch_size " + str(global) +
                             " does not split evenly over data x micro_batches = " + str(c.data * m));
      }
      c.micro_batches = m;
      c.micro_batch_size = global / (c.data * m);
    }
  }
  if (c.micro_batch_size * c.micro_batches * c.data > (std::int64_t{1} << 40)) {
    throw InputError("parallel.micro_batches", "the global batch is too large");
  }
  auto zero_stage = opt_int(p, "zero_stage");
  c.zero_stage = static_cast<int>(zero_stage.value_or(0));
  auto fsdp = read_parallel_field(p, "fsdp", path);
  if (fsdp && fsdp->boolean) {
    if (zero_stage && c.zero_stage != 3) {
      throw InputError("parallel.fsdp", "fsdp is ZeRO stage 3; it contradicts zero_stage " + str(c.zero_stage));
    }
    c.zero_stage = 3;
  }
  auto sequence_parallel = read_parallel_field(p, "sequence_parallel", path);
  c.sequence_parallel = sequence_parallel && sequence_parallel->boolean;
  // The row lists the modes in the enum's order.
  auto recompute = read_parallel_field(p, "recompute", path);
  c.recompute = recompute ? static_cast<Recompute>(recompute->choice) : Recompute::None;
  c.gpus_per_node = opt_int(p, "gpus_per_node").value_or(0);
  c.intra_node = parse_link(p, "intra_node");
  c.inter_node = parse_link(p, "inter_node");
  return c;
}

Fabric resolve_fabric(const Accelerator& acc, const ParallelConfig& cfg) {
  // Custom accelerators carry no fabric: a PCIe 4.0 x16 server of 8 with 25 Gb/s Ethernet per GPU.
  Fabric f;
  f.intra = catalogue_link(acc.record, "interconnect", true, Link{"pcie4", 32, 5});
  f.inter = catalogue_link(acc.record, "inter_node", false, Link{"ethernet", 3.125, 10});
  if (acc.record.is_object() && acc.record.contains("interconnect") && acc.record["interconnect"].is_object()) {
    const Json& ic = acc.record["interconnect"];
    if (ic.contains("gpus_per_node") && ic["gpus_per_node"].is_number_integer()) {
      f.gpus_per_node = ic["gpus_per_node"].get<std::int64_t>();
    }
  }
  if (acc.record.is_object() && acc.record.contains("interconnect") && acc.record["interconnect"].is_object()) {
    const Json& ic = acc.record["interconnect"];
    // A scale-up domain wider than a node (NVL72: 18 trays of 4 GPUs on one NVLink fabric).
    if (ic.contains("domain_size") && ic["domain_size"].is_number_integer()) {
      f.gpus_per_node = ic["domain_size"].get<std::int64_t>();
    }
    if (ic.contains("in_network_reduction") && ic["in_network_reduction"].is_boolean()) {
      f.in_network_reduction = ic["in_network_reduction"].get<bool>();
    }
  }
  apply(f.intra, cfg.intra_node);
  apply(f.inter, cfg.inter_node);
  if (cfg.gpus_per_node > 0) f.gpus_per_node = cfg.gpus_per_node;
  return f;
}

Communicator communicator(const ParallelConfig& cfg, const Fabric& fabric, Group group) {
  // Size and rank stride of one group under the tp-cp-ep-dp-pp order.
  const std::int64_t t = cfg.tensor, c = cfg.context, dp = cfg.data, ep = std::max<std::int64_t>(cfg.expert, 1);
  std::int64_t size = 1, stride = 1;
  switch (group) {
    case Group::Tensor: size = t, stride = 1; break;
    case Group::Context: size = c, stride = t; break;
    case Group::Data: size = dp, stride = t * c; break;
    case Group::Expert: size = ep, stride = t * c; break;
    case Group::ExpertData: size = dp / ep, stride = t * c * ep; break;
    case Group::Pipeline: size = cfg.pipeline, stride = t * c * dp; break;
  }
  Communicator comm;
  comm.size = std::max<std::int64_t>(size, 1);
  const std::int64_t domain = std::max<std::int64_t>(fabric.gpus_per_node, 1);
  comm.per_domain = stride >= domain ? 1 : std::max<std::int64_t>(1, std::min(comm.size, domain / stride));
  comm.domains = (comm.size + comm.per_domain - 1) / comm.per_domain;
  // Every rank of a domain is in one group of this kind; the groups communicate at the same time.
  comm.sharing = std::max<std::int64_t>(1, std::min(domain, cfg.gpus) / comm.per_domain);
  return comm;
}

GroupLinks group_links(const ParallelConfig& cfg, const Fabric& fabric) {
  GroupLinks g;
  g.tensor_inter = communicator(cfg, fabric, Group::Tensor).domains > 1;
  g.data_inter = communicator(cfg, fabric, Group::Data).domains > 1;
  g.pipeline_inter = communicator(cfg, fabric, Group::Pipeline).domains > 1;
  return g;
}

double allreduce_ms(double bytes, std::int64_t n, const Link& link) {
  if (n <= 1 || bytes <= 0) return 0;
  double bw = link.bandwidth_gbs * 1e9 * kLinkEfficiency;
  return 2.0 * d(n - 1) / d(n) * bytes / bw * 1e3 + latency_hops(n) * link.latency_us * 1e-3;
}

double allgather_ms(double bytes, std::int64_t n, const Link& link) {
  if (n <= 1 || bytes <= 0) return 0;
  double bw = link.bandwidth_gbs * 1e9 * kLinkEfficiency;
  return d(n - 1) / d(n) * bytes / bw * 1e3 + 0.5 * latency_hops(n) * link.latency_us * 1e-3;
}

double p2p_ms(double bytes, const Link& link) {
  if (bytes <= 0) return 0;
  return bytes / (link.bandwidth_gbs * 1e9 * kLinkEfficiency) * 1e3 + link.latency_us * 1e-3;
}

namespace {

/// GB/s a ring over `c` moves per member: the domain link inside one domain; across domains the slower
/// of the domain link and the group's share of its domain's network cards (`fabric.inter` is one GPU's
/// share, and the `sharing` groups of a domain split the domain's cards).
double ring_gbs(const Communicator& c, const Fabric& fabric) {
  if (c.domains <= 1) return fabric.intra.bandwidth_gbs;
  const double nic_share = fabric.inter.bandwidth_gbs * d(fabric.gpus_per_node) / d(c.sharing);
  return c.per_domain > 1 ? std::min(fabric.intra.bandwidth_gbs, nic_share) : nic_share;
}

/// Latency of one hop of `c`: a hop out of the domain waits on the network's latency.
double hop_ms(const Communicator& c, const Fabric& fabric) {
  return (c.domains > 1 ? fabric.inter.latency_us : fabric.intra.latency_us) * 1e-3;
}

}  // namespace

double allreduce_ms(double bytes, const Communicator& c, const Fabric& fabric) {
  if (c.size <= 1 || bytes <= 0) return 0;
  double bw = ring_gbs(c, fabric) * 1e9 * kLinkEfficiency;
  if (fabric.in_network_reduction && c.domains == 1) bw *= kInNetworkReductionGain;
  return 2.0 * d(c.size - 1) / d(c.size) * bytes / bw * 1e3 + latency_hops(c.size) * hop_ms(c, fabric);
}

double allgather_ms(double bytes, const Communicator& c, const Fabric& fabric) {
  if (c.size <= 1 || bytes <= 0) return 0;
  const double bw = ring_gbs(c, fabric) * 1e9 * kLinkEfficiency;
  return d(c.size - 1) / d(c.size) * bytes / bw * 1e3 + 0.5 * latency_hops(c.size) * hop_ms(c, fabric);
}

double alltoall_ms(double bytes, const Communicator& c, const Fabric& fabric) {
  if (c.size <= 1 || bytes <= 0) return 0;
  // Each member keeps 1/size, sends (per_domain - 1)/size over the domain link and the rest out of the
  // domain through its own network card; both streams run at once.
  const double n = d(c.size), k = d(c.per_domain);
  const double intra = (k - 1) / n * bytes / (fabric.intra.bandwidth_gbs * 1e9 * kLinkEfficiency);
  const double inter = (n - k) / n * bytes / (fabric.inter.bandwidth_gbs * 1e9 * kLinkEfficiency);
  return std::max(intra, inter) * 1e3 + 2.0 * hop_ms(c, fabric);
}

double p2p_ms(double bytes, const Communicator& c, const Fabric& fabric) {
  if (bytes <= 0 || c.size <= 1) return 0;
  const Link& link = c.domains > 1 ? fabric.inter : fabric.intra;
  return p2p_ms(bytes, link);
}

ShardedNetwork shard_network(const Network& net, std::int64_t t, bool sequence_parallel) {
  ShardedNetwork s{net, std::vector<ShardLayer>(net.layers.size())};
  const std::size_t n = net.layers.size();
  if (t > 1) {
    for (const Layer& layer : net.layers) {
      if (layer.adapter.rank > 0) {
        throw InputError("parallel.tensor", "LoRA adapters under tensor parallelism are not modelled (layer \"" +
                                                layer.name + "\"); use tensor 1 with data parallelism or ZeRO");
      }
    }
  }
  // Blocks: consecutive layers expanded from the same repeat instance.
  const std::vector<int> blocks = block_of_layers(net);
  for (std::size_t l = 0; l < n; ++l) {
    s.layers[l].in_block = blocks[l] >= 0;
    s.layers[l].block = blocks[l];
  }
  if (t == 1) return s;

  std::vector<std::vector<std::size_t>> consumers(n);
  for (std::size_t l = 0; l < n; ++l) {
    for (int in : net.layers[l].inputs) {
      if (in != kNetworkInput) consumers[static_cast<std::size_t>(in)].push_back(l);
    }
  }
  std::vector<bool> row(n, false);
  std::vector<unsigned> roles(n, 0);
  for (std::size_t l = 0; l < n; ++l) {
    ShardStep step{net, s, l, t, consumers, row, roles};
    kind_of(net.layers[l].type).shard(step);
  }
  if (sequence_parallel) split_sequence(s, t, roles);
  return s;
}

bool recomputed_selectively(const Layer& layer, const Kernel& k, const KernelContext& context) {
  return kind_of(layer.type).recomputed_selectively(layer, k, context);
}

void add_recompute_kernels(StepWork& work, const ShardedNetwork& shard, Recompute mode) {
  if (mode == Recompute::None) return;
  const std::size_t count = work.kernels.size();
  for (std::size_t i = 0; i < count; ++i) {
    Kernel k = work.kernels[i];
    if (k.phase != Phase::Forward) continue;
    const auto l = static_cast<std::size_t>(k.layer);
    bool again = false;
    if (mode == Recompute::Full) {
      again = shard.layers[l].in_block;
    } else {
      const Layer& L = shard.net.layers[l];
      again = recomputed_selectively(L, k, work.context);
    }
    if (!again) continue;
    k.phase = Phase::Backward;
    LayerWork& lw = work.layers[l];
    lw.flops[1] += k.flops;
    lw.bytes[1] += k.bytes;
    lw.kernels += 1;
    work.flops[1] += k.flops;
    work.kernels.push_back(k);
  }
}

std::vector<double> saved_activation_bytes(const ShardedNetwork& shard, const StepWork& work, Recompute mode,
                                           std::int64_t micro_batch) {
  const std::size_t n = shard.net.layers.size();
  std::vector<double> out(n, 0.0);
  const double e = activation_bytes(work.context.precision);
  const double b = d(micro_batch);
  int seen_block = -1;
  for (std::size_t l = 0; l < n; ++l) {
    const Layer& L = shard.net.layers[l];
    double bytes = work.layers[l].saved_activation_bytes;
    if (shard.layers[l].saved_input_split > 1) {
      // Sequence parallelism: the input saved for the weight gradient is this GPU's slice of the sequence.
      const double input = e * b * d(elements(L.input_shapes.front())) * kind_of(L.type).saved_input_copies(L);
      bytes -= input * (1.0 - 1.0 / d(shard.layers[l].saved_input_split));
    }
    if (mode == Recompute::Selective) bytes -= kind_of(L.type).selective_dropped_bytes(L, b, e, work.context);
    if (mode == Recompute::Full && shard.layers[l].in_block) {
      // Only the input of each block instance is kept; the rest is recomputed in backward.
      bytes = 0;
      if (shard.layers[l].block != seen_block) {
        seen_block = shard.layers[l].block;
        bytes = e * b * d(elements(L.input_shapes.front()));
      }
    }
    out[l] = std::max(0.0, bytes);
  }
  return out;
}

std::vector<std::size_t> split_stages(const std::vector<double>& cost, std::int64_t stages) {
  const std::size_t n = cost.size();
  const auto p = static_cast<std::size_t>(stages);
  if (n < p) {
    throw InputError("parallel.pipeline", "the network has " + std::to_string(n) + " layers, fewer than " +
                                              std::to_string(p) + " pipeline stages");
  }
  std::vector<double> prefix(n + 1, 0.0);
  double largest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    prefix[i + 1] = prefix[i] + std::max(0.0, cost[i]);
    largest = std::max(largest, cost[i]);
  }
  // Greedy fill under a bound on the largest stage; binary search the smallest bound that needs <= p stages.
  auto greedy = [&](double bound, std::vector<std::size_t>& b) {
    b.assign(1, 0);
    double acc = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double c = std::max(0.0, cost[i]);
      if (acc + c > bound && i > b.back()) {
        b.push_back(i);
        acc = 0;
      }
      acc += c;
    }
    b.push_back(n);
    return b.size() - 1 <= p;
  };
  double lo = std::max(largest, prefix[n] / d(stages)), hi = prefix[n];
  std::vector<std::size_t> bounds;
  if (!greedy(lo, bounds)) {
    for (int it = 0; it < 50 && hi - lo > 1e-9 * (1 + hi); ++it) {
      double mid = 0.5 * (lo + hi);
      (greedy(mid, bounds) ? hi : lo) = mid;
    }
    greedy(hi, bounds);
  }
  // A loose bound may need fewer stages than asked: split the costliest multi-layer stage at its middle.
  while (bounds.size() < p + 1) {
    std::size_t best = bounds.size();
    double best_cost = -1;
    for (std::size_t s = 0; s + 1 < bounds.size(); ++s) {
      double c = prefix[bounds[s + 1]] - prefix[bounds[s]];
      if (bounds[s + 1] - bounds[s] >= 2 && c > best_cost) best_cost = c, best = s;
    }
    std::size_t lo_i = bounds[best] + 1, hi_i = bounds[best + 1] - 1, cut = lo_i;
    double half = prefix[bounds[best]] + best_cost / 2;
    while (cut < hi_i && prefix[cut] < half) ++cut;
    bounds.insert(bounds.begin() + static_cast<std::ptrdiff_t>(best) + 1, cut);
  }
  return bounds;
}

std::vector<std::size_t> split_stages(const std::vector<double>& cost, const ShardedNetwork& shard,
                                      std::int64_t stages) {
  // Units: each repeated block instance, and each layer outside blocks.
  std::vector<std::size_t> starts;
  for (std::size_t l = 0; l < cost.size(); ++l) {
    const ShardLayer& sl = shard.layers[l];
    bool continues = l > 0 && sl.in_block && shard.layers[l - 1].in_block && shard.layers[l - 1].block == sl.block;
    if (!continues) starts.push_back(l);
  }
  if (starts.size() < static_cast<std::size_t>(stages)) return split_stages(cost, stages);
  std::vector<double> unit_cost(starts.size(), 0.0);
  for (std::size_t u = 0; u < starts.size(); ++u) {
    std::size_t end = u + 1 < starts.size() ? starts[u + 1] : cost.size();
    for (std::size_t l = starts[u]; l < end; ++l) unit_cost[u] += cost[l];
  }
  std::vector<std::size_t> bounds = split_stages(unit_cost, stages);
  for (auto& b : bounds) b = b < starts.size() ? starts[b] : cost.size();
  return bounds;
}

StagePlan plan_stages(const std::vector<std::array<double, 3>>& layer_ms, const ShardedNetwork& shard,
                      const ParallelConfig& cfg, const Fabric& fabric, Precision precision,
                      const std::vector<double>& context_ms) {
  const std::size_t n = layer_ms.size();
  const double e = activation_bytes(precision);
  const double mbs = d(cfg.micro_batch_size);
  const std::int64_t t = cfg.tensor, p = cfg.pipeline;
  const Communicator tp_comm = communicator(cfg, fabric, Group::Tensor);
  std::vector<double> tp_ms(n, 0.0), cost(n, 0.0);
  for (std::size_t l = 0; l < n; ++l) {
    const ShardLayer& sl = shard.layers[l];
    int count = sl.forward_allreduces + sl.backward_allreduces;
    if (cfg.recompute == Recompute::Full && sl.in_block) count += sl.forward_allreduces;
    if (t > 1 && count > 0) tp_ms[l] = count * allreduce_ms(mbs * sl.allreduce_bytes_per_sample * e, tp_comm, fabric);
    cost[l] = layer_ms[l][0] + layer_ms[l][1] + tp_ms[l] + (context_ms.empty() ? 0.0 : context_ms[l]);
  }
  StagePlan sp;
  sp.bounds = p > 1 ? split_stages(cost, shard, p) : std::vector<std::size_t>{0, n};
  const std::size_t stages = sp.bounds.size() - 1;
  for (auto* v : {&sp.forward, &sp.backward, &sp.tensor, &sp.optimizer, &sp.params, &sp.largest_param, &sp.trainable,
                  &sp.context}) {
    v->assign(stages, 0.0);
  }
  for (std::size_t s = 0; s < stages; ++s) {
    for (std::size_t l = sp.bounds[s]; l < sp.bounds[s + 1]; ++l) {
      const double params = d(shard.net.layers[l].parameters);
      sp.forward[s] += layer_ms[l][0];
      sp.backward[s] += layer_ms[l][1];
      sp.optimizer[s] += layer_ms[l][2];
      sp.tensor[s] += tp_ms[l];
      if (!context_ms.empty()) sp.context[s] += context_ms[l];
      sp.params[s] += params;
      sp.trainable[s] += d(trainable_parameters(shard.net.layers[l]));
      sp.largest_param[s] = std::max(sp.largest_param[s], params);
    }
    if (s > 0) {
      const Layer& last = shard.net.layers[sp.bounds[s] - 1];
      const double split = d(shard.layers[sp.bounds[s] - 1].output_split);
      sp.boundary_elements = std::max(sp.boundary_elements, d(elements(last.output_shape)) / split);
    }
  }
  auto busy_of = [&sp](std::size_t s) { return sp.forward[s] + sp.backward[s] + sp.tensor[s] + sp.context[s]; };
  for (std::size_t s = 0; s < stages; ++s) {
    double busy = busy_of(s);
    sp.busy_total += busy;
    if (busy > busy_of(sp.critical)) sp.critical = s;
  }
  return sp;
}

ParallelTiming finish_parallel(const StagePlan& sp, const ParallelConfig& cfg, const Fabric& fabric,
                               Precision precision) {
  const double e = activation_bytes(precision);
  const double mbs = d(cfg.micro_batch_size), m = d(cfg.micro_batches);
  const std::int64_t dp = cfg.data * cfg.context, p = cfg.pipeline;  // gradients: data x context GPUs
  const Communicator dp_comm = gradient_communicator(cfg, fabric);
  const Communicator pp_comm = communicator(cfg, fabric, Group::Pipeline);
  const std::size_t c = sp.critical;
  const double busy = sp.forward[c] + sp.backward[c] + sp.tensor[c] + sp.context[c];
  ParallelTiming r;
  r.stage_bounds = sp.bounds;
  r.critical_stage = c;
  r.forward_ms = m * sp.forward[c];
  r.backward_ms = m * sp.backward[c];
  r.tensor_ms = m * sp.tensor[c];
  r.context_ms = m * sp.context[c];
  // 1F1B: the critical stage runs m slots back to back; the other stages' slots fill the warm-up and drain.
  r.bubble_ms = p > 1 ? sp.busy_total - busy : 0.0;
  // Each of the m + p - 1 slots on the critical path sends an activation forward and a gradient back.
  if (p > 1) r.pipeline_ms = 2.0 * (m + d(p) - 1) * p2p_ms(mbs * sp.boundary_elements * e, pp_comm, fabric);
  const double zero_shard = cfg.zero_stage >= 1 ? 1.0 / d(dp) : 1.0;
  r.optimizer_ms = sp.optimizer[c] * zero_shard;
  // Gradients and updated weights exist for the trained parameters (a fine-tune's adapters); ZeRO-3 gathers
  // every weight, frozen ones too.
  const double P = sp.params[c], T = sp.trainable[c];
  if (dp > 1 && P > 0) {
    const double per_param = is_mixed(precision) ? 2.0 : 4.0;
    // Gradients are reduced in buckets while the last micro-batch's backward still runs; only what does
    // not fit behind that backward is exposed, and the last bucket always is.
    auto reduce = [&](double bytes) {
      return cfg.zero_stage >= 1 ? allgather_ms(bytes, dp_comm, fabric) : allreduce_ms(bytes, dp_comm, fabric);
    };
    const double all = reduce(T * per_param);
    const double last_bucket = reduce(std::min(T * per_param, kGradientBucketBytes));
    r.data_ms = std::max(all - sp.backward[c], last_bucket);
    if (cfg.zero_stage == 1 || cfg.zero_stage == 2) {
      // Updated weight shards are gathered after the optimizer step, before the next forward.
      r.zero_ms = allgather_ms(T * per_param, dp_comm, fabric);
    } else if (cfg.zero_stage == 3) {
      // Weights are gathered layer by layer before forward and again before backward, prefetched behind
      // compute; the first layer's gather cannot be hidden.
      const double gathers = 2.0 * m * allgather_ms(P * per_param, dp_comm, fabric);
      const double first = allgather_ms(sp.largest_param[c] * per_param, dp_comm, fabric);
      r.zero_ms = std::max(gathers - (r.forward_ms + r.backward_ms), 0.0) + first;
    }
  }
  return r;
}

ParallelTiming compose_parallel(const std::vector<std::array<double, 3>>& layer_ms, const ShardedNetwork& shard,
                                const ParallelConfig& cfg, const Fabric& fabric, Precision precision,
                                const std::vector<double>& context_ms) {
  return finish_parallel(plan_stages(layer_ms, shard, cfg, fabric, precision, context_ms), cfg, fabric, precision);
}

}  // namespace prenet
