// Overflow-sized times in a skip-paths problem: a forward of 1e308 s doubled
// by the backward factor was infinite and crashed the simulation. Each is one
// line naming the field, exit 2.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace {

const std::string kHead = "nodes: 4\nstages: 2\npath_length: 2\nmemory: 1\nmicro_batches_per_source: 2\n";
const std::string kTransfer = "transfer_s: [[0,1,1,1],[1,0,1,1],[1,1,0,1],[1,1,1,0]]\n";

void expect_refused(const std::string& name, const std::string& text, const std::string& field) {
  test::expect_refusal(test::run_cli("skip-paths --problem " + test::write_temp(name, text)), field, text);
}

TEST(SkipProblemBounds, OverflowSizedTimesAreRefused) {
  expect_refused("huge_forward.yaml", kHead + "stage_forward_s: 1e308\n" + kTransfer, "stage_forward_s");
  expect_refused("huge_list.yaml", kHead + "stage_forward_s: [1, 1, 1e300, 1]\n" + kTransfer,
                 "stage_forward_s");
  expect_refused("huge_factor.yaml", kHead + "stage_forward_s: 1\nbackward_factor: 1e307\n" + kTransfer,
                 "backward_factor");
  expect_refused("huge_overhead.yaml", kHead + "stage_forward_s: 1\ntask_overhead_s: 1e308\n" + kTransfer,
                 "task_overhead_s");
  expect_refused("huge_transfer.yaml",
                 kHead + "stage_forward_s: 1\ntransfer_s: [[0,1e308,1,1],[1,0,1,1],[1,1,0,1],[1,1,1,0]]\n",
                 "transfer_s");
  expect_refused(
      "tiny_bandwidth.yaml",
      kHead +
          "stage_forward_s: 1\nactivation_bytes: 1e9\nlatency_ms: [[0,1,1,1],[1,0,1,1],[1,1,0,1],[1,1,1,0]]\n"
          "bandwidth_gb_per_s: [[1,1e-300,1,1],[1,1,1,1],[1,1,1,1],[1,1,1,1]]\n",
      "bandwidth_gb_per_s");
  // Each term of a derived transfer names its own field.
  const std::string network =
      "latency_ms: [[0,1,1,1],[1,0,1,1],[1,1,0,1],[1,1,1,0]]\n"
      "bandwidth_gb_per_s: [[1,1,1,1],[1,1,1,1],[1,1,1,1],[1,1,1,1]]\n";
  expect_refused("huge_activations.yaml", kHead + "stage_forward_s: 1\nactivation_bytes: 1e30\n" + network,
                 "activation_bytes");
  expect_refused("huge_message_overhead.yaml",
                 kHead + "stage_forward_s: 1\nactivation_bytes: 1e9\nmessage_overhead_s: 1e12\n" + network,
                 "message_overhead_s");
  expect_refused(
      "huge_latency.yaml",
      kHead +
          "stage_forward_s: 1\nactivation_bytes: 1e9\nlatency_ms: [[0,1e15,1,1],[1,0,1,1],[1,1,0,1],"
          "[1,1,1,0]]\nbandwidth_gb_per_s: [[1,1,1,1],[1,1,1,1],[1,1,1,1],[1,1,1,1]]\n",
      "latency_ms");
}

TEST(SkipProblemBounds, LongButRealTimesStillSolve) {
  const test::CliRun run =
      test::run_cli("skip-paths --problem " +
                    test::write_temp("long_ok.yaml", kHead + "stage_forward_s: 3600\n" + kTransfer));
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

}  // namespace
}  // namespace parplan
