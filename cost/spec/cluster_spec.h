// ClusterSpec: the hardware a job runs on: one device type and a hierarchy of
// network tiers from the innermost (e.g. two GCDs in a package) outward.
#pragma once

#include <string>
#include <vector>

#include "cost/overlap.h"

namespace parplan {

enum class Precision { kBf16, kFp16, kFp8 };
enum class NicKind { kIntraNode, kInfiniBand, kRoce, kEthernet, kSlingshot };

/// One accelerator (a GPU, or one GCD of an MI250X: whatever is one rank).
struct DeviceSpec {
  std::string name;
  /// Dense peak FLOP/s per dtype (datasheet).
  double peak_bf16_flops_per_s = 0;
  double peak_fp16_flops_per_s = 0;
  double peak_fp8_flops_per_s = 0;
  /// HBM capacity and peak bandwidth (datasheet).
  double hbm_bytes = 0;
  /// What the driver lets a process allocate (nvidia-smi's total; 0: all of
  /// hbm_bytes). Plans must fit in this.
  double hbm_usable_bytes = 0;
  double hbm_bytes_per_s = 0;
  /// Fraction of peak a large, well-shaped GEMM reaches.
  double gemm_efficiency_max = 0.8;
  /// GEMM efficiency curve: eff = max * d / (d + half) with d the smallest of
  /// the GEMM's three dimensions (thin GEMMs fill fewer tiles and waves).
  double gemm_half_dim = 64;
  /// ... times W / (W + half_flops) with W the GEMM's FLOPs: small GEMMs run
  /// few waves of tiles and pay launch and tail costs (0 disables).
  double gemm_half_flops = 0;
  /// fp8 GEMMs against bf16 GEMMs of the same shape, from a paired
  /// benchmark: eff_fp8 / eff_bf16 = ratio_max (d + bf16_half) / (d + half)
  /// with d the GEMM's reduction length K (fp8 tensor cores take twice the
  /// K per instruction, so a short reduction leaves them starved). ratio_max 0: no fp8 figures; fp8 GEMMs run
  /// at the bf16 efficiency against the fp8 peak.
  double fp8_gemm_ratio_max = 0;
  double fp8_gemm_half_dim = 0;
  double fp8_gemm_bf16_half_dim = 0;
  /// Fraction of peak reached by a fused (flash) attention kernel.
  double flash_attention_efficiency = 0.5;
  /// Fraction of HBM bandwidth reached by memory-bound element-wise kernels.
  double memory_bound_efficiency = 0.7;
  /// Memory the runtime keeps for itself (CUDA/ROCm context, NCCL buffers,
  /// cuBLAS workspace) and the allocator's fragmentation headroom.
  double reserved_bytes = 0;
  double allocator_headroom_fraction = 0.0;
  /// Compute slowdown while communication overlaps it (see cost/overlap.h;
  /// default: Lee et al. 2025 average over A100, H100, MI250, MI210).
  double overlap_compute_slowdown = kOverlapComputeSlowdown;
  /// Fixed time per transformer layer per micro-batch, forward and backward
  /// together (kernel launches, framework work between kernels); a third in
  /// the forward pass, two thirds in the backward. Fitted (parplan
  /// calibrate); 0 = none.
  double layer_overhead_s = 0;
  /// Least GPU time of one kernel queued behind others (launch, ramp-up and
  /// drain, whatever its size): what a small memory-bound kernel costs where
  /// its bytes would take less. Measured (calibration/h100-kernels/
  /// kernel_floor.csv); 0 = not measured, kernels cost their bytes only.
  /// Priced where a layer launches many small kernels the bytes model
  /// pools: Transformer Engine's per-expert fp8 casts (cost/moe.cpp).
  double kernel_floor_s = 0;
  /// Sequence length at which the fused attention kernel reaches half of
  /// flash_attention_efficiency: eff(s) = eff * s / (s + half) (short
  /// sequences fill fewer thread blocks per head). Fitted; 0 = independent
  /// of the sequence length.
  double attention_half_seq = 0;
  /// The part is an H100 SXM5 at another clock (a power limit, the NVL
  /// card): the published attention-kernel figures, measured on the SXM5,
  /// keep their fraction of the part's own peak, since every SM runs at the
  /// same lower clock. false: they apply only where the bf16 peak is the
  /// SXM5's (profile key `kernel_figures`).
  bool h100_kernel_figures = false;
  /// Half-width of the range the peak is known to, over the peak (profile
  /// key `peak_uncertainty_percent`): a vendor that publishes no peak for
  /// the part leaves a bracket of datasheet figures. 0 = a datasheet figure.
  double peak_uncertainty = 0;
  /// The part's board power limit (W; profile key `power_limit_w`, 0: the
  /// chip's own) and the clock ratio its tensor-core kernels run at against
  /// the limit its efficiencies hold at (cost/power_cap.h); the peaks above
  /// are already scaled by it.
  double power_limit_w = 0;
  double power_clock_ratio = 1;
  /// The profile names the H100 SXM5's measured power curve
  /// (`power_curve: h100-sxm5`): a job may set another limit.
  bool h100_power_curve = false;

