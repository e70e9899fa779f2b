// A transformer through every format: the same GPT-2-style decoder as a layer list, a Hugging Face config,
// Keras JSON (Functional, with KerasHub's PositionEmbedding and MultiHeadAttention) and an ONNX graph as
// torch.onnx.export writes attention. Also the ONNX attention recogniser's own cases.
#include <catch2/catch.hpp>
#include <functional>
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
  // Both without their loss, and the per-layer rows read from those (a loss shifts no index but ends the list).
  const Network wa = without_loss(a), wb = without_loss(b);
  for (Precision p : {Precision::FP32, Precision::BF16}) {
    StepWork x = step_work(wa, 8, KernelContext(p), Optimizer::Adam);
    StepWork y = step_work(wb, 8, KernelContext(p), Optimizer::Adam);
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
    for (std::size_t l = 0; l < wa.layers.size(); ++l) by_name[wa.layers[l].name] = {x.layers[l].co, x.layers[l].cm};
    for (std::size_t l = 0; l < wb.layers.size(); ++l) {
      if (is_view(wb.layers[l]) || !by_name.count(wb.layers[l].name)) continue;
      INFO(wb.layers[l].name);
      CHECK(by_name[wb.layers[l].name].first == y.layers[l].co);
      CHECK(by_name[wb.layers[l].name].second == y.layers[l].cm);
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

/// The decoder in Keras: Embedding + PositionEmbedding (KerasHub), pre-LN blocks of MultiHeadAttention and Dense,
/// sized by `c` (the ONNX writer's sizes). `dropout` > 0 adds the Dropout layers and MHA dropout that KerasHub's
/// GPT-2 has, named as the Hugging Face translation names them.
Json keras_gpt(const onnxw::TinyGpt& c, double dropout = 0) {
  const std::int64_t D = c.width;
  Json seq = {nullptr, c.seq, D};
  auto t = [&](const std::string& n) { return keras_tensor(n, seq); };
  Json ls = Json::array();
  ls.push_back(
      keras_layer("InputLayer", "input_ids", {{"batch_shape", {nullptr, c.seq}}, {"dtype", "int32"}}, nullptr));
  ls.push_back(keras_layer("Embedding", "wte", {{"input_dim", c.vocab}, {"output_dim", D}},
                           Json::array({keras_tensor("input_ids", {nullptr, c.seq})})));
  Json pe = keras_layer("PositionEmbedding", "wpe", {{"sequence_length", c.positions}}, Json::array({t("wte")}));
  pe["module"] = "keras_hub.layers";
  ls.push_back(pe);
  ls.push_back(keras_layer("Add", "embed", Json::object(), Json::array({Json::array({t("wte"), t("wpe")})})));
  std::string x = "embed";
  auto drop = [&](const std::string& name, const std::string& from) {
    if (dropout <= 0) return from;
    ls.push_back(keras_layer("Dropout", name, {{"rate", dropout}}, Json::array({t(from)})));
    return name;
  };
  x = drop("stream", x);
  for (std::int64_t l = 0; l < c.layers; ++l) {
    std::string p = "h." + std::to_string(l) + ".";
    ls.push_back(
        keras_layer("LayerNormalization", p + "ln_1", {{"axis", {-1}}, {"center", true}}, Json::array({t(x)})));
    ls.push_back(keras_layer("MultiHeadAttention", p + "attn",
                             {{"num_heads", c.heads},
                              {"key_dim", D / c.heads},
                              {"value_dim", D / c.heads},
                              {"dropout", dropout},
                              {"use_bias", true},
                              {"output_shape", nullptr},
                              {"attention_axes", nullptr}},
                             Json::array({t(p + "ln_1"), t(p + "ln_1")})));
    std::string a = drop(p + "attn_dropout", p + "attn");
    ls.push_back(keras_layer("Add", p + "attn_residual", Json::object(), Json::array({Json::array({t(x), t(a)})})));
    ls.push_back(keras_layer("LayerNormalization", p + "ln_2", {{"axis", {-1}}, {"center", true}},
                             Json::array({t(p + "attn_residual")})));
    ls.push_back(keras_layer("Dense", p + "mlp_up", {{"units", 4 * D}, {"activation", "gelu"}, {"use_bias", true}},
                             Json::array({t(p + "ln_2")})));
    ls.push_back(keras_layer("Dense", p + "mlp_down", {{"units", D}, {"activation", "linear"}, {"use_bias", true}},
                             Json::array({keras_tensor(p + "mlp_up", {nullptr, c.seq, 4 * D})})));
    std::string m = drop(p + "mlp_dropout", p + "mlp_down");
    ls.push_back(
        keras_layer("Add", p + "stream", Json::object(), Json::array({Json::array({t(p + "attn_residual"), t(m)})})));
    x = p + "stream";
  }
  ls.push_back(keras_layer("LayerNormalization", "ln_f", {{"axis", {-1}}, {"center", true}}, Json::array({t(x)})));
  ls.push_back(keras_layer("Dense", "lm_head", {{"units", c.vocab}, {"activation", "linear"}, {"use_bias", false}},
                           Json::array({t("ln_f")})));
  return {{"module", "keras.src.models.functional"},
          {"class_name", "Functional"},
          {"config",
           {{"name", "gpt"},
            {"layers", ls},
            {"input_layers", {{"input_ids", 0, 0}}},
            {"output_layers", {{"lm_head", 0, 0}}}}}};
}

/// A Hugging Face GPT-2 config.json of the sizes `c`; untied and without dropout unless asked.
Json hf_gpt(const onnxw::TinyGpt& c, double dropout = 0, bool tied = false, const std::string& act = "gelu") {
  return {{"model_type", "gpt2"},  {"n_embd", c.width},          {"n_layer", c.layers},        {"n_head", c.heads},
          {"vocab_size", c.vocab}, {"n_positions", c.positions}, {"activation_function", act}, {"resid_pdrop", dropout},
          {"embd_pdrop", dropout}, {"attn_pdrop", dropout},      {"tie_word_embeddings", tied}};
}

/// `net` with Keras's and ONNX's "gelu" named "gelu_pytorch_tanh": Keras to_json writes gelu(approximate=True)
/// as "gelu" and the opset-17 Gelu node has no tanh form; all three are one fused kernel, costed alike (8 FLOPs
/// an element). Hugging Face's gelu_new is the same function written as a chain of PyTorch operations, timed
/// as that chain (features.cpp, composed_activation), so the comparisons below use gelu_pytorch_tanh.
Network gelu_as_tanh(Network net) {
  for (auto& l : net.layers) {
    if (l.attrs.activation == "gelu") l.attrs.activation = "gelu_pytorch_tanh";
  }
  return net;
}

/// `net` with its attention layers marked causal: what a Keras model's use_causal_mask call argument says, which
/// model.to_json() does not keep.
Network causal_as_called(Network net) {
  for (auto& l : net.layers) {
    if (l.type == LayerType::Attention) l.attrs.causal = true;
  }
  return net;
}

int count_type(const Network& net, LayerType type) {
  int n = 0;
  for (const auto& l : net.layers) n += l.type == type ? 1 : 0;
  return n;
}

/// Per-layer rows of two predict_json answers agree for every layer `b` has (by name), except those `skip` names;
/// returns how many rows of `b` were found in `a`.
std::size_t same_rows(const Json& a, const Json& b, const std::function<bool(const std::string&)>& skip) {
  std::map<std::string, const Json*> by_name;
  for (const auto& r : a["layers"]) by_name[r["name"].get<std::string>()] = &r;
  std::size_t found = 0;
  for (const auto& r : b["layers"]) {
    auto it = by_name.find(r["name"].get<std::string>());
    if (it == by_name.end()) continue;
    ++found;
    if (skip(r["name"].get<std::string>())) continue;
    INFO("layer " << r["name"]);
    for (const char* k : {"type", "output_shape", "parameters", "flops", "bytes", "features"}) {
      CHECK((*it->second)[k] == r[k]);
    }
  }
  return found;
}

}  // namespace

TEST_CASE("ONNX: exported multi-head attention becomes one attention layer", "[formats][onnx][attention]") {
  onnxw::TinyGpt c;
  Network fused = from_onnx(onnxw::tiny_gpt(c));
  INFO(fused.warnings.size());
  CHECK(fused.warnings.empty());
  const Layer& attn = layer(fused, "h.0.attn");
  CHECK(attn.type == LayerType::Attention);
  CHECK(attn.attrs.num_heads == kHeads);
  CHECK(attn.attrs.head_dim == kWidth / kHeads);
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
  const onnxw::TinyGpt tiny;
  Network hf = resolve_model({{"hf_config", hf_gpt(tiny)}}, training);
  Network keras = keras_to_network(keras_gpt(tiny), "model.keras", {});
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
  Network keras_causal = causal_as_called(keras);
  for (const Network* other : {&keras, &onnx, &written}) require_same_layers(hf, *other);
  for (const Network* other : {&keras_causal, &onnx, &written}) require_same_features(hf, *other);
  // What legitimately differs, shown rather than hidden: Keras keeps use_causal_mask in the call, not in
  // model.to_json(), so its attention is not marked causal. Eager attention computes the full score matrix
  // either way; only PyTorch's op-by-op mask pass is missing, so the features are equal once it is marked.
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
  Json by_hf = predict({{"hf_config", hf_gpt(tiny)}});
  Json by_keras = predict({{"keras", keras_gpt(tiny)}});
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

TEST_CASE("GPT-2 (124M) as preset, HF config, Keras JSON and ONNX: same layers, same features",
          "[formats][hf_config][keras][onnx][gpt2]") {
  // GPT-2 small's sizes, given once to every builder: the Keras and ONNX files are the same generators as above.
  onnxw::TinyGpt g2;
  g2.vocab = 50257, g2.positions = 1024, g2.seq = 1024, g2.width = 768, g2.heads = 12, g2.layers = 12;
  const std::int64_t V = g2.vocab, D = g2.width;
  const std::int64_t tied = 124439808, untied = tied + V * D;  // the preset's published count; + an own lm_head
  TrainingConfig training;                                     // seq_len from the model: 1024

  // 1. Preset and the Hugging Face config.json of gpt2 (tied head, dropout 0.1, gelu_new): identical.
  Network preset = resolve_model({{"preset", "gpt2"}}, training);
  Network hf = resolve_model({{"hf_config", hf_gpt(g2, 0.1, true, "gelu_new")}}, training);
  CHECK(preset.parameters() == tied);
  CHECK(hf.parameters() == tied);
  CHECK(preset.input.shape() == Shape{1024});
  require_same_layers(preset, hf);
  require_same_features(preset, hf);

  // 2. Keras JSON (KerasHub's layers, dropout 0.1) is the same decoder with an untied head: KerasHub ties by
  // calling its ReversibleEmbedding twice, a shared layer that model.to_json() cannot express as one Dense.
  // Against the same config untied: identical layers and kernels.
  Network hf_untied = resolve_model({{"hf_config", hf_gpt(g2, 0.1, false, "gelu_pytorch_tanh")}}, training);
  Network keras = keras_to_network(keras_gpt(g2, 0.1), "model.keras", {});
  CHECK(keras.warnings.empty());
  CHECK(keras.parameters() == untied);
  CHECK(hf_untied.parameters() == untied);
  require_same_layers(hf_untied, gelu_as_tanh(keras));
  require_same_features(hf_untied, causal_as_called(keras));
  CHECK(layer(keras, "h.0.mlp_up").attrs.activation == "gelu");  // the stated naming difference
  CHECK(layer(preset, "h.0.mlp_up").attrs.activation == "gelu_new");
  CHECK_FALSE(layer(keras, "h.0.attn").attrs.causal);  // use_causal_mask is a call argument, not in to_json
  CHECK(layer(preset, "h.0.attn").attrs.causal);

  // 3. ONNX as torch.onnx.export writes it in eval mode: no Dropout nodes, untied, dims without weight bytes.
  std::string bytes = onnxw::tiny_gpt(g2);
  CHECK(bytes.size() < 64 * 1024);
  Network onnx = from_onnx(bytes);
  CHECK(onnx.warnings.empty());
  CHECK(onnx.parameters() == untied);
  Network hf_eval = resolve_model({{"hf_config", hf_gpt(g2, 0.0, false, "gelu_pytorch_tanh")}}, training);
  require_same_layers(hf_eval, gelu_as_tanh(onnx));
  require_same_features(hf_eval, onnx);
  CHECK(layer(onnx, "h.11.attn").attrs.causal);

  // The two stated differences, measured against the preset: (a) the tied head holds no matrix of its own and
  // has no optimizer update, nothing else changes; (b) dropout adds 25 dropout layers and no parameters.
  CHECK(layer(preset, "lm_head").attrs.tied_to == "wte");
  CHECK(layer(preset, "lm_head").parameters == 0);
  CHECK(layer(hf_untied, "lm_head").parameters == V * D);
  {
    const Network untied_new = resolve_model({{"hf_config", hf_gpt(g2, 0.1, false, "gelu_new")}}, training);
    StepWork t = step_work(preset, 8, KernelContext(Precision::FP32), Optimizer::Adam);
    StepWork u = step_work(untied_new, 8, KernelContext(Precision::FP32), Optimizer::Adam);
    for (Phase ph : {Phase::Forward, Phase::Backward}) {
      CHECK(t.flops[static_cast<std::size_t>(ph)] == u.flops[static_cast<std::size_t>(ph)]);
    }
    const auto opt = static_cast<std::size_t>(Phase::Optimizer);
    CHECK(t.flops[opt] / static_cast<double>(tied) == Approx(u.flops[opt] / static_cast<double>(untied)));
  }
  CHECK(count_type(hf_untied, LayerType::Dropout) == 1 + 2 * 12);
  CHECK(count_type(keras, LayerType::Dropout) == 1 + 2 * 12);
  CHECK(count_type(onnx, LayerType::Dropout) == 0);
  CHECK(count_type(hf_eval, LayerType::Dropout) == 0);

  // 4. Through the API with per-layer rows: every layer of the Keras and ONNX answers is found by name with the
  // same type, shape, parameters, FLOPs, bytes and CO/CM; only the HF side adds the loss (and its views).
  auto predict = [&](Json model) {
    Json r = Json::parse(predict_json(Json({{"model", std::move(model)},
                                            {"training", {{"batch_size", 8}}},
                                            {"hardware", {"h100-sxm"}},
                                            {"options", {{"per_layer", true}}}})
                                          .dump()));
    INFO(r.dump().substr(0, 300));
    REQUIRE_FALSE(r.contains("error"));
    return r;
  };
  Json by_preset = predict({{"hf_config", hf_gpt(g2, 0.1, true, "gelu_pytorch_tanh")}});  // the preset, fused GELU
  Json by_keras = predict({{"keras", keras_gpt(g2, 0.1)}});
  Json by_onnx = predict({{"onnx_base64", onnxw::base64(bytes)}});
  Json by_eval = predict({{"hf_config", hf_gpt(g2, 0.0, false, "gelu_pytorch_tanh")}});
  CHECK(by_preset["model"]["parameters"] == tied);
  CHECK(by_keras["model"]["parameters"] == untied);
  CHECK(by_onnx["model"]["parameters"] == untied);
  // Keras against the preset itself: all rows equal but lm_head (tied in the preset, its own in Keras) and the
  // attention layers, whose causal mask Keras keeps in the call (above): the preset's eager attention has one
  // more forward pass over the scores, PyTorch's op-by-op mask (1 FLOP, 2 x 4 bytes per FP32 score).
  auto is_attention = [](const std::string& name) {
    return name.size() > 5 && name.compare(name.size() - 5, 5, ".attn") == 0;
  };
  auto head_or_attention = [&](const std::string& name) { return name == "lm_head" || is_attention(name); };
  CHECK(same_rows(by_preset, by_keras, head_or_attention) == by_keras["layers"].size());
  const double scores = 8.0 * 12 * 1024 * 1024;  // batch x heads x positions^2
  std::size_t attention_rows = 0;
  for (const auto& k : by_keras["layers"]) {
    if (!is_attention(k["name"].get<std::string>())) continue;
    for (const auto& p : by_preset["layers"]) {
      if (p["name"] != k["name"]) continue;
      ++attention_rows;
      CHECK(p["flops"]["forward"].get<double>() - k["flops"]["forward"].get<double>() ==
            Approx(scores).margin(2e5));  // rows keep 6 significant digits
      CHECK(p["bytes"]["forward"].get<double>() - k["bytes"]["forward"].get<double>() ==
            Approx(8 * scores).epsilon(1e-4));
      CHECK(p["flops"]["backward"] == k["flops"]["backward"]);
      CHECK(p["bytes"]["backward"] == k["bytes"]["backward"]);
    }
  }
  CHECK(attention_rows == 12);
  const Json* keras_head = nullptr;
  for (const auto& r : by_keras["layers"]) keras_head = r["name"] == "lm_head" ? &r : keras_head;
  for (const auto& r : by_preset["layers"]) {
    if (r["name"] != "lm_head" || !keras_head) continue;
    CHECK(r["parameters"] == 0);
    CHECK((*keras_head)["parameters"] == V * D);
    CHECK(r["flops"]["forward"] == (*keras_head)["flops"]["forward"]);
    CHECK(r["flops"]["backward"] == (*keras_head)["flops"]["backward"]);
  }
  // ONNX against the eval-mode, untied config: all rows equal.
  CHECK(same_rows(by_eval, by_onnx, [](const std::string&) { return false; }) == by_onnx["layers"].size());
}
