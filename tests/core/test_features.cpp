// Per-layer work: output shapes, parameter counts (PyTorch conventions), FLOPs of the matrix kernels,
// the backward/forward ratio, optimizer traffic and PreNeT's CO / CM features. Every expected value is
// computed by hand from the formulas in PREDICTION.md / PRENET.md and written out here.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
#include "prenet/memory.hpp"
#include "prenet/training.hpp"

using namespace prenet;
using testutil::d;
using testutil::gemm_view_flops;
using testutil::kernel_count;
using testutil::layer;
using testutil::layer_index;
using testutil::matmul_flops;
using testutil::net_of;
using testutil::trained_with;

namespace {

constexpr auto kF = Phase::Forward;
constexpr auto kB = Phase::Backward;
constexpr auto kO = Phase::Optimizer;

double fwd_flops(const StepWork& w, std::size_t i) { return w.layers[i].flops[0]; }
double bwd_flops(const StepWork& w, std::size_t i) { return w.layers[i].flops[1]; }

}  // namespace

TEST_CASE("dense: shape, parameters, 2MNK forward, backward 1x as first trainable layer and 2x after", "[features][dense]") {
  Network net = net_of(R"J({"input": {"kind": "vector", "features": 64},
    "layers": [{"type": "dense", "name": "fc1", "units": 32},
               {"type": "dense", "name": "fc2", "units": 16, "bias": false}]})J");
  const std::int64_t b = 8;
  StepWork w = step_work(net, b, KernelContext(Precision::FP32), Optimizer::Adam);
  auto fc1 = layer_index(net, "fc1");
  auto fc2 = layer_index(net, "fc2");

  CHECK(net.layers[fc1].output_shape == Shape{32});
  CHECK(net.layers[fc2].output_shape == Shape{16});
  CHECK(net.layers[fc1].parameters == 64 * 32 + 32);  // W + b = 2080
  CHECK(net.layers[fc2].parameters == 32 * 16);       // no bias = 512
  CHECK(net.parameters() == 2592);
  CHECK_FALSE(net.layers[fc1].needs_input_grad);  // fed by the input: nothing upstream trains
  CHECK(net.layers[fc2].needs_input_grad);

  // Forward: Y = X W, M = batch, K = d_in, N = units: 2 M N K.
  const double fwd1 = 2.0 * 8 * 32 * 64;  // 32768
  const double fwd2 = 2.0 * 8 * 16 * 32;  // 8192
  CHECK(matmul_flops(w, fc1, kF) == Approx(fwd1));
  CHECK(fwd_flops(w, fc1) == Approx(fwd1));  // no activation: the GEMM is the only forward work
  CHECK(matmul_flops(w, fc2, kF) == Approx(fwd2));

  // Backward: first trainable layer computes only dW (1x); the next also computes dX (2x).
  CHECK(matmul_flops(w, fc1, kB) == Approx(fwd1));
  CHECK(matmul_flops(w, fc2, kB) == Approx(2 * fwd2));
  // Total backward adds only the bias-gradient reduction (one add per output element) for fc1.
  CHECK(bwd_flops(w, fc1) == Approx(fwd1 + 8.0 * 32));
  CHECK(bwd_flops(w, fc2) == Approx(2 * fwd2));
  CHECK(bwd_flops(w, fc1) / fwd_flops(w, fc1) == Approx(1.0).epsilon(0.02));
  CHECK(bwd_flops(w, fc2) / fwd_flops(w, fc2) == Approx(2.0).epsilon(0.02));

  // Step totals are the sum of the layers.
  CHECK(w.flops[0] == Approx(fwd1 + fwd2));

  // PreNeT: CO = 2 b d_in d_out (the reference code); CM = weights + input + output, doubled when training.
  CHECK(w.layers[fc1].co == Approx(2.0 * 8 * 64 * 32));
  CHECK(prenet_co(net.layers[fc2], b) == Approx(2.0 * 8 * 32 * 16));
  CHECK(w.layers[fc1].cm == Approx(2.0 * (2080 + 8 * 64 + 8 * 32)));  // 5696
  CHECK(prenet_cm(net.layers[fc1], b, false) == Approx(2080.0 + 8 * 64 + 8 * 32));
  CHECK(prenet_cm(net.layers[fc2], 4, true) == Approx(2.0 * (512 + 4 * 32 + 4 * 16)));
  StepWork inference = step_work(net, b, KernelContext(Precision::FP32), Optimizer::None);
  CHECK(inference.layers[fc1].cm == Approx(2848.0));
}

TEST_CASE("dense on a sequence applies to the last dimension, and fused activation adds elementwise work", "[features][dense]") {
  Network net = net_of(R"J({"input": {"kind": "sequence", "seq_len": 10, "features": 16},
    "layers": [{"type": "dense", "name": "proj", "units": 8, "activation": "relu"}]})J");
  const std::int64_t b = 4;
  StepWork w = step_work(net, b, KernelContext(Precision::FP32), Optimizer::SGD);
  const Layer& proj = net.layers[0];
  CHECK(proj.output_shape == Shape{10, 8});
  CHECK(proj.parameters == 16 * 8 + 8);
  const double gemm = 2.0 * (4 * 10) * 8 * 16;  // M = b * s rows
  CHECK(matmul_flops(w, 0, kF) == Approx(gemm));
  // ReLU costs about one operation per output element on top of the GEMM.
  CHECK(fwd_flops(w, 0) > gemm);
  CHECK(fwd_flops(w, 0) <= gemm + 4.0 * 10 * 8 * 2);
  CHECK(w.layers[0].co == Approx(2.0 * 4 * 10 * 16 * 8));
}

TEST_CASE("dense GEMM traffic halves at 16-bit activations", "[features][dense]") {
  Network net = net_of(R"J({"input": {"kind": "vector", "features": 256},
    "layers": [{"type": "dense", "name": "fc", "units": 128, "bias": false}]})J");
  StepWork w32 = step_work(net, 64, KernelContext(Precision::FP32), Optimizer::None);
  StepWork w16 = step_work(net, 64, KernelContext(Precision::BF16), Optimizer::None);
  // X (64x256) + W (256x128) + Y (64x128) elements, 4 bytes each at FP32.
  CHECK(w32.layers[0].bytes[0] == Approx(4.0 * (64 * 256 + 256 * 128 + 64 * 128)));
  CHECK(w16.layers[0].bytes[0] == Approx(w32.layers[0].bytes[0] / 2));
  CHECK(w16.layers[0].flops[0] == Approx(w32.layers[0].flops[0]));
}

