// A transformer through every format: the same GPT-2-style decoder as a layer list, a Hugging Face config,
// Keras JSON (Functional, with KerasHub's PositionEmbedding and MultiHeadAttention) and an ONNX graph as
// torch.onnx.export writes attention. Also the ONNX attention recogniser's own cases.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "onnx_writer.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/keras.hpp"
#include "prenet/onnx_model.hpp"

using namespace prenet;
using testutil::layer;

namespace {

constexpr std::int64_t kVocab = 96, kPositions = 32, kSeq = 16, kWidth = 32, kHeads = 4;

Network from_onnx(const std::string& bytes) { return onnx_bytes_to_network(bytes, "model.onnx_base64", {}); }

/// The network without its trailing loss (Keras and ONNX graphs carry no loss function).
Network without_loss(Network net) {
  if (!net.layers.empty() && net.layers.back().type == LayerType::CrossEntropy) net.layers.pop_back();
  return net;
}

bool is_view(const Layer& l) {
  return l.type == LayerType::Identity || l.type == LayerType::Reshape || l.type == LayerType::Flatten;
}

/// The layer a layer reads, seen through views (which launch no kernel): its name, or "input".
std::string source_name(const Network& net, int producer) {
  while (producer >= 0 && is_view(net.layers[static_cast<std::size_t>(producer)])) {
    producer = net.layers[static_cast<std::size_t>(producer)].inputs.front();
  }
  return producer < 0 ? "input" : net.layers[static_cast<std::size_t>(producer)].name;
}

std::vector<const Layer*> kernel_layers(const Network& net) {
  std::vector<const Layer*> out;
  for (const auto& l : net.layers) {
    if (!is_view(l) && l.type != LayerType::CrossEntropy) out.push_back(&l);
  }
  return out;
}

/// Same layers apart from views: names, types, wiring, shapes, parameters and the attributes that set the work.
void require_same_layers(const Network& a, const Network& b) {
  auto x = kernel_layers(a), y = kernel_layers(b);
  REQUIRE(x.size() == y.size());
  CHECK(a.input.shape() == b.input.shape());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const Layer &p = *x[i], &q = *y[i];
    INFO("layer " << i << ": " << p.name << " / " << q.name);
    CHECK(p.name == q.name);
    CHECK(p.type == q.type);
    REQUIRE(p.inputs.size() == q.inputs.size());
    for (std::size_t k = 0; k < p.inputs.size(); ++k) CHECK(source_name(a, p.inputs[k]) == source_name(b, q.inputs[k]));
    CHECK(p.input_shapes == q.input_shapes);
    CHECK(p.output_shape == q.output_shape);
    CHECK(p.parameters == q.parameters);
    CHECK(p.needs_input_grad == q.needs_input_grad);
    CHECK(p.attrs.units == q.attrs.units);
    CHECK(p.attrs.bias == q.attrs.bias);
    CHECK(p.attrs.out_bias == q.attrs.out_bias);
    CHECK(p.attrs.num_heads == q.attrs.num_heads);
    CHECK(p.attrs.num_kv_heads == q.attrs.num_kv_heads);
    CHECK(p.attrs.head_dim == q.attrs.head_dim);
    CHECK(p.attrs.vocab_size == q.attrs.vocab_size);
    CHECK(p.attrs.dim == q.attrs.dim);
    CHECK(p.attrs.rate == q.attrs.rate);
    CHECK((p.attrs.activation.empty() ? std::string("none") : p.attrs.activation) ==
          (q.attrs.activation.empty() ? std::string("none") : q.attrs.activation));
  }
}

