// The product's FP8-over-16-bit GEMM ratio (low_precision_scale, docs/PREDICTION.md §6, "Low-precision GEMMs")
// against a measured one: XLA's B200 sweep timed every shape of {256, ..., 4096}^3 in BF16 and in FP8 (E4M3 x E4M3)
// on the same part (models/data/found/xla-b200-bf16-fp8-gemm.csv.gz; models/data/SOURCES.md). Nothing in the
// scale was fitted to these rows: it is the roofline ratio at the catalogue's achievable peaks.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "prenet/hardware.hpp"
#include "prenet/learned.hpp"
#include "trainer/table.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// An FP8 GEMM as layers/fp8.cpp prices one: operands one byte, the 16-bit result.
prenet::Kernel fp8_gemm(double m, double n, double k) {
  prenet::Kernel g;
  g.cls = prenet::KernelClass::Gemm;
  g.m = m;
  g.n = n;
  g.k = k;
  g.batch = 1;
  g.repeats = 1;
  g.flops = 2 * m * n * k;
  g.bytes = m * k + k * n + 2 * m * n;
  g.fp8 = true;
  return g;
}

}  // namespace

TEST_CASE("the FP8 GEMM scale follows the B200's measured FP8 speed-up over BF16 at every size", "[trainer][fp8]") {
  const trainer::Table t = trainer::Table::read(std::string(PRENET_FOUND_DIR) + "/xla-b200-bf16-fp8-gemm.csv.gz");
  std::map<std::tuple<double, double, double>, std::map<std::string, double>> times;  // (m, n, k) -> precision -> ms
  for (std::size_t r = 0; r < t.rows(); ++r) {
    if (t.number(r, "batch") != 1) continue;
    times[{t.number(r, "m"), t.number(r, "n"), t.number(r, "k")}][t.text(r, "precision")] = t.positive(r, "time_ms");
  }
  const prenet::Accelerator& b200 = *prenet::find_hardware("b200");
  // Per decade of FLOPs: the measured BF16 / FP8 time and the product's 1 / scale, each shape once.
  std::map<long, std::vector<double>> measured, predicted;
  for (const auto& [shape, by] : times) {
    if (!by.count("bf16") || !by.count("fp8")) continue;
    const auto [m, n, k] = shape;
    const long decade = std::lround(std::log10(2 * m * n * k));
    measured[decade].push_back(by.at("bf16") / by.at("fp8"));
    predicted[decade].push_back(1 / prenet::low_precision_scale(fp8_gemm(m, n, k), b200, prenet::Precision::FP8));
  }
  REQUIRE(measured.size() == 4);  // 10^8 to 10^11 FLOPs
  std::size_t shapes = 0;
  for (const auto& [decade, speedups] : measured) {
    shapes += speedups.size();
    const double seen = median(speedups), said = median(predicted[decade]);
    INFO("10^" << decade << " FLOPs, " << speedups.size() << " shapes: measured " << seen << "x, predicted " << said
               << "x");
    // Measured 1.04, 1.07, 1.28 and 1.75; the scale gives 1.03, 1.05, 1.35 and 1.68 (test -s prints them).
    CHECK(said == Approx(seen).epsilon(0.07));
  }
  CHECK(shapes == 125);  // every batch-1 shape has both precisions
}
