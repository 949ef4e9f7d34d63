// SkipPipe solver: partition (exhaustive when small, else swap local search
// from two seeds, each partition scored by a quick greedy path assignment),
// then paths and release times on the best partition, the lower bound and the
// full-pipeline baseline.
#include "solvers/skip_paths.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_invoke.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <limits>

#include "solvers/skip_candidates.h"
#include "solvers/skip_partition_milp.h"
#include "solvers/skip_partition_search.h"
#include "solvers/skip_path_rules.h"
#include "solvers/skip_path_search.h"
#include "solvers/skip_spread_candidates.h"

namespace parplan {

std::vector<int> default_stage_sizes(int nodes, int stages) {
  std::vector<int> sizes(stages, nodes / stages);
  sizes[0] += nodes % stages;
  return sizes;
}

namespace {

int micro_batch_count(const SkipProblem& p) { return p.stage_sizes[0] * p.micro_batches_per_source; }

std::vector<int> capacity_per_stage(const SkipProblem& p) {
  std::vector<int> cap(p.stage_sizes.size(), micro_batch_count(p));
  for (std::size_t s = 1; s < cap.size() && s < p.stage_capacity.size(); ++s)
    if (p.stage_capacity[s]) cap[s] = std::min(cap[s], *p.stage_capacity[s]);
  return cap;
}

/// Stages this large have too many paths to enumerate, and their shortest
/// round trips all run through the same few nodes: candidates are then
/// chosen spread over the nodes (solvers/skip_spread_candidates.h).
/// Networks above this many nodes skip the partition search (below).
constexpr int kLargeNetworkNodes = 128;

bool spread_out(const SkipPartition& partition) {
  for (std::size_t s = 1; s < partition.size(); ++s)
    if (partition[s].size() > kSpreadStageNodes) return true;
  return false;
}

/// Past `deadline_s` each source keeps the paths its enumeration found so far
/// (hundreds of nodes per stage have more paths than any limit allows). Each
/// source has at least `grace_s` / sources of its own, so that a search
/// started late still has paths to choose from.
PathSearchInput path_input(const SkipProblem& p, const SkipPartition& partition, bool full, int keep,
                           double deadline_s = std::numeric_limits<double>::infinity(), double grace_s = 0) {
  PathSearchInput in;
  in.network = &p.network;
  in.partition = partition;
  in.micro_batches_per_source = p.micro_batches_per_source;
  in.path_length = full ? static_cast<int>(partition.size()) : p.path_length;
  in.capacity = full ? std::vector<int>(partition.size(), micro_batch_count(p)) : capacity_per_stage(p);
  if (keep > 0 && spread_out(partition)) {
    in.candidates =
        spread_skip_candidates(p.network, partition, in.path_length, full, p.micro_batches_per_source, keep,
                               std::max(deadline_s, steady_now_s() + grace_s));
    return in;
  }
  for (int src : partition[0])
    in.candidates.push_back(skip_candidates(
        p.network, partition, src, in.path_length, full, keep,
        std::max(deadline_s, steady_now_s() + grace_s / static_cast<double>(partition[0].size()))));
  return in;
}

/// No rule-abiding path from `src` has a shorter round trip: each hop at its
/// least (used when the exact shortest path is cut short by the deadline).
double least_round_trip_s(const SkipProblem& p, const SkipPartition& partition, int src,
                          double least_hop_between_s) {
  const SkipNetwork& net = p.network;
  double least_task_s = std::numeric_limits<double>::infinity();
  double least_hop_s = std::numeric_limits<double>::infinity();
  for (std::size_t s = 1; s < partition.size(); ++s)
    for (int node : partition[s]) {
      least_task_s = std::min(least_task_s, net.forward_s[node] * (1 + net.backward_factor));
      least_hop_s = std::min(least_hop_s, net.transfer(src, node) + net.transfer(node, src));
    }
  // Out from the source, back to it, and path_length - 2 hops between later nodes.
  return net.forward_s[src] * (1 + net.backward_factor + net.loss_factor) +
         (p.path_length - 1) * least_task_s + 2 * least_hop_s + (p.path_length - 2) * least_hop_between_s;
}

/// Least round trip between two nodes of different stages after stage 0.
double least_hop_between_s(const SkipNetwork& net, const SkipPartition& partition) {
  std::vector<int> stage_of(net.nodes, -1);
  for (std::size_t s = 1; s < partition.size(); ++s)
    for (int node : partition[s]) stage_of[node] = static_cast<int>(s);
  double least_s = std::numeric_limits<double>::infinity();
  for (int a = 0; a < net.nodes; ++a)
    for (int b = a + 1; b < net.nodes; ++b)
      if (stage_of[a] > 0 && stage_of[b] > 0 && stage_of[a] != stage_of[b])
        least_s = std::min(least_s, net.transfer(a, b) + net.transfer(b, a));
  return std::isfinite(least_s) ? least_s : 0.0;
}

double lower_bound_s(const SkipProblem& p, const SkipPartition& partition, double deadline_s) {
  const SkipNetwork& net = p.network;
  const int k = p.micro_batches_per_source;
  const int rounds = (k + net.memory - 1) / net.memory;
  double bound_s = 0;
  double hop_between_s = -1;  // computed when first needed: N^2
  for (int src : partition[0]) {
    // Every micro-batch runs forward, loss and backward on its source.
    // 3K tasks, 3K-1 gaps; K of them follow a first forward.
    const double first_gap_s =
        net.first_forward_overhead_s < 0 ? net.task_overhead_s : net.first_forward_overhead_s;
    const double work_s = k * net.forward_s[src] * (1 + net.loss_factor + net.backward_factor) +
                          (2 * k - 1) * net.task_overhead_s + k * first_gap_s;
    // Each holds one of the source's `memory` slots from its first forward to
    // its last backward, at least one idle round trip: some slot serves
    // ceil(K / memory) of them one after another. Past the deadline the
    // shortest path gives way to a bound on it, each hop at its least.
    const SkipCandidate best = skip_shortest_path(net, partition, src, p.path_length, deadline_s);
    double trip_s = best.round_trip_s;
    if (best.path.empty()) {
      if (hop_between_s < 0) hop_between_s = least_hop_between_s(net, partition);
      trip_s = least_round_trip_s(p, partition, src, hop_between_s);
    }
    const double chain_s = rounds * trip_s + (rounds - 1) * net.task_overhead_s;
    bound_s = std::max({bound_s, work_s, chain_s});
  }
  return bound_s;
}

/// Every path assignment over one partition, releases at 0; best makespan.
SkipSchedule exhaustive_paths(const SkipProblem& p, const SkipPartition& partition, SkipSimulator& sim) {
  const PathSearchInput in = path_input(p, partition, false, 0);
  const int n_src = static_cast<int>(partition[0].size());
  const int n_mb = micro_batch_count(p);
  std::vector<int> pick(n_mb, 0);
  std::vector<SkipMicroBatch> mbs(n_mb);
  for (int m = 0; m < n_mb; ++m) mbs[m].source = partition[0][m % n_src];
  SkipSchedule best{partition, {}, std::numeric_limits<double>::infinity()};
  double best_sum_s = best.makespan_s;
  std::vector<int> used(partition.size());
  while (true) {
    std::fill(used.begin(), used.end(), 0);
    for (int m = 0; m < n_mb; ++m) {
      const SkipCandidate& c = in.candidates[m % n_src][pick[m]];
      mbs[m].path = c.path;
      for (std::size_t i = 1; i < c.stages.size(); ++i) ++used[c.stages[i]];
    }
    bool fits = true;
    for (std::size_t s = 1; s < used.size(); ++s) fits &= used[s] <= in.capacity[s];
    if (fits) {
      const SkipSimScore r = sim.score(p.network, mbs, best.makespan_s + 1e-9);
      if (r.makespan_s < best.makespan_s - 1e-9 ||
          (r.makespan_s < best.makespan_s + 1e-9 && r.sum_finish_s < best_sum_s - 1e-9)) {
        best.makespan_s = r.makespan_s;
        best_sum_s = r.sum_finish_s;
        best.micro_batches = mbs;
      }
    }
    int m = 0;
    while (m < n_mb && ++pick[m] == static_cast<int>(in.candidates[m % n_src].size())) pick[m++] = 0;
    if (m == n_mb) break;
  }
  return best;
}

/// The warm start has this problem's shape and keeps its rules.
bool warm_start_fits(const SkipProblem& p, const SkipSchedule& s) {
  if (s.partition.size() != p.stage_sizes.size()) return false;
  std::vector<int> seen(p.network.nodes, 0);
  for (std::size_t st = 0; st < s.partition.size(); ++st) {
    if (static_cast<int>(s.partition[st].size()) != p.stage_sizes[st]) return false;
    for (int node : s.partition[st])
      if (node < 0 || node >= p.network.nodes || seen[node]++) return false;
  }
  std::vector<int> per_source(p.network.nodes, 0);
  for (const SkipMicroBatch& mb : s.micro_batches) {
    if (mb.source < 0 || mb.source >= p.network.nodes || !(mb.release_s >= 0)) return false;
    for (int node : mb.path)
      if (node < 0 || node >= p.network.nodes) return false;
    ++per_source[mb.source];
  }
  for (int src : s.partition[0])
    if (per_source[src] != p.micro_batches_per_source) return false;
  return static_cast<int>(s.micro_batches.size()) == micro_batch_count(p) && schedule_violation(p, s).empty();
}

}  // namespace

SkipSolveResult solve_skip_paths(const SkipProblem& p, const SkipSolveOptions& options) {
  const double start_s = steady_now_s();
  SkipSolveResult result;
  const int n_mb = micro_batch_count(p);
  const int visits = p.path_length - 1;
  const std::vector<int> cap = capacity_per_stage(p);
  long long room = 0;
  for (std::size_t s = 1; s < cap.size(); ++s) room += std::min(cap[s], n_mb);
  if (room < static_cast<long long>(n_mb) * visits) {
    result.infeasible = "stage_capacity: stages 1.." + std::to_string(cap.size() - 1) + " take at most " +
                        std::to_string(room) + " micro-batch visits per iteration, but " +
                        std::to_string(n_mb) + " micro-batches x " + std::to_string(visits) +
                        " stages after stage 0 need " +
                        std::to_string(static_cast<long long>(n_mb) * visits) +
                        "; raise stage_capacity or lower path_length or micro_batches_per_source";
    return result;
  }

  SkipSimulator sim;
  const SkipSchedule* warm =
      options.warm_start && warm_start_fits(p, *options.warm_start) ? &*options.warm_start : nullptr;
  SkipPartition partition = options.partition;
  if (partition.empty()) {
    const SkipPartition seed = block_partition(p.stage_sizes);
    // Enumerable when partitions x paths^micro-batches stays within the
    // limit. Paths per source (the same for every partition and source) are
    // counted only up to the most that could pass: a large network has
    // billions, too many to store or even to count.
    const double partitions = partition_count(p.stage_sizes);
    bool enumerable = partitions <= options.exhaustive_limit;
    if (enumerable) {
      const double most = std::floor(std::pow(options.exhaustive_limit / partitions, 1.0 / n_mb) + 1e-9);
      const auto limit = static_cast<long long>(std::min(most, 1e9)) + 1;
      const long long paths = skip_candidate_count(p.network, seed, seed[0][0], p.path_length, false, limit);
      enumerable = paths < limit &&
                   partitions * std::pow(static_cast<double>(paths), n_mb) <= options.exhaustive_limit;
    }
    if (enumerable) {
      double best_s = std::numeric_limits<double>::infinity();
      for_each_partition(p.network.nodes, p.stage_sizes, [&](const SkipPartition& candidate) {
        ++result.partitions_evaluated;
        SkipSchedule s = exhaustive_paths(p, candidate, sim);
        if (s.makespan_s < best_s - 1e-9) {
          best_s = s.makespan_s;
          result.schedule = std::move(s);
        }
        return steady_now_s() - start_s < options.time_limit_s;
      });
      result.exhaustive =
          static_cast<double>(result.partitions_evaluated) >= partition_count(p.stage_sizes) - 0.5;
      result.time_limited = !result.exhaustive;
      partition = result.schedule.partition;
    } else {
      const int quick_keep = std::min(8, options.candidates_per_source);
      tbb::enumerable_thread_specific<SkipSimulator> sims;
      PathSearchEffort quick_effort;
      quick_effort.deadline_s = start_s + 0.8 * options.time_limit_s;
      auto quick_score = [&](const SkipPartition& candidate) {
        return search_paths(path_input(p, candidate, false, quick_keep, quick_effort.deadline_s),
                            quick_effort, sims.local())
            .makespan_s;
      };
      const SkipPartition chains = chain_partition(p.network, p.stage_sizes);
      // On large networks neither the local search nor the MILP improved on
      // the better seed (128 to 1024 generated nodes) while they took most of
      // the time (20 s of 26 on 256 nodes; the MILP's model alone 6 s on 1024):
      // the seeds' quick scores choose.
      const bool large = spread_out(seed) || p.network.nodes > kLargeNetworkNodes;
      // The MILP takes at least its 0.05 s and its model's build: not worth
      // it when the whole solve has under 0.5 s.
      const bool run_milp = !large && options.time_limit_s >= 0.5;
      // The link MILP, warm-started from the chains, is the third seed. It
      // runs beside a local search from the better of the other two, which
      // is the search to keep unless the MILP returns another partition that
      // scores better still (the answer is the same as running it first).
      SolveOptions milp_options;
      milp_options.time_limit_s =
          std::max(0.05, std::min(options.solver_time_limit_s, 0.25 * options.time_limit_s));
      milp_options.relative_gap = 1e-4;
      std::future<SkipPartitionMilpResult> milp_future;
      if (run_milp)
        milp_future = std::async(std::launch::async, [&] {
          return solve_skip_partition_milp(p.network, p.stage_sizes, chains, options.backend, milp_options);
        });
      // The two seeds are scored side by side under one deadline: one after
      // the other, a short limit scored the first and hurried the second,
      // and which won depended on where the deadline fell.
      SkipPartition start = seed;
      double start_score_s = 0, chains_score_s = 0;
      tbb::parallel_invoke([&] { start_score_s = quick_score(seed); },
                           [&] { chains_score_s = quick_score(chains); });
      if (chains_score_s < start_score_s) start_score_s = chains_score_s, start = chains;
      if (warm) {
        const double warm_score_s = quick_score(warm->partition);
        if (warm_score_s < start_score_s) start_score_s = warm_score_s, start = warm->partition;
      }
      // Leave a fifth of the time for the final path search and the baseline.
      const double deadline_s = 0.8 * options.time_limit_s;
      PartitionSearchResult ls{start, start_score_s, 0, false};
      if (large)
        result.notes.push_back(
            "partition: the better of the seeds by quick score (no local search or partition MILP on a "
            "network of over " +
            std::to_string(kLargeNetworkNodes) + " nodes or a stage of over " +
            std::to_string(kSpreadStageNodes) + ")");
      else
        ls = local_search_partition(start, quick_score, options.partition_evaluations, start_s, deadline_s);
      if (run_milp) {
        const SkipPartitionMilpResult milp = milp_future.get();
        result.partition_milp = milp.certificate;
        result.partition_link_cost_s = milp.link_cost_s;
        result.warm_start_link_cost_s = milp.warm_start_cost_s;
        if (milp.partition != chains && quick_score(milp.partition) < start_score_s)
          ls = local_search_partition(milp.partition, quick_score, options.partition_evaluations, start_s,
                                      deadline_s);
      } else if (!large) {
        result.notes.push_back("partition MILP skipped: under 0.5 s left of --time-limit");
      }
      partition = ls.best;
      result.partitions_evaluated = large ? (warm ? 3 : 2) : ls.evaluations + 3;
      result.time_limited = ls.time_limited;
    }
  }

  const PathSearchEffort effort{3, options.search_release_times, start_s + options.time_limit_s};
  // Past the limit, the final path searches still enumerate paths for up to
  // this long (each, over all its sources).
  const double grace_s = std::max(0.5, 0.05 * options.time_limit_s);
  // The schedule and the baseline are independent: side by side, one
  // simulator each (the same answer as one after the other).
  SkipSchedule polished;
  tbb::parallel_invoke(
      [&] {
        polished = search_paths(
            path_input(p, partition, false, options.candidates_per_source, effort.deadline_s, grace_s),
            effort, sim);
      },
      [&] {
        SkipSimulator own;
        result.full_pipeline = search_paths(
            path_input(p, partition, true, options.candidates_per_source, effort.deadline_s, grace_s), effort,
            own);
      });
  result.time_limited = result.time_limited || polished.time_limited || result.full_pipeline.time_limited;
  if (!result.exhaustive || polished.makespan_s < result.schedule.makespan_s - 1e-9)
    result.schedule = std::move(polished);
  if (warm) {
    const double warm_s = sim.score(p.network, warm->micro_batches).makespan_s;
    if (warm_s < result.schedule.makespan_s - 1e-9) {
      result.schedule = SkipSchedule{warm->partition, warm->micro_batches, warm_s, false};
      if (warm->partition != partition) {
        // The baseline and the bound are over the answer's partition.
        partition = warm->partition;
        SkipSimulator own;
        result.full_pipeline = search_paths(
            path_input(p, partition, true, options.candidates_per_source, effort.deadline_s, grace_s), effort,
            own);
        result.time_limited = result.time_limited || result.full_pipeline.time_limited;
      }
    }
  }
  // A few seconds at most past the limit: the shortest path is a bounded
  // search, but over hundreds of nodes per stage it can take minutes.
  result.lower_bound_s =
      lower_bound_s(p, partition, steady_now_s() + std::max(1.0, 0.1 * options.time_limit_s));
  return result;
}

std::string schedule_violation(const SkipProblem& p, const SkipSchedule& schedule) {
  const int n_stages = static_cast<int>(schedule.partition.size());
  std::vector<int> stage_of(p.network.nodes, -1);
  for (int s = 0; s < n_stages; ++s)
    for (int node : schedule.partition[s]) stage_of[node] = s;
  std::vector<int> used(n_stages, 0);
  const std::vector<int> cap = capacity_per_stage(p);
  for (std::size_t m = 0; m < schedule.micro_batches.size(); ++m) {
    const SkipMicroBatch& mb = schedule.micro_batches[m];
    const std::string where = "micro-batch " + std::to_string(m) + ": ";
    if (mb.path.empty() || mb.path[0] != mb.source) return where + "the path does not start at its source";
    std::vector<int> stages;
    for (int node : mb.path) stages.push_back(stage_of[node]);
    const std::string why = stage_sequence_violation(stages, n_stages, p.path_length);
    if (!why.empty()) return where + why;
    for (std::size_t i = 1; i < stages.size(); ++i) ++used[stages[i]];
  }
  for (int s = 1; s < n_stages; ++s)
    if (used[s] > cap[s])
      return "stage " + std::to_string(s) + " takes " + std::to_string(used[s]) +
             " micro-batches, over its capacity";
  return {};
}

}  // namespace parplan
