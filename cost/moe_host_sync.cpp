#include "cost/moe_host_sync.h"

#include <algorithm>

namespace parplan {

bool moe_dispatch_waits_on_host(const JobSpec& job) { return !job.pad_to_capacity; }

int moe_launches_after_host_wait(const MoeSyncLaunchShape& shape) {
  int launches = 0;
  if (shape.ep_alltoall) {
    launches += 3;
    if (shape.local_experts > 1) launches += 4;
  }
  if (shape.fp8 && shape.fp8_split_padding) launches += 3;
  // Two grouped GEMMs (FC1, FC2), each one GEMM per local expert.
  int per_expert_gemm = 1;
  int per_grouped_gemm = 0;
  if (shape.fp8) {
    if (shape.fp8_current_scaling) {
      per_expert_gemm += 4;
    } else {
      per_grouped_gemm += 1;
    }
  }
  launches += 2 * (shape.local_experts * per_expert_gemm + per_grouped_gemm);
  return launches + 2;
}

double host_launch_exposed_s(int launches, double host_s_per_launch, double gpu_s) {
  return std::max(0.0, launches * host_s_per_launch - gpu_s);
}

}  // namespace parplan
