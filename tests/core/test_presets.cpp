// Built-in presets: each resolves, matches its published parameter count, and does the published amount
// of work per step (FLOPs written out from the architectures and PREDICTION.md's formulas).
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

#include "helpers.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/embedded_data.hpp"
#include "prenet/error.hpp"

using namespace prenet;
using testutil::d;
using testutil::matmul_flops;

namespace {

Network preset(const std::string& id, TrainingConfig training = {}) {
  return resolve_model({{"preset", id}}, training);
}

TrainingConfig with_seq(std::int64_t seq) {
  TrainingConfig t;
  t.seq_len = seq;
  return t;
}

TrainingConfig with_image(std::int64_t size) {
  TrainingConfig t;
  t.image_size = size;
  return t;
}

double forward_matmul_per_sample(const Network& net) {
  StepWork w = step_work(net, 1, KernelContext(Precision::FP32), Optimizer::Adam);
  return matmul_flops(w, Phase::Forward);
}

}  // namespace

namespace {

/// One row of the zoo: the published parameter count (with its source) and what the standard formula says
/// about the work. For token models: matrix FLOPs per trained token (forward + backward) at a short context
/// `s` = 6 (N - lookup) + 12 s A (Kaplan et al. 2020, arXiv 2001.08361, Table 1: C = 6N with N the parameters
/// that multiply activations; the attention scores and P V add 2 x 2 s d_attn per layer forward, Narayanan
/// et al. 2021, arXiv 2104.04473), where `lookup` counts embedding tables only indexed (untied token tables,
/// positions, token types) and experts a token does not visit, and A sums d_attn over attention layers (T5's
/// decoder layers attend twice). For image models: forward multiply-accumulates per image as torchvision
/// publishes them (its "GFLOPS" column counts MACs).
struct ZooRow {
  const char* id;
  double published;       // parameters
  const char* source;     // where `published` comes from
  double lookup;          // parameters outside matrix products per token (token models)
  double attention;       // A: sum of attention widths (token models)
  double gmacs;           // forward GMACs per image at the default size (image models)
  bool own_test = false;  // the work is checked by a test of its own (the formulas above do not apply)
  // How close the built count must be to `published`: 1%, or half a unit of the figure's last digit where the
  // source rounds harder (a card's "4B" admits 3.5-4.5B).
  double tolerance = 0.01;
  double published_active =
      0;  // MoE: the source's active parameters per token (preset field published_active_parameters)
  double active_leaves_out = 0;  // parameters the source leaves out of its active count (gpt-oss: the token table)
};

/// Presets whose reading carries a caveat by design, each said in a warning: DeepSeek-V3's, Nemotron 3 Super's and
/// Qwen3.5's multi-token prediction layers (not built by transformers), Gemma 3's and Qwen3.5's vision towers (held,
/// not costed), Whisper's fixed decoder length and frozen encoder positions, Falcon-H1's µP multipliers (not costed),
/// Qwen3-VL's vision encoder (held).
const std::set<std::string> kCaveatedPresets = {
    "deepseek-v3",      "gemma-3-4b",      "gemma-3-12b", "gemma-3-27b",  "whisper-large-v3",
    "nemotron-3-super", "qwen3.5-35b-a3b", "qwen3.6-27b", "falcon-h1-7b", "qwen3-vl-8b"};

const double kLlamaExperts = 32.0 * 8 * 3 * 4096 * 14336;  // Mixtral: every expert's SwiGLU matrices

const ZooRow kZoo[] = {
    // Image models: torchvision model documentation (Acc@1 table: Params, GFLOPS).
    {"vgg11", 132863336, "torchvision vgg11", 0, 0, 7.61},
    {"vgg13", 133047848, "torchvision vgg13", 0, 0, 11.31},
    {"vgg16", 138357544, "torchvision vgg16", 0, 0, 15.47},
    {"vgg19", 143667240, "torchvision vgg19", 0, 0, 19.63},
    {"resnet18", 11689512, "torchvision resnet18", 0, 0, 1.81},
    {"resnet34", 21797672, "torchvision resnet34", 0, 0, 3.66},
    {"resnet50", 25557032, "torchvision resnet50", 0, 0, 4.09},
    {"resnet101", 44549160, "torchvision resnet101", 0, 0, 7.80},
    {"resnet152", 60192808, "torchvision resnet152", 0, 0, 11.51},
    {"mobilenet_v2", 3504872, "torchvision mobilenet_v2", 0, 0, 0.30},
    {"efficientnet_b0", 5288548, "torchvision efficientnet_b0", 0, 0, 0.39},
    {"inception_v3", 27161264, "torchvision inception_v3 (aux_logits=True; 5.71 GMACs at 299)", 0, 0, 5.71},
    {"densenet121", 7978856, "torchvision densenet121", 0, 0, 2.83},
    {"vit-b16", 86567656, "torchvision vit_b_16", 0, 0, 17.56},
    {"vit-l16", 304326632, "torchvision vit_l_16", 0, 0, 61.55},
    {"lenet5", 61706, "LeCun et al. 1998, modern form (C3 fully connected)", 0, 0, 416520e-9},
    // Token models: Hugging Face parameter counts of the *ForMaskedLM / *ForCausalLM / T5ForConditionalGeneration.
    {"lstm-lm", 37283600, "PyTorch nn.LSTM formula (no published count)", 10000.0 * 1024, 0, 0},
    {"bert-base", 109514298, "HF bert-base-uncased", (512 + 2) * 768.0, 12 * 768.0, 0},
    {"bert-large", 335174458, "HF bert-large-uncased", (512 + 2) * 1024.0, 24 * 1024.0, 0},
    {"roberta-base", 124697433, "HF roberta-base", (514 + 1) * 768.0, 12 * 768.0, 0},
    {"distilbert", 66985530, "HF distilbert-base-uncased", 512 * 768.0, 6 * 768.0, 0},
    {"gpt2", 124439808, "HF gpt2", 1024 * 768.0, 12 * 768.0, 0},
    {"gpt2-medium", 354823168, "HF gpt2-medium", 1024 * 1024.0, 24 * 1024.0, 0},
    {"gpt2-large", 774030080, "HF gpt2-large", 1024 * 1280.0, 36 * 1280.0, 0},
    {"gpt2-xl", 1557611200, "HF gpt2-xl", 1024 * 1600.0, 48 * 1600.0, 0},
    {"gpt3-xl", 1315575808, "Brown et al. 2020 Table 2.1 shape; HF EleutherAI/gpt-neo-1.3B", 2048 * 2048.0, 24 * 2048.0,
     0},
    {"gpt3-2.7b", 2651307520, "Brown et al. 2020 Table 2.1 shape; HF EleutherAI/gpt-neo-2.7B", 2048 * 2560.0,
     32 * 2560.0, 0},
    {"opt-1.3b", 1315758080, "HF facebook/opt-1.3b", 2050 * 2048.0, 24 * 2048.0, 0},
    {"llama-2-7b", 6738415616, "HF meta-llama/Llama-2-7b-hf", 32000 * 4096.0, 32 * 4096.0, 0},
    {"llama-2-13b", 13015864320, "HF meta-llama/Llama-2-13b-hf", 32000 * 5120.0, 40 * 5120.0, 0},
    {"llama-2-70b", 68976648192, "HF meta-llama/Llama-2-70b-hf", 32000 * 8192.0, 80 * 8192.0, 0},
    {"llama-3-8b", 8030261248, "HF meta-llama/Meta-Llama-3-8B", 128256 * 4096.0, 32 * 4096.0, 0},
    {"mistral-7b", 7241732096, "HF mistralai/Mistral-7B-v0.1", 32000 * 4096.0, 32 * 4096.0, 0},
    // 2 of 8 experts per token: 46.7B parameters, 12.9B active (Jiang et al. 2024).
    {"mixtral-8x7b", 46702792704, "HF mistralai/Mixtral-8x7B-v0.1", 32000 * 4096.0 + kLlamaExperts * 6 / 8, 32 * 4096.0,
     0},
    {"phi-2", 2779683840, "HF microsoft/phi-2", 51200 * 2560.0, 32 * 2560.0, 0},
    {"t5-base", 222903552, "HF t5-base (T5ForConditionalGeneration)", 2 * 32 * 12.0, (12 + 2 * 12) * 768.0, 0},
    {"t5-large", 737668096, "HF t5-large (T5ForConditionalGeneration)", 2 * 32 * 16.0, (24 + 2 * 24) * 1024.0, 0},
    // Encoder and decoder each see every token: 6 N per token, attention A = 6 encoder + 12 decoder widths.
    {"transformer-big-wmt", 210882560,
     "fairseq transformer_wmt_en_de_big_t2t with DLE's 33,712-token shared table, counted; Vaswani et al. 2017 "
     "quote 213M with a 37,000-token vocabulary",
     0, 18 * 1024.0, 0},
    // No published counts: counted from NVIDIA DeepLearningExamples' model definitions (see the preset sources).
    {"ssd300", 22894902, "DLE PyTorch/Detection/SSD ssd/model.py, counted", 0, 0, 0, true},
    {"transformer-xl-base", 191950298, "DLE Transformer-XL mem_transformer.py with wt103_base.yaml, counted", 0, 0, 0,
     true},
    // 2024-2026 families, architectures from real config.json files (sources in each preset). Rounded published
    // figures carry the tolerance their rounding allows. MoE rows: `lookup` adds the experts a token does not visit.
    {"llama-3.1-8b", 8e9, "Meta Llama 3.1 model card: 8B", 128256 * 4096.0, 32 * 4096.0, 0, false, 0.5 / 8},
    {"llama-3.1-70b", 70e9, "Meta Llama 3.1 model card: 70B", 128256 * 8192.0, 80 * 8192.0, 0},
    {"llama-3.1-405b", 405e9, "Meta Llama 3.1 model card: 405B", 128256 * 16384.0, 126 * 16384.0, 0},
    {"llama-3.2-1b", 1.23e9, "Meta Llama 3.2 model card: 1.23B (tied)", 0, 16 * 32 * 64.0, 0},
    {"llama-3.2-3b", 3.21e9, "Meta Llama 3.2 model card: 3.21B (tied)", 0, 28 * 24 * 128.0, 0},
    {"qwen2.5-7b", 7.616e9, "Qwen/Qwen2.5-7B: 7.616B", 152064 * 3584.0, 28 * 3584.0, 0},
    {"qwen2.5-72b", 72.7e9, "Qwen/Qwen2.5-72B-Instruct model card: 72.7B", 152064 * 8192.0, 80 * 8192.0, 0},
    {"mistral-small-24b", 24e9, "Mistral Small 3: 24B", 131072 * 5120.0, 40 * 32 * 128.0, 0, false, 0.5 / 24},
    {"qwen3-0.6b", 0.6e9, "Qwen/Qwen3-0.6B model card: 0.6B (tied)", 0, 28 * 16 * 128.0, 0, false, 0.05 / 0.6},
    {"qwen3-1.7b", 1.7e9, "Qwen/Qwen3-1.7B model card: 1.7B (tied)", 0, 28 * 16 * 128.0, 0, false, 0.05 / 1.7},
    {"qwen3-4b", 4.0e9, "Qwen/Qwen3-4B model card: 4.0B (tied)", 0, 36 * 32 * 128.0, 0, false, 0.05 / 4},
    {"qwen3-8b", 8.2e9, "Qwen/Qwen3-8B model card: 8.2B", 151936 * 4096.0, 36 * 32 * 128.0, 0},
    {"qwen3-14b", 14.8e9, "Qwen/Qwen3-14B model card: 14.8B", 151936 * 5120.0, 40 * 40 * 128.0, 0},
    {"qwen3-32b", 32.8e9, "Qwen/Qwen3-32B model card: 32.8B", 151936 * 5120.0, 64 * 64 * 128.0, 0},
    {"qwen3-30b-a3b", 30.5e9, "Qwen/Qwen3-30B-A3B model card: 30.5B, 3.3B activated",
     151936 * 2048.0 + 48 * (128 - 8) * 3 * 2048.0 * 768, 48 * 32 * 128.0, 0, false, 0.05 / 30.5, 3.3e9},
    {"qwen3-235b-a22b", 235e9, "Qwen/Qwen3-235B-A22B model card: 235B, 22B activated",
     151936 * 4096.0 + 94 * (128 - 8) * 3 * 4096.0 * 1536, 94 * 64 * 128.0, 0, false, 0.5 / 235, 22e9},
    {"deepseek-v3", 671e9, "DeepSeek-V3 technical report: 671B, 37B activated",
     129280 * 7168.0 + 58 * (256 - 8) * 3 * 7168.0 * 2048, 61 * 128 * (192 + 128) / 2.0, 0, false, 0.01, 37e9},
    {"gpt-oss-20b", 20.9e9, "gpt-oss model card: 20.9B, 3.6B active",
     201088 * 2880.0 + 24 * (32 - 4) * (2880 * 2 * 2880.0 + 2 * 2880 + 2880 * 2880 + 2880), 24 * 64 * 64.0, 0, false,
     0.01, 3.6e9, 201088 * 2880.0},
    {"gpt-oss-120b", 116.8e9, "gpt-oss model card: 116.8B, 5.1B active",
     201088 * 2880.0 + 36 * (128 - 4) * (2880 * 2 * 2880.0 + 2 * 2880 + 2880 * 2880 + 2880), 36 * 64 * 64.0, 0, false,
     0.01, 5.1e9, 201088 * 2880.0},
    // Multimodal: the image tower does not see text tokens, so 6N per token does not describe the work.
    {"gemma-3-4b", 4e9, "Gemma 3 model card: 4B", 0, 0, 0, true, 0.5 / 4},
    {"gemma-3-12b", 12e9, "Gemma 3 model card: 12B", 0, 0, 0, true, 0.5 / 12},
    {"gemma-3-27b", 27e9, "Gemma 3 model card: 27B", 0, 0, 0, true, 0.5 / 27},
    {"phi-4", 14.7e9, "Hugging Face microsoft/phi-4: 14.7B", 100352 * 5120.0, 40 * 40 * 128.0, 0},
    {"olmo-2-7b", 7e9, "OLMo 2 model card: 7B", 100352 * 4096.0, 32 * 4096.0, 0, false, 0.5 / 7},
    {"olmo-2-13b", 13.72e9, "OLMo 2 13B: 13.72B", 100352 * 5120.0, 40 * 5120.0, 0},
    {"mamba-2.8b", 2.8e9, "Mamba model cards: 2.8B (tied)", 0, 0, 0, false, 0.05 / 2.8},
    // Nemotron-H: its Mamba-2 layers' SSD scan is chunked matmuls outside 6N (test_hf_real_configs.cpp checks the
    // layers); the source rounds to 0.1B; active without the untied token table, as the source counts it.
    {"nemotron-3-nano", 31.6e9, "NVIDIA Nemotron 3 Nano: 31.6B, 3.2B active", 131072 * 2688.0, 0, 0, true, 0.05 / 31.6,
     3.2e9, 131072 * 2688.0},
    // Nemotron 3 Super: the release's element count less its router buffers and MTP block (the preset's source).
    {"nemotron-3-super", 120668687360.0, "NVIDIA Megatron-Bridge verification card: 123,611,033,088 elements with MTP",
     131072 * 4096.0, 0, 0, true, 0.01, 12e9, 131072 * 4096.0},
    // Granite 4.0 H-Small: Mamba-2 layers as Nemotron-H's (own test: test_hf_granite_hybrid.cpp); 32.2 B built, the
    // card's "32B" and "9B active" (8.8 B built, its tied token table included).
    {"granite-4.0-h-small", 32e9, "IBM Granite 4.0 H-Small model card: 32B, 9B active", 100352 * 4096.0, 0, 0, true,
     0.01, 9e9},
    // Qwen3-Next and Qwen3.5: Gated DeltaNet layers outside 6N (own tests: test_hf_qwen_next.cpp). "A3B" is a name,
    // not a count (3.25 B and 2.44 B active without the token tables): no published active figure is recorded. The
    // 27B's published figure is the safetensors', which holds the MTP layer transformers does not build (0.42 B).
    {"qwen3-next-80b-a3b", 80e9, "Qwen/Qwen3-Next-80B-A3B: 80B", 0, 0, 0, true},
    {"qwen3.5-35b-a3b", 35e9, "Qwen/Qwen3.5-35B-A3B: 35B", 0, 0, 0, true, 0.5 / 35},
    {"qwen3.6-27b", 27781427952, "Qwen/Qwen3.6-27B safetensors: 27,781,427,952 with the MTP layer", 0, 0, 0, true,
     0.02},
    // Falcon-H1: a Mamba-2 mixer beside attention in every layer (own test: test_hf_falcon_h1.cpp); 7.59 B built, the
    // release's name "7B".
    {"falcon-h1-7b", 7e9, "TII Falcon-H1 release: 7B", 0, 0, 0, true, 0.6 / 7},
    // Qwen3-VL 8B: the published figure is the safetensors', the vision encoder held (own test: test_hf_qwen3_vl.cpp).
    {"qwen3-vl-8b", 8767123696, "Qwen/Qwen3-VL-8B-Instruct safetensors: 8,767,123,696", 0, 0, 0, true, 0.001},
    {"whisper-large-v3", 1550e6, "openai/whisper README: large, 1550 M", 0, 0, 0, true},
    {"siglip-so400m", 400e6, "So400m image tower: about 400M", 0, 0, 0, true, 50.0 / 400},
};

/// The active parameters of `net` (a token's: routed experts it does not visit left out).
double active_of(const Network& net) { return static_cast<double>(net.active_parameters()); }

}  // namespace

