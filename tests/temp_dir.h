// A scratch directory for one test, removed with everything in it at the end
// of the scope (permissions restored first, for tests that revoke them).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace parplan::test {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix = "parplan") {
    std::string pattern = ::testing::TempDir() + prefix + "-XXXXXX";
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace parplan::test
