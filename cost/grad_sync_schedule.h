// How many data-parallel gradient reductions a step runs and what compute
// each may hide behind, per engine (JobSpec::grad_sync).
#pragma once

#include "cost/spec/job_spec.h"

namespace parplan {

/// What a gradient reduction may overlap with.
enum class GradSyncWindow : std::uint8_t {
  kOwnBackward,  ///< the backward of the micro-batch whose gradients it reduces
  kNone,         ///< nothing: it runs after the stage's last backward
};

struct GradSyncPlan {
  int reductions = 1;  ///< full-gradient reductions per step
  GradSyncWindow window = GradSyncWindow::kOwnBackward;
};

/// The reductions of a step of `micro_batches` micro-batches under ZeRO
/// stage `zero` (0..2) with `pp` pipeline stages.
///
/// Sources (each engine's rule, read in its code):
/// - DeepSpeed (deepspeedai/DeepSpeed v0.19.5-27-gedaa7221,
///   deepspeed/runtime/engine.py:2902-2910 allreduce_gradients: "ZeRO stage
///   >= 2 communicates during non gradient accumulation boundaries as well";
///   ZeRO-0/1 "communicate only at gradient accumulation boundaries";
///   deepspeed/runtime/zero/stage_1_and_2.py:1767-1769
///   reduce_ready_partitions_and_remove_grads reduces when partition_gradients
///   or at the boundary): ZeRO-2 every micro-batch, else once. When
///   (kDeepSpeed, at v0.16.4-6-g38327e07f): ZeRO-1's bucket hooks reduce
///   during the boundary micro-batch's backward (overlap_comm); ZeRO-0
///   runs buffered_allreduce_fallback from allreduce_gradients after
///   loss.backward() returns (engine.py:2048-2062, backward()); the
///   PipelineEngine turns enable_backward_allreduce off
///   (runtime/pipe/engine.py:81) and reduces in _exec_reduce_grads
///   (engine.py:293-301), the ReduceGrads instruction TrainSchedule issues
///   after the last micro-batch's backward (runtime/pipe/schedule.py).
/// - Megatron-LM (NVIDIA/Megatron-LM core_v0.15.0rc7-2333-gd98e8a64,
///   megatron/core/pipeline_parallel/schedules.py:2253-2267 disable_grad_sync
///   for every micro-batch, enable_grad_sync at 2434/2461 before the last
///   one's backward; megatron/core/distributed/distributed_data_parallel.py:
///   589-599 no_sync): once per step, bucketed, overlapped with the last
///   micro-batch's backward under --overlap-grad-reduce.
/// - torchtitan (pytorch/torchtitan b5bcd76c, torchtitan/trainer.py:856-880:
///   the gradient-accumulation loop calls backward on an FSDP2 module whose
///   gradient sync stays on, so each micro-batch reduce-scatters); with a
///   pipeline, PyTorch's torch/distributed/pipelining/stage.py
///   backward_maybe_with_nosync (pytorch/pytorch 01386103) turns
///   set_requires_gradient_sync(False) on for every micro-batch and
///   perform_reduce_grad runs the reduction as the schedule's REDUCE_GRAD
///   action "after all microbatches W, B actions".
/// - Llama 3 (Dubey et al. 2024, sec. 3.3.2): FSDP "synchronizes after each
///   training step", with "FP32 gradient accumulation during backward
///   computation over multiple micro-batches" before the fp32
///   reduce-scatter: once per step (how much of it overlaps the last
///   backward the paper does not say).
GradSyncPlan grad_sync_plan(GradSyncSchedule schedule, int zero, int pp, int micro_batches);

/// Whether a ZeRO-2/3 (FSDP2 fully_shard) step beside a pipeline defers its
/// gradient reduction to the end of the step, as PyTorch's pipelining does
/// for every FSDP stage (backward_maybe_with_nosync: set_requires_gradient_sync
/// (False) and set_reshard_after_backward(False) before every micro-batch's
/// backward, pytorch/pytorch v2.10.0 torch/distributed/pipelining/stage.py;
/// the REDUCE_GRAD action after the last one). torchtitan is the only engine
/// running ZeRO-2/3 beside a pipeline (src/emit's capability tables), so it is
/// also the rule when no engine is named. The stage then accumulates its
/// gradients unsharded in the reduce dtype, reduce-scatters them once, and
/// keeps its weights gathered from each backward until the next forward
/// reshards them.
bool pipeline_defers_sharded_sync(GradSyncSchedule schedule, int zero, int pp);

}  // namespace parplan
