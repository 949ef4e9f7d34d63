// Fits the efficiency constants of a hardware profile to the Narayanan 2021
// Table 1 rows (one set for all rows): coordinate search minimising
// max |error| + mean |error|. Prints the constants to put in the profile.
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <vector>

#include "src/calibration/narayanan_table1.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"

namespace {
struct Knob {
  const char* name;
  std::function<double&(parplan::ClusterSpec&)> ref;
  double low, high;
};

double objective(const parplan::ClusterSpec& cluster, const std::vector<parplan::CalibrationRow>& rows,
                 double* mean_out, double* max_out) {
  double sum = 0, worst = 0;
  for (const auto& row : rows) {
    const double e = std::fabs(parplan::predict_calibration_row(row, cluster).error);
    sum += e;
    worst = std::fmax(worst, e);
  }
  if (mean_out) *mean_out = sum / rows.size();
  if (max_out) *max_out = worst;
  return worst + sum / rows.size();
}
}  // namespace

int main(int argc, char** argv) {
  using namespace parplan;
  try {
    ClusterSpec cluster = load_cluster(argc > 1 ? argv[1] : "dgx-a100");
    const auto rows = load_narayanan_table1((data_dir() / "calibration/reference.yaml").string());
    std::vector<Knob> knobs = {
        {"gemm_efficiency_max", [](ClusterSpec& c) -> double& { return c.device.gemm_efficiency_max; }, 0.5, 0.95},
        {"gemm_half_dim", [](ClusterSpec& c) -> double& { return c.device.gemm_half_dim; }, 0, 1024},
        {"memory_bound_efficiency", [](ClusterSpec& c) -> double& { return c.device.memory_bound_efficiency; }, 0.3, 0.95},
    };
    double best = objective(cluster, rows, nullptr, nullptr);
    for (double step = 0.2; step > 0.002; step /= 2) {
      for (bool improved = true; improved;) {
        improved = false;
        for (auto& knob : knobs) {
          for (double sign : {-1.0, 1.0}) {
            double& value = knob.ref(cluster);
            const double old = value;
            value = std::fmin(knob.high, std::fmax(knob.low, old * (1 + sign * step)));
            const double score = objective(cluster, rows, nullptr, nullptr);
            if (score < best - 1e-9) best = score, improved = true;
            else value = old;
          }
        }
      }
    }
    double mean = 0, worst = 0;
    objective(cluster, rows, &mean, &worst);
    for (auto& knob : knobs) std::printf("%-26s %.4f\n", knob.name, knob.ref(cluster));
    std::printf("mean |error| %.2f%%  max |error| %.2f%%\n", 100 * mean, 100 * worst);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "calibration_fit: %s\n", e.what());
    return 2;
  }
  return 0;
}