TEST_CASE("conv2d: valid, same, strided, grouped, depthwise and rectangular kernels", "[features][conv2d]") {
  Network net = net_of(R"J({"input": {"kind": "image", "channels": 3, "image_size": 32},
    "layers": [
      {"type": "conv2d", "name": "c1", "filters": 16, "kernel_size": 3},
      {"type": "conv2d", "name": "c2", "filters": 32, "kernel_size": 3, "stride": 2, "padding": "same", "groups": 4},
      {"type": "conv2d", "name": "c3", "filters": 32, "kernel_size": 5, "padding": "same", "bias": false},
      {"type": "conv2d", "name": "dw", "filters": 32, "kernel_size": 3, "padding": 1, "groups": 32},
      {"type": "conv2d", "name": "rect", "filters": 8, "kernel_size": [3, 1], "stride": [2, 1], "padding": [1, 0]}
    ]})J");
  const std::int64_t b = 4;
  StepWork w = step_work(net, b, KernelContext(Precision::FP32), Optimizer::Adam);
  auto c1 = layer_index(net, "c1"), c2 = layer_index(net, "c2"), c3 = layer_index(net, "c3");
  auto dw = layer_index(net, "dw"), rect = layer_index(net, "rect");

  SECTION("shapes") {
    CHECK(net.layers[c1].output_shape == Shape{16, 30, 30});  // (32 - 3) / 1 + 1
    CHECK(net.layers[c2].output_shape == Shape{32, 15, 15});  // same: ceil(30 / 2)
    CHECK(net.layers[c3].output_shape == Shape{32, 15, 15});  // same, stride 1
    CHECK(net.layers[c3].attrs.pad_h == 2);                   // (15 - 1) + 5 - 15 = 4 split in two
    CHECK(net.layers[dw].output_shape == Shape{32, 15, 15});  // (15 + 2 - 3) + 1
    CHECK(net.layers[rect].output_shape == Shape{8, 8, 15});  // H: (15 + 2 - 3) / 2 + 1, W: 15 - 1 + 1
  }

  SECTION("parameters: kh kw Cin/g Cout + Cout") {
    CHECK(net.layers[c1].parameters == 3 * 3 * 3 * 16 + 16);       // 448
    CHECK(net.layers[c2].parameters == 3 * 3 * (16 / 4) * 32 + 32);  // 1184
    CHECK(net.layers[c3].parameters == 5 * 5 * 32 * 32);            // 25600
    CHECK(net.layers[dw].parameters == 3 * 3 * 1 * 32 + 32);        // 320
    CHECK(net.layers[rect].parameters == 3 * 1 * 32 * 8 + 8);       // 776
    CHECK(net.parameters() == 448 + 1184 + 25600 + 320 + 776);
  }

  SECTION("forward FLOPs 2 B Ho Wo kh kw Cin/g Cout") {
    CHECK(matmul_flops(w, c1, kF) == Approx(2.0 * 4 * 30 * 30 * 3 * 3 * 3 * 16));  // 3,110,400
    CHECK(matmul_flops(w, c2, kF) == Approx(2.0 * 4 * 15 * 15 * 3 * 3 * 4 * 32));  // 2,073,600
    CHECK(matmul_flops(w, c3, kF) == Approx(2.0 * 4 * 15 * 15 * 5 * 5 * 32 * 32));
    CHECK(matmul_flops(w, dw, kF) == Approx(2.0 * 4 * 15 * 15 * 3 * 3 * 1 * 32));  // 518,400
    CHECK(matmul_flops(w, rect, kF) == Approx(2.0 * 4 * 8 * 15 * 3 * 1 * 32 * 8));  // 737,280
  }

  SECTION("backward: filter gradient only for the first conv, data + filter gradients after") {
    CHECK_FALSE(net.layers[c1].needs_input_grad);
    CHECK(net.layers[c2].needs_input_grad);
    CHECK(matmul_flops(w, c1, kB) == Approx(matmul_flops(w, c1, kF)));
    for (auto i : {c2, c3, dw, rect}) {
      INFO(net.layers[i].name);
      CHECK(matmul_flops(w, i, kB) == Approx(2 * matmul_flops(w, i, kF)));
    }
  }

  SECTION("PreNeT CO = b Ho Wo k^2 Cin Cout (per group), CM = params + in + out, doubled") {
    CHECK(w.layers[c1].co == Approx(4.0 * 30 * 30 * 9 * 3 * 16));
    CHECK(w.layers[c2].co == Approx(4.0 * 15 * 15 * 9 * 4 * 32));
    CHECK(w.layers[c1].cm == Approx(2.0 * (448 + 4 * 3 * 32 * 32 + 4 * 16 * 30 * 30)));
  }
}

TEST_CASE("pooling: max, average, same padding and global pools", "[features][pool]") {
  Network net = net_of(R"J({"input": {"kind": "image", "channels": 16, "image_size": 30},
    "layers": [
      {"type": "max_pool2d", "name": "mp"},
      {"type": "avg_pool2d", "name": "ap", "pool_size": 3, "stride": 2, "padding": 1},
      {"type": "max_pool2d", "name": "mps", "pool_size": 3, "stride": 2, "padding": "same"},
      {"type": "global_avg_pool", "name": "gap"},
      {"type": "global_max_pool", "name": "gmp", "inputs": ["ap"]},
      {"type": "avg_pool2d", "name": "rect", "pool_size": [2, 3], "inputs": ["mp"]}
    ]})J");
  const std::int64_t b = 2;
  StepWork w = step_work(net, b, KernelContext(Precision::FP32), Optimizer::Adam);
  CHECK(layer(net, "mp").output_shape == Shape{16, 15, 15});  // default 2x2, stride = pool size
  CHECK(layer(net, "ap").output_shape == Shape{16, 8, 8});    // (15 + 2 - 3) / 2 + 1
  CHECK(layer(net, "mps").output_shape == Shape{16, 4, 4});   // ceil(8 / 2)
  CHECK(layer(net, "gap").output_shape == Shape{16});
  CHECK(layer(net, "gmp").output_shape == Shape{16});
  CHECK(layer(net, "rect").output_shape == Shape{16, 7, 5});  // 15 / 2, 15 / 3
  CHECK(net.parameters() == 0);
  for (const auto& l : net.layers) CHECK_FALSE(l.needs_input_grad);

  // One comparison or addition per window element per output.
  auto mp = layer_index(net, "mp"), ap = layer_index(net, "ap"), gap = layer_index(net, "gap");
  CHECK(fwd_flops(w, mp) == Approx(2.0 * 16 * 15 * 15 * 4));
  CHECK(fwd_flops(w, ap) == Approx(2.0 * 16 * 8 * 8 * 9));
  CHECK(fwd_flops(w, gap) == Approx(2.0 * 16 * 4 * 4));
  // Memory-bound: reads the input and writes the output at least once.
  CHECK(w.layers[mp].bytes[0] >= 4.0 * 2 * (16 * 30 * 30 + 16 * 15 * 15));
  // Nothing upstream trains, so no gradient flows back through the pools.
  CHECK(kernel_count(w, mp, kB) == 0);
  CHECK(matmul_flops(w, mp, kF) == 0);
  CHECK(w.flops[2] == 0);  // no parameters, no optimizer work
}

