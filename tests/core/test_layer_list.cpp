// The layer-list format: shape inference, repeats and names, tied weights, overrides, and every error
// naming the exact field a user has to fix.
#include <catch2/catch.hpp>

#include <string>

#include "helpers.hpp"
#include "layers/layer_kind.hpp"
#include "prenet/api.hpp"
#include "prenet/layer_list.hpp"

using namespace prenet;
using testutil::layer;
using testutil::layer_index;
using testutil::net_of;
using testutil::require_model_error;

namespace {

/// The input producer of `name`'s `k`-th input, by name ("input" for the network input).
std::string producer(const Network& net, const std::string& name, std::size_t k = 0) {
  const Layer& l = layer(net, name);
  REQUIRE(k < l.inputs.size());
  int p = l.inputs[k];
  return p == kNetworkInput ? "input" : net.layers[static_cast<std::size_t>(p)].name;
}

const char* kTransformer = R"J({"name": "tiny-lm", "input": {"kind": "tokens", "seq_len": 8},
  "layers": [
    {"type": "embedding", "name": "tok", "vocab_size": 100, "dim": 32},
    {"type": "embedding", "name": "pos", "vocab_size": 16, "dim": 32, "positional": true, "inputs": ["input"]},
    {"type": "add", "name": "x", "inputs": ["tok", "pos"]},
    {"type": "repeat", "name": "block", "count": 2, "layers": [
      {"type": "layernorm", "name": "ln1", "inputs": ["x"]},
      {"type": "attention", "name": "attn", "num_heads": 4, "causal": true},
      {"type": "add", "name": "mid", "inputs": ["x", "attn"]},
      {"type": "layernorm", "name": "ln2"},
      {"type": "dense", "name": "up", "units": 64, "activation": "gelu"},
      {"type": "dense", "name": "down", "units": 32},
      {"type": "add", "name": "x", "inputs": ["mid", "down"]}
    ]},
    {"type": "layernorm", "name": "ln_f"},
    {"type": "dense", "name": "head", "units": 100, "bias": false, "tied_to": "tok"},
    {"type": "cross_entropy", "name": "loss"}
  ]})J";

}  // namespace

TEST_CASE("shape inference through a small CNN", "[layer_list]") {
  Network net = net_of(R"J({"name": "tiny-cnn", "input": {"kind": "image", "channels": 3, "image_size": 32},
    "layers": [
      {"type": "conv2d", "name": "c1", "filters": 16, "kernel_size": 3, "padding": "same", "activation": "relu"},
      {"type": "max_pool2d", "name": "p1"},
      {"type": "conv2d", "name": "c2", "filters": 32, "kernel_size": 3},
      {"type": "batchnorm", "name": "bn"},
      {"type": "activation", "name": "act"},
      {"type": "global_avg_pool", "name": "gap"},
      {"type": "dense", "name": "fc", "units": 10},
      {"type": "softmax", "name": "sm"}
    ]})J");
  CHECK(net.name == "tiny-cnn");
  CHECK(net.input.kind == InputKind::Image);
  CHECK(net.input.shape() == Shape{3, 32, 32});
  REQUIRE(net.layers.size() == 8);
  CHECK(layer(net, "c1").output_shape == Shape{16, 32, 32});
  CHECK(layer(net, "p1").output_shape == Shape{16, 16, 16});
  CHECK(layer(net, "c2").output_shape == Shape{32, 14, 14});
  CHECK(layer(net, "bn").output_shape == Shape{32, 14, 14});
  CHECK(layer(net, "act").output_shape == Shape{32, 14, 14});
  CHECK(layer(net, "gap").output_shape == Shape{32});
  CHECK(layer(net, "fc").output_shape == Shape{10});
  CHECK(layer(net, "sm").output_shape == Shape{10});
  // 3*9*16+16, 16*9*32+32, 2*32, 32*10+10
  CHECK(net.parameters() == 448 + 4640 + 64 + 330);
  // Each layer feeds the next unless told otherwise; input shapes follow.
  CHECK(producer(net, "c1") == "input");
  CHECK(producer(net, "c2") == "p1");
  CHECK(layer(net, "c2").input_shapes.front() == Shape{16, 16, 16});
  // Default names: "<type>_<index>".
  Network unnamed = net_of(R"J({"input": {"kind": "vector", "features": 4},
    "layers": [{"type": "dense", "units": 3}, {"type": "activation"}]})J");
  CHECK(unnamed.layers[0].name == "dense_0");
  CHECK(unnamed.layers[1].name == "activation_1");
  CHECK(unnamed.name == "custom");
}

