// parplan calibrate: fit a profile's constants to measured runs; report the
// errors; write the calibrated profile.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "src/cli/commands.h"
#include "src/cli/common_flags.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/input_error.h"
#include "src/io/printable_text.h"
#include "src/io/profile_writer.h"
#include "src/io/run_sources.h"
#include "src/report/calibrate_report.h"
#include "src/report/calibrate_svg.h"
#include "src/report/json_text.h"
#include "src/report/output_files.h"
#include "src/tune/calibrate.h"

namespace parplan {

void register_calibrate(CLI::App& app, Commands& c) {
  c.calibrate = app.add_subcommand("calibrate", "Fit a hardware profile's constants to measured runs");
  c.calibrate->footer(
      "Runs: YAML/CSV run files, Megatron-LM logs, torchtitan logs (with their .toml or .py config beside\n"
      "them), as files or directories. See docs/calibrate.md.\n"
      "Example:\n  parplan calibrate --cluster dgx-h100 --runs calibration/h100-megatron-lm.yaml \\\n"
      "                    --out my-h100.yaml --svg my-h100-errors.svg");
  CalibrateFlags& f = c.calibrate_flags;
  c.calibrate->add_option("--cluster", f.cluster, "hardware profile to start from (name or YAML path)")
      ->required();
  c.calibrate
      ->add_option("--runs", f.runs,
                   "run files (.yaml, .csv), Megatron-LM or torchtitan logs, or directories")
      ->required();
  c.calibrate->add_option("--fit", f.fit,
                          "constants to fit, comma-separated (default: those the runs identify)");
  c.calibrate->add_option("--objective", f.objective, "mean | max relative step-time error (default mean)");
  add_output_path_option(*c.calibrate, "--out", f.out, "write the calibrated profile to FILE.yaml");
  add_output_path_option(*c.calibrate, "--svg", f.svg,
                         "draw every run's step-time error before, after and left out of the fit to FILE");
  c.calibrate->add_option("--name", f.name, "name of the written profile (default: the file's stem)");
  c.calibrate->add_option("--solver", f.solver, "cbc | glpk (default cbc)");
  c.calibrate->add_flag("--no-cross-validate", f.no_cross_validate, "skip the leave-one-out fits");
  add_common_flags(*c.calibrate, f.common);
}

namespace {
namespace fs = std::filesystem;
/// --fit's comma-separated keys; an empty list or item is a mistake (an
/// unset shell variable, a doubled comma), not the default selection.
std::vector<std::string> split_keys(const std::string& text) {
  std::vector<std::string> keys;
  std::stringstream in(text);
  for (std::string k; std::getline(in, k, ',');) keys.push_back(k);
  if (!text.empty() && text.back() == ',') keys.emplace_back();
  const bool blank =
      keys.empty() || std::any_of(keys.begin(), keys.end(), [](const std::string& k) { return k.empty(); });
  if (blank)
    throw InputError("--fit: empty constant name in '" + text +
                     "'; name constants comma-separated (e.g. gemm_efficiency_max,layer_overhead_s) or "
                     "leave --fit out to fit those the runs identify");
  return keys;
}
std::string today() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}
}  // namespace

