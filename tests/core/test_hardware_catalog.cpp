// The hardware catalogue (docs/HARDWARE.md): every record sourced and priced with its origin, dense peaks in
// a sensible order, the fabric fields (scale-up domain, in-network reduction, NICs per node) checked, and the
// 2025-2026 parts (NVL72 racks, Blackwell Ultra, MI355X, TPU7x...) timed by the core end to end.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/learned.hpp"
#include "prenet/parallel.hpp"

using namespace prenet;
using testutil::call;
using testutil::d;

namespace {

/// The 2025-2026 accelerators issue 18 adds.
const std::vector<std::string>& new_ids() {
  static const std::vector<std::string> ids = {"gb200",  "gb300",  "b300",     "h20",
                                               "h800",   "gh200",  "rtx-5090", "rtx-pro-6000-server",
                                               "mi325x", "mi355x", "tpu-v6e",  "tpu-v7"};
  return ids;
}

std::optional<double> peak_of(const Json& record, const char* precision) {
  const Json& p = record["peak_tflops"];
  if (!p.contains(precision) || p[precision].is_null()) return std::nullopt;
  return p[precision].get<double>();
}

}  // namespace

TEST_CASE("every catalogue record names its source, and its price's source when it has a price", "[catalog]") {
  for (const Accelerator& acc : hardware_catalogue()) {
    INFO(acc.id);
    REQUIRE(acc.record.contains("source"));
    CHECK(acc.record["source"].get<std::string>().size() > 10);
    REQUIRE(acc.record.contains("price_source"));
    if (acc.price_per_hour_usd) CHECK(acc.record["price_source"].get<std::string>().size() > 10);
  }
  for (const std::string& id : new_ids()) {
    INFO(id);
    CHECK(find_hardware(id) != nullptr);
  }
}

TEST_CASE("dense peaks are ordered: bf16 >= tf32 >= fp32 and fp8 >= bf16 where present", "[catalog]") {
  for (const Accelerator& acc : hardware_catalogue()) {
    INFO(acc.id);
    const double fp32 = *peak_of(acc.record, "fp32");
    auto tf32 = peak_of(acc.record, "tf32"), bf16 = peak_of(acc.record, "bf16"), fp8 = peak_of(acc.record, "fp8");
    if (tf32) CHECK(*tf32 >= fp32);
    if (bf16) CHECK(*bf16 >= (tf32 ? *tf32 : fp32));
    if (fp8 && bf16) CHECK(*fp8 >= *bf16);
  }
  // The NVIDIA data-centre datasheets print sparse tensor rates; the catalogue halves them. GB200's datasheet
  // column: FP8 10 PF, BF16 5 PF, TF32 2.5 PF sparse.
  const Json& gb200 = find_hardware("gb200")->record;
  CHECK(*peak_of(gb200, "fp8") == 10000.0 / 2);
  CHECK(*peak_of(gb200, "bf16") == 5000.0 / 2);
  CHECK(*peak_of(gb200, "tf32") == 2500.0 / 2);
}

