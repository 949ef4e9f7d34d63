// DeepSpeed ZeRO bucket sizes, in parameters (elements): what the cost model
// counts collective calls with is what src/emit writes into ds_config.json.
// Values: DeepSpeed's defaults (deepspeed/runtime/zero/config.py,
// DeepSpeedZeroConfig: reduce_bucket_size 5e8, allgather_bucket_size 5e8,
// stage3_prefetch_bucket_size 5e7).
#pragma once

#include <cstdint>

namespace parplan {

inline constexpr std::int64_t kZeroReduceBucketElements = 500000000;
inline constexpr std::int64_t kZeroAllgatherBucketElements = 500000000;
inline constexpr std::int64_t kZeroPrefetchBucketElements = 50000000;

}  // namespace parplan
