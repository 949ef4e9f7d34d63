// HBM traffic of the cross-entropy on the logits, per kernel: each engine's
// loss runs as its own sequence of memory-bound passes over the local
// vocabulary shard, so its time is the bytes those passes read and write.
#pragma once

#include "cost/spec/job_spec.h"

namespace parplan {

/// Bytes read and written in HBM per logit of the local vocabulary shard
/// (16-bit logits from the LM-head GEMM), forward and backward, the cast of
/// the gradient back to the logits' 16 bits included. Per-row values (max,
/// sum, target logit) and the tp all-reduces of them are left out: a few
/// bytes per token against thousands of logits per token.
struct LossPassBytes {
  double forward = 0;
  double backward = 0;
};

/// `tp`: tensor-parallel size; above 1 torchtitan's eager loss runs as
/// PyTorch's loss_parallel decomposition instead of the native kernels.
LossPassBytes loss_pass_bytes(CrossEntropy kernel, int tp);

}  // namespace parplan
