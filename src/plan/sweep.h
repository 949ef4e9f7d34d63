// A sweep: every (model, GPU count, global batch) point of a grid planned with
// plan_job, the points in parallel; and the parsing of the grid's lists.
#pragma once

#include <climits>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cost/cost_report.h"
#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"
#include "src/plan/plan.h"
#include "src/plan/planner.h"

namespace parplan {

/// The grid: models x GPU counts x global batches, at one sequence length.
struct SweepGrid {
  std::vector<ModelSpec> models;
  ClusterSpec cluster;
  /// Ascending, distinct, positive.
  std::vector<int> gpus;
  std::vector<int> gbs;
  int seq = 0;
  Precision precision = Precision::kBf16;
  /// HBM every point keeps free (JobSpec::memory_headroom_*).
  double memory_headroom_fraction = 0.0;
  double memory_headroom_bytes = 0.0;
};

/// One point of the grid.
struct SweepPoint {
  /// Row number: model-major, then GPU count, then global batch.
  int index = 0;
  /// Into SweepGrid::models.
  int model_index = 0;
  JobSpec job;
};

/// The best plan of a point, or why there is none.
struct SweepOutcome {
  SweepPoint point;
  /// Parameters of the whole model.
  double params = 0;
  bool feasible = false;
  /// When not feasible: the binding constraint, in one sentence.
  std::string reason;
  /// When feasible: the optimum (fastest predicted plan an engine of the
  /// selection accepts), its cost and that engine (an Engine value).
  ParallelConfig config;
  CostReport cost;
  int engine = -1;
};

/// The model of a point.
inline const ModelSpec& sweep_model(const SweepGrid& grid, const SweepOutcome& o) {
  return grid.models.at(static_cast<std::size_t>(o.point.model_index));
}

/// Parses a list of positive integers given to `flag`: comma-separated items,
/// each a number or a range START:STOP:xFACTOR (geometric, FACTOR >= 2) or
/// START:STOP:+STEP (arithmetic), STOP included when reached. Returns the
/// values ascending without repeats. Throws InputError, one line naming
/// `flag`, on an empty list or item, a non-number, zero or a negative value, a
/// range that yields nothing, a value (or range end) above `max`, or more
/// than 4096 values.
std::vector<int> parse_int_list(const std::string& text, const std::string& flag, long long max = INT_MAX);

/// The model ladders `--models ladder:NAME` expands to: name -> catalog models,
/// smallest first.
const std::vector<std::pair<std::string, std::vector<std::string>>>& model_ladders();

/// Splits a --models list into model names or paths, ladders expanded,
/// repeats dropped (first kept). Throws InputError naming `flag`.
std::vector<std::string> expand_model_names(const std::string& text, const std::string& flag);

/// expand_model_names, then load_model on each; errors name `flag`. A model
/// given as a file is named by its `name:` field, else by the file's stem
/// (a Hugging Face config.json by its directory), never by the path.
std::vector<ModelSpec> load_sweep_models(const std::string& text, const std::string& flag);

/// The name a sweep shows for a model file given as `path` (see load_sweep_models).
std::string sweep_model_name(const std::string& path);

/// The points of the grid in row order. Throws InputError when a GPU count
/// exceeds the cluster or the sequence exceeds a model's learned positions.
std::vector<SweepPoint> sweep_points(const SweepGrid& grid);

/// Called after each point with (points done, points in all), from any thread;
/// must be thread-safe.
using SweepProgress = std::function<void(int done, int total)>;

/// Plans every point, the points in parallel with TBB. Outcomes are in row
/// order. Each point gets the optimum of `plan` (plan_for_engines): the
/// fastest predicted plan that an engine of options.engines runs and whose
/// argument checks accept it, tagged with that engine. Nothing else (such as
/// whether launch files are written) changes the choice, so the CSV is the
/// same with and without --emit-slurm-array. A point without a plan is an
/// outcome with feasible = false and the reason, not an error.
std::vector<SweepOutcome> evaluate_sweep(const SweepGrid& grid, const std::vector<SweepPoint>& points,
                                         const PlannerOptions& options, const SweepProgress& progress = {});

/// The Plan of a feasible outcome (for the launch files).
Plan plan_of(const SweepGrid& grid, const SweepOutcome& outcome);

}  // namespace parplan
