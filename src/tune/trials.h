// parplan tune's choice of trial runs: the top plans of a job plus probes
// that each move one dimension of the top plan (exposed gradient reduction,
// micro-batch size, sequence length, one node), chosen greedily so the runs
// together best pin down the profile's fitted constants (D-optimal design
// over the cost model's sensitivities).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cost/fitted_constants.h"
#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"
#include "solvers/fit_run.h"
#include "src/emit/engine_capabilities.h"

namespace parplan {

struct Trial {
  std::string name;
  /// Why this run: "plan #2", "probe: gradient reduction not overlapped" ...
  std::string why;
  JobSpec job;
  ParallelConfig config;
  double predicted_step_s = 0;
  /// The best plan of another expert-parallel size than plan #1's (MoE):
  /// measured beside plan #1 whatever the design prefers, because the cost
  /// model ranks expert layouts only within its held-out MoE error.
  bool expert_layout = false;
};

/// The constants a tuning loop tries to pin: the step-time constants of
/// the profile (not the memory reserve, nor the second-order GEMM shape
/// terms and latencies).
std::vector<FittedConstant> tune_constants(const ClusterSpec& cluster);

/// The search stops at `deadline` (mesh shapes not started are skipped) and
/// then sets *stopped_at_deadline.
struct TrialSearchLimit {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  bool* stopped_at_deadline = nullptr;
  /// The engines whose space the top plans come from (the one the trials
  /// run on, so that plan #1 is that engine's best).
  EngineSelection engines;
  /// When the search finds no plan: the binding constraint in one sentence
  /// (SearchResult::infeasible_reason), and whether no config even divides
  /// the job (bad input rather than too little memory).
  std::string* infeasible_reason = nullptr;
  bool* no_valid_split = nullptr;
};

/// The `top` best plans of the job (search), best first.
std::vector<Trial> top_plan_trials(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                   int top, const TrialSearchLimit& limit = {});

/// For a MoE job whose ep is free: the best plan at each expert-parallel
/// size other than `best`'s and those in `skip_ep`, fastest first, at most
/// `count` (one pinned search per size, within the limit's deadline).
std::vector<Trial> expert_layout_trials(const ModelSpec& model, const ClusterSpec& cluster,
                                        const JobSpec& job, const Trial& best,
                                        const std::vector<int>& skip_ep, int count,
                                        const TrialSearchLimit& limit = {});

/// Top plans, the runner-up expert layouts (MoE) and probes; every trial
/// valid and fitting in memory.
std::vector<Trial> candidate_trials(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                    const TrialSearchLimit& limit = {});

/// K trials: the best plan first, then the fastest expert-layout trial
/// (MoE), then greedily the candidate that most increases log det of the
/// design's information matrix over `constants`.
std::vector<Trial> choose_trials(const ModelSpec& model, const ClusterSpec& cluster,
                                 const std::vector<Trial>& candidates,
                                 const std::vector<FittedConstant>& constants, int k);

/// The trials as runs "measured" at their predicted step time (for the
/// design analysis: the sensitivities do not depend on the measurement).
std::vector<FitRun> trial_runs(const ModelSpec& model, const std::vector<Trial>& trials);

}  // namespace parplan
