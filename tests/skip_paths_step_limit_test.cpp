// skip-paths refuses a step of more micro-batches than its path search can
// place near a time limit (it once ran a minute past --time-limit 1 and
// used gigabytes on 16 sources x 4096): sources x micro_batches_per_source
// at most 8192.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace skip_paths_step_limit {

std::string problem(int nodes, int per_source) {
  std::string transfer = "[";
  for (int i = 0; i < nodes; ++i) {
    transfer += i ? ", [" : "[";
    for (int j = 0; j < nodes; ++j) transfer += std::string(j ? ", " : "") + (i == j ? "0" : "0.5");
    transfer += "]";
  }
  transfer += "]";
  return "{\"nodes\": " + std::to_string(nodes) + ", \"stages\": 2, \"path_length\": 2, \"memory\": 3, " +
         "\"micro_batches_per_source\": " + std::to_string(per_source) +
         ", \"stage_forward_s\": 1.0, \"transfer_s\": " + transfer + "}";
}

TEST(SkipPathsStepLimit, MoreMicroBatchesAStepThanThePathSearchPlacesAreRefused) {
  const std::string big = test::write_temp("skip-big.json", problem(32, 4096));
  test::expect_cli_refusal("skip-paths --problem " + big + " --time-limit 1",
                           "65536 micro-batches a step, over 8192");
  const std::string small = test::write_temp("skip-small.json", problem(8, 16));
  const test::CliRun run = test::run_cli("skip-paths --problem " + small + " --time-limit 5");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

}  // namespace skip_paths_step_limit
}  // namespace parplan
