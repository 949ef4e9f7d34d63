// Table and JSON of an expert placement, its certificates and baselines.
#include "src/report/experts_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "src/report/counted.h"
#include "src/report/json_number.h"
#include "src/report/json_report.h"
#include "src/report/table_report.h"

namespace parplan {

namespace {

using Json = nlohmann::ordered_json;

struct Stats {
  double mean = 0, max = 0;
};

template <typename F>
Stats stats(int layers, F value) {
  Stats s;
  for (int l = 0; l < layers; ++l) {
    const double v = value(l);
    s.mean += v;
    s.max = std::max(s.max, v);
  }
  if (layers > 0) s.mean /= layers;
  return s;
}

double layer_imbalance(const ExpertsReportContext& c, const ExpertPlacementRun& run, int l, double max_load) {
  return imbalance(max_load, run.total_load[l], c.request.shape.gpus);
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

Json experts_json(const ExpertsReportContext& c, const ExpertPlacementRun& run) {
  const ExpertPlacementShape& s = c.request.shape;
  const int layers = static_cast<int>(run.layers.size());
  Json out;
  out["problem"] = {{"layers", layers},
                    {"experts", s.experts},
                    {"gpus", s.gpus},
                    {"nodes", s.nodes},
                    {"groups", s.groups},
                    {"redundant", s.redundant},
                    {"physical_slots", s.physical()},
                    {"slots_per_gpu", s.slots_per_gpu()},
                    {"backend", backend_name(c.request.backend)}};
  Json all = Json::array();
  Json improvements = Json::array();
  int optimal = 0;
  for (int l = 0; l < layers; ++l) {
    const LayerResult& r = run.layers[l];
    const int S = s.slots_per_gpu();
    Json per_gpu = Json::array();
    for (int g = 0; g < s.gpus; ++g) {
      per_gpu.push_back(std::vector<int>(r.placement.physical_to_logical.begin() + g * S,
                                         r.placement.physical_to_logical.begin() + (g + 1) * S));
    }
    Json cert = {{"status", status_name(r.certificate.status)},
                 {"objective", number_or_null<Json>(r.certificate.objective)},
                 {"bound", number_or_null<Json>(r.certificate.best_bound)},
                 {"gap", number_or_null<Json>(r.certificate.gap)},
                 {"backend", r.certificate.backend}};
    if (c.timings) cert["time_s"] = r.certificate.time_s;
    optimal += r.certificate.status == SolveStatus::kOptimal;
    const double imb = layer_imbalance(c, run, l, r.placement.max_load);
    const double heuristic = layer_imbalance(c, run, l, r.heuristic_max_load);
    Json layer = {{"layer", l},
                  {"physical_to_logical", per_gpu},
                  {"replicas", r.placement.replicas},
                  {"gpu_load", r.placement.gpu_load},
                  {"imbalance", imb},
                  {"lower_bound_imbalance", layer_imbalance(c, run, l, r.lower_bound_load)},
                  {"node_imbalance", r.node_imbalance},
                  {"heuristic_imbalance", heuristic},
                  {"milp_improved", r.milp_improved},
                  {"certificate", cert}};
    all.push_back(layer);
    if (r.milp_improved) {
      improvements.push_back({{"layer", l},
                              {"heuristic_imbalance", heuristic},
                              {"imbalance", imb},
                              {"improvement_percent", 100.0 * (heuristic - imb) / heuristic}});
    }
  }
  out["layers"] = all;
  const Stats placed =
      stats(layers, [&](int l) { return layer_imbalance(c, run, l, run.layers[l].placement.max_load); });
  const Stats bound =
      stats(layers, [&](int l) { return layer_imbalance(c, run, l, run.layers[l].lower_bound_load); });
  const Stats nodes = stats(layers, [&](int l) { return run.layers[l].node_imbalance; });
  Json summary = {{"imbalance_mean", placed.mean},
                  {"imbalance_max", placed.max},
                  {"lower_bound_imbalance_mean", bound.mean},
                  {"node_imbalance_mean", nodes.mean},
                  {"node_imbalance_max", nodes.max},
                  {"layers_optimal", optimal},
                  {"layers_improved_by_milp", improvements.size()},
                  {"routing_imbalance_mean", routing_imbalance(*c.loads).mean}};
  if (c.timings) summary["time_s"] = run.time_s;
  out["summary"] = summary;

  Json baseline;
  for (const char* name : {"static", "greedy"}) {
    const bool is_static = std::string(name) == "static";
    std::vector<double> per_layer;
    for (int l = 0; l < layers; ++l) {
      const LayerBaselines& b = run.baselines[l];
      per_layer.push_back(layer_imbalance(c, run, l, is_static ? b.static_max_load : b.greedy_max_load));
    }
    const Stats st = stats(layers, [&](int l) { return per_layer[l]; });
    baseline[name] = {{"imbalance_mean", st.mean}, {"imbalance_max", st.max}, {"per_layer", per_layer}};
  }
  out["baseline"] = baseline;
  out["milp_improvements"] = improvements;
  if (!c.step_time_note.empty()) {
    const PlacementStepTimes& st = c.step_times;
    Json step = {{"available", st.available}, {"note", c.step_time_note}};
    if (st.available) {
      step["config"] = config_json(st.config, st.model_layers);
      step["error_band"] = st.error_band;
      Json placements;
      for (const PlacementStepTime& p : st.placements)
        placements[p.name] = {{"imbalance", p.imbalance}, {"step_s", p.step_s}, {"fits", p.fits}};
      step["placements"] = placements;
    }
    out["step_time"] = step;
  }
  return out;
}

std::string experts_table(const ExpertsReportContext& c, const ExpertPlacementRun& run) {
  const ExpertPlacementShape& s = c.request.shape;
  const int layers = static_cast<int>(run.layers.size());
  std::ostringstream o;
  o << "parplan experts: " << counted(layers, "layer") << " x " << counted(s.experts, "expert") << " on "
    << counted(s.gpus, "GPU");
  if (s.nodes > 1) o << " (" << s.nodes << " nodes)";
  if (s.groups > 0) o << ", " << s.groups << " groups";
  o << ", " << counted(s.redundant, "redundant slot") << ", " << counted(s.slots_per_gpu(), "slot")
    << " per GPU\n";
  o << "imbalance = busiest GPU / mean GPU load (1.000 is perfect)\n\n";
  char line[256];
  std::snprintf(line, sizeof line, "%5s  %9s  %7s  %6s  %-9s  %-9s  %7s  %7s%s\n", "layer", "imbalance",
                "bound", "gap%", "status", "backend", "static", "greedy", s.nodes > 1 ? "  node" : "");
  o << line;
  for (int l = 0; l < layers; ++l) {
    const LayerResult& r = run.layers[l];
    const auto imb = [&](double load) { return imbalance(load, run.total_load[l], s.gpus); };
    std::snprintf(line, sizeof line, "%5d  %9.4f  %7.4f  %6.2f  %-9s  %-9s  %7.3f  %7.3f", l,
                  imb(r.placement.max_load), imb(r.lower_bound_load), 100 * r.certificate.gap,
                  status_name(r.certificate.status), r.certificate.backend.c_str(),
                  imb(run.baselines[l].static_max_load), imb(run.baselines[l].greedy_max_load));
    o << line;
    if (s.nodes > 1) o << "  " << fixed(r.node_imbalance, 3);
    if (r.milp_improved)
      o << "  MILP -" << fixed(100 * (1 - r.placement.max_load / r.heuristic_max_load), 2) << "%";
    o << "\n";
  }
  const Json j = experts_json(c, run);
  const Json& sum = j["summary"];
  o << "\nimbalance: mean " << fixed(sum["imbalance_mean"].get<double>(), 4) << ", max "
    << fixed(sum["imbalance_max"].get<double>(), 4) << " (lower bound mean "
    << fixed(sum["lower_bound_imbalance_mean"].get<double>(), 4) << ")\n";
  o << "baselines: static (contiguous, no redundancy) mean "
    << fixed(j["baseline"]["static"]["imbalance_mean"].get<double>(), 4)
    << ", greedy (replicate + balanced packing) mean "
    << fixed(j["baseline"]["greedy"]["imbalance_mean"].get<double>(), 4) << "\n";
  if (s.nodes > 1)
    o << "node imbalance: mean " << fixed(sum["node_imbalance_mean"].get<double>(), 4) << ", max "
      << fixed(sum["node_imbalance_max"].get<double>(), 4) << "\n";
  o << "layers proven optimal: " << sum["layers_optimal"].get<int>() << " of " << layers;
  o << "; improved by the MILP: " << j["milp_improvements"].size() << "\n";
  if (!c.step_time_note.empty() && !c.step_times.available)
    o << "predicted MoE step time: " << c.step_time_note << "\n";
  if (c.step_times.available) {
    const PlacementStepTimes& st = c.step_times;
    o << "\npredicted training step (" << c.step_time_note << ": " << config_line(st.config, true) << ")\n";
    for (const PlacementStepTime& p : st.placements) {
      std::snprintf(line, sizeof line, "  %-8s imbalance %.4f  step %.3f s  (%+.2f%% vs static)%s\n",
                    p.name.c_str(), p.imbalance, p.step_s,
                    100 * (p.step_s / st.placements.front().step_s - 1), p.fits ? "" : "  does not fit");
      o << line;
    }
    o << "  error band " << st.error_band << "\n";
  }
  if (c.timings) o << "time: " << fixed(run.time_s, 3) << " s\n";
  return o.str();
}

}  // namespace parplan
