// Issue 17's reproductions, one CLI run each: bad or extreme input gets one
// line on stderr and exit 2 (or a correct answer), never a crash, a hang, an
// impossible plan or a silently altered input.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::CliRun;
using test::run_cli;

const std::string kM = "--model gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048";

// Item 1: tp * pp * cp overflowed int, then a modulo by zero (SIGFPE).
TEST(Hardening, HugeParallelSizesAreRangeErrors) {
  test::expect_cli_refusal("estimate " + kM + " --tp 65536 --pp 65536",
                           "--pp must be an integer from 1 to 10000");
  test::expect_cli_refusal("estimate " + kM + " --tp 65536 --pp 8", "tp 65536 must divide");
  const std::string job =
      test::write_temp("huge_tp.yaml",
                       "model: gpt3-175b\ncluster: dgx-a100\ngpus: 1024\ngbs: 1536\nseq: 2048\n"
                       "config: {tp: 1073741824, pp: 1}\n");
  test::expect_cli_refusal("estimate --job " + job, "config.tp' must be an integer from 1 to 1048576");
  test::expect_cli_refusal("check --job " + job, "config.tp' must be an integer from 1 to 1048576");
}

// Item 2: products of user numbers gave impossible plans.
TEST(Hardening, OversizedInputsNameTheirBound) {
  test::expect_cli_refusal("plan " + kM.substr(0, kM.find("--gbs")) + "--gbs 1000000000 --seq 2048",
                           "--gbs must be an integer from 1 to 16777216");
  test::expect_cli_refusal(
      "plan --model gpt3-175b --cluster dgx-a100 --nodes 268435456 --gbs 1536 --seq 2048",
      "--nodes must be an integer from 1 to 1048576");
  // Within the --nodes bound, but nodes x GPUs per node beyond the GPU bound.
  test::expect_cli_refusal("plan --model gpt3-175b --cluster dgx-a100 --nodes 1048576 --gbs 1536 --seq 2048",
                           "at most 1048576");
  const std::string model = test::write_temp(
      "deep_model.yaml",
      "name: deep\nsource: test\nlayers: 10000000\nhidden: 1024\nffn_hidden: 4096\nheads: 16\n"
      "vocab: 50000\nmax_positions: 2048\n");
  const CliRun run = run_cli("plan --model " + model + " --cluster dgx-a100 --gpus 8 --gbs 8 --seq 2048");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("layers"), std::string::npos) << run.err;
}

// Item 3: a FIFO blocked forever; a directory was an internal error.
TEST(Hardening, JobThatIsNotARegularFileIsRefusedAtOnce) {
  const std::string fifo = ::testing::TempDir() + "hardening_fifo_" + std::to_string(::getpid()) + ".yaml";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  test::expect_cli_refusal("plan --job " + fifo, "not a regular file");
  ::unlink(fifo.c_str());
  test::expect_cli_refusal("plan --job " + ::testing::TempDir(), "not a regular file");
  test::expect_cli_refusal("plan --job ''", "--job is empty");
  test::expect_cli_refusal(
      "plan --model " + ::testing::TempDir() + " --cluster dgx-a100 --gpus 8 --gbs 8 --seq 2048",
      "not a regular file");
}

// Item 3: a huge layer count made the vp loop run for ever; now bounded.
TEST(Hardening, LayerCountBeyondTheLimitIsRefused) {
  const std::string model =
      test::write_temp("int_max_layers.yaml",
                       "name: deep\nsource: test\nlayers: 2147483647\nhidden: 1024\nffn_hidden: 4096\n"
                       "heads: 16\nvocab: 50000\nmax_positions: 2048\n");
  const CliRun run = run_cli("plan --model " + model + " --cluster dgx-a100 --gpus 8 --gbs 8 --seq 2048");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(test::line_count(run.err), 1) << run.err;
}

