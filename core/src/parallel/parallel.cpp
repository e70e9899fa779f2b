#include "prenet/parallel.hpp"

#include <algorithm>
#include <cmath>

#include "layers/layer_kind.hpp"
#include "parallel/context.hpp"
#include "parallel/expert.hpp"
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

/// parallel.recompute_modules (Megatron-Core's recompute_modules) as a set; only beside recompute "selective",
/// whose default it otherwise is. The row lists the modules in the enum's order.
RecomputeModules parse_recompute_modules(const Json& p, Recompute recompute) {
  const std::optional<OptionValue> v = read_parallel_field(p, "recompute_modules", "parallel");
  if (!v) return kDefaultRecomputeModules;
  if (recompute != Recompute::Selective) {
    throw InputError("parallel.recompute_modules", "chooses what recompute \"selective\" reruns; recompute is \"" +
                                                       std::string(to_string(recompute)) + "\"");
  }
  const std::vector<std::string>& names = recompute_module_names();
  RecomputeModules modules = 0;
  for (const std::string& name : v->names) {
    const auto at = std::find(names.begin(), names.end(), name);
    modules |= module_bit(static_cast<RecomputeModule>(at - names.begin()));
  }
  return modules;
}

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

/// Refuses parallel.accumulate_unsharded where it changes nothing: without sharded gradients (zero_stage < 2)
/// every GPU holds the full gradients anyway, and one micro-batch accumulates nothing.
void check_accumulation(const ParallelConfig& c) {
  if (!c.accumulate_unsharded) return;
  const std::string field = "parallel.accumulate_unsharded";
  if (c.zero_stage < 2) {
    throw InputError(field, "needs sharded gradients, zero_stage 2 or 3 (fsdp): at zero_stage " + str(c.zero_stage) +
                                " every GPU holds the full gradients anyway");
  }
  if (c.micro_batches < 2) {
    throw InputError(field, "needs gradient accumulation, micro_batches > 1: one micro-batch accumulates nothing");
  }
}

/// Whether boolean parallel field `key` is given and true.
bool flag(const Json& p, const char* key) {
  auto v = read_parallel_field(p, key, "parallel");
  return v && v->boolean;
}

/// Reads parallel.pipeline_layout into `c` (its pipeline and virtual_stages read): Megatron-Core derives the virtual
/// stages from the layout's chunks (chunks / pipeline), and refuses a virtual_stages given otherwise.
void parse_layout(const Json& p, ParallelConfig& c) {
  auto layout = read_parallel_field(p, "pipeline_layout", "parallel");
  if (!layout) return;
  c.pipeline_layout = parse_pipeline_layout(layout->text, c.pipeline);
  const auto chunks = static_cast<std::int64_t>(c.pipeline_layout->chunks.size());
  if (c.pipeline <= 1 && chunks > 1) {
    throw InputError("parallel.pipeline_layout", "its " + str(chunks) + " chunks need a pipeline: pipeline is " +
                                                     str(c.pipeline) + " (one chunk per stage and virtual stage)");
  }
  const std::int64_t v = chunks / c.pipeline;
  if (opt_int(p, "virtual_stages") && c.virtual_stages != v) {
    throw InputError("parallel.pipeline_layout", "its " + str(chunks) + " chunks are " + str(v) +
                                                     " virtual stages of pipeline " + str(c.pipeline) +
                                                     "; virtual_stages is " + str(c.virtual_stages));
  }
  c.virtual_stages = v;
}

