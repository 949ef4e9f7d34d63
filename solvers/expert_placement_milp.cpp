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

  std::vector<int> x(static_cast<size_t>(n) * G);
  for (int i = 0; i < n; ++i) {
    for (int g = 0; g < G; ++g) x[i * G + g] = m.add_binary("x_" + std::to_string(i) + "_" + std::to_string(g));
  }
  // y[i] holds the count indicators of expert i (empty when its count is fixed).
  std::vector<std::vector<int>> y(n);
  for (int i = 0; i < n; ++i) {
    const WindowExpert& e = w.experts[i];
    if (e.min_count == e.max_count) continue;
    for (int k = e.min_count; k <= e.max_count; ++k) {
      y[i].push_back(m.add_binary("y_" + std::to_string(i) + "_" + std::to_string(k)));
    }
  }
  std::vector<int> l(static_cast<size_t>(n) * G);
  for (int i = 0; i < n; ++i) {
    for (int g = 0; g < G; ++g) l[i * G + g] = m.add_continuous("l_" + std::to_string(i) + "_" + std::to_string(g), 0, kInfinity);
  }
  const double upper = std::isfinite(w.upper_bound) ? w.upper_bound / out.scale : kInfinity;
  const int makespan = m.add_continuous("max_gpu_load", 0, upper, 1.0);

  for (int g = 0; g < G; ++g) {
    std::vector<MilpTerm> slots;
    std::vector<MilpTerm> busiest{{makespan, 1.0}};
    for (int i = 0; i < n; ++i) {
      slots.push_back({x[i * G + g], 1.0});
      busiest.push_back({l[i * G + g], -1.0});
    }
    m.add_equal("slots_" + std::to_string(g), slots, w.slots);
    m.add_greater_equal("busiest_" + std::to_string(g), busiest, 0);
  }
  for (int i = 0; i < n; ++i) {
    const WindowExpert& e = w.experts[i];
    const std::string id = std::to_string(i);
    const double big = share(e, e.min_count) / out.scale;
    std::vector<MilpTerm> count;
    std::vector<MilpTerm> tokens;
    for (int g = 0; g < G; ++g) {
      count.push_back({x[i * G + g], 1.0});
      tokens.push_back({l[i * G + g], 1.0});
    }
    if (y[i].empty()) {
      m.add_equal("count_" + id, count, e.min_count);
      m.add_greater_equal("tokens_" + id, tokens, e.min_count * share(e, e.min_count) / out.scale);
      for (int g = 0; g < G; ++g) {
        // Fixed share: l >= share * x, no big-M needed.
        m.add_greater_equal("share_" + id + "_" + std::to_string(g),
                            {{l[i * G + g], 1.0}, {x[i * G + g], -share(e, e.min_count) / out.scale}}, 0);
      }
      continue;
    }
    std::vector<MilpTerm> pick;
    std::vector<MilpTerm> share_terms;
    for (int k = e.min_count; k <= e.max_count; ++k) {
      const int v = y[i][k - e.min_count];
      pick.push_back({v, 1.0});
      count.push_back({v, -static_cast<double>(k)});
      tokens.push_back({v, -k * share(e, k) / out.scale});
      share_terms.push_back({v, -share(e, k) / out.scale});
    }
    m.add_equal("pick_" + id, pick, 1);
    m.add_equal("count_" + id, count, 0);
    m.add_greater_equal("tokens_" + id, tokens, 0);
    for (int g = 0; g < G; ++g) {
      // l >= share(count) - big * (1 - x)
      std::vector<MilpTerm> row = share_terms;
      row.push_back({l[i * G + g], 1.0});
      row.push_back({x[i * G + g], -big});
      m.add_greater_equal("share_" + id + "_" + std::to_string(g), row, -big);
    }
  }
  // The GPUs of a window are interchangeable: GPU 0 holds the heaviest expert.
  int heaviest = -1;
  for (int i = 0; i < n; ++i) {
    if (w.experts[i].min_count < 1) continue;
    if (heaviest < 0 || share(w.experts[i], w.experts[i].min_count) > share(w.experts[heaviest], w.experts[heaviest].min_count)) heaviest = i;
  }
  if (heaviest >= 0 && G > 0) m.add_equal("symmetry", {{x[heaviest * G], 1.0}}, 1);
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
  for (int i = 0; i < n; ++i) {
    for (int g = 0; g < G; ++g) {
      if (solved.values[i * G + g] > 0.5) {
        ++sol.counts[i];
        sol.gpu_experts[g].push_back(i);
      }
    }
  }
  out.solution = std::move(sol);
  return out;
}

}  // namespace parplan