// Item 5: a leading zero is a decimal digit, not an octal prefix.
TEST(Hardening, LeadingZerosAreDecimal) {
  const CliRun octal = run_cli(
      "estimate --model gpt3-175b --cluster dgx-a100 --gpus 01024 --gbs 0640 --seq 2048 "
      "--tp 08 --pp 08 --format json");
  ASSERT_EQ(octal.exit_code, 0) << octal.err;
  const auto j = nlohmann::json::parse(octal.out);
  EXPECT_EQ(j["config"]["gbs"], 640);
  EXPECT_EQ(j["config"]["tp"], 8);
  EXPECT_EQ(j["config"]["dp"], 1024 / 64);
  test::expect_cli_refusal("estimate " + kM + " --tp 0x8 --pp 8", "--tp must be an integer");
}

// The same for the flags added since: CLI11's own conversion read 0x40 as 64
// and 010 as 8, and its range check let nan through (a nan step budget made
// a nan deadline).
TEST(Hardening, NumericFlagsOfEveryCommandAreDecimal) {
  const std::string examples = std::string(PARPLAN_SOURCE_DIR) + "/examples/";
  const std::string scatter = "scatter --lengths " + examples +
                              "scatter/small-steps.json --model llama3-8b "
                              "--cluster dgx-a100";
  test::expect_cli_refusal(scatter + " --gpus 0x8", "--gpus must be an integer");
  test::expect_cli_refusal(scatter + " --gpus 8 --improve-ms nan", "--improve-ms must be a number");
  test::expect_cli_refusal(scatter + " --gpus 8 --step-time-limit-ms nan",
                           "--step-time-limit-ms must be a number");
  test::expect_cli_refusal(scatter + " --gpus 8 --zero 0x1", "--zero must be an integer");
  test::expect_cli_refusal(
      "plan --model mixtral-8x7b --cluster dgx-h100 --gpus 64 --gbs 256 --seq 4096 "
      "--moe-imbalance nan",
      "--moe-imbalance must be a number");
  test::expect_cli_refusal(
      "plan --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096 "
      "--power-limit 0x190",
      "--power-limit must be a number");
  test::expect_cli_refusal(
      "sweep --models llama3-8b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096 "
      "--power-limit nan",
      "--power-limit must be a number");
  test::expect_cli_refusal(
      "plan --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096 "
      "--memory-headroom 0x4",
      "--memory-headroom must be GiB");
  test::expect_cli_refusal(
      "plan --model mixtral-8x7b --cluster dgx-h100 --gpus 64 --gbs 256 --seq 4096 "
      "--allow-lossy-comm --a2a-compression 0x1p-1",
      "--a2a-compression must be a number");
  const std::string out = ::testing::TempDir() + "parplan_decimal_" + std::to_string(::getpid());
  test::expect_cli_refusal("tune --job " + examples + "calibrate/tune-job.yaml --trials 0x3 --out " + out,
                           "--trials must be an integer");
  // A leading zero is a decimal digit: --gpus 08 is --gpus 8, --train-iters 020 is 20.
  const std::string budget = " --format json --no-timings --step-time-limit-ms 60000";
  const CliRun eight = run_cli(scatter + " --gpus 8" + budget);
  ASSERT_EQ(eight.exit_code, 0) << eight.err;
  EXPECT_EQ(run_cli(scatter + " --gpus 08" + budget).out, eight.out);
  const CliRun tune =
      run_cli("tune --job " + examples + "calibrate/tune-job.yaml --trials 3 --train-iters 020 --out " + out);
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  EXPECT_NE(test::slurp(out + "/run_trials.sh").find("TRAIN_ITERS:-20}"), std::string::npos);
  std::filesystem::remove_all(out);
}

