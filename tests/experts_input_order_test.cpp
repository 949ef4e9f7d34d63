// `parplan experts`: the inputs of the predicted step time are checked
// before the placement runs, so a bad one is refused with one line and no
// progress line ahead of it.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::write_temp;

// --time-limit 2 or more prints a progress line before the placement: a
// refusal with only one line on stderr came before the placement started.
const std::string kSlowRun = " --gpus 4 --redundant 4 --time-limit 30";

std::string eight_experts() {
  return "--loads " + write_temp("order8.csv", "93,110,105,70,72,85,83,108\n127,86,66,74,113,105,81,117\n");
}

TEST(ExpertsInputOrder, UnknownModelIsRefusedBeforePlacing) {
  test::expect_cli_refusal("experts " + eight_experts() + kSlowRun +
                               " --model no-such-model --cluster dgx-h100 --gbs 8 --seq 4096",
                           "no-such-model");
}

TEST(ExpertsInputOrder, MissingJobFileIsRefusedBeforePlacing) {
  test::expect_cli_refusal("experts " + eight_experts() + kSlowRun + " --job /nonexistent/job.yaml",
                           "/nonexistent/job.yaml");
}

TEST(ExpertsInputOrder, BadBatchIsRefusedBeforePlacing) {
  test::expect_cli_refusal(
      "experts " + eight_experts() + kSlowRun + " --model mixtral-8x7b --cluster dgx-h100 --gbs 0 --seq 4096",
      "--gbs");
  test::expect_cli_refusal(
      "experts " + eight_experts() + kSlowRun + " --model mixtral-8x7b --cluster dgx-h100 --gbs 8",
      "--gbs and --seq");
}

TEST(ExpertsInputOrder, ExpertCountMismatchIsRefusedBeforePlacing) {
  const std::string four = "--loads " + write_temp("order4.csv", "10,20,30,40\n");
  test::expect_cli_refusal(
      "experts " + four + kSlowRun + " --model mixtral-8x7b --cluster dgx-h100 --gbs 8 --seq 4096",
      "routed experts");
}

}  // namespace
}  // namespace parplan
