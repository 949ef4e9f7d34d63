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
/// for both passes. Otherwise the published H100 SXM5 figures of the kernel
/// (head dim 128), interpolated in log2(seq) and held flat outside
/// 512..16384 tokens; they apply to devices with the H100 SXM5's 989.4
/// TFLOP/s dense bf16 peak (the Hopper SXM parts: H100, H800, H200).
AttentionEfficiency attention_efficiency(const DeviceSpec& device, AttentionKernel kernel, double seq);

/// Published TFLOP/s of `kernel` on H100 SXM5 at `seq` (head dim 128):
/// causal forward, and backward (tests; 0 for kProfile).
double published_attention_tflops(AttentionKernel kernel, double seq, bool backward);

}  // namespace parplan
