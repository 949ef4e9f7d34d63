// Attention dropout inside a fused attention kernel: the kernel draws its
// random mask as it goes (FlashAttention-2 from a Philox counter per
// element), which costs time the FLOP count does not show.
#pragma once

#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"

namespace parplan {

/// How much longer a causal attention kernel's passes take with dropout
/// than without (1 = no change).
struct AttentionTimeFactor {
  double forward = 1;
  double backward = 1;
};

/// Measured on one H100 SXM5 (calibration/h100-kernels/attention_dropout.csv:
/// causal, 32 heads of 128, 16k tokens per call, dropout 0.1 against 0,
/// calls queued back to back) for FlashAttention-2 (SDPA's flash path; also
/// the profile's own FlashAttention-2-class kernel, kProfile) and cuDNN's
/// fused attention, at 2k to 16k tokens, log-interpolated and held flat
/// outside. The mask's cost does not depend on the probability, so any
/// dropout > 0 takes the measured factor. Other kernels (FlashAttention-3
/// has no dropout; the Triton and flex kernels are not measured) and
/// devices the H100 figures do not apply to: 1.
AttentionTimeFactor attention_dropout_time_factor(const DeviceSpec& device, AttentionKernel kernel,
                                                  double seq, double dropout);

}  // namespace parplan
