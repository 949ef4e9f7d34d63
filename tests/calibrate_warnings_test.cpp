// `parplan calibrate` says when its fit should not be taken at face value:
// a constant the fit left on a bound of its physical range (the runs pull it
// past what is physical), and as many runs as constants (any model fits
// them). A constant is marked exactly when its fitted value is its bound.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "src/report/calibrate_report.h"
#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::cli_json;
using test::run_cli;
using test::write_temp;

TEST(CalibrateWarnings, BoundReachedOnlyOnTheBound) {
  FittedConstant c;
  c.lower = 0.1;
  c.upper = 1.0;
  EXPECT_STREQ(bound_reached(c, 1.0), "upper");
  EXPECT_STREQ(bound_reached(c, 1.0 - 1e-9), "upper");
  EXPECT_STREQ(bound_reached(c, 0.1), "lower");
  EXPECT_EQ(bound_reached(c, 0.5), nullptr);
  EXPECT_EQ(bound_reached(c, 0.999), nullptr);
  EXPECT_EQ(bound_reached(c, 0.1001), nullptr);
}

TEST(CalibrateWarnings, NamesEveryConstantOnABoundAndNoOther) {
  const std::string runs = std::string(PARPLAN_SOURCE_DIR) + "/examples/calibrate/narayanan-table1.csv";
  const auto j =
      cli_json("calibrate --cluster dgx-a100 --runs " + runs + " --no-cross-validate --format json");
  ASSERT_TRUE(j.contains("constants"));
  std::string warnings;
  for (const auto& w : j.at("warnings")) warnings += w.get<std::string>() + "\n";
  for (const auto& c : j.at("constants")) {
    const double after = c.at("after"), lower = c.at("lower"), upper = c.at("upper");
    const double tolerance = 1e-6 * (upper - lower);
    const bool on_lower = after <= lower + tolerance, on_upper = after >= upper - tolerance;
    const std::string key = c.at("key");
    if (on_lower || on_upper) {
      EXPECT_EQ(c.at("at_bound"), on_lower ? "lower" : "upper") << key;
      EXPECT_NE(warnings.find(key + " (" + (on_lower ? "lower" : "upper") + ")"), std::string::npos) << key;
    } else {
      EXPECT_TRUE(c.at("at_bound").is_null()) << key;
      EXPECT_EQ(warnings.find(key + " ("), std::string::npos) << key;
    }
  }
}

TEST(CalibrateWarnings, AsManyRunsAsConstantsIsSaid) {
  const std::string csv =
      test::slurp(std::string(PARPLAN_SOURCE_DIR) + "/examples/calibrate/narayanan-table1.csv");
  // The header (comments and column names) and the first two runs.
  std::string two;
  int runs = 0;
  std::size_t at = 0;
  while (at < csv.size() && runs < 2) {
    const std::size_t end = csv.find('\n', at);
    const std::string line = csv.substr(at, end - at + 1);
    if (line.rfind("table1-", 0) == 0) ++runs;
    two += line;
    at = end + 1;
  }
  const std::string path = write_temp("two_runs.csv", two);
  const auto run =
      run_cli("calibrate --cluster dgx-a100 --runs " + path + " --fit gemm_efficiency_max,layer_overhead_s");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("note: 2 runs for 2 constants"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("the left-out error needs more runs"), std::string::npos) << run.out;

  // Ten runs for two constants: no such note.
  const std::string all = std::string(PARPLAN_SOURCE_DIR) + "/examples/calibrate/narayanan-table1.csv";
  const auto j = cli_json("calibrate --cluster dgx-a100 --runs " + all +
                          " --fit gemm_efficiency_max,layer_overhead_s --no-cross-validate --format json");
  for (const auto& w : j.at("warnings"))
    EXPECT_EQ(w.get<std::string>().find("runs for"), std::string::npos) << w;
}

}  // namespace
}  // namespace parplan
