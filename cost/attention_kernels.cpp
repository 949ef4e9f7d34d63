#include "cost/attention_kernels.h"

#include <algorithm>
#include <cmath>

namespace parplan {

namespace {
// Shah et al. 2024, "FlashAttention-3: Fast and Accurate Attention with
// Asynchrony and Low-precision" (arXiv 2407.08608), H100 80GB SXM5, bf16/fp16,
// head dim 128, batch x seq = 16k tokens, hidden 2048; TFLOP/s at sequence
// lengths 512, 1k, 2k, 4k, 8k, 16k. Forward: Figure 5, causal panel (the
// causal FLOPs counted once, as here). Backward: Figure 6 publishes the
// non-causal backward only; the causal backward is taken as that times the
// kernel's causal / non-causal forward ratio at the same length (the same
// masked-block skipping), non-causal forward from Figure 5.
constexpr int kPoints = 6;
constexpr double kLog2SeqFirst = 9.0;  // 512
struct KernelFigures {
  double causal_forward[kPoints];
  double noncausal_forward[kPoints];
  double noncausal_backward[kPoints];
};
constexpr KernelFigures kFlash2 = {
    {191, 260, 298, 319, 333, 335}, {309, 350, 362, 368, 370, 370}, {214, 260, 291, 310, 318, 322}};
constexpr KernelFigures kCudnn = {
    {315, 410, 484, 518, 529, 539}, {497, 574, 617, 609, 600, 595}, {305, 408, 465, 499, 518, 516}};
constexpr KernelFigures scaled(const KernelFigures& f, double forward, double backward) {
  KernelFigures out{};
  for (int i = 0; i < kPoints; ++i) {
    out.causal_forward[i] = forward * f.causal_forward[i];
    out.noncausal_forward[i] = forward * f.noncausal_forward[i];
    out.noncausal_backward[i] = backward * f.noncausal_backward[i];
  }
  return out;
}
// PyTorch's FlexAttention (torchtitan main's attention) over
// FlashAttention-2, causal, measured in one run on one H100 SXM5
// (calibration/h100-kernels/attention_flex.csv, calibration/measure/
// h100_flex.py: PyTorch 2.11, flex_attention under torch.compile against
// SDPA's flash path, 32 heads of 128, 16k tokens per call up to 16k) at 2k,
// 4k, ..., 128k tokens; log-interpolated, flat outside. Its Triton backward
// runs 1.2 to 1.5 times FlashAttention-2's. The PyTorch blog that introduced
// it (2024-08-07) gave 0.90 forward and 0.85 backward on an A100; on the
// H100 the measured shares replace those. torchtitan's autotuned inductor
// options (max_autotune, coordinate_descent_tuning) ran within 1 to 10 % of
// these defaults at 2k, 8k and 32k in the same run. Non-causal blocks are
// assumed to keep the causal shares (not measured).
constexpr int kFlexPoints = 7;
constexpr double kFlexLog2First = 11.0;  // 2k
constexpr double kFlexForwardShare[kFlexPoints] = {220.1 / 256.8, 309.4 / 301.4, 341.9 / 330.6, 373.7 / 339.8,
                                                   407.9 / 361.9, 431.6 / 312.6, 401.0 / 317.5};
constexpr double kFlexBackwardShare[kFlexPoints] = {
    321.0 / 219.8, 370.8 / 260.6, 403.2 / 290.8, 411.5 / 313.9, 410.0 / 319.1, 372.9 / 321.3, 376.3 / 320.3};
// FlashAttention's Triton kernel (flash_attn_triton.py, Tri Dao 2022; the
// one llm-foundry's `attn_impl: triton` runs): its forward + backward speed
// over FlashAttention-2's at the same lengths, causal, head dim 128, on an
// A100 80GB SXM4: 50/99, 61/133, 68/155, 74/173, 78/182, 80/189 TFLOP/s
// at 512 ... 16k (Dao-AILab/flash-attention README, "FlashAttention-2"
// benchmark figure assets/flash2_a100_fwd_bwd_benchmark.png, panel d; the
// kernel's own header: forward + backward "slightly slower" than
// FlashAttention 1, 83 at 16k in the same panel). The shape over lengths is
// carried over to FlashAttention-2's H100 figures (FlashAttention 1 keeps
// the same share of FlashAttention-2 on an H100: 98/163 ... 137/328, the
// README's H100 figure, panel d), its level by the fitted factor below. The
// figure gives forward and backward together: the ratio applies to each pass
// (and, for context-parallel blocks, to the non-causal figures: panel b's
// 0.47-0.48 from 2k on).
constexpr double kTritonShare[kPoints] = {50.0 / 99,  61.0 / 133, 68.0 / 155,
                                          74.0 / 173, 78.0 / 182, 80.0 / 189};
constexpr KernelFigures scaled_per_length(const KernelFigures& f, const double (&share)[kPoints]) {
  KernelFigures out{};
  for (int i = 0; i < kPoints; ++i) {
    out.causal_forward[i] = share[i] * f.causal_forward[i];
    out.noncausal_forward[i] = share[i] * f.noncausal_forward[i];
    out.noncausal_backward[i] = share[i] * f.noncausal_backward[i];
  }
  return out;
}
// On an H100 the kernel keeps more of FlashAttention-2's speed than on an
// A100 (llm-foundry ran it through a triton-pre-mlir build patched for sm_90,
// `triton_pre_mlir_sm90`); no kernel benchmark of it there is published. The
// A100 shares are scaled by one factor, fitted to named calibration runs:
// llm-foundry's H100 BF16 table, MPT-3B on 8 to 64 GPUs at 512 to 64K
// tokens (calibration/llm-foundry-triton-fit.yaml, 10 runs, which therefore
// are not held out). Least mean step-time error on a 0.01 grid: 11.31 % at
// 1.00 (the A100 shares as they are), 7.28 % at 1.10, 3.14 % at 1.27, 3.01 %
// at 1.28, 2.99 % at 1.29 (least; worst run 7.1 %), 3.03 % at 1.30, 5.81 %
// at 1.50 (the cost model as of FSDP's exposed first gather); with
// Composer's per-operator optimizer step priced, 2.94 / 2.90 / 2.93 % at
// 1.28 / 1.29 / 1.30; with FSDP1's per-micro-batch gradient cast and
// division priced (JobSpec::sharded_grad_passes), 2.00 / 1.93 / 1.90 (least;
// worst run 5.3 %) / 1.91 / 1.92 % at 1.30 / 1.31 / 1.32 / 1.33 / 1.34; with
// dgx-h100 refitted beside attention dropout's cost (cost/attention_dropout.h),
// 2.38 / 2.30 (least; worst run 6.4 %) / 2.30 / 2.32 / 2.34 % at 1.29 / 1.30 /
// 1.31 / 1.32 / 1.33; with ZeRO-3's reduce-scatter in fp32 on the wire,
// 2.17 / 2.07 / 2.05 (least; worst run 5.8 %) / 2.07 / 2.08 % at 1.29 / 1.30 /
// 1.31 / 1.32 / 1.33; with the non-reentrant checkpoint's replay stopping
// before the output projection (cost/recompute_replay.h; two of the ten runs
// recompute), 1.92 / 1.83 / 1.80 (least; worst run 4.4 %) / 1.82 / 1.83 % at
// 1.29 / 1.30 / 1.31 / 1.32 / 1.33.
constexpr double kTritonH100Factor = 1.31;
constexpr KernelFigures kTritonFlash =
    scaled(scaled_per_length(kFlash2, kTritonShare), kTritonH100Factor, kTritonH100Factor);
constexpr KernelFigures kFlash3 = {
    {292, 423, 521, 579, 602, 616}, {467, 565, 625, 638, 646, 648}, {316, 424, 501, 542, 559, 561}};
// The same paper's head-dim-64 panels (Figure 5, causal and non-causal
// forward at head dim 64; Figure 6, non-causal backward at head dim 64),
// same lengths and setup (hidden 2048, so 32 heads of 64): a narrower head
// does half the work per byte of K and V read, and every kernel keeps less
// of the peak.
constexpr KernelFigures kFlash2Hd64 = {
    {180, 229, 262, 284, 295, 299}, {282, 306, 318, 321, 322, 324}, {198, 238, 264, 279, 287, 291}};
constexpr KernelFigures kCudnnHd64 = {
    {225, 288, 334, 363, 379, 388}, {335, 373, 395, 408, 412, 413}, {266, 348, 395, 417, 432, 433}};
constexpr KernelFigures kFlash3Hd64 = {
    {197, 265, 371, 420, 460, 473}, {333, 392, 460, 476, 496, 497}, {272, 363, 422, 453, 472, 474}};
// The peak the figures are measured against: H100 SXM5 dense bf16.
constexpr double kH100PeakTflops = 989.4;

// Past the paper's 16k: each kernel's speed at 32k, 64k and 128k relative to
// its own 16k, measured on one H100 SXM5 (calibration/h100-kernels/
// attention.csv: PyTorch 2.11 SDPA, causal, 32 heads of 128, batch 1,
// forward and backward; FlashAttention-2 is SDPA's flash path, cuDNN its
// cuDNN path at cuDNN 9.19). Longer sequences run more blocks per head, so
// the forward loses a few per cent to the longer softmax rescaling chain
// while the backward holds. FlashAttention-3 is not in SDPA: held at its 16k
// figure.
constexpr int kLongPoints = 4;  // 16k, 32k, 64k, 128k
struct LongScale {
  double forward[kLongPoints];
  double backward[kLongPoints];
};
constexpr LongScale kFlash2Long = {{1.0, 350.1 / 336.5, 333.1 / 336.5, 315.2 / 336.5},
                                   {1.0, 306.3 / 311.5, 312.3 / 311.5, 320.3 / 311.5}};
constexpr LongScale kCudnnLong = {{1.0, 612.5 / 601.1, 589.0 / 601.1, 534.3 / 601.1},
                                  {1.0, 539.4 / 553.4, 533.8 / 553.4, 535.0 / 553.4}};
constexpr LongScale kFlat = {{1.0, 1.0, 1.0, 1.0}, {1.0, 1.0, 1.0, 1.0}};

// FlashAttention-2's off-diagonal context-parallel block, measured: the
// slowest block a load-balanced ring runs is s_l queries against s_l / 2 keys
// (the other kind, s_l / 2 queries against s_l keys, runs 3 to 6 % faster,
// and every step waits for the slower), non-causal, 32 heads of 128, on one
// H100 SXM5 through SDPA's flash path (calibration/h100-kernels/
// attention_noncausal.csv, TFLOP/s of 4 sq sk d per head, backward 2.5x).
// At s_l = 8192 and 32768; log-interpolated, held flat outside. A square of
// the same FLOPs runs 5 to 9 % faster forward (the paper's 370 at 16k).
constexpr double kFlash2CpBlockLog2First = 13.0;  // s_l = 8192
constexpr double kFlash2CpBlockForward[2] = {334.1, 333.7};
constexpr double kFlash2CpBlockBackward[2] = {285.5, 303.1};

// A kernel's published panels: its own head-dim-128 figures (none for
// FlexAttention, a share of FlashAttention-2's: flex_share) and the
// head-dim-64 panel with the 128 one it is read against. The Triton
// kernel's and FlexAttention's are shares of FlashAttention-2's, taken to
// hold at either width, so they take FlashAttention-2's pair.
struct KernelPanels {
  const KernelFigures* own = nullptr;
  const KernelFigures* narrow = nullptr;  // head dim 64
  const KernelFigures* wide = nullptr;    // head dim 128, narrow's counterpart
};

KernelPanels panels(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::kFlash2:
      return {&kFlash2, &kFlash2Hd64, &kFlash2};
    case AttentionKernel::kFlash3:
      return {&kFlash3, &kFlash3Hd64, &kFlash3};
    case AttentionKernel::kCudnn:
      return {&kCudnn, &kCudnnHd64, &kCudnn};
    case AttentionKernel::kTritonFlash:
      return {&kTritonFlash, &kFlash2Hd64, &kFlash2};
    case AttentionKernel::kFlex:
      return {nullptr, &kFlash2Hd64, &kFlash2};
    case AttentionKernel::kProfile:
      break;
  }
  return {};
}

const KernelFigures* figures(AttentionKernel kernel) { return panels(kernel).own; }

const LongScale& long_scale(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::kFlash2:
    case AttentionKernel::kTritonFlash:  // its 16k share of FlashAttention-2 beyond
      return kFlash2Long;
    case AttentionKernel::kCudnn:
      return kCudnnLong;
    default:
      return kFlat;
  }
}

