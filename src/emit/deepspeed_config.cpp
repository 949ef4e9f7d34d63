// ds_config.json and the DeepSpeed hostfile. Keys as DeepSpeed spells them:
// runtime/config.py (batch), runtime/zero/config.py DeepSpeedZeroConfig
// (zero_optimization, which forbids unknown keys), runtime/precision_config.
#include <algorithm>

#include "cost/memory.h"
#include "cost/step_cost.h"
#include "cost/zero_buckets.h"
#include "src/emit/emit_internal.h"

namespace parplan::emit_detail {

int deepspeed_hpz_ranks(const Plan& plan) {
  const ParallelConfig& c = plan.config;
  if (c.hpz_ranks > 1 || !c.hierarchical_partition) return c.hpz_ranks;
  // The backward gather of the hierarchical scheme runs inside its
  // secondary (or primary) weight partition: hpZ of that many ranks is the
  // part of the placement stock DeepSpeed can run.
  if (plan.cluster.tiers.empty()) return 1;
  return partition_ranks(plan.cluster, c, c.partition.params_secondary);
}

std::vector<std::string> hierarchical_extension_notes(const Plan& plan) {
  const ParallelConfig& c = plan.config;
  std::vector<std::string> notes;
  if (!c.hierarchical_partition || plan.cluster.tiers.empty()) return notes;
  const PartitionPlacement& p = c.partition;
  const int hpz = deepspeed_hpz_ranks(plan);
  notes.push_back("DeepSpeed runs the backward weight gather inside zero_hpz_partition_size " + str(hpz) +
                  " ranks (the " + partition_level_name(p.params_secondary) + " partition of the plan).");
  if (p.params != PartitionLevel::kJob) {
    notes.push_back("Needs the paper's extension: the forward all-gather inside the " +
                    std::string(partition_level_name(p.params)) + " (a primary weight partition of " +
                    str(partition_ranks(plan.cluster, c, p.params)) +
                    " ranks); stock ZeRO-3 gathers the forward weights over all " + str(c.dp * c.cp) +
                    " data-parallel ranks.");
  }
  if (p.grads != p.optimizer) {
    notes.push_back("Needs the paper's extension: gradients reduce-scattered inside the " +
                    std::string(partition_level_name(p.grads)) + " every micro-batch and across " +
                    partition_level_name(p.grads) +
                    "s once per step; stock ZeRO-3 (qgZ included) reduces over all data-parallel ranks every "
                    "micro-batch.");
  }
  if (p.optimizer != PartitionLevel::kJob) {
    notes.push_back("Needs the paper's extension: optimizer states partitioned inside the " +
                    std::string(partition_level_name(p.optimizer)) +
                    " and replicated across them (MiCS's mics_shard_size shards every state alike).");
  }
  return notes;
}

nlohmann::json deepspeed_config(const Plan& plan, Engine engine) {
  const ParallelConfig& c = plan.config;
  nlohmann::json cfg;
  // runtime/config.py _batch_assertion:
  // train_batch_size == train_micro_batch_size_per_gpu * gradient_accumulation_steps * dp.
  cfg["train_batch_size"] = c.gbs;
  cfg["train_micro_batch_size_per_gpu"] = c.mbs;
  cfg["gradient_accumulation_steps"] = c.gbs / (c.mbs * c.dp);
  cfg["gradient_clipping"] = 1.0;
  cfg["steps_per_print"] = 10;
  cfg["wall_clock_breakdown"] = false;

  nlohmann::json zero;
  zero["stage"] = c.zero;
  zero["overlap_comm"] = c.overlap_grad_reduce;
  zero["contiguous_gradients"] = true;
  zero["reduce_bucket_size"] = kZeroReduceBucketElements;
  if (c.zero == 3) {
    zero["stage3_prefetch_bucket_size"] = kZeroPrefetchBucketElements;
    zero["stage3_param_persistence_threshold"] = 100000;
    zero["stage3_max_live_parameters"] = 1000000000;
  } else if (c.zero >= 1) {
    zero["allgather_bucket_size"] = kZeroAllgatherBucketElements;
  }
  // ZeRO++ (docs/_tutorials/zeropp.md): hpZ, qwZ, qgZ.
  // Hierarchical partitioning: the part DeepSpeed's keys express is hpZ over
  // the plan's backward weight partition (hierarchical_extension_notes says
  // what needs the paper's extension).
  const int hpz = deepspeed_hpz_ranks(plan);
  if (hpz > 1) zero["zero_hpz_partition_size"] = hpz;
  if (c.qwz) zero["zero_quantized_weights"] = true;
  if (c.qgz) zero["zero_quantized_gradients"] = true;
  cfg["zero_optimization"] = zero;
  // Megatron-DeepSpeed hands its own SGD to deepspeed.initialize; ZeRO
  // asserts on optimizers outside ZERO_SUPPORTED_OPTIMIZERS (Adam, AdamW,
  // Adagrad, Lion) unless this key is set (DeepSpeed v0.17.0
  // deepspeed/runtime/engine.py:1341-1344, runtime/zero/utils.py:43-46).
  if (c.zero >= 1 && plan.job.optimizer == Optimizer::kSgd) cfg["zero_allow_untested_optimizer"] = true;

  if (plan.job.precision == Precision::kFp16) {
    // loss_scale 0 = dynamic loss scaling.
    cfg["fp16"] = {{"enabled", true}, {"loss_scale", 0}, {"initial_scale_power", 16}};
  } else {
    cfg["bf16"] = {{"enabled", true}};
  }
  // A gradient dtype the user chose (--grad-reduce-dtype) is what the plan
  // was costed with; without the key DeepSpeed reduces in the model's dtype
  // (runtime/engine.py communication_data_type, the key COMMUNICATION_DATA_TYPE
  // of runtime/constants.py at deepspeedai/DeepSpeed@edaa722).
  if (plan.job.grad_reduce != GradReduceDtype::kEngineDefault)
    cfg["communication_data_type"] = plan.job.grad_reduce == GradReduceDtype::kFp32 ? "fp32" : "bf16";
  if (plan.config.recompute == Recompute::kFull) {
    // The keys of deepspeed/runtime/activation_checkpointing/config.py
    // (DeepSpeed v0.17.0, ACT_CHKPT_*), read by deepspeed.checkpointing.configure;
    // Megatron-DeepSpeed hands it this file under
    // --deepspeed-activation-checkpointing (megatron/initialize.py:186), a
    // plain script calls it itself. Every layer of a stage is a checkpoint.
    const int stages = std::max(1, c.pp);
    cfg["activation_checkpointing"] = {{"partition_activations", partitions_checkpoints(plan.job, c)},
                                       {"contiguous_memory_optimization", false},
                                       {"cpu_checkpointing", false},
                                       {"number_checkpoints", plan.model.layers / stages},
                                       {"synchronize_checkpoint_boundary", false},
                                       {"profile", false}};
  }
  // An MoE pipe passes two tensors that need gradients between stages, which
  // DeepSpeed's PipelineEngine cannot partition over tp: GPTModelPipe asserts
  // both switches off in this file (megatron/model/gpt_model.py:375-384 at
  // Megatron-DeepSpeed 4efb479), while the engine defaults them on
  // (deepspeed/runtime/config.py get_pipeline_config, v0.17.0): written off.
  if (engine == Engine::kMegatronDeepSpeed && plan.model.is_moe() && c.pp > 1 && c.tp > 1)
    cfg["pipeline"] = {{"pipe_partitioned", false}, {"grad_partitioned", false}};
  // Megatron-DeepSpeed hands DeepSpeed its own optimizer (the same betas in
  // its arguments, optimizer_args); a plain script gets one from the config.
  if (engine == Engine::kDeepSpeed) {
    cfg["optimizer"] = {{"type", "AdamW"},
                        {"params",
                         {{"lr", 3.0e-4},
                          {"betas", {kAdamBeta1, kAdamBeta2}},
                          {"eps", kAdamEps},
                          {"weight_decay", kWeightDecay}}}};
  }
  return cfg;
}

std::string deepspeed_hostfile(const Layout& layout) {
  std::string text;
  if (layout.nnodes == 1) return "localhost slots=" + str(layout.nproc_per_node) + "\n";
  for (int node = 0; node < layout.nnodes; ++node) {
    text += "worker-" + str(node) + " slots=" + str(layout.nproc_per_node) + "\n";
  }
  return text;
}

}  // namespace parplan::emit_detail