TEST_CASE("the preset zoo: every preset resolves and matches its published parameter count within 1%", "[presets]") {
  const auto& list = presets();
  std::size_t live = 0;
  for (const ZooRow& row : kZoo) {
    INFO(row.id << " (" << row.source << ")");
    const Preset* p = find_preset(row.id);
    REQUIRE(p != nullptr);
    ++live;
    CHECK(p->id == row.id);
    CHECK_FALSE(p->name.empty());
    CHECK_FALSE(p->family.empty());
    CHECK_FALSE(p->source.empty());
    CHECK(p->published_parameters == row.published);
    Network net = preset(row.id);
    CHECK(net.name == row.id);
    for (const auto& w : net.warnings) INFO("warning: " << w);
    CHECK(net.warnings.empty() == (kCaveatedPresets.count(row.id) == 0));
    double rel = std::fabs(static_cast<double>(net.parameters()) - row.published) / row.published;
    CHECK(rel <= row.tolerance);
  }
  CHECK(list.size() == live);
  CHECK(find_preset("gpt3") == nullptr);
  CHECK(find_preset("") == nullptr);
  for (const auto& p : list) {
    INFO(p.id);
    // The API accepts it too, and the catalogue reports the same count.
    Json response = Json::parse(predict_json(
        Json({{"model", {{"preset", p.id}}}, {"training", {{"batch_size", 2}}}, {"options", {{"per_layer", false}}}})
            .dump()));
    INFO(response.dump().substr(0, 400));
    REQUIRE_FALSE(response.contains("error"));
    CHECK(response["model"]["parameters"] == preset(p.id).parameters());
    CHECK(response["model"]["source"] == "preset");
    CHECK(response["model"]["name"] == p.id);
    CHECK(response["results"][0]["step_ms"].get<double>() > 0);
  }
}

