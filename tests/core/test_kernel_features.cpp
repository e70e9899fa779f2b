// The monotone feature set's audit, checked: as any dimension of one kernel grows, every feature marked
// "grows" never decreases and every other feature stays exactly the same. Together with a model that is
// non-decreasing in the growing features (mono_mlp), this is what keeps learned step times monotone.
#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "prenet/hardware.hpp"
#include "prenet/kernel_features.hpp"

using namespace prenet;

namespace {

/// Checks the audit between the features of `small` and of `large`, a grown copy of the same kernel.
void check_grows(const Kernel& small, const Kernel& large, const Accelerator& acc, Precision p,
                 const std::string& what) {
  const auto grows = size_monotone_features(FeatureSet::Monotone);
  const auto names = feature_names(FeatureSet::Monotone);
  const auto a = item_features({small}, acc, p, FeatureSet::Monotone);
  const auto b = item_features({large}, acc, p, FeatureSet::Monotone);
  REQUIRE(a.size() == grows.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(what << " on " << acc.id << ": " << names[i] << " " << a[i] << " -> " << b[i] << " diff " << (b[i] - a[i]));
    if (grows[i]) {
      CHECK(b[i] >= a[i]);
    } else {
      CHECK(b[i] == a[i]);
    }
  }
}

}  // namespace

TEST_CASE("monotone features: names and flags line up, and other sets have no flags", "[features][monotone]") {
  CHECK(size_monotone_features(FeatureSet::Monotone).size() == feature_names(FeatureSet::Monotone).size());
  CHECK(size_monotone_features(FeatureSet::Roofline).empty());
  CHECK(feature_set_from_string("monotone") == FeatureSet::Monotone);
  CHECK_THROWS(feature_set_from_string("nope"));
}

TEST_CASE("monotone features never fall, or stay fixed, as a kernel grows in any dimension", "[features][monotone]") {
  const std::vector<std::string> ids = {"a100-sxm4-80gb", "v100-sxm2-32gb", "t4", "h100-sxm", "mi250x"};
  std::vector<const Accelerator*> accs;
  for (const auto& id : ids) {
    if (const Accelerator* a = find_hardware(id)) accs.push_back(a);
  }
  REQUIRE(accs.size() >= 3);
  const std::vector<double> sizes = {1,   2,   3,   7,   16,  17,   63,   64,   65,  100,
                                     127, 128, 129, 255, 256, 1000, 1024, 4096, 5000};
  for (const Accelerator* acc : accs) {
    for (Precision p : {Precision::FP32, Precision::FP16}) {
      if (!acc->peak(p)) continue;
      const double e = p == Precision::FP32 ? 4 : 2;
      // GEMM / batched GEMM: grow m, n, k and the batch one at a time from a grid of shapes.
      for (double m : {1.0, 64.0, 1000.0}) {
        for (double n : {17.0, 128.0, 4096.0}) {
          for (double k : {3.0, 256.0, 5000.0}) {
            for (double batch : {1.0, 2.0, 48.0}) {
              Kernel base = gemm_kernel(Phase::Forward, m, n, k, batch, e);
              for (double s : sizes) {
                if (s <= m) continue;
                check_grows(base, gemm_kernel(Phase::Forward, s, n, k, batch, e), *acc, p, "gemm m");
              }
              for (double s : sizes) {
                if (s <= n) continue;
                check_grows(base, gemm_kernel(Phase::Forward, m, s, k, batch, e), *acc, p, "gemm n");
              }
              for (double s : sizes) {
                if (s <= k) continue;
                check_grows(base, gemm_kernel(Phase::Forward, m, n, s, batch, e), *acc, p, "gemm k");
              }
              if (batch > 1) {
                for (double s : {3.0, 64.0, 96.0}) {
                  if (s <= batch) continue;
                  check_grows(base, gemm_kernel(Phase::Forward, m, n, k, s, e), *acc, p, "bmm batch");
                }
              }
            }
          }
        }
      }
      // Convolutions: batch and image size, every pass.
      for (ConvPass pass : {ConvPass::Forward, ConvPass::Data, ConvPass::Filter}) {
        ConvShape c;
        c.c_in = 64, c.c_out = 128, c.kernel_h = c.kernel_w = 3, c.in_h = c.in_w = 28, c.out_h = c.out_w = 28;
        for (double b : {1.0, 2.0, 8.0, 32.0}) {
          ConvShape small = c, large = c;
          small.batch = b;
          large.batch = 2 * b + 1;
          check_grows(conv_pass_kernel(pass, small, e), conv_pass_kernel(pass, large, e), *acc, p, "conv batch");
          large = small;
          large.in_h = large.in_w = large.out_h = large.out_w = 57;
          check_grows(conv_pass_kernel(pass, small, e), conv_pass_kernel(pass, large, e), *acc, p, "conv image");
        }
      }
      // Memory-bound kernels and recurrent loops.
      for (double n : {1.0, 1000.0, 1e6}) {
        for (KernelClass cls : {KernelClass::Elementwise, KernelClass::Softmax, KernelClass::Normalization}) {
          check_grows(stream_kernel(cls, Phase::Forward, n, 2, 5, e),
                      stream_kernel(cls, Phase::Forward, 3 * n, 2, 5, e), *acc, p, "stream elements");
        }
        check_grows(recurrent_kernel(Phase::Forward, 10, n, 1024, 512, n * 256, e),
                    recurrent_kernel(Phase::Forward, 10, 2 * n, 1024, 512, 2 * n * 256, e), *acc, p, "rnn batch");
        check_grows(recurrent_kernel(Phase::Forward, 10, n, 1024, 512, n * 256, e),
                    recurrent_kernel(Phase::Forward, 35, n, 1024, 512, n * 256, e), *acc, p, "rnn steps");
      }
    }
  }
}
