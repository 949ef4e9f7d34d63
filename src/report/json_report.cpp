#include "src/report/json_report.h"

#include <cmath>

#include "cost/parameters.h"
#include "src/io/job_loader.h"

namespace parplan {

nlohmann::ordered_json config_json(const ParallelConfig& c) {
  nlohmann::ordered_json j;
  j["tp"] = c.tp;
  j["pp"] = c.pp;
  j["vp"] = c.vp;
  j["dp"] = c.dp;
  j["cp"] = c.cp;
  j["ep"] = c.ep;
  j["sp"] = c.sp;
  j["zero"] = c.zero;
  j["mbs"] = c.mbs;
  j["gbs"] = c.gbs;
  j["recompute"] = recompute_name(c.recompute);
  j["recompute_layers"] = c.recompute_layers;
  j["attention"] = c.flash_attention ? "flash" : "unfused";
  j["first_stage_layers"] = c.first_stage_layers;
  j["last_stage_layers"] = c.last_stage_layers;
  j["zeropp"] = c.zeropp();
  j["hierarchical_partition"] = c.hierarchical_partition;
  return j;
}

nlohmann::ordered_json cost_json(const ModelSpec& model, const ParallelConfig& config, const CostReport& cost,
                                 int seq) {
  nlohmann::ordered_json j;
  j["config"] = config_json(config);
  j["model"] = {{"name", model.name},
                {"params", cost.params},
                {"active_params", active_params(model, seq)},
                {"layers", model.layers},
                {"hidden", model.hidden}};
  const TimeBreakdown& t = cost.time;
  j["time"] = {{"step_s", t.step_s},         {"compute_s", t.compute_s},   {"bubble_s", t.bubble_s},
               {"tp_comm_s", t.tp_comm_s},   {"cp_comm_s", t.cp_comm_s},   {"pp_comm_s", t.pp_comm_s},
               {"dp_comm_s", t.dp_comm_s},   {"exposed_comm_s", t.exposed_comm_s},
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

namespace {
// JSON has no NaN or infinity: unknown numbers are null.
nlohmann::ordered_json number_or_null(double value) {
  if (std::isfinite(value)) return value;
  return nullptr;
}
}  // namespace

nlohmann::ordered_json certificates_json(const std::vector<SolverCertificate>& certificates) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& c : certificates) {
    list.push_back({{"name", c.name},
                    {"status", status_name(c.status)},
                    {"objective", number_or_null(c.objective)},
                    {"bound", number_or_null(c.best_bound)},
                    {"gap", number_or_null(c.gap)},
                    {"backend", c.backend},
                    {"time_s", c.time_s}});
  }
  return list;
}

}  // namespace parplan