/// Reads the overlap switches into `c` (its degrees, ZeRO stage and recomputation resolved) and refuses them where
/// Megatron-Core cannot run them, naming the field.
void parse_overlaps(const Json& p, ParallelConfig& c) {
  c.overlap_param_gather = flag(p, "overlap_param_gather");
  if (c.overlap_param_gather && (c.zero_stage < 1 || c.zero_stage > 2)) {
    throw InputError("parallel.overlap_param_gather",
                     "overlaps the gather of ZeRO 1 or 2's updated weight shards; zero_stage is " + str(c.zero_stage) +
                         (c.zero_stage == 3 ? " (ZeRO-3's gathers are prefetched already)" : ""));
  }
  c.expert_overlap = flag(p, "expert_overlap");
  if (c.expert_overlap) {
    const std::string field = "parallel.expert_overlap";
    if (c.expert <= 1) throw InputError(field, "overlaps expert all-to-alls: it needs expert > 1");
    if (c.recompute == Recompute::Full) {
      throw InputError(field, "Megatron-Core's expert overlap does not run with full recomputation");
    }
    if (c.recompute == Recompute::Selective && (c.recompute_modules & module_bit(RecomputeModule::Moe)) != 0) {
      throw InputError(field, "Megatron-Core's expert overlap does not run with recompute_modules moe");
    }
    if (c.pipeline > 1 && c.virtual_stages <= 1) {
      throw InputError(field,
                       "with a pipeline, Megatron-Core's expert overlap needs the interleaved schedule "
                       "(virtual_stages > 1)");
    }
  }
  // The row lists the dispatchers in the enum's order.
  if (auto dispatch = read_parallel_field(p, "expert_dispatch", "parallel"); dispatch && dispatch->choice != 0) {
    if (c.expert <= 1) {
      throw InputError("parallel.expert_dispatch",
                       "hierarchical dispatch sends tokens to sharded experts: it needs "
                       "expert > 1");
    }
    c.expert_dispatch = static_cast<ExpertDispatch>(dispatch->choice);
  }
  c.tensor_overlap = flag(p, "tensor_overlap");
  if (c.tensor_overlap && (c.tensor <= 1 || !c.sequence_parallel)) {
    throw InputError("parallel.tensor_overlap",
                     "overlaps the tensor-parallel all-gathers and reduce-scatters: it needs tensor > 1 and "
                     "sequence_parallel (TransformerEngine's userbuffers run sequence-parallel layers)");
  }
}

}  // namespace

