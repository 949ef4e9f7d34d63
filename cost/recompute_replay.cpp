#include "cost/recompute_replay.h"

namespace parplan {

bool recompute_skips_last_linear(const JobSpec& job) {
  // fused_elementwise stands for torch.compile on the PyTorch engines.
  return job.checkpoint_early_stop && (job.precision != Precision::kFp8 || job.fused_elementwise);
}

}  // namespace parplan
