#include "src/report/json_report.h"

#include <cmath>

#include "cost/parameters.h"
#include "cost/stage_layout.h"
#include "src/calibration/heldout_alike.h"
#include "src/io/cluster_loader.h"
#include "src/io/job_loader.h"
#include "src/report/error_band.h"
#include "src/report/json_number.h"

namespace parplan {

nlohmann::ordered_json config_json(const ParallelConfig& c, int model_layers) {
  nlohmann::ordered_json j;
  j["tp"] = c.tp;
  j["pp"] = c.pp;
  j["vp"] = c.vp;
  j["dp"] = c.dp;
  j["cp"] = c.cp;
  j["ep"] = c.ep;
  j["etp"] = c.etp;
  j["a2a"] = c.a2a_hierarchical ? "hierarchical" : "flat";
  j["ep_overlap"] = c.ep_overlap;
  j["sp"] = c.sp;
  j["zero"] = c.zero;
  j["mbs"] = c.mbs;
  j["gbs"] = c.gbs;
  j["recompute"] = recompute_name(c.recompute);
  j["recompute_layers"] = c.recompute_layers;
  j["attention"] = c.flash_attention ? "flash" : "unfused";
  j["first_stage_layers"] = c.first_stage_layers;
  j["last_stage_layers"] = c.last_stage_layers;
  j["pipeline_layout"] = c.pipeline_layout;
  j["zeropp"] = c.zeropp();
  j["hierarchical_partition"] = c.hierarchical_partition;
  j["hpz_ranks"] = c.hpz_ranks;
  j["qwz"] = c.qwz;
  j["qgz"] = c.qgz;
  if (c.hierarchical_partition) {
    j["partition"] = {{"params", partition_level_name(c.partition.params)},
                      {"params_secondary", partition_level_name(c.partition.params_secondary)},
                      {"grads", partition_level_name(c.partition.grads)},
                      {"optimizer", partition_level_name(c.partition.optimizer)}};
  }
  // Each pipeline rank's layers, as the stage split or the layout gives them.
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (int s = 0; s < c.pp; ++s) layers.push_back(stage_layers(model_layers, c, s));
  j["stage_layers"] = layers;
  return j;
}

nlohmann::ordered_json cost_json(const ModelSpec& model, const ParallelConfig& config, const CostReport& cost,
                                 int seq) {
  nlohmann::ordered_json j;
  j["config"] = config_json(config, model.layers);
  j["model"] = {{"name", model.name},
                {"params", cost.params},
                {"active_params", active_params(model, seq)},
                {"layers", model.layers},
                {"hidden", model.hidden}};
  const TimeBreakdown& t = cost.time;
  j["time"] = {
      {"step_s", t.step_s},          {"compute_s", t.compute_s}, {"bubble_s", t.bubble_s},
      {"tp_comm_s", t.tp_comm_s},    {"cp_comm_s", t.cp_comm_s}, {"pp_comm_s", t.pp_comm_s},
      {"ep_comm_s", t.ep_comm_s},    {"dp_comm_s", t.dp_comm_s}, {"exposed_comm_s", t.exposed_comm_s},
      {"optimizer_s", t.optimizer_s}};
  const Throughput& p = cost.throughput;
  j["throughput"] = {{"tokens_per_s", p.tokens_per_s},
                     {"model_tflops_per_gpu", p.model_tflops_per_gpu},
                     {"hardware_tflops_per_gpu", p.hardware_tflops_per_gpu},
                     {"mfu", p.mfu},
                     {"hfu", p.hfu}};
  const MemoryBreakdown& m = cost.memory;
  j["memory"] = {{"peak_bytes", m.peak_bytes},
                 {"params_bytes", m.params_bytes},
                 {"grads_bytes", m.grads_bytes},
                 {"optimizer_bytes", m.optimizer_bytes},
                 {"activations_bytes", m.activations_bytes},
                 {"params_secondary_bytes", m.params_secondary_bytes},
                 {"activations_per_layer_bytes", m.activations_per_layer_bytes},
                 {"buffers_bytes", m.buffers_bytes},
                 {"capacity_bytes", m.capacity_bytes},
                 {"peak_stage", m.peak_stage},
                 {"fits", m.fits}};
  j["limiter"] = limiter_name(cost.limiter);
  return j;
}

}  // namespace parplan

namespace parplan {

nlohmann::ordered_json certificates_json(const std::vector<SolverCertificate>& certificates, bool timings) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& c : certificates) {
    nlohmann::ordered_json entry = {{"name", c.name},
                                    {"status", status_name(c.status)},
                                    {"objective", number_or_null<nlohmann::ordered_json>(c.objective)},
                                    {"bound", number_or_null<nlohmann::ordered_json>(c.best_bound)},
                                    {"gap", number_or_null<nlohmann::ordered_json>(c.gap)},
                                    {"backend", c.backend}};
    if (timings) entry["time_s"] = c.time_s;
    if (!c.message.empty()) entry["message"] = c.message;
    list.push_back(std::move(entry));
  }
  return list;
}

}  // namespace parplan

namespace parplan {

nlohmann::ordered_json traffic_json(const ClusterSpec& cluster, const CostReport& cost) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < cluster.tiers.size() && i < cost.dp_traffic.bytes.size(); ++i) {
    const bool outer = i + 1 == cluster.tiers.size();
    list.push_back(
        {{"tier", cluster.heterogeneous() && outer ? std::string("inter-node") : cluster.tiers[i].name},
         {"nic", cluster.heterogeneous() && outer ? "inter-node" : nic_name(cluster.tiers[i].nic)},
         {"dp_bytes", cost.dp_traffic.bytes[i]},
         {"dp_seconds", cost.dp_traffic.seconds[i]}});
  }
  return list;
}

nlohmann::ordered_json placement_json(const Placement& placement) {
  const auto groups = [](const std::vector<PlacedGroup>& list) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const PlacedGroup& g : list) {
      nlohmann::ordered_json nic;
      if (g.nics.size() == 1)
        nic = g.nics.front();
      else
        nic = g.nics;
      out.push_back({{"ranks", g.ranks}, {"nic", nic}});
    }
    return out;
  };
  return {{"tp", groups(placement.tp)},
          {"cp", groups(placement.cp)},
          {"dp", groups(placement.dp)},
          {"pp", groups(placement.pp)}};
}

nlohmann::ordered_json accuracy_json(const ClusterSpec& cluster, const ModelSpec& model, const JobSpec& job,
                                     const ParallelConfig& config) {
  nlohmann::ordered_json j;
  j["error_band"] = error_band_text(cluster);
  const std::optional<HeldoutAlike> alike = heldout_alike(cluster, model, job, config);
  if (alike) {
    j["heldout"] = {{"runs", alike->runs},
                    {"mean_abs_error", alike->mean_abs_error},
                    {"max_abs_error", alike->max_abs_error},
                    {"mean_error", alike->mean_error},
                    {"alike", alike->alike}};
  } else {
    j["heldout"] = nullptr;
  }
  return j;
}

}  // namespace parplan