TEST_CASE("the preset zoo: work per token or image matches the standard formulas within 5%", "[presets][flops]") {
  const std::int64_t s = 128;  // a short context, where 6N dominates
  for (const ZooRow& row : kZoo) {
    INFO(row.id << " (" << row.source << ")");
    const Preset* p = find_preset(row.id);
    if (p == nullptr || row.own_test) continue;
    if (row.gmacs > 0) {
      Network net = preset(row.id);
      StepWork w = step_work(net, 1, KernelContext(Precision::FP32), Optimizer::Adam);
      const double forward = matmul_flops(w, Phase::Forward);
      CHECK(forward == Approx(2e9 * row.gmacs).epsilon(0.05));
      // Backward computes input and weight gradients: twice the forward, less the first layer's input gradient.
      double first = 0;
      for (std::size_t i = 0; i < net.layers.size() && first == 0; ++i) {
        first = testutil::matmul_flops(w, i, Phase::Forward);
      }
      CHECK(matmul_flops(w, Phase::Backward) == Approx(2 * forward - first).epsilon(0.01));
    } else {
      Network net = preset(row.id, with_seq(s));
      const double batch = 2;
      StepWork w = step_work(net, 2, KernelContext(Precision::FP32), Optimizer::Adam);
      const double per_token = (matmul_flops(w, Phase::Forward) + matmul_flops(w, Phase::Backward)) / (batch * s);
      const double expected = 6 * (row.published - row.lookup) + 12 * d(s) * row.attention;
      CHECK(per_token == Approx(expected).epsilon(0.05));
    }
  }
}

