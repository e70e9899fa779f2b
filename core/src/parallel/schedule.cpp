// Pipeline schedules: the split of the layers into stages and the step of the critical stage under
// 1F1B (docs/PREDICTION.md, "More than one GPU").
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "parallel/context.hpp"
#include "parallel/expert.hpp"
#include "prenet/error.hpp"
#include "prenet/memory.hpp"
#include "prenet/parallel.hpp"

namespace prenet {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

std::string str(std::int64_t v) { return std::to_string(v); }

}  // namespace

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

namespace {

/// Whether layer `l` is in a decoder block: a repeated block instance outside multi-token prediction's modules
/// (Megatron-Core counts those apart from num_layers and places them on the last stage, or as a layout's 'm').
bool decoder_layer(const ShardedNetwork& shard, std::size_t l) {
  return shard.layers[l].in_block && shard.net.layers[l].mtp_depth == 0;
}

/// The first layer of each decoder block instance, in order.
std::vector<std::size_t> block_starts(const ShardedNetwork& shard) {
  std::vector<std::size_t> starts;
  for (std::size_t l = 0; l < shard.layers.size(); ++l) {
    const ShardLayer& sl = shard.layers[l];
    if (decoder_layer(shard, l) && !(l > 0 && decoder_layer(shard, l - 1) && shard.layers[l - 1].block == sl.block)) {
      starts.push_back(l);
    }
  }
  return starts;
}

/// The first layer inside a decoder block and the first layer after the last one (size and 0 without blocks).
std::pair<std::size_t, std::size_t> block_extent(const ShardedNetwork& shard) {
  std::size_t first = shard.layers.size(), after_last = 0;
  for (std::size_t l = 0; l < shard.layers.size(); ++l) {
    if (!decoder_layer(shard, l)) continue;
    first = std::min(first, l);
    after_last = l + 1;
  }
  return {first, after_last};
}

}  // namespace