// An option given an empty value was read as not given on most commands
// ("--precision ''" planned bf16, "--engine ''" every engine): refused on all.
TEST(Hardening, EmptyOptionValuesAreRefusedOnEveryCommand) {
  const std::string job = " --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096";
  const std::string examples = std::string(PARPLAN_SOURCE_DIR) + "/examples/";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plan" + job + " --precision ''", "--precision is empty"},
      {"plan" + job + " --engine ''", "--engine is empty"},
      {"estimate" + job + " --tp 1 --pp 1 --optimizer ''", "--optimizer is empty"},
      {"check" + job + " --tp 1 --pp 1 --engine ''", "--engine is empty"},
      {"sweep --models llama3-8b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096 --precision ''",
       "--precision is empty"},
      {"scatter --lengths " + examples +
           "scatter/small-steps.json --gpus 8 --model llama3-8b --cluster dgx-a100 "
           "--recompute ''",
       "--recompute is empty"},
      {"tune --job " + examples + "calibrate/tune-job.yaml --out x --emit ''", "--emit is empty"},
      {"experts --loads " + examples + "experts/mixtral-like.json --gpus 8 --solver ''", "--solver is empty"},
  };
  for (const auto& [args, says] : cases) test::expect_cli_refusal(args, says);
  // An unknown --emit engine is named as --emit, not as the --engine it implies.
  test::expect_cli_refusal("plan" + job + " --emit bogus --out x", "--emit: unknown engine 'bogus'");
}

// calibrate --fit: an empty list or item was read as the default selection
// (fitting five constants where the user meant to name some), and a constant
// named twice was fitted as two free columns of one value.
TEST(Hardening, CalibrateFitKeysAreNamedOnceAndNotEmpty) {
  const std::string calibrate = "calibrate --cluster dgx-h100 --no-cross-validate --runs " +
                                std::string(PARPLAN_SOURCE_DIR) + "/calibration/h100-megatron-lm.yaml --fit ";
  test::expect_cli_refusal(calibrate + "''", "--fit is empty");
  for (const char* keys : {"','", "gemm_efficiency_max,", "gemm_efficiency_max,,layer_overhead_s"})
    test::expect_cli_refusal(calibrate + keys, "--fit: empty constant name");
  test::expect_cli_refusal(calibrate + "gemm_efficiency_max,layer_overhead_s,gemm_efficiency_max",
                           "'gemm_efficiency_max' is named twice");
  const CliRun one = run_cli(calibrate + "gemm_efficiency_max --format json --no-timings");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(nlohmann::json::parse(one.out)["constants"].size(), 1u) << one.out;
}

// Item 6: contradicting flags are refused, not one silently winning.
TEST(Hardening, ConflictingFlagsExitTwo) {
  test::expect_cli_refusal("plan " + kM + " --sp --no-sp", "--no-sp");
  test::expect_cli_refusal("estimate " + kM + " --tp 8 --pp 8 --recompute none --recompute-layers 5",
                           "--recompute-layers 5 applies only with --recompute full");
  test::expect_cli_refusal("plan " + kM + " --recompute none --recompute-layers 5",
                           "applies only with --recompute full");
  test::expect_cli_refusal("estimate " + kM + " --tp 8 --pp 8 --recompute full --recompute-layers 1000000",
                           "--recompute-layers must be an integer from 0 to 10000");
  test::expect_cli_refusal("estimate " + kM + " --tp 8 --pp 8 --recompute full --recompute-layers 50",
                           "--recompute-layers 50 exceeds the 12 layers of the largest model chunk");
  test::expect_cli_refusal("check " + kM + " --tp 8 --pp 8 --max-gap nan", "--max-gap must be a number");
  test::expect_cli_refusal("check " + kM + " --tp 8 --pp 8 --max-gap inf", "--max-gap must be a number");
}

