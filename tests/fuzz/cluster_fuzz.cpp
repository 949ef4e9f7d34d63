// libFuzzer target: the hardware-profile (cluster) reader, from a file.
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)parplan::load_cluster(
        parplan::fuzz::scratch_file(parplan::fuzz::text_of(data, size), "-cluster.yaml"));
  } catch (const parplan::InputError&) {
  }
  return 0;
}
