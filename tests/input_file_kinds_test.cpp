// Data files named on the command line (--loads, --routing-stats, --lengths,
// --coefficients) that are FIFOs, directories or missing: one line, exit 2,
// at once. A FIFO nobody writes used to block the command forever.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace {

std::string make_fifo() {
  const std::string path = ::testing::TempDir() + "parplan_fifo_" + std::to_string(::getpid());
  ::unlink(path.c_str());
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
  return path;
}

void expect_refused(const std::string& args, const std::string& mention) {
  // Under timeout: a regression blocks on the FIFO and exits 124.
  test::expect_refusal(test::run_cli(args, "timeout 60 "), mention, args);
}

TEST(InputFileKinds, FifosDirectoriesAndMissingFilesAreRefused) {
  const std::string fifo = make_fifo();
  const std::string lengths = test::write_temp("kinds_lengths.txt", "4096 8192\n");
  for (const std::string& bad : {fifo, ::testing::TempDir()}) {
    expect_refused("experts --loads " + bad + " --gpus 8", "not a regular file");
    expect_refused(
        "plan --model mixtral-8x7b --cluster dgx-h100 --gpus 8 --gbs 8 --seq 1024 --routing-stats " + bad,
        "not a regular file");
    expect_refused("scatter --lengths " + bad + " --gpus 8 --model llama3-8b --cluster dgx-h100",
                   "not a regular file");
    expect_refused("scatter --lengths " + lengths + " --gpus 8 --coefficients " + bad, "not a regular file");
  }
  expect_refused("experts --loads " + fifo + ".missing --gpus 8", "no such file");
  ::unlink(fifo.c_str());
}

}  // namespace
}  // namespace parplan
