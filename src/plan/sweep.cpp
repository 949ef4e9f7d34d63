#include "src/plan/sweep.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <filesystem>

#include "cost/parameters.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/decimal_int.h"
#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/io/model_loader.h"
#include "src/plan/engine_plan.h"

namespace parplan {

namespace {

constexpr std::size_t kMaxListValues = 4096;

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t cut = text.find(sep, start);
    out.push_back(trim(text.substr(start, cut == std::string::npos ? std::string::npos : cut - start)));
    if (cut == std::string::npos) return out;
    start = cut + 1;
  }
}

std::string list_hint() { return " (lists look like 64,128,256 or 64:1024:x2 or 512:2048:+512)"; }

/// A positive int, read as every integer flag is (src/io/decimal_int.h).
long long positive(const std::string& word, const std::string& flag, const std::string& what, long long max) {
  try {
    return read_decimal_int(word, flag + ": " + what, 1, max);
  } catch (const InputError& e) {
    throw InputError(e.what() + list_hint());
  }
}

void add_value(std::vector<int>& values, long long value, const std::string& flag) {
  if (values.size() >= kMaxListValues)
    throw InputError(flag + ": the list has more than " + std::to_string(kMaxListValues) +
                     " values; narrow the ranges");
  values.push_back(static_cast<int>(value));
}

void expand_range(const std::string& item, std::vector<int>& values, const std::string& flag, long long max) {
  const std::vector<std::string> parts = split(item, ':');
  if (parts.size() != 3)
    throw InputError(flag + ": range '" + item + "' must be START:STOP:xFACTOR or START:STOP:+STEP" +
                     list_hint());
  const long long start = positive(parts[0], flag, "range start", max);
  const long long stop = positive(parts[1], flag, "range stop", max);
  const std::string& step = parts[2];
  if (step.empty() || (step[0] != 'x' && step[0] != '+'))
    throw InputError(flag + ": range '" + item + "' needs a step xFACTOR (geometric) or +STEP (arithmetic)" +
                     list_hint());
  const long long by = positive(step.substr(1), flag, "range step", INT_MAX);
  if (start > stop)
    throw InputError(flag + ": range '" + item + "' yields nothing (start " + std::to_string(start) +
                     " is above stop " + std::to_string(stop) + ")");
  if (step[0] == 'x') {
    if (by < 2)
      throw InputError(flag + ": range '" + item + "' needs a factor of at least 2 (got x" + step.substr(1) +
                       ")");
    for (long long v = start; v <= stop; v *= by) add_value(values, v, flag);
  } else {
    for (long long v = start; v <= stop; v += by) add_value(values, v, flag);
  }
}

/// "--model 'x' is not ..." from the loader becomes "--models 'x' is not ...".
InputError renamed(const InputError& e, const std::string& flag) {
  const std::string message = e.what();
  if (message.rfind("--model ", 0) == 0) return InputError(flag + message.substr(7));
  return InputError(flag + ": " + message);
}

}  // namespace

std::vector<int> parse_int_list(const std::string& text, const std::string& flag, long long max) {
  if (trim(text).empty())
    throw InputError(flag + ": the list is empty; give positive integers" + list_hint());
  std::vector<int> values;
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) throw InputError(flag + ": empty item in '" + text + "'" + list_hint());
    if (item.find(':') != std::string::npos) {
      expand_range(item, values, flag, max);
    } else {
      add_value(values, positive(item, flag, "value", max), flag);
    }
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

const std::vector<std::pair<std::string, std::vector<std::string>>>& model_ladders() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> ladders = {
      // Narayanan et al. 2021 (SC'21), Table 1: the weak-scaling GPT family.
      {"narayanan",
       {"gpt-1.7b", "gpt-3.6b", "gpt-7.5b", "gpt-18.4b", "gpt-39.1b", "gpt-76.1b", "gpt-145.6b", "gpt-310.1b",
        "gpt-529.6b", "gpt-1t"}},
      // Llama 3 herd (Meta 2024).
      {"llama3", {"llama3-8b", "llama3-70b", "llama3-405b"}},
      // Llama 2 (Touvron et al. 2023, Table 1).
      {"llama2", {"llama2-7b", "llama2-13b", "llama2-70b"}},
      // Qwen3 MoE (Qwen 2025): 30B-A3B and 235B-A22B.
      {"qwen3-moe", {"qwen3-30b-a3b", "qwen3-235b-a22b"}},
  };
  return ladders;
}