/// Same kernels, in order (class, phase, FLOPs, bytes), and the same PreNeT CO and CM per layer.
void require_same_features(const Network& a, const Network& b) {
  for (Precision p : {Precision::FP32, Precision::BF16}) {
    StepWork x = step_work(without_loss(a), 8, p, Optimizer::Adam);
    StepWork y = step_work(without_loss(b), 8, p, Optimizer::Adam);
    REQUIRE(x.kernels.size() == y.kernels.size());
    for (std::size_t k = 0; k < x.kernels.size(); ++k) {
      INFO("kernel " << k << " of layer " << a.layers[static_cast<std::size_t>(x.kernels[k].layer)].name);
      CHECK(x.kernels[k].cls == y.kernels[k].cls);
      CHECK(x.kernels[k].phase == y.kernels[k].phase);
      CHECK(x.kernels[k].flops == y.kernels[k].flops);
      CHECK(x.kernels[k].bytes == y.kernels[k].bytes);
    }
    for (Phase ph : {Phase::Forward, Phase::Backward, Phase::Optimizer}) {
      CHECK(x.flops[static_cast<std::size_t>(ph)] == y.flops[static_cast<std::size_t>(ph)]);
    }
    std::map<std::string, std::pair<double, double>> by_name;
    for (std::size_t l = 0; l < a.layers.size(); ++l) by_name[a.layers[l].name] = {x.layers[l].co, x.layers[l].cm};
    for (std::size_t l = 0; l < b.layers.size(); ++l) {
      if (is_view(b.layers[l]) || !by_name.count(b.layers[l].name)) continue;
      INFO(b.layers[l].name);
      CHECK(by_name[b.layers[l].name].first == y.layers[l].co);
      CHECK(by_name[b.layers[l].name].second == y.layers[l].cm);
    }
  }
}

// ---- Keras 3 Functional JSON, written as model.to_json() writes it

Json keras_tensor(const std::string& layer, Json shape) {
  return {{"class_name", "__keras_tensor__"},
          {"config", {{"shape", std::move(shape)}, {"dtype", "float32"}, {"keras_history", {layer, 0, 0}}}}};
}

Json keras_layer(const std::string& cls, const std::string& name, Json config, Json args) {
  config["name"] = name;
  config["trainable"] = true;
  Json inbound = Json::array();
  if (!args.is_null()) inbound.push_back({{"args", std::move(args)}, {"kwargs", Json::object()}});
  return {{"module", "keras.layers"},   {"class_name", cls}, {"config", std::move(config)},
          {"registered_name", nullptr}, {"name", name},      {"inbound_nodes", std::move(inbound)}};
}

/// The decoder in Keras: Embedding + PositionEmbedding (KerasHub), pre-LN blocks of MultiHeadAttention and Dense.
Json keras_gpt(std::int64_t layers) {
  Json seq = {nullptr, kSeq, kWidth};
  auto t = [&](const std::string& n) { return keras_tensor(n, seq); };
  Json ls = Json::array();
  ls.push_back(keras_layer("InputLayer", "input_ids", {{"batch_shape", {nullptr, kSeq}}, {"dtype", "int32"}}, nullptr));
  ls.push_back(keras_layer("Embedding", "wte", {{"input_dim", kVocab}, {"output_dim", kWidth}},
                           Json::array({keras_tensor("input_ids", {nullptr, kSeq})})));
  Json pe = keras_layer("PositionEmbedding", "wpe", {{"sequence_length", kPositions}}, Json::array({t("wte")}));
  pe["module"] = "keras_hub.layers";
  ls.push_back(pe);
  ls.push_back(keras_layer("Add", "embed", Json::object(), Json::array({Json::array({t("wte"), t("wpe")})})));
  std::string x = "embed";
  for (std::int64_t l = 0; l < layers; ++l) {
    std::string p = "h." + std::to_string(l) + ".";
    ls.push_back(
        keras_layer("LayerNormalization", p + "ln_1", {{"axis", {-1}}, {"center", true}}, Json::array({t(x)})));
    ls.push_back(keras_layer("MultiHeadAttention", p + "attn",
                             {{"num_heads", kHeads},
                              {"key_dim", kWidth / kHeads},
                              {"value_dim", kWidth / kHeads},
                              {"dropout", 0.0},
                              {"use_bias", true},
                              {"output_shape", nullptr},
                              {"attention_axes", nullptr}},
                             Json::array({t(p + "ln_1"), t(p + "ln_1")})));
    ls.push_back(
        keras_layer("Add", p + "attn_residual", Json::object(), Json::array({Json::array({t(x), t(p + "attn")})})));
    ls.push_back(keras_layer("LayerNormalization", p + "ln_2", {{"axis", {-1}}, {"center", true}},
                             Json::array({t(p + "attn_residual")})));
    ls.push_back(keras_layer("Dense", p + "mlp_up", {{"units", 4 * kWidth}, {"activation", "gelu"}, {"use_bias", true}},
                             Json::array({t(p + "ln_2")})));
    ls.push_back(keras_layer("Dense", p + "mlp_down", {{"units", kWidth}, {"activation", "linear"}, {"use_bias", true}},
                             Json::array({keras_tensor(p + "mlp_up", {nullptr, kSeq, 4 * kWidth})})));
    ls.push_back(keras_layer("Add", p + "stream", Json::object(),
                             Json::array({Json::array({t(p + "attn_residual"), t(p + "mlp_down")})})));
    x = p + "stream";
  }
  ls.push_back(keras_layer("LayerNormalization", "ln_f", {{"axis", {-1}}, {"center", true}}, Json::array({t(x)})));
  ls.push_back(keras_layer("Dense", "lm_head", {{"units", kVocab}, {"activation", "linear"}, {"use_bias", false}},
                           Json::array({t("ln_f")})));
  return {{"module", "keras.src.models.functional"},
          {"class_name", "Functional"},
          {"config",
           {{"name", "tiny_gpt"},
            {"layers", ls},
            {"input_layers", {{"input_ids", 0, 0}}},
            {"output_layers", {{"lm_head", 0, 0}}}}}};
}

