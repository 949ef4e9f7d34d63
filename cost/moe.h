// Mixture-of-experts layers: what one rank holds and computes in an MoE
// layer (router, routed experts as a grouped GEMM, shared experts), the
// activations it keeps, the load imbalance that sets the pace of the
// expert-parallel group, and DeepSeek-V3's multi-token-prediction module.
#pragma once

#include "cost/memory.h"
#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

/// Router weights of one MoE layer (h x E; plus a bias per expert: the
/// balancing bias of auxiliary-loss-free routing, or the router's own where
/// the linear layers carry biases, as GPT-OSS's).
double router_params(const ModelSpec& model);
/// One expert's FFN, with its biases where the linear layers carry them.
double one_expert_params(const ModelSpec& model);
/// The routed experts of one MoE layer (all of them).
double routed_expert_params(const ModelSpec& model);
/// The shared experts of one MoE layer.
double shared_expert_params(const ModelSpec& model);
/// All multi-token-prediction modules (DeepSeek-V3 sec. 2.2): per module one
/// transformer layer (an MoE layer when the model has experts), the 2h -> h
/// projection and two RMSNorms; the embedding and the output head are the
/// main model's, shared, and not counted again.
double mtp_params(const ModelSpec& model);
/// Forward FLOPs of one MoE layer's router for `tokens` tokens.
double router_forward_flops(const ModelSpec& model, double tokens);
/// Forward FLOPs of the multi-token-prediction modules for `tokens` tokens
/// in sequences of `seq`: their layers, projections and their own pass
/// through the shared output head.
double mtp_forward_flops(const ModelSpec& model, double tokens, int seq);

/// Excess of the busiest expert's load over the mean (MaxVio), per expert.
/// Auxiliary-loss routing: Fedus et al. 2022 (Switch Transformer, JMLR,
/// sec. 2.2 and Table 1) train with the balancing loss at capacity factor
/// 1.25 while dropping under 1 % of tokens, so the busiest expert stays
/// within 1.25x the mean. Loss-free routing (sigmoid scores + expert bias):
/// Wang et al. 2024 (arXiv 2408.15664) report MaxVio_global 0.04 for
/// Loss-Free Balancing (as read in its Table 2; check when calibrating).
inline constexpr double kAuxLossMaxVio = 0.25;
inline constexpr double kLossFreeMaxVio = 0.04;

/// Default load of the busiest expert-parallel rank over the mean when no
/// routing statistics are given: 1 + MaxVio / sqrt(experts per rank). A rank
/// sums the loads of its E / ep experts; with independent deviations the
/// excess of the sum shrinks as the square root of their number (an
/// assumption, stated in docs/cost-model-moe.md). 1 with ep == 1.
double default_moe_imbalance(const ModelSpec& model, int ep);
/// The imbalance a config runs at: the job's moe_imbalance, else the one
/// measured at the config's ep (routing statistics), else the default.
double moe_imbalance(const ModelSpec& model, const JobSpec& job, const ParallelConfig& config);
/// Tokens the busiest rank's experts process over the mean: the imbalance
/// when dropless; capped at the capacity factor when tokens are dropped;
/// the capacity factor itself when every expert is padded to capacity.
double moe_load_factor(const ModelSpec& model, const JobSpec& job, const ParallelConfig& config);

/// Rows an fp8 grouped GEMM's split must be a multiple of: Transformer
/// Engine's Fp8Padding aligns each expert's rows to 16 for fp8 recipes other
/// than MXFP8 (transformer_engine/pytorch/module/fp8_padding.py @ v2.9,
/// 70f5366: `self.align_size = 32 if ...mxfp8() else 16`).
inline constexpr int kFp8SplitAlignRows = 16;
/// Whether the expert block's fp8 grouped GEMMs get their inputs padded and
/// their outputs unpadded (Megatron's TEGroupedMLP calls Fp8Padding and
/// Fp8Unpadding under fp8, megatron/core/transformer/moe/experts.py @
/// core_v0.15.0; both return their input untouched when every split is
/// already aligned). Dropless routing (and dropping without padding) gives
/// each expert a data-dependent row count, which is almost never aligned for
/// all local experts; padding to capacity gives each expert capacity x etp x
/// ep rows, capacity = ceil(tokens x top_k / experts x factor)
/// (moe_utils.get_capacity; token_dispatcher.py @ core_v0.15.0), aligned
/// when that is a multiple of kFp8SplitAlignRows.
bool moe_fp8_pads_splits(const ModelSpec& model, const JobSpec& job, const ParallelConfig& config);

