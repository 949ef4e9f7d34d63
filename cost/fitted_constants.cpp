#include "cost/fitted_constants.h"

#include <iterator>

namespace parplan {

namespace {
FittedConstant device_constant(const char* key, const char* what, double lower, double upper, bool reciprocal,
                               double DeviceSpec::*field) {
  FittedConstant c;
  c.key = key;
  c.what = what;
  c.lower = lower;
  c.upper = upper;
  c.reciprocal = reciprocal;
  c.device_field = field;
  return c;
}
}  // namespace

std::vector<FittedConstant> fitted_constants(const ClusterSpec& cluster) {
  // Bounds: efficiencies are fractions of a datasheet peak (at most 1, and
  // no kernel worth modelling runs below 5 %); latencies and overheads are
  // non-negative and below values no published stack reaches.
  std::vector<FittedConstant> out = {
      device_constant("gemm_efficiency_max", "fraction of peak a large GEMM reaches", 0.05, 1.0, true,
                      &DeviceSpec::gemm_efficiency_max),
      device_constant("flash_attention_efficiency", "fraction of peak of the fused attention kernel", 0.05,
                      1.0, true, &DeviceSpec::flash_attention_efficiency),
  };
  for (std::size_t i = 0; i < cluster.tiers.size(); ++i) {
    const std::string prefix = "tiers[" + std::to_string(i) + "].";
    FittedConstant eff;
    eff.key = prefix + "efficiency";
    eff.what = "bus-bandwidth fraction of tier " + cluster.tiers[i].name;
    eff.lower = 0.01;
    eff.upper = 1.0;
    eff.reciprocal = true;
    eff.tier = static_cast<int>(i);
    eff.tier_field = &NetworkTier::efficiency;
    out.push_back(eff);
  }
  const FittedConstant rest[] = {
      device_constant("layer_overhead_s", "fixed time per layer per micro-batch (fwd+bwd)", 0.0, 0.05, false,
                      &DeviceSpec::layer_overhead_s),
      device_constant("overlap_compute_slowdown", "compute slowdown under overlapped communication", 0.0, 1.0,
                      false, &DeviceSpec::overlap_compute_slowdown),
      device_constant("memory_bound_efficiency", "fraction of HBM bandwidth of element-wise kernels", 0.05,
                      1.0, true, &DeviceSpec::memory_bound_efficiency),
      device_constant("attention_half_seq", "sequence length at half attention efficiency", 0.0, 1e6, false,
                      &DeviceSpec::attention_half_seq),
      device_constant("gemm_half_dim", "GEMM dimension at half efficiency", 0.0, 1e4, false,
                      &DeviceSpec::gemm_half_dim),
      device_constant("gemm_half_flops", "GEMM FLOPs at half efficiency", 0.0, 1e12, false,
                      &DeviceSpec::gemm_half_flops),
  };
  out.insert(out.end(), std::begin(rest), std::end(rest));
  for (std::size_t i = 0; i < cluster.tiers.size(); ++i) {
    FittedConstant latency;
    latency.key = "tiers[" + std::to_string(i) + "].latency_s";
    latency.what = "per-step latency of tier " + cluster.tiers[i].name;
    latency.lower = 0.0;
    latency.upper = 1e-3;
    latency.tier = static_cast<int>(i);
    latency.tier_field = &NetworkTier::latency_s;
    out.push_back(latency);
  }
  out.push_back(device_constant("reserved_bytes", "memory the runtime keeps (context, workspaces)", 0.0, 64e9,
                                false, &DeviceSpec::reserved_bytes));
  out.back().memory_only = true;
  return out;
}

std::optional<FittedConstant> find_fitted_constant(const ClusterSpec& cluster, std::string_view key) {
  for (auto& c : fitted_constants(cluster))
    if (c.key == key) return c;
  return std::nullopt;
}

double fitted_value(const ClusterSpec& cluster, const FittedConstant& c) {
  if (c.tier >= 0) return cluster.tiers[c.tier].*(c.tier_field);
  return cluster.device.*(c.device_field);
}

void set_fitted_value(ClusterSpec& cluster, const FittedConstant& c, double value) {
  if (c.tier >= 0) {
    cluster.tiers[c.tier].*(c.tier_field) = value;
    // A heterogeneous cluster's outer tier is replaced per group; keep the
    // constants of a uniform cluster only.
    return;
  }
  cluster.device.*(c.device_field) = value;
}

}  // namespace parplan
