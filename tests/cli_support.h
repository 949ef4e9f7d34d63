// Runs the parplan binary for CLI tests: exit code, stdout and stderr.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace parplan::test {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// `prefix` runs before the binary (e.g. "timeout 60 ").
inline CliRun run_cli(const std::string& args, const std::string& prefix = "") {
  static int counter = 0;
  const std::string base =
      ::testing::TempDir() + "parplan_cli_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const std::string command =
      prefix + std::string(PARPLAN_BINARY) + " " + args + " >" + base + ".out 2>" + base + ".err </dev/null";
  const int status = std::system(command.c_str());
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = slurp(base + ".out");
  run.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return run;
}

/// A run that must succeed, its stdout parsed as JSON (an empty object,
/// after a failed expectation, when it does not).
inline nlohmann::json cli_json(const std::string& args) {
  const CliRun run = run_cli(args);
  EXPECT_EQ(run.exit_code, 0) << args << "\n" << run.err;
  return run.exit_code == 0 ? nlohmann::json::parse(run.out) : nlohmann::json::object();
}

/// Writes `text` to a file named after `name` in the test temp directory
/// (unique per process) and returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "parplan_test_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

inline int line_count(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

/// The bad-input contract (docs/errors.md): exit 2, one line on stderr that
/// holds `mention`, nothing on stdout. `context` names the case on failure.
inline void expect_refusal(const CliRun& run, const std::string& mention, const std::string& context = "") {
  EXPECT_EQ(run.exit_code, 2) << context << "\n" << run.err;
  EXPECT_EQ(line_count(run.err), 1) << context << "\n" << run.err;
  EXPECT_NE(run.err.find(mention), std::string::npos) << context << "\n" << run.err;
  EXPECT_TRUE(run.out.empty()) << context << "\n" << run.out;
}

/// Runs `args` and expects the bad-input contract of expect_refusal.
inline void expect_cli_refusal(const std::string& args, const std::string& mention) {
  expect_refusal(run_cli(args), mention, args);
}

}  // namespace parplan::test
