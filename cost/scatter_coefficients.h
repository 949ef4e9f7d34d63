// ScatterCoefficients: the per-step cost model of sequence scattering
// (FlexSP, Wang et al. ASPLOS 2025), and its derivation from parplan's cost
// model for a model, a cluster, a precision and a ZeRO stage.
#pragma once

#include <string>
#include <vector>

#include "cost/spec/cluster_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

/// Time of a group of p GPUs running sequences s_1..s_n one after another:
///   sum_k (quadratic_ms * s_k^2 + linear_ms * s_k) / p
///   + alltoall_ms_per_token[p] * sum_k s_k + fixed_ms,
/// and its memory: sum_k s_k / p <= token_capacity_per_gpu.
struct ScatterCoefficients {
  /// a: causal attention, milliseconds per token^2 (one GPU, whole step).
  double quadratic_ms = 0;
  /// b: the linear layers (and the rest that grows with tokens), ms per token.
  double linear_ms = 0;
  /// d: fixed cost every micro-batch pays once (ZeRO-3 gathers, launches).
  double fixed_ms = 0;
  /// Allowed group sizes, ascending; each divides the next.
  std::vector<int> group_sizes;
  /// c_p, one per group size: ms per token of the group's total tokens for
  /// the Ulysses all-to-alls over the tier a group of p aligned GPUs spans.
  std::vector<double> alltoall_ms_per_token;
  /// K: activation tokens one GPU can hold.
  double token_capacity_per_gpu = 0;
};

/// What the derivation assumes (FlexSP's setting by default: tp = pp = 1,
/// ZeRO-3 over all GPUs, flash attention).
struct ScatterCostSetting {
  int gpus = 0;
  Precision precision = Precision::kBf16;
  int zero = 3;
  Recompute recompute = Recompute::kNone;
  /// Bytes of optimizer state per parameter beyond the 16-bit weights (Adam: 12).
  double optimizer_bytes_per_param = 12.0;
};

/// Group sizes Ulysses allows on `gpus` GPUs: powers of two that divide
/// `gpus` and the number of attention heads (all-to-all splits heads).
std::vector<int> ulysses_group_sizes(const ModelSpec& model, int gpus);

/// One GPU's memory in the derivation's setting, in bytes.
struct ScatterMemory {
  /// HBM the job may use (after the runtime's reserve and allocator headroom).
  double usable_bytes = 0;
  /// The sharded model states, with ZeRO-3's two gathered layers.
  double state_bytes = 0;
  /// What is left for activations (usable - states; negative when short).
  double free_bytes = 0;
  /// Activations of one token of a sequence.
  double per_token_bytes = 0;
};
ScatterMemory scatter_memory_per_gpu(const ModelSpec& model, const ClusterSpec& cluster,
                                     const ScatterCostSetting& setting);

/// Derives every coefficient for `sizes` (ascending, each dividing the next
/// and `setting.gpus`) from the cost model. Pure.
ScatterCoefficients derive_scatter_coefficients(const ModelSpec& model, const ClusterSpec& cluster,
                                                const ScatterCostSetting& setting,
                                                const std::vector<int>& sizes);

/// Empty when the coefficients are usable on `gpus` GPUs; otherwise one
/// sentence naming the first problem (a size that does not divide the next
/// or `gpus`, a negative or non-finite number, a missing c_p, K <= 0).
std::string check_scatter_coefficients(const ScatterCoefficients& coefficients, int gpus);

/// Time (ms, without fixed_ms) of one sequence of `tokens` on group size
/// index `size_index`: (a s^2 + b s) / p + c_p s.
inline double scatter_sequence_ms(const ScatterCoefficients& c, int size_index, double tokens) {
  const double p = c.group_sizes[size_index];
  return (c.quadratic_ms * tokens * tokens + c.linear_ms * tokens) / p +
         c.alltoall_ms_per_token[size_index] * tokens;
}

}  // namespace parplan
