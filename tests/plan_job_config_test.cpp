// A job file's `config:` is what estimate and check cost; plan searches
// around it, its expert keys pinning the search, and says on stderr which of
// the other keys it leaves free instead of dropping them without a word.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace {

const std::string kJob =
    "model: llama3-70b\ncluster: dgx-h100\ngpus: 64\ngbs: 512\nseq: 8192\nengine: megatron\n";

TEST(PlanJobConfig, TheKeysPlanLeavesFreeAreNamed) {
  const test::CliRun run = test::run_cli(
      "plan --job " + test::write_temp("free.yaml", kJob + "config: {tp: 8, pp: 4, recompute: selective}\n"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("config keys tp, pp, recompute free"), std::string::npos) << run.err;
}

TEST(PlanJobConfig, KeysUnderConstraintsArePinsNotNamed) {
  const test::CliRun run = test::run_cli(
      "plan --job " + test::write_temp("pinned.yaml", kJob + "config: {tp: 8, pp: 4, recompute: selective}\n"
                                                             "constraints: {tp: 8, pp: 4}\n"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("config keys recompute free"), std::string::npos) << run.err;
  EXPECT_NE(run.out.find("tp 8  pp 4"), std::string::npos) << run.out;
}

TEST(PlanJobConfig, ExpertKeysPinWithoutANote) {
  const test::CliRun run =
      test::run_cli("plan --job " +
                    test::write_temp("experts.yaml",
                                     "model: mixtral-8x7b\ncluster: dgx-h100\ngpus: 64\ngbs: 256\nseq: 4096\n"
                                     "engine: megatron\nconfig: {ep: 8}\n"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err.find("note:"), std::string::npos) << run.err;
  EXPECT_NE(run.out.find("ep 8"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace parplan
