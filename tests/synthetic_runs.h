// Test helper: a hidden H100 profile with seven known fitted constants and
// runs "measured" on it (the cost model under the hidden profile), for the
// calibration tests.
#pragma once

#include <string>
#include <vector>

#include "cost/fitted_constants.h"
#include "cost/step_cost.h"
#include "solvers/fit_run.h"
#include "src/io/model_loader.h"

namespace parplan {

struct HiddenProfile {
  ClusterSpec cluster;
  std::vector<FittedConstant> constants;
  std::vector<double> values;
};

/// dgx-h100 with seven constants moved away from the shipped values.
inline HiddenProfile hidden_h100_profile(const ClusterSpec& base) {
  HiddenProfile h;
  h.cluster = base;
  const std::pair<const char*, double> moved[] = {
      {"gemm_efficiency_max", 0.66}, {"flash_attention_efficiency", 0.42}, {"attention_half_seq", 1200},
      {"tiers[1].efficiency", 0.50}, {"overlap_compute_slowdown", 0.30},   {"layer_overhead_s", 3e-4},
      {"reserved_bytes", 3.2e9},
  };
  for (const auto& [key, value] : moved) {
    h.constants.push_back(*find_fitted_constant(base, key));
    h.values.push_back(value);
    set_fitted_value(h.cluster, h.constants.back(), value);
  }
  return h;
}

struct RunDesign {
  std::string model;
  int gpus = 8, gbs = 64, seq = 4096, tp = 1, pp = 1, vp = 1, mbs = 1, zero = 1;
  bool sp = false, overlap = true;
  Recompute recompute = Recompute::kNone;
  bool measure_memory = true;
};

/// Short sequences and long, one node and several, overlapped gradient
/// reduction and not: what it takes to tell the seven constants apart.
inline std::vector<RunDesign> synthetic_designs() {
  std::vector<RunDesign> d;
  auto add = [&](const char* model, int gpus, int gbs, int seq, int tp, int pp, int mbs, bool overlap) {
    RunDesign r;
    r.model = model, r.gpus = gpus, r.gbs = gbs, r.seq = seq, r.tp = tp, r.pp = pp, r.mbs = mbs;
    r.overlap = overlap;
    r.sp = tp > 1;
    d.push_back(r);
  };
  add("llama3-8b", 8, 64, 4096, 1, 1, 1, true);
  add("llama3-8b", 16, 32, 8192, 1, 1, 1, false);
  add("llama3-8b", 64, 128, 4096, 1, 1, 2, true);
  add("llama3-8b", 32, 16, 32768, 4, 1, 1, true);
  add("gpt-1.7b", 8, 256, 1024, 1, 1, 8, true);
  add("gpt-1.7b", 16, 128, 2048, 1, 1, 4, false);
  add("llama3-70b", 64, 64, 4096, 8, 2, 1, true);
  add("llama3-70b", 32, 16, 16384, 8, 4, 1, false);
  add("gpt-7.5b", 16, 64, 2048, 2, 1, 2, true);
  return d;
}

inline FitRun design_run(const ClusterSpec& truth, const RunDesign& d) {
  FitRun run;
  run.name = d.model + "-" + std::to_string(d.gpus) + "gpu-seq" + std::to_string(d.seq);
  run.model = load_model(d.model);
  run.job.gpus = d.gpus;
  run.job.gbs = d.gbs;
  run.job.seq = d.seq;
  run.config.tp = d.tp;
  run.config.pp = d.pp;
  run.config.vp = d.vp;
  run.config.dp = d.gpus / (d.tp * d.pp);
  run.config.mbs = d.mbs;
  run.config.gbs = d.gbs;
  run.config.zero = d.zero;
  run.config.sp = d.sp;
  run.config.recompute = d.recompute;
  run.config.overlap_grad_reduce = d.overlap;
  const CostReport truth_cost = estimate_cost(run.model, truth, run.job, run.config);
  run.measured_step_s = truth_cost.time.step_s;
  if (d.measure_memory) run.measured_peak_bytes = truth_cost.memory.peak_bytes;
  return run;
}

inline std::vector<FitRun> synthetic_runs(const ClusterSpec& truth, const std::vector<RunDesign>& designs) {
  std::vector<FitRun> runs;
  for (const auto& d : designs) runs.push_back(design_run(truth, d));
  return runs;
}

}  // namespace parplan
