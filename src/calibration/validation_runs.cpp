#include "src/calibration/validation_runs.h"

#include "cost/step_cost.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/io/job_loader.h"
#include "src/io/model_loader.h"
#include "src/io/yaml_fields.h"

namespace parplan {

std::vector<ValidationRun> load_validation_runs(const std::string& path) {
  const YAML::Node root = load_yaml_file(path);
  if (!root["runs"].IsSequence()) throw InputError(path + ": 'runs' must be a list");
  std::vector<ValidationRun> runs;
  for (const auto& node : root["runs"]) {
    YamlFields f(node, path, "runs[" + std::to_string(runs.size()) + "].");
    ValidationRun r;
    r.name = f.text("name");
    r.model = f.text("model");
    r.cluster = f.text("cluster");
    r.gpus = f.positive_int("gpus");
    r.gbs = f.positive_int("gbs");
    r.seq = f.positive_int("seq", 2048);
    r.tp = f.positive_int("tp", 1);
    r.pp = f.positive_int("pp", 1);
    r.vp = f.non_negative_int("vp", 0);
    r.cp = f.positive_int("cp", 1);
    r.mbs = f.positive_int("mbs", 1);
    r.zero = f.non_negative_int("zero", 0);
    r.sp = f.boolean("sp", false);
    r.overlap = f.boolean("overlap", true);
    r.recompute = f.text("recompute", "none");
    r.precision = f.text("precision", "bf16");
    r.attention = f.text("attention", "");
    r.engine = f.text("engine", "");
    r.published_step_s = f.positive_number("step_s");
    runs.push_back(r);
  }
  return runs;
}

ValidationResult predict_validation_run(const ValidationRun& run, const ClusterSpec* override_cluster) {
  const ModelSpec model = load_model(run.model);
  const ClusterSpec cluster = override_cluster ? *override_cluster : load_cluster(run.cluster);
  return predict_validation_run(run, model, cluster);
}

ValidationResult predict_validation_run(const ValidationRun& run, const ModelSpec& model,
                                        const ClusterSpec& cluster) {
  JobSpec job;
  job.gpus = run.gpus;
  job.gbs = run.gbs;
  job.seq = run.seq;
  job.precision = parse_precision(run.precision, run.name + ": precision");
  if (!run.engine.empty()) apply_engine_recipe(run.engine, job);
  ParallelConfig c;
  c.tp = run.tp;
  c.pp = run.pp;
  c.cp = run.cp;
  c.dp = run.gpus / (run.tp * run.pp * run.cp);
  c.mbs = run.mbs;
  c.gbs = run.gbs;
  c.zero = run.zero;
  c.sp = run.sp;
  c.overlap_p2p = run.overlap;
  c.overlap_grad_reduce = run.overlap;
  c.recompute = parse_recompute(run.recompute, run.name + ": recompute");
  c.flash_attention = run.attention.empty() ? cluster.default_flash_attention : run.attention == "flash";
  ValidationResult best;
  const int first_vp = run.vp > 0 ? run.vp : 1;
  const int last_vp = run.vp > 0 ? run.vp : model.layers;
  for (int vp = first_vp; vp <= last_vp; ++vp) {
    c.vp = vp;
    if (config_problem(model, job, c) != nullptr) continue;
    const double step_s = estimate_cost(model, cluster, job, c).time.step_s;
    if (best.predicted_step_s == 0 || step_s < best.predicted_step_s)
      best.predicted_step_s = step_s, best.vp = vp;
  }
  if (best.predicted_step_s == 0)
    throw InputError(run.name + ": the run's config is not valid for its model");
  best.error = (best.predicted_step_s - run.published_step_s) / run.published_step_s;
  return best;
}

}  // namespace parplan
