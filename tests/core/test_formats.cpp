// Model formats beyond the layer list: Keras model.to_json(), ONNX files, and the acceptance test that one
// network given as preset, layer list, Keras JSON and ONNX yields the same layers and the same features.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "helpers.hpp"
#include "onnx_writer.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/keras.hpp"
#include "prenet/onnx_model.hpp"

using namespace prenet;
using testutil::layer;
using testutil::require_input_error;

namespace {

std::string read_file(const std::string& relative) {
  std::ifstream in(std::string(PRENET_SOURCE_DIR) + "/" + relative, std::ios::binary);
  REQUIRE(in.good());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Json fixture(const std::string& name) { return Json::parse(read_file("tests/fixtures/keras/" + name)); }

Network from_keras(const Json& doc, const InputOverrides& overrides = {}) {
  return keras_to_network(doc, "model.keras", overrides);
}

Network from_onnx(const std::string& bytes, const InputOverrides& overrides = {}) {
  return onnx_bytes_to_network(bytes, "model.onnx_base64", overrides);
}

Json predict(const Json& request) { return Json::parse(predict_json(request.dump())); }

/// The network without its trailing loss (Keras and ONNX graphs carry no loss function).
Network without_loss(Network net) {
  if (!net.layers.empty() && net.layers.back().type == LayerType::CrossEntropy) net.layers.pop_back();
  return net;
}

/// Same layers: types, names, wiring, shapes, parameters and the attributes that decide the work.
void require_same_layers(const Network& a, const Network& b) {
  REQUIRE(a.layers.size() == b.layers.size());
  CHECK(a.input.shape() == b.input.shape());
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    const Layer& x = a.layers[i];
    const Layer& y = b.layers[i];
    INFO("layer " << i << ": " << x.name << " / " << y.name);
    CHECK(x.name == y.name);
    CHECK(x.type == y.type);
    CHECK(x.inputs == y.inputs);
    CHECK(x.input_shapes == y.input_shapes);
    CHECK(x.output_shape == y.output_shape);
    CHECK(x.parameters == y.parameters);
    CHECK(x.needs_input_grad == y.needs_input_grad);
    CHECK(x.attrs.units == y.attrs.units);
    CHECK(x.attrs.filters == y.attrs.filters);
    CHECK(x.attrs.kernel_h == y.attrs.kernel_h);
    CHECK(x.attrs.kernel_w == y.attrs.kernel_w);
    CHECK(x.attrs.stride_h == y.attrs.stride_h);
    CHECK(x.attrs.stride_w == y.attrs.stride_w);
    CHECK(x.attrs.pad_h == y.attrs.pad_h);
    CHECK(x.attrs.pad_w == y.attrs.pad_w);
    CHECK(x.attrs.bias == y.attrs.bias);
    CHECK((x.attrs.activation.empty() ? std::string("none") : x.attrs.activation) ==
          (y.attrs.activation.empty() ? std::string("none") : y.attrs.activation));
  }
}

/// Same features: every kernel of the step, and PreNeT's CO and CM per layer.
void require_same_features(const Network& a, const Network& b) {
  for (Precision p : {Precision::FP32, Precision::BF16}) {
    StepWork x = step_work(a, 16, KernelContext(p), Optimizer::Adam);
    StepWork y = step_work(b, 16, KernelContext(p), Optimizer::Adam);
    REQUIRE(x.kernels.size() == y.kernels.size());
    for (std::size_t k = 0; k < x.kernels.size(); ++k) {
      INFO("kernel " << k);
      CHECK(x.kernels[k].cls == y.kernels[k].cls);
      CHECK(x.kernels[k].phase == y.kernels[k].phase);
      CHECK(x.kernels[k].flops == y.kernels[k].flops);
      CHECK(x.kernels[k].bytes == y.kernels[k].bytes);
      CHECK(x.kernels[k].layer == y.kernels[k].layer);
    }
    for (std::size_t l = 0; l < x.layers.size(); ++l) {
      CHECK(x.layers[l].co == y.layers[l].co);
      CHECK(x.layers[l].cm == y.layers[l].cm);
      CHECK(x.layers[l].saved_activation_bytes == y.layers[l].saved_activation_bytes);
    }
  }
}

}  // namespace