/// One MoE layer's expert block on one rank, one micro-batch.
struct MoeShape {
  double tokens = 0;  ///< b * s / cp: tokens of this rank's tp group
  int tp = 1;
  int etp = 1;
  int ep = 1;
  double load_factor = 1.0;  ///< from moe_load_factor
  /// fp8 training: the experts are Transformer Engine linear layers in fp8
  /// (their GEMMs on the fp8 curve, their inputs and gradients cast).
  bool fp8 = false;
  /// The fp8 grouped GEMMs' splits are padded (moe_fp8_pads_splits).
  bool fp8_split_padding = false;
  /// fp8 current scaling: each expert's input and output gradient gets an
  /// amax pass before its cast (moe_block_times).
  bool fp8_current_scaling = false;
  /// torchtitan's GroupedExperts (torchtitan/models/common/moe.py @
  /// b5bcd76c): w1, w3 and w2 each one torch._grouped_mm over all local
  /// experts' rows, operands cast to bf16, so timed as one GEMM of all the
  /// rows at the 16-bit peak (on an H100 a grouped GEMM of 8 to 128 experts'
  /// 512 rows runs 370 to 630 TFLOP/s where one GEMM per expert runs 75 to
  /// 210: calibration/h100-kernels/moe_gemm.csv), with no fp8 casts.
  bool one_grouped_kernel = false;
};

/// Bytes the token permutations of Megatron's alltoall dispatcher read and
/// write on one rank for one MoE layer and micro-batch
/// (MoEAlltoAllTokenDispatcher, megatron/core/transformer/moe/
/// token_dispatcher.py @ 0014f13; moe_utils.py permute, unpermute,
/// sort_chunks_by_idxs). Forward: permutation 1 gathers the rank's
/// tokens x top_k copies into expert order and unpermutation 1 scatters the
/// expert outputs back, each a read and a write of every copy's h 16-bit
/// elements (2 k T h elements of 2 bytes per pass, T = tokens / tp); with
/// ep > 1 and more than one local expert, permutation 2 and unpermutation 2 sort the rows
/// received from the all-to-all by local expert and back, each a read and a
/// write of every received row. Backward: each pass's gradient moves the
/// same bytes, and unpermutation 1's also reads the forward's copies for the
/// routing probabilities' gradient.
struct MoePermutationBytes {
  double forward = 0;
  double backward = 0;
};
MoePermutationBytes moe_permutation_bytes(const ModelSpec& model, const MoeShape& shape);

/// Bytes Transformer Engine's Fp8Padding and Fp8Unpadding read and write
/// on one rank for one MoE layer and micro-batch, per direction (forward =
/// backward): forward, fused_multi_row_padding copies the permuted input
/// into the aligned buffer and fused_multi_row_unpadding copies the expert
/// output back; backward, each one's gradient is the other copy
/// (transformer_engine/pytorch/module/fp8_padding.py, fp8_unpadding.py @
/// v2.9). Each copy reads and writes every received row of h 16-bit
/// elements: 2 x 2 x rows x h x 2 bytes. The padded routing probabilities
/// (4 bytes a row against 2h) are left out. 0 without fp8_split_padding.
double moe_fp8_padding_bytes(const ModelSpec& model, const MoeShape& shape);

struct MoeBlockTimes {
  double forward_s = 0;
  double backward_s = 0;
  double routed_forward_s = 0;  ///< of forward_s: the routed experts alone
};
/// Router (its GEMM in 16-bit: not a Transformer Engine module), routed
/// experts (Transformer Engine's grouped linear: one GEMM per local expert,
/// each of rows / (E / ep) rows, on the device's GEMM curve at that shape),
/// the token permutations (moe_permutation_bytes), fp8 casts of the experts'
/// GEMM inputs and gradients (under current scaling each routed expert's
/// cast is preceded by an amax pass reading its 16-bit input: GroupedLinear's
/// split_quantize quantizes split by split, its fused kernel being for
/// delayed scaling only, and Float8CurrentScalingQuantizer::quantize runs
/// nvte_compute_amax before nvte_quantize_v2; TransformerEngine
/// transformer_engine/pytorch/csrc/extensions/cast.cpp and quantizer.cpp @
/// v2.9), the fp8 split padding (moe_fp8_padding_bytes), and shared experts
/// (split over tp like a dense FFN).
MoeBlockTimes moe_block_times(const ModelSpec& model, const DeviceSpec& device, double peak_flops_per_s,
                              const MoeShape& shape);

/// Activation bytes one MoE layer keeps for one micro-batch: the attention
/// part of layer_activation_bytes plus the router's fp32 scores, the
/// dispatched token copies and the routed and shared experts' inputs.
double moe_layer_activation_bytes(const ModelSpec& model, const ActivationShape& shape, const MoeShape& moe);

/// GPU time Transformer Engine's split-by-split fp8 current-scaling cast
/// of `splits` expert inputs (rows_per_split x width each) takes beyond the
/// bytes it moves: four kernels per split (zero_amax, amax, scale from
/// amax, quantize; transformer_engine/pytorch/csrc/quantizer.cpp, one
/// call per split from split_quantize), each lasting at least the device's
/// kernel_floor_s. 0 where the floor is not measured.
double split_cast_floor_s(const DeviceSpec& device, double splits, double rows_per_split, double width);

}  // namespace parplan
