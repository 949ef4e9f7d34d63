#include "src/report/output_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "src/io/input_error.h"
#include "src/io/write_error.h"

namespace parplan {

namespace fs = std::filesystem;

bool names_standard_output(const fs::path& path) {
  struct stat st {
  }, out{};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && ::fstat(STDOUT_FILENO, &out) == 0 &&
         st.st_dev == out.st_dev && st.st_ino == out.st_ino;
}

namespace {

enum class Kind { kMissing, kRegular, kStream, kOther };

// Standard output is written through its descriptor, never reopened: a
// reopened redirection target would be truncated or replaced, losing the
// report.
bool is_own_stdout(const fs::path& path) { return names_standard_output(path); }

// What `path` is, following symlinks.
Kind kind_of(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Kind::kMissing;
  if (is_own_stdout(path)) return Kind::kStream;
  if (S_ISREG(st.st_mode)) return Kind::kRegular;
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return Kind::kStream;
  return Kind::kOther;
}

// A symlink to a regular file is replaced through the link: the link stays.
fs::path resolved(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_symlink(path, ec)) return path;
  const fs::path target = fs::canonical(path, ec);
  return ec ? path : target;
}

fs::path directory_of(const fs::path& path) {
  const fs::path dir = path.parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

std::string errno_text() { return std::strerror(errno); }

void write_all(int fd, const std::string& text, const std::string& flag, const fs::path& shown) {
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string reason = errno_text();
      ::close(fd);
      throw WriteError(flag + ": cannot write " + shown.string() + ": " + reason);
    }
    written += static_cast<std::size_t>(n);
  }
}

// A pipe or device: opened without blocking (a FIFO nobody reads fails with
// ENXIO instead of waiting forever), then written in blocking mode.
void write_stream(const fs::path& path, const std::string& text, const std::string& flag) {
  if (is_own_stdout(path)) {
    std::cout << text;
    std::cout.flush();
    if (!std::cout) throw WriteError(flag + ": cannot write " + path.string() + " (standard output)");
    return;
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const std::string reason = errno == ENXIO ? "no process is reading the pipe" : errno_text();
    throw WriteError(flag + ": cannot write " + path.string() + ": " + reason);
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  write_all(fd, text, flag, path);
  if (::close(fd) != 0) throw WriteError(flag + ": cannot write " + path.string() + ": " + errno_text());
}

}  // namespace

void check_output_path(const fs::path& requested, const std::string& flag) {
  if (requested.empty()) throw InputError(flag + ": give a file name");
  const fs::path path = resolved(requested);
  switch (kind_of(path)) {
    case Kind::kStream:
      return;
    case Kind::kOther:
      throw InputError(flag + ": " + requested.string() +
                       " is not a regular file, a pipe or a character device; give a file name");
    case Kind::kMissing:
    case Kind::kRegular:
      break;
  }
  const fs::path dir = directory_of(path);
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(flag + ": cannot write " + requested.string() + ": directory " + dir.string() +
                     " does not exist");
  std::string probe = (dir / ".parplan-probe-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw InputError(flag + ": cannot write " + requested.string() + ": directory " + dir.string() +
                     " does not accept new files (" + errno_text() + ")");
  ::close(fd);
  ::unlink(probe.c_str());
}

namespace {
// The file a path names, for comparison (symlinks and ".." resolved; a file
// yet to be written through its existing directory); empty for a stream.
fs::path file_identity(const fs::path& path) {
  if (path.empty() || kind_of(path) == Kind::kStream) return {};
  std::error_code ec;
  const fs::path id = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? fs::absolute(path) : id;
}
}  // namespace

void check_standard_output_free(const std::vector<NamedPath>& outputs, bool json_report) {
  const NamedPath* first = nullptr;
  for (const NamedPath& output : outputs) {
    if (output.path.empty() || !names_standard_output(output.path)) continue;
    if (json_report)
      throw InputError(output.flag + " " + output.path.string() +
                       " is standard output, where --format json writes its report; write it to a file or "
                       "drop --format json");
    if (first != nullptr)
      throw InputError(
          first->flag + " and " + output.flag +
          " both write to standard output, where their texts would run together; give one a file");
    first = &output;
  }
}

void check_distinct_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const fs::path id = file_identity(outputs[i].path);
    if (id.empty()) continue;
    for (std::size_t j = 0; j < i; ++j)
      if (file_identity(outputs[j].path) == id)
        throw InputError(outputs[j].flag + " and " + outputs[i].flag + " both name " +
                         outputs[i].path.string() + "; give each output its own file");
    for (const NamedPath& input : inputs)
      if (file_identity(input.path) == id)
        throw InputError(outputs[i].flag + " " + outputs[i].path.string() + " is the " + input.flag +
                         " input; write the output elsewhere");
  }
}

OutputFiles::~OutputFiles() {
  for (const Entry& e : entries_)
    if (!e.temp.empty()) ::unlink(e.temp.c_str());
}

void OutputFiles::stage(const fs::path& requested, const std::string& text, const std::string& flag,
                        bool executable) {
  check_output_path(requested, flag);
  const fs::path path = resolved(requested);
  Entry entry{requested, {}, {}, flag};
  if (kind_of(path) == Kind::kStream) {
    entry.text = text;
    entries_.push_back(std::move(entry));
    return;
  }
  entry.target = path;
  std::string pattern = (directory_of(path) / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) throw WriteError(flag + ": cannot write " + requested.string() + ": " + errno_text());
  entry.temp = pattern;
  entries_.push_back(entry);  // the destructor removes the temporary from here on
  write_all(fd, text, flag, requested);
  // mkstemp creates 0600; give the file the mode a plain create would.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  const mode_t mode = (executable ? 0777 : 0666) & ~mask;
  if (::fchmod(fd, mode) != 0 || (::fsync(fd) != 0 && errno != EINVAL)) {
    const std::string reason = errno_text();
    ::close(fd);
    throw WriteError(flag + ": cannot write " + requested.string() + ": " + reason);
  }
  if (::close(fd) != 0) throw WriteError(flag + ": cannot write " + requested.string() + ": " + errno_text());
}

void OutputFiles::commit() {
  // Pipes and devices first: they cannot be undone, and when one fails (a
  // full device, a pipe nobody reads) no regular file has been replaced yet.
  for (const Entry& e : entries_)
    if (e.temp.empty() && !e.text.empty()) write_stream(e.target, e.text, e.flag);
  for (Entry& e : entries_) {
    if (e.temp.empty()) continue;
    // The target may have become something else since stage(): never rename
    // over a non-regular file.
    const Kind now = kind_of(e.target);
    if (now != Kind::kMissing && now != Kind::kRegular)
      throw WriteError(e.flag + ": " + e.target.string() + " is no longer a regular file; not replaced");
    if (::rename(e.temp.c_str(), e.target.c_str()) != 0)
      throw WriteError(e.flag + ": cannot move the file into " + e.target.string() + ": " + errno_text());
    e.temp.clear();
  }
  entries_.clear();
}

void write_file_atomically(const fs::path& path, const std::string& text, const std::string& flag,
                           bool executable) {
  OutputFiles files;
  files.stage(path, text, flag, executable);
  files.commit();
}

}  // namespace parplan
