#include "src/calibration/narayanan_table1.h"

#include "cost/step_cost.h"
#include "src/io/input_error.h"
#include "src/io/yaml_fields.h"

namespace parplan {

std::vector<CalibrationRow> load_narayanan_table1(const std::string& path) {
  const YAML::Node root = load_yaml_file(path);
  const YAML::Node rows = root["narayanan2021_table1"]["rows"];
  if (!rows.IsSequence()) throw InputError(path + ": narayanan2021_table1.rows is missing");
  std::vector<CalibrationRow> out;
  for (const auto& r : rows) {
    if (!r.IsSequence() || r.size() < 9) throw InputError(path + ": a Table 1 row needs 11 columns");
    CalibrationRow row;
    row.params_billion = r[0].as<double>();
    row.heads = r[1].as<int>();
    row.hidden = r[2].as<int>();
    row.layers = r[3].as<int>();
    row.tp = r[4].as<int>();
    row.pp = r[5].as<int>();
    row.gpus = r[6].as<int>();
    row.gbs = r[7].as<int>();
    row.published_tflops_per_gpu = r[8].as<double>();
    out.push_back(row);
  }
  return out;
}

ModelSpec calibration_model(const CalibrationRow& row) {
  ModelSpec m;
  m.name = "narayanan-" + std::to_string(row.hidden);
  m.layers = row.layers;
  m.hidden = row.hidden;
  m.ffn_hidden = 4 * row.hidden;
  m.heads = row.heads;
  m.kv_groups = row.heads;
  m.head_dim = row.hidden / row.heads;
  m.vocab = 51200;
  m.max_positions = 2048;
  return m;
}

JobSpec calibration_job(const CalibrationRow& row) {
  JobSpec job;
  job.gpus = row.gpus;
  job.gbs = row.gbs;
  job.seq = 2048;
  job.precision = Precision::kFp16;
  return job;
}

ParallelConfig calibration_config(const CalibrationRow& row, int vp) {
  ParallelConfig c;
  c.tp = row.tp;
  c.pp = row.pp;
  c.vp = vp;
  c.dp = row.gpus / (row.tp * row.pp);
  c.mbs = 1;
  c.gbs = row.gbs;
  c.recompute = Recompute::kFull;
  c.flash_attention = false;
  c.overlap_grad_reduce = false;
  c.overlap_p2p = false;
  return c;
}

CalibrationResult predict_calibration_row(const CalibrationRow& row, const ClusterSpec& cluster) {
  const ModelSpec model = calibration_model(row);
  const JobSpec job = calibration_job(row);
  CalibrationResult best;
  best.row = row;
  double best_step_s = 0;
  for (int vp = 1; vp <= row.layers; ++vp) {
    const ParallelConfig c = calibration_config(row, vp);
    if (config_problem(model, job, c) != nullptr) continue;
    const CostReport report = estimate_cost(model, cluster, job, c);
    if (best_step_s == 0 || report.time.step_s < best_step_s) {
      best_step_s = report.time.step_s;
      best.vp = vp;
      best.predicted_tflops_per_gpu = report.throughput.hardware_tflops_per_gpu;
    }
  }
  best.error = (best.predicted_tflops_per_gpu - row.published_tflops_per_gpu) / row.published_tflops_per_gpu;
  return best;
}

}  // namespace parplan
