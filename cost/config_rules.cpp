// The rules a ParallelConfig must obey to run at all (config_problem).
#include "cost/stage_layout.h"
#include "cost/step_cost.h"

namespace parplan {

namespace {
// Expert parallelism: Megatron-LM's MoE parallel folding
// (megatron/core/parallel_state.py initialize_model_parallel builds the
// expert grid etp x ep x edp over the same ranks as tp x cp x dp of a
// pipeline stage) and validate_args / TransformerConfig checks.
const char* moe_config_problem(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c) {
  if (c.ep < 1 || c.etp < 1) return "ep and etp must be at least 1";
  if (!model.is_moe()) {
    if (c.ep > 1 || c.etp > 1) return "ep and etp need a mixture-of-experts model (the model has no experts)";
    return nullptr;
  }
  if (model.experts % c.ep != 0) return "ep must divide the number of experts (experts % ep == 0)";
  if ((c.tp * c.cp * c.dp) % (c.etp * c.ep) != 0)
    return "etp * ep must divide tp * cp * dp (MoE parallel folding: the expert grid etp x ep x edp spans a "
           "pipeline stage's ranks)";
  if (model.expert_ffn_hidden % c.etp != 0) return "etp must divide the expert FFN width";
  if (c.ep > 1 && c.tp > 1 && !c.sp)
    return "expert and tensor parallelism together need sequence parallelism";
  if (c.ep > 1 && job.precision == Precision::kFp16)
    return "expert parallelism does not run with fp16 (use bf16)";
  if (c.ep_overlap && (c.ep < 2 || (c.pp > 1 && c.vp < 2) || c.recompute == Recompute::kFull))
    return "the overlapped expert-parallel all-to-all needs ep > 1, pp == 1 or vp > 1, and no full "
           "recomputation";
  if (model.route_groups > 0 && model.experts % model.route_groups != 0)
    return "the routing groups must divide the experts";
  return nullptr;
}
}  // namespace

const char* config_problem(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c) {
  if (c.tp < 1 || c.pp < 1 || c.cp < 1 || c.dp < 1 || c.vp < 1 || c.mbs < 1 || c.ep < 1)
    return "every parallel size and the micro-batch size must be at least 1";
  if (c.world() != job.gpus) return "tp * cp * pp * dp must equal the number of GPUs";
  if (model.heads % c.tp != 0) return "tp must divide the attention heads";
  if (!model.uses_mla() && model.kv_groups % c.tp != 0 && c.tp % model.kv_groups != 0)
    return "tp must divide the key/value groups (or be a multiple of them)";
  if (model.ffn_hidden % c.tp != 0) return "tp must divide the FFN width";
  if (c.gbs % (c.mbs * c.dp) != 0) return "gbs must be divisible by mbs * dp";
  if (job.seq % (c.cp > 1 ? 2 * c.cp : 1) != 0) return "seq must be divisible by 2 * cp";
  if (c.sp && c.tp == 1) return "sequence parallelism needs tp > 1";
  if (c.pp > model.layers) return "pp must not exceed the layers";
  if (!layout_is_valid(model.layers, c))
    return "layers must split evenly over pp stages and vp chunks (or give first/last stage layers)";
  if (c.vp > 1 && (c.pp < 2 || c.micro_batches() % c.pp != 0))
    return "the interleaved schedule (vp > 1) needs pp > 1 and micro-batches divisible by pp";
  if (c.zero < 0 || c.zero > 3) return "zero must be 0, 1, 2 or 3";
  if (c.zero >= 2 && c.pp > 1) return "ZeRO-2/3 cannot run with pipeline parallelism";
  if ((c.zeropp() || c.hierarchical_partition) && c.zero != 3)
    return "ZeRO++ (hpZ, qwZ, qgZ) and hierarchical partitioning need ZeRO stage 3";
  if (c.hpz_ranks < 1) return "hpZ partition size must be at least 1";
  if (c.hierarchical_partition) {
    const PartitionPlacement& p = c.partition;
    if (p.params_secondary > p.params)
      return "the secondary weight partition must lie inside the primary one";
    if (p.grads > p.optimizer) return "the gradient partition must lie inside the optimizer partition";
    if (p.params > p.optimizer) return "the weight partition must lie inside the optimizer partition";
  }
  if (const char* moe = moe_config_problem(model, job, c)) return moe;
  if (c.recompute == Recompute::kFull && c.recompute_layers * c.vp > model.layers)
    return "recompute layers exceed the layers of a stage";
  return nullptr;
}

}  // namespace parplan
