// Shared by the libFuzzer targets: the bytes as text, and a scratch file for
// loaders that take a path. Only InputError (bad input, exit 2) is an
// expected outcome; any other exception, crash or sanitizer report is a bug.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace parplan::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Writes `text` to a per-process scratch file named ...<suffix> and returns
/// its path.
inline std::string scratch_file(const std::string& text, const std::string& suffix) {
  const std::string path = "/tmp/parplan-fuzz-" + std::to_string(::getpid()) + suffix;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return path;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  return path;
}

}  // namespace parplan::fuzz
