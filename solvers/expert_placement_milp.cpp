// Builds, solves and decodes the expert-placement MILP of one GPU window.
#include "solvers/expert_placement_milp.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace parplan {

namespace {

double share(const WindowExpert& e, int inside) { return e.load / (e.outside + inside); }

}  // namespace

PlacementMilp build_placement_milp(const PlacementWindow& w) {
  PlacementMilp out;
  MilpModel& m = out.model;
  const int n = static_cast<int>(w.experts.size());
  const int G = w.gpus;
  double scale = 0;
  for (const WindowExpert& e : w.experts) scale = std::max(scale, e.load);
  out.scale = scale > 0 ? scale : 1;

  // u[i][k - min_count][g]
  std::vector<std::vector<std::vector<int>>> u(n);
  for (int i = 0; i < n; ++i) {
    const WindowExpert& e = w.experts[i];
    for (int k = e.min_count; k <= e.max_count; ++k) {
      std::vector<int> per_gpu(G);
      for (int g = 0; g < G; ++g) {
        per_gpu[g] =
            m.add_binary("u_" + std::to_string(i) + "_" + std::to_string(k) + "_" + std::to_string(g));
      }
      u[i].push_back(per_gpu);
    }
  }
  const double upper = std::isfinite(w.upper_bound) ? w.upper_bound / out.scale : kInfinity;
  const int makespan = m.add_continuous("max_gpu_load", 0, upper, 1.0);

  for (int i = 0; i < n; ++i) {
    const WindowExpert& e = w.experts[i];
    const std::string id = std::to_string(i);
    const bool fixed = e.min_count == e.max_count;
    std::vector<MilpTerm> pick;
    for (int k = e.min_count; k <= e.max_count; ++k) {
      std::vector<MilpTerm> count;
      for (int g = 0; g < G; ++g) count.push_back({u[i][k - e.min_count][g], 1.0});
      if (fixed) {
        m.add_equal("count_" + id, count, k);
        continue;
      }
      const int y = m.add_binary("y_" + id + "_" + std::to_string(k));
      pick.push_back({y, 1.0});
      count.push_back({y, -static_cast<double>(k)});
      m.add_equal("count_" + id + "_" + std::to_string(k), count, 0);
    }
    if (fixed) continue;
    m.add_equal("pick_" + id, pick, 1);
    for (int g = 0; g < G; ++g) {
      std::vector<MilpTerm> once;
      for (const auto& per_gpu : u[i]) once.push_back({per_gpu[g], 1.0});
      m.add_less_equal("once_" + id + "_" + std::to_string(g), once, 1);
    }
  }
  auto gpu_load = [&](int g, double sign) {
    std::vector<MilpTerm> terms;
    for (int i = 0; i < n; ++i) {
      const WindowExpert& e = w.experts[i];
      for (int k = e.min_count; k <= e.max_count; ++k) {
        terms.push_back({u[i][k - e.min_count][g], sign * share(e, k) / out.scale});
      }
    }
    return terms;
  };
  for (int g = 0; g < G; ++g) {
    std::vector<MilpTerm> slots;
    for (int i = 0; i < n; ++i) {
      for (const auto& per_gpu : u[i]) slots.push_back({per_gpu[g], 1.0});
    }
    m.add_equal("slots_" + std::to_string(g), slots, w.slots);
    std::vector<MilpTerm> busiest = gpu_load(g, -1.0);
    busiest.push_back({makespan, 1.0});
    m.add_greater_equal("busiest_" + std::to_string(g), busiest, 0);
    if (g + 1 < G) {
      std::vector<MilpTerm> order = gpu_load(g, 1.0);
      const std::vector<MilpTerm> next = gpu_load(g + 1, -1.0);
      order.insert(order.end(), next.begin(), next.end());
      m.add_greater_equal("order_" + std::to_string(g), order, 0);
    }
  }
  return out;
}

WindowSolve solve_placement_window(const PlacementWindow& window, SolverBackend backend,
                                   const SolveOptions& options) {
  const PlacementMilp built = build_placement_milp(window);
  const SolveResult solved = solve(built.model, backend, options);
  WindowSolve out;
  out.certificate = solved.certificate;
  out.certificate.objective *= built.scale;
  out.certificate.best_bound *= built.scale;
  if (!solved.has_solution()) return out;
  const int n = static_cast<int>(window.experts.size());
  const int G = window.gpus;
  WindowSolution sol;
  sol.counts.assign(n, 0);
  sol.gpu_experts.assign(G, {});
  int var = 0;  // u variables come first, in build order
  for (int i = 0; i < n; ++i) {
    for (int k = window.experts[i].min_count; k <= window.experts[i].max_count; ++k) {
      for (int g = 0; g < G; ++g, ++var) {
        if (solved.values[var] > 0.5) {
          ++sol.counts[i];
          sol.gpu_experts[g].push_back(i);
        }
      }
    }
  }
  out.solution = std::move(sol);
  return out;
}

}  // namespace parplan
