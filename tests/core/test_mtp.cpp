// training.mtp_layers (docs/PREDICTION.md, "Multi-token prediction"): DeepSeek-V3's multi-token prediction depths as
// Megatron-Core builds them, their parameters (new: the block, norms and eh_proj; shared: embedding and head), their
// head GEMM and loss, their place in a pipeline layout and the embedding copy a later stage keeps.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "parallel/layout.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/memory.hpp"
#include "prenet/parallel.hpp"

using namespace prenet;
using testutil::call;
using testutil::layer;
using testutil::layer_index;
using testutil::require_error;

namespace {

// A small DeepSeek-V3-shaped config: one dense layer then three MoE layers, MLA, one shared expert.
constexpr std::int64_t kH = 256, kQLora = 64, kKvLora = 32, kHeads = 4, kNope = 16, kRope = 8, kV = 16;
constexpr std::int64_t kExperts = 8, kMoe = 128, kVocab = 1000, kSeq = 128;

Json small_config() {
  return {{"model_type", "deepseek_v3"},
          {"hidden_size", kH},
          {"intermediate_size", 512},
          {"kv_lora_rank", kKvLora},
          {"q_lora_rank", kQLora},
          {"qk_nope_head_dim", kNope},
          {"qk_rope_head_dim", kRope},
          {"v_head_dim", kV},
          {"num_attention_heads", kHeads},
          {"num_key_value_heads", kHeads},
          {"num_hidden_layers", 4},
          {"first_k_dense_replace", 1},
          {"moe_layer_freq", 1},
          {"moe_intermediate_size", kMoe},
          {"n_routed_experts", kExperts},
          {"n_shared_experts", 1},
          {"num_experts_per_tok", 2},
          {"n_group", 1},
          {"topk_group", 1},
          {"vocab_size", kVocab},
          {"tie_word_embeddings", false},
          {"rms_norm_eps", 1e-6},
          {"max_position_embeddings", 512},
          {"num_nextn_predict_layers", 1}};
}

/// The MLA parameters of DeepSeek-V3's attention with a query low rank: q_a, its norm, q_b, kv_a (latent and the
/// shared rope key), its norm, kv_b, o.
std::int64_t mla_params(std::int64_t h, std::int64_t q_lora, std::int64_t kv_lora, std::int64_t heads,
                        std::int64_t nope, std::int64_t rope, std::int64_t v) {
  return h * q_lora + q_lora + q_lora * heads * (nope + rope) + h * (kv_lora + rope) + kv_lora +
         kv_lora * heads * (nope + v) + heads * v * h;
}

/// One MoE decoder block: MLA, the router, the routed and shared SwiGLU experts (3 matrices each), two RMSNorms.
std::int64_t moe_block_params(std::int64_t h, std::int64_t mla, std::int64_t experts, std::int64_t shared,
                              std::int64_t moe) {
  return mla + experts * h + (experts + shared) * 3 * h * moe + 2 * h;
}

/// One MTP depth's new parameters: the block copy, eh_proj (2h x h, no bias), enorm, hnorm and the final norm. The
/// embedding and the head are the model's own.
std::int64_t mtp_depth_params(std::int64_t h, std::int64_t block) { return block + 2 * h * h + 3 * h; }

Network model(std::int64_t mtp, const Json& config = small_config()) {
  TrainingConfig tr;
  tr.seq_len = kSeq;
  tr.mtp_layers = mtp;
  return resolve_model({{"hf_config", config}}, tr);
}

Json request(const Json& training, const Json& parallel = nullptr) {
  Json r = {{"model", {{"hf_config", small_config()}}},
            {"training", training},
            {"hardware", {"h100-sxm"}},
            {"options", {{"per_layer", false}}}};
  if (!parallel.is_null()) r["parallel"] = parallel;
  return r;
}

}  // namespace