template <int N>
double interpolate(const double (&table)[N], double seq, double log2_first) {
  const double x = std::clamp(std::log2(std::max(seq, 1.0)) - log2_first, 0.0, N - 1.0);
  const int i = std::min(static_cast<int>(x), N - 2);
  const double t = x - i;
  return table[i] * (1.0 - t) + table[i + 1] * t;
}

// A figure at `seq`: the paper's table up to 16k, then its 16k figure times
// the kernel's measured long-sequence scale.
double figure(const double (&table)[kPoints], AttentionKernel kernel, double seq, bool backward) {
  constexpr double kLog2LongFirst = kLog2SeqFirst + kPoints - 1;  // 16k
  const LongScale& scale = long_scale(kernel);
  return interpolate(table, seq, kLog2SeqFirst) *
         interpolate(backward ? scale.backward : scale.forward, seq, kLog2LongFirst);
}
}  // namespace

namespace {
// FlexAttention's figure: FlashAttention-2's at the same length times the
// measured share.
double flex_share(double seq, bool backward) {
  return interpolate(backward ? kFlexBackwardShare : kFlexForwardShare, seq, kFlexLog2First);
}

// A pass's figure within the paper's lengths (no long-sequence scale): the
// causal backward skips the same masked blocks as the causal forward.
double paper_figure(const KernelFigures& f, double seq, bool backward, bool causal) {
  if (!backward) return interpolate(causal ? f.causal_forward : f.noncausal_forward, seq, kLog2SeqFirst);
  const double noncausal = interpolate(f.noncausal_backward, seq, kLog2SeqFirst);
  return causal ? noncausal * interpolate(f.causal_forward, seq, kLog2SeqFirst) /
                      interpolate(f.noncausal_forward, seq, kLog2SeqFirst)
                : noncausal;
}

// A kernel's speed at head width `head_dim` over its speed at 128: the
// paper's head-dim-64 panel over its 128 one at the same length (held at
// 16k beyond), linear in the width between 64 and 128, 1 from 128 up
// (wider heads: the figures of 128, as before) and the 64 ratio below 64.
double head_dim_factor(AttentionKernel kernel, double seq, bool backward, bool causal, int head_dim) {
  if (head_dim <= 0 || head_dim >= 128) return 1.0;
  const KernelPanels p = panels(kernel);
  const KernelFigures* narrow = p.narrow;
  const KernelFigures* wide = p.wide;
  if (narrow == nullptr || wide == nullptr) return 1.0;
  const double ratio =
      paper_figure(*narrow, seq, backward, causal) / paper_figure(*wide, seq, backward, causal);
  const double toward_64 = std::min(1.0, (128.0 - head_dim) / 64.0);
  return 1.0 + (ratio - 1.0) * toward_64;
}
}  // namespace