TEST_CASE("pool backward runs when something upstream trains", "[features][pool]") {
  Network net = net_of(R"J({"input": {"kind": "image", "channels": 3, "image_size": 8},
    "layers": [{"type": "conv2d", "name": "c", "filters": 4, "kernel_size": 3, "padding": "same"},
               {"type": "max_pool2d", "name": "mp"}]})J");
  StepWork w = step_work(net, 2, KernelContext(Precision::FP32), Optimizer::SGD);
  auto mp = layer_index(net, "mp");
  CHECK(net.layers[mp].needs_input_grad);
  CHECK(kernel_count(w, mp, kB) >= 1);
  CHECK(w.layers[mp].bytes[1] > 0);
}

TEST_CASE("normalisations: batchnorm 2C, layernorm 2F (F without bias), rmsnorm F", "[features][norm]") {
  Network image = net_of(R"J({"input": {"kind": "image", "channels": 16, "image_size": 8},
    "layers": [{"type": "batchnorm", "name": "bn"}]})J");
  CHECK(image.layers[0].output_shape == Shape{16, 8, 8});
  CHECK(image.layers[0].parameters == 2 * 16);
  Network vec = net_of(R"J({"input": {"kind": "vector", "features": 64},
    "layers": [{"type": "batchnorm", "name": "bn"}]})J");
  CHECK(vec.layers[0].parameters == 2 * 64);

  Network seq = net_of(R"J({"input": {"kind": "sequence", "seq_len": 10, "features": 64},
    "layers": [{"type": "layernorm", "name": "ln"},
               {"type": "layernorm", "name": "ln_nobias", "bias": false},
               {"type": "rmsnorm", "name": "rms"}]})J");
  CHECK(layer(seq, "ln").parameters == 128);
  CHECK(layer(seq, "ln_nobias").parameters == 64);
  CHECK(layer(seq, "rms").parameters == 64);
  for (const auto& l : seq.layers) CHECK(l.output_shape == Shape{10, 64});

  const std::int64_t b = 4;
  StepWork w = step_work(seq, b, KernelContext(Precision::FP32), Optimizer::Adam);
  const double elems = 4.0 * 10 * 64;
  for (std::size_t i = 0; i < seq.layers.size(); ++i) {
    INFO(seq.layers[i].name);
    CHECK(matmul_flops(w, i, kF) == 0);
    // Memory-bound: at least one read and one write of the activations forward, more backward.
    CHECK(w.layers[i].bytes[0] >= 2 * 4.0 * elems);
    CHECK(w.layers[i].bytes[1] > w.layers[i].bytes[0]);
    CHECK(w.layers[i].co == Approx(elems));  // not defined by PreNeT: one operation per output element
  }
}

TEST_CASE("rmsnorm under PyTorch's kernels is Hugging Face's op chain; fused under compile and Megatron", "[features][norm]") {
  Network seq = net_of(R"J({"input": {"kind": "sequence", "seq_len": 10, "features": 64},
    "layers": [{"type": "dense", "name": "fc", "units": 64}, {"type": "rmsnorm", "name": "rms"}]})J");
  const std::int64_t b = 4;
  const double n = 4.0 * 10 * 64, rows = 4.0 * 10;
  auto kernels_of = [](const StepWork& w, int layer, Phase phase) {
    std::vector<const Kernel*> out;
    for (const Kernel& k : w.kernels) {
      if (k.layer == layer && k.phase == phase) out.push_back(&k);
    }
    return out;
  };
  auto bytes_of = [](const std::vector<const Kernel*>& ks) {
    double total = 0;
    for (const Kernel* k : ks) total += k->bytes;
    return total;
  };
  // BF16: 8 kernels forward (36 bytes per element plus the row values' 2 x 8), 15 backward (92 plus 2 x 12).
  KernelContext bf16(Precision::BF16);
  StepWork w = step_work(seq, b, bf16, Optimizer::Adam);
  CHECK(kernels_of(w, 1, Phase::Forward).size() == 8);
  CHECK(kernels_of(w, 1, Phase::Backward).size() == 15);
  CHECK(bytes_of(kernels_of(w, 1, Phase::Forward)) == Approx(36 * n + 16 * rows));
  CHECK(bytes_of(kernels_of(w, 1, Phase::Backward)) == Approx(92 * n + 24 * rows));
  // Saved: the FP32 copy of the input, the normalized BF16 rows, the row scales; not the input as written.
  CHECK(w.layers[1].saved_activation_bytes == Approx(6 * n + 4 * rows));
  CHECK(w.layers[1].saved_input_bytes == 0);
  // FP32: no casts (6 and 13 kernels); the input itself is what pow and the product keep.
  StepWork w32 = step_work(seq, b, KernelContext(Precision::FP32), Optimizer::Adam);
  CHECK(kernels_of(w32, 1, Phase::Forward).size() == 6);
  CHECK(kernels_of(w32, 1, Phase::Backward).size() == 13);
  CHECK(w32.layers[1].saved_activation_bytes == Approx(8 * n + 4 * rows));
  CHECK(w32.layers[1].saved_input_bytes == Approx(4 * n));
  // torch.compile and Megatron's kernels: one fused kernel each way, as a layernorm.
  KernelContext compiled(Precision::BF16);
  compiled.compiled = true;
  KernelContext megatron(Precision::BF16, AttentionKernel::Eager, KernelSet::Megatron);
  for (const KernelContext& fused : {compiled, megatron}) {
    StepWork f = step_work(seq, b, fused, Optimizer::Adam);
    CHECK(kernels_of(f, 1, Phase::Forward).size() == 1);
    CHECK(kernels_of(f, 1, Phase::Backward).size() == 1);
    CHECK(f.layers[1].saved_activation_bytes < w.layers[1].saved_activation_bytes);
  }
}

