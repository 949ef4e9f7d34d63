// A GEMM never takes less time for more work: the efficiency curve's time is
// non-decreasing in its rows (a kernel could run the larger GEMM's tiles and
// drop rows), bf16 and fp8 alike, down to a row or less (an MoE expert's
// share of a short micro-batch), and in every dimension at the 16-bit peak.
// And so more expert load never gives a faster MoE step.
#include <gtest/gtest.h>

#include <string>

#include "cost/compute_time.h"
#include "src/io/cluster_loader.h"
#include "tests/cli_support.h"

namespace parplan {
namespace gemm_monotone {

TEST(GemmMonotone, TimeNeverFallsAsADimensionGrows) {
  for (const char* name : {"dgx-h100", "dgx-a100", "frontier"}) {
    const DeviceSpec device = load_cluster(name).device;
    for (const double peak : {device.peak_bf16_flops_per_s, device.peak_fp8_flops_per_s}) {
      if (peak <= 0) continue;
      const double dims[] = {0.25, 1, 3, 8, 17, 64, 100, 333, 768, 2048, 7168, 28672};
      for (const double a : dims)
        for (const double b : dims) {
          double last_m = 0, last_n = 0, last_k = 0;
          for (const double x : dims) {
            const double t_m = gemm_time_s(device, peak, x, a, b);
            const double t_n = gemm_time_s(device, peak, a, x, b);
            const double t_k = gemm_time_s(device, peak, a, b, x);
            EXPECT_GE(t_m, last_m * (1 - 1e-12)) << name << " m " << x << " n " << a << " k " << b;
            // The fp8 curve's K factor (fp8_gemm_half_dim) still speeds up a
            // latency-bound GEMM of a few rows as K grows; the weights'
            // widths are the model's, so only rows are swept under fp8.
            if (peak != device.peak_bf16_flops_per_s) continue;
            EXPECT_GE(t_n, last_n * (1 - 1e-12)) << name << " n " << x << " m " << a << " k " << b;
            EXPECT_GE(t_k, last_k * (1 - 1e-12)) << name << " k " << x << " m " << a << " n " << b;
            last_m = t_m, last_n = t_n, last_k = t_k;
          }
        }
    }
  }
}

double step_s(const std::string& args) { return test::cli_json(args)["time"]["step_s"].get<double>(); }

// Qwen3-30B-A3B at cp 8: about a hundred rows per local expert, where the
// curve's time used to fall as rows were added.
TEST(GemmMonotone, MoreExpertLoadIsNeverFaster) {
  const std::string job =
      "estimate --model qwen3-30b-a3b --cluster dgx-h100 --gpus 64 --gbs 16 --seq 4096 --tp 4 --sp --pp 1 "
      "--cp 8 "
      "--ep 2 --etp 1 --mbs 1 --zero 1 --recompute selective --engine megatron --format json --no-timings";
  double last = 0;
  for (const char* imbalance : {"1.0", "1.1", "1.3", "2.0"}) {
    const double s = step_s(job + " --moe-imbalance " + imbalance);
    EXPECT_GE(s, last * (1 - 1e-12)) << imbalance;
    last = s;
  }
  EXPECT_LE(step_s(job + " --moe-capacity-factor 0.5 --moe-pad-to-capacity"),
            step_s(job + " --moe-capacity-factor 1.0 --moe-pad-to-capacity") * (1 + 1e-12));
}

}  // namespace gemm_monotone
}  // namespace parplan
