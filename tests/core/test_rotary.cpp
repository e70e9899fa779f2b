// Rotary position embeddings (attention `rotary_dim`; docs/MODEL_FORMAT.md): the kernels per kernel set, no
// activation memory, the layer-list checks, and the width the Hugging Face reader gives each family.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/catalog.hpp"
#include "prenet/features.hpp"

using namespace prenet;
using testutil::net_of;

namespace {

/// One causal attention layer of 4 heads of width 16 over 32 positions of width 64, rotating `rotary` of each head.
Network one_attention(int rotary) {
  return net_of(R"J({"input": {"kind": "sequence", "seq_len": 32, "features": 64},
    "layers": [{"type": "attention", "name": "attn", "num_heads": 4, "num_kv_heads": 2, "causal": true,
                "rotary_dim": )J" +
                std::to_string(rotary) + "}]}");
}

std::vector<const Kernel*> rotary_kernels(const StepWork& w, Phase phase) {
  std::vector<const Kernel*> out;
  for (const Kernel& k : w.kernels) {
    if (k.part == KernelPart::Rotary && k.phase == phase) out.push_back(&k);
  }
  return out;
}

double bytes_of(const std::vector<const Kernel*>& ks) {
  double total = 0;
  for (const Kernel* k : ks) total += k->bytes;
  return total;
}

/// The first attention layer's rotated width in the network `config` describes.
std::int64_t rotary_of(const Json& config) {
  TrainingConfig t;
  t.seq_len = 16;
  const Network net = resolve_model({{"hf_config", config}}, t);
  for (const Layer& l : net.layers) {
    if (l.type == LayerType::Attention) return l.attrs.rotary_dim;
  }
  FAIL("no attention layer");
  return -1;
}

Json decoder(const std::string& type) {
  return {{"model_type", type},       {"hidden_size", 512}, {"intermediate_size", 1024},    {"num_hidden_layers", 1},
          {"num_attention_heads", 8}, {"vocab_size", 1000}, {"max_position_embeddings", 64}};
}

}  // namespace

TEST_CASE("rotary kernels: Hugging Face's op chain under PyTorch's kernels, one fused kernel otherwise",
          "[rotary][attention]") {
  const std::int64_t b = 2;
  const double q = 2.0 * 32 * 4 * 16, k = 2.0 * 32 * 2 * 16, e = 2;  // elements of q and k, BF16
  const KernelContext eager(Precision::BF16);
  KernelContext compiled(Precision::BF16);
  compiled.compiled = true;
  const KernelContext megatron(Precision::BF16, AttentionKernel::Flash, KernelSet::Megatron);

  const StepWork none = step_work(one_attention(0), b, eager, Optimizer::Adam);
  CHECK(rotary_kernels(none, Phase::Forward).empty());
  CHECK(rotary_kernels(none, Phase::Backward).empty());

  // Whole heads: 5 kernels each for q and k forward (10 bytes per element), 7 backward (15).
  const StepWork full = step_work(one_attention(16), b, eager, Optimizer::Adam);
  CHECK(rotary_kernels(full, Phase::Forward).size() == 10);
  CHECK(rotary_kernels(full, Phase::Backward).size() == 14);
  CHECK(bytes_of(rotary_kernels(full, Phase::Forward)) == Approx(10 * e * (q + k)));
  CHECK(bytes_of(rotary_kernels(full, Phase::Backward)) == Approx(15 * e * (q + k)));
  // Nothing more is kept for backward: the products keep cos and sin.
  CHECK(full.layers[0].saved_activation_bytes == none.layers[0].saved_activation_bytes);

  // Half of each head: the chain over the rotated half, then the join with the rest over the whole tensor.
  const StepWork half = step_work(one_attention(8), b, eager, Optimizer::Adam);
  CHECK(rotary_kernels(half, Phase::Forward).size() == 12);
  CHECK(bytes_of(rotary_kernels(half, Phase::Forward)) == Approx(10 * e * (q + k) / 2 + 2 * e * (q + k)));

  // TransformerEngine's fused RoPE and torch.compile: one kernel a pass reading and writing the rotated parts.
  for (const KernelContext& fused : {compiled, megatron}) {
    const StepWork w = step_work(one_attention(8), b, fused, Optimizer::Adam);
    REQUIRE(rotary_kernels(w, Phase::Forward).size() == 1);
    REQUIRE(rotary_kernels(w, Phase::Backward).size() == 1);
    CHECK(rotary_kernels(w, Phase::Forward)[0]->bytes == Approx(2 * e * (q + k) / 2));
  }
}

TEST_CASE("rotary_dim must be an even width of at most head_dim", "[rotary][attention][errors]") {
  testutil::require_input_error([] { one_attention(7); }, "model.layers[0].rotary_dim", "even width");
  testutil::require_input_error([] { one_attention(18); }, "model.layers[0].rotary_dim", "at most head_dim (16)");
  testutil::require_input_error([] { one_attention(-2); }, "model.layers[0].rotary_dim", "");
}

TEST_CASE("the Hugging Face reader rotates what each family's attention rotates", "[rotary][hf_config]") {
  // Llama: the whole head (512 / 8 = 64).
  CHECK(rotary_of(decoder("llama")) == 64);
  // GPT-NeoX: rotary_pct (0.25 by default, Pythia's).
  Json neox = decoder("gpt_neox");
  CHECK(rotary_of(neox) == 16);
  neox["rotary_pct"] = 1.0;
  CHECK(rotary_of(neox) == 64);
  // Phi: partial_rotary_factor (phi-2: 0.4 of 80 = 32); 0.5 when absent.
  Json phi = decoder("phi");
  CHECK(rotary_of(phi) == 32);
  phi["hidden_size"] = 2560;
  phi["num_attention_heads"] = 32;
  phi["partial_rotary_factor"] = 0.4;
  CHECK(rotary_of(phi) == 32);
  // GPT-J: rotary_dim of its head (GPT-J-6B: 64 of 256).
  Json gptj = {{"model_type", "gptj"}, {"n_embd", 1024},    {"n_head", 4},     {"n_layer", 1},
               {"vocab_size", 1000},   {"n_positions", 64}, {"rotary_dim", 64}};
  CHECK(rotary_of(gptj) == 64);
  // ALiBi: nothing rotated (BLOOM always; Falcon with alibi).
  Json falcon = {{"model_type", "falcon"},
                 {"hidden_size", 512},
                 {"num_attention_heads", 8},
                 {"num_hidden_layers", 1},
                 {"vocab_size", 1000}};
  CHECK(rotary_of(falcon) == 64);
  falcon["alibi"] = true;
  CHECK(rotary_of(falcon) == 0);
  Json bloom = {{"model_type", "bloom"}, {"hidden_size", 512}, {"n_head", 8}, {"n_layer", 1}, {"vocab_size", 1000}};
  CHECK(rotary_of(bloom) == 0);
  // Learned positions: none.
  Json gpt2 = {{"model_type", "gpt2"}, {"n_embd", 512}, {"n_head", 8}, {"n_layer", 1}, {"vocab_size", 1000}};
  CHECK(rotary_of(gpt2) == 0);
  // A factor outside (0, 1] is an error naming it.
  phi["partial_rotary_factor"] = 0.0;
  testutil::require_input_error([&] { rotary_of(phi); }, "model.hf_config.partial_rotary_factor", "(0, 1]");
}
