#include "cost/grad_sync_schedule.h"

#include <algorithm>

namespace parplan {

GradSyncPlan grad_sync_plan(GradSyncSchedule schedule, int zero, int pp, int micro_batches) {
  const int m = std::max(1, micro_batches);
  if (schedule == GradSyncSchedule::kTorchtitan)
    schedule = pp > 1 ? GradSyncSchedule::kAfterLastBackward : GradSyncSchedule::kEveryMicroBatch;
  if (schedule == GradSyncSchedule::kDeepSpeed) {
    // ZeRO-0 all-reduces after backward returns; the PipelineEngine reduces
    // as the schedule's ReduceGrads instruction after its last backward.
    if (zero == 0 || (pp > 1 && zero < 3)) return {1, GradSyncWindow::kNone};
    schedule = GradSyncSchedule::kEngineDefault;
  }
  // No engine given: the rule of the engine that runs the config. ZeRO-2
  // beside a pipeline is torchtitan's FSDP2 + PP alone (DeepSpeed and
  // Megatron allow at most ZeRO-1 with pp > 1: src/emit's capability
  // tables), which reduces once after the last backward.
  if (schedule == GradSyncSchedule::kEngineDefault)
    schedule = zero != 2 ? GradSyncSchedule::kLastMicroBatch
               : pp > 1  ? GradSyncSchedule::kAfterLastBackward
                         : GradSyncSchedule::kEveryMicroBatch;
  switch (schedule) {
    case GradSyncSchedule::kEveryMicroBatch:
      return {m, GradSyncWindow::kOwnBackward};
    case GradSyncSchedule::kAfterLastBackward:
      return {1, GradSyncWindow::kNone};
    default:
      return {1, GradSyncWindow::kOwnBackward};
  }
}

bool pipeline_defers_sharded_sync(GradSyncSchedule schedule, int zero, int pp) {
  return zero >= 2 && pp > 1 &&
         (schedule == GradSyncSchedule::kTorchtitan || schedule == GradSyncSchedule::kEngineDefault);
}

}  // namespace parplan
