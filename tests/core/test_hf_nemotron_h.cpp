// Hugging Face nemotron_h configs (NemotronHForCausalLM: Nemotron-H, Nemotron Nano 2, Nemotron 3 Nano): the
// parameter count against a formula written here from the modules' __init__ in transformers'
// src/transformers/models/nemotron_h/modeling_nemotron_h.py (NemotronHMamba2Mixer, NemotronHAttention,
// NemotronHMLP, NemotronHMoE with NemotronHExperts, NemotronHTopkRouter and shared_experts; NemotronHBlock's one
// RMSNorm; norm_f; lm_head), the layer sequence the pattern gives, and errors naming the field.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "helpers.hpp"
#include "hf_fixtures.hpp"
#include "layers/kind_helpers.hpp"
#include "layers/moe.hpp"
#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/layer_list.hpp"

using namespace prenet;
using testutil::require_input_error;

namespace {

using I64 = std::int64_t;
using testutil::config_int;

/// What the formula says: all parameters, and a token's (routed experts it does not visit left out).
struct Counts {
  I64 total = 0, active = 0;
};

/// NemotronHForCausalLM's parameters from the config's numbers (NemotronHConfig's defaults where absent).
Counts nemotron_h_formula(const Json& c) {
  const I64 h = config_int(c, "hidden_size", 4096), V = config_int(c, "vocab_size", 131072);
  const std::string pattern = c.at("hybrid_override_pattern").get<std::string>();
  // NemotronHMamba2Mixer: I = heads x head_dim; conv over I + 2 G N channels; in_proj h -> I + conv + heads.
  const I64 heads = config_int(c, "mamba_num_heads", 128), I = heads * config_int(c, "mamba_head_dim", 64);
  const I64 conv = I + 2 * config_int(c, "n_groups", 8) * config_int(c, "ssm_state_size", 128),
            K = config_int(c, "conv_kernel", 4);
  const bool conv_bias = c.value("use_conv_bias", true), proj_bias = c.value("use_bias", false);
  const I64 mamba = h * (I + conv + heads) + (proj_bias ? I + conv + heads : 0) + conv * K + (conv_bias ? conv : 0) +
                    3 * heads /* dt_bias, A_log, D */ + I /* gated RMSNorm */ + I * h + (proj_bias ? h : 0);
  // NemotronHAttention: q, k, v, o without bias, head_dim from the config.
  const I64 H = config_int(c, "num_attention_heads", 32), kv = config_int(c, "num_key_value_heads", 8),
            d = config_int(c, "head_dim", 128);
  const I64 attention = 2 * h * H * d + 2 * h * kv * d;
  // NemotronHMLP: up and down, no gate.
  const bool mlp_bias = c.value("mlp_bias", false);
  auto mlp = [&](I64 width) { return 2 * h * width + (mlp_bias ? width + h : 0); };
  // NemotronHMoE: router weight (hidden -> E; e_score_correction_bias is a buffer), E non-gated experts without
  // bias, the shared NemotronHMLP; with moe_latent_size L, the experts run L wide between fc1_latent_proj (h -> L)
  // and fc2_latent_proj (L -> h), biases per mlp_bias.
  const I64 E = config_int(c, "n_routed_experts", 8), k = config_int(c, "num_experts_per_tok", 2);
  const I64 latent = config_int(c, "moe_latent_size", 0), width = latent > 0 ? latent : h;
  const I64 expert = 2 * width * config_int(c, "moe_intermediate_size", 7688);
  const I64 latent_projections = latent > 0 ? 2 * h * latent + (mlp_bias ? latent + h : 0) : 0;
  const I64 moe =
      h * E + E * expert + latent_projections + mlp(config_int(c, "moe_shared_expert_intermediate_size", 7688));
  Counts n;
  const bool tied = c.value("tie_word_embeddings", false);
  n.total = V * h + (tied ? 0 : V * h) + h;  // embeddings, lm_head, norm_f
  n.active = n.total;
  for (char kind : pattern) {
    const I64 mixer = kind == 'M'   ? mamba
                      : kind == '*' ? attention
                      : kind == '-' ? mlp(config_int(c, "intermediate_size", 21504))
                                    : moe;
    n.total += h + mixer;  // NemotronHBlock.norm and its mixer
    n.active += h + mixer - (kind == 'E' ? (E - k) * expert : 0);
  }
  return n;
}

/// Each block's mixer, as the pattern's character: the layer after each block's RMSNorm ("norm", "norm_3").
std::string mixers_of(const Json& config) {
  const std::vector<Json> flat = testutil::hf_flat_layers(config);
  std::string kinds;
  for (std::size_t i = 0; i + 1 < flat.size(); ++i) {
    const std::string name = flat[i].value("name", "");
    if (flat[i]["type"] != "rmsnorm" || name == "norm_f") continue;
    const Json& next = flat[i + 1];
    const std::string next_name = next.value("name", "");
    if (next["type"] == "mamba") kinds += 'M';
    if (next["type"] == "attention") kinds += '*';
    if (next_name.rfind("mlp_up", 0) == 0) kinds += '-';
    if (next_name.rfind("router", 0) == 0) kinds += 'E';
  }
  return kinds;
}

/// nvidia/NVIDIA-Nemotron-Nano-9B-v2's architecture fields, as published (no whole config.json of it could be found
/// for tests/fixtures/hf; these values agree across several independent copies of the field list, e.g. the
/// NEMOTRON_H dictionaries quoted in SOURCES.md's nemotron_h note). A dense Nemotron-H: M, * and - layers only.
Json nano_9b_v2() {
  return {{"architectures", {"NemotronHForCausalLM"}},
          {"model_type", "nemotron_h"},
          {"hidden_size", 4480},
          {"num_hidden_layers", 56},
          {"vocab_size", 131072},
          {"hybrid_override_pattern", "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-"},
          {"num_attention_heads", 40},
          {"num_key_value_heads", 8},
          {"head_dim", 128},
          {"intermediate_size", 15680},
          {"mlp_hidden_act", "relu2"},
          {"mamba_num_heads", 128},
          {"mamba_head_dim", 80},
          {"n_groups", 8},
          {"ssm_state_size", 128},
          {"conv_kernel", 4},
          {"max_position_embeddings", 131072},
          {"tie_word_embeddings", false}};
}

const char* const kNano3 = "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json";
const char* const kSuper3 = "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4.json";

/// Checks that the network of `config` has the formula's total and active counts; returns the formula's.
Counts checked_counts(const Json& config) {
  const Counts expected = nemotron_h_formula(config);
  const Network net = testutil::hf_network(config);
  CHECK(net.parameters() == expected.total);
  CHECK(net.active_parameters() == expected.active);
  return expected;
}

}  // namespace