TEST_CASE("presets: published active parameters (MoE) are recorded and match the built network", "[presets][moe]") {
  for (const auto& embedded : embedded_presets()) {
    const Json doc = Json::parse(embedded.json);
    const std::string id(embedded.id);
    INFO(id);
    const ZooRow* row = nullptr;
    for (const ZooRow& r : kZoo) {
      if (r.id == id) row = &r;
    }
    REQUIRE(row != nullptr);
    CHECK(doc.value("published_active_parameters", 0.0) == row->published_active);
    if (row->published_active == 0) continue;
    CHECK(row->published_active < row->published);
    const double active = active_of(preset(id)) - row->active_leaves_out;
    CHECK(std::fabs(active - row->published_active) / row->published_active <= 0.03);
  }
}

TEST_CASE("mixtral: all experts' parameters are held, only the routed experts' FLOPs are spent", "[presets][moe]") {
  Network net = preset("mixtral-8x7b", with_seq(128));
  const Layer& up = testutil::layer(net, "h.0.experts_up");
  CHECK(up.attrs.experts == 8);
  CHECK(up.attrs.top_k == 2);
  CHECK(up.parameters == 8LL * 2 * 4096 * 14336);
  const double active = 46702792704.0 - kLlamaExperts * 6 / 8;
  CHECK(active == Approx(12.9e9).epsilon(0.005));  // "12.9B active parameters"
  StepWork w = step_work(net, 1, KernelContext(Precision::FP32), Optimizer::Adam);
  const std::size_t i = testutil::layer_index(net, "h.0.experts_up");
  CHECK(testutil::matmul_flops(w, i, Phase::Forward) == Approx(2.0 * 128 * 2 * (2 * 4096 * 14336)));
}

