#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "trainer/datasets.hpp"
#include "trainer/table.hpp"

using trainer::DataError;
using trainer::Table;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("CSV tables parse quoted fields and report ragged rows with their row number", "[trainer][table]") {
  Table t = Table::parse("a,b,c\n1,\"x, y\",3\n4,\"say \"\"hi\"\"\",6\n", "t.csv");
  REQUIRE(t.rows() == 2);
  CHECK(t.text(0, "b") == "x, y");
  CHECK(t.text(1, "b") == "say \"hi\"");
  CHECK(t.number(1, "c") == 6);
  CHECK(error_of([] { Table::parse("a,b,c\n1,2,3\n4,5\n", "bad.csv"); }) ==
        "bad.csv: row 3: expected 3 fields, found 2");
}

TEST_CASE("Cell errors name the file, the row and the column", "[trainer][table]") {
  Table t = Table::parse("gpu,m,time_ms\nt4,abc,1\nt4,5,-2\nt4,5,nan\n", "gemm.csv");
  CHECK(error_of([&] { t.number(0, "m"); }) == "gemm.csv: row 2, column m: expected a finite number, got \"abc\"");
  CHECK(error_of([&] { t.positive(1, "time_ms"); }) ==
        "gemm.csv: row 3, column time_ms: expected a positive number, got -2");
  CHECK(error_of([&] { t.number(2, "time_ms"); }).find("row 4, column time_ms") != std::string::npos);
  CHECK(error_of([&] { t.number(0, "k"); }) == "gemm.csv: missing column \"k\"");
}

TEST_CASE("Loading data rejects unknown accelerators and precisions, naming row and column", "[trainer][datasets]") {
  std::string dir = (std::filesystem::temp_directory_path() / "prenet-trainer-test-data").string();
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) { std::ofstream(dir + "/" + name) << text; };
  const std::string header = "source,gpu,precision,batch,m,n,k,trans_a,trans_b,time_ms\n";
  write("gemm.csv.gz",
        header + "neusight-linear,t4,fp32,1,64,64,64,0,1,0.02\nneusight-linear,gtx-9999,fp32,1,64,64,64,0,1,0.02\n");
  for (const char* other : {"conv.csv.gz", "elementwise.csv.gz", "normalization.csv.gz", "recurrent.csv.gz",
                            "layers_dense.csv.gz", "layers_conv.csv.gz", "llm_ops.csv.gz"}) {
    write(other, "source,gpu,precision,time_ms\n");
  }
  trainer::LoadOptions options;
  options.data_dir = dir;
  std::string message = error_of([&] { trainer::load_datasets(options); });
  CHECK(message.find("gemm.csv.gz: row 3, column gpu") != std::string::npos);
  CHECK(message.find("gtx-9999") != std::string::npos);

  write("gemm.csv.gz", header + "neusight-linear,k80,fp16,1,64,64,64,0,1,0.02\n");
  message = error_of([&] { trainer::load_datasets(options); });
  CHECK(message.find("row 2, column precision") != std::string::npos);
  CHECK(message.find("not supported by k80") != std::string::npos);

  write("gemm.csv.gz", header + "neusight-linear,t4,fp32,1,64,64,64,0,1,0.02\n" +
                           "xla-ptable-tf32,h100-sxm,tf32,1,4096,4096,4096,0,0,0.35\n");
  // Vidur's projections calibrate the GEMM class too, its residual adds (not phi-2's three-way sum) the
  // elementwise class; its norms, activations and RoPE calibrate nothing.
  write("llm_ops.csv.gz",
        "source,gpu,precision,model,op,num_tokens,tp,rows,cols,inner,time_ms\n"
        "vidur,a100-sxm4-80gb,fp16,meta-llama/llama-2-7b-hf,mlp_up_proj,2048,1,2048,22016,4096,1.5\n"
        "vidur,a100-sxm4-80gb,fp16,meta-llama/llama-2-7b-hf,input_layernorm,2048,1,2048,4096,0,0.03\n"
        "vidur,a100-sxm4-80gb,fp16,meta-llama/llama-2-7b-hf,add,2048,1,2048,4096,0,0.04\n"
        "vidur,a100-sxm4-80gb,fp16,microsoft/phi-2,add,2048,1,2048,2560,0,0.04\n");
  write("elementwise.csv.gz", "source,gpu,precision,op,elements,inputs,time_ms\nneusight,t4,fp32,add,4096,2,0.01\n");
  auto datasets = trainer::load_datasets(options);
  REQUIRE(datasets.size() == 2);
  REQUIRE(datasets[1].name == "elementwise");
  REQUIRE(datasets[1].calibration.size() == 1);
  CHECK(datasets[1].calibration[0].item.front().bytes == Approx(3.0 * 2 * 2048 * 4096));
  CHECK(datasets[0].name == "gemm");
  REQUIRE(datasets[0].samples.size() == 1);
  CHECK(datasets[0].samples[0].item.front().flops == Approx(2.0 * 64 * 64 * 64));
  // XLA's TF32 rows and Vidur's GEMMs only calibrate: kept beside the samples, never among them.
  REQUIRE(datasets[0].calibration.size() == 2);
  CHECK(datasets[0].calibration[0].accelerator->id == "h100-sxm");
  CHECK(datasets[0].calibration[1].accelerator->id == "a100-sxm4-80gb");
  CHECK(datasets[0].calibration[1].precision == prenet::Precision::FP16);
  CHECK(datasets[0].calibration[1].item.front().flops == Approx(2.0 * 2048 * 22016 * 4096));
  CHECK(datasets[0].gpus() == std::vector<std::string>{"t4"});
}