double published_attention_tflops(AttentionKernel kernel, double seq, bool backward, int head_dim) {
  const double width = head_dim_factor(kernel, seq, backward, true, head_dim);
  if (kernel == AttentionKernel::kFlex)
    return width * flex_share(seq, backward) *
           published_attention_tflops(AttentionKernel::kFlash2, seq, backward);
  const KernelFigures* f = figures(kernel);
  if (f == nullptr) return 0;
  const double forward = figure(f->causal_forward, kernel, seq, false);
  if (!backward) return width * forward;
  // The causal backward skips the same masked blocks as the causal forward.
  return width * figure(f->noncausal_backward, kernel, seq, true) *
         interpolate(f->causal_forward, seq, kLog2SeqFirst) /
         interpolate(f->noncausal_forward, seq, kLog2SeqFirst);
}

double published_noncausal_attention_tflops(AttentionKernel kernel, double seq, bool backward, int head_dim) {
  const double width = head_dim_factor(kernel, seq, backward, false, head_dim);
  if (kernel == AttentionKernel::kFlex)
    return width * flex_share(seq, backward) *
           published_noncausal_attention_tflops(AttentionKernel::kFlash2, seq, backward);
  const KernelFigures* f = figures(kernel);
  if (f == nullptr) return 0;
  return width * figure(backward ? f->noncausal_backward : f->noncausal_forward, kernel, seq, backward);
}

