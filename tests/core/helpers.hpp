#pragma once
// Small helpers shared by the core's Catch2 tests: building networks from JSON text, asserting the
// exact field and message of an InputError, and summing kernel work.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>

#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/error.hpp"
#include "prenet/features.hpp"
#include "prenet/json_util.hpp"
#include "prenet/layer_list.hpp"
#include "prenet/learned.hpp"
#include "prenet/network.hpp"
#include "prenet/parallel.hpp"
#include "prenet/training.hpp"

namespace testutil {

using prenet::Json;

inline double d(std::int64_t v) { return static_cast<double>(v); }

/// What a per-op harness would measure for a kernel of class `dataset` that takes `step_ms` inside a step: the
/// class's harness floor added back in quadrature (prenet::in_step_ms takes it out).
inline double harness_measured_ms(double step_ms, const std::string& dataset) {
  const double floor_ms = prenet::harness_floor_ms(dataset);
  return std::sqrt(step_ms * step_ms + floor_ms * floor_ms);
}

/// An HGX-like two-level fabric: 8 GPUs per node on 450 GB/s links (3 us), 50 GB/s per GPU between nodes (5 us).
inline prenet::Fabric eight_per_node() {
  prenet::Fabric f;
  f.intra = {"nvlink", 450, 3};
  f.inter = {"ib", 50, 5};
  f.gpus_per_node = 8;
  return f;
}

/// A small GPT-2 config: 8 blocks of 8 heads of width 64, vocabulary 8000, 256 positions, dropout 0.1.
inline Json gpt_config() {
  return {{"model_type", "gpt2"}, {"n_embd", 512},
          {"n_head", 8},          {"n_layer", 8},
          {"vocab_size", 8000},   {"n_positions", 256},
          {"attn_pdrop", 0.1},    {"resid_pdrop", 0.1},
          {"embd_pdrop", 0.1},    {"activation_function", "gelu_new"}};
}

/// The core's answer to request `r` (predict_json), parsed.
inline Json call(const Json& r) { return Json::parse(prenet::predict_json(r.dump())); }

/// The answer to request `r` is an error naming `field`, its message containing `text`.
inline void require_error(const Json& r, const std::string& field, const std::string& text) {
  Json out = call(r);
  INFO(out.dump());
  REQUIRE(out.contains("error"));
  CHECK(out["error"]["field"] == field);
  CHECK_THAT(out["error"]["message"].get<std::string>(), Catch::Contains(text));
}

/// gpt_config() with `layers` blocks at sequence 256, sharded over no tensor group.
inline prenet::ShardedNetwork gpt_shard(std::int64_t layers) {
  prenet::TrainingConfig tr;
  tr.seq_len = 256;
  Json config = gpt_config();
  config["n_layer"] = layers;
  return prenet::shard_network(prenet::resolve_model({{"hf_config", config}}, tr), 1);
}

/// A training section with only a precision and an optimizer set (what the memory rules read).
inline prenet::TrainingConfig trained_with(prenet::Precision precision, prenet::Optimizer optimizer) {
  prenet::TrainingConfig t;
  t.precision = precision;
  t.optimizer = optimizer;
  return t;
}

/// Parses a layer-list model ({"input", "layers"}) given as JSON text; errors name "model".
inline prenet::Network net_of(const std::string& text, const prenet::InputOverrides& overrides = {}) {
  return prenet::parse_layer_list(Json::parse(text), "model", overrides);
}

/// Index of the layer called `name`; fails the test when there is none.
inline std::size_t layer_index(const prenet::Network& net, const std::string& name) {
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    if (net.layers[i].name == name) return i;
  }
  FAIL("no layer named " << name);
  return 0;
}

inline const prenet::Layer& layer(const prenet::Network& net, const std::string& name) {
  return net.layers[layer_index(net, name)];
}

/// FLOPs of the matrix kernels (GEMM, batched GEMM, conv, recurrent) of one layer in one phase.
inline double matmul_flops(const prenet::StepWork& w, std::size_t layer_i, prenet::Phase phase) {
  double total = 0;
  for (const auto& k : w.kernels) {
    if (static_cast<std::size_t>(k.layer) == layer_i && k.phase == phase && prenet::is_matmul(k.cls)) total += k.flops;
  }
  return total;
}

/// FLOPs of a layer's kernels of class `cls` in one phase.
inline double class_flops(const prenet::StepWork& w, std::size_t layer_i, prenet::Phase phase,
                          prenet::KernelClass cls) {
  double total = 0;
  for (const auto& k : w.kernels) {
    if (static_cast<std::size_t>(k.layer) == layer_i && k.phase == phase && k.cls == cls) total += k.flops;
  }
  return total;
}

/// Number of a layer's kernels of class `cls` in one phase.
inline int class_count(const prenet::StepWork& w, std::size_t layer_i, prenet::Phase phase, prenet::KernelClass cls) {
  int n = 0;
  for (const auto& k : w.kernels) {
    n += static_cast<std::size_t>(k.layer) == layer_i && k.phase == phase && k.cls == cls ? 1 : 0;
  }
  return n;
}

/// FLOPs of the GEMM view of a layer's kernels: sum of 2 m n k x batch x repeats (no elementwise work).
inline double gemm_view_flops(const prenet::StepWork& w, std::size_t layer_i, prenet::Phase phase) {
  double total = 0;
  for (const auto& k : w.kernels) {
    if (static_cast<std::size_t>(k.layer) != layer_i || k.phase != phase) continue;
    total += 2 * k.m * k.n * k.k * (k.batch > 1 ? k.batch : 1) * k.repeats;
  }
  return total;
}

/// Matrix-kernel FLOPs of the whole step in one phase.
inline double matmul_flops(const prenet::StepWork& w, prenet::Phase phase) {
  double total = 0;
  for (const auto& k : w.kernels) {
    if (k.phase == phase && prenet::is_matmul(k.cls)) total += k.flops;
  }
  return total;
}

/// Bytes of all kernels of one phase.
inline double phase_bytes(const prenet::StepWork& w, prenet::Phase phase) {
  double total = 0;
  for (const auto& k : w.kernels) {
    if (k.phase == phase) total += k.bytes;
  }
  return total;
}

/// Number of kernels of one layer in one phase.
inline int kernel_count(const prenet::StepWork& w, std::size_t layer_i, prenet::Phase phase) {
  int n = 0;
  for (const auto& k : w.kernels) {
    if (static_cast<std::size_t>(k.layer) == layer_i && k.phase == phase) ++n;
  }
  return n;
}

/// Runs `f`; requires a prenet::InputError whose field is exactly `field`, whose message starts with
/// "<field>: " and contains `needle`.
template <class F>
void require_input_error(F&& f, const std::string& field, const std::string& needle) {
  bool thrown = false;
  try {
    f();
  } catch (const prenet::InputError& e) {
    thrown = true;
    std::string message = e.what();
    INFO("message: " << message);
    CHECK(e.field() == field);
    CHECK_THAT(message, Catch::StartsWith(field + ": "));
    CHECK_THAT(message, Catch::Contains(needle));
  }
  INFO("expected an InputError on field " << field);
  CHECK(thrown);
}

/// Builds the network from `text` and requires the InputError described above.
inline void require_model_error(const std::string& text, const std::string& field, const std::string& needle,
                                const prenet::InputOverrides& overrides = {}) {
  INFO("model: " << text);
  require_input_error([&] { net_of(text, overrides); }, field, needle);
}

}  // namespace testutil
