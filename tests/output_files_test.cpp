// Output files: regular files replaced atomically and as a set; pipes and
// devices written directly and never replaced; other special files refused.
#include "src/report/output_files.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/io/input_error.h"
#include "src/io/write_error.h"
#include "tests/temp_dir.h"

namespace parplan {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(OutputFiles, DevicesAreWrittenNotReplaced) {
  write_file_atomically("/dev/null", "data\n", "--csv");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // /dev/full is a device that fails every write: an error, not a rename.
  EXPECT_THROW(write_file_atomically("/dev/full", "data\n", "--csv"), WriteError);
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(OutputFiles, AFifoWithoutReaderIsAnErrorNotAWait) {
  TempDir dir;
  const fs::path fifo = dir.path / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(write_file_atomically(fifo, "data\n", "--json"), WriteError);
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST(OutputFiles, DirectoriesAreRefused) {
  TempDir dir;
  EXPECT_THROW(check_output_path(dir.path, "--csv"), InputError);
  EXPECT_THROW(check_output_path(dir.path / "missing" / "x.csv", "--csv"), InputError);
}

TEST(OutputFiles, ASymlinkIsFollowedAndKept) {
  TempDir dir;
  const fs::path target = dir.path / "real.csv";
  std::ofstream(target) << "old\n";
  fs::create_symlink(target, dir.path / "link.csv");
  write_file_atomically(dir.path / "link.csv", "new\n", "--csv");
  EXPECT_TRUE(fs::is_symlink(dir.path / "link.csv"));
  EXPECT_EQ(read(target), "new\n");
}

TEST(OutputFiles, AFailedSetReplacesNothing) {
  TempDir dir;
  const fs::path csv = dir.path / "out.csv";
  std::ofstream(csv) << "old\n";
  {
    OutputFiles files;
    files.stage(csv, "new\n", "--csv");
    EXPECT_THROW(files.stage("/dev/full/x.json", "{}", "--json"), InputError);
    // Destroyed without commit: the CSV keeps its old contents and no
    // temporary is left behind.
  }
  EXPECT_EQ(read(csv), "old\n");
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) entries += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(entries, 1);
}

TEST(OutputFiles, ACommittedSetReplacesAll) {
  TempDir dir;
  OutputFiles files;
  files.stage(dir.path / "a.csv", "a\n", "--csv");
  files.stage(dir.path / "b.json", "b\n", "--json");
  EXPECT_FALSE(fs::exists(dir.path / "a.csv"));
  files.commit();
  EXPECT_EQ(read(dir.path / "a.csv"), "a\n");
  EXPECT_EQ(read(dir.path / "b.json"), "b\n");
}

TEST(OutputFiles, AnUnwritableDirectoryFailsTheCheck) {
  // /proc accepts no new file, even from root.
  EXPECT_THROW(check_output_path("/proc/parplan.svg", "--plot"), InputError);
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into a read-only-mode directory";
  TempDir dir;
  fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_THROW(check_output_path(dir.path / "plot.svg", "--plot"), InputError);
}

}  // namespace
}  // namespace parplan
