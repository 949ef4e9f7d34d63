// Fields that cannot affect a skip-paths problem were ignored without a word:
// activation_bytes or message_overhead_s beside transfer_s (they only enter
// transfers derived from latency and bandwidth), micro_batch_size or seq
// without a model (they only enter the cost model's task times). Each is
// now one line naming the field, exit 2.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace skip_unused_fields {

const std::string kHead =
    "nodes: 4\nstage_sizes: [2, 1, 1]\npath_length: 2\nmemory: 2\nmicro_batches_per_source: 2\n"
    "stage_forward_s: 1.0\n";
const std::string kTransfer =
    "transfer_s: [[0,0.1,0.2,0.3],[0.1,0,0.2,0.3],[0.2,0.2,0,0.1],[0.3,0.3,0.1,0]]\n";

void expect_refused(const std::string& name, const std::string& text, const std::string& field) {
  test::expect_refusal(test::run_cli("skip-paths --problem " + test::write_temp(name, text)), field, text);
}

TEST(SkipProblemUnusedFields, NetworkTermsBesideTransferAreRefused) {
  expect_refused("bytes_beside_transfer.yaml", kHead + kTransfer + "activation_bytes: 100\n",
                 "activation_bytes");
  expect_refused("overhead_beside_transfer.yaml", kHead + kTransfer + "message_overhead_s: 5\n",
                 "message_overhead_s");
}

TEST(SkipProblemUnusedFields, CostModelShapeWithoutModelIsRefused) {
  expect_refused("seq_without_model.yaml", kHead + kTransfer + "seq: 4096\n", "seq");
  expect_refused("mbs_without_model.yaml", kHead + kTransfer + "micro_batch_size: 2\n", "micro_batch_size");
}

TEST(SkipProblemUnusedFields, TheSameFieldsWhereTheyApplyStillSolve) {
  const std::string derived =
      kHead + "latency_ms: [[0,1,1,1],[1,0,1,1],[1,1,0,1],[1,1,1,0]]\n" +
      "bandwidth_gb_per_s: [[1,1,1,1],[1,1,1,1],[1,1,1,1],[1,1,1,1]]\nactivation_bytes: 1e6\n" +
      "message_overhead_s: 0.01\n";
  const test::CliRun run = test::run_cli("skip-paths --problem " + test::write_temp("derived.yaml", derived));
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

}  // namespace skip_unused_fields
}  // namespace parplan
