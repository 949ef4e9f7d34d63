// Compute time of one transformer layer for one micro-batch on one device:
// GEMMs at a shape-dependent efficiency, the attention core (fused or not),
// and the memory-bound element-wise kernels at HBM bandwidth.
#pragma once

#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"

namespace parplan {

/// Time of a GEMM of m x n x k (an m x n output, k the reduction) on
/// `device` at `peak_flops_per_s`.
double gemm_time_s(const DeviceSpec& device, double peak_flops_per_s, double m, double n, double k);

/// Backward GEMMs of a linear layer whose forward is m x n x k (m tokens, n
/// outputs, k inputs): the input gradient m x k over n and the weight
/// gradient n x k over m. Twice the forward at equal efficiency in 16 bits;
/// in fp8 each runs at the efficiency of its own reduction length.
double gemm_backward_time_s(const DeviceSpec& device, double peak_flops_per_s, double m, double n, double k);

/// What one device does for one layer and one micro-batch.
struct LayerShape {
  double tokens = 0;  ///< b * s / cp: tokens this device holds
  double seq = 0;     ///< keys each query attends to (whole sequence)
  int tp = 1;
  /// Context-parallel size: attention runs as per-block kernels
  /// (context_parallel_attention_efficiency).
  int cp = 1;
  /// How the cp ranks exchange keys and values; each engine's merge passes
  /// (cost/cp_merge_passes.h): Transformer Engine's ring (kRingOverlapped),
  /// PyTorch's context_parallel as torchtitan runs it (kAllGatherKv).
  ContextParallelExchange cp_exchange = ContextParallelExchange::kRingOverlapped;
  /// The Transformer Engine release whose ring merge passes are counted.
  TransformerEngineVersion transformer_engine = TransformerEngineVersion::kMain;
  bool sp = false;
  bool flash_attention = true;
  bool is_moe = false;
  AttentionKernel kernel = AttentionKernel::kProfile;
  bool fused_elementwise = true;
  /// JobSpec::composed_rms_norm.
  bool composed_rms_norm = false;
  /// JobSpec::separate_qkv, JobSpec::separate_gate_up.
  bool separate_qkv = false;
  bool separate_gate_up = false;
  /// JobSpec::unpadded_attention.
  bool unpadded_attention = false;
  /// JobSpec::document_tokens (0: one document per sequence).
  double document_tokens = 0;
  /// fp8 linear layers (Transformer Engine, delayed scaling): each GEMM
  /// input and output gradient is cast to fp8 by its own kernel.
  bool fp8 = false;
  /// JobSpec::te_layernorm_linear and fp8_scaling (layer_compute_times).
  bool te_layernorm_linear = false;
  bool fp8_current_scaling = false;
};

/// Seconds a memory-bound kernel moving `bytes` through HBM takes: the
/// datasheet bandwidth at the profile's memory-bound efficiency.
inline double memory_bound_s(const DeviceSpec& device, double bytes) {
  return bytes / (device.hbm_bytes_per_s * device.memory_bound_efficiency);
}

/// The GEMM time each sequence-parallel collective of a layer can hide
/// behind when it is fused with the matmul it feeds or comes from
/// (cost/micro_pipeline_tp.h): the forward GEMMs of the column-parallel
/// inputs (QKV, FFN in) and of the row-parallel outputs (attention out, FFN
/// out), and the row-parallel layers' input-gradient GEMMs. Zero where the
/// layer has no such GEMM here (MLA's projections, an MoE layer's FFN).
struct TpGemmWindows {
  double attention_in_s = 0;
  double attention_out_s = 0;
  double ffn_in_s = 0;
  double ffn_out_s = 0;
  double attention_out_dgrad_s = 0;
  double ffn_out_dgrad_s = 0;
};

struct LayerComputeTimes {
  double forward_s = 0;
  double backward_s = 0;
  /// The attention core alone (scores, softmax, dropout, times V) in the
  /// forward pass: what selective recomputation repeats.
  double attention_forward_s = 0;
  /// The attention core in the backward pass (context-parallel exchanges
  /// hide behind its per-block kernels).
  double attention_backward_s = 0;
  /// The linear layers' GEMMs of the forward pass (backward: twice): what
  /// Transformer Engine's userbuffers overlap tp traffic with.
  double gemm_forward_s = 0;
  /// A dense layer's FFN in the forward pass: its GEMMs, the norm before it,
  /// its activation and its fp8 casts (what Megatron's --recompute-modules
  /// mlp repeats). 0 in an MoE layer.
  double ffn_forward_s = 0;
  TpGemmWindows tp_windows;
};

/// The fp8 cast kernels of one layer and micro-batch (zero unless
/// shape.fp8): element counts of the GEMM inputs and of the GEMM output
/// gradients, attention projections and FFN apart. Memory-bound.
struct Fp8CastTimes {
  double forward_s = 0;
  double backward_s = 0;
};
Fp8CastTimes fp8_cast_times(const DeviceSpec& device, const LayerShape& shape, double attention_inputs,
                            double attention_output_grads, double ffn_inputs, double ffn_output_grads);

LayerComputeTimes layer_compute_times(const ModelSpec& model, const DeviceSpec& device,
                                      double peak_flops_per_s, const LayerShape& shape);

/// Forward and backward time of the LM head and cross-entropy on the last
/// stage, and of the embedding on the first, for one micro-batch. The head's
/// GEMM runs at the 16-bit peak whatever `peak_flops_per_s`; the loss is the
/// memory-bound passes of the job's cross-entropy kernel (cost/loss_passes.h).
struct EdgeComputeTimes {
  double head_forward_s = 0;
  double head_backward_s = 0;
  double embedding_s = 0;
};
EdgeComputeTimes edge_compute_times(const ModelSpec& model, const DeviceSpec& device, double peak_flops_per_s,
                                    double tokens, int tp, CrossEntropy loss = CrossEntropy::kFused);

/// Adam step over `params` local parameters: memory-bound, reading and
/// writing the fp32 master weights, both moments, the gradient and the
/// 16-bit weights; per operator, every update term's own pass.
double optimizer_step_s(const DeviceSpec& device, double params,
                        OptimizerKernels kernels = OptimizerKernels::kFused);

}  // namespace parplan