TEST_CASE("shape inference through a small transformer, and repeats expand with block.i. names", "[layer_list]") {
  Network net = net_of(kTransformer);
  REQUIRE(net.layers.size() == 3 + 2 * 7 + 3);
  CHECK(net.layers[3].name == "block.0.ln1");
  CHECK(net.layers[9].name == "block.0.x");
  CHECK(net.layers[10].name == "block.1.ln1");
  CHECK(net.layers[16].name == "block.1.x");
  for (const char* name : {"x", "block.0.attn", "block.0.mid", "block.0.down", "block.1.x", "ln_f"}) {
    INFO(name);
    CHECK(layer(net, name).output_shape == Shape{8, 32});
  }
  CHECK(layer(net, "block.1.up").output_shape == Shape{8, 64});
  CHECK(layer(net, "head").output_shape == Shape{8, 100});
  CHECK(layer(net, "loss").output_shape == Shape{});
  CHECK(layer(net, "block.0.attn").attrs.head_dim == 8);

  SECTION("names resolve to their latest definition") {
    CHECK(producer(net, "block.0.ln1") == "x");        // the embedding sum: block.0.x does not exist yet
    CHECK(producer(net, "block.0.mid", 0) == "x");
    CHECK(producer(net, "block.0.mid", 1) == "block.0.attn");
    CHECK(producer(net, "block.0.x", 0) == "block.0.mid");
    CHECK(producer(net, "block.1.ln1") == "block.0.x");  // the previous block's output
    CHECK(producer(net, "block.1.mid", 0) == "block.0.x");
    CHECK(producer(net, "block.1.mid", 1) == "block.1.attn");
    CHECK(producer(net, "ln_f") == "block.1.x");
  }

  SECTION("tied dense owns no weight matrix") {
    // tok 100*32, pos 16*32; per block: 2 layernorms 2*64, attention 32*96 + 32*32 + 128,
    // up 32*64+64, down 64*32+32; final layernorm 64; the tied head 0.
    const std::int64_t block = 64 + (32 * 96 + 32 * 32 + 128) + 64 + (32 * 64 + 64) + (64 * 32 + 32);
    CHECK(block == 8544);
    CHECK(layer(net, "head").parameters == 0);
    CHECK(net.parameters() == 3200 + 512 + 2 * block + 64);
    // With a bias the tied head owns only the bias.
    Json with_bias = Json::parse(kTransformer);
    with_bias["layers"][5]["bias"] = true;
    CHECK(layer(parse_layer_list(with_bias, "model", {}), "head").parameters == 100);
    // Untied, it owns V x D.
    Json untied = Json::parse(kTransformer);
    untied["layers"][5].erase("tied_to");
    CHECK(layer(parse_layer_list(untied, "model", {}), "head").parameters == 3200);
  }

  SECTION("trainability propagates: only the embeddings lack an input gradient") {
    CHECK_FALSE(layer(net, "tok").needs_input_grad);
    CHECK_FALSE(layer(net, "pos").needs_input_grad);
    CHECK(layer(net, "x").needs_input_grad);
    CHECK(layer(net, "block.0.attn").needs_input_grad);
    CHECK(layer(net, "head").needs_input_grad);
  }
}

TEST_CASE("nested repeats prefix names at every level, and unnamed repeats are blockN", "[layer_list]") {
  Network net = net_of(R"J({"input": {"kind": "vector", "features": 4},
    "layers": [
      {"type": "repeat", "name": "stage", "count": 2, "layers": [
        {"type": "repeat", "name": "unit", "count": 2, "layers": [{"type": "dense", "name": "fc", "units": 4}]}
      ]},
      {"type": "repeat", "count": 1, "layers": [{"type": "dense", "name": "out", "units": 2}]}
    ]})J");
  REQUIRE(net.layers.size() == 5);
  CHECK(net.layers[0].name == "stage.0.unit.0.fc");
  CHECK(net.layers[1].name == "stage.0.unit.1.fc");
  CHECK(net.layers[2].name == "stage.1.unit.0.fc");
  CHECK(net.layers[3].name == "stage.1.unit.1.fc");
  CHECK(net.layers[4].name == "block1.0.out");
  CHECK(net.parameters() == 4 * 20 + 10);
}

