// Replays the fuzz seed corpus (tests/fuzz/corpus) through the same readers
// as the libFuzzer targets, in the ordinary test binary: every seed is read
// or refused with InputError, never anything else. Under `make
// sanitize-test` this also runs every seed under ASan/UBSan.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/io/job_loader.h"
#include "src/io/model_loader.h"
#include "tests/cli_support.h"
#include "tests/fuzz/command_readers.h"

namespace parplan {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> seeds(const std::string& target) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(PARPLAN_SOURCE_DIR) / "tests/fuzz/corpus" / target))
    out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `read`; only success or InputError are acceptable outcomes.
template <typename Read>
void only_input_errors(const std::string& target, Read read) {
  const auto files = seeds(target);
  ASSERT_FALSE(files.empty());
  int refused = 0;
  for (const fs::path& seed : files) {
    try {
      read(seed);
    } catch (const InputError& e) {
      ++refused;
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << seed << ": " << e.what();
    }
  }
  // The corpus holds bad variants on purpose: some must be refused.
  EXPECT_GT(refused, 0) << target;
}

TEST(FuzzCorpus, ModelYamlSeeds) {
  only_input_errors("model_yaml", [](const fs::path& p) {
    const ModelSpec m = parse_model_yaml(text(p), p.string(), "seed");
    ClusterSpec cluster;
    cluster.device.hbm_bytes = cluster.device.hbm_bytes_per_s = cluster.device.peak_bf16_flops_per_s = 1;
    JobSpec job;
    job.gpus = job.gbs = job.seq = 1;
    check_input_limits(m, cluster, job);
  });
}

TEST(FuzzCorpus, HfConfigSeeds) {
  only_input_errors("hf_config", [](const fs::path& p) { (void)parse_hf_config(text(p), p.string()); });
}

TEST(FuzzCorpus, ClusterSeeds) {
  only_input_errors("cluster", [](const fs::path& p) { (void)load_cluster(p.string()); });
}

TEST(FuzzCorpus, JobSeeds) {
  only_input_errors("job", [](const fs::path& p) { (void)load_job_file(p.string()); });
}

// The readers of the newer commands, through the same drivers as their
// fuzz targets (tests/fuzz/command_readers.h).
TEST(FuzzCorpus, RoutingStatsSeeds) {
  only_input_errors("routing_stats", [](const fs::path& p) { fuzz::read_routing_stats(text(p)); });
}

TEST(FuzzCorpus, ScatterInputSeeds) {
  only_input_errors("scatter_input", [](const fs::path& p) { fuzz::read_scatter_input(text(p)); });
}

TEST(FuzzCorpus, SkipProblemSeeds) {
  only_input_errors("skip_problem", [](const fs::path& p) { fuzz::read_skip_problem(text(p)); });
}

TEST(FuzzCorpus, RunFilesSeeds) {
  only_input_errors("run_files", [](const fs::path& p) { fuzz::read_run_files(text(p)); });
}

// The command-line seeds through the binary: exit 0, 1 or 2, never a crash
// or an internal error.
TEST(FuzzCorpus, CliSeeds) {
  // Seeds may name relative output files (--csv s.csv): write them in a
  // scratch directory, not wherever the tests were started.
  const fs::path started_in = fs::current_path();
  const fs::path scratch = fs::temp_directory_path() / ("parplan-cli-seeds-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  fs::current_path(scratch);
  for (const fs::path& seed : seeds("cli")) {
    std::string args, line;
    std::istringstream lines(text(seed));
    while (std::getline(lines, line)) args += " '" + line + "'";
    const test::CliRun run = test::run_cli(args);
    EXPECT_GE(run.exit_code, 0) << seed << args;
    EXPECT_LE(run.exit_code, 2) << seed << args << "\n" << run.err;
  }
  fs::current_path(started_in);
  fs::remove_all(scratch);
}

}  // namespace
}  // namespace parplan