int run_calibrate(const CalibrateFlags& flags) {
  check_format(flags.common.format);
  if (flags.objective != "mean" && flags.objective != "max")
    throw InputError("--objective must be mean or max (got '" + flags.objective + "')");
  if (!flags.out.empty()) check_output_path(flags.out, "--out");
  if (!flags.name.empty() && flags.out.empty())
    throw InputError("--name names the profile --out writes; give --out");
  // The name is written quoted, so any printable text reads back; a control
  // character (a newline) is no profile name.
  for (const char ch : flags.name)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
      throw InputError("--name holds a control character (a newline or tab); give a printable name");
  if (!is_utf8(flags.name))
    throw InputError("--name holds bytes that are not UTF-8 text; give a printable name");
  if (!flags.svg.empty()) check_output_path(flags.svg, "--svg");
  {
    // The profile written must not replace a run file or the profile read.
    std::vector<NamedPath> inputs{{"--cluster", flags.cluster}};
    for (const std::string& run : flags.runs) inputs.push_back({"--runs", run});
    check_distinct_paths({{"--out", flags.out}, {"--svg", flags.svg}}, inputs);
    check_standard_output_free({{"--out", flags.out}, {"--svg", flags.svg}}, flags.common.json());
    // Nor land in a --runs folder as a file the next calibrate would read as
    // a run (overwriting a log there, or a new profile .yaml beside them).
    for (const NamedPath& output : {NamedPath{"--out", flags.out}, NamedPath{"--svg", flags.svg}}) {
      if (output.path.empty() || !run_file_name(output.path)) continue;
      std::error_code ec;
      const fs::path folder = fs::weakly_canonical(fs::absolute(output.path, ec).parent_path(), ec);
      for (const std::string& run : flags.runs)
        if (fs::is_directory(run, ec) && fs::weakly_canonical(fs::absolute(run, ec), ec) == folder)
          throw InputError(output.flag + " " + output.path.string() + " is inside --runs " + run +
                           ", which reads it as a run file; write it outside that folder");
    }
  }
  const ClusterSpec cluster = load_cluster(flags.cluster);
  std::vector<std::string> left_out;
  const std::vector<FitRun> runs = load_runs(flags.runs, cluster, &left_out);
  for (const std::string& note : left_out) std::cerr << "parplan: " << note << "\n";
  // The fit moves one profile's constants: a run on other hardware would be
  // predicted with its own profile and pull the fit nowhere.
  for (const FitRun& run : runs)
    if (run.own_cluster && run.own_cluster->name != cluster.name)
      throw InputError("run " + run.name + ": field 'cluster' is " + run.own_cluster->name +
                       ", not --cluster " + cluster.name +
                       "; calibrate the runs of one hardware profile at a time");
  CalibrateOptions options;
  if (flags.fit) options.fit_keys = split_keys(*flags.fit);
  options.fit.objective = flags.objective == "max" ? FitObjective::kMax : FitObjective::kMean;
  if (flags.solver != "cbc" && flags.solver != "glpk") throw InputError("--solver must be cbc or glpk");
  options.fit.backend = parse_backend(flags.solver);
  // Each LP of the fit's sequence is the command's MILP; the deadline stops
  // the sequence (and the leave-one-out fits) with the best point so far.
  options.fit.lp_time_limit_s = flags.common.solver_time_limit_s;
  options.fit.deadline = flags.common.deadline();
  options.cross_validate = !flags.no_cross_validate;
  options.progress = [](const std::string& line) { std::cerr << "parplan: calibrate: " << line << "\n"; };
  const CalibrateOutcome outcome = calibrate(cluster, runs, options);
  std::string note;
  if (outcome.stopped_at_deadline) {
    note = "--time-limit reached: ";
    note += outcome.fit.stopped_at_deadline
                ? "the fit is the best point after " + std::to_string(outcome.fit.lp_solves) +
                      " LP steps, not converged (gap to a local optimum unknown); no leave-one-out errors"
                : "the fit converged, but the leave-one-out errors were not all computed (none reported)";
    std::cerr << "parplan: " << note << "\n";
  }

  // --out and --svg as a set: both complete before either replaces its target.
  OutputFiles files;
  if (!flags.out.empty()) {
    const std::string profile_path =
        resolve_catalog_file("hardware-profiles", flags.cluster, "--cluster").string();
    std::ifstream in(profile_path);
    std::stringstream original;
    original << in.rdbuf();
    std::vector<FittedValue> values;
    for (std::size_t j = 0; j < outcome.fitted.size(); ++j)
      values.push_back({outcome.fitted[j].key, outcome.fit.before[j], outcome.fit.after[j]});
    CalibrationBlock block;
    // The date is wall-clock: --no-timings leaves it out.
    if (flags.common.timings()) block.date = today();
    block.objective = flags.objective;
    for (const auto& run : runs) {
      block.runs.push_back(run.name);
      if (std::find(block.sources.begin(), block.sources.end(), run.source) == block.sources.end())
        block.sources.push_back(run.source);
    }
    block.mean_error = outcome.fit.errors_after.mean_abs;
    block.max_error = outcome.fit.errors_after.max_abs;
    block.cv_mean_error = outcome.cv_mean_abs;
    block.cv_max_error = outcome.cv_max_abs;
    const std::string name =
        flags.name.empty() ? std::filesystem::path(flags.out).stem().string() : flags.name;
    std::string text;
    try {
      text = calibrated_profile_text(original.str(), values, block, name);
    } catch (const InputError& e) {
      throw InputError("--out: " + flags.cluster + ": " + e.what());
    }
    files.stage(flags.out, text, "--out");
  }
  if (!flags.svg.empty()) files.stage(flags.svg, calibrate_svg(runs, outcome, cluster.name), "--svg");
  files.commit();
  if (flags.common.json()) {
    auto j = calibrate_json(runs, outcome, flags.objective, flags.out);
    j["stopped_at_time_limit"] = outcome.stopped_at_deadline;
    if (!note.empty()) j["note"] = note;
    std::cout << json_text(j) << "\n";
  } else {
    std::cout << calibrate_table(runs, outcome, flags.objective, flags.out);
    if (!note.empty()) std::cout << "\nnote: " << note << "\n";
  }
  return 0;
}

}  // namespace parplan