TEST_CASE("a name defined twice resolves to the later definition", "[layer_list]") {
  Network net = net_of(R"J({"input": {"kind": "vector", "features": 16},
    "layers": [
      {"type": "dense", "name": "h", "units": 8},
      {"type": "dense", "name": "h", "units": 4},
      {"type": "dense", "name": "out", "units": 2, "inputs": ["h"]}
    ]})J");
  CHECK(layer_index(net, "out") == 2);
  CHECK(net.layers[2].inputs == std::vector<int>{1});
  CHECK(net.layers[2].input_shapes.front() == Shape{4});
  CHECK(net.layers[2].parameters == 4 * 2 + 2);
}

TEST_CASE("overrides replace the sequence length or image size", "[layer_list]") {
  InputOverrides seq;
  seq.seq_len = 12;
  Network net = net_of(kTransformer, seq);
  CHECK(net.input.seq_len == 12);
  CHECK(layer(net, "block.1.x").output_shape == Shape{12, 32});
  CHECK(layer(net, "head").output_shape == Shape{12, 100});
  CHECK(net.warnings.empty());
  // Parameters do not depend on the sequence length.
  CHECK(net.parameters() == net_of(kTransformer).parameters());

  const char* cnn = R"J({"input": {"kind": "image", "channels": 3, "image_size": 32},
    "layers": [{"type": "conv2d", "filters": 8, "kernel_size": 3, "stride": 2, "padding": "same"},
               {"type": "global_max_pool"}]})J";
  InputOverrides image;
  image.image_size = 64;
  Network big = net_of(cnn, image);
  CHECK(big.input.image_size == 64);
  CHECK(big.layers[0].output_shape == Shape{8, 32, 32});
  CHECK(big.layers[1].output_shape == Shape{8});

  // An override that does not apply is reported, not fatal.
  Network ignored = net_of(cnn, seq);
  CHECK(ignored.layers[0].output_shape == Shape{8, 16, 16});
  REQUIRE(ignored.warnings.size() == 1);
  CHECK_THAT(ignored.warnings[0], Catch::Contains("seq_len"));
  Network ignored2 = net_of(kTransformer, image);
  REQUIRE(ignored2.warnings.size() == 1);
  CHECK_THAT(ignored2.warnings[0], Catch::Contains("image_size"));

  // An override past the learned positions is an error at the positional embedding.
  InputOverrides too_long;
  too_long.seq_len = 17;
  require_model_error(kTransformer, "model.layers[1]", "exceeds the 16 positions", too_long);
  // A kernel larger than the overridden image is an error too.
  InputOverrides tiny;
  tiny.image_size = 2;
  require_model_error(R"J({"input": {"kind": "image", "channels": 3, "image_size": 32},
    "layers": [{"type": "conv2d", "filters": 8, "kernel_size": 3}]})J",
                      "model.layers[0].kernel_size", "larger than the padded input [3, 2, 2]", tiny);
}

