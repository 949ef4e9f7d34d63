// The "held-out runs" line of plan and estimate: the errors it states are
// those of the held-out file's runs on the same profile that share the
// plan's traits, counted here again from the file; traits are let go in the
// stated order only when too few runs share them all; a profile without
// held-out runs says so.
#include "src/calibration/heldout_alike.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "solvers/fit_run.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/model_loader.h"
#include "src/io/run_file_reader.h"

namespace parplan {
namespace {

struct Counted {
  int runs = 0;
  double sum_abs = 0, max_abs = 0, sum = 0;
};

struct PredictedRun {
  FitRun run;
  std::string profile;
  double error = 0;
};

// The file's runs predicted on their own hardware (dgx-h100 unless a run
// names another), read once for all the tests.
const std::vector<PredictedRun>& predicted_runs() {
  static const std::vector<PredictedRun> runs = [] {
    const ClusterSpec base = load_cluster("dgx-h100");
    std::vector<PredictedRun> out;
    for (const FitRun& run :
         read_run_yaml((data_dir() / "calibration/heldout-published-runs.yaml").string(), base)) {
      const RunPrediction p = predict_run(run, base);
      out.push_back(
          {run, run.own_cluster ? run.own_cluster->name : "dgx-h100", p.step_s / run.measured_step_s - 1.0});
    }
    return out;
  }();
  return runs;
}

// Those on `profile` that share the traits compared.
Counted count_alike(const std::string& profile, const ModelSpec& model, const JobSpec& job,
                    const ParallelConfig& config, bool compare_precision, bool compare_sharding) {
  Counted c;
  for (const PredictedRun& r : predicted_runs()) {
    const FitRun& run = r.run;
    if (r.profile != profile) continue;
    if (run.model.is_moe() != model.is_moe()) continue;
    if ((run.job.seq >= 32768) != (job.seq >= 32768)) continue;
    if (run.job.fused_elementwise != job.fused_elementwise) continue;
    if (compare_precision && (run.job.precision == Precision::kFp8) != (job.precision == Precision::kFp8))
      continue;
    if (compare_sharding && (run.config.zero >= 3) != (config.zero >= 3)) continue;
    ++c.runs;
    c.sum_abs += std::fabs(r.error);
    c.sum += r.error;
    c.max_abs = std::fmax(c.max_abs, std::fabs(r.error));
  }
  return c;
}

JobSpec job_of(int seq, Precision precision) {
  JobSpec job;
  job.gpus = 64;
  job.gbs = 128;
  job.seq = seq;
  job.precision = precision;
  return job;
}

ParallelConfig config_with_zero(int zero) {
  ParallelConfig c;
  c.zero = zero;
  return c;
}

TEST(HeldoutAlike, StatesTheErrorsOfTheRunsThatShareEveryTrait) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  const ModelSpec model = load_model("llama2-70b");
  const JobSpec job = job_of(4096, Precision::kFp8);
  const ParallelConfig config = config_with_zero(1);
  const Counted counted = count_alike("dgx-h100", model, job, config, true, true);
  ASSERT_GE(counted.runs, kHeldoutAlikeMinRuns);
  const auto alike = heldout_alike(h100, model, job, config);
  ASSERT_TRUE(alike.has_value());
  EXPECT_EQ(alike->runs, counted.runs);
  EXPECT_NEAR(alike->mean_abs_error, counted.sum_abs / counted.runs, 1e-12);
  EXPECT_NEAR(alike->max_abs_error, counted.max_abs, 1e-12);
  EXPECT_NEAR(alike->mean_error, counted.sum / counted.runs, 1e-12);
  EXPECT_NE(alike->alike.find("fp8"), std::string::npos);
  EXPECT_NE(alike->alike.find("no ZeRO-3/FSDP"), std::string::npos);
  const std::string text = heldout_alike_text(alike);
  EXPECT_NE(text.find(std::to_string(counted.runs) + " like this"), std::string::npos) << text;
  EXPECT_NE(text.find(counted.sum < 0 ? "too fast" : "too slow"), std::string::npos) << text;
}

TEST(HeldoutAlike, LetsTraitsGoOnlyWhenTooFewRunsShareThem) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  const ModelSpec dense = load_model("llama2-7b");
  const ModelSpec moe = load_model("qwen3-30b-a3b");
  for (const ModelSpec* model : {&dense, &moe}) {
    for (int seq : {4096, 131072}) {
      for (Precision precision : {Precision::kBf16, Precision::kFp8}) {
        for (int zero : {1, 3}) {
          SCOPED_TRACE(model->name + " seq " + std::to_string(seq) + " zero " + std::to_string(zero) +
                       (precision == Precision::kFp8 ? " fp8" : " bf16"));
          const JobSpec job = job_of(seq, precision);
          const ParallelConfig config = config_with_zero(zero);
          const auto alike = heldout_alike(h100, *model, job, config);
          const int all = count_alike("dgx-h100", *model, job, config, true, true).runs;
          const int no_sharding = count_alike("dgx-h100", *model, job, config, true, false).runs;
          const int neither = count_alike("dgx-h100", *model, job, config, false, false).runs;
          if (all >= kHeldoutAlikeMinRuns) {
            ASSERT_TRUE(alike.has_value());
            EXPECT_EQ(alike->runs, all);
            EXPECT_NE(alike->alike.find("ZeRO-3/FSDP"), std::string::npos);
          } else if (no_sharding >= kHeldoutAlikeMinRuns) {
            ASSERT_TRUE(alike.has_value());
            EXPECT_EQ(alike->runs, no_sharding);
            EXPECT_EQ(alike->alike.find("ZeRO-3/FSDP"), std::string::npos);
          } else if (neither >= kHeldoutAlikeMinRuns) {
            ASSERT_TRUE(alike.has_value());
            EXPECT_EQ(alike->runs, neither);
            EXPECT_EQ(alike->alike.find("fp8"), std::string::npos);
          } else {
            EXPECT_FALSE(alike.has_value());
          }
        }
      }
    }
  }
}

TEST(HeldoutAlike, AProfileWithoutHeldOutRunsSaysSo) {
  const ClusterSpec a100 = load_cluster("dgx-a100");
  const ModelSpec model = load_model("llama2-7b");
  const auto alike = heldout_alike(a100, model, job_of(4096, Precision::kBf16), config_with_zero(1));
  EXPECT_FALSE(alike.has_value());
  EXPECT_EQ(heldout_alike_text(alike), "none like this on this profile");
}

}  // namespace
}  // namespace parplan
