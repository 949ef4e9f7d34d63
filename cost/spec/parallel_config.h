// ParallelConfig: one way to split a training job over the devices, the knobs
// Megatron-LM and DeepSpeed expose, in parplan's vocabulary (DESIGN.md).
#pragma once

#include <array>
#include <cstdint>

namespace parplan {

enum class Recompute { kNone, kSelective, kFull };
enum class Schedule { kOneF1B, kInterleaved };

/// A level of the network hierarchy a ZeRO partition can live at: the ranks
/// of the data-parallel group inside one package (e.g. the two GCDs of an
/// MI250X; the node on clusters without a package tier), inside one node,
/// or the whole data-parallel group (the job).
enum class PartitionLevel : std::uint8_t { kPackage, kNode, kJob };

/// The level's name in job files, reports and launch-file comments.
constexpr const char* partition_level_name(PartitionLevel level) {
  switch (level) {
    case PartitionLevel::kPackage:
      return "package";
    case PartitionLevel::kNode:
      return "node";
    case PartitionLevel::kJob:
      break;
  }
  return "job";
}

/// Where hierarchical partitioning (Xu et al. 2025, "Scaling Large Language
/// Model Training on Frontier with Low-Bandwidth Partitioning") keeps each
/// partition of the model states. A partition at a level is sharded over the
/// data-parallel ranks of one domain of that level and replicated across the
/// domains; its collectives run inside the domain, and only the exchange
/// between replicas (once per step) crosses the outer tiers.
struct PartitionPlacement {
  /// 16-bit weights (primary partition): the forward all-gather runs here.
  PartitionLevel params = PartitionLevel::kPackage;
  /// Secondary weight partition for the backward all-gather (hpZ-like);
  /// equal to or inside `params`; equal means none.
  PartitionLevel params_secondary = PartitionLevel::kPackage;
  /// Gradients: reduce-scattered here every micro-batch; reduced across
  /// the replicas once per step.
  PartitionLevel grads = PartitionLevel::kNode;
  /// fp32 master weights and Adam states; at or outside `grads`.
  PartitionLevel optimizer = PartitionLevel::kJob;

  bool operator==(const PartitionPlacement&) const = default;
};

struct ParallelConfig {
  /// Tensor-parallel size: every linear layer split column/row-wise over tp
  /// ranks (Megatron --tensor-model-parallel-size). Stays inside a node.
  int tp = 1;
  /// Megatron sequence parallelism: layer norm and dropout activations split
  /// over the tp group; tp all-reduces become all-gather + reduce-scatter.
  bool sp = false;
  /// Context-parallel size: the sequence split over cp ranks, attention by
  /// ring exchange of keys/values (--context-parallel-size).
  int cp = 1;
  /// Pipeline-parallel size: layers split into pp stages.
  int pp = 1;
  /// Virtual stages (model chunks) per pipeline rank; >1 selects the
  /// interleaved 1F1B schedule (--num-layers-per-virtual-pipeline-stage).
  int vp = 1;
  /// Data-parallel size: world / (tp * cp * pp).
  int dp = 1;
  /// Expert-parallel size and expert tensor-parallel size (MoE only).
  /// Megatron's MoE parallel folding: inside a pipeline stage the expert
  /// grid etp x ep x edp spans the same ranks as tp x cp x dp, so
  /// edp = tp * cp * dp / (etp * ep) (--expert-model-parallel-size,
  /// --expert-tensor-parallel-size).
  int ep = 1;
  int etp = 1;
  /// Token dispatch and combine intra-node first, then one copy per
  /// destination node over the network (DeepEP's normal kernels, Megatron
  /// --moe-token-dispatcher-type flex); false: a flat all-to-all.
  bool a2a_hierarchical = false;
  /// The dispatch/combine all-to-all of one micro-batch runs beside another
  /// micro-batch's compute (Megatron --overlap-moe-expert-parallel-comm:
  /// needs ep > 1, pp == 1 or vp > 1, no full recomputation).
  bool ep_overlap = false;
  /// ZeRO stage over the data-parallel group: 0 none, 1 optimizer states,
  /// 2 + gradients, 3 + parameters (Megatron: 1 = --use-distributed-optimizer).
  int zero = 0;
  /// Micro-batch size and global batch size, in sequences.
  int mbs = 1;
  int gbs = 1;
  /// Activation recomputation: selective recomputes the attention core only;
  /// full recomputes whole layers, `recompute_layers` of them per model chunk
  /// (virtual stage), as Megatron's --recompute-method block
  /// --recompute-num-layers counts them (0 with kFull: every layer).
  Recompute recompute = Recompute::kNone;
  int recompute_layers = 0;
  /// Fused (flash) attention; false is the unfused kernel that stores the
  /// attention scores.
  bool flash_attention = true;
  /// Data-parallel gradient reduction overlapped with the backward pass
  /// (Megatron --overlap-grad-reduce, DeepSpeed overlap_comm).
  bool overlap_grad_reduce = true;
  /// Pipeline sends/receives overlapped with the next chunk's compute in the
  /// interleaved schedule (Megatron --overlap-p2p-communication, default on
  /// since Megatron-Core 0.5; the 2021-2022 code of the calibration runs had
  /// it off). No effect with vp == 1.
  bool overlap_p2p = true;
  /// Layers of the first and last pipeline stage when the split is uneven
  /// (0 = even split). Megatron --decoder-first/last-pipeline-num-layers.
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  /// ZeRO++ (DeepSpeed): hpZ secondary weight partition of hpz_ranks ranks,
  /// qwZ int8 weight all-gather, qgZ int4 gradient reduction.
  int hpz_ranks = 1;
  bool qwz = false;
  bool qgz = false;
  /// Frontier 3-level hierarchical partitioning (low-bandwidth partitioning):
  /// ZeRO-3 with the partitions placed per `partition` instead of over the
  /// whole data-parallel group (qwz/qgz quantize its collectives; hpz_ranks
  /// is unused).
  bool hierarchical_partition = false;
  PartitionPlacement partition;
  /// An arbitrary layer count per pipeline stage (heterogeneous clusters:
  /// the stage-split optimum), overriding the even and first/last splits
  /// when stage_split[0] > 0. Fixed size: the cost model stays allocation-free.
  static constexpr int kMaxSplitStages = 32;
  std::array<std::uint16_t, kMaxSplitStages> stage_split{};
  /// stage_split holds each rank's layers under the job's custom pipeline
  /// layout (JobSpec::pipeline_layout): a rank's virtual chunks may then
  /// hold different layer counts (apply_pipeline_layout, cost/stage_layout.h).
  bool pipeline_layout = false;

  bool operator==(const ParallelConfig&) const = default;
  int world() const { return tp * cp * pp * dp; }
  /// Micro-batches per pipeline per step.
  int micro_batches() const { return gbs / (mbs * dp); }
  Schedule schedule() const { return vp > 1 ? Schedule::kInterleaved : Schedule::kOneF1B; }
  /// ZeRO++ as DeepSpeed ships it (hpZ / qwZ / qgZ over the flat ZeRO-3
  /// partition); hierarchical partitioning is reported on its own.
  bool zeropp() const { return !hierarchical_partition && (hpz_ranks > 1 || qwz || qgz); }
  bool custom_split() const { return stage_split[0] > 0; }
  /// Expert data-parallel size (MoE parallel folding).
  int edp() const { return tp * cp * dp / (etp * ep > 0 ? etp * ep : 1); }
};

}  // namespace parplan