TEST_CASE("errors name the exact field and the problem", "[layer_list][errors]") {
  SECTION("unknown layer type") {
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "dense", "units": 4}, {"type": "dense", "units": 4}, {"type": "desne", "units": 4}]})J",
                        "model.layers[2].type", "unknown layer type \"desne\"");
    // Inside a repeat the path points into the repeat's body.
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "repeat", "count": 2, "layers": [{"type": "dense", "units": 4}, {"type": "conv3d"}]}]})J",
                        "model.layers[0].layers[1].type", "conv3d");
  }
  SECTION("missing required attributes") {
    require_model_error(R"J({"input": {"kind": "vector", "features": 8}, "layers": [{"type": "dense"}]})J",
                        "model.layers[0].units", "required integer is missing");
    require_model_error(R"J({"input": {"kind": "image", "image_size": 8}, "layers": [{"type": "conv2d", "filters": 2}]})J",
                        "model.layers[0].kernel_size", "missing");
    require_model_error(R"J({"input": {"kind": "tokens", "seq_len": 8}, "layers": [{"type": "embedding", "dim": 2}]})J",
                        "model.layers[0].vocab_size", "required integer is missing");
    require_model_error(R"J({"input": {"kind": "sequence", "seq_len": 8, "features": 4}, "layers": [{"type": "lstm"}]})J",
                        "model.layers[0].hidden_size", "required integer is missing");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8}, "layers": [{"units": 3}]})J",
                        "model.layers[0].type", "required string is missing");
    require_model_error(R"J({"layers": [{"type": "dense", "units": 3}]})J", "model.input", "missing");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8}})J", "model.layers", "missing");
    require_model_error(R"J({"input": {"kind": "image"}, "layers": [{"type": "flatten"}]})J",
                        "model.input.image_size", "required integer is missing");
  }
  SECTION("negative or zero dimensions") {
    require_model_error(R"J({"input": {"kind": "vector", "features": 8}, "layers": [{"type": "dense", "units": -3}]})J",
                        "model.layers[0].units", "expected an integer in [1, 2147483648], got -3");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8}, "layers": [{"type": "dense", "units": 0}]})J",
                        "model.layers[0].units", "got 0");
    require_model_error(R"J({"input": {"kind": "image", "image_size": 8},
      "layers": [{"type": "conv2d", "filters": 0, "kernel_size": 3}]})J",
                        "model.layers[0].filters", "got 0");
    require_model_error(R"J({"input": {"kind": "image", "image_size": 8},
      "layers": [{"type": "conv2d", "filters": 2, "kernel_size": 3, "stride": -1}]})J",
                        "model.layers[0].stride", "got -1");
    require_model_error(R"J({"input": {"kind": "vector", "features": 0}, "layers": [{"type": "dense", "units": 3}]})J",
                        "model.input.features", "got 0");
    require_model_error(R"J({"input": {"kind": "image", "image_size": -224}, "layers": [{"type": "flatten"}]})J",
                        "model.input.image_size", "got -224");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "reshape", "shape": [0, 8]}]})J",
                        "model.layers[0].shape[0]", "positive or -1");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8}, "layers": [{"type": "dense", "units": 2.5}]})J",
                        "model.layers[0].units", "got 2.5");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8}, "layers": [{"type": "dense", "units": "4"}]})J",
                        "model.layers[0].units", "got a string");
  }
  SECTION("a dimension of 10^12 is rejected") {
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "dense", "units": 1000000000000}]})J",
                        "model.layers[0].units", "expected an integer in [1, 2147483648]");
    require_model_error(R"J({"input": {"kind": "vector", "features": 1000000000000}, "layers": [{"type": "flatten"}]})J",
                        "model.input.features", "1000000000000");
    require_model_error(R"J({"input": {"kind": "tokens", "seq_len": 8},
      "layers": [{"type": "embedding", "vocab_size": 1e12, "dim": 4}]})J",
                        "model.layers[0].vocab_size", "expected an integer");
    // Dimensions within the limit whose product exceeds 2^40 elements per sample.
    require_model_error(R"J({"input": {"kind": "sequence", "seq_len": 1048576, "features": 8},
      "layers": [{"type": "dense", "units": 2147483648}]})J",
                        "model.layers[0]", "too large");
  }
  SECTION("shape mismatch in add and concat") {
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "dense", "name": "a", "units": 4}, {"type": "dense", "name": "b", "units": 5, "inputs": ["input"]},
                 {"type": "add", "inputs": ["a", "b"]}]})J",
                        "model.layers[2].inputs", "add needs equal shapes, got [4] and [5]");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "dense", "units": 4}, {"type": "add"}]})J",
                        "model.layers[1].inputs", "at least two inputs");
    require_model_error(R"J({"input": {"kind": "image", "image_size": 8},
      "layers": [{"type": "conv2d", "name": "a", "filters": 4, "kernel_size": 3},
                 {"type": "concat", "axis": 0, "inputs": ["a", "input"]}]})J",
                        "model.layers[1].inputs", "cannot concatenate [4, 6, 6] and [3, 8, 8]");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "concat", "axis": 3, "inputs": ["input", "input"]}]})J",
                        "model.layers[0].axis", "out of range");
  }
  SECTION("layers applied to the wrong kind of input") {
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "conv2d", "filters": 4, "kernel_size": 3}]})J",
                        "model.layers[0]", "conv2d expects [channels, height, width], got an input of shape [8]");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8}, "layers": [{"type": "max_pool2d"}]})J",
                        "model.layers[0]", "pooling expects");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8}, "layers": [{"type": "global_avg_pool"}]})J",
                        "model.layers[0]", "global pooling expects");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8}, "layers": [{"type": "lstm", "hidden_size": 4}]})J",
                        "model.layers[0]", "expect [seq_len, features]");
    require_model_error(R"J({"input": {"kind": "sequence", "seq_len": 4, "features": 8},
      "layers": [{"type": "embedding", "vocab_size": 10, "dim": 4}]})J",
                        "model.layers[0]", "embedding expects token ids");
    require_model_error(R"J({"input": {"kind": "image", "image_size": 8},
      "layers": [{"type": "conv2d", "filters": 4, "kernel_size": 3, "groups": 2}]})J",
                        "model.layers[0].groups", "must divide input channels (3)");
  }
  SECTION("kernel larger than the input") {
    require_model_error(R"J({"input": {"kind": "image", "image_size": 8},
      "layers": [{"type": "conv2d", "filters": 4, "kernel_size": 9}]})J",
                        "model.layers[0].kernel_size", "kernel 9 is larger than the padded input [3, 8, 8]");
    require_model_error(R"J({"input": {"kind": "image", "image_size": 8},
      "layers": [{"type": "max_pool2d", "pool_size": 3}, {"type": "max_pool2d", "pool_size": 3}]})J",
                        "model.layers[1].pool_size", "larger than");
    // Padding makes room: (8 + 2 - 9) + 1 = 2.
    CHECK(net_of(R"J({"input": {"kind": "image", "image_size": 8},
      "layers": [{"type": "conv2d", "filters": 4, "kernel_size": 9, "padding": 1}]})J")
              .layers[0]
              .output_shape == Shape{4, 2, 2});
  }
  SECTION("reshape with the wrong element count") {
    require_model_error(R"J({"input": {"kind": "vector", "features": 12},
      "layers": [{"type": "reshape", "shape": [5, 2]}]})J",
                        "model.layers[0].shape", "cannot reshape [12] (12 elements) to [5, 2]");
    require_model_error(R"J({"input": {"kind": "vector", "features": 12},
      "layers": [{"type": "reshape", "shape": [-1, 5]}]})J",
                        "model.layers[0].shape", "cannot reshape [12]");
    require_model_error(R"J({"input": {"kind": "vector", "features": 12},
      "layers": [{"type": "reshape", "shape": [-1, -1]}]})J",
                        "model.layers[0].shape", "at most one dimension may be -1");
    CHECK(net_of(R"J({"input": {"kind": "vector", "features": 12},
      "layers": [{"type": "reshape", "shape": [3, -1, 2]}]})J")
              .layers[0]
              .output_shape == Shape{3, 2, 2});
  }
  SECTION("unknown input names") {
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "dense", "name": "a", "units": 4}, {"type": "dense", "units": 4, "inputs": ["b"]}]})J",
                        "model.layers[1].inputs[0]", "no earlier layer is named \"b\"");
    // A later layer cannot be referenced.
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "dense", "units": 4, "inputs": ["later"]}, {"type": "dense", "name": "later", "units": 4}]})J",
                        "model.layers[0].inputs[0]", "\"later\"");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "dense", "units": 4, "inputs": [3]}]})J",
                        "model.layers[0].inputs[0]", "expected a layer name, got a number");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "dense", "units": 4, "inputs": []}]})J",
                        "model.layers[0].inputs", "at least one input name");
    require_model_error(R"J({"input": {"kind": "tokens", "seq_len": 8},
      "layers": [{"type": "embedding", "name": "e", "vocab_size": 10, "dim": 4},
                 {"type": "dense", "units": 10, "tied_to": "emb"}]})J",
                        "model.layers[1].tied_to", "no earlier embedding is named \"emb\"");
    require_model_error(R"J({"input": {"kind": "tokens", "seq_len": 8},
      "layers": [{"type": "embedding", "name": "e", "vocab_size": 10, "dim": 4},
                 {"type": "dense", "units": 11, "tied_to": "e"}]})J",
                        "model.layers[1].tied_to", "is 10 x 4");
  }
  SECTION("unknown keys (typos) are rejected") {
    require_model_error(R"J({"input": {"kind": "vector", "features": 8}, "layers": [{"type": "dense", "unit": 4}]})J",
                        "model.layers[0].unit", "unknown field");
    require_model_error(R"J({"input": {"kind": "image", "image_size": 8},
      "layers": [{"type": "conv2d", "filters": 4, "kernel_size": 3, "strides": 2}]})J",
                        "model.layers[0].strides", "unknown field");
    require_model_error(R"J({"input": {"kind": "image", "image_sise": 8}, "layers": [{"type": "flatten"}]})J",
                        "model.input.image_sise", "unknown field");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "repeat", "cout": 2, "layers": [{"type": "dense", "units": 4}]}]})J",
                        "model.layers[0].cout", "unknown field");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8}, "layers": [{"type": "flatten", "units": 4}]})J",
                        "model.layers[0].units", "unknown field");
    require_model_error(R"J({"input": {"kind": "imagee", "image_size": 8}, "layers": [{"type": "flatten"}]})J",
                        "model.input.kind", "expected one of image, tokens, sequence, vector");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "activation", "function": "reul"}]})J",
                        "model.layers[0].function", "got \"reul\"");
    require_model_error(R"J({"input": {"kind": "image", "image_size": 8},
      "layers": [{"type": "conv2d", "filters": 4, "kernel_size": 3, "padding": "full"}]})J",
                        "model.layers[0].padding", "\"full\"");
    // Through the API the model object itself rejects typos too.
    Json response = Json::parse(predict_json(
        R"J({"model": {"input": {"kind": "vector", "features": 8}, "layer": [{"type": "dense", "units": 4}]}})J"));
    CHECK(response["error"]["field"] == "model.layer");
  }
  SECTION("more than 10000 layers after expanding repeats is rejected quickly") {
    // 10000 x 10000 would be 10^8 layers; expansion must stop at the limit instead of building them.
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "repeat", "count": 10000, "layers": [
        {"type": "repeat", "count": 10000, "layers": [{"type": "dense", "units": 4}]}]}]})J",
                        "model.layers[0].layers[0].layers", "more than 10000 layers");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "dense", "units": 8}, {"type": "repeat", "count": 5000, "layers": [
        {"type": "dense", "units": 8}, {"type": "activation"}]}]})J",
                        "model.layers[1].layers", "more than 10000 layers");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "repeat", "count": 10001, "layers": [{"type": "dense", "units": 4}]}]})J",
                        "model.layers[0].count", "expected an integer in [1, 10000]");
    // Exactly 10000 is allowed.
    Network limit = net_of(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "repeat", "count": 5000, "layers": [{"type": "dense", "units": 8}, {"type": "activation"}]}]})J");
    CHECK(limit.layers.size() == 10000);
    CHECK(limit.layers.back().name == "block0.4999.activation_1");
  }
  SECTION("repeats nested more than 8 deep") {
    Json inner = {{"type", "dense"}, {"units", 2}};
    for (int i = 0; i < 9; ++i) inner = {{"type", "repeat"}, {"count", 1}, {"layers", Json::array({inner})}};
    Json model = {{"input", {{"kind", "vector"}, {"features", 2}}}, {"layers", Json::array({inner})}};
    testutil::require_input_error([&] { parse_layer_list(model, "model", {}); },
                                  "model.layers[0].layers[0].layers[0].layers[0].layers[0].layers[0].layers[0].layers[0]."
                                  "layers[0]",
                                  "deeper than 8");
  }
  SECTION("empty layer lists") {
    require_model_error(R"J({"input": {"kind": "vector", "features": 8}, "layers": []})J", "model.layers",
                        "the layer list is empty");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8},
      "layers": [{"type": "repeat", "count": 3, "layers": []}]})J",
                        "model.layers[0].layers", "at least one layer");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8}, "layers": {"type": "dense"}})J",
                        "model.layers", "expected an array, got an object");
    require_model_error(R"J({"input": {"kind": "vector", "features": 8}, "layers": ["dense"]})J", "model.layers[0]",
                        "expected an object, got a string");
  }
}