// Item 6: job-file values that were silently altered or ignored.
TEST(Hardening, JobConfigValuesAreNotAltered) {
  const std::string head = "model: gpt3-175b\ncluster: dgx-a100\ngpus: 1024\ngbs: 1536\nseq: 2048\n";
  test::expect_cli_refusal(
      "estimate --job " + test::write_temp("zero15.yaml", head + "config: {tp: 8, pp: 8, zero: 1.5}\n"),
      "zero");
  test::expect_cli_refusal(
      "estimate --job " + test::write_temp("dp7.yaml", head + "config: {tp: 8, pp: 8, dp: 7}\n"), "dp 7");
  const CliRun dp16 =
      run_cli("estimate --job " + test::write_temp("dp16.yaml", head + "config: {tp: 8, pp: 8, dp: 16}\n"));
  EXPECT_EQ(dp16.exit_code, 0) << dp16.err;
  test::expect_cli_refusal(
      "estimate --job " + test::write_temp("ep3.yaml", head + "config: {tp: 8, pp: 8, ep: 3}\n"), "dense");
  test::expect_cli_refusal(
      "plan --job " + test::write_temp("zero15c.yaml", head + "constraints: {zero: 1.5}\n"), "zero");
}

// Item 7: infinite device numbers made every capacity check pass.
TEST(Hardening, InfiniteProfileNumbersAreRefused) {
  const std::string source = std::string(PARPLAN_SOURCE_DIR) + "/hardware-profiles/dgx-a100.yaml";
  std::ifstream in(source);
  std::stringstream text;
  text << in.rdbuf();
  std::string profile = text.str();
  const auto at = profile.find("hbm_gib:");
  ASSERT_NE(at, std::string::npos);
  const auto end = profile.find('\n', at);
  profile.replace(at, end - at, "hbm_gib: 1e308");
  const std::string path = test::write_temp("inf_hbm.yaml", profile);
  const CliRun run = run_cli("estimate --model gpt3-175b --cluster " + path +
                             " --gpus 1024 --gbs 1536 --seq 2048 --tp 8 --pp 8");
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
}

// Item 8: a sweep of 16.7 M points ran out of memory.
TEST(Hardening, SweepPointCountIsBounded) {
  test::expect_cli_refusal(
      "sweep --models gpt3-175b --cluster dgx-a100 --gpus 1:4096:+1 --gbs 1:4096:+1 --seq 2048",
      "at most 100000 per run");
}

// Items 4 and 10: outputs are never special files replaced, and a set of
// outputs is written whole or not at all.
TEST(Hardening, SweepOutputsAreSafeAndAtomicAsASet) {
  const std::string sweep = "sweep --models llama3-8b --cluster dgx-h100 --gpus 8 --gbs 16 --seq 4096 ";
  const CliRun null_run = run_cli(sweep + "--csv /dev/null --no-timings");
  EXPECT_EQ(null_run.exit_code, 0) << null_run.err;
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));

  const std::string dir = ::testing::TempDir() + "hardening_set_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const CliRun full = run_cli(sweep + "--csv " + dir + "/a.csv --json /dev/full");
  EXPECT_EQ(full.exit_code, 2) << full.err;
  EXPECT_EQ(test::line_count(full.err), 1) << full.err;
  EXPECT_NE(full.err.find("/dev/full"), std::string::npos) << full.err;
  EXPECT_TRUE(full.out.empty()) << full.out;  // no table as if the sweep had succeeded
  EXPECT_FALSE(std::filesystem::exists(dir + "/a.csv"));
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));

  // /proc accepts no new file, even from root.
  const CliRun proc = run_cli(sweep + "--json " + dir + "/b.json --plot /proc/parplan.svg");
  EXPECT_EQ(proc.exit_code, 2) << proc.err;
  EXPECT_NE(proc.err.find("--plot"), std::string::npos) << proc.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/b.json"));
  if (::geteuid() != 0) {
    const std::string locked = dir + "/locked";
    std::filesystem::create_directories(locked);
    std::filesystem::permissions(locked,
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    const CliRun plot = run_cli(sweep + "--json " + dir + "/b.json --plot " + locked + "/p.svg");
    EXPECT_EQ(plot.exit_code, 2) << plot.err;
    EXPECT_NE(plot.err.find("--plot"), std::string::npos) << plot.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/b.json"));
    std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
  }
  std::filesystem::remove_all(dir);
}

