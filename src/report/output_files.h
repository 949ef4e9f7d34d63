// Writing output files safely: a regular file is replaced atomically (a
// temporary beside it, then rename), several files as a set (all written
// before any is renamed into place); a pipe or character device (/dev/stdout,
// /dev/null, a FIFO) is written directly and never replaced; anything else
// (a directory, a socket, a block device) is refused.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace parplan {

/// Throws InputError naming `flag` unless `path` can be written: a pipe or
/// character device, or a regular file (new or not) whose directory accepts
/// a new file (probed by creating and removing one, which also catches a
/// read-only file system and works as root).
void check_output_path(const std::filesystem::path& path, const std::string& flag);

/// Whether `path` is this process's standard output (/dev/stdout, or the
/// file or pipe it is redirected to).
bool names_standard_output(const std::filesystem::path& path);

/// A path a command reads or writes, and the flag (or field) that named it.
struct NamedPath {
  std::string flag;
  std::filesystem::path path;
};

/// Throws InputError naming both flags when two outputs are the same file,
/// or an output is one of the inputs: the later write would replace the
/// earlier, or the output the input, without a word. Empty paths, and pipes
/// and devices (/dev/stdout, /dev/null), are not compared.
void check_distinct_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs = {});

/// Throws InputError when an output names standard output beside a JSON
/// report there (stdout would no longer be one JSON document), or two
/// outputs name it (their texts would run together).
void check_standard_output_free(const std::vector<NamedPath>& outputs, bool json_report);

/// Files written as a set: stage() writes each to a temporary beside its
/// target; commit() renames them all into place. Destroyed uncommitted, it
/// removes its temporaries and leaves every target untouched. Pipes and
/// devices are written at commit(), before any regular file is renamed into
/// place (so a failing device leaves the regular files untouched).
/// Failures throw WriteError naming the flag and the target, with errno text.
class OutputFiles {
 public:
  OutputFiles() = default;
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  ~OutputFiles();

  void stage(const std::filesystem::path& path, const std::string& text, const std::string& flag,
             bool executable = false);
  void commit();

 private:
  struct Entry {
    std::filesystem::path target;
    std::filesystem::path temp;  ///< empty for a pipe or device
    std::string text;            ///< kept for a pipe or device only
    std::string flag;
  };
  std::vector<Entry> entries_;
};

/// One file: OutputFiles with one stage() and commit().
void write_file_atomically(const std::filesystem::path& path, const std::string& text,
                           const std::string& flag, bool executable = false);

}  // namespace parplan
