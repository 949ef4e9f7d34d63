// tune never writes the same run twice: a probe that lands on a top plan's
// config (e.g. mbs halved where the plan already runs mbs 1) would cost a
// GPU run for nothing and give calibrate two identical logs, which it
// refuses. With as many trials as there are candidates, every trial differs
// in its job or its config, and the loop's calibrate step reads them all.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace tune_distinct_trials_test {

TEST(TuneDistinctTrials, EveryTrialIsAnotherRun) {
  const std::string job = test::write_temp("distinct_job.yaml",
                                           "model: llama3-8b\ncluster: dgx-h100\ngpus: 32\ngbs: 256\n"
                                           "seq: 4096\nprecision: bf16\n");
  const std::string out = ::testing::TempDir() + "tune_distinct_" + std::to_string(::getpid());
  std::filesystem::remove_all(out);
  const std::string truth = std::string(PARPLAN_SOURCE_DIR) + "/examples/calibrate/true-h100.yaml";
  const auto j = test::cli_json("tune --job " + job + " --trials 100 --emit megatron --out " + out +
                                " --simulate " + truth + " --format json");
  ASSERT_TRUE(j.contains("trials"));
  EXPECT_GE(j["trials"].size(), 12u);
  std::set<std::string> runs;
  for (const auto& t : j["trials"])
    runs.insert(nlohmann::json::array({t["gpus"], t["gbs"], t["seq"], t["config"]}).dump());
  EXPECT_EQ(runs.size(), j["trials"].size());
  const test::CliRun fit = test::run_cli("calibrate --cluster dgx-h100 --runs " + out +
                                         "/logs --fit gemm_efficiency_max --no-cross-validate");
  EXPECT_EQ(fit.exit_code, 0) << fit.err;
  std::filesystem::remove_all(out);
}

}  // namespace tune_distinct_trials_test
}  // namespace parplan