TEST_CASE("nemotron_h: Nemotron 3 Nano 30B-A3B's published config gives the formula's count, about 31.6 B",
          "[hf_config][nemotron_h]") {
  const Counts expected = checked_counts(testutil::read_fixture(kNano3));
  // NVIDIA's Nemotron 3 Nano report: 31.6 B total; about 3.2 B active without the (untied) input table.
  CHECK(static_cast<double>(expected.total) == Approx(31.6e9).epsilon(0.005));
  CHECK(static_cast<double>(expected.active - 131072 * 2688) == Approx(3.2e9).epsilon(0.02));
}

TEST_CASE("nemotron_h: Nemotron 3 Super's LatentMoE gives the formula's count, the release's tensor total",
          "[hf_config][nemotron_h]") {
  const Counts expected = checked_counts(testutil::read_fixture(kSuper3));
  // The BF16 release (NVIDIA Megatron-Bridge's verification card for it): 123,611,033,088 elements, of which 20,992
  // are the 41 FP32 router correction biases (buffers, not parameters) and 2,942,324,736 the MTP block (not built by
  // transformers; the MTP test below builds it).
  CHECK(expected.total == I64{123611033088} - 20992 - I64{2942324736});
  // About 12 B active: the name's A12B (with the untied input table left out).
  CHECK(static_cast<double>(expected.active - 131072 * 4096) == Approx(12.2e9).epsilon(0.03));
}

