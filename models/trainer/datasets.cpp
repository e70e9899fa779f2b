#include "trainer/datasets.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "prenet/error.hpp"
#include "prenet/layer_list.hpp"
#include "trainer/table.hpp"

namespace trainer {
namespace {

using prenet::Kernel;
using prenet::KernelClass;
using prenet::Phase;
using prenet::Precision;

Precision precision_of(const Table& t, std::size_t row) {
  const std::string& p = t.text(row, "precision");
  for (const auto& name : prenet::precision_names()) {
    if (p == name) return prenet::precision_from_string(p);
  }
  throw DataError(t.where(row, "precision") + ": unknown precision \"" + p + "\"");
}

/// Element size as the measured kernel stored its tensors (16-bit inputs for fp16/bf16 rows).
double element_bytes(Precision p) { return prenet::activation_bytes(p); }

Sample base_sample(const Table& t, std::size_t row) {
  Sample s;
  s.accelerator = &accelerator_for(t.text(row, "gpu"), t.where(row, "gpu"));
  s.precision = precision_of(t, row);
  s.time_ms = t.positive(row, "time_ms");
  s.source = t.text(row, "source");
  if (!s.accelerator->peak(s.precision)) {
    throw DataError(t.where(row, "precision") + ": " + prenet::to_string(s.precision) + " is not supported by " +
                    s.accelerator->id);
  }
  return s;
}

void gemm_rows(const Table& t, Dataset& gemm, Dataset& bmm) {
  for (std::size_t r = 0; r < t.rows(); ++r) {
    Sample s = base_sample(t, r);
    double batch = t.positive(r, "batch");
    Kernel k = prenet::gemm_kernel(Phase::Forward, t.positive(r, "m"), t.positive(r, "n"), t.positive(r, "k"), batch,
                                   element_bytes(s.precision));
    s.item = {k};
    // Batched products are their own class (the product's attention GEMMs); NeuSight and measure_gpu.py name them.
    bool batched = s.source == "neusight-bmm" || s.source == "prenet-bmm";
    Dataset& d = batched ? bmm : gemm;
    (calibration_only(s.source) ? d.calibration : d.samples).push_back(std::move(s));
  }
}

/// Vidur's profiled operators of a decoder block (`llm_ops`, forward, FP16) as calibration rows: the four
/// projections (QKV, output, up, down: F.linear) of the GEMM class and the residual add (PyTorch's) of the
/// elementwise class, in the forms their NeuSight rows take. No fitted row times a 16-bit kernel of those classes
/// on those GPUs, and fitting on them would move every 16-bit kernel of the shared networks; as levels they say how
/// fast those GPUs run them (models/README.md). Left out: the activation and RoPE rows, whose reads depend on the
/// model (gated or not, rotated share), and the norm, vLLM's own RMSNorm kernel, which levels the A100 and the A40
/// in opposite directions (+0.21, -0.33): a property of that kernel, not of the GPUs' PyTorch norms.
void llm_op_rows(const Table& t, Dataset& gemm, Dataset& elementwise) {
  static const std::set<std::string> gemms = {"attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj"};
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const std::string& op = t.text(r, "op");
    const bool is_gemm = gemms.count(op) > 0;
    // Phi-2's parallel block sums three tensors in its add (Vidur's model config; SOURCES.md).
    if (!is_gemm && (op != "add" || t.text(r, "model") == "microsoft/phi-2")) continue;
    Sample s = base_sample(t, r);
    const double rows = t.positive(r, "rows"), cols = t.positive(r, "cols"), e = element_bytes(s.precision);
    if (is_gemm) {
      s.item = {prenet::gemm_kernel(Phase::Forward, rows, cols, t.positive(r, "inner"), 1, e)};
      gemm.calibration.push_back(std::move(s));
    } else {
      s.item = {prenet::stream_kernel(KernelClass::Elementwise, Phase::Forward, rows * cols, 3, 1, e)};
      elementwise.calibration.push_back(std::move(s));
    }
  }
}

prenet::ConvPass conv_pass(const Table& t, std::size_t row) {
  const std::string& d = t.text(row, "direction");
  if (d == "fwd") return prenet::ConvPass::Forward;
  if (d == "bwd_data") return prenet::ConvPass::Data;
  if (d == "bwd_filter") return prenet::ConvPass::Filter;
  throw DataError(t.where(row, "direction") + ": unknown direction \"" + d + "\"");
}

void conv_rows(const Table& t, Dataset& conv) {
  for (std::size_t r = 0; r < t.rows(); ++r) {
    Sample s = base_sample(t, r);
    prenet::ConvShape c;
    c.batch = t.positive(r, "batch");
    c.c_in = t.positive(r, "c_in");
    c.c_out = t.positive(r, "c_out");
    c.kernel_h = t.positive(r, "kernel_h");
    c.kernel_w = t.positive(r, "kernel_w");
    c.in_h = t.positive(r, "in_h");
    c.in_w = t.positive(r, "in_w");
    c.stride = t.positive(r, "stride_h");
    double ph = t.number(r, "pad_h"), pw = t.number(r, "pad_w");
    c.out_h = std::floor((c.in_h + 2 * ph - c.kernel_h) / c.stride) + 1;
    c.out_w = std::floor((c.in_w + 2 * pw - c.kernel_w) / t.positive(r, "stride_w")) + 1;
    if (c.out_h < 1 || c.out_w < 1) throw DataError(t.where(r, "kernel_h") + ": kernel larger than the padded input");
    s.item = {prenet::conv_pass_kernel(conv_pass(t, r), c, element_bytes(s.precision))};
    conv.samples.push_back(std::move(s));
  }
}

/// Arithmetic per element of NeuSight's elementwise ops (same scale as core/src/layers/features.cpp).
double op_flops(const std::string& op) {
  if (op == "gelu") return 8;
  if (op == "tanh" || op == "pow" || op == "div") return 4;
  return 1;
}

void elementwise_rows(const Table& t, Dataset& elementwise) {
  for (std::size_t r = 0; r < t.rows(); ++r) {
    Sample s = base_sample(t, r);
    double n = t.positive(r, "elements"), inputs = t.positive(r, "inputs");
    s.item = {prenet::stream_kernel(KernelClass::Elementwise, Phase::Forward, n, inputs + 1, op_flops(t.text(r, "op")),
                                    element_bytes(s.precision))};
    elementwise.samples.push_back(std::move(s));
  }
}

void normalization_rows(const Table& t, Dataset& norm, Dataset& softmax) {
  for (std::size_t r = 0; r < t.rows(); ++r) {
    Sample s = base_sample(t, r);
    const std::string& op = t.text(r, "op");
    double n = t.positive(r, "rows") * t.positive(r, "cols");
    bool is_softmax = op == "softmax";
    if (!is_softmax && op != "layernorm") throw DataError(t.where(r, "op") + ": unknown op \"" + op + "\"");
    // Same passes and arithmetic as the core's layernorm and softmax forward kernels.
    s.item = {prenet::stream_kernel(is_softmax ? KernelClass::Softmax : KernelClass::Normalization, Phase::Forward, n,
                                    2, is_softmax ? 5 : 8, element_bytes(s.precision))};
    (is_softmax ? softmax : norm).samples.push_back(std::move(s));
  }
}

void recurrent_rows(const Table& t, Dataset& recurrent) {
  for (std::size_t r = 0; r < t.rows(); ++r) {
    Sample s = base_sample(t, r);
    const std::string& cell = t.text(r, "cell");
    double gates = cell == "lstm" ? 4 : cell == "gru" ? 3 : cell == "rnn" ? 1 : 0;
    if (gates == 0) throw DataError(t.where(r, "cell") + ": unknown cell \"" + cell + "\"");
    double h = t.positive(r, "hidden"), b = t.positive(r, "batch"), steps = t.positive(r, "steps");
    double e = element_bytes(s.precision);
    const std::string& direction = t.text(r, "direction");
    // As the core decomposes a recurrent layer (input size = hidden size here): forward = input projection
    // GEMM + dependent steps; data gradient = dependent steps + input-gradient GEMM; filter gradient = the
    // recurrent and input weight-gradient GEMMs over all steps.
    if (direction == "fwd") {
      s.item = {prenet::gemm_kernel(Phase::Forward, b * steps, gates * h, h, 1, e),
                prenet::recurrent_kernel(Phase::Forward, steps, b, gates * h, h, b * gates * h, e)};
    } else if (direction == "bwd_data") {
      s.item = {prenet::recurrent_kernel(Phase::Backward, steps, b, h, gates * h, b * gates * h, e),
                prenet::gemm_kernel(Phase::Backward, b * steps, h, gates * h, 1, e)};
    } else if (direction == "bwd_filter") {
      s.item = {prenet::gemm_kernel(Phase::Backward, gates * h, h, b * steps, 1, e),
                prenet::gemm_kernel(Phase::Backward, h, gates * h, b * steps, 1, e)};
    } else {
      throw DataError(t.where(r, "direction") + ": unknown direction \"" + direction + "\"");
    }
    recurrent.samples.push_back(std::move(s));
  }
}

prenet::Optimizer optimizer_of(const Table& t, std::size_t row) {
  const std::string& o = t.text(row, "optimizer");
  for (const auto& name : prenet::optimizer_names()) {
    if (o == name) return prenet::optimizer_from_string(o);
  }
  throw DataError(t.where(row, "optimizer") + ": unknown optimizer \"" + o + "\"");
}

/// The kernels of one layer's step as the core decomposes it: forward only without an optimizer.
std::vector<Kernel> layer_item(const prenet::Json& model, const Table& t, std::size_t row, std::int64_t batch,
                               Precision precision, prenet::Optimizer optimizer) {
  try {
    prenet::Network net = prenet::parse_layer_list(model, "row", {});
    prenet::StepWork work = prenet::step_work(net, batch, prenet::KernelContext(precision), optimizer);
    std::vector<Kernel> item;
    for (const Kernel& k : work.kernels) {
      if (optimizer != prenet::Optimizer::None || k.phase == Phase::Forward) item.push_back(k);
    }
    return item;
  } catch (const prenet::InputError& e) {
    throw DataError(t.where(row, "batch") + ": " + e.what());
  }
}

std::string activation_of(const Table& t, std::size_t row) {
  const std::string& a = t.text(row, "activation");
  if (a != "none" && a != "relu" && a != "tanh" && a != "sigmoid") {
    throw DataError(t.where(row, "activation") + ": unknown activation \"" + a + "\"");
  }
  return a;
}

void layer_dense_rows(const Table& t, Dataset& dense) {
  for (std::size_t r = 0; r < t.rows(); ++r) {
    Sample s = base_sample(t, r);
    auto batch = static_cast<std::int64_t>(t.positive(r, "batch"));
    prenet::Json model = {
        {"input", {{"kind", "vector"}, {"features", static_cast<std::int64_t>(t.positive(r, "d_in"))}}},
        {"layers",
         {{{"type", "dense"},
           {"units", static_cast<std::int64_t>(t.positive(r, "d_out"))},
           {"activation", activation_of(t, r)}}}}};
    s.item = layer_item(model, t, r, batch, s.precision, optimizer_of(t, r));
    dense.samples.push_back(std::move(s));
  }
}

void layer_conv_rows(const Table& t, Dataset& conv) {
  for (std::size_t r = 0; r < t.rows(); ++r) {
    Sample s = base_sample(t, r);
    auto batch = static_cast<std::int64_t>(t.positive(r, "batch"));
    prenet::Json layer = {{"type", "conv2d"},
                          {"filters", static_cast<std::int64_t>(t.positive(r, "c_out"))},
                          {"kernel_size", static_cast<std::int64_t>(t.positive(r, "kernel"))},
                          {"stride", static_cast<std::int64_t>(t.positive(r, "stride"))},
                          {"padding", t.text(r, "padding")},
                          {"bias", t.number(r, "bias") != 0},
                          {"activation", activation_of(t, r)}};
    prenet::Json model = {{"input",
                           {{"kind", "image"},
                            {"channels", static_cast<std::int64_t>(t.positive(r, "c_in"))},
                            {"image_size", static_cast<std::int64_t>(t.positive(r, "image_size"))}}},
                          {"layers", {layer}}};
    s.item = layer_item(model, t, r, batch, s.precision, optimizer_of(t, r));
    conv.samples.push_back(std::move(s));
  }
}

/// Keeps at most `cap` samples per accelerator, evenly spaced in table order (deterministic).
void cap_per_gpu(Dataset& d, std::size_t cap) {
  std::map<std::string, std::vector<std::size_t>> by_gpu;
  for (std::size_t i = 0; i < d.samples.size(); ++i) by_gpu[d.samples[i].accelerator->id].push_back(i);
  std::vector<bool> keep(d.samples.size(), false);
  for (const auto& [gpu, rows] : by_gpu) {
    double step = rows.size() > cap ? static_cast<double>(rows.size()) / static_cast<double>(cap) : 1.0;
    for (double x = 0; x < static_cast<double>(rows.size()); x += step) keep[rows[static_cast<std::size_t>(x)]] = true;
  }
  std::vector<Sample> kept;
  for (std::size_t i = 0; i < d.samples.size(); ++i) {
    if (keep[i]) kept.push_back(std::move(d.samples[i]));
  }
  d.samples = std::move(kept);
}

}  // namespace