std::vector<std::string> expand_model_names(const std::string& text, const std::string& flag) {
  if (trim(text).empty())
    throw InputError(flag + ": the list is empty; give catalog names, model files or ladder:narayanan");
  std::vector<std::string> names;
  const auto add = [&](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) throw InputError(flag + ": empty item in '" + text + "'");
    if (item.rfind("ladder:", 0) == 0) {
      const std::string ladder = item.substr(7);
      const auto& all = model_ladders();
      const auto it = std::find_if(all.begin(), all.end(), [&](const auto& l) { return l.first == ladder; });
      if (it == all.end()) {
        std::string known;
        for (const auto& l : all) known += (known.empty() ? "ladder:" : ", ladder:") + l.first;
        throw InputError(flag + ": unknown ladder '" + item + "' (known: " + known + ")");
      }
      for (const std::string& name : it->second) add(name);
    } else {
      add(item);
    }
  }
  return names;
}

std::string sweep_model_name(const std::string& path) {
  const std::filesystem::path file(path);
  std::string stem = file.stem().string();
  // Hugging Face checkpoints all call it config.json: the directory names the model.
  if (stem == "config") {
    std::error_code ec;
    const std::string dir = std::filesystem::absolute(file, ec).parent_path().filename().string();
    if (!ec && !dir.empty()) stem = dir;
  }
  return stem.empty() ? path : stem;
}

