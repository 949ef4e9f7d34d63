// Profile numbers that are positive but absurdly small (a unit slip:
// 1e-300 GB/s) gave plans with step times of 1e254 s and exit 0; they are
// refused naming the field (exit 2), and real slow links still plan.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace {

std::string profile_with(const std::string& from, const std::string& to) {
  std::ifstream in(std::string(PARPLAN_SOURCE_DIR) + "/hardware-profiles/dgx-h100.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  const std::size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

test::CliRun plan_on(const std::string& name, const std::string& profile) {
  return test::run_cli("plan --model llama3-8b --cluster " + test::write_temp(name, profile) +
                       " --gpus 16 --gbs 64 --seq 4096");
}

void expect_refused(const std::string& name, const std::string& from, const std::string& to,
                    const std::string& field) {
  test::expect_refusal(plan_on(name, profile_with(from, to)), field, to);
}

TEST(ProfileBounds, UnitSlipSizedValuesAreRefused) {
  expect_refused("bw.yaml", "bandwidth_gb_per_s: 50 ", "bandwidth_gb_per_s: 1e-300 ", "bandwidth_gb_per_s");
  expect_refused("hbm_bw.yaml", "hbm_tb_per_s: 3.35", "hbm_tb_per_s: 1e-300", "hbm_tb_per_s");
  expect_refused("hbm.yaml", "hbm_gib: 80 ", "hbm_gib: 1e-300 ", "hbm_gib");
}

// A 10 Mbit/s WAN link (1.25e-3 GB/s) is slow but real: it still plans.
TEST(ProfileBounds, SlowRealLinksStillPlan) {
  const test::CliRun slow =
      plan_on("wan.yaml", profile_with("bandwidth_gb_per_s: 50 ", "bandwidth_gb_per_s: 0.00125 "));
  EXPECT_EQ(slow.exit_code, 0) << slow.err;
}

}  // namespace
}  // namespace parplan
