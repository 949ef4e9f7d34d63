// libFuzzer target: the job.yaml reader, from a file.
#include "src/io/input_error.h"
#include "src/io/job_loader.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)parplan::load_job_file(
        parplan::fuzz::scratch_file(parplan::fuzz::text_of(data, size), "-job.yaml"));
  } catch (const parplan::InputError&) {
  }
  return 0;
}
