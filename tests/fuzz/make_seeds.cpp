// Writes the fuzz seed corpora from the tests' own material: make_seeds <repository root> <output folder>.
// With --fixtures it also (re)writes tests/fixtures/onnx/*.onnx, the small ONNX files the other test
// suites (CLI, page) can load.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "onnx_writer.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/json_util.hpp"

namespace fs = std::filesystem;
using prenet::Json;

namespace {

void write(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// A small DeepSeek-V3 Hugging Face config (MLA, one dense block, then experts with a shared one) of `layers` blocks
/// and `mtp_layers` multi-token-prediction modules (none: the key left out, as in configs without MTP).
Json small_deepseek_v3(int layers, int mtp_layers = 0) {
  Json config{{"model_type", "deepseek_v3"},
              {"hidden_size", 64},
              {"intermediate_size", 128},
              {"moe_intermediate_size", 32},
              {"num_hidden_layers", layers},
              {"first_k_dense_replace", 1},
              {"num_attention_heads", 2},
              {"n_routed_experts", 4},
              {"num_experts_per_tok", 2},
              {"n_shared_experts", 1},
              {"q_lora_rank", 16},
              {"kv_lora_rank", 16},
              {"qk_nope_head_dim", 16},
              {"qk_rope_head_dim", 8},
              {"v_head_dim", 16},
              {"vocab_size", 100},
              {"max_position_embeddings", 64}};
  if (mtp_layers > 0) config["num_nextn_predict_layers"] = mtp_layers;
  return config;
}

std::string mlp_graph() {
  onnxw::Graph g;
  g.inputs.push_back(onnxw::value_info("x", {-1, 8, 32}));
  g.initializers = {onnxw::tensor("w1", {32, 64}, onnxw::kFloat, false),
                    onnxw::tensor("b1", {64}),
                    onnxw::tensor("ln.scale", {64}),
                    onnxw::tensor("ln.bias", {64}),
                    onnxw::tensor("w2", {64, 32}),
                    onnxw::int64s("shape", {0, -1})};
  g.nodes = {onnxw::node("MatMul", {"x", "w1"}, {"h"}, "fc1"),
             onnxw::node("Add", {"h", "b1"}, {"hb"}, "fc1_bias"),
             onnxw::node("Relu", {"hb"}, {"hr"}, "relu"),
             onnxw::node("LayerNormalization", {"hr", "ln.scale", "ln.bias"}, {"n"}, "ln"),
             onnxw::node("Erf", {"n"}, {"e"}, "erf"),
             onnxw::node("MatMul", {"e", "w2"}, {"y"}, "fc2"),
             onnxw::node("Reshape", {"y", "shape"}, {"flat"}, "flatten_all"),
             onnxw::node("Softmax", {"flat"}, {"p"}, "softmax")};
  return g.model();
}

std::string embedding_graph() {
  onnxw::Graph g;
  g.inputs.push_back(onnxw::value_info("ids", {-1, 10}, onnxw::kInt64));
  g.initializers = {onnxw::tensor("table", {100, 16}), onnxw::tensor("cls", {1, 1, 16}),
                    onnxw::tensor("pos", {1, 11, 16})};
  g.nodes = {onnxw::node("Gather", {"table", "ids"}, {"emb"}, "embed"),
             onnxw::node("Concat", {"cls", "emb"}, {"tokens"}, "with_cls", {onnxw::attr_i("axis", 1)}),
             onnxw::node("Add", {"tokens", "pos"}, {"x"}, "positions")};
  return g.model();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: make_seeds <repository root> <output folder> [--fixtures]\n";
    return 2;
  }
  fs::path root = argv[1], out = argv[2];
  int n = 0;
  // Requests: the shared case manifest.
  Json cases = Json::parse(read(root / "tests/cases/requests.json"));
  // A case gives its request as JSON ("request") or as raw text ("request_text": malformed JSON and the like).
  for (const auto& c : cases) {
    std::string text = c.contains("request") ? c["request"].dump() : c.value("request_text", std::string());
    write(out / "request", "case" + std::to_string(n++) + ".json", text);
  }
  // Presets: layer lists and Hugging Face configs.
  for (const auto& p : prenet::presets()) {
    if (p.model.contains("hf_config")) {
      write(out / "hf_config", p.id + ".json", p.model["hf_config"].dump());
    } else {
      Json model = p.model;
      model["input"] = p.input;
      write(out / "layer_list", p.id + ".json", model.dump());
    }
    write(out / "request", "preset-" + p.id + ".json",
          Json({{"model", {{"preset", p.id}}}, {"options", {{"per_layer", false}}}}).dump());
  }
  // Context parallelism (parallel.context): the ring over flash attention, with tensor and sequence parallelism.
  write(out / "request", "context-parallel.json",
        Json({{"model", {{"preset", "llama-3.2-1b"}}},
              {"training", {{"batch_size", 4}, {"seq_len", 8192}, {"precision", "bf16"}, {"attention", "flash"}}},
              {"parallel", {{"tensor", 2}, {"context", 4}, {"sequence_parallel", true}, {"micro_batch_size", 1}}},
              {"options", {{"per_layer", false}}}})
            .dump());
  // Gated DeltaNet beside gated attention (Qwen3-Next's layers), split over a tensor group of 2, in FP8.
  write(out / "layer_list", "gated-deltanet.json",
        Json::parse(R"J({"input": {"kind": "sequence", "seq_len": 128, "features": 64}, "layers": [
          {"type": "rmsnorm"}, {"type": "gated_deltanet", "key_heads": 2, "value_heads": 4, "key_head_dim": 16,
          "value_head_dim": 16, "split_projections": true}, {"type": "attention", "num_heads": 4, "num_kv_heads": 2,
          "causal": true, "bias": false, "output_gate": true, "qk_norm": "head"}]})J")
            .dump());
  write(out / "request", "gated-deltanet-tensor.json",
        Json({{"model", {{"preset", "qwen3-next-80b-a3b"}}},
              {"training", {{"batch_size", 8}, {"seq_len", 1024}, {"precision", "fp8"}, {"attention", "flash"}}},
              {"parallel",
               {{"tensor", 2}, {"data", 4}, {"expert", 8}, {"sequence_parallel", true}, {"micro_batch_size", 1}}},
              {"options", {{"per_layer", false}}}})
            .dump());
  // lit-gpt's FSDP LoRA (docs/FINETUNE.md): no_sync accumulation and frozen weights' gradients in mixed units.
  write(
      out / "request", "fsdp-no-sync.json",
      Json(
          {{"model", {{"preset", "gpt2"}}},
           {"training",
            {{"batch_size", 16},
             {"precision", "bf16"},
             {"master_weights", "bf16"},
             {"finetune", {{"method", "lora"}, {"rank", 8}, {"frozen_gradients", true}}}}},
           {"parallel",
            {{"gpus", 2}, {"fsdp", true}, {"micro_batches", 4}, {"accumulate_unsharded", true}, {"recompute", "full"}}},
           {"options", {{"per_layer", false}}}})
          .dump());
  // Megatron's embedding-and-loss pipeline split under the interleaved schedule (12 blocks + 2 over 2 x 7 chunks).
  write(out / "request", "pipeline_embedding_loss.json",
        Json({{"model", {{"preset", "gpt2"}}},
              {"training", {{"batch_size", 8}, {"precision", "bf16"}}},
              {"parallel",
               {{"gpus", 2},
                {"pipeline", 2},
                {"virtual_stages", 7},
                {"micro_batches", 8},
                {"pipeline_embedding_loss", true}}},
              {"options", {{"per_layer", false}}}})
            .dump());
  // Megatron's overlaps and folded experts: Qwen3-30B-A3B, tensor 2 with whole experts over 4 ranks, ZeRO 1.
  write(out / "request", "overlaps.json",
        Json({{"model", {{"preset", "qwen3-30b-a3b"}}},
              {"training",
               {{"batch_size", 8}, {"seq_len", 512}, {"precision", "bf16"}, {"state_accounting", "megatron_bf16"}}},
              {"parallel",
               {{"gpus", 4},
                {"tensor", 2},
                {"sequence_parallel", true},
                {"expert", 4},
                {"zero_stage", 1},
                {"micro_batches", 4},
                {"overlap_param_gather", true},
                {"expert_overlap", true},
                {"expert_dispatch", "hierarchical"},
                {"tensor_overlap", true}}},
              {"options", {{"per_layer", false}}}})
            .dump());
  // The input pipeline's floor (training.input_rate) on data-parallel replicas: the fuzzer mutates from it.
  write(out / "request", "input-rate.json",
        Json({{"model", {{"preset", "resnet50"}}},
              {"training", {{"batch_size", 256}, {"precision", "bf16"}, {"input_rate", 400}}},
              {"parallel", {{"gpus", 4}, {"zero_stage", 1}}},
              {"options", {{"per_layer", false}}}})
            .dump());
  // The host's floor on each pass and CUDA graphs (training.cuda_graphs), two sequences per micro-batch.
  write(out / "request", "cuda-graphs.json",
        Json({{"model", {{"preset", "bert-base"}}},
              {"training", {{"batch_size", 4}, {"seq_len", 32}, {"precision", "bf16"}, {"cuda_graphs", true}}},
              {"parallel", {{"gpus", 2}, {"micro_batches", 2}}},
              {"options", {{"per_layer", false}}}})
            .dump());
  // FlashAttention-2 everywhere (training.attention "flash2") on parts whose PyTorch default is cuDNN's kernel.
  write(out / "request", "attention-flash2.json",
        Json({{"model", {{"preset", "llama-3.2-1b"}}},
              {"training", {{"batch_size", 1}, {"seq_len", 256}, {"precision", "bf16"}, {"attention", "flash2"}}},
              {"hardware", {"h100-sxm", "b200"}},
              {"options", {{"per_layer", false}}}})
            .dump());
  // A Switch Transformer (sparse expert blocks), beside the presets' configs.
  write(out / "hf_config", "switch.json",
        Json({{"model_type", "switch_transformers"},
              {"d_model", 64},
              {"d_ff", 128},
              {"num_heads", 4},
              {"num_layers", 4},
              {"num_experts", 4},
              {"num_sparse_encoder_layers", 2},
              {"vocab_size", 100}})
            .dump());
  // Recomputation granularity and state accounting (issue 18): a parallel request the fuzzer mutates from.
  write(out / "request", "recompute-accounting.json",
        Json({{"model", {{"preset", "gpt2"}}},
              {"training", {{"batch_size", 16}, {"precision", "bf16"}, {"state_accounting", "megatron"}}},
              {"parallel", {{"gpus", 4}, {"zero_stage", 1}, {"recompute", "full"}, {"recompute_every", 2}}},
              {"options", {{"per_layer", false}}}})
            .dump());
  // Megatron-Core's recompute modules on a small DeepSeek-V3 (MLA, a dense block, experts with a shared one).
  write(out / "request", "recompute-modules.json",
        Json({{"model", {{"hf_config", small_deepseek_v3(2)}}},
              {"training", {{"batch_size", 4}, {"precision", "bf16"}, {"kernels", "megatron"}}},
              {"parallel",
               {{"gpus", 2},
                {"recompute", "selective"},
                {"recompute_modules", {"layernorm", "mla_up_proj", "moe_act", "mlp", "shared_experts"}}}},
              {"options", {{"per_layer", false}}}})
            .dump());
  // Multi-token prediction placed by a Megatron pipeline layout (the module 'm' with the loss) on a small DeepSeek-V3.
  write(out / "request", "pipeline-layout-mtp.json",
        Json({{"model", {{"hf_config", small_deepseek_v3(4, 1)}}},
              {"training", {{"batch_size", 8}, {"precision", "bf16"}, {"kernels", "megatron"}, {"mtp_layers", 1}}},
              {"parallel",
               {{"gpus", 2},
                {"pipeline", 2},
                {"micro_batches", 4},
                {"pipeline_layout", "Et|t|t|tmL"},
                {"recompute", "full"}}},
              {"options", {{"per_layer", false}}}})
            .dump());
  // Layers kept out of FP8 by name patterns and by position (training.bf16_modules, bf16_layers_at_end).
  write(out / "request", "fp8-bf16-modules.json",
        Json({{"model", {{"preset", "llama-3.2-1b"}}},
              {"training",
               {{"batch_size", 2},
                {"seq_len", 256},
                {"precision", "fp8"},
                {"fp8_recipe", "mxfp8"},
                {"bf16_modules", {"*.attn", "h.?.mlp*"}},
                {"bf16_layers_at_end", 1}}},
              {"hardware", {"b200"}},
              {"options", {{"per_layer", false}}}})
            .dump());
  // Real Hugging Face configs (tests/fixtures/hf): every family the table reads, nested, MoE, MLA and layer
  // patterns included, also wrapped in requests.
  for (const auto& entry : fs::recursive_directory_iterator(root / "tests/fixtures/hf")) {
    if (entry.path().extension() != ".json") continue;
    std::string text = read(entry.path());
    write(out / "hf_config", "real-" + entry.path().filename().string(), text);
    // A file with Python's bare Infinity (Mamba-2's time_step_limit) is no JSON: kept as a raw seed only.
    Json parsed = Json::parse(text, nullptr, false);
    if (parsed.is_discarded()) continue;
    write(out / "request", "hf-" + entry.path().filename().string(),
          Json({{"model", {{"hf_config", parsed}}}, {"options", {{"per_layer", false}}}}).dump());
    // The architecture form: every family's echoed model.architecture, sent back as a request.
    Json response = Json::parse(
        prenet::predict_json(Json({{"model", {{"hf_config", parsed}}}, {"options", {{"per_layer", false}}}}).dump()));
    if (response.contains("model") && response["model"].contains("architecture")) {
      write(
          out / "request", "arch-" + entry.path().filename().string(),
          Json({{"model", {{"architecture", response["model"]["architecture"]}}}, {"options", {{"per_layer", false}}}})
              .dump());
    }
  }
  // A hand-written architecture with a per-layer plan (sliding, chunked, NoPE, routed and dense layers).
  write(out / "request", "arch-plan.json",
        Json::parse(R"J({"model": {"architecture": {"hidden_size": 256, "num_hidden_layers": 4,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000, "num_experts": 4,
          "num_experts_per_tok": 2, "rms_norm": true, "gated_mlp": true, "hidden_act": "silu",
          "learned_positions": false, "layers": [{"attention": "sliding", "window": 64}, {"moe": true},
          {"attention": "chunked", "window": 32, "rope": false}, {"intermediate_size": 512}]}},
          "options": {"per_layer": false}})J")
            .dump());
  // Keras fixtures, also wrapped in requests.
  for (const auto& entry : fs::directory_iterator(root / "tests/fixtures/keras")) {
    std::string text = read(entry.path());
    write(out / "keras", entry.path().filename().string(), text);
    write(out / "request", "keras-" + entry.path().filename().string(),
          Json({{"model", {{"keras", Json::parse(text)}}}, {"options", {{"per_layer", false}}}}).dump());
  }
  // ONNX graphs, also base64 in requests.
  const std::pair<const char*, std::string> graphs[] = {{"lenet5.onnx", onnxw::lenet5()},
                                                        {"lenet5-no-weights.onnx", onnxw::lenet5(false)},
                                                        {"mlp.onnx", mlp_graph()},
                                                        {"cnn.onnx", onnxw::small_cnn_model()},
                                                        {"embedding.onnx", embedding_graph()},
                                                        {"tiny-gpt.onnx", onnxw::tiny_gpt()}};
  for (const auto& [name, bytes] : graphs) {
    write(out / "onnx", name, bytes);
    write(out / "request", std::string("onnx-") + name + ".json",
          Json({{"model", {{"onnx_base64", onnxw::base64(bytes)}}}, {"options", {{"per_layer", false}}}}).dump());
    // The fixtures stay small: no file with weights.
    bool small = std::string(name) != "lenet5.onnx";
    if (argc > 3 && std::string(argv[3]) == "--fixtures" && small) write(root / "tests/fixtures/onnx", name, bytes);
  }
  std::cout << "seeds written to " << out.string() << "\n";
  return 0;
}