int attention_kernel_head_dim(AttentionKernel kernel, int head_dim) {
  if (head_dim <= 0) return head_dim;
  switch (kernel) {
    case AttentionKernel::kFlash2:
      return (head_dim + 31) / 32 * 32;
    case AttentionKernel::kFlash3:
      for (int width : {64, 96, 128, 192, 256})
        if (head_dim <= width) return width;
      return head_dim;
    case AttentionKernel::kTritonFlash:
    case AttentionKernel::kFlex: {
      int width = 16;
      while (width < head_dim) width *= 2;
      return width;
    }
    case AttentionKernel::kCudnn:
    case AttentionKernel::kProfile:
      break;
  }
  return head_dim;
}

bool h100_attention_figures_apply(const DeviceSpec& device) {
  return device.h100_kernel_figures ||
         std::abs(device.peak_bf16_flops_per_s / 1e12 - kH100PeakTflops) < 0.01 * kH100PeakTflops;
}

namespace {
bool published_figures_apply(const DeviceSpec& device, AttentionKernel kernel) {
  return kernel != AttentionKernel::kProfile && h100_attention_figures_apply(device);
}

// The profile's flash_attention_efficiency is a FlashAttention-2-class
// kernel's (dgx-a100: the FlashAttention-2 paper's A100 figures); the Triton
// kernel runs at its measured share of that, which the benchmark gives on
// an A100 itself.
double profile_efficiency(const DeviceSpec& device, double seq, AttentionKernel kernel) {
  const double share =
      kernel == AttentionKernel::kTritonFlash ? interpolate(kTritonShare, seq, kLog2SeqFirst) : 1.0;
  return share * device.flash_attention_efficiency * seq / (seq + device.attention_half_seq);
}
}  // namespace