TEST_CASE("each MTP depth adds a block like the last, eh_proj and three norms; embedding and head are shared",
          "[mtp]") {
  const std::int64_t block =
      moe_block_params(kH, mla_params(kH, kQLora, kKvLora, kHeads, kNope, kRope, kV), kExperts, 1, kMoe);
  const Network base = model(0);
  for (std::int64_t depths : {1, 2}) {
    INFO(depths << " depths");
    const Network net = model(depths);
    CHECK(net.parameters() == base.parameters() + depths * mtp_depth_params(kH, block));
    // The lookup and the logits reuse the model's matrices.
    const Layer& embed = layer(net, "mtp0_embed");
    CHECK(embed.parameters == 0);
    CHECK(embed.attrs.tied_to == "wte");
    const Layer& head = layer(net, "mtp" + std::to_string(depths - 1) + "_head");
    CHECK(head.parameters == 0);
    CHECK(head.attrs.tied_to == "lm_head");
    CHECK(layer(net, "mtp.0.eh_proj").parameters == 2 * kH * kH);
    CHECK(layer(net, "mtp.0.concat").output_shape == Shape{kSeq, 2 * kH});
    // The modules sit between the last block and the final norm, marked with their depth; the heads after the loss.
    const std::size_t ln_f = layer_index(net, "ln_f");
    CHECK(layer_index(net, "mtp.0.enorm") < ln_f);
    CHECK(layer(net, "mtp." + std::to_string(depths - 1) + ".final_layernorm").mtp_depth == depths);
    CHECK(layer(net, "mtp.0.attn").type == LayerType::Mla);
    CHECK(layer(net, "mtp.0.experts_up").attrs.experts == kExperts);
    CHECK(layer(net, "ln_f").mtp_depth == 0);
    CHECK(layer_index(net, "loss") < layer_index(net, "mtp0_head"));
    CHECK(net.layers.back().type == LayerType::CrossEntropy);
    // Depth 2 reads depth 1's output; depth 1 the main model's last block.
    CHECK(layer(net, "mtp.0.hnorm").inputs.front() == static_cast<int>(layer_index(net, "h1.2.stream")));
    if (depths == 2) {
      CHECK(layer(net, "mtp.1.hnorm").inputs.front() == static_cast<int>(layer_index(net, "mtp.0.final_layernorm")));
    }
    // Each depth's modules make one block of their own (Megatron's MTP layer is one checkpoint under full).
    const std::vector<int> blocks = block_of_layers(net);
    CHECK(blocks[layer_index(net, "mtp.0.enorm")] == blocks[layer_index(net, "mtp.0.final_layernorm")]);
    CHECK(blocks[layer_index(net, "mtp0_embed")] == -1);
  }
  // The Hugging Face reader's note that no MTP layer is built goes once they are.
  bool noted = false;
  for (const std::string& w : base.warnings) noted = noted || w.rfind("num_nextn_predict_layers", 0) == 0;
  CHECK(noted);
  for (const std::string& w : model(1).warnings) CHECK(w.rfind("num_nextn_predict_layers", 0) != 0);
}

TEST_CASE("DeepSeek-V3's MTP module: 11.6 B new parameters over the 671 B model, embedding and head shared", "[mtp]") {
  TrainingConfig tr;
  const Network base = resolve_model({{"preset", "deepseek-v3"}}, tr);
  tr.mtp_layers = 1;
  const Network net = resolve_model({{"preset", "deepseek-v3"}}, tr);
  const std::int64_t h = 7168;
  const std::int64_t block = moe_block_params(h, mla_params(h, 1536, 512, 128, 128, 64, 128), 256, 1, 2048);
  CHECK(net.parameters() - base.parameters() == mtp_depth_params(h, block));
  // DeepSeek's 685 B counts the module with its own copies of the embedding and head (129,280 x 7,168 each): 14 B.
  CHECK(mtp_depth_params(h, block) + 2 * 129280 * h == Approx(13.46e9).epsilon(0.001));
}

