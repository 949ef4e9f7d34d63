// libFuzzer target: routing statistics (experts --loads, --routing-stats).
#include "src/io/input_error.h"
#include "tests/fuzz/command_readers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    parplan::fuzz::read_routing_stats(parplan::fuzz::text_of(data, size));
  } catch (const parplan::InputError&) {
  }
  return 0;
}
