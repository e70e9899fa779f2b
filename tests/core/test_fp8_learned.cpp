// FP8 and FP4 GEMMs on the learned path (docs/PREDICTION.md §6, "Low-precision GEMMs"): no learned model saw such a
// kernel, so each is timed as its 16-bit twin's row scaled by the two precisions' roofline ratio at the part's
// measured achievable matrix peaks. Expected numbers come from the catalogue's figures, written out here.
#include <catch2/catch.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/catalog.hpp"
#include "prenet/features.hpp"
#include "prenet/hardware.hpp"
#include "prenet/learned.hpp"

using namespace prenet;

namespace {

// One block of large linears (4096 -> 14336 -> 4096 over 4096 tokens a sequence) under a vocabulary head.
const char* const kModel = R"({"input": {"kind": "sequence", "seq_len": 4096, "features": 4096},
  "layers": [{"type": "dense", "name": "blk.0.up", "units": 14336, "bias": false},
             {"type": "dense", "name": "blk.0.down", "units": 4096, "bias": false},
             {"type": "dense", "name": "head", "units": 32000, "bias": false},
             {"type": "cross_entropy", "name": "loss"}]})";

KernelContext context(Precision p, Fp8Recipe recipe = Fp8Recipe::Current) {
  KernelContext c(p);
  c.fp8_recipe = recipe;
  return c;
}

const Accelerator& hw(const std::string& id) {
  const Accelerator* acc = find_hardware(id);
  REQUIRE(acc != nullptr);
  return *acc;
}

/// The feature row a kernel's (class, row) reference names.
std::vector<float> row_features(const LearnedBatch& b, std::pair<int, std::size_t> ref) {
  const auto cls = static_cast<std::size_t>(ref.first);
  const std::size_t width = b.features[cls].size() / b.rows(cls);
  const auto first = b.features[cls].begin() + static_cast<std::ptrdiff_t>(ref.second * width);
  return {first, first + static_cast<std::ptrdiff_t>(width)};
}

}  // namespace

TEST_CASE("an FP8 GEMM is its 16-bit twin's learned row, scaled by the achievable-peak ratio", "[learned][fp8]") {
  const Network net = testutil::net_of(kModel);
  const StepWork fp8 = step_work(net, 2, context(Precision::FP8), Optimizer::AdamW);
  const StepWork bf16 = step_work(net, 2, context(Precision::BF16), Optimizer::AdamW);
  REQUIRE(learned_class_for(KernelClass::Gemm) >= 0);
  // B200: achievable 3432.5 FP8 and 1745.0 BF16 TFLOP/s measured; GB300: none, so its dense peaks 5000 and 2500.
  const std::vector<Accelerator> parts = {hw("b200"), hw("gb300")};
  const LearnedBatch low = learned_batch(fp8, parts, Precision::FP8);
  const LearnedBatch sixteen = learned_batch(bf16, parts, Precision::BF16);
  const double large_ratio[] = {1745.0 / 3432.5, 2500.0 / 5000.0};
  // The GEMMs of both steps come in the same order (the FP8 step adds only elementwise casts).
  std::vector<std::size_t> low_gemms, sixteen_gemms;
  for (std::size_t i = 0; i < fp8.kernels.size(); ++i) {
    if (is_matmul(fp8.kernels[i].cls)) low_gemms.push_back(i);
  }
  for (std::size_t i = 0; i < bf16.kernels.size(); ++i) {
    if (is_matmul(bf16.kernels[i].cls)) sixteen_gemms.push_back(i);
  }
  REQUIRE(low_gemms.size() == sixteen_gemms.size());
  int checked = 0;
  for (std::size_t h = 0; h < parts.size(); ++h) {
    for (std::size_t g = 0; g < low_gemms.size(); ++g) {
      const std::size_t i = low_gemms[g], j = sixteen_gemms[g];
      const Kernel& k = fp8.kernels[i];
      REQUIRE(k.m == bf16.kernels[j].m);
      REQUIRE(k.k == bf16.kernels[j].k);
      if (!k.fp8) {
        CHECK(low.precision_scale[h][i] == 1.0);  // the head stays a 16-bit GEMM
        continue;
      }
      ++checked;
      // The same learned row as the BF16 step's GEMM: same features, same class.
      CHECK(low.kernel_rows[h][i].first == sixteen.kernel_rows[h][j].first);
      CHECK(row_features(low, low.kernel_rows[h][i]) == row_features(sixteen, sixteen.kernel_rows[h][j]));
      // Products of 2.4-4.8·10^11 multiply-adds: compute-bound, so the ratio of the two matrix rates, less a
      // little for the launch (5 us of a 0.1-0.3 ms FP8 kernel) and the 16-bit result both write.
      CHECK(low.precision_scale[h][i] > large_ratio[h]);
      CHECK(low.precision_scale[h][i] < large_ratio[h] * 1.06);
    }
  }
  CHECK(checked == 2 * 5);  // up: forward and weight gradient; down: all three; on each part
  // Every other kernel keeps its own time.
  for (std::size_t i = 0; i < fp8.kernels.size(); ++i) {
    if (!fp8.kernels[i].fp8) CHECK(low.precision_scale[0][i] == 1.0);
  }
}

TEST_CASE("a tiny FP8 GEMM gains little over its twin: the launch dominates both", "[learned][fp8]") {
  const Network net = testutil::net_of(R"({"input": {"kind": "sequence", "seq_len": 16, "features": 64},
    "layers": [{"type": "dense", "name": "blk.0.up", "units": 64, "bias": false},
               {"type": "dense", "name": "head", "units": 64, "bias": false},
               {"type": "cross_entropy", "name": "loss"}]})");
  const StepWork fp8 = step_work(net, 1, context(Precision::FP8), Optimizer::AdamW);
  const LearnedBatch low = learned_batch(fp8, {hw("b200")}, Precision::FP8);
  int checked = 0;
  for (std::size_t i = 0; i < fp8.kernels.size(); ++i) {
    if (!fp8.kernels[i].fp8) continue;
    ++checked;
    CHECK(low.precision_scale[0][i] > 0.99);
    CHECK(low.precision_scale[0][i] <= 1.0);
  }
  CHECK(checked > 0);
}

TEST_CASE("an NVFP4 GEMM's twin is scaled to the FP4 peak at the FP8 share of it", "[learned][fp8]") {
  const Network net = testutil::net_of(kModel);
  const StepWork fp4 = step_work(net, 2, context(Precision::FP8, Fp8Recipe::NVFP4), Optimizer::AdamW);
  // B200: FP4 dense peak 9000 at the FP8 share 3432.5 / 4500 against BF16's 1745.
  const LearnedBatch low = learned_batch(fp4, {hw("b200")}, Precision::FP8);
  const double large_ratio = 1745.0 / (9000.0 * 3432.5 / 4500.0);
  int checked = 0;
  for (std::size_t i = 0; i < fp4.kernels.size(); ++i) {
    const Kernel& k = fp4.kernels[i];
    if (!k.fp4) continue;
    ++checked;
    CHECK(low.precision_scale[0][i] > large_ratio);
    CHECK(low.precision_scale[0][i] < large_ratio * 1.15);
  }
  CHECK(checked == 5);
}