Json hf_gpt(std::int64_t layers) {
  return {{"model_type", "gpt2"},
          {"n_embd", kWidth},
          {"n_layer", layers},
          {"n_head", kHeads},
          {"vocab_size", kVocab},
          {"n_positions", kPositions},
          {"activation_function", "gelu"},
          {"resid_pdrop", 0.0},
          {"embd_pdrop", 0.0},
          {"attn_pdrop", 0.0},
          {"tie_word_embeddings", false}};
}

}  // namespace

TEST_CASE("ONNX: exported multi-head attention becomes one attention layer", "[formats][onnx][attention]") {
  onnxw::TinyGpt c;
  Network fused = from_onnx(onnxw::tiny_gpt(c));
  INFO(fused.warnings.size());
  CHECK(fused.warnings.empty());
  const Layer& attn = layer(fused, "h.0.attn");
  CHECK(attn.type == LayerType::Attention);
  CHECK(attn.attrs.num_heads == 4);
  CHECK(attn.attrs.head_dim == 8);
  CHECK(attn.attrs.causal);  // a fixed additive mask (not a graph input): the causal triangle
  CHECK(attn.parameters == 4 * (kWidth * kWidth + kWidth));
  CHECK(attn.output_shape == Shape{kSeq, kWidth});
  CHECK(layer(fused, "wpe").attrs.positional);  // Gather by constant position ids: the position table
  CHECK(layer(fused, "wpe").parameters == kPositions * kWidth);
  // Every initializer is a parameter except the shape constants, the scale and the mask.
  const std::int64_t D = kWidth;
  const std::int64_t block = 4 * D + 4 * (D * D + D) + (D * 4 * D + 4 * D) + (4 * D * D + D);
  CHECK(fused.parameters() == kVocab * D + kPositions * D + 2 * block + 2 * D + D * kVocab);
  for (const auto& l : fused.layers) CHECK(l.type != LayerType::Softmax);  // inside the attention layer

  // Three projections instead of one fused MatMul and a Split: the same network.
  c.fused_qkv = false;
  Network separate = from_onnx(onnxw::tiny_gpt(c));
  require_same_layers(fused, separate);
  require_same_features(fused, separate);

  // K without a bias (Whisper) cannot be one attention layer: node by node, with the MatMuls listed.
  c.key_bias = false;
  Network whisper = from_onnx(onnxw::tiny_gpt(c));
  CHECK(layer(whisper, "h.0.q_proj").type == LayerType::Dense);
  CHECK(layer(whisper, "h.0.softmax").type == LayerType::Softmax);
  REQUIRE_FALSE(whisper.warnings.empty());
  CHECK_THAT(whisper.warnings[0], Catch::Contains("ONNX operator MatMul (4 nodes) is not modelled"));
  CHECK(whisper.parameters() == fused.parameters() - 2 * D);  // the two missing K biases

  // Arithmetic between projection and scores (rotary embeddings): also node by node.
  c.key_bias = true;
  c.rotary_like = true;
  Network rotary = from_onnx(onnxw::tiny_gpt(c));
  CHECK(layer(rotary, "h.1.softmax").type == LayerType::Softmax);
  CHECK(rotary.parameters() == fused.parameters());
}

