#include "solvers/fit_run.h"

#include "cost/step_cost.h"

namespace parplan {

ClusterSpec run_cluster(const FitRun& run, const ClusterSpec& profile) {
  const ClusterSpec& cluster = run.own_cluster ? *run.own_cluster : profile;
  if (run.hbm_bytes <= 0) return cluster;
  ClusterSpec own = cluster;
  // What the driver and ECC leave allocatable, as a fraction of the HBM, is
  // taken from the profile (dgx-h100: nvidia-smi's 81559 of 81920 MiB);
  // assumed to carry over to the run's part.
  own.device.hbm_usable_bytes = cluster.device.usable_hbm_bytes() / cluster.device.hbm_bytes * run.hbm_bytes;
  own.device.hbm_bytes = run.hbm_bytes;
  return own;
}

RunPrediction predict_run(const FitRun& run, const ClusterSpec& profile) {
  const ClusterSpec cluster = run_cluster(run, profile);
  RunPrediction best;
  bool have = false;
  bool have_fitting = false;
  const int max_vp = run.best_vp ? run.model.layers : run.config.vp;
  const int max_mbs = run.best_mbs ? run.config.gbs : run.config.mbs;
  const int first_vp = run.best_vp ? 1 : run.config.vp;
  const int first_mbs = run.best_mbs ? 1 : run.config.mbs;
  for (int mbs = first_mbs; mbs <= max_mbs; mbs = run.best_mbs ? mbs * 2 : mbs + 1) {
    for (int vp = first_vp; vp <= max_vp; ++vp) {
      ParallelConfig c = run.config;
      c.vp = vp;
      c.mbs = mbs;
      if (run.best_vp && vp > 1 && c.pp == 1) break;
      if (config_problem(run.model, run.job, c) != nullptr) continue;
      const CostReport report = estimate_cost(run.model, cluster, run.job, c);
      const bool fits = report.memory.fits;
      // A fitting choice beats any that does not; among equals, the fastest.
      const bool better =
          !have || (fits && !have_fitting) || (fits == have_fitting && report.time.step_s < best.step_s);
      if (better) {
        best.step_s = report.time.step_s;
        best.peak_bytes = report.memory.peak_bytes;
        best.vp = vp;
        best.mbs = mbs;
        best.fits = fits;
        have = true;
        have_fitting = have_fitting || fits;
      }
    }
  }
  return best;
}

}  // namespace parplan
