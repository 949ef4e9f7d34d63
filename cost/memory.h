// Memory per device: model states under ZeRO (Rajbhandari et al.) and
// activations per layer (Korthikanti et al. 2022, Table 2), generalised to
// grouped-query attention, gated FFNs and context parallelism.
#pragma once

#include "cost/spec/cluster_spec.h"
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

/// Bytes per parameter of the gradient buffer that data parallelism reduces.
/// Megatron-LM (the engine of zero <= 1 plans) under bf16 accumulates and
/// reduces main_grad in fp32 unless --grad-reduce-in-bf16
/// (megatron/training/arguments.py: "bfloat16 requires gradient accumulation
/// and all-reduce to be done in fp32"); fp16 keeps 16-bit gradients, and
/// DeepSpeed ZeRO-2/3 reduce in the model dtype (communication_data_type).
double gradient_bytes_per_param(Precision precision, int zero_stage);

/// Inputs of the per-layer activation formula.
struct ActivationShape {
  double seq = 0;          ///< s: tokens of one sequence (whole, before cp)
  double micro_batch = 0;  ///< b
  int tp = 1;
  int cp = 1;
  bool sp = false;
  bool flash_attention = true;
  Recompute recompute = Recompute::kNone;
};

/// 16-bit activation bytes one layer keeps for one micro-batch until its
/// backward pass. With tp = cp = 1, unfused attention and a GPT layer this is
/// Korthikanti's `s b h (34 + 5 a s / h)`.
double layer_activation_bytes(const ModelSpec& model, const ActivationShape& shape);
/// The part of a layer's activations that full recomputation keeps: its input.
double layer_input_bytes(const ModelSpec& model, const ActivationShape& shape);
/// Output layer: fp32 logits and their softmax for the cross-entropy
/// (Korthikanti 2022, sec. 4.3: 4 s b V / t bytes).
double logits_bytes(const ModelSpec& model, const ActivationShape& shape);

}  // namespace parplan