TEST_CASE("nemotron_h: LatentMoE routes on the hidden state and dispatches tokens at the latent width",
          "[hf_config][nemotron_h][moe]") {
  const Json cfg = testutil::read_fixture(kSuper3);
  std::vector<std::string> warnings;
  // Layer 1 is the first E of "MEMEMEM*...": the repeat numbered 1.
  const Json model = hf_config_to_layers(cfg, "model.hf_config", 256, warnings);
  Json layer1;
  for (const auto& l : model["layers"]) {
    if (l["type"] == "repeat" && l["start"] == 1) layer1 = l["layers"];
  }
  REQUIRE(layer1.is_array());
  auto named = [&](const std::string& name) {
    for (const auto& l : layer1) {
      if (l.value("name", "") == name) return l;
    }
    FAIL("no layer " << name);
    return Json();
  };
  CHECK(named("fc1_latent_proj")["units"] == 1024);
  CHECK(named("router")["inputs"] == Json{"norm"});
  CHECK(named("experts_up")["inputs"] == Json{"fc1_latent_proj"});
  CHECK(named("experts_down")["units"] == 1024);
  CHECK(named("fc2_latent_proj")["units"] == 4096);
  CHECK(named("shared_up")["inputs"] == Json{"norm"});
  // The expert layers read (dispatch) and write (combine) 1024-wide rows: a quarter of the hidden width.
  const Network net = testutil::hf_network(cfg);
  const std::vector<MoeRole> roles = moe_roles(net);
  int dispatching = 0;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    if (!roles[l].dispatches) continue;
    ++dispatching;
    CHECK(net.layers[l].input_shapes.front().back() == 1024);
  }
  CHECK(dispatching == 40);
  // Without moe_latent_size (null), the experts read the hidden state: 2 x 1024 x 2688 per expert becomes
  // 2 x 4096 x 2688, and the two projections go.
  Json plain = cfg;
  plain["moe_latent_size"] = nullptr;
  CHECK(testutil::hf_network(plain).parameters() - net.parameters() ==
        40 * (512 * 2 * (4096 - 1024) * I64{2688} - 2 * 4096 * I64{1024}));
}

