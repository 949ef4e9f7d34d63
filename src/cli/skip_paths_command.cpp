// parplan skip-paths: SkipPipe partition and micro-batch paths for a problem file.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "src/cli/commands.h"
#include "src/io/input_error.h"
#include "src/io/skip_problem_loader.h"
#include "src/report/json_text.h"
#include "src/report/output_files.h"
#include "src/report/skip_paths_report.h"

namespace parplan {

void register_skip_paths(CLI::App& app, Commands& c) {
  c.skip_paths = app.add_subcommand(
      "skip-paths", "SkipPipe partial pipelines: node-to-stage partition and a path per micro-batch");
  c.skip_paths->footer(
      "Each micro-batch visits path_length stages (stage 0 first, at most two swaps of neighbouring "
      "stages);\n"
      "see docs/skip-paths.md for the problem file.\n"
      "Example:\n  parplan skip-paths --problem examples/skip-paths/geo-20-nodes.yaml --svg timeline.svg");
  SkipPathsFlags& f = c.skip_paths_flags;
  c.skip_paths->add_option("--problem", f.problem, "problem file (YAML or JSON)")->required();
  add_common_flags(*c.skip_paths, f.common);
  // The partition MILP only warm-starts a combinatorial search: a quarter
  // second unless --solver-time-limit asks for more (the flag overrides this).
  f.common.solver_time_limit_s = 0.25;
  c.skip_paths->get_option("--solver-time-limit")
      ->description(
          "bound the partition MILP to S seconds (default 0.25: it only seeds the partition search); "
          "a solve stopped early keeps its best partition and reports its gap");
  c.skip_paths->add_option("--solver", f.solver, "partition MILP backend: cbc | glpk (default cbc)")
      ->check(CLI::IsMember({"cbc", "glpk"}));
  add_output_path_option(*c.skip_paths, "--svg", f.svg, "write the timeline (one row per node) to FILE");
}

int run_skip_paths(const SkipPathsFlags& flags) {
  const auto start = flags.common.start;
  const SkipProblemInput input = load_skip_problem(flags.problem);
  if (!input.infeasible.empty()) {
    std::cerr << "parplan: no schedule within the rules: " << input.infeasible << "\n";
    return 1;
  }
  if (!flags.svg.empty()) check_output_path(flags.svg, "--svg");
  check_distinct_paths({{"--svg", flags.svg}}, {{"--problem", flags.problem}});
  check_standard_output_free({{"--svg", flags.svg}}, flags.common.json());
  SkipSolveOptions options;
  // The partition MILP gets --solver-time-limit (0.25 s by default); the
  // whole command gets --time-limit, 60 s without it. Time
  // already spent reading the problem counts.
  const double used_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double limit_s = flags.common.time_limit_s.value_or(60);
  options.time_limit_s = std::max(0.001, limit_s - used_s);
  options.solver_time_limit_s = flags.common.solver_time_limit_s;
  options.backend = parse_backend(flags.solver);
  SkipSolveResult result = solve_skip_paths(input.problem, options);
  if (used_s >= limit_s && result.infeasible.empty()) {
    // Reading cannot stop halfway (the answer needs the whole matrix): the
    // solve then takes its shortest course, a valid schedule all the same.
    char took[32];
    std::snprintf(took, sizeof took, "%.2f", used_s);
    result.time_limited = true;
    result.notes.insert(result.notes.begin(), std::string("reading the problem took ") + took +
                                                  " s, all of --time-limit: the solve took its shortest "
                                                  "course (seed partitions only, paths placed unscored)");
  }
  if (!result.infeasible.empty()) {
    std::cerr << "parplan: no schedule within the rules: " << result.infeasible << "\n";
    return 1;
  }
  if (result.time_limited)
    std::cerr << "parplan: --time-limit reached: the best schedule found so far (makespan "
              << result.schedule.makespan_s << " s against a lower bound of " << result.lower_bound_s
              << " s)\n";
  std::optional<double> solve_s;
  if (flags.common.timings())
    solve_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!flags.svg.empty()) {
    char makespan[32];
    std::snprintf(makespan, sizeof makespan, "%.2f s", result.schedule.makespan_s);
    write_file_atomically(flags.svg,
                          skip_paths_svg(input.problem, result.schedule,
                                         "skip-paths: " + flags.problem + ", makespan " + makespan),
                          "--svg");
  }
  if (flags.common.json())
    std::cout << json_text(skip_paths_json(input.problem, result, solve_s)) << "\n";
  else
    std::cout << skip_paths_table(input.problem, result, solve_s);
  return 0;
}

}  // namespace parplan
