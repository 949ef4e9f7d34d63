// The joint search over tp, cp, pp, vp, dp, mbs, zero and recomputation for a
// job: candidates generated from the divisors of the job, evaluated in
// parallel with TBB, pruned by a lower bound on step time.
#pragma once

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cost/cost_report.h"
#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"
#include "solvers/stage_split.h"
#include "src/emit/engine_capabilities.h"

namespace parplan {

struct RankedConfig {
  ParallelConfig config;
  CostReport cost;
  /// The engine (an Engine value) that runs all of the config; -1 untagged.
  int engine = -1;
};

/// Counters of a search. They depend only on the input (the pruning bound of
/// a mesh shape comes from that shape's own candidates, never from what other
/// threads found first), so identical runs report identical numbers.
struct SearchStats {
  long candidates = 0;  ///< configurations the space holds
  long evaluated = 0;   ///< cost evaluations (lower bounds included)
  /// Configurations found to fit in memory among those not skipped by the
  /// lower bound (not every configuration that fits: a pruned one may too).
  long feasible = 0;
  /// Mesh shapes (tp, cp, pp, dp) searched, and in all; fewer when the
  /// deadline stopped the search.
  long meshes_searched = 0;
  long meshes = 0;
  double time_s = 0;
};

struct SearchResult {
  /// Best first; at most top_k, all feasible.
  std::vector<RankedConfig> best;
  SearchStats stats;
  /// When `best` is empty: the binding constraint, in one sentence.
  std::string infeasible_reason;
  /// When no config of the space runs on the selected engine: what the
  /// engine lacks (its capability table), e.g. "no fp8".
  std::string engine_refusal;
  /// No config even divides the job (bad input rather than too little memory).
  bool no_valid_split = false;
  /// The deadline stopped the search: `best` is the best found so far.
  bool stopped_at_deadline = false;
};

struct SearchOptions {
  int top_k = 5;
  /// Largest micro-batch size tried.
  int max_mbs = 16;
  /// Mesh shapes not started by then are skipped (stopped_at_deadline).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// The engines whose space the search keeps to (their capability tables);
  /// each kept candidate is tagged with the first that runs it.
  EngineSelection engines;
  /// Lossy collectives (ZeRO++ qwZ/qgZ, the hierarchical scheme's int8/int4
  /// collectives) and the unreleased 3-level hierarchical partition: off
  /// unless asked for (a pin of --zeropp / --hierarchical-partition asks).
  bool allow_lossy_comm = false;
  bool allow_unreleased = false;
};

SearchResult search_configs(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                            const SearchOptions& options);

/// What the search prunes with: no variant of `shape` (ZeRO stage up to
/// zero_max, sharding, recomputation) runs a step shorter than this. The
/// shape's time without recomputation, data-parallel communication and
/// optimizer step, at the ZeRO stage where the rest is least.
double shape_lower_bound_s(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                           ParallelConfig shape, int zero_max);

/// The stage-split formulation of a config's pipeline (Megatron's layout:
/// equal middle stages), from the cost model's per-stage coefficients.
/// Middle stages share stage 1's coefficients unless every_stage.
StageSplitInput stage_split_input(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                  const ParallelConfig& config, bool every_stage, bool first_last = false);
/// Lays `config`'s layers over its pipeline stages as the stage-split
/// formulation solves it for the config as given (its ZeRO stage, sharding
/// and recomputation; full recomputation counted on every layer): the
/// fastest split whose every stage fits its memory (memory_capped), or the
/// fastest outright. Uniform clusters get Megatron's first/last split,
/// heterogeneous ones the general split (stage_split; pp dividing the
/// layers, at most ParallelConfig::kMaxSplitStages). An optimum that is even
/// leaves the even layout (no first/last, no stage_split). False, config
/// unchanged, when pp < 2, vp > 1 or no split fits. first_last: Megatron's
/// first/last split on a heterogeneous cluster too (its stages' own speeds),
/// for engines that take no per-stage counts.
bool apply_stage_split(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                       ParallelConfig& config, bool memory_capped, bool first_last = false);
/// The even layout: no first/last stage layers, no custom split.
bool even_split(const ParallelConfig& config);
/// Whether two configs lay their layers over the stages alike.
bool same_split(const ParallelConfig& a, const ParallelConfig& b);

/// The hierarchical placements the search tries (the 3-level scheme first).
const std::array<PartitionPlacement, 4>& hierarchical_placements();
/// Sets `config` to ZeRO-3 with hierarchical partitioning in the placement
/// that is fastest for it (among those that fit, if any do); false when no
/// placement can be laid on the cluster.
bool apply_best_hierarchical_partition(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                       ParallelConfig& config);

/// The fewest fully recomputed layers per model chunk that make `config` fit
/// (binary search: memory falls monotonically in the count), at most the
/// layers of its largest chunk (max_chunk_layers: with an uneven split, the
/// largest stage's); -1 when even recomputing every layer does not fit.
int min_recompute_layers(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                         ParallelConfig config);

}  // namespace parplan
