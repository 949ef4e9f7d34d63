// libFuzzer target: the whole command line (flag parsing, job resolution,
// the estimate/check/plan/sweep commands). One argument per input line. The
// run happens in a scratch directory and any argument with a '/' is dropped,
// so output flags (--csv, --emit ...) write nowhere else; plan, check and
// sweep get a time limit so one input stays fast.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "src/cli/cli_main.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

struct Silence {
  std::ostringstream sink;
  std::streambuf* out = std::cout.rdbuf(sink.rdbuf());
  std::streambuf* err = std::cerr.rdbuf(sink.rdbuf());
  ~Silence() {
    std::cout.rdbuf(out);
    std::cerr.rdbuf(err);
  }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char dir[] = "/tmp/parplan-cli-fuzz-XXXXXX";
  if (::mkdtemp(dir) != nullptr && ::chdir(dir) != 0) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = parplan::fuzz::text_of(data, size);
  std::vector<std::string> args = {"parplan"};
  std::size_t start = 0;
  while (start <= text.size() && args.size() < 64) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string arg = text.substr(start, end - start);
    if (arg.find('/') == std::string::npos && arg.find('\0') == std::string::npos) args.push_back(arg);
    start = end + 1;
  }
  if (args.size() > 1 && args[1] != "estimate") {
    for (const char* limit : {"--time-limit", "2", "--solver-time-limit", "0.5"}) args.emplace_back(limit);
  }
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  Silence silence;
  (void)parplan::cli_main(static_cast<int>(argv.size()), argv.data());
  return 0;
}