TEST_CASE("preset parameter counts that are published exactly match exactly", "[presets]") {
  CHECK(preset("vgg16").parameters() == 138357544);
  CHECK(preset("resnet50").parameters() == 25557032);
  CHECK(preset("gpt2").parameters() == 124439808);
  CHECK(preset("gpt2-large").parameters() == 774030080);
  // BertForMaskedLM: bert-base 109,514,298 and bert-large 335,174,458 (the papers round to 110M / 340M).
  CHECK(preset("bert-base").parameters() == 109514298);
  CHECK(preset("bert-large").parameters() == 335174458);
  // Sequence length and image size do not change parameter counts.
  CHECK(preset("gpt2", with_seq(128)).parameters() == 124439808);
  CHECK(preset("resnet50", with_image(160)).parameters() == 25557032);
}

TEST_CASE("gpt2 at seq 128: matmul FLOPs per step = 6 N tokens + 12 L h s tokens", "[presets][flops]") {
  const double V = 50257, h = 768, L = 12, s = 128, batch = 8;
  Network net = preset("gpt2", with_seq(128));
  CHECK(net.input.seq_len == 128);
  StepWork w = step_work(net, 8, KernelContext(Precision::FP32), Optimizer::Adam);
  const double tokens = batch * s;
  const double matmul = matmul_flops(w, Phase::Forward) + matmul_flops(w, Phase::Backward);

  // The rule of thumb with N = all parameters.
  const double N = 124439808;
  CHECK(matmul == Approx(6 * N * tokens).epsilon(0.10));

  // Exactly: every weight matrix (12 h^2 per block, and the tied V x h LM head) costs 2 FLOPs per token
  // forward and 4 backward; the attention scores and P V add 4 L h s forward and 8 L h s backward.
  // The embedding lookups are not matmuls and the first trainable layer (wte) has no matrix gradient.
  const double n_matmul = L * 12 * h * h + V * h;
  CHECK(matmul == Approx((6 * n_matmul + 12 * L * h * s) * tokens).epsilon(1e-9));
  CHECK(matmul_flops(w, Phase::Backward) == Approx(2 * matmul_flops(w, Phase::Forward)).epsilon(1e-9));

  // Forward per sequence = L (24 s h^2 + 4 s^2 h) + 2 s h V (PREDICTION.md).
  CHECK(matmul_flops(w, Phase::Forward) / batch == Approx(L * (24 * s * h * h + 4 * s * s * h) + 2 * s * h * V));
}