TEST_CASE("LeNet-5 as preset, layer list, Keras JSON and ONNX: same layers, same features", "[formats]") {
  Network preset = without_loss(resolve_model({{"preset", "lenet5"}}, TrainingConfig{}));
  CHECK(preset.parameters() == 61706);

  // The layer list written out by hand.
  Network layers = testutil::net_of(R"J({"input": {"kind": "image", "channels": 1, "image_size": 32}, "layers": [
    {"type": "conv2d", "name": "c1", "filters": 6, "kernel_size": 5, "activation": "tanh"},
    {"type": "avg_pool2d", "name": "s2", "pool_size": 2},
    {"type": "conv2d", "name": "c3", "filters": 16, "kernel_size": 5, "activation": "tanh"},
    {"type": "avg_pool2d", "name": "s4", "pool_size": 2},
    {"type": "flatten", "name": "flatten"},
    {"type": "dense", "name": "c5", "units": 120, "activation": "tanh"},
    {"type": "dense", "name": "f6", "units": 84, "activation": "tanh"},
    {"type": "dense", "name": "output", "units": 10}]})J");
  Network keras = from_keras(fixture("lenet5_sequential.json"));
  Network onnx = from_onnx(onnxw::lenet5());
  Network onnx_no_weights = from_onnx(onnxw::lenet5(false));  // dims only: weights are never needed

  for (const Network* other : {&layers, &keras, &onnx, &onnx_no_weights}) {
    require_same_layers(preset, *other);
    require_same_features(preset, *other);
    CHECK(other->warnings.empty());
  }
  CHECK(keras.name == "lenet5");
  CHECK(layer(onnx, "c3").output_shape == Shape{16, 10, 10});
  CHECK(layer(keras, "flatten").output_shape == Shape{400});

  // Through the API: the same prediction from every form.
  Json training = {{"batch_size", 64}};
  Json by_preset = predict({{"model", {{"preset", "lenet5"}}}, {"training", training}});
  Json by_keras = predict({{"model", {{"keras", fixture("lenet5_sequential.json")}}}, {"training", training}});
  Json by_keras_text =
      predict({{"model", {{"keras", fixture("lenet5_sequential.json").dump()}}}, {"training", training}});
  Json by_onnx = predict({{"model", {{"onnx_base64", onnxw::base64(onnxw::lenet5())}}}, {"training", training}});
  for (const Json* r : {&by_keras, &by_keras_text, &by_onnx}) {
    INFO(r->dump().substr(0, 400));
    REQUIRE_FALSE(r->contains("error"));
    CHECK((*r)["model"]["parameters"] == 61706);
    // The preset adds the loss (softmax cross-entropy over 10 classes); everything else is identical.
    CHECK((*r)["model"]["flops_per_step"]["forward"].get<double>() ==
          Approx(by_preset["model"]["flops_per_step"]["forward"].get<double>()).epsilon(0.01));
  }
}

