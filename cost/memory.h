// Memory per device: model states under ZeRO (Rajbhandari et al.) and
// activations per layer (Korthikanti et al. 2022, Table 2), generalised to
// grouped-query attention, gated FFNs and context parallelism.
#pragma once

#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

/// Bytes of weights, gradients and optimizer states for `params` parameters
/// held by one device before ZeRO sharding, sharded over `shard_ranks`.
struct ModelStateBytes {
  double params_bytes = 0;
  double grads_bytes = 0;
  double optimizer_bytes = 0;
  double total() const { return params_bytes + grads_bytes + optimizer_bytes; }
};
ModelStateBytes model_state_bytes(double params, int zero_stage, int shard_ranks,
                                  double optimizer_bytes_per_param, double grad_bytes_per_param = 2.0);
/// ZeRO-3 as PyTorch's FSDP keeps it under a mixed-precision policy: the
/// sharded parameter stays fp32 and is the optimizer's master copy, so no
/// sharded 16-bit copy exists (the 16-bit weights are gathered per unit,
/// counted as buffers): `states` of model_state_bytes moved from 2 bytes
/// per parameter plus a 4-byte master in the optimizer to a 4-byte shard.
void keep_fsdp_fp32_shards(ModelStateBytes& states, double params, int shard_ranks);

/// Bytes per parameter of the gradient buffer that data parallelism reduces.
/// Megatron-LM (the engine of zero <= 1 plans) under bf16 accumulates and
/// reduces main_grad in fp32 unless --grad-reduce-in-bf16
/// (megatron/training/arguments.py: "bfloat16 requires gradient accumulation
/// and all-reduce to be done in fp32"); fp16 keeps 16-bit gradients, and
/// DeepSpeed ZeRO-1/2/3 reduce in the model dtype (communication_data_type;
/// JobSpec::grad_reduce_for passes DeepSpeed's ZeRO-1 as bf16).
/// An explicit `reduce` dtype (--grad-reduce-dtype) overrides that default:
/// 4 bytes for fp32, 2 for bf16 (NVIDIA's NeMo Llama 3 recipes reduce in
/// bf16: NeMo-Framework-Launcher examples/training/llama/h100/
/// llama3_8b_bf16.sh, `optim.grad_sync_dtype=bf16`).
double gradient_bytes_per_param(Precision precision, int zero_stage,
                                GradReduceDtype reduce = GradReduceDtype::kEngineDefault);

/// Inputs of the per-layer activation formula.
struct ActivationShape {
  double seq = 0;          ///< s: tokens of one sequence (whole, before cp)
  double micro_batch = 0;  ///< b
  int tp = 1;
  int cp = 1;
  bool sp = false;
  bool flash_attention = true;
  Recompute recompute = Recompute::kNone;
  /// fp8 GEMMs that save their inputs as the fp8 cast (Transformer Engine;
  /// not torchao's Float8Linear, which keeps the 16-bit input: JobSpec).
  bool fp8 = false;
  CrossEntropy cross_entropy = CrossEntropy::kFused;
  SelectiveCheckpoint selective_checkpoint = SelectiveCheckpoint::kAttentionCore;
  RecomputeModules recompute_modules;
  /// JobSpec::moe_probs_in_activation.
  bool moe_probs_in_activation = false;
  /// Layer inputs kept by full recomputation are split over tp
  /// (JobSpec::partition_activations) where sp does not split them already.
  bool partitioned_checkpoint = false;
  /// Element-wise operators run one by one (JobSpec::fused_elementwise
  /// false): a gated FFN's silu(w1 x) * w3 x keeps the activation's output
  /// as the product's input beside the two projections' outputs.
  bool eager_elementwise = false;
};

/// Whether full recomputation's checkpoints are split over tp (the job asks
/// for it, and sequence parallelism does not split them already).
inline bool partitions_checkpoints(const JobSpec& job, const ParallelConfig& c) {
  return job.partition_activations && c.recompute == Recompute::kFull && c.tp > 1 && !c.sp;
}

/// Whether selective recomputation redoes this Megatron submodule (the
/// shape's recomputation is selective, Megatron-style, and lists it).
inline bool megatron_recomputes(const ActivationShape& shape, bool RecomputeModules::*module) {
  return shape.recompute == Recompute::kSelective &&
         shape.selective_checkpoint == SelectiveCheckpoint::kAttentionCore && shape.recompute_modules.*module;
}

/// 16-bit activation bytes one layer keeps for one micro-batch until its
/// backward pass. With tp = cp = 1, unfused attention and a GPT layer this is
/// Korthikanti's `s b h (34 + 5 a s / h)`.
double layer_activation_bytes(const ModelSpec& model, const ActivationShape& shape);
/// Bytes per token one layer keeps under torchtitan's op-level selective
/// checkpointing (SelectiveCheckpoint::kTorchtitanOps).
double torchtitan_op_checkpoint_bytes_per_token(const ModelSpec& model, const ActivationShape& shape);
/// The part of a layer's activations that full recomputation keeps: its input.
double layer_input_bytes(const ModelSpec& model, const ActivationShape& shape);
/// Output layer at the start of the backward pass, per logit per tp rank: a
/// fused / vocab-parallel cross-entropy keeps the fp32 logits of the local
/// vocabulary shard (Korthikanti 2022, sec. 4.3: 4 s b V / t bytes); an
/// eager fp32-upcast one (torchtitan: F.cross_entropy(pred.float(), ...))
/// the bf16 logits (2), their fp32 copy (4), the fp32 log-softmax it saves
/// (4) and its bf16 gradient being formed (2): 12 bytes; Transformer
/// Engine's Triton kernel (cross_entropy_fusion_impl "te") the 16-bit logits
/// it overwrites with their gradient: 2 bytes.
double loss_bytes_per_logit(CrossEntropy kernel);
double logits_bytes(const ModelSpec& model, const ActivationShape& shape);

}  // namespace parplan
