// `parplan scatter --svg`: the picture of one step's plan draws every
// sequence of that step exactly once, inside the plot, ending where the step
// ends; the binary writes it for the step asked for, and refuses a step that
// does not exist, --svg-step without --svg and an unwritable path (exit 2,
// nothing written).
#include "src/report/scatter_svg.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <string>

#include "solvers/sequence_scatter.h"
#include "src/io/scatter_input.h"
#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::CliRun;
using test::expect_cli_refusal;
using test::run_cli;
using test::slurp;
using test::write_temp;

const std::string kScatterSvgExamples = std::string(PARPLAN_SOURCE_DIR) + "/examples/scatter/";

struct DrawnSequence {
  int index = 0;
  double x = 0, width = 0;
};

std::vector<DrawnSequence> drawn_sequences(const std::string& svg) {
  static const std::regex kRect(
      "<rect class=\"sequence\" x=\"([0-9.]+)\" y=\"[0-9.]+\" width=\"([0-9.]+)\"[^>]*><title>sequence "
      "([0-9]+):");
  std::vector<DrawnSequence> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), kRect); it != std::sregex_iterator(); ++it)
    out.push_back({std::stoi((*it)[3]), std::stod((*it)[1]), std::stod((*it)[2])});
  return out;
}

ScatterReport solved_report(const std::vector<std::vector<std::int64_t>>& steps) {
  ScatterReport report;
  report.gpus = 64;
  report.coefficients = load_scatter_coefficients(kScatterSvgExamples + "flexsp-gpt-7b-64xa100.json", {});
  report.steps = steps;
  for (const auto& lengths : steps)
    report.results.push_back(solve_scatter_step(lengths, report.gpus, report.coefficients, ScatterOptions{}));
  return report;
}

TEST(ScatterSvg, EverySequenceOnceInsideThePlotEndingWithTheStep) {
  const std::vector<std::vector<std::int64_t>> steps = {
      {8192, 2048, 1024, 512},
      {196608, 65536, 32768, 4096, 4096, 3000, 2500, 1024, 1024, 512, 300, 128, 40000, 20000, 9000}};
  const ScatterReport report = solved_report(steps);
  for (int s = 0; s < static_cast<int>(steps.size()); ++s) {
    const std::string svg = scatter_step_svg(report, s);
    EXPECT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    const std::vector<DrawnSequence> drawn = drawn_sequences(svg);
    ASSERT_EQ(drawn.size(), steps[s].size()) << "step " << s;
    std::vector<int> seen(steps[s].size(), 0);
    double right = 0;
    for (const DrawnSequence& d : drawn) {
      ASSERT_GE(d.index, 0);
      ASSERT_LT(d.index, static_cast<int>(seen.size()));
      ++seen[d.index];
      EXPECT_GE(d.x, 70.0 - 1e-9);
      right = std::max(right, d.x + d.width);
    }
    for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << "step " << s << ", sequence " << i;
    // The plot spans x 70 to 1180; the last micro-batch's slowest group ends the step.
    EXPECT_NEAR(right, 1180.0, 0.5) << "step " << s;
  }
}

TEST(ScatterSvg, TheBinaryDrawsTheStepAskedFor) {
  const std::string lengths =
      write_temp("svg_steps.txt", "8192 2048 1024 512\n32768 4096 4096 1024 1024 512\n");
  const std::string svg = ::testing::TempDir() + "scatter_step_" + std::to_string(::getpid()) + ".svg";
  const CliRun run =
      run_cli("scatter --lengths " + lengths + " --gpus 64 --coefficients " + kScatterSvgExamples +
              "flexsp-gpt-7b-64xa100.json --svg " + svg + " --svg-step 1");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string picture = slurp(svg);
  EXPECT_EQ(drawn_sequences(picture).size(), 6u);
  EXPECT_NE(picture.find("step 1: 6 sequences on 64 GPUs"), std::string::npos);
  std::remove(svg.c_str());
}

TEST(ScatterSvg, BadRequestsWriteNothing) {
  const std::string lengths = write_temp("svg_one_step.txt", "8192 2048 1024 512\n");
  const std::string svg = ::testing::TempDir() + "scatter_none_" + std::to_string(::getpid()) + ".svg";
  const std::string base = "scatter --lengths " + lengths + " --gpus 64 --coefficients " +
                           kScatterSvgExamples + "flexsp-gpt-7b-64xa100.json";
  expect_cli_refusal(base + " --svg " + svg + " --svg-step 1", "--svg-step");
  EXPECT_NE(::access(svg.c_str(), F_OK), 0) << svg << " was left behind";
  expect_cli_refusal(base + " --svg-step 0", "--svg");
  expect_cli_refusal(base + " --svg /nonexistent-dir/step.svg", "--svg");
  expect_cli_refusal(base + " --svg ''", "--svg");
}

}  // namespace
}  // namespace parplan
