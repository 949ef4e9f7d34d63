// parplan scatter: reads the steps and the coefficients, solves every step
// (in parallel), prints the plans and writes the --out lines.
#include "src/cli/scatter_command.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cost/scatter_coefficients.h"
#include "solvers/sequence_scatter.h"
#include "src/cli/common_flags.h"
#include "src/cli/job_options.h"
#include "src/cli/progress_line.h"
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/io/job_loader.h"
#include "src/io/model_loader.h"
#include "src/io/scatter_input.h"
#include "src/report/json_text.h"
#include "src/report/output_files.h"
#include "src/report/scatter_report.h"
#include "src/report/scatter_svg.h"

namespace parplan {

CLI::App* register_scatter(CLI::App& app, ScatterFlags& f) {
  CLI::App* cmd =
      app.add_subcommand("scatter", "Per-step sequence-parallel groups for variable-length batches (FlexSP)");
  cmd->footer(
      "Lengths: one step per line (tokens, separated by spaces or commas) or JSON {\"steps\": [[...], "
      "...]}.\n"
      "See docs/scatter.md.\n"
      "Examples:\n"
      "  parplan scatter --lengths examples/scatter/long-tail-steps.txt --gpus 64 \\\n"
      "                  --coefficients examples/scatter/flexsp-gpt-7b-64xa100.json\n"
      "  parplan scatter --lengths examples/scatter/long-tail-steps.txt --gpus 64 --model llama3-8b \\\n"
      "                  --cluster dgx-a100 --format json --out plan.jsonl\n"
      "  parplan scatter --lengths examples/scatter/long-tail-steps.txt --gpus 64 \\\n"
      "                  --coefficients examples/scatter/flexsp-gpt-7b-64xa100.json --svg step0.svg");
  cmd->add_option("--lengths", f.lengths, "file of sequence lengths, one step per line (or JSON)")
      ->required();
  add_int_option(*cmd, "--gpus", f.gpus, "GPUs G of the job", 1, 1 << 20)->required();
  cmd->add_option("--model", f.model, "model: catalog name, YAML path or Hugging Face config.json");
  cmd->add_option("--cluster", f.cluster, "hardware profile name or YAML path");
  cmd->add_option("--precision", f.precision, "bf16 | fp16 | fp8 (default bf16)");
  add_int_option(*cmd, "--zero", f.zero, "ZeRO stage over all GPUs (default 3, FlexSP's setting)", 0, 3);
  cmd->add_option("--recompute", f.recompute, "none | selective | full (default none)");
  cmd->add_option("--coefficients", f.coefficients, "coefficients JSON (instead of --model/--cluster)");
  cmd->add_option("--group-sizes", f.group_sizes, "allowed group sizes, e.g. 1,2,4,8,16,32,64");
  add_number_option(*cmd, "--step-time-limit-ms", f.step_time_limit_ms,
                    "wall-clock budget per step (default 50)", 0.001, 3.6e6);
  add_number_option(*cmd, "--improve-ms", f.improve_ms,
                    "per step, after the plan search: this many more milliseconds of ruin and recreate "
                    "(default 0; 100 finds about 0.5 % of a long-tail step, 1000 about 1 %)",
                    0.0, 3.6e6);
  cmd->add_option("--solver", f.solver, "cbc | glpk (default cbc)");
  add_output_path_option(*cmd, "--out", f.out,
                         "write one JSON line per step (the plan a data loader applies) to FILE");
  CLI::Option* svg = add_output_path_option(
      *cmd, "--svg", f.svg,
      "draw one step's plan (GPU ranks down, time across: every group and sequence) to FILE");
  add_int_option(*cmd, "--svg-step", f.svg_step, "the step --svg draws, 0-based (default 0)", 0, 1 << 30)
      ->needs(svg);
  add_common_flags(*cmd, f.common);
  return cmd;
}

namespace {

std::string gib_text(double bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << bytes / (1024.0 * 1024.0 * 1024.0) << " GiB";
  return out.str();
}

/// `infeasible`: set (and the coefficients left unchecked) when the model
/// states leave no memory for one token: a valid request with no answer.
/// `learned_positions`: the model's position table, 0 when it has none.
ScatterCoefficients resolve_coefficients(const ScatterFlags& f, std::string& source, std::string& infeasible,
                                         int& learned_positions) {
  const std::vector<int> sizes =
      f.group_sizes ? parse_group_sizes(*f.group_sizes, "--group-sizes") : std::vector<int>{};
  const bool from_model = !f.model.empty() || !f.cluster.empty();
  if (from_model == !f.coefficients.empty()) {
    throw InputError("give either --model and --cluster, or --coefficients FILE (not both)");
  }
  const int gpus = *f.gpus;
  std::vector<int> sorted = sizes;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < sorted.size(); ++k) {
    const int p = sorted[k];
    if (p > gpus || gpus % p != 0) {
      throw InputError("--group-sizes: group size " + std::to_string(p) + " must be between 1 and --gpus " +
                       std::to_string(gpus) + " and divide it");
    }
    if (k > 0 && p % sorted[k - 1] != 0) {
      throw InputError("--group-sizes: group size " + std::to_string(sorted[k - 1]) +
                       " must divide the next size " + std::to_string(p) + " (use powers of two)");
    }
  }
  ScatterCoefficients c;
  if (!f.coefficients.empty()) {
    // The file's numbers already include what these settings would change.
    const std::pair<bool, const char*> model_only[] = {{f.precision.has_value(), "--precision"},
                                                       {f.zero.has_value(), "--zero"},
                                                       {f.recompute.has_value(), "--recompute"}};
    for (const auto& [given, flag] : model_only) {
      if (given)
        throw InputError(std::string(flag) +
                         " applies with --model and --cluster, not --coefficients: leave it out");
    }
    c = load_scatter_coefficients(f.coefficients, sizes);
    source = f.coefficients;
  } else {
    if (f.model.empty() || f.cluster.empty())
      throw InputError("--model and --cluster go together: give both");
    const ModelSpec model = load_model(f.model);
    const ClusterSpec cluster = load_cluster(f.cluster);
    if (model.position == PositionKind::kLearned && model.max_positions > 0)
      learned_positions = model.max_positions;
    ScatterCostSetting setting;
    setting.gpus = gpus;
    setting.precision = parse_precision(f.precision.value_or("bf16"), "--precision");
    check_precision_supported(cluster, setting.precision, "--precision");
    setting.recompute = parse_recompute(f.recompute.value_or("none"), "--recompute");
    if (f.zero) setting.zero = *f.zero;
    std::vector<int> allowed = ulysses_group_sizes(model, gpus);
    if (!sizes.empty()) {
      for (int p : sizes) {
        if (p <= gpus && gpus % p == 0 && model.heads % p != 0) {
          throw InputError("--group-sizes: " + std::to_string(p) + " does not divide the " +
                           std::to_string(model.heads) + " attention heads of " + model.name +
                           " (Ulysses splits heads)");
        }
      }
      allowed = sizes;
      std::sort(allowed.begin(), allowed.end());
    }
    c = derive_scatter_coefficients(model, cluster, setting, allowed);
    source = "model " + model.name + " on " + cluster.name;
    if (c.token_capacity_per_gpu < 1) {
      const ScatterMemory m = scatter_memory_per_gpu(model, cluster, setting);
      infeasible = "the model states of " + model.name + " (ZeRO-" + std::to_string(setting.zero) + " over " +
                   std::to_string(gpus) + " GPUs) need " + gib_text(m.state_bytes) + " per GPU of the " +
                   gib_text(m.usable_bytes) + " of HBM usable on " + cluster.name +
                   ", leaving no memory for activations; " +
                   (setting.zero < 3 ? "use more GPUs or a higher --zero stage"
                                     : "use more GPUs (ZeRO-3 already shards every model state)");
      return c;
    }
  }
  if (const std::string problem = check_scatter_coefficients(c, gpus); !problem.empty()) {
    const std::string where =
        f.coefficients.empty() ? (f.group_sizes ? "--group-sizes" : "coefficients") : f.coefficients;
    throw InputError(where + ": " + problem);
  }
  return c;
}

}  // namespace