TEST_CASE("nemotron_h: training.mtp_layers runs mtp_hybrid_override_pattern's layers, the release's MTP block",
          "[hf_config][nemotron_h][mtp]") {
  const Json cfg = testutil::read_fixture(kSuper3);
  auto resolved = [](const Json& config, std::int64_t depths) {
    TrainingConfig tr;
    tr.seq_len = 256;
    tr.mtp_layers = depths;
    return resolve_model({{"hf_config", config}}, tr);
  };
  const Network base = resolved(cfg, 0), one = resolved(cfg, 1), two = resolved(cfg, 2);
  // The release's MTP tensors (2,942,324,736, the preset's source): enorm, hnorm, eh_proj 2h -> h, the "*E"
  // layers (attention, then the LatentMoE) with their norms, and the final norm; the embedding and head are shared.
  CHECK(one.parameters() - base.parameters() == I64{2942324736});
  CHECK(two.parameters() - base.parameters() == 2 * I64{2942324736});
  // Megatron-Bridge's Super recipes run 2 depths over one repeated module (mtp_use_repeated_layer): one set of
  // weights, and the second depth's weight-gradient GEMMs still run.
  TrainingConfig repeated;
  repeated.seq_len = 256;
  repeated.mtp_layers = 2;
  repeated.mtp_repeated_layer = true;
  const Network shared = resolve_model({{"hf_config", cfg}}, repeated);
  CHECK(shared.parameters() == one.parameters());
  CHECK(shared.trainable_parameters() == one.trainable_parameters());
  CHECK(shared.layers.size() == two.layers.size());
  auto wgrad_flops = [](const Network& net) {
    const StepWork w = step_work(net, 1, KernelContext(Precision::BF16), Optimizer::Adam);
    double total = 0;
    for (const Kernel& k : w.kernels) {
      if (k.phase == Phase::Backward && k.cls == KernelClass::Gemm) total += k.flops * k.repeats;
    }
    return total;
  };
  CHECK(wgrad_flops(shared) == Approx(wgrad_flops(two)));
  TrainingConfig alone;
  alone.mtp_repeated_layer = true;
  require_input_error(
      [&] {
        resolve_model({{"hf_config", cfg}}, alone);
      },
      "training.mtp_repeated_layer", "needs training.mtp_layers");
  // Built, so no longer noted as left out; without training.mtp_layers the note says it is not counted.
  auto noted = [](const Network& net) {
    for (const auto& w : net.warnings) {
      if (w.rfind("num_nextn_predict_layers 1:", 0) == 0) return true;
    }
    return false;
  };
  CHECK(noted(base));
  CHECK_FALSE(noted(one));
  // Each depth's block: the attention mixer, then the experts, each after its norm (not the last main layer, E).
  std::string kinds;
  for (const Layer& l : one.layers) {
    if (l.mtp_depth != 1) continue;
    if (l.type == LayerType::Attention) kinds += '*';
    if (l.type == LayerType::Dense && l.attrs.experts > 1 && l.name.find("experts_up") != std::string::npos)
      kinds += 'E';
  }
  CHECK(kinds == "*E");
  // A config that names no MTP layers (Nemotron 3 Nano) has no block to copy: an error, not a guess.
  require_input_error([&] { resolved(testutil::read_fixture(kNano3), 1); }, "training.mtp_layers",
                      "mtp_hybrid_override_pattern");
  Json bad = cfg;
  bad["mtp_hybrid_override_pattern"] = "*X";
  require_input_error([&] { resolved(bad, 0); }, "model.hf_config.mtp_hybrid_override_pattern", "character 1 is 'X'");
}

TEST_CASE("nemotron_h: pipeline stages split the pattern layer by layer, as Megatron-Core's hybrid stack",
          "[hf_config][nemotron_h][pipeline]") {
  // Nemotron 3 Nano's 52 layers never repeat; when the whole pattern was one block, a 2-stage pipeline put every
  // layer on the first stage and only the head on the second. Now each stage gets about half the layers.
  const Json r = {{"model", {{"hf_config", testutil::read_fixture(kNano3)}}},
                  {"hardware", {"h100-sxm"}},
                  {"training", {{"batch_size", 16}, {"seq_len", 1024}, {"precision", "bf16"}}},
                  {"parallel", {{"gpus", 16}, {"pipeline", 2}, {"expert", 8}, {"micro_batch_size", 1}}},
                  {"options", {{"per_layer", false}}}};
  const Json out = testutil::call(r);
  INFO(out.dump().substr(0, 400));
  REQUIRE_FALSE(out.contains("error"));
  const Json stages = out["results"][0]["parallel"]["stage_layers"];
  REQUIRE(stages.size() == 2);
  const double first = stages[0].get<double>(), second = stages[1].get<double>();
  CHECK(std::min(first, second) / std::max(first, second) > 0.8);
  // A layout counts pattern layers as blocks: 52 of them.
  Json laid = r;
  laid["parallel"]["pipeline_layout"] = "Et*26|t*26L";
  const Json out2 = testutil::call(laid);
  INFO(out2.dump().substr(0, 400));
  CHECK_FALSE(out2.contains("error"));
}

