// Hugging Face state-space configs: parameter counts equal what the transformers classes build
// (sum(p.numel() for p in model.parameters()), tied weights once), each written out from the modules'
// __init__ in modeling_mamba.py / modeling_mamba2.py / modeling_jamba.py. These need the `mamba` layer kind.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/hf_config.hpp"
#include "prenet/layer_list.hpp"

using namespace prenet;
using testutil::layer;

namespace {

using I64 = std::int64_t;

Json fixture(const std::string& name) {
  std::ifstream in(std::string(PRENET_SOURCE_DIR) + "/tests/fixtures/hf/" + name, std::ios::binary);
  REQUIRE(in.good());
  return Json::parse(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
}

Network from_config(const Json& config, std::int64_t seq_len = 64) {
  std::vector<std::string> warnings;
  Json model = hf_config_to_layers(config, "model.hf_config", seq_len, warnings);
  return parse_layer_list(model, "model.hf_config", {});
}

/// A token's parameters: each mixture-of-experts layer's top_k of its experts, everything else whole.
I64 active_of(const Network& net) {
  I64 n = 0;
  for (const auto& l : net.layers) {
    n += l.attrs.experts > 1 ? l.parameters / l.attrs.experts * l.attrs.top_k : l.parameters;
  }
  return n;
}

/// MambaBlock: norm (RMSNorm of h) + MambaMixer: in_proj h→2i, depthwise conv1d (i·k, i biases), x_proj
/// i→r+2n (no bias), dt_proj r→i (with bias), A_log i·n, D i, out_proj i→h.
I64 mamba_block(I64 h, I64 i, I64 n, I64 k, I64 r, bool bias, bool conv_bias) {
  return h + (h * 2 * i + (bias ? 2 * i : 0)) + (i * k + (conv_bias ? i : 0)) + i * (r + 2 * n) + (r * i + i) + i * n +
         i + (i * h + (bias ? h : 0));
}

/// Mamba2Block: norm h + Mamba2Mixer: in_proj h→(2i + 2gn + heads), conv1d over conv_dim = i + 2gn, dt_bias,
/// A_log and D (one per head), the gated RMSNorm over i, out_proj i→h.
I64 mamba2_block(I64 h, I64 i, I64 n, I64 g, I64 heads, I64 k, bool bias, bool conv_bias) {
  I64 proj = 2 * i + 2 * g * n + heads, conv_dim = i + 2 * g * n;
  return h + (h * proj + (bias ? proj : 0)) + (conv_dim * k + (conv_bias ? conv_dim : 0)) + 3 * heads + i +
         (i * h + (bias ? h : 0));
}

}  // namespace

TEST_CASE("mamba: state-spaces/mamba-2.8b-hf has 2,768,345,600 parameters", "[hf_config][ssm][ssm_counts]") {
  const I64 h = 2560, V = 50280;
  I64 expected = V * h + 64 * mamba_block(h, 5120, 16, 4, 160, false, true) + h;  // tied head, norm_f
  CHECK(expected == 2768345600);
  Network net = from_config(fixture("state-spaces--mamba-2.8b-hf.json"));
  CHECK(net.parameters() == expected);
  CHECK(layer(net, "layers.0.mixer").parameters == mamba_block(h, 5120, 16, 4, 160, false, true) - h);
}

TEST_CASE("mamba: state-spaces/mamba-130m-hf has 129,135,360 parameters", "[hf_config][ssm][ssm_counts]") {
  const I64 h = 768, V = 50280;
  I64 expected = V * h + 24 * mamba_block(h, 1536, 16, 4, 48, false, true) + h;
  CHECK(expected == 129135360);
  CHECK(from_config(fixture("state-spaces--mamba-130m-hf.json")).parameters() == expected);
}

TEST_CASE("falcon_mamba: tiiuae/falcon-mamba-7b has 7,272,665,088 parameters", "[hf_config][ssm][ssm_counts]") {
  // intermediate_size 8192 (not expand 16 × 4096); the b/c/dt RMS norms are buffers; untied head.
  const I64 h = 4096, V = 65024;
  I64 expected = 2 * V * h + 64 * mamba_block(h, 8192, 16, 4, 256, false, true) + h;
  CHECK(expected == 7272665088);
  CHECK(from_config(fixture("tiiuae--falcon-mamba-7b.json")).parameters() == expected);
}

TEST_CASE("mamba2: Mamba2Config's defaults (Codestral Mamba's sizes) give 7,285,403,648 parameters",
          "[hf_config][ssm][ssm_counts]") {
  // num_heads 128, head_dim 64, n_groups 8, state_size 128, expand 2, conv_kernel 4, untied.
  Json cfg = {{"model_type", "mamba2"}, {"hidden_size", 4096}, {"num_hidden_layers", 64}, {"vocab_size", 32768}};
  const I64 h = 4096, V = 32768;
  I64 expected = 2 * V * h + 64 * mamba2_block(h, 8192, 128, 8, 128, 4, false, true) + h;
  CHECK(expected == 7285403648);
  CHECK(from_config(cfg).parameters() == expected);
  cfg["use_bias"] = true;
  cfg["use_conv_bias"] = false;
  cfg["tie_word_embeddings"] = true;
  CHECK(from_config(cfg).parameters() == V * h + 64 * mamba2_block(h, 8192, 128, 8, 128, 4, true, false) + h);
}

TEST_CASE("jamba: ai21labs/Jamba-v0.1's sizes give 51.57 G parameters, 12.11 G active",
          "[hf_config][ssm][ssm_counts]") {
  // JambaConfig's defaults are Jamba-v0.1: 32 layers, attention at i % 8 == 4, 16 experts (top 2) at odd i.
  Json cfg = {{"model_type", "jamba"},
              {"architectures", {"JambaForCausalLM"}},
              {"hidden_size", 4096},
              {"num_hidden_layers", 32},
              {"vocab_size", 65536},
              {"mamba_dt_rank", 256},
              {"max_position_embeddings", 262144}};
  const I64 h = 4096, V = 65536, ffn = 14336, E = 16;
  const I64 mlp = 3 * h * ffn;                         // gate, up, down; no biases
  const I64 moe = E * mlp + h * E;                     // experts + router
  const I64 attn = h * h + 2 * h * (8 * 128) + h * h;  // q, k, v (8 KV heads of 128), o
  const I64 mixer = mamba_block(h, 8192, 16, 4, 256, false, true) - h + (256 + 2 * 16);  // + dt/B/C norms
  const I64 norms = 2 * h;  // input_layernorm, pre_ff_layernorm
  I64 expected = 2 * V * h + 4 * attn + 28 * mixer + 16 * moe + 16 * mlp + 32 * norms + h;
  CHECK(expected == 51570323328);
  Network net = from_config(cfg);
  CHECK(net.parameters() == expected);
  CHECK(active_of(net) == expected - 16 * (E - 2) * mlp);
  CHECK(net.active_parameters() == expected - 16 * (E - 2) * mlp);
  CHECK(expected - 16 * (E - 2) * mlp == 12110311296);
}
