// validate_shape: when the slots are not a multiple of the GPUs, the
// --redundant it suggests is one the shape rules then accept; the limit on
// the layers of a loads file.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "solvers/expert_placement.h"
#include "src/io/input_limits.h"
#include "tests/cli_support.h"

namespace parplan {
namespace {

/// The R of "(try --redundant R)" in `problem`, or -1 without one.
int suggested_redundant(const std::string& problem) {
  const std::string marker = "(try --redundant ";
  const auto at = problem.find(marker);
  return at == std::string::npos ? -1 : std::stoi(problem.substr(at + marker.size()));
}

TEST(ExpertsShape, SuggestedRedundantIsAccepted) {
  int suggestions = 0;
  for (int experts : {1, 3, 4, 8, 10, 12}) {
    for (int gpus = 1; gpus <= 12; ++gpus) {
      for (int nodes : {1, 2}) {
        for (int groups : {0, 2, 4}) {
          for (int redundant = 0; redundant <= experts * gpus + gpus; ++redundant) {
            const ExpertPlacementShape shape{experts, gpus, nodes, groups, redundant};
            const std::string problem = validate_shape(shape);
            const int r = suggested_redundant(problem);
            if (r < 0) continue;
            ++suggestions;
            ExpertPlacementShape fixed = shape;
            fixed.redundant = r;
            EXPECT_EQ(validate_shape(fixed), "") << problem;
            // The nearest multiple: at most one GPU's worth of slots away.
            EXPECT_LT(std::abs(r - redundant), gpus) << problem;
          }
        }
      }
    }
  }
  EXPECT_GT(suggestions, 0);
}

TEST(ExpertsShape, TooManyRedundantSuggestsTheLargestThatFits) {
  // 8 experts on 8 GPUs hold at most 8 x 8 slots: 57 redundant (65 slots)
  // rounds down to 56, not up to 64 (72 slots).
  const std::string loads = test::write_temp("shape8.csv", "93,110,105,70,72,85,83,108\n");
  const test::CliRun run = test::run_cli("experts --loads " + loads + " --gpus 8 --redundant 57");
  test::expect_refusal(run, "(try --redundant 56)");
  EXPECT_EQ(test::run_cli("experts --loads " + loads + " --gpus 8 --redundant 56 --time-limit 0.1").exit_code,
            0);
}

TEST(ExpertsShape, LayersBeyondTheModelLimitAreRefused) {
  std::string rows;
  for (std::int64_t l = 0; l <= kMaxLayers; ++l) rows += "1,2,3,4\n";
  test::expect_cli_refusal(
      "experts --loads " + test::write_temp("layers.csv", rows) + " --gpus 2",
      std::to_string(kMaxLayers + 1) + " MoE layers, over " + std::to_string(kMaxLayers));
  // The limit itself is placed.
  rows.resize(rows.size() - std::string("1,2,3,4\n").size());
  EXPECT_EQ(test::run_cli("experts --loads " + test::write_temp("layers_max.csv", rows) +
                          " --gpus 2 --time-limit 0.5 --format json")
                .exit_code,
            0);
}

}  // namespace
}  // namespace parplan