TEST_CASE("nemotron_h: Nemotron Nano 9B v2's sizes give the formula's count, about 8.9 B", "[hf_config][nemotron_h]") {
  const Json cfg = nano_9b_v2();
  const Counts expected = nemotron_h_formula(cfg);
  const Network net = testutil::hf_network(cfg);
  CHECK(net.parameters() == expected.total);
  CHECK(net.active_parameters() == expected.total);  // dense
  CHECK(static_cast<double>(expected.total) == Approx(8.89e9).epsilon(0.005));
  // One more MLP layer adds its norm and 2 x 4480 x 15680; the mixer is 128 heads x 80, not expand x hidden.
  Json more = cfg;
  more["hybrid_override_pattern"] = cfg["hybrid_override_pattern"].get<std::string>() + "-";
  more["num_hidden_layers"] = 57;
  CHECK(testutil::hf_network(more).parameters() - net.parameters() == 4480 + 2 * 4480 * 15680);
}

TEST_CASE("nemotron_h: the layers follow the pattern, one mixer per block", "[hf_config][nemotron_h]") {
  const Json nano3 = testutil::read_fixture(kNano3);
  CHECK(mixers_of(nano3) == nano3["hybrid_override_pattern"].get<std::string>());
  const Json nano9 = nano_9b_v2();
  CHECK(mixers_of(nano9) == nano9["hybrid_override_pattern"].get<std::string>());
  // Every pattern layer is its own block, numbered as the stack counts it, even where the pattern repeats: one
  // repeat per layer ("layers.0.", "layers.1.", ...), as Megatron-Core's hybrid stack places layers on stages.
  Json periodic = nano9;
  periodic["hybrid_override_pattern"] = "M-M*M-M*";
  periodic["num_hidden_layers"] = 8;
  std::vector<std::string> warnings;
  const Json layers = hf_config_to_layers(periodic, "model.hf_config", 256, warnings)["layers"];
  for (int i = 0; i < 8; ++i) {
    const Json& repeat = layers[static_cast<std::size_t>(2 + i)];  // after the embeddings and the stream's start
    CHECK(repeat["type"] == "repeat");
    CHECK(repeat["name"] == "layers");
    CHECK(repeat["count"] == 1);
    CHECK(repeat["start"] == i);
  }
  const std::vector<int> blocks = block_of_layers(testutil::hf_network(periodic));
  CHECK(*std::max_element(blocks.begin(), blocks.end()) == 7);
  CHECK(mixers_of(periodic) == "M-M*M-M*");
  // transformers 5's list spelling reads the same.
  Json listed = periodic;
  listed.erase("hybrid_override_pattern");
  listed["layers_block_type"] = {"mamba", "mlp",   "linear_attention", "full_attention", "mamba",
                                 "mlp",   "mamba", "attention"};
  CHECK(mixers_of(listed) == "M-M*M-M*");
  // No rotary embedding and the config's head_dim (128, not 4480 / 40 = 112); the MLP is not gated.
  std::vector<Json> flat;
  testutil::expand_repeats(hf_config_to_layers(nano9, "model.hf_config", 256, warnings)["layers"], flat);
  for (const auto& l : flat) {
    if (l["type"] == "attention") {
      CHECK(l["head_dim"] == 128);
      CHECK_FALSE(l.contains("rotary_dim"));
    }
    if (l["type"] == "dense" && l.value("name", "").rfind("mlp_up", 0) == 0) {
      CHECK(l.value("gated", false) == false);
      CHECK(l["activation"] == "relu2");  // squared ReLU, its own activation (the test below)
    }
  }
}

