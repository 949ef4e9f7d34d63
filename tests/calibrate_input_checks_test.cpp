// calibrate and tune take measured runs and a simulated cluster under the
// limits a job file has: a run the planner would refuse (seq over 16M, fp8
// on a GPU without fp8, more GPUs than the profile holds) is one line and
// exit 2, not a fit dragged to its bounds or logs of an impossible cluster.
// Each kind of constant needs measured figures of its own kind.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/cli_support.h"

namespace parplan {
namespace {

std::string run_yaml(const std::string& seq, const std::string& extra) {
  return "runs:\n  - name: a\n    model: llama3-8b\n    gpus: 8\n    gbs: 64\n    seq: " + seq +
         "\n    precision: bf16\n    config: {tp: 1, pp: 1, vp: 1, mbs: 1, zero: 1, sp: false, recompute: "
         "none}\n"
         "    step_s: 5.3\n" +
         extra;
}

TEST(CalibrateInputChecks, RunsKeepTheJobLimits) {
  const std::string runs = test::write_temp("huge_seq_runs.yaml", run_yaml("100000000", ""));
  test::expect_cli_refusal("calibrate --cluster dgx-h100 --fit gemm_efficiency_max --runs " + runs,
                           "the sequence length (seq) is 100000000; parplan accepts at most 16777216");
}

TEST(CalibrateInputChecks, APeakMemoryPinsNoTimeConstant) {
  // One step time and one peak: one time constant at most.
  const std::string runs =
      test::write_temp("one_run_with_peak.yaml", run_yaml("4096", "    peak_memory_gib: 40\n"));
  test::expect_cli_refusal(
      "calibrate --cluster dgx-h100 --fit gemm_efficiency_max,layer_overhead_s --runs " + runs,
      "2 step-time constants but only 1 measured step times");
}

TEST(CalibrateInputChecks, AnOpenQuoteInARunCsvIsRefused) {
  const std::string runs = test::write_temp("open_quote.csv",
                                            "model,gpus,gbs,seq,precision,tp,pp,dp,mbs,step_s\n"
                                            "llama3-8b,8,64,4096,bf16,1,1,8,1,\"5\n");
  test::expect_cli_refusal("calibrate --cluster dgx-h100 --fit gemm_efficiency_max --runs " + runs,
                           "line 2: a quoted field is not closed");
}

TEST(CalibrateInputChecks, TuneSimulatesOnlyAClusterThatRunsTheJob) {
  const std::string examples = std::string(PARPLAN_SOURCE_DIR) + "/examples/calibrate/";
  const std::string out = ::testing::TempDir() + "parplan_tune_sim_" + std::to_string(::getpid());
  // fp8 trials on an A100 profile (no fp8 peak).
  test::expect_cli_refusal("tune --job " + examples +
                               "tune-job-fp8.yaml --trials 3 --emit torchtitan --out " + out +
                               " --simulate dgx-a100",
                           "--simulate dgx-a100: precision fp8");
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(CalibrateInputChecks, ScatterSpeedupOfZeroOverZeroIsADash) {
  const std::string coefficients =
      test::write_temp("zero_coefficients.json",
                       R"({"quadratic_ms": 0, "linear_ms": 0, "fixed_ms": 0, "token_capacity_per_gpu": 5992,)"
                       R"( "alltoall_ms_per_token": {"2": 0, "4": 0, "8": 0}, "group_sizes": [1, 2, 4, 8]})");
  const std::string lengths = test::write_temp("two_lengths.txt", "1024 2048\n");
  const test::CliRun run =
      test::run_cli("scatter --gpus 8 --lengths " + lengths + " --coefficients " + coefficients);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.find("nan"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("speedup -"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace parplan
