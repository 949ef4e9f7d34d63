// The pipeline schedule of one training step as a timeline: the order in
// which Megatron-LM runs each rank's forward and backward passes (1F1B, or
// interleaved with vp model chunks), played out with each stage's own
// durations, for a picture of where the bubble is.
#pragma once

#include <vector>

#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

/// One forward or backward pass of one micro-batch through one model chunk.
struct PipelineOp {
  int rank = 0;         ///< pipeline rank (stage), 0 .. pp-1
  int chunk = 0;        ///< model chunk on that rank, 0 .. vp-1
  int micro_batch = 0;  ///< 0 .. m-1
  bool backward = false;
  double start_s = 0;
  double end_s = 0;
};

/// One pass in a rank's order, before any time is given to it.
struct ScheduledPass {
  int chunk = 0;
  int micro_batch = 0;
  bool backward = false;
};

/// Rank `rank`'s passes in Megatron-LM's order
/// (megatron/core/pipeline_parallel/schedules.py): warm-up forwards, then
/// one forward and one backward in turn, then the remaining backwards. With
/// vp > 1 the warm-up is 2 (pp - rank - 1) + (vp - 1) pp virtual
/// micro-batches and chunks take turns in groups of pp micro-batches
/// (get_schedule_table with microbatch_group_size_per_vp_stage = pp); it
/// needs pp > 1 and micro-batches divisible by pp, as Megatron-LM does.
/// Throws std::invalid_argument otherwise.
std::vector<ScheduledPass> megatron_pass_order(int pp, int vp, int micro_batches, int rank);

/// Durations of one pass of one micro-batch through each virtual stage
/// (chunk c of rank r is virtual stage c pp + r).
struct StagePassTimes {
  std::vector<double> forward_s;
  std::vector<double> backward_s;  ///< recomputation included
};

struct PipelineTimeline {
  int pp = 1, vp = 1, micro_batches = 1;
  std::vector<PipelineOp> ops;  ///< every pass, each rank's in its order
  double span_s = 0;            ///< first start to last end
};

/// Plays the passes out: a pass starts when its rank is free and its input
/// is there (the previous virtual stage's forward, or the next one's
/// backward, `hop_s` after it ended). Throws std::invalid_argument on sizes
/// that do not fit (one time per virtual stage, non-positive counts, an
/// interleaved schedule Megatron-LM would refuse).
PipelineTimeline simulate_pipeline(int pp, int vp, int micro_batches, const StagePassTimes& times,
                                   double hop_s);

/// The timeline of one step of `config` as the cost model prices it: each
/// rank's forward and backward of one micro-batch (communication left after
/// overlap included, split between the two in proportion to their compute);
/// its layers' share divided evenly among its vp chunks, the embedding on
/// the first virtual stage and the output layer and loss on the last.
PipelineTimeline pipeline_timeline(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                   const ParallelConfig& config);

}  // namespace parplan
