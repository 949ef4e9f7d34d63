// Attention kernel efficiency per kernel, pass and sequence length: the
// engine picks the kernel (FlashAttention-2/3, cuDNN), not the GPU, and a
// kernel's backward runs at a different share of peak than its forward.
#pragma once

#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"

namespace parplan {

/// Fraction of the bf16 peak a causal attention kernel reaches, forward and
/// backward, counting the FLOPs of the unmasked half only.
struct AttentionEfficiency {
  double forward = 0;
  double backward = 0;
};

/// kProfile, and any kernel on a device without published figures: the
/// profile's flash_attention_efficiency (times s / (s + attention_half_seq))
/// for both passes; kTritonFlash at its published share of that (the
/// profile's figure is a FlashAttention-2-class kernel's). Otherwise the published H100 SXM5 figures of the
/// kernel (head dim 128; kTritonFlash: its A100 share of FlashAttention-2's times a factor fitted to
/// llm-foundry's H100 runs), interpolated in log2(seq) and held flat outside 512..16384 tokens; they apply to
/// devices with the H100 SXM5's 989.4 TFLOP/s dense bf16 peak (the Hopper SXM parts: H100, H800, H200).
/// `head_dim` is the width the kernel computes at (attention_kernel_head_dim): narrower than 128, the
/// published figures move toward the paper's head-dim-64 panels (linearly in the width; the 64 ones below
/// 64); 128 and wider keep the 128 figures.
AttentionEfficiency attention_efficiency(const DeviceSpec& device, AttentionKernel kernel, double seq,
                                         int head_dim = 128);

/// Whether the H100 SXM5 kernel measurements and figures apply to `device`:
/// a profile that says so (kernel_figures: h100-sxm5) or one with the H100
/// SXM5's 989.4 TFLOP/s dense bf16 peak.
bool h100_attention_figures_apply(const DeviceSpec& device);

/// Context parallelism runs each rank's causal attention as one kernel per
/// KV block: Megatron/Transformer Engine's ring (AttnFuncWithCPAndKVP2P) and
/// PyTorch's context_parallel (_templated_ring_attention) both lay the
/// sequence out load-balanced (rank r holds chunks r and 2cp-1-r) and run
/// one causal block of s/cp queries and keys (1/cp of the rank's work), then
/// cp - 1 non-causal blocks of s/cp x s/(2cp) (the rest). The result is the
/// work-weighted harmonic mean of the blocks' efficiencies (counting the
/// causal FLOPs of the rank's share, as attention_efficiency does). A
/// FlashAttention-2 off-diagonal block runs at its measured figure (s/cp
/// queries x s/(2cp) keys, the slower of the two kinds, on one H100 SXM5);
/// another kernel's, at the non-causal efficiency of the square of its
/// geometric-mean side. cp = 1 is attention_efficiency itself.
AttentionEfficiency context_parallel_attention_efficiency(const DeviceSpec& device, AttentionKernel kernel,
                                                          double seq, int cp, int head_dim = 128);

/// The head dimension `kernel` computes with for heads `head_dim` wide: a
/// fused kernel is compiled for a few widths and runs a narrower head
/// zero-padded to the next, so its tensor cores do the padded width's work
/// while the model counts the real one. FlashAttention-2 (flash_api.cpp:
/// head_size_rounded = round_multiple(head_size, 32) up to 128, and its
/// HEADDIM_SWITCH templates 32, 64, ..., 256): the next multiple of 32;
/// FlashAttention-3 (hopper/flash_api.cpp round_up_headdim): 64, 96, 128,
/// 192 or 256; the Triton kernel (flash_attn_triton.py, llm-foundry's copy
/// included: BLOCK_HEADDIM = max(next_power_of_2(d), 16)) and
/// FlexAttention (QK_HEAD_DIM_ROUNDED = next_power_of_two, torch/_inductor/
/// kernel/flex_attention.py): the next power of two, at least 16. cuDNN's
/// and a profile's kernel: `head_dim` (their tiling is not published).
int attention_kernel_head_dim(AttentionKernel kernel, int head_dim);

/// Published TFLOP/s of `kernel` on H100 SXM5 at `seq` and the kernel's
/// head width (as attention_efficiency): causal forward, and backward (0 for
/// kProfile).
double published_attention_tflops(AttentionKernel kernel, double seq, bool backward, int head_dim = 128);
/// The same for the non-causal kernel (full square).
double published_noncausal_attention_tflops(AttentionKernel kernel, double seq, bool backward,
                                            int head_dim = 128);

}  // namespace parplan