TEST_CASE("MTP adds a head GEMM and a cross-entropy loss per depth", "[mtp]") {
  TrainingConfig tr;
  tr.seq_len = kSeq;
  const KernelContext context = kernel_context(tr);
  const Network base = model(0), net = model(2);
  const StepWork w0 = step_work(base, 2, context, tr.optimizer, tr.optimizer_impl);
  const StepWork w2 = step_work(net, 2, context, tr.optimizer, tr.optimizer_impl);
  std::int64_t losses = 0;
  for (const Layer& l : net.layers) losses += l.type == LayerType::CrossEntropy ? 1 : 0;
  CHECK(losses == 3);
  // The logits of every position through the vocabulary head: 2 x rows x h x V, forward, like the main head's.
  const double head = 2.0 * 2 * kSeq * kH * kVocab;
  CHECK(testutil::matmul_flops(w2, layer_index(net, "mtp1_head"), Phase::Forward) == Approx(head));
  CHECK(testutil::matmul_flops(w0, layer_index(base, "lm_head"), Phase::Forward) == Approx(head));
  // The head's weight gradient accumulates into the shared matrix (tied): its backward runs both GEMMs.
  CHECK(testutil::matmul_flops(w2, layer_index(net, "mtp1_head"), Phase::Backward) == Approx(2 * head));
  CHECK(w2.flops[0] > w0.flops[0]);
}

TEST_CASE("MTP in a pipeline: 'm' places the module, a later stage keeps a copy of the embedding",
          "[mtp][pipeline_layout]") {
  TrainingConfig tr;
  tr.seq_len = kSeq;
  const Network net = model(1);
  const ShardedNetwork shard = shard_network(net, 1);
  const std::vector<double> cost(shard.layers.size(), 1.0);
  const std::size_t n = shard.layers.size();
  const std::size_t first_moe = layer_index(net, "h1.0.ln_1"), mtp = layer_index(net, "mtp0_embed");
  // 4 blocks (1 dense, 3 MoE) and the depth over 2 stages; "Ett|ttmL": the module with the loss.
  ParallelConfig cfg =
      parse_parallel({{"gpus", 2}, {"pipeline", 2}, {"micro_batches", 2}, {"pipeline_layout", "Ett|ttmL"}}, 8);
  std::vector<std::size_t> bounds = chunk_bounds(cost, shard, cfg);
  CHECK(bounds == std::vector<std::size_t>{0, layer_index(net, "h1.1.ln_1"), n});
  // Standalone on a stage of its own (Megatron-Core's test layout "...|m|L"): the module alone in chunk 2 of 4.
  cfg = parse_parallel({{"gpus", 2}, {"pipeline", 2}, {"micro_batches", 2}, {"pipeline_layout", "Et|ttt|m|L"}}, 8);
  bounds = chunk_bounds(cost, shard, cfg);
  CHECK(bounds == std::vector<std::size_t>{0, first_moe, mtp, layer_index(net, "ln_f"), n});
  // The word embeddings are copied into the module's chunk, not the first: its weights and their states there.
  const std::vector<std::vector<std::size_t>> copies = embedding_copies(shard, bounds);
  CHECK(copies[0].empty());
  CHECK(copies[2] == std::vector<std::size_t>{layer_index(net, "wte")});
  const std::vector<double> saved(n, 0.0);
  const std::vector<StageInputs> stages = stage_inputs_of(shard, saved, saved, bounds, 2);
  double params = 0;
  for (std::size_t l = 0; l < n; ++l) params += static_cast<double>(shard.net.layers[l].parameters);
  CHECK(stages[0].params + stages[1].params == Approx(params + static_cast<double>(kVocab * kH)));
  // Without a layout the module stays on the last stage (Megatron-Core's default), with the copy.
  cfg = parse_parallel({{"gpus", 2}, {"pipeline", 2}, {"micro_batches", 2}}, 8);
  bounds = chunk_bounds(cost, shard, cfg);
  REQUIRE(bounds.size() == 3);
  CHECK(bounds[1] < mtp);
  CHECK(embedding_copies(shard, bounds)[1] == std::vector<std::size_t>{layer_index(net, "wte")});
  // One stage holds both: shared, no copy.
  CHECK(embedding_copies(shard, {0, n}).front().empty());
  // 'm' must match training.mtp_layers.
  cfg = parse_parallel({{"gpus", 2}, {"pipeline", 2}, {"micro_batches", 2}, {"pipeline_layout", "Ett|ttL"}}, 8);
  CHECK_THROWS_WITH(chunk_bounds(cost, shard, cfg), Catch::Contains("places 0 multi-token prediction layers 'm'"));
}

