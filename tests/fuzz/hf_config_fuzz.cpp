// libFuzzer target: the Hugging Face config.json reader.
#include "src/io/input_error.h"
#include "src/io/model_loader.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)parplan::parse_hf_config(parplan::fuzz::text_of(data, size), "config.json");
  } catch (const parplan::InputError&) {
  }
  return 0;
}
