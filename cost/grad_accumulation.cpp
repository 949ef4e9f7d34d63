#include "cost/grad_accumulation.h"

#include <algorithm>

namespace parplan {

double grad_accumulation_bytes_per_param(GradAccumulation accumulation, Precision precision, int zero,
                                         int micro_batches) {
  if (accumulation != GradAccumulation::kDeepSpeed || zero >= 2) return 0.0;
  constexpr double kBf16OptimizerCopyBytes = 2.0 + 4.0 + 4.0 + 4.0 + 4.0;
  constexpr double kInPlaceAddBytes = 2.0 + 2.0 + 2.0;
  if (precision == Precision::kBf16 && zero == 0) return kBf16OptimizerCopyBytes;
  const int m = std::max(1, micro_batches);
  return kInPlaceAddBytes * (m - 1) / m;
}

}  // namespace parplan
