// Table and JSON of a SkipPipe schedule.
#include "src/report/skip_paths_report.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace parplan {
namespace {

std::vector<int> stage_of_nodes(const SkipProblem& p, const SkipSchedule& s) {
  std::vector<int> stage_of(p.network.nodes, -1);
  for (std::size_t st = 0; st < s.partition.size(); ++st)
    for (int node : s.partition[st]) stage_of[node] = static_cast<int>(st);
  return stage_of;
}

nlohmann::ordered_json micro_batches_json(const SkipProblem& p, const SkipSchedule& s) {
  const std::vector<int> stage_of = stage_of_nodes(p, s);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const SkipMicroBatch& mb : s.micro_batches) {
    std::vector<int> stages;
    for (int node : mb.path) stages.push_back(stage_of[node]);
    list.push_back(
        {{"source", mb.source}, {"path", mb.path}, {"stages", stages}, {"release_s", mb.release_s}});
  }
  return list;
}

double skip_ratio(const SkipProblem& p) {
  return 1.0 - static_cast<double>(p.path_length) / static_cast<double>(p.stage_sizes.size());
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

nlohmann::ordered_json skip_paths_json(const SkipProblem& p, const SkipSolveResult& r,
                                       std::optional<double> solve_s) {
  nlohmann::ordered_json j;
  j["partition"] = r.schedule.partition;
  j["micro_batches"] = micro_batches_json(p, r.schedule);
  j["makespan_s"] = r.schedule.makespan_s;
  j["full_pipeline"] = {{"makespan_s", r.full_pipeline.makespan_s},
                        {"micro_batches", micro_batches_json(p, r.full_pipeline)}};
  j["lower_bound_s"] = r.lower_bound_s;
  j["gap"] = r.lower_bound_s > 0 ? r.schedule.makespan_s / r.lower_bound_s - 1 : 0.0;
  j["skip_ratio"] = skip_ratio(p);
  j["makespan_vs_full_pipeline"] = r.schedule.makespan_s / r.full_pipeline.makespan_s;
  j["exhaustive"] = r.exhaustive;
  j["time_limited"] = r.time_limited;
  j["partitions_evaluated"] = r.partitions_evaluated;
  if (!r.notes.empty()) j["notes"] = r.notes;
  if (!r.partition_milp.name.empty()) {
    const SolverCertificate& c = r.partition_milp;
    nlohmann::ordered_json m = {{"backend", c.backend},
                                {"status", status_name(c.status)},
                                {"link_cost_s", r.partition_link_cost_s},
                                {"warm_start_link_cost_s", r.warm_start_link_cost_s}};
    m["gap"] = std::isfinite(c.gap) ? nlohmann::ordered_json(c.gap) : nlohmann::ordered_json(nullptr);
    if (solve_s) m["solve_s"] = c.time_s;
    j["partition_milp"] = m;
  }
  if (solve_s) j["solve_s"] = *solve_s;
  return j;
}

std::string skip_paths_table(const SkipProblem& p, const SkipSolveResult& r, std::optional<double> solve_s) {
  std::ostringstream o;
  const std::vector<int> stage_of = stage_of_nodes(p, r.schedule);
  o << "SkipPipe schedule: " << p.network.nodes << " nodes, " << p.stage_sizes.size()
    << " stages, path length " << p.path_length << " (skip ratio " << fixed(skip_ratio(p), 2) << "), memory "
    << p.network.memory << ", " << p.micro_batches_per_source << " micro-batches per source\n\n";
  o << "partition\n";
  for (std::size_t s = 0; s < r.schedule.partition.size(); ++s) {
    o << "  stage " << s << ":";
    for (int node : r.schedule.partition[s]) o << " " << node;
    o << "\n";
  }
  const double ratio = r.schedule.makespan_s / r.full_pipeline.makespan_s;
  o << "\nmakespan        " << fixed(r.schedule.makespan_s, 2) << " s\n";
  o << "full pipeline   " << fixed(r.full_pipeline.makespan_s, 2) << " s  (skip paths take "
    << fixed(100 * ratio, 1) << " % of it)\n";
  o << "lower bound     " << fixed(r.lower_bound_s, 2) << " s  (makespan within "
    << fixed(100 * (r.schedule.makespan_s / r.lower_bound_s - 1), 1) << " % of it)\n";
  if (r.exhaustive)
    o << "search          exhaustive over partitions and paths (releases at 0), then releases\n";
  else
    o << "search          " << r.partitions_evaluated << " partitions scored\n";
  if (!r.partition_milp.name.empty()) {
    const SolverCertificate& c = r.partition_milp;
    o << "partition MILP  " << c.backend << " " << status_name(c.status) << ", link cost "
      << fixed(r.partition_link_cost_s, 2) << " s (chain warm start " << fixed(r.warm_start_link_cost_s, 2)
      << " s)";
    if (std::isfinite(c.gap)) o << ", gap " << fixed(100 * c.gap, 2) << " %";
    if (solve_s) o << ", " << fixed(c.time_s, 3) << " s";
    o << "\n";
  }
  if (r.time_limited) o << "note            stopped at --time-limit: the best schedule found so far\n";
  for (const std::string& note : r.notes) o << "note            " << note << "\n";
  if (solve_s) o << "solve time      " << fixed(*solve_s, 3) << " s\n";
  o << "\n  mb  source  release_s  path (node/stage, forward order)\n";
  for (std::size_t m = 0; m < r.schedule.micro_batches.size(); ++m) {
    const SkipMicroBatch& mb = r.schedule.micro_batches[m];
    char head[64];
    std::snprintf(head, sizeof head, "%4zu  %6d  %9.2f ", m, mb.source, mb.release_s);
    o << head;
    for (int node : mb.path) o << " " << node << "/" << stage_of[node];
    o << "\n";
  }
  return o.str();
}

}  // namespace parplan
