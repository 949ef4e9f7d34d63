// A user's own profile, job file and model, as an audit of a first-time
// user's session found them mishandled: optimistic defaults taken in
// silence, a reserve larger than the GPU, a calibration block without its
// error, a job file's relative paths read from elsewhere, sp not pinnable in
// a job file, a window as long as the sequence refused by --emit, and
// infeasibility advice that ignored the user's own pins.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace own_cluster_inputs_test {

using test::CliRun;
using test::expect_cli_refusal;
using test::run_cli;
using test::write_temp;

const std::string kMinimalProfile =
    "name: mini\n"
    "ranks_per_node: 8\n"
    "device: {name: X, peak_bf16_tflops: 312, hbm_gib: 40, hbm_tb_per_s: 1.5, reserved_gib: 1}\n"
    "tiers:\n"
    "  - {name: pcie, ranks: 8, bandwidth_gb_per_s: 12}\n"
    "  - {name: eth, bandwidth_gb_per_s: 200}\n";

const std::string kEstimate =
    "estimate --model llama3-8b --gpus 16 --gbs 64 --seq 2048 --tp 2 --pp 1 --cluster ";

TEST(OwnClusterInputs, DefaultedConstantsAndAGbPerSecondSlipAreNamedOnce) {
  const CliRun run = run_cli(kEstimate + write_temp("mini.yaml", kMinimalProfile));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // One line naming what was assumed, one naming the faster outer tier;
  // once each although the command loads the profile more than once.
  EXPECT_EQ(test::line_count(run.err), 2) << run.err;
  EXPECT_NE(run.err.find("device.gemm_efficiency_max"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("tiers[1].efficiency"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("tiers[1] (eth, 200 GB/s) is faster per GPU"), std::string::npos) << run.err;
  // The shipped profiles state every constant.
  for (const char* shipped : {"dgx-a100", "dgx-h100", "frontier", "holmes-mixed"}) {
    const CliRun ok = run_cli(kEstimate + shipped);
    EXPECT_EQ(ok.exit_code, 0) << shipped << ok.err;
    EXPECT_TRUE(ok.err.empty()) << shipped << ok.err;
  }
}

TEST(OwnClusterInputs, ImpossibleProfileValuesAreRefused) {
  std::string reserve = kMinimalProfile;
  reserve.replace(reserve.find("reserved_gib: 1"), 15, "reserved_gib: 1400");
  expect_cli_refusal(kEstimate + write_temp("reserve.yaml", reserve), "device.reserved_gib' is not below");
  const std::string calibration = kMinimalProfile + "calibration: {runs: 5}\n";
  expect_cli_refusal(kEstimate + write_temp("cal.yaml", calibration), "mean_step_error' is missing");
  const std::string inverted =
      kMinimalProfile + "calibration: {runs: 5, mean_step_error: 0.05, max_step_error: 0.01}\n";
  expect_cli_refusal(kEstimate + write_temp("inv.yaml", inverted), "max_step_error' is below");
  const std::string no_runs = kMinimalProfile + "calibration: {mean_step_error: 0.05}\n";
  expect_cli_refusal(kEstimate + write_temp("noruns.yaml", no_runs), "runs' is missing");
}

TEST(OwnClusterInputs, TiersNestAndOldKeysAreNamedOnce) {
  const std::string device = "device: {name: X, peak_bf16_tflops: 312, hbm_gib: 40, hbm_tb_per_s: 1.5}\n";
  const auto tiers = [&](const std::string& list) {
    return "name: t\nranks_per_node: 8\n" + device + "tiers:\n" + list;
  };
  expect_cli_refusal(kEstimate + write_temp("t1.yaml", tiers("  - {ranks: 2, bandwidth_gb_per_s: 300}\n"
                                                             "  - {ranks: 8, bandwidth_gb_per_s: 32}\n"
                                                             "  - {ranks: 6, bandwidth_gb_per_s: 25}\n")),
                     "tiers[2].ranks is 6; it must be a multiple of tiers[1].ranks (8)");
  expect_cli_refusal(kEstimate + write_temp("t2.yaml", tiers("  - {ranks: 3, bandwidth_gb_per_s: 300}\n"
                                                             "  - {ranks: 8, bandwidth_gb_per_s: 32}\n"
                                                             "  - {bandwidth_gb_per_s: 25}\n")),
                     "tiers[1].ranks is 8; it must be a multiple of tiers[0].ranks (3)");
  std::string old_key = kMinimalProfile;
  old_key.replace(old_key.find("reserved_gib: 1"), 15, "reserved_gb: 1");
  const CliRun run = run_cli(kEstimate + write_temp("old.yaml", old_key));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::size_t deprecations = 0;
  for (std::size_t at = run.err.find("is deprecated"); at != std::string::npos;
       at = run.err.find("is deprecated", at + 1))
    ++deprecations;
  EXPECT_EQ(deprecations, 1u) << run.err;
  std::string both = kMinimalProfile;
  both.replace(both.find("hbm_gib: 40"), 11, "hbm_gib: 40, hbm_gb: 40");
  expect_cli_refusal(kEstimate + write_temp("both.yaml", both),
                     "'device.hbm_gb' is the old name of 'hbm_gib'");
}

TEST(OwnClusterInputs, PartNodesAndMissingUnitsAreSaid) {
  // Costed as placed, but no launch file starts part of a node.
  const CliRun part = run_cli("plan --model llama3-8b --cluster dgx-a100 --gpus 20 --gbs 80 --seq 2048");
  EXPECT_EQ(part.exit_code, 0) << part.err;
  EXPECT_NE(part.err.find("20 GPUs fill 2 nodes of 8 and part of another"), std::string::npos) << part.err;
  const CliRun whole = run_cli("plan --model llama3-8b --cluster dgx-a100 --gpus 16 --gbs 64 --seq 2048");
  EXPECT_EQ(whole.err.find("part of another"), std::string::npos) << whole.err;
  std::string no_bandwidth = kMinimalProfile;
  no_bandwidth.replace(no_bandwidth.find(", hbm_tb_per_s: 1.5"), 19, "");
  expect_cli_refusal(kEstimate + write_temp("nobw.yaml", no_bandwidth),
                     "'device.hbm_tb_per_s' is missing; add it in TB/s");
}

TEST(OwnClusterInputs, AWindowOnNoLayerIsFullAttention) {
  const std::string model =
      "name: w\nsource: test\nlayers: 4\nhidden: 512\nheads: 8\nvocab: 32000\nmax_positions: 8192\n"
      "sliding_window: 1024\nfull_attention_layers: 4\n";
  const CliRun run = run_cli("estimate --model " + write_temp("w.yaml", model) +
                             " --cluster dgx-h100 --gpus 8 --gbs 8 --seq 4096 --tp 1 --pp 1");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err.find("sliding-window"), std::string::npos) << run.err;
}

TEST(OwnClusterInputs, AJobFilesPathsAreReadFromItsFolder) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("parplan_jobdir_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string profile = std::string(PARPLAN_SOURCE_DIR) + "/hardware-profiles/dgx-a100.yaml";
  fs::copy_file(profile, dir / "mine.yaml", fs::copy_options::overwrite_existing);
  const std::string job = (dir / "job.yaml").string();
  std::ofstream(job) << "model: llama3-8b\ncluster: mine.yaml\ngpus: 16\ngbs: 64\nseq: 2048\n"
                     << "constraints: {tp: 2, sp: false}\n";
  const nlohmann::json j = test::cli_json("plan --job " + job + " --format json");
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j["config"]["tp"], 2);
  EXPECT_EQ(j["config"]["sp"], false);  // pinned off in the job file
  std::ofstream(job) << "model: llama3-8b\ncluster: missing.yaml\ngpus: 16\ngbs: 64\nseq: 2048\n";
  expect_cli_refusal("plan --job " + job, "field 'cluster' names 'missing.yaml'");
  // A job file's own gpus and nodes that disagree are named as its fields,
  // the flags as flags (either flag replaces both of the file's).
  std::ofstream(job) << "model: llama3-8b\ncluster: mine.yaml\ngpus: 12\nnodes: 2\ngbs: 64\nseq: 2048\n";
  expect_cli_refusal("plan --job " + job, "job.yaml: gpus and nodes disagree: 2 nodes hold 16 GPUs, not 12");
  expect_cli_refusal("plan --job " + job + " --gpus 8 --nodes 2", "--gpus and --nodes disagree");
  EXPECT_EQ(run_cli("plan --job " + job + " --gpus 16").exit_code, 0);
  fs::remove_all(dir);
}

