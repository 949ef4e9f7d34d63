// Partition MILP. x[i][s] = node i in stage s (binary); z[s][i][j] = node i
// of stage s links to node j of stage s+1 (continuous: once x is integral the
// rest is a transportation problem, whose vertices are integral).
//   sum_s x[i][s] = 1                          every node in one stage
//   sum_i x[i][s] = n_s                        stage sizes
//   sum_j z[s][i][j] = x[i][s]                 each node of s < S-1 has a link
//   z[s][i][j] <= x[j][s+1]                    ... into stage s+1
//   sum_i z[s][i][j] <= ceil(n_s / n_{s+1}) x[j][s+1]   spread over it
//   minimise sum c_ij z[s][i][j],  c_ij = transfer(i,j) + transfer(j,i)
// Links go only to each node's kLinkCandidates nearest nodes (all of them up
// to kLinkCandidates + 1 nodes) and between the warm start's neighbouring
// stages (so it stays feasible): a link to a far node is rarely worth it while
// a near one is free, and it keeps the model small (20 nodes, 6 stages: about
// 900 links instead of 1900).
#include "solvers/skip_partition_milp.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace parplan {
namespace {

constexpr int kLinkCandidates = 8;

std::vector<char> near_links(const SkipNetwork& net) {
  const int n = net.nodes;
  std::vector<char> near(static_cast<std::size_t>(n) * n, 0);
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) order[j] = j;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return skip_link_round_trip_s(net, i, a) < skip_link_round_trip_s(net, i, b);
    });
    int kept = 0;
    for (int j : order)
      if (j != i && kept < kLinkCandidates) near[i * n + j] = 1, ++kept;
  }
  return near;
}

struct PartitionModel {
  MilpModel model{"skip_partition"};
  std::vector<int> x;  // x[i * S + s]
};

/// Links also between neighbouring stages of `keep`, so that it stays feasible.
/// relax: x continuous in [0, 1] (the LP relaxation, a lower bound).
PartitionModel build_model(const SkipNetwork& net, const std::vector<int>& sizes, const SkipPartition& keep,
                           bool relax = false) {
  PartitionModel m;
  const int n = net.nodes;
  const int stages = static_cast<int>(sizes.size());
  m.x.resize(static_cast<std::size_t>(n) * stages);
  for (int i = 0; i < n; ++i)
    for (int s = 0; s < stages; ++s)
      m.x[i * stages + s] =
          relax ? m.model.add_continuous("x_" + std::to_string(i) + "_" + std::to_string(s), 0, 1)
                : m.model.add_binary("x_" + std::to_string(i) + "_" + std::to_string(s));
  for (int i = 0; i < n; ++i) {
    std::vector<MilpTerm> row;
    for (int s = 0; s < stages; ++s) row.push_back({m.x[i * stages + s], 1});
    m.model.add_equal("one_stage_" + std::to_string(i), std::move(row), 1);
  }
  for (int s = 0; s < stages; ++s) {
    std::vector<MilpTerm> row;
    for (int i = 0; i < n; ++i) row.push_back({m.x[i * stages + s], 1});
    m.model.add_equal("size_" + std::to_string(s), std::move(row), sizes[s]);
  }
  std::vector<char> near = near_links(net);
  for (std::size_t s = 0; s + 1 < keep.size(); ++s)
    for (int i : keep[s])
      for (int j : keep[s + 1]) near[i * n + j] = 1;
  for (int s = 0; s + 1 < stages; ++s) {
    const double fan_in = std::ceil(static_cast<double>(sizes[s]) / sizes[s + 1]);
    std::vector<std::vector<MilpTerm>> into(n);
    for (int i = 0; i < n; ++i) {
      std::vector<MilpTerm> out{{m.x[i * stages + s], -1}};
      for (int j = 0; j < n; ++j) {
        if (j == i || !near[i * n + j]) continue;
        const double cost_s = skip_link_round_trip_s(net, i, j);
        const std::string tag = std::to_string(s) + "_" + std::to_string(i) + "_" + std::to_string(j);
        const int z = m.model.add_continuous("z_" + tag, 0, 1, cost_s);
        out.push_back({z, 1});
        into[j].push_back({z, 1});
        m.model.add_less_equal("link_" + tag, {{z, 1}, {m.x[j * stages + s + 1], -1}}, 0);
      }
      m.model.add_equal("out_" + std::to_string(s) + "_" + std::to_string(i), std::move(out), 0);
    }
    for (int j = 0; j < n; ++j) {
      into[j].push_back({m.x[j * stages + s + 1], -fan_in});
      m.model.add_less_equal("in_" + std::to_string(s) + "_" + std::to_string(j), std::move(into[j]), 0);
    }
  }
  return m;
}

}  // namespace

