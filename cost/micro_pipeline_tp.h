// What PyTorch's micro-pipelined tensor parallelism (Inductor's
// micro_pipeline_tp pass; torchtitan's Async TP, which needs torch.compile)
// leaves of a layer's sequence-parallel traffic on the critical path.
//
// The pass (torch/_inductor/fx_passes/micro_pipeline_tp.py, pytorch/pytorch
// @ 5f65158a as stored) fuses an all-gather with the matmuls that take its
// result as their left operand (fused_all_gather_matmul, several right
// operands at once) and a reduce-scatter with the one matmul whose output
// is its only input (fused_matmul_reduce_scatter). In torchtitan's Llama
// (wq, wk, wv and w1, w3 separate nn.Linear: torchtitan/models/llama3/
// model/model.py @ v0.2.2, models/llama/model.py @ 9dec370) that fuses, in
// the forward, the gather before QKV and before FFN-in, and the scatters
// after the attention output and FFN-out projections; in the backward, the
// gathers of the row-parallel layers' output gradients with their
// input-gradient matmuls. The backward's two reduce-scatters take the sum
// of three (QKV) or two (FFN-in) input-gradient matmuls, an add and not a
// matmul, so they stay plain collectives that the next op waits on.
//
// The fused ops (torch/distributed/_symmetric_memory/__init__.py, @ 006b161f
// as stored): the gather first copies the local shard into the symmetric
// buffer and barriers, then runs the local shard's matmul while the remote
// shards are pulled one at a time, each consumed as it lands (the local
// chunk's matmul has nothing to hide); the scatter produces each remote
// rank's chunk for it to pull, the local chunk last, then sums the tp
// partials in one memory-bound kernel (reduce_partials).
#pragma once

#include "cost/compute_time.h"

namespace parplan {

struct MicroPipelineTpInputs {
  int tp = 1;
  /// One all-gather and one reduce-scatter of the layer's b x s x h
  /// activation over the tp group (they differ where the gather moves fp8).
  double all_gather_s = 0;
  double reduce_scatter_s = 0;
  /// The local shard copied into the symmetric buffer (read and write).
  double shard_copy_s = 0;
  /// The tp partial outputs of a fused reduce-scatter summed into the shard.
  double partial_reduce_s = 0;
  /// What a concurrent transfer costs the matmul (cost/overlap.h).
  double compute_slowdown = 0;
};

struct MicroPipelineTpSeconds {
  double forward_s = 0;
  double backward_s = 0;
  /// The forward's two all-gathers alone (what a recomputation that saves
  /// the reduce-scatters' outputs replays).
  double forward_gathers_s = 0;
};

/// Per layer and micro-batch; a window of zero (no such GEMM timed here)
/// leaves its collective unfused.
MicroPipelineTpSeconds micro_pipeline_tp_exposed_s(const MicroPipelineTpInputs& in,
                                                   const TpGemmWindows& windows);

}  // namespace parplan
