// FLOP counts (matrix multiplies only, the convention of Narayanan 2021 and
// Korthikanti 2022): one layer forward, the LM head, and a whole step.
#pragma once

#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

/// Forward FLOPs of one layer for `tokens` tokens in sequences of `seq`.
struct LayerFlops {
  /// Weight GEMMs (projections and FFN).
  double linear_flops = 0;
  /// Attention core: Q K^T and attention-times-V, counted over the full
  /// s x s square as the papers do (a causal kernel does half of it).
  double attention_flops = 0;
  double total() const { return linear_flops + attention_flops; }
};

/// Dense layer (is_moe = false) or MoE layer (top-k plus shared experts).
LayerFlops layer_forward_flops(const ModelSpec& model, double tokens, int seq, bool is_moe);
/// Forward FLOPs of the LM head (logits) for `tokens` tokens.
double head_forward_flops(const ModelSpec& model, double tokens);

/// FLOPs of one step for `gbs` sequences: model FLOPs (forward + 2x backward,
/// no recomputation) and hardware FLOPs (adds what recomputation repeats).
struct StepFlops {
  double model_flops = 0;
  double hardware_flops = 0;
};
StepFlops step_flops(const ModelSpec& model, int gbs, int seq, Recompute recompute,
                     double recomputed_layer_fraction);

/// FLOPs selective recomputation adds to one step of `gbs` sequences, by
/// what it repeats: Megatron-LM's --recompute-modules (core_attn counted as
/// step_flops counts it, Korthikanti 2022's convention; mlp, moe and
/// mla_up_proj their layers' GEMMs forward once more; layernorm and
/// moe_act, element-wise, nothing) or torchtitan's op policy (the matmuls
/// it does not keep, wk, wo and w3, forward once more in each dense layer;
/// MoE layers as Megatron's core_attn, as their time is priced).
double selective_recompute_flops(const ModelSpec& model, const JobSpec& job, int gbs);

}  // namespace parplan