// Item 9: clear messages.
TEST(Hardening, RangeErrorsSayTheRangeInWords) {
  const CliRun run = run_cli("plan " + kM.substr(0, kM.find("--gpus")) + "--gpus 0 --gbs 1536 --seq 2048");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--gpus must be an integer from 1 to 1048576 (got 0)"), std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find("17976931348623157"), std::string::npos) << run.err;
  test::expect_cli_refusal("frobnicate --gpus 8", "unknown command 'frobnicate'");
  test::expect_cli_refusal("", "give a command");
}

TEST(Hardening, ConstraintsErrorNamesTheJobFileToo) {
  const std::string job =
      test::write_temp("tp7.yaml",
                       "model: gpt3-175b\ncluster: dgx-a100\ngpus: 1024\ngbs: 1536\nseq: 2048\n"
                       "constraints: {tp: 7}\n");
  test::expect_cli_refusal("plan --job " + job, "constraints: tp");
}

// Item 12: identical input with --no-timings gives identical output, and the
// search counters do not depend on thread timing.
TEST(Hardening, NoTimingsGivesByteIdenticalOutput) {
  const std::string args = "plan " + kM + " --format json --no-timings";
  const CliRun a = run_cli(args);
  const CliRun b = run_cli(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  const auto j = nlohmann::json::parse(a.out);
  EXPECT_FALSE(j["search"].contains("time_s"));
  for (const auto& c : j["solver"]) EXPECT_FALSE(c.contains("time_s"));
  const CliRun table = run_cli("plan " + kM + " --no-timings");
  EXPECT_EQ(table.out.find("searched in"), std::string::npos) << table.out;
  const CliRun sweep = run_cli(
      "sweep --models gpt3-175b --cluster dgx-a100 --gpus 512,1024 --gbs 1536 --seq 2048 "
      "--no-timings --format json");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_FALSE(nlohmann::json::parse(sweep.out)["sweep"].contains("time_s"));
}

// Item 13 and the shared conventions: --solver-time-limit reaches the MILPs;
// --time-limit bounds the command and keeps the best plan found.
TEST(Hardening, TimeLimitsAreAcceptedByEveryCommand) {
  for (const std::string& command :
       {"estimate " + kM + " --tp 8 --pp 8", "plan " + kM,
        "check " + kM + " --tp 8 --pp 8 --sp --recompute selective",
        std::string("sweep --models gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048")}) {
    const CliRun run =
        run_cli(command + " --time-limit 600 --solver-time-limit 5 --no-timings --format json");
    EXPECT_EQ(run.exit_code, 0) << command << "\n" << run.err;
    EXPECT_TRUE(nlohmann::json::accept(run.out)) << command;
  }
  test::expect_cli_refusal("plan " + kM + " --time-limit 0", "--time-limit must be a number from 0.001");
  test::expect_cli_refusal("plan " + kM + " --solver-time-limit -1", "--solver-time-limit must be a number");
}

TEST(Hardening, ATinyTimeLimitStillAnswersOrSaysWhy) {
  const CliRun run = run_cli("plan " + kM + " --time-limit 0.001 --format json");
  // Either a plan found in time (with a note) or exit 1 naming the limit.
  if (run.exit_code == 0) {
    const auto j = nlohmann::json::parse(run.out);
    if (j["search"]["stopped_at_time_limit"].get<bool>()) {
      EXPECT_NE(run.err.find("--time-limit"), std::string::npos);
    }
  } else {
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_NE(run.err.find("time limit"), std::string::npos) << run.err;
  }
}

// Item 13: exhaustive never prints nan.
TEST(Hardening, ExhaustiveCertificatesNeverPrintNan) {
  const CliRun run = run_cli("plan " + kM + " --solver exhaustive --pp 8 --tp 8");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.find("nan"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace parplan