TEST_CASE("the fabric fields: a scale-up domain no smaller than the node, switch reduction where NVSwitch has it",
          "[catalog]") {
  for (const Accelerator& acc : hardware_catalogue()) {
    INFO(acc.id);
    const Json& ic = acc.record["interconnect"];
    if (ic.contains("domain_size")) {
      REQUIRE(ic["domain_size"].is_number_integer());
      CHECK(ic["domain_size"].get<std::int64_t>() >= ic["gpus_per_node"].get<std::int64_t>());
    }
    if (ic.contains("in_network_reduction")) CHECK(ic["in_network_reduction"].is_boolean());
    const Json& net = acc.record["inter_node"];
    if (net.contains("nics_per_node")) CHECK(net["nics_per_node"].get<std::int64_t>() >= 1);
  }
  struct Expected {
    const char* id;
    std::int64_t node, domain;
    bool reduction;
  };
  // NVL72: trays of 4 on one 72-GPU NVLink domain; HGX/DGX boards of 8; NVLS on the third-generation NVSwitch
  // and later (H100 onwards), not on A100's; xGMI and ICI have no switch reduction.
  for (const Expected& e :
       {Expected{"gb200", 4, 72, true}, Expected{"gb300", 4, 72, true}, Expected{"b300", 8, 8, true},
        Expected{"b200", 8, 8, true}, Expected{"h100-sxm", 8, 8, true}, Expected{"h200", 8, 8, true},
        Expected{"a100-sxm4-80gb", 8, 8, false}, Expected{"mi300x", 8, 8, false}, Expected{"tpu-v5e", 8, 256, false},
        Expected{"tpu-v5p", 4, 6144, false}}) {
    INFO(e.id);
    const Accelerator& acc = *find_hardware(e.id);
    const Json& ic = acc.record["interconnect"];
    CHECK(ic["gpus_per_node"].get<std::int64_t>() == e.node);
    CHECK(ic["domain_size"].get<std::int64_t>() == e.domain);
    CHECK(ic["in_network_reduction"].get<bool>() == e.reduction);
    const Fabric f = resolve_fabric(acc, ParallelConfig{});
    CHECK(f.gpus_per_node == e.domain);
    CHECK(f.in_network_reduction == e.reduction);
  }
}

TEST_CASE("a malformed fabric field in a catalogue record is an error naming it", "[catalog]") {
  const Json base = find_hardware("gb200")->record;
  auto with = [&](const char* section, const char* key, const Json& value) {
    Json r = base;
    r[section][key] = value;
    return r;
  };
  auto parse = [](const Json& r) { return [r] { parse_accelerator(r, "hw", false); }; };
  using testutil::require_input_error;
  require_input_error(parse(with("interconnect", "domain_size", 0)), "hw.interconnect.domain_size", "");
  require_input_error(parse(with("interconnect", "domain_size", 2.5)), "hw.interconnect.domain_size", "");
  require_input_error(parse(with("interconnect", "domain_size", 2)), "hw.interconnect.domain_size",
                      "smaller than the node's 4");
  require_input_error(parse(with("interconnect", "in_network_reduction", "yes")),
                      "hw.interconnect.in_network_reduction", "true or false");
  require_input_error(parse(with("inter_node", "nics_per_node", 0)), "hw.inter_node.nics_per_node", "");
  CHECK_NOTHROW(parse_accelerator(base, "hw", false));
}

TEST_CASE("NVL72: a 72-GPU data-parallel all-reduce stays on NVLink and times as a ring over the domain", "[catalog]") {
  const double bytes = 4e9;  // large: the bandwidth term dominates
  for (const char* id : {"gb200", "gb300"}) {
    INFO(id);
    const Accelerator& acc = *find_hardware(id);
    ParallelConfig cfg;
    cfg.data = cfg.gpus = 72;
    const Fabric fabric = resolve_fabric(acc, cfg);
    const Communicator c = communicator(cfg, fabric, Group::Data);
    CHECK(c.size == 72);
    CHECK(c.domains == 1);
    // Independent ring (docs/PREDICTION.md, "Collectives"): 2(n-1)/n of the data through each GPU's NVLink at
    // its per-direction rate (half the catalogue's 1800 GB/s bidirectional) times NCCL's link efficiency,
    // NVLS's measured gain inside the domain, and min(2(n-1), 2 ceil(log2 n)) hops of the NVLink latency.
    const double n = 72, per_direction = 1800.0 / 2 * 1e9;
    const double bw = per_direction * kLinkEfficiency * kInNetworkReductionGain;
    const double hops = std::min(2 * (n - 1), 2 * std::ceil(std::log2(n)));
    const double expected = 2 * (n - 1) / n * bytes / bw * 1e3 + hops * 3e-3;
    CHECK(allreduce_ms(bytes, c, fabric) == Approx(expected).epsilon(1e-9));

    // Two racks (144 GPUs): the group spans two domains of 72 and leaves NVLink.
    cfg.data = cfg.gpus = 144;
    const Communicator two = communicator(cfg, resolve_fabric(acc, cfg), Group::Data);
    CHECK(two.domains == 2);
    CHECK(two.per_domain == 72);
  }
}

