// What full recomputation replays of a dense layer: the whole forward under
// Megatron-LM's and DeepSpeed's checkpoints, all but the last linear under
// PyTorch's non-reentrant checkpoint (JobSpec::checkpoint_early_stop).
#pragma once

#include "cost/spec/job_spec.h"

namespace parplan {

/// Whether a dense layer's full recomputation stops before the FFN's output
/// projection. PyTorch's non-reentrant checkpoint raises its early-stop
/// signal from the saved-tensor hook once the last tensor the backward reads
/// is saved again (torch/utils/checkpoint.py, _StopRecomputationError); an
/// aten linear saves its input and weight before it computes
/// (autograd's generated MmBackward0: SavedVariable before the redispatch),
/// so the output projection's GEMM never runs, nor its output's
/// tensor-parallel reduction or the residual add after it. Eager fp8 linears
/// (torchao's Float8Linear, Transformer Engine's Linear) are autograd
/// Functions whose saved tensors are packed after their forward returns, so
/// their GEMM runs before the stop; compiled regions (torch.compile) leave
/// out whatever the backward does not read, the output projection included.
bool recompute_skips_last_linear(const JobSpec& job);

}  // namespace parplan
