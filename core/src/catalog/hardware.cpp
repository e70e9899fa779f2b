#include "prenet/hardware.hpp"

#include "prenet/embedded_data.hpp"

namespace prenet {

HostSpec default_host() { return HostSpec{768, 409.6, 25, 8}; }

namespace {

/// The `host` object at `path`: catalogue records give every field; a custom accelerator's absent fields (or
/// an absent object) take default_host()'s.
HostSpec parse_host(const Json& record, const std::string& path, bool custom) {
  const std::string host_path = join(path, "host");
  HostSpec host = default_host();
  if (!record.contains("host") || record["host"].is_null()) {
    if (custom) return host;
    throw InputError(host_path, "required object is missing");
  }
  const Json& h = require_object(record["host"], host_path);
  reject_unknown_keys(h, host_path, {"memory_gb", "memory_bandwidth_gbs", "link_gbs", "gpus", "source"});
  if (custom) {
    host.memory_gb = get_number(h, "memory_gb", host_path, host.memory_gb, 0.001, 1e7);
    host.memory_bandwidth_gbs = get_number(h, "memory_bandwidth_gbs", host_path, host.memory_bandwidth_gbs, 0.001, 1e6);
    host.link_gbs = get_number(h, "link_gbs", host_path, host.link_gbs, 0.001, 1e6);
    host.gpus = get_int(h, "gpus", host_path, host.gpus, 1, 1 << 16);
  } else {
    host.memory_gb = require_number(h, "memory_gb", host_path, 0.001, 1e7);
    host.memory_bandwidth_gbs = require_number(h, "memory_bandwidth_gbs", host_path, 0.001, 1e6);
    host.link_gbs = require_number(h, "link_gbs", host_path, 0.001, 1e6);
    host.gpus = static_cast<std::int64_t>(require_number(h, "gpus", host_path, 1, 1 << 16));
  }
  return host;
}

/// Checks a catalogue record's fabric fields (docs/HARDWARE.md, "Fields"): the scale-up domain is a positive
/// integer no smaller than the node it is built of, in-network reduction a boolean, NICs per node a positive
/// integer. resolve_fabric reads them leniently; a typo in the catalogue must fail here, naming the field.
void check_fabric(const Json& record, const std::string& path) {
  if (record.contains("interconnect") && record["interconnect"].is_object()) {
    const Json& ic = record["interconnect"];
    const std::string ic_path = join(path, "interconnect");
    const std::int64_t node = get_int(ic, "gpus_per_node", ic_path, 1, 1, 1 << 20);
    const std::int64_t domain = get_int(ic, "domain_size", ic_path, node, 1, 1 << 20);
    if (domain < node) {
      throw InputError(join(ic_path, "domain_size"), "a scale-up domain of " + std::to_string(domain) +
                                                         " is smaller than the node's " + std::to_string(node) +
                                                         " (gpus_per_node)");
    }
    get_bool(ic, "in_network_reduction", ic_path, false);
  }
  if (record.contains("inter_node") && record["inter_node"].is_object()) {
    get_int(record["inter_node"], "nics_per_node", join(path, "inter_node"), 1, 1, 1 << 16);
  }
}

/// Reads a catalogue record's `fused_attention` (docs/HARDWARE.md, "Fields") into `acc`; absent: none measured.
void parse_fused_attention(const Json& record, const std::string& path, Accelerator& acc) {
  if (!record.contains("fused_attention") || record["fused_attention"].is_null()) return;
  const std::string fa_path = join(path, "fused_attention");
  const Json& fa = require_object(record["fused_attention"], fa_path);
  reject_unknown_keys(fa, fa_path, {"block_positions", "cudnn", "flash", "pytorch", "pytorch_source", "source"});
  acc.fused_attention_block = require_number(fa, "block_positions", fa_path, 1, 1 << 20);
  if (fa.contains("pytorch")) {
    const std::string sdpa = get_enum(fa, "pytorch", fa_path, "flash", {"cudnn", "flash"});
    acc.pytorch_attention = sdpa == "cudnn" ? FusedAttentionLibrary::Cudnn : FusedAttentionLibrary::Flash;
  }
  const std::pair<const char*, FusedAttentionLibrary> libraries[] = {{"cudnn", FusedAttentionLibrary::Cudnn},
                                                                     {"flash", FusedAttentionLibrary::Flash}};
  for (const auto& [name, library] : libraries) {
    if (!fa.contains(name)) continue;
    const std::string lib_path = join(fa_path, name);
    const Json& lib = require_object(fa[name], lib_path);
    reject_unknown_keys(lib, lib_path,
                        {"forward", "backward", "forward_overhead_ms", "backward_overhead_ms", "narrow_heads"});
    FusedAttentionTiming& t = acc.fused_attention[static_cast<int>(library)];
    t.forward = require_number(lib, "forward", lib_path, 1e-3, 1);
    t.backward = require_number(lib, "backward", lib_path, 1e-3, 1);
    t.forward_overhead_ms = require_number(lib, "forward_overhead_ms", lib_path, 0, 1e3);
    t.backward_overhead_ms = require_number(lib, "backward_overhead_ms", lib_path, 0, 1e3);
    if (lib.contains("narrow_heads")) {
      const std::string narrow_path = join(lib_path, "narrow_heads");
      const Json& narrow = require_object(lib["narrow_heads"], narrow_path);
      reject_unknown_keys(narrow, narrow_path, {"forward", "backward", "source"});
      t.narrow_forward = require_number(narrow, "forward", narrow_path, 0.05, 1);
      t.narrow_backward = require_number(narrow, "backward", narrow_path, 0.05, 1);
    }
  }
}

/// Reads a catalogue record's `delta_rule` (docs/HARDWARE.md, "Fields") into `acc`; absent: none measured.
void parse_delta_rule(const Json& record, const std::string& path, Accelerator& acc) {
  if (!record.contains("delta_rule") || record["delta_rule"].is_null()) return;
  const std::string dr_path = join(path, "delta_rule");
  const Json& dr = require_object(record["delta_rule"], dr_path);
  reject_unknown_keys(dr, dr_path, {"forward", "backward", "source"});
  auto direction = [&](const char* key, double& tflops, double& half) {
    const std::string d_path = join(dr_path, key);
    if (!dr.contains(key)) throw InputError(d_path, "required object is missing");
    const Json& d = require_object(dr[key], d_path);
    reject_unknown_keys(d, d_path, {"tflops", "half_heads"});
    tflops = require_number(d, "tflops", d_path, 1e-3, 1e6);
    half = require_number(d, "half_heads", d_path, 0, 1e4);
  };
  DeltaRuleTiming& t = acc.delta_rule;
  direction("forward", t.forward_tflops, t.forward_half_heads);
  direction("backward", t.backward_tflops, t.backward_half_heads);
}

/// Reads a catalogue record's `ssd` (docs/HARDWARE.md, "Fields") into `acc`; absent: none measured.
void parse_ssd(const Json& record, const std::string& path, Accelerator& acc) {
  if (!record.contains("ssd") || record["ssd"].is_null()) return;
  const std::string ssd_path = join(path, "ssd");
  const Json& ssd = require_object(record["ssd"], ssd_path);
  reject_unknown_keys(ssd, ssd_path, {"forward", "source"});
  const std::string f_path = join(ssd_path, "forward");
  if (!ssd.contains("forward")) throw InputError(f_path, "required object is missing");
  const Json& f = require_object(ssd["forward"], f_path);
  reject_unknown_keys(f, f_path, {"tflops", "overhead_ms"});
  acc.ssd.forward_tflops = require_number(f, "tflops", f_path, 1e-3, 1e6);
  acc.ssd.forward_overhead_ms = require_number(f, "overhead_ms", f_path, 0, 1e3);
}

/// Reads `achievable_tflops` (docs/HARDWARE.md, "Fields") into `acc`, its peaks read: each figure above 0 and at
/// most the dense peak of its precision; absent: none measured.
void parse_achievable(const Json& record, const std::string& path, Accelerator& acc) {
  if (!record.contains("achievable_tflops") || record["achievable_tflops"].is_null()) return;
  const std::string at_path = join(path, "achievable_tflops");
  const Json& at = require_object(record["achievable_tflops"], at_path);
  std::vector<std::string> keys = precision_names();
  keys.push_back("source");
  reject_unknown_keys(at, at_path, keys);
  for (const auto& name : precision_names()) {
    if (!at.contains(name) || at[name].is_null()) continue;
    const Precision p = precision_from_string(name);
    const auto peak = acc.peak(p);
    if (!peak) throw InputError(join(at_path, name), "the accelerator has no " + name + " peak to reach a share of");
    acc.achievable_tflops[static_cast<int>(p)] = require_number(at, name, at_path, 1e-6, *peak);
  }
}

}  // namespace

Accelerator parse_accelerator(const Json& record, const std::string& path, bool custom) {
  require_object(record, path);
  Accelerator acc;
  acc.custom = custom;
  if (custom) {
    reject_unknown_keys(record, path,
                        {"id", "name", "vendor", "peak_tflops", "memory_bandwidth_gbs", "memory_gb", "compute_units",
                         "l2_cache_mb", "price_per_hour_usd", "host", "achievable_tflops"});
    acc.name = get_string(record, "name", path, "Custom accelerator");
    acc.id = get_string(record, "id", path, "custom");
    acc.vendor = get_string(record, "vendor", path, "custom");
  } else {
    acc.id = require_string(record, "id", path);
    acc.name = require_string(record, "name", path);
    acc.vendor = require_string(record, "vendor", path);
  }
  acc.memory_gb = require_number(record, "memory_gb", path, 0.001, 1e6);
  acc.memory_bandwidth_gbs = require_number(record, "memory_bandwidth_gbs", path, 0.001, 1e7);
  acc.compute_units = get_number(record, "compute_units", path, 0, 0, 1e7);
  acc.l2_cache_mb = get_number(record, "l2_cache_mb", path, 0, 0, 1e6);
  if (record.contains("price_per_hour_usd") && !record["price_per_hour_usd"].is_null()) {
    acc.price_per_hour_usd = require_number(record, "price_per_hour_usd", path, 0, 1e6);
  }
  acc.host = parse_host(record, path, custom);
  if (!custom) check_fabric(record, path);
  if (!custom) parse_fused_attention(record, path, acc);
  if (!custom) parse_delta_rule(record, path, acc);
  if (!custom) parse_ssd(record, path, acc);
  std::string peaks_path = join(path, "peak_tflops");
  if (!record.contains("peak_tflops")) throw InputError(peaks_path, "required object is missing");
  const Json& peaks = require_object(record["peak_tflops"], peaks_path);
  std::vector<std::string> peak_keys = precision_names();
  peak_keys.push_back("fp4");  // NVFP4 GEMMs (training.fp8_recipe nvfp4), not a training precision
  reject_unknown_keys(peaks, peaks_path, peak_keys);
  for (const auto& name : precision_names()) {
    if (peaks.contains(name) && !peaks[name].is_null()) {
      acc.peak_tflops[static_cast<int>(precision_from_string(name))] =
          require_number(peaks, name, peaks_path, 1e-6, 1e7);
    }
  }
  if (peaks.contains("fp4") && !peaks["fp4"].is_null()) {
    acc.fp4_peak_tflops = require_number(peaks, "fp4", peaks_path, 1e-6, 1e7);
  }
  if (!acc.peak(Precision::FP32)) throw InputError(join(peaks_path, "fp32"), "required number is missing");
  parse_achievable(record, path, acc);
  acc.record = record;
  if (custom) {
    acc.record["id"] = acc.id;
    acc.record["name"] = acc.name;
    acc.record["custom"] = true;
  }
  return acc;
}

const std::vector<Accelerator>& hardware_catalogue() {
  static const std::vector<Accelerator> catalogue = [] {
    Json doc = Json::parse(embedded_hardware_json());
    std::vector<Accelerator> list;
    const Json& entries = doc.at("hardware");
    for (std::size_t i = 0; i < entries.size(); ++i) {
      list.push_back(parse_accelerator(entries[i], index("hardware.json:hardware", i), false));
    }
    return list;
  }();
  return catalogue;
}

const Accelerator* find_hardware(const std::string& id) {
  for (const auto& acc : hardware_catalogue()) {
    if (acc.id == id) return &acc;
  }
  return nullptr;
}

}  // namespace prenet
