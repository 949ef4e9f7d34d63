// The planner: the joint search, then the solver formulations (stage split,
// recomputation per stage) on the chosen plan, with their certificates.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "solvers/certificate.h"
#include "solvers/solve.h"
#include "src/search/search.h"

namespace parplan {

struct PlannerOptions {
  int top_k = 5;
  /// cbc | glpk | exhaustive: the backend of the certifying MILPs.
  std::string solver = "cbc";
  /// Bound on each MILP solve (--solver-time-limit).
  double solver_time_limit_s = 10;
  /// Bound on the whole planning (--time-limit): the search stops starting
  /// mesh shapes and each solve gets at most the time left.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// The engines whose space is searched, and the lossy/unreleased policy
  /// (see SearchOptions).
  EngineSelection engines;
  bool allow_lossy_comm = false;
  bool allow_unreleased = false;
};

/// One engine's own optimum when several engines are searched alone
/// (--engine any, plan_across_engines).
struct EngineOptimum {
  Engine engine = Engine::kMegatron;
  /// Its fastest plan, searched under its own recipe; meaningful when
  /// `reason` is empty.
  RankedConfig best;
  /// Why the engine has no plan: no config it accepts fits, or it does not
  /// take one of the user's choices.
  std::string reason;
};

struct PlannerResult {
  /// Best first.
  std::vector<RankedConfig> ranked;
  SearchResult search;
  /// Certificates of the MILPs solved for the best plan.
  std::vector<SolverCertificate> certificates;
  /// Why the best plan is shaped as it is (ZeRO++ / hierarchical partitioning
  /// against the alternatives, placement on a heterogeneous cluster), one
  /// sentence each.
  std::vector<std::string> notes;
  /// --engine any: each engine's optimum, fastest first, then the engines
  /// without a plan; empty when one engine's space was searched.
  std::vector<EngineOptimum> engine_optima;
};

/// The notes of a plan (see PlannerResult::notes).
std::vector<std::string> plan_notes(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                    const ParallelConfig& config, const CostReport& cost);

/// The time limit of a solve: `solver_time_limit_s`, cut to what is left
/// before the deadline (at least 10 ms, so a solve always runs).
double solve_time_limit_s(const PlannerOptions& options);

/// One line per certificate that is not optimal (a solve stopped by its time
/// limit with a gap, or one that failed), for stderr.
std::vector<std::string> certificate_warnings(const std::vector<SolverCertificate>& certificates);

/// When the deadline stopped the search: one sentence saying the plan is the
/// best found so far and how much was searched; empty otherwise.
std::string time_limit_note(const SearchResult& search);

/// Solves the plan's formulations (stage split when pp > 1 and vp == 1,
/// recomputation per stage with full recompute) with `backend`.
std::vector<SolverCertificate> certify(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                       const ParallelConfig& config, SolverBackend backend,
                                       double time_limit_s);

/// Throws InputError naming the pin (--tp or constraints: tp) when a pin
/// cannot hold for the model and job (plan_job checks it first).
void check_plan_pins(const ModelSpec& model, const JobSpec& job);

/// Throws InputError on an unknown solver or a pin that cannot hold.
PlannerResult plan_job(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                       const PlannerOptions& options);

}  // namespace parplan