TEST_CASE("bert-base forward FLOPs follow 24 b s h^2 + 4 b s^2 h per layer", "[presets][flops]") {
  const double V = 30522, h = 768, L = 12, s = 128;
  Network net = preset("bert-base");
  CHECK(net.input.seq_len == 128);  // the preset's default
  // Encoder layers, the MLM transform (2 s h^2) and the tied decoder (2 s h V).
  const double expected = L * (24 * s * h * h + 4 * s * s * h) + 2 * s * h * h + 2 * s * h * V;
  CHECK(forward_matmul_per_sample(net) == Approx(expected).epsilon(1e-9));
}

TEST_CASE("resnet50 forward is about 4.1 GMACs (8.2 GFLOP) per 224 image", "[presets][flops]") {
  Network net = preset("resnet50");
  CHECK(net.input.image_size == 224);
  CHECK(net.layers.back().output_shape.size() <= 1);
  const double fwd = forward_matmul_per_sample(net);
  CHECK(fwd == Approx(8.2e9).epsilon(0.05));
  // torchvision resnet50 (v1.5): 4.09 GMACs counting convolutions and the classifier.
  CHECK(fwd == Approx(2 * 4.09e9).epsilon(0.005));
  // All work (including elementwise) stays close: matmuls dominate a CNN.
  StepWork w = step_work(net, 1, KernelContext(Precision::FP32), Optimizer::Adam);
  CHECK(w.flops[0] >= fwd);
  CHECK(w.flops[0] <= 1.05 * fwd);
  // Doubling the image side quadruples the convolution work (within padding effects).
  CHECK(forward_matmul_per_sample(preset("resnet50", with_image(448))) == Approx(4 * fwd).epsilon(0.02));
}

TEST_CASE("vgg16 forward is 15.47 GMACs (31 GFLOP) per 224 image", "[presets][flops]") {
  Network net = preset("vgg16");
  const double fwd = forward_matmul_per_sample(net);
  CHECK(fwd == Approx(31e9).epsilon(0.05));
  // Written out: 3x3 convolutions, MACs = H W 9 Cin Cout at each resolution, then the classifier.
  const double conv = 224.0 * 224 * 9 * (3 * 64 + 64 * 64) + 112.0 * 112 * 9 * (64 * 128 + 128 * 128) +
                      56.0 * 56 * 9 * (128 * 256 + 2 * 256 * 256) + 28.0 * 28 * 9 * (256 * 512 + 2 * 512 * 512) +
                      14.0 * 14 * 9 * (3 * 512 * 512);
  const double fc = 25088.0 * 4096 + 4096.0 * 4096 + 4096.0 * 1000;
  CHECK(conv + fc == Approx(15470264320.0));
  CHECK(fwd == Approx(2 * (conv + fc)).epsilon(1e-9));
  // The first convolution needs no input gradient, every other matmul layer does.
  StepWork w = step_work(net, 1, KernelContext(Precision::FP32), Optimizer::Adam);
  const double first = 2.0 * 224 * 224 * 9 * 3 * 64;
  CHECK(matmul_flops(w, Phase::Backward) == Approx(2 * fwd - first).epsilon(1e-9));
}

TEST_CASE("preset overrides: sequence length and image size", "[presets]") {
  CHECK(preset("gpt2").input.seq_len == 1024);
  CHECK(preset("gpt2", with_seq(64)).input.seq_len == 64);
  CHECK(preset("bert-large", with_seq(256)).input.seq_len == 256);
  CHECK(preset("vgg16", with_image(64)).input.image_size == 64);
  testutil::require_input_error([] { preset("gpt2", with_seq(4096)); }, "training.seq_len", "1024");
  testutil::require_input_error([] { preset("bert-base", with_seq(1024)); }, "training.seq_len", "512");
  testutil::require_input_error(
      [] {
        resolve_model({{"preset", "gpt-5"}}, TrainingConfig{});
      },
      "model.preset", "unknown preset \"gpt-5\"; expected one of");
  testutil::require_input_error(
      [] {
        resolve_model({{"preset", "gpt2"}, {"layers", Json::array()}}, TrainingConfig{});
      },
      "model", "exactly one of preset, hf_config, architecture, keras, onnx_base64 or layers");
  // A name labels the network.
  CHECK(resolve_model({{"preset", "gpt2"}, {"name", "mine"}}, with_seq(32)).name == "mine");
}

