// Overflow-sized scatter coefficients (1e308 ms per token) became non-finite
// MILP coefficients and an internal error; each is one line naming the
// coefficient, exit 2.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace {

std::string coefficients(const std::string& quadratic, const std::string& linear, const std::string& fixed,
                         const std::string& alltoall, const std::string& capacity) {
  return "{\"quadratic_ms\": " + quadratic + ", \"linear_ms\": " + linear + ", \"fixed_ms\": " + fixed +
         ", \"alltoall_ms_per_token\": {\"2\": 0.001, \"4\": " + alltoall +
         "}, \"token_capacity_per_gpu\": " + capacity + ", \"group_sizes\": [2, 4]}";
}

void expect_refused(const std::string& name, const std::string& json, const std::string& field) {
  const std::string lengths = test::write_temp("bounds_lengths.txt", "4096 8192 1024\n");
  const test::CliRun run = test::run_cli("scatter --lengths " + lengths + " --gpus 4 --coefficients " +
                                         test::write_temp(name, json));
  test::expect_refusal(run, field, json);
}

TEST(ScatterCoefficientBounds, OverflowSizedCoefficientsAreRefused) {
  expect_refused("q.json", coefficients("1e308", "0.01", "5", "0.002", "50000"), "quadratic_ms");
  expect_refused("l.json", coefficients("1e-7", "1e308", "5", "0.002", "50000"), "linear_ms");
  expect_refused("f.json", coefficients("1e-7", "0.01", "1e308", "0.002", "50000"), "fixed_ms");
  expect_refused("a.json", coefficients("1e-7", "0.01", "5", "1e308", "50000"), "alltoall_ms_per_token");
  expect_refused("k.json", coefficients("1e-7", "0.01", "5", "0.002", "1e308"), "token_capacity_per_gpu");
}

TEST(ScatterCoefficientBounds, RealCoefficientsStillSolve) {
  const std::string lengths = test::write_temp("ok_lengths.txt", "4096 8192 1024\n");
  const test::CliRun run =
      test::run_cli("scatter --lengths " + lengths + " --gpus 4 --coefficients " +
                    test::write_temp("ok.json", coefficients("1e-7", "0.01", "5", "0.002", "50000")));
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

}  // namespace
}  // namespace parplan
