// `parplan calibrate --svg`: one point per run before and after the fit and
// one cross per run left out (none without cross-validation), every point
// inside the plot at the height of the error the table prints; an empty or
// unwritable path is refused before the fit (exit 2).
#include <gtest/gtest.h>
#include <unistd.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::CliRun;
using test::expect_cli_refusal;
using test::run_cli;

const std::string kCalibrateSvgRuns =
    " --cluster dgx-h800 --runs " + std::string(PARPLAN_SOURCE_DIR) + "/calibration/h100-megatron-lm.yaml";

std::vector<double> circle_ys(const std::string& svg, const std::string& cls) {
  const std::regex circle("<circle class=\"" + cls + "\" cx=\"[0-9.]+\" cy=\"([0-9.]+)\"");
  std::vector<double> ys;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle); it != std::sregex_iterator(); ++it)
    ys.push_back(std::stod((*it)[1]));
  return ys;
}

int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The table's err_after column, in percent, in run order.
std::vector<double> table_errors_after(const std::string& table) {
  std::vector<double> errors;
  std::istringstream in(table);
  bool in_runs = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("run ", 0) == 0) {
      in_runs = true;
      continue;
    }
    if (!in_runs) continue;
    if (line.rfind("mean |error|", 0) == 0) break;
    std::istringstream words(line);
    std::string name, measured, before, after;
    words >> name >> measured >> before >> after;
    errors.push_back(std::stod(after.substr(0, after.size() - 1)));
  }
  return errors;
}

TEST(CalibrateSvg, EveryRunBeforeAfterAndLeftOutAtItsError) {
  const std::string svg = ::testing::TempDir() + "calibrate_" + std::to_string(::getpid()) + ".svg";
  const CliRun run = run_cli("calibrate" + kCalibrateSvgRuns +
                             " --fit 'gemm_efficiency_max,tiers[1].efficiency' --no-timings --svg " + svg);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string picture = test::slurp(svg);
  std::remove(svg.c_str());
  EXPECT_EQ(picture.rfind("<svg", 0), 0u);
  const std::vector<double> errors = table_errors_after(run.out);
  ASSERT_EQ(errors.size(), 11u) << run.out;
  const std::vector<double> after = circle_ys(picture, "after");
  ASSERT_EQ(after.size(), errors.size());
  EXPECT_EQ(circle_ys(picture, "before").size(), errors.size());
  EXPECT_EQ(count_of(picture, "class=\"left-out\""), static_cast<int>(errors.size()));
  // Heights are linear in the error: the largest error is highest, and the
  // points' order from top to bottom is the errors' order from high to low.
  for (std::size_t i = 0; i < after.size(); ++i) {
    EXPECT_GE(after[i], 64.0);
    EXPECT_LE(after[i], 64.0 + 360.0);
    for (std::size_t k = 0; k < after.size(); ++k)
      if (errors[i] > errors[k] + 0.05) {
        EXPECT_LT(after[i], after[k]) << i << " vs " << k;
      }
  }
}

TEST(CalibrateSvg, NoCrossValidationNoCrosses) {
  const std::string svg = ::testing::TempDir() + "calibrate_nocv_" + std::to_string(::getpid()) + ".svg";
  const CliRun run = run_cli("calibrate" + kCalibrateSvgRuns +
                             " --fit gemm_efficiency_max --no-cross-validate --no-timings --svg " + svg);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string picture = test::slurp(svg);
  std::remove(svg.c_str());
  EXPECT_EQ(count_of(picture, "class=\"left-out\""), 0);
  EXPECT_EQ(circle_ys(picture, "after").size(), 11u);
  // Neither the legend nor a tooltip speaks of a left-out error none has.
  EXPECT_EQ(count_of(picture, "left out"), 0);
}

TEST(CalibrateSvg, BadPathsAreRefusedBeforeTheFit) {
  expect_cli_refusal("calibrate" + kCalibrateSvgRuns + " --svg ''", "--svg");
  expect_cli_refusal("calibrate" + kCalibrateSvgRuns + " --svg /nonexistent-dir/errors.svg", "--svg");
}

}  // namespace
}  // namespace parplan
