// check under --time-limit: a gap is measured against the best plan searched
// so far, so with nothing searched there is no optimum and no pass. The
// README's example config is 45 % slower than the optimum: it must never
// pass for lack of a comparison.
#include <gtest/gtest.h>

#include "tests/cli_support.h"

namespace parplan {
namespace {

TEST(CheckTimeLimit, NothingSearchedIsNeverAPass) {
  const std::string job = std::string(PARPLAN_SOURCE_DIR) + "/examples/gpt-1t-expert-config.yaml";
  for (const char* limit : {"0.001", "0.01"}) {
    const test::CliRun run =
        test::run_cli("check --job " + job + " --max-gap 5 --format json --time-limit " + std::string(limit));
    const nlohmann::json j = nlohmann::json::parse(run.out);
    if (!j["stopped_at_time_limit"].get<bool>() || !j["optimum"].is_null()) continue;  // searched some
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_FALSE(j["pass"].get<bool>());
    EXPECT_TRUE(j["gap_percent"].is_null());
    EXPECT_NE(run.err.find("raise --time-limit"), std::string::npos) << run.err;
  }
  // Given the time, the search finds the faster plan and the check fails.
  const test::CliRun full = test::run_cli("check --job " + job + " --max-gap 5");
  EXPECT_EQ(full.exit_code, 1) << full.out << full.err;
}

}  // namespace
}  // namespace parplan