TEST_CASE("the HF leg: a preset, its hf_config and the same layers written out agree", "[formats][hf_config]") {
  // Presets of transformers are Hugging Face configs; the request form gives the same network.
  const Preset* p = find_preset("gpt2");
  REQUIRE(p != nullptr);
  TrainingConfig t;
  t.seq_len = 64;
  Network by_preset = resolve_model({{"preset", "gpt2"}}, t);
  Network by_config = resolve_model({{"hf_config", p->model["hf_config"]}, {"name", "gpt2"}}, t);
  require_same_layers(by_preset, by_config);
  require_same_features(by_preset, by_config);

  // A tiny Llama config against the layer list it stands for: RMSNorm, GQA, SwiGLU, untied head.
  Json cfg = {{"model_type", "llama"},       {"hidden_size", 64},
              {"intermediate_size", 172},    {"num_hidden_layers", 2},
              {"num_attention_heads", 4},    {"num_key_value_heads", 2},
              {"vocab_size", 500},           {"max_position_embeddings", 128},
              {"tie_word_embeddings", false}};
  Network llama = resolve_model({{"hf_config", cfg}}, t);
  Json block = Json::parse(R"J([
    {"type": "rmsnorm", "name": "ln_1", "inputs": ["stream"]},
    {"type": "attention", "name": "attn", "num_heads": 4, "num_kv_heads": 2, "causal": true, "bias": false,
     "out_bias": false, "rotary_dim": 16, "inputs": ["ln_1"]},
    {"type": "add", "name": "attn_residual", "inputs": ["stream", "attn"]},
    {"type": "rmsnorm", "name": "ln_2", "inputs": ["attn_residual"]},
    {"type": "dense", "name": "mlp_up", "units": 172, "gated": true, "activation": "silu", "bias": false,
     "inputs": ["ln_2"]},
    {"type": "dense", "name": "mlp_down", "units": 64, "bias": false},
    {"type": "add", "name": "stream", "inputs": ["attn_residual", "mlp_down"]}])J");
  Json model = {{"input", {{"kind", "tokens"}, {"seq_len", 64}}},
                {"layers",
                 {{{"type", "embedding"}, {"name", "wte"}, {"vocab_size", 500}, {"dim", 64}},
                  {{"type", "identity"}, {"name", "stream"}},
                  {{"type", "repeat"}, {"name", "h"}, {"count", 2}, {"layers", block}},
                  {{"type", "rmsnorm"}, {"name", "ln_f"}},
                  {{"type", "dense"}, {"name", "lm_head"}, {"units", 500}, {"bias", false}},
                  {{"type", "cross_entropy"}, {"name", "loss"}}}}};
  Network written = parse_layer_list(model, "model", {});
  require_same_layers(llama, written);
  require_same_features(llama, written);
  // 500*64 (embedding) + 2 * (64 + 64*(64+2*32) + 64*64 + 64 + 3*64*172) + 64 + 64*500
  CHECK(llama.parameters() == 500 * 64 + 2 * (64 + 64 * 128 + 64 * 64 + 64 + 3 * 64 * 172) + 64 + 64 * 500);
}

TEST_CASE("Keras Functional (Keras 3): embedding, attention, Conv1D, BiLSTM, pooling, concatenate",
          "[formats][keras]") {
  Network net = from_keras(fixture("text_classifier_functional.json"));
  CHECK(net.name == "text_classifier");
  CHECK(net.input.kind == InputKind::Tokens);
  CHECK(net.input.seq_len == 16);
  CHECK(layer(net, "embed").parameters == 1000 * 32);
  // MultiHeadAttention(4 heads, key_dim 8) on 32 features: Q, K, V and output kernels with biases (Keras: 4,224).
  CHECK(layer(net, "mha").parameters == 4 * (32 * 32 + 32));
  CHECK(layer(net, "mha").attrs.head_dim == 8);
  CHECK(layer(net, "mha").inputs.size() == 1);  // self-attention: query and value are the same tensor
  CHECK(layer(net, "residual").type == LayerType::Add);
  CHECK(layer(net, "norm").parameters == 64);
  // Conv1D(16, 3, same) runs as a 2-D convolution of height 1 between two views.
  CHECK(layer(net, "conv.conv").type == LayerType::Conv2d);
  CHECK(layer(net, "conv.conv").parameters == 3 * 32 * 16 + 16);
  CHECK(layer(net, "conv").output_shape == Shape{16, 16});
  CHECK(layer(net, "pool").output_shape == Shape{8, 16});
  // Bidirectional LSTM(8): PyTorch layout (two bias vectors; Keras has one: 1,600).
  CHECK(layer(net, "bilstm").attrs.bidirectional);
  CHECK(layer(net, "bilstm").parameters == 2 * 4 * 8 * (16 + 8 + 2));
  CHECK(layer(net, "bilstm").output_shape == Shape{8, 16});
  CHECK(layer(net, "avg").output_shape == Shape{16});
  CHECK(layer(net, "features").output_shape == Shape{32});
  CHECK(layer(net, "classifier").output_shape == Shape{2});
  CHECK(layer(net, "classifier.softmax").type == LayerType::Softmax);
  // Sequence overrides apply.
  InputOverrides longer;
  longer.seq_len = 64;
  CHECK(layer(from_keras(fixture("text_classifier_functional.json"), longer), "pool").output_shape == Shape{32, 16});
  Json r =
      predict({{"model", {{"keras", fixture("text_classifier_functional.json")}}}, {"training", {{"batch_size", 8}}}});
  INFO(r.dump().substr(0, 300));
  CHECK_FALSE(r.contains("error"));
}

