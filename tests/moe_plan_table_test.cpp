// The plan table of an MoE model names the expert-parallel split of every
// row, ep 1 included: a reader must see whether the experts are spread over
// GPUs or replicated on every one, which a dense model's columns cannot say.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::run_cli;

// A line's whitespace-separated words.
std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

TEST(MoePlanTable, EveryRowNamesEpAndEtp) {
  const auto run =
      run_cli("plan --model mixtral-8x7b --cluster dgx-h100 --gpus 16 --gbs 64 --seq 4096 --top 4");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> header = words(line_starting(run.out, "rank "));
  ASSERT_GE(header.size(), 8u) << run.out;
  EXPECT_EQ(header[6], "ep");
  EXPECT_EQ(header[7], "etp");
  const std::vector<std::string> first = words(line_starting(run.out, "   1 "));
  ASSERT_EQ(first.size(), header.size()) << run.out;
  // The config line of the best plan states the same ep and etp as row 1.
  const std::string config = line_starting(run.out, "config ");
  EXPECT_NE(config.find("  ep " + first[6] + "  etp " + first[7] + "  "), std::string::npos) << config;
}

TEST(MoePlanTable, DenseModelsKeepTheirColumns) {
  const auto run = run_cli("plan --model llama3-8b --cluster dgx-h100 --gpus 16 --gbs 64 --seq 4096 --top 2");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> header = words(line_starting(run.out, "rank "));
  ASSERT_GE(header.size(), 7u) << run.out;
  EXPECT_EQ(header[6], "sp");
  EXPECT_EQ(line_starting(run.out, "config ").find("  ep "), std::string::npos);
}

}  // namespace
}  // namespace parplan
