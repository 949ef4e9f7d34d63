#include "src/io/cluster_loader.h"

#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <vector>

#include "cost/power_cap.h"
#include "src/io/batch_limits_block.h"
#include "src/io/calibration_block.h"
#include "src/io/data_paths.h"
#include "src/io/input_error.h"
#include "src/io/yaml_fields.h"

namespace parplan {

namespace {
constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;
constexpr double kGibi = 1024.0 * 1024.0 * 1024.0;
constexpr double kMicro = 1e-6;
// Upper bounds far beyond any device (so that scaled values stay finite and
// a typo such as 1e308 is refused rather than planned with).
constexpr double kMaxTflops = 1e6;
constexpr double kMaxGib = 1e6;
constexpr double kMaxGbPerS = 1e6;
// 100 kB/s, below any interconnect or WAN link a job would train over: a
// bandwidth of 1e-300 GB/s gave step times of 1e254 s instead of an error.
constexpr double kMinGbPerS = 1e-4;

// Each deprecated key once per process (a command loads a profile more than once).
bool first_deprecation_of(const std::string& where) {
  static std::mutex mutex;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> lock(mutex);
  return seen.insert(where).second;
}

// A unit-named key, or the old key it replaces (read in the old unit, with a
// deprecation line on stderr naming the new key and its unit).
double renamed_number(const YamlFields& f, const char* key, const char* old_key, double old_to_new,
                      double low, double high, double fallback) {
  if (f.has(key) && f.has(old_key))
    f.fail(old_key, std::string("is the old name of '") + key + "'; give only '" + key + "'");
  if (!f.has(old_key)) return f.number_in(key, low, high, fallback);
  if (first_deprecation_of(f.where() + old_key))
    std::cerr << "parplan: warning: " << f.where() << ": field '" << f.full(old_key)
              << "' is deprecated; write '" << f.full(key) << "' (" << old_to_new << " x the old value)\n";
  const double old_value = f.number_in(old_key, low / old_to_new, high / old_to_new, fallback / old_to_new);
  return old_value * old_to_new;
}

double required_renamed(const YamlFields& f, const char* key, const char* old_key, double old_to_new,
                        double high) {
  if (!f.has(key) && !f.has(old_key)) f.fail(key, "is missing; add it");
  const double value = renamed_number(f, key, old_key, old_to_new, 0.0, high, 0.0);
  if (value <= 0) f.fail(f.has(key) ? key : old_key, "must be positive");
  return value;
}

/// required_renamed with a floor: a positive value below `low` (a unit slip,
/// 1e-300) made times of 1e254 s instead of an error.
double required_at_least(const YamlFields& f, const char* key, const char* old_key, double old_to_new,
                         double low, double high, const char* unit) {
  if (!f.has(key) && !f.has(old_key))
    f.fail(key, "is missing; add it in " + std::string(unit).substr(0, std::string(unit).find(';')) +
                    " (docs/hardware-profiles.md)");
  const double value = required_renamed(f, key, old_key, old_to_new, high);
  if (value < low) {
    std::ostringstream text;
    text << "must be at least " << low << " (" << unit << "); check the unit";
    f.fail(f.has(key) ? key : old_key, text.str());
  }
  return value;
}

double link_bandwidth_gb_per_s(const YamlFields& f) {
  return required_at_least(f, "bandwidth_gb_per_s", "bandwidth_gbps", 1.0, kMinGbPerS, kMaxGbPerS,
                           "GB/s; 100 kB/s is slower than any link a job trains over");
}

NetworkTier read_tier(const YamlFields& f, bool needs_ranks) {
  f.allow_only(
      {"name", "ranks", "bandwidth_gb_per_s", "bandwidth_gbps", "latency_us", "efficiency", "nic", "source"});
  NetworkTier tier;
  tier.name = f.text("name", "tier");
  tier.ranks = needs_ranks ? f.positive_int("ranks") : f.non_negative_int("ranks", 0);
  tier.bandwidth_bytes_per_s = link_bandwidth_gb_per_s(f) * kGiga;
  tier.latency_s = f.number_in("latency_us", 0, 1e6, 5.0) * kMicro;
  tier.efficiency = f.number_in("efficiency", 0.01, 1.0, 1.0);
  tier.nic = parse_nic(f.text("nic", "intra-node"), f.where() + ": field '" + f.full("nic") + "'");
  return tier;
}

// A part run at a lower board power limit than the chip its peaks and
// efficiencies come from: its tensor-core kernels run at the lower clock the
// measured power curve gives (cost/power_cap.h), so every compute peak scales
// by that clock ratio; memory-bound kernels (HBM bandwidth) do not.
void read_power_limit(const YamlFields& f, DeviceSpec& d) {
  const std::string curve = f.text("power_curve", "none");
  if (curve == "none") {
    if (f.has("power_limit_w"))
      f.fail("power_limit_w", "needs power_curve: h100-sxm5 (the chip whose measured power curve applies)");
    return;
  }
  if (curve != "h100-sxm5")
    f.fail("power_curve", "is '" + curve + "'; use h100-sxm5 (an H100 SXM5 at a lower power limit) or none");
  const PowerCurve& c = kH100Sxm5PowerCurve;
  if (!f.has("power_limit_w"))
    f.fail("power_limit_w", "is missing; power_curve needs the part's board power limit in W (200 to 700)");
  d.h100_power_curve = true;
  d = with_power_limit(d, c,
                       f.number_in("power_limit_w", c.min_limit_w, c.reference_limit_w, c.reference_limit_w));
}

DeviceSpec read_device(const YamlFields& f) {
  f.allow_only({"name",
                "peak_bf16_tflops",
                "peak_fp16_tflops",
                "peak_fp8_tflops",
                "hbm_gib",
                "hbm_usable_gib",
                "hbm_gb",
                "hbm_tb_per_s",
                "hbm_tbps",
                "gemm_efficiency_max",
                "gemm_half_dim",
                "gemm_half_gflop",
                "fp8_gemm_ratio_max",
                "fp8_gemm_half_dim",
                "fp8_gemm_bf16_half_dim",
                "flash_attention_efficiency",
                "memory_bound_efficiency",
                "reserved_gib",
                "reserved_gb",
                "allocator_headroom",
                "overlap_compute_slowdown",
                "layer_overhead_us",
                "kernel_floor_us",
                "attention_half_seq",
                "kernel_figures",
                "peak_uncertainty_percent",
                "power_curve",
                "power_limit_w",
                "source"});
  DeviceSpec d;
  d.name = f.text("name");
  d.peak_bf16_flops_per_s = f.number_in("peak_bf16_tflops", 1e-6, kMaxTflops, 0.0) * kTera;
  if (d.peak_bf16_flops_per_s <= 0)
    f.fail("peak_bf16_tflops", "is missing; add the dense bf16 peak in TFLOP/s");
  d.peak_fp16_flops_per_s =
      f.number_in("peak_fp16_tflops", 1e-6, kMaxTflops, d.peak_bf16_flops_per_s / kTera) * kTera;
  // Absent: the device has no fp8 tensor cores, and fp8 jobs are refused.
  d.peak_fp8_flops_per_s = f.number_in("peak_fp8_tflops", 1e-6, kMaxTflops, 0.0) * kTera;
  // Capacity in GiB (2^30 bytes): an "80 GB" A100/H100 has 80 GiB. The old
  // key hbm_gb was read as 10^9 bytes and stays so, with a warning.
  d.hbm_bytes = required_at_least(f, "hbm_gib", "hbm_gb", kGiga / kGibi, 0.01, kMaxGib, "GiB") * kGibi;
  d.hbm_usable_bytes = f.number_in("hbm_usable_gib", 1e-6, d.hbm_bytes / kGibi, d.hbm_bytes / kGibi) * kGibi;
  d.hbm_bytes_per_s = required_at_least(f, "hbm_tb_per_s", "hbm_tbps", 1.0, 1e-3, 1e3, "TB/s") * kTera;
  d.gemm_efficiency_max = f.number_in("gemm_efficiency_max", 0.05, 1.0, d.gemm_efficiency_max);
  d.gemm_half_dim = f.number_in("gemm_half_dim", 0.0, 1e5, d.gemm_half_dim);
  d.gemm_half_flops = f.number_in("gemm_half_gflop", 0.0, 1e9, 0.0) * kGiga;
  d.fp8_gemm_ratio_max = f.number_in("fp8_gemm_ratio_max", 0.0, 2.0, 0.0);
  d.fp8_gemm_half_dim = f.number_in("fp8_gemm_half_dim", 0.0, 1e5, 0.0);
  d.fp8_gemm_bf16_half_dim = f.number_in("fp8_gemm_bf16_half_dim", 0.0, 1e5, 0.0);
  d.flash_attention_efficiency =
      f.number_in("flash_attention_efficiency", 0.05, 1.0, d.flash_attention_efficiency);
  d.memory_bound_efficiency = f.number_in("memory_bound_efficiency", 0.05, 1.0, d.memory_bound_efficiency);
  d.reserved_bytes =
      renamed_number(f, "reserved_gib", "reserved_gb", kGiga / kGibi, 0.0, kMaxGib, 0.0) * kGibi;
  d.allocator_headroom_fraction = f.number_in("allocator_headroom", 0.0, 1.0, 0.0);
  d.overlap_compute_slowdown = f.number_in("overlap_compute_slowdown", 0.0, 1.0, d.overlap_compute_slowdown);
  d.layer_overhead_s = f.number_in("layer_overhead_us", 0.0, 1e6, 0.0) * kMicro;
  d.kernel_floor_s = f.number_in("kernel_floor_us", 0.0, 1e3, 0.0) * kMicro;
  d.attention_half_seq = f.number_in("attention_half_seq", 0.0, 1e7, 0.0);
  // The only published per-kernel attention figures parplan holds were
  // measured on the H100 SXM5 (cost/attention_kernels.cpp).
  const std::string figures = f.text("kernel_figures", "none");
  if (figures == "h100-sxm5")
    d.h100_kernel_figures = true;
  else if (figures != "none")
    f.fail("kernel_figures", "is '" + figures + "'; use h100-sxm5 (an H100 at another clock) or none");
  d.peak_uncertainty = f.number_in("peak_uncertainty_percent", 0.0, 50.0, 0.0) / 100.0;
  read_power_limit(f, d);
  return d;
}
}  // namespace

// A command loads a profile more than once: its warnings once per file.
bool first_load_of(const std::string& path) {
  static std::mutex mutex;
  static std::set<std::string> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  return loaded.insert(path).second;
}

// The constants a profile should state: without them the loader's defaults
// (full link efficiency, no runtime memory, an upper GEMM efficiency) make
// every plan look faster and lighter than it runs.
void warn_defaulted_constants(const YAML::Node& root, const std::string& path) {
  std::vector<std::string> missing;
  const YAML::Node device = root["device"];
  for (const char* key : {"gemm_efficiency_max", "memory_bound_efficiency", "flash_attention_efficiency",
                          "reserved_gib", "allocator_headroom", "hbm_usable_gib"})
    if (!device[key] && !(std::string(key) == "reserved_gib" && device["reserved_gb"]))
      missing.push_back(std::string("device.") + key);
  if (device["peak_fp8_tflops"] && !device["fp8_gemm_ratio_max"])
    missing.push_back("device.fp8_gemm_ratio_max");
  const auto links = [&](const YAML::Node& list, const std::string& name) {
    if (!list || !list.IsSequence()) return;
    for (std::size_t i = 0; i < list.size(); ++i)
      for (const char* key : {"efficiency", "latency_us"})
        if (!list[i][key]) missing.push_back(name + "[" + std::to_string(i) + "]." + key);
  };
  links(root["tiers"], "tiers");
  links(root["groups"], "groups");
  if (root["inter_group"])
    for (const char* key : {"efficiency", "latency_us", "nic"})
      if (!root["inter_group"][key]) missing.push_back(std::string("inter_group.") + key);
  if (missing.empty()) return;
  std::string keys;
  for (const auto& k : missing) keys += (keys.empty() ? "" : ", ") + k;
  std::cerr << "parplan: warning: " << path << ": " << keys
            << " not given: the defaults docs/hardware-profiles.md lists are assumed (optimistic: full link "
               "efficiency, no runtime memory); copy them from the closest shipped profile or fit them with "
               "parplan calibrate\n";
}

// A tier outside another with more bandwidth per GPU is most often a Gb/s
// figure written where GB/s per GPU is meant.
void warn_faster_outer_tier(const ClusterSpec& c, const std::string& path) {
  for (std::size_t i = 1; i < c.tiers.size(); ++i)
    if (c.tiers[i].bandwidth_bytes_per_s > c.tiers[i - 1].bandwidth_bytes_per_s) {
      std::cerr << "parplan: warning: " << path << ": tiers[" << i << "] (" << c.tiers[i].name << ", "
                << c.tiers[i].bandwidth_bytes_per_s / kGiga << " GB/s) is faster per GPU than tiers[" << i - 1
                << "] (" << c.tiers[i - 1].name << ", " << c.tiers[i - 1].bandwidth_bytes_per_s / kGiga
                << " GB/s); bandwidth_gb_per_s is gigabytes per second per GPU (a 200 Gb/s NIC shared by 8 "
                   "GPUs is 3.125)\n";
      return;
    }
}

NicKind parse_nic(const std::string& text, const std::string& where) {
  if (text == "intra-node") return NicKind::kIntraNode;
  if (text == "ib" || text == "infiniband") return NicKind::kInfiniBand;
  if (text == "roce") return NicKind::kRoce;
  if (text == "ethernet") return NicKind::kEthernet;
  if (text == "slingshot") return NicKind::kSlingshot;
  throw InputError(where + " must be one of intra-node, ib, roce, ethernet, slingshot (got '" + text + "')");
}

const char* nic_name(NicKind nic) {
  switch (nic) {
    case NicKind::kIntraNode:
      return "intra-node";
    case NicKind::kInfiniBand:
      return "ib";
    case NicKind::kRoce:
      return "roce";
    case NicKind::kEthernet:
      return "ethernet";
    case NicKind::kSlingshot:
      return "slingshot";
  }
  return "intra-node";
}

ClusterSpec load_cluster(const std::string& name_or_path, const char* flag) {
  const auto path = resolve_catalog_file("hardware-profiles", name_or_path, flag).string();
  const YAML::Node root = load_yaml_file(path);
  try {
    YamlFields f(root, path);
    f.allow_only({"name", "source", "device", "ranks_per_node", "nodes", "tiers", "groups", "inter_group",
                  "attention", "launcher", "frontier_launch", "collectives", "collective_latency_us",
                  "calibration", "batch_limits"});
    ClusterSpec c;
    c.name = f.text("name");
    c.device = read_device(f.child("device"));
    if (c.device.reserved_bytes >= c.device.hbm_usable_bytes)
      f.child("device").fail("reserved_gib",
                             "is not below the device's usable memory; give what the runtime keeps (CUDA "
                             "context, libraries, NCCL: about 1 to 2 GiB)");
    // Bounded so that nodes x ranks_per_node (the cluster's GPUs) fits an int.
    if (!f.has("ranks_per_node")) f.fail("ranks_per_node", "is missing; add the GPUs (ranks) per node");
    c.ranks_per_node = static_cast<int>(*f.integer("ranks_per_node", 1, 1024));
    c.nodes = static_cast<int>(f.integer("nodes", 0, 1 << 20).value_or(0));
    const YAML::Node tiers = f.node("tiers");
    if (!tiers.IsDefined()) f.fail("tiers", "is missing; add the network tiers, innermost first");
    if (!tiers.IsSequence() || tiers.size() == 0)
      f.fail("tiers", "must be a non-empty list, innermost first");
    if (tiers.size() > 6) f.fail("tiers", "may hold at most 6 tiers");
    for (std::size_t i = 0; i < tiers.size(); ++i) {
      const bool last = i + 1 == tiers.size();
      c.tiers.push_back(read_tier(YamlFields(tiers[i], path, "tiers[" + std::to_string(i) + "]."), !last));
      // Each tier a whole number of the tier inside it (the last one may
      // leave its ranks out: the rest of the cluster).
      const int inner = i > 0 ? c.tiers[i - 1].ranks : 1;
      const int ranks = c.tiers[i].ranks;
      if (i > 0 && (!last || ranks > 0) && (ranks <= inner || ranks % inner != 0))
        throw InputError(path + ": tiers[" + std::to_string(i) + "].ranks is " + std::to_string(ranks) +
                         "; it must be a multiple of tiers[" + std::to_string(i - 1) + "].ranks (" +
                         std::to_string(inner) + ") above it: tiers grow outward, innermost first");
    }
    bool node_tier = false;
    for (const auto& t : c.tiers) node_tier = node_tier || t.ranks == c.ranks_per_node;
    if (!node_tier && c.tiers.size() > 1)
      f.fail("ranks_per_node",
             "is " + std::to_string(c.ranks_per_node) +
                 ", but no tier has that many ranks; it must equal the node's tier's ranks");
    const std::string attention = f.text("attention", "flash");
    if (attention != "flash" && attention != "unfused") f.fail("attention", "must be flash or unfused");
    c.default_flash_attention = attention == "flash";
    c.launcher_default = f.text("launcher", "torchrun");
    if (c.launcher_default != "torchrun" && c.launcher_default != "slurm")
      f.fail("launcher", "must be torchrun or slurm");
    c.frontier_launch = f.boolean("frontier_launch", false);
    const std::string collectives = f.text("collectives", "hierarchical");
    if (collectives != "hierarchical" && collectives != "ring")
      f.fail("collectives", "must be hierarchical or ring");
    c.ring_collectives = collectives == "ring";
    c.collective_base_latency_s = f.number_in("collective_latency_us", 0, 1e6, 0.0) * kMicro;
    if (f.has("batch_limits")) c.batch_limits = read_batch_limits_block(f.child("batch_limits"));
    if (f.has("calibration")) c.calibration = read_calibration_block(f.child("calibration"));
    if (f.has("groups")) {
      const YAML::Node groups = f.node("groups");
      if (!groups.IsSequence() || groups.size() == 0) f.fail("groups", "must be a non-empty list");
      int nodes = 0;
      for (std::size_t i = 0; i < groups.size(); ++i) {
        YamlFields g(groups[i], path, "groups[" + std::to_string(i) + "].");
        g.allow_only({"name", "nodes", "nic", "bandwidth_gb_per_s", "bandwidth_gbps", "latency_us",
                      "efficiency", "source"});
        NodeGroup group;
        group.name = g.text("name");
        // The name labels its hosts (GROUP-node-K in the hostfile), which
        // DeepSpeed refuses twice.
        for (const NodeGroup& other : c.groups)
          if (other.name == group.name)
            g.fail("name", "'" + group.name + "' names an earlier group too; rename one");
        group.nodes = static_cast<int>(g.integer("nodes", 1, 1 << 20).value_or(0));
        if (group.nodes == 0) g.fail("nodes", "is missing; add the node count of the group");
        group.nic = parse_nic(g.text("nic"), g.where() + ": field '" + g.full("nic") + "'");
        group.fabric.name = group.name;
        group.fabric.nic = group.nic;
        group.fabric.bandwidth_bytes_per_s = link_bandwidth_gb_per_s(g) * kGiga;
        group.fabric.latency_s = g.number_in("latency_us", 0, 1e6, 5.0) * kMicro;
        group.fabric.efficiency = g.number_in("efficiency", 0.01, 1.0, 1.0);
        nodes += group.nodes;
        c.groups.push_back(group);
      }
      c.inter_group = read_tier(f.child("inter_group"), false);
      if (c.nodes == 0) c.nodes = nodes;
      if (c.nodes != nodes) f.fail("nodes", "must equal the sum of the groups' nodes");
    } else if (f.has("inter_group")) {
      f.fail("inter_group",
             "is the link between node groups, and the profile has no 'groups'; add them or drop it");
    }
    if (first_load_of(path)) {
      warn_defaulted_constants(root, path);
      warn_faster_outer_tier(c, path);
    }
    return c;
  } catch (const YAML::Exception& e) {
    throw InputError(path + ": malformed profile at line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

}  // namespace parplan