TEST_CASE("Keras errors name the layer, its class and the field", "[formats][keras][errors]") {
  Json doc = fixture("lenet5_sequential.json");
  doc["config"]["layers"][3]["class_name"] = "Lambda";
  require_input_error([&] { from_keras(doc); }, "model.keras.config.layers[3].class_name",
                      "unsupported Keras layer class \"Lambda\" (layer \"c3\")");

  doc = fixture("lenet5_sequential.json");
  doc["config"]["layers"][1]["config"]["dilation_rate"] = {2, 2};
  require_input_error([&] { from_keras(doc); }, "model.keras.config.layers[1].config.dilation_rate", "only 1");

  doc = fixture("lenet5_sequential.json");
  doc["config"]["layers"][6]["config"]["units"] = -3;
  require_input_error([&] { from_keras(doc); }, "model.keras.config.layers[6].config.units", "expected an integer");

  doc = fixture("lenet5_sequential.json");
  doc["config"]["layers"][0]["config"]["batch_input_shape"] = {nullptr, 32, 48, 1};
  require_input_error([&] { from_keras(doc); }, "model.keras.config.layers[0].config.batch_input_shape",
                      "non-square images");

  doc = fixture("lenet5_sequential.json");
  doc["config"]["layers"][0]["config"]["batch_input_shape"] = {nullptr, nullptr, nullptr, 1};
  require_input_error([&] { from_keras(doc); }, "model.keras.config.layers[0].config.batch_input_shape[1]",
                      "training.image_size");
  InputOverrides sized;
  sized.image_size = 32;
  CHECK(from_keras(doc, sized).parameters() == 61706);

  Json func = fixture("text_classifier_functional.json");
  func["config"]["layers"][3]["inbound_nodes"][0]["args"][0][1]["config"]["keras_history"][0] = "nope";
  require_input_error([&] { from_keras(func); }, "model.keras.config.layers[3].inbound_nodes[0]",
                      "reads \"nope\", which is not an earlier layer");

  require_input_error([&] { from_keras(Json("{not json")); }, "model.keras", "malformed JSON");
  require_input_error([&] { from_keras(Json::object()); }, "model.keras.class_name", "required string is missing");
  Json response =
      predict({{"model", {{"keras", {{"class_name", "Sequential"}, {"config", {{"layers", Json::array()}}}}}}}});
  CHECK(response["error"]["field"] == "model.keras.config.layers");
}

TEST_CASE("ONNX: MatMul + Add becomes a dense layer with bias; unsupported operators are costed and listed",
          "[formats][onnx]") {
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
             onnxw::node("Erf", {"n"}, {"e"}, "mystery"),
             onnxw::node("MatMul", {"e", "w2"}, {"y"}, "fc2"),
             onnxw::node("Reshape", {"y", "shape"}, {"flat"}, "flatten_all"),
             onnxw::node("Softmax", {"flat"}, {"p"}, "softmax")};
  Network net = from_onnx(g.model());
  CHECK(net.input.kind == InputKind::Sequence);
  CHECK(layer(net, "fc1").parameters == 32 * 64 + 64);
  CHECK(layer(net, "fc1").attrs.activation == "relu");  // the Relu is fused, as the layer list writes it
  CHECK(layer(net, "ln").parameters == 128);
  CHECK(layer(net, "mystery").type == LayerType::Activation);  // Erf: an elementwise pass (GELU's inner part)
  CHECK(layer(net, "fc2").parameters == 64 * 32);
  CHECK(layer(net, "fc2").attrs.bias == false);
  CHECK(layer(net, "flatten_all").output_shape == Shape{256});
  CHECK(layer(net, "softmax").output_shape == Shape{256});

  // An operator with no layer: costed as a pass over its input, and listed.
  g.nodes[4] = onnxw::node("Sin", {"n"}, {"e"}, "sine");
  Network odd = from_onnx(g.model());
  REQUIRE(odd.warnings.size() == 1);
  CHECK_THAT(odd.warnings[0], Catch::Contains("ONNX operator Sin (1 node) is not modelled"));
  CHECK_THAT(odd.warnings[0], Catch::Contains("512 elements"));
  CHECK(layer(odd, "sine").output_shape == Shape{8, 64});

  // Symbolic sequence length: needs training.seq_len.
  g.inputs[0] = onnxw::value_info("x", {-1, -1, 32});
  require_input_error([&] { from_onnx(g.model()); }, "model.onnx_base64.graph.input[0]", "training.seq_len");
  InputOverrides seq;
  seq.seq_len = 4;
  CHECK(layer(from_onnx(g.model(), seq), "fc1").output_shape == Shape{4, 64});
}

