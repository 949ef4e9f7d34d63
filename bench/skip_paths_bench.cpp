// Speed of `parplan skip-paths` on SkipPipe's geo-distributed settings.
// Targets (issue 16): 20 nodes / 6 stages <= 1 s, 32 nodes / 8 stages <= 5 s
// on 2 cores. Prints medians (wall and process CPU time: on a shared machine
// the CPU time over the cores used is the fairer figure) and the makespan
// against the full pipeline.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "solvers/skip_paths.h"
#include "src/io/skip_problem_loader.h"

int main() {
  using namespace parplan;
  struct Case {
    const char* file;
    double target_s;
  };
  const Case cases[] = {{"geo-20-nodes.yaml", 1.0}, {"geo-32-nodes.yaml", 5.0}};
  constexpr int kRuns = 5;
  for (const Case& c : cases) {
    const SkipProblem p =
        load_skip_problem(std::string(PARPLAN_SOURCE_DIR) + "/examples/skip-paths/" + c.file).problem;
    std::vector<double> times_s, cpu_s;
    SkipSolveResult r;
    for (int i = 0; i < kRuns; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::clock_t c0 = std::clock();
      r = solve_skip_paths(p, SkipSolveOptions{});
      cpu_s.push_back(static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
      times_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times_s.begin(), times_s.end());
    std::sort(cpu_s.begin(), cpu_s.end());
    const double median_s = times_s[kRuns / 2];
    std::printf(
        "%-20s nodes %2d stages %zu  median solve %.3f s wall, %.3f s CPU (target %.1f s, %.2fx of it)  "
        "makespan %.2f s  "
        "full pipeline %.2f s  ratio %.3f  lower bound %.2f s  partitions scored %d\n",
        c.file, p.network.nodes, p.stage_sizes.size(), median_s, cpu_s[kRuns / 2], c.target_s,
        median_s / c.target_s, r.schedule.makespan_s, r.full_pipeline.makespan_s,
        r.schedule.makespan_s / r.full_pipeline.makespan_s, r.lower_bound_s, r.partitions_evaluated);
  }
  return 0;
}
