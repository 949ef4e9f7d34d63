// The constants of a hardware profile that calibration may fit to measured
// runs: each with its name, physical bounds and how it enters the step time.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost/spec/cluster_spec.h"

namespace parplan {

/// One fitted constant. `key` is its name in SI units ("gemm_efficiency_max",
/// "tiers[1].efficiency", "layer_overhead_s"); profile files may spell it
/// in other units (see src/io/profile_writer).
struct FittedConstant {
  std::string key;
  /// What the constant is, for reports.
  std::string what;
  /// Physical bounds (no efficiency above 1, no negative overhead).
  double lower = 0;
  double upper = 1;
  /// Fitted as 1 / value: a time is linear in a reciprocal efficiency, so the
  /// linearised fit is exact for it.
  bool reciprocal = false;
  /// Only memory predictions depend on it (fit it from runs with measured
  /// peak memory).
  bool memory_only = false;
  /// -1: a device field; otherwise the index of the network tier.
  int tier = -1;
  double DeviceSpec::*device_field = nullptr;
  double NetworkTier::*tier_field = nullptr;
};

/// Every constant the cost model exposes as fitted, for this cluster's
/// tiers, in the order the identifiability check prefers them.
std::vector<FittedConstant> fitted_constants(const ClusterSpec& cluster);
/// The constant named `key`, or nullopt.
std::optional<FittedConstant> find_fitted_constant(const ClusterSpec& cluster, std::string_view key);

double fitted_value(const ClusterSpec& cluster, const FittedConstant& constant);
void set_fitted_value(ClusterSpec& cluster, const FittedConstant& constant, double value);

}  // namespace parplan