TEST_CASE("one decoder as layer list, HF config, Keras JSON and ONNX: same layers, same features",
          "[formats][hf_config][keras][onnx]") {
  TrainingConfig training;
  training.seq_len = kSeq;
  Network hf = resolve_model({{"hf_config", hf_gpt(2)}}, training);
  Network keras = keras_to_network(keras_gpt(2), "model.keras", {});
  Network onnx = from_onnx(onnxw::tiny_gpt());
  Json block = Json::parse(R"J([
    {"type": "layernorm", "name": "ln_1", "inputs": ["stream"]},
    {"type": "attention", "name": "attn", "num_heads": 4, "causal": true},
    {"type": "add", "name": "attn_residual", "inputs": ["stream", "attn"]},
    {"type": "layernorm", "name": "ln_2"},
    {"type": "dense", "name": "mlp_up", "units": 128, "activation": "gelu"},
    {"type": "dense", "name": "mlp_down", "units": 32},
    {"type": "add", "name": "stream", "inputs": ["attn_residual", "mlp_down"]}])J");
  Json model = {{"input", {{"kind", "tokens"}, {"seq_len", kSeq}}},
                {"layers",
                 {{{"type", "embedding"}, {"name", "wte"}, {"vocab_size", kVocab}, {"dim", kWidth}},
                  {{"type", "embedding"},
                   {"name", "wpe"},
                   {"vocab_size", kPositions},
                   {"dim", kWidth},
                   {"positional", true},
                   {"inputs", {"input"}}},
                  {{"type", "add"}, {"name", "stream"}, {"inputs", {"wte", "wpe"}}},
                  {{"type", "repeat"}, {"name", "h"}, {"count", 2}, {"layers", block}},
                  {{"type", "layernorm"}, {"name", "ln_f"}},
                  {{"type", "dense"}, {"name", "lm_head"}, {"units", kVocab}, {"bias", false}}}}};
  Network written = parse_layer_list(model, "model", {});

  const std::int64_t D = kWidth;
  const std::int64_t expected =
      kVocab * D + kPositions * D + 2 * (4 * D + 4 * (D * D + D) + 8 * D * D + 5 * D) + 2 * D + D * kVocab;
  for (const Network* net : {&hf, &keras, &onnx, &written}) CHECK(net->parameters() == expected);
  CHECK(keras.warnings.empty());
  CHECK(onnx.warnings.empty());

  // The layer list names its embedding sum "stream"; the others call it "embed": compare names after that.
  written.layers[2].name = "embed";
  for (const Network* other : {&keras, &onnx, &written}) {
    require_same_layers(hf, *other);
    require_same_features(hf, *other);
  }
  // What legitimately differs, shown rather than hidden: Keras keeps use_causal_mask in the call, not in
  // model.to_json(), so its attention is not marked causal. The cost model charges the full score matrix
  // either way (the features above are equal).
  CHECK(layer(hf, "h.0.attn").attrs.causal);
  CHECK(layer(onnx, "h.0.attn").attrs.causal);
  CHECK_FALSE(layer(keras, "h.0.attn").attrs.causal);
  // The Hugging Face translation keeps a named view "stream" after the embeddings (no kernel).
  CHECK(layer(hf, "stream").type == LayerType::Identity);

  // Through the API: the same prediction from every form.
  Json req_training = {{"batch_size", 8}, {"seq_len", kSeq}};
  auto predict = [&](Json model_json) {
    return Json::parse(predict_json(
        Json({{"model", std::move(model_json)}, {"training", req_training}, {"options", {{"per_layer", false}}}})
            .dump()));
  };
  Json by_hf = predict({{"hf_config", hf_gpt(2)}});
  Json by_keras = predict({{"keras", keras_gpt(2)}});
  Json by_onnx = predict({{"onnx_base64", onnxw::base64(onnxw::tiny_gpt())}});
  REQUIRE_FALSE(by_hf.contains("error"));
  for (const Json* r : {&by_keras, &by_onnx}) {
    INFO(r->dump().substr(0, 300));
    REQUIRE_FALSE(r->contains("error"));
    CHECK((*r)["model"]["parameters"] == expected);
    // The HF network adds the loss (softmax cross-entropy over the vocabulary); nothing else differs.
    CHECK((*r)["model"]["flops_per_step"]["backward"].get<double>() ==
          Approx(by_hf["model"]["flops_per_step"]["backward"].get<double>()).epsilon(0.01));
  }
}
