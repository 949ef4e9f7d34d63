// tune's torchtitan trials read back as they were costed: simulated with
// the profile calibrate starts from, every trial's error before the fit is
// the log's rounding only. Cases an audit found misread: an uneven pipeline
// split (pipeline_parallel_first/last_stage_less_layers), FSDP over cp alone
// (data_parallel_shard_degree 1), and a profile whose default attention is
// unfused (torchtitan has no unfused attention).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "tests/cli_support.h"

namespace parplan::test {
namespace {

void expect_trials_read_back(const std::string& name, const std::string& job, const std::string& cluster) {
  const std::string out = ::testing::TempDir() + "parplan_tune_readback_" + name;
  std::filesystem::remove_all(out);
  const CliRun tune = run_cli("tune --job " + write_temp(name + ".yaml", job) +
                              " --trials 1 --emit torchtitan --out " + out + " --simulate " + cluster);
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  const CliRun cal = run_cli("calibrate --cluster " + cluster + " --runs " + out +
                             "/logs --fit gemm_efficiency_max --no-cross-validate --format json");
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  const nlohmann::json report = nlohmann::json::parse(cal.out);
  for (const nlohmann::json& run : report["runs"])
    EXPECT_LT(std::abs(run["error_before"].get<double>()), 2e-3) << name << ": " << run.dump();
}

TEST(TuneReadback, TorchtitanUnevenPipelineSplit) {
  // 32 layers over pp 3: an uneven first/last split.
  expect_trials_read_back(
      "uneven", "model: llama3.1-8b\ncluster: dgx-h100\ngpus: 24\ngbs: 48\nseq: 4096\nconstraints: {pp: 3}\n",
      "dgx-h100");
}

TEST(TuneReadback, TorchtitanFsdpOverContextParallelismAlone) {
  expect_trials_read_back("cp_only",
                          "model: qwen3-30b-a3b\ncluster: dgx-h100\ngpus: 8\ngbs: 32\nseq: 32768\n"
                          "constraints: {tp: 4, cp: 2, zero: 3, ep: 1, mbs: 1}\n",
                          "dgx-h100");
}

TEST(TuneReadback, TorchtitanOnAProfileWithUnfusedDefaultAttention) {
  expect_trials_read_back("a100", "model: llama3.1-8b\ncluster: dgx-a100\ngpus: 8\ngbs: 64\nseq: 4096\n",
                          "dgx-a100");
}

}  // namespace
}  // namespace parplan::test
