#include "parallel/offload.hpp"

#include <algorithm>
#include <string>

#include "prenet/error.hpp"
#include "prenet/memory.hpp"

namespace prenet {
namespace {

/// Milliseconds to move `bytes` at `gbs` GB/s.
double transfer_ms(double bytes, double gbs) { return bytes / (gbs * 1e6); }

/// Bytes of one gradient as it crosses the link (the training precision's: 16-bit under mixed precision).
double gradient_link_bytes(const TrainingConfig& training) { return is_mixed(training.precision) ? 2.0 : 4.0; }

}  // namespace

bool offloads(const TrainingConfig& training) {
  return training.offload != Offload::None || training.activation_offload;
}

void check_offload(const TrainingConfig& training) {
  if (training.offload != Offload::None && training.optimizer == Optimizer::None) {
    throw InputError("training.offload",
                     "offloads the optimizer's states and step, but training.optimizer is none; set an optimizer or "
                     "offload none");
  }
  const Optimizer o = training.optimizer;
  if (training.offload != Offload::None &&
      (o == Optimizer::AdamW8bit || o == Optimizer::PagedAdamW8bit || o == Optimizer::PagedAdamW)) {
    throw InputError("training.offload",
                     std::string("the CPU step cannot run ") + to_string(o) +
                         " (bitsandbytes' optimizers are GPU kernels); offload none, or adam/adamw");
  }
}

std::int64_t gpus_on_host(const HostSpec& host, std::int64_t job_gpus) {
  return std::max<std::int64_t>(1, std::min(host.gpus, job_gpus));
}

OffloadTime offload_time(const OffloadTraffic& tr, const TrainingConfig& training, const HostSpec& host) {
  OffloadTime t;
  if (training.offload != Offload::None) {
    // ZeRO-Offload: every pass's gradients go to the host (accumulated there) while backward runs; only what
    // backward does not cover is exposed.
    const double gradients = transfer_ms(tr.passes * tr.updated * gradient_link_bytes(training), host.link_gbs);
    t.gradients_ms = std::max(gradients - tr.backward_ms, 0.0);
    // The CPU step (DeepSpeed cpu_adam) streams each parameter's FP32 weight, gradient and states as the fused GPU
    // step does, and writes the 16-bit copy under mixed precision, at the host bandwidth the job's GPUs share.
    const double per_param = optimizer_bytes_per_parameter(training.optimizer, OptimizerImpl::Fused) +
                             (is_mixed(training.precision) ? 2.0 : 0.0);
    const double host_gbs = host.memory_bandwidth_gbs / static_cast<double>(std::max<std::int64_t>(1, tr.gpus_on_host));
    t.cpu_step_ms = transfer_ms(tr.updated * per_param, host_gbs);
    if (training.offload == Offload::Optimizer) {
      // The updated 16-bit weights go back before the next forward (no delayed parameter update).
      const double w16 = is_mixed(training.precision) ? 2.0 : 4.0;
      t.parameters_ms = transfer_ms(tr.updated * w16, host.link_gbs);
    } else {
      // Weights stream in layer by layer for every forward and backward, prefetched behind compute; the first
      // layer's load is not hidden.
      const double stream = transfer_ms(2.0 * tr.passes * tr.streamed_bytes, host.link_gbs);
      t.parameters_ms = std::max(stream - tr.compute_ms, 0.0) + transfer_ms(tr.largest_layer_bytes, host.link_gbs);
    }
  }
  if (training.activation_offload) t.activations_ms = tr.passes * exposed_activation_copies_ms(tr.layers, host);
  return t;
}

double exposed_activation_copies_ms(const std::vector<std::array<double, 3>>& layers, const HostSpec& host) {
  // torchtune OffloadActivations (use_streams): a saved tensor goes out on a side stream while the forward runs on
  // until the next tensor is saved, and comes back (prefetched) while the backward of the layers up to it runs.
  // A layer that saves starts a window; the layers that save nothing after it (a checkpointed block's rest) add
  // their compute to it.
  double exposed = 0, copy = 0, forward = 0, backward = 0;
  auto close = [&]() {
    exposed += std::max(copy - forward, 0.0) + std::max(copy - backward, 0.0);
    copy = forward = backward = 0;
  };
  for (const auto& [bytes, forward_ms, backward_ms] : layers) {
    if (bytes > 0) close();
    copy += transfer_ms(bytes, host.link_gbs);
    forward += forward_ms;
    backward += backward_ms;
  }
  close();
  return exposed;
}

OffloadTraffic single_gpu_traffic(const Network& net, const StepWork& work, const Timing& timing, double factor,
                                  const TrainingConfig& training, const HostSpec& host) {
  const StateBytes b = state_bytes(training);
  OffloadTraffic tr;
  tr.gpus_on_host = gpus_on_host(host, 1);
  const std::vector<bool> loss_side = loss_side_layers(net);  // not offloaded (move_to_host)
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const Layer& layer = net.layers[l];
    const double trained = static_cast<double>(trainable_parameters(layer));
    const double frozen =
        layer.trainable ? 0.0 : static_cast<double>(layer.parameters) * layer.frozen_bytes_per_parameter;
    tr.updated += trained;
    const double bytes = trained * b.weights16 + frozen;
    tr.streamed_bytes += bytes;
    tr.largest_layer_bytes = std::max(tr.largest_layer_bytes, bytes);
    const double fwd = timing.layers[l].ms[0] * factor, bwd = timing.layers[l].ms[1] * factor;
    tr.layers.push_back({loss_side[l] ? 0.0 : work.layers[l].saved_activation_bytes, fwd, bwd});
    tr.backward_ms += bwd;
    tr.compute_ms += fwd + bwd;
  }
  return tr;
}