std::vector<ModelSpec> load_sweep_models(const std::string& text, const std::string& flag) {
  const auto ends_with = [](const std::string& name, const std::string& tail) {
    return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  std::vector<ModelSpec> models;
  for (const std::string& name : expand_model_names(text, flag)) {
    try {
      models.push_back(load_model(name));
    } catch (const InputError& e) {
      throw renamed(e, flag);
    }
    // A file without a `name:` is named by its path: the sweep's rows,
    // legend and launch directories show a name instead.
    ModelSpec& model = models.back();
    if (model.name.find('/') != std::string::npos || ends_with(model.name, ".json") ||
        ends_with(model.name, ".yaml") || ends_with(model.name, ".yml"))
      model.name = sweep_model_name(model.name);
  }
  // Two files with the same stem stay apart.
  for (std::size_t i = 0; i < models.size(); ++i) {
    int copy = 1;
    for (std::size_t j = 0; j < i; ++j)
      if (models[j].name == models[i].name) ++copy;
    if (copy > 1) models[i].name += "#" + std::to_string(copy);
  }
  return models;
}

std::vector<SweepPoint> sweep_points(const SweepGrid& grid) {
  if (grid.models.empty()) throw InputError("--models: no model to sweep");
  if (grid.gpus.empty()) throw InputError("--gpus: no GPU count to sweep");
  if (grid.gbs.empty()) throw InputError("--gbs: no global batch size to sweep");
  if (grid.seq <= 0) throw InputError("--seq (sequence length) is required and must be positive");
  if (grid.seq > kMaxSeq)
    throw InputError("--seq must be an integer from 1 to " + std::to_string(kMaxSeq) + " (got " +
                     std::to_string(grid.seq) + ")");
  if (grid.gpus.back() > kMaxGpus)
    throw InputError("--gpus: " + std::to_string(grid.gpus.back()) + " GPUs; parplan accepts at most " +
                     std::to_string(kMaxGpus));
  if (grid.gbs.back() > kMaxGbs)
    throw InputError("--gbs: " + std::to_string(grid.gbs.back()) + " sequences; parplan accepts at most " +
                     std::to_string(kMaxGbs));
  JobSpec largest;
  largest.gpus = grid.gpus.back();
  largest.gbs = grid.gbs.back();
  largest.seq = grid.seq;
  for (const ModelSpec& model : grid.models) check_input_limits(model, grid.cluster, largest);
  const std::int64_t count = static_cast<std::int64_t>(grid.models.size()) *
                             static_cast<std::int64_t>(grid.gpus.size()) *
                             static_cast<std::int64_t>(grid.gbs.size());
  if (count > kMaxSweepPoints)
    throw InputError("the sweep has " + std::to_string(count) + " points (" +
                     std::to_string(grid.models.size()) + " models x " + std::to_string(grid.gpus.size()) +
                     " GPU counts x " + std::to_string(grid.gbs.size()) +
                     " batch sizes); parplan plans at most " + std::to_string(kMaxSweepPoints) +
                     " per run: narrow the ranges or split the sweep");
  const ClusterSpec& cluster = grid.cluster;
  if (cluster.nodes > 0) {
    const long capacity = static_cast<long>(cluster.nodes) * cluster.ranks_per_node;
    for (int gpus : grid.gpus) {
      if (gpus > capacity)
        throw InputError("--gpus " + std::to_string(gpus) + " exceeds cluster " + cluster.name + " (" +
                         std::to_string(capacity) + " GPUs)");
    }
  }
  for (const ModelSpec& model : grid.models) {
    if (model.position == PositionKind::kLearned && model.max_positions > 0 && grid.seq > model.max_positions)
      throw InputError("--seq " + std::to_string(grid.seq) + " exceeds the learned positions of model " +
                       model.name + " (" + std::to_string(model.max_positions) +
                       "); use a shorter sequence or drop the model");
  }
  std::vector<SweepPoint> points;
  points.reserve(grid.models.size() * grid.gpus.size() * grid.gbs.size());
  for (std::size_t m = 0; m < grid.models.size(); ++m) {
    for (int gpus : grid.gpus) {
      for (int gbs : grid.gbs) {
        SweepPoint p;
        p.index = static_cast<int>(points.size());
        p.model_index = static_cast<int>(m);
        p.job.gpus = gpus;
        p.job.gbs = gbs;
        p.job.seq = grid.seq;
        p.job.precision = grid.precision;
        p.job.memory_headroom_fraction = grid.memory_headroom_fraction;
        p.job.memory_headroom_bytes = grid.memory_headroom_bytes;
        points.push_back(p);
      }
    }
  }
  return points;
}

std::vector<SweepOutcome> evaluate_sweep(const SweepGrid& grid, const std::vector<SweepPoint>& points,
                                         const PlannerOptions& options, const SweepProgress& progress) {
  std::vector<SweepOutcome> outcomes(points.size());
  std::atomic<int> done{0};
  const int total = static_cast<int>(points.size());
  tbb::parallel_for(std::size_t{0}, points.size(), [&](std::size_t i) {
    SweepOutcome& out = outcomes[i];
    out.point = points[i];
    const ModelSpec& model = grid.models.at(static_cast<std::size_t>(out.point.model_index));
    out.params = total_params(model, grid.seq);
    if (options.deadline && std::chrono::steady_clock::now() >= *options.deadline) {
      out.feasible = false;
      out.reason = "not planned: --time-limit reached";
      const int now = done.fetch_add(1) + 1;
      if (progress) progress(now, total);
      return;
    }
    // Isolated: a thread waiting inside the planner's own parallel loops does
    // not pick up another point meanwhile.
    const EnginePlanResult result = tbb::this_task_arena::isolate([&] {
      // Under any, each engine as it runs the plan (plan --engine any).
      if (options.engines.any) {
        std::vector<EngineJob> jobs;
        for (int e = 0; e < options.engines.count; ++e) {
          EngineJob each{options.engines.engines[e], out.point.job};
          apply_engine_defaults(single_engine(each.engine), each.job);
          jobs.push_back(each);
        }
        AcrossEnginesResult best = plan_across_engines(model, grid.cluster, jobs, options, 1);
        if (best.found) {
          out.point.job = best.job;
          return std::move(best.planned);
        }
      }
      return plan_for_engines(model, grid.cluster, out.point.job, options, 1);
    });
    if (result.planner.ranked.empty()) {
      const std::string& why = result.planner.search.infeasible_reason;
      out.feasible = false;
      out.reason = result.model_refused ? "the engine cannot build the model: " + result.engine_violation
                   : !result.engine_violation.empty()
                       ? "no plan the engine accepts: " + result.engine_violation
                   : why.empty() ? "no feasible config"
                                 : why;
    } else {
      const RankedConfig& best = result.planner.ranked.front();
      out.feasible = true;
      out.config = best.config;
      out.cost = best.cost;
      out.engine = best.engine;
      out.params = out.cost.params;
    }
    const int now = done.fetch_add(1) + 1;
    if (progress) progress(now, total);
  });
  return outcomes;
}

Plan plan_of(const SweepGrid& grid, const SweepOutcome& outcome) {
  Plan plan;
  plan.model = grid.models.at(static_cast<std::size_t>(outcome.point.model_index));
  plan.cluster = grid.cluster;
  plan.job = outcome.point.job;
  plan.config = outcome.config;
  plan.cost = outcome.cost;
  return plan;
}

}  // namespace parplan