int run_scatter(const ScatterFlags& f) {
  check_format(f.common.format);
  if (f.solver != "cbc" && f.solver != "glpk")
    throw InputError("--solver: '" + f.solver + "' is not cbc or glpk");
  if (!f.out.empty()) check_output_path(f.out, "--out");
  if (!f.svg.empty()) check_output_path(f.svg, "--svg");
  check_distinct_paths({{"--out", f.out}, {"--svg", f.svg}},
                       {{"--lengths", f.lengths}, {"--coefficients", f.coefficients}});
  check_standard_output_free({{"--out", f.out}, {"--svg", f.svg}}, f.common.json());
  std::string source, infeasible;
  int learned_positions = 0;
  const ScatterCoefficients c = resolve_coefficients(f, source, infeasible, learned_positions);
  if (!infeasible.empty()) {
    std::cerr << "parplan: infeasible: " << infeasible << "\n";
    return 1;
  }
  ScatterReport report;
  report.gpus = *f.gpus;
  report.coefficients = c;
  report.coefficients_source = source;
  report.steps = load_scatter_lengths(f.lengths);
  report.timings = f.common.timings();
  if (!f.svg.empty() && f.svg_step >= static_cast<int>(report.steps.size()))
    throw InputError("--svg-step: step " + std::to_string(f.svg_step) + " does not exist; " + f.lengths +
                     " has " + std::to_string(report.steps.size()) + " step(s), numbered from 0");
  // A position table has no row past its length: not a plan to search.
  for (size_t s = 0; learned_positions > 0 && s < report.steps.size(); ++s)
    for (size_t i = 0; i < report.steps[s].size(); ++i)
      if (report.steps[s][i] > learned_positions)
        throw InputError("--lengths " + f.lengths + ": step " + std::to_string(s) + ", sequence " +
                         std::to_string(i) + " has " + std::to_string(report.steps[s][i]) +
                         " tokens, more than the " + std::to_string(learned_positions) +
                         " learned positions of the model; use shorter sequences or a model with rotary "
                         "positions");
  for (size_t s = 0; s < report.steps.size(); ++s) {
    const int i = first_unplaceable_sequence(report.steps[s], c);
    if (i >= 0) {
      std::cerr << "parplan: infeasible: step " << s << ", sequence " << i << " has " << report.steps[s][i]
                << " tokens, more than the largest group can hold (" << c.group_sizes.back() << " GPUs x "
                << c.token_capacity_per_gpu << " tokens = " << scatter_capacity_tokens(c)
                << " tokens); allow a larger group size or drop the sequence\n";
      return 1;
    }
  }

  ScatterOptions options;
  options.backend = f.solver == "glpk" ? SolverBackend::kGlpk : SolverBackend::kCbc;
  const auto start = std::chrono::steady_clock::now();
  // Time spent before the solves (reading, coefficients) counts against --time-limit.
  const double total_budget_s =
      f.common.time_limit_s
          ? *f.common.time_limit_s - std::chrono::duration<double>(start - f.common.start).count()
          : std::numeric_limits<double>::infinity();
  const double step_budget_s = std::min(f.step_time_limit_ms / 1000.0, f.common.solver_time_limit_s);
  const int n = static_cast<int>(report.steps.size());
  report.results.resize(n);
  ProgressLine progress("scatter", "steps", "solved");
  std::atomic<int> solved{0};
  std::atomic<bool> limited{false};
  tbb::parallel_for(0, n, [&](int s) {
    ScatterOptions step = options;
    const double used_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (total_budget_s - used_s < step_budget_s + f.improve_ms / 1000.0) limited = true;
    // Past the command's limit a step still gets the fast path (its gap is stated).
    step.step_time_limit_s = std::max(1e-6, std::min(step_budget_s, total_budget_s - used_s));
    step.improve_time_s =
        std::max(0.0, std::min(f.improve_ms / 1000.0, total_budget_s - used_s - step.step_time_limit_s));
    report.results[s] = solve_scatter_step(report.steps[s], report.gpus, c, step);
    if (n > 16) progress.update(++solved, n);
  });
  progress.finish();
  report.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  // --out and --svg as a set: both complete before either replaces its target.
  OutputFiles files;
  if (!f.out.empty()) files.stage(f.out, scatter_out_lines(report), "--out");
  if (!f.svg.empty()) files.stage(f.svg, scatter_step_svg(report, f.svg_step), "--svg");
  files.commit();
  const std::string note =
      limited ? "--time-limit reached: later steps got less than their budget; each step's plan is the best "
                "found in time, its gap to the bound stated"
              : "";
  if (!note.empty()) std::cerr << "parplan: " << note << "\n";
  if (f.common.json()) {
    auto j = scatter_json(report);
    j["stopped_at_time_limit"] = limited.load();
    std::cout << json_text(j) << "\n";
  } else {
    std::cout << scatter_table(report);
    if (!note.empty()) std::cout << "note: " << note << "\n";
  }
  return 0;
}

}  // namespace parplan
