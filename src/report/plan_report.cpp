#include "src/report/plan_report.h"

#include <cstdio>
#include <iomanip>
#include <sstream>

#include "src/plan/placement.h"
#include "src/report/json_report.h"
#include "src/report/table_report.h"
#include "src/report/wrap_text.h"

namespace parplan {

namespace {
const char* engine_of(const RankedConfig& ranked) {
  return ranked.engine >= 0 ? engine_capabilities(static_cast<Engine>(ranked.engine)).name : nullptr;
}
}  // namespace

std::string human_duration(double seconds) {
  char text[32];
  if (seconds < 1e-3)
    std::snprintf(text, sizeof text, "%.0f us", seconds * 1e6);
  else if (seconds < 0.01)
    std::snprintf(text, sizeof text, "%.1f ms", seconds * 1e3);
  else if (seconds < 1.0)
    std::snprintf(text, sizeof text, "%.0f ms", seconds * 1e3);
  else if (seconds < 100.0)
    std::snprintf(text, sizeof text, "%.2f s", seconds);
  else
    std::snprintf(text, sizeof text, "%.0f s", seconds);
  return text;
}

std::string plan_table(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                       const PlannerResult& result, bool timings, const RecommendedPlan* recommended) {
  const RankedConfig& best = result.ranked.front();
  std::ostringstream out;
  out << "best plan (optimum: fastest predicted)";
  if (const char* engine = engine_of(best)) out << " (runs on " << engine << ")";
  out << "\n" << cost_table(model, cluster, best.config, best.cost, &job) << "\n";
  if (recommended != nullptr && recommended->why.index > 0) {
    out << "recommended plan (within " << std::fixed << std::setprecision(1) << 100.0 * recommended->why.band
        << " % of the optimum)";
    out.unsetf(std::ios::fixed);
    out.precision(6);
    if (const char* engine = engine_of(recommended->plan)) out << " (runs on " << engine << ")";
    out << "\n" << cost_table(model, cluster, recommended->plan.config, recommended->plan.cost, &job) << "\n";
  }
  out << "top " << result.ranked.size() << " of " << result.search.stats.feasible << " feasible configs ("
      << result.search.stats.candidates << " candidates";
  if (timings) out << ", searched in " << human_duration(result.search.stats.time_s);
  out << ")\n" << alternatives_table(result.ranked, model.is_moe(), &job);
  if (result.engine_optima.size() > 1) {
    // --engine any: how far each engine's own optimum is from the chosen one.
    std::vector<RankedConfig> optima;
    for (const EngineOptimum& each : result.engine_optima)
      if (each.reason.empty()) optima.push_back(each.best);
    out << "\nfastest plan of each engine (each searched under its own recipe; the plans above are "
        << (engine_of(best) ? engine_of(best) : "the fastest engine's") << "'s)\n"
        << alternatives_table(optima, model.is_moe(), &job);
    for (const EngineOptimum& each : result.engine_optima)
      if (!each.reason.empty())
        out << "  " << engine_capabilities(each.engine).name << ": "
            << wrapped_words(each.reason, 4 + std::string(engine_capabilities(each.engine).name).size(), 4,
                             110)
            << "\n";
  }
  if (!result.certificates.empty()) out << "\n" << certificates_table(result.certificates, timings);
  if (!result.notes.empty()) {
    out << "\nwhy this plan\n";
    for (const std::string& note : result.notes) out << "  - " << wrapped_words(note, 4, 4, 110) << "\n";
  }
  return out.str();
}

nlohmann::ordered_json plan_json(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                 const PlannerResult& result, bool timings,
                                 const RecommendedPlan* recommended) {
  const RankedConfig& best = result.ranked.front();
  nlohmann::ordered_json j = cost_json(model, best.config, best.cost, job.seq);
  const char* engine = engine_of(best);
  j["engine"] = engine ? nlohmann::ordered_json(engine) : nlohmann::ordered_json(nullptr);
  j["traffic"] = traffic_json(cluster, best.cost);
  j["accuracy"] = accuracy_json(cluster, model, job, best.config);
  j["placement"] = placement_json(place_groups(cluster, best.config));
  j["notes"] = result.notes;
  // The top level is the optimum; `recommended` is the plan to run.
  const RankedConfig& pick = recommended != nullptr ? recommended->plan : best;
  nlohmann::ordered_json rec = cost_json(model, pick.config, pick.cost, job.seq);
  const char* rec_engine = engine_of(pick);
  rec["engine"] = rec_engine ? nlohmann::ordered_json(rec_engine) : nlohmann::ordered_json(nullptr);
  rec["accuracy"] = accuracy_json(cluster, model, job, pick.config);
  rec["is_optimum"] = recommended == nullptr || recommended->why.index == 0;
  rec["rank"] = recommended != nullptr ? recommended->why.index : 0;
  rec["band_percent"] = 100.0 * (recommended != nullptr ? recommended->why.band : kMaxRecommendBand);
  rec["reason"] = recommended != nullptr ? recommended->why.reason : std::string();
  j["optimum"] = {{"step_s", best.cost.time.step_s}, {"engine", j["engine"]}};
  j["recommended"] = rec;
  j["search"] = {{"candidates", result.search.stats.candidates},
                 {"evaluated", result.search.stats.evaluated},
                 {"feasible", result.search.stats.feasible},
                 {"stopped_at_time_limit", result.search.stopped_at_deadline}};
  if (timings) j["search"]["time_s"] = result.search.stats.time_s;
  j["solver"] = certificates_json(result.certificates, timings);
  if (result.engine_optima.size() > 1) {
    j["engines"] = nlohmann::ordered_json::array();
    for (const EngineOptimum& each : result.engine_optima) {
      const bool found = each.reason.empty();
      nlohmann::ordered_json e;
      e["engine"] = engine_capabilities(each.engine).name;
      e["chosen"] = found && best.engine >= 0 && each.engine == static_cast<Engine>(best.engine);
      e["step_s"] =
          found ? nlohmann::ordered_json(each.best.cost.time.step_s) : nlohmann::ordered_json(nullptr);
      if (found)
        e.update(cost_json(model, each.best.config, each.best.cost, job.seq));
      else
        e["reason"] = each.reason;
      j["engines"].push_back(e);
    }
  }
  j["alternatives"] = nlohmann::ordered_json::array();
  for (std::size_t i = 1; i < result.ranked.size(); ++i) {
    nlohmann::ordered_json alt = cost_json(model, result.ranked[i].config, result.ranked[i].cost, job.seq);
    const char* alt_engine = engine_of(result.ranked[i]);
    alt["engine"] = alt_engine ? nlohmann::ordered_json(alt_engine) : nlohmann::ordered_json(nullptr);
    j["alternatives"].push_back(alt);
  }
  return j;
}

}  // namespace parplan
