// The host-device wait of a dropless MoE dispatch: which dispatches wait,
// how many kernels the host launches after the wait (counted from Megatron-LM
// and Transformer Engine's source), and the GPU time the wait exposes when
// the host launches them slower than the GPU runs them (docs/cost-model-moe.md,
// "Host synchronisation of the dropless dispatcher").
#pragma once

#include "cost/spec/job_spec.h"

namespace parplan {

/// Whether Megatron's token dispatcher waits on the host once per MoE layer
/// forward: it does unless every expert is padded to its capacity, whose
/// split sizes the host knows in advance (MoEAlltoAllTokenDispatcher.
/// preprocess returns before setting a sync point, and
/// _maybe_dtoh_and_synchronize skips both the copy and the wait;
/// megatron/core/transformer/moe/token_dispatcher.py @ core_v0.15.0,
/// 23e00ed, l. 429-545 and 822; the allgather dispatcher copies
/// tokens_per_expert to the host with .cpu()).
bool moe_dispatch_waits_on_host(const JobSpec& job);

/// What sets the number of kernels after the wait, for one rank.
struct MoeSyncLaunchShape {
  int local_experts = 1;     ///< E / ep
  bool ep_alltoall = false;  ///< ep > 1: the dispatch and combine all-to-alls
  bool fp8 = false;
  bool fp8_current_scaling = false;
  bool fp8_split_padding = false;  ///< moe_fp8_pads_splits
};

/// Kernels one MoE layer's forward launches after the wait, up to the
/// combine. With ep > 1: the all-to-alls of the rows and their
/// probabilities and the combine's (3), permutation 2 and its inverse when
/// there are several local experts (make_chunk_sort_map and
/// sort_chunks_by_map each way: 4; TransformerEngine
/// pytorch/permutation.py @ v2.9, 70f5366). Under fp8 with unaligned
/// splits: Fp8Padding of the rows and of the probabilities and
/// Fp8Unpadding (fused_multi_row_padding / _unpadding: 3). FC1 and FC2 per
/// local expert: one cuBLAS GEMM each (general_grouped_gemm on Hopper),
/// plus under current scaling each input's cast, 4 kernels
/// (Float8CurrentScalingQuantizer::quantize_impl, pytorch/csrc/quantizer.cpp:
/// zero_amax_kernel and the amax kernel of nvte_compute_amax_with_config,
/// nvte_compute_scale_from_amax, nvte_quantize_v2), split by split
/// (split_quantize, extensions/cast.cpp); under delayed scaling one fused
/// multi-tensor cast per grouped GEMM. The weighted SwiGLU and
/// unpermutation 1 (2). The fp8 weights are cast on a step's first
/// micro-batch only (GroupedLinear's is_first_microbatch; Megatron's
/// TEGroupedLinear, megatron/core/extensions/transformer_engine.py @
/// core_v0.15.0, l. 1266-1270), so not counted.
int moe_launches_after_host_wait(const MoeSyncLaunchShape& shape);

/// GPU time the host wait exposes: after the wait the GPU's queue is empty,
/// the host launches kernel i at i x host_s_per_launch and the GPU runs
/// each as soon as it is launched and the one before is done, so the GPU
/// idles at least launches x host_s_per_launch - gpu_s, with gpu_s the GPU
/// time of those kernels (a lower bound: idling early in the sequence,
/// before long kernels, counts in full). 0 when the GPU is the slower side.
double host_launch_exposed_s(int launches, double host_s_per_launch, double gpu_s);

}  // namespace parplan
