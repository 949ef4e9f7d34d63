// The full copies sequence parallelism pays when its collectives run on the
// sequence dim of a batch-first activation (JobSpec::sp_sequence_dim_copies:
// torchtitan from pytorch/torchtitan#190, 2024-04, which dropped the folding
// of batch and sequence, to #4121, 2026-08-20, which folded them again).
//
// torchtitan's tensor-parallel plan shards the [b, s, h] hidden states on
// dim 1 (SequenceParallel, PrepareModuleInput(input_layouts=Shard(1)),
// RowwiseParallel(output_layouts=Shard(1)); torchtitan/parallelisms/
// parallelize_llama.py @ 9dec370, whose comment points at #437: "we can
// accelerate Sequence Parallel by folding (and unfolding) the batch
// dimension and the sequence dimension"). DTensor redistributes through
// PyTorch's functional collectives, which gather and scatter on dim 0 only:
// all_gather_tensor with gather_dim != 0 ends in
// torch.cat(torch.chunk(res, group_size, dim=0), dim=gather_dim), and
// reduce_scatter_tensor with scatter_dim != 0 starts with
// torch.cat(torch.chunk(self, group_size, dim=scatter_dim))
// (torch/distributed/_functional_collectives.py): each reads and writes the
// whole b x s x h tensor ("an extra aten.cat after each collective",
// torchtitan#437, measured there at 6 % of an FFN's time at 8K tokens, batch
// 1, on an H100).
//
// Which copies run, per layer and micro-batch:
//  - vanilla TP, forward: after each of the two all-gathers (attention and
//    FFN input; fp8 bytes where the gather moves fp8) and before each of the
//    two reduce-scatters (the output projections' partial sums, written by
//    their matmul, which no copy can fuse into);
//  - vanilla TP, backward: after the two all-gathers of the output
//    gradients; the two reduce-scatters of the input gradients copy too,
//    unless the engine compiles the block and the input gradient is a sum
//    of matmul outputs (separate QKV, separate gate and up), whose add
//    Inductor writes straight into the concatenated layout;
//  - Async TP (Inductor's micro-pipelined TP, cost/micro_pipeline_tp.h):
//    the fused ops take the sequence dim to the front themselves
//    (torch/distributed/_symmetric_memory/__init__.py: A_shard.movedim(
//    gather_dim, 0), A.movedim(scatter_dim, 0)), and the pass restrides
//    the producer of each operand so that this is already contiguous
//    (restride_A_shard_for_fused_all_gather_matmul,
//    restride_A_for_fused_matmul_reduce_scatter; "if A.movedim(scatter_dim,
//    0) is contiguous, no extra copy is required"): no copy there. The
//    gathered operand the fused gather returns is a view of its
//    sequence-major buffer (unflatten(A_flat), ...movedim(0, gather_dim)),
//    and the weight gradient of the matmuls it fed needs it batch-major, as
//    the output gradient arrives: one copy of it per gather and layer
//    (where the forward saves it or where the backward recomputes it; an
//    inference from the layouts, not a line read). The backward's two
//    reduce-scatters stay plain collectives, as above.
#pragma once

#include "cost/spec/cluster_spec.h"

namespace parplan {

struct SequenceDimCopyShape {
  int tp = 1;
  /// Bytes of one gathered b x s x h activation (fp8 where the gather moves
  /// fp8) and of one reduce-scatter input (16 bits).
  double gather_bytes = 0;
  double scatter_bytes = 0;
  bool micro_pipelined = false;
  /// The backward's reduce-scatter copies fused into the add that sums the
  /// input gradients (compiled, separate projections).
  bool attention_backward_fused = false;
  bool ffn_backward_fused = false;
};

struct SequenceDimCopySeconds {
  double forward_s = 0;
  double backward_s = 0;
  /// The forward's copies that belong to its all-gathers (what a
  /// recomputation that saves the reduce-scatters' outputs replays).
  double forward_gathers_s = 0;
};

SequenceDimCopySeconds sequence_dim_copy_s(const DeviceSpec& device, const SequenceDimCopyShape& shape);

}  // namespace parplan
