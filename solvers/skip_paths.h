// SkipPipe scheduling (Blagoev et al. 2025): a node-to-stage partition and a
// path plus release time per micro-batch that minimise the iteration's
// makespan in the event simulation of cost/skip_pipeline_sim.h, a lower
// bound, and the full pipeline over the same partition for comparison.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cost/skip_pipeline_sim.h"
#include "solvers/certificate.h"
#include "solvers/solve.h"

namespace parplan {

struct SkipProblem {
  SkipNetwork network;
  /// Nodes per stage; stage 0 holds the sources. Sums to network.nodes.
  std::vector<int> stage_sizes;
  /// Stages each micro-batch visits, stage 0 included.
  int path_length = 2;
  /// Micro-batches each stage-0 node injects per iteration.
  int micro_batches_per_source = 1;
  /// Per stage: micro-batches per iteration it may take over all its nodes;
  /// nullopt = unbounded. Empty = none bounded. Stage 0 is exempt.
  std::vector<std::optional<int>> stage_capacity;
};

struct SkipSchedule {
  std::vector<std::vector<int>> partition;
  std::vector<SkipMicroBatch> micro_batches;
  double makespan_s = 0;
  /// The path search reached its deadline (PathSearchEffort::deadline_s).
  bool time_limited = false;
};

struct SkipSolveOptions {
  /// Wall-clock limit of the whole solve; the best schedule so far is
  /// returned and `time_limited` set.
  double time_limit_s = 60;
  /// Also search release times (false: every micro-batch released at 0).
  bool search_release_times = true;
  /// Given partition (node ids per stage); empty = search one.
  std::vector<std::vector<int>> partition;
  /// Partitions scored during the local search (a work bound, so that equal
  /// input gives an equal answer whatever the machine's speed).
  int partition_evaluations = 600;
  /// Candidate paths kept per source (shortest uncontended round trips).
  int candidates_per_source = 24;
  /// Enumerate every partition and every path assignment when there are at
  /// most this many combinations (the answer is then optimal for releases at 0).
  double exhaustive_limit = 3e5;
  /// Backend and limit of the partition MILP (solvers/skip_partition_milp.h),
  /// which seeds the local search when the partition is searched.
  SolverBackend backend = SolverBackend::kCbc;
  /// Short by default: the MILP only seeds the local search, which scores
  /// partitions by the simulated makespan (and the 20-node target is 1 s).
  double solver_time_limit_s = 0.25;
  /// A schedule of the same shape (stage sizes, path length, micro-batches
  /// per source), e.g. the one found for slower links: its partition seeds
  /// the partition search, and replayed on this network it is the answer
  /// unless the search finds better. So links made faster (a network no
  /// slower on any pair) give no slower answer than this schedule replayed
  /// on them. Ignored when it breaks this problem's rules.
  std::optional<SkipSchedule> warm_start;
};

struct SkipSolveResult {
  SkipSchedule schedule;
  /// Every micro-batch through every stage in order, same partition, same
  /// micro-batches per source, paths and releases searched the same way.
  SkipSchedule full_pipeline;
  /// No schedule over schedule.partition finishes earlier.
  double lower_bound_s = 0;
  /// Every partition and path assignment was enumerated (releases at 0).
  bool exhaustive = false;
  bool time_limited = false;
  int partitions_evaluated = 0;
  /// The partition MILP's certificate (empty name when it did not run: a
  /// given or enumerated partition) and link costs (seconds) of its answer and
  /// of its warm start.
  SolverCertificate partition_milp;
  double partition_link_cost_s = 0;
  double warm_start_link_cost_s = 0;
  /// What was left out or cut short and why, one sentence each (reported).
  std::vector<std::string> notes;
  /// Non-empty when no schedule obeys the rules: the binding rule.
  std::string infeasible;
};

SkipSolveResult solve_skip_paths(const SkipProblem& problem, const SkipSolveOptions& options);

/// Stage sizes when only the number of stages is given: N / S each, the
/// remainder to stage 0 (SkipPipe's 20 nodes, 6 stages: [5,3,3,3,3,3]).
std::vector<int> default_stage_sizes(int nodes, int stages);

/// Empty when every micro-batch path obeys the convergence rules and the stage
/// capacities over `partition`; otherwise the first violation.
std::string schedule_violation(const SkipProblem& problem, const SkipSchedule& schedule);

}  // namespace parplan
