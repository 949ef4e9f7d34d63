// The layer rule of docs/architecture.md, checked on the sources: cost/
// includes only cost/ and the standard library, solvers/ nothing from src/,
// no src/ library file includes the CLI, and neither cost/ nor solvers/
// does I/O. Plus the size rule: no source file over 600 lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

namespace parplan {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = PARPLAN_SOURCE_DIR;

std::vector<fs::path> sources(const std::string& folder) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::recursive_directory_iterator(kRoot / folder)) {
    const auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".h" || ext == ".cpp")) out.push_back(entry.path());
  }
  return out;
}

std::vector<std::string> includes(const fs::path& file) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*([<"][^>"]+[>"]))");
  std::vector<std::string> out;
  std::ifstream in(file);
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, kInclude)) out.push_back(m[1]);
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(Layering, CostIncludesOnlyCostAndTheStandardLibraryAndDoesNoIo) {
  for (const auto& file : sources("cost")) {
    for (const auto& inc : includes(file)) {
      if (inc.front() == '"') {
        EXPECT_TRUE(starts_with(inc, "\"cost/")) << file << " includes " << inc;
      } else {
        EXPECT_TRUE(inc != "<iostream>" && inc != "<fstream>" && inc != "<cstdio>" &&
                    inc.find('/') == std::string::npos)
            << file << " includes " << inc;
      }
    }
  }
}

TEST(Layering, SolversNeverReachIntoSrcAndDoNoIo) {
  for (const auto& file : sources("solvers")) {
    for (const auto& inc : includes(file)) {
      EXPECT_FALSE(starts_with(inc, "\"src/")) << file << " includes " << inc;
      EXPECT_TRUE(inc != "<iostream>" && inc != "<fstream>") << file << " includes " << inc;
    }
  }
}

TEST(Layering, NoLibraryFileIncludesTheCli) {
  for (const char* folder :
       {"src/io", "src/search", "src/plan", "src/emit", "src/report", "src/tune", "src/calibration"}) {
    if (!fs::exists(kRoot / folder)) continue;
    for (const auto& file : sources(folder))
      for (const auto& inc : includes(file))
        EXPECT_FALSE(starts_with(inc, "\"src/cli/")) << file << " includes " << inc;
  }
}

TEST(Layering, NoSourceFileIsOver600Lines) {
  for (const char* folder : {"cost", "solvers", "src", "bench", "tests"}) {
    for (const auto& file : sources(folder)) {
      std::ifstream in(file);
      int lines = 0;
      std::string line;
      while (std::getline(in, line)) ++lines;
      EXPECT_LE(lines, 600) << file;
    }
  }
}

}  // namespace
}  // namespace parplan
