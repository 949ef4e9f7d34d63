// The engine and policy flags of plan, check and estimate: which engine's
// space is searched, and whether lossy or unreleased schemes may be.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cost/power_cap.h"
#include "src/cli/common_flags.h"
#include "src/cli/job_options.h"
#include "src/emit/emit.h"
#include "src/io/input_error.h"

namespace parplan {

void warn_unmodelled(const ModelSpec& model, int seq) {
  if (!model.unmodelled.empty())
    std::cerr << "parplan: warning: " << model.name << " has " << model.unmodelled
              << ", which parplan does not model: costed without it, and --emit refuses it\n";
  const std::string unwritable = unwritable_features(model, seq);
  if (!unwritable.empty())
    std::cerr << "parplan: warning: " << model.name << " has " << unwritable
              << ": costed with it, but no launch file parplan writes carries it, and --emit refuses it\n";
}

void warn_unlaunchable(const ModelSpec& model, const JobSpec& job, const ClusterSpec& cluster) {
  warn_unmodelled(model, job.seq);
  const int per_node = cluster.ranks_per_node;
  if (per_node > 0 && job.gpus > per_node && job.gpus % per_node != 0)
    std::cerr << "parplan: warning: " << job.gpus << " GPUs fill " << job.gpus / per_node << " nodes of "
              << per_node << " and part of another: costed as placed, but --emit writes whole nodes only "
              << "(choose a multiple of " << per_node << ")\n";
}

void add_engine_flags(CLI::App& app, JobFlags& f) {
  app.add_option(
      "--engine", f.engine,
      "megatron | deepspeed | megatron-deepspeed | torchtitan | any (default any: every engine searched "
      "and costed as it runs the plan; the fastest engine's plans are shown, named, and plan lists each "
      "engine's own optimum below them)");
  app.add_flag("--allow-lossy-comm", f.allow_lossy_comm,
               "also plan lossy collectives (ZeRO++ qwZ int8 weights, qgZ int4 gradients): they change the "
               "numerics of training");
  app.add_flag("--allow-unreleased", f.allow_unreleased,
               "also plan schemes no released engine runs (the Frontier 3-level hierarchical partition)");
  app.add_option(
      "--memory-headroom", f.memory_headroom,
      "HBM kept free: GiB (4) or percent of usable HBM (10%); default: see docs/cost-model-engines.md");
  // Exact collectives are the default now; the old flag stays accepted.
  app.add_flag_callback(
      "--no-quantized-comm", [&f] { f.no_quantized_comm = true; },
      "deprecated no-op: exact collectives are the default");
}

}  // namespace parplan

namespace parplan {

PlannerOptions planner_options(const JobFlags& f, const std::string& engine, const std::string& solver,
                               const std::string& emit) {
  PlannerOptions options;
  options.solver = solver;
  options.engines = parse_engine_selection(engine);
  if (!emit.empty()) {
    // --emit E implies --engine E.
    const EngineSelection emitted = parse_engine_selection(emit, "--emit");
    if (emitted.any)
      throw InputError("--emit needs one engine: megatron, deepspeed, megatron-deepspeed or torchtitan");
    if (!options.engines.any && options.engines.engines[0] != emitted.engines[0])
      throw InputError(std::string("--emit ") + emit + " and --engine " + engine +
                       " disagree; --emit E implies --engine E, so give one of them");
    options.engines = emitted;
  }
  if (f.no_quantized_comm)
    std::cerr << "parplan: --no-quantized-comm is deprecated: exact collectives are the default "
                 "(--allow-lossy-comm asks for quantized ones)\n";
  options.allow_lossy_comm = f.allow_lossy_comm;
  options.allow_unreleased = f.allow_unreleased;
  options.solver_time_limit_s = f.common.solver_time_limit_s;
  options.deadline = f.common.deadline();
  return options;
}

}  // namespace parplan

namespace parplan {

void apply_memory_headroom(const std::optional<std::string>& given, JobSpec& job, const std::string& field,
                           const DeviceSpec* device) {
  std::string text = given.value_or(kDefaultMemoryHeadroom);
  const std::string original = text;
  bool percent = false;
  if (!text.empty() && text.back() == '%') {
    percent = true;
    text.pop_back();
  } else if (text.size() > 3 && text.compare(text.size() - 3, 3, "GiB") == 0) {
    text.resize(text.size() - 3);
  }
  // Plain decimal only: std::stod alone would also take hexadecimal.
  double value = -1;
  try {
    value = parse_decimal_number(text, field, 0.0, percent ? 100.0 : 1e6);
  } catch (const CLI::ValidationError&) {
    value = -1;
  }
  if (!(value >= 0) || (percent && value >= 100))
    throw InputError(field + " must be GiB (e.g. 4) or a percent of usable HBM below 100 (e.g. 10%); got '" +
                     original + "'");
  job.memory_headroom_fraction = percent ? value / 100.0 : 0.0;
  job.memory_headroom_bytes = percent ? 0.0 : value * 1073741824.0;
  // A headroom of all the HBM or more would leave a negative budget that
  // no plan fits and the stage-split solver cannot take.
  if (device && !(job.memory_budget_bytes(device->usable_hbm_bytes()) > 0)) {
    char usable[32];
    std::snprintf(usable, sizeof usable, "%.1f", device->usable_hbm_bytes() / 1073741824.0);
    throw InputError(field + " '" + original + "' leaves none of the " + device->name + "'s " + usable +
                     " GiB usable HBM; give less headroom");
  }
}

std::vector<NamedPath> job_input_paths(const JobFlags& f) {
  std::vector<NamedPath> inputs;
  if (f.job_file) inputs.push_back({"--job", *f.job_file});
  // A catalog name is no file; a path is.
  for (const auto& [flag, value] :
       {std::pair<const char*, std::string>{"--model", f.model}, {"--cluster", f.cluster}}) {
    // The error code form: a name too long for the filesystem is no file.
    std::error_code ec;
    if (value.find('/') != std::string::npos || std::filesystem::exists(value, ec))
      inputs.push_back({flag, value});
  }
  return inputs;
}

// A what-if on the board power limit: the measured curve gives the clock.
void apply_power_limit(double limit_w, ClusterSpec& cluster) {
  const PowerCurve& curve = kH100Sxm5PowerCurve;
  if (!cluster.device.h100_power_curve)
    throw InputError(
        "--power-limit needs a profile with a measured power curve (power_curve: h100-sxm5, as "
        "dgx-h100, dgx-h200, dgx-h800 and grand-teton-h100 have); " +
        cluster.name + " has none");
  if (!(limit_w >= curve.min_limit_w && limit_w <= curve.reference_limit_w))
    throw InputError("--power-limit must be between 200 and 700 W (an H100 SXM5's settable range); got " +
                     (std::ostringstream() << limit_w).str());
  cluster.device = with_power_limit(cluster.device, curve, limit_w);
}

}  // namespace parplan
