// CostReport: what the cost model predicts for one ParallelConfig: step time
// and its parts, throughput, and memory per device.
#pragma once

#include <array>

namespace parplan {

/// Bytes one rank sends over each network tier in one step, and the time
/// those transfers take (before any overlap with compute). Index i is the
/// cluster's tier i; on a heterogeneous cluster the outermost index is the
/// inter-node fabric the group uses (its node group's, or the link between
/// groups). Fixed size: the cost model stays allocation-free.
struct TierTraffic {
  static constexpr int kMaxTiers = 6;
  std::array<double, kMaxTiers> bytes{};
  std::array<double, kMaxTiers> seconds{};
};

/// What bounds a config's step time (or, for memory, what makes it not fit).
enum class Limiter { kCompute, kBubble, kTpComm, kCpComm, kPpComm, kDpComm, kEpComm, kMemory };

struct TimeBreakdown {
  /// Wall time of one optimizer step.
  double step_s = 0;
  /// Compute of the slowest pipeline rank, all micro-batches, no bubble.
  double compute_s = 0;
  /// Pipeline fill and drain.
  double bubble_s = 0;
  /// Communication on the critical path per kind (exposed, not overlapped).
  double tp_comm_s = 0;
  double cp_comm_s = 0;
  double pp_comm_s = 0;
  double dp_comm_s = 0;
  /// MoE token dispatch/combine all-to-all left after overlap (with the
  /// expert-data-parallel gradient reduction in dp_comm_s).
  double ep_comm_s = 0;
  /// Sum of the exposed communication above.
  double exposed_comm_s = 0;
  /// Optimizer step (memory-bound update of the local shard).
  double optimizer_s = 0;
};

struct MemoryBreakdown {
  /// Peak bytes on the most loaded device (the stage named by peak_stage).
  double peak_bytes = 0;
  double params_bytes = 0;
  /// Of params_bytes: the secondary weight partition (hpZ or the
  /// hierarchical scheme's backward partition).
  double params_secondary_bytes = 0;
  double grads_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  /// One transformer layer, one micro-batch (Korthikanti 2022 Table 2).
  double activations_per_layer_bytes = 0;
  /// Communication buckets, gathered ZeRO-3 weights, runtime and allocator.
  double buffers_bytes = 0;
  double capacity_bytes = 0;
  int peak_stage = 0;
  bool fits = false;
};

struct Throughput {
  double tokens_per_s = 0;
  double model_tflops_per_gpu = 0;
  double hardware_tflops_per_gpu = 0;
  double mfu = 0;
  double hfu = 0;
};

struct CostReport {
  TimeBreakdown time;
  MemoryBreakdown memory;
  Throughput throughput;
  /// Parameters of the whole model.
  double params = 0;
  /// FLOPs per step without recomputation (model) and with it (hardware).
  double model_flops = 0;
  double hardware_flops = 0;
  Limiter limiter = Limiter::kCompute;
  /// Data-parallel (ZeRO) traffic per tier per step on the busiest stage.
  TierTraffic dp_traffic;
};

const char* limiter_name(Limiter limiter);
/// The limiter as a short key for table columns and CSV (limiter_name's
/// sentence form is for prose): compute, bubble, tp_comm, ..., memory.
const char* limiter_key(Limiter limiter);

}  // namespace parplan
