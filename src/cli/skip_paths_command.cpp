// parplan skip-paths: SkipPipe partition and micro-batch paths for a problem file.
#include <chrono>
#include <fstream>
#include <iostream>

#include "src/cli/commands.h"
#include "src/io/input_error.h"
#include "src/io/skip_problem_loader.h"
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
  c.skip_paths->add_option("--time-limit", f.time_limit_s, "seconds for the whole command (default 60)")
      ->check(CLI::PositiveNumber);
  c.skip_paths->add_option("--solver", f.solver, "partition MILP backend: cbc | glpk (default cbc)")
      ->check(CLI::IsMember({"cbc", "glpk"}));
  c.skip_paths
      ->add_option("--solver-time-limit", f.solver_time_limit_s,
                   "seconds for the partition MILP (default 0.25; at most a quarter of --time-limit)")
      ->check(CLI::PositiveNumber);
  c.skip_paths->add_option("--format", f.format, "table | json (default table)")
      ->check(CLI::IsMember({"table", "json"}));
  c.skip_paths->add_option("--svg", f.svg, "write the timeline (one row per node) to FILE");
  c.skip_paths->add_flag("--no-timings", f.no_timings, "omit solve_s so equal input gives identical output");
}

int run_skip_paths(const SkipPathsFlags& flags) {
  const auto start = std::chrono::steady_clock::now();
  const SkipProblemInput input = load_skip_problem(flags.problem);
  if (!flags.svg.empty()) {
    std::ofstream probe(flags.svg, std::ios::app);
    if (!probe)
      throw InputError("--svg " + flags.svg + ": cannot be written; give a path in a writable directory");
  }
  SkipSolveOptions options;
  options.time_limit_s = flags.time_limit_s;
  options.solver_time_limit_s = flags.solver_time_limit_s;
  options.backend = parse_backend(flags.solver);
  const SkipSolveResult result = solve_skip_paths(input.problem, options);
  if (!result.infeasible.empty()) {
    std::cerr << "parplan: no schedule within the rules: " << result.infeasible << "\n";
    return 1;
  }
  std::optional<double> solve_s;
  if (!flags.no_timings)
    solve_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!flags.svg.empty()) {
    std::ofstream out(flags.svg);
    out << skip_paths_svg(
        input.problem, result.schedule,
        "skip-paths: " + flags.problem + ", makespan " + std::to_string(result.schedule.makespan_s) + " s");
  }
  if (flags.format == "json")
    std::cout << skip_paths_json(input.problem, result, solve_s).dump(2) << "\n";
  else
    std::cout << skip_paths_table(input.problem, result, solve_s);
  return 0;
}

}  // namespace parplan