TEST(OwnClusterInputs, AWindowAsLongAsTheSequenceIsWritten) {
  const std::string model = std::string(PARPLAN_SOURCE_DIR) + "/examples/models/mistral-7b-v0.1/config.json";
  const std::string out = ::testing::TempDir() + "parplan_window_" + std::to_string(::getpid());
  const std::string plan =
      "plan --model " + model + " --cluster dgx-h100 --gpus 8 --gbs 64 --emit megatron --out " + out;
  const CliRun covered = run_cli(plan + " --seq 4096");
  EXPECT_EQ(covered.exit_code, 0) << covered.err;
  EXPECT_EQ(covered.err.find("warning"), std::string::npos) << covered.err;
  expect_cli_refusal(plan + " --seq 8192", "sliding-window attention (4096 tokens)");
  std::filesystem::remove_all(out);
}

TEST(OwnClusterInputs, InfeasibleAdviceNamesThePinsThatBindIt) {
  const CliRun run = run_cli(
      "plan --model llama3-8b --cluster dgx-a100 --gpus 32 --gbs 256 --seq 4096 --tp 1 --pp 1 --zero 0 "
      "--recompute none");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(test::line_count(run.err), 1) << run.err;
  EXPECT_NE(run.err.find("unpin --tp 1 --pp 1 --zero 0 --recompute none"), std::string::npos) << run.err;
  // Context parallelism needs flash attention, which dgx-a100's profile
  // leaves off by default: the advice names the flag, not an option the
  // user never gave.
  const CliRun attention = run_cli("plan --model gpt-1t --cluster dgx-a100 --gpus 4480 --gbs 1 --seq 2048");
  EXPECT_EQ(attention.exit_code, 1);
  EXPECT_NE(attention.err.find("add --attention flash"), std::string::npos) << attention.err;
}