// Regression test (fixed): an image-size override too small for a preset fails inside the preset's own layer list and
// the error names "presets.vgg16.layers[9].pool_size", a path that is not in the request (API.md: the field is a dotted
// path into the request). The user's input at fault is training.image_size.
TEST_CASE("an override too small for a preset names training.image_size", "[presets][errors]") {
  Json response = Json::parse(predict_json(R"J({"model": {"preset": "vgg16"}, "training": {"image_size": 16}})J"));
  INFO(response.dump());
  REQUIRE(response.contains("error"));
  CHECK(response["error"]["field"] == "training.image_size");
}

TEST_CASE("transformer-big-wmt matches Vaswani et al.'s 213M within 1% (their vocabulary is 37,000)", "[presets]") {
  const double published = 213e6;
  Network net = preset("transformer-big-wmt");
  CHECK(std::fabs(d(net.parameters()) - published) / published <= 0.0101);
  // The same model with the paper's vocabulary: 3,288 more rows of 1024.
  CHECK(d(net.parameters()) + (37000 - 33712) * 1024.0 == Approx(published).epsilon(0.006));
}

TEST_CASE("ssd300: DLE's ResNet-50 backbone keeps 38x38, 8732 boxes of 81 classes, heads' MACs written out",
          "[presets][flops]") {
  Network net = preset("ssd300");
  CHECK(net.input.image_size == 300);
  CHECK(testutil::layer(net, "feature0").output_shape == Shape{1024, 38, 38});
  const int sides[] = {38, 19, 10, 5, 3, 1};
  for (int i = 0; i < 6; ++i) {
    CHECK(testutil::layer(net, "feature" + std::to_string(i)).output_shape[1] == sides[i]);
  }
  CHECK(testutil::layer(net, "confs").output_shape == Shape{81, 8732});
  CHECK(testutil::layer(net, "locs").output_shape == Shape{4, 8732});
  // Heads: 3x3 convolutions with padding 1, MACs = side^2 9 C boxes (4 + 81) at each feature map.
  const double channels[] = {1024, 512, 512, 256, 256, 256}, boxes[] = {4, 6, 6, 6, 4, 4};
  double heads = 0;
  for (int i = 0; i < 6; ++i) heads += d(sides[i]) * sides[i] * 9 * channels[i] * boxes[i] * 85;
  StepWork w = step_work(net, 1, KernelContext(Precision::FP32), Optimizer::Momentum);
  double head_flops = 0;
  for (int i = 0; i < 6; ++i) {
    for (const char* kind : {"loc", "conf"}) {
      head_flops += testutil::matmul_flops(w, testutil::layer_index(net, kind + std::to_string(i)), Phase::Forward);
    }
  }
  CHECK(head_flops == Approx(2 * heads).epsilon(1e-9));
  // Backbone to layer3 at 38x38 dominates: the whole forward is several times the heads' share, and a CNN's
  // elementwise work stays a few percent of its matmuls.
  const double fwd = matmul_flops(w, Phase::Forward);
  CHECK(fwd > 2 * head_flops);
  CHECK(w.flops[0] <= 1.05 * fwd);
}

TEST_CASE("transformer-xl-base: attention over 192 + 192 cached positions, relative scores, adaptive softmax",
          "[presets][flops]") {
  const double s = 192, t = 384, dm = 512, inner = 2048, L = 16, b = 4;
  Network net = preset("transformer-xl-base");
  CHECK(net.input.seq_len == 192);
  const Layer& attn = testutil::layer(net, "layers.0.attn");
  CHECK(attn.attrs.memory_len == 192);
  CHECK(attn.parameters == 512 * 1536 + 512 * 512 + 512 * 512);  // qkv_net, o_net, r_net (no biases)
  // Zipf's law over 267,735 ranks puts 80% of tokens in the 20k shortlist.
  const Layer& crit = testutil::layer(net, "crit");
  std::vector<double> shares = adaptive_softmax_tail_shares(crit.attrs);
  REQUIRE(shares.size() == 3);
  CHECK(1 - shares[0] - shares[1] - shares[2] == Approx(0.80).epsilon(0.01));
  const double tail = shares[0] * 20000 + shares[1] * 160000 + shares[2] * 67738;
  StepWork w = step_work(net, static_cast<std::int64_t>(b), KernelContext(Precision::FP32), Optimizer::Adam);
  // Forward per layer: QKV over segment + cache, r_net over t positions (once per step, not per sample),
  // Q K^T, (Q + r) R^T and P V over s x t, o_net, the two FFN matrices.
  const double per_layer = b * 2 * t * dm * 1536 + 2 * t * dm * 512 + b * 3 * 2 * s * t * 512 + b * 2 * s * dm * 512 +
                           b * 2 * 2 * s * dm * inner;
  const double softmax = b * 2 * s * dm * (20000 + tail);
  CHECK(matmul_flops(w, Phase::Forward) == Approx(L * per_layer + softmax).epsilon(1e-9));
  // The adaptive softmax does about a sixth of a full 267,735-way softmax's work.
  CHECK(softmax / (b * 2 * s * dm * 267735) == Approx(0.16).epsilon(0.05));
}

