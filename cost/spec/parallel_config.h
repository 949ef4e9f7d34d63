// ParallelConfig: one way to split a training job over the devices, the knobs
// Megatron-LM and DeepSpeed expose, in parplan's vocabulary (DESIGN.md).
#pragma once

namespace parplan {

enum class Recompute { kNone, kSelective, kFull };
enum class Schedule { kOneF1B, kInterleaved };

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
  int ep = 1;
  int etp = 1;
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
  /// Layers of the first and last pipeline stage when the split is uneven
  /// (0 = even split). Megatron --decoder-first/last-pipeline-num-layers.
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  /// ZeRO++ (DeepSpeed): hpZ secondary weight partition of hpz_ranks ranks,
  /// qwZ int8 weight all-gather, qgZ int4 gradient reduction.
  int hpz_ranks = 1;
  bool qwz = false;
  bool qgz = false;
  /// Frontier 3-level hierarchical partitioning (low-bandwidth partitioning).
  bool hierarchical_partition = false;

  int world() const { return tp * cp * pp * dp; }
  /// Micro-batches per pipeline per step.
  int micro_batches() const { return gbs / (mbs * dp); }
  Schedule schedule() const { return vp > 1 ? Schedule::kInterleaved : Schedule::kOneF1B; }
  bool zeropp() const { return hpz_ranks > 1 || qwz || qgz; }
};

}  // namespace parplan
