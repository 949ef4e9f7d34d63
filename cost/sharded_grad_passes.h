// Memory-bound passes an engine runs over each unit's unsharded 16-bit
// gradient on its way into a ZeRO-2/3 reduce-scatter, once per micro-batch
// that reduces (JobSpec::sharded_grad_passes; FSDP2's copy-in is priced
// with its copy-out, JobSpec::fsdp_copy_out).
#pragma once

#include "cost/spec/job_spec.h"

namespace parplan {

/// Bytes read and written per parameter of the unit by those passes, for a
/// reduction in `reduce_bytes` per element over `shard` ranks; 0 where the
/// engine runs none at that ZeRO stage or there is one rank.
///
/// FSDP1 (torch/distributed/fsdp/_runtime_utils.py): _post_backward_hook
/// casts the whole gradient to the reduce dtype where it differs
/// (flat_param.grad.to(handle._reduce_dtype): 2 read + reduce_bytes written),
/// _reduce_grad divides it in place by the pre-divide factor, over 1 for
/// every group of 2 or more ranks (DefaultState._get_gradient_predivide_factor)
/// before the reduce-scatter (2 x reduce_bytes), and the shard by the
/// post-divide factor after it (2 x reduce_bytes / shard). ZeRO-2
/// (SHARD_GRAD_OP) reduces per micro-batch alike.
///
/// DeepSpeed ZeRO-3 (deepspeed/runtime/zero/stage3.py @ edaa722):
/// __add_grad_to_ipg_bucket copies each gradient into the contiguous
/// bucket (contiguous_gradients, parplan's emitted default: 2 + 2),
/// __avg_scatter_grads casts to communication_data_type where it differs,
/// and reduce_scatter_coalesced (runtime/comm/coalesced_collectives.py)
/// concatenates the bucket's per-rank chunks into one flat buffer (torch.cat:
/// reduce_bytes read and written) and pre-divides it by the world size in
/// place (div_: the same again). ZeRO-2 goes through stage_1_and_2.py's
/// bucketed reduces instead and is not priced here.
double sharded_grad_pass_bytes(ShardedGradPasses passes, int zero, double reduce_bytes, int shard);

}  // namespace parplan