TEST_CASE("a predicted step with MTP: every path runs, and the echo carries the depths", "[mtp]") {
  const Json training = {{"batch_size", 8}, {"seq_len", kSeq}, {"precision", "bf16"}};
  Json with = training;
  with["mtp_layers"] = 1;
  for (const Json& parallel :
       {Json(nullptr), Json{{"gpus", 2}, {"pipeline", 2}, {"micro_batches", 4}, {"recompute", "full"}},
        Json{{"gpus", 4},
             {"tensor", 2},
             {"sequence_parallel", true},
             {"pipeline", 2},
             {"micro_batches", 4},
             {"pipeline_layout", "Ett|ttmL"},
             {"recompute", "selective"},
             {"recompute_modules", {"mla_up_proj"}}}}) {
    INFO(parallel.dump());
    Json a = call(request(training, parallel)), b = call(request(with, parallel));
    INFO(b.dump().substr(0, 400));
    if (parallel.contains("pipeline_layout")) {
      REQUIRE(a.contains("error"));  // the layout's 'm' needs the depth
      CHECK(a["error"]["field"] == "parallel.pipeline_layout");
    } else {
      REQUIRE_FALSE(a.contains("error"));
      CHECK_FALSE(a["training"].contains("mtp_layers"));
    }
    REQUIRE_FALSE(b.contains("error"));
    CHECK(b["training"]["mtp_layers"] == 1);
    if (!a.contains("error")) {
      CHECK(b["results"][0]["step_ms"].get<double>() > a["results"][0]["step_ms"].get<double>());
      CHECK(b["results"][0]["memory_gb"].get<double>() > a["results"][0]["memory_gb"].get<double>());
    }
  }
}

TEST_CASE("MTP under context parallelism: the module's concatenation runs position by position", "[mtp]") {
  const Json training = {
      {"batch_size", 8}, {"seq_len", kSeq}, {"precision", "bf16"}, {"attention", "flash"}, {"mtp_layers", 1}};
  Json out = call(request(training, {{"gpus", 2}, {"context", 2}}));
  INFO(out.dump().substr(0, 400));
  REQUIRE_FALSE(out.contains("error"));
  CHECK(out["results"][0]["parallel"]["context"] == 2);
}

TEST_CASE("MTP is refused where there is no language model to extend, naming training.mtp_layers", "[mtp]") {
  // No repeated block: nothing to copy.
  const Json plain = {{"input", {{"kind", "tokens"}, {"seq_len", 16}}},
                      {"layers",
                       {{{"type", "embedding"}, {"name", "wte"}, {"vocab_size", 100}, {"dim", 32}},
                        {{"type", "rmsnorm"}, {"name", "ln_f"}},
                        {{"type", "dense"}, {"name", "lm_head"}, {"units", 100}},
                        {{"type", "cross_entropy"}, {"name", "loss"}}}}};
  Json r = {{"model", plain}, {"training", {{"batch_size", 2}, {"mtp_layers", 1}}}, {"hardware", {"h100-sxm"}}};
  require_error(r, "training.mtp_layers", "no decoder block");
  // An image model.
  r = {{"model", {{"preset", "resnet50"}}},
       {"training", {{"batch_size", 2}, {"mtp_layers", 1}}},
       {"hardware", {"h100-sxm"}}};
  require_error(r, "training.mtp_layers", "model of tokens");
  // Beside frozen weights.
  Json lora = {{"batch_size", 2}, {"seq_len", kSeq}, {"mtp_layers", 1}, {"finetune", {{"method", "lora"}}}};
  require_error(request(lora), "training.mtp_layers", "method full");
  // Out of range.
  require_error(request({{"batch_size", 2}, {"mtp_layers", -1}}), "training.mtp_layers", "");
}

