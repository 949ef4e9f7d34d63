#pragma once

namespace parplan {

/// Compute slowdown while a collective runs beside it: communication kernels
/// take SMs (CUs) and HBM bandwidth from the GEMMs. Lee et al. 2025,
/// "Characterizing Compute-Communication Overlap in GPU-Accelerated
/// Distributed Deep Learning" (arXiv 2507.03114), measured on A100, H100,
/// MI250 and MI210: 18.9 % on average (40 % at most) against the same
/// compute with no communication beside it. Published figure, not fitted.
inline constexpr double kOverlapComputeSlowdown = 0.189;

/// Time that `comm_s` of communication adds to the critical path when it runs
/// beside `window_s` of compute slowed by `compute_slowdown` while they
/// overlap. Compute progresses at 1 / (1 + slowdown) while the traffic runs:
/// traffic that ends inside the slowed window costs comm * s / (1 + s);
/// traffic that outlasts it costs what sticks out, comm - window. No window
/// (no overlap) costs the whole transfer.
inline double exposed_after_overlap_s(double comm_s, double window_s, double compute_slowdown) {
  if (comm_s <= 0) return 0;
  if (window_s <= 0) return comm_s;
  const double slowed_window_s = window_s * (1.0 + compute_slowdown);
  if (comm_s >= slowed_window_s) return comm_s - window_s;
  return comm_s * compute_slowdown / (1.0 + compute_slowdown);
}

}  // namespace parplan
