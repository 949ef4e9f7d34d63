// Layer-to-stage split: greedy exact fast path and the MILP formulation.
#include "solvers/stage_split.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <stdexcept>
#include <string>
#include <utility>

namespace parplan {

namespace {

constexpr double kFitTolerance = 1e-9;

double at(const std::vector<double>& v, int s, double fallback) { return v.empty() ? fallback : v[s]; }

void check_vector(const std::vector<double>& v, const StageSplitInput& in, const char* name, bool required,
                  bool allow_infinite) {
  if (v.empty() && !required) return;
  if (static_cast<int>(v.size()) != in.stages) {
    throw std::invalid_argument(std::string("stage split: ") + name + " has " + std::to_string(v.size()) +
                                " entries for " + std::to_string(in.stages) + " stages");
  }
  for (double x : v) {
    if (std::isnan(x) || x < 0 || (!allow_infinite && std::isinf(x))) {
      throw std::invalid_argument(std::string("stage split: ") + name + " must hold finite values >= 0");
    }
  }
}

void check(const StageSplitInput& in) {
  if (in.stages < 1) throw std::invalid_argument("stage split: stages must be >= 1");
  if (in.layers < 0) throw std::invalid_argument("stage split: layers must be >= 0");
  if (in.min_layers_per_stage < 0) {
    throw std::invalid_argument("stage split: min_layers_per_stage must be >= 0");
  }
  check_vector(in.layer_time_s, in, "layer_time_s", true, false);
  check_vector(in.extra_time_s, in, "extra_time_s", false, false);
  check_vector(in.memory_cap_bytes, in, "memory_cap_bytes", false, true);
  check_vector(in.layer_memory_bytes, in, "layer_memory_bytes", false, false);
  check_vector(in.extra_memory_bytes, in, "extra_memory_bytes", false, false);
}

int max_layers_unchecked(const StageSplitInput& in, int s) {
  const double cap = at(in.memory_cap_bytes, s, kInfinity);
  const double fixed = at(in.extra_memory_bytes, s, 0);
  const double per_layer = at(in.layer_memory_bytes, s, 0);
  if (fixed > cap) return -1;
  if (per_layer <= 0 || std::isinf(cap)) return in.layers;
  const double fit = (cap - fixed) / per_layer + kFitTolerance;
  if (fit >= in.layers) return in.layers;
  return static_cast<int>(std::floor(fit));
}

double stage_time(const StageSplitInput& in, int s, int n) {
  return at(in.extra_time_s, s, 0) + n * in.layer_time_s[s];
}

double makespan(const StageSplitInput& in, const std::vector<int>& n) {
  double m = 0;
  for (int s = 0; s < in.stages; ++s) m = std::max(m, stage_time(in, s, n[s]));
  return m;
}

StageSplitResult infeasible_result(const char* backend) {
  StageSplitResult result;
  result.certificate.name = "stage_split";
  result.certificate.backend = backend;
  result.certificate.status = SolveStatus::kInfeasible;
  return result;
}

double time_scale(const StageSplitInput& in) {
  double scale = 0;
  for (int s = 0; s < in.stages; ++s) {
    scale = std::max({scale, in.layer_time_s[s], at(in.extra_time_s, s, 0)});
  }
  return scale > 0 ? scale : 1.0;
}

}  // namespace

int stage_max_layers(const StageSplitInput& input, int stage) {
  check(input);
  if (stage < 0 || stage >= input.stages) {
    throw std::invalid_argument("stage split: stage index out of range");
  }
  return max_layers_unchecked(input, stage);
}

namespace {
StageSplitResult optimal_result(const StageSplitInput& input, std::vector<int> n) {
  StageSplitResult result;
  result.layers_per_stage = std::move(n);
  result.makespan_s = makespan(input, result.layers_per_stage);
  SolverCertificate& cert = result.certificate;
  cert.name = "stage_split";
  cert.backend = "greedy";
  cert.status = SolveStatus::kOptimal;
  cert.objective = result.makespan_s;
  cert.best_bound = result.makespan_s;
  cert.gap = 0;
  return result;
}

// Megatron's layout: first f, last l, every middle stage x layers.
StageSplitResult equal_middle_fast(const StageSplitInput& input) {
  const int p = input.stages;
  const int lo = input.min_layers_per_stage;
  int middle_cap = input.layers;
  for (int s = 1; s + 1 < p; ++s) middle_cap = std::min(middle_cap, max_layers_unchecked(input, s));
  const int first_cap = max_layers_unchecked(input, 0);
  const int last_cap = max_layers_unchecked(input, p - 1);
  double best = kInfinity;
  int best_distance = 0;
  std::vector<int> best_n;
  for (int x = lo; x <= middle_cap && static_cast<long long>(x) * (p - 2) <= input.layers; ++x) {
    const int rest = input.layers - x * (p - 2);
    // The middle stages' time does not depend on the first/last split: once
    // per x, not per f (the search solves this for every candidate).
    double middle_s = 0;
    for (int s = 1; s + 1 < p; ++s) middle_s = std::max(middle_s, stage_time(input, s, x));
    // Stage times never fall with more layers: no larger x can tie the best.
    if (middle_s > best * (1 + 1e-12)) break;
    for (int f = std::max(lo, rest - last_cap); f <= std::min(first_cap, rest - lo); ++f) {
      const int l = rest - f;
      const double m = std::max({stage_time(input, 0, f), stage_time(input, p - 1, l), middle_s});
      const int distance = std::abs(f - x) + std::abs(l - x);
      if (m < best * (1 - 1e-12) || (m <= best * (1 + 1e-12) && distance < best_distance)) {
        best = m;
        best_distance = distance;
        best_n.assign(p, x);
        best_n[0] = f;
        best_n[p - 1] = l;
      }
    }
  }
  if (best_n.empty()) return infeasible_result("greedy");
  return optimal_result(input, std::move(best_n));
}
}  // namespace

StageSplitResult stage_split_fast(const StageSplitInput& input) {
  check(input);
  if (input.equal_middle_stages && input.stages >= 3) return equal_middle_fast(input);
  const int stages = input.stages;
  const int floor_layers = input.min_layers_per_stage;
  if (static_cast<long long>(stages) * floor_layers > input.layers) {
    return infeasible_result("greedy");
  }
  std::vector<int> cap(stages);
  long long capacity = 0;
  for (int s = 0; s < stages; ++s) {
    cap[s] = max_layers_unchecked(input, s);
    if (cap[s] < floor_layers) return infeasible_result("greedy");
    capacity += cap[s];
  }
  if (capacity < input.layers) return infeasible_result("greedy");

  std::vector<int> n(stages, floor_layers);
  using Entry = std::pair<double, int>;  // (stage time after one more layer, stage)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> next;
  for (int s = 0; s < stages; ++s) {
    if (n[s] < cap[s]) next.emplace(stage_time(input, s, n[s] + 1), s);
  }
  for (int left = input.layers - stages * floor_layers; left > 0; --left) {
    const int s = next.top().second;
    next.pop();
    ++n[s];
    if (n[s] < cap[s]) next.emplace(stage_time(input, s, n[s] + 1), s);
  }

  return optimal_result(input, std::move(n));
}

MilpModel stage_split_model(const StageSplitInput& input) {
  check(input);
  const int stages = input.stages;
  const double scale = time_scale(input);
  const int floor_layers = input.min_layers_per_stage;
  const long long most =
      static_cast<long long>(input.layers) - static_cast<long long>(stages - 1) * floor_layers;

  MilpModel model("stage_split");
  std::vector<int> n(stages);
  for (int s = 0; s < stages; ++s) {
    // An empty domain (most < floor_layers) makes the model infeasible.
    n[s] = model.add_integer("layers_" + std::to_string(s), floor_layers, static_cast<double>(most));
  }
  const int m = model.add_continuous("makespan", 0, kInfinity, 1.0);
  model.set_sense(ObjectiveSense::kMinimize);
  std::vector<MilpTerm> sum;
  for (int s = 0; s < stages; ++s) {
    model.add_greater_equal("time_" + std::to_string(s), {{m, 1.0}, {n[s], -input.layer_time_s[s] / scale}},
                            at(input.extra_time_s, s, 0) / scale);
    model.add_less_equal("memory_" + std::to_string(s), {{n[s], 1.0}}, max_layers_unchecked(input, s));
    sum.push_back({n[s], 1.0});
  }
  model.add_equal("layers", std::move(sum), input.layers);
  if (input.equal_middle_stages) {
    for (int s = 2; s + 1 < stages; ++s) {
      model.add_equal("middle_" + std::to_string(s), {{n[s], 1.0}, {n[1], -1.0}}, 0.0);
    }
  }
  return model;
}

StageSplitResult stage_split_milp(const StageSplitInput& input, SolverBackend backend,
                                  const SolveOptions& options) {
  MakespanSolve solved =
      solve_makespan(stage_split_model(input), time_scale(input), input.stages, backend, options);
  StageSplitResult result;
  result.certificate = solved.certificate;
  if (solved.integers.empty()) return result;
  result.layers_per_stage = std::move(solved.integers);
  result.makespan_s = makespan(input, result.layers_per_stage);
  set_makespan(result.certificate, result.makespan_s);
  return result;
}

}  // namespace parplan
