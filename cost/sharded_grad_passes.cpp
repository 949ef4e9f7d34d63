#include "cost/sharded_grad_passes.h"

namespace parplan {

double sharded_grad_pass_bytes(ShardedGradPasses passes, int zero, double reduce_bytes, int shard) {
  if (shard <= 1) return 0.0;
  constexpr double kGradientBytes = 2.0;  // autograd's 16-bit gradient
  const double cast_bytes = reduce_bytes != kGradientBytes ? kGradientBytes + reduce_bytes : 0.0;
  switch (passes) {
    case ShardedGradPasses::kFsdp1:
      if (zero < 2) return 0.0;
      return cast_bytes + 2.0 * reduce_bytes * (1.0 + 1.0 / shard);
    case ShardedGradPasses::kDeepSpeedZero3:
      if (zero < 3) return 0.0;
      return 2.0 * kGradientBytes + cast_bytes + 2.0 * reduce_bytes + 2.0 * reduce_bytes;
    case ShardedGradPasses::kNone:
      break;
  }
  return 0.0;
}

}  // namespace parplan
