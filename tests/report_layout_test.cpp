// The layout of parplan's tables and pictures where names are long or axes
// awkward: every column kept, every axis labelled, no signs on magnitudes.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "src/report/sweep_plot_axes.h"
#include "src/report/xml_text.h"
#include "tests/cli_support.h"

namespace parplan::test {
namespace {

TEST(ReportLayout, ShortenedTextCutsCharactersNotBytes) {
  EXPECT_EQ(shortened_text("llama3-8b", 40), "llama3-8b");
  EXPECT_EQ(shortened_text("abcdef", 4), "abc\u2026");
  // Three two-byte characters cut to two: one kept whole, then the ellipsis.
  EXPECT_EQ(shortened_text("\u00e9\u00e9\u00e9", 2), "\u00e9\u2026");
}

TEST(ReportLayout, EveryPictureScalesWithItsViewBox) {
  EXPECT_NE(svg_open(1200, 400).find("viewBox=\"0 0 1200 400\""), std::string::npos);
}

TEST(ReportLayout, GpuAxisWithoutTwoPowersOfTwoStillHasTicks) {
  std::vector<int> gpus;
  for (int g = 600; g <= 1000; g += 8) gpus.push_back(g);
  const sweep_plot_detail::Axis axis = sweep_plot_detail::gpus_axis(gpus);
  ASSERT_GE(axis.ticks.size(), 2u);
  for (double t : axis.ticks) {
    EXPECT_GE(t, 600);
    EXPECT_LE(t, 1000);
  }
}

TEST(ReportLayout, SweepTableKeepsEveryColumnBesideALongModelName) {
  std::ifstream in(std::string(PARPLAN_SOURCE_DIR) + "/models/llama3-8b.yaml");
  std::stringstream model;
  for (std::string line; std::getline(in, line);)
    model << (line.rfind("name:", 0) == 0 ? "name: " + std::string(170, 'm') : line) << "\n";
  const std::string path = write_temp("long_name.yaml", model.str());
  const CliRun r = run_cli("sweep --models " + path + " --cluster dgx-h100 --gpus 16 --gbs 64 --seq 2048");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string header = r.out.substr(0, r.out.find('\n'));
  for (const char* column : {"model", "params", "gpus", "gbs", "step_s", "engine"})
    EXPECT_NE(header.find(column), std::string::npos) << column << " missing from: " << header;
  EXPECT_NE(r.out.find("\u2026"), std::string::npos);
  EXPECT_NE(r.out.find("1 point (1 with a plan)"), std::string::npos);
}

}  // namespace
}  // namespace parplan::test