AttentionEfficiency attention_efficiency(const DeviceSpec& device, AttentionKernel kernel, double seq,
                                         int head_dim) {
  if (published_figures_apply(device, kernel)) {
    return {published_attention_tflops(kernel, seq, false, head_dim) / kH100PeakTflops,
            published_attention_tflops(kernel, seq, true, head_dim) / kH100PeakTflops};
  }
  const double e = profile_efficiency(device, seq, kernel);
  return {e, e};
}

AttentionEfficiency context_parallel_attention_efficiency(const DeviceSpec& device, AttentionKernel kernel,
                                                          double seq, int cp, int head_dim) {
  if (cp <= 1) return attention_efficiency(device, kernel, seq, head_dim);
  const double local = seq / cp;
  const AttentionEfficiency diagonal = attention_efficiency(device, kernel, local, head_dim);
  const double block = local / std::sqrt(2.0);
  AttentionEfficiency off;
  if (published_figures_apply(device, kernel) && kernel == AttentionKernel::kFlash2) {
    // Interpolated in log2 of the rank's tokens (each pair's log2 distance is 2).
    const double x = std::clamp((std::log2(std::max(local, 1.0)) - kFlash2CpBlockLog2First) / 2.0, 0.0, 1.0);
    off.forward = head_dim_factor(kernel, block, false, false, head_dim) *
                  (kFlash2CpBlockForward[0] * (1 - x) + kFlash2CpBlockForward[1] * x) / kH100PeakTflops;
    off.backward = head_dim_factor(kernel, block, true, false, head_dim) *
                   (kFlash2CpBlockBackward[0] * (1 - x) + kFlash2CpBlockBackward[1] * x) / kH100PeakTflops;
  } else if (published_figures_apply(device, kernel)) {
    off.forward = published_noncausal_attention_tflops(kernel, block, false, head_dim) / kH100PeakTflops;
    off.backward = published_noncausal_attention_tflops(kernel, block, true, head_dim) / kH100PeakTflops;
  } else {
    off.forward = off.backward = profile_efficiency(device, block, kernel);
  }
  const double w_diagonal = 1.0 / cp;
  const double w_off = 1.0 - w_diagonal;
  return {1.0 / (w_diagonal / diagonal.forward + w_off / off.forward),
          1.0 / (w_diagonal / diagonal.backward + w_off / off.backward)};
}

}  // namespace parplan
