// Per-stage recomputation: how many layers each pipeline stage recomputes in
// full so that it fits in memory while the slowest stage stays as fast as
// possible.
#pragma once

#include <vector>

#include "solvers/certificate.h"
#include "solvers/milp_model.h"
#include "solvers/solve.h"

namespace parplan {

/// Every vector has one entry per stage.
struct RecomputeSplitInput {
  /// Layers on stage s (n_s): at most this many can be recomputed.
  std::vector<int> layers_per_stage;
  /// Time of stage s without recomputation.
  std::vector<double> base_time_s;
  /// Extra time of stage s per recomputed layer (>= 0).
  std::vector<double> recompute_time_s;
  /// Memory of stage s without recomputation.
  std::vector<double> memory_bytes;
  /// Memory saved on stage s per recomputed layer (>= 0).
  std::vector<double> saved_bytes_per_layer;
  /// Memory available on stage s (may be +inf).
  std::vector<double> memory_cap_bytes;
};

struct RecomputeSplitResult {
  /// Layers recomputed per stage (k_s); empty when no choice fits.
  std::vector<int> recompute_layers;
  /// max_s(base_time_s[s] + k_s * recompute_time_s[s]); +inf when infeasible.
  double makespan_s = kInfinity;
  /// status kInfeasible when even k_s = n_s does not fit on some stage.
  SolverCertificate certificate;

  bool feasible() const { return !recompute_layers.empty(); }
};

/// Fewest layers stage s must recompute to fit: the smallest integer k >= 0
/// with memory - k * saved <= cap (a cap exceeded by no more than 1e-9 of a
/// layer's saving counts as met); n_s + 1 when even k = n_s does not fit.
/// Throws std::invalid_argument on an invalid input (sizes differ, negative
/// or NaN values).
int stage_min_recompute_layers(const RecomputeSplitInput& input, int stage);

/// Closed form: k_s = stage_min_recompute_layers(s) on every stage (time only
/// grows with k_s, so the fewest that fit is optimal for every stage and
/// hence for the makespan). Certificate backend "closed_form", gap 0.
RecomputeSplitResult recompute_split_fast(const RecomputeSplitInput& input);

/// The MILP: integer k_s in [0, n_s], continuous makespan M, minimise M s.t.
///   time_s:   M - r_s * k_s >= base_s         (times scaled by a constant)
///   memory_s: k_s >= stage_min_recompute_layers(s)  (memory_s - k_s * saved_s
///             <= cap_s written in whole layers: exact for integer k_s)
/// At most one continuous variable per row: the exhaustive backend solves it.
MilpModel recompute_split_model(const RecomputeSplitInput& input);

/// Builds recompute_split_model and solves it; makespan_s is evaluated from
/// the returned k_s, the certificate's objective and bound are in seconds.
/// Off the critical path the MILP may recompute more layers than needed (the
/// makespan is the same); the fast path's k_s are the ones to plan with.
RecomputeSplitResult recompute_split_milp(const RecomputeSplitInput& input, SolverBackend backend,
                                          const SolveOptions& options = SolveOptions{});

}  // namespace parplan