// The held-out runs of a shipped profile were predicted with its
// constants: a copy that keeps the name but changes one is not described by
// them (it printed dgx-h100's held-out errors).
TEST(OwnClusterInputs, HeldOutErrorsOnlyForTheProfileTheyWerePredictedOn) {
  const std::string shipped =
      test::slurp(std::string(PARPLAN_SOURCE_DIR) + "/hardware-profiles/dgx-h100.yaml");
  std::string changed = shipped;
  const std::size_t at = changed.find("gemm_efficiency_max:");
  ASSERT_NE(at, std::string::npos);
  changed.replace(at, changed.find('\n', at) - at, "gemm_efficiency_max: 0.3");
  const std::string args =
      "estimate --model llama3-70b --gpus 64 --gbs 512 --seq 8192 --tp 4 --pp 4 --sp "
      "--format json --cluster ";
  const nlohmann::json same = test::cli_json(args + write_temp("same-h100.yaml", shipped));
  const nlohmann::json edited = test::cli_json(args + write_temp("edited-h100.yaml", changed));
  ASSERT_FALSE(same.empty());
  ASSERT_FALSE(edited.empty());
  EXPECT_FALSE(same["accuracy"]["heldout"].is_null());
  EXPECT_TRUE(edited["accuracy"]["heldout"].is_null());
}

}  // namespace own_cluster_inputs_test
}  // namespace parplan