const std::vector<std::string>& recompute_module_names() { return parallel_option("recompute_modules").values; }

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
    case Recompute::Ops: return "ops";
    case Recompute::TorchtitanOp: return "torchtitan_op";
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
  auto accumulate_unsharded = read_parallel_field(p, "accumulate_unsharded", path);
  c.accumulate_unsharded = accumulate_unsharded && accumulate_unsharded->boolean;
  check_accumulation(c);
  auto sequence_parallel = read_parallel_field(p, "sequence_parallel", path);
  c.sequence_parallel = sequence_parallel && sequence_parallel->boolean;
  // The row lists the modes in the enum's order.
  auto recompute = read_parallel_field(p, "recompute", path);
  c.recompute = recompute ? static_cast<Recompute>(recompute->choice) : Recompute::None;
  // Layer-wise checkpointing (torchtitan's selective_ac_option n) applies to full recomputation only: op-level
  // checkpointing wraps every block, and selective recomputation is per layer.
  c.recompute_every = opt_int(p, "recompute_every").value_or(1);
  if (c.recompute_every > 1 && c.recompute != Recompute::Full) {
    throw InputError("parallel.recompute_every",
                     "checkpoints every n-th block under recompute \"full\" only; recompute is \"" +
                         std::string(to_string(c.recompute)) + "\"");
  }
  c.recompute_modules = parse_recompute_modules(p, c.recompute);
  parse_expert(p, c);
  c.gpus_per_node = opt_int(p, "gpus_per_node").value_or(0);
  c.intra_node = parse_link(p, "intra_node");
  c.inter_node = parse_link(p, "inter_node");
  // Interleaved 1F1B: model chunks per stage (schedule.cpp checks it against the pipeline and micro-batches).
  c.virtual_stages = opt_int(p, "virtual_stages").value_or(1);
  parse_layout(p, c);
  check_virtual_stages(c);
  auto embedding_loss = read_parallel_field(p, "pipeline_embedding_loss", path);
  c.pipeline_embedding_loss = embedding_loss && embedding_loss->boolean;
  if (c.pipeline_embedding_loss && c.pipeline <= 1) {
    throw InputError("parallel.pipeline_embedding_loss",
                     "splits a pipeline: it needs pipeline > 1 (pipeline is " + str(c.pipeline) + ")");
  }
  if (c.pipeline_embedding_loss && c.pipeline_layout) {
    throw InputError("parallel.pipeline_layout",
                     "places the embedding and the loss itself; Megatron-Core refuses it "
                     "beside pipeline_embedding_loss (account_for_*_in_pipeline_split)");
  }
  parse_overlaps(p, c);
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
  // Size and rank stride of one group under the tp-cp-dp-pp order (the expert groups under etp-ep-edp-pp).
  const std::int64_t t = cfg.tensor, c = cfg.context, dp = cfg.data, ep = std::max<std::int64_t>(cfg.expert, 1);
  std::int64_t size = 1, stride = 1;
  switch (group) {
    case Group::Tensor: size = t, stride = 1; break;
    case Group::Context: size = c, stride = t; break;
    case Group::Data: size = dp, stride = t * c; break;
    case Group::Expert: size = ep, stride = 1; break;
    case Group::ExpertData: size = t * c * dp / ep, stride = ep; break;
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

namespace {

/// A ring collective over `n` members at `gbs` per member: `passes` times (n-1)/n of the bytes, and as
/// many hops of `hop_ms` as the ring (or, for large groups, NCCL's tree) needs per pass.
double ring_ms(double bytes, std::int64_t n, double gbs, double hop_ms, double passes) {
  if (n <= 1 || bytes <= 0) return 0;
  const double bw = gbs * 1e9 * kLinkEfficiency;
  return passes * (d(n - 1) / d(n) * bytes / bw * 1e3 + 0.5 * latency_hops(n) * hop_ms);
}

}  // namespace

double allreduce_ms(double bytes, std::int64_t n, const Link& link) {
  return ring_ms(bytes, n, link.bandwidth_gbs, link.latency_us * 1e-3, 2);
}

double allgather_ms(double bytes, std::int64_t n, const Link& link) {
  return ring_ms(bytes, n, link.bandwidth_gbs, link.latency_us * 1e-3, 1);
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
  const double gain = fabric.in_network_reduction && c.domains == 1 ? kInNetworkReductionGain : 1.0;
  return ring_ms(bytes, c.size, ring_gbs(c, fabric) * gain, hop_ms(c, fabric), 2);
}

double allgather_ms(double bytes, const Communicator& c, const Fabric& fabric) {
  return ring_ms(bytes, c.size, ring_gbs(c, fabric), hop_ms(c, fabric), 1);
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

double remote_domains_per_token(double top_k, double experts, std::int64_t domains) {
  if (domains <= 1 || top_k <= 0 || experts <= 0) return 0;
  // P(a given domain holds none of the token's experts) = C(E - E/N, k) / C(E, k).
  const double outside = experts - experts / d(domains);
  double miss = 1.0;
  for (int i = 0; i < static_cast<int>(top_k) && miss > 0; ++i) miss *= std::max(0.0, outside - i) / (experts - i);
  return d(domains - 1) * (1.0 - miss);
}

double hierarchical_alltoall_ms(double bytes, double top_k, double experts, const Communicator& c,
                                const Fabric& fabric) {
  if (c.size <= 1 || bytes <= 0 || top_k <= 0) return 0;
  const double n = d(c.size), k = d(c.per_domain);
  // Out of the domain: one copy of each token per remote domain it reaches. On the domain link: the copies for the
  // sender's own domain, and each arriving token fanned out to the other members holding its experts.
  const double inter = bytes / top_k * remote_domains_per_token(top_k, experts, c.domains);
  const double intra = bytes * ((k - 1) / n + (n - k) / n * (k - 1) / k);
  const double intra_ms = intra / (fabric.intra.bandwidth_gbs * 1e9 * kLinkEfficiency);
  const double inter_ms = inter / (fabric.inter.bandwidth_gbs * 1e9 * kLinkEfficiency);
  return std::max(intra_ms, inter_ms) * 1e3 + 2.0 * hop_ms(c, fabric);
}

double p2p_ms(double bytes, const Communicator& c, const Fabric& fabric) {
  if (bytes <= 0 || c.size <= 1) return 0;
  const Link& link = c.domains > 1 ? fabric.inter : fabric.intra;
  return p2p_ms(bytes, link);
}

ShardedNetwork shard_network(const Network& net, std::int64_t t, bool sequence_parallel, bool whole_experts) {
  ShardedNetwork s{net, std::vector<ShardLayer>(net.layers.size())};
  if (t > 1 && whole_experts && !sequence_parallel) {
    throw InputError("parallel.sequence_parallel",
                     "expert parallelism beside tensor " + str(t) +
                         " needs sequence parallelism (Megatron-Core requires it for mixture-of-experts layers under "
                         "tensor parallelism: each GPU routes its own share of the sequence); set sequence_parallel");
  }
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
    ShardStep step{net, s, l, t, consumers, row, roles, whole_experts};
    kind_of(net.layers[l].type).shard(step);
  }
  if (sequence_parallel) split_sequence(s, t, roles);
  return s;
}

ParallelTiming compose_parallel(const std::vector<std::array<double, 3>>& layer_ms, const ShardedNetwork& shard,
                                const ParallelConfig& cfg, const Fabric& fabric, Precision precision,
                                const std::vector<double>& context_ms,
                                const std::vector<std::array<double, 2>>& layer_host_ms) {
  StagePlan plan = plan_stages(layer_ms, shard, cfg, fabric, precision, context_ms);
  floor_at_host(plan, layer_host_ms);
  return finish_parallel(plan, cfg, fabric, precision);
}

}  // namespace prenet