  double usable_hbm_bytes() const { return hbm_usable_bytes > 0 ? hbm_usable_bytes : hbm_bytes; }

  double peak_flops_per_s(Precision precision) const {
    switch (precision) {
      case Precision::kFp16:
        return peak_fp16_flops_per_s;
      case Precision::kFp8:
        return peak_fp8_flops_per_s > 0 ? peak_fp8_flops_per_s : peak_bf16_flops_per_s;
      case Precision::kBf16:
        break;
    }
    return peak_bf16_flops_per_s;
  }
};

/// One level of the network hierarchy. A tier's domain is the set of ranks
/// that talk over links of this tier or faster ones.
struct NetworkTier {
  std::string name;
  /// Ranks in one domain of this tier (the outermost tier: 0 = unbounded).
  int ranks = 0;
  /// Bandwidth one rank gets, one direction, when all ranks of the domain
  /// communicate at once (a node's NIC bandwidth divided by its ranks).
  double bandwidth_bytes_per_s = 0;
  /// Per-message (per ring step) latency.
  double latency_s = 0;
  /// Fraction of the bandwidth that collectives reach (bus bandwidth).
  double efficiency = 1.0;
  NicKind nic = NicKind::kIntraNode;

  double effective_bytes_per_s() const { return bandwidth_bytes_per_s * efficiency; }
};

/// Nodes of one NIC type inside a heterogeneous cluster.
struct NodeGroup {
  std::string name;
  int nodes = 0;
  NicKind nic = NicKind::kInfiniBand;
  /// The inter-node tier inside the group (replaces the cluster's outer tier).
  NetworkTier fabric;
};

/// What the profile's `calibration:` block says about its accuracy (parplan
/// calibrate). Negative errors: the profile is uncalibrated.
struct ProfileCalibration {
  double mean_step_error = -1;
  double max_step_error = -1;
  /// Leave-one-out over the calibration runs (negative: not computed).
  double cv_mean_step_error = -1;
  int runs = 0;
  bool calibrated() const { return mean_step_error >= 0; }
};

/// The site's wall-time limit for jobs of min_nodes..max_nodes nodes (a
/// scheduler's size bins, e.g. OLCF Frontier's "Job Priority by Node Count").
struct WallTimeBin {
  int min_nodes = 1;
  int max_nodes = 1;
  double max_hours = 0;
};

/// The profile's `batch_limits:` block: the partition the launch files ask
/// for and its wall-time limit per node count. Empty bins: no known limit.
struct BatchLimits {
  std::string partition;
  std::string source;
  std::vector<WallTimeBin> bins;
};

struct ClusterSpec {
  std::string name;
  DeviceSpec device;
  /// Innermost first; the last tier spans the whole cluster.
  std::vector<NetworkTier> tiers;
  /// Ranks (devices) per node.
  int ranks_per_node = 8;
  /// Nodes in the cluster (0 = as many as asked for).
  int nodes = 0;
  /// Heterogeneous clusters: node groups in rank order, and the link between
  /// groups. Empty for a uniform cluster.
  std::vector<NodeGroup> groups;
  NetworkTier inter_group;
  /// How the collective library runs all-gather and reduce-scatter over a
  /// group that spans nodes. false: the hierarchical model (each tier pays
  /// its own latency once per collective; the calibrated default). true: one
  /// ring over all the group's ranks, as NCCL and RCCL do (ring is their only
  /// algorithm for these two): every collective pays base latency plus one
  /// step latency per rank of the ring (the intra-node tier's for steps
  /// inside a node, the network's for steps between nodes; RCCL's tuning
  /// model), and ZeRO-3 issues one collective per parameter bucket.
  bool ring_collectives = false;
  /// Fixed latency of one collective call (ring_collectives only).
  double collective_base_latency_s = 0;
  /// Attention kernel the cluster's software stack uses unless told otherwise.
  bool default_flash_attention = true;
  /// Launch conventions.
  bool frontier_launch = false;
  std::string launcher_default = "torchrun";
  BatchLimits batch_limits;
  ProfileCalibration calibration;

  bool heterogeneous() const { return !groups.empty(); }
};

}  // namespace parplan
