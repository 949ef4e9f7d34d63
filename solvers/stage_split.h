// Layer-to-stage split of a pipeline: how many transformer layers each
// pipeline stage gets so that the slowest stage is as fast as possible while
// every stage fits its memory. Stages may differ in speed (heterogeneous
// clusters), fixed work (embedding, LM head + loss) and memory per layer.
#pragma once

#include <vector>

#include "solvers/certificate.h"
#include "solvers/milp_model.h"
#include "solvers/solve.h"

namespace parplan {

/// All per-stage vectors have `stages` entries; the optional ones may be left
/// empty, meaning 0 (extra time, memory) or no cap (memory_cap_bytes).
struct StageSplitInput {
  /// Transformer layers to place (L).
  int layers = 0;
  /// Pipeline stages (S).
  int stages = 0;
  /// Time of one layer on stage s (forward + backward of all micro-batches,
  /// or any consistent relative unit). Required, >= 0.
  std::vector<double> layer_time_s;
  /// Fixed time on stage s: embedding on stage 0, LM head + loss on the last.
  std::vector<double> extra_time_s;
  /// Memory available on stage s.
  std::vector<double> memory_cap_bytes;
  /// Memory of one layer on stage s (differs per stage: 1F1B keeps p - s
  /// micro-batches of activations in flight on stage s).
  std::vector<double> layer_memory_bytes;
  /// Fixed memory on stage s (embedding, LM head, buffers).
  std::vector<double> extra_memory_bytes;
  /// Every stage gets at least this many layers.
  int min_layers_per_stage = 1;
  /// Megatron-LM's layout: only the first and last stage may differ
  /// (--decoder-first/last-pipeline-num-layers); stages 1 .. S-2 hold the
  /// same number of layers.
  bool equal_middle_stages = false;
};

struct StageSplitResult {
  /// Layers per stage, summing to `layers`; empty when no split exists.
  std::vector<int> layers_per_stage;
  /// max_s(extra_time_s[s] + layers_per_stage[s] * layer_time_s[s]) of the
  /// returned split; +inf when there is none.
  double makespan_s = kInfinity;
  /// status kInfeasible when no split fits; objective/best_bound in seconds.
  SolverCertificate certificate;

  bool feasible() const { return !layers_per_stage.empty(); }
};

/// Most layers stage s can hold within its memory cap (at most `layers`);
/// -1 when even its fixed memory does not fit. A layer fits when it exceeds
/// the cap by no more than 1e-9 of a layer (rounding noise).
/// Throws std::invalid_argument on an invalid input (wrong vector sizes,
/// negative or NaN values, stages < 1, layers < 0).
int stage_max_layers(const StageSplitInput& input, int stage);

/// Exact optimum without a solver, O(L log S): every stage starts at
/// min_layers_per_stage and each remaining layer goes to the stage whose time
/// after taking it is smallest (ties: lowest stage index). This takes the
/// L - S*min smallest per-layer increments, which is optimal for a makespan.
/// The certificate has backend "greedy", status kOptimal (or kInfeasible),
/// gap 0. Throws std::invalid_argument on an invalid input.
/// With equal_middle_stages the fast path enumerates the middle count x and
/// splits the rest between first and last stage exactly (O(L^2)); among
/// optimal splits it returns the one closest to even.
StageSplitResult stage_split_fast(const StageSplitInput& input);

/// The MILP: integer n_s in [min, L - (S-1)*min], continuous makespan M,
/// minimise M subject to
///   time_s:   M - t_s * n_s >= extra_s          (times scaled by a constant)
///   memory_s: n_s <= stage_max_layers(s)        (the memory cap, in layers)
///   layers:   sum_s n_s = L
///   middle_s: n_s = n_1 for s = 2 .. S-2      (equal_middle_stages only)
/// The memory rows are the cap written in whole layers, which is exact for
/// integer n_s and keeps byte-sized coefficients away from solver tolerances.
/// Every row holds at most one continuous variable, so the exhaustive backend
/// can solve it. Throws std::invalid_argument on an invalid input.
MilpModel stage_split_model(const StageSplitInput& input);

/// Builds stage_split_model and solves it. makespan_s is evaluated from the
/// returned split; the certificate's objective and bound are in seconds.
StageSplitResult stage_split_milp(const StageSplitInput& input, SolverBackend backend,
                                  const SolveOptions& options = SolveOptions{});

}  // namespace parplan
