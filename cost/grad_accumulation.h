// The memory-bound passes that sum a step's micro-batch gradients before
// data parallelism reduces them (JobSpec::grad_accumulation).
#pragma once

#include "cost/spec/job_spec.h"

namespace parplan {

/// Bytes read and written per parameter of the stage by those passes, per
/// micro-batch, averaged over the step's `micro_batches`; 0 where the engine
/// sums in the GEMM or in sharded buffers.
///
/// kFused: Megatron-LM accumulates into its fp32 main_grad inside the
/// weight-gradient GEMM (gradient_accumulation_fusion, on by default);
/// FSDP and ZeRO-2/3 reduce-scatter every micro-batch, so only the shard
/// accumulates.
///
/// kDeepSpeed (deepspeedai/DeepSpeed v0.16.4-6-g38327e07f):
/// - bf16 without ZeRO runs the BF16_Optimizer (engine.py
///   _do_optimizer_sanity_check: a bf16 model with fp32 gradient
///   accumulation, the default without ZeRO in get_data_types): after every
///   micro-batch's backward, update_hp_grads runs
///   hp_grad.add_(lp.grad.to(float32)) per parameter (bf16_optimizer.py):
///   the cast reads 2 bytes and writes a 4-byte copy, the add reads both
///   and writes 4: 18 bytes per parameter, every micro-batch.
/// - otherwise (fp16, or ZeRO-1 whose hooks reduce only at the
///   accumulation boundary: stage_1_and_2.py
///   reduce_ready_partitions_and_remove_grads) autograd's AccumulateGrad adds
///   each micro-batch after the first into the 16-bit .grad in place: 6 bytes
///   per parameter on m - 1 of the m micro-batches.
/// - ZeRO-2/3 reduce every micro-batch: none.
double grad_accumulation_bytes_per_param(GradAccumulation accumulation, Precision precision, int zero,
                                         int micro_batches);

}  // namespace parplan