TEST_CASE("shape-only and elementwise layers: activation, dropout, flatten, reshape, softmax, identity", "[features][elementwise]") {
  Network net = net_of(R"J({"input": {"kind": "image", "channels": 16, "image_size": 15},
    "layers": [
      {"type": "activation", "name": "act", "function": "gelu"},
      {"type": "dropout", "name": "drop", "rate": 0.5},
      {"type": "dropout", "name": "nodrop", "rate": 0},
      {"type": "flatten", "name": "flat"},
      {"type": "reshape", "name": "rs", "shape": [-1, 36]},
      {"type": "reshape", "name": "rs2", "shape": [10, 10, 36]},
      {"type": "softmax", "name": "sm"},
      {"type": "identity", "name": "id"}
    ]})J");
  StepWork w = step_work(net, 2, KernelContext(Precision::FP32), Optimizer::Adam);
  CHECK(layer(net, "act").output_shape == Shape{16, 15, 15});
  CHECK(layer(net, "drop").output_shape == Shape{16, 15, 15});
  CHECK(layer(net, "flat").output_shape == Shape{3600});
  CHECK(layer(net, "rs").output_shape == Shape{100, 36});
  CHECK(layer(net, "rs2").output_shape == Shape{10, 10, 36});
  CHECK(layer(net, "sm").output_shape == Shape{10, 10, 36});
  CHECK(layer(net, "id").output_shape == Shape{10, 10, 36});
  CHECK(net.parameters() == 0);

  // Views cost nothing; a zero-rate dropout is skipped.
  for (const char* view : {"flat", "rs", "rs2", "id", "nodrop"}) {
    INFO(view);
    CHECK(w.layers[layer_index(net, view)].kernels == 0);
  }
  // Elementwise layers read and write every element at least once.
  const double elems = 2.0 * 3600;
  for (const char* ew : {"act", "drop", "sm"}) {
    INFO(ew);
    auto i = layer_index(net, ew);
    CHECK(w.layers[i].kernels >= 1);
    CHECK(w.layers[i].bytes[0] >= 2 * 4.0 * elems);
    CHECK(matmul_flops(w, i, kF) == 0);
  }
  // GELU costs more arithmetic than ReLU per element.
  Network relu = net_of(R"J({"input": {"kind": "vector", "features": 100},
    "layers": [{"type": "dense", "units": 100}, {"type": "activation", "name": "a", "function": "relu"}]})J");
  Network gelu = net_of(R"J({"input": {"kind": "vector", "features": 100},
    "layers": [{"type": "dense", "units": 100}, {"type": "activation", "name": "a", "function": "gelu"}]})J");
  StepWork wr = step_work(relu, 8, KernelContext(Precision::FP32), Optimizer::None);
  StepWork wg = step_work(gelu, 8, KernelContext(Precision::FP32), Optimizer::None);
  CHECK(wr.layers[1].flops[0] >= 800);  // at least one op per element
  CHECK(wg.layers[1].flops[0] > wr.layers[1].flops[0]);
}

TEST_CASE("embedding: token and positional tables, lookups are not matmuls, dense table gradient", "[features][embedding]") {
  Network net = net_of(R"J({"input": {"kind": "tokens", "seq_len": 16},
    "layers": [
      {"type": "embedding", "name": "tok", "vocab_size": 1000, "dim": 64},
      {"type": "embedding", "name": "pos", "vocab_size": 32, "dim": 64, "positional": true, "inputs": ["input"]},
      {"type": "add", "name": "sum", "inputs": ["tok", "pos"]}
    ]})J");
  const std::int64_t b = 2;
  StepWork w = step_work(net, b, KernelContext(Precision::FP32), Optimizer::Adam);
  auto tok = layer_index(net, "tok"), pos = layer_index(net, "pos"), sum = layer_index(net, "sum");
  CHECK(net.layers[tok].output_shape == Shape{16, 64});
  CHECK(net.layers[pos].output_shape == Shape{16, 64});
  CHECK(net.layers[sum].output_shape == Shape{16, 64});
  CHECK(net.layers[tok].parameters == 1000 * 64);
  CHECK(net.layers[pos].parameters == 32 * 64);
  CHECK(net.parameters() == 64000 + 2048);
  CHECK(net.layers[sum].needs_input_grad);

  CHECK(matmul_flops(w, tok, kF) == 0);
  CHECK(matmul_flops(w, tok, kB) == 0);
  // PyTorch's dense embedding gradient writes the whole V x D table (FP32) every step.
  CHECK(w.layers[tok].bytes[1] >= 4.0 * 1000 * 64);
  // The optimizer touches every row, used or not: Adam reads and writes 28 bytes per parameter.
  CHECK(w.layers[tok].bytes[2] == Approx(28.0 * 64000));
  // PreNeT CO = B S D.
  CHECK(w.layers[tok].co == Approx(2.0 * 16 * 64));
  CHECK(w.layers[tok].cm == Approx(2.0 * (64000 + 2 * 16 + 2 * 16 * 64)));
}

TEST_CASE("positional embedding shorter than the sequence is rejected", "[features][embedding]") {
  const std::string text = R"J({"input": {"kind": "tokens", "seq_len": 16},
    "layers": [{"type": "embedding", "name": "pos", "vocab_size": 32, "dim": 8, "positional": true}]})J";
  CHECK_NOTHROW(net_of(text));
  InputOverrides longer;
  longer.seq_len = 64;
  testutil::require_model_error(text, "model.layers[0]", "exceeds the 32 positions", longer);
}

namespace {

struct RecurrentCase {
  const char* spec;
  Shape shape;
  std::int64_t params;
  double gates;       // g: 1 RNN, 3 GRU, 4 LSTM (GEMM width g*h)
  double co_gates;    // PreNeT CO factor: 2 RNN, 3 GRU, 4 LSTM
  double dirs;
  std::int64_t layers;
};

}  // namespace