bool calibration_only(const std::string& source) { return source == "xla-ptable-tf32"; }

std::vector<std::string> Dataset::gpus() const {
  std::set<std::string> ids;
  for (const auto& s : samples) ids.insert(s.accelerator->id);
  return {ids.begin(), ids.end()};
}

const prenet::Accelerator& accelerator_for(const std::string& id, const std::string& where) {
  const prenet::Accelerator* acc = prenet::find_hardware(id);
  if (!acc) throw DataError(where + ": accelerator \"" + id + "\" is not in core/data/hardware.json");
  return *acc;
}

std::vector<Dataset> load_datasets(const LoadOptions& options) {
  Dataset gemm{"gemm", "dense / linear GEMMs (NeuSight linear, DeepBench GEMM)", {}, {}};
  Dataset bmm{"bmm", "batched matrix multiplications (NeuSight bmm)", {}, {}};
  Dataset conv{"conv", "2-D convolutions, forward and backward (NeuSight conv, DeepBench conv)", {}, {}};
  Dataset elementwise{"elementwise", "elementwise ops (NeuSight add, mul, div, pow, relu, gelu, tanh)", {}, {}};
  Dataset norm{"normalization", "layer normalisation (NeuSight ln)", {}, {}};
  Dataset softmax{"softmax", "softmax (NeuSight softmax)", {}, {}};
  Dataset recurrent{"recurrent", "RNN / LSTM / GRU layers, forward and backward (DeepBench RNN)", {}, {}};
  Dataset layer_dense{"layer_dense", "whole dense layers, forward or full training step (Justus et al.)", {}, {}};
  Dataset layer_conv{"layer_conv", "whole conv layers, forward or full training step (Justus et al.)", {}, {}};

  const std::string dir = options.data_dir + "/";
  struct Source {
    const char* file;
    std::function<void(const Table&)> load;
  };
  std::vector<Source> sources = {
      {"gemm.csv.gz", [&](const Table& t) { gemm_rows(t, gemm, bmm); }},
      {"conv.csv.gz", [&](const Table& t) { conv_rows(t, conv); }},
      {"elementwise.csv.gz", [&](const Table& t) { elementwise_rows(t, elementwise); }},
      {"normalization.csv.gz", [&](const Table& t) { normalization_rows(t, norm, softmax); }},
      {"recurrent.csv.gz", [&](const Table& t) { recurrent_rows(t, recurrent); }},
      {"layers_dense.csv.gz", [&](const Table& t) { layer_dense_rows(t, layer_dense); }},
      {"layers_conv.csv.gz", [&](const Table& t) { layer_conv_rows(t, layer_conv); }},
      {"llm_ops.csv.gz", [&](const Table& t) { llm_op_rows(t, gemm, elementwise); }},
  };
  for (const auto& src : sources) src.load(Table::read(dir + src.file));

  std::vector<Dataset> all = {gemm, bmm, conv, elementwise, norm, softmax, recurrent, layer_dense, layer_conv};
  std::vector<Dataset> out;
  for (auto& d : all) {
    if (d.samples.empty()) continue;
    cap_per_gpu(d, options.max_rows_per_gpu);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace trainer
