// Shared by the libFuzzer targets: the bytes as text, and a scratch file for
// loaders that take a path. Only InputError (bad input, exit 2) is an
// expected outcome; any other exception, crash or sanitizer report is a bug.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <set>
#include <string>

namespace parplan::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Scratch paths of this process, removed when it exits (libFuzzer ends a
/// -max_total_time run through exit(), which runs this destructor), so fuzz
/// runs leave nothing behind in /tmp.
struct ScratchPaths {
  std::set<std::string> paths;
  ~ScratchPaths() {
    for (const std::string& path : paths) std::remove(path.c_str());
  }
};

/// Writes `text` to a per-process scratch file named ...<suffix> and returns
/// its path.
inline std::string scratch_file(const std::string& text, const std::string& suffix) {
  static ScratchPaths scratch;
  const std::string path = "/tmp/parplan-fuzz-" + std::to_string(::getpid()) + suffix;
  scratch.paths.insert(path);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return path;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  return path;
}

}  // namespace parplan::fuzz
