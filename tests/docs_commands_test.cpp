// Every `parplan ...` command in README.md and docs/*.md runs as written:
// exit 0, or the exit its comment states ("# exit 1"). Synopsis lines (with
// placeholders such as FILE, [options], a|b or ...) are not commands. Each
// file's commands run in order in a fresh directory that sees the
// repository's examples/, models/, hardware-profiles/ and calibration/.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace parplan {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = PARPLAN_SOURCE_DIR;

struct DocCommand {
  std::string file;
  int line = 0;
  std::string args;  // after "parplan "
  int expected_exit = 0;
};

bool is_placeholder(const std::string& token) {
  if (token.find('\'') != std::string::npos) return false;  // quoted text is literal
  if (token.find("...") != std::string::npos || token.find('[') != std::string::npos) return true;
  if (token.find('|') != std::string::npos) return true;
  int upper = 0, letters = 0;
  for (char c : token) {
    if (std::isalpha(static_cast<unsigned char>(c)))
      ++letters, upper += std::isupper(static_cast<unsigned char>(c)) != 0;
  }
  return letters >= 1 && upper == letters && token.rfind("--", 0) != 0;
}

std::vector<DocCommand> commands_in(const fs::path& path) {
  static const std::regex kStart(R"(^\s*(?:\./)?(?:build/)?parplan\s+([a-z][a-z-]*)(\s.*)?$)");
  static const std::vector<std::string> kCommands = {"estimate",   "plan",    "check",     "sweep", "scatter",
                                                     "skip-paths", "experts", "calibrate", "tune"};
  std::vector<DocCommand> out;
  std::ifstream in(path);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::smatch m;
    if (!std::regex_match(line, m, kStart)) continue;
    const std::string sub = m[1];
    if (std::find(kCommands.begin(), kCommands.end(), sub) == kCommands.end()) continue;
    std::string text = line;
    const int first_line = number;
    while (!text.empty() && text.back() == '\\' && std::getline(in, line)) {
      ++number;
      text.pop_back();
      text += " " + line;
    }
    DocCommand c;
    c.file = path.filename().string();
    c.line = first_line;
    const auto hash = text.find(" #");
    if (hash != std::string::npos) {
      std::smatch e;
      const std::string comment = text.substr(hash);
      if (std::regex_search(comment, e, std::regex(R"(exit (\d))"))) c.expected_exit = std::stoi(e[1]);
      text = text.substr(0, hash);
    }
    c.args = text.substr(text.find("parplan ") + 8);
    bool synopsis = false;
    std::istringstream tokens(c.args);
    std::string token;
    while (tokens >> token) synopsis = synopsis || is_placeholder(token);
    if (!synopsis) out.push_back(c);
  }
  return out;
}

std::vector<fs::path> documents() {
  std::vector<fs::path> out = {kRoot / "README.md"};
  for (const auto& entry : fs::directory_iterator(kRoot / "docs"))
    if (entry.path().extension() == ".md") out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

class DocsCommands : public ::testing::TestWithParam<fs::path> {};

TEST_P(DocsCommands, RunAsWritten) {
#ifdef PARPLAN_SANITIZED
  // That the documents run as written is checked in the optimised build; under
  // the sanitizers (10-20x slower here: their plans and sweeps searched 400 s
  // of the stage's 1 400) the CLI tests reach the same subcommands on smaller
  // jobs, which is what memory and undefined-behaviour checks need.
  GTEST_SKIP() << "documents' commands run in the optimised build";
#endif
  const fs::path doc = GetParam();
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("parplan_docs_" + std::to_string(::getpid()) + "_" + doc.stem().string());
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* shared : {"examples", "models", "hardware-profiles", "calibration"})
    fs::create_directory_symlink(kRoot / shared, dir / shared);
  for (const DocCommand& c : commands_in(doc)) {
    const std::string command = "cd '" + dir.string() + "' && " + PARPLAN_BINARY + " " + c.args +
                                " >/dev/null 2>'" + (dir / "stderr.txt").string() + "' </dev/null";
    const int status = std::system(command.c_str());
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream err(dir / "stderr.txt");
    std::stringstream text;
    text << err.rdbuf();
    EXPECT_EQ(code, c.expected_exit) << c.file << ":" << c.line << ": parplan " << c.args << "\n"
                                     << text.str();
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Docs, DocsCommands, ::testing::ValuesIn(documents()),
                         [](const ::testing::TestParamInfo<fs::path>& info) {
                           std::string name = info.param.stem().string();
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace parplan
