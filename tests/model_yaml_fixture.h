// A model YAML written to a directory of its own for one test (named after
// the test, removed at the end of the scope), and the smallest model the
// schema accepts, for the model loader's tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace parplan::test {

class TempFile {
 public:
  TempFile(const std::string& filename, const std::string& content) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("parplan_model_loader_" + std::to_string(::getpid()) + "_" + info->name());
    std::filesystem::create_directories(dir_);
    path_ = dir_ / filename;
    std::ofstream(path_, std::ios::binary) << content;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path dir_;
  std::filesystem::path path_;
};

inline constexpr const char* kMinimalYaml =
    "source: \"a test\"\n"
    "layers: 2\n"
    "hidden: 256\n"
    "heads: 4\n"
    "vocab: 1000\n"
    "max_positions: 128\n";

}  // namespace parplan::test