double skip_partition_link_cost(const SkipNetwork& net, const SkipPartition& partition,
                                SolverBackend backend) {
  // With every stage fixed the model falls apart into one transportation
  // problem per pair of neighbouring stages (at most a few dozen links each):
  // solved on their own they take milliseconds, where the whole model with
  // its stages pinned took a tenth of a second or more.
  double total_s = 0;
  for (std::size_t s = 0; s + 1 < partition.size(); ++s) {
    const std::vector<int>& from = partition[s];
    const std::vector<int>& to = partition[s + 1];
    if (from.empty()) continue;
    if (to.empty()) return kInfinity;
    const double fan_in = std::ceil(static_cast<double>(from.size()) / to.size());
    MilpModel model("skip_link_cost");
    std::vector<std::vector<MilpTerm>> into(to.size());
    for (std::size_t a = 0; a < from.size(); ++a) {
      std::vector<MilpTerm> out;
      for (std::size_t b = 0; b < to.size(); ++b) {
        const int z = model.add_continuous("z_" + std::to_string(a) + "_" + std::to_string(b), 0, 1,
                                           skip_link_round_trip_s(net, from[a], to[b]));
        out.push_back({z, 1});
        into[b].push_back({z, 1});
      }
      model.add_equal("out_" + std::to_string(a), std::move(out), 1);
    }
    for (std::size_t b = 0; b < to.size(); ++b)
      model.add_less_equal("in_" + std::to_string(b), std::move(into[b]), fan_in);
    const SolveResult r = solve(model, backend, SolveOptions{});
    if (!r.has_solution()) return kInfinity;
    total_s += r.certificate.objective;
  }
  return total_s;
}

SkipPartitionMilpResult solve_skip_partition_milp(const SkipNetwork& net, const std::vector<int>& sizes,
                                                  const SkipPartition& warm_start, SolverBackend backend,
                                                  const SolveOptions& options) {
  SkipPartitionMilpResult result;
  result.partition = warm_start;
  result.warm_start_cost_s = skip_partition_link_cost(net, warm_start, backend);
  result.link_cost_s = result.warm_start_cost_s;
  // The LP relaxation (milliseconds): when its bound reaches the warm start's
  // cost, the warm start is optimal and the MILP need not run; otherwise it
  // gives the warm start's gap should the MILP find nothing better.
  const SolveResult lp = solve(build_model(net, sizes, warm_start, true).model, backend, options);
  const double bound_s = lp.has_solution() ? lp.certificate.objective : -kInfinity;
  const double warm_s = result.warm_start_cost_s;
  if (bound_s >= warm_s - 1e-9 * std::max(1.0, warm_s)) {
    result.certificate = lp.certificate;
    result.certificate.objective = warm_s;
    result.certificate.best_bound = bound_s;
    result.certificate.gap = 0;
    result.certificate.message = "the LP relaxation's bound reaches the warm start's link cost";
    return result;
  }
  PartitionModel m = build_model(net, sizes, warm_start);
  // The backends take no starting solution, and the warm start's cost as a
  // cutoff row kept CBC from finding any solution within seconds; so the warm
  // start is the incumbent the answer must beat.
  const SolveResult r = solve(m.model, backend, options);
  result.certificate = r.certificate;
  result.certificate.time_s += lp.certificate.time_s;
  if (!r.has_solution() || r.certificate.objective >= result.warm_start_cost_s - 1e-9) {
    // The answer is the warm start: its gap to the best bound known.
    const double best_s =
        std::max(bound_s, std::isfinite(r.certificate.best_bound) ? r.certificate.best_bound : -kInfinity);
    if (std::isfinite(best_s)) {
      result.certificate.best_bound = best_s;
      result.certificate.gap = std::max(0.0, warm_s - best_s) / std::max(warm_s, 1e-9);
    }
    return result;
  }
  const int stages = static_cast<int>(sizes.size());
  SkipPartition p(stages);
  for (int i = 0; i < net.nodes; ++i)
    for (int s = 0; s < stages; ++s)
      if (r.values[m.x[i * stages + s]] > 0.5) p[s].push_back(i);
  result.partition = std::move(p);
  result.link_cost_s = r.certificate.objective;
  return result;
}

}  // namespace parplan