// Regression test (fixed): elements of [h, w] pairs and of reshape targets are reported as "kernel_size.w" / "shape[0].d",
// paths that do not exist in the request (get_pair and the reshape loop wrap the element in a holder
// object and name the holder's key). The field should index the array: "kernel_size[1]", "shape[0]".
TEST_CASE("errors inside height-width pairs and shape arrays name the array element", "[layer_list][errors]") {
  require_model_error(R"J({"input": {"kind": "image", "image_size": 8},
    "layers": [{"type": "conv2d", "filters": 2, "kernel_size": [3, 0]}]})J",
                      "model.layers[0].kernel_size[1]", "got 0");
  require_model_error(R"J({"input": {"kind": "image", "image_size": 8},
    "layers": [{"type": "max_pool2d", "pool_size": 2, "stride": [-1, 1]}]})J",
                      "model.layers[0].stride[0]", "got -1");
  require_model_error(R"J({"input": {"kind": "vector", "features": 8},
    "layers": [{"type": "reshape", "shape": [-2, 4]}]})J",
                      "model.layers[0].shape[0]", "got -2");
}

// Regression test (fixed): parameter counts are plain int64 products and sums with no overflow check. Three dense layers of
// 2^31 x 2^31 (each dimension within the documented limit) total 3 x (2^62 + 2^31) parameters, more
// than int64 holds; Network::parameters() wraps to a negative count (UB) and predict_json then reports
// negative gradient / optimizer memory and "fits": true. Either reject or count correctly.
TEST_CASE("parameter totals beyond int64 are rejected, not wrapped", "[layer_list][errors]") {
  const char* text = R"J({"input": {"kind": "vector", "features": 2147483648},
    "layers": [{"type": "dense", "units": 2147483648}, {"type": "dense", "units": 2147483648},
               {"type": "dense", "units": 2147483648}]})J";
  bool rejected = false;
  try {
    Network net = net_of(text);
    CHECK(net.parameters() > 0);
  } catch (const InputError& e) {
    rejected = true;
    CHECK_THAT(e.field(), Catch::StartsWith("model"));
  }
  Json response = Json::parse(predict_json(std::string(R"J({"model": )J") + text + R"J(, "hardware": ["t4"],
    "options": {"per_layer": false}})J"));
  INFO(response.dump().substr(0, 600));
  if (!response.contains("error")) {
    CHECK_FALSE(rejected);
    CHECK(response["model"]["parameters"].get<double>() > 0);
    CHECK(response["results"][0]["memory"]["gradients_gb"].get<double>() > 0);
    CHECK(response["results"][0]["fits"] == false);
  }
}

