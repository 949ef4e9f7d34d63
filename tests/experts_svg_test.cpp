// `parplan experts --svg`: the heat maps hold one cell per layer and GPU for
// the static placement and for parplan's, each layer's tooltip gives the
// imbalance the placement has, and the binary writes the file or refuses an
// empty or unwritable path before placing (exit 2).
#include "src/report/experts_svg.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "src/plan/expert_placement_run.h"
#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::CliRun;
using test::expect_cli_refusal;
using test::run_cli;

std::vector<double> layer_imbalances(const std::string& svg) {
  static const std::regex kTitle("<title>layer [0-9]+: imbalance ([0-9.]+)</title>");
  std::vector<double> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), kTitle); it != std::sregex_iterator(); ++it)
    out.push_back(std::stod((*it)[1]));
  return out;
}

TEST(ExpertsSvg, ACellPerLayerAndGpuAndEachLayersImbalance) {
  const std::vector<std::vector<double>> loads = {
      {900, 100, 300, 50, 700, 20, 400, 80}, {10, 10, 10, 10, 10, 10, 10, 1000}, {5, 6, 7, 8, 9, 10, 11, 12}};
  ExpertPlacementRequest request;
  request.shape.experts = 8;
  request.shape.gpus = 4;
  request.shape.redundant = 4;
  const ExpertPlacementRun run = run_expert_placement(loads, request);
  const std::string svg = experts_svg(loads, request.shape, run);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  const std::regex cell(
      "<rect x=\"[0-9.]+\" y=\"[0-9.]+\" width=\"[0-9.]+\" height=\"[0-9.]+\" fill=\"#[0-9a-f]{6}\"/>");
  const auto cells =
      std::distance(std::sregex_iterator(svg.begin(), svg.end(), cell), std::sregex_iterator());
  // Two panels of 3 layers x 4 GPUs, plus the 21 swatches of the legend.
  EXPECT_EQ(cells, 2 * 3 * 4 + 21);
  const std::vector<double> shown = layer_imbalances(svg);
  ASSERT_EQ(shown.size(), 6u);
  for (int l = 0; l < 3; ++l) {
    const double mean = run.total_load[l] / 4;
    EXPECT_NEAR(shown[l], run.baselines[l].static_max_load / mean, 1e-4) << "static, layer " << l;
    EXPECT_NEAR(shown[3 + l], run.layers[l].placement.max_load / mean, 1e-4) << "placed, layer " << l;
    EXPECT_LE(shown[3 + l], shown[l] + 1e-9) << "layer " << l;
  }
}

TEST(ExpertsSvg, TheBinaryWritesItAndRefusesBadPaths) {
  const std::string loads = std::string(PARPLAN_SOURCE_DIR) + "/examples/experts/mixtral-like.json";
  const std::string svg = ::testing::TempDir() + "experts_" + std::to_string(::getpid()) + ".svg";
  const CliRun run = run_cli("experts --loads " + loads +
                             " --gpus 8 --redundant 8 --no-timings --time-limit 0.3 --svg " + svg);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string picture = test::slurp(svg);
  std::remove(svg.c_str());
  EXPECT_EQ(layer_imbalances(picture).size(), 2u * 32u);
  expect_cli_refusal("experts --loads " + loads + " --gpus 8 --svg ''", "--svg");
  expect_cli_refusal("experts --loads " + loads + " --gpus 8 --svg /nonexistent-dir/loads.svg", "--svg");
}

}  // namespace
}  // namespace parplan