TEST_CASE("recurrent layers: PyTorch parameter counts (two bias vectors per gate set), shapes, FLOPs, CO", "[features][recurrent]") {
  // Input [s = 10, d = 20], hidden h = 30, batch 3.
  // PyTorch: per layer and direction g h (d_in + h) + 2 g h; d_in = d for layer 0, dirs * h above it.
  const std::vector<RecurrentCase> cases = {
      {R"J({"type": "rnn", "hidden_size": 30})J", {10, 30}, 30 * (20 + 30) + 2 * 30, 1, 2, 1, 1},
      {R"J({"type": "rnn", "hidden_size": 30, "bias": false})J", {10, 30}, 30 * (20 + 30), 1, 2, 1, 1},
      {R"J({"type": "lstm", "hidden_size": 30})J", {10, 30}, 4 * 30 * (20 + 30) + 8 * 30, 4, 4, 1, 1},  // 6240
      {R"J({"type": "gru", "hidden_size": 30})J", {10, 30}, 3 * 30 * (20 + 30) + 6 * 30, 3, 3, 1, 1},   // 4680
      {R"J({"type": "lstm", "hidden_size": 30, "bidirectional": true})J", {10, 60}, 2 * 6240, 4, 4, 2, 1},
      {R"J({"type": "lstm", "hidden_size": 30, "num_layers": 2})J", {10, 30},
       6240 + (4 * 30 * (30 + 30) + 8 * 30), 4, 4, 1, 2},  // 13680
      {R"J({"type": "gru", "hidden_size": 30, "num_layers": 2, "bidirectional": true})J", {10, 60},
       2 * (3 * 30 * (20 + 30) + 6 * 30) + 2 * (3 * 30 * (60 + 30) + 6 * 30), 3, 3, 2, 2},  // 9360 + 16560
      {R"J({"type": "lstm", "hidden_size": 30, "bidirectional": true, "return_sequences": false})J", {60}, 12480, 4, 4,
       2, 1},
  };
  const double b = 3, s = 10, dim = 20, h = 30;
  for (const auto& c : cases) {
    INFO(c.spec);
    Json model = Json::parse(R"J({"input": {"kind": "sequence", "seq_len": 10, "features": 20}})J");
    Json first = Json::parse(c.spec);
    first["name"] = "rec";
    // Second copy after a trainable layernorm, so it needs an input gradient.
    Json second = first;
    second["name"] = "rec2";
    second["inputs"] = {"ln"};
    model["layers"] = {first, {{"type", "layernorm"}, {"name", "ln"}, {"inputs", {"input"}}}, second};
    Network net = parse_layer_list(model, "model", {});
    StepWork w = step_work(net, 3, KernelContext(Precision::FP32), Optimizer::Adam);
    auto rec = layer_index(net, "rec"), rec2 = layer_index(net, "rec2");
    CHECK(net.layers[rec].output_shape == c.shape);
    CHECK(net.layers[rec].parameters == c.params);
    CHECK(net.layers[rec2].parameters == c.params);

    // Forward GEMMs: per layer and direction, the input projection of all steps (2 b s gh d_in) and
    // s dependent steps of 2 b gh h.
    double gemm = 0, co = 0;
    for (std::int64_t l = 0; l < c.layers; ++l) {
      double din = l == 0 ? dim : h * c.dirs;
      gemm += c.dirs * 2 * b * s * c.gates * h * (din + h);
      co += c.dirs * c.co_gates * b * s * h * (h + din);
    }
    CHECK(gemm_view_flops(w, rec, kF) == Approx(gemm));
    // Gate nonlinearities add at most a dozen operations per gate element on top of the GEMMs.
    CHECK(fwd_flops(w, rec) >= gemm);
    CHECK(fwd_flops(w, rec) <= gemm + 12 * b * s * c.gates * h * c.dirs * d(c.layers));
    // Backward with an input gradient: exactly twice the forward GEMMs (dX, dW_ih, dh, dW_hh).
    CHECK(gemm_view_flops(w, rec2, kB) == Approx(2 * gemm));
    if (c.layers == 1) {
      // First layer: no dX, so backward = forward + the hidden-state gradient (2 b s gh h) per direction.
      CHECK(gemm_view_flops(w, rec, kB) == Approx(gemm + c.dirs * 2 * b * s * c.gates * h * h));
    } else {
      CHECK(gemm_view_flops(w, rec, kB) < 2 * gemm);
      CHECK(gemm_view_flops(w, rec, kB) > gemm);
    }
    // PreNeT CO: g b s h (h + d) per layer, doubled for bidirectional.
    CHECK(w.layers[rec].co == Approx(co));
    // Recurrent steps are dependent launches: the loop kernel repeats s times.
    bool has_loop = false;
    for (const auto& k : w.kernels) {
      if (static_cast<std::size_t>(k.layer) == rec && k.cls == KernelClass::Recurrent) {
        has_loop = true;
        CHECK(k.repeats == Approx(s));
      }
    }
    CHECK(has_loop);
  }
}

