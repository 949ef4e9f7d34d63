// `parplan experts`: every integer flag states the range it enforces, the
// same range the other commands state (src/io/input_limits.h,
// docs/errors.md): the largest value in the stated range gets past the
// range check, and one more is refused with the same range.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "solvers/expert_placement.h"
#include "src/io/input_limits.h"
#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::run_cli;
using test::write_temp;

std::string loads() { return "--loads " + write_temp("ranges.csv", "10,20,30,40\n5,5,5,5\n"); }

/// `args_with(v)` gives the command line with the flag at v.
template <typename Args>
void expect_stated_range(const std::string& flag, std::int64_t min, std::int64_t max, Args args_with) {
  const std::string range =
      flag + " must be an integer from " + std::to_string(min) + " to " + std::to_string(max);
  test::expect_cli_refusal(args_with(min - 1), range);
  test::expect_cli_refusal(args_with(max + 1), range);
  // The largest stated value is not refused as out of range (the shape may
  // still refuse it, for its own reason).
  const test::CliRun at_max = run_cli(args_with(max));
  EXPECT_EQ(at_max.err.find("must be an integer from"), std::string::npos) << flag << ": " << at_max.err;
  EXPECT_EQ(at_max.err.find("larger than"), std::string::npos) << flag << ": " << at_max.err;
  EXPECT_EQ(at_max.err.find("at most"), std::string::npos) << flag << ": " << at_max.err;
}

TEST(ExpertsRanges, ShapeFlagsStateTheLimitsOfEveryCommand) {
  const auto with = [](const std::string& flag) {
    return [flag](std::int64_t v) {
      const std::string gpus = flag == "--gpus" ? "" : " --gpus 2";
      return "experts " + loads() + gpus + " --time-limit 0.1 " + flag + " " + std::to_string(v);
    };
  };
  expect_stated_range("--gpus", 1, kMaxGpus, with("--gpus"));
  expect_stated_range("--nodes", 1, kMaxNodes, with("--nodes"));
  expect_stated_range("--groups", 1, kMaxWidth, with("--groups"));
  expect_stated_range("--redundant", 0, kMaxPlacementSlots, with("--redundant"));
}

TEST(ExpertsRanges, BatchFlagsStateTheLimitsOfEveryCommand) {
  const std::string eight = "--loads " + write_temp("ranges8.csv", "93,110,105,70,72,85,83,108\n");
  const auto with = [&](const std::string& flag) {
    return [flag, eight](std::int64_t v) {
      const std::string gbs = flag == "--gbs" ? std::to_string(v) : "8";
      const std::string seq = flag == "--seq" ? std::to_string(v) : "4096";
      return "experts " + eight +
             " --gpus 8 --time-limit 0.1 --model mixtral-8x7b --cluster dgx-h100 --gbs " + gbs + " --seq " +
             seq;
    };
  };
  expect_stated_range("--gbs", 1, kMaxGbs, with("--gbs"));
  expect_stated_range("--seq", 1, kMaxSeq, with("--seq"));
}

}  // namespace
}  // namespace parplan
