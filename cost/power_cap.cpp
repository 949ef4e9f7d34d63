#include "cost/power_cap.h"

#include <algorithm>
#include <cmath>

#include "cost/attention_kernels.h"

namespace parplan {

double power_capped_clock_ratio(const PowerCurve& curve, double limit_w) {
  if (limit_w >= curve.reference_limit_w) return 1.0;
  if (limit_w <= curve.base_w) return 0.0;
  return std::pow((limit_w - curve.base_w) / (curve.reference_limit_w - curve.base_w),
                  1.0 / curve.clock_exponent);
}

double power_capped_peak_uncertainty(const PowerCurve& curve, double limit_w) {
  const double mid = power_capped_clock_ratio(curve, limit_w);
  if (mid >= 1.0 || mid <= 0.0) return 0.0;
  PowerCurve low = curve, high = curve;
  low.clock_exponent = curve.clock_exponent_low;
  high.clock_exponent = curve.clock_exponent_high;
  return std::abs(power_capped_clock_ratio(high, limit_w) - power_capped_clock_ratio(low, limit_w)) / 2.0 /
         mid;
}

DeviceSpec with_power_limit(DeviceSpec device, const PowerCurve& curve, double limit_w) {
  const double ratio = power_capped_clock_ratio(curve, limit_w);
  const double scale = ratio / device.power_clock_ratio;
  // An H100 at a lower clock keeps the published kernels' fraction of its
  // peak (docs/cost-model.md): decided on the part as the profile gives it.
  device.h100_kernel_figures = h100_attention_figures_apply(device);
  device.peak_bf16_flops_per_s *= scale;
  device.peak_fp16_flops_per_s *= scale;
  device.peak_fp8_flops_per_s *= scale;
  device.power_limit_w = limit_w;
  device.power_clock_ratio = ratio;
  device.peak_uncertainty = std::max(device.peak_uncertainty, power_capped_peak_uncertainty(curve, limit_w));
  return device;
}

}  // namespace parplan