TEST_CASE("attention memory and adaptive softmax: errors name the field", "[presets][errors]") {
  auto model = [](Json layer) {
    return Json{{"input", {{"kind", "tokens"}, {"seq_len", 8}}},
                {"layers", {{{"type", "embedding"}, {"name", "emb"}, {"vocab_size", 100}, {"dim", 16}}, layer}}};
  };
  testutil::require_input_error(
      [&] {
        resolve_model(model({{"type", "adaptive_softmax"}, {"vocab_size", 100}, {"cutoffs", {50, 40}}}), {});
      },
      "model.layers[1].cutoffs[1]", "increase");
  testutil::require_input_error(
      [&] {
        resolve_model(model({{"type", "adaptive_softmax"},
                             {"vocab_size", 100},
                             {"cutoffs", Json::array({50})},
                             {"tail_shares", {0.5, 0.1}}}),
                      {});
      },
      "model.layers[1].tail_shares", "one share per tail cluster");
  testutil::require_input_error(
      [&] {
        resolve_model(
            model(
                {{"type", "adaptive_softmax"}, {"vocab_size", 90}, {"cutoffs", Json::array({50})}, {"tied_to", "emb"}}),
            {});
      },
      "model.layers[1].tied_to", "100 x 16");
  testutil::require_input_error(
      [&] {
        resolve_model(model({{"type", "attention"}, {"num_heads", 2}, {"memory_len", -1}}), {});
      },
      "model.layers[1].memory_len", "");
  // Given shares replace the Zipf estimate; a tied layer holds only its biases and the cluster rows.
  Network net = resolve_model(model({{"type", "adaptive_softmax"},
                                     {"vocab_size", 100},
                                     {"cutoffs", Json::array({50})},
                                     {"tied_to", "emb"},
                                     {"tail_shares", Json::array({0.25})}}),
                              {});
  CHECK(net.layers.back().parameters == 100 + 17);
  CHECK(adaptive_softmax_tail_shares(net.layers.back().attrs) == std::vector<double>{0.25});
}

TEST_CASE("a preset's config dtype is the training precision unless the request sets one, as a config's is",
          "[presets][precision]") {
  auto training_of = [](const std::string& request) {
    Json response = Json::parse(predict_json(request));
    REQUIRE_FALSE(response.contains("error"));
    return response["training"];
  };
  Json tr = training_of(R"({"model": {"preset": "qwen3-8b"}, "training": {"seq_len": 128}})");
  CHECK(tr["precision"] == "bf16");
  CHECK(tr["precision_from"] == "presets.qwen3-8b.hf_config.torch_dtype");
  tr = training_of(R"({"model": {"preset": "qwen3-8b"}, "training": {"seq_len": 128, "precision": "fp32"}})");
  CHECK(tr["precision"] == "fp32");
  CHECK_FALSE(tr.contains("precision_from"));
  // Llama 2's config says float16; a layer-list preset and a config without a dtype keep the request's default.
  CHECK(training_of(R"({"model": {"preset": "llama-2-7b"}, "training": {"seq_len": 128}})")["precision"] == "fp16");
  for (const char* id : {"resnet50", "bert-base"}) {
    tr = training_of(std::string(R"({"model": {"preset": ")") + id + R"("}})");
    CHECK(tr["precision"] == "fp32");
    CHECK_FALSE(tr.contains("precision_from"));
  }
}

TEST_CASE("a preset's torch_dtype is the one its source config file says", "[presets][precision]") {
  // Every preset whose hf_config names a dtype names the fixture it was copied from; the two must agree.
  const std::string dir = std::string(PRENET_SOURCE_DIR) + "/tests/fixtures/hf/";
  int checked = 0;
  for (const auto& p : presets()) {
    if (!p.model.contains("hf_config") || !p.model["hf_config"].contains("torch_dtype")) continue;
    INFO(p.id);
    std::string fixture;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      std::string stem = entry.path().stem().string();
      if (entry.path().extension() != ".json" || stem.find("--") == std::string::npos) continue;
      std::string repo = stem;
      repo.replace(repo.find("--"), 2, "/");
      if ((p.source.find(stem) != std::string::npos || p.source.find(repo + " ") != std::string::npos ||
           p.source.find(repo + ":") != std::string::npos || p.source.find(repo + ",") != std::string::npos ||
           p.source.find(repo + ";") != std::string::npos)) {
        fixture = entry.path().string();
      }
    }
    REQUIRE_FALSE(fixture.empty());
    std::ifstream in(fixture);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(Json::parse(text)["torch_dtype"] == p.model["hf_config"]["torch_dtype"]);
    ++checked;
  }
  CHECK(checked >= 15);
}
