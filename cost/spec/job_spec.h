// JobSpec: what the user asks for: a model on a cluster with a batch, and the
// dimensions they pin for the search.
#pragma once

#include "cost/spec/cluster_spec.h"

namespace parplan {

enum class Optimizer { kAdam, kSgd };

/// A dimension of the search the user fixed (0 / kUnset = free).
struct SearchPins {
  int tp = 0, pp = 0, vp = 0, cp = 0, dp = 0, mbs = 0, zero = -1, recompute = -1;
  int recompute_layers = -1;
  int sp = -1;               // -1 free, 0 off, 1 on
  int flash_attention = -1;  // -1 the cluster's default
  int zeropp = -1;
  int hierarchical_partition = -1;
  /// Expert-parallel and expert tensor-parallel sizes (MoE).
  int ep = 0, etp = 0;
};

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
  /// MoE: expert capacity factor (tokens an expert takes over its fair
  /// share before dropping); 0 = dropless routing.
  double capacity_factor = 0.0;

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