TEST_CASE("ONNX: embeddings, convolutions, pooling, batch norm, concat and a class token", "[formats][onnx]") {
  onnxw::Graph g;
  g.inputs.push_back(onnxw::value_info("ids", {-1, 10}, onnxw::kInt64));
  g.initializers = {onnxw::tensor("table", {100, 16}), onnxw::tensor("cls", {1, 1, 16}),
                    onnxw::tensor("pos", {1, 11, 16})};
  g.nodes = {onnxw::node("Gather", {"table", "ids"}, {"emb"}, "embed"),
             onnxw::node("Concat", {"cls", "emb"}, {"tokens"}, "with_cls", {onnxw::attr_i("axis", 1)}),
             onnxw::node("Add", {"tokens", "pos"}, {"x"}, "positions")};
  Network net = from_onnx(g.model());
  CHECK(net.input.kind == InputKind::Tokens);
  CHECK(layer(net, "embed").type == LayerType::Embedding);
  CHECK(layer(net, "with_cls").output_shape == Shape{11, 16});
  CHECK(net.parameters() == 100 * 16 + 16 + 11 * 16);

  Network cnn = from_onnx(onnxw::small_cnn_model());
  CHECK(layer(cnn, "conv").output_shape == Shape{8, 8, 8});
  CHECK(layer(cnn, "conv").parameters == 8 * 27);
  CHECK(layer(cnn, "bn").parameters == 16);
  CHECK(layer(cnn, "relu").type == LayerType::Activation);  // after batch norm: not fusable into the conv
  CHECK(layer(cnn, "depthwise").attrs.groups == 8);
  CHECK(layer(cnn, "depthwise").output_shape == Shape{8, 8, 8});
  CHECK(layer(cnn, "pool").output_shape == Shape{8, 4, 4});
  CHECK(layer(cnn, "cat").output_shape == Shape{16, 4, 4});
  CHECK(layer(cnn, "gap").output_shape == Shape{16});
}

TEST_CASE("ONNX: a head tied to the token table (MatMul by Transpose(table), Gemm transB) reuses its weights",
          "[formats][onnx]") {
  // GPT-2's LM head as exporters write it when the weights are tied and not folded.
  onnxw::Graph g;
  g.inputs.push_back(onnxw::value_info("ids", {-1, 10}, onnxw::kInt64));
  g.initializers = {onnxw::tensor("table", {100, 16}), onnxw::tensor("head_bias", {100})};
  g.nodes = {onnxw::node("Gather", {"table", "ids"}, {"emb"}, "embed"),
             onnxw::node("Transpose", {"table"}, {"table_t"}, "tie", {onnxw::attr_ints("perm", {1, 0})}),
             onnxw::node("MatMul", {"emb", "table_t"}, {"logits"}, "lm_head")};
  Network net = from_onnx(g.model());
  CHECK(layer(net, "lm_head").type == LayerType::Dense);
  CHECK(layer(net, "lm_head").attrs.tied_to == "embed");
  CHECK(layer(net, "lm_head").output_shape == Shape{10, 100});
  CHECK(layer(net, "lm_head").parameters == 0);
  CHECK(net.parameters() == 100 * 16);

  // With a bias (an Add after the MatMul), only the bias is the head's own.
  g.nodes.push_back(onnxw::node("Add", {"logits", "head_bias"}, {"biased"}, "lm_head_bias"));
  Network biased = from_onnx(g.model());
  CHECK(layer(biased, "lm_head").parameters == 100);
  CHECK(biased.parameters() == 100 * 16 + 100);

  // A Transpose without perm reverses the axes too.
  g.nodes.pop_back();
  g.nodes[1] = onnxw::node("Transpose", {"table"}, {"table_t"}, "tie");
  CHECK(from_onnx(g.model()).parameters() == 100 * 16);

  // Gemm with transB reading the table directly (a vector input, so Gemm's 2-D form applies).
  onnxw::Graph v;
  v.inputs.push_back(onnxw::value_info("ids", {-1, 1}, onnxw::kInt64));
  v.initializers = {onnxw::tensor("table", {100, 16}), onnxw::int64s("flat", {0, -1})};
  v.nodes = {onnxw::node("Gather", {"table", "ids"}, {"emb"}, "embed"),
             onnxw::node("Reshape", {"emb", "flat"}, {"x"}, "flatten"),
             onnxw::node("Gemm", {"x", "table"}, {"logits"}, "lm_head", {onnxw::attr_i("transB", 1)})};
  Network gemm = from_onnx(v.model());
  CHECK(layer(gemm, "lm_head").attrs.tied_to == "embed");
  CHECK(layer(gemm, "lm_head").output_shape == Shape{100});
  CHECK(gemm.parameters() == 100 * 16);

  // A transposed weight no embedding reads is the layer's own.
  g.initializers.push_back(onnxw::tensor("proj", {100, 16}));
  g.nodes[1] = onnxw::node("Transpose", {"proj"}, {"table_t"}, "untied", {onnxw::attr_ints("perm", {1, 0})});
  Network own = from_onnx(g.model());
  CHECK(layer(own, "lm_head").attrs.tied_to.empty());
  CHECK(own.parameters() == 2 * 100 * 16);
}

