// The dgx-a100 profile against published measurements: Narayanan 2021
// Table 1 (the calibration set) and held-out runs of Korthikanti 2022.
#include <gtest/gtest.h>

#include <cmath>

#include "cost/step_cost.h"
#include "src/calibration/narayanan_table1.h"
#include "src/calibration/validation_runs.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/input_error.h"
#include "src/io/model_loader.h"
#include "src/search/search.h"

namespace parplan {
namespace {

TEST(Calibration, NarayananTable1WithinThreePercentMeanSixMax) {
  const ClusterSpec cluster = load_cluster("dgx-a100");
  const auto rows = load_narayanan_table1((data_dir() / "calibration/reference.yaml").string());
  ASSERT_EQ(rows.size(), 10u);
  double sum = 0, worst = 0;
  for (const auto& row : rows) {
    const double e = std::fabs(predict_calibration_row(row, cluster).error);
    sum += e;
    worst = std::fmax(worst, e);
  }
  EXPECT_LE(sum / rows.size(), 0.03);
  EXPECT_LE(worst, 0.06);
}

TEST(Calibration, HeldOutPublishedRunsWithinFivePercentMeanTenMax) {
  const auto runs = load_validation_runs((data_dir() / "calibration/validation_runs.yaml").string());
  ASSERT_FALSE(runs.empty());
  double sum = 0, worst = 0;
  for (const auto& run : runs) {
    const double e = std::fabs(predict_validation_run(run).error);
    sum += e;
    worst = std::fmax(worst, e);
  }
  EXPECT_LE(sum / runs.size(), 0.05);
  EXPECT_LE(worst, 0.10);
}

// Narayanan 2021 Table 2's ZeRO-3 rows are costed under DeepSpeed's recipe:
// its per-micro-batch gradient passes never make a step faster, and an
// engine name the recipes do not know is refused.
TEST(Calibration, ValidationRunsTakeTheirEnginesRecipe) {
  const auto runs =
      load_validation_runs((data_dir() / "calibration/narayanan2021-table2-zero3.yaml").string());
  ASSERT_FALSE(runs.empty());
  for (const auto& run : runs) {
    EXPECT_EQ(run.engine, "deepspeed") << run.name;
    ValidationRun plain = run;
    plain.engine.clear();
    EXPECT_GE(predict_validation_run(run).predicted_step_s, predict_validation_run(plain).predicted_step_s)
        << run.name;
  }
  ValidationRun unknown = runs.front();
  unknown.engine = "no-such-engine";
  EXPECT_THROW(predict_validation_run(unknown), InputError);
}

TEST(Calibration, PlanForOneTrillionIsAtLeastAsFastAsThePublishedExpertConfig) {
  // Narayanan 2021 Table 1, last row: 1T on 3072 A100, gbs 3072, tp 8, pp 64.
  const ModelSpec model = load_model("gpt-1t");
  const ClusterSpec cluster = load_cluster("dgx-a100");
  JobSpec job;
  job.gpus = 3072;
  job.gbs = 3072;
  job.seq = 2048;
  job.precision = Precision::kFp16;
  const SearchResult result = search_configs(model, cluster, job, SearchOptions{});
  ASSERT_FALSE(result.best.empty());
  double expert_s = 0;
  for (int vp : {1, 2}) {
    ParallelConfig expert;
    expert.tp = 8, expert.pp = 64, expert.dp = 6, expert.vp = vp, expert.mbs = 1, expert.gbs = 3072;
    expert.recompute = Recompute::kFull;
    expert.flash_attention = cluster.default_flash_attention;
    ASSERT_EQ(config_problem(model, job, expert), nullptr);
    const double s = estimate_cost(model, cluster, job, expert).time.step_s;
    expert_s = expert_s == 0 ? s : std::fmin(expert_s, s);
  }
  EXPECT_LE(result.best.front().cost.time.step_s, expert_s);
  EXPECT_TRUE(result.best.front().cost.memory.fits);
}

}  // namespace
}  // namespace parplan