OffloadTraffic stage_traffic(const ShardedNetwork& shard, const std::vector<double>& saved,
                             const std::vector<std::array<double, 3>>& layer_ms, const ParallelTiming& pt,
                             const ParallelConfig& cfg, const TrainingConfig& training, const HostSpec& host) {
  const StateBytes b = state_bytes(training);
  const double dp = static_cast<double>(cfg.data * cfg.context);  // ZeRO shards over data x context GPUs
  const double s_opt = cfg.zero_stage >= 1 ? 1.0 / dp : 1.0;
  const double s_w = cfg.zero_stage >= 3 ? 1.0 / dp : 1.0;
  OffloadTraffic tr;
  tr.gpus_on_host = gpus_on_host(host, cfg.gpus);
  tr.passes = static_cast<double>(cfg.micro_batches);
  tr.backward_ms = pt.backward_ms;
  tr.compute_ms = pt.forward_ms + pt.backward_ms;
  // The critical stage's layers: its chunks (one without interleaving), in the order they run.
  const std::size_t chunks = pt.stage_bounds.size() - 1;
  const std::size_t stages = chunks / static_cast<std::size_t>(std::max<std::int64_t>(pt.virtual_stages, 1));
  std::vector<std::size_t> layers;
  for (std::size_t j = pt.critical_stage; j < chunks; j += stages) {
    for (std::size_t l = pt.stage_bounds[j]; l < pt.stage_bounds[j + 1]; ++l) layers.push_back(l);
  }
  const std::vector<bool> loss_side = loss_side_layers(shard.net);  // not offloaded (move_to_host)
  for (std::size_t l : layers) {
    const Layer& layer = shard.net.layers[l];
    const double trained = static_cast<double>(trainable_parameters(layer));
    const double frozen =
        layer.trainable ? 0.0 : static_cast<double>(layer.parameters) * layer.frozen_bytes_per_parameter;
    tr.updated += trained * s_opt;
    const double bytes = (trained * b.weights16 + frozen) * s_w;
    tr.streamed_bytes += bytes;
    tr.largest_layer_bytes = std::max(tr.largest_layer_bytes, bytes);
    tr.layers.push_back({loss_side[l] ? 0.0 : saved[l], layer_ms[l][0], layer_ms[l][1]});
  }
  return tr;
}

}  // namespace prenet