// conv2d parameters kh*kw*(Cin/g)*Cout must not overflow int64 silently: 8 x 8 kernels over 2^20
// channels into 2^31 filters is 2^57 weights, beyond the 2^50 per-layer limit.
TEST_CASE("conv2d weight counts that overflow are rejected", "[layer_list][errors]") {
  const char* text = R"J({"input": {"kind": "image", "channels": 1048576, "image_size": 8},
    "layers": [{"type": "conv2d", "filters": 2147483648, "kernel_size": 8}]})J";
  bool rejected = false;
  try {
    Network net = net_of(text);
    INFO("parameters reported: " << net.parameters());
    CHECK(static_cast<double>(net.parameters()) >= 64.0 * 1048576.0 * 2147483648.0);
  } catch (const InputError& e) {
    rejected = true;
    CHECK_THAT(e.field(), Catch::StartsWith("model.layers[0]"));
  }
  CHECK(rejected);
}

TEST_CASE("every layer type has one registered kind whose name round-trips", "[layer_list][kinds]") {
  int kinds = 0;
  for (int t = 0; t <= static_cast<int>(LayerType::ContrastiveLoss); ++t) {
    const auto type = static_cast<LayerType>(t);
    const LayerKind& kind = kind_of(type);
    INFO(kind.name());
    CHECK(kind.type() == type);
    REQUIRE(kind_named(kind.name()) == &kind);
    CHECK(std::string(to_string(type)) == kind.name());
    ++kinds;
  }
  CHECK(kind_named("repeat") == nullptr);
  CHECK(kind_name_list().find("activation, adaptive_softmax, add, attention") == 0);
  CHECK(kinds == 30);
}
