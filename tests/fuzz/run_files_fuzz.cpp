// libFuzzer target: calibrate's run files (YAML, CSV) and Megatron-LM logs.
#include "src/io/input_error.h"
#include "tests/fuzz/command_readers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    parplan::fuzz::read_run_files(parplan::fuzz::text_of(data, size));
  } catch (const parplan::InputError&) {
  }
  return 0;
}