TEST_CASE("nemotron_h: bad patterns and sizes are errors naming the field", "[hf_config][nemotron_h]") {
  const Json base = testutil::read_fixture(kNano3);
  Json cfg = base;
  std::string pattern = cfg["hybrid_override_pattern"];
  pattern[5] = 'A';
  cfg["hybrid_override_pattern"] = pattern;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.hybrid_override_pattern",
                      "character 5 is 'A'");
  cfg = base;
  cfg["hybrid_override_pattern"] = base["hybrid_override_pattern"].get<std::string>() + "M";
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.hybrid_override_pattern",
                      "has 53 layers, but num_hidden_layers is 52");
  cfg = base;
  cfg.erase("hybrid_override_pattern");
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.hybrid_override_pattern", "is required");
  cfg = base;
  cfg["moe_latent_size"] = 0;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.moe_latent_size",
                      "expected an integer in [1,");
  cfg = base;
  cfg["num_experts_per_tok"] = 129;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.num_experts_per_tok",
                      "at most n_routed_experts (128)");
  cfg = base;
  cfg["n_groups"] = 7;
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.n_groups",
                      "must divide mamba_num_heads (64)");
  cfg = base;
  cfg["mamba_hidden_act"] = "gelu";
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.mamba_hidden_act", "SiLU only");
  cfg = base;
  cfg.erase("hybrid_override_pattern");
  cfg["layers_block_type"] = {"mamba", "lstm"};
  require_input_error([&] { testutil::hf_network(cfg); }, "model.hf_config.layers_block_type[1]",
                      "expected one of mamba");
}

TEST_CASE("relu2 (squared ReLU) is relu then its square: two passes each way in PyTorch, one fused in Megatron",
          "[hf][nemotron_h][activation]") {
  // A non-gated MLP's up projection with each activation; bf16 (e = 2 bytes), 2 x 8 tokens, 64 -> 128.
  auto mlp = [](const char* act) {
    return testutil::net_of(std::string(R"({"input": {"kind": "sequence", "seq_len": 8, "features": 64}, "layers": [
        {"type": "dense", "name": "up", "units": 128, "bias": false, "activation": ")") +
                            act + R"("},
        {"type": "dense", "name": "down", "units": 64, "bias": false}]})");
  };
  const double e = 2, hidden = 2 * 8 * 128;
  auto elementwise = [&](const Network& net, const KernelContext& context, Phase phase) {
    const StepWork w = step_work(net, 2, context, Optimizer::None);
    double bytes = 0;
    int kernels = 0;
    for (const Kernel& k : w.kernels) {
      if (k.layer == 0 && k.phase == phase && k.cls == KernelClass::Elementwise) {
        bytes += k.bytes * k.repeats;
        ++kernels;
      }
    }
    return std::make_pair(kernels, bytes);
  };
  const Network relu = mlp("relu"), relu2 = mlp("relu2");
  const KernelContext eager(Precision::BF16, AttentionKernel::Flash, KernelSet::PyTorch);
  const KernelContext fused(Precision::BF16, AttentionKernel::Flash, KernelSet::Megatron);
  // PyTorch eager: relu (read, write) and square (read, write); backward square's and relu's (read two, write one).
  CHECK(elementwise(relu2, eager, Phase::Forward) == std::make_pair(2, 2 * 2 * e * hidden));
  CHECK(elementwise(relu2, eager, Phase::Backward) == std::make_pair(2, 2 * 3 * e * hidden));
  CHECK(elementwise(relu, eager, Phase::Forward) == std::make_pair(1, 2 * e * hidden));
  // Fused (Megatron's kernels): one pass each way, as relu's.
  CHECK(elementwise(relu2, fused, Phase::Forward) == elementwise(relu, fused, Phase::Forward));
  CHECK(elementwise(relu2, fused, Phase::Backward) == elementwise(relu, fused, Phase::Backward));
  // Its FLOPs: the max and the square.
  CHECK(activation_flops("relu2") == 2);
  // Hugging Face's name reads as this function.
  const Network nano = testutil::hf_network(testutil::read_fixture(kNano3));
  bool any = false;
  for (const Layer& layer : nano.layers) any = any || layer.attrs.activation == "relu2";
  CHECK(any);
}