TEST_CASE("the core times the 2025-2026 parts: one GPU, and 144 GB200s in two NVL72 domains", "[catalog]") {
  for (const std::string& id : new_ids()) {
    INFO(id);
    Json r = {{"model", {{"preset", "llama-3.1-8b"}}},
              {"training", {{"batch_size", 8}, {"precision", "bf16"}}},
              {"hardware", {id}}};
    Json out = call(r);
    INFO(out.dump().substr(0, 400));
    REQUIRE(out.contains("results"));
    const double step = out["results"][0]["step_ms"].get<double>();
    CHECK(std::isfinite(step));
    CHECK(step > 0);
  }
  Json r = {{"model", {{"preset", "llama-3.1-8b"}}},
            {"training", {{"batch_size", 288}, {"precision", "bf16"}}},
            {"hardware", {"gb200"}},
            {"parallel", {{"gpus", 144}, {"tensor", 2}, {"zero_stage", 1}}}};
  Json out = call(r);
  INFO(out.dump().substr(0, 600));
  REQUIRE(out.contains("results"));
  const Json& res = out["results"][0];
  CHECK(std::isfinite(res["step_ms"].get<double>()));
  CHECK(res["parallel"]["links"]["gpus_per_node"] == 72);
}

TEST_CASE("the learned predictors take the 2025-2026 parts: finite features, and roofline outputs give the roofline",
          "[catalog]") {
  // b200 is the control: a measured-free part of the same class the learned path already served.
  std::vector<std::string> names = new_ids();
  names.push_back("b200");
  Json ids = Json::array();
  for (const std::string& id : names) ids.push_back(id);
  const Json request = {{"model", {{"preset", "gpt2"}}},
                        {"training", {{"batch_size", 8}, {"precision", "bf16"}}},
                        {"hardware", ids},
                        {"options", {{"per_layer", false}}}};
  const Json roofline = call(request);
  REQUIRE(roofline.contains("results"));
  const Json plan = Json::parse(learned_prepare(request.dump()));
  INFO(plan.dump().substr(0, 400));
  REQUIRE_FALSE(plan.contains("error"));
  const auto session = plan["session"].get<std::uint32_t>();
  std::vector<std::vector<float>> outputs;
  for (std::size_t c = 0; c < plan["classes"].size(); ++c) {
    const std::vector<float>& rows = learned_features(session, c);
    for (float v : rows) REQUIRE(std::isfinite(v));
    // The output meaning "the roofline time" (docs/PREDICTION.md §6): 0 for a ratio model, else the log of what a
    // per-op harness would measure for it (the harness floor the step takes out, added back in quadrature).
    const auto& cls = learned_manifest().classes.at(c);
    const std::vector<double>& ms = learned_roofline_ms(session, c);
    std::vector<float> y(ms.size());
    for (std::size_t r = 0; r < ms.size(); ++r) {
      y[r] = static_cast<float>(cls.predicts_ratio ? 0.0 : std::log(testutil::harness_measured_ms(ms[r], cls.dataset)));
    }
    outputs.push_back(y);
  }
  const Json learned = Json::parse(learned_finish(session, outputs));
  REQUIRE(learned.contains("results"));
  REQUIRE(learned["results"].size() == names.size());
  for (std::size_t h = 0; h < names.size(); ++h) {
    INFO(names[h]);
    const double step = learned["results"][h]["step_ms"].get<double>();
    CHECK(std::isfinite(step));
    // Each kernel is floored at its FLOPs at full peak plus its bytes at full bandwidth (learned.cpp), which
    // lifts a few tiny kernels of the fastest parts a little above their roofline time.
    CHECK(step == Approx(roofline["results"][h]["step_ms"].get<double>()).epsilon(0.01));
  }
}
