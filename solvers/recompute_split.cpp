// Per-stage recomputation: closed form and the MILP formulation.
#include "solvers/recompute_split.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace parplan {

namespace {

constexpr double kFitTolerance = 1e-9;

int stages_of(const RecomputeSplitInput& in) { return static_cast<int>(in.layers_per_stage.size()); }

void check_vector(const std::vector<double>& v, int stages, const char* name, bool allow_infinite) {
  if (static_cast<int>(v.size()) != stages) {
    throw std::invalid_argument(std::string("recompute split: ") + name + " has " + std::to_string(v.size()) +
                                " entries for " + std::to_string(stages) + " stages");
  }
  for (double x : v) {
    if (std::isnan(x) || x < 0 || (!allow_infinite && std::isinf(x))) {
      throw std::invalid_argument(std::string("recompute split: ") + name + " must hold finite values >= 0");
    }
  }
}

void check(const RecomputeSplitInput& in) {
  const int stages = stages_of(in);
  for (int n : in.layers_per_stage) {
    if (n < 0) throw std::invalid_argument("recompute split: layers_per_stage must be >= 0");
  }
  check_vector(in.base_time_s, stages, "base_time_s", false);
  check_vector(in.recompute_time_s, stages, "recompute_time_s", false);
  check_vector(in.memory_bytes, stages, "memory_bytes", false);
  check_vector(in.saved_bytes_per_layer, stages, "saved_bytes_per_layer", false);
  check_vector(in.memory_cap_bytes, stages, "memory_cap_bytes", true);
}

int min_layers_unchecked(const RecomputeSplitInput& in, int s) {
  const int n = in.layers_per_stage[s];
  const double excess = in.memory_bytes[s] - in.memory_cap_bytes[s];
  if (excess <= 0) return 0;
  const double saved = in.saved_bytes_per_layer[s];
  if (saved <= 0) return n + 1;
  const double need = std::ceil(excess / saved - kFitTolerance);
  return need > n ? n + 1 : static_cast<int>(need);
}

double makespan(const RecomputeSplitInput& in, const std::vector<int>& k) {
  double m = 0;
  for (int s = 0; s < stages_of(in); ++s) {
    m = std::max(m, in.base_time_s[s] + k[s] * in.recompute_time_s[s]);
  }
  return m;
}

double time_scale(const RecomputeSplitInput& in) {
  double scale = 0;
  for (int s = 0; s < stages_of(in); ++s) {
    scale = std::max({scale, in.base_time_s[s], in.recompute_time_s[s]});
  }
  return scale > 0 ? scale : 1.0;
}

}  // namespace

int stage_min_recompute_layers(const RecomputeSplitInput& input, int stage) {
  check(input);
  if (stage < 0 || stage >= stages_of(input)) {
    throw std::invalid_argument("recompute split: stage index out of range");
  }
  return min_layers_unchecked(input, stage);
}

RecomputeSplitResult recompute_split_fast(const RecomputeSplitInput& input) {
  check(input);
  RecomputeSplitResult result;
  SolverCertificate& cert = result.certificate;
  cert.name = "recompute_split";
  cert.backend = "closed_form";
  std::vector<int> k(stages_of(input));
  for (int s = 0; s < stages_of(input); ++s) {
    k[s] = min_layers_unchecked(input, s);
    if (k[s] > input.layers_per_stage[s]) {
      cert.status = SolveStatus::kInfeasible;
      return result;
    }
  }
  result.recompute_layers = std::move(k);
  result.makespan_s = makespan(input, result.recompute_layers);
  cert.status = SolveStatus::kOptimal;
  cert.objective = result.makespan_s;
  cert.best_bound = result.makespan_s;
  cert.gap = 0;
  return result;
}

MilpModel recompute_split_model(const RecomputeSplitInput& input) {
  check(input);
  const int stages = stages_of(input);
  const double scale = time_scale(input);
  MilpModel model("recompute_split");
  std::vector<int> k(stages);
  for (int s = 0; s < stages; ++s) {
    k[s] = model.add_integer("recompute_" + std::to_string(s), 0, input.layers_per_stage[s]);
  }
  const int m = model.add_continuous("makespan", 0, kInfinity, 1.0);
  model.set_sense(ObjectiveSense::kMinimize);
  for (int s = 0; s < stages; ++s) {
    model.add_greater_equal("time_" + std::to_string(s),
                            {{m, 1.0}, {k[s], -input.recompute_time_s[s] / scale}},
                            input.base_time_s[s] / scale);
    model.add_greater_equal("memory_" + std::to_string(s), {{k[s], 1.0}}, min_layers_unchecked(input, s));
  }
  return model;
}

RecomputeSplitResult recompute_split_milp(const RecomputeSplitInput& input, SolverBackend backend,
                                          const SolveOptions& options) {
  MakespanSolve solved =
      solve_makespan(recompute_split_model(input), time_scale(input), stages_of(input), backend, options);
  RecomputeSplitResult result;
  result.certificate = solved.certificate;
  if (solved.integers.empty()) return result;
  result.recompute_layers = std::move(solved.integers);
  result.makespan_s = makespan(input, result.recompute_layers);
  set_makespan(result.certificate, result.makespan_s);
  return result;
}

}  // namespace parplan