TEST_CASE("attention: QKV + scores + PV + output GEMMs, grouped-query heads, explicit head_dim", "[features][attention]") {
  const double b = 2, s = 16, e = 64;
  SECTION("multi-head: 4 heads of 16") {
    Network net = net_of(R"J({"input": {"kind": "sequence", "seq_len": 16, "features": 64},
      "layers": [{"type": "attention", "name": "first", "num_heads": 4},
                 {"type": "layernorm", "name": "ln", "inputs": ["input"]},
                 {"type": "attention", "name": "mha", "num_heads": 4, "causal": true}]})J");
    StepWork w = step_work(net, 2, KernelContext(Precision::FP32), Optimizer::Adam);
    auto mha = layer_index(net, "mha"), first = layer_index(net, "first");
    CHECK(net.layers[mha].output_shape == Shape{16, 64});
    // nn.MultiheadAttention(64, 4): in_proj 3 e^2 + 3 e, out_proj e^2 + e.
    CHECK(net.layers[mha].parameters == 3 * 64 * 64 + 3 * 64 + 64 * 64 + 64);  // 16640
    CHECK(net.layers[mha].attrs.head_dim == 16);
    const double h = 4, hd = 16;
    const double qkv = 2 * b * s * e * (3 * e);
    const double scores = 2 * b * h * s * s * hd;
    const double pv = 2 * b * h * s * s * hd;
    const double out = 2 * b * s * e * e;
    const double fwd = qkv + scores + pv + out;  // 1,179,648
    CHECK(fwd == Approx(1179648.0));
    CHECK(matmul_flops(w, mha, kF) == Approx(fwd));
    CHECK(matmul_flops(w, mha, kB) == Approx(2 * fwd));
    // Without an input gradient the projections' dX GEMM is skipped.
    CHECK_FALSE(net.layers[first].needs_input_grad);
    CHECK(matmul_flops(w, first, kB) == Approx(2 * fwd - qkv));
    // Softmax over b h s s scores is memory-bound work on top.
    CHECK(fwd_flops(w, mha) > fwd);
    CHECK(w.layers[mha].bytes[0] >= 4.0 * 2 * b * h * s * s);
    // PreNeT CO: heads s^2 d per sample.
    CHECK(w.layers[mha].co == Approx(b * h * s * s * e));
  }
  SECTION("grouped-query: 8 query heads share 2 key/value heads") {
    Network net = net_of(R"J({"input": {"kind": "sequence", "seq_len": 16, "features": 64},
      "layers": [{"type": "layernorm", "name": "ln"},
                 {"type": "attention", "name": "gqa", "num_heads": 8, "num_kv_heads": 2}]})J");
    StepWork w = step_work(net, 2, KernelContext(Precision::FP32), Optimizer::Adam);
    auto gqa = layer_index(net, "gqa");
    const double h = 8, hd = 8, q = 64, kv = 2 * 8;
    // Q: e x q, K and V: e x kv each, output q x e, biases q + 2 kv + e.
    CHECK(net.layers[gqa].parameters == 64 * (64 + 2 * 16) + 64 * 64 + (64 + 2 * 16 + 64));  // 10400
    const double fwd = 2 * b * s * e * (q + 2 * kv) + 2 * (2 * b * h * s * s * hd) + 2 * b * s * q * e;  // 786,432
    CHECK(fwd == Approx(786432.0));
    CHECK(matmul_flops(w, gqa, kF) == Approx(fwd));
    CHECK(matmul_flops(w, gqa, kB) == Approx(2 * fwd));
  }
  SECTION("explicit head_dim and no bias") {
    Network net = net_of(R"J({"input": {"kind": "sequence", "seq_len": 16, "features": 64},
      "layers": [{"type": "attention", "name": "wide", "num_heads": 2, "head_dim": 48},
                 {"type": "attention", "name": "nobias", "num_heads": 4, "bias": false}]})J");
    CHECK(layer(net, "wide").output_shape == Shape{16, 64});
    CHECK(layer(net, "wide").parameters == 64 * (96 + 192) + 96 * 64 + (96 + 192 + 64));  // 24928
    CHECK(layer(net, "nobias").parameters == 4 * 64 * 64);
    StepWork w = step_work(net, 2, KernelContext(Precision::FP32), Optimizer::Adam);
    auto wide = layer_index(net, "wide");
    const double fwd = 2 * b * s * e * 288 + 2 * (2 * b * 2 * s * s * 48) + 2 * b * s * 96 * e;
    CHECK(matmul_flops(w, wide, kF) == Approx(fwd));
  }
  SECTION("errors") {
    testutil::require_model_error(R"J({"input": {"kind": "sequence", "seq_len": 4, "features": 64},
      "layers": [{"type": "attention", "num_heads": 8, "num_kv_heads": 3}]})J",
                                  "model.layers[0].num_kv_heads", "must divide num_heads");
    testutil::require_model_error(R"J({"input": {"kind": "sequence", "seq_len": 4, "features": 64},
      "layers": [{"type": "attention", "num_heads": 4, "num_kv_heads": 8}]})J",
                                  "model.layers[0].num_kv_heads", "expected an integer in [1, 4]");
    testutil::require_model_error(R"J({"input": {"kind": "sequence", "seq_len": 4, "features": 64},
      "layers": [{"type": "attention", "num_heads": 5}]})J",
                                  "model.layers[0].num_heads", "must divide the embedding width 64");
    testutil::require_model_error(R"J({"input": {"kind": "vector", "features": 64},
      "layers": [{"type": "attention", "num_heads": 4}]})J",
                                  "model.layers[0]", "attention expects [seq_len, embed_dim]");
  }
}

TEST_CASE("training.attention flash: one fused kernel per pass, no score traffic, half the work when causal",
          "[features][attention][flash]") {
  const double b = 2, s = 16, e = 64, h = 4, hd = 16;
  const Json model = Json::parse(R"J({"input": {"kind": "sequence", "seq_len": 16, "features": 64},
    "layers": [{"type": "layernorm", "name": "ln"},
               {"type": "attention", "name": "mha", "num_heads": 4, "causal": true},
               {"type": "attention", "name": "gqa", "num_heads": 4, "num_kv_heads": 2}]})J");
  TrainingConfig flash;
  flash.attention = AttentionKernel::Flash;
  const Network eager_net = resolve_model(model, TrainingConfig{}), flash_net = resolve_model(model, flash);
  const StepWork eager = step_work(eager_net, 2, KernelContext(Precision::FP32), Optimizer::Adam);
  const StepWork fused = step_work(flash_net, 2, kernel_context(flash), Optimizer::Adam);
  const auto mha = layer_index(flash_net, "mha"), gqa = layer_index(flash_net, "gqa");
  const double projections = 2 * b * s * e * (3 * e) + 2 * b * s * e * e;
  const double core = 4 * b * h * s * s * hd;  // QK^T and PV
  // Causal: the fused kernel skips the masked half; eager computes every score.
  CHECK(matmul_flops(eager, mha, kF) == Approx(projections + core));
  CHECK(matmul_flops(fused, mha, kF) == Approx(projections + core / 2));
  CHECK(matmul_flops(fused, mha, kB) == Approx(2 * projections + 2.5 * core / 2));
  CHECK(matmul_flops(fused, gqa, kF) == Approx(2 * b * s * e * (e + 2 * 32) + 2 * b * s * e * e + core));
  // One attention kernel per pass; its traffic is Q, K, V, O (+ FP32 row statistics), not b h s^2 scores.
  int kernels = 0;
  for (const Kernel& k : fused.kernels) {
    if (k.layer != static_cast<int>(gqa) || k.cls != KernelClass::BatchedGemm) continue;
    ++kernels;
    const double bh = b * h, bkv = b * 2;
    if (k.phase == kF) CHECK(k.bytes == Approx(4 * hd * (2 * bh * s + 2 * bkv * s) + 4 * bh * s));
    if (k.phase == kB) CHECK(k.bytes == Approx(4 * hd * (4 * bh * s + 4 * bkv * s) + 8 * bh * s));
  }
  CHECK(kernels == 2);
  CHECK(fused.layers[gqa].bytes[0] < eager.layers[gqa].bytes[0] - 4.0 * b * h * s * s);
  CHECK(kernel_count(fused, gqa, kF) < kernel_count(eager, gqa, kF));
  // Transformer-XL's relative scores have no fused kernel.
  const Json relative = Json::parse(R"J({"input": {"kind": "sequence", "seq_len": 16, "features": 64},
    "layers": [{"type": "attention", "name": "rel", "num_heads": 4, "relative_positions": true}]})J");
  testutil::require_input_error([&] { resolve_model(relative, flash); }, "training.attention",
                                "relative-position attention");
}