TEST_CASE("ONNX: control characters in an operator name are shown, not allowed to cut the message",
          "[formats][onnx][errors]") {
  // A NUL byte in op_type once ended the error text right after the field (found by fuzz_onnx).
  onnxw::Graph g;
  g.inputs.push_back(onnxw::value_info("x", {-1, 8}));
  g.initializers = {onnxw::tensor("w", {8, 4})};
  g.nodes = {onnxw::node("MatMul", {"x", "w"}, {"y"}, "fc"), onnxw::node(std::string("Ta\0nh", 5), {"y"}, {}, "odd")};
  try {
    from_onnx(g.model());
    FAIL("expected a rejection");
  } catch (const InputError& e) {
    std::string message = e.what();
    CHECK(message.find('\0') == std::string::npos);
    CHECK_THAT(message, Catch::Contains("node \"odd\": has no outputs"));
  }
}

TEST_CASE("ONNX and base64 rejections are clear messages naming the field", "[formats][onnx][errors]") {
  const std::string field = "model.onnx_base64";
  require_input_error([&] { from_onnx(""); }, field, "empty");
  require_input_error([&] { from_onnx("not a protobuf at all"); }, field, "malformed ONNX file");
  std::string good = onnxw::lenet5();
  require_input_error([&] { from_onnx(good.substr(0, good.size() / 2)); }, field, "malformed ONNX file");
  require_input_error([&] { decode_base64("abc$", field); }, field, "not base64");
  require_input_error([&] { onnx_to_network(Json(12), field, {}); }, field, "base64 string");
  Json r = predict({{"model", {{"onnx_base64", "AAAA"}}}});
  CHECK(r["error"]["field"] == field);
  // A convolution whose weight does not match the channels names the node.
  onnxw::Graph g;
  g.inputs.push_back(onnxw::value_info("img", {1, 3, 8, 8}));
  g.initializers = {onnxw::tensor("w", {4, 5, 3, 3})};
  g.nodes = {onnxw::node("Conv", {"img", "w"}, {"c"}, "bad_conv")};
  require_input_error([&] { from_onnx(g.model()); }, "model.onnx_base64.graph.node[0]",
                      "Conv node \"bad_conv\": weight [4, 5, 3, 3] with group 1 does not match 3 input channels");
  // Base64 round trip.
  CHECK(decode_base64(onnxw::base64(good), field) == good);
  CHECK(decode_base64(onnxw::base64("ab"), field) == "ab");
}

TEST_CASE("model forms are exclusive", "[formats][errors]") {
  Json r = predict({{"model", {{"preset", "lenet5"}, {"keras", Json::object()}}}});
  CHECK(r["error"]["field"] == "model");
  CHECK_THAT(r["error"]["message"].get<std::string>(), Catch::Contains("exactly one of"));
}

TEST_CASE("docs/layer-list.schema.json names every layer type the parser accepts", "[formats][docs]") {
  Json schema = Json::parse(read_file("docs/layer-list.schema.json"));
  std::set<std::string> documented;
  for (const auto& alt : schema["$defs"]["item"]["oneOf"])
    documented.insert(alt["properties"]["type"]["const"].get<std::string>());
  std::set<std::string> parsed = {"repeat"};
  for (int t = 0; t <= static_cast<int>(LayerType::ContrastiveLoss); ++t)
    parsed.insert(to_string(static_cast<LayerType>(t)));
  CHECK(documented == parsed);
}