TEST_CASE("a layer list states its own MTP block (mtp_block), or why it has none", "[mtp][layer_list]") {
  // One decoder block of two dense layers; the stated MTP block is a single 32-wide dense layer.
  const Json block = {{"type", "repeat"},
                      {"name", "h"},
                      {"count", 2},
                      {"layers",
                       {{{"type", "dense"}, {"name", "up"}, {"units", 64}, {"bias", false}},
                        {{"type", "dense"}, {"name", "down"}, {"units", 32}, {"bias", false}}}}};
  Json lm = {{"input", {{"kind", "tokens"}, {"seq_len", 16}}},
             {"layers",
              {{{"type", "embedding"}, {"name", "wte"}, {"vocab_size", 100}, {"dim", 32}},
               block,
               {{"type", "rmsnorm"}, {"name", "ln_f"}},
               {{"type", "dense"}, {"name", "lm_head"}, {"units", 100}, {"bias", false}},
               {{"type", "cross_entropy"}, {"name", "loss"}}}}};
  auto params = [](const Json& model, std::int64_t depths) {
    Json r = {{"model", model},
              {"training", {{"batch_size", 2}, {"mtp_layers", depths}}},
              {"hardware", {"h100-sxm"}},
              {"options", {{"per_layer", false}}}};
    Json out = call(r);
    INFO(out.dump().substr(0, 300));
    REQUIRE_FALSE(out.contains("error"));
    return out["model"]["parameters"].get<std::int64_t>();
  };
  // Without mtp_block: a copy of the last block (2 x 32 x 64), eh_proj (2 x 32 x 32) and three norms (3 x 32).
  const std::int64_t base = params(lm, 0);
  CHECK(params(lm, 1) - base == 2 * 32 * 64 + 2 * 32 * 32 + 3 * 32);
  // With it: the stated block instead.
  Json own = lm;
  own["mtp_block"] = {{"features", 32},
                      {"layers", {{{"type", "dense"}, {"name", "mix"}, {"units", 32}, {"bias", false}}}}};
  CHECK(params(own, 1) - base == 32 * 32 + 2 * 32 * 32 + 3 * 32);
  CHECK(params(own, 0) == base);
  // A block that changes the stream's width, or reads another width, is refused; so is a model that says it has none.
  Json wide = own;
  wide["mtp_block"]["layers"][0]["units"] = 48;
  Json r = {{"model", wide}, {"training", {{"batch_size", 2}, {"mtp_layers", 1}}}, {"hardware", {"h100-sxm"}}};
  require_error(r, "training.mtp_layers", "writes [16, 48]");
  Json narrow = own;
  narrow["mtp_block"]["features"] = 16;
  r["model"] = narrow;
  require_error(r, "training.mtp_layers", "reads [16, 16]");
  Json none = lm;
  none["mtp_block"] = "this model has no MTP block";
  r["model"] = none;
  require_error(r, "training.mtp_layers", "this model has no MTP block");
  Json typo = own;
  typo["mtp_block"]["width"] = 32;
  r["model"] = typo;
  require_error(r, "model.mtp_block.width", "unknown field");
  // Only the layer-list form states it.
  r["model"] = {{"preset", "gpt2"}, {"mtp_block", "x"}};
  require_error(r, "model.mtp_block", "unknown field");
}