std::vector<std::size_t> split_stages(const std::vector<double>& cost, const ShardedNetwork& shard,
                                      std::int64_t stages) {
  // Units: each repeated block instance, each layer outside blocks between them, and the layers before the first
  // block and after the last as one unit each: a pipeline never cuts the embedding from its position encoding, nor
  // the head from its loss (which would send the logits between stages); frameworks keep them on one stage. Multi-
  // token prediction's modules, after the last decoder block, stay with the loss (Megatron-Core's last stage).
  const auto [first_block, after_last] = block_extent(shard);
  std::vector<std::size_t> starts;
  for (std::size_t l = 0; l < cost.size(); ++l) {
    const ShardLayer& sl = shard.layers[l];
    const bool edge = l > 0 && (l > after_last || (!sl.in_block && l < first_block));
    bool continues =
        edge || (l > 0 && sl.in_block && shard.layers[l - 1].in_block && shard.layers[l - 1].block == sl.block);
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

std::int64_t block_count(const ShardedNetwork& shard) { return static_cast<std::int64_t>(block_starts(shard).size()); }

namespace {

/// Megatron-Core's get_num_layers_to_build for `chunks` model chunks of whole blocks: without `embedding_loss`
/// every chunk holds blocks / chunks of them, the first also the layers before the first block, the last the layers
/// after the last; with it (account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split) the
/// embedding and the loss count as one layer each, blocks + 2 split into equal counts L, and the first and last
/// chunks hold L - 1 blocks. Errors name `field`.
std::vector<std::size_t> split_whole_blocks(const ShardedNetwork& shard, std::int64_t chunks, bool embedding_loss,
                                            const std::string& field) {
  std::vector<std::size_t> starts = block_starts(shard);  // then, below, the first layer after the last block
  const std::size_t after_last = block_extent(shard).second;
  const std::int64_t blocks = static_cast<std::int64_t>(starts.size()), counted = blocks + (embedding_loss ? 2 : 0);
  if (blocks == 0) throw InputError(field, "the network has no repeated blocks to split into pipeline chunks");
  if (counted % chunks != 0) {
    throw InputError(field, embedding_loss
                                ? "the " + str(blocks) + " blocks plus the embedding and the loss (" + str(counted) +
                                      ") do not split evenly over " + str(chunks) + " pipeline chunks"
                                : "the " + str(blocks) + " blocks do not split evenly over " + str(chunks) +
                                      " pipeline chunks (pipeline x virtual_stages)");
  }
  const std::int64_t per = counted / chunks, shift = embedding_loss ? 1 : 0;
  starts.push_back(after_last);  // a last chunk of no blocks starts after them
  std::vector<std::size_t> bounds{0};
  for (std::int64_t j = 1; j < chunks; ++j) bounds.push_back(starts[static_cast<std::size_t>(j * per - shift)]);
  bounds.push_back(shard.layers.size());
  for (std::size_t j = 0; j + 1 < bounds.size(); ++j) {
    if (bounds[j] == bounds[j + 1]) {
      throw InputError(field, "pipeline chunk " + std::to_string(j) + " would hold no layer (" + str(per) +
                                  " per chunk, and the network has nothing before its first or after its last block)");
    }
  }
  return bounds;
}

}  // namespace

std::vector<std::size_t> split_chunks(const std::vector<double>& cost, const ShardedNetwork& shard,
                                      std::int64_t pipeline, std::int64_t virtual_stages, bool embedding_loss) {
  if (embedding_loss) {
    return split_whole_blocks(shard, pipeline * std::max<std::int64_t>(virtual_stages, 1), true,
                              "parallel.pipeline_embedding_loss");
  }
  if (virtual_stages <= 1) return split_stages(cost, shard, pipeline);
  // Megatron-LM (arguments.py) requires the layers to split evenly over the stages and the layers per stage
  // to split evenly over the virtual stages: each chunk is the same whole number of blocks.
  const std::int64_t blocks = block_count(shard), p = pipeline, v = virtual_stages;
  if (blocks == 0) {
    throw InputError("parallel.virtual_stages", "the network has no repeated blocks to split into virtual stages");
  }
  if (blocks % p != 0) {
    throw InputError("parallel.virtual_stages", "the " + str(blocks) + " blocks do not split evenly over " + str(p) +
                                                    " pipeline stages, so virtual_stages " + str(v) +
                                                    " cannot divide the blocks per stage");
  }
  if ((blocks / p) % v != 0) {
    throw InputError("parallel.virtual_stages", "virtual_stages " + str(v) + " does not divide the " + str(blocks / p) +
                                                    " blocks per stage (" + str(blocks) + " blocks over " + str(p) +
                                                    " pipeline stages)");
  }
  return split_whole_blocks(shard, p * v, false, "parallel.virtual_stages");
}

namespace {

/// The first layer of each multi-token prediction module (Layer::mtp_depth), in order, then the first layer after
/// the last (an empty list without them).
std::vector<std::size_t> mtp_starts(const ShardedNetwork& shard) {
  std::vector<std::size_t> starts;
  std::size_t after = 0;
  for (std::size_t l = 0; l < shard.net.layers.size(); ++l) {
    const int depth = shard.net.layers[l].mtp_depth;
    if (depth == 0) continue;
    if (l == 0 || shard.net.layers[l - 1].mtp_depth != depth) starts.push_back(l);
    after = l + 1;
  }
  if (!starts.empty()) starts.push_back(after);
  return starts;
}

/// The chunk bounds parallel.pipeline_layout gives over `chunks` chunks: each 't' one decoder block (with any layers
/// between it and the next), each 'm' one multi-token prediction module. The embedding side stays on the first
/// chunk and the loss side (final norm, head, losses) on the last wherever the string puts 'E' and 'L': Megatron-Core
/// builds them on its pre_process and post_process chunks and counts only 't' and 'm' per chunk
/// (get_num_layers_to_build). Errors name parallel.pipeline_layout.
std::vector<std::size_t> layout_bounds(const ShardedNetwork& shard, const PipelineLayout& layout, std::int64_t chunks) {
  const std::string field = "parallel.pipeline_layout";
  if (static_cast<std::int64_t>(layout.chunks.size()) != chunks) {
    throw InputError(field, "its " + str(static_cast<std::int64_t>(layout.chunks.size())) +
                                " chunks are not pipeline x virtual_stages = " + str(chunks));
  }
  std::vector<std::size_t> blocks = block_starts(shard);
  std::vector<std::size_t> mtp = mtp_starts(shard);
  std::size_t t = 0, m = 0;
  for (const std::string& c : layout.chunks) {
    t += static_cast<std::size_t>(std::count(c.begin(), c.end(), 't'));
    m += static_cast<std::size_t>(std::count(c.begin(), c.end(), 'm'));
  }
  if (blocks.empty()) throw InputError(field, "the network has no repeated decoder blocks to place");
  if (t != blocks.size()) {
    throw InputError(
        field, "places " + std::to_string(t) + " decoder blocks 't'; the network has " + std::to_string(blocks.size()));
  }
  const std::size_t depths = mtp.empty() ? 0 : mtp.size() - 1;
  if (m != depths) {
    throw InputError(field, "places " + std::to_string(m) + " multi-token prediction layers 'm'; training.mtp_layers " +
                                "gives " + std::to_string(depths));
  }
  // Each 't' ends where the next block starts; the last where the modules start, or after the last block.
  blocks.push_back(depths > 0 ? mtp.front() : block_extent(shard).second);
  std::vector<std::size_t> bounds{0};
  std::size_t cursor = blocks.front(), next_t = 1, next_m = 1;
  for (std::size_t j = 0; j < layout.chunks.size(); ++j) {
    if (j > 0) bounds.push_back(cursor);
    for (char c : layout.chunks[j]) {
      if (c == 't') cursor = blocks[next_t++];
      if (c == 'm') cursor = mtp[next_m++];
    }
  }
  bounds.push_back(shard.net.layers.size());
  return bounds;
}

}  // namespace

std::vector<std::size_t> chunk_bounds(const std::vector<double>& cost, const ShardedNetwork& shard,
                                      const ParallelConfig& cfg) {
  const std::int64_t v = std::max<std::int64_t>(cfg.virtual_stages, 1);
  if (cfg.pipeline_layout)
    return layout_bounds(shard, *cfg.pipeline_layout, std::max<std::int64_t>(cfg.pipeline, 1) * v);
  if (cfg.pipeline > 1) return split_chunks(cost, shard, cfg.pipeline, v, cfg.pipeline_embedding_loss);
  return {0, shard.net.layers.size()};
}

std::vector<std::vector<std::size_t>> embedding_copies(const ShardedNetwork& shard,
                                                       const std::vector<std::size_t>& bounds) {
  const std::size_t chunks = bounds.size() - 1;
  std::vector<std::vector<std::size_t>> copies(chunks);
  auto chunk_of = [&bounds, chunks](std::size_t l) {
    std::size_t j = 0;
    while (j + 1 < chunks && bounds[j + 1] <= l) ++j;
    return j;
  };
  for (std::size_t l = 0; l < shard.net.layers.size(); ++l) {
    const Layer& layer = shard.net.layers[l];
    if (layer.type != LayerType::Embedding || layer.attrs.tied_to.empty()) continue;
    for (std::size_t src = 0; src < l; ++src) {
      if (shard.net.layers[src].name != layer.attrs.tied_to) continue;
      const std::size_t j = chunk_of(l);
      if (j != chunk_of(src) && std::find(copies[j].begin(), copies[j].end(), src) == copies[j].end()) {
        copies[j].push_back(src);
      }
      break;
    }
  }
  return copies;
}

void check_virtual_stages(const ParallelConfig& cfg) {
  const std::int64_t v = cfg.virtual_stages, p = cfg.pipeline;
  if (v <= 1) return;
  if (p <= 1) {
    throw InputError("parallel.virtual_stages", "virtual stages interleave a pipeline: virtual_stages " + str(v) +
                                                    " needs pipeline > 1 (pipeline is " + str(p) + ")");
  }
  // Megatron-Core (pipeline_parallel/schedules.py): micro-batches run in groups of
  // microbatch_group_size_per_vp_stage (default: the pipeline size), and a last group smaller than the
  // pipeline is refused; with the default the micro-batches are a multiple of the pipeline size.
  if (cfg.micro_batches % p != 0) {
    throw InputError("parallel.micro_batches", "the interleaved schedule (virtual_stages " + str(v) +
                                                   ") needs micro_batches a multiple of pipeline " + str(p) +
                                                   "; micro_batches is " + str(cfg.micro_batches));
  }
}

namespace {

/// Sets `sp`'s busy total and its critical stage (the busiest) from its per-stage sums.
void pick_critical(StagePlan& sp) {
  // A plan built by hand may leave the expert and context sums empty.
  auto at = [](const std::vector<double>& v, std::size_t s) { return s < v.size() ? v[s] : 0.0; };
  auto busy = [&](std::size_t s) {
    return sp.forward[s] + sp.backward[s] + at(sp.tensor, s) + at(sp.expert, s) + at(sp.context, s);
  };
  sp.busy_total = 0;
  sp.critical = 0;
  for (std::size_t s = 0; s < sp.forward.size(); ++s) {
    sp.busy_total += busy(s);
    if (busy(s) > busy(sp.critical)) sp.critical = s;
  }
}

}  // namespace

StagePlan plan_stages(const std::vector<std::array<double, 3>>& layer_ms, const ShardedNetwork& shard,
                      const ParallelConfig& cfg, const Fabric& fabric, Precision precision,
                      const std::vector<double>& context_ms) {
  const std::size_t n = layer_ms.size();
  const double e = activation_bytes(precision);
  const double mbs = d(cfg.micro_batch_size);
  const std::int64_t t = cfg.tensor, p = cfg.pipeline;
  const Communicator tp_comm = communicator(cfg, fabric, Group::Tensor);
  const Communicator ep_comm = communicator(cfg, fabric, Group::Expert);
  std::vector<double> tp_ms(n, 0.0), ep_ms(n, 0.0), cost(n, 0.0);
  // A layer whose forward runs again in backward (a checkpointed block, a checkpointed MLP or mixture of experts)
  // repeats its forward collectives.
  const std::vector<int> reruns = whole_layer_reruns(shard, cfg.recompute, cfg.recompute_every, cfg.recompute_modules);
  for (std::size_t l = 0; l < n; ++l) {
    const ShardLayer& sl = shard.layers[l];
    const int count = sl.forward_allreduces * (1 + reruns[l]) + sl.backward_allreduces;
    if (t > 1 && count > 0) tp_ms[l] = count * allreduce_ms(mbs * sl.allreduce_bytes_per_sample * e, tp_comm, fabric);
    // Userbuffers overlap: each collective runs behind the layer's own GEMMs (the forward all-gather or reduce-
    // scatter in chunks beside its GEMM, backward's behind the other gradient GEMM); what sticks out is exposed.
    if (cfg.tensor_overlap) tp_ms[l] = std::max(0.0, tp_ms[l] - (layer_ms[l][0] + layer_ms[l][1]));
    ep_ms[l] = expert_alltoall_ms(sl, mbs, e, reruns[l] > 0, ep_comm, fabric, cfg.expert_dispatch);
    cost[l] = layer_ms[l][0] + layer_ms[l][1] + tp_ms[l] + ep_ms[l] + (context_ms.empty() ? 0.0 : context_ms[l]);
  }
  StagePlan sp;
  sp.virtual_stages = p > 1 ? std::max<std::int64_t>(cfg.virtual_stages, 1) : 1;
  sp.bounds = chunk_bounds(cost, shard, cfg);
  const std::size_t chunks = sp.bounds.size() - 1;
  const std::size_t stages = chunks / static_cast<std::size_t>(sp.virtual_stages);
  for (auto* v :
       {&sp.forward, &sp.backward, &sp.tensor, &sp.optimizer, &sp.params, &sp.largest_param, &sp.trainable, &sp.reduced,
        &sp.expert, &sp.expert_params, &sp.expert_trainable, &sp.expert_optimizer, &sp.context}) {
    v->assign(stages, 0.0);
  }
  const std::vector<std::vector<std::size_t>> copies = embedding_copies(shard, sp.bounds);
  // Chunk j runs on stage j mod stages (the interleaved assignment; one chunk per stage without it).
  for (std::size_t j = 0; j < chunks; ++j) {
    const std::size_t s = j % stages;
    for (std::size_t l = sp.bounds[j]; l < sp.bounds[j + 1]; ++l) {
      const double params = d(shard.net.layers[l].parameters);
      sp.forward[s] += layer_ms[l][0];
      sp.backward[s] += layer_ms[l][1];
      sp.optimizer[s] += layer_ms[l][2];
      sp.tensor[s] += tp_ms[l];
      if (!context_ms.empty()) sp.context[s] += context_ms[l];
      sp.params[s] += params;
      sp.trainable[s] += d(trainable_parameters(shard.net.layers[l]));
      sp.reduced[s] += d(gradient_parameters(shard.net.layers[l]));
      sp.largest_param[s] = std::max(sp.largest_param[s], params);
      sp.expert[s] += ep_ms[l];
      if (shard.layers[l].expert_parameters) {
        sp.expert_params[s] += params;
        sp.expert_trainable[s] += d(trainable_parameters(shard.net.layers[l]));
        sp.expert_optimizer[s] += layer_ms[l][2];
      }
    }
    // The word embeddings a later chunk copies (multi-token prediction's): the copy's weights, gradients and step.
    for (std::size_t src : copies[j]) {
      const double params = d(shard.net.layers[src].parameters);
      sp.params[s] += params;
      sp.trainable[s] += d(trainable_parameters(shard.net.layers[src]));
      sp.reduced[s] += d(gradient_parameters(shard.net.layers[src]));
      sp.largest_param[s] = std::max(sp.largest_param[s], params);
      sp.optimizer[s] += layer_ms[src][2];
    }
    if (j > 0 && sp.bounds[j] > 0) {
      const Layer& last = shard.net.layers[sp.bounds[j] - 1];
      const double split = d(shard.layers[sp.bounds[j] - 1].output_split);
      sp.boundary_elements = std::max(sp.boundary_elements, d(elements(last.output_shape)) / split);
    }
  }
  if (cfg.expert_overlap) {
    sp.expert_paired.assign(stages, 0.0);
    for (std::size_t j = 0; j < chunks; ++j) {
      sp.expert_paired[j % stages] += paired_expert_exposure(shard, layer_ms, mbs * e, ep_comm, fabric,
                                                             cfg.expert_dispatch, sp.bounds[j], sp.bounds[j + 1]);
    }
  }
  pick_critical(sp);
  return sp;
}

void floor_at_host(StagePlan& sp, const std::vector<std::array<double, 2>>& layer_host_ms) {
  if (layer_host_ms.empty()) return;
  const std::size_t stages = sp.forward.size();
  const std::size_t chunks = sp.bounds.size() - 1;
  std::vector<std::array<double, 2>> host(stages, std::array<double, 2>{});
  for (std::size_t j = 0; j < chunks; ++j) {
    for (std::size_t l = sp.bounds[j]; l < sp.bounds[j + 1]; ++l) {
      host[j % stages][0] += layer_host_ms[l][0];
      host[j % stages][1] += layer_host_ms[l][1];
    }
  }
  sp.host_issue = host;
  sp.host_bound.assign(stages, false);
  for (std::size_t s = 0; s < stages; ++s) {
    sp.host_bound[s] = host[s][0] > sp.forward[s] || host[s][1] > sp.backward[s];
    sp.forward[s] = std::max(sp.forward[s], host[s][0]);
    sp.backward[s] = std::max(sp.backward[s], host[s][1]);
  }
  pick_critical(sp);
}

double paired_expert_exposure(const ShardedNetwork& shard, const std::vector<std::array<double, 3>>& layer_ms,
                              double bytes_per_element, const Communicator& ep, const Fabric& fabric,
                              ExpertDispatch dispatch, std::size_t first, std::size_t last) {
  // Megatron-Core's combined 1F1B runs, per transformer layer, on the compute stream attention's forward, the
  // MLP's backward then forward, attention's backward; on the communication stream the backward's combine
  // behind the first, both dispatches behind the second, the forward's combine behind the third.
  struct Sums {
    double attn_f = 0, attn_b = 0, mlp_f = 0, mlp_b = 0, dispatch = 0, combine = 0;
  };
  auto exposed = [](const Sums& b) {
    return std::max(0.0, b.combine - b.attn_f) + std::max(0.0, 2 * b.dispatch - (b.mlp_b + b.mlp_f)) +
           std::max(0.0, b.combine - b.attn_b);
  };
  double total = 0;
  Sums block;
  int current = -1;
  for (std::size_t l = first; l < last; ++l) {
    const ShardLayer& sl = shard.layers[l];
    if (!sl.in_block) continue;  // the embedding, the head and the loss run beside no all-to-all
    if (sl.block != current) {
      total += exposed(block);
      block = Sums{};
      current = sl.block;
    }
    // The expert layers are the MLP side; the rest of the block (norms, attention, router) the attention side.
    (sl.expert_parameters ? block.mlp_f : block.attn_f) += layer_ms[l][0];
    (sl.expert_parameters ? block.mlp_b : block.attn_b) += layer_ms[l][1];
    block.dispatch += expert_exchange_ms(bytes_per_element * sl.dispatch_elements_per_sample, sl, ep, fabric, dispatch);
    block.combine += expert_exchange_ms(bytes_per_element * sl.combine_elements_per_sample, sl, ep, fabric, dispatch);
  }
  return total + exposed(block);
}

double overlapped_expert_ms(const StagePlan& sp, const ParallelConfig& cfg) {
  const std::size_t c = sp.critical;
  const double a2a = c < sp.expert.size() ? sp.expert[c] : 0.0, compute = sp.forward[c] + sp.backward[c];
  const double m = d(cfg.micro_batches);
  // The warm-up forwards and cool-down backwards run alone: as many micro-batches as the stage keeps in flight.
  const double alone = std::min(m, micro_batches_in_flight(cfg, c));
  // A merged pair exposes what its layers' slots do not hide (a plan built by hand: the bulk bound).
  const double paired = c < sp.expert_paired.size() ? sp.expert_paired[c] : std::max(0.0, a2a - compute);
  return alone * a2a + (m - alone) * paired;
}

ParallelTiming finish_parallel(const StagePlan& sp, const ParallelConfig& cfg, const Fabric& fabric,
                               Precision precision) {
  const double e = activation_bytes(precision);
  const double mbs = d(cfg.micro_batch_size), m = d(cfg.micro_batches);
  const std::int64_t dp = cfg.data * cfg.context, p = cfg.pipeline;  // gradients: data x context GPUs
  const Communicator dp_comm = gradient_communicator(cfg, fabric);
  const Communicator pp_comm = communicator(cfg, fabric, Group::Pipeline);
  const std::size_t c = sp.critical;
  // The expert and context sums are empty in a plan that has neither (a StagePlan built by hand).
  auto at = [c](const std::vector<double>& v) { return c < v.size() ? v[c] : 0.0; };
  const double busy = sp.forward[c] + sp.backward[c] + sp.tensor[c] + at(sp.expert) + at(sp.context);
  ParallelTiming r;
  r.stage_bounds = sp.bounds;
  r.critical_stage = c;
  r.forward_ms = m * sp.forward[c];
  r.backward_ms = m * sp.backward[c];
  r.tensor_ms = m * sp.tensor[c];
  r.expert_ms = cfg.expert_overlap ? overlapped_expert_ms(sp, cfg) : m * at(sp.expert);
  r.context_ms = m * at(sp.context);
  if (c < sp.host_issue.size()) r.host_issue_ms = {m * sp.host_issue[c][0], m * sp.host_issue[c][1]};
  r.host_bound = c < sp.host_bound.size() && sp.host_bound[c];
  // 1F1B: the critical stage runs m slots back to back; the other stages' slots fill the warm-up and drain.
  // Interleaved (Narayanan et al. 2021, Sec. 2.2): the warm-up and drain are made of chunk slots, 1/v of a
  // stage's time each, so the bubble is (p - 1)/v stage slots: a fraction (p - 1)/(v m) of the compute.
  const double v = d(sp.virtual_stages);
  r.virtual_stages = sp.virtual_stages;
  r.bubble_ms = p > 1 ? (sp.busy_total - busy) / v : 0.0;
  // Each of the v m + p - 1 chunk slots on the critical path sends an activation forward and a gradient back:
  // every micro-batch crosses each of the v chunk boundaries of a stage (v-fold traffic per micro-batch).
  if (p > 1) r.pipeline_ms = 2.0 * (v * m + d(p) - 1) * p2p_ms(mbs * sp.boundary_elements * e, pp_comm, fabric);
  const double zero_shard = cfg.zero_stage >= 1 ? 1.0 / d(dp) : 1.0;
  r.optimizer_ms = sp.optimizer[c] * zero_shard;
  // Expert parallelism: the expert parameters' states are sharded and reduced over the expert-data group
  // (tensor x context x data / expert GPUs) instead of the data group (parallel/expert.cpp).
  const bool ep = cfg.expert > 1;
  const Communicator ed_comm = communicator(cfg, fabric, Group::ExpertData);
  if (ep) {
    const double expert_shard = cfg.zero_stage >= 1 ? 1.0 / d(ed_comm.size) : 1.0;
    r.optimizer_ms = (sp.optimizer[c] - at(sp.expert_optimizer)) * zero_shard + at(sp.expert_optimizer) * expert_shard;
  }
  // Gradients and updated weights exist for the trained parameters (a fine-tune's adapters); ZeRO-3 gathers
  // every weight, frozen ones too.
  const double P = sp.params[c], T = sp.trainable[c];
  // The gradients reduced: frozen weights' too where they get them (a plan built by hand has only `trainable`).
  const double R = c < sp.reduced.size() ? sp.reduced[c] : T;
  const double Pe = ep ? at(sp.expert_params) : 0.0, Te = ep ? at(sp.expert_trainable) : 0.0;
  // Folded experts can be replicated (and their gradients reduced) with no data parallelism: tensor 4, expert 2.
  if ((dp > 1 || (ep && ed_comm.size > 1)) && P > 0) {
    const double per_param = is_mixed(precision) ? 2.0 : 4.0;
    // Gradients are reduced in buckets while the last micro-batch's backward still runs; only what does
    // not fit behind that backward is exposed, and the last bucket always is.
    auto reduce = [&](double bytes, const Communicator& comm) {
      return cfg.zero_stage >= 1 ? allgather_ms(bytes, comm, fabric) : allreduce_ms(bytes, comm, fabric);
    };
    // The dense parameters over the data group, the experts' over the expert-data group.
    auto both = [&](double dense, double experts, const auto& collective) {
      return ep ? collective((dense - experts) * per_param, dp_comm) + collective(experts * per_param, ed_comm)
                : collective(dense * per_param, dp_comm);
    };
    // Once per step, whatever micro_batches is: the accumulated gradients are reduced after the last micro-batch
    // (as DDP's and FSDP's no_sync() accumulation, parallel.accumulate_unsharded, run it).
    const double all = both(R, Te, reduce);
    const double last_bucket = reduce(std::min(R * per_param, kGradientBucketBytes), dp_comm);
    r.data_ms = std::max(all - sp.backward[c], last_bucket);
    auto gather = [&](double bytes, const Communicator& comm) { return allgather_ms(bytes, comm, fabric); };
    if (cfg.zero_stage == 1 || cfg.zero_stage == 2) {
      // Updated weight shards are gathered after the optimizer step, before the next forward; overlapped
      // (--overlap-param-gather), bucket by bucket behind the first micro-batch's forward, the first bucket waited for.
      r.zero_ms = both(T, Te, gather);
      if (cfg.overlap_param_gather) {
        const double first = allgather_ms(std::min(T * per_param, kGradientBucketBytes), dp_comm, fabric);
        r.zero_ms = std::max(r.zero_ms - sp.forward[c], first);
      }
    } else if (cfg.zero_stage == 3) {
      // Weights are gathered layer by layer before forward and again before backward, prefetched behind
      // compute; the first layer's gather cannot be hidden.
      const double gathers = 2.0 * m * both(P, Pe, gather);
      const double first = allgather_ms(sp.largest_param[c] * per_param, dp_comm, fabric);
      r.zero_ms = std::max(gathers - (r.forward_ms + r.backward_ms), 0.0) + first;
    }
  }
  return r;
}

}  // namespace prenet
