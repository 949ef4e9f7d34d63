#include "cost/power_cap.h"

#include <cmath>

namespace parplan {

double power_capped_clock_ratio(const PowerCurve& curve, double limit_w) {
  if (limit_w >= curve.reference_limit_w) return 1.0;
  if (limit_w <= curve.base_w) return 0.0;
  return std::pow((limit_w - curve.base_w) / (curve.reference_limit_w - curve.base_w),
                  1.0 / curve.clock_exponent);
}

}  // namespace parplan