TEST_CASE("add, concat and cross_entropy", "[features][merge]") {
  Network net = net_of(R"J({"input": {"kind": "vector", "features": 8},
    "layers": [
      {"type": "dense", "name": "a", "units": 32},
      {"type": "dense", "name": "b", "units": 16, "inputs": ["input"]},
      {"type": "concat", "name": "cat", "inputs": ["a", "b"]},
      {"type": "dense", "name": "c", "units": 48, "inputs": ["input"]},
      {"type": "add", "name": "sum", "inputs": ["cat", "c", "cat"]},
      {"type": "cross_entropy", "name": "loss"}
    ]})J");
  StepWork w = step_work(net, 4, KernelContext(Precision::FP32), Optimizer::Adam);
  CHECK(layer(net, "cat").output_shape == Shape{48});
  CHECK(layer(net, "sum").output_shape == Shape{48});
  CHECK(layer(net, "loss").output_shape == Shape{});
  CHECK(layer(net, "cat").parameters == 0);
  CHECK(layer(net, "sum").parameters == 0);
  CHECK(layer(net, "loss").parameters == 0);
  CHECK(net.parameters() == (8 * 32 + 32) + (8 * 16 + 16) + (8 * 48 + 48));
  auto sum = layer_index(net, "sum");
  // Three inputs: two additions per output element, reading three tensors and writing one.
  CHECK(fwd_flops(w, sum) == Approx(2.0 * 4 * 48));
  CHECK(w.layers[sum].bytes[0] >= 4.0 * 4 * 48 * 4);
  auto loss = layer_index(net, "loss");
  CHECK(w.layers[loss].kernels >= 2);  // forward and backward of softmax + NLL
  CHECK(w.layers[loss].bytes[0] >= 4.0 * 4 * 48);

  Network images = net_of(R"J({"input": {"kind": "image", "channels": 3, "image_size": 8},
    "layers": [
      {"type": "conv2d", "name": "x", "filters": 16, "kernel_size": 3, "padding": "same"},
      {"type": "conv2d", "name": "y", "filters": 32, "kernel_size": 1, "inputs": ["input"]},
      {"type": "concat", "name": "channels", "axis": 0, "inputs": ["x", "y"]},
      {"type": "concat", "name": "width", "axis": -1, "inputs": ["x", "x"]}
    ]})J");
  CHECK(layer(images, "channels").output_shape == Shape{48, 8, 8});
  CHECK(layer(images, "width").output_shape == Shape{16, 8, 16});
}

TEST_CASE("the loss runs in FP32: casts around it under mixed precision, PyTorch's backward passes", "[features]") {
  Network net = net_of(R"J({"input": {"kind": "sequence", "seq_len": 16, "features": 32},
    "layers": [{"type": "dense", "name": "head", "units": 1000}, {"type": "cross_entropy", "name": "loss"}]})J");
  const auto loss = layer_index(net, "loss");
  const double logits = 4.0 * 16 * 1000;
  // FP32: log_softmax reads and writes (8 bytes per logit); backward zero-fills the log-probabilities'
  // gradient (4), then reads it and the saved output and writes the logits' gradient (12).
  StepWork fp32 = step_work(net, 4, KernelContext(Precision::FP32), Optimizer::Adam);
  CHECK(fp32.layers[loss].bytes[0] == Approx(8 * logits));
  CHECK(fp32.layers[loss].bytes[1] == Approx(16 * logits));
  CHECK(fp32.layers[loss].kernels == 3);
  // BF16: the same FP32 passes plus the cast up (2 + 4) and the gradient's cast down (4 + 2).
  StepWork bf16 = step_work(net, 4, KernelContext(Precision::BF16), Optimizer::Adam);
  CHECK(bf16.layers[loss].bytes[0] == Approx(14 * logits));
  CHECK(bf16.layers[loss].bytes[1] == Approx(22 * logits));
  CHECK(bf16.layers[loss].kernels == 5);
}

TEST_CASE("PyTorch's foreach optimizers pass over the states once per op", "[features][optimizer]") {
  // Fused: each state read and written once. Foreach (torch.optim's default on GPUs): AdamW's eight ops
  // move 80 bytes per FP32 parameter (training.cpp lists them), momentum SGD's three 32, plain SGD's one 12.
  CHECK(optimizer_bytes_per_parameter(Optimizer::AdamW) == 28);
  CHECK(optimizer_bytes_per_parameter(Optimizer::AdamW, OptimizerImpl::Foreach) == 80);
  CHECK(optimizer_bytes_per_parameter(Optimizer::Adam, OptimizerImpl::Foreach) == 72);
  CHECK(optimizer_bytes_per_parameter(Optimizer::Momentum, OptimizerImpl::Foreach) == 32);
  CHECK(optimizer_bytes_per_parameter(Optimizer::SGD, OptimizerImpl::Foreach) == 12);
  for (Optimizer o : {Optimizer::SGD, Optimizer::Momentum, Optimizer::Adam, Optimizer::AdamW, Optimizer::Adagrad,
                      Optimizer::Adadelta, Optimizer::RMSProp}) {
    CHECK(optimizer_bytes_per_parameter(o, OptimizerImpl::Foreach) >= optimizer_bytes_per_parameter(o));
  }
  Network net = net_of(R"J({"input": {"kind": "vector", "features": 64},
    "layers": [{"type": "dense", "name": "fc", "units": 32}]})J");
  StepWork fused = step_work(net, 8, KernelContext(Precision::FP32), Optimizer::AdamW);
  StepWork foreach_ = step_work(net, 8, KernelContext(Precision::FP32), Optimizer::AdamW, OptimizerImpl::Foreach);
  CHECK(foreach_.layers[0].bytes[2] == Approx(fused.layers[0].bytes[2] * 80.0 / 28.0));
  CHECK(foreach_.layers[0].bytes[0] == Approx(fused.layers[0].bytes[0]));  // forward and backward unchanged
}

