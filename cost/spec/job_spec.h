// JobSpec: what the user asks for: a model on a cluster with a batch, and the
// dimensions they pin for the search.
#pragma once

#include <array>

#include "cost/spec/cluster_spec.h"

namespace parplan {

enum class Optimizer { kAdam, kSgd };

/// Measured MoE imbalance at one expert-parallel size: the busiest rank's
/// tokens over the mean, from routing statistics (--routing-stats).
struct MeasuredEpImbalance {
  int ep = 0;  ///< 0: unused entry
  double imbalance = 1.0;
};

/// The dimensions of the search the user fixed (flags such as --tp, or the
/// `constraints:` block of a job file); every other dimension is searched.
/// Sizes use 0 for "free", switches and stages -1.
struct SearchPins {
  /// Tensor-parallel size (--tp); 0 = searched over the divisors of a node.
  int tp = 0;
  /// Pipeline-parallel size (--pp); 0 = searched.
  int pp = 0;
  /// Virtual stages per pipeline rank (--vp); 0 = searched.
  int vp = 0;
  /// Context-parallel size (--cp); 0 = searched (up to 64).
  int cp = 0;
  /// Data-parallel size (constraints: dp); 0 = whatever the others leave.
  int dp = 0;
  /// Micro-batch size (--mbs); 0 = searched.
  int mbs = 0;
  /// ZeRO stage 0..3 (--zero); -1 = searched (0..1 with pp > 1, else 0..3).
  int zero = -1;
  /// Recompute mode as Recompute's value (--recompute); -1 = searched.
  int recompute = -1;
  /// Layers per chunk that full recomputation recomputes
  /// (--recompute-layers); -1 = the fewest that fit.
  int recompute_layers = -1;
  /// Megatron sequence parallelism (--sp / --no-sp): 1 on, 0 off, -1 on
  /// whenever tp > 1.
  int sp = -1;
  /// Fused attention (--attention): 1 flash, 0 unfused, -1 the cluster's.
  int flash_attention = -1;
  /// ZeRO++ (--zeropp): 1 only ZeRO++, 0 never, -1 searched.
  int zeropp = -1;
  /// Hierarchical partitioning (--hierarchical-partition): as zeropp.
  int hierarchical_partition = -1;
  /// Expert-parallel and expert tensor-parallel sizes (--ep, --etp; MoE);
  /// 0 = searched.
  int ep = 0, etp = 0;
};

/// The fused attention kernel the engine runs (cost/attention_kernels.h).
/// kProfile: the profile's flash_attention_efficiency, which a calibrated
/// profile fitted to its runs' kernel.
enum class AttentionKernel { kProfile, kFlash2, kFlash3, kCudnn };

struct JobSpec {
  /// Devices (ranks) in the job.
  int gpus = 0;
  /// Global batch in sequences and sequence length in tokens.
  int gbs = 0;
  int seq = 0;
  Precision precision = Precision::kBf16;
  Optimizer optimizer = Optimizer::kAdam;
  SearchPins pins;
  /// MoE: load of the busiest expert-parallel rank over the mean (max/mean,
  /// from routing statistics); 0 = the cost model's default for the
  /// model's balancing scheme (cost/moe.h).
  double moe_imbalance = 0.0;
  /// MoE: the same measured per expert-parallel size (every divisor of the
  /// expert count, contiguous placement); used when moe_imbalance is 0.
  /// A fixed array so a JobSpec copies without allocating.
  std::array<MeasuredEpImbalance, 64> measured_ep_imbalance{};
  /// MoE: expert capacity factor (tokens an expert takes over its fair
  /// share before dropping); 0 = dropless routing.
  double capacity_factor = 0.0;
  /// MoE: bytes of the expert-parallel all-to-all over the uncompressed
  /// volume (LSH-MoE style token compression, lossy; 1 = none).
  double a2a_compression = 1.0;
  /// Attention kernel the engine runs (Transformer Engine's cuDNN fused
  /// attention, PyTorch SDPA's flash path = FlashAttention-2, ...).
  AttentionKernel attention_kernel = AttentionKernel::kProfile;
  /// Element-wise kernels (norms, activation, residual adds, rope) fused as
  /// Megatron-LM/Transformer Engine or torch.compile run them; false: eager
  /// PyTorch, one HBM round trip per operator (cost/compute_time.cpp).
  bool fused_elementwise = true;

  /// HBM a plan keeps free, beyond the cost model's own reservations:
  /// a fraction of usable HBM plus bytes (--memory-headroom).
  double memory_headroom_fraction = 0.0;
  double memory_headroom_bytes = 0.0;
  /// The HBM a plan may fill: usable HBM less the headroom.
  double memory_budget_bytes(double usable_hbm_bytes) const {
    return usable_hbm_bytes * (1.0 - memory_headroom_fraction) - memory_headroom_bytes;
  }

  /// Bytes of optimizer state per parameter beyond the 16-bit weights and
  /// gradients (ZeRO's K): fp32 master copy + Adam momentum + variance = 12.
  double optimizer_state_bytes_per_param() const { return optimizer == Optimizer::kAdam ? 12.0 : 8.0; }
};

}  // namespace parplan
