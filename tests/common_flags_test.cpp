// The shared flag helpers: decimal parsing with ranges in words, and CLI11
// options built on them.
#include "src/cli/common_flags.h"

#include <gtest/gtest.h>

namespace parplan {
namespace {

TEST(CommonFlags, LeadingZerosAreDecimalNotOctal) {
  EXPECT_EQ(parse_decimal_int("0600", "--gbs", 1, 1000), 600);
  EXPECT_EQ(parse_decimal_int("010", "--tp", 1, 1000), 10);
  EXPECT_EQ(parse_decimal_int("0", "--zero", 0, 3), 0);
  EXPECT_EQ(parse_decimal_int("-5", "--x", -10, 10), -5);
}

TEST(CommonFlags, IntegerErrorsStateTheRange) {
  try {
    (void)parse_decimal_int("0", "--gbs", 1, 2147483647);
    FAIL();
  } catch (const CLI::ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("--gbs must be an integer from 1 to 2147483647 (got 0)"),
              std::string::npos)
        << e.what();
  }
  for (const char* bad : {"", "0x10", "1e3", "8 ", " 8", "eight", "99999999999999999999999", "1.0", "+"})
    EXPECT_THROW((void)parse_decimal_int(bad, "--tp", 1, 100), CLI::ValidationError) << bad;
  EXPECT_THROW((void)parse_decimal_int("101", "--tp", 1, 100), CLI::ValidationError);
}

TEST(CommonFlags, NumbersRefuseNanInfinityAndHex) {
  EXPECT_DOUBLE_EQ(parse_decimal_number("2.5", "--max-gap", 0, 100), 2.5);
  EXPECT_DOUBLE_EQ(parse_decimal_number("05", "--max-gap", 0, 100), 5.0);
  EXPECT_DOUBLE_EQ(parse_decimal_number("1e1", "--max-gap", 0, 100), 10.0);
  EXPECT_DOUBLE_EQ(parse_decimal_number(".5", "--max-gap", 0, 100), 0.5);
  for (const char* bad : {"nan", "inf", "-inf", "0x1p3", "", ".", "1e", "1e999", "-1", "101", "5%"})
    EXPECT_THROW((void)parse_decimal_number(bad, "--max-gap", 0, 100), CLI::ValidationError) << bad;
}

TEST(CommonFlags, OptionsParseThroughCli11) {
  CLI::App app;
  std::optional<int> gbs;
  CommonFlags common;
  add_int_option(app, "--gbs", gbs, "global batch", 1, 1 << 24);
  add_common_flags(app, common);
  const char* argv[] = {"x",  "--gbs", "0600", "--format", "json", "--no-timings", "--solver-time-limit",
                        "2.5"};
  app.parse(8, argv);
  EXPECT_EQ(gbs, 600);
  EXPECT_TRUE(common.json());
  EXPECT_FALSE(common.timings());
  EXPECT_DOUBLE_EQ(common.solver_time_limit_s, 2.5);
  EXPECT_FALSE(common.deadline().has_value());

  CLI::App bad;
  std::optional<int> tp;
  add_int_option(bad, "--tp", tp, "tp", 1, 8);
  const char* argv_bad[] = {"x", "--tp", "9"};
  EXPECT_THROW(bad.parse(3, argv_bad), CLI::ValidationError);
}

TEST(CommonFlags, DeadlineIsStartPlusTheLimit) {
  CommonFlags common;
  common.time_limit_s = 2.0;
  const auto deadline = common.deadline();
  ASSERT_TRUE(deadline.has_value());
  EXPECT_NEAR(std::chrono::duration<double>(*deadline - common.start).count(), 2.0, 1e-9);
}

}  // namespace
}  // namespace parplan