TEST_CASE("optimizer traffic per parameter by optimizer and precision", "[features][optimizer]") {
  // 2080 + 64 + 33 = 2177 parameters in three layers.
  Network net = net_of(R"J({"input": {"kind": "vector", "features": 64},
    "layers": [{"type": "dense", "units": 32}, {"type": "layernorm"}, {"type": "dense", "units": 1},
               {"type": "activation", "function": "sigmoid"}]})J");
  REQUIRE(net.parameters() == 2177);
  const double p = 2177;
  struct Case {
    Optimizer opt;
    double bytes;
  };
  const std::vector<Case> cases = {{Optimizer::SGD, 12},     {Optimizer::Momentum, 20}, {Optimizer::Adam, 28},
                                   {Optimizer::AdamW, 28},   {Optimizer::Adagrad, 20},  {Optimizer::RMSProp, 20},
                                   {Optimizer::Adadelta, 28}};
  for (const auto& c : cases) {
    INFO(to_string(c.opt));
    CHECK(optimizer_bytes_per_parameter(c.opt) == c.bytes);
    StepWork fp32 = step_work(net, 16, KernelContext(Precision::FP32), c.opt);
    StepWork tf32 = step_work(net, 16, KernelContext(Precision::TF32), c.opt);
    CHECK(testutil::phase_bytes(fp32, kO) == Approx(p * c.bytes));
    CHECK(testutil::phase_bytes(tf32, kO) == Approx(p * c.bytes));
    // Mixed precision also reads the 16-bit gradient and writes the 16-bit weight copy: +4 bytes.
    // (FP8 also casts its FP8 linears' weights once per step in that phase: only the update kernels count here.)
    for (auto mixed : {Precision::FP16, Precision::BF16, Precision::FP8}) {
      INFO(to_string(mixed));
      StepWork w = step_work(net, 16, KernelContext(mixed), c.opt);
      double update_bytes = 0;
      for (const Kernel& k : w.kernels) update_bytes += k.cls == KernelClass::Optimizer ? k.bytes : 0;
      CHECK(update_bytes == Approx(p * (c.bytes + 4)));
    }
    CHECK(fp32.flops[2] == Approx(p * optimizer_flops_per_parameter(c.opt)));
    CHECK(fp32.flops[2] > 0);
    // One update kernel per layer that owns parameters.
    int updates = 0;
    for (const auto& k : fp32.kernels) updates += k.phase == kO ? 1 : 0;
    CHECK(updates == 3);
  }
  StepWork none = step_work(net, 16, KernelContext(Precision::FP32), Optimizer::None);
  CHECK(testutil::phase_bytes(none, kO) == 0);
  CHECK(none.flops[2] == 0);
  // The optimizer does not change forward or backward work.
  StepWork adam = step_work(net, 16, KernelContext(Precision::FP32), Optimizer::Adam);
  CHECK(none.flops[0] == Approx(adam.flops[0]));
  CHECK(none.flops[1] == Approx(adam.flops[1]));
}

TEST_CASE("step totals equal the sum of kernels and of layers", "[features]") {
  Network net = net_of(R"J({"input": {"kind": "image", "channels": 3, "image_size": 16},
    "layers": [{"type": "conv2d", "filters": 8, "kernel_size": 3, "activation": "relu"}, {"type": "batchnorm"},
               {"type": "max_pool2d"}, {"type": "flatten"}, {"type": "dense", "units": 10},
               {"type": "cross_entropy"}]})J");
  StepWork w = step_work(net, 8, KernelContext(Precision::FP16), Optimizer::Adam);
  for (int p = 0; p < 3; ++p) {
    double by_kernel = 0, by_layer = 0;
    for (const auto& k : w.kernels) by_kernel += k.phase == static_cast<Phase>(p) ? k.flops : 0;
    for (const auto& l : w.layers) by_layer += l.flops[static_cast<std::size_t>(p)];
    CHECK(w.flops[static_cast<std::size_t>(p)] == Approx(by_kernel));
    CHECK(w.flops[static_cast<std::size_t>(p)] == Approx(by_layer));
  }
  int kernels = 0;
  for (const auto& l : w.layers) kernels += l.kernels;
  CHECK(static_cast<std::size_t>(kernels) == w.kernels.size());
  for (const auto& k : w.kernels) {
    CHECK(k.flops >= 0);
    CHECK(k.bytes > 0);
    CHECK(k.layer >= 0);
    CHECK(static_cast<std::size_t>(k.layer) < net.layers.size());
  }
  // FLOPs scale linearly with the batch.
  StepWork w2 = step_work(net, 16, KernelContext(Precision::FP16), Optimizer::Adam);
  CHECK(w2.flops[0] == Approx(2 * w.flops[0]));
  CHECK(w2.flops[1] == Approx(2 * w.flops[1]));
  CHECK(w2.flops[2] == Approx(w.flops[2]));  // the update does not depend on the batch
}

TEST_CASE("memory: model states per parameter by precision and optimizer, and activations scale with batch", "[features][memory]") {
  Network net = net_of(R"J({"input": {"kind": "vector", "features": 1000},
    "layers": [{"type": "dense", "units": 1000}, {"type": "dense", "units": 1000}]})J");
  const double p = 2 * (1000 * 1000 + 1000);
  REQUIRE(net.parameters() == 2002000);
  auto states = [&](Precision precision, Optimizer opt) {
    MemoryEstimate m =
        estimate_memory(net, step_work(net, 8, KernelContext(precision), opt), trained_with(precision, opt));
    return (m.weights_gb + m.gradients_gb + m.optimizer_gb) * 1e9 / p;
  };
  // FP32: weights 4 + gradients 4 + 4 per optimizer state (momentum 1, Adam m and v).
  CHECK(states(Precision::FP32, Optimizer::Adam) == Approx(16));
  CHECK(states(Precision::FP32, Optimizer::AdamW) == Approx(16));
  CHECK(states(Precision::FP32, Optimizer::SGD) == Approx(8));
  CHECK(states(Precision::FP32, Optimizer::Momentum) == Approx(12));
  CHECK(states(Precision::FP32, Optimizer::RMSProp) == Approx(12));
  // Mixed precision: 16-bit weights + FP32 master (6), 16-bit gradients (2), FP32 states.
  CHECK(states(Precision::BF16, Optimizer::Adam) == Approx(16));
  CHECK(states(Precision::FP16, Optimizer::SGD) == Approx(8));

  MemoryEstimate m8 = estimate_memory(net, step_work(net, 8, KernelContext(Precision::FP32), Optimizer::Adam),
                                      trained_with(Precision::FP32, Optimizer::Adam));
  MemoryEstimate m16 = estimate_memory(net, step_work(net, 16, KernelContext(Precision::FP32), Optimizer::Adam),
                                       trained_with(Precision::FP32, Optimizer::Adam));
  MemoryEstimate h16 = estimate_memory(net, step_work(net, 16, KernelContext(Precision::BF16), Optimizer::Adam),
                                       trained_with(Precision::BF16, Optimizer::Adam));
  // Dense layers keep their inputs: 2 x batch x 1000 elements.
  CHECK(m8.activations_gb == Approx(4.0 * 2 * 8 * 1000 / 1e9));
  CHECK(m16.activations_gb == Approx(2 * m8.activations_gb));
  CHECK(h16.activations_gb == Approx(m16.activations_gb / 2));
  CHECK(m8.overhead_gb == kRuntimeOverheadGb);
  CHECK(m8.total_gb() == Approx(m8.weights_gb + m8.gradients_gb + m8.optimizer_gb + m8.activations_gb + kRuntimeOverheadGb));
}
